/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * bench-dicom-open: how long the DICOM backend takes to open a level of
 * about --tiles frames (goal of issue 20: 10^5 TILED_SPARSE frames in
 * < 1 s). A one-level synthetic slide of 16-pixel tiles is written once in
 * WORK_DIR and turned into three single-instance series: TILED_SPARSE
 * without an offset table (per-frame positions parsed, fragments walked),
 * TILED_SPARSE with a Basic Offset Table, TILED_FULL with an Extended
 * Offset Table; each is opened --repeats times (page cache warm after the
 * first), and the median, min and max wall time printed.
 *
 *   meson devenv -C build ./tests/benchmarks/bench-dicom-open [--tiles 100000] WORK_DIR
 *
 * With --folder N it measures instead what opening one series costs when
 * its folder holds N instances (an IDC download puts whole series, or many
 * series, in one folder): N/3 series of 3 small levels (512x384, 128-pixel
 * tiles; --folder-side for bigger files) are written into
 * WORK_DIR/folder-N-SIDE, its time set a minute back (a download made
 * before the run), and the level 0 of the first
 * series is opened --repeats times in this process, as a slide pool that
 * reopens slides does. Per open it prints the wall time and what the
 * process read (/proc/self/io: read calls and bytes, page cache hits
 * included) and the identity reads made to index the folder
 * (wsidicomfolder.h), then the first open against the median reopen and
 * the goal line (a reopen reads no other file of the folder):
 *
 *   meson devenv -C build ./tests/benchmarks/bench-dicom-open --folder 2000 --repeats 10 WORK_DIR
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/time.h>

#include "wsislide.h"
#include "wsidicomfolder.h"
#include "wsitestslide.h"
#include "wsitestdicom.h"

static gint
compare_doubles (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;
  return x < y ? -1 : x > y;
}

static void
time_opens (const gchar * label, const gchar * path, gint repeats)
{
  gdouble *seconds = g_new (gdouble, repeats);
  gint i;
  gint64 tiles = 0;

  for (i = 0; i < repeats; i++) {
    GError *error = NULL;
    gint64 start = g_get_monotonic_time ();
    WsiSlide *slide = wsi_slide_open (path, WSI_BACKEND_DICOM, &error);

    seconds[i] = (g_get_monotonic_time () - start) / 1e6;
    if (slide == NULL) {
      g_printerr ("%s: %s\n", path, error->message);
      exit (1);
    }
    tiles = ((slide->level_width[0] + slide->level_tile_width[0] - 1)
        / slide->level_tile_width[0]) * ((slide->level_height[0]
            + slide->level_tile_height[0] - 1) / slide->level_tile_height[0]);
    wsi_slide_close (slide);
  }
  qsort (seconds, repeats, sizeof (gdouble), compare_doubles);
  g_print ("%-34s %7" G_GINT64_FORMAT " tiles: open median %.3f s "
      "(min %.3f, max %.3f, %d runs)\n", label, tiles, seconds[repeats / 2],
      seconds[0], seconds[repeats - 1], repeats);
  g_free (seconds);
}

static gchar *
series (const gchar * tiff, const gchar * dir, const gchar * name,
    gboolean sparse, WsiTestDicomTable table)
{
  gchar *out = g_build_filename (dir, name, NULL);
  gchar *level0 = g_build_filename (out, "s-level0.dcm", NULL);
  WsiTestDicomSpec spec;
  GError *error = NULL;

  if (!g_file_test (level0, G_FILE_TEST_EXISTS)) {
    wsi_test_dicom_spec_init (&spec);
    spec.sparse = sparse;
    spec.table = table;
    spec.mpp = 0.25;
    if (!wsi_test_dicom_from_tiff (tiff, out, "s", &spec, NULL, &error)) {
      g_printerr ("%s\n", error->message);
      exit (1);
    }
  }
  g_free (out);
  return level0;
}

/* The process's read calls and bytes read so far (/proc/self/io). */
static void
io_read (guint64 * calls, guint64 * bytes)
{
  gchar *text = NULL;
  const gchar *at;

  *calls = *bytes = 0;
  if (!g_file_get_contents ("/proc/self/io", &text, NULL, NULL))
    return;
  if ((at = strstr (text, "rchar: ")) != NULL)
    *bytes = g_ascii_strtoull (at + 7, NULL, 10);
  if ((at = strstr (text, "syscr: ")) != NULL)
    *calls = g_ascii_strtoull (at + 7, NULL, 10);
  g_free (text);
}

/* WORK_DIR/folder-N: N/3 series of 3 levels each; returns the level 0 of
 * the first. */
static gchar *
write_folder (const gchar * work_dir, gint instances, gint side)
{
  gchar *dir = g_strdup_printf ("%s/folder-%d-%d", work_dir, instances,
      side);
  gchar *tiff = g_strdup_printf ("%s/folder-source-%d.tiff", work_dir, side);
  gchar *first = g_build_filename (dir, "s0000-level0.dcm", NULL);
  gint n_series = MAX (instances / 3, 1), i;
  WsiTestSlideSpec spec;
  GError *error = NULL;

  wsi_test_slide_spec_init (&spec);
  spec.width = side;
  spec.height = side * 3 / 4;
  spec.tile_size = side >= 1024 ? 256 : 128;
  spec.levels = 3;
  g_mkdir_with_parents (work_dir, 0755);
  if (!g_file_test (tiff, G_FILE_TEST_EXISTS)
      && !wsi_test_slide_write (tiff, &spec, &error)) {
    g_printerr ("%s\n", error->message);
    exit (1);
  }
  g_mkdir_with_parents (dir, 0755);
  for (i = 0; i < n_series; i++) {
    gchar *prefix = g_strdup_printf ("s%04d", i);
    gchar *level0 = g_strdup_printf ("%s/%s-level0.dcm", dir, prefix);
    WsiTestDicomSpec dicom;

    wsi_test_dicom_spec_init (&dicom);
    dicom.seed = 1000 + i;
    dicom.mpp = 0.25;
    if (!g_file_test (level0, G_FILE_TEST_EXISTS)
        && !wsi_test_dicom_from_tiff (tiff, dir, prefix, &dicom, NULL,
            &error)) {
      g_printerr ("%s\n", error->message);
      exit (1);
    }
    g_free (level0);
    g_free (prefix);
  }
  /* As a download made before the run: a folder modified in the last 2 s
   * is indexed again on every open (wsidicomfolder.h). */
  {
    struct timeval past[2] = { {time (NULL) - 60, 0}, {time (NULL) - 60, 0} };
    utimes (dir, past);
  }
  g_free (tiff);
  g_free (dir);
  return first;
}

static void
time_folder_opens (const gchar * path, gint instances, gint repeats)
{
  gdouble *reopen_ms = g_new (gdouble, MAX (repeats - 1, 1));
  gdouble first_ms = 0;
  guint64 first_headers = 0, reopen_headers = 0;
  gint i;

  g_print ("opening %s (%d instances in its folder) %d times in one "
      "process\n", path, instances, repeats);
  for (i = 0; i < repeats; i++) {
    GError *error = NULL;
    guint64 calls0, bytes0, calls1, bytes1, headers0, headers;
    gint64 start;
    gdouble ms;
    WsiSlide *slide;

    io_read (&calls0, &bytes0);
    headers0 = wsi_dicom_folder_headers_read ();
    start = g_get_monotonic_time ();
    slide = wsi_slide_open (path, WSI_BACKEND_DICOM, &error);
    ms = (g_get_monotonic_time () - start) / 1e3;
    headers = wsi_dicom_folder_headers_read () - headers0;
    io_read (&calls1, &bytes1);
    if (slide == NULL) {
      g_printerr ("%s: %s\n", path, error->message);
      exit (1);
    }
    g_print ("open %2d: %8.2f ms, %d levels, %5" G_GUINT64_FORMAT
        " header reads, %7" G_GUINT64_FORMAT " read calls, %10"
        G_GUINT64_FORMAT " bytes read\n", i + 1, ms, slide->level_count,
        headers, calls1 - calls0, bytes1 - bytes0);
    wsi_slide_close (slide);
    if (i == 0) {
      first_ms = ms;
      first_headers = headers;
    } else {
      reopen_ms[i - 1] = ms;
      reopen_headers = MAX (reopen_headers, headers);
    }
  }
  if (repeats > 1) {
    qsort (reopen_ms, repeats - 1, sizeof (gdouble), compare_doubles);
    g_print ("first open %.2f ms (%" G_GUINT64_FORMAT " header reads), "
        "reopen median %.2f ms (at most %" G_GUINT64_FORMAT " header reads): "
        "reopen / first %.3f\n", first_ms, first_headers,
        reopen_ms[(repeats - 1) / 2], reopen_headers,
        reopen_ms[(repeats - 1) / 2] / first_ms);
    g_print ("goal (issue 20, folder scan): a reopen reads no other file of "
        "the folder: %s\n", reopen_headers == 0 ? "met" : "NOT met");
  }
  g_free (reopen_ms);
}

int
main (int argc, char **argv)
{
  gint tiles = 100000, repeats = 5, folder = 0, folder_side = 512;
  GOptionEntry entries[] = {
    {"tiles", 0, 0, G_OPTION_ARG_INT, &tiles,
        "About this many frames in the level (default 100000)", "N"},
    {"repeats", 0, 0, G_OPTION_ARG_INT, &repeats,
        "Opens of each series (default 5)", "N"},
    {"folder", 0, 0, G_OPTION_ARG_INT, &folder,
        "Instead: open one series of a folder of about N instances", "N"},
    {"folder-side", 0, 0, G_OPTION_ARG_INT, &folder_side,
        "Level-0 width of the folder's series (default 512: files of "
        "10-30 KB)", "PX"},
    {NULL}
  };
  GOptionContext *context = g_option_context_new ("WORK_DIR");
  GError *error = NULL;
  WsiTestSlideSpec spec;
  gchar *tiff, *path;
  guint side;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 2
      || tiles < 1 || repeats < 1) {
    g_printerr ("usage: bench-dicom-open [--tiles N | --folder N] "
        "[--repeats N] WORK_DIR\n");
    return 2;
  }
  if (folder > 0) {
    path = write_folder (argv[1], folder, CLAMP (folder_side, 64, 16384));
    time_folder_opens (path, MAX (folder / 3, 1) * 3, repeats);
    g_free (path);
    g_option_context_free (context);
    return 0;
  }
  side = (guint) ceil (sqrt (tiles)) * 16;
  g_mkdir_with_parents (argv[1], 0755);
  tiff = g_strdup_printf ("%s/source-%u.tiff", argv[1], side);
  if (!g_file_test (tiff, G_FILE_TEST_EXISTS)) {
    wsi_test_slide_spec_init (&spec);
    spec.width = spec.height = side;
    spec.tile_size = 16;
    spec.levels = 1;
    spec.tissue_blobs = 2;
    spec.jpeg_quality = 50;
    if (!wsi_test_slide_write (tiff, &spec, &error)) {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  }
  path = series (tiff, argv[1], "sparse-none", TRUE,
      WSI_TEST_DICOM_TABLE_NONE);
  time_opens ("TILED_SPARSE, no offset table", path, repeats);
  g_free (path);
  path = series (tiff, argv[1], "sparse-basic", TRUE,
      WSI_TEST_DICOM_TABLE_BASIC);
  time_opens ("TILED_SPARSE, basic offset table", path, repeats);
  g_free (path);
  path = series (tiff, argv[1], "full-extended", FALSE,
      WSI_TEST_DICOM_TABLE_EXTENDED);
  time_opens ("TILED_FULL, extended offset table", path, repeats);
  g_free (path);
  g_free (tiff);
  g_option_context_free (context);
  return 0;
}
