/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* OME-Zarr stores (NGFF 0.4, Zarr v2) written at test time from the
 * specification (libs/omezarr-oracle.py: numpy and numcodecs' codecs;
 * raw, zlib, gzip, zstd, blosc lz4 and zstd; (c, y, x), (y, x, c) and
 * (t, c, z, y, x); '.' and '/' chunk keys; C and F order; bioformats2raw's
 * layout; a chunk never written), each level read whole through wsislide.h
 * and compared byte for byte with python3-zarr's reading of it; NGFF 0.5
 * stores on Zarr v3 (zarr.json; bytes, transpose, gzip, zstd, blosc; the
 * default chunk keys "c/..." with '/' and '.', the v2 keys; bioformats2raw's
 * layout; a chunk never written; sharding_indexed with the index at the
 * end, or at the start with crc32c, inner chunks raw, zstd or transposed
 * gzip, a shard never written and empty inner chunks) written from the
 * Zarr v3 specification and compared byte for byte with numpy's array.
 * Stores the backend must refuse (uint16 in v2 and v3, four channels, a
 * level missing and bad JSON in v2 and v3, an empty .zattrs, sharding
 * beside a transpose) are refused by `auto` with WSI_SLIDE_ERROR_REFUSED
 * naming the store and the reason; a chunk cut short (v2 and v3), a shard
 * index entry past the shard's end, a shard shorter than its index and a
 * shard index whose crc32c does not match fail
 * the read naming the store and the reason. Without
 * /usr/bin/python3, zarr or numcodecs each check prints a SKIP line with
 * the reason (a failure under CI=true, where install-deps.sh ran). The
 * remote stores' fetch-ahead (wsizarrfetch.h) hands eight concurrent
 * readers each its own chunk's bytes, whoever fetched them. */

#include <gst/check/gstcheck.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "wsibytesource.h"
#include "wsislide.h"
#include "wsitestutil.h"
#include "wsitestlevels.h"
#include "wsizarr.h"

#define ORACLE WSI_TEST_SRCDIR "/libs/omezarr-oracle.py"

static gchar *data_dir;

/* Writes the test files (once per process). */
static WsiTestOracle oracle = { ORACLE,
  "import zarr, numcodecs, numpy",
  "python3-zarr (with numcodecs) missing "
      "(scripts/install-deps.sh installs it)"
};

GST_START_TEST (test_levels_match_zarr)
{
  gchar **lines, **line;
  guint checked = 0;

  if (!wsi_test_oracle_run (&oracle, "ome-zarr levels", data_dir))
    return;
  lines = wsi_test_case_lines (data_dir);
  for (line = lines; *line != NULL; line++) {
    gchar **f = g_strsplit (*line, " ", -1);
    gchar *path;
    WsiSlide *slide;
    GError *error = NULL;
    gint nlevels;
    gdouble mpp;

    if (strcmp (f[0], "refuse") == 0 || strcmp (f[0], "damaged") == 0) {
      g_strfreev (f);
      continue;
    }
    path = g_build_filename (data_dir, f[0], NULL);
    nlevels = atoi (f[1]);
    mpp = g_ascii_strtod (f[2], NULL);
    slide = wsi_slide_open (path, WSI_BACKEND_AUTO, &error);
    fail_unless (slide != NULL, "%s: %s", f[0], error ? error->message : "");
    fail_unless_equals_string (slide->backend->name, WSI_BACKEND_ZARR);
    fail_unless_equals_string (slide->vendor, "ome-zarr");
    fail_unless_equals_int (slide->level_count, nlevels);
    fail_unless (fabs (slide->mpp_x - mpp) < 1e-9
        && fabs (slide->mpp_y - mpp) < 1e-9, "%s: mpp %g x %g, want %g",
        f[0], slide->mpp_x, slide->mpp_y, mpp);
    fail_unless_equals_string (slide->mpp_source, WSI_MPP_SOURCE_NGFF);
    checked += wsi_test_compare_levels (slide, path, f[0], 0,
        "zarr's reading");
    wsi_slide_close (slide);
    g_free (path);
    g_strfreev (f);
  }
  g_strfreev (lines);
  fail_unless (checked >= 48, "only %u levels checked", checked);
}

GST_END_TEST;

GST_START_TEST (test_refusals_name_store_and_reason)
{
  gchar **lines, **line;
  guint refused = 0, damaged = 0;

  if (!wsi_test_oracle_run (&oracle, "ome-zarr refusals", data_dir))
    return;
  lines = wsi_test_case_lines (data_dir);
  for (line = lines; *line != NULL; line++) {
    gchar **f = g_strsplit (*line, " ", -1);
    gchar *path;
    WsiSlide *slide;
    GError *error = NULL;

    if (strcmp (f[0], "refuse") == 0) {
      wsi_test_assert_refused (data_dir, f[1], f[2]);
      refused++;
    } else if (strcmp (f[0], "damaged") == 0) {
      WsiReadContext *ctx = wsi_read_context_new ();
      guint32 *argb = g_new (guint32, 128 * 128);
      path = g_build_filename (data_dir, f[1], NULL);
      slide = wsi_slide_open (path, WSI_BACKEND_AUTO, &error);
      fail_unless (slide != NULL, "%s: %s", f[1], error ? error->message : "");
      fail_if (wsi_slide_read_region (slide, ctx, argb, 0, 0, 0, 128, 128,
              &error));
      fail_unless (strstr (error->message, f[1]) != NULL
          && strstr (error->message, f[2]) != NULL, "%s: %s", f[1],
          error->message);
      GST_INFO ("%s", error->message);
      g_clear_error (&error);
      /* the next chunk is whole: the slide reads on */
      fail_unless (wsi_slide_read_region (slide, ctx, argb, 128, 0, 0, 128,
              128, &error), "%s", error ? error->message : "");
      wsi_slide_close (slide);
      wsi_read_context_free (ctx);
      g_free (argb);
      g_free (path);
      damaged++;
    }
    g_strfreev (f);
  }
  g_strfreev (lines);
  fail_unless_equals_int (refused, 9);
  fail_unless_equals_int (damaged, 5);
}

GST_END_TEST;

/* ---- wsizarrfetch: chunks fetched ahead, taken by many readers ---------- */

static gint fake_reads;

/* A fake store: every object's bytes are its name, after a short wait (a
 * round trip); names ending in "absent" do not exist. */
static guint8 *
fake_read (const gchar * location, gsize limit, gsize * size, GError ** error)
{
  g_atomic_int_inc (&fake_reads);
  g_usleep (200);
  if (g_str_has_suffix (location, "absent")) {
    g_set_error (error, WSI_BYTE_SOURCE_ERROR,
        WSI_BYTE_SOURCE_ERROR_NOT_FOUND, "%s: no such object", location);
    return NULL;
  }
  *size = strlen (location);
  return (guint8 *) g_strdup (location);
}

static gpointer
fetch_worker (gpointer data)
{
  WsiZarrFetch *fetch = data;
  GRand *rand = g_rand_new_with_seed (GPOINTER_TO_UINT (g_thread_self ()));
  guint i;

  for (i = 0; i < 400; i++) {
    gchar *want = g_strdup_printf ("chunk/%u%s", g_rand_int_range (rand, 0,
            24), g_rand_int_range (rand, 0, 8) == 0 ? "absent" : "");
    gchar *hint = g_strdup_printf ("chunk/%u", g_rand_int_range (rand, 0,
            24));
    GError *error = NULL;
    gsize size = 0;
    guint8 *bytes;

    wsi_zarr_fetch_hint (fetch, hint, 1 << 20);
    bytes = wsi_zarr_fetch_get (fetch, want, 1 << 20, &size, &error);
    if (g_str_has_suffix (want, "absent"))
      fail_unless (bytes == NULL && g_error_matches (error,
              WSI_BYTE_SOURCE_ERROR, WSI_BYTE_SOURCE_ERROR_NOT_FOUND), "%s",
          want);
    else
      fail_unless (bytes != NULL && size == strlen (want)
          && memcmp (bytes, want, size) == 0, "%s: wrong bytes", want);
    g_clear_error (&error);
    g_free (bytes);
    g_free (want);
    g_free (hint);
  }
  g_rand_free (rand);
  return NULL;
}

/* Eight readers taking chunks that are hinted, in flight, held or not
 * hinted at all, many at once: each gets its own chunk's bytes (or
 * NOT_FOUND), whoever fetched them; freeing with fetches queued is clean. */
GST_START_TEST (test_fetch_ahead_many_readers)
{
  WsiZarrFetch *fetch = wsi_zarr_fetch_new (fake_read);
  GThread *threads[8];
  guint i;

  for (i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("reader", fetch_worker, fetch);
  for (i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);
  for (i = 0; i < 200; i++) {
    gchar *hint = g_strdup_printf ("late/%u", i);
    wsi_zarr_fetch_hint (fetch, hint, 1 << 20);
    g_free (hint);
  }
  wsi_zarr_fetch_free (fetch);
  GST_INFO ("%d reads for 3200 chunks taken", fake_reads);
}

GST_END_TEST;

static Suite *
wsiomezarr_suite (void)
{
  Suite *s = suite_create ("wsiomezarr");
  TCase *tc = tcase_create ("general");

  data_dir = g_strdup (WSI_TEST_TMPDIR);
  g_mkdir_with_parents (data_dir, 0755);
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_levels_match_zarr);
  tcase_add_test (tc, test_refusals_name_store_and_reason);
  tcase_add_test (tc, test_fetch_ahead_many_readers);
  return s;
}

GST_CHECK_MAIN (wsiomezarr);
