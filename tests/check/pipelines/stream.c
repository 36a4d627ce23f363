/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Whole-pipeline tests on slides generated at test time:
 * wsislidesrc ! tissuemask ! queue ! patchsampler ! patchinterleave !
 * patchreader ! queue ! patchbatch ! appsink */

#include "wsipipeline.h"
#include "wsitestslide.h"
#include "wsitestutil.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#define PATCH 64

static void
default_spec (WsiTestSlideSpec * spec, guint32 seed)
{
  wsi_test_slide_spec_init (spec);
  spec->width = 1536;
  spec->height = 1024;
  spec->tile_size = 256;
  spec->levels = 3;
  spec->level_step = 2;
  spec->mpp = 0.25;
  spec->tissue_blobs = 3;
  spec->seed = seed;
}

/* Writes @n good slides (alternating generic and Aperio layout). */
static void
write_good_slides (const gchar * dir, guint n, WsiTestSlideSpec * specs)
{
  guint i;

  for (i = 0; i < n; i++) {
    gchar name[32];

    default_spec (&specs[i], 100 + i);
    specs[i].layout = (i % 2) ? WSI_TEST_LAYOUT_APERIO :
        WSI_TEST_LAYOUT_GENERIC;
    if (specs[i].layout == WSI_TEST_LAYOUT_APERIO)
      specs[i].level_step = 4;
    g_snprintf (name, sizeof (name), "slide%02u.%s", i,
        (i % 2) ? "svs" : "tiff");
    g_free (wsi_test_write_slide (dir, name, &specs[i]));
  }
}

static gchar *
pipeline_desc (const gchar * location, const gchar * src_extra,
    const gchar * sampler_extra, const gchar * interleave_extra,
    guint threads, guint batch)
{
  return g_strdup_printf ("wsislidesrc name=src location=\"%s\" %s ! "
      "tissuemask ! queue max-size-buffers=4 ! "
      "patchsampler name=sampler patch-size=%d %s ! "
      "patchinterleave %s ! patchreader name=reader threads=%u ! "
      "queue max-size-buffers=64 max-size-bytes=0 max-size-time=0 ! "
      "patchbatch batch-size=%u ! appsink name=sink sync=false wait-on-eos=false",
      location, src_extra, PATCH, sampler_extra, interleave_extra, threads,
      batch);
}

static WsiRun *
run (const gchar * location, const gchar * src_extra,
    const gchar * sampler_extra, const gchar * interleave_extra,
    guint threads, guint batch, guint max_batches)
{
  gchar *desc = pipeline_desc (location, src_extra, sampler_extra,
      interleave_extra, threads, batch);
  WsiRun *r = wsi_run_pipeline (desc, max_batches);

  g_free (desc);
  return r;
}

static const WsiTestSlideSpec *
spec_for_path (const gchar * path, WsiTestSlideSpec * specs, guint n)
{
  gchar *base = g_path_get_basename (path);
  guint i = (guint) g_ascii_strtoull (base + strlen ("slide"), NULL, 10);

  g_free (base);
  fail_unless (i < n);
  return &specs[i];
}

GST_START_TEST (test_stream_counts_bounds_and_tissue)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "counts");
  WsiTestSlideSpec specs[3];
  WsiRun *r;
  guint i;

  write_good_slides (dir, 3, specs);
  r = run (dir, "", "patches-per-slide=20 min-tissue=0.9", "", 2, 16, 0);
  fail_unless (r->error == NULL, "%s", r->error);

  /* 3 slides x 20 patches, batches of 16: 16+16+16+12. */
  fail_unless_equals_int (r->records->len, 60);
  fail_unless_equals_int (r->batches->len, 4);
  {
    GstStructure *s = gst_caps_get_structure (r->last_caps, 0);
    gint w, h;

    fail_unless (gst_structure_get_int (s, "width", &w));
    fail_unless (gst_structure_get_int (s, "height", &h));
    fail_unless_equals_int (w, PATCH);
    fail_unless_equals_int (h, 12 * PATCH);
    fail_unless_equals_string (gst_structure_get_string (s, "format"),
        "RGB");
  }

  for (i = 0; i < r->records->len; i++) {
    const WsiPatchRecord *rec = WSI_RECORD (r, i);
    const WsiTestSlideSpec *spec = spec_for_path (g_ptr_array_index (r->paths,
            i), specs, 3);

    fail_unless_equals_uint64 (rec->sequence, i);
    fail_unless (rec->x >= 0 && rec->x + rec->footprint <= spec->width);
    fail_unless (rec->y >= 0 && rec->y + rec->footprint <= spec->height);
    fail_unless_equals_int (rec->footprint, PATCH);
    fail_unless_equals_int (rec->level, 0);
    fail_unless_equals_int (rec->read_size, PATCH);
    fail_unless (rec->tissue_fraction >= 0.9f);
    /* On tissue by the generator's ground truth (centre of the patch). */
    fail_unless (wsi_test_slide_is_tissue (spec, rec->x + PATCH / 2.0,
            rec->y + PATCH / 2.0), "patch %u at %" G_GINT64_FORMAT ",%"
        G_GINT64_FORMAT " is not on tissue", i, rec->x, rec->y);
    fail_unless (rec->created_ns > 0);
  }
  wsi_run_free (r);
  g_free (dir);
}

GST_END_TEST;

/* The stream is a pure function of seed and settings, whatever the number
 * of reader threads. */
GST_START_TEST (test_deterministic_across_threads)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "determinism");
  WsiTestSlideSpec specs[4];
  WsiRun *one, *three, *other_seed;
  guint i;

  write_good_slides (dir, 4, specs);
  one = run (dir, "seed=7", "patches-per-slide=12 target-mpp=0.4", "pool-size=3 "
      "patches-per-visit=2", 1, 8, 0);
  three = run (dir, "seed=7", "patches-per-slide=12 target-mpp=0.4",
      "pool-size=3 patches-per-visit=2", 3, 8, 0);
  other_seed = run (dir, "seed=8", "patches-per-slide=12 target-mpp=0.4",
      "pool-size=3 patches-per-visit=2", 3, 8, 0);
  fail_unless (one->error == NULL && three->error == NULL);
  fail_unless_equals_int (one->records->len, 48);
  fail_unless_equals_int (one->batches->len, three->batches->len);

  for (i = 0; i < one->batches->len; i++) {
    GstBuffer *a = g_ptr_array_index (one->batches, i);
    GstBuffer *b = g_ptr_array_index (three->batches, i);
    GstMapInfo ma, mb;

    fail_unless (gst_buffer_map (a, &ma, GST_MAP_READ));
    fail_unless (gst_buffer_map (b, &mb, GST_MAP_READ));
    fail_unless_equals_int (ma.size, mb.size);
    fail_unless (memcmp (ma.data, mb.data, ma.size) == 0,
        "batch %u differs between 1 and 3 threads", i);
    gst_buffer_unmap (a, &ma);
    gst_buffer_unmap (b, &mb);
  }
  for (i = 0; i < one->records->len; i++) {
    WsiPatchRecord a = *WSI_RECORD (one, i), b = *WSI_RECORD (three, i);

    a.created_ns = b.created_ns = 0;
    fail_unless (memcmp (&a, &b, sizeof (a)) == 0, "record %u differs", i);
  }

  /* Another seed draws other positions. */
  {
    guint same = 0;

    for (i = 0; i < MIN (one->records->len, other_seed->records->len); i++)
      same += WSI_RECORD (one, i)->x == WSI_RECORD (other_seed, i)->x
          && WSI_RECORD (one, i)->y == WSI_RECORD (other_seed, i)->y;
    fail_unless (same < one->records->len / 2);
  }
  wsi_run_free (one);
  wsi_run_free (three);
  wsi_run_free (other_seed);
  g_free (dir);
}

GST_END_TEST;

/* target-mpp picks the pyramid level and the read size; the output is
 * always patch-size. */
GST_START_TEST (test_target_mpp_read_sizes)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "mpp");
  WsiTestSlideSpec spec;
  gchar *path;
  WsiRun *r;
  guint i;

  default_spec (&spec, 5);
  spec.width = 3072;
  spec.height = 2048;
  spec.tissue_blobs = 6;        /* mpp 0.25, levels 1, 2, 4 */
  path = wsi_test_write_slide (dir, "slide00.tiff", &spec);

  /* 0.5 um/px = 2x: level 1 read at 64 px, no resampling. */
  r = run (path, "", "patches-per-slide=10 target-mpp=0.5 min-tissue=0.1",
      "", 1, 10, 0);
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 10);
  for (i = 0; i < r->records->len; i++) {
    fail_unless_equals_int (WSI_RECORD (r, i)->footprint, 2 * PATCH);
    fail_unless_equals_int (WSI_RECORD (r, i)->level, 1);
    fail_unless_equals_int (WSI_RECORD (r, i)->read_size, PATCH);
    fail_unless (G_APPROX_VALUE (WSI_RECORD (r, i)->out_mpp, 0.5, 1e-3));
  }
  wsi_run_free (r);

  /* 0.75 um/px = 3x: level 1 (2x) read at 96 px, area-averaged to 64. */
  r = run (path, "", "patches-per-slide=10 target-mpp=0.75 min-tissue=0.1",
      "", 1, 10, 0);
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 10);
  for (i = 0; i < r->records->len; i++) {
    fail_unless_equals_int (WSI_RECORD (r, i)->footprint, 3 * PATCH);
    fail_unless_equals_int (WSI_RECORD (r, i)->level, 1);
    fail_unless_equals_int (WSI_RECORD (r, i)->read_size, 3 * PATCH / 2);
    fail_unless_equals_int (WSI_RECORD (r, i)->out_size, PATCH);
  }
  wsi_run_free (r);
  g_free (path);
  g_free (dir);
}

GST_END_TEST;

/* Ranks read disjoint slides that together are the whole collection. */
GST_START_TEST (test_rank_partition)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "ranks");
  WsiTestSlideSpec specs[5];
  GHashTable *seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      NULL);
  guint rank, i;

  write_good_slides (dir, 5, specs);
  for (rank = 0; rank < 2; rank++) {
    gchar *extra = g_strdup_printf ("rank=%u world-size=2", rank);
    GHashTable *mine = g_hash_table_new (g_str_hash, g_str_equal);
    WsiRun *r = run (dir, extra, "patches-per-slide=4", "", 1, 4, 0);

    fail_unless (r->error == NULL, "%s", r->error);
    for (i = 0; i < r->paths->len; i++) {
      const gchar *p = g_ptr_array_index (r->paths, i);

      g_hash_table_add (mine, (gpointer) p);
      /* index r, r+W, ... of the sorted list */
      fail_unless_equals_int (WSI_RECORD (r, i)->slide_index % 2, rank);
    }
    fail_unless_equals_int (g_hash_table_size (mine), rank == 0 ? 3 : 2);
    {
      GHashTableIter it;
      gpointer key;

      g_hash_table_iter_init (&it, mine);
      while (g_hash_table_iter_next (&it, &key, NULL)) {
        fail_if (g_hash_table_contains (seen, key), "%s read by two ranks",
            (gchar *) key);
        g_hash_table_add (seen, g_strdup (key));
      }
    }
    g_hash_table_unref (mine);
    wsi_run_free (r);
    g_free (extra);
  }
  fail_unless_equals_int (g_hash_table_size (seen), 5);
  g_hash_table_unref (seen);
  g_free (dir);
}

GST_END_TEST;

/* Broken files are skipped with a warning naming them, counted, and the
 * good slides still stream. */
GST_START_TEST (test_bad_files_skipped_and_counted)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "bad");
  WsiTestSlideSpec specs[2], spec;
  gchar *empty = g_build_filename (dir, "broken-empty.tiff", NULL);
  gchar *truncated = g_build_filename (dir, "broken-truncated.svs", NULL);
  gchar *desc;
  GstElement *pipeline, *src;
  WsiRun *r;
  guint failed = 0;             /* a guint property */

  write_good_slides (dir, 2, specs);
  default_spec (&spec, 9);
  g_free (wsi_test_write_garbage (dir, "broken-garbage.svs", 50000, 3));
  fail_unless (wsi_test_slide_write_empty (empty, NULL));
  fail_unless (wsi_test_slide_write_truncated (truncated, &spec, 0.02, NULL));

  r = run (dir, "", "patches-per-slide=5", "", 2, 5, 0);
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 10);
  fail_unless (wsi_run_has_warning (r, "broken-garbage.svs", NULL));
  fail_unless (wsi_run_has_warning (r, "broken-empty.tiff", NULL));
  fail_unless (wsi_run_has_warning (r, "broken-truncated.svs", NULL));
  wsi_run_free (r);

  /* The counter, read from the element after the stream ended. */
  desc = pipeline_desc (dir, "", "patches-per-slide=5", "", 1, 5);
  pipeline = gst_parse_launch (desc, NULL);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  wsi_test_wait_eos (pipeline, 60 * GST_SECOND);
  g_object_get (src, "slides-failed", &failed, NULL);
  fail_unless_equals_int (failed, 3);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (pipeline);
  g_free (desc);
  g_free (empty);
  g_free (truncated);
  g_free (dir);
}

GST_END_TEST;

GST_START_TEST (test_all_bad_is_an_error)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "allbad");
  gchar *b = g_build_filename (dir, "b.tiff", NULL);
  WsiRun *r;

  g_free (wsi_test_write_garbage (dir, "a.svs", 4096, 1));
  fail_unless (wsi_test_slide_write_empty (b, NULL));
  r = run (dir, "", "", "", 1, 4, 0);
  fail_unless (r->error != NULL, "every slide failed but no error");
  fail_unless_equals_int (r->records->len, 0);
  wsi_run_free (r);

  /* Same in cycle mode: an error, not a hang. */
  r = run (dir, "cycle=true", "", "", 1, 4, 0);
  fail_unless (r->error != NULL);
  wsi_run_free (r);
  g_free (b);
  g_free (dir);
}

GST_END_TEST;

/* A blank slide and a slide smaller than one patch yield nothing, with a
 * warning, and the stream goes on. */
GST_START_TEST (test_blank_and_tiny_slides)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "blank");
  WsiTestSlideSpec good, blank, tiny;
  WsiRun *r;
  guint i;

  default_spec (&good, 1);
  default_spec (&blank, 2);
  blank.tissue_blobs = 0;
  default_spec (&tiny, 3);
  tiny.width = 40;
  tiny.height = 30;
  tiny.levels = 1;
  tiny.tile_size = 16;
  tiny.tissue_blobs = 1;
  g_free (wsi_test_write_slide (dir, "slide00.tiff", &good));
  g_free (wsi_test_write_slide (dir, "slide01-blank.tiff", &blank));
  g_free (wsi_test_write_slide (dir, "slide02-tiny.tiff", &tiny));

  r = run (dir, "", "patches-per-slide=6", "", 1, 6, 0);
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 6);
  for (i = 0; i < r->paths->len; i++)
    fail_unless (g_str_has_suffix (g_ptr_array_index (r->paths, i),
            "slide00.tiff"));
  fail_unless (wsi_run_has_warning (r, "slide01-blank.tiff", NULL));
  fail_unless (wsi_run_has_warning (r, "slide02-tiny.tiff", NULL));
  wsi_run_free (r);
  g_free (dir);
}

GST_END_TEST;

/* In cycle mode, a pass that yields no patch at all is an error instead of
 * an endless silent loop. */
GST_START_TEST (test_cycle_without_patches_is_an_error)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "cycleblank");
  WsiTestSlideSpec blank;
  WsiRun *r;

  default_spec (&blank, 2);
  blank.tissue_blobs = 0;
  g_free (wsi_test_write_slide (dir, "a.tiff", &blank));
  blank.seed = 3;
  g_free (wsi_test_write_slide (dir, "b.tiff", &blank));
  r = run (dir, "cycle=true", "", "", 1, 4, 0);
  fail_unless (r->error != NULL, "blank slides cycled without an error");
  fail_unless_equals_int (r->records->len, 0);
  wsi_run_free (r);
  g_free (dir);
}

GST_END_TEST;

/* Cycling revisits slides with a new cycle number and new positions. */
GST_START_TEST (test_cycle_revisits)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "cycle");
  WsiTestSlideSpec specs[2];
  WsiRun *r;
  guint i, max_cycle = 0;

  write_good_slides (dir, 2, specs);
  r = run (dir, "cycle=true", "patches-per-slide=4", "pool-size=2", 1, 8, 6);
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 48);
  for (i = 0; i < r->records->len; i++)
    max_cycle = MAX (max_cycle, WSI_RECORD (r, i)->cycle);
  /* 48 patches from 2 slides of 4 per visit: at least 5 passes. */
  fail_unless (max_cycle >= 4, "max cycle %u", max_cycle);
  wsi_run_free (r);
  g_free (dir);
}

GST_END_TEST;

/* The slide pool mixes slides: with pool-size 2 and 2 patches per visit,
 * the stream alternates between two slides. */
GST_START_TEST (test_interleaving_mixes_slides)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "interleave");
  WsiTestSlideSpec specs[3];
  WsiRun *r;
  guint i;

  write_good_slides (dir, 3, specs);
  r = run (dir, "", "patches-per-slide=6", "pool-size=2 patches-per-visit=2",
      1, 6, 0);
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 18);
  /* Patches 0-1 from one slide, 2-3 from another, 4-5 from the first. */
  fail_unless_equals_int (WSI_RECORD (r, 0)->slide_index,
      WSI_RECORD (r, 1)->slide_index);
  fail_unless (WSI_RECORD (r, 0)->slide_index !=
      WSI_RECORD (r, 2)->slide_index);
  fail_unless_equals_int (WSI_RECORD (r, 4)->slide_index,
      WSI_RECORD (r, 0)->slide_index);
  for (i = 0; i + 1 < r->records->len; i++)
    fail_unless_equals_uint64 (WSI_RECORD (r, i + 1)->sequence,
        WSI_RECORD (r, i)->sequence + 1);
  wsi_run_free (r);
  g_free (dir);
}

GST_END_TEST;

/* A slide list file: comments, relative paths and labels that travel into
 * every patch's metadata. */
GST_START_TEST (test_list_file_labels)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "list");
  WsiTestSlideSpec specs[2];
  gchar *list = g_build_filename (dir, "slides.txt", NULL);
  WsiRun *r;
  guint i;

  write_good_slides (dir, 2, specs);
  fail_unless (g_file_set_contents (list, "# train split\n"
          "slide00.tiff\ttumour\n\nslide01.svs\tnormal\n", -1, NULL));
  r = run (list, "", "patches-per-slide=3", "", 1, 6, 0);
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 6);
  for (i = 0; i < r->records->len; i++) {
    const gchar *path = g_ptr_array_index (r->paths, i);
    const gchar *label = g_ptr_array_index (r->labels, i);

    fail_unless_equals_string (label, g_str_has_suffix (path,
            "slide00.tiff") ? "tumour" : "normal");
  }
  wsi_run_free (r);
  g_free (list);
  g_free (dir);
}

GST_END_TEST;

/* A slide whose level-0 tiles are damaged loses its patches with a warning
 * naming it; the other slide's patches all arrive. */
GST_START_TEST (test_damaged_tiles)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "damaged");
  WsiTestSlideSpec good, damaged;
  gchar *path;
  WsiRun *r;
  guint i;

  default_spec (&good, 1);
  default_spec (&damaged, 2);
  g_free (wsi_test_write_slide (dir, "slide00.tiff", &good));
  path = g_build_filename (dir, "slide01-damaged.tiff", NULL);
  fail_unless (wsi_test_slide_write_damaged_tiles (path, &damaged, NULL));
  r = run (dir, "", "patches-per-slide=5", "", 2, 5, 0);
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 5);
  for (i = 0; i < r->paths->len; i++)
    fail_unless (g_str_has_suffix (g_ptr_array_index (r->paths, i),
            "slide00.tiff"));
  fail_unless (wsi_run_has_warning (r, "slide01-damaged.tiff", NULL));
  wsi_run_free (r);
  g_free (path);
  g_free (dir);
}

GST_END_TEST;

/* The same pipeline object goes NULL -> PLAYING -> NULL repeatedly and
 * gives the same stream each time. */
GST_START_TEST (test_restart_same_stream)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "restart");
  WsiTestSlideSpec specs[2];
  gchar *desc;
  GstElement *pipeline, *sink;
  guint64 first_x[3];
  guint round;

  write_good_slides (dir, 2, specs);
  desc = pipeline_desc (dir, "seed=3", "patches-per-slide=4", "", 2, 4);
  pipeline = gst_parse_launch (desc, NULL);
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  for (round = 0; round < 3; round++) {
    GstSample *sample;
    GstStructure *meta;
    guint n;

    fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        30 * GST_SECOND);
    fail_unless (sample != NULL);
    meta = wsi_patch_meta_get (gst_sample_get_buffer (sample));
    first_x[round] = wsi_patch_meta_records (meta, &n)[0].x;
    gst_sample_unref (sample);
    fail_unless_equals_int (gst_element_set_state (pipeline,
            GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  }
  fail_unless_equals_uint64 (first_x[0], first_x[1]);
  fail_unless_equals_uint64 (first_x[1], first_x[2]);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (desc);
  g_free (dir);
}

GST_END_TEST;

/* The sampler settings of every mode, as the determinism test runs them. */
static const gchar *const every_mode[] = {
  "mode=random patches-per-slide=8 target-mpp=0.4",
  "mode=random replacement=false patches-per-slide=8 target-mpp=0.4",
  "mode=grid patches-per-slide=5 target-mpp=0.4",
  "mode=multi-magnification target-mpps=\"0.3,0.6\" mpp-weights=\"1,3\" "
      "patches-per-slide=8",
  "mode=continuous-magnification mpp-min=0.3 mpp-max=0.9 "
      "mpp-distribution=maxavg patches-per-slide=8",
  "mode=continuous-magnification mpp-min=0.3 mpp-max=0.9 "
      "mpp-distribution=minmax patches-per-slide=8",
};

/* "slide:cycle:x:y:footprint:mpp" -> pixels checksum, for every patch of
 * @r (batches of @batch patches of PATCH x PATCH RGB). */
static GHashTable *
patch_digests (const WsiRun * r, guint batch)
{
  GHashTable *digests = g_hash_table_new_full (g_str_hash, g_str_equal,
      g_free, g_free);
  gsize patch_bytes = PATCH * PATCH * 3;
  guint i;

  for (i = 0; i < r->records->len; i++) {
    const WsiPatchRecord *rec = WSI_RECORD (r, i);
    GstBuffer *buf = g_ptr_array_index (r->batches, i / batch);
    GstMapInfo map;
    gchar *key = g_strdup_printf ("%u:%u:%" G_GINT64_FORMAT ":%"
        G_GINT64_FORMAT ":%u:%.6f", rec->slide_index, rec->cycle, rec->x,
        rec->y, rec->footprint, rec->out_mpp);

    fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
    g_hash_table_insert (digests, key, g_compute_checksum_for_data
        (G_CHECKSUM_SHA1, map.data + (i % batch) * patch_bytes,
            patch_bytes));
    gst_buffer_unmap (buf, &map);
  }
  return digests;
}

/* Each patch's slide, resolution, position and pixels are a function of
 * the seed, the slide and the visit, in every mode: identical streams at
 * 1 and 3 reader threads (over cycles), the same patches with another
 * pool size (only the order changes). */
GST_START_TEST (test_every_mode_deterministic)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "every-mode");
  WsiTestSlideSpec specs[4];
  guint m, i;

  write_good_slides (dir, 4, specs);
  for (m = 0; m < G_N_ELEMENTS (every_mode); m++) {
    WsiRun *one, *three, *pool2, *pool4;
    GHashTable *d2, *d4;
    GHashTableIter iter;
    gpointer key, value;

    one = run (dir, "seed=7 cycle=true", every_mode[m],
        "pool-size=2 patches-per-visit=3", 1, 8, 10);
    three = run (dir, "seed=7 cycle=true", every_mode[m],
        "pool-size=2 patches-per-visit=3", 3, 8, 10);
    fail_unless (one->error == NULL, "%s: %s", every_mode[m], one->error);
    fail_unless (three->error == NULL, "%s: %s", every_mode[m], three->error);
    fail_unless_equals_int (one->records->len, 80);
    fail_unless_equals_int (three->records->len, 80);
    for (i = 0; i < one->records->len; i++) {
      WsiPatchRecord a = *WSI_RECORD (one, i), b = *WSI_RECORD (three, i);

      a.created_ns = b.created_ns = 0;
      fail_unless (memcmp (&a, &b, sizeof (a)) == 0, "%s: record %u differs "
          "between 1 and 3 threads", every_mode[m], i);
    }
    /* the run went past the first cycle */
    fail_unless (WSI_RECORD (one, 79)->cycle > 0, "%s", every_mode[m]);
    wsi_run_free (one);
    wsi_run_free (three);

    pool2 = run (dir, "seed=7", every_mode[m], "pool-size=2", 2, 8, 0);
    pool4 = run (dir, "seed=7", every_mode[m], "pool-size=4 "
        "patches-per-visit=1", 2, 8, 0);
    fail_unless (pool2->error == NULL && pool4->error == NULL);
    fail_unless (pool2->records->len > 0);
    fail_unless_equals_int (pool2->records->len, pool4->records->len);
    d2 = patch_digests (pool2, 8);
    d4 = patch_digests (pool4, 8);
    fail_unless_equals_int (g_hash_table_size (d2), g_hash_table_size (d4));
    g_hash_table_iter_init (&iter, d2);
    while (g_hash_table_iter_next (&iter, &key, &value)) {
      const gchar *other = g_hash_table_lookup (d4, key);

      fail_unless (other != NULL, "%s: patch %s missing with pool-size 4",
          every_mode[m], (const gchar *) key);
      fail_unless_equals_string (value, other);
    }
    g_hash_table_unref (d2);
    g_hash_table_unref (d4);
    wsi_run_free (pool2);
    wsi_run_free (pool4);
  }
  g_free (dir);
}

GST_END_TEST;

/* Near-whole DCT scaling (issue 23): 0.5 and 1.0 um/px from 40x slides at
 * 0.2527 um/px with 240 px tiles and 4x level steps (factors 1.98 and 3.95,
 * decoded at 1/2, see tests/check/libs/wsislide.c) give byte-identical
 * streams at 1, 2 and 4 reader threads (tile cache on, its default). */
GST_START_TEST (test_near_whole_scaling_deterministic)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "near-whole");
  const gchar *sampler = "mode=multi-magnification target-mpps=0.5,1.0 "
      "patches-per-slide=16";
  WsiRun *runs[3];
  const guint threads[3] = { 1, 2, 4 };
  guint i, t;

  for (i = 0; i < 2; i++) {
    WsiTestSlideSpec spec;
    gchar name[32];

    default_spec (&spec, 300 + i);
    spec.layout = WSI_TEST_LAYOUT_APERIO;
    spec.tile_size = 240;
    spec.levels = 2;
    spec.level_step = 4;
    spec.mpp = 0.2527;
    g_snprintf (name, sizeof (name), "slide%02u.svs", i);
    g_free (wsi_test_write_slide (dir, name, &spec));
  }
  for (t = 0; t < 3; t++) {
    runs[t] = run (dir, "seed=11", sampler, "pool-size=2 "
        "patches-per-visit=2", threads[t], 8, 0);
    fail_unless (runs[t]->error == NULL, "%s", runs[t]->error);
    fail_unless_equals_int (runs[t]->records->len, 32);
  }
  for (i = 0; i < runs[0]->records->len; i++) {
    const WsiPatchRecord *rec = WSI_RECORD (runs[0], i);

    /* 64 px at 0.5 or 1.0 um/px: footprints 127 and 253, read at level 0 */
    fail_unless (rec->footprint == 127 || rec->footprint == 253,
        "footprint %u", rec->footprint);
    fail_unless_equals_int (rec->level, 0);
    fail_unless_equals_int (rec->read_size, rec->footprint);
  }
  for (t = 1; t < 3; t++) {
    gchar *what = g_strdup_printf ("1 and %u threads", threads[t]);

    wsi_run_assert_same_stream (runs[0], runs[t], what);
    g_free (what);
  }
  for (t = 0; t < 3; t++)
    wsi_run_free (runs[t]);
  g_free (dir);
}

GST_END_TEST;

/* Slides prepared ahead on worker threads (issue 23) leave the stream as
 * it was prepared one by one on the streaming thread (prepare-ahead=0):
 * whatever the look-ahead and the reader threads (1, 2, 4), with slides
 * that do not open, a slide with damaged tiles, and over cycles in a
 * shuffled order (the look-ahead crosses cycles). */
GST_START_TEST (test_prepare_ahead_deterministic)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "prepare-ahead");
  gchar *cycling = wsi_test_make_dir (WSI_TEST_TMPDIR, "prepare-ahead-cycle");
  gchar *damaged = g_build_filename (dir, "slide09-damaged.tiff", NULL);
  const gchar *aheads[4] = { "prepare-ahead=0", "prepare-ahead=1",
    "prepare-ahead=3", "prepare-ahead=16"
  };
  const guint threads[4] = { 1, 1, 2, 4 };
  WsiTestSlideSpec specs[5], spec;
  WsiRun *runs[4];
  guint t;

  write_good_slides (dir, 5, specs);
  default_spec (&spec, 7);
  g_free (wsi_test_write_garbage (dir, "slide05-garbage.svs", 50000, 3));
  fail_unless (wsi_test_slide_write_damaged_tiles (damaged, &spec, NULL));
  write_good_slides (cycling, 3, specs);
  g_free (wsi_test_write_garbage (cycling, "slide03-garbage.svs", 50000, 4));

  for (t = 0; t < 4; t++) {
    gchar *src = g_strdup_printf ("seed=5 %s", aheads[t]);

    runs[t] = run (dir, src, "patches-per-slide=6", "pool-size=3 "
        "patches-per-visit=2", threads[t], 8, 0);
    fail_unless (runs[t]->error == NULL, "%s", runs[t]->error);
    fail_unless_equals_int (runs[t]->records->len, 30);
    fail_unless (wsi_run_has_warning (runs[t], "slide05-garbage.svs", NULL));
    fail_unless (wsi_run_has_warning (runs[t], "slide09-damaged.tiff",
            NULL));
    if (t > 0)
      wsi_run_assert_same_stream (runs[0], runs[t], aheads[t]);
    g_free (src);
  }
  for (t = 0; t < 4; t++)
    wsi_run_free (runs[t]);

  for (t = 0; t < 4; t++) {
    gchar *src = g_strdup_printf ("seed=5 cycle=true slide-order=random %s",
        aheads[t]);

    /* 12 batches of 8 = 96 patches, 4 per visit: 8 cycles of 3 slides */
    runs[t] = run (cycling, src, "patches-per-slide=4", "pool-size=2 "
        "patches-per-visit=2", threads[t], 8, 12);
    fail_unless (runs[t]->error == NULL, "%s", runs[t]->error);
    fail_unless_equals_int (runs[t]->batches->len, 12);
    if (t > 0)
      wsi_run_assert_same_stream (runs[0], runs[t], aheads[t]);
    g_free (src);
  }
  for (t = 0; t < 4; t++)
    wsi_run_free (runs[t]);
  g_free (damaged);
  g_free (cycling);
  g_free (dir);
}

GST_END_TEST;

/* Slide visits the source pushed, and those that carried an overview. */
typedef struct
{
  guint visits;
  guint overviews;
} VisitCounts;

static GstPadProbeReturn
count_visit (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  VisitCounts *counts = user_data;
  GstStructure *meta = wsi_slide_meta_get (GST_PAD_PROBE_INFO_BUFFER (info));
  gboolean has_overview = FALSE;

  fail_unless (meta != NULL);
  gst_structure_get_boolean (meta, "has-overview", &has_overview);
  counts->visits++;
  counts->overviews += has_overview;
  return GST_PAD_PROBE_OK;
}

/* @passes cycles over the slides of @dir with slides prepared ahead
 * (the default), tissuemask's cache holding @cache_size masks; returns its
 * masks-computed and sets @counts. */
static guint64
cycle_masks (const gchar * dir, guint slides, guint passes, guint cache_size,
    VisitCounts * counts)
{
  gchar *desc = g_strdup_printf ("wsislidesrc name=src location=\"%s\" "
      "cycle=true num-buffers=%u ! tissuemask name=mask mask-cache-size=%u "
      "! fakesink sync=false", dir, slides * passes, cache_size);
  GstElement *pipeline = gst_parse_launch (desc, NULL);
  GstElement *src, *mask;
  GstPad *pad;
  GstMessage *msg;
  guint64 computed = 0;

  fail_unless (pipeline != NULL, "%s", desc);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  mask = gst_bin_get_by_name (GST_BIN (pipeline), "mask");
  pad = gst_element_get_static_pad (src, "src");
  memset (counts, 0, sizeof (*counts));
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_visit, counts,
      NULL);
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipeline),
      GST_CLOCK_TIME_NONE, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  gst_message_unref (msg);
  g_object_get (mask, "masks-computed", &computed, NULL);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pad);
  gst_object_unref (src);
  gst_object_unref (mask);
  gst_object_unref (pipeline);
  g_free (desc);
  return computed;
}

/* Issue 23, warm epochs: cycling over many distinct slides (symbolic links,
 * as bench-churn makes them) with visits planned ahead, each slide's
 * overview is read and its mask computed once: the mask-cached query of a
 * revisit, asked when the visit is planned, finds the mask (no race with
 * its insertion, same key). With fewer cache places than slides, a pass
 * still finds all but one of the cached masks (plain LRU: none). */
GST_START_TEST (test_cycle_masks_each_slide_once)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "warm-cycle");
  gchar *links = wsi_test_make_dir (dir, "links");
  const guint slides = 40, passes = 3, small_cache = 30;
  WsiTestSlideSpec specs[2];
  VisitCounts counts;
  guint64 computed;
  guint i;

  write_good_slides (dir, 2, specs);
  for (i = 0; i < slides; i++) {
    gchar *target = g_strdup_printf ("%s/slide%02u.%s", dir, i % 2,
        (i % 2) ? "svs" : "tiff");
    gchar *link = g_strdup_printf ("%s/s%03u.%s", links, i,
        (i % 2) ? "svs" : "tiff");

    g_unlink (link);
    fail_unless (symlink (target, link) == 0, "%s", link);
    g_free (target);
    g_free (link);
  }

  computed = cycle_masks (links, slides, passes, 1024, &counts);
  fail_unless_equals_int (counts.visits, slides * passes);
  fail_unless_equals_int (counts.overviews, slides);
  fail_unless_equals_uint64 (computed, slides);

  /* Each later pass: small_cache - 1 hits, the other slides masked again. */
  computed = cycle_masks (links, slides, passes, small_cache, &counts);
  fail_unless_equals_int (counts.visits, slides * passes);
  fail_unless (computed <= slides + (passes - 1) * (slides - small_cache + 1),
      "%" G_GUINT64_FORMAT " masks", computed);
  fail_unless (counts.overviews <= computed, "%u overviews, %"
      G_GUINT64_FORMAT " masks", counts.overviews, computed);

  g_free (links);
  g_free (dir);
}

GST_END_TEST;

static Suite *
stream_suite (void)
{
  Suite *s = suite_create ("pipelines_stream");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_stream_counts_bounds_and_tissue);
  tcase_add_test (tc, test_deterministic_across_threads);
  tcase_add_test (tc, test_prepare_ahead_deterministic);
  tcase_add_test (tc, test_cycle_masks_each_slide_once);
  tcase_add_test (tc, test_near_whole_scaling_deterministic);
  tcase_add_test (tc, test_every_mode_deterministic);
  tcase_add_test (tc, test_target_mpp_read_sizes);
  tcase_add_test (tc, test_rank_partition);
  tcase_add_test (tc, test_bad_files_skipped_and_counted);
  tcase_add_test (tc, test_all_bad_is_an_error);
  tcase_add_test (tc, test_blank_and_tiny_slides);
  tcase_add_test (tc, test_cycle_without_patches_is_an_error);
  tcase_add_test (tc, test_cycle_revisits);
  tcase_add_test (tc, test_interleaving_mixes_slides);
  tcase_add_test (tc, test_list_file_labels);
  tcase_add_test (tc, test_damaged_tiles);
  tcase_add_test (tc, test_restart_same_stream);
  return s;
}

GST_CHECK_MAIN (stream);
