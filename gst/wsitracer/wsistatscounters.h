/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistatscounters.h: the live numbers wsistats keeps per element.
 *
 * Contract: the tracer's hooks (gstwsistats.c) add to these under the
 * element's lock from the streaming threads; the snapshot
 * (wsistatssnapshot.c) copies them under the same lock and moves the
 * window baseline. Types only: nothing here costs anything.
 *
 * Threading: `lock` guards everything but the window baseline, which the
 * tracer's report lock guards (only reports read and move it).
 */

#ifndef __WSI_STATS_COUNTERS_H__
#define __WSI_STATS_COUNTERS_H__

#include <gst/gst.h>

#include "wsihistogram.h"

G_BEGIN_DECLS

#define WSI_STATS_MAX_PADS 16   /* pads beyond this share the last slot */
#define WSI_STATS_TRANSIT_SLOTS 4096    /* buffers in flight, by offset */

typedef enum
{
  WSI_HIST_SELF,
  WSI_HIST_LOOP,
  WSI_HIST_AGE,
  WSI_HIST_TRANSIT,
  WSI_HIST_INTERVAL,
  WSI_HIST_LEVEL,
  WSI_HIST_FILL,
  /* slide preparation, per slide (WsiSlideMeta prep-*-ns): a source's
   * open, overview read and wait for a prepared slide; a filter's mask */
  WSI_HIST_PREP_OPEN,
  WSI_HIST_PREP_OVERVIEW,
  WSI_HIST_PREP_WAIT,
  WSI_HIST_PREP_MASK,
  WSI_N_HISTS
} WsiHistKind;

typedef enum
{
  WSI_COUNT_BUFFERS_IN,
  WSI_COUNT_PATCHES_IN,
  WSI_COUNT_BYTES_IN,
  WSI_COUNT_BUFFERS_OUT,
  WSI_COUNT_PATCHES_OUT,
  WSI_COUNT_BYTES_OUT,
  WSI_COUNT_BUSY_NS,            /* sink: time inside its chain */
  WSI_COUNT_WAIT_NS,            /* sink: time between chain calls */
  WSI_COUNT_SAMPLES,            /* queue: occupancy samples */
  WSI_COUNT_EMPTY,
  WSI_COUNT_FULL,
  WSI_COUNT_WORK_NS,            /* pool: workers' time making items */
  WSI_COUNT_IO_WAIT_NS,         /* pool: of which blocked on remote bytes */
  WSI_COUNT_IO_WAITS,           /* pool: how many such waits */
  WSI_N_COUNTS
} WsiCountKind;

typedef enum
{
  WSI_PAD_BUFFERS,
  WSI_PAD_PATCHES,
  WSI_PAD_BYTES,
  WSI_N_PAD_COUNTS
} WsiPadCountKind;

typedef struct
{
  gconstpointer pad;            /* identity only, never dereferenced */
  gchar *name;
  gboolean is_src;
  guint64 counts[WSI_N_PAD_COUNTS];
  guint64 base[WSI_N_PAD_COUNTS];       /* at the start of the window */
} WsiPadStats;

typedef struct
{
  guint64 offset;
  GstClockTime ts;
} WsiTransitSlot;

typedef struct
{
  GMutex lock;                  /* everything below except the baseline */
  gchar *name;
  gchar *factory;
  gchar *loop_name;             /* timeline slice name for loop time */
  gchar *blocked_name;          /* "<name> full": a push waiting for room */
  GWeakRef ref;
  gboolean is_sink, is_source, is_queue, track_transit;
  gboolean blocks;              /* a full one holds the pushing thread */
  gboolean says_full;           /* emits "overrun" when full (queue) */
  gint sink_pads, src_pads;

  guint64 counts[WSI_N_COUNTS];
  WsiHistogram hist[WSI_N_HISTS];
  GstClockTime first_ts, last_ts;
  GstClockTime last_arrival, last_departure;
  WsiPadStats pads[WSI_STATS_MAX_PADS];
  guint n_pads;
  WsiTransitSlot *transit;

  /* window baseline, guarded by the tracer's report_lock */
  guint64 base_counts[WSI_N_COUNTS];
  WsiHistogram base_hist[WSI_N_HISTS];
} WsiElementStats;

G_END_DECLS

#endif /* __WSI_STATS_COUNTERS_H__ */
