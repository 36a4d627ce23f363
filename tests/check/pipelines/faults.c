/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Whole pipelines on damaged slides: which patches are delivered is a pure
 * function of the seed and the file, whatever the thread count and timing,
 * and every readable patch is delivered. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsipipeline.h"
#include "wsitestslide.h"
#include "wsitestutil.h"
#include "wsislide.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#define PATCH 64
#define TILE 256
#define DAMAGE_EVERY 3
#define PATCHES 40

static gchar *tmpdir;

/* The folder @name under the test's folder, made, and @spec set to a
 * @width x @height slide of @levels levels (the generator's other
 * defaults): each test's set-up. */
static gchar *
test_folder (const gchar * name, WsiTestSlideSpec * spec, guint width,
    guint height, guint levels)
{
  gchar *dir = g_build_filename (tmpdir, name, NULL);

  g_mkdir_with_parents (dir, 0755);
  wsi_test_slide_spec_init (spec);
  spec->width = width;
  spec->height = height;
  spec->levels = levels;
  return dir;
}

static gchar *
damaged_slide (const gchar * name, WsiTestSlideSpec * spec)
{
  gchar *dir = test_folder (name, spec, 2048, 1536, 3);
  gchar *path = g_build_filename (dir, "partly-damaged.tiff", NULL);
  GError *err = NULL;

  spec->tile_size = TILE;
  spec->level_step = 2;
  spec->mpp = 0.25;
  spec->tissue_blobs = 3;
  spec->seed = 7;
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    fail_unless (wsi_test_slide_write_partly_damaged (path, spec,
            DAMAGE_EVERY, &err), "%s", err ? err->message : "");
  g_free (dir);
  return path;
}

static const gchar *
sampler_part (void)
{
  return "tissuemask method=none ! queue ! "
      "patchsampler patch-size=64 patches-per-slide=40 min-tissue=0 ! "
      "patchinterleave";
}

/* The coordinates the sampler plans for @path (no reader). */
static GArray *
planned_records (const gchar * path)
{
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=5 ! %s ! "
      "appsink name=sink sync=false", path, sampler_part ());
  GstElement *pipeline = gst_parse_launch (desc, NULL);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GArray *records = g_array_new (FALSE, FALSE, sizeof (WsiPatchRecord));
  GstSample *sample;

  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  while ((sample = gst_app_sink_pull_sample (GST_APP_SINK (sink))) != NULL) {
    GstBuffer *buf = gst_sample_get_buffer (sample);
    GstMapInfo map;

    gst_buffer_map (buf, &map, GST_MAP_READ);
    g_array_append_vals (records, map.data,
        map.size / sizeof (WsiPatchRecord));
    gst_buffer_unmap (buf, &map);
    gst_sample_unref (sample);
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (desc);
  return records;
}

/* TRUE when the level-0 patch @r touches a tile the generator damaged. */
static gboolean
touches_damaged_tile (const WsiPatchRecord * r, const WsiTestSlideSpec * spec)
{
  guint across = (spec->width + TILE - 1) / TILE;
  gint64 c, row;

  for (row = r->y / TILE; row <= (r->y + r->footprint - 1) / TILE; row++)
    for (c = r->x / TILE; c <= (r->x + r->footprint - 1) / TILE; c++)
      if ((row * across + c) % DAMAGE_EVERY == 0)
        return TRUE;
  return FALSE;
}

static WsiRun *
run_reader (const gchar * path, const gchar * backend, guint threads,
    guint max_failures)
{
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=5 ! %s ! "
      "patchreader backend=%s threads=%u max-read-failures=%u ! queue ! "
      "patchbatch batch-size=1 ! appsink name=sink sync=false", path,
      sampler_part (), backend, threads, max_failures);
  WsiRun *run = wsi_run_pipeline (desc, 0);

  g_free (desc);
  return run;
}

static void
check_backend (const gchar * backend)
{
  static const guint threads[] = { 1, 2, 4 };
  WsiTestSlideSpec spec;
  gchar *path = damaged_slide ("determinism", &spec);
  GArray *planned = planned_records (path);
  WsiRun *reference = NULL;
  guint i, t, round, readable = 0;

  fail_unless_equals_int (planned->len, PATCHES);
  for (i = 0; i < planned->len; i++)
    readable += !touches_damaged_tile (&g_array_index (planned,
            WsiPatchRecord, i), &spec);
  fail_unless (readable > 0 && readable < planned->len,
      "the slide should mix readable and damaged patches (%u of %u)",
      readable, planned->len);

  /* No give-up: every readable patch, and only those, arrives. */
  for (t = 0; t < G_N_ELEMENTS (threads); t++) {
    for (round = 0; round < 5; round++) {
      WsiRun *run = run_reader (path, backend, threads[t], 1000000);
      guint k = 0;

      fail_unless (run->error == NULL, "%s", run->error);
      fail_unless_equals_int (run->records->len, readable);
      for (i = 0; i < planned->len; i++) {
        const WsiPatchRecord *p = &g_array_index (planned, WsiPatchRecord, i);

        if (touches_damaged_tile (p, &spec))
          continue;
        fail_unless_equals_int64 (g_array_index (run->records,
                WsiPatchRecord, k).x, p->x);
        fail_unless_equals_int64 (g_array_index (run->records,
                WsiPatchRecord, k).y, p->y);
        k++;
      }
      wsi_run_same_as_first (&reference, run, backend);
    }
  }
  wsi_run_free (reference);
  reference = NULL;

  /* With the default give-up rule (3 failures in a row) the slide may be
   * given up, but at the same patch in every run. */
  for (t = 0; t < G_N_ELEMENTS (threads); t++) {
    for (round = 0; round < 5; round++) {
      WsiRun *run = run_reader (path, backend, threads[t], 3);

      wsi_run_same_as_first (&reference, run, backend);
    }
  }
  wsi_run_free (reference);
  g_array_unref (planned);
  g_free (path);
}

GST_START_TEST (test_faults_deterministic_openslide)
{
  check_backend ("openslide");
}

GST_END_TEST;

GST_START_TEST (test_faults_deterministic_tiff)
{
  if (wsi_slide_backend_find (WSI_BACKEND_TIFF) == NULL) {
    WSI_TEST_SKIP ("the tiff backend is not built");
    return;
  }
  check_backend ("tiff");
}

GST_END_TEST;

static GstPadProbeReturn count_buffer (GstPad * pad, GstPadProbeInfo * info,
    gint * arrived);

/* A consumer that stops pulling (an evaluation step, a checkpoint) stops
 * the pipeline once max-batches batches exist: counted where they pile up,
 * in an appsink that keeps everything. Conditions, not quiet periods, say
 * when to read the count (a loaded machine can stop any thread for a
 * second, which a "nothing arrived for half a second" rule took for the
 * end): with a bound, once the count reached it and the queue before
 * patchbatch is full, which it stays only while patchbatch takes no patch
 * (it waits for a free batch), so the count cannot grow any more; without
 * one, once it passed 32. A count above the bound ends the wait at once. */
static guint
batches_piled_up (guint max_batches)
{
  WsiTestSlideSpec spec;
  gchar *path = damaged_slide ("stalled", &spec);
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" cycle=true ! "
      "tissuemask method=none ! queue ! patchsampler patch-size=64 "
      "patches-per-slide=64 min-tissue=0 ! patchinterleave ! patchreader "
      "max-read-failures=1000000 ! queue name=patches max-size-buffers=64 "
      "max-size-bytes=0 max-size-time=0 ! patchbatch batch-size=16 "
      "max-batches=%u ! appsink name=sink sync=false max-buffers=0", path,
      max_batches);
  GstElement *pipeline = gst_parse_launch (desc, NULL);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstElement *patches = gst_bin_get_by_name (GST_BIN (pipeline), "patches");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  gint64 deadline = g_get_monotonic_time () + 120 * G_TIME_SPAN_SECOND;
  gint arrived = 0, count = 0;
  guint level = 0;

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER,
      (GstPadProbeCallback) count_buffer, &arrived, NULL);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  while (g_get_monotonic_time () < deadline) {
    count = g_atomic_int_get (&arrived);
    g_object_get (patches, "current-level-buffers", &level, NULL);
    if (max_batches == 0 ? count > 32 : (count > (gint) max_batches
            || (count == (gint) max_batches && level >= 64)))
      break;
    g_usleep (G_USEC_PER_SEC / 100);
  }
  fail_unless (g_get_monotonic_time () < deadline, "after 120 s: %d batches, "
      "%u patches queued before patchbatch", count, level);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pad);
  gst_object_unref (patches);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (desc);
  g_free (path);
  return (guint) count;
}

static GstPadProbeReturn
count_buffer (GstPad * pad, GstPadProbeInfo * info, gint * arrived)
{
  g_atomic_int_inc (arrived);
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_stalled_consumer_bounded)
{
  /* bounded: exactly the pool's worth, then the pipeline waits */
  fail_unless_equals_int (batches_piled_up (8), 8);
  fail_unless_equals_int (batches_piled_up (3), 3);
  /* unbounded (the old behaviour): they keep coming */
  fail_unless (batches_piled_up (0) > 32);
}

GST_END_TEST;

/* Paths are bytes on Linux: a slide named in Latin-1 is read like any
 * other, shown escaped (\xE9) in metadata and messages, which stay UTF-8;
 * a broken file with such a name is skipped with a warning naming it. */
GST_START_TEST (test_latin1_file_names)
{
  WsiTestSlideSpec spec;
  gchar *dir = test_folder ("latin1", &spec, 1024, 768, 2);
  gchar *good = g_build_filename (dir, "caf\xe9.tiff", NULL);
  gchar *bad = g_build_filename (dir, "d\xe9" "fectueux.svs", NULL);
  GError *err = NULL;
  gchar *desc;
  WsiRun *run;
  guint i;

  fail_unless (wsi_test_slide_write (good, &spec, &err), "%s",
      err ? err->message : "");
  fail_unless (wsi_test_slide_write_garbage (bad, 4096, 3, &err));

  desc = g_strdup_printf ("wsislidesrc location=\"%s\" ! %s ! patchreader ! "
      "queue ! patchbatch batch-size=8 ! appsink name=sink sync=false", dir,
      sampler_part ());
  run = wsi_run_pipeline (desc, 0);
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (run->records->len, PATCHES);
  for (i = 0; i < run->paths->len; i++) {
    const gchar *path = g_ptr_array_index (run->paths, i);

    fail_unless (g_utf8_validate (path, -1, NULL));
    fail_unless (g_str_has_suffix (path, "caf\\xE9.tiff"), "%s", path);
  }
  for (i = 0; i < run->warnings->len; i++)
    fail_unless (g_utf8_validate (g_ptr_array_index (run->warnings, i), -1,
            NULL));
  fail_unless (wsi_run_has_warning (run, "d\\xE9fectueux.svs", NULL),
      "no warning names the broken file");
  wsi_run_free (run);
  g_free (desc);
  g_free (good);
  g_free (bad);
  g_free (dir);
}

GST_END_TEST;

/* Cycle mode on slides the reader gives up on: the first pass that
 * delivers nothing ends the stream with an error naming the slides, where
 * it used to plan and drop patches forever at full CPU. */
static void
check_lost_pass (const gchar * name, gboolean with_garbage)
{
  WsiTestSlideSpec spec;
  /* level 2 (1024 px) gives the overview; level 0 is damaged */
  gchar *dir = test_folder (name, &spec, 4096, 3072, 3);
  gchar *damaged = g_build_filename (dir, "damaged.tiff", NULL);
  gchar *garbage = g_build_filename (dir, "garbage.svs", NULL);
  GError *err = NULL;
  gchar *desc;
  WsiRun *run;

  fail_unless (wsi_test_slide_write_damaged_tiles (damaged, &spec, &err));
  if (with_garbage)
    fail_unless (wsi_test_slide_write_garbage (garbage, 4096, 5, &err));

  desc = g_strdup_printf ("wsislidesrc location=\"%s\" cycle=true ! %s ! "
      "patchreader ! queue ! patchbatch batch-size=8 ! "
      "appsink name=sink sync=false", dir, sampler_part ());
  run = wsi_run_pipeline (desc, 0);
  fail_unless (run->error != NULL, "the stream should stop with an error");
  /* Two elements notice, and either may post first: the sampler (a pass
   * delivered nothing) or the source (every slide has been given up).
   * Both must name the damaged slide and the reason. */
  fail_unless (strstr (run->error, "delivered no patch") != NULL
      || strstr (run->error, "could be read") != NULL, "%s", run->error);
  fail_unless (strstr (run->error, "damaged.tiff") != NULL, "%s", run->error);
  fail_unless_equals_int (run->records->len, 0);
  wsi_run_free (run);
  g_free (desc);
  g_free (damaged);
  g_free (garbage);
  g_free (dir);
}

/* One pass (cycle=false) over a slide whose every read fails: the stream
 * used to end with a plain EOS (gst-launch exit 0, Python 0 batches and no
 * exception); now patchreader ends it with an error naming the slide and
 * the first failure. */
GST_START_TEST (test_no_patch_read_errors)
{
  WsiTestSlideSpec spec;
  gchar *dir = test_folder ("nothing-read", &spec, 4096, 3072, 3);
  gchar *damaged = g_build_filename (dir, "damaged.tiff", NULL);
  GError *err = NULL;
  gchar *desc;
  WsiRun *run;

  fail_unless (wsi_test_slide_write_damaged_tiles (damaged, &spec, &err));

  desc = g_strdup_printf ("wsislidesrc location=\"%s\" ! %s ! "
      "patchreader ! queue ! patchbatch batch-size=8 ! "
      "appsink name=sink sync=false", damaged, sampler_part ());
  run = wsi_run_pipeline (desc, 0);
  fail_unless_equals_int (run->records->len, 0);
  fail_unless (run->error != NULL, "a stream that delivered no patch must "
      "end with an error, not EOS");
  fail_unless (strstr (run->error, "damaged.tiff") != NULL, "%s", run->error);
  fail_unless (strstr (run->error, "Not a single patch could be read") !=
      NULL || strstr (run->error, "could be read") != NULL, "%s", run->error);
  wsi_run_free (run);
  g_free (desc);
  g_free (damaged);
  g_free (dir);
}

GST_END_TEST;

/* A sink that stops early (num-buffers) returns EOS into the pools'
 * tasks; upstream's EOS must still reach it, or the application never
 * sees end of stream (gst-launch used to hang here). */
GST_START_TEST (test_sink_stopping_early_ends_stream)
{
  const gchar *stages[] = { "", "! patchaugment flip-h=0.5 threads=2 ",
    "! patchfilter threads=2 min-pixel-fraction=0 "
  };
  WsiTestSlideSpec spec;
  gchar *dir = test_folder ("early-stop", &spec, 2048, 1536, 3);
  gchar *path = g_build_filename (dir, "a.tiff", NULL);
  GError *err = NULL;
  guint i;

  fail_unless (wsi_test_slide_write (path, &spec, &err));
  for (i = 0; i < G_N_ELEMENTS (stages); i++) {
    gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" cycle=true "
        "! %s ! patchreader threads=2 %s! fakesink num-buffers=3", path,
        sampler_part (), stages[i]);
    gchar *error = wsi_test_run_to_end (desc, 60 * GST_SECOND);

    fail_unless (error == NULL, "%s: %s", desc, error);
    g_free (desc);
  }
  g_free (path);
  g_free (dir);
}

GST_END_TEST;

GST_START_TEST (test_cycle_without_delivery_errors)
{
  check_lost_pass ("lost-pass", FALSE);
  check_lost_pass ("lost-pass-all-bad", TRUE);
}

GST_END_TEST;

/* Finite DDP (rank-quota) counts delivered patches: a rank holding a slide
 * with damaged tiles refills its losses from its other slides, so both
 * ranks deliver exactly the quota and the collective never waits. */
GST_START_TEST (test_rank_quota_counts_delivered)
{
  WsiTestSlideSpec spec;
  gchar *dir = test_folder ("ddp", &spec, 2048, 1536, 3);
  GError *err = NULL;
  guint rank, len[2];

  spec.seed = 3;
  /* sorted: rank 0 gets a.tiff and c.tiff, rank 1 b.tiff (damaged) and d */
  for (rank = 0; rank < 4; rank++) {
    gchar name[] = "a.tiff";
    gchar *path;

    name[0] += rank;
    path = g_build_filename (dir, name, NULL);
    spec.seed = 3 + rank;
    if (rank == 1)
      fail_unless (wsi_test_slide_write_partly_damaged (path, &spec,
              DAMAGE_EVERY, &err));
    else
      fail_unless (wsi_test_slide_write (path, &spec, &err));
    g_free (path);
  }

  for (rank = 0; rank < 2; rank++) {
    gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" rank=%u "
        "world-size=2 cycle=true ! tissuemask method=none ! queue ! "
        "patchsampler patch-size=64 patches-per-slide=40 min-tissue=0 "
        "rank-quota=true ! patchinterleave ! patchreader "
        "max-read-failures=1000000 ! queue ! patchbatch batch-size=10 ! "
        "appsink name=sink sync=false", dir, rank);
    WsiRun *run = wsi_run_pipeline (desc, 0);

    fail_unless (run->error == NULL, "rank %u: %s", rank, run->error);
    len[rank] = run->records->len;
    wsi_run_free (run);
    g_free (desc);
  }
  /* quota = rank-slides-min (2) x patches-per-slide (40) */
  fail_unless_equals_int (len[0], 80);
  fail_unless_equals_int (len[1], 80);
  g_free (dir);
}

GST_END_TEST;

/* A slide truncated while the stream runs: the reader gives it up, the
 * source counts it in slides-failed and stops visiting it, and the stream
 * goes on with the other slide. */
GST_START_TEST (test_truncated_while_running)
{
  WsiTestSlideSpec spec;
  gchar *dir = test_folder ("truncated", &spec, 4096, 3072, 3);
  gchar *victim = g_build_filename (dir, "a-victim.tiff", NULL);
  gchar *other = g_build_filename (dir, "b-other.tiff", NULL);
  GError *err = NULL;
  GstElement *pipeline, *src, *sink;
  gchar *desc;
  guint pulled, failed = 0, from_victim_late = 0;

  fail_unless (wsi_test_slide_write (victim, &spec, &err));
  spec.seed = 2;
  fail_unless (wsi_test_slide_write (other, &spec, &err));

  desc = g_strdup_printf ("wsislidesrc name=src location=\"%s\" "
      "cycle=true ! tissuemask method=none ! queue ! patchsampler "
      "patch-size=64 patches-per-slide=16 min-tissue=0 ! patchinterleave "
      "pool-size=2 ! patchreader max-open-slides=1 ! queue "
      "max-size-buffers=8 ! patchbatch batch-size=8 ! appsink name=sink "
      "sync=false max-buffers=2", dir);
  pipeline = gst_parse_launch (desc, NULL);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  for (pulled = 0; pulled < 400 && failed == 0; pulled++) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        5 * GST_SECOND);

    fail_unless (sample != NULL, "the stream stopped after %u batches",
        pulled);
    gst_sample_unref (sample);
    if (pulled == 4)
      fail_unless (truncate (victim, 4096) == 0);
    g_object_get (src, "slides-failed", &failed, NULL);
  }
  fail_unless_equals_int (failed, 1);
  /* The stream goes on, from the other slide only once the queues ran
   * dry of the victim's already-read patches. */
  for (pulled = 0; pulled < 40; pulled++) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        5 * GST_SECOND);
    GstStructure *meta;
    guint n, i;

    fail_unless (sample != NULL);
    meta = wsi_patch_meta_get (gst_sample_get_buffer (sample));
    wsi_patch_meta_records (meta, &n);
    for (i = 0; i < n && pulled >= 20; i++)
      from_victim_late += strstr (wsi_patch_meta_string (meta, "paths", i),
          "victim") != NULL;
    gst_sample_unref (sample);
  }
  fail_unless_equals_int (from_victim_late, 0);
  g_object_get (src, "slides-failed", &failed, NULL);
  fail_unless_equals_int (failed, 1);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (desc);
  g_free (victim);
  g_free (other);
  g_free (dir);
}

GST_END_TEST;

static Suite *
faults_suite (void)
{
  Suite *s = suite_create ("faults");
  TCase *tc = tcase_create ("general");

  tmpdir = g_strdup (WSI_TEST_TMPDIR);
  g_mkdir_with_parents (tmpdir, 0755);
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_faults_deterministic_openslide);
  tcase_add_test (tc, test_faults_deterministic_tiff);
  tcase_add_test (tc, test_stalled_consumer_bounded);
  tcase_add_test (tc, test_latin1_file_names);
  tcase_add_test (tc, test_cycle_without_delivery_errors);
  tcase_add_test (tc, test_no_patch_read_errors);
  tcase_add_test (tc, test_sink_stopping_early_ends_stream);
  tcase_add_test (tc, test_rank_quota_counts_delivered);
  tcase_add_test (tc, test_truncated_while_running);
  return s;
}

GST_CHECK_MAIN (faults);
