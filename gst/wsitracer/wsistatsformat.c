/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsistatsformat.c: summary table and tracer records (see
 * wsistatsformat.h). */

#include "wsistatsformat.h"

#define MS(ns) ((ns) / 1e6)

static GstTracerRecord *tr_element, *tr_queue, *tr_sink, *tr_process;

/* ---- tracer records ------------------------------------------------------ */

/* Field description for a GstTracerRecord. */
static GstStructure *
record_value (GType type, const gchar * description)
{
  return gst_structure_new ("value", "type", G_TYPE_GTYPE, type,
      "description", G_TYPE_STRING, description, NULL);
}

static GstStructure *
record_element_scope (void)
{
  return gst_structure_new ("scope", "type", G_TYPE_GTYPE, G_TYPE_STRING,
      "related-to", GST_TYPE_TRACER_VALUE_SCOPE,
      GST_TRACER_VALUE_SCOPE_ELEMENT, NULL);
}

void
wsi_stats_format_init (void)
{
  /* *INDENT-OFF* */
  tr_element = gst_tracer_record_new ("wsistats-element.class",
      "element", GST_TYPE_STRUCTURE, record_element_scope (),
      "buffers-per-s", GST_TYPE_STRUCTURE, record_value (G_TYPE_DOUBLE, "buffers per second"),
      "patches-per-s", GST_TYPE_STRUCTURE, record_value (G_TYPE_DOUBLE, "patches per second (WsiPatchMeta count)"),
      "bytes-per-s", GST_TYPE_STRUCTURE, record_value (G_TYPE_DOUBLE, "bytes per second"),
      "self-count", GST_TYPE_STRUCTURE, record_value (G_TYPE_UINT64, "chain calls measured"),
      "self-p50", GST_TYPE_STRUCTURE, record_value (G_TYPE_UINT64, "self time p50, ns"),
      "self-p95", GST_TYPE_STRUCTURE, record_value (G_TYPE_UINT64, "self time p95, ns"),
      "self-p99", GST_TYPE_STRUCTURE, record_value (G_TYPE_UINT64, "self time p99, ns"),
      "self-max", GST_TYPE_STRUCTURE, record_value (G_TYPE_UINT64, "self time max, ns"),
      "loop-p50", GST_TYPE_STRUCTURE, record_value (G_TYPE_UINT64, "time between pushes on own thread p50, ns"),
      "loop-p95", GST_TYPE_STRUCTURE, record_value (G_TYPE_UINT64, "time between pushes on own thread p95, ns"),
      "age-p50", GST_TYPE_STRUCTURE, record_value (G_TYPE_UINT64, "patch age at input p50, ns"),
      "age-p95", GST_TYPE_STRUCTURE, record_value (G_TYPE_UINT64, "patch age at input p95, ns"),
      NULL);
  tr_queue = gst_tracer_record_new ("wsistats-queue.class",
      "element", GST_TYPE_STRUCTURE, record_element_scope (),
      "level-p50", GST_TYPE_STRUCTURE, record_value (G_TYPE_UINT64, "buffers queued p50"),
      "level-p95", GST_TYPE_STRUCTURE, record_value (G_TYPE_UINT64, "buffers queued p95"),
      "level-max", GST_TYPE_STRUCTURE, record_value (G_TYPE_UINT64, "buffers queued max"),
      "empty-share", GST_TYPE_STRUCTURE, record_value (G_TYPE_DOUBLE, "share of samples with the queue empty"),
      "full-share", GST_TYPE_STRUCTURE, record_value (G_TYPE_DOUBLE, "share of samples with the queue full"),
      NULL);
  tr_sink = gst_tracer_record_new ("wsistats-sink.class",
      "element", GST_TYPE_STRUCTURE, record_element_scope (),
      "interval-p50", GST_TYPE_STRUCTURE, record_value (G_TYPE_UINT64, "time between batches p50, ns"),
      "interval-p95", GST_TYPE_STRUCTURE, record_value (G_TYPE_UINT64, "time between batches p95, ns"),
      "verdict", GST_TYPE_STRUCTURE, record_value (G_TYPE_STRING, "loader-bound, trainer-bound or balanced"),
      "loader-bound", GST_TYPE_STRUCTURE, record_value (G_TYPE_DOUBLE, "share of time the sink waited for data"),
      "trainer-bound", GST_TYPE_STRUCTURE, record_value (G_TYPE_DOUBLE, "share of time the pipeline waited for the sink"),
      NULL);
  tr_process = gst_tracer_record_new ("wsistats-process.class",
      "peak-rss-kb", GST_TYPE_STRUCTURE, record_value (G_TYPE_UINT64, "peak resident memory, KiB"),
      "cpu-percent", GST_TYPE_STRUCTURE, record_value (G_TYPE_DOUBLE, "CPU use, percent of one core"),
      NULL);
  /* *INDENT-ON* */
  GST_OBJECT_FLAG_SET (tr_element, GST_OBJECT_FLAG_MAY_BE_LEAKED);
  GST_OBJECT_FLAG_SET (tr_queue, GST_OBJECT_FLAG_MAY_BE_LEAKED);
  GST_OBJECT_FLAG_SET (tr_sink, GST_OBJECT_FLAG_MAY_BE_LEAKED);
  GST_OBJECT_FLAG_SET (tr_process, GST_OBJECT_FLAG_MAY_BE_LEAKED);
}

/* The cumulative or the window summary of a histogram (zeros when it was
 * not measured). */
static const WsiHistogramSummary *
summary (const WsiElementSnapshot * e, WsiHistKind kind, gboolean window)
{
  return window ? &e->hist[kind].window : &e->hist[kind].total;
}

void
wsi_stats_format_log_records (const WsiStatsSnapshot * snap, gboolean window)
{
  guint i;

  for (i = 0; i < snap->n_elements; i++) {
    const WsiElementSnapshot *e = &snap->elements[i];
    const WsiRates *rate = window ? &e->window_rate : &e->rate;
    const WsiHistogramSummary *self_h = summary (e, WSI_HIST_SELF, window);
    const WsiHistogramSummary *loop_h = summary (e, WSI_HIST_LOOP, window);
    const WsiHistogramSummary *age_h = summary (e, WSI_HIST_AGE, window);

    gst_tracer_record_log (tr_element, e->name, rate->buffers, rate->patches,
        rate->bytes, self_h->count, self_h->p50, self_h->p95, self_h->p99,
        self_h->max, loop_h->p50, loop_h->p95, age_h->p50, age_h->p95);
    if (e->is_queue) {
      const WsiHistogramSummary *level = summary (e, WSI_HIST_LEVEL, window);

      gst_tracer_record_log (tr_queue, e->name, level->p50, level->p95,
          level->max, window ? e->empty_share_window : e->empty_share,
          window ? e->full_share_window : e->full_share);
    }
    if (e->is_sink) {
      const WsiHistogramSummary *interval = summary (e, WSI_HIST_INTERVAL,
          window);
      const WsiVerdict *v = window ? &e->verdict_window : &e->verdict;

      gst_tracer_record_log (tr_sink, e->name, interval->p50, interval->p95,
          v->verdict, v->loader_bound, v->trainer_bound);
    }
  }
  gst_tracer_record_log (tr_process, snap->peak_rss_kb,
      window ? snap->window_cpu_percent : snap->cpu_percent);
}

/* ---- the summary table --------------------------------------------------- */

static void
print_hist_ms (GString * out, const WsiHistSnapshot * h)
{
  if (!h->present || h->total.count == 0) {
    g_string_append_printf (out, " %31s", "-");
    return;
  }
  g_string_append_printf (out, " %7.2f %7.2f %7.2f %7.2f",
      MS ((gdouble) h->total.p50), MS ((gdouble) h->total.p95),
      MS ((gdouble) h->total.p99), MS ((gdouble) h->total.max));
}

static void
print_element_line (GString * out, const WsiElementSnapshot * e)
{
  const WsiHistSnapshot *age = &e->hist[WSI_HIST_AGE];

  const gchar *no_rate = e->buffers_in + e->buffers_out ? "short" : "-";

  if (e->span_s >= WSI_STATS_MIN_RATE_SPAN_S)
    g_string_append_printf (out, "%-18.18s %-10s %9.1f %9.1f %8.2f |",
        e->name, e->shape, e->rate.buffers, e->rate.patches,
        e->rate.bytes / 1e6);
  else
    g_string_append_printf (out, "%-18.18s %-10s %9s %9s %8s |", e->name,
        e->shape, no_rate, no_rate, no_rate);
  print_hist_ms (out, &e->hist[WSI_HIST_SELF]);
  g_string_append (out, " |");
  print_hist_ms (out, &e->hist[WSI_HIST_LOOP]);
  g_string_append (out, " |");
  if (age->present)
    g_string_append_printf (out, " %7.1f %7.1f",
        MS ((gdouble) age->total.p50), MS ((gdouble) age->total.p95));
  else
    g_string_append (out, " -");
  g_string_append_c (out, '\n');
}

static void
print_queue_and_sink_lines (GString * out, const WsiElementSnapshot * e)
{
  const WsiHistSnapshot *level = &e->hist[WSI_HIST_LEVEL];
  const WsiHistogramSummary *interval = &e->hist[WSI_HIST_INTERVAL].total;

  if (level->present)
    g_string_append_printf (out, "queue %s: level p50 %" G_GUINT64_FORMAT
        " p95 %" G_GUINT64_FORMAT " max %" G_GUINT64_FORMAT
        " buffers, empty %.0f%% of the time, full %.0f%%\n", e->name,
        level->total.p50, level->total.p95, level->total.max,
        100 * e->empty_share, 100 * e->full_share);
  if (e->is_sink)
    g_string_append_printf (out, "sink %s: batch interval p50 %.2f ms, "
        "p95 %.2f ms; waited for data %.0f%%, pipeline waited for it "
        "%.0f%%\n", e->name, MS ((gdouble) interval->p50),
        MS ((gdouble) interval->p95), 100 * e->verdict.loader_bound,
        100 * e->verdict.trainer_bound);
}

/* "slides wsislidesrc0: 1000 prepared, open p50/p95 0.4/1.2 ms, overview
 * 6.1/9.8 ms, waited for 2.0/15.3 ms" and "slides tissuemask0: 1000 masks,
 * p50/p95 3.2/4.0 ms": per slide, so slide churn shows; a source waiting
 * for prepared slides is the sign that preparation limits the stream. */
static void
print_slide_prep_line (GString * out, const WsiElementSnapshot * e)
{
  static const gchar *const labels[] = { "open", "overview", "waited for" };
  const WsiHistSnapshot *mask = &e->hist[WSI_HIST_PREP_MASK];
  guint i, first = WSI_HIST_PREP_OPEN;

  if (e->hist[first].present) {
    g_string_append_printf (out, "slides %s: %" G_GUINT64_FORMAT
        " prepared", e->name, e->hist[first].total.count);
    for (i = 0; i < G_N_ELEMENTS (labels); i++) {
      const WsiHistogramSummary *h = &e->hist[first + i].total;

      g_string_append_printf (out, ", %s p50/p95 %.2f/%.2f ms", labels[i],
          MS ((gdouble) h->p50), MS ((gdouble) h->p95));
    }
    g_string_append_c (out, '\n');
  }
  if (mask->present)
    g_string_append_printf (out, "slides %s: %" G_GUINT64_FORMAT " masks, "
        "p50/p95 %.2f/%.2f ms\n", e->name, mask->total.count,
        MS ((gdouble) mask->total.p50), MS ((gdouble) mask->total.p95));
}

/* " tiff 3, openslide 1" from "slides, tiff=(guint64)3, ...". */
static void
print_backend_counts (GString * out, const GstStructure * counts)
{
  gint i;

  for (i = 0; i < gst_structure_n_fields (counts); i++) {
    const gchar *name = gst_structure_nth_field_name (counts, i);
    guint64 n = 0;

    gst_structure_get_uint64 (counts, name, &n);
    g_string_append_printf (out, "%s %s %" G_GUINT64_FORMAT,
        i ? "," : "", name, n);
  }
}

/* "failed reads: a.svs 12, b.svs 3" (a few; the rest counted). */
static void
print_failed_slides (GString * out, const GValue * failed)
{
  guint i, n = failed ? gst_value_array_get_size (failed) : 0;

  if (n == 0)
    return;
  g_string_append (out, "; failed reads:");
  for (i = 0; i < n && i < 5; i++) {
    const GstStructure *slide =
        gst_value_get_structure (gst_value_array_get_value (failed, i));
    guint64 count = 0;

    gst_structure_get_uint64 (slide, "failed-reads", &count);
    g_string_append_printf (out, "%s %s %" G_GUINT64_FORMAT, i ? "," : "",
        gst_structure_get_string (slide, "path"), count);
  }
  if (n > 5)
    g_string_append_printf (out, " and %u more slides", n - 5);
}

/* "reader patchreader0: tiff 2624 patches, openslide 0; slides: tiff 3,
 * openslide 1; tile cache hit rate 36.8 % (6259 of 17016); failed reads:
 * a.svs 12" */
/* "storage patchreader0: 812 requests, 41.3 MB, latency p50/p95 51.2/60.4
 * ms, 3 retries, 0 failed, 12 in flight, 240 cache hits" for slides at
 * URLs (read-stats' `remote`): storage or decode, which one waits. */
static void
print_remote_stats (GString * out, const gchar * name,
    const GstStructure * stats)
{
  const GstStructure *remote;
  guint64 requests = 0, bytes = 0, retries = 0, failures = 0, hits = 0;
  gdouble p50 = 0, p95 = 0;
  guint in_flight = 0;

  if (!gst_structure_has_field_typed (stats, "remote", GST_TYPE_STRUCTURE))
    return;
  remote = gst_value_get_structure (gst_structure_get_value (stats,
          "remote"));
  gst_structure_get (remote, "requests", G_TYPE_UINT64, &requests,
      "bytes", G_TYPE_UINT64, &bytes, "retries", G_TYPE_UINT64, &retries,
      "failures", G_TYPE_UINT64, &failures, "cache-hits", G_TYPE_UINT64,
      &hits, "in-flight", G_TYPE_UINT, &in_flight, "latency-p50-ms",
      G_TYPE_DOUBLE, &p50, "latency-p95-ms", G_TYPE_DOUBLE, &p95, NULL);
  g_string_append_printf (out, "storage %s: %" G_GUINT64_FORMAT " requests, "
      "%.1f MB, latency p50/p95 %.1f/%.1f ms, %" G_GUINT64_FORMAT
      " retries, %" G_GUINT64_FORMAT " failed, %u in flight, %"
      G_GUINT64_FORMAT " cache hits\n", name, requests, bytes / 1e6, p50, p95,
      retries, failures, in_flight, hits);
}

/* "I/O wait patchreader0: 12.3 s of the workers' 40.1 s (30.7 %), 812
 * waits" for a pool that read remote bytes: the share of decode time that
 * storage, not the CPU, took. */
static void
print_io_wait (GString * out, const WsiElementSnapshot * e)
{
  if (e->io_waits == 0)
    return;
  g_string_append_printf (out, "I/O wait %s: %.2f s of the workers' %.2f s "
      "(%.1f %%), %" G_GUINT64_FORMAT " waits on remote bytes\n", e->name,
      e->io_wait_s, e->work_s, e->work_s > 0 ? 100.0 * e->io_wait_s /
      e->work_s : 0.0, e->io_waits);
}

static void
print_read_stats (GString * out, const WsiElementSnapshot * e)
{
  const GstStructure *stats = e->read_stats;
  const GstStructure *slides = NULL;
  guint64 hits = 0, misses = 0;
  gint i;

  if (stats == NULL)
    return;
  g_string_append_printf (out, "reader %s:", e->name);
  for (i = 0; i < gst_structure_n_fields (stats); i++) {
    const gchar *name = gst_structure_nth_field_name (stats, i);
    guint64 n = 0;

    if (g_str_has_prefix (name, "tile-cache-")
        || gst_structure_get_field_type (stats, name) != G_TYPE_UINT64)
      continue;
    gst_structure_get_uint64 (stats, name, &n);
    g_string_append_printf (out, " %s %" G_GUINT64_FORMAT " patches,", name,
        n);
  }
  if (gst_structure_has_field_typed (stats, "slides", GST_TYPE_STRUCTURE))
    slides = gst_value_get_structure (gst_structure_get_value (stats,
            "slides"));
  if (slides != NULL && gst_structure_n_fields (slides) > 0) {
    g_string_append (out, " slides:");
    print_backend_counts (out, slides);
    g_string_append_c (out, ';');
  }
  gst_structure_get_uint64 (stats, "tile-cache-hits", &hits);
  gst_structure_get_uint64 (stats, "tile-cache-misses", &misses);
  g_string_append_printf (out, " tile cache hit rate %.1f %% (%"
      G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT ")", hits + misses ?
      100.0 * hits / (hits + misses) : 0.0, hits, hits + misses);
  print_failed_slides (out, gst_structure_get_value (stats, "failed-slides"));
  g_string_append_c (out, '\n');
  print_remote_stats (out, e->name, stats);
  print_io_wait (out, e);
}

/* "source wsislidesrc0: 12 slides opened, 1 failed, 2 damaged: a.dcm,
 * b.dcm" for a slide source (a few names; the rest counted). */
static void
print_slide_counts (GString * out, const WsiElementSnapshot * e)
{
  const GValue *names;
  guint opened = 0, failed = 0, damaged = 0, i, n;

  if (e->slide_counts == NULL)
    return;
  gst_structure_get (e->slide_counts, "opened", G_TYPE_UINT, &opened,
      "failed", G_TYPE_UINT, &failed, "damaged", G_TYPE_UINT, &damaged,
      NULL);
  g_string_append_printf (out, "source %s: %u slides opened, %u failed, %u "
      "damaged", e->name, opened, failed, damaged);
  names = gst_structure_get_value (e->slide_counts, "damaged-slides");
  n = names ? gst_value_array_get_size (names) : 0;
  for (i = 0; i < n && i < 5; i++)
    g_string_append_printf (out, "%s %s", i ? "," : ":",
        g_value_get_string (gst_value_array_get_value (names, i)));
  if (damaged > MIN (n, 5))
    g_string_append_printf (out, " and %u more", damaged - MIN (n, 5));
  g_string_append_c (out, '\n');
}

gchar *
wsi_stats_format_summary (const WsiStatsSnapshot * snap, const gchar * why)
{
  GString *out = g_string_new (NULL);
  const WsiElementSnapshot *sink = snap->main_sink;
  guint i;

  g_string_append_printf (out, "wsistats summary (%s, %.1f s)\n", why,
      snap->time_s);
  g_string_append_printf (out, "%-18s %-10s %9s %9s %8s | %-31s | %-31s | "
      "%-15s\n", "element", "shape", "buf/s", "patch/s", "MB/s",
      "self ms p50/p95/p99/max", "loop ms p50/p95/p99/max", "age ms p50/p95");
  for (i = 0; i < snap->n_elements; i++)
    print_element_line (out, &snap->elements[i]);
  for (i = 0; i < snap->n_elements; i++)
    if (snap->elements[i].buffers_in + snap->elements[i].buffers_out > 0
        && snap->elements[i].span_s < WSI_STATS_MIN_RATE_SPAN_S)
      break;
  if (i < snap->n_elements)
    g_string_append_printf (out, "short: under %.0f s between the element's "
        "first and last buffer, too short for a rate\n",
        WSI_STATS_MIN_RATE_SPAN_S);
  for (i = 0; i < snap->n_elements; i++) {
    print_queue_and_sink_lines (out, &snap->elements[i]);
    print_slide_prep_line (out, &snap->elements[i]);
  }
  for (i = 0; i < snap->n_elements; i++)
    print_slide_counts (out, &snap->elements[i]);
  for (i = 0; i < snap->n_elements; i++)
    print_read_stats (out, &snap->elements[i]);
  g_string_append_printf (out, "process: peak RSS %.1f MiB, CPU %.0f%%\n",
      snap->peak_rss_kb / 1024.0, snap->cpu_percent);
  if (sink && g_strcmp0 (sink->verdict.verdict, "unknown") != 0)
    g_string_append_printf (out, "verdict: %s (loader-bound %.0f%%, "
        "trainer-bound %.0f%%)\n", sink->verdict.verdict,
        100 * sink->verdict.loader_bound, 100 * sink->verdict.trainer_bound);
  return g_string_free (out, FALSE);
}
