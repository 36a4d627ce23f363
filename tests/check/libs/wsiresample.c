/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit tests of the shared pixel kernels (wsiresample.h) against an exact
 * area average computed here in doubles, straight from the definition in
 * wsiresample.h: output pixel (i, j) is the mean of the premultiplied
 * source composited on white over [x0 + i * sx, x0 + (i + 1) * sx) x
 * [y0 + j * sy, ...), edge pixels weighted by the part inside. The
 * fixed-point kernel must round it correctly to within a few hundredths
 * of a level everywhere, in every output format. This file is also built
 * with the SSE2 form off (libs_wsiresample_scalar): both forms must give
 * the bytes whose digest test_same_bytes_every_build holds. */

#include <gst/check/gstcheck.h>
#include <math.h>
#include <string.h>

#include "wsiresample.h"

/* A premultiplied ARGB image: opaque tissue-like noise with transparent
 * and half-transparent patches (colour never above alpha). */
static guint32 *
random_argb (GRand * rand, guint w, guint h)
{
  guint32 *argb = g_new (guint32, (gsize) w * h);
  gsize i;

  for (i = 0; i < (gsize) w * h; i++) {
    guint32 a = 255, r, g, b;
    guint kind = g_rand_int_range (rand, 0, 10);

    if (kind == 0)
      a = 0;
    else if (kind == 1)
      a = g_rand_int_range (rand, 1, 255);
    r = g_rand_int_range (rand, 0, a + 1);
    g = g_rand_int_range (rand, 0, a + 1);
    b = g_rand_int_range (rand, 0, a + 1);
    argb[i] = a << 24 | r << 16 | g << 8 | b;
  }
  return argb;
}

/* Overlap of source pixel k with [start, end), the definition's weight. */
static gdouble
overlap (gdouble start, gdouble end, guint k)
{
  return MAX (MIN (end, k + 1.0) - MAX (start, (gdouble) k), 0.0);
}

/* Channel @shift (16 R, 8 G, 0 B) of output pixel (i, j), exactly. */
static gdouble
exact_area (const guint32 * argb, guint src_w, guint src_h, gdouble x0,
    gdouble y0, gdouble sx, gdouble sy, guint i, guint j, guint shift)
{
  gdouble xs = x0 + i * sx, xe = MIN (x0 + (i + 1) * sx, (gdouble) src_w);
  gdouble ys = y0 + j * sy, ye = MIN (y0 + (j + 1) * sy, (gdouble) src_h);
  gdouble sum = 0.0, total = 0.0;
  guint x, y;

  for (y = (guint) floor (ys); y < MIN ((guint) ceil (ye), src_h); y++) {
    gdouble wy = overlap (ys, ye, y);

    for (x = (guint) floor (xs); x < MIN ((guint) ceil (xe), src_w); x++) {
      guint32 p = argb[(gsize) y * src_w + x];
      gdouble w = wy * overlap (xs, xe, x);

      sum += w * (((p >> shift) & 0xff) + 255 - (p >> 24));
      total += w;
    }
  }
  return sum / total;
}

/* Resamples a random window of a random image to a random size at a
 * scale between @min_scale and @max_scale (source pixels an output pixel
 * covers), in @format, and compares with the exact average: at most one
 * level off, alpha or padding 255. Adds the squared errors to @squared
 * and their number to @values; @worst in thousandths of a level. */
static void
check_one (GRand * rand, WsiResampler * resampler, gdouble min_scale,
    gdouble max_scale, WsiPixelFormat format, gdouble * squared,
    gdouble * values, guint * worst)
{
  guint out_w = g_rand_int_range (rand, 1, 97);
  guint out_h = g_rand_int_range (rand, 1, 97);
  gdouble sx = g_rand_double_range (rand, min_scale, max_scale);
  gdouble sy = g_rand_double_range (rand, min_scale, max_scale);
  guint src_w = (guint) ceil (out_w * sx) + g_rand_int_range (rand, 1, 6);
  guint src_h = (guint) ceil (out_h * sy) + g_rand_int_range (rand, 1, 6);
  gdouble x0 = g_rand_double_range (rand, 0.0, src_w - out_w * sx);
  gdouble y0 = g_rand_double_range (rand, 0.0, src_h - out_h * sy);
  guint32 *argb = random_argb (rand, src_w, src_h);
  guint bpp = wsi_pixel_format_bytes (format);
  WsiImage out = { NULL, (gsize) out_w * bpp + 3, out_w, out_h, format };
  gint r_at = format == WSI_PIXEL_BGRX ? 2 : 0;
  guint i, j, c;

  out.data = g_malloc (out.stride * out_h);
  fail_unless (wsi_resample_argb (resampler, argb, src_w, src_h, src_w, x0,
          y0, out_w * sx, out_h * sy, &out));
  for (j = 0; j < out_h; j++) {
    const guint8 *row = out.data + (gsize) j * out.stride;

    for (i = 0; i < out_w; i++) {
      const guint8 *px = row + (gsize) i * bpp;

      for (c = 0; c < 3; c++) {
        /* c: R, G, B; R sits at byte 0 (2 in BGRx) */
        gdouble want = exact_area (argb, src_w, src_h, x0, y0, sx, sy, i, j,
            16 - 8 * c);
        guint8 got = px[r_at == 0 ? c : 2 - c];
        gdouble diff = fabs (got - want);

        /* Rounding alone is 0.5 off; the fixed point adds hundredths. */
        fail_unless (diff <= 0.55, "%ux%u from %ux%u at (%.3f, %.3f) scale "
            "(%.4f, %.4f), format %d: pixel (%u, %u) channel %u is %u, "
            "exact %.3f", out_w, out_h, src_w, src_h, x0, y0, sx, sy, format,
            i, j, c, got, want);
        *worst = MAX (*worst, (guint) lround (diff * 1000));
        *squared += (got - want) * (got - want);
        *values += 1.0;
      }
      if (bpp == 4)
        fail_unless_equals_int (px[3], 255);
    }
  }
  g_free (out.data);
  g_free (argb);
}

/* The scales the readers use: the near-whole rests after DCT scaling
 * (0.99 and 1.98, the 40x cases of issue 23), mild up- and downscales,
 * and large area reductions (many taps a pixel). */
static void
check_scales (gdouble min_scale, gdouble max_scale, guint rounds)
{
  static const WsiPixelFormat formats[] = { WSI_PIXEL_RGB, WSI_PIXEL_RGBA,
    WSI_PIXEL_RGBX, WSI_PIXEL_BGRX
  };
  GRand *rand = g_rand_new_with_seed ((guint32) (min_scale * 1000));
  WsiResampler *resampler = wsi_resampler_new ();
  gdouble squared = 0.0, values = 0.0;
  guint worst = 0, i;

  for (i = 0; i < rounds; i++)
    check_one (rand, resampler, min_scale, max_scale,
        formats[i % G_N_ELEMENTS (formats)], &squared, &values, &worst);
  g_print ("scales %.3f-%.3f: against the exact area average worst "
      "difference %.3f levels, RMS %.3f, PSNR %.1f dB (%.0f values)\n",
      min_scale, max_scale, worst / 1000.0, sqrt (squared / values),
      10.0 * log10 (255.0 * 255.0 * values / squared), values);
  wsi_resampler_free (resampler);
  g_rand_free (rand);
}

GST_START_TEST (test_area_near_whole_rests)
{
  check_scales (0.985, 0.995, 24);
  check_scales (1.97, 1.99, 24);
}

GST_END_TEST;

GST_START_TEST (test_area_general_scales)
{
  check_scales (0.5, 1.0, 16);
  check_scales (1.0, 3.0, 16);
  check_scales (3.0, 9.5, 12);
}

GST_END_TEST;

/* Whole factors at whole offsets take the integer box path and 1:1 the
 * copy: the same definition holds there. */
GST_START_TEST (test_whole_factors_and_copies)
{
  GRand *rand = g_rand_new_with_seed (7);
  WsiResampler *resampler = wsi_resampler_new ();
  guint k;

  for (k = 1; k <= 4; k++) {
    guint out_w = 37, out_h = 23, src_w = out_w * k + 5, src_h = out_h * k + 3;
    guint32 *argb = random_argb (rand, src_w, src_h);
    WsiImage out = { g_malloc ((gsize) out_w * 3 * out_h), out_w * 3,
      out_w, out_h, WSI_PIXEL_RGB
    };
    guint i, j, c;

    fail_unless (wsi_resample_argb (resampler, argb, src_w, src_h, src_w, 2,
            1, out_w * k, out_h * k, &out));
    for (j = 0; j < out_h; j++)
      for (i = 0; i < out_w; i++)
        for (c = 0; c < 3; c++) {
          gdouble want = exact_area (argb, src_w, src_h, 2, 1, k, k, i, j,
              16 - 8 * c);
          guint8 got = out.data[(gsize) j * out.stride + i * 3 + c];

          fail_unless (fabs (got - want) <= 0.5 + 1e-6, "factor %u: pixel "
              "(%u, %u) channel %u is %u, exact %.3f", k, i, j, c, got, want);
        }
    g_free (out.data);
    g_free (argb);
  }
  wsi_resampler_free (resampler);
  g_rand_free (rand);
}

GST_END_TEST;

/* The integer arithmetic gives the same bytes on every host and in both
 * forms (SSE2, plain C): a digest of resampled images at near-whole and
 * general scales. A deliberate change of the kernel updates it (and
 * tests/check/pipelines/identity.golden) and says why. */
#define SAME_BYTES_DIGEST "6f63a46556a12013381920a4acaba82da3e03153d31ec374a8ba819e51347deb"

GST_START_TEST (test_same_bytes_every_build)
{
  static const gdouble scales[] = { 0.9903, 1.9793, 0.61, 2.7, 7.3 };
  GRand *rand = g_rand_new_with_seed (2026);
  WsiResampler *resampler = wsi_resampler_new ();
  GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
  guint i, f;

  for (i = 0; i < G_N_ELEMENTS (scales); i++) {
    for (f = WSI_PIXEL_RGB; f <= WSI_PIXEL_BGRX; f++) {
      guint out_w = 61, out_h = 29, bpp = wsi_pixel_format_bytes (f);
      guint src_w = (guint) ceil (out_w * scales[i]) + 3;
      guint src_h = (guint) ceil (out_h * scales[i]) + 3;
      guint32 *argb = random_argb (rand, src_w, src_h);
      WsiImage out = { g_malloc ((gsize) out_w * bpp * out_h), out_w * bpp,
        out_w, out_h, f
      };

      fail_unless (wsi_resample_argb (resampler, argb, src_w, src_h, src_w,
              g_rand_double_range (rand, 0.0, 2.5),
              g_rand_double_range (rand, 0.0, 2.5), out_w * scales[i],
              out_h * scales[i], &out));
      g_checksum_update (sum, out.data, out.stride * out_h);
      g_free (out.data);
      g_free (argb);
    }
  }
  g_print ("resampled bytes: %s\n", g_checksum_get_string (sum));
  fail_unless_equals_string (g_checksum_get_string (sum), SAME_BYTES_DIGEST);
  g_checksum_free (sum);
  wsi_resampler_free (resampler);
  g_rand_free (rand);
}

GST_END_TEST;

/* The AVX2 forms of the two-tap passes (chosen at run time) against the
 * SSE2 ones (WSI_RESAMPLE_NO_AVX2): the same bytes, padding included, on
 * random sizes, origins, scales and formats. On a CPU without AVX2, and in
 * the plain C build, both resamplers take the same form and this only
 * repeats the digest test's point. */
GST_START_TEST (test_avx2_same_bytes_as_sse2)
{
  GRand *rand = g_rand_new_with_seed (4242);
  WsiResampler *wide, *narrow;
  guint i;

  g_unsetenv ("WSI_RESAMPLE_NO_AVX2");
  wide = wsi_resampler_new ();
  g_setenv ("WSI_RESAMPLE_NO_AVX2", "1", TRUE);
  narrow = wsi_resampler_new ();
  g_unsetenv ("WSI_RESAMPLE_NO_AVX2");
  for (i = 0; i < 400; i++) {
    WsiPixelFormat f = g_rand_int_range (rand, WSI_PIXEL_RGB,
        WSI_PIXEL_BGRX + 1);
    guint bpp = wsi_pixel_format_bytes (f);
    guint out_w = g_rand_int_range (rand, 1, 300);
    guint out_h = g_rand_int_range (rand, 1, 40);
    /* mostly the near-whole rests (two taps), some reductions */
    gdouble sx = i % 5 == 4 ? g_rand_double_range (rand, 1.0, 3.0) :
        g_rand_double_range (rand, 0.5, 1.0);
    gdouble sy = i % 7 == 6 ? g_rand_double_range (rand, 1.0, 3.0) :
        g_rand_double_range (rand, 0.5, 1.0);
    gdouble x0 = g_rand_double_range (rand, 0.0, 3.0);
    gdouble y0 = g_rand_double_range (rand, 0.0, 3.0);
    guint src_w = (guint) ceil (x0 + out_w * sx) + g_rand_int_range (rand, 0,
        5);
    guint src_h = (guint) ceil (y0 + out_h * sy) + 1;
    guint32 *argb = random_argb (rand, src_w, src_h);
    gsize stride = (gsize) out_w * bpp + 7, bytes = stride * out_h;
    WsiImage a = { g_malloc (bytes), stride, out_w, out_h, f };
    WsiImage b = { g_malloc (bytes), stride, out_w, out_h, f };

    memset (a.data, 0xa5, bytes);
    memset (b.data, 0xa5, bytes);
    fail_unless (wsi_resample_argb (wide, argb, src_w, src_h, src_w, x0, y0,
            out_w * sx, out_h * sy, &a));
    fail_unless (wsi_resample_argb (narrow, argb, src_w, src_h, src_w, x0,
            y0, out_w * sx, out_h * sy, &b));
    fail_unless (memcmp (a.data, b.data, bytes) == 0, "round %u: %ux%u "
        "format %d from %ux%u at (%.3f, %.3f) scales %.4f x %.4f: the AVX2 "
        "and SSE2 forms differ", i, out_w, out_h, f, src_w, src_h, x0, y0,
        sx, sy);
    g_free (a.data);
    g_free (b.data);
    g_free (argb);
  }
  wsi_resampler_free (wide);
  wsi_resampler_free (narrow);
  g_rand_free (rand);
}

GST_END_TEST;

/* A window held in pieces (tiles read in place) against the same pixels
 * in one block: the same bytes on the fractional path (piece by piece) and
 * the copy and whole-factor paths (gathered), for random cuts (pieces of
 * one pixel, edges under the taps), each piece in its own memory with its
 * own stride. */
GST_START_TEST (test_mosaic_same_bytes_as_block)
{
  GRand *rand = g_rand_new_with_seed (777);
  WsiResampler *one = wsi_resampler_new (), *cut = wsi_resampler_new ();
  guint i;

  for (i = 0; i < 300; i++) {
    WsiPixelFormat f = g_rand_int_range (rand, WSI_PIXEL_RGB,
        WSI_PIXEL_BGRX + 1);
    guint bpp = wsi_pixel_format_bytes (f);
    guint kind = i % 4;         /* 0, 1 fractional; 2 whole 2x; 3 copy */
    guint out_w = g_rand_int_range (rand, 1, 120);
    guint out_h = g_rand_int_range (rand, 1, 60);
    gdouble sx = kind == 2 ? 2.0 : kind == 3 ? 1.0 : i % 8 == 1 ?
        g_rand_double_range (rand, 1.0, 4.0) :
        g_rand_double_range (rand, 0.9, 1.0);
    gdouble sy = kind == 2 ? 2.0 : kind == 3 ? 1.0 : i % 8 == 5 ?
        g_rand_double_range (rand, 1.0, 4.0) :
        g_rand_double_range (rand, 0.9, 1.0);
    gdouble x0 = kind >= 2 ? g_rand_int_range (rand, 0, 3) :
        g_rand_double_range (rand, 0.0, 3.0);
    gdouble y0 = kind >= 2 ? g_rand_int_range (rand, 0, 3) :
        g_rand_double_range (rand, 0.0, 3.0);
    guint src_w = (guint) ceil (x0 + out_w * sx) + g_rand_int_range (rand, 0,
        3);
    guint src_h = (guint) ceil (y0 + out_h * sy) + g_rand_int_range (rand, 0,
        3);
    guint32 *argb = random_argb (rand, src_w, src_h);
    guint xs[9], ys[9], nc = 0, nr = 0, c, r, row;
    const guint32 *origin[64];
    gsize stride[64], bytes = (gsize) out_w * bpp * out_h;
    guint32 *pieces[64];
    WsiArgbMosaic m;
    WsiImage a = { g_malloc (bytes), (gsize) out_w * bpp, out_w, out_h, f };
    WsiImage b = { g_malloc (bytes), (gsize) out_w * bpp, out_w, out_h, f };

    /* up to 8 pieces a side, at random edges */
    xs[0] = ys[0] = 0;
    while (nc < 7 && xs[nc] + 1 < src_w)
      xs[nc + 1] = g_rand_int_range (rand, xs[nc] + 1, src_w), nc++;
    xs[++nc] = src_w;
    while (nr < 7 && ys[nr] + 1 < src_h)
      ys[nr + 1] = g_rand_int_range (rand, ys[nr] + 1, src_h), nr++;
    ys[++nr] = src_h;
    for (r = 0; r < nr; r++) {
      for (c = 0; c < nc; c++) {
        guint p = r * nc + c, w = xs[c + 1] - xs[c];

        stride[p] = w + g_rand_int_range (rand, 0, 5);
        pieces[p] = g_new (guint32, stride[p] * (ys[r + 1] - ys[r]));
        for (row = ys[r]; row < ys[r + 1]; row++)
          memcpy (pieces[p] + (row - ys[r]) * stride[p],
              argb + (gsize) row * src_w + xs[c], w * sizeof (guint32));
        origin[p] = pieces[p];
      }
    }
    m = (WsiArgbMosaic) {
    nc, nr, xs, ys, origin, stride};
    memset (a.data, 0x5a, bytes);
    memset (b.data, 0xa5, bytes);
    fail_unless (wsi_resample_argb (one, argb, src_w, src_h, src_w, x0, y0,
            out_w * sx, out_h * sy, &a));
    fail_unless (wsi_resample_argb_mosaic (cut, &m, x0, y0, out_w * sx,
            out_h * sy, &b));
    fail_unless (memcmp (a.data, b.data, bytes) == 0, "round %u: %ux%u "
        "format %d from %ux%u in %ux%u pieces at (%.3f, %.3f) scales %.4f x "
        "%.4f: the mosaic differs from the block", i, out_w, out_h, f,
        src_w, src_h, nc, nr, x0, y0, sx, sy);
    for (c = 0; c < nc * nr; c++)
      g_free (pieces[c]);
    g_free (a.data);
    g_free (b.data);
    g_free (argb);
  }
  wsi_resampler_free (one);
  wsi_resampler_free (cut);
  g_rand_free (rand);
}

GST_END_TEST;

static Suite *
wsiresample_suite (void)
{
  Suite *s = suite_create ("wsiresample");
  TCase *tc = tcase_create ("area");

  tcase_add_test (tc, test_area_near_whole_rests);
  tcase_add_test (tc, test_area_general_scales);
  tcase_add_test (tc, test_whole_factors_and_copies);
  tcase_add_test (tc, test_same_bytes_every_build);
  tcase_add_test (tc, test_avx2_same_bytes_as_sse2);
  tcase_add_test (tc, test_mosaic_same_bytes_as_block);
  suite_add_tcase (s, tc);
  return s;
}

GST_CHECK_MAIN (wsiresample);
