/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * gstwsistatspriv.h: the wsistats tracer's instance, shared by the element
 * (gstwsistats.c: parameters, signals, reporter, outputs) and its per-stage
 * bookkeeping (wsistatsbook.c). Nothing outside the tracer includes it.
 * The locks and what they guard are written beside the fields.
 */

#ifndef __GST_WSI_STATS_PRIV_H__
#define __GST_WSI_STATS_PRIV_H__

#include <stdio.h>

#include <gst/gst.h>

#include "wsistatscounters.h"
#include "wsitimeline.h"

G_BEGIN_DECLS

/* the same typedef as gstwsistats.h's G_DECLARE_FINAL_TYPE (C11 allows
 * it twice), so the bookkeeping needs no header of the element */
typedef struct _GstWsiStats GstWsiStats;

#define MAX_LANES 16            /* lanes made by the timeline-slice signal */

struct _GstWsiStats
{
  GstTracer parent;

  /* parameters, fixed after construction */
  guint interval_ms;
  guint sample_interval_ms;
  gchar *file_path;
  gchar *timeline_path;
  guint timeline_capacity;
  gchar **transit_names;
  gboolean print_summary;
  gboolean active;              /* FALSE for a second instance */

  GQuark stats_quark;
  GQuark count_quark, records_quark;
  GQuark coordinates_quark;     /* pad qdata: its caps' kind, once known */
  GType patch_meta_api;
  GType slide_meta_api;
  GQuark prep_quarks[4];        /* prep-open-ns ... prep-mask-ns */
  GType work_meta_api;          /* 0 until a pool registered it */
  gint origin_samples;          /* hooks that calibrated the origin */
  gint fake_clock;              /* "use-fake-clock" is on (tests) */
  guint64 fake_now;             /* the hooks' time then, atomic */
  volatile gint generation;

  GMutex lock;                  /* elements list */
  GPtrArray *elements;

  GMutex report_lock;           /* outputs, baselines, reporter state */
  FILE *file;
  WsiTimeline *timeline;
  GstClockTime start_ts, window_start_ts;
  GstClockTime timeline_origin; /* the hook timestamps' origin (calibrated) */
  gdouble cpu_start_s, cpu_window_s;
  guint64 buffers_at_final;
  gboolean final_written;

  GMutex thread_lock;           /* reporter thread */
  GCond thread_cond;
  GThread *thread;
  gboolean stopping;
  gint thread_pid;

  /* lanes of the timeline-slice signal, guarded by lock */
  const gchar *lane_names[MAX_LANES];
  guint n_lanes;
};

G_END_DECLS

#endif /* __GST_WSI_STATS_PRIV_H__ */
