/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsihistogram.h: a fixed-memory log-scale histogram of unsigned values.
 *
 * Values 0..63 get one bucket each; above that every power of two is split
 * into 32 equal buckets (3.1 % wide at the bottom of an octave, 1.6 % at the
 * top). Percentiles are reported at the bucket middle, so they are within
 * 1.6 % of the true value; count, sum and max are exact. The range ends at
 * 2^40 (1100 s in ns); larger values land in the last bucket, max stays exact.
 *
 * No allocation after wsi_histogram_new(); recording is a few integer
 * operations. Callers provide the locking.
 */

#ifndef __WSI_HISTOGRAM_H__
#define __WSI_HISTOGRAM_H__

#include <glib.h>

G_BEGIN_DECLS

#define WSI_HISTOGRAM_LINEAR 64
#define WSI_HISTOGRAM_SUB_BITS 5
#define WSI_HISTOGRAM_SUB (1 << WSI_HISTOGRAM_SUB_BITS)
#define WSI_HISTOGRAM_TOP_BIT 40
#define WSI_HISTOGRAM_BUCKETS \
  (WSI_HISTOGRAM_LINEAR + (WSI_HISTOGRAM_TOP_BIT - 6) * WSI_HISTOGRAM_SUB)

typedef struct
{
  guint64 count;
  guint64 sum;
  guint64 max;
  guint64 buckets[WSI_HISTOGRAM_BUCKETS];
} WsiHistogram;

/* The numbers users read. */
typedef struct
{
  guint64 count;
  guint64 p50, p90, p95, p99, max;
  gdouble mean;
} WsiHistogramSummary;

void wsi_histogram_clear (WsiHistogram * h);
void wsi_histogram_record (WsiHistogram * h, guint64 value);
/* @out = @now - @before (bucket by bucket): the window since @before. The
 * window max is only known as "the largest non-empty bucket's top", unless
 * the cumulative max grew inside the window. */
void wsi_histogram_subtract (WsiHistogram * out, const WsiHistogram * now,
    const WsiHistogram * before);
guint64 wsi_histogram_percentile (const WsiHistogram * h, gdouble percent);
void wsi_histogram_summarize (const WsiHistogram * h,
    WsiHistogramSummary * summary);

G_END_DECLS

#endif /* __WSI_HISTOGRAM_H__ */
