/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* The ordered worker pool (wsiorderedpool.h) on bare pads: results and
 * events leave in queue order at any thread count whatever order the
 * workers finish in, dropped items are skipped, a run of done items is
 * handed to the task in one wake-up (one buffer list), and flushing,
 * downstream errors and EOS behave as the header says. Each item's buffer
 * holds its index; the sink records what arrives and how. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <gst/wsi/wsiorderedpool.h>

#define DROP_EVERY 17           /* items with index % 17 == 16 are dropped */

typedef struct
{
  guint index;
  guint delay_us;
} Work;

typedef struct
{
  GMutex lock;
  GCond cond;
  GArray *seen;                 /* guint indices, in arrival order */
  GArray *pushes;               /* guint buffers per push (a list or one) */
  GArray *finished;             /* guint indices in finish() order */
  gint marker_at;               /* seen->len when the custom event came */
  gboolean eos;
  gint fail_at;                 /* index whose push returns fail_flow */
  GstFlowReturn fail_flow;
  gboolean gate_closed;         /* process() waits while set */
} Sink;

static Sink sink;
static GstPad *srcpad, *sinkpad;

static GstBuffer *
process (gpointer data, gpointer state, gpointer user_data)
{
  Work *work = data;

  if (work->delay_us > 0)
    g_usleep (work->delay_us);
  g_mutex_lock (&sink.lock);
  while (sink.gate_closed)
    g_cond_wait (&sink.cond, &sink.lock);
  g_mutex_unlock (&sink.lock);
  if (work->index % DROP_EVERY == DROP_EVERY - 1)
    return NULL;
  return gst_buffer_new_memdup (&work->index, sizeof (work->index));
}

static GstBuffer *
finish (gpointer data, GstBuffer * result, gpointer user_data)
{
  Work *work = data;

  g_mutex_lock (&sink.lock);
  g_array_append_val (sink.finished, work->index);
  g_mutex_unlock (&sink.lock);
  return result;
}

/* Records one buffer; the flow the sink answers for it. */
static GstFlowReturn
record (GstBuffer * buffer)
{
  guint index = G_MAXUINT;
  GstFlowReturn ret = GST_FLOW_OK;

  gst_buffer_extract (buffer, 0, &index, sizeof (index));
  g_array_append_val (sink.seen, index);
  if (sink.fail_at >= 0 && index == (guint) sink.fail_at)
    ret = sink.fail_flow;
  return ret;
}

static GstFlowReturn
sink_chain (GstPad * pad, GstObject * parent, GstBuffer * buffer)
{
  GstFlowReturn ret;
  guint one = 1;

  g_mutex_lock (&sink.lock);
  g_array_append_val (sink.pushes, one);
  ret = record (buffer);
  g_cond_broadcast (&sink.cond);
  g_mutex_unlock (&sink.lock);
  gst_buffer_unref (buffer);
  return ret;
}

static GstFlowReturn
sink_chain_list (GstPad * pad, GstObject * parent, GstBufferList * list)
{
  GstFlowReturn ret = GST_FLOW_OK;
  guint i, n = gst_buffer_list_length (list);

  g_mutex_lock (&sink.lock);
  g_array_append_val (sink.pushes, n);
  for (i = 0; i < n && ret == GST_FLOW_OK; i++)
    ret = record (gst_buffer_list_get (list, i));
  g_cond_broadcast (&sink.cond);
  g_mutex_unlock (&sink.lock);
  gst_buffer_list_unref (list);
  return ret;
}

static gboolean
sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  g_mutex_lock (&sink.lock);
  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS)
    sink.eos = TRUE;
  else if (GST_EVENT_TYPE (event) == GST_EVENT_CUSTOM_DOWNSTREAM)
    sink.marker_at = sink.seen->len;
  g_cond_broadcast (&sink.cond);
  g_mutex_unlock (&sink.lock);
  gst_event_unref (event);
  return TRUE;
}

static void
sink_reset (void)
{
  g_mutex_lock (&sink.lock);
  g_array_set_size (sink.seen, 0);
  g_array_set_size (sink.pushes, 0);
  g_array_set_size (sink.finished, 0);
  sink.marker_at = -1;
  sink.eos = FALSE;
  sink.fail_at = -1;
  sink.gate_closed = FALSE;
  g_mutex_unlock (&sink.lock);
}

static void
set_gate (gboolean closed)
{
  g_mutex_lock (&sink.lock);
  sink.gate_closed = closed;
  g_cond_broadcast (&sink.cond);
  g_mutex_unlock (&sink.lock);
}

static void
setup (void)
{
  g_mutex_init (&sink.lock);
  g_cond_init (&sink.cond);
  sink.seen = g_array_new (FALSE, FALSE, sizeof (guint));
  sink.pushes = g_array_new (FALSE, FALSE, sizeof (guint));
  sink.finished = g_array_new (FALSE, FALSE, sizeof (guint));
  sink_reset ();
  srcpad = gst_pad_new ("src", GST_PAD_SRC);
  sinkpad = gst_pad_new ("sink", GST_PAD_SINK);
  gst_pad_set_chain_function (sinkpad, sink_chain);
  gst_pad_set_chain_list_function (sinkpad, sink_chain_list);
  gst_pad_set_event_function (sinkpad, sink_event);
  fail_unless (gst_pad_link (srcpad, sinkpad) == GST_PAD_LINK_OK);
  gst_pad_set_active (sinkpad, TRUE);
  gst_pad_set_active (srcpad, TRUE);
}

static void
teardown (void)
{
  gst_pad_set_active (srcpad, FALSE);
  gst_pad_set_active (sinkpad, FALSE);
  gst_object_unref (srcpad);
  gst_object_unref (sinkpad);
  g_array_free (sink.seen, TRUE);
  g_array_free (sink.pushes, TRUE);
  g_array_free (sink.finished, TRUE);
  g_mutex_clear (&sink.lock);
  g_cond_clear (&sink.cond);
}

static WsiOrderedPool *
pool_start (guint threads, gboolean lists)
{
  WsiOrderedPoolFuncs funcs = { NULL, };
  WsiOrderedPool *pool;
  GstSegment segment;

  funcs.process = process;
  funcs.finish = finish;
  pool = wsi_ordered_pool_new (srcpad, sizeof (Work), &funcs, NULL);
  wsi_ordered_pool_set_push_lists (pool, lists);
  wsi_ordered_pool_start_workers (pool, threads, "testpool");
  fail_unless (wsi_ordered_pool_start_task (pool));
  gst_segment_init (&segment, GST_FORMAT_BYTES);
  fail_unless_equals_int (wsi_ordered_pool_queue_event (pool,
          gst_event_new_stream_start ("pool")), GST_FLOW_OK);
  fail_unless_equals_int (wsi_ordered_pool_queue_event (pool,
          gst_event_new_caps (gst_caps_new_empty_simple ("x-test"))),
      GST_FLOW_OK);
  fail_unless_equals_int (wsi_ordered_pool_queue_event (pool,
          gst_event_new_segment (&segment)), GST_FLOW_OK);
  /* the ring is empty again: tests that hold items at the gate count on
   * its 8 slots */
  fail_unless_equals_int (wsi_ordered_pool_drain (pool), GST_FLOW_OK);
  return pool;
}

static void
pool_stop (WsiOrderedPool * pool)
{
  wsi_ordered_pool_set_flushing (pool);
  wsi_ordered_pool_stop_task (pool);
  wsi_ordered_pool_stop_workers (pool);
  wsi_ordered_pool_free (pool);
}

static GstFlowReturn
queue_item (WsiOrderedPool * pool, guint index, guint delay_us)
{
  Work work = { index, delay_us };

  return wsi_ordered_pool_queue_work (pool, &work);
}

static void
wait_eos (void)
{
  gint64 deadline = g_get_monotonic_time () + 30 * G_TIME_SPAN_SECOND;

  g_mutex_lock (&sink.lock);
  while (!sink.eos && g_cond_wait_until (&sink.cond, &sink.lock, deadline));
  fail_unless (sink.eos, "no EOS within 30 s (seen %u)", sink.seen->len);
  g_mutex_unlock (&sink.lock);
}

#define N_ITEMS 400
#define MARKER_BEFORE 200

/* Random delays make the workers finish out of order; the stream is the
 * same at 1 to 4 threads, with and without buffer lists. */
GST_START_TEST (test_order_any_threads)
{
  guint threads, lists, i, expected_before_marker = 0;
  GArray *expected = g_array_new (FALSE, FALSE, sizeof (guint));

  for (i = 0; i < N_ITEMS; i++)
    if (i % DROP_EVERY != DROP_EVERY - 1) {
      g_array_append_val (expected, i);
      if (i < MARKER_BEFORE)
        expected_before_marker++;
    }
  for (lists = 0; lists < 2; lists++) {
    for (threads = 1; threads <= 4; threads++) {
      GRand *rand = g_rand_new_with_seed (threads);
      WsiOrderedPool *pool;

      sink_reset ();
      pool = pool_start (threads, lists);
      for (i = 0; i < N_ITEMS; i++) {
        if (i == MARKER_BEFORE)
          fail_unless_equals_int (wsi_ordered_pool_queue_event (pool,
                  gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
                      gst_structure_new_empty ("marker"))), GST_FLOW_OK);
        fail_unless_equals_int (queue_item (pool, i,
                g_rand_int_range (rand, 0, 300)), GST_FLOW_OK);
      }
      fail_unless_equals_int (wsi_ordered_pool_queue_event (pool,
              gst_event_new_eos ()), GST_FLOW_OK);
      fail_unless_equals_int (wsi_ordered_pool_drain (pool), GST_FLOW_OK);
      wait_eos ();

      fail_unless_equals_int (sink.seen->len, expected->len);
      fail_unless (memcmp (sink.seen->data, expected->data,
              expected->len * sizeof (guint)) == 0,
          "order differs at %u threads (lists %u)", threads, lists);
      fail_unless_equals_int (sink.marker_at, expected_before_marker);
      /* finish runs on the task in queue order, dropped items too */
      fail_unless_equals_int (sink.finished->len, N_ITEMS);
      for (i = 0; i < N_ITEMS; i++)
        fail_unless_equals_int (g_array_index (sink.finished, guint, i), i);
      pool_stop (pool);
      g_rand_free (rand);
    }
  }
  g_array_free (expected, TRUE);
}

GST_END_TEST;

/* Eight items (the ring at 2 threads) held at a gate, then let go in any
 * order: the task is woken for a run of at least half the ring, not for
 * each item, and pushes the run as one buffer list; the rest follows once
 * everything is done. Before runs were handed over, the first push was a
 * single buffer. */
GST_START_TEST (test_run_handover)
{
  WsiOrderedPool *pool = pool_start (2, TRUE);
  guint i, total = 0;

  set_gate (TRUE);
  for (i = 0; i < 8; i++)
    fail_unless_equals_int (queue_item (pool, i, 0), GST_FLOW_OK);
  set_gate (FALSE);
  fail_unless_equals_int (wsi_ordered_pool_queue_event (pool,
          gst_event_new_eos ()), GST_FLOW_OK);
  wait_eos ();

  fail_unless_equals_int (sink.seen->len, 8);
  for (i = 0; i < 8; i++)
    fail_unless_equals_int (g_array_index (sink.seen, guint, i), i);
  fail_unless (sink.pushes->len >= 1 && sink.pushes->len <= 2,
      "%u pushes for 8 items", sink.pushes->len);
  fail_unless (g_array_index (sink.pushes, guint, 0) >= 4,
      "the first push carried %u buffers",
      g_array_index (sink.pushes, guint, 0));
  for (i = 0; i < sink.pushes->len; i++)
    total += g_array_index (sink.pushes, guint, i);
  fail_unless_equals_int (total, 8);
  pool_stop (pool);
}

GST_END_TEST;

/* A producer that waits for each result before it queues the next (one
 * item in flight) still gets every result: a lone done item is a run. */
GST_START_TEST (test_lone_item_is_pushed)
{
  WsiOrderedPool *pool = pool_start (3, TRUE);
  guint i;

  for (i = 0; i < 5; i++) {
    gint64 deadline = g_get_monotonic_time () + 30 * G_TIME_SPAN_SECOND;

    fail_unless_equals_int (queue_item (pool, i, 100), GST_FLOW_OK);
    g_mutex_lock (&sink.lock);
    while (sink.seen->len < i + 1
        && g_cond_wait_until (&sink.cond, &sink.lock, deadline));
    fail_unless_equals_int (sink.seen->len, i + 1);
    g_mutex_unlock (&sink.lock);
  }
  pool_stop (pool);
}

GST_END_TEST;

/* Downstream fails at item 2 of a list: nothing after it is pushed, the
 * next queue call and drain return the flow, and since EOS was already
 * queued the task sends EOS itself. */
GST_START_TEST (test_downstream_error)
{
  guint lists;

  for (lists = 0; lists < 2; lists++) {
    WsiOrderedPool *pool;
    guint i;

    sink_reset ();
    pool = pool_start (2, lists);
    sink.fail_at = 2;
    sink.fail_flow = GST_FLOW_ERROR;
    set_gate (TRUE);
    for (i = 0; i < 6; i++)
      fail_unless_equals_int (queue_item (pool, i, 0), GST_FLOW_OK);
    fail_unless_equals_int (wsi_ordered_pool_queue_event (pool,
            gst_event_new_eos ()), GST_FLOW_OK);
    set_gate (FALSE);
    wait_eos ();
    fail_unless_equals_int (sink.seen->len, 3);
    for (i = 0; i < 3; i++)
      fail_unless_equals_int (g_array_index (sink.seen, guint, i), i);
    fail_unless_equals_int (wsi_ordered_pool_drain (pool), GST_FLOW_ERROR);
    fail_unless_equals_int (queue_item (pool, 99, 0), GST_FLOW_ERROR);
    pool_stop (pool);
  }
}

GST_END_TEST;

/* Flushing while items are in flight: queueing returns FLUSHING, reset
 * discards them, and the stream after the flush holds only new items. */
GST_START_TEST (test_flush_discards_in_flight)
{
  WsiOrderedPool *pool = pool_start (2, TRUE);
  guint i;

  set_gate (TRUE);
  for (i = 0; i < 6; i++)
    fail_unless_equals_int (queue_item (pool, i, 0), GST_FLOW_OK);
  wsi_ordered_pool_set_flushing (pool);
  gst_pad_push_event (srcpad, gst_event_new_flush_start ());
  fail_unless_equals_int (queue_item (pool, 50, 0), GST_FLOW_FLUSHING);
  set_gate (FALSE);
  wsi_ordered_pool_pause_task (pool);
  wsi_ordered_pool_reset (pool);
  gst_pad_push_event (srcpad, gst_event_new_flush_stop (TRUE));
  fail_unless (wsi_ordered_pool_start_task (pool));

  g_mutex_lock (&sink.lock);
  fail_unless_equals_int (sink.seen->len, 0);
  g_mutex_unlock (&sink.lock);
  {
    GstSegment segment;

    gst_segment_init (&segment, GST_FORMAT_BYTES);
    wsi_ordered_pool_queue_event (pool, gst_event_new_segment (&segment));
  }
  /* 120..129: none of them is a dropped index */
  for (i = 120; i < 130; i++)
    fail_unless_equals_int (queue_item (pool, i, 50), GST_FLOW_OK);
  fail_unless_equals_int (wsi_ordered_pool_queue_event (pool,
          gst_event_new_eos ()), GST_FLOW_OK);
  wait_eos ();
  fail_unless_equals_int (sink.seen->len, 10);
  for (i = 0; i < 10; i++)
    fail_unless_equals_int (g_array_index (sink.seen, guint, i), 120 + i);
  pool_stop (pool);
}

GST_END_TEST;

static Suite *
wsiorderedpool_suite (void)
{
  Suite *s = suite_create ("wsiorderedpool");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_order_any_threads);
  tcase_add_test (tc, test_run_handover);
  tcase_add_test (tc, test_lone_item_is_pushed);
  tcase_add_test (tc, test_downstream_error);
  tcase_add_test (tc, test_flush_discards_in_flight);
  return s;
}

GST_CHECK_MAIN (wsiorderedpool);
