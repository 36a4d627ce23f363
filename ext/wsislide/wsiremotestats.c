/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsiremotestats.c: remote request counters as a GstStructure (see
 * wsiremotestats.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsiremotestats.h"

#ifdef WSI_HAVE_CURL
#include "wsihttpsource.h"

static void
set_summary (GstStructure * s, const WsiFetchStats * stats)
{
  WsiFetchSummary sum;

  wsi_fetch_stats_summarize (stats, &sum);
  gst_structure_set (s,
      "requests", G_TYPE_UINT64, sum.requests,
      "bytes", G_TYPE_UINT64, sum.bytes,
      "retries", G_TYPE_UINT64, sum.retries,
      "failures", G_TYPE_UINT64, sum.failures,
      "cache-hits", G_TYPE_UINT64, sum.cache_hits,
      "in-flight", G_TYPE_UINT, sum.in_flight,
      "latency-p50-ms", G_TYPE_DOUBLE, sum.latency_p50_ms,
      "latency-p95-ms", G_TYPE_DOUBLE, sum.latency_p95_ms, NULL);
}

static void
add_slide (const gchar * display_uri, const WsiFetchStats * stats,
    gpointer user_data)
{
  GValue *slides = user_data;
  GValue item = G_VALUE_INIT;
  GstStructure *s = gst_structure_new ("slide", "url", G_TYPE_STRING,
      display_uri, NULL);

  set_summary (s, stats);
  g_value_init (&item, GST_TYPE_STRUCTURE);
  g_value_take_boxed (&item, s);
  gst_value_array_append_and_take_value (slides, &item);
}
#endif

GstStructure *
wsi_remote_stats_new (void)
{
  GstStructure *s = gst_structure_new ("remote-stats",
      "requests", G_TYPE_UINT64, (guint64) 0,
      "bytes", G_TYPE_UINT64, (guint64) 0,
      "retries", G_TYPE_UINT64, (guint64) 0,
      "failures", G_TYPE_UINT64, (guint64) 0,
      "cache-hits", G_TYPE_UINT64, (guint64) 0,
      "in-flight", G_TYPE_UINT, 0,
      "latency-p50-ms", G_TYPE_DOUBLE, 0.0,
      "latency-p95-ms", G_TYPE_DOUBLE, 0.0, NULL);
  GValue slides = G_VALUE_INIT;

  g_value_init (&slides, GST_TYPE_ARRAY);
#ifdef WSI_HAVE_CURL
  set_summary (s, wsi_fetch_stats_total ());
  wsi_http_foreach_source (add_slide, &slides);
#endif
  gst_structure_take_value (s, "slides", &slides);
  return s;
}
