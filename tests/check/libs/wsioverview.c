/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsioverview: the overview's ARGB -> RGB conversion (SSSE3 where the CPU
 * has it, issue 23) gives the bytes of the read layer's scalar
 * wsi_argb_to_rgb_on_white() for every pixel count, alpha below 255 and
 * malformed premultiplied pixels (a colour above its alpha) included, and
 * writes nothing past its 3 * n bytes. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <glib/gstdio.h>

#include <gst/check/gstcheck.h>

#include "wsioverview.h"
#include "wsiresample.h"
#include "wsitestslide.h"

#define MAX_PIXELS 75
#define GUARD 32
#define GUARD_BYTE 0xA5

GST_START_TEST (test_argb_to_rgb_as_scalar)
{
  GRand *rand = g_rand_new_with_seed (23);
  guint32 argb[MAX_PIXELS];
  guint8 expected[3 * MAX_PIXELS], got[3 * MAX_PIXELS + GUARD];
  gsize n, i;

  for (i = 0; i < MAX_PIXELS; i++) {
    guint32 alpha = i % 3 == 0 ? 255 : g_rand_int_range (rand, 0, 256);

    /* colour bytes at random: some above their alpha (malformed) */
    argb[i] = (alpha << 24) | (g_rand_int (rand) & 0xffffff);
  }
  for (n = 0; n <= MAX_PIXELS; n++) {
    memset (got, GUARD_BYTE, sizeof (got));
    wsi_argb_to_rgb_on_white (argb, expected, n);
    wsi_overview_argb_to_rgb (argb, got, n);
    fail_unless (memcmp (got, expected, 3 * n) == 0, "n = %"
        G_GSIZE_FORMAT ": other bytes", n);
    for (i = 3 * n; i < sizeof (got); i++)
      fail_unless (got[i] == GUARD_BYTE, "n = %" G_GSIZE_FORMAT ": byte %"
          G_GSIZE_FORMAT " written past the end", n, i);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* The averaged overview (a level at a DCT scale that is not the
 * overview's size: most real slides) against the area average written out
 * plainly here, in the order the reader sums (rows down, columns across,
 * one block a row at these widths): each output value the same float
 * products added in the same order, then (gint) (v + 0.5f) clamped, so
 * the same bytes whether the reader's loops are scalar or SSE2
 * (issue 23). Aperio 2400x1800 (240 px tiles; level 1 600x450) at 290,
 * 333 and 550 px: 1/2 and 1/1 of level 1 averaged down. */
static void
reference_overview (WsiSlide * slide, gint level, guint scale, gint ow,
    gint oh, guint8 * out)
{
  gint64 lw = slide->level_width[level] / scale;
  gint64 lh = slide->level_height[level] / scale;
  guint32 *argb = g_new (guint32, lw * lh);
  guint8 *rgb = g_new (guint8, lw * lh * 3);
  gfloat *acc = g_new0 (gfloat, (gsize) ow * oh * 3 + 6);
  WsiBoxTap *cols = wsi_box_taps_new (lw, ow);
  WsiBoxTap *rows = wsi_box_taps_new (lh, oh);
  GError *error = NULL;
  gint64 x, y;
  gsize i;

  fail_unless (wsi_slide_read_region_scaled (slide, NULL, argb, level, scale,
          0, 0, lw, lh, &error), "%s", error ? error->message : "?");
  wsi_argb_to_rgb_on_white (argb, rgb, lw * lh);
  for (y = 0; y < lh; y++) {
    for (gint part = 0; part < 2; part++) {
      gfloat weight = part ? rows[y].share1 : rows[y].share0;
      gint target = rows[y].first + part;

      if (part && !(weight > 0.0f))
        continue;
      if (target >= oh)
        continue;
      for (x = 0; x < lw; x++) {
        const guint8 *src = rgb + (y * lw + x) * 3;
        gfloat *d = acc + ((gsize) target * ow + cols[x].first) * 3;
        gfloat w0 = cols[x].share0 * weight;

        d[0] += src[0] * w0;
        d[1] += src[1] * w0;
        d[2] += src[2] * w0;
        if (cols[x].share1 > 0.0f) {
          gfloat w1 = cols[x].share1 * weight;

          d[3] += src[0] * w1;
          d[4] += src[1] * w1;
          d[5] += src[2] * w1;
        }
      }
    }
  }
  for (i = 0; i < (gsize) ow * oh * 3; i++)
    out[i] = (guint8) CLAMP ((gint) (acc[i] + 0.5f), 0, 255);
  g_free (argb);
  g_free (rgb);
  g_free (acc);
  g_free (cols);
  g_free (rows);
}

GST_START_TEST (test_averaged_overview_as_plain_sums)
{
  gchar *dir = g_dir_make_tmp ("wsioverview-XXXXXX", NULL);
  gchar *path = g_build_filename (dir, "slide.svs", NULL);
  const gint sides[][2] = { {290, 217}, {333, 250}, {550, 412} };
  WsiTestSlideSpec spec;
  GError *error = NULL;
  WsiSlide *slide;
  guint k;

  wsi_test_slide_spec_init (&spec);
  spec.layout = WSI_TEST_LAYOUT_APERIO;
  spec.width = 2400;
  spec.height = 1800;
  spec.tile_size = 240;
  spec.levels = 2;
  spec.level_step = 4;
  spec.mpp = 0.25;
  spec.tissue_blobs = 4;
  spec.seed = 23;
  fail_unless (wsi_test_slide_write (path, &spec, &error), "%s",
      error ? error->message : "?");
  slide = wsi_slide_open (path, "tiff", &error);
  fail_unless (slide != NULL, "%s", error ? error->message : "?");
  for (k = 0; k < G_N_ELEMENTS (sides); k++) {
    gint ow = sides[k][0], oh = sides[k][1];
    gint level = wsi_overview_level (slide, ow, oh);
    guint scale = slide->level_width[level] / 2 >= ow
        && slide->level_height[level] / 2 >= oh ? 2 : 1;
    guint8 *expected = g_new (guint8, (gsize) ow * oh * 3);
    guint8 *got = g_new (guint8, (gsize) ow * oh * 3);
    gint cancel = 0;

    fail_unless_equals_int (level, 1);
    fail_unless_equals_int (wsi_slide_native_scale (slide, level, scale),
        scale);
    fail_if (slide->level_width[level] / scale == (guint) ow);
    reference_overview (slide, level, scale, ow, oh, expected);
    fail_unless (wsi_overview_read (slide, ow, oh, &cancel, got, &error),
        "%s", error ? error->message : "?");
    fail_unless (memcmp (got, expected, (gsize) ow * oh * 3) == 0,
        "%dx%d: the averaged overview differs from the plain sums", ow, oh);
    g_free (expected);
    g_free (got);
  }
  wsi_slide_close (slide);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
}

GST_END_TEST;

static Suite *
wsioverview_suite (void)
{
  Suite *s = suite_create ("wsioverview");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_argb_to_rgb_as_scalar);
  tcase_add_test (tc, test_averaged_overview_as_plain_sums);
  return s;
}

GST_CHECK_MAIN (wsioverview);
