/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsipoolelement.h: the base class of one-in, one-out patch elements whose
 * per-buffer work runs on the ordered worker pool (wsiorderedpool.h):
 * patchreader, patchviews, patchfilter, patchaugment. It plays the part
 * GstVideoDecoder plays for decoders: pads, activation, flushing, caps
 * ordering, EOS and the start/stop of the workers are written here once;
 * a subclass fills in virtual methods.
 *
 * Contract: the subclass's class_init adds pad templates named "sink" and
 * "src" and sets @work_size (the size of its work item) and
 * @worker_name (thread names "<worker_name>: worker i/n"). The base makes
 * the pads from the templates; the subclass's instance init may then set
 * pad flags (proxy caps and allocation for a filter that keeps the caps).
 * Each input buffer goes to @handle_buffer (streaming thread), which turns
 * it into work items for wsi_pool_element_queue_work(); @process runs on
 * the workers, @finish (optional) on the src pad's task in stream order,
 * just before the push. Serialized events keep their place between
 * buffers; a caps event first waits until every earlier buffer is out,
 * then @set_caps returns the output caps (default: the input caps), which
 * go downstream in the event's place. Flush start unblocks a chain waiting
 * for room, the workers and the task; flush stop discards what is in
 * flight; EOS is pushed after the last result. @start runs on READY ->
 * PAUSED before the workers start, @stop on PAUSED -> READY after they
 * are joined; both may be run again (NULL <-> PLAYING is repeatable).
 *
 * Threading: as wsiorderedpool.h: @process on N workers with no lock held,
 * @finish on the task, everything else on the streaming thread or in state
 * changes. Cost: the pool's, one mutex round trip a work item and one
 * wake-up of the task per run of done items.
 */

#ifndef __WSI_POOL_ELEMENT_H__
#define __WSI_POOL_ELEMENT_H__

#include <gst/gst.h>
#include <gst/wsi/wsiorderedpool.h>
#include <gst/wsi/wsirecord.h>

G_BEGIN_DECLS

#define WSI_TYPE_POOL_ELEMENT (wsi_pool_element_get_type ())
#define WSI_POOL_ELEMENT(obj) \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), WSI_TYPE_POOL_ELEMENT, WsiPoolElement))
#define WSI_POOL_ELEMENT_CAST(obj) ((WsiPoolElement *) (obj))
#define WSI_POOL_ELEMENT_CLASS(klass) \
  (G_TYPE_CHECK_CLASS_CAST ((klass), WSI_TYPE_POOL_ELEMENT, \
      WsiPoolElementClass))
#define WSI_POOL_ELEMENT_GET_CLASS(obj) \
  (G_TYPE_INSTANCE_GET_CLASS ((obj), WSI_TYPE_POOL_ELEMENT, \
      WsiPoolElementClass))
#define WSI_IS_POOL_ELEMENT(obj) \
  (G_TYPE_CHECK_INSTANCE_TYPE ((obj), WSI_TYPE_POOL_ELEMENT))

#define WSI_POOL_ELEMENT_SINK_PAD(obj) (WSI_POOL_ELEMENT_CAST (obj)->sinkpad)
#define WSI_POOL_ELEMENT_SRC_PAD(obj) (WSI_POOL_ELEMENT_CAST (obj)->srcpad)

/* The most threads `threads=0` gives (one per core up to this). */
#define WSI_POOL_ELEMENT_MAX_THREADS WSI_ORDERED_POOL_MAX_THREADS

typedef struct _WsiPoolElement WsiPoolElement;
typedef struct _WsiPoolElementClass WsiPoolElementClass;

struct _WsiPoolElement
{
  GstElement element;

  /*< protected >*/
  GstPad *sinkpad;
  GstPad *srcpad;

  /*< private >*/
  WsiOrderedPool *pool;
};

/**
 * WsiPoolElementClass:
 * @work_size: size of a work item (copied into the pool's ring)
 * @worker_name: prefix of the worker threads' names
 * @start: READY -> PAUSED, before the workers start: reset counters, fix
 *   what the workers read; set *n_threads (0 = one per core, shared among
 *   LOCAL_WORLD_SIZE ranks). FALSE fails the state change.
 * @stop: PAUSED -> READY, after the workers are joined: drop the stream's
 *   state.
 * @thread_state_new: (optional) per-worker state, made on the worker
 * @thread_state_free: (optional) frees it
 * @handle_buffer: streaming thread: turn @buffer (owned) into work items
 *   with wsi_pool_element_queue_work(); returns downstream's flow
 * @process: a worker: the buffer to push (owned) or NULL to drop the item
 * @finish: (optional) the task, in stream order: the buffer to push or
 *   NULL; decisions that must not depend on thread timing go here
 * @work_clear: releases what a work item holds (flushed items too)
 * @set_caps: (optional) nothing in flight: the output caps for these
 *   input caps (owned), or NULL to refuse them
 * @set_flushing: (optional) after the pool is set flushing (TRUE) or
 *   reset (FALSE): unblock what else the streaming thread may wait on
 * @sink_event: the sink pad's events; chain up for the ones not handled
 * @sink_query: the sink pad's queries; chain up for the ones not handled
 */
struct _WsiPoolElementClass
{
  GstElementClass parent_class;

  gsize work_size;
  const gchar *worker_name;

  gboolean (*start) (WsiPoolElement * self, guint * n_threads);
  void (*stop) (WsiPoolElement * self);

  gpointer (*thread_state_new) (WsiPoolElement * self);
  void (*thread_state_free) (WsiPoolElement * self, gpointer state);
  GstFlowReturn (*handle_buffer) (WsiPoolElement * self, GstBuffer * buffer);
  GstBuffer *(*process) (WsiPoolElement * self, gpointer work,
      gpointer state);
  GstBuffer *(*finish) (WsiPoolElement * self, gpointer work,
      GstBuffer * result);
  void (*work_clear) (WsiPoolElement * self, gpointer work);

  GstCaps *(*set_caps) (WsiPoolElement * self, GstCaps * caps);
  void (*set_flushing) (WsiPoolElement * self, gboolean flushing);
  gboolean (*sink_event) (WsiPoolElement * self, GstEvent * event);
  gboolean (*sink_query) (WsiPoolElement * self, GstQuery * query);
};

GType wsi_pool_element_get_type (void);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WsiPoolElement, gst_object_unref)

/* Streaming thread: queues a copy of @work; returns downstream's flow. */
GstFlowReturn wsi_pool_element_queue_work (WsiPoolElement * self,
    gconstpointer work);
/* Streaming thread: queues a serialized event (owned) in its place. */
GstFlowReturn wsi_pool_element_queue_event (WsiPoolElement * self,
    GstEvent * event);
/* Streaming thread: waits until everything queued has been pushed. */
GstFlowReturn wsi_pool_element_drain (WsiPoolElement * self);

/* Work items the ring holds at least from the next start on (0 = the
 * default, 4 per thread): call from @start. Elements that act on queued
 * work ahead of the workers (patchreader's prefetch for remote slides)
 * look that far ahead. */
void wsi_pool_element_set_min_queued (WsiPoolElement * self, guint n_items);

/* Streaming thread or @start: work items queued at most from now on (see
 * wsi_ordered_pool_set_limit: between the default and the ring's size;
 * G_MAXUINT, the initial value, is the whole ring). */
void wsi_pool_element_set_queue_limit (WsiPoolElement * self, guint n_items);

/* Instance init or @start: runs of results leave as buffer lists
 * (wsi_ordered_pool_set_push_lists: one wake-up of a queue downstream per
 * run; a src pad probe then needs GST_PAD_PROBE_TYPE_BUFFER_LIST). */
void wsi_pool_element_set_push_lists (WsiPoolElement * self,
    gboolean push_lists);

/* Tells the planner upstream (patchsampler) that the patch of @record,
 * from slide @path, will not be delivered, and why (wsievent.h). */
void wsi_pool_element_report_dropped (WsiPoolElement * self,
    const WsiPatchRecord * record, const gchar * path, const gchar * reason);

G_END_DECLS

#endif /* __WSI_POOL_ELEMENT_H__ */
