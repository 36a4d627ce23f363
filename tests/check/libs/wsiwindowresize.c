/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit test of patchviews' crop kernel (ext/wsislide/wsiwindowresize.c):
 * its fixed-point bilinear crops against an exact (double precision)
 * bilinear reference written here from the contract in the header, not
 * from the kernel's code, over random windows that shrink and enlarge. */

#include <gst/check/gstcheck.h>
#include <math.h>

#include "../../../ext/wsislide/wsiwindowresize.h"

#define SRC_SIDE 256

/* A slide-like patch: smooth colour gradients, stains-sized blobs and
 * pixel noise, so that neighbours differ by anything from 0 to ~255. */
static guint8 *
make_source (GRand * rand, guint channels)
{
  guint8 *src = g_malloc ((gsize) SRC_SIDE * SRC_SIDE * channels);
  guint x, y, c;

  for (y = 0; y < SRC_SIDE; y++)
    for (x = 0; x < SRC_SIDE; x++)
      for (c = 0; c < channels; c++) {
        gdouble v = 128 + 90 * sin (x * 0.05 * (c + 1)) * cos (y * 0.07)
            + g_rand_double_range (rand, -30, 30);

        if ((x / 16 + y / 16 + c) % 7 == 0)
          v = g_rand_boolean (rand) ? 0 : 255;        /* hard edges */
        src[((gsize) y * SRC_SIDE + x) * channels + c] =
            (guint8) CLAMP (lrint (v), 0, 255);
      }
  return src;
}

/* Source sample @i of an axis of @len, edges replicated. */
static guint
clamp_index (gint64 i, guint len)
{
  return (guint) CLAMP (i, 0, (gint64) len - 1);
}

/* The reference: output pixel (ox, oy) samples the source at its centre,
 * start + (o + 0.5) * span / out - 0.5 on each axis, in doubles, rounded
 * once. */
static void
reference_crop (const guint8 * src, guint channels, gdouble x0, gdouble y0,
    gdouble w, gdouble h, guint8 * dst, guint out)
{
  guint ox, oy, c;

  for (oy = 0; oy < out; oy++) {
    gdouble cy = y0 + (oy + 0.5) * h / out - 0.5, fy = cy - floor (cy);
    guint ya = clamp_index ((gint64) floor (cy), SRC_SIDE);
    guint yb = clamp_index ((gint64) floor (cy) + 1, SRC_SIDE);

    for (ox = 0; ox < out; ox++) {
      gdouble cx = x0 + (ox + 0.5) * w / out - 0.5, fx = cx - floor (cx);
      guint xa = clamp_index ((gint64) floor (cx), SRC_SIDE);
      guint xb = clamp_index ((gint64) floor (cx) + 1, SRC_SIDE);

      for (c = 0; c < channels; c++) {
#define S(xx, yy) src[((gsize) (yy) * SRC_SIDE + (xx)) * channels + c]
        gdouble top = (1 - fx) * S (xa, ya) + fx * S (xb, ya);
        gdouble bottom = (1 - fx) * S (xa, yb) + fx * S (xb, yb);
#undef S
        dst[((gsize) oy * out + ox) * channels + c] =
            (guint8) CLAMP (lrint ((1 - fy) * top + fy * bottom), 0, 255);
      }
    }
  }
}

static gdouble
psnr (const guint8 * a, const guint8 * b, gsize n, guint * max_diff)
{
  gdouble se = 0;
  gsize i;

  *max_diff = 0;
  for (i = 0; i < n; i++) {
    gint d = (gint) a[i] - b[i];

    se += (gdouble) d *d;
    *max_diff = MAX (*max_diff, (guint) ABS (d));
  }
  return se == 0 ? INFINITY : 10 * log10 (255.0 * 255.0 * n / se);
}

/* DINOv2's random-resized crops (2 global 224 px from 32-100 % of the
 * patch, 8 local 96 px from 5-32 %) and extremes: tiny windows blown up
 * 20x, the whole patch shrunk 8x, windows on the patch's edges. */
GST_START_TEST (test_bilinear_matches_reference)
{
  GRand *rand = g_rand_new_with_seed (21);
  WsiWindowResizer *resizer = wsi_window_resizer_new ();
  guint channels, i;
  gdouble worst = INFINITY;

  for (channels = 1; channels <= 4; channels++) {
    guint8 *src = make_source (rand, channels);

    for (i = 0; i < 40; i++) {
      static const guint outs[] = { 224, 96, 32, 200 };
      guint out = outs[i % 4];
      gdouble frac = i % 4 == 0 ? g_rand_double_range (rand, 0.32, 1.0)
          : i % 4 == 1 ? g_rand_double_range (rand, 0.05, 0.32)
          : i % 4 == 2 ? 1.0 : g_rand_double_range (rand, 0.001, 0.01);
      gdouble side = SRC_SIDE * sqrt (frac);
      gdouble x0 = i % 8 == 3 ? SRC_SIDE - side :
          g_rand_double_range (rand, 0, SRC_SIDE - side);
      gdouble y0 = i % 8 == 7 ? 0 : g_rand_double_range (rand, 0,
          SRC_SIDE - side);
      gsize n = (gsize) out * out * channels;
      guint8 *got = g_malloc (n), *want = g_malloc (n);
      guint max_diff;
      gdouble db;

      fail_unless (wsi_window_resize (resizer, WSI_RESIZE_BILINEAR, src,
              SRC_SIDE, SRC_SIDE, (gsize) SRC_SIDE * channels, channels, x0,
              y0, side, side, got, out, out, (gsize) out * channels));
      reference_crop (src, channels, x0, y0, side, side, want, out);
      db = psnr (got, want, n, &max_diff);
      worst = MIN (worst, db);
      fail_unless (db >= 40.0, "%u channels, window %.2f,%.2f %.2f px to "
          "%u: %.1f dB from the exact reference", channels, x0, y0, side,
          out, db);
      /* Weights rounded to 1/256 and one rounding at the end. */
      fail_unless (max_diff <= 1, "%u channels, window %.2f,%.2f %.2f px "
          "to %u: a pixel %u levels off", channels, x0, y0, side, out,
          max_diff);
      g_free (got);
      g_free (want);
    }
    g_free (src);
  }
  GST_INFO ("worst crop %.1f dB from the exact reference", worst);
  wsi_window_resizer_free (resizer);
  g_rand_free (rand);
}

GST_END_TEST;

/* One resizer reused over crops of different sizes gives what a fresh
 * one gives: no state leaks from one crop into the next. */
GST_START_TEST (test_reuse_is_stateless)
{
  GRand *rand = g_rand_new_with_seed (7);
  guint8 *src = make_source (rand, 3);
  WsiWindowResizer *warm = wsi_window_resizer_new ();
  guint i;

  for (i = 0; i < 20; i++) {
    guint out = i % 2 ? 224 : 48;
    gsize n = (gsize) out * out * 3;
    gdouble side = g_rand_double_range (rand, 20, SRC_SIDE);
    gdouble x0 = g_rand_double_range (rand, 0, SRC_SIDE - side);
    guint8 *a = g_malloc (n), *b = g_malloc (n);
    WsiWindowResizer *fresh = wsi_window_resizer_new ();

    fail_unless (wsi_window_resize (warm, WSI_RESIZE_BILINEAR, src, SRC_SIDE,
            SRC_SIDE, SRC_SIDE * 3, 3, x0, x0, side, side, a, out, out,
            out * 3));
    fail_unless (wsi_window_resize (fresh, WSI_RESIZE_BILINEAR, src,
            SRC_SIDE, SRC_SIDE, SRC_SIDE * 3, 3, x0, x0, side, side, b, out,
            out, out * 3));
    fail_unless (memcmp (a, b, n) == 0, "crop %u differs", i);
    wsi_window_resizer_free (fresh);
    g_free (a);
    g_free (b);
  }
  wsi_window_resizer_free (warm);
  g_free (src);
  g_rand_free (rand);
}

GST_END_TEST;

static Suite *
wsiwindowresize_suite (void)
{
  Suite *s = suite_create ("wsiwindowresize");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_bilinear_matches_reference);
  tcase_add_test (tc, test_reuse_is_stateless);
  return s;
}

GST_CHECK_MAIN (wsiwindowresize);
