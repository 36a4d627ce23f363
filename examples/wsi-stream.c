/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsi-stream: the smallest training-loop consumer. Builds the standard
 * gst-wsi pipeline ending in appsink, pulls batches, reads the per-patch
 * metadata (gst/wsi/wsirecord.h) and reports patches/s.
 *
 *   wsi-stream --location slides/ --batches 50
 *   wsi-stream --pipeline 'wsislidesrc location=a.svs ! ... ! appsink name=sink'
 */

#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>
#include <gst/wsi/wsirecord.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

typedef struct
{
  gchar *location;
  gchar *pipeline;
  gint batch_size;
  gint patch_size;
  gdouble target_mpp;
  gint threads;
  gint pool_size;
  gint patches_per_visit;
  gint patches_per_slide;
  gint batches;
  gint warmup;
  gint64 seed;
  gboolean cycle;
  gboolean quiet;
} StreamOptions;

static gchar *
build_pipeline_description (const StreamOptions * o)
{
  /* Queues are bounded by buffers: batches exceed the 10 MB byte default.
   * The first queue lets slides open (thumbnail, mask) ahead of need; the
   * second holds 4 batches of decoded patches. */
  return g_strdup_printf ("wsislidesrc location=\"%s\" cycle=%s seed=%"
      G_GINT64_FORMAT " ! tissuemask ! queue max-size-buffers=4 "
      "max-size-bytes=0 max-size-time=0 ! patchsampler patch-size=%d "
      "target-mpp=%g patches-per-slide=%d ! patchinterleave pool-size=%d "
      "patches-per-visit=%d ! patchreader threads=%d ! queue "
      "max-size-buffers=%d max-size-bytes=0 max-size-time=0 ! patchbatch "
      "batch-size=%d ! appsink name=sink sync=false max-buffers=2",
      o->location, o->cycle ? "true" : "false", o->seed, o->patch_size,
      o->target_mpp, o->patches_per_slide, o->pool_size,
      o->patches_per_visit, o->threads, 4 * o->batch_size, o->batch_size);
}

static void
print_first_patch (GstBuffer * batch)
{
  GstStructure *meta = wsi_patch_meta_get (batch);
  const WsiPatchRecord *records;
  guint n;

  if (meta == NULL) {
    g_print ("  (batch has no WsiPatchMeta)\n");
    return;
  }
  records = wsi_patch_meta_records (meta, &n);
  if (n == 0)
    return;
  g_print ("  batch %" G_GUINT64_FORMAT ": %u patches; first: %s "
      "(slide %u, cycle %u) x=%" G_GINT64_FORMAT " y=%" G_GINT64_FORMAT
      " level=%u read=%u px -> %u px at %.3f um/px, tissue %.2f, label '%s'\n",
      GST_BUFFER_OFFSET (batch), n, wsi_patch_meta_string (meta, "paths", 0),
      records[0].slide_index, records[0].cycle, records[0].x, records[0].y,
      records[0].level, records[0].read_size, records[0].out_size,
      records[0].out_mpp, records[0].tissue_fraction,
      wsi_patch_meta_string (meta, "labels", 0));
}

static int
compare_gint64 (const void *a, const void *b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return (x > y) - (x < y);
}

/* Prints the batch-time percentiles users quote and the peak RSS. */
static void
print_batch_times (GArray * intervals_us)
{
  struct rusage usage;
  gint64 *v = (gint64 *) intervals_us->data;
  guint n = intervals_us->len;

  getrusage (RUSAGE_SELF, &usage);
  if (n > 0) {
    qsort (v, n, sizeof (gint64), compare_gint64);
    g_print ("batch time p50 %.1f ms, p95 %.1f ms, max %.1f ms; ",
        v[n / 2] / 1e3, v[MIN (n - 1, (n * 95) / 100)] / 1e3, v[n - 1] / 1e3);
  }
  g_print ("peak RSS %.0f MB\n", usage.ru_maxrss / 1024.0);
}

static guint
patches_in (GstBuffer * batch)
{
  GstStructure *meta = wsi_patch_meta_get (batch);
  guint count = 0;

  if (meta != NULL)
    gst_structure_get_uint (meta, "count", &count);
  return count;
}

/* Set once an error was posted: the exit status. */
static gboolean stream_failed = FALSE;

/* Prints queued warnings and errors; returns FALSE when there was an error. */
static gboolean
report_bus (GstElement * pipeline)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg;
  gboolean ok = TRUE;

  while ((msg = gst_bus_pop_filtered (bus,
              GST_MESSAGE_ERROR | GST_MESSAGE_WARNING)) != NULL) {
    GError *err = NULL;
    gchar *debug = NULL;

    /* stdout is block-buffered in a pipe: keep what came first first */
    fflush (stdout);
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
      gst_message_parse_error (msg, &err, &debug);
      /* The first error says why; later ones are consequences. */
      if (!stream_failed)
        g_printerr ("ERROR from %s: %s\n", GST_OBJECT_NAME (msg->src),
            err->message);
      ok = FALSE;
      stream_failed = TRUE;
    } else {
      gst_message_parse_warning (msg, &err, &debug);
      g_printerr ("WARNING from %s: %s\n", GST_OBJECT_NAME (msg->src),
          err->message);
    }
    g_clear_error (&err);
    g_free (debug);
    gst_message_unref (msg);
  }
  gst_object_unref (bus);
  return ok;
}

/* Pulls batches until the count is reached, the stream ends or an error
 * is posted; prints the throughput. */
static void
consume (GstElement * pipeline, GstAppSink * sink, const StreamOptions * o)
{
  gint64 start = 0, last = 0;
  guint64 patches = 0, bytes = 0;
  gint got = 0;
  GArray *intervals_us = g_array_new (FALSE, FALSE, sizeof (gint64));

  while (o->batches <= 0 || got < o->warmup + 1 + o->batches) {
    GstSample *sample = gst_app_sink_try_pull_sample (sink, GST_SECOND / 10);
    GstBuffer *batch;

    if (sample == NULL) {
      /* No batch yet: stop at EOS or on an error, else keep waiting. */
      if (gst_app_sink_is_eos (sink) || !report_bus (pipeline))
        break;
      continue;
    }
    batch = gst_sample_get_buffer (sample);
    /* warnings (a slide skipped) when they happen, not at the end */
    report_bus (pipeline);
    if (got == o->warmup)
      start = g_get_monotonic_time ();
    if (got > o->warmup) {
      gint64 interval = g_get_monotonic_time () - last;
      g_array_append_val (intervals_us, interval);
    }
    last = g_get_monotonic_time ();
    /* The clock starts when the first measured batch arrives, so count
     * the batches after it. */
    if (got > o->warmup) {
      patches += patches_in (batch);
      bytes += gst_buffer_get_size (batch);
    }
    if (!o->quiet && (got == 0 || (got + 1) % 10 == 0))
      print_first_patch (batch);
    got++;
    gst_sample_unref (sample);
  }

  if (start > 0 && patches > 0) {
    gdouble seconds = (g_get_monotonic_time () - start) / 1e6;
    g_print ("%" G_GUINT64_FORMAT " patches in %d batches in %.2f s: "
        "%.1f patches/s, %.1f MB/s (after %d warm-up batches)\n", patches,
        got - o->warmup - 1, seconds, patches / seconds, bytes / seconds / 1e6,
        o->warmup);
  }
  print_batch_times (intervals_us);
  g_array_unref (intervals_us);
}

/* Patches read by every backend together. */
static guint64
read_stats_total (const GstStructure * stats)
{
  guint64 total = 0;
  gint i;

  for (i = 0; i < gst_structure_n_fields (stats); i++) {
    const gchar *name = gst_structure_nth_field_name (stats, i);
    guint64 n = 0;

    if (!g_str_has_prefix (name, "tile-cache-")
        && gst_structure_get_uint64 (stats, name, &n))
      total += n;
  }
  return total;
}

/* Which slide reader decoded how many patches (patchreader's read-stats),
 * and how often the decoded-tile cache already had a tile. Read once the
 * pipeline stopped, so the counts are final (the wsistats tracer reports
 * the same ones). */
static void
print_read_stats (GstElement * pipeline)
{
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (pipeline));
  GValue item = G_VALUE_INIT;

  while (gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
    GstElement *e = g_value_get_object (&item);
    GstElementFactory *f = gst_element_get_factory (e);
    GstStructure *stats = NULL;
    guint64 hits = 0, misses = 0;
    gint i;

    if (f && g_strcmp0 (GST_OBJECT_NAME (f), "patchreader") == 0)
      g_object_get (e, "read-stats", &stats, NULL);
    /* nothing read (the stream failed to start): nothing to say */
    if (stats != NULL && read_stats_total (stats) == 0)
      g_clear_pointer (&stats, gst_structure_free);
    if (stats != NULL) {
      gst_structure_get_uint64 (stats, "tile-cache-hits", &hits);
      gst_structure_get_uint64 (stats, "tile-cache-misses", &misses);
      g_print ("%s read:", GST_OBJECT_NAME (e));
      for (i = 0; i < gst_structure_n_fields (stats); i++) {
        const gchar *name = gst_structure_nth_field_name (stats, i);
        guint64 n = 0;

        /* the per-backend patch counts are the uint64 fields; "slides",
         * "failed-slides" and "remote" are nested details */
        if (g_str_has_prefix (name, "tile-cache-")
            || !gst_structure_get_uint64 (stats, name, &n))
          continue;
        g_print (" %" G_GUINT64_FORMAT " patches by the %s backend,", n, name);
      }
      g_print (" tile cache hit rate %.1f %% (%" G_GUINT64_FORMAT " of %"
          G_GUINT64_FORMAT ")\n", hits + misses ? 100.0 * hits /
          (hits + misses) : 0.0, hits, hits + misses);
      gst_structure_free (stats);
    }
    g_value_reset (&item);
  }
  g_value_unset (&item);
  gst_iterator_free (it);
}

int
main (int argc, char **argv)
{
  StreamOptions o = { NULL, NULL, 64, 256, 0.5, 0, 8, 4, 100, 50, 5, 0,
    TRUE, FALSE
  };
  gboolean finite = FALSE;
  GOptionEntry entries[] = {
    {"location", 'l', 0, G_OPTION_ARG_FILENAME, &o.location,
        "Slide, directory of slides or slide list", "PATH"},
    {"pipeline", 'p', 0, G_OPTION_ARG_STRING, &o.pipeline,
        "Whole pipeline description ending in 'appsink name=sink'", "DESC"},
    {"batch-size", 'b', 0, G_OPTION_ARG_INT, &o.batch_size,
        "Patches per batch (64)", "N"},
    {"patch-size", 's', 0, G_OPTION_ARG_INT, &o.patch_size,
        "Patch side in pixels (256)", "PX"},
    {"target-mpp", 'm', 0, G_OPTION_ARG_DOUBLE, &o.target_mpp,
        "Output microns per pixel, 0 = native (0.5)", "UM"},
    {"threads", 't', 0, G_OPTION_ARG_INT, &o.threads,
        "Reader threads, 0 = one per core (0)", "N"},
    {"pool-size", 0, 0, G_OPTION_ARG_INT, &o.pool_size,
        "Slides interleaved at once (8)", "N"},
    {"patches-per-visit", 0, 0, G_OPTION_ARG_INT, &o.patches_per_visit,
        "Patches taken from a slide per turn (4)", "N"},
    {"patches-per-slide", 0, 0, G_OPTION_ARG_INT, &o.patches_per_slide,
        "Patches planned per slide visit (100)", "N"},
    {"batches", 'n', 0, G_OPTION_ARG_INT, &o.batches,
        "Batches to measure, 0 = until EOS (50)", "N"},
    {"warmup", 'w', 0, G_OPTION_ARG_INT, &o.warmup,
        "Batches to skip before measuring (5)", "N"},
    {"seed", 0, 0, G_OPTION_ARG_INT64, &o.seed, "Stream seed (0)", "S"},
    {"finite", 0, 0, G_OPTION_ARG_NONE, &finite,
        "One pass over the slides instead of cycling", NULL},
    {"quiet", 'q', 0, G_OPTION_ARG_NONE, &o.quiet,
        "Print only the throughput", NULL},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("- stream patch batches "
      "from whole-slide images into appsink");
  GError *err = NULL;
  GstElement *pipeline, *sink;
  gchar *description;
  gboolean ok;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    g_printerr ("%s\n", err->message);
    g_error_free (err);
    g_option_context_free (ctx);
    return 2;
  }
  g_option_context_free (ctx);
  if (o.location == NULL && o.pipeline == NULL) {
    g_printerr ("Give --location or --pipeline (see --help)\n");
    return 2;
  }
  o.cycle = !finite;

  description = o.pipeline ? g_strdup (o.pipeline) :
      build_pipeline_description (&o);
  /* Only the description needs them: free them before any early return. */
  g_clear_pointer (&o.location, g_free);
  g_clear_pointer (&o.pipeline, g_free);
  if (!o.quiet)
    g_print ("pipeline: %s\n", description);
  pipeline = gst_parse_launch (description, &err);
  g_free (description);
  if (pipeline == NULL || err != NULL) {
    g_printerr ("Could not build the pipeline: %s\n",
        err ? err->message : "unknown error");
    g_clear_error (&err);
    gst_clear_object (&pipeline);
    return 1;
  }
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  if (sink == NULL || !GST_IS_APP_SINK (sink)) {
    g_printerr ("The pipeline needs an appsink named 'sink'\n");
    gst_clear_object (&sink);
    gst_object_unref (pipeline);
    return 1;
  }

  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE)
    report_bus (pipeline);
  else
    consume (pipeline, GST_APP_SINK (sink), &o);
  report_bus (pipeline);
  fflush (stdout);
  /* READY stops the reader's workers: its counts stop moving */
  gst_element_set_state (pipeline, GST_STATE_READY);
  report_bus (pipeline);
  print_read_stats (pipeline);
  ok = !stream_failed;
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return ok ? 0 : 1;
}
