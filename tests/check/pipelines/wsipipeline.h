/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsipipeline.h: runs a whole pipeline ending in "appsink name=sink" to
 * EOS or error and keeps what came out, for the pipeline tests. */

#ifndef __WSI_PIPELINE_TEST_H__
#define __WSI_PIPELINE_TEST_H__

#include <gst/check/gstcheck.h>
#include <gst/app/gstappsink.h>
#include <gst/wsi/wsirecord.h>

typedef struct
{
  GPtrArray *batches;           /* GstBuffer*, in arrival order */
  GArray *records;              /* WsiPatchRecord of every patch, in order */
  GPtrArray *paths;             /* gchar*: slide path of every patch */
  GPtrArray *labels;            /* gchar*: label of every patch */
  GPtrArray *warnings;          /* gchar*: warning messages on the bus */
  gchar *error;                 /* first error message, or NULL */
  GstCaps *last_caps;
} WsiRun;

static void
wsi_run_free (WsiRun * run)
{
  g_ptr_array_unref (run->batches);
  g_array_unref (run->records);
  g_ptr_array_unref (run->paths);
  g_ptr_array_unref (run->labels);
  g_ptr_array_unref (run->warnings);
  g_free (run->error);
  if (run->last_caps)
    gst_caps_unref (run->last_caps);
  g_free (run);
}

static void
wsi_run_collect (WsiRun * run, GstSample * sample)
{
  GstBuffer *buffer = gst_sample_get_buffer (sample);
  GstStructure *meta = wsi_patch_meta_get (buffer);
  const WsiPatchRecord *records;
  guint n, i;

  /* A copy: patchbatch's pool is bounded (max-batches), so a consumer that
   * kept every batch alive would stall the stream. */
  g_ptr_array_add (run->batches, gst_buffer_copy_deep (buffer));
  gst_caps_replace (&run->last_caps, gst_sample_get_caps (sample));
  fail_unless (meta != NULL, "batch without WsiPatchMeta");
  records = wsi_patch_meta_records (meta, &n);
  g_array_append_vals (run->records, records, n);
  for (i = 0; i < n; i++) {
    g_ptr_array_add (run->paths,
        g_strdup (wsi_patch_meta_string (meta, "paths", i)));
    g_ptr_array_add (run->labels,
        g_strdup (wsi_patch_meta_string (meta, "labels", i)));
  }
}

/* Pops bus messages; returns TRUE when the run is over (EOS or error). */
static gboolean
wsi_run_poll_bus (WsiRun * run, GstBus * bus)
{
  GstMessage *msg;
  gboolean over = FALSE;

  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR |
              GST_MESSAGE_WARNING | GST_MESSAGE_EOS)) != NULL) {
    GError *err = NULL;

    switch (GST_MESSAGE_TYPE (msg)) {
      case GST_MESSAGE_ERROR:
        gst_message_parse_error (msg, &err, NULL);
        if (run->error == NULL)
          run->error = g_strdup (err->message);
        over = TRUE;
        break;
      case GST_MESSAGE_WARNING:
        gst_message_parse_warning (msg, &err, NULL);
        g_ptr_array_add (run->warnings, g_strdup (err->message));
        break;
      default:
        over = TRUE;
        break;
    }
    g_clear_error (&err);
    gst_message_unref (msg);
  }
  return over;
}

static G_GNUC_UNUSED WsiRun *
wsi_run_new (void)
{
  WsiRun *run = g_new0 (WsiRun, 1);

  run->batches = g_ptr_array_new_with_free_func (
      (GDestroyNotify) gst_buffer_unref);
  run->records = g_array_new (FALSE, FALSE, sizeof (WsiPatchRecord));
  run->paths = g_ptr_array_new_with_free_func (g_free);
  run->labels = g_ptr_array_new_with_free_func (g_free);
  run->warnings = g_ptr_array_new_with_free_func (g_free);
  return run;
}

/* One turn of the run loop after a pull that gave @sample (taken) or
 * nothing (NULL): collects it, reads the bus, and returns TRUE when the
 * run is over (EOS, an error, or @max_batches batches, 0 = no limit).
 *
 * The bus's EOS does not mean the appsink is empty: with wait-on-eos=false
 * the sink posts EOS as soon as the event arrives, samples still queued,
 * and try_pull_sample() returns NULL when its wait timed out even if the
 * samples came in the meantime. On a loaded machine the whole stream can
 * arrive between that timeout and the bus read, so at EOS the queue is
 * drained first (everything before EOS is queued by then: serialized). */
static G_GNUC_UNUSED gboolean
wsi_run_after_pull (WsiRun * run, GstAppSink * sink, GstBus * bus,
    GstSample * sample, guint max_batches)
{
  gboolean pulled = sample != NULL, over = FALSE;

  if (pulled) {
    wsi_run_collect (run, sample);
    gst_sample_unref (sample);
  } else if (gst_app_sink_is_eos (sink)) {
    over = TRUE;
  }
  if (wsi_run_poll_bus (run, bus) && !pulled) {
    while (run->error == NULL && (max_batches == 0
            || run->batches->len < max_batches)
        && (sample = gst_app_sink_try_pull_sample (sink, 0)) != NULL) {
      wsi_run_collect (run, sample);
      gst_sample_unref (sample);
    }
    over = TRUE;
  }
  if (max_batches > 0 && run->batches->len >= max_batches)
    over = TRUE;
  return over;
}

/* Called with the parsed pipeline before it plays and again once it has
 * ended (before it goes to NULL), to probe pads or read counters. */
typedef void (*WsiRunHook) (GstElement * pipeline, gpointer data);

/* Runs @description until EOS, an error, or @max_batches batches (0 = no
 * limit), calling @before and @after (either may be NULL) with the
 * pipeline. The description must end in "appsink name=sink". */
static G_GNUC_UNUSED WsiRun *
wsi_run_pipeline_hooked (const gchar * description, guint max_batches,
    WsiRunHook before, WsiRunHook after, gpointer data)
{
  WsiRun *run = wsi_run_new ();
  GError *err = NULL;
  GstElement *pipeline, *sink;
  GstBus *bus;
  gboolean over = FALSE;

  pipeline = gst_parse_launch (description, &err);
  fail_unless (pipeline != NULL && err == NULL, "cannot parse '%s': %s",
      description, err ? err->message : "?");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  fail_unless (sink != NULL);
  bus = gst_element_get_bus (pipeline);
  if (before != NULL)
    before (pipeline, data);

  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  while (!over) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        GST_SECOND / 20);

    over = wsi_run_after_pull (run, GST_APP_SINK (sink), bus, sample,
        max_batches);
  }
  /* Warnings posted just before EOS. */
  wsi_run_poll_bus (run, bus);
  if (after != NULL)
    after (pipeline, data);

  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return run;
}

/* Runs @description until EOS, an error, or @max_batches batches (0 = no
 * limit). The description must end in "appsink name=sink". */
static G_GNUC_UNUSED WsiRun *
wsi_run_pipeline (const gchar * description, guint max_batches)
{
  return wsi_run_pipeline_hooked (description, max_batches, NULL, NULL, NULL);
}

/* Fails unless both runs ended without an error, @a delivered patches,
 * and @b delivered the same records (creation times aside: created_ns says
 * when a plan was made, the only field that may vary) and the same
 * batches, byte for byte. */
static G_GNUC_UNUSED void
wsi_run_assert_same_stream (const WsiRun * a, const WsiRun * b,
    const gchar * what)
{
  guint i;

  fail_unless (a->error == NULL, "%s: reference failed: %s", what, a->error);
  fail_unless (b->error == NULL, "%s: %s", what, b->error);
  fail_unless (a->records->len > 0, "%s: no patches", what);
  fail_unless_equals_int (b->records->len, a->records->len);
  for (i = 0; i < a->records->len; i++) {
    WsiPatchRecord x = g_array_index (a->records, WsiPatchRecord, i);
    WsiPatchRecord y = g_array_index (b->records, WsiPatchRecord, i);

    x.created_ns = y.created_ns = 0;
    fail_unless (memcmp (&x, &y, sizeof (x)) == 0, "%s: record %u differs",
        what, i);
  }
  fail_unless_equals_int (b->batches->len, a->batches->len);
  for (i = 0; i < a->batches->len; i++) {
    GstBuffer *x = g_ptr_array_index (a->batches, i);
    GstBuffer *y = g_ptr_array_index (b->batches, i);
    GstMapInfo mx, my;

    fail_unless (gst_buffer_map (x, &mx, GST_MAP_READ));
    fail_unless (gst_buffer_map (y, &my, GST_MAP_READ));
    fail_unless (mx.size == my.size && memcmp (mx.data, my.data,
            mx.size) == 0, "%s: batch %u differs", what, i);
    gst_buffer_unmap (x, &mx);
    gst_buffer_unmap (y, &my);
  }
}

/* A series of runs that must all give the same stream: the first run
 * becomes *@reference (kept; the caller frees it), each later one is
 * compared with it (wsi_run_assert_same_stream) and freed. */
static G_GNUC_UNUSED void
wsi_run_same_as_first (WsiRun ** reference, WsiRun * run, const gchar * what)
{
  if (*reference == NULL) {
    *reference = run;
    return;
  }
  wsi_run_assert_same_stream (*reference, run, what);
  wsi_run_free (run);
}

/* TRUE when some warning contains every one of the NULL-terminated
 * substrings. */
static G_GNUC_UNUSED gboolean
wsi_run_has_warning (const WsiRun * run, const gchar * first, ...)
{
  guint i;

  for (i = 0; i < run->warnings->len; i++) {
    const gchar *w = g_ptr_array_index (run->warnings, i);
    const gchar *part = first;
    gboolean all = TRUE;
    va_list args;

    va_start (args, first);
    while (part != NULL && all) {
      all = strstr (w, part) != NULL;
      part = va_arg (args, const gchar *);
    }
    va_end (args);
    if (all)
      return TRUE;
  }
  return FALSE;
}

#define WSI_RECORD(run, i) (&g_array_index ((run)->records, WsiPatchRecord, (i)))

#endif /* __WSI_PIPELINE_TEST_H__ */
