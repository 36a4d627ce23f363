/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit tests for patchinterleave: the round-robin order, slot replacement,
 * EOS drain, sequence renumbering, metas, flushing and state changes. */

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <gst/wsi/wsievent.h>
#include <gst/wsi/wsirecord.h>

#include "wsitestutil.h"

/* Slides are named 'A', 'B', ...: slide_index = the letter, x = position of
 * the record in its slide's plan, so every output record says where it
 * came from. */
static GstBuffer *
make_plan (gchar name, guint n_records)
{
  WsiPatchRecord *records = g_new0 (WsiPatchRecord, MAX (n_records, 1));
  GstBuffer *plan;
  GstStructure *meta;
  gchar *path = g_strdup_printf ("/slides/%c.svs", name);
  gchar *label = g_strdup_printf ("label-%c", name);
  guint i;

  for (i = 0; i < n_records; i++) {
    records[i].sequence = i;    /* per-slide numbering, as patchsampler does */
    records[i].x = i;
    records[i].y = 1000 + i;
    records[i].slide_index = (guint32) name;
    records[i].out_size = 256;
    records[i].level = WSI_LEVEL_UNSET;
  }
  plan = gst_buffer_new_wrapped (records, n_records * sizeof (WsiPatchRecord));
  meta = wsi_slide_meta_add (plan);
  gst_structure_set (meta, "path", G_TYPE_STRING, path, "label",
      G_TYPE_STRING, label, "index", G_TYPE_UINT, (guint) name, NULL);
  g_free (path);
  g_free (label);
  return plan;
}

static GstHarness *
new_interleave (guint pool_size, guint per_visit)
{
  GstHarness *h = gst_harness_new ("patchinterleave");

  g_object_set (h->element, "pool-size", pool_size, "patches-per-visit",
      per_visit, NULL);
  gst_harness_set_src_caps_str (h, WSI_PATCHES_MEDIA_TYPE);
  return h;
}

static void
push_plan (GstHarness * h, gchar name, guint n_records)
{
  fail_unless_equals_int (gst_harness_push (h, make_plan (name, n_records)),
      GST_FLOW_OK);
}

static guint
slides_in_pool (GstHarness * h)
{
  guint n;

  g_object_get (h->element, "slides-in-pool", &n, NULL);
  return n;
}

/* Pulls every queued buffer and writes its records as "A0 A1|B0 ..." (a
 * space between records of one buffer, '|' between buffers). */
static void
pull_visits (GstHarness * h, GString * order)
{
  GstBuffer *buf;

  while ((buf = gst_harness_try_pull (h)) != NULL) {
    GstMapInfo map;
    const WsiPatchRecord *records;
    guint i, n;

    fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
    records = (const WsiPatchRecord *) map.data;
    n = map.size / sizeof (WsiPatchRecord);
    fail_unless (n > 0);
    if (order->len > 0)
      g_string_append_c (order, '|');
    for (i = 0; i < n; i++)
      g_string_append_printf (order, "%s%c%" G_GINT64_FORMAT, i ? " " : "",
          (gchar) records[i].slide_index, records[i].x);
    gst_buffer_unmap (buf, &map);
    gst_buffer_unref (buf);
  }
}

GST_START_TEST (test_round_robin_order)
{
  GstHarness *h = new_interleave (3, 2);
  GString *order = g_string_new (NULL);

  /* Slots [A B C]; B runs out during the second round and returns, D takes
   * B's slot, the rotation goes on with C, C runs out, EOS drains A and D. */
  push_plan (h, 'A', 5);
  push_plan (h, 'B', 3);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  push_plan (h, 'C', 4);
  pull_visits (h, order);
  fail_unless_equals_string (order->str, "A0 A1|B0 B1|C0 C1|A2 A3|B2");
  fail_unless_equals_int (slides_in_pool (h), 2);

  push_plan (h, 'D', 2);
  pull_visits (h, order);
  fail_unless_equals_string (order->str,
      "A0 A1|B0 B1|C0 C1|A2 A3|B2|C2 C3");
  fail_unless_equals_int (slides_in_pool (h), 2);

  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  pull_visits (h, order);
  fail_unless_equals_string (order->str,
      "A0 A1|B0 B1|C0 C1|A2 A3|B2|C2 C3|A4|D0 D1");
  fail_unless_equals_int (slides_in_pool (h), 0);

  g_string_free (order, TRUE);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_exhausted_slide_replaced_in_its_slot)
{
  GstHarness *h = new_interleave (2, 1);
  GString *order = g_string_new (NULL);

  push_plan (h, 'A', 1);
  push_plan (h, 'B', 3);
  /* A runs out at once: the chain returns to fetch its replacement */
  pull_visits (h, order);
  fail_unless_equals_string (order->str, "A0");
  fail_unless_equals_int (slides_in_pool (h), 1);

  /* C takes A's slot, so B (next in the rotation) comes first */
  push_plan (h, 'C', 2);
  pull_visits (h, order);
  fail_unless_equals_string (order->str, "A0|B0|C0|B1|C1");
  fail_unless_equals_int (slides_in_pool (h), 1);

  push_plan (h, 'E', 1);
  pull_visits (h, order);
  fail_unless_equals_string (order->str, "A0|B0|C0|B1|C1|B2");
  fail_unless_equals_int (slides_in_pool (h), 1);

  g_string_free (order, TRUE);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_eos_drains_pool)
{
  GstHarness *h = new_interleave (8, 2);
  GString *order = g_string_new (NULL);
  GstEvent *event;
  gboolean saw_eos = FALSE;

  push_plan (h, 'A', 3);
  push_plan (h, 'B', 1);
  push_plan (h, 'C', 0);        /* empty plans never enter the pool */
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  fail_unless_equals_int (slides_in_pool (h), 2);

  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  /* buffers are queued before EOS reaches the harness */
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 3);
  pull_visits (h, order);
  fail_unless_equals_string (order->str, "A0 A1|B0|A2");

  while ((event = gst_harness_try_pull_event (h)) != NULL) {
    if (GST_EVENT_TYPE (event) == GST_EVENT_EOS)
      saw_eos = TRUE;
    gst_event_unref (event);
  }
  fail_unless (saw_eos);

  g_string_free (order, TRUE);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_sequence_contiguous)
{
  static const guint sizes[] = { 7, 1, 12, 3, 9, 4, 4, 15, 2, 6 };
  GstHarness *h = new_interleave (4, 3);
  guint64 expected_sequence = 0;
  gint64 next_x[128] = { 0 };
  guint total = 0, i;
  GstBuffer *buf;

  for (i = 0; i < G_N_ELEMENTS (sizes); i++) {
    push_plan (h, 'A' + i, sizes[i]);
    total += sizes[i];
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));

  while ((buf = gst_harness_try_pull (h)) != NULL) {
    GstMapInfo map;
    const WsiPatchRecord *records;
    guint n;

    fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
    records = (const WsiPatchRecord *) map.data;
    n = map.size / sizeof (WsiPatchRecord);
    fail_unless (n >= 1 && n <= 3);
    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (buf), expected_sequence);
    fail_unless_equals_uint64 (GST_BUFFER_OFFSET_END (buf),
        expected_sequence + n);
    fail_if (GST_BUFFER_PTS_IS_VALID (buf));
    for (i = 0; i < n; i++) {
      guint slide = records[i].slide_index;

      fail_unless_equals_uint64 (records[i].sequence, expected_sequence++);
      /* each slide's own order is kept, other fields untouched */
      fail_unless_equals_int64 (records[i].x, next_x[slide]++);
      fail_unless_equals_int64 (records[i].y, 1000 + records[i].x);
      fail_unless_equals_int (records[i].out_size, 256);
      fail_unless_equals_int (records[i].slide_index,
          records[0].slide_index);
    }
    gst_buffer_unmap (buf, &map);
    gst_buffer_unref (buf);
  }
  fail_unless_equals_uint64 (expected_sequence, total);
  for (i = 0; i < G_N_ELEMENTS (sizes); i++)
    fail_unless_equals_int64 (next_x['A' + i], sizes[i]);

  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_pool_size_one_is_passthrough_order)
{
  GstHarness *h = new_interleave (1, 2);
  GString *order = g_string_new (NULL);

  push_plan (h, 'A', 3);
  /* a pool of one is full at once: the whole plan leaves before the next */
  pull_visits (h, order);
  fail_unless_equals_string (order->str, "A0 A1|A2");
  fail_unless_equals_int (slides_in_pool (h), 0);
  push_plan (h, 'B', 2);
  push_plan (h, 'C', 5);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  pull_visits (h, order);
  fail_unless_equals_string (order->str, "A0 A1|A2|B0 B1|C0 C1|C2 C3|C4");

  g_string_free (order, TRUE);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_slide_meta_on_each_output)
{
  GstHarness *h = new_interleave (3, 2);
  GstBuffer *buf;
  guint n_buffers = 0;

  push_plan (h, 'A', 3);
  push_plan (h, 'B', 5);
  push_plan (h, 'C', 1);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));

  while ((buf = gst_harness_try_pull (h)) != NULL) {
    GstStructure *meta = wsi_slide_meta_get (buf);
    WsiPatchRecord head;
    gchar *path, *label;
    guint index;

    fail_unless (meta != NULL);
    fail_unless_equals_int (gst_buffer_extract (buf, 0, &head,
            sizeof head), sizeof head);
    path = g_strdup_printf ("/slides/%c.svs", (gchar) head.slide_index);
    label = g_strdup_printf ("label-%c", (gchar) head.slide_index);
    fail_unless_equals_string (gst_structure_get_string (meta, "path"), path);
    fail_unless_equals_string (gst_structure_get_string (meta, "label"),
        label);
    fail_unless (gst_structure_get_uint (meta, "index", &index));
    fail_unless_equals_int (index, head.slide_index);
    g_free (path);
    g_free (label);
    gst_buffer_unref (buf);
    n_buffers++;
  }
  /* A: 2+1, B: 2+2+1, C: 1 */
  fail_unless_equals_int (n_buffers, 6);

  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_flush_discards_pool)
{
  GstHarness *h = new_interleave (3, 2);
  GString *order = g_string_new (NULL);
  GstSegment segment;
  GstBuffer *buf;

  push_plan (h, 'A', 2);
  push_plan (h, 'B', 2);
  fail_unless_equals_int (slides_in_pool (h), 2);

  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  fail_unless_equals_int (slides_in_pool (h), 0);
  gst_segment_init (&segment, GST_FORMAT_BYTES);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));

  push_plan (h, 'C', 3);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  buf = gst_harness_pull (h);
  /* numbering restarts after a flush */
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (buf), 0);
  gst_buffer_unref (buf);
  pull_visits (h, order);
  fail_unless_equals_string (order->str, "C2");

  g_string_free (order, TRUE);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_bad_plan_size_is_an_error)
{
  GstHarness *h = new_interleave (2, 2);
  GstBuffer *plan = make_plan ('A', 2);

  gst_buffer_resize (plan, 0, sizeof (WsiPatchRecord) + 10);
  fail_unless_equals_int (gst_harness_push (h, plan), GST_FLOW_ERROR);
  fail_unless_equals_int (slides_in_pool (h), 0);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_bad_property_refused)
{
  GstElement *e = gst_element_factory_make ("patchinterleave", NULL);
  guint value;

  fail_unless (e != NULL);
  /* outside the range: the value kept, no start (wsirefusal.h) */
  g_object_set (e, "pool-size", 0, NULL);
  g_object_set (e, "patches-per-visit", 65537, NULL);
  g_object_get (e, "pool-size", &value, NULL);
  fail_unless_equals_int (value, 8);
  g_object_get (e, "patches-per-visit", &value, NULL);
  fail_unless_equals_int (value, 4);
  wsi_test_assert_refuses_start (e, GST_STATE_READY, "pool-size=\"0\"");
  wsi_test_assert_refuses_start (e, GST_STATE_READY,
      "patches-per-visit=\"65537\"");
  /* accepted values forget the refusals: it starts */
  g_object_set (e, "pool-size", 8, "patches-per-visit", 4, NULL);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_object_unref (e);
}

GST_END_TEST;

/* Runs appsrc ! patchinterleave ! appsink to EOS and returns the records
 * that reached the sink. */
static guint
run_pipeline_once (GstElement * pipeline, gboolean stop_early)
{
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg;
  guint records = 0;
  gchar name;

  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_PLAYING),
      GST_STATE_CHANGE_ASYNC);
  for (name = 'A'; name < 'A' + 5; name++)
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src),
            make_plan (name, 3)), GST_FLOW_OK);

  if (!stop_early) {
    GstSample *sample;

    gst_app_src_end_of_stream (GST_APP_SRC (src));
    msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless (msg != NULL);
    fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
    gst_message_unref (msg);
    while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), 0))) {
      records += gst_buffer_get_size (gst_sample_get_buffer (sample)) /
          sizeof (WsiPatchRecord);
      gst_sample_unref (sample);
    }
  }
  /* stopping with slides still pooled must neither hang nor leak */
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);

  gst_object_unref (bus);
  gst_object_unref (src);
  gst_object_unref (sink);
  return records;
}

GST_START_TEST (test_null_playing_null_repeated)
{
  GstElement *pipeline = gst_parse_launch ("appsrc name=src format=bytes "
      "caps=" WSI_PATCHES_MEDIA_TYPE " ! patchinterleave pool-size=8 "
      "patches-per-visit=2 name=mix ! appsink name=sink sync=false "
      "wait-on-eos=false", NULL);
  GstElement *mix;
  guint round, n_pooled;

  fail_unless (pipeline != NULL);
  mix = gst_bin_get_by_name (GST_BIN (pipeline), "mix");
  for (round = 0; round < 3; round++) {
    fail_unless_equals_int (run_pipeline_once (pipeline, FALSE), 15);
    run_pipeline_once (pipeline, TRUE);
    g_object_get (mix, "slides-in-pool", &n_pooled, NULL);
    fail_unless_equals_int (n_pooled, 0);
  }
  gst_object_unref (mix);
  gst_object_unref (pipeline);
}

GST_END_TEST;

/* Runs plans A(4) and B(4) through pool 2, 2 per visit, with @skip, and
 * returns the output as "A3@5 ..." (record@sequence) per buffer. */
static gchar *
interleave_with_skip (guint64 skip, guint64 * first_offset)
{
  GstHarness *h = new_interleave (2, 2);
  GString *out = g_string_new (NULL);
  GstBuffer *buf;

  g_object_set (h->element, "skip-patches", skip, NULL);
  push_plan (h, 'A', 4);
  push_plan (h, 'B', 4);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  *first_offset = G_MAXUINT64;
  while ((buf = gst_harness_try_pull (h)) != NULL) {
    GstMapInfo map;
    const WsiPatchRecord *r;
    guint i, n;

    fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
    r = (const WsiPatchRecord *) map.data;
    n = map.size / sizeof (WsiPatchRecord);
    fail_unless (n > 0, "an empty buffer was pushed");
    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (buf), r[0].sequence);
    if (*first_offset == G_MAXUINT64)
      *first_offset = GST_BUFFER_OFFSET (buf);
    if (out->len > 0)
      g_string_append_c (out, '|');
    for (i = 0; i < n; i++)
      g_string_append_printf (out, "%s%c%" G_GINT64_FORMAT "@%"
          G_GUINT64_FORMAT, i ? " " : "", (gchar) r[i].slide_index, r[i].x,
          r[i].sequence);
    gst_buffer_unmap (buf, &map);
    gst_buffer_unref (buf);
  }
  gst_harness_teardown (h);
  return g_string_free (out, FALSE);
}

/* Resume: records below skip-patches are dropped after the renumbering,
 * so the output is the tail of the full stream, numbers included, and a
 * visit cut in the middle keeps its last records. */
GST_START_TEST (test_skip_patches_resumes_tail)
{
  guint64 offset;
  gchar *full = interleave_with_skip (0, &offset);
  gchar *tail;

  fail_unless_equals_string (full,
      "A0@0 A1@1|B0@2 B1@3|A2@4 A3@5|B2@6 B3@7");
  fail_unless_equals_uint64 (offset, 0);
  tail = interleave_with_skip (5, &offset);
  fail_unless_equals_string (tail, "A3@5|B2@6 B3@7");
  fail_unless_equals_uint64 (offset, 5);
  g_free (tail);
  tail = interleave_with_skip (100, &offset);
  fail_unless_equals_string (tail, "");
  g_free (tail);
  g_free (full);
}

GST_END_TEST;

GST_START_TEST (test_skip_patches_property)
{
  GstElement *e = gst_element_factory_make ("patchinterleave", NULL);
  guint64 skip;

  g_object_get (e, "skip-patches", &skip, NULL);
  fail_unless_equals_uint64 (skip, 0);
  g_object_set (e, "skip-patches", G_GUINT64_CONSTANT (6400), NULL);
  g_object_get (e, "skip-patches", &skip, NULL);
  fail_unless_equals_uint64 (skip, 6400);
  gst_object_unref (e);
}

GST_END_TEST;

/* wsislidesrc's prepare-ahead=-1 asks for the pool size: the query goes
 * down through a queue and patchsampler and patchinterleave answers it. */
GST_START_TEST (test_pool_size_query)
{
  GstElement *bin = gst_parse_launch ("queue name=q ! patchsampler ! "
      "patchinterleave pool-size=5 ! fakesink async=false", NULL);
  GstElement *queue;
  GstPad *sinkpad;
  GstQuery *query;
  guint pool_size = 0;

  fail_unless (bin != NULL);
  fail_unless (gst_element_set_state (bin, GST_STATE_PAUSED) !=
      GST_STATE_CHANGE_FAILURE);
  queue = gst_bin_get_by_name (GST_BIN (bin), "q");
  sinkpad = gst_element_get_static_pad (queue, "sink");
  query = wsi_query_new_pool_size ();
  fail_unless (gst_pad_query (sinkpad, query));
  fail_unless (wsi_query_parse_pool_size (query, &pool_size));
  fail_unless_equals_int (pool_size, 5);
  gst_query_unref (query);
  gst_object_unref (sinkpad);
  gst_object_unref (queue);
  gst_element_set_state (bin, GST_STATE_NULL);
  gst_object_unref (bin);
}

GST_END_TEST;

static Suite *
patchinterleave_suite (void)
{
  Suite *s = suite_create ("patchinterleave");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_round_robin_order);
  tcase_add_test (tc, test_exhausted_slide_replaced_in_its_slot);
  tcase_add_test (tc, test_eos_drains_pool);
  tcase_add_test (tc, test_sequence_contiguous);
  tcase_add_test (tc, test_pool_size_one_is_passthrough_order);
  tcase_add_test (tc, test_slide_meta_on_each_output);
  tcase_add_test (tc, test_flush_discards_pool);
  tcase_add_test (tc, test_bad_plan_size_is_an_error);
  tcase_add_test (tc, test_bad_property_refused);
  tcase_add_test (tc, test_null_playing_null_repeated);
  tcase_add_test (tc, test_skip_patches_resumes_tail);
  tcase_add_test (tc, test_skip_patches_property);
  tcase_add_test (tc, test_pool_size_query);
  return s;
}

GST_CHECK_MAIN (patchinterleave);
