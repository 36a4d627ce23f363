/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* OME-TIFF and SubIFD pyramids written by other software at test time
 * (libs/ometiff-oracle.py: tifffile and libvips, every codec the direct
 * TIFF backend decodes), each level read whole through wsislide.h and
 * compared with the independent decode the script wrote (tifffile's, or
 * libvips' through libtiff and libjpeg-turbo): byte for byte for lossless
 * codecs, >= 45 dB for JPEG. Files the backend must refuse (16-bit, four
 * channels, separate planes, grey, a SubIFD loop) are refused by `auto`
 * with WSI_SLIDE_ERROR_REFUSED naming the file and the reason. Without
 * /usr/bin/python3, tifffile or vips each check prints a SKIP line with the
 * reason (a failure under CI=true, where install-deps.sh ran). */

#include <gst/check/gstcheck.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "wsislide.h"
#include "wsitestutil.h"
#include "wsitestlevels.h"

#define ORACLE WSI_TEST_SRCDIR "/libs/ometiff-oracle.py"

static gchar *data_dir;

/* Writes the test files (once per process). */
static WsiTestOracle oracle = { ORACLE,
  "import tifffile, numpy, shutil; assert shutil.which('vips'), 'vips'",
  "python3-tifffile or libvips-tools (vips) missing "
      "(scripts/install-deps.sh installs them)"
};

GST_START_TEST (test_levels_match_other_decoders)
{
  gchar **lines, **line;
  guint checked = 0;

  if (!wsi_test_oracle_run (&oracle, "ome-tiff levels", data_dir))
    return;
  lines = wsi_test_case_lines (data_dir);
  for (line = lines; *line != NULL; line++) {
    gchar **f = g_strsplit (*line, " ", -1);
    gchar *path;
    WsiSlide *slide;
    GError *error = NULL;
    gint nlevels;
    gboolean lossy;
    gdouble mpp;

    if (strcmp (f[0], "refuse") == 0) {
      g_strfreev (f);
      continue;
    }
    path = g_build_filename (data_dir, f[0], NULL);
    nlevels = atoi (f[2]);
    lossy = atoi (f[3]) != 0;
    mpp = g_ascii_strtod (f[4], NULL);
    slide = wsi_slide_open (path, WSI_BACKEND_AUTO, &error);
    fail_unless (slide != NULL, "%s: %s", f[0], error ? error->message : "");
    fail_unless_equals_string (slide->backend->name, WSI_BACKEND_TIFF);
    fail_unless_equals_string (slide->vendor, f[1]);
    fail_unless_equals_int (slide->level_count, nlevels);
    if (mpp > 0) {
      fail_unless (fabs (slide->mpp_x - mpp) < 1e-9
          && fabs (slide->mpp_y - mpp) < 1e-9, "%s: mpp %g x %g, want %g",
          f[0], slide->mpp_x, slide->mpp_y, mpp);
      fail_unless_equals_string (slide->mpp_source, WSI_MPP_SOURCE_OME);
    }
    /* lossy: against libjpeg-turbo's decode, within rounding */
    checked += wsi_test_compare_levels (slide, path, f[0], lossy ? 45.0 : 0,
        lossy ? "libjpeg-turbo's decode" : "the other decoder's pixels");
    wsi_slide_close (slide);
    g_free (path);
    g_strfreev (f);
  }
  g_strfreev (lines);
  fail_unless (checked >= 30, "only %u levels checked", checked);
}

GST_END_TEST;

GST_START_TEST (test_refusals_name_file_and_reason)
{
  gchar **lines, **line;
  guint refused = 0;

  if (!wsi_test_oracle_run (&oracle, "ome-tiff refusals", data_dir))
    return;
  lines = wsi_test_case_lines (data_dir);
  for (line = lines; *line != NULL; line++) {
    gchar **f = g_strsplit (*line, " ", -1);

    if (strcmp (f[0], "refuse") != 0) {
      g_strfreev (f);
      continue;
    }
    wsi_test_assert_refused (data_dir, f[1], f[2]);
    refused++;
    g_strfreev (f);
  }
  g_strfreev (lines);
  fail_unless_equals_int (refused, 5);
}

GST_END_TEST;

static Suite *
wsiometiff_suite (void)
{
  Suite *s = suite_create ("wsiometiff");
  TCase *tc = tcase_create ("general");

  data_dir = g_strdup (WSI_TEST_TMPDIR);
  g_mkdir_with_parents (data_dir, 0755);
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_levels_match_other_decoders);
  tcase_add_test (tc, test_refusals_name_file_and_reason);
  return s;
}

GST_CHECK_MAIN (wsiometiff);
