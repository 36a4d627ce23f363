/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitimeline.h: a Chrome trace-event file (opens in Perfetto and
 * chrome://tracing) fed from the streaming threads without blocking them.
 *
 * Streaming threads add events to a fixed ring (one atomic compare-and-swap
 * each, no allocation, no I/O); the reporter thread writes the ring to the
 * file. When the ring is full the event is dropped and counted. After each
 * wsi_timeline_flush() the file is a complete JSON array.
 */

#ifndef __WSI_TIMELINE_H__
#define __WSI_TIMELINE_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct _WsiTimeline WsiTimeline;

/* Returns NULL (after a g_warning naming @path) if the file can't be made. */
WsiTimeline *wsi_timeline_new (const gchar * path, guint capacity);
void wsi_timeline_free (WsiTimeline * timeline);

/* @name and @category must stay valid until the timeline is freed (static
 * or interned). @category becomes the event's "cat": readers colour by it
 * (element, work, blocked, loop, consumer-wait, consumer-compute, ...).
 * @tid is a kernel thread id or a made-up lane id. Times in ns. */
void wsi_timeline_add_slice (WsiTimeline * timeline, gint tid,
    const gchar * name, const gchar * category, guint64 start_ns,
    guint64 duration_ns);
/* A queue's level; @limit (its max-size-buffers, 0: none) lets readers
 * see "full". */
void wsi_timeline_add_counter (WsiTimeline * timeline, const gchar * name,
    guint64 ts_ns, guint64 value, guint64 limit);
/* A "thread_name" metadata event; @thread_name is interned (any length:
 * the trace is not bound by the OS's 15 bytes). */
void wsi_timeline_add_thread_name (WsiTimeline * timeline, gint tid,
    const gchar * thread_name);

/* Writes what the ring holds; call from one thread at a time. */
void wsi_timeline_flush (WsiTimeline * timeline);
guint64 wsi_timeline_dropped (WsiTimeline * timeline);

G_END_DECLS

#endif /* __WSI_TIMELINE_H__ */
