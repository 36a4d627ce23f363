/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistatssnapshot.h: one coherent, typed copy of everything wsistats
 * measured, the single source of every output (the GstStructure report in
 * wsistatsreport.c, the summary table and tracer records in
 * wsistatsformat.c): rates, percentiles, shapes and verdicts are computed
 * here once, and the outputs only lay them out.
 *
 * Contract: wsi_stats_snapshot_new() takes the process numbers, then
 * wsi_stats_snapshot_add_element() copies each element's counters under
 * its lock (with @advance, the element's window restarts), then
 * wsi_stats_snapshot_finish() picks the sink that speaks for the pipeline.
 *
 * Cost: per element a copy of its histograms (about 9 KiB each, 7 of them)
 * and a percentile walk; at report time only (every `interval`, on demand),
 * never per buffer.
 *
 * Threading: add_element() locks the element; the caller holds the lock of
 * the element list and the tracer's report lock (the window baseline).
 */

#ifndef __WSI_STATS_SNAPSHOT_H__
#define __WSI_STATS_SNAPSHOT_H__

#include <gst/gst.h>

#include "wsihistogram.h"
#include "wsistatscounters.h"

G_BEGIN_DECLS

/* The name each histogram has in reports ("self", "loop", ...). */
extern const gchar *const wsi_hist_names[WSI_N_HISTS];

typedef struct
{
  gboolean present;             /* measured (self and loop always are) */
  WsiHistogramSummary total;    /* since the start or the last reset */
  WsiHistogramSummary window;   /* since the last interval report */
} WsiHistSnapshot;

/* Shortest traffic span (first to last buffer) whose rates the summary
 * prints as numbers. */
#define WSI_STATS_MIN_RATE_SPAN_S 1.0

/* Output rates of an element or pad (input rates for a sink). */
typedef struct
{
  gdouble buffers, patches, bytes;
} WsiRates;

typedef struct
{
  const gchar *verdict;         /* loader-bound, trainer-bound, balanced,
                                 * unknown */
  gdouble trainer_bound, loader_bound;
} WsiVerdict;

typedef struct
{
  const gchar *name;            /* owned by the counters */
  gboolean is_src;
  guint64 buffers, patches, bytes;
  WsiRates rate, window_rate;
} WsiPadSnapshot;

typedef struct
{
  const gchar *name, *factory;  /* owned by the counters */
  const gchar *shape;           /* source, filter, queue, sink, ... */
  gboolean alive;
  guint64 buffers_in, buffers_out, patches_in, patches_out;
  guint64 bytes_in, bytes_out;
  WsiRates rate, window_rate;
  /* first to last buffer: rates over less than WSI_STATS_MIN_RATE_SPAN_S
   * are noise (two buffers a millisecond apart make gigabytes per second);
   * the summary shows them as such */
  gdouble span_s;
  GstStructure *read_stats;     /* a reader's `read-stats`, or NULL */
  /* a slide source's counters ("slides", opened, failed, damaged,
   * damaged-slides: array of names), or NULL */
  GstStructure *slide_counts;
  WsiHistSnapshot hist[WSI_N_HISTS];

  /* a pool (patchreader): its workers' time making items, and of that the
   * time blocked on remote bytes (I/O wait) */
  gdouble work_s, io_wait_s;
  guint64 io_waits;

  gboolean is_sink;
  gdouble busy_s, wait_s;
  WsiVerdict verdict, verdict_window;

  gboolean is_queue;
  guint64 samples;
  gdouble empty_share, full_share, empty_share_window, full_share_window;

  WsiPadSnapshot pads[WSI_STATS_MAX_PADS];
  guint n_pads;
} WsiElementSnapshot;

typedef enum
{
  WSI_SNAPSHOT_REPORT,          /* asked for (get-stats, write-report) */
  WSI_SNAPSHOT_INTERVAL,        /* the reporter's window report */
  WSI_SNAPSHOT_FINAL,           /* a pipeline stopped, or exit */
} WsiSnapshotType;

typedef struct
{
  WsiSnapshotType type;
  gdouble time_s, window_s;
  guint64 peak_rss_kb;
  gdouble cpu_s, cpu_percent, window_cpu_percent;
  guint64 timeline_dropped;

  WsiElementSnapshot *elements;
  guint n_elements;
  guint64 buffers_in;           /* all elements' input buffers */
  /* the sink that received most buffers (NULL: none, verdict unknown) */
  const WsiElementSnapshot *main_sink;
} WsiStatsSnapshot;

WsiStatsSnapshot *wsi_stats_snapshot_new (WsiSnapshotType type,
    guint max_elements);
void wsi_stats_snapshot_add_element (WsiStatsSnapshot * snapshot,
    WsiElementStats * es, guint64 window_ns, gboolean advance);
void wsi_stats_snapshot_finish (WsiStatsSnapshot * snapshot);
void wsi_stats_snapshot_free (WsiStatsSnapshot * snapshot);

const gchar *wsi_snapshot_type_name (WsiSnapshotType type);

G_END_DECLS

#endif /* __WSI_STATS_SNAPSHOT_H__ */
