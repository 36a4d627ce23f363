/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistatsformat.h: what people and log readers see of a snapshot: the
 * summary table (stderr) and the GstTracerRecords `wsistats-element`,
 * `wsistats-queue`, `wsistats-sink`, `wsistats-process` (GST_TRACER:7).
 *
 * Contract: read from the typed snapshot only; the table shows cumulative
 * numbers in ms, the records either the cumulative or the last window's.
 * Cost: a few string formats per element, at report time only.
 * Threading: wsi_stats_format_init() once (class init); the rest from any
 * thread.
 */

#ifndef __WSI_STATS_FORMAT_H__
#define __WSI_STATS_FORMAT_H__

#include <gst/gst.h>

#include "wsistatssnapshot.h"

G_BEGIN_DECLS

/* Makes the tracer records (once per process). */
void wsi_stats_format_init (void);

/* The summary table; @why says what ended ("pipeline0 stopped"). */
gchar *wsi_stats_format_summary (const WsiStatsSnapshot * snapshot,
    const gchar * why);

/* One record per element (plus queue and sink records) and one for the
 * process; @window: the last window's numbers instead of cumulative. */
void wsi_stats_format_log_records (const WsiStatsSnapshot * snapshot,
    gboolean window);

G_END_DECLS

#endif /* __WSI_STATS_FORMAT_H__ */
