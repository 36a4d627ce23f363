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
 * (one line each in DIR/cases.txt, fields separated by spaces) and a
 * pyramid level read whole at 1:1 through wsislide.h, to be compared with
 * what other software decoded.
 *
 * Contract: both fail the running test (fail_unless) instead of returning
 * errors; read_level also checks that the read layer chose that level and
 * read it at its own size.
 *
 * Cost: one level of RGB in memory (g_free it). Threading: the check's
 * thread. Header only (static inline).
 */

#ifndef __WSI_TEST_LEVELS_H__
#define __WSI_TEST_LEVELS_H__

#include <gst/check/gstcheck.h>

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

#endif /* __WSI_TEST_LEVELS_H__ */
