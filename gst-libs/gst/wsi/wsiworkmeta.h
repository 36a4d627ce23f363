/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiworkmeta.h: where and when a pool worker made a buffer, for tracers.
 *
 * Contract: the ordered pool (wsiorderedpool.c) puts one WsiWorkMeta on
 * every buffer it pushes: the worker thread that processed the item (its
 * kernel thread id and full name), when it started and finished, and how
 * long the streaming thread that queued the item waited for room in the
 * ring. A later pool on the same buffer overwrites it; @pad says which
 * pool's source pad the numbers belong to, so a reader (the wsistats
 * tracer's timeline) takes them only from the push on that pad and draws
 * each item once. The meta is never copied with the buffer and nothing in
 * the pipeline reads it: readers only find it by name
 * (gst_meta_get_info (WSI_WORK_META_NAME)), so a tracer needs this header
 * and no link to the pool.
 *
 * Cost: one meta per pushed buffer (a small allocation inside the buffer)
 * and three clock reads per item; no lock. I/O waits: a thread-local
 * pointer per item, two clock reads per remote read that blocked.
 *
 * Threading: written by the pool's task just before the push, while it
 * owns the buffer; read-only afterwards.
 */

#ifndef __WSI_WORK_META_H__
#define __WSI_WORK_META_H__

#include <gst/gst.h>

G_BEGIN_DECLS

#define WSI_WORK_META_NAME "WsiWorkMeta"
#define WSI_WORK_META_API_NAME "WsiWorkMetaAPI"

/* Intervals a worker spent blocked on remote bytes while making one item
 * (reported by the read layer, wsibytesource.h): the first
 * WSI_WORK_IO_WAITS drawn, all of them in @total_ns. */
#define WSI_WORK_IO_WAITS 8

typedef struct
{
  guint n;                      /* intervals held (at most WSI_WORK_IO_WAITS) */
  guint64 count;                /* waits, all of them */
  GstClockTime total_ns;        /* their time, all of them */
  GstClockTime start[WSI_WORK_IO_WAITS], end[WSI_WORK_IO_WAITS];
} WsiWorkIoWaits;

typedef struct
{
  GstMeta meta;

  gconstpointer pad;            /* the pool's source pad; identity only */
  const gchar *worker_name;     /* interned: "patchreader0: worker 2/4" */
  gint worker_tid;              /* kernel thread id of the worker */
  GstClockTime start, end;      /* process(), gst_util_get_timestamp() ns */
  /* the streaming thread that queued the item waited this long for room
   * (blocked on the pool); 0 when it did not wait */
  gint queued_tid;
  GstClockTime wait_start, wait_end;
  /* the worker's waits on remote bytes within start..end */
  WsiWorkIoWaits io;
} WsiWorkMeta;

/* Registers the meta (once per process, whichever copy of the pool comes
 * first) and returns its info. */
const GstMetaInfo *wsi_work_meta_get_info (void);

/* The buffer's WsiWorkMeta, added if it has none; @buffer must be
 * writable. */
WsiWorkMeta *wsi_work_meta_ensure (GstBuffer * buffer);

/* From now until wsi_work_io_waits_end(), the calling thread's I/O waits
 * (wsi_work_io_wait_note) go to @waits, cleared here. The pool brackets
 * each item's process() with these. */
void wsi_work_io_waits_begin (WsiWorkIoWaits * waits);
void wsi_work_io_waits_end (void);

/* The calling thread waited on remote bytes from @start_ns to @end_ns
 * (gst_util_get_timestamp() clock); ignored outside a begin/end pair.
 * Matches WsiByteSourceWaitFunc, so a plugin that links both the pool and
 * the read layer hands it to wsi_byte_source_set_wait_func(). */
void wsi_work_io_wait_note (guint64 start_ns, guint64 end_ns);

G_END_DECLS

#endif /* __WSI_WORK_META_H__ */
