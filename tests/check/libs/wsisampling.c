/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit tests for wsisampling (gst/wsipatch/wsisampling.c, compiled in):
 * tissue shares against a brute-force count, the resolution distributions
 * against their definitions (histograms, the minmax equalising property),
 * coverage without repetition across visits, lists and quotas. Masks are
 * built here; nothing is read from disk. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <gst/check/gstcheck.h>

#include "wsisampling.h"

/* A test slide: MASK_SCALE level-0 pixels per mask pixel, tissue the
 * rectangle [tx0, tx1) x [ty0, ty1) of mask pixels. */
#define MASK_SCALE 16

typedef struct
{
  gint64 width, height;
  gint tx0, ty0, tx1, ty1;
  guint8 *mask;
  guint32 *integral;
  WsiTissueMap map;
} TestMask;

static void
test_mask_init (TestMask * t, gint64 width, gint64 height, gint tx0, gint ty0,
    gint tx1, gint ty1)
{
  gint mw = (gint) (width / MASK_SCALE), mh = (gint) (height / MASK_SCALE);
  gint x, y;

  t->width = width;
  t->height = height;
  t->tx0 = tx0;
  t->ty0 = ty0;
  t->tx1 = tx1;
  t->ty1 = ty1;
  t->mask = g_malloc ((gsize) mw * mh);
  for (y = 0; y < mh; y++)
    for (x = 0; x < mw; x++)
      t->mask[y * mw + x] = (x >= tx0 && x < tx1 && y >= ty0 && y < ty1) ?
          255 : 0;
  t->integral = g_new (guint32, (gsize) (mw + 1) * (mh + 1));
  wsi_tissue_map_init (&t->map, width, height);
  wsi_tissue_map_build (&t->map, t->integral, t->mask, mw, mh);
}

static void
test_mask_clear (TestMask * t)
{
  g_free (t->mask);
  g_free (t->integral);
}

/* Tissue share of the mask pixels the footprint touches, pixel by pixel. */
static gdouble
brute_fraction (const TestMask * t, gint64 x, gint64 y, gint64 side)
{
  gint64 mx0 = x / MASK_SCALE, my0 = y / MASK_SCALE;
  gint64 mx1 = (x + side + MASK_SCALE - 1) / MASK_SCALE;
  gint64 my1 = (y + side + MASK_SCALE - 1) / MASK_SCALE;
  gint64 mx, my, tissue = 0;

  for (my = my0; my < my1; my++)
    for (mx = mx0; mx < mx1; mx++)
      tissue += mx >= t->tx0 && mx < t->tx1 && my >= t->ty0 && my < t->ty1;
  return (gdouble) tissue / ((mx1 - mx0) * (my1 - my0));
}

static void
request_init (WsiSamplingRequest * req, WsiSamplingMode mode,
    guint32 footprint, gint64 n_wanted)
{
  memset (req, 0, sizeof (*req));
  req->mode = mode;
  req->out_size = 256;
  req->footprint = footprint;
  req->out_mpp = 0.25f;
  req->slide_mpp = 0.25;
  req->n_wanted = n_wanted;
  req->min_tissue = 0.5;
  req->replacement = TRUE;
  req->seed = 42;
  req->slide_index = 3;
}

/* Every sample inside the slide, on tissue (checked pixel by pixel), with
 * out_mpp what its footprint gives. */
static void
check_samples (const TestMask * t, const WsiSamplingRequest * req,
    const WsiSample * s, guint n)
{
  guint i;

  for (i = 0; i < n; i++) {
    fail_unless (s[i].x >= 0 && s[i].x + s[i].footprint <= t->width);
    fail_unless (s[i].y >= 0 && s[i].y + s[i].footprint <= t->height);
    fail_unless (fabs (s[i].tissue_fraction - brute_fraction (t, s[i].x,
                s[i].y, s[i].footprint)) < 1e-5);
    fail_unless (s[i].tissue_fraction >= req->min_tissue - 1e-6,
        "sample %u off tissue (%g)", i, s[i].tissue_fraction);
    fail_unless (fabs (s[i].out_mpp - s[i].footprint * req->slide_mpp /
            req->out_size) < 1e-6);
  }
}

GST_START_TEST (test_tissue_fraction)
{
  TestMask t;
  WsiRng rng;
  guint i;

  test_mask_init (&t, 4096, 3072, 60, 50, 190, 150);
  wsi_rng_seed (&rng, 1, 0, 0);
  for (i = 0; i < 2000; i++) {
    gint64 side = 1 + wsi_rng_below (&rng, 1000);
    gint64 x = wsi_rng_below (&rng, t.width - side + 1);
    gint64 y = wsi_rng_below (&rng, t.height - side + 1);

    fail_unless (fabs (wsi_tissue_map_fraction (&t.map, x, y, side) -
            brute_fraction (&t, x, y, side)) < 1e-12);
  }
  fail_if (wsi_tissue_map_is_blank (&t.map));
  test_mask_clear (&t);

  test_mask_init (&t, 1024, 1024, 0, 0, 0, 0);
  fail_unless (wsi_tissue_map_is_blank (&t.map));
  test_mask_clear (&t);
}

GST_END_TEST;

/* The integral image and the tissue box against a brute-force count, on
 * a speckled mask with bytes on both sides of the threshold (127, 128),
 * more than 8 bytes of glass either side of most rows (the word scans)
 * and one tissue pixel in the bottom-right corner. */
GST_START_TEST (test_tissue_map_build_matches_brute_force)
{
  const gint64 w = 37, h = 23;
  guint8 *mask = g_malloc0 (w * h);
  guint32 *integral = g_new (guint32, (w + 1) * (h + 1));
  const guint8 values[] = { 0, 127, 128, 200, 255 };
  WsiTissueMap map;
  WsiRng rng;
  gint64 x, y, x0 = w, y0 = h, x1 = 0, y1 = 0;

  wsi_rng_seed (&rng, 9, 0, 0);
  for (y = 5; y < h; y++)
    for (x = 11; x < w - 9; x++)
      mask[y * w + x] = values[wsi_rng_below (&rng, G_N_ELEMENTS (values))];
  mask[(h - 1) * w + (w - 1)] = 128;
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      if (mask[y * w + x] >= 128) {
        x0 = MIN (x0, x);
        x1 = MAX (x1, x + 1);
        y0 = MIN (y0, y);
        y1 = MAX (y1, y + 1);
      }

  wsi_tissue_map_init (&map, w * 10, h * 10);
  wsi_tissue_map_build (&map, integral, mask, w, h);
  for (y = 0; y <= h; y++)
    for (x = 0; x <= w; x++) {
      guint32 count = 0;

      for (gint64 yy = 0; yy < y; yy++)
        for (gint64 xx = 0; xx < x; xx++)
          count += mask[yy * w + xx] >= 128;
      fail_unless_equals_int (wsi_tissue_map_count (&map, 0, 0, x, y),
          count);
    }
  fail_unless_equals_int64 (map.tissue_x0, x0);
  fail_unless_equals_int64 (map.tissue_x1, x1);
  fail_unless_equals_int64 (map.tissue_y0, y0);
  fail_unless_equals_int64 (map.tissue_y1, y1);
  fail_unless_equals_int64 (x1, w);
  fail_unless_equals_int64 (y1, h);
  g_free (mask);
  g_free (integral);
}

GST_END_TEST;

/* The map as it was before issue 23 cut its cost: an integral image over
 * the whole mask, built pixel by pixel, and the share from its four
 * corners. The box-clamped, vectorised map must give the same share,
 * bit for bit, so every accept/reject decision stays the same. */
static gdouble
reference_fraction (const guint32 * full, gint64 mw, gint64 mh,
    gint64 slide_w, gint64 slide_h, gint64 x, gint64 y, gint64 side)
{
  gint64 stride = mw + 1, count;
  gint64 mx0 = x * mw / slide_w, my0 = y * mh / slide_h;
  gint64 mx1 = ((x + side) * mw + slide_w - 1) / slide_w;
  gint64 my1 = ((y + side) * mh + slide_h - 1) / slide_h;

  mx1 = CLAMP (mx1, mx0 + 1, mw);
  my1 = CLAMP (my1, my0 + 1, mh);
  count = (gint64) full[my1 * stride + mx1] - full[my0 * stride + mx1]
      - full[my1 * stride + mx0] + full[my0 * stride + mx0];
  return (gdouble) count / (gdouble) ((mx1 - mx0) * (my1 - my0));
}

static void
reference_integral (guint32 * full, const guint8 * mask, gint64 mw,
    gint64 mh)
{
  gint64 stride = mw + 1, x, y;

  memset (full, 0, stride * sizeof (guint32));
  for (y = 0; y < mh; y++) {
    guint32 row_sum = 0;

    full[(y + 1) * stride] = 0;
    for (x = 0; x < mw; x++) {
      row_sum += mask[y * mw + x] >= 128;
      full[(y + 1) * stride + x + 1] = full[y * stride + x + 1] + row_sum;
    }
  }
}

/* Random masks (sizes on both sides of the 16-byte steps, tissue blobs
 * anywhere, edges included, bytes either side of the threshold, some
 * blank): every count of random rectangles and every share of random
 * footprints equal to the old whole-mask integral's. */
GST_START_TEST (test_tissue_map_matches_old_form)
{
  const guint8 values[] = { 0, 1, 127, 128, 129, 254, 255 };
  WsiRng rng;
  guint trial;

  wsi_rng_seed (&rng, 23, 0, 0);
  for (trial = 0; trial < 300; trial++) {
    gint64 mw = 1 + wsi_rng_below (&rng, 90), mh = 1 + wsi_rng_below (&rng, 50);
    gint64 slide_w = mw * (1 + wsi_rng_below (&rng, 20)) +
        wsi_rng_below (&rng, 7);
    gint64 slide_h = mh * (1 + wsi_rng_below (&rng, 20)) +
        wsi_rng_below (&rng, 7);
    guint8 *mask = g_malloc0 (mw * mh);
    guint32 *full = g_new (guint32, (mw + 1) * (mh + 1));
    guint32 *integral = g_new (guint32, (mw + 1) * (mh + 1));
    guint blobs = (guint) wsi_rng_below (&rng, 4), b, i;
    WsiTissueMap map;

    for (b = 0; b < blobs; b++) {
      gint64 bx0 = wsi_rng_below (&rng, mw), by0 = wsi_rng_below (&rng, mh);
      gint64 bx1 = bx0 + 1 + wsi_rng_below (&rng, mw - bx0);
      gint64 by1 = by0 + 1 + wsi_rng_below (&rng, mh - by0);
      guint density = 1 + (guint) wsi_rng_below (&rng, 4);

      for (gint64 y = by0; y < by1; y++)
        for (gint64 x = bx0; x < bx1; x++)
          if (wsi_rng_below (&rng, 4) < density)
            mask[y * mw + x] = values[wsi_rng_below (&rng,
                    G_N_ELEMENTS (values))];
    }
    reference_integral (full, mask, mw, mh);
    wsi_tissue_map_init (&map, slide_w, slide_h);
    wsi_tissue_map_build (&map, integral, mask, mw, mh);
    fail_unless_equals_int (wsi_tissue_map_is_blank (&map),
        full[(mw + 1) * (mh + 1) - 1] == 0);

    for (i = 0; i < 200; i++) {
      gint64 x0 = wsi_rng_below (&rng, mw + 1), y0 = wsi_rng_below (&rng,
          mh + 1);
      gint64 x1 = x0 + wsi_rng_below (&rng, mw - x0 + 1);
      gint64 y1 = y0 + wsi_rng_below (&rng, mh - y0 + 1);
      gint64 stride = mw + 1;
      guint64 want = (gint64) full[y1 * stride + x1] - full[y0 * stride + x1]
          - full[y1 * stride + x0] + full[y0 * stride + x0];

      fail_unless_equals_uint64 (wsi_tissue_map_count (&map, x0, y0, x1, y1),
          want);
    }
    for (i = 0; i < 200; i++) {
      gint64 side = 1 + wsi_rng_below (&rng, MIN (slide_w, slide_h));
      gint64 x = wsi_rng_below (&rng, slide_w - side + 1);
      gint64 y = wsi_rng_below (&rng, slide_h - side + 1);

      fail_unless (wsi_tissue_map_fraction (&map, x, y, side) ==
          reference_fraction (full, mw, mh, slide_w, slide_h, x, y, side),
          "trial %u: share at (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
          ") differs", trial, x, y);
    }
    g_free (mask);
    g_free (full);
    g_free (integral);
  }
}

GST_END_TEST;

GST_START_TEST (test_parse_list)
{
  GArray *v = g_array_new (FALSE, FALSE, sizeof (gdouble));
  const gchar *bad[] = { "", "0.5,abc", "0,1", "-1", "nan", "1,,2", "inf",
    "1e400", NULL
  };
  gchar *error = NULL;
  guint i;

  fail_unless (wsi_sampling_parse_list ("0.25, 0.5,1,2", v, &error));
  fail_unless_equals_int (v->len, 4);
  fail_unless_equals_float (g_array_index (v, gdouble, 1), 0.5);
  fail_unless_equals_float (g_array_index (v, gdouble, 3), 2.0);
  for (i = 0; bad[i]; i++) {
    fail_if (wsi_sampling_parse_list (bad[i], v, &error), "%s", bad[i]);
    fail_unless (error != NULL);
    g_free (error);
    error = NULL;
  }
  g_array_unref (v);
}

GST_END_TEST;

GST_START_TEST (test_quota)
{
  fail_unless_equals_int64 (wsi_quota_decide (-1, FALSE, 5, 10), -1);
  fail_unless_equals_int64 (wsi_quota_decide (37, FALSE, 5, 10), 37);
  fail_unless_equals_int64 (wsi_quota_decide (-1, TRUE, 5, 10), 50);
  fail_unless_equals_int64 (wsi_quota_decide (37, TRUE, 5, 10), 37);
  fail_unless_equals_int64 (wsi_quota_decide (90, TRUE, 5, 10), 50);
  fail_unless_equals_int64 (wsi_quota_decide (-1, TRUE, 0, 10), 0);
  fail_unless_equals_int64 (wsi_quota_left (-1, 100, 0), -1);
  fail_unless_equals_int64 (wsi_quota_left (50, 30, 0), 20);
  fail_unless_equals_int64 (wsi_quota_left (50, 50, 4), 4);
  fail_unless_equals_int64 (wsi_quota_left (50, 70, 0), 0);
}

GST_END_TEST;

/* Chi-square statistic of @counts against @expected probabilities. */
static gdouble
chi_square (const guint * counts, const gdouble * expected, guint bins,
    guint n)
{
  gdouble chi = 0.0;
  guint i;

  for (i = 0; i < bins; i++) {
    gdouble e = expected[i] * n;

    fail_unless (e >= 5.0, "bin %u expects %g draws: too few", i, e);
    chi += (counts[i] - e) * (counts[i] - e) / e;
  }
  return chi;
}

GST_START_TEST (test_discrete_histogram)
{
  const gdouble mpps[] = { 0.25, 0.5, 1.0, 2.0 };
  const gdouble weights[] = { 1, 2, 3, 4 };
  const gdouble expected[] = { 0.1, 0.2, 0.3, 0.4 };
  WsiMppDistribution *dist;
  guint counts[4] = { 0, }, i, k, n = 20000;
  WsiRng rng;

  dist = wsi_mpp_distribution_new_discrete (mpps, weights, 4);
  wsi_rng_seed (&rng, 5, 0, 0);
  for (i = 0; i < n; i++) {
    gdouble m = wsi_mpp_distribution_draw (dist, &rng);

    for (k = 0; k < 4 && m != mpps[k]; k++);
    fail_unless (k < 4, "drew %g, not a target", m);
    counts[k]++;
  }
  /* df 3: 16.3 is the 0.1 % tail */
  fail_unless (chi_square (counts, expected, 4, n) < 16.3, "%u %u %u %u",
      counts[0], counts[1], counts[2], counts[3]);
  wsi_mpp_distribution_free (dist);
}

GST_END_TEST;

#define BINS 20
#define LO 0.25
#define HI 2.0

/* The densities of the continuous modes, written from their definitions
 * (not from the implementation). */
static gdouble
density (WsiMppDensity d, gdouble x, gdouble lambda)
{
  if (d == WSI_MPP_MAXAVG)
    return exp ((4 * x / 3 - LO * LO * LO / (3 * x * x) - x * x / HI) /
        lambda);
  return 1.0;
}

/* Bin probabilities by Simpson's rule over [LO, HI]. */
static void
expected_bins (WsiMppDensity d, gdouble lambda, gdouble * p)
{
  const guint steps = 200;
  gdouble total = 0.0, w = (HI - LO) / BINS;
  guint b, i;

  for (b = 0; b < BINS; b++) {
    gdouble a = LO + b * w, h = w / steps, sum = 0.0;

    for (i = 0; i <= steps; i++)
      sum += (i == 0 || i == steps ? 1 : (i % 2 ? 4 : 2)) *
          density (d, a + i * h, lambda);
    p[b] = sum * h / 3;
    total += p[b];
  }
  for (b = 0; b < BINS; b++)
    p[b] /= total;
}

static void
draw_histogram (WsiMppDistribution * dist, guint n, guint * counts)
{
  WsiRng rng;
  guint i;

  memset (counts, 0, BINS * sizeof (guint));
  wsi_rng_seed (&rng, 9, 1, 2);
  for (i = 0; i < n; i++) {
    gdouble m = wsi_mpp_distribution_draw (dist, &rng);
    gint b = (gint) ((m - LO) / (HI - LO) * BINS);

    fail_unless (m >= LO && m <= HI, "%g outside the range", m);
    counts[CLAMP (b, 0, BINS - 1)]++;
  }
}

static void
check_continuous_histogram (WsiMppDensity d, gdouble lambda)
{
  WsiMppDistribution *dist = wsi_mpp_distribution_new_continuous (d, LO, HI,
      lambda);
  guint counts[BINS], n = 40000;
  gdouble p[BINS], chi;

  expected_bins (d, lambda, p);
  draw_histogram (dist, n, counts);
  chi = chi_square (counts, p, BINS, n);
  /* df 19: 43.8 is the 0.1 % tail */
  fail_unless (chi < 43.8, "density %d lambda %g: chi-square %g", d, lambda,
      chi);
  wsi_mpp_distribution_free (dist);
}

GST_START_TEST (test_continuous_uniform_histogram)
{
  check_continuous_histogram (WSI_MPP_UNIFORM, 1.0);
}

GST_END_TEST;

GST_START_TEST (test_continuous_maxavg_histogram)
{
  WsiMppDistribution *dist;
  guint counts[BINS], peak = 0, b;

  check_continuous_histogram (WSI_MPP_MAXAVG, 1.0);
  check_continuous_histogram (WSI_MPP_MAXAVG, 0.1);
  check_continuous_histogram (WSI_MPP_MAXAVG, 5.0);

  /* a small lambda concentrates on central resolutions */
  dist = wsi_mpp_distribution_new_continuous (WSI_MPP_MAXAVG, LO, HI, 0.1);
  draw_histogram (dist, 20000, counts);
  for (b = 1; b < BINS; b++)
    if (counts[b] > counts[peak])
      peak = b;
  fail_unless (peak > 1 && peak < BINS - 2, "peak in bin %u", peak);
  fail_unless (counts[0] < counts[peak] / 10);
  wsi_mpp_distribution_free (dist);
}

GST_END_TEST;

/* Spread (max - min) over [LO, HI] of x -> mean K(x, m_i), K the
 * information kernel (min/max)^2; also returns the minimum. */
static gdouble
transfer_spread (const gdouble * m, guint n, gdouble * min_out)
{
  gdouble lo = G_MAXDOUBLE, hi = 0.0;
  guint j, i;

  for (j = 0; j <= 30; j++) {
    gdouble x = LO + (HI - LO) * j / 30.0, sum = 0.0;

    for (i = 0; i < n; i++) {
      gdouble r = MIN (x, m[i]) / MAX (x, m[i]);

      sum += r * r;
    }
    lo = MIN (lo, sum / n);
    hi = MAX (hi, sum / n);
  }
  *min_out = lo;
  return hi - lo;
}

/* minmax maximises the worst transfer: its optimum equalises
 * x -> E K(x, m) over the whole range (at 1 / (1 + ln (HI / LO))), which
 * the uniform distribution does not. */
GST_START_TEST (test_continuous_minmax_equalises)
{
  WsiMppDistribution *minmax, *uniform;
  guint n = 40000, i, at_lo = 0, at_hi = 0;
  gdouble *m = g_new (gdouble, n), spread, worst, uniform_worst;
  gdouble value = 1.0 / (1.0 + log (HI / LO));
  WsiRng rng;

  minmax = wsi_mpp_distribution_new_continuous (WSI_MPP_MINMAX, LO, HI, 1.0);
  wsi_rng_seed (&rng, 11, 0, 0);
  for (i = 0; i < n; i++) {
    m[i] = wsi_mpp_distribution_draw (minmax, &rng);
    fail_unless (m[i] >= LO && m[i] <= HI);
    at_lo += m[i] == LO;
    at_hi += m[i] == HI;
  }
  /* each end weighs value / 2 (0.162 for 0.25..2: "oversamples the
   * boundary magnifications") */
  fail_unless (fabs ((gdouble) at_lo / n - value / 2) < 0.01, "%u", at_lo);
  fail_unless (fabs ((gdouble) at_hi / n - value / 2) < 0.01, "%u", at_hi);
  spread = transfer_spread (m, n, &worst);
  fail_unless (spread < 0.01, "spread %g", spread);
  fail_unless (fabs (worst - value) < 0.01, "worst %g vs %g", worst, value);

  uniform = wsi_mpp_distribution_new_continuous (WSI_MPP_UNIFORM, LO, HI, 1);
  wsi_rng_seed (&rng, 11, 0, 0);
  for (i = 0; i < n; i++)
    m[i] = wsi_mpp_distribution_draw (uniform, &rng);
  spread = transfer_spread (m, n, &uniform_worst);
  fail_unless (spread > 0.1, "uniform spread %g", spread);
  fail_unless (uniform_worst < worst - 0.05);

  wsi_mpp_distribution_free (minmax);
  wsi_mpp_distribution_free (uniform);
  g_free (m);
}

GST_END_TEST;

/* Each patch of the magnification modes: its own footprint, on tissue,
 * the mpp the footprint gives; histogram of the discrete mode through the
 * plan as through the distribution. */
GST_START_TEST (test_magnification_plans)
{
  const gdouble mpps[] = { 0.25, 0.5, 1.0, 2.0 };
  const gdouble weights[] = { 4, 3, 2, 1 };
  const gdouble expected[] = { 0.4, 0.3, 0.2, 0.1 };
  WsiMppDistribution *dist;
  WsiSamplingRequest req;
  WsiSample *s;
  TestMask t;
  guint n, i, counts[4] = { 0, };

  test_mask_init (&t, 4096, 3072, 60, 50, 190, 150);
  dist = wsi_mpp_distribution_new_discrete (mpps, weights, 4);
  request_init (&req, WSI_SAMPLING_MULTI_MAGNIFICATION, 0, 2000);
  req.mpps = dist;
  s = wsi_sampling_plan (&req, &t.map, &n);
  fail_unless_equals_int (n, 2000);
  check_samples (&t, &req, s, n);
  for (i = 0; i < n; i++) {
    guint k = s[i].footprint == 256 ? 0 : s[i].footprint == 512 ? 1 :
        s[i].footprint == 1024 ? 2 : s[i].footprint == 2048 ? 3 : 4;

    fail_unless (k < 4, "footprint %u", s[i].footprint);
    fail_unless_equals_float (s[i].out_mpp, mpps[k]);
    counts[k]++;
  }
  fail_unless (chi_square (counts, expected, 4, n) < 16.3);
  g_free (s);
  wsi_mpp_distribution_free (dist);

  /* continuous: every footprint its own, mpp exact for it */
  dist = wsi_mpp_distribution_new_continuous (WSI_MPP_MAXAVG, 0.25, 2.0, 1);
  request_init (&req, WSI_SAMPLING_CONTINUOUS_MAGNIFICATION, 0, 500);
  req.mpps = dist;
  req.slide_mpp = 0.26;
  s = wsi_sampling_plan (&req, &t.map, &n);
  fail_unless_equals_int (n, 500);
  check_samples (&t, &req, s, n);
  for (i = 0; i < n; i++)
    fail_unless (s[i].out_mpp >= 0.25 - 0.26 / 256 &&
        s[i].out_mpp <= 2.0 + 0.26 / 256);
  g_free (s);

  /* no mpp on the slide: nothing */
  req.slide_mpp = 0;
  fail_unless (wsi_sampling_plan (&req, &t.map, &n) == NULL);
  wsi_mpp_distribution_free (dist);
  test_mask_clear (&t);
}

GST_END_TEST;

/* A resolution whose footprint fits nowhere on the tissue is drawn again,
 * so every patch still comes from the feasible ones. */
GST_START_TEST (test_magnification_infeasible)
{
  const gdouble mpps[] = { 0.25, 4.0 };
  WsiMppDistribution *dist = wsi_mpp_distribution_new_discrete (mpps, NULL,
      2);
  WsiSamplingRequest req;
  WsiSample *s;
  TestMask t;
  guint n, i;

  /* 3000 px wide slide: a 4 µm/px patch needs 4096 level-0 pixels */
  test_mask_init (&t, 3008, 3008, 10, 10, 150, 150);
  request_init (&req, WSI_SAMPLING_MULTI_MAGNIFICATION, 0, 100);
  req.mpps = dist;
  s = wsi_sampling_plan (&req, &t.map, &n);
  fail_unless_equals_int (n, 100);
  for (i = 0; i < n; i++)
    fail_unless_equals_int (s[i].footprint, 256);
  g_free (s);
  wsi_mpp_distribution_free (dist);

  /* none feasible: no plan, no hang */
  dist = wsi_mpp_distribution_new_discrete (mpps + 1, NULL, 1);
  req.mpps = dist;
  fail_unless (wsi_sampling_plan (&req, &t.map, &n) == NULL);
  wsi_mpp_distribution_free (dist);
  test_mask_clear (&t);
}

GST_END_TEST;

/* Concatenates visits 0..n_visits-1 of @req; returns the samples. */
static WsiSample *
plan_visits (WsiSamplingRequest * req, const WsiTissueMap * map,
    guint n_visits, guint * n_total)
{
  GArray *all = g_array_new (FALSE, FALSE, sizeof (WsiSample));
  guint v, n;

  for (v = 0; v < n_visits; v++) {
    WsiSample *s;

    req->visit = v;
    s = wsi_sampling_plan (req, map, &n);
    fail_unless (s != NULL);
    g_array_append_vals (all, s, n);
    g_free (s);
  }
  *n_total = all->len;
  return (WsiSample *) g_array_free (all, FALSE);
}

static gint
compare_position (gconstpointer a, gconstpointer b)
{
  const WsiSample *p = a, *q = b;

  if (p->y != q->y)
    return p->y < q->y ? -1 : 1;
  return (p->x > q->x) - (p->x < q->x);
}

/* The positions of a lattice (origin x0, y0, @step) whose tissue share
 * reaches @min_tissue, counted pixel by pixel, in raster order. */
static GArray *
lattice_positions (const TestMask * t, gint64 x0, gint64 y0, gint64 step,
    gint64 side, gdouble min_tissue)
{
  GArray *out = g_array_new (FALSE, TRUE, sizeof (WsiSample));
  gint64 x, y;

  for (y = y0; y + side <= t->height; y += step)
    for (x = x0; x + side <= t->width; x += step)
      if (brute_fraction (t, x, y, side) >= min_tissue) {
        WsiSample s = { x, y, 0, 0, 0 };

        g_array_append_val (out, s);
      }
  return out;
}

/* @s[0..n) is exactly @cells (as sets), each once. */
static void
check_same_set (const WsiSample * s, guint n, const GArray * cells)
{
  WsiSample *sorted = g_memdup2 (s, n * sizeof (WsiSample));
  guint i;

  fail_unless_equals_int (n, cells->len);
  qsort (sorted, n, sizeof (WsiSample), compare_position);
  for (i = 0; i < n; i++) {
    const WsiSample *c = &g_array_index (cells, WsiSample, i);

    fail_unless (sorted[i].x == c->x && sorted[i].y == c->y,
        "position %u: (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") vs (%"
        G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")", i, sorted[i].x,
        sorted[i].y, c->x, c->y);
  }
  g_free (sorted);
}

static void
check_distinct (const WsiSample * s, guint n)
{
  guint i, j;

  for (i = 0; i < n; i++)
    for (j = i + 1; j < n; j++)
      fail_if (s[i].x == s[j].x && s[i].y == s[j].y, "samples %u and %u "
          "repeat a cell", i, j);
}

/* Every one of @cells is among @s[0..n). */
static void
check_covers (const WsiSample * s, guint n, const GArray * cells)
{
  guint i, j;

  for (i = 0; i < cells->len; i++) {
    const WsiSample *c = &g_array_index (cells, WsiSample, i);

    for (j = 0; j < n && (s[j].x != c->x || s[j].y != c->y); j++);
    fail_unless (j < n, "cell %u never visited", i);
  }
}

static void
check_no_overlap (const WsiSample * s, guint n)
{
  guint i, j;

  for (i = 0; i < n; i++)
    for (j = i + 1; j < n; j++)
      fail_unless (ABS (s[i].x - s[j].x) >= s[i].footprint ||
          ABS (s[i].y - s[j].y) >= s[i].footprint, "samples %u and %u "
          "overlap", i, j);
}

/* Without replacement, across visits: the first N positions (N = tissue
 * positions of the non-overlapping lattice) are all of them, once, none
 * overlapping; the next N are all of them again in a fresh order. */
GST_START_TEST (test_without_replacement_across_visits)
{
  WsiSamplingRequest req;
  WsiSample *all, *alone;
  GArray *cells;
  TestMask t;
  guint n_all, n_cells, n, chunk = 7, visits, i;

  test_mask_init (&t, 4096, 3072, 60, 50, 190, 150);
  request_init (&req, WSI_SAMPLING_RANDOM, 256, chunk);
  req.replacement = FALSE;
  req.min_tissue = 0.5;
  all = plan_visits (&req, &t.map, 1, &n_all);
  /* the lattice's origin is fixed per slide: read it off a position */
  cells = lattice_positions (&t, all[0].x % 256, all[0].y % 256, 256, 256,
      0.5);
  n_cells = cells->len;
  g_free (all);
  fail_unless (n_cells > 3 * chunk && n_cells % chunk != 0, "%u", n_cells);

  visits = (2 * n_cells + chunk - 1) / chunk + 1;
  all = plan_visits (&req, &t.map, visits, &n_all);
  fail_unless_equals_int (n_all, visits * chunk);
  check_samples (&t, &req, all, n_all);
  check_same_set (all, n_cells, cells);
  check_no_overlap (all, n_cells);
  check_same_set (all + n_cells, n_cells, cells);
  fail_unless_equals_int (wsi_sampling_epoch (n_cells, chunk, 0), 0);
  fail_unless_equals_int (wsi_sampling_epoch (n_cells, chunk,
          n_cells / chunk + 1), 1);
  /* a fresh shuffle, not a replay */
  for (i = 0; i < n_cells; i++)
    if (all[i].x != all[n_cells + i].x || all[i].y != all[n_cells + i].y)
      break;
  fail_unless (i < n_cells, "epoch 1 repeats epoch 0's order");

  /* a visit is a function of (seed, slide, visit) alone */
  req.visit = 5;
  alone = wsi_sampling_plan (&req, &t.map, &n);
  fail_unless_equals_int (n, chunk);
  fail_unless (memcmp (alone, all + 5 * chunk, chunk * sizeof (WsiSample))
      == 0);
  g_free (alone);
  /* another slide walks in another order */
  req.slide_index = 4;
  req.visit = 0;
  alone = wsi_sampling_plan (&req, &t.map, &n);
  fail_if (memcmp (alone, all, chunk * sizeof (WsiSample)) == 0);
  g_free (alone);

  g_free (all);
  g_array_unref (cells);
  test_mask_clear (&t);
}

GST_END_TEST;

/* A grid subset walks every cell before repeating one; each visit in
 * raster order. */
GST_START_TEST (test_grid_subset_coverage)
{
  WsiSamplingRequest req;
  WsiSample *all;
  GArray *cells;
  TestMask t;
  guint n_all, n_cells, chunk = 6, visits, v, i;

  test_mask_init (&t, 4096, 3072, 60, 50, 190, 150);
  cells = lattice_positions (&t, 0, 0, 192, 256, 1.0);
  n_cells = cells->len;
  fail_unless (n_cells > 3 * chunk && n_cells % chunk != 0, "%u", n_cells);
  request_init (&req, WSI_SAMPLING_GRID, 256, chunk);
  req.stride = 192;
  req.min_tissue = 1.0;
  visits = (2 * n_cells + chunk - 1) / chunk;
  all = plan_visits (&req, &t.map, visits, &n_all);
  check_samples (&t, &req, all, n_all);
  /* whole visits before the epoch ends: distinct cells; one visit more
   * (it finishes epoch 0 and starts epoch 1, sorted together) completes
   * the grid */
  check_distinct (all, (n_cells / chunk) * chunk);
  check_covers (all, (n_cells / chunk + 1) * chunk, cells);
  for (v = 0; v < visits; v++)
    for (i = v * chunk + 1; i < (v + 1) * chunk; i++)
      fail_unless (compare_position (&all[i - 1], &all[i]) <= 0,
          "visit %u not in raster order", v);
  g_free (all);

  /* every cell: the whole grid, raster order, every visit */
  req.n_wanted = -1;
  all = plan_visits (&req, &t.map, 2, &n_all);
  fail_unless_equals_int (n_all, 2 * n_cells);
  for (i = 0; i < n_cells; i++) {
    const WsiSample *c = &g_array_index (cells, WsiSample, i);

    fail_unless (all[i].x == c->x && all[i].y == c->y);
    fail_unless (all[n_cells + i].x == c->x && all[n_cells + i].y == c->y);
  }
  g_free (all);
  g_array_unref (cells);
  test_mask_clear (&t);
}

GST_END_TEST;

/* Same request, same plan; another visit, another plan (every mode). */
GST_START_TEST (test_determinism_every_mode)
{
  const gdouble mpps[] = { 0.5, 1.0 };
  WsiMppDistribution *discrete = wsi_mpp_distribution_new_discrete (mpps,
      NULL, 2);
  WsiMppDistribution *minmax =
      wsi_mpp_distribution_new_continuous (WSI_MPP_MINMAX, 0.25, 2, 1);
  WsiSamplingMode mode;
  TestMask t;

  test_mask_init (&t, 4096, 3072, 60, 50, 190, 150);
  for (mode = 0; mode < WSI_SAMPLING_N_MODES; mode++) {
    WsiSamplingRequest req;
    WsiSample *a, *b, *c;
    guint na, nb, nc;

    request_init (&req, mode, 256, 20);
    req.mpps = mode == WSI_SAMPLING_MULTI_MAGNIFICATION ? discrete : minmax;
    a = wsi_sampling_plan (&req, &t.map, &na);
    b = wsi_sampling_plan (&req, &t.map, &nb);
    req.visit = 1;
    c = wsi_sampling_plan (&req, &t.map, &nc);
    fail_unless_equals_int (na, 20);
    fail_unless_equals_int (nb, 20);
    fail_unless_equals_int (nc, 20);
    fail_unless (memcmp (a, b, na * sizeof (WsiSample)) == 0, "mode %d",
        mode);
    fail_if (memcmp (a, c, na * sizeof (WsiSample)) == 0, "mode %d", mode);
    g_free (a);
    g_free (b);
    g_free (c);
  }
  wsi_mpp_distribution_free (discrete);
  wsi_mpp_distribution_free (minmax);
  test_mask_clear (&t);
}

GST_END_TEST;

static Suite *
wsisampling_suite (void)
{
  Suite *s = suite_create ("wsisampling");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_tissue_fraction);
  tcase_add_test (tc, test_tissue_map_build_matches_brute_force);
  tcase_add_test (tc, test_tissue_map_matches_old_form);
  tcase_add_test (tc, test_parse_list);
  tcase_add_test (tc, test_quota);
  tcase_add_test (tc, test_discrete_histogram);
  tcase_add_test (tc, test_continuous_uniform_histogram);
  tcase_add_test (tc, test_continuous_maxavg_histogram);
  tcase_add_test (tc, test_continuous_minmax_equalises);
  tcase_add_test (tc, test_magnification_plans);
  tcase_add_test (tc, test_magnification_infeasible);
  tcase_add_test (tc, test_without_replacement_across_visits);
  tcase_add_test (tc, test_grid_subset_coverage);
  tcase_add_test (tc, test_determinism_every_mode);
  return s;
}

GST_CHECK_MAIN (wsisampling);
