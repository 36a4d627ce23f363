/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsifetchstats.h: counters of a remote source's requests (count, bytes,
 * retries, failures, in flight, cache hits) and its request latencies, so
 * that a user sees whether storage or decode is the bottleneck.
 *
 * Contract: counters only grow (except in_flight); latencies go into a
 * log-scale histogram (buckets 5% wide from 10 us to ~20 min) read as
 * p50/p95 within one bucket's width. wsi_fetch_stats_snapshot() gives a
 * consistent-enough copy (each field read atomically, not all together).
 *
 * Cost: a few atomic adds per request, no lock, no allocation. Threading:
 * any thread may record and read at once.
 */

#ifndef __WSI_FETCH_STATS_H__
#define __WSI_FETCH_STATS_H__

#include <glib.h>

G_BEGIN_DECLS

#define WSI_FETCH_STATS_BUCKETS 400

typedef struct
{
  gint64 requests;              /* requests sent, retries included */
  gint64 bytes;                 /* body bytes received */
  gint64 retries;               /* requests that were tries again */
  gint64 failures;              /* reads given up (after any retries) */
  gint64 cache_hits;            /* reads served from the range cache */
  gint in_flight;               /* requests under way now */
  gint64 latency[WSI_FETCH_STATS_BUCKETS];
} WsiFetchStats;

/* What a user reads. */
typedef struct
{
  guint64 requests, bytes, retries, failures, cache_hits;
  guint in_flight;
  gdouble latency_p50_ms, latency_p95_ms;       /* 0 before any request */
} WsiFetchSummary;

/* The process-wide totals of every remote source. */
WsiFetchStats *wsi_fetch_stats_total (void);

void wsi_fetch_stats_begin (WsiFetchStats * stats);
/* A request ended after @seconds with @bytes of body. */
void wsi_fetch_stats_end (WsiFetchStats * stats, gdouble seconds,
    guint64 bytes);
void wsi_fetch_stats_add (gint64 * counter, gint64 n);

void wsi_fetch_stats_summarize (const WsiFetchStats * stats,
    WsiFetchSummary * summary);

G_END_DECLS

#endif /* __WSI_FETCH_STATS_H__ */
