/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsifetchstats.c: request counters and a log-scale latency histogram
 * (see wsifetchstats.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>

#include "wsifetchstats.h"

/* Bucket i holds latencies in [BASE * RATIO^i, BASE * RATIO^(i+1)). */
#define BUCKET_BASE_S 1e-5
#define BUCKET_RATIO 1.05

static WsiFetchStats total_stats;

WsiFetchStats *
wsi_fetch_stats_total (void)
{
  return &total_stats;
}

void
wsi_fetch_stats_add (gint64 * counter, gint64 n)
{
  __atomic_fetch_add (counter, n, __ATOMIC_RELAXED);
}

static guint
bucket_of (gdouble seconds)
{
  gdouble i;

  if (seconds <= BUCKET_BASE_S)
    return 0;
  i = log (seconds / BUCKET_BASE_S) / log (BUCKET_RATIO);
  return (guint) MIN (i, WSI_FETCH_STATS_BUCKETS - 1);
}

void
wsi_fetch_stats_begin (WsiFetchStats * stats)
{
  __atomic_fetch_add (&stats->in_flight, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add (&stats->requests, 1, __ATOMIC_RELAXED);
}

void
wsi_fetch_stats_end (WsiFetchStats * stats, gdouble seconds, guint64 bytes)
{
  __atomic_fetch_sub (&stats->in_flight, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add (&stats->bytes, (gint64) bytes, __ATOMIC_RELAXED);
  __atomic_fetch_add (&stats->latency[bucket_of (seconds)], 1,
      __ATOMIC_RELAXED);
}

static gint64
load (const gint64 * counter)
{
  return __atomic_load_n (counter, __ATOMIC_RELAXED);
}

/* The latency (ms, bucket middle) below which @fraction of requests fell. */
static gdouble
percentile_ms (const gint64 * counts, gint64 n, gdouble fraction)
{
  gint64 want = (gint64) ceil (fraction * n), seen = 0;
  guint i;

  for (i = 0; i < WSI_FETCH_STATS_BUCKETS; i++) {
    seen += counts[i];
    if (seen >= want && seen > 0)
      return 1000.0 * BUCKET_BASE_S * pow (BUCKET_RATIO, i + 0.5);
  }
  return 0;
}

void
wsi_fetch_stats_summarize (const WsiFetchStats * stats,
    WsiFetchSummary * summary)
{
  gint64 counts[WSI_FETCH_STATS_BUCKETS], n = 0;
  guint i;

  for (i = 0; i < WSI_FETCH_STATS_BUCKETS; i++)
    n += counts[i] = load (&stats->latency[i]);
  summary->requests = load (&stats->requests);
  summary->bytes = load (&stats->bytes);
  summary->retries = load (&stats->retries);
  summary->failures = load (&stats->failures);
  summary->cache_hits = load (&stats->cache_hits);
  summary->in_flight = MAX (__atomic_load_n (&stats->in_flight,
          __ATOMIC_RELAXED), 0);
  summary->latency_p50_ms = n > 0 ? percentile_ms (counts, n, 0.50) : 0;
  summary->latency_p95_ms = n > 0 ? percentile_ms (counts, n, 0.95) : 0;
}
