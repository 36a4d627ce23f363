/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* DICOM slides through whole pipelines, against the TIFF slides they were
 * generated from (tools/wsitestdicom.c copies the JPEG tiles unchanged):
 * wsislidesrc ! tissuemask ! patchsampler ! patchinterleave ! patchreader
 * [! patchviews] ! patchbatch gives the same records and byte-identical
 * batches from the DICOM series as from the TIFF, at level 0, at 2x through
 * DCT scaling and with context views; the same at 1, 2 and 4 threads; a
 * series whose frames are damaged drops, counts and refills exactly the
 * patches the TIFF with the same damaged tiles does; a folder of several
 * series is one slide per series, with backend=dicom in the slide meta. */

#include "wsipipeline.h"
#include "wsitestslide.h"
#include "wsitestdicom.h"
#include "wsitestutil.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#define PATCH 64
#define DAMAGE_EVERY 3

typedef struct
{
  gchar *tiff;                  /* the TIFF slide */
  gchar *dicom_dir;             /* the folder of its DICOM series */
} Pair;

static void
pair_clear (Pair * pair)
{
  g_free (pair->tiff);
  g_free (pair->dicom_dir);
}

/* A 2048 x 1536 TIFF (downsamples 1, @step, @step^2) and its DICOM series
 * (JPEG frames, a thumbnail instance beside). */
static Pair
make_pair (const gchar * name, guint step, guint damage_every,
    WsiTestDicomTable table)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, name);
  WsiTestSlideSpec spec;
  WsiTestDicomSpec dspec;
  GError *error = NULL;
  Pair pair;

  wsi_test_slide_spec_init (&spec);
  spec.width = 2048;
  spec.height = 1536;
  spec.tile_size = 256;
  spec.levels = 3;
  spec.level_step = step;
  spec.mpp = 0.25;
  spec.tissue_blobs = 3;
  spec.seed = 7;
  pair.tiff = g_build_filename (dir, "slide.tiff", NULL);
  pair.dicom_dir = g_build_filename (dir, "dicom", NULL);
  if (damage_every > 0)
    fail_unless (wsi_test_slide_write_partly_damaged (pair.tiff, &spec,
            damage_every, &error), "%s", error ? error->message : "?");
  else
    fail_unless (wsi_test_slide_write (pair.tiff, &spec, &error), "%s",
        error ? error->message : "?");
  wsi_test_dicom_spec_init (&dspec);
  dspec.mpp = 0.25;
  dspec.thumbnail = TRUE;
  dspec.table = table;
  fail_unless (wsi_test_dicom_from_tiff (pair.tiff, pair.dicom_dir, "slide",
          &dspec, NULL, &error), "%s", error ? error->message : "?");
  g_free (dir);
  return pair;
}

static WsiRun *
run_stream (const gchar * location, const gchar * sampler_extra,
    const gchar * reader_extra, const gchar * after_reader, guint threads)
{
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=5 ! "
      "tissuemask ! queue ! patchsampler patch-size=%d patches-per-slide=40 "
      "%s ! patchinterleave ! patchreader threads=%u %s ! %s "
      "queue ! patchbatch batch-size=8 ! appsink name=sink sync=false",
      location, PATCH, sampler_extra, threads, reader_extra, after_reader);
  WsiRun *run = wsi_run_pipeline (desc, 0);

  fail_unless (run->error == NULL, "%s: %s", desc, run->error);
  g_free (desc);
  return run;
}

static void
check_same_as_tiff (const Pair * pair, const gchar * sampler_extra,
    const gchar * reader_extra, const gchar * after_reader,
    const gchar * what)
{
  WsiRun *tiff = run_stream (pair->tiff, sampler_extra, reader_extra,
      after_reader, 2);
  WsiRun *dicom = run_stream (pair->dicom_dir, sampler_extra, reader_extra,
      after_reader, 2);
  guint i;

  for (i = 0; i < dicom->paths->len; i++)
    fail_unless (g_str_has_suffix (g_ptr_array_index (dicom->paths, i),
            "slide-level0.dcm"), "%s", (gchar *) dicom->paths->pdata[i]);
  wsi_run_assert_same_stream (tiff, dicom, what);
  wsi_run_free (tiff);
  wsi_run_free (dicom);
}

GST_START_TEST (test_level0_same_as_tiff)
{
  Pair pair = make_pair ("level0", 2, 0, WSI_TEST_DICOM_TABLE_BASIC);

  check_same_as_tiff (&pair, "", "", "", "level 0");
  pair_clear (&pair);
}

GST_END_TEST;

GST_START_TEST (test_dct_scaling_same_as_tiff)
{
  /* Downsamples 1, 4, 16: 2x patches are read from level 0 at 1/2 DCT
   * scale. */
  Pair pair = make_pair ("dct", 4, 0, WSI_TEST_DICOM_TABLE_NONE);
  WsiRun *run;

  check_same_as_tiff (&pair, "target-mpp=0.5", "dct-scaling=true", "",
      "2x, DCT");
  run = run_stream (pair.dicom_dir, "target-mpp=0.5", "dct-scaling=true", "",
      1);
  fail_unless_equals_int (WSI_RECORD (run, 0)->level, 0);
  fail_unless_equals_int (WSI_RECORD (run, 0)->footprint, 2 * PATCH);
  wsi_run_free (run);
  pair_clear (&pair);
}

GST_END_TEST;

GST_START_TEST (test_context_views_same_as_tiff)
{
  Pair pair = make_pair ("views", 2, 0, WSI_TEST_DICOM_TABLE_EXTENDED);

  check_same_as_tiff (&pair, "", "",
      "patchviews views=\"target:patch,ctx:context:64:4x\" threads=2 !",
      "context views");
  pair_clear (&pair);
}

GST_END_TEST;

GST_START_TEST (test_deterministic_across_threads)
{
  static const guint threads[] = { 1, 2, 4 };
  Pair pair = make_pair ("threads", 2, 0, WSI_TEST_DICOM_TABLE_BASIC);
  WsiRun *reference = NULL;
  guint t;

  for (t = 0; t < G_N_ELEMENTS (threads); t++) {
    WsiRun *run = run_stream (pair.dicom_dir, "target-mpp=0.4", "", "",
        threads[t]);
    wsi_run_same_as_first (&reference, run, "threads");
  }
  wsi_run_free (reference);
  pair_clear (&pair);
}

GST_END_TEST;

/* The TIFF's damaged tiles are the DICOM's damaged frames (copied
 * unchanged): the same patches are dropped and refilled, at every thread
 * count. */
GST_START_TEST (test_damaged_frames_like_damaged_tiles)
{
  Pair pair = make_pair ("damaged", 2, DAMAGE_EVERY,
      WSI_TEST_DICOM_TABLE_BASIC);
  const gchar *sampler = "min-tissue=0";
  const gchar *reader = "max-read-failures=1000000";
  WsiRun *tiff = run_stream (pair.tiff, sampler, reader, "", 2);
  guint t;

  fail_unless (tiff->records->len > 0 && tiff->records->len < 40,
      "the TIFF should lose some patches and keep others (%u)",
      tiff->records->len);
  for (t = 1; t <= 4; t *= 2) {
    WsiRun *dicom = run_stream (pair.dicom_dir, sampler, reader, "", t);
    wsi_run_assert_same_stream (tiff, dicom, "damaged");
    wsi_run_free (dicom);
  }
  wsi_run_free (tiff);
  pair_clear (&pair);
}

GST_END_TEST;

/* Writes series @prefix of @tiff into @dir with @damage. */
static void
write_series (const gchar * tiff, const gchar * dir, const gchar * prefix,
    guint32 seed, WsiTestDicomDamage damage)
{
  WsiTestDicomSpec dspec;
  GError *error = NULL;

  wsi_test_dicom_spec_init (&dspec);
  dspec.mpp = 0.25;
  dspec.seed = seed;
  dspec.damage = damage;
  fail_unless (wsi_test_dicom_from_tiff (tiff, dir, prefix, &dspec, NULL,
          &error), "%s", error ? error->message : "?");
}

/* The determinism promise on damaged DICOM: a folder of an intact series,
 * a TILED_FULL one whose NumberOfFrames is one short of its grid and one
 * whose level-0 instance is cut at 3/4 of its size streams byte-identical
 * records and batches at 1, 2 and 4 reader threads; each damaged slide is
 * warned about once, and the cut one loses patches (failed reads). */
GST_START_TEST (test_damaged_series_deterministic_across_threads)
{
  static const guint threads[] = { 1, 2, 4 };
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "damaged-set");
  gchar *tiff = g_build_filename (WSI_TEST_TMPDIR, "damaged-set.tiff", NULL);
  gchar *cut = g_build_filename (dir, "cut-level0.dcm", NULL);
  const gchar *sampler = "min-tissue=0";
  const gchar *reader = "max-read-failures=1000000";
  WsiTestSlideSpec spec;
  WsiRun *reference = NULL;
  GError *error = NULL;
  GStatBuf st;
  guint t;

  wsi_test_slide_spec_init (&spec);
  spec.width = 2048;
  spec.height = 1536;
  spec.tile_size = 256;
  spec.levels = 3;
  spec.mpp = 0.25;
  spec.tissue_blobs = 3;
  spec.seed = 7;
  fail_unless (wsi_test_slide_write (tiff, &spec, &error), "%s",
      error ? error->message : "?");
  write_series (tiff, dir, "intact", 1, WSI_TEST_DICOM_DAMAGE_NONE);
  write_series (tiff, dir, "short", 2, WSI_TEST_DICOM_DAMAGE_FRAME_COUNT);
  write_series (tiff, dir, "cut", 3, WSI_TEST_DICOM_DAMAGE_NONE);
  fail_unless (g_stat (cut, &st) == 0);
  fail_unless (truncate (cut, st.st_size * 3 / 4) == 0);

  for (t = 0; t < G_N_ELEMENTS (threads); t++) {
    WsiRun *run = run_stream (dir, sampler, reader, "", threads[t]);

    fail_unless (wsi_run_has_warning (run, "short-level0.dcm", "is damaged",
            "NumberOfFrames", NULL), "threads=%u: the short instance was "
        "not named", threads[t]);
    fail_unless (wsi_run_has_warning (run, "cut-level0.dcm", "is damaged",
            "truncated", NULL), "threads=%u: the cut instance was not named",
        threads[t]);
    if (reference == NULL) {
      reference = run;
      /* the cut slide's lost frames did cost patches */
      fail_unless (reference->records->len < 3 * 40, "%u patches",
          reference->records->len);
    } else {
      wsi_run_assert_same_stream (reference, run, "damaged, threads");
      wsi_run_free (run);
    }
  }
  wsi_run_free (reference);
  g_free (cut);
  g_free (tiff);
  g_free (dir);
}

GST_END_TEST;

/* DICOM files without an extension (named by UID, as archives export
 * them) are found by their DICM magic in a folder scan and as a single
 * location, and stream exactly as the same series named .dcm; other
 * extensionless files are not slides and are not warned about. */
GST_START_TEST (test_extensionless_files)
{
  Pair pair = make_pair ("extensionless", 2, 0, WSI_TEST_DICOM_TABLE_BASIC);
  gchar *bare_dir = g_strconcat (pair.dicom_dir, "-bare", NULL);
  gchar *readme = g_build_filename (bare_dir, "README", NULL);
  gchar *level0 = NULL;
  const gchar *name;
  WsiRun *named, *bare, *single;
  GDir *dir;
  guint i;

  g_mkdir_with_parents (bare_dir, 0755);
  dir = g_dir_open (pair.dicom_dir, 0, NULL);
  fail_unless (dir != NULL);
  while ((name = g_dir_read_name (dir)) != NULL) {
    gchar *from = g_build_filename (pair.dicom_dir, name, NULL);
    /* slide-level0.dcm -> 2.25.7.level0 (its "extension" is no slide's) */
    gchar *stem = g_strndup (name, strlen (name) - 4);
    gchar *bare_name = g_strdup_printf ("2.25.7.%s", stem + 6);
    gchar *to = g_build_filename (bare_dir, bare_name, NULL);
    gchar *contents;
    gsize size;

    fail_unless (g_file_get_contents (from, &contents, &size, NULL));
    fail_unless (g_file_set_contents (to, contents, size, NULL));
    if (g_str_has_suffix (name, "level0.dcm"))
      level0 = g_strdup (to);
    g_free (contents);
    g_free (to);
    g_free (bare_name);
    g_free (stem);
    g_free (from);
  }
  g_dir_close (dir);
  fail_unless (level0 != NULL);
  fail_unless (g_file_set_contents (readme, "not a slide", -1, NULL));

  named = run_stream (pair.dicom_dir, "", "", "", 2);
  bare = run_stream (bare_dir, "", "", "", 2);
  single = run_stream (level0, "", "", "", 2);
  for (i = 0; i < bare->paths->len; i++)
    fail_unless_equals_string (g_ptr_array_index (bare->paths, i), level0);
  wsi_run_assert_same_stream (named, bare, "extensionless folder");
  wsi_run_assert_same_stream (named, single, "extensionless file");
  fail_if (wsi_run_has_warning (bare, "README", NULL));
  wsi_run_free (named);
  wsi_run_free (bare);
  wsi_run_free (single);
  g_free (level0);
  g_free (readme);
  g_free (bare_dir);
  pair_clear (&pair);
}

GST_END_TEST;

/* A list file naming every instance of a series, its levels in different
 * folders (where no folder scan would find them together): one slide,
 * named by its level-0 instance, streaming as the series in one folder. */
GST_START_TEST (test_list_of_instances)
{
  Pair pair = make_pair ("list", 2, 0, WSI_TEST_DICOM_TABLE_BASIC);
  gchar *root = g_strconcat (pair.dicom_dir, "-split", NULL);
  gchar *list = g_build_filename (root, "series.lst", NULL);
  GString *lines = g_string_new ("# one series, levels apart\n");
  gchar *level0 = NULL;
  const gchar *name;
  WsiRun *together, *listed;
  GDir *dir;
  guint i, k = 0;

  dir = g_dir_open (pair.dicom_dir, 0, NULL);
  fail_unless (dir != NULL);
  while ((name = g_dir_read_name (dir)) != NULL) {
    gchar *from = g_build_filename (pair.dicom_dir, name, NULL);
    gchar *sub = g_strdup_printf ("%s/part%u", root, k++);
    gchar *to = g_build_filename (sub, name, NULL);
    gchar *contents;
    gsize size;

    g_mkdir_with_parents (sub, 0755);
    fail_unless (g_file_get_contents (from, &contents, &size, NULL));
    fail_unless (g_file_set_contents (to, contents, size, NULL));
    g_string_append_printf (lines, "%s\n", to);
    if (g_str_has_suffix (name, "level0.dcm"))
      level0 = g_strdup (to);
    g_free (contents);
    g_free (to);
    g_free (sub);
    g_free (from);
  }
  g_dir_close (dir);
  fail_unless (k >= 3 && level0 != NULL);
  fail_unless (g_file_set_contents (list, lines->str, -1, NULL));

  together = run_stream (pair.dicom_dir, "", "", "", 2);
  listed = run_stream (list, "", "", "", 2);
  for (i = 0; i < listed->paths->len; i++)
    fail_unless_equals_string (g_ptr_array_index (listed->paths, i), level0);
  wsi_run_assert_same_stream (together, listed, "list of instances");
  wsi_run_free (together);
  wsi_run_free (listed);
  g_string_free (lines, TRUE);
  g_free (level0);
  g_free (list);
  g_free (root);
  pair_clear (&pair);
}

GST_END_TEST;

/* One slide per series in a folder; the meta names the backend. */
GST_START_TEST (test_folder_of_series)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "series");
  gchar *tiff = g_build_filename (WSI_TEST_TMPDIR, "series-source.tiff",
      NULL);
  gchar *other = g_build_filename (dir, "notes.dcm", NULL);
  WsiTestSlideSpec spec;
  WsiTestDicomSpec dspec;
  GHashTable *slides = g_hash_table_new (g_str_hash, g_str_equal);
  GError *error = NULL;
  WsiRun *run;
  guint i;

  wsi_test_slide_spec_init (&spec);
  spec.width = 1024;
  spec.height = 768;
  spec.levels = 2;
  spec.mpp = 0.5;
  fail_unless (wsi_test_slide_write (tiff, &spec, &error));
  wsi_test_dicom_spec_init (&dspec);
  dspec.thumbnail = TRUE;
  dspec.seed = 1;
  fail_unless (wsi_test_dicom_from_tiff (tiff, dir, "a", &dspec, NULL,
          &error));
  dspec.seed = 2;
  dspec.sparse = TRUE;
  fail_unless (wsi_test_dicom_from_tiff (tiff, dir, "b", &dspec, NULL,
          &error));
  /* A .dcm that is not DICOM: a slide that fails with its reason. */
  fail_unless (g_file_set_contents (other, "not dicom", -1, NULL));

  run = run_stream (dir, "min-tissue=0", "", "", 2);
  for (i = 0; i < run->paths->len; i++)
    g_hash_table_add (slides, run->paths->pdata[i]);
  fail_unless_equals_int (g_hash_table_size (slides), 2);
  for (i = 0; i < run->paths->len; i++) {
    const gchar *path = run->paths->pdata[i];
    fail_unless (g_str_has_suffix (path, "a-level0.dcm")
        || g_str_has_suffix (path, "b-level0.dcm"), "%s", path);
  }
  fail_unless_equals_int (run->records->len, 80);
  fail_unless (wsi_run_has_warning (run, "notes.dcm", NULL));
  wsi_run_free (run);
  g_hash_table_unref (slides);
  g_free (other);
  g_free (tiff);
  g_free (dir);
}

GST_END_TEST;

static Suite *
dicom_suite (void)
{
  Suite *s = suite_create ("dicom");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_level0_same_as_tiff);
  tcase_add_test (tc, test_dct_scaling_same_as_tiff);
  tcase_add_test (tc, test_context_views_same_as_tiff);
  tcase_add_test (tc, test_deterministic_across_threads);
  tcase_add_test (tc, test_damaged_frames_like_damaged_tiles);
  tcase_add_test (tc, test_damaged_series_deterministic_across_threads);
  tcase_add_test (tc, test_folder_of_series);
  tcase_add_test (tc, test_extensionless_files);
  tcase_add_test (tc, test_list_of_instances);
  return s;
}

GST_CHECK_MAIN (dicom);
