/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistatsbook.h: the wsistats tracer's per-stage bookkeeping. From
 * GStreamer's pad hooks it keeps, per element of the pipeline, buffers and
 * patches in and out, time inside chains (self and loop time), waits and
 * intervals, the age and transit of patches, slide preparation times and
 * the work of ordered-pool workers (from their WsiWorkMeta); per thread
 * the stack of open pushes; and it samples queue levels. It draws the
 * same events on the timeline. The tracer element (gstwsistats.c) owns
 * the parameters, the action signals, the reporter thread and the outputs,
 * all made from wsi_stats_take_snapshot().
 *
 * Contract: the hooks count into WsiElementStats (wsistatscounters.h),
 * made the first time an element pushes or receives; nothing is freed
 * before the tracer. A run's state (last arrival, transit slots) is
 * forgotten at READY_TO_PAUSED (wsi_stats_forget_run_state()).
 *
 * Cost: per pushed buffer, a thread-local stack push and pop, one element
 * lock and a few histogram updates; metas are read, never added.
 *
 * Threading: the hooks run on every streaming and pool thread at once;
 * each WsiElementStats has its own lock, the element list the tracer's
 * lock; queue sampling and snapshots run on the reporter thread (or the
 * caller of an action signal) under the tracer's report_lock.
 */

#ifndef __WSI_STATS_BOOK_H__
#define __WSI_STATS_BOOK_H__

#include "gstwsistatspriv.h"
#include "wsistatssnapshot.h"

G_BEGIN_DECLS

void wsi_stats_book_register_hooks (GstWsiStats * self);

/* Absolute monotonic time (gst_util_get_timestamp()). */
GstClockTime wsi_stats_now_ns (void);
/* Timeline time of an absolute time. */
GstClockTime wsi_stats_timeline_ts (GstWsiStats * self, GstClockTime abs_ns);
/* Brings the timeline origin down to what a hook timestamp @hook_ts says. */
void wsi_stats_calibrate_origin (GstWsiStats * self, GstClockTime hook_ts);
/* The timeline lane (thread id) of the calling thread. */
gint wsi_stats_thread_tid (GstWsiStats * self);

void wsi_element_stats_free (WsiElementStats * es);
void wsi_stats_forget_run_state (WsiElementStats * es);

/* The process's peak RSS (KiB) and CPU time (user + system, s). */
void wsi_stats_process_usage (guint64 * peak_rss_kb, gdouble * cpu_s);
/* One occupancy sample of every queue (reporter thread). */
void wsi_stats_sample_queues (GstWsiStats * self);
/* Every element's counters now, against the window's baseline. */
WsiStatsSnapshot *wsi_stats_take_snapshot (GstWsiStats * self,
    WsiSnapshotType type);

G_END_DECLS

#endif /* __WSI_STATS_BOOK_H__ */
