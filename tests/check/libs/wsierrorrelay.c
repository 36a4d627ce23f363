/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* The error relay (wsierrorrelay.h), through a real element of ours
 * (patchinterleave, whose post_message() watches): an ERROR posted while no
 * loop runs the default main context is posted again, marked, once a loop
 * iterates it; not when a loop already ran, not after the application
 * changed the pipeline's state, not when the element is gone. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <gst/wsi/wsierrorrelay.h>

static GstElement *
pipeline_with_interleave (GstElement ** element)
{
  GstElement *pipeline = gst_pipeline_new (NULL);

  *element = gst_element_factory_make ("patchinterleave", NULL);
  fail_unless (*element != NULL, "patchinterleave is not available");
  gst_bin_add (GST_BIN (pipeline), *element);
  return pipeline;
}

static void
post_error (GstElement * element)
{
  GError *error = g_error_new_literal (GST_STREAM_ERROR,
      GST_STREAM_ERROR_FAILED, "no patch at all");

  gst_element_post_message (element,
      gst_message_new_error (GST_OBJECT (element), error, "debug text"));
  g_error_free (error);
}

/* Every source ready on the default context runs once, as a loop's first
 * iterations would. */
static void
iterate_default_context (void)
{
  while (g_main_context_iteration (NULL, FALSE));
}

/* The ERRORs queued on @bus, in order; each is checked to be ours. */
static guint
count_errors (GstBus * bus, guint * relayed)
{
  GstMessage *message;
  guint errors = 0;

  *relayed = 0;
  while ((message = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR))) {
    const GstStructure *details = NULL;
    GError *error = NULL;
    gboolean marked = FALSE;

    gst_message_parse_error (message, &error, NULL);
    fail_unless_equals_string (error->message, "no patch at all");
    gst_message_parse_error_details (message, &details);
    if (details != NULL
        && gst_structure_get_boolean (details, WSI_ERROR_RELAY_FIELD,
            &marked) && marked)
      (*relayed)++;
    g_error_free (error);
    gst_message_unref (message);
    errors++;
  }
  return errors;
}

GST_START_TEST (test_relayed_once_when_the_loop_starts_late)
{
  GstElement *element;
  GstElement *pipeline = pipeline_with_interleave (&element);
  GstBus *bus = gst_element_get_bus (pipeline);
  guint relayed;

  post_error (element);
  /* at once, as before: the application that reads its bus sees it */
  fail_unless_equals_int (count_errors (bus, &relayed), 1);
  fail_unless_equals_int (relayed, 0);
  /* its loop starts: the error comes again, marked, once */
  iterate_default_context ();
  fail_unless_equals_int (count_errors (bus, &relayed), 1);
  fail_unless_equals_int (relayed, 1);
  iterate_default_context ();
  fail_unless_equals_int (count_errors (bus, &relayed), 0);

  gst_object_unref (bus);
  gst_object_unref (pipeline);
}

GST_END_TEST;

GST_START_TEST (test_not_relayed_after_a_state_change)
{
  GstElement *element;
  GstElement *pipeline = pipeline_with_interleave (&element);
  GstBus *bus = gst_element_get_bus (pipeline);
  guint relayed;

  post_error (element);
  fail_unless_equals_int (count_errors (bus, &relayed), 1);
  /* the application reacted: the copy is stale */
  fail_unless (gst_element_set_state (pipeline, GST_STATE_READY)
      == GST_STATE_CHANGE_SUCCESS);
  iterate_default_context ();
  fail_unless_equals_int (count_errors (bus, &relayed), 0);

  fail_unless (gst_element_set_state (pipeline, GST_STATE_NULL)
      == GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
}

GST_END_TEST;

GST_START_TEST (test_not_relayed_when_the_element_is_gone)
{
  GstElement *element;
  GstElement *pipeline = pipeline_with_interleave (&element);

  post_error (element);
  gst_object_unref (pipeline);
  /* nothing to post to, nothing freed twice (valgrind, ASan) */
  iterate_default_context ();
}

GST_END_TEST;

static gpointer
run_loop (gpointer loop)
{
  g_main_loop_run (loop);
  return NULL;
}

static gboolean
loop_is_running (gpointer started)
{
  g_mutex_lock (&check_mutex);
  *(gboolean *) started = TRUE;
  g_cond_signal (&check_cond);
  g_mutex_unlock (&check_mutex);
  return G_SOURCE_REMOVE;
}

GST_START_TEST (test_not_relayed_while_a_loop_runs)
{
  GstElement *element;
  GstElement *pipeline = pipeline_with_interleave (&element);
  GstBus *bus = gst_element_get_bus (pipeline);
  GMainLoop *loop = g_main_loop_new (NULL, FALSE);
  gboolean started = FALSE;
  GThread *thread;
  guint relayed;

  /* a loop runs the default context in another thread, as an
   * application's main thread does once it is past g_main_loop_run() */
  g_idle_add (loop_is_running, &started);
  thread = g_thread_new ("loop", run_loop, loop);
  g_mutex_lock (&check_mutex);
  while (!started)
    g_cond_wait (&check_cond, &check_mutex);
  g_mutex_unlock (&check_mutex);

  post_error (element);
  g_main_loop_quit (loop);
  g_thread_join (thread);
  iterate_default_context ();
  /* once: its quit was not lost, no copy is needed */
  fail_unless_equals_int (count_errors (bus, &relayed), 1);
  fail_unless_equals_int (relayed, 0);

  g_main_loop_unref (loop);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
}

GST_END_TEST;

/* Bytes from a file in a message (a damaged store's header, a Latin-1
 * name): every ERROR, WARNING and INFO an element of ours posts reaches
 * the bus as valid UTF-8, the bytes escaped (PyGObject raised
 * UnicodeDecodeError on such a warning and lost the stream). */
GST_START_TEST (test_message_text_made_utf8)
{
  GstElement *element;
  GstElement *pipeline = pipeline_with_interleave (&element);
  GstBus *bus = gst_element_get_bus (pipeline);
  const GstMessageType types[] = { GST_MESSAGE_WARNING, GST_MESSAGE_ERROR,
    GST_MESSAGE_INFO
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (types); i++) {
    GError *error = g_error_new_literal (GST_STREAM_ERROR,
        GST_STREAM_ERROR_FAILED, "holds raw R\xad\xff patches");
    /* (GStreamer refuses a debug string that is not UTF-8 itself) */
    const gchar *debug = "shard 1";
    GstMessage *message;
    GError *parsed = NULL;
    gchar *parsed_debug = NULL;

    message = types[i] == GST_MESSAGE_WARNING ?
        gst_message_new_warning (GST_OBJECT (element), error, debug) :
        types[i] == GST_MESSAGE_ERROR ?
        gst_message_new_error (GST_OBJECT (element), error, debug) :
        gst_message_new_info (GST_OBJECT (element), error, debug);
    gst_element_post_message (element, message);
    g_error_free (error);

    message = gst_bus_pop_filtered (bus, types[i]);
    fail_unless (message != NULL);
    if (types[i] == GST_MESSAGE_WARNING)
      gst_message_parse_warning (message, &parsed, &parsed_debug);
    else if (types[i] == GST_MESSAGE_ERROR)
      gst_message_parse_error (message, &parsed, &parsed_debug);
    else
      gst_message_parse_info (message, &parsed, &parsed_debug);
    fail_unless_equals_string (parsed->message,
        "holds raw R\\xAD\\xFF patches");
    fail_unless_equals_string (parsed_debug, "shard 1");
    fail_unless_equals_int (parsed->code, GST_STREAM_ERROR_FAILED);
    g_error_free (parsed);
    g_free (parsed_debug);
    gst_message_unref (message);
  }
  iterate_default_context ();   /* the ERROR's relay copy, if any */
  gst_object_unref (bus);
  gst_object_unref (pipeline);
}

GST_END_TEST;

static Suite *
wsierrorrelay_suite (void)
{
  Suite *s = suite_create ("wsierrorrelay");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_relayed_once_when_the_loop_starts_late);
  tcase_add_test (tc, test_not_relayed_after_a_state_change);
  tcase_add_test (tc, test_not_relayed_when_the_element_is_gone);
  tcase_add_test (tc, test_message_text_made_utf8);
  tcase_add_test (tc, test_not_relayed_while_a_loop_runs);
  return s;
}

GST_CHECK_MAIN (wsierrorrelay);
