/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* patchaugment and its kernels (wsiaugment.h): flips and turns against
 * numpy's definitions, HED against the peer's equations in double
 * precision, jitter and blur against plain reference formulas, the
 * identities (zero sigma, zero jitter, flat blur), byte-identical output for
 * any number of threads and across runs, seeds, pass-through without copy,
 * copy of shared buffers, multi-view buffers with their flags, flushing and
 * repeated NULL <-> PLAYING. Images are generated here. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <gst/wsi/wsirecord.h>
#include "wsiaugment.h"

#include "wsitestutil.h"

#define SIDE 48

/* Tightly packed random pixels from a small LCG (deterministic). */
static void
fill_random (guint8 * data, gsize size, guint32 seed)
{
  gsize i;

  for (i = 0; i < size; i++) {
    seed = seed * 1664525u + 1013904223u;
    data[i] = seed >> 24;
  }
}

static WsiAugmentImage
rgb_image (guint8 * data, guint w, guint h, gsize stride, guint pb)
{
  WsiAugmentImage im = { data, w, h, stride, pb, 0, 1, 2 };
  return im;
}

/* ---- flips and turns ----------------------------------------------------- */

/* numpy's definitions on an array of pixel ids: fliplr, flipud, rot90. */
static guint32 *
ref_flip_rotate (const guint32 * in, guint * w, guint * h, gboolean fh,
    gboolean fv, guint turns)
{
  guint32 *a = g_memdup2 (in, *w * *h * 4), *b;
  guint x, y, t;

  if (fh) {
    b = g_new (guint32, *w * *h);
    for (y = 0; y < *h; y++)
      for (x = 0; x < *w; x++)
        b[y * *w + x] = a[y * *w + (*w - 1 - x)];
    g_free (a);
    a = b;
  }
  if (fv) {
    b = g_new (guint32, *w * *h);
    for (y = 0; y < *h; y++)
      for (x = 0; x < *w; x++)
        b[y * *w + x] = a[(*h - 1 - y) * *w + x];
    g_free (a);
    a = b;
  }
  for (t = 0; t < turns; t++) {
    /* np.rot90: out[i][j] = in[j][w - 1 - i], out is w rows of h */
    guint nw = *h, nh = *w, i, j;

    b = g_new (guint32, nw * nh);
    for (i = 0; i < nh; i++)
      for (j = 0; j < nw; j++)
        b[i * nw + j] = a[j * *w + (*w - 1 - i)];
    g_free (a);
    a = b;
    *w = nw;
    *h = nh;
  }
  return a;
}

/* Every combination on square and non-square images, 3 and 4 bytes a
 * pixel, with padded rows: the output is the reference permutation. */
GST_START_TEST (test_flip_rotate_is_permutation)
{
  static const guint sizes[][2] = { {16, 16}, {12, 8}, {1, 1} };
  WsiAugmentScratch *scratch = wsi_augment_scratch_new ();
  guint si, pb, combo;

  for (si = 0; si < G_N_ELEMENTS (sizes); si++)
    for (pb = 3; pb <= 4; pb++)
      for (combo = 0; combo < 16; combo++) {
        guint w = sizes[si][0], h = sizes[si][1], rw = w, rh = h;
        gboolean fh = combo & 1, fv = (combo >> 1) & 1;
        guint turns = combo >> 2, expected_turns = w == h ? turns : 0;
        gsize stride = w * pb + 5;
        guint8 *data = g_malloc0 (stride * h);
        guint32 *ids = g_new (guint32, w * h), *want;
        WsiAugmentImage im = rgb_image (data, w, h, stride, pb);
        guint x, y;

        for (y = 0; y < h; y++)
          for (x = 0; x < w; x++) {
            guint8 *p = data + y * stride + x * pb;

            ids[y * w + x] = y * w + x;
            p[0] = x;
            p[1] = y;
            p[2] = (x * 7 + y) & 0xff;
            if (pb == 4)
              p[3] = 200 + (x + y) % 50;
          }
        wsi_augment_flip_rotate (&im, fh, fv, turns, scratch);
        want = ref_flip_rotate (ids, &rw, &rh, fh, fv, expected_turns);
        fail_unless_equals_int (rw, w);
        for (y = 0; y < h; y++)
          for (x = 0; x < w; x++) {
            const guint8 *p = data + y * stride + x * pb;
            guint sx = want[y * w + x] % w, sy = want[y * w + x] / w;

            fail_unless (p[0] == sx && p[1] == sy
                && p[2] == ((sx * 7 + sy) & 0xff)
                && (pb == 3 || p[3] == 200 + (sx + sy) % 50),
                "%ux%u pb %u fh %d fv %d turns %u: (%u,%u) holds (%u,%u), "
                "numpy says (%u,%u)", w, h, pb, fh, fv, turns, x, y, p[0],
                p[1], sx, sy);
          }
        /* the row padding is never written */
        for (y = 0; y < h; y++)
          fail_unless (data[y * stride + w * pb] == 0);
        g_free (want);
        g_free (ids);
        g_free (data);
      }
  wsi_augment_scratch_free (scratch);
}

GST_END_TEST;

/* ---- HED ----------------------------------------------------------------- */

static void
inverse3 (const gdouble m[3][3], gdouble inv[3][3])
{
  gdouble det = m[0][0] * (m[1][1] * m[2][2] - m[2][1] * m[1][2])
      - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
      + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);

  inv[0][0] = (m[1][1] * m[2][2] - m[2][1] * m[1][2]) / det;
  inv[0][1] = (m[0][2] * m[2][1] - m[0][1] * m[2][2]) / det;
  inv[0][2] = (m[0][1] * m[1][2] - m[0][2] * m[1][1]) / det;
  inv[1][0] = (m[1][2] * m[2][0] - m[1][0] * m[2][2]) / det;
  inv[1][1] = (m[0][0] * m[2][2] - m[0][2] * m[2][0]) / det;
  inv[1][2] = (m[1][0] * m[0][2] - m[0][0] * m[1][2]) / det;
  inv[2][0] = (m[1][0] * m[2][1] - m[2][0] * m[1][1]) / det;
  inv[2][1] = (m[2][0] * m[0][1] - m[0][0] * m[2][1]) / det;
  inv[2][2] = (m[0][0] * m[1][1] - m[1][0] * m[0][1]) / det;
}

/* The peer's HEDColorAugmentation.__call__ for one pixel, in double,
 * rounded instead of truncated. */
static void
ref_hed_pixel (const guint8 in[3], guint8 out[3], const gfloat alpha[3],
    const gfloat beta[3])
{
  static const gdouble rgb_from_hed[3][3] = {
    {0.65, 0.70, 0.29}, {0.07, 0.99, 0.11}, {0.27, 0.57, 0.78}
  };
  gdouble hed_from_rgb[3][3], od[3], s[3];
  guint c, k;

  inverse3 (rgb_from_hed, hed_from_rgb);
  for (c = 0; c < 3; c++)
    od[c] = -log (in[c] / 255.0 + 1e-6);
  for (k = 0; k < 3; k++) {
    s[k] = 0;
    for (c = 0; c < 3; c++)
      s[k] += od[c] * hed_from_rgb[c][k];
    s[k] = s[k] * alpha[k] + beta[k];
  }
  for (k = 0; k < 3; k++) {
    gdouble o = 0, p;

    for (c = 0; c < 3; c++)
      o += s[c] * rgb_from_hed[c][k];
    p = exp (-o) - 1e-6;
    out[k] = (guint8) CLAMP (lround (p * 255.0), 0, 255);
  }
}

/* 2^12 grey and random colours, 4-byte BGRx-like layout with R last: the
 * kernel follows the channel offsets. */
GST_START_TEST (test_hed_matches_peer_equations)
{
  const guint w = 64, h = 64, pb = 4;
  const gfloat one[3] = { 1, 1, 1 }, zero[3] = { 0, 0, 0 };
  const gfloat alpha[3] = { 1.18f, 0.83f, 1.05f };
  const gfloat beta[3] = { -0.12f, 0.07f, 0.2f };
  /* beyond the element's ranges: the kernel's unpacked path */
  const gfloat alpha_far[3] = { 4.0f, 0.2f, 3.5f };
  const gfloat beta_far[3] = { 1.5f, -2.0f, 0.5f };
  WsiAugmentScratch *scratch = wsi_augment_scratch_new ();
  guint8 *orig = g_malloc (w * h * pb), *data = g_malloc (w * h * pb);
  WsiAugmentImage im = { data, w, h, w * pb, pb, 2, 1, 0 };
  guint round, i, changed = 0;

  fill_random (orig, w * h * pb, 5);
  for (i = 0; i < 256; i++)     /* every grey level, black and white */
    orig[i * pb] = orig[i * pb + 1] = orig[i * pb + 2] = i;

  for (round = 0; round < 3; round++) {
    const gfloat *a = round == 2 ? alpha_far : round ? alpha : one;
    const gfloat *b = round == 2 ? beta_far : round ? beta : zero;

    memcpy (data, orig, w * h * pb);
    wsi_augment_hed (&im, a, b, scratch);
    for (i = 0; i < w * h; i++) {
      const guint8 *p = orig + i * pb, *q = data + i * pb;
      guint8 rgb[3] = { p[2], p[1], p[0] }, want[3];
      guint c;

      ref_hed_pixel (rgb, want, a, b);
      for (c = 0; c < 3; c++) {
        fail_unless (ABS ((gint) q[2 - c] - (gint) want[c]) <= 1,
            "round %u pixel %u channel %u: %u, equations %u", round, i, c,
            q[2 - c], want[c]);
        /* zero sigma: the identity within rounding */
        if (round == 0)
          fail_unless (ABS ((gint) q[2 - c] - (gint) rgb[c]) <= 1,
              "identity: pixel %u channel %u %u -> %u", i, c, rgb[c],
              q[2 - c]);
        changed += round == 1 && q[2 - c] != rgb[c];
      }
      fail_unless_equals_int (q[3], p[3]);      /* 4th byte untouched */
    }
  }
  fail_unless (changed > w * h, "HED with sigma barely changed anything");
  g_free (orig);
  g_free (data);
  wsi_augment_scratch_free (scratch);
}

GST_END_TEST;

/* ---- jitter -------------------------------------------------------------- */

GST_START_TEST (test_jitter)
{
  const guint w = 40, h = 30, pb = 3;
  WsiAugmentScratch *scratch = wsi_augment_scratch_new ();
  guint8 *orig = g_malloc (w * h * pb), *data = g_malloc (w * h * pb);
  WsiAugmentImage im = rgb_image (data, w, h, w * pb, pb);
  guint i, k;

  fill_random (orig, w * h * pb, 9);

  /* zero amounts: exactly the identity */
  memcpy (data, orig, w * h * pb);
  wsi_augment_jitter (&im, 1.0f, 1.0f, 1.0f, 0.0f, scratch);
  fail_unless (memcmp (data, orig, w * h * pb) == 0);

  /* brightness alone: clamp (b x) */
  memcpy (data, orig, w * h * pb);
  wsi_augment_jitter (&im, 1.3f, 1.0f, 1.0f, 0.0f, scratch);
  for (i = 0; i < w * h * pb; i++)
    fail_unless (ABS ((gint) data[i] - (gint) MIN (255,
                lround (1.3 * orig[i]))) <= 1, "brightness byte %u", i);

  /* contrast 0: every pixel becomes the mean grey (after brightness) */
  for (k = 0; k < 2; k++) {
    gdouble mean = 0, b = k ? 1.7 : 1.0;

    memcpy (data, orig, w * h * pb);
    wsi_augment_jitter (&im, b, 0.0f, 1.0f, 0.0f, scratch);
    for (i = 0; i < w * h; i++)
      mean += 0.2989 * MIN (255.0, b * orig[3 * i]) +
          0.587 * MIN (255.0, b * orig[3 * i + 1]) +
          0.114 * MIN (255.0, b * orig[3 * i + 2]);
    mean /= w * h;
    for (i = 0; i < w * h * pb; i++)
      fail_unless (ABS ((gint) data[i] - (gint) lround (mean)) <= 1,
          "brightness %g: %u, mean grey %g", b, data[i], mean);
  }

  /* saturation 0: grey pixels, R = G = B */
  memcpy (data, orig, w * h * pb);
  wsi_augment_jitter (&im, 1.0f, 1.0f, 0.0f, 0.0f, scratch);
  for (i = 0; i < w * h; i++) {
    gint grey = lround (0.2989 * orig[3 * i] + 0.587 * orig[3 * i + 1] +
        0.114 * orig[3 * i + 2]);

    fail_unless (ABS (data[3 * i] - grey) <= 1 && ABS (data[3 * i + 1] -
            grey) <= 1 && ABS (data[3 * i + 2] - grey) <= 1);
  }

  /* saturation 6 (beyond the element's range: the unpacked path) */
  memcpy (data, orig, w * h * pb);
  wsi_augment_jitter (&im, 1.0f, 1.0f, 6.0f, 0.0f, scratch);
  for (i = 0; i < w * h; i++) {
    gdouble grey = 0.2989 * orig[3 * i] + 0.587 * orig[3 * i + 1] +
        0.114 * orig[3 * i + 2];
    guint c;

    for (c = 0; c < 3; c++)
      fail_unless (ABS (data[3 * i + c] - CLAMP (lround (grey + 6.0 *
                      (orig[3 * i + c] - grey)), 0, 255)) <= 1);
  }

  /* greyscale: R = G = B = the grey */
  memcpy (data, orig, w * h * pb);
  wsi_augment_grayscale (&im, scratch);
  for (i = 0; i < w * h; i++) {
    gint grey = lround (0.2989 * orig[3 * i] + 0.587 * orig[3 * i + 1] +
        0.114 * orig[3 * i + 2]);

    fail_unless (data[3 * i] == data[3 * i + 1]
        && data[3 * i] == data[3 * i + 2] && ABS (data[3 * i] - grey) <= 1);
  }

  /* solarization: exactly PIL's table; 256 changes nothing */
  for (k = 0; k < 3; k++) {
    static const guint thresholds[] = { 128, 0, 256 };
    guint t = thresholds[k];

    memcpy (data, orig, w * h * pb);
    wsi_augment_solarize (&im, t);
    for (i = 0; i < w * h * pb; i++)
      fail_unless_equals_int (data[i], orig[i] >= t ? 255 - orig[i] :
          orig[i]);
  }

  /* a hue turn leaves grey grey and moves colours */
  memset (data, 128, w * h * pb);
  wsi_augment_jitter (&im, 1.0f, 1.0f, 1.0f, 0.3f, scratch);
  for (i = 0; i < w * h * pb; i++)
    fail_unless (ABS ((gint) data[i] - 128) <= 1);
  memcpy (data, orig, w * h * pb);
  wsi_augment_jitter (&im, 1.0f, 1.0f, 1.0f, 0.3f, scratch);
  fail_unless (memcmp (data, orig, w * h * pb) != 0);

  g_free (orig);
  g_free (data);
  wsi_augment_scratch_free (scratch);
}

GST_END_TEST;

/* ---- blur ---------------------------------------------------------------- */

static gint
ref_reflect (gint i, gint n)
{
  if (n == 1)
    return 0;
  while (i < 0 || i >= n)
    i = i < 0 ? -i : 2 * n - 2 - i;
  return i;
}

GST_START_TEST (test_blur)
{
  const guint w = 37, h = 29, pb = 4;
  const gsize stride = w * pb + 12;
  WsiAugmentScratch *scratch = wsi_augment_scratch_new ();
  guint8 *orig = g_malloc (stride * h), *data = g_malloc (stride * h);
  WsiAugmentImage im = rgb_image (data, w, h, stride, pb);
  /* radius 0: ceil (3 sigma); the last is torchvision's kernel_size 9 */
  const gfloat sigmas[] = { 0.4f, 1.3f, 4.0f, 2.0f };
  const guint radii[] = { 0, 0, 0, 4 };
  guint s, x, y, b;

  /* a flat image keeps its colour exactly */
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++) {
      guint8 *p = data + y * stride + x * pb;

      p[0] = 120;
      p[1] = 60;
      p[2] = 201;
      p[3] = 255;
    }
  wsi_augment_blur (&im, 2.0f, 0, scratch);
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++) {
      guint8 *p = data + y * stride + x * pb;

      fail_unless (p[0] == 120 && p[1] == 60 && p[2] == 201 && p[3] == 255);
    }

  /* noise against a direct 2-D convolution with mirrored borders */
  fill_random (orig, stride * h, 3);
  for (s = 0; s < G_N_ELEMENTS (sigmas); s++) {
    gint r = radii[s] ? (gint) radii[s] : (gint) ceil (3 * sigmas[s]), i, j;
    gdouble wts[64], sum = 0, var_in = 0, var_out = 0;

    for (i = -r; i <= r; i++)
      sum += wts[i + r] = exp (-(gdouble) i * i / (2.0 * sigmas[s] *
              sigmas[s]));
    for (i = -r; i <= r; i++)
      wts[i + r] /= sum;
    memcpy (data, orig, stride * h);
    wsi_augment_blur (&im, sigmas[s], radii[s], scratch);
    for (y = 0; y < h; y++)
      for (x = 0; x < w; x++)
        for (b = 0; b < pb; b++) {
          gdouble acc = 0, d;

          for (j = -r; j <= r; j++)
            for (i = -r; i <= r; i++)
              acc += wts[j + r] * wts[i + r] *
                  orig[ref_reflect (y + j, h) * stride +
                  ref_reflect (x + i, w) * pb + b];
          d = data[y * stride + x * pb + b];
          fail_unless (fabs (d - acc) <= 1.0, "sigma %g (%u,%u,%u): %g, "
              "convolution %g", sigmas[s], x, y, b, d, acc);
          var_in += (orig[y * stride + x * pb + b] - 127.5) *
              (orig[y * stride + x * pb + b] - 127.5);
          var_out += (d - 127.5) * (d - 127.5);
        }
    if (sigmas[s] >= 1.0f)
      fail_unless (var_out < var_in / 4, "blur did not smooth noise");
    /* the row padding is never written */
    for (y = 0; y < h; y++)
      fail_unless (memcmp (data + y * stride + w * pb,
              orig + y * stride + w * pb, 12) == 0);
  }
  /* images smaller than the kernel: mirrored indices stay inside */
  {
    static const guint tiny[][2] = { {1, 1}, {2, 1}, {1, 3}, {3, 2} };
    guint t;

    for (t = 0; t < G_N_ELEMENTS (tiny); t++) {
      WsiAugmentImage small = rgb_image (data, tiny[t][0], tiny[t][1],
          tiny[t][0] * 3, 3);

      memset (data, 77, tiny[t][0] * tiny[t][1] * 3);
      wsi_augment_blur (&small, 5.0f, 0, scratch);
      for (x = 0; x < tiny[t][0] * tiny[t][1] * 3; x++)
        fail_unless_equals_int (data[x], 77);
    }
  }
  g_free (orig);
  g_free (data);
  wsi_augment_scratch_free (scratch);
}

GST_END_TEST;

/* ---- plans --------------------------------------------------------------- */

GST_START_TEST (test_plan_draws)
{
  WsiAugmentSettings s = { 0.5, 0.5, 0.5, 0.1, 0.1, 0.5, 0.4, 0.4, 0.2, 0.1,
    0.5, 0.1, 2.0, 0.5
  };
  WsiAugmentSettings off = s;
  WsiAugmentPlan a, b;
  guint i, flips = 0, turns[4] = { 0 }, differ = 0;

  for (i = 0; i < 4000; i++) {
    wsi_augment_plan_draw (&a, &s, 42, i, 0);
    wsi_augment_plan_draw (&b, &s, 42, i, 0);
    fail_unless (memcmp (&a, &b, sizeof (a)) == 0, "not a pure function");
    flips += a.flip_h;
    turns[a.quarter_turns]++;
    fail_unless (a.hed_alpha[0] >= 0.9f && a.hed_alpha[0] <= 1.1f);
    fail_unless (a.blur_sigma >= 0.1f && a.blur_sigma <= 2.0f);
    wsi_augment_plan_draw (&b, &s, 42, i, 1);
    differ += memcmp (&a, &b, sizeof (a)) != 0;
  }
  /* probability 0.5 and 1..3 turns equally likely: loose 6-sigma bounds */
  fail_unless (flips > 1800 && flips < 2200, "%u flips", flips);
  fail_unless (turns[0] > 1800 && turns[0] < 2200);
  for (i = 1; i < 4; i++)
    fail_unless (turns[i] > 560 && turns[i] < 780, "%u turns: %u", i,
        turns[i]);
  fail_unless_equals_int (differ, 4000);

  /* switching one operation off leaves the other draws alone */
  off.hed_probability = 0;
  wsi_augment_plan_draw (&a, &s, 7, 99, 2);
  wsi_augment_plan_draw (&b, &off, 7, 99, 2);
  fail_unless (!b.hed);
  fail_unless (a.flip_h == b.flip_h && a.quarter_turns == b.quarter_turns
      && a.brightness == b.brightness && a.blur_sigma == b.blur_sigma);
  /* greyscale and solarization draw after everything else */
  off = s;
  off.grayscale_probability = off.solarize_probability = 1.0;
  wsi_augment_plan_draw (&b, &off, 7, 99, 2);
  fail_unless (b.grayscale && b.solarize && !a.grayscale && !a.solarize);
  b.grayscale = b.solarize = FALSE;
  fail_unless (memcmp (&a, &b, sizeof (a)) == 0);
  off = s;
  off.hed_probability = 0;
  off.flip_h_probability = off.flip_v_probability = 0;
  off.rotate90_probability = off.jitter_probability = 0;
  off.blur_probability = 0;
  fail_unless (wsi_augment_settings_is_identity (&off));
  fail_unless (!wsi_augment_settings_is_identity (&s));
}

GST_END_TEST;

/* ---- the element -------------------------------------------------------- */

#define ALL_ON "flip-h=0.5 flip-v=0.5 rotate90=0.5 hed-probability=0.7 " \
  "hed-sigma=0.1 jitter-probability=0.6 blur-probability=0.4 " \
  "blur-sigma-max=1.5 blur-radius=4 grayscale-probability=0.2 " \
  "solarize-probability=0.3 solarize-threshold=100"

/* An RGB patch SIDE x SIDE of sequence @seq with its WsiPatchMeta. */
static GstBuffer *
make_patch (guint64 seq)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, SIDE * SIDE * 3, NULL);
  WsiPatchRecord rec = { 0 };
  const gchar *paths[] = { "/slides/a.tiff", NULL };
  const gchar *labels[] = { "", NULL };
  GstMapInfo map;

  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  fill_random (map.data, map.size, 1000 + seq);
  gst_buffer_unmap (buf, &map);
  rec.sequence = seq;
  rec.out_size = SIDE;
  wsi_patch_meta_add (buf, &rec, 1, paths, labels);
  GST_BUFFER_OFFSET (buf) = seq;
  return buf;
}

static GstHarness *
augment_harness (const gchar * props)
{
  gchar *launch = g_strdup_printf ("patchaugment %s", props);
  GstHarness *h = gst_harness_new_parse (launch);

  g_free (launch);
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGB,width=48,"
      "height=48,framerate=0/1");
  return h;
}

/* Pushes patches 0..n-1 and returns the checksum of every output byte, in
 * order; checks that the sequences come out in order. */
static gchar *
run_checksum (const gchar * props, guint n)
{
  GstHarness *h = augment_harness (props);
  GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
  gchar *hex;
  guint i;

  for (i = 0; i < n; i++)
    fail_unless_equals_int (gst_harness_push (h, make_patch (i)),
        GST_FLOW_OK);
  for (i = 0; i < n; i++) {
    GstBuffer *out = gst_harness_pull (h);
    GstMapInfo map;

    fail_unless (out != NULL);
    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (out), i);
    gst_buffer_map (out, &map, GST_MAP_READ);
    g_checksum_update (sum, map.data, map.size);
    gst_buffer_unmap (out, &map);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
  hex = g_strdup (g_checksum_get_string (sum));
  g_checksum_free (sum);
  return hex;
}

GST_START_TEST (test_threads_identical)
{
  gchar *one = run_checksum ("threads=1 seed=5 " ALL_ON, 40);
  gchar *two = run_checksum ("threads=2 seed=5 " ALL_ON, 40);
  gchar *four = run_checksum ("threads=4 seed=5 " ALL_ON, 40);
  gchar *again = run_checksum ("threads=4 seed=5 " ALL_ON, 40);
  gchar *other = run_checksum ("threads=2 seed=6 " ALL_ON, 40);
  gchar *none = run_checksum ("threads=2 seed=5 flip-h=0 flip-v=0 "
      "rotate90=0", 40);
  GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
  guint i;

  fail_unless_equals_string (one, two);
  fail_unless_equals_string (one, four);
  fail_unless_equals_string (four, again);
  fail_unless (strcmp (one, other) != 0, "the seed changes nothing");
  /* all probabilities 0: the input itself */
  for (i = 0; i < 40; i++) {
    GstBuffer *b = make_patch (i);
    GstMapInfo map;

    gst_buffer_map (b, &map, GST_MAP_READ);
    g_checksum_update (sum, map.data, map.size);
    gst_buffer_unmap (b, &map);
    gst_buffer_unref (b);
  }
  fail_unless_equals_string (none, g_checksum_get_string (sum));
  fail_unless (strcmp (one, none) != 0);
  g_checksum_free (sum);
  g_free (one);
  g_free (two);
  g_free (four);
  g_free (again);
  g_free (other);
  g_free (none);
}

GST_END_TEST;

/* The element's output is the kernel run on the plan of (seed, the
 * record's sequence, view 0): the buffer offset does not key it. */
GST_START_TEST (test_output_is_plan_of_sequence)
{
  GstHarness *h = augment_harness ("threads=2 seed=77 " ALL_ON);
  WsiAugmentSettings s = { 0.5, 0.5, 0.5, 0.1, 0.1, 0.7, 0.4, 0.4, 0.2, 0.1,
    0.6, 0.1, 1.5, 0.4, 4, 0.2, 0.3, 100
  };
  WsiAugmentScratch *scratch = wsi_augment_scratch_new ();
  guint i, augmented = 0;

  for (i = 0; i < 12; i++) {
    GstBuffer *in = make_patch (100 + i), *out;
    GstMapInfo map, omap;
    WsiAugmentPlan plan;
    WsiAugmentImage im;

    gst_buffer_map (in, &map, GST_MAP_READ);
    {
      guint8 *want = g_memdup2 (map.data, map.size);

      gst_buffer_unmap (in, &map);
      GST_BUFFER_OFFSET (in) = 5;       /* not the key */
      fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
      out = gst_harness_pull (h);
      wsi_augment_plan_draw (&plan, &s, 77, 100 + i, 0);
      augmented += !wsi_augment_plan_is_identity (&plan);
      im = rgb_image (want, SIDE, SIDE, SIDE * 3, 3);
      wsi_augment_apply (&plan, &im, scratch);
      gst_buffer_map (out, &omap, GST_MAP_READ);
      fail_unless (memcmp (omap.data, want, omap.size) == 0,
          "patch %u differs from its plan", i);
      gst_buffer_unmap (out, &omap);
      gst_buffer_unref (out);
      g_free (want);
    }
  }
  fail_unless (augmented > 6);
  wsi_augment_scratch_free (scratch);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* All probabilities 0: the very buffer passes; a shared buffer is copied,
 * never written. */
GST_START_TEST (test_passthrough_and_copy)
{
  GstHarness *h = augment_harness ("threads=1 flip-h=0 flip-v=0 rotate90=0");
  GstBuffer *in = make_patch (3), *out, *orig_copy;
  GstMapInfo a, b;

  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
      GST_FLOW_OK);
  out = gst_harness_pull (h);
  /* the same pixels (the pool may add its meta to a shallow copy) */
  fail_unless (gst_buffer_peek_memory (out, 0) ==
      gst_buffer_peek_memory (in, 0), "pass-through copied the pixels");
  gst_buffer_unref (out);
  gst_harness_teardown (h);

  /* flips always: our reference keeps the input shared */
  h = augment_harness ("threads=1 flip-h=1 flip-v=0 rotate90=0");
  orig_copy = gst_buffer_copy_deep (in);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
      GST_FLOW_OK);
  out = gst_harness_pull (h);
  fail_unless (out != in);
  gst_buffer_map (in, &a, GST_MAP_READ);
  gst_buffer_map (orig_copy, &b, GST_MAP_READ);
  fail_unless (memcmp (a.data, b.data, a.size) == 0, "shared input written");
  gst_buffer_unmap (orig_copy, &b);
  gst_buffer_map (out, &b, GST_MAP_READ);
  /* first pixel of the output = last pixel of the input's first row */
  fail_unless (memcmp (b.data, a.data + (SIDE - 1) * 3, 3) == 0);
  gst_buffer_unmap (out, &b);
  gst_buffer_unmap (in, &a);
  gst_buffer_unref (out);
  gst_buffer_unref (orig_copy);
  gst_buffer_unref (in);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Two locations, three views (32 and 16 px square, 24x16): every image is
 * its plan (seed, location sequence, view index) run on the input, and the
 * flags say which flips and turns were applied. */
GST_START_TEST (test_multi_view)
{
  static const guint dims[3][2] = { {32, 32}, {16, 16}, {24, 16} };
  const guint count = 2, n_views = 3;
  GstHarness *h = gst_harness_new_parse ("patchaugment threads=2 seed=3 "
      "flip-h=0.5 flip-v=0.5 rotate90=1 hed-probability=0.5");
  WsiAugmentSettings s = { 0.5, 0.5, 1.0, 0.05, 0.05, 0.5, 0.4, 0.4, 0.2,
    0.1, 0.0, 0.1, 2.0, 0.0
  };
  WsiAugmentScratch *scratch = wsi_augment_scratch_new ();
  WsiPatchRecord recs[2] = { {0}, {0} };
  WsiViewRecord views[6];
  const gchar *paths[] = { "/a.tiff", "/b.tiff", NULL };
  const gchar *labels[] = { "", "", NULL };
  const gchar *names[] = { "global_0", "local_0", "wide", NULL };
  guint8 *inputs[3];
  GstBuffer *buf, *out;
  GstStructure *meta;
  const WsiViewRecord *out_views;
  guint v, i, n_total, flagged = 0;
  GBytes *bytes;

  gst_harness_set_src_caps_str (h, "application/x-wsi-views,format=RGB,"
      "n-views=3");
  recs[0].sequence = 10;
  recs[1].sequence = 11;
  buf = gst_buffer_new ();
  for (v = 0; v < n_views; v++) {
    gsize size = dims[v][0] * dims[v][1] * 3;

    inputs[v] = g_malloc (size * count);
    fill_random (inputs[v], size * count, 50 + v);
    {
      gpointer copy = g_memdup2 (inputs[v], size * count);

      gst_buffer_append_memory (buf, gst_memory_new_wrapped (0, copy,
              size * count, 0, size * count, copy, g_free));
    }
    for (i = 0; i < count; i++) {
      WsiViewRecord *vr = &views[i * n_views + v];

      memset (vr, 0, sizeof (*vr));
      vr->view_index = v;
      vr->out_width = dims[v][0];
      vr->out_height = dims[v][1];
      vr->flags = v == 2 ? WSI_VIEW_FLAG_CONTEXT : 0;
    }
  }
  meta = wsi_patch_meta_add (buf, recs, count, paths, labels);
  bytes = g_bytes_new (views, sizeof (views));
  gst_structure_set (meta, "record-version", G_TYPE_UINT, 2, "view-names",
      G_TYPE_STRV, names, "views", G_TYPE_BYTES, bytes, NULL);
  g_bytes_unref (bytes);

  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  out = gst_harness_pull (h);
  fail_unless_equals_int (gst_buffer_n_memory (out), n_views);
  meta = wsi_patch_meta_get (out);
  out_views = wsi_patch_meta_views (meta, &n_total);
  fail_unless_equals_int (n_total, count * n_views);
  for (v = 0; v < n_views; v++) {
    gsize size = dims[v][0] * dims[v][1] * 3;
    GstMapInfo map;

    gst_buffer_map_range (out, v, 1, &map, GST_MAP_READ);
    fail_unless_equals_int (map.size, size * count);
    for (i = 0; i < count; i++) {
      const WsiViewRecord *vr = &out_views[i * n_views + v];
      WsiAugmentPlan plan;
      WsiAugmentImage im;
      guint turns, want_flags;

      wsi_augment_plan_draw (&plan, &s, 3, recs[i].sequence, v);
      im = rgb_image (inputs[v] + i * size, dims[v][0], dims[v][1],
          dims[v][0] * 3, 3);
      turns = wsi_augment_apply (&plan, &im, scratch);
      fail_unless (memcmp (map.data + i * size, inputs[v] + i * size,
              size) == 0, "view %u location %u differs from its plan", v, i);
      want_flags = (v == 2 ? WSI_VIEW_FLAG_CONTEXT : 0)
          | (plan.flip_h ? WSI_VIEW_FLAG_FLIP_H : 0)
          | (plan.flip_v ? WSI_VIEW_FLAG_FLIP_V : 0)
          | (turns << WSI_VIEW_FLAG_ROT_SHIFT);
      fail_unless_equals_int (vr->flags, want_flags);
      /* rotate90=1: square views always turn, the 24x16 one never */
      fail_unless ((turns != 0) == (v != 2));
      flagged += vr->flags != 0;
      fail_unless_equals_int (vr->out_width, dims[v][0]);
    }
    gst_buffer_unmap (out, &map);
  }
  fail_unless (flagged >= 4);
  gst_buffer_unref (out);
  for (v = 0; v < n_views; v++)
    g_free (inputs[v]);
  wsi_augment_scratch_free (scratch);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A buffer of @count locations and views global_0, global_1, local_0
 * (16 px each), random pixels from @seed. */
static GstBuffer *
make_named_views (guint count, guint seed)
{
  const gchar *names[] = { "global_0", "global_1", "local_0", NULL };
  const gchar *paths[] = { "/a.tiff", "/a.tiff", "/a.tiff", NULL };
  const gchar *labels[] = { "", "", "", NULL };
  WsiPatchRecord recs[3];
  WsiViewRecord views[9];
  GstBuffer *buf = gst_buffer_new ();
  GstStructure *meta;
  GBytes *bytes;
  guint v, i;

  memset (recs, 0, sizeof (recs));
  memset (views, 0, sizeof (views));
  for (i = 0; i < count; i++) {
    recs[i].sequence = 30 + i;
    for (v = 0; v < 3; v++) {
      views[i * 3 + v].view_index = v;
      views[i * 3 + v].out_width = views[i * 3 + v].out_height = 16;
    }
  }
  for (v = 0; v < 3; v++) {
    gsize size = 16 * 16 * 3 * count;
    guint8 *data = g_malloc (size);

    fill_random (data, size, seed + v);
    gst_buffer_append_memory (buf, gst_memory_new_wrapped (0, data, size, 0,
            size, data, g_free));
  }
  meta = wsi_patch_meta_add (buf, recs, count, paths, labels);
  bytes = g_bytes_new (views, count * 3 * sizeof (WsiViewRecord));
  gst_structure_set (meta, "record-version", G_TYPE_UINT, 2, "view-names",
      G_TYPE_STRV, names, "views", G_TYPE_BYTES, bytes, NULL);
  g_bytes_unref (bytes);
  return buf;
}

/* views= picks views by name or group; the others keep their pixels and
 * flags. */
GST_START_TEST (test_view_selection)
{
  static const struct
  {
    const gchar *views;
    gboolean selected[3];
  } cases[] = {
    {"global", {TRUE, TRUE, FALSE}},
    {"global_1, local", {FALSE, TRUE, TRUE}},
    {"local_0", {FALSE, FALSE, TRUE}},
    {"", {TRUE, TRUE, TRUE}},
    {"glob", {FALSE, FALSE, FALSE}},
  };
  guint c, v, i;

  for (c = 0; c < G_N_ELEMENTS (cases); c++) {
    gchar *launch = g_strdup_printf ("patchaugment threads=2 flip-h=1 "
        "flip-v=0 rotate90=0 views=\"%s\"", cases[c].views);
    GstHarness *h = gst_harness_new_parse (launch);
    GstBuffer *in = make_named_views (2, 7), *out;
    const WsiViewRecord *vr;
    guint n;

    gst_harness_set_src_caps_str (h, "application/x-wsi-views,format=RGB,"
        "n-views=3");
    fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
        GST_FLOW_OK);
    out = gst_harness_pull (h);
    vr = wsi_patch_meta_views (wsi_patch_meta_get (out), &n);
    fail_unless_equals_int (n, 6);
    for (v = 0; v < 3; v++) {
      GstMapInfo a, b;

      gst_buffer_map_range (in, v, 1, &a, GST_MAP_READ);
      gst_buffer_map_range (out, v, 1, &b, GST_MAP_READ);
      for (i = 0; i < 2; i++) {
        const guint8 *pin = a.data + i * 16 * 16 * 3;
        const guint8 *pout = b.data + i * 16 * 16 * 3;

        /* flipped: the first pixel is the input row's last */
        fail_unless_equals_int (memcmp (pout, pin + 15 * 3, 3) == 0 &&
            memcmp (pin, pout, 16 * 16 * 3) != 0, cases[c].selected[v]);
        if (!cases[c].selected[v])
          fail_unless (memcmp (pin, pout, 16 * 16 * 3) == 0);
        fail_unless_equals_int (vr[i * 3 + v].flags,
            cases[c].selected[v] ? WSI_VIEW_FLAG_FLIP_H : 0);
      }
      gst_buffer_unmap (in, &a);
      gst_buffer_unmap (out, &b);
    }
    gst_buffer_unref (out);
    gst_buffer_unref (in);
    gst_harness_teardown (h);
    g_free (launch);
  }
}

GST_END_TEST;

/* A multi-view buffer whose memories do not match its caps stops the
 * stream with an error naming the slide. */
GST_START_TEST (test_bad_views)
{
  GstHarness *h = gst_harness_new_parse ("patchaugment threads=2 flip-h=1");
  GstBus *bus = gst_bus_new ();
  WsiPatchRecord rec = { 0 };
  WsiViewRecord views[3];
  const gchar *paths[] = { "/slides/odd.svs", NULL };
  const gchar *labels[] = { "", NULL };
  GstStructure *meta;
  GstMessage *msg;
  GstBuffer *buf;
  GBytes *bytes;
  GError *err = NULL;
  guint v;

  gst_element_set_bus (h->element, bus);
  gst_harness_set_src_caps_str (h, "application/x-wsi-views,format=RGB,"
      "n-views=3");
  buf = gst_buffer_new ();
  memset (views, 0, sizeof (views));
  for (v = 0; v < 2; v++)       /* one memory short */
    gst_buffer_append_memory (buf, gst_allocator_alloc (NULL, 16 * 16 * 3,
            NULL));
  for (v = 0; v < 3; v++) {
    views[v].view_index = v;
    views[v].out_width = views[v].out_height = 16;
  }
  meta = wsi_patch_meta_add (buf, &rec, 1, paths, labels);
  bytes = g_bytes_new (views, sizeof (views));
  gst_structure_set (meta, "views", G_TYPE_BYTES, bytes, NULL);
  g_bytes_unref (bytes);
  gst_harness_push (h, buf);
  msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no error for a buffer short of a view");
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, "/slides/odd.svs") != NULL &&
      strstr (err->message, "2 memories") != NULL, "%s", err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A flush in the middle discards nothing that matters: the stream goes
 * on, in order, with the same pixels. */
GST_START_TEST (test_flush)
{
  GstHarness *h = augment_harness ("threads=2 seed=1 " ALL_ON);
  GstBuffer *out;
  guint i;

  for (i = 0; i < 5; i++)
    gst_harness_push (h, make_patch (i));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  /* whatever came out before the flush is in order */
  while ((out = gst_harness_try_pull (h)) != NULL)
    gst_buffer_unref (out);
  {
    GstSegment seg;

    gst_segment_init (&seg, GST_FORMAT_TIME);
    fail_unless (gst_harness_push_event (h, gst_event_new_segment (&seg)));
  }
  for (i = 20; i < 24; i++)
    fail_unless_equals_int (gst_harness_push (h, make_patch (i)),
        GST_FLOW_OK);
  for (i = 20; i < 24; i++) {
    out = gst_harness_pull (h);
    fail_unless (out != NULL);
    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (out), i);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

/* One pipeline, three NULL -> PLAYING -> NULL rounds: same output each. */
GST_START_TEST (test_state_cycles)
{
  GstElement *pipeline = gst_parse_launch ("appsrc name=src format=time "
      "caps=video/x-raw,format=RGB,width=48,height=48,framerate=0/1 ! "
      "patchaugment threads=3 seed=9 " ALL_ON " ! appsink name=sink "
      "sync=false", NULL);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  gchar *round0 = NULL;
  guint round, i;

  for (round = 0; round < 3; round++) {
    GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
    GstSample *sample;

    fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    for (i = 0; i < 16; i++)
      fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src),
              make_patch (i)), GST_FLOW_OK);
    gst_app_src_end_of_stream (GST_APP_SRC (src));
    for (i = 0; i < 16; i++) {
      GstMapInfo map;

      sample = gst_app_sink_pull_sample (GST_APP_SINK (sink));
      fail_unless (sample != NULL, "round %u: %u patches only", round, i);
      gst_buffer_map (gst_sample_get_buffer (sample), &map, GST_MAP_READ);
      g_checksum_update (sum, map.data, map.size);
      gst_buffer_unmap (gst_sample_get_buffer (sample), &map);
      gst_sample_unref (sample);
    }
    wsi_test_wait_eos (pipeline, 30 * GST_SECOND);
    fail_unless (gst_element_set_state (pipeline, GST_STATE_NULL) ==
        GST_STATE_CHANGE_SUCCESS);
    if (round0 == NULL)
      round0 = g_strdup (g_checksum_get_string (sum));
    else
      fail_unless_equals_string (round0, g_checksum_get_string (sum));
    g_checksum_free (sum);
  }
  g_free (round0);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
}

GST_END_TEST;

/* Out-of-range values are refused by the param specs; a blur range the
 * wrong way round stops the stream with a message naming both. */
GST_START_TEST (test_bad_settings)
{
  GstElement *e = gst_element_factory_make ("patchaugment", NULL);
  GParamSpecDouble *p = (GParamSpecDouble *)
      g_object_class_find_property (G_OBJECT_GET_CLASS (e), "hue");
  GstHarness *h;
  GstBus *bus;
  GstMessage *msg;
  GError *err = NULL;

  fail_unless_equals_float (p->maximum, 0.5);
  p = (GParamSpecDouble *) g_object_class_find_property (G_OBJECT_GET_CLASS
      (e), "flip-h");
  fail_unless_equals_float (p->maximum, 1.0);
  gst_object_unref (e);

  h = augment_harness ("blur-sigma-min=3 blur-sigma-max=1");
  bus = gst_bus_new ();
  gst_element_set_bus (h->element, bus);
  fail_unless_equals_int (gst_harness_push (h, make_patch (0)),
      GST_FLOW_ERROR);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, "blur-sigma-min (3)") != NULL, "%s",
      err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

static gboolean
have_elements (const gchar * const *names)
{
  for (; *names; names++) {
    GstElementFactory *f = gst_element_factory_find (*names);

    if (f == NULL)
      return FALSE;
    gst_object_unref (f);
  }
  return TRUE;
}

/* The first batch of a slide pipeline ending in "@middle ! patchbatch". */
static GstBuffer *
first_batch (const gchar * dir, const gchar * middle)
{
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" ! "
      "tissuemask method=none ! queue ! patchsampler patch-size=64 "
      "patches-per-slide=8 min-tissue=0 ! patchinterleave ! "
      "patchreader threads=2 ! patchviews threads=2 seed=5 "
      "views=a:2:32:0.3:1.0,b:1:20:0.2:0.6 ! %s patchbatch "
      "batch-size=4 ! appsink name=sink sync=false", dir, middle);
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &err);
  GstElement *sink;
  GstSample *sample;
  GstBuffer *batch;

  fail_unless (pipeline != NULL, "%s: %s", desc, err ? err->message : "");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
      60 * GST_SECOND);
  if (sample == NULL) {
    GstBus *bus = gst_element_get_bus (pipeline);
    gchar *text = wsi_test_pop_message_text (bus, GST_MESSAGE_ERROR);

    fail ("no batch from %s: %s", desc, text ? text : "no error either");
  }
  batch = gst_buffer_copy_deep (gst_sample_get_buffer (sample));
  gst_sample_unref (sample);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (desc);
  return batch;
}

/* Behind patchviews and before patchbatch: every view of every location
 * of a batch is the plain pipeline's view run through its plan (flips and
 * turns always, HED half the time), and the batch's view records carry
 * the flags. */
GST_START_TEST (test_views_pipeline)
{
  static const gchar *needed[] = { "wsislidesrc", "tissuemask",
    "patchsampler", "patchinterleave", "patchreader", "patchviews",
    "patchbatch", NULL
  };
  WsiAugmentSettings s = { 1.0, 0.5, 1.0, 0.05, 0.05, 0.5, 0.4, 0.4, 0.2,
    0.1, 0.0, 0.1, 2.0, 0.0
  };
  WsiAugmentScratch *scratch;
  WsiTestSlideSpec spec;
  GstBuffer *plain, *augmented;
  GstStructure *pm, *am;
  const WsiViewRecord *pv, *av;
  const WsiPatchRecord *recs;
  guint n_total, n_recs, v, i, n_views = 3, turned = 0;
  gchar *dir;

  if (!have_elements (needed)) {
    WSI_TEST_SKIP ("the slide elements are not built");
    return;
  }
  dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "views");
  wsi_test_slide_spec_init (&spec);
  spec.seed = 8;
  g_free (wsi_test_write_slide (dir, "a.tiff", &spec));

  plain = first_batch (dir, "");
  augmented = first_batch (dir, "patchaugment threads=3 seed=11 flip-h=1 "
      "rotate90=1 hed-probability=0.5 !");
  pm = wsi_patch_meta_get (plain);
  am = wsi_patch_meta_get (augmented);
  recs = wsi_patch_meta_records (am, &n_recs);
  fail_unless_equals_int (n_recs, 4);
  pv = wsi_patch_meta_views (pm, &n_total);
  av = wsi_patch_meta_views (am, &n_total);
  fail_unless_equals_int (n_total, n_recs * n_views);
  fail_unless_equals_int (gst_buffer_n_memory (augmented), n_views);
  scratch = wsi_augment_scratch_new ();
  for (v = 0; v < n_views; v++) {
    GstMapInfo pmap, amap;
    gsize off = 0;

    gst_buffer_map_range (plain, v, 1, &pmap, GST_MAP_READ);
    gst_buffer_map_range (augmented, v, 1, &amap, GST_MAP_READ);
    fail_unless_equals_int (pmap.size, amap.size);
    for (i = 0; i < n_recs; i++) {
      const WsiViewRecord *a = &av[i * n_views + v];
      gsize size = (gsize) a->out_width * a->out_height * 3;
      guint8 *want = g_memdup2 (pmap.data + off, size);
      WsiAugmentImage im = { want, a->out_width, a->out_height,
        a->out_width * 3, 3, 0, 1, 2
      };
      WsiAugmentPlan plan;
      guint turns;

      wsi_augment_plan_draw (&plan, &s, 11, recs[i].sequence,
          a->view_index);
      turns = wsi_augment_apply (&plan, &im, scratch);
      fail_unless (memcmp (want, amap.data + off, size) == 0,
          "view %u location %u is not its plan", v, i);
      fail_unless_equals_int (a->flags, pv[i * n_views + v].flags |
          WSI_VIEW_FLAG_FLIP_H | (plan.flip_v ? WSI_VIEW_FLAG_FLIP_V : 0) |
          (turns << WSI_VIEW_FLAG_ROT_SHIFT));
      turned += turns != 0;
      g_free (want);
      off += size;
    }
    gst_buffer_unmap (plain, &pmap);
    gst_buffer_unmap (augmented, &amap);
  }
  fail_unless_equals_int (turned, n_recs * n_views);
  g_print ("patchaugment behind patchviews: %u view images match their "
      "plans\n", n_recs * n_views);
  wsi_augment_scratch_free (scratch);
  gst_buffer_unref (plain);
  gst_buffer_unref (augmented);
  g_free (dir);
}

GST_END_TEST;

static Suite *
patchaugment_suite (void)
{
  Suite *s = suite_create ("patchaugment");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_flip_rotate_is_permutation);
  tcase_add_test (tc, test_hed_matches_peer_equations);
  tcase_add_test (tc, test_jitter);
  tcase_add_test (tc, test_blur);
  tcase_add_test (tc, test_plan_draws);
  tcase_add_test (tc, test_threads_identical);
  tcase_add_test (tc, test_output_is_plan_of_sequence);
  tcase_add_test (tc, test_passthrough_and_copy);
  tcase_add_test (tc, test_multi_view);
  tcase_add_test (tc, test_bad_views);
  tcase_add_test (tc, test_view_selection);
  tcase_add_test (tc, test_flush);
  tcase_add_test (tc, test_state_cycles);
  tcase_add_test (tc, test_bad_settings);
  tcase_add_test (tc, test_views_pipeline);
  return s;
}

GST_CHECK_MAIN (patchaugment);
