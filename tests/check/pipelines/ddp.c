/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Finite DDP runs and resume, on slides generated at test time:
 * every rank emits the same number of patches without communicating
 * (patchsampler rank-quota), a shortfall without cycling is a clear error,
 * and patchinterleave skip-patches resumes the same stream at batch k. */

#include "wsipipeline.h"
#include "wsitestslide.h"
#include "wsitestutil.h"

#include <glib/gstdio.h>
#include <string.h>

#define PATCH 32
#define PER_SLIDE 6

static void
write_slide (const gchar * dir, const gchar * name, guint32 seed,
    guint blobs)
{
  WsiTestSlideSpec spec;

  wsi_test_slide_spec_init (&spec);
  spec.width = 1024;
  spec.height = 768;
  spec.tile_size = 256;
  spec.levels = 2;
  spec.level_step = 2;
  spec.tissue_blobs = blobs;
  spec.seed = seed;
  g_free (wsi_test_write_slide (dir, name, &spec));
}

/* Five slides for two ranks (sorted: rank 0 gets 0, 2, 4; rank 1 gets 1,
 * 3): rank 0's slide 2 is blank (no tissue), rank 1's slide 3 is garbage,
 * so rank 0 has 2 usable slides and rank 1 only 1. rank-slides-min =
 * floor(5 / 2) = 2 on both ranks. */
static gchar *
write_ddp_collection (const gchar * name)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, name);

  write_slide (dir, "s0.tiff", 11, 3);
  write_slide (dir, "s1.tiff", 12, 3);
  write_slide (dir, "s2.tiff", 13, 0);
  g_free (wsi_test_write_garbage (dir, "s3.svs", 4096, 9));
  write_slide (dir, "s4.tiff", 14, 3);
  return dir;
}

static gchar *
pipeline_desc (const gchar * location, const gchar * src_extra,
    const gchar * sampler_extra, const gchar * interleave_extra, guint batch)
{
  return g_strdup_printf ("wsislidesrc name=src location=\"%s\" %s ! "
      "tissuemask ! queue max-size-buffers=4 ! "
      "patchsampler name=sampler patch-size=%d patches-per-slide=%d %s ! "
      "patchinterleave %s ! patchreader threads=2 ! "
      "queue max-size-buffers=64 max-size-bytes=0 max-size-time=0 ! "
      "patchbatch batch-size=%u ! appsink name=sink sync=false wait-on-eos=false",
      location, src_extra, PATCH, PER_SLIDE, sampler_extra, interleave_extra,
      batch);
}

static WsiRun *
run (const gchar * location, const gchar * src_extra,
    const gchar * sampler_extra, const gchar * interleave_extra, guint batch)
{
  gchar *desc = pipeline_desc (location, src_extra, sampler_extra,
      interleave_extra, batch);
  WsiRun *r = wsi_run_pipeline (desc, 0);

  g_free (desc);
  return r;
}

static WsiRun *
run_rank (const gchar * dir, guint rank, gboolean cycle)
{
  gchar *src = g_strdup_printf ("rank=%u world-size=2 seed=3 cycle=%s", rank,
      cycle ? "true" : "false");
  WsiRun *r = run (dir, src, "rank-quota=true", "pool-size=2", 4);

  g_free (src);
  return r;
}

GST_START_TEST (test_rank_quota_equal_counts)
{
  gchar *dir = write_ddp_collection ("quota");
  WsiRun *ranks[2];
  gboolean seen[5] = { FALSE, };
  guint rank, i, max_cycle[2] = { 0, 0 };

  for (rank = 0; rank < 2; rank++) {
    WsiRun *r = ranks[rank] = run_rank (dir, rank, TRUE);

    fail_unless (r->error == NULL, "rank %u: %s", rank, r->error);
    /* exactly rank-slides-min x patches-per-slide on both ranks */
    fail_unless_equals_int (r->records->len, 2 * PER_SLIDE);
    for (i = 0; i < r->records->len; i++) {
      const WsiPatchRecord *rec = WSI_RECORD (r, i);

      fail_unless_equals_uint64 (rec->sequence, i);
      fail_unless_equals_int (rec->slide_index % 2, rank);
      fail_unless (rec->slide_index != 2 && rec->slide_index != 3,
          "rank %u has a patch of the blank or garbage slide", rank);
      seen[rec->slide_index] = TRUE;
      max_cycle[rank] = MAX (max_cycle[rank], rec->cycle);
    }
  }
  /* both ranks together used three distinct good slides, none twice */
  fail_unless (seen[0] && seen[1] && seen[4]);
  /* rank 0 met its quota in the first pass; rank 1 refilled from its one
   * good slide in the next cycle, with fresh positions */
  fail_unless_equals_int (max_cycle[0], 0);
  fail_unless_equals_int (max_cycle[1], 1);
  for (i = 0; i < PER_SLIDE; i++) {
    const WsiPatchRecord *a = WSI_RECORD (ranks[1], i);
    guint j;

    for (j = 0; j < ranks[1]->records->len; j++) {
      const WsiPatchRecord *b = WSI_RECORD (ranks[1], j);

      if (b->cycle == 1 && a->cycle == 0)
        fail_unless (a->x != b->x || a->y != b->y,
            "cycle 1 repeated a position of cycle 0");
    }
  }
  fail_unless (wsi_run_has_warning (ranks[1], "s3.svs", NULL));
  wsi_run_free (ranks[0]);
  wsi_run_free (ranks[1]);
  g_free (dir);
}

GST_END_TEST;

/* The run loop's worst interleaving, which a loaded machine gave once: its
 * pull timed out just before the rank's whole stream and EOS came, and
 * the bus said EOS before the loop looked at the sink again. The run must
 * still collect every patch the sink holds, not end with none. */
GST_START_TEST (test_run_collects_what_the_sink_holds_at_eos)
{
  gchar *dir = write_ddp_collection ("held-at-eos");
  gchar *desc = pipeline_desc (dir, "rank=0 world-size=2 seed=3 cycle=true",
      "rank-quota=true", "pool-size=2", 4);
  GstElement *pipeline = gst_parse_launch (desc, NULL);
  GstElement *sink;
  GstBus *bus;
  GstMessage *eos;
  WsiRun *r = wsi_run_new ();

  fail_unless (pipeline != NULL);
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  bus = gst_element_get_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  /* the whole stream is in the sink (3 batches, fewer than patchbatch's
   * max-batches) and the pipeline's EOS on the bus: put it back for the
   * run loop to read after a pull that found nothing */
  eos = gst_bus_timed_pop_filtered (bus, 120 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (eos != NULL && GST_MESSAGE_TYPE (eos) == GST_MESSAGE_EOS);
  fail_unless (gst_bus_post (bus, eos));
  fail_unless (wsi_run_after_pull (r, GST_APP_SINK (sink), bus, NULL, 0));
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 2 * PER_SLIDE);
  fail_unless_equals_int (r->batches->len, 2 * PER_SLIDE / 4);

  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  wsi_run_free (r);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (desc);
  g_free (dir);
}

GST_END_TEST;

GST_START_TEST (test_rank_quota_shortfall_is_an_error)
{
  gchar *dir = write_ddp_collection ("shortfall");
  gchar *expected = g_strdup_printf ("rank 1 delivered only %d of its quota "
      "of %d patches", PER_SLIDE, 2 * PER_SLIDE);
  WsiRun *r;

  /* rank 0 has two usable slides: no shortfall even without cycling */
  r = run_rank (dir, 0, FALSE);
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 2 * PER_SLIDE);
  wsi_run_free (r);

  r = run_rank (dir, 1, FALSE);
  fail_unless (r->error != NULL, "a shortfall must be an error");
  fail_unless (strstr (r->error, expected) != NULL, "%s", r->error);
  fail_unless (strstr (r->error, "cycle=true") != NULL, "%s", r->error);
  wsi_run_free (r);
  g_free (expected);
  g_free (dir);
}

GST_END_TEST;

/* A rank whose slides never give a patch ends with an error, not a hang. */
GST_START_TEST (test_rank_quota_hopeless_rank_errors)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "hopeless");
  WsiRun *r;

  write_slide (dir, "blank.tiff", 5, 0);
  r = run (dir, "cycle=true", "rank-quota=true", "", 4);
  fail_unless (r->error != NULL);
  fail_unless (strstr (r->error, "whole pass") != NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 0);
  wsi_run_free (r);
  g_free (dir);
}

GST_END_TEST;

static gboolean
buffers_equal (GstBuffer * a, GstBuffer * b)
{
  GstMapInfo ma, mb;
  gboolean equal;

  fail_unless (gst_buffer_map (a, &ma, GST_MAP_READ));
  fail_unless (gst_buffer_map (b, &mb, GST_MAP_READ));
  equal = ma.size == mb.size && memcmp (ma.data, mb.data, ma.size) == 0;
  gst_buffer_unmap (a, &ma);
  gst_buffer_unmap (b, &mb);
  return equal;
}

/* Same record except created_ns, which says when the plan was made. */
static gboolean
records_equal (const WsiPatchRecord * a, const WsiPatchRecord * b)
{
  WsiPatchRecord x = *a, y = *b;

  x.created_ns = y.created_ns = 0;
  return memcmp (&x, &y, sizeof (x)) == 0;
}

#define BATCH 6
#define RESUME_AT 3

GST_START_TEST (test_resume_from_batch)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "resume");
  gchar *skip = g_strdup_printf ("pool-size=2 patches-per-visit=2 "
      "skip-patches=%d", RESUME_AT * BATCH);
  WsiRun *full, *resumed;
  guint i, n_cycle1 = 0;

  write_slide (dir, "a.tiff", 21, 3);
  write_slide (dir, "b.tiff", 22, 3);
  write_slide (dir, "c.tiff", 23, 2);
  /* 3 slides x 6 = 18 patches per pass; 30 reach into the second pass */
  full = run (dir, "seed=9 cycle=true", "max-patches=30",
      "pool-size=2 patches-per-visit=2", BATCH);
  resumed = run (dir, "seed=9 cycle=true", "max-patches=30", skip, BATCH);
  fail_unless (full->error == NULL, "%s", full->error);
  fail_unless (resumed->error == NULL, "%s", resumed->error);
  fail_unless_equals_int (full->records->len, 30);
  fail_unless_equals_int (full->batches->len, 5);

  /* the resumed run is batches RESUME_AT.. of the full one */
  fail_unless_equals_int (resumed->batches->len, 5 - RESUME_AT);
  fail_unless_equals_int (resumed->records->len, 30 - RESUME_AT * BATCH);
  for (i = 0; i < resumed->batches->len; i++)
    fail_unless (buffers_equal (g_ptr_array_index (resumed->batches, i),
            g_ptr_array_index (full->batches, RESUME_AT + i)),
        "pixels of resumed batch %u differ from batch %u", i, RESUME_AT + i);
  for (i = 0; i < resumed->records->len; i++) {
    const WsiPatchRecord *a = WSI_RECORD (resumed, i);
    const WsiPatchRecord *b = WSI_RECORD (full, RESUME_AT * BATCH + i);

    fail_unless_equals_uint64 (a->sequence, RESUME_AT * BATCH + i);
    fail_unless (records_equal (a, b), "record %u differs", i);
    fail_unless_equals_string (g_ptr_array_index (resumed->paths, i),
        g_ptr_array_index (full->paths, RESUME_AT * BATCH + i));
  }

  /* the cycle number travels in the records: 12 patches of the second
   * pass, at most patches-per-slide per slide visit */
  for (i = 0; i < full->records->len; i++) {
    const WsiPatchRecord *rec = WSI_RECORD (full, i);

    fail_unless (rec->cycle <= 1);
    n_cycle1 += rec->cycle;
  }
  fail_unless_equals_int (n_cycle1, 30 - 3 * PER_SLIDE);
  fail_unless (WSI_RECORD (full, 0)->cycle == 0);
  fail_unless (WSI_RECORD (full, 29)->cycle == 1);

  wsi_run_free (full);
  wsi_run_free (resumed);
  g_free (skip);
  g_free (dir);
}

GST_END_TEST;

static Suite *
ddp_suite (void)
{
  Suite *s = suite_create ("pipelines_ddp");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_rank_quota_equal_counts);
  tcase_add_test (tc, test_run_collects_what_the_sink_holds_at_eos);
  tcase_add_test (tc, test_rank_quota_shortfall_is_an_error);
  tcase_add_test (tc, test_rank_quota_hopeless_rank_errors);
  tcase_add_test (tc, test_resume_from_batch);
  return s;
}

GST_CHECK_MAIN (ddp);
