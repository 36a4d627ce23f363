/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsihistogram.c: fixed-memory log-scale histogram (see wsihistogram.h). */

#include <math.h>
#include <string.h>

#include "wsihistogram.h"

static guint
bucket_of (guint64 value)
{
  guint top_bit, sub;

  if (value < WSI_HISTOGRAM_LINEAR)
    return (guint) value;
  top_bit = 63 - __builtin_clzll (value);
  if (top_bit >= WSI_HISTOGRAM_TOP_BIT)
    return WSI_HISTOGRAM_BUCKETS - 1;
  sub = (guint) (value >> (top_bit - WSI_HISTOGRAM_SUB_BITS))
      & (WSI_HISTOGRAM_SUB - 1);
  return WSI_HISTOGRAM_LINEAR + (top_bit - 6) * WSI_HISTOGRAM_SUB + sub;
}

/* The value a bucket stands for: itself in the linear part, else the middle. */
static guint64
bucket_value (guint index)
{
  guint j, top_bit, sub;
  guint64 width;

  if (index < WSI_HISTOGRAM_LINEAR)
    return index;
  j = index - WSI_HISTOGRAM_LINEAR;
  top_bit = 6 + j / WSI_HISTOGRAM_SUB;
  sub = j % WSI_HISTOGRAM_SUB;
  width = G_GUINT64_CONSTANT (1) << (top_bit - WSI_HISTOGRAM_SUB_BITS);
  return (WSI_HISTOGRAM_SUB + sub) * width + width / 2;
}

void
wsi_histogram_clear (WsiHistogram * h)
{
  memset (h, 0, sizeof (*h));
}

void
wsi_histogram_record (WsiHistogram * h, guint64 value)
{
  h->buckets[bucket_of (value)]++;
  h->count++;
  h->sum += value;
  if (value > h->max)
    h->max = value;
}

void
wsi_histogram_subtract (WsiHistogram * out, const WsiHistogram * now,
    const WsiHistogram * before)
{
  guint i, highest = 0;

  out->count = now->count - before->count;
  out->sum = now->sum - before->sum;
  for (i = 0; i < WSI_HISTOGRAM_BUCKETS; i++) {
    out->buckets[i] = now->buckets[i] - before->buckets[i];
    if (out->buckets[i] > 0)
      highest = i;
  }
  if (out->count == 0)
    out->max = 0;
  else if (now->max > before->max)
    out->max = now->max;
  else
    out->max = MIN (bucket_value (highest), now->max);
}

guint64
wsi_histogram_percentile (const WsiHistogram * h, gdouble percent)
{
  guint64 rank, seen = 0;
  guint i;

  if (h->count == 0)
    return 0;
  rank = (guint64) ceil (percent / 100.0 * (gdouble) h->count);
  rank = CLAMP (rank, 1, h->count);
  for (i = 0; i < WSI_HISTOGRAM_BUCKETS; i++) {
    seen += h->buckets[i];
    if (seen >= rank)
      return MIN (bucket_value (i), h->max);
  }
  return h->max;
}

void
wsi_histogram_summarize (const WsiHistogram * h, WsiHistogramSummary * s)
{
  s->count = h->count;
  s->p50 = wsi_histogram_percentile (h, 50);
  s->p90 = wsi_histogram_percentile (h, 90);
  s->p95 = wsi_histogram_percentile (h, 95);
  s->p99 = wsi_histogram_percentile (h, 99);
  s->max = h->max;
  s->mean = h->count ? (gdouble) h->sum / (gdouble) h->count : 0.0;
}
