/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsistatsreport.c: snapshot -> GstStructure (see wsistatsreport.h). */

#include "wsistatsreport.h"

static void
set_histogram (GstStructure * s, const gchar * name,
    const WsiHistogramSummary * h)
{
  GstStructure *hs = gst_structure_new ("histogram",
      "count", G_TYPE_UINT64, h->count,
      "p50", G_TYPE_UINT64, h->p50, "p90", G_TYPE_UINT64, h->p90,
      "p95", G_TYPE_UINT64, h->p95, "p99", G_TYPE_UINT64, h->p99,
      "max", G_TYPE_UINT64, h->max, "mean", G_TYPE_DOUBLE, h->mean, NULL);

  gst_structure_set (s, name, GST_TYPE_STRUCTURE, hs, NULL);
  gst_structure_free (hs);
}

static void
append_to_array (GValue * array, GstStructure * s)
{
  GValue v = G_VALUE_INIT;

  g_value_init (&v, GST_TYPE_STRUCTURE);
  g_value_take_boxed (&v, s);
  gst_value_array_append_and_take_value (array, &v);
}

/* "verdict", "trainer-bound", "loader-bound" + @suffix */
static void
set_verdict (GstStructure * s, const WsiVerdict * v, const gchar * suffix)
{
  gchar *f_verdict = g_strconcat ("verdict", suffix, NULL);
  gchar *f_trainer = g_strconcat ("trainer-bound", suffix, NULL);
  gchar *f_loader = g_strconcat ("loader-bound", suffix, NULL);

  gst_structure_set (s, f_verdict, G_TYPE_STRING, v->verdict,
      f_trainer, G_TYPE_DOUBLE, v->trainer_bound,
      f_loader, G_TYPE_DOUBLE, v->loader_bound, NULL);
  g_free (f_verdict);
  g_free (f_trainer);
  g_free (f_loader);
}

static GstStructure *
pad_structure (const WsiPadSnapshot * p)
{
  return gst_structure_new ("pad",
      "name", G_TYPE_STRING, p->name,
      "direction", G_TYPE_STRING, p->is_src ? "src" : "sink",
      "buffers", G_TYPE_UINT64, p->buffers,
      "patches", G_TYPE_UINT64, p->patches,
      "bytes", G_TYPE_UINT64, p->bytes,
      "buffers-per-s", G_TYPE_DOUBLE, p->rate.buffers,
      "patches-per-s", G_TYPE_DOUBLE, p->rate.patches,
      "bytes-per-s", G_TYPE_DOUBLE, p->rate.bytes,
      "window-buffers-per-s", G_TYPE_DOUBLE, p->window_rate.buffers,
      "window-patches-per-s", G_TYPE_DOUBLE, p->window_rate.patches,
      "window-bytes-per-s", G_TYPE_DOUBLE, p->window_rate.bytes, NULL);
}

static void
set_histograms (GstStructure * s, const WsiElementSnapshot * e)
{
  guint i;

  for (i = 0; i < WSI_N_HISTS; i++) {
    gchar *window_name;

    if (!e->hist[i].present)
      continue;
    set_histogram (s, wsi_hist_names[i], &e->hist[i].total);
    window_name = g_strconcat (wsi_hist_names[i], "-window", NULL);
    set_histogram (s, window_name, &e->hist[i].window);
    g_free (window_name);
  }
}

static GstStructure *
element_structure (const WsiElementSnapshot * e)
{
  GstStructure *s;
  GValue pads = G_VALUE_INIT;
  guint i;

  s = gst_structure_new ("element",
      "name", G_TYPE_STRING, e->name,
      "factory", G_TYPE_STRING, e->factory,
      "shape", G_TYPE_STRING, e->shape,
      "alive", G_TYPE_BOOLEAN, e->alive,
      "buffers-in", G_TYPE_UINT64, e->buffers_in,
      "buffers-out", G_TYPE_UINT64, e->buffers_out,
      "patches-in", G_TYPE_UINT64, e->patches_in,
      "patches-out", G_TYPE_UINT64, e->patches_out,
      "bytes-in", G_TYPE_UINT64, e->bytes_in,
      "bytes-out", G_TYPE_UINT64, e->bytes_out,
      "buffers-per-s", G_TYPE_DOUBLE, e->rate.buffers,
      "patches-per-s", G_TYPE_DOUBLE, e->rate.patches,
      "bytes-per-s", G_TYPE_DOUBLE, e->rate.bytes,
      "window-buffers-per-s", G_TYPE_DOUBLE, e->window_rate.buffers,
      "window-patches-per-s", G_TYPE_DOUBLE, e->window_rate.patches,
      "window-bytes-per-s", G_TYPE_DOUBLE, e->window_rate.bytes, NULL);
  if (e->read_stats)
    gst_structure_set (s, "read-stats", GST_TYPE_STRUCTURE, e->read_stats,
        NULL);
  if (e->slide_counts)
    gst_structure_set (s, "slides", GST_TYPE_STRUCTURE, e->slide_counts,
        NULL);
  set_histograms (s, e);

  if (e->work_s > 0)
    gst_structure_set (s, "work-s", G_TYPE_DOUBLE, e->work_s,
        "io-wait-s", G_TYPE_DOUBLE, e->io_wait_s,
        "io-waits", G_TYPE_UINT64, e->io_waits, NULL);
  if (e->is_sink) {
    gst_structure_set (s, "busy-s", G_TYPE_DOUBLE, e->busy_s,
        "wait-s", G_TYPE_DOUBLE, e->wait_s, NULL);
    set_verdict (s, &e->verdict, "");
    set_verdict (s, &e->verdict_window, "-window");
  }
  if (e->is_queue)
    gst_structure_set (s, "samples", G_TYPE_UINT64, e->samples,
        "empty-share", G_TYPE_DOUBLE, e->empty_share,
        "full-share", G_TYPE_DOUBLE, e->full_share,
        "empty-share-window", G_TYPE_DOUBLE, e->empty_share_window,
        "full-share-window", G_TYPE_DOUBLE, e->full_share_window, NULL);

  g_value_init (&pads, GST_TYPE_ARRAY);
  for (i = 0; i < e->n_pads; i++)
    append_to_array (&pads, pad_structure (&e->pads[i]));
  gst_structure_take_value (s, "pads", &pads);
  return s;
}

/* The pipeline's verdict: the main sink's. */
static void
set_pipeline_verdict (GstStructure * report, const WsiStatsSnapshot * snap)
{
  const WsiElementSnapshot *sink = snap->main_sink;

  if (sink == NULL) {
    gst_structure_set (report, "verdict", G_TYPE_STRING, "unknown", NULL);
    return;
  }
  gst_structure_set (report, "sink", G_TYPE_STRING, sink->name,
      "verdict", G_TYPE_STRING, sink->verdict.verdict,
      "loader-bound", G_TYPE_DOUBLE, sink->verdict.loader_bound,
      "trainer-bound", G_TYPE_DOUBLE, sink->verdict.trainer_bound,
      "verdict-window", G_TYPE_STRING, sink->verdict_window.verdict, NULL);
  if (sink->hist[WSI_HIST_INTERVAL].present)
    set_histogram (report, "batch-interval",
        &sink->hist[WSI_HIST_INTERVAL].total);
}

GstStructure *
wsi_stats_report_structure (const WsiStatsSnapshot * snap)
{
  GstStructure *report;
  GValue elements = G_VALUE_INIT;
  guint i;

  report = gst_structure_new ("wsistats",
      "type", G_TYPE_STRING, wsi_snapshot_type_name (snap->type),
      "time-s", G_TYPE_DOUBLE, snap->time_s,
      "window-s", G_TYPE_DOUBLE, snap->window_s,
      "peak-rss-kb", G_TYPE_UINT64, snap->peak_rss_kb,
      "cpu-s", G_TYPE_DOUBLE, snap->cpu_s,
      "cpu-percent", G_TYPE_DOUBLE, snap->cpu_percent,
      "window-cpu-percent", G_TYPE_DOUBLE, snap->window_cpu_percent,
      "timeline-dropped", G_TYPE_UINT64, snap->timeline_dropped, NULL);

  g_value_init (&elements, GST_TYPE_ARRAY);
  for (i = 0; i < snap->n_elements; i++)
    append_to_array (&elements, element_structure (&snap->elements[i]));
  set_pipeline_verdict (report, snap);
  gst_structure_take_value (report, "elements", &elements);
  return report;
}
