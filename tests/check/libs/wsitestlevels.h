/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitestlevels.h: what the read-layer checks against a Python oracle
 * (wsi_test_oracle_run(), wsitestutil.h) share: the oracle's list of cases
 * (one line each in DIR/cases.txt, fields separated by spaces), a pyramid
 * level read whole at 1:1 through wsislide.h and compared with what other
 * software decoded (the oracle's FILE.LEVEL.rgb), and a file that must be
 * refused with a message naming it and the reason.
 *
 * Contract: every helper fails the running test (fail_unless) instead of
 * returning errors; a level read also checks that the read layer chose
 * that level and read it at its own size.
 *
 * Cost: one level of RGB in memory (g_free it). Threading: the check's
 * thread. Header only (static inline).
 */

#ifndef __WSI_TEST_LEVELS_H__
#define __WSI_TEST_LEVELS_H__

#include <gst/check/gstcheck.h>
#include <math.h>
#include <string.h>

#include "wsislide.h"

/* The lines of @dir/cases.txt (g_strfreev them). */
static inline gchar **
wsi_test_case_lines (const gchar * dir)
{
  gchar *path = g_build_filename (dir, "cases.txt", NULL);
  gchar *text = NULL;
  gchar **lines;

  fail_unless (g_file_get_contents (path, &text, NULL, NULL));
  lines = g_strsplit (g_strstrip (text), "\n", -1);
  g_free (text);
  g_free (path);
  return lines;
}

/* Level @level of @slide read whole at 1:1 as RGB, in @ctx. */
static inline guint8 *
wsi_test_read_level (WsiSlide * slide, WsiReadContext * ctx, gint level)
{
  gint64 w = slide->level_width[level], h = slide->level_height[level];
  WsiImage out = { NULL, (gsize) w * 3, w, h, WSI_PIXEL_RGB };
  WsiReadRequest request = { 0, };
  WsiReadReport report;
  GError *error = NULL;

  out.data = (guint8 *) g_malloc (out.stride * h);
  request.width = slide->level_width[0];
  request.height = slide->level_height[0];
  /* level 0's whole extent to the level's size: that level, at 1:1 */
  request.resample_tolerance = 0.02;
  fail_unless (wsi_slide_read (slide, ctx, &request, &out, &report, &error),
      "%s", error ? error->message : "?");
  fail_unless_equals_int (report.level, level);
  fail_unless_equals_int64 (report.read_width, w);
  fail_unless_equals_int64 (report.read_height, h);
  return out.data;
}

/* Peak signal-to-noise ratio of 8-bit @a against @b (INFINITY: equal). */
static inline gdouble
wsi_test_psnr (const guint8 * a, const guint8 * b, gsize n)
{
  gdouble sum = 0.0;
  gsize i;

  for (i = 0; i < n; i++)
    sum += ((gdouble) a[i] - b[i]) * ((gdouble) a[i] - b[i]);
  return sum == 0.0 ? INFINITY : 10.0 * log10 (255.0 * 255.0 / (sum / n));
}

/* Reads every level of @slide (opened from @path, @name in messages) and
 * compares it with @path.LEVEL.rgb, @other's decode: byte for byte, or
 * with @min_psnr > 0 at least that many dB. Returns the levels compared. */
static inline guint
wsi_test_compare_levels (WsiSlide * slide, const gchar * path,
    const gchar * name, gdouble min_psnr, const gchar * other)
{
  WsiReadContext *ctx = wsi_read_context_new ();
  gint l;

  for (l = 0; l < slide->level_count; l++) {
    gchar *file = g_strdup_printf ("%s.%d.rgb", path, l);
    gchar *expected = NULL;
    gsize size = 0, n = (gsize) slide->level_width[l]
        * slide->level_height[l] * 3;
    guint8 *ours;

    fail_unless (g_file_get_contents (file, &expected, &size, NULL));
    fail_unless_equals_uint64 (size, n);
    ours = wsi_test_read_level (slide, ctx, l);
    if (min_psnr > 0) {
      gdouble q = wsi_test_psnr (ours, (guint8 *) expected, n);

      fail_unless (q >= min_psnr, "%s level %d: PSNR %.2f dB against %s "
          "(need %g)", name, l, q, other, min_psnr);
      GST_INFO ("%s level %d: %.2f dB", name, l, q);
    } else {
      fail_unless (memcmp (ours, expected, n) == 0, "%s level %d differs "
          "from %s", name, l, other);
    }
    g_free (ours);
    g_free (expected);
    g_free (file);
  }
  wsi_read_context_free (ctx);
  return (guint) slide->level_count;
}

/* @dir/@name must not open: refused (WSI_SLIDE_ERROR_REFUSED) with a
 * message naming @name and @reason. */
static inline void
wsi_test_assert_refused (const gchar * dir, const gchar * name,
    const gchar * reason)
{
  gchar *path = g_build_filename (dir, name, NULL);
  GError *error = NULL;
  WsiSlide *slide = wsi_slide_open (path, WSI_BACKEND_AUTO, &error);

  fail_unless (slide == NULL, "%s opened (backend %s)", name,
      slide ? slide->backend->name : "");
  fail_unless (g_error_matches (error, WSI_SLIDE_ERROR,
          WSI_SLIDE_ERROR_REFUSED), "%s: %s", name, error->message);
  fail_unless (strstr (error->message, name) != NULL
      && strstr (error->message, reason) != NULL,
      "%s: the message does not name it and '%s': %s", name, reason,
      error->message);
  GST_INFO ("%s", error->message);
  g_error_free (error);
  g_free (path);
}

#endif /* __WSI_TEST_LEVELS_H__ */
