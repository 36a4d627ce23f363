/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit tests for the wsistats tracer. As in upstream's leaks.c test, the
 * tracer is enabled through GST_TRACERS before gst_check_init(); each test
 * emits "reset" first and reads the numbers through "get-stats". Delays are
 * checked with a lower bound near the injected delay and a generous upper
 * bound (the machine is shared and loaded). */

#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/wsi/wsirecord.h>

#include "wsitestutil.h"
#include "wsitestdicom.h"
#include "../pipelines/wsiservers.h"

#ifndef WSI_TEST_TMPDIR
#define WSI_TEST_TMPDIR "/tmp/wsistats-test"
#endif

#define MS (G_GUINT64_CONSTANT (1000000))
#define GENEROUS_UPPER_BOUND (20 * G_GUINT64_CONSTANT (1000000000))

static gchar *stats_path, *timeline_path;

static GstTracer *
wsistats_tracer (void)
{
  GList *tracers = gst_tracing_get_active_tracers (), *l;
  GstTracer *found = NULL;

  for (l = tracers; l; l = l->next) {
    if (g_strcmp0 (G_OBJECT_TYPE_NAME (l->data), "GstWsiStats") == 0)
      found = gst_object_ref (l->data);
  }
  g_list_free_full (tracers, gst_object_unref);
  fail_unless (found != NULL, "wsistats tracer is not active");
  return found;
}

static void
reset_stats (void)
{
  GstTracer *tracer = wsistats_tracer ();

  g_signal_emit_by_name (tracer, "reset");
  gst_object_unref (tracer);
}

static GstStructure *
get_stats (void)
{
  GstTracer *tracer = wsistats_tracer ();
  GstStructure *stats = NULL;

  g_signal_emit_by_name (tracer, "get-stats", &stats);
  gst_object_unref (tracer);
  fail_unless (stats != NULL);
  fail_unless (gst_structure_has_name (stats, "wsistats"));
  return stats;
}

/* The element entry named @name (owned by @stats). */
static const GstStructure *
element_entry (const GstStructure * stats, const gchar * name)
{
  const GValue *elements = gst_structure_get_value (stats, "elements");
  guint i;

  fail_unless (elements != NULL && GST_VALUE_HOLDS_ARRAY (elements));
  for (i = 0; i < gst_value_array_get_size (elements); i++) {
    const GstStructure *e =
        gst_value_get_structure (gst_value_array_get_value (elements, i));
    if (g_strcmp0 (gst_structure_get_string (e, "name"), name) == 0)
      return e;
  }
  fail ("no stats for element %s", name);
  return NULL;
}

static guint64
u64 (const GstStructure * s, const gchar * field)
{
  guint64 v = 0;

  fail_unless (gst_structure_get_uint64 (s, field, &v), "no field %s", field);
  return v;
}

static gdouble
dbl (const GstStructure * s, const gchar * field)
{
  gdouble v = 0;

  fail_unless (gst_structure_get_double (s, field, &v), "no field %s", field);
  return v;
}

static guint64
hist (const GstStructure * element, const gchar * histogram,
    const gchar * field)
{
  const GValue *v = gst_structure_get_value (element, histogram);

  fail_unless (v != NULL, "%s has no %s histogram",
      gst_structure_get_string (element, "name"), histogram);
  return u64 (gst_value_get_structure (v), field);
}

/* Runs @pipeline from NULL to EOS and back to NULL. */
static void
run_to_eos (GstElement * pipeline)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg;

  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "pipeline did not finish");
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  gst_message_unref (msg);
  gst_object_unref (bus);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
}

static void
run_launch_line (const gchar * description)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (description, &error);

  fail_unless (pipeline != NULL, "%s: %s", description,
      error ? error->message : "?");
  run_to_eos (pipeline);
  gst_object_unref (pipeline);
}

GST_START_TEST (test_delay_shows_in_the_right_element)
{
  GstStructure *stats;
  const GstStructure *slow, *fast, *src, *sink;

  reset_stats ();
  run_launch_line ("fakesrc name=src num-buffers=20 sizetype=fixed sizemax=64 "
      "! identity name=slow sleep-time=20000 ! identity name=fast "
      "! fakesink name=sink sync=false");
  stats = get_stats ();
  slow = element_entry (stats, "slow");
  fast = element_entry (stats, "fast");
  src = element_entry (stats, "src");
  sink = element_entry (stats, "sink");

  /* the 20 ms sleep is in slow's self time, not in its neighbours' */
  fail_unless_equals_uint64 (hist (slow, "self", "count"), 20);
  fail_unless (hist (slow, "self", "p50") >= 19 * MS);
  fail_unless (hist (slow, "self", "p50") <= GENEROUS_UPPER_BOUND);
  fail_unless (hist (slow, "self", "max") >= 20 * MS);
  fail_unless (hist (fast, "self", "p50") < 10 * MS);
  fail_unless (hist (sink, "self", "p50") < 10 * MS);

  /* the source drives its own thread: 19 gaps between 20 pushes */
  fail_unless_equals_uint64 (hist (src, "loop", "count"), 19);
  fail_unless_equals_uint64 (hist (src, "self", "count"), 0);
  fail_unless_equals_string (gst_structure_get_string (src, "shape"),
      "source");

  /* exact traffic counts */
  fail_unless_equals_uint64 (u64 (src, "buffers-out"), 20);
  fail_unless_equals_uint64 (u64 (slow, "buffers-in"), 20);
  fail_unless_equals_uint64 (u64 (slow, "buffers-out"), 20);
  fail_unless_equals_uint64 (u64 (sink, "buffers-in"), 20);
  fail_unless_equals_uint64 (u64 (sink, "bytes-in"), 20 * 64);
  fail_unless_equals_uint64 (u64 (sink, "patches-in"), 0);
  /* 20 buffers in ~0.4 s: generous bounds around 50/s */
  fail_unless (dbl (sink, "buffers-per-s") > 1.0);
  fail_unless (dbl (sink, "buffers-per-s") < 60.0);
  fail_unless_equals_uint64 (hist (sink, "interval", "count"), 19);
  fail_unless (hist (sink, "interval", "p50") >= 19 * MS);
  gst_structure_free (stats);
}

GST_END_TEST;

/* A buffer of @n patches, all planned @age_ns ago. */
static GstBuffer *
patch_buffer (guint n, guint64 age_ns, gsize size, guint64 first_sequence)
{
  GstBuffer *buffer = gst_buffer_new_and_alloc (size);
  WsiPatchRecord *records = g_new0 (WsiPatchRecord, n);
  gchar **paths = g_new0 (gchar *, n + 1);
  gint64 created = (gint64) gst_util_get_timestamp () - (gint64) age_ns;
  guint i;

  for (i = 0; i < n; i++) {
    records[i].sequence = first_sequence + i;
    records[i].created_ns = created;
    records[i].level = WSI_LEVEL_UNSET;
    paths[i] = g_strdup ("");
  }
  wsi_patch_meta_add (buffer, records, n, (const gchar * const *) paths,
      (const gchar * const *) paths);
  GST_BUFFER_OFFSET (buffer) = first_sequence;
  g_strfreev (paths);
  g_free (records);
  return buffer;
}

GST_START_TEST (test_patches_counted_from_meta_and_aged)
{
  GstHarness *h = gst_harness_new_parse ("identity name=batcher");
  GstStructure *stats;
  const GstStructure *e, *pad;
  const GValue *pads;
  guint i;

  reset_stats ();
  gst_harness_set_src_caps_str (h, "video/x-raw");
  for (i = 0; i < 10; i++) {
    gst_harness_push (h, patch_buffer (4, 100 * MS, 1000, i * 4));
    gst_buffer_unref (gst_harness_pull (h));
  }
  /* a buffer without the meta counts as a buffer, never as a patch */
  gst_harness_push (h, gst_buffer_new_and_alloc (10));
  gst_buffer_unref (gst_harness_pull (h));

  stats = get_stats ();
  e = element_entry (stats, "batcher");
  fail_unless_equals_uint64 (u64 (e, "buffers-in"), 11);
  fail_unless_equals_uint64 (u64 (e, "patches-in"), 40);
  fail_unless_equals_uint64 (u64 (e, "patches-out"), 40);
  fail_unless_equals_uint64 (u64 (e, "bytes-in"), 10 * 1000 + 10);
  /* one age per patch, at least the 100 ms the records were made before */
  fail_unless_equals_uint64 (hist (e, "age", "count"), 40);
  fail_unless (hist (e, "age", "p50") >= 98 * MS);
  fail_unless (hist (e, "age", "max") <= GENEROUS_UPPER_BOUND);

  /* per-pad numbers */
  pads = gst_structure_get_value (e, "pads");
  fail_unless_equals_int (gst_value_array_get_size (pads), 2);
  for (i = 0; i < 2; i++) {
    pad = gst_value_get_structure (gst_value_array_get_value (pads, i));
    fail_unless_equals_uint64 (u64 (pad, "patches"), 40);
    fail_unless_equals_uint64 (u64 (pad, "buffers"), 11);
  }
  gst_structure_free (stats);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Coordinate buffers (packed WsiPatchRecord, no WsiPatchMeta: what
 * patchsampler and patchinterleave push) count one patch per record; a
 * buffer of another media type without the meta counts none. */
GST_START_TEST (test_coordinates_counted_as_patches)
{
  GstHarness *h = gst_harness_new_parse ("identity name=planner");
  GstHarness *other = gst_harness_new_parse ("identity name=slides");
  GstStructure *stats;
  const GstStructure *e;
  guint i;

  reset_stats ();
  gst_harness_set_src_caps_str (h, WSI_PATCHES_MEDIA_TYPE);
  gst_harness_set_src_caps_str (other, WSI_SLIDE_MEDIA_TYPE);
  for (i = 0; i < 3; i++) {
    gst_harness_push (h, gst_buffer_new_and_alloc (5 *
            sizeof (WsiPatchRecord)));
    gst_buffer_unref (gst_harness_pull (h));
    gst_harness_push (other, gst_buffer_new_and_alloc (5 *
            sizeof (WsiPatchRecord)));
    gst_buffer_unref (gst_harness_pull (other));
  }
  stats = get_stats ();
  e = element_entry (stats, "planner");
  fail_unless_equals_uint64 (u64 (e, "buffers-out"), 3);
  fail_unless_equals_uint64 (u64 (e, "patches-in"), 15);
  fail_unless_equals_uint64 (u64 (e, "patches-out"), 15);
  e = element_entry (stats, "slides");
  fail_unless_equals_uint64 (u64 (e, "patches-out"), 0);
  gst_structure_free (stats);
  gst_harness_teardown (other);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* While the tracer's "use-fake-clock" is on, its time moves only here
 * ("advance-clock"): a handoff "works" for @ns by moving it, so busy and
 * wait shares are exact whatever the machine's load; a sleep made them
 * depend on how the threads were scheduled. */
static void
use_fake_clock (gboolean on)
{
  GstTracer *tracer = wsistats_tracer ();

  g_signal_emit_by_name (tracer, "use-fake-clock", on);
  gst_object_unref (tracer);
}

static void
advance_clock (guint64 ns)
{
  GstTracer *tracer = wsistats_tracer ();

  g_signal_emit_by_name (tracer, "advance-clock", ns);
  gst_object_unref (tracer);
}

static void
work_50_ms_in_handoff (GstElement * element, GstBuffer * buffer,
    GstPad * pad, gpointer user_data)
{
  advance_clock (50 * MS);
}

/* identity's handoff has no pad argument */
static void
work_50_ms_in_identity (GstElement * identity, GstBuffer * buffer,
    gpointer user_data)
{
  advance_clock (50 * MS);
}

static GstElement *
launch_with_handoff (const gchar * description, const gchar * name,
    GCallback handoff)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (description, &error);
  GstElement *worker;

  fail_unless (pipeline != NULL, "%s: %s", description,
      error ? error->message : "?");
  worker = gst_bin_get_by_name (GST_BIN (pipeline), name);
  g_signal_connect (worker, "handoff", handoff, NULL);
  gst_object_unref (worker);
  return pipeline;
}

/* A consumer that takes 50 ms per batch (its render), a producer that
 * takes none: the sink is busy all the time, never waits. */
GST_START_TEST (test_verdict_trainer_bound)
{
  GstElement *pipeline = launch_with_handoff ("fakesrc num-buffers=15 "
      "! queue name=q max-size-buffers=2 max-size-bytes=0 max-size-time=0 "
      "! fakesink name=sink sync=false signal-handoffs=true", "sink",
      G_CALLBACK (work_50_ms_in_handoff));
  GstStructure *stats;
  const GstStructure *s;

  use_fake_clock (TRUE);
  reset_stats ();
  run_to_eos (pipeline);
  use_fake_clock (FALSE);
  gst_object_unref (pipeline);

  stats = get_stats ();
  fail_unless_equals_string (gst_structure_get_string (stats, "verdict"),
      "trainer-bound");
  fail_unless_equals_float (dbl (stats, "trainer-bound"), 1.0);
  fail_unless_equals_float (dbl (stats, "loader-bound"), 0.0);
  s = element_entry (stats, "sink");
  /* histogram percentiles are bucketed: 50 ms reads as 49 to 51 */
  fail_unless (hist (s, "interval", "p50") >= 49 * MS
      && hist (s, "interval", "p50") <= 51 * MS);
  fail_unless (hist (s, "self", "p50") >= 49 * MS
      && hist (s, "self", "p50") <= 51 * MS);
  fail_unless_equals_float (dbl (s, "busy-s"), 0.75);        /* 15 x 50 ms */
  fail_unless_equals_float (dbl (s, "wait-s"), 0.0);
  gst_structure_free (stats);
}

GST_END_TEST;

/* A producer that takes 50 ms per buffer (identity's handoff, before the
 * sink in the same thread), a consumer that takes none: the sink waits
 * for data all the time. */
GST_START_TEST (test_verdict_loader_bound)
{
  GstElement *pipeline = launch_with_handoff ("fakesrc num-buffers=15 "
      "! identity name=producer signal-handoffs=true "
      "! fakesink name=sink sync=false", "producer",
      G_CALLBACK (work_50_ms_in_identity));
  GstStructure *stats;
  const GstStructure *s;

  use_fake_clock (TRUE);
  reset_stats ();
  run_to_eos (pipeline);
  use_fake_clock (FALSE);
  gst_object_unref (pipeline);

  stats = get_stats ();
  fail_unless_equals_string (gst_structure_get_string (stats, "verdict"),
      "loader-bound");
  fail_unless_equals_float (dbl (stats, "loader-bound"), 1.0);
  fail_unless_equals_float (dbl (stats, "trainer-bound"), 0.0);
  s = element_entry (stats, "sink");
  /* 14 waits: the first buffer's is before any departure */
  fail_unless_equals_float (dbl (s, "wait-s"), 0.7);
  fail_unless (hist (s, "interval", "p50") >= 49 * MS
      && hist (s, "interval", "p50") <= 51 * MS);
  gst_structure_free (stats);
}

GST_END_TEST;

/* transit=queue is in GST_TRACERS: a buffer waits in the queue while the
 * 10 ms consumer works through the ones before it. */
GST_START_TEST (test_transit_by_offset)
{
  GstStructure *stats;
  const GstStructure *q;

  reset_stats ();
  run_launch_line ("fakesrc num-buffers=20 sizetype=fixed sizemax=100 "
      "! queue name=q ! identity sleep-time=10000 ! fakesink sync=false");
  stats = get_stats ();
  q = element_entry (stats, "q");
  fail_unless_equals_uint64 (hist (q, "transit", "count"), 20);
  fail_unless (hist (q, "transit", "p50") >= 9 * MS);
  fail_unless (hist (q, "transit", "max") <= GENEROUS_UPPER_BOUND);
  gst_structure_free (stats);
}

GST_END_TEST;

/* NULL -> PLAYING -> NULL twice: counts add up, the gap between the runs
 * is neither a batch interval nor a wait; reset forgets everything. */
GST_START_TEST (test_restart_and_reset)
{
  GstElement *pipeline = gst_parse_launch ("fakesrc num-buffers=10 "
      "! fakesink name=sink sync=false", NULL);
  GstStructure *stats;
  const GstStructure *sink;

  reset_stats ();
  run_to_eos (pipeline);
  g_usleep (300 * 1000);
  run_to_eos (pipeline);

  stats = get_stats ();
  sink = element_entry (stats, "sink");
  fail_unless_equals_uint64 (u64 (sink, "buffers-in"), 20);
  fail_unless_equals_uint64 (hist (sink, "interval", "count"), 18);
  fail_unless (hist (sink, "interval", "max") < 250 * MS);
  gst_structure_free (stats);

  reset_stats ();
  stats = get_stats ();
  sink = element_entry (stats, "sink");
  fail_unless_equals_uint64 (u64 (sink, "buffers-in"), 0);
  fail_unless_equals_uint64 (hist (sink, "self", "count"), 0);
  gst_structure_free (stats);
  gst_object_unref (pipeline);
}

GST_END_TEST;

/* The JSON Lines and timeline files parse, and say what happened. */
static const gchar *check_files_py =
    "import json, sys\n"
    "lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]\n"
    "assert lines, 'empty stats file'\n"
    "types = {l['type'] for l in lines}\n"
    "assert 'final' in types and 'report' in types, types\n"
    "final = [l for l in lines if l['type'] == 'final'][-1]\n"
    "slow = [e for e in final['elements'] if e['name'] == 'jslow'][0]\n"
    "assert slow['self']['count'] == 8, slow['self']\n"
    "assert slow['self']['p50'] >= 19000000, slow['self']\n"
    "assert final['verdict'] == 'loader-bound', final['verdict']\n"
    "events = json.load(open(sys.argv[2]))\n"
    "slices = [e for e in events if e.get('ph') == 'X' and e['name'] == 'jslow']\n"
    "assert len(slices) == 8, len(slices)\n"
    "assert all(e['dur'] >= 19000 for e in slices)\n"
    "assert any(e.get('ph') == 'C' and e['name'] == 'jq' for e in events)\n"
    "assert any(e.get('ph') == 'M' for e in events)\n";

GST_START_TEST (test_json_and_timeline_files_parse)
{
  GstTracer *tracer;
  gchar *argv[] = { (gchar *) "/usr/bin/python3", (gchar *) "-c",
    (gchar *) check_files_py, stats_path, timeline_path, NULL
  };
  gchar *out = NULL, *err = NULL;
  gint status = -1;

  if (!g_file_test (argv[0], G_FILE_TEST_IS_EXECUTABLE)) {
    WSI_TEST_SKIP ("no /usr/bin/python3 to check the files");
    return;
  }
  reset_stats ();
  run_launch_line ("fakesrc num-buffers=8 ! identity name=jslow "
      "sleep-time=20000 ! queue name=jq ! fakesink sync=false");
  tracer = wsistats_tracer ();
  g_signal_emit_by_name (tracer, "write-report");
  gst_object_unref (tracer);

  fail_unless (g_spawn_sync (NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
          &out, &err, &status, NULL));
  fail_unless (g_spawn_check_wait_status (status, NULL),
      "file check failed: %s", err);
  g_free (out);
  g_free (err);
}

GST_END_TEST;

/* The timeline of two pools (reader, augmentation): one lane per worker
 * named in full, one slice per patch pushed in each, the last task
 * blocked on a full queue held by a slow consumer, and a slice an
 * application adds through timeline-slice. */
static const gchar *check_lanes_py =
    "import json, sys\n"
    "patches = int(sys.argv[2])\n"
    "events = json.load(open(sys.argv[1]))\n"
    "names = {e['tid']: e['args']['name'] for e in events if e['name'] == 'thread_name'}\n"
    "slices = [e for e in events if e['ph'] == 'X']\n"
    "work = [e for e in slices if e['cat'] == 'work' and e['name'] == 'treader']\n"
    "assert len(work) == patches, (len(work), patches)\n"
    "lanes = sorted(names.get(e['tid'], '?') for e in work)\n"
    "assert sorted(set(lanes)) == ['treader: worker %d/3' % i for i in (1, 2, 3)], set(lanes)\n"
    "assert all(e['dur'] > 0 for e in work)\n"
    "aug = [e for e in slices if e['cat'] == 'work' and e['name'] == 'taug']\n"
    "assert len(aug) == patches, (len(aug), patches)\n"
    "assert {names.get(e['tid']) for e in aug} == {'taug: worker 1/2', 'taug: worker 2/2'}\n"
    "assert 'treader:src' in names.values(), 'no full-length lane name treader:src: %s' % sorted(names.values())\n"
    /* The blocked pushes are drawn on the lane of the thread that pushes
     * into tq (taug's task), where its unblocked pushes are drawn too.
     * Matched by thread id, not lane name: a task thread comes from
     * GStreamer's pool and may have served another task (named so) of an
     * earlier test in this process. */
    "task = {e['tid'] for e in slices if e['cat'] == 'element' and e['name'] == 'tq'}\n"
    "assert task, 'no push into tq drawn'\n"
    "assert not task & {t for t, n in names.items() if ': worker ' in n}, 'tq pushed from a worker'\n"
    "blocked = [e for e in slices if e['cat'] == 'blocked' and e['name'] == 'tq full']\n"
    "assert blocked, 'no blocked slices'\n"
    "assert all(e['tid'] in task for e in blocked), 'blocked off the pushing lane'\n"
    "assert sum(e['dur'] for e in blocked) >= 200e3, sum(e['dur'] for e in blocked)\n"
    "tq = [e for e in events if e['ph'] == 'C' and e['name'] == 'tq']\n"
    "assert tq and all(e['args']['limit'] == 2 for e in tq), tq[:3]\n"
    "assert max(e['args']['level'] for e in tq) == 2, 'tq never seen full'\n"
    "mine = [e for e in slices if e['name'] == 'tstep']\n"
    "assert len(mine) == 1 and mine[0]['cat'] == 'consumer-compute', mine\n"
    "assert names[mine[0]['tid']] == 'test consumer: a lane name over 15 bytes'\n"
    "assert 4000 <= mine[0]['dur'] <= 6000, mine[0]\n"
    "io = [e for e in slices if e['cat'] == 'io-wait' and names.get(e['tid'], '').startswith('treader')]\n"
    "assert not io, 'I/O waits on a local slide: %s' % io[:3]\n";

GST_START_TEST (test_timeline_pool_lanes_and_blocking)
{
  GstTracer *tracer;
  GstStructure *stats;
  WsiTestSlideSpec spec;
  gchar *slide, *dir, *launch, *patches;
  gchar *argv[] = { (gchar *) "/usr/bin/python3", (gchar *) "-c",
    (gchar *) check_lanes_py, timeline_path, NULL, NULL
  };
  gchar *out = NULL, *err = NULL;
  gint status = -1;
  guint64 now;
  GstElementFactory *factory, *augment;

  factory = gst_element_factory_find ("patchreader");
  augment = gst_element_factory_find ("patchaugment");
  if (factory == NULL || augment == NULL
      || !g_file_test (argv[0], G_FILE_TEST_IS_EXECUTABLE)) {
    WSI_TEST_SKIP ("patchreader, patchaugment or /usr/bin/python3 missing");
    gst_clear_object (&factory);
    gst_clear_object (&augment);
    return;
  }
  gst_object_unref (factory);
  gst_object_unref (augment);
  wsi_test_slide_spec_init (&spec);
  spec.width = 2048;
  spec.height = 1536;
  spec.levels = 2;
  spec.seed = 7;
  dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "slides");
  slide = wsi_test_write_slide (dir, "lanes.tiff", &spec);

  reset_stats ();
  /* 10 ms per patch downstream of a 2-buffer queue: the reader waits */
  launch = g_strdup_printf ("wsislidesrc location=\"%s\" ! patchsampler "
      "patch-size=64 patches-per-slide=48 ! patchinterleave ! patchreader "
      "name=treader threads=3 ! patchaugment name=taug threads=2 ! "
      "queue name=tq max-size-buffers=2 "
      "max-size-bytes=0 max-size-time=0 ! identity sleep-time=10000 ! "
      "fakesink sync=false", slide);
  run_launch_line (launch);
  stats = get_stats ();
  patches = g_strdup_printf ("%" G_GUINT64_FORMAT,
      u64 (element_entry (stats, "treader"), "buffers-out"));
  fail_unless (g_str_equal (patches, "48"), "%s patches read", patches);
  argv[4] = patches;

  tracer = wsistats_tracer ();
  now = gst_util_get_timestamp ();
  g_signal_emit_by_name (tracer, "timeline-slice",
      "test consumer: a lane name over 15 bytes", "tstep", "consumer-compute",
      now - 5 * MS, now);
  g_signal_emit_by_name (tracer, "write-report");
  gst_object_unref (tracer);

  fail_unless (g_spawn_sync (NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
          &out, &err, &status, NULL));
  fail_unless (g_spawn_check_wait_status (status, NULL),
      "timeline check failed: %s", err);
  g_free (out);
  g_free (err);
  g_free (patches);
  gst_structure_free (stats);
  g_free (launch);
  g_free (slide);
  g_free (dir);
}

GST_END_TEST;

/* Slide preparation as its own stage (issue 23): per slide, the source's
 * open, overview read and wait for a prepared slide, and tissuemask's
 * mask, each counted once by the element that spent it (not again by the
 * queue that passes the slide on). */
GST_START_TEST (test_slide_preparation_stage)
{
  GstStructure *stats;
  const GstStructure *src, *mask, *queue;
  WsiTestSlideSpec spec;
  gchar *dir, *launch;
  GstElementFactory *factory = gst_element_factory_find ("tissuemask");
  guint i;

  if (factory == NULL) {
    WSI_TEST_SKIP ("tissuemask (OpenCV) not built");
    return;
  }
  gst_object_unref (factory);
  dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "prep");
  for (i = 0; i < 3; i++) {
    gchar name[32];

    wsi_test_slide_spec_init (&spec);
    spec.width = 1024;
    spec.height = 768;
    spec.seed = 20 + i;
    g_snprintf (name, sizeof (name), "prep%u.tiff", i);
    g_free (wsi_test_write_slide (dir, name, &spec));
  }

  reset_stats ();
  launch = g_strdup_printf ("wsislidesrc name=psrc location=\"%s\" "
      "prepare-ahead=2 thumbnail-size=256 ! tissuemask name=pmask ! "
      "queue name=pq ! patchsampler patch-size=64 patches-per-slide=4 ! "
      "fakesink sync=false", dir);
  run_launch_line (launch);
  stats = get_stats ();
  src = element_entry (stats, "psrc");
  mask = element_entry (stats, "pmask");
  queue = element_entry (stats, "pq");
  fail_unless_equals_uint64 (hist (src, "prep-open", "count"), 3);
  fail_unless_equals_uint64 (hist (src, "prep-overview", "count"), 3);
  fail_unless_equals_uint64 (hist (src, "prep-wait", "count"), 3);
  fail_unless (hist (src, "prep-overview", "max") > 0);
  fail_unless_equals_uint64 (hist (mask, "prep-mask", "count"), 3);
  fail_unless (hist (mask, "prep-mask", "max") > 0);
  fail_unless (!gst_structure_has_field (mask, "prep-open"));
  fail_unless (!gst_structure_has_field (queue, "prep-mask"));
  fail_unless (!gst_structure_has_field (queue, "prep-open"));
  gst_structure_free (stats);
  g_free (launch);
  g_free (dir);
}

GST_END_TEST;

/* A slide source's counters in the report: a folder of an intact TIFF and
 * a DICOM series whose TILED_FULL level 0 is one frame short of its grid:
 * two slides opened, none failed, one damaged, named as in its warning. */
GST_START_TEST (test_damaged_slides_counted_and_named)
{
  GstElementFactory *factory = gst_element_factory_find ("wsislidesrc");
  const GstStructure *src, *slides;
  const GValue *names;
  GstStructure *stats;
  WsiTestSlideSpec spec;
  WsiTestDicomSpec dspec;
  gchar *dir, *tiff, *launch, **paths = NULL;
  GstElement *pipeline;
  GError *error = NULL;
  guint opened = 0, failed = 1, damaged = 0;

  if (factory == NULL) {
    WSI_TEST_SKIP ("wsislidesrc not built");
    return;
  }
  gst_object_unref (factory);
  dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "damaged");
  wsi_test_slide_spec_init (&spec);
  spec.width = 1024;
  spec.height = 768;
  tiff = wsi_test_write_slide (dir, "intact.tiff", &spec);
  wsi_test_dicom_spec_init (&dspec);
  dspec.damage = WSI_TEST_DICOM_DAMAGE_FRAME_COUNT;
  fail_unless (wsi_test_dicom_from_tiff (tiff, dir, "short", &dspec, &paths,
          &error), "%s", error ? error->message : "?");

  reset_stats ();
  /* the overview from an intact lower level (level 0 lacks its last tile,
   * and an overview read from it would fail the slide) */
  launch = g_strdup_printf ("wsislidesrc name=dsrc location=\"%s\" "
      "thumbnail-size=256 ! fakesink name=dsink sync=false", dir);
  /* the counters are read from the living source (as the summary printed
   * when the pipeline stops does), so it stays until the report is had */
  pipeline = gst_parse_launch (launch, &error);
  fail_unless (pipeline != NULL, "%s", error ? error->message : "?");
  run_to_eos (pipeline);
  stats = get_stats ();
  gst_object_unref (pipeline);
  src = element_entry (stats, "dsrc");
  fail_unless (gst_structure_has_field_typed (src, "slides",
          GST_TYPE_STRUCTURE), "no slide counts for the source");
  slides = gst_value_get_structure (gst_structure_get_value (src, "slides"));
  fail_unless (gst_structure_get (slides, "opened", G_TYPE_UINT, &opened,
          "failed", G_TYPE_UINT, &failed, "damaged", G_TYPE_UINT, &damaged,
          NULL));
  fail_unless (opened == 2 && failed == 0 && damaged == 1, "%u slides "
      "opened, %u failed, %u damaged; expected 2, 0, 1", opened, failed,
      damaged);
  names = gst_structure_get_value (slides, "damaged-slides");
  fail_unless (names != NULL && gst_value_array_get_size (names) == 1);
  fail_unless_equals_string (g_value_get_string (gst_value_array_get_value
          (names, 0)), paths[0]);
  /* elements that are not slide sources have none */
  fail_if (gst_structure_has_field (element_entry (stats, "dsink"),
          "slides"));
  gst_structure_free (stats);
  g_strfreev (paths);
  g_free (launch);
  g_free (tiff);
  g_free (dir);
}

GST_END_TEST;

/* A slide at a URL behind the fault proxy (10 ms per request), read
 * without read-ahead: the reader's workers block on remote bytes. The
 * report counts that I/O wait inside their work time; the timeline draws
 * each wait as an "io-wait" slice on a worker's lane, inside one of its
 * work slices. */
static const gchar *check_io_wait_py =
    "import json, sys\n"
    "waits = int(sys.argv[2])\n"
    "events = json.load(open(sys.argv[1]))\n"
    "names = {e['tid']: e['args']['name'] for e in events if e['name'] == 'thread_name'}\n"
    "slices = [e for e in events if e['ph'] == 'X']\n"
    "work = [e for e in slices if e['cat'] == 'work' and e['name'] == 'rreader']\n"
    "io = [e for e in slices if e['cat'] == 'io-wait' and e['tid'] in {w['tid'] for w in work}]\n"
    "assert io, 'no io-wait slices on the reader workers'\n"
    "assert len(io) <= waits, (len(io), waits)\n"
    "assert all(names[e['tid']].startswith('rreader: worker ') for e in io), {names[e['tid']] for e in io}\n"
    "def inside(e):\n"
    "    return any(w['tid'] == e['tid'] and w['ts'] - 1 <= e['ts'] and e['ts'] + e['dur'] <= w['ts'] + w['dur'] + 1 for w in work)\n"
    "bad = [e for e in io if not inside(e)]\n"
    "assert not bad, 'io-wait outside its work slice: %s' % bad[:3]\n"
    "assert sum(e['dur'] for e in io) >= 9000, 'less than one 10 ms request waited'\n";

GST_START_TEST (test_remote_reads_show_io_wait)
{
  const gchar *args[] = { "--delay-ms", "10", NULL };
  gchar *www = wsi_test_make_dir (WSI_TEST_TMPDIR, "www");
  gchar *workdir = g_build_filename (WSI_TEST_TMPDIR, "nginx", NULL);
  gchar *report = g_build_filename (WSI_TEST_TMPDIR, "proxy.txt", NULL);
  gchar *argv[] = { (gchar *) "/usr/bin/python3", (gchar *) "-c",
    (gchar *) check_io_wait_py, timeline_path, NULL, NULL
  };
  gchar *why = NULL, *slide, *launch, *waits_text, *out = NULL, *err = NULL;
  const GstStructure *reader;
  GstStructure *stats;
  WsiTestSlideSpec spec;
  WsiNginx nginx;
  WsiProxy proxy;
  GstTracer *tracer;
  gdouble work_s = 0, io_wait_s = 0;
  guint64 waits = 0;
  gint status = -1;

  if (!wsi_nginx_start (&nginx, www, workdir, &why)) {
    if (g_strcmp0 (g_getenv ("CI"), "true") == 0)
      fail ("%s", why);
    WSI_TEST_SKIP (why);
    g_free (why);
    g_free (www);
    g_free (workdir);
    g_free (report);
    return;
  }
  wsi_test_slide_spec_init (&spec);
  /* large enough that the overview's requests (the smallest level) leave
   * the patches' level-0 tiles to fetch */
  spec.width = 8192;
  spec.height = 6144;
  spec.levels = 3;
  spec.seed = 9;
  slide = wsi_test_write_slide (www, "remote.tiff", &spec);
  fail_unless (wsi_proxy_start (&proxy, nginx.port, report, args, &why), "%s",
      why);

  reset_stats ();
  launch = g_strdup_printf ("wsislidesrc location=http://127.0.0.1:%u/"
      "remote.tiff ! patchsampler patch-size=64 patches-per-slide=24 ! "
      "patchinterleave ! patchreader name=rreader threads=2 read-ahead=0 ! "
      "fakesink sync=false", proxy.port);
  run_launch_line (launch);
  stats = get_stats ();
  reader = element_entry (stats, "rreader");
  fail_unless (gst_structure_get (reader, "work-s", G_TYPE_DOUBLE, &work_s,
          "io-wait-s", G_TYPE_DOUBLE, &io_wait_s, "io-waits", G_TYPE_UINT64,
          &waits, NULL), "no I/O wait fields: %" GST_PTR_FORMAT, reader);
  /* (a wait may be short: a prefetch about to arrive) */
  fail_unless (waits > 0 && io_wait_s >= 0.009, "%" G_GUINT64_FORMAT
      " waits, %.3f s", waits, io_wait_s);
  fail_unless (io_wait_s <= work_s, "I/O wait %.3f s > work %.3f s",
      io_wait_s, work_s);

  tracer = wsistats_tracer ();
  g_signal_emit_by_name (tracer, "write-report");
  gst_object_unref (tracer);
  waits_text = g_strdup_printf ("%" G_GUINT64_FORMAT, waits);
  argv[4] = waits_text;
  fail_unless (g_spawn_sync (NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
          &out, &err, &status, NULL));
  fail_unless (g_spawn_check_wait_status (status, NULL),
      "timeline check failed: %s", err);

  wsi_proxy_stop (&proxy, NULL);
  wsi_nginx_stop (&nginx);
  gst_structure_free (stats);
  g_free (out);
  g_free (err);
  g_free (waits_text);
  g_free (launch);
  g_free (slide);
  g_free (report);
  g_free (workdir);
  g_free (www);
}

GST_END_TEST;

static Suite *
wsistats_suite (void)
{
  Suite *s = suite_create ("wsistats");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_delay_shows_in_the_right_element);
  tcase_add_test (tc, test_patches_counted_from_meta_and_aged);
  tcase_add_test (tc, test_coordinates_counted_as_patches);
  tcase_add_test (tc, test_verdict_trainer_bound);
  tcase_add_test (tc, test_verdict_loader_bound);
  tcase_add_test (tc, test_transit_by_offset);
  tcase_add_test (tc, test_restart_and_reset);
  tcase_add_test (tc, test_json_and_timeline_files_parse);
  tcase_add_test (tc, test_timeline_pool_lanes_and_blocking);
  tcase_add_test (tc, test_slide_preparation_stage);
  tcase_add_test (tc, test_damaged_slides_counted_and_named);
  tcase_add_test (tc, test_remote_reads_show_io_wait);
  return s;
}

int
main (int argc, char **argv)
{
  Suite *s;
  gchar *tracers;
  int failed;

  g_mkdir_with_parents (WSI_TEST_TMPDIR, 0755);
  stats_path = g_build_filename (WSI_TEST_TMPDIR, "stats.jsonl", NULL);
  timeline_path = g_build_filename (WSI_TEST_TMPDIR, "timeline.json", NULL);
  tracers = g_strdup_printf ("wsistats(interval=100,sample-interval=5,"
      "file=%s,timeline=%s,transit=queue)", stats_path, timeline_path);
  g_setenv ("GST_TRACERS", tracers, TRUE);
  g_free (tracers);
  /* one process: the tracer and its files belong to it */
  g_setenv ("CK_FORK", "no", TRUE);

  gst_check_init (&argc, &argv);
  /* wsipatch first, as an in-process registry scan loads it: the
   * WsiPoolElement class (registered once, by name) is then wsipatch's
   * copy of the pool, and patchreader's I/O waits, noted by wsislide's
   * copy, must still reach its items (test_remote_reads_show_io_wait) */
  gst_object_unref (gst_plugin_load_by_name ("wsipatch"));
  s = wsistats_suite ();
  failed = gst_check_run_suite (s, "wsistats", __FILE__);
  g_free (stats_path);
  g_free (timeline_path);
  return failed;
}
