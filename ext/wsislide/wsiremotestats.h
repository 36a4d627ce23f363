/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiremotestats.h: the read layer's request counters of slides at URLs
 * (wsifetchstats.h) as a GstStructure, for element properties and the
 * wsistats tracer: whether storage or decode is the bottleneck.
 *
 * Contract: "remote-stats" with requests, bytes, retries, failures,
 * cache-hits (guint64), in-flight (uint), latency-p50-ms, latency-p95-ms
 * (double) for the whole process, and `slides`, a GstValueArray of the
 * same structures (named "slide", with a `url` without credentials) for
 * every slide open at a URL now. All zeros in a build without remote
 * sources. Cost: a walk over the open sources under one lock. Threading:
 * any thread.
 */

#ifndef __WSI_REMOTE_STATS_H__
#define __WSI_REMOTE_STATS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

GstStructure *wsi_remote_stats_new (void);

G_END_DECLS

#endif /* __WSI_REMOTE_STATS_H__ */
