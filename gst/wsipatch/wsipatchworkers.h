/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsipatchworkers.h: the pads of a one-in, one-out patch element whose
 * per-buffer work runs on the ordered worker pool (wsiorderedpool.h), as
 * patchfilter and patchaugment do.
 *
 * Contract: wsi_patch_workers_new() makes the element's "sink" and "src"
 * pads from its templates and takes over their event, query and
 * activation functions; the element keeps its chain function, which turns
 * each buffer into a work item and hands it to wsi_patch_workers_queue().
 * Output caps are the input caps (caps and allocation queries are proxied
 * to the peers); a caps event waits until every earlier buffer is out,
 * then goes to the element's set_caps (refusing returns FALSE) and on
 * downstream in its place. Serialized events keep their place between
 * buffers; flushes discard what is in flight. The element calls
 * wsi_patch_workers_start() on READY -> PAUSED and
 * wsi_patch_workers_stop() on PAUSED -> READY.
 *
 * Threading: as wsiorderedpool.h: process on N workers, finish on the src
 * pad's task in stream order, everything else on the streaming thread or
 * in state changes. Cost: the pool's, one mutex round trip a buffer.
 */

#ifndef __WSI_PATCH_WORKERS_H__
#define __WSI_PATCH_WORKERS_H__

#include <gst/gst.h>
#include <gst/wsi/wsiorderedpool.h>

G_BEGIN_DECLS

typedef struct _WsiPatchWorkers WsiPatchWorkers;

/* Streaming thread, with nothing in flight: the new input (= output)
 * caps. */
typedef gboolean (*WsiPatchWorkersSetCaps) (GstElement * element,
    GstCaps * caps);

/* @funcs get @element as user data. */
WsiPatchWorkers *wsi_patch_workers_new (GstElement * element,
    GstStaticPadTemplate * sink_template, GstStaticPadTemplate * src_template,
    GstPadChainFunction chain, gsize work_size,
    const WsiOrderedPoolFuncs * funcs, WsiPatchWorkersSetCaps set_caps);
void wsi_patch_workers_free (WsiPatchWorkers * workers);

GstPad *wsi_patch_workers_sink_pad (WsiPatchWorkers * workers);
GstPad *wsi_patch_workers_src_pad (WsiPatchWorkers * workers);

/* @n_threads 0: one per core, shared among LOCAL_WORLD_SIZE ranks. */
void wsi_patch_workers_start (WsiPatchWorkers * workers, guint n_threads,
    const gchar * thread_name_prefix);
void wsi_patch_workers_stop (WsiPatchWorkers * workers);

/* Queues a copy of @work; returns downstream's flow. */
GstFlowReturn wsi_patch_workers_queue (WsiPatchWorkers * workers,
    gconstpointer work);

G_END_DECLS

#endif /* __WSI_PATCH_WORKERS_H__ */
