/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistatsreport.h: the wsistats report as a GstStructure ("wsistats"),
 * made from a snapshot: what the `get-stats` action signal returns and
 * what the `file=` JSON Lines hold (docs/tracer.md lists the fields).
 *
 * Contract: field names, types and order are the tracer's public format;
 * durations in ns (histograms) or s (busy-s, wait-s), rates per second.
 * Cost: a few hundred small allocations per report; never per buffer.
 * Threading: pure function of the snapshot, any thread.
 */

#ifndef __WSI_STATS_REPORT_H__
#define __WSI_STATS_REPORT_H__

#include <gst/gst.h>

#include "wsistatssnapshot.h"

G_BEGIN_DECLS

/* Returns: (transfer full) */
GstStructure *wsi_stats_report_structure (const WsiStatsSnapshot * snapshot);

G_END_DECLS

#endif /* __WSI_STATS_REPORT_H__ */
