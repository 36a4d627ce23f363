/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiorderedpool.h: N worker threads that process an element's buffers in
 * parallel and a source pad task that pushes the results in the order the
 * work came in, serialized events passed through at their place.
 *
 * Contract: the element's streaming thread queues work items (fixed-size
 * structs copied into a ring) and serialized events; a worker calls
 * `process` on each work item with its own thread state and returns the
 * buffer to push, or NULL to drop the item; the pad task pushes buffers and
 * events strictly in queue order, so the output does not depend on the
 * number of threads. Queueing blocks while the ring (4 items per thread,
 * at least 8) is full: memory is bounded by the ring. Flow errors from
 * downstream come back from the next queue call; after EOS was queued the
 * task reports them itself (element error, EOS) since nobody else will.
 * Every pushed buffer carries a WsiWorkMeta (wsiworkmeta.h): which worker
 * made it, when, and how long queueing it waited for room, so a tracer can
 * draw one lane per worker; workers are named "<element>: worker i/n" in
 * it (the OS keeps 15 bytes of a thread name: `thread_name_prefix` + i).
 *
 * Threading: every function is called from the element's streaming
 * thread or its state changes, never from a worker. `process` runs with no
 * lock held. Cost per item: one mutex round trip on each side and a
 * condition signal only where a thread waits for it and was not woken
 * yet, made after the lock is released; queueing that found the ring full
 * sleeps until half of it is free, so a producer faster than downstream
 * wakes once per half ring, not once per item; the task is woken once per
 * run of done items at the head (half the queue limit, at most 16, or
 * everything queued once all of it is done), not once per item, and with
 * set_push_lists() pushes the run as one buffer list, so the thread
 * downstream of a queue wakes once per run too; no allocation but that
 * list.
 *
 * Not GstTaskPool: GstTaskPool hands out one-shot jobs with no order and no
 * per-thread state; keeping output order, per-thread decoders and
 * back-pressure would have to be rebuilt on top of it, which is this file.
 */

#ifndef __WSI_ORDERED_POOL_H__
#define __WSI_ORDERED_POOL_H__

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct _WsiOrderedPool WsiOrderedPool;

typedef struct
{
  /* Per-thread state, made when a worker starts and freed when it stops
   * (may be NULL). */
  gpointer (*thread_state_new) (gpointer user_data);
  void (*thread_state_free) (gpointer state, gpointer user_data);
  /* Runs on a worker: returns the buffer to push (ownership passed) or
   * NULL to drop the item. @work is the item's copy in the ring. */
  GstBuffer *(*process) (gpointer work, gpointer state, gpointer user_data);
  /* Optional: runs on the task in queue order, just before the push, with
   * (a copy of) the work as process() left it and its result (ownership
   * passed); returns the buffer to push or NULL. Decisions that must not
   * depend on thread timing (counting failures in a row, giving up) go
   * here. */
  GstBuffer *(*finish) (gpointer work, GstBuffer * result,
      gpointer user_data);
  /* Releases what a work item holds (dropped or flushed items too). */
  void (*work_clear) (gpointer work, gpointer user_data);
} WsiOrderedPoolFuncs;

/* @srcpad gets the pool's task; @work_size is the size of a work item. */
WsiOrderedPool *wsi_ordered_pool_new (GstPad * srcpad, gsize work_size,
    const WsiOrderedPoolFuncs * funcs, gpointer user_data);
void wsi_ordered_pool_free (WsiOrderedPool * pool);

/* The ring holds at least @min_items work items from the next
 * wsi_ordered_pool_start_workers() on (0: the default, 4 per thread and at
 * least 8): elements that look ahead at queued work (patchreader's
 * read-ahead for remote slides) see that many items before a worker takes
 * them. */
void wsi_ordered_pool_set_min_items (WsiOrderedPool * pool, guint min_items);

/* Queueing waits while @n_items are queued (clamped between the default
 * ring size and the ring): an element whose look-ahead needs change with
 * the stream (patchreader: deeper for slides at URLs) lowers or raises it
 * at any time; G_MAXUINT (the initial value) is the whole ring, 0 the
 * default size. Memory the
 * queued items hold grows with it, so the ring is sized by set_min_items
 * and the limit only decides how much of it is used. */
void wsi_ordered_pool_set_limit (WsiOrderedPool * pool, guint n_items);

/* The thread count that a `threads=0` property means: one per core,
 * shared among the LOCAL_WORLD_SIZE processes torchrun starts on a node,
 * between 1 and @max_threads. */
guint wsi_ordered_pool_auto_threads (guint max_threads);

/* The most worker threads a `threads` property accepts. */
#define WSI_ORDERED_POOL_MAX_THREADS 64

/* The `threads` property of every pool-backed element, one definition: a
 * guint from 0 to WSI_ORDERED_POOL_MAX_THREADS, @default_threads by
 * default, 0 = wsi_ordered_pool_auto_threads(), writable up to READY
 * (read when the element leaves READY), refused out of range
 * (wsirefusal.h). The blurb opens with @work (what the threads do:
 * "Decoding threads"); the rest, the range, the default, the automatic
 * count and that the output does not depend on it, is the same for every
 * element. For class_init. */
GParamSpec *wsi_ordered_pool_param_spec_threads (const gchar * work,
    guint default_threads);

/* Starts / joins the workers (READY <-> PAUSED). */
void wsi_ordered_pool_start_workers (WsiOrderedPool * pool, guint n_threads,
    const gchar * thread_name_prefix);
void wsi_ordered_pool_stop_workers (WsiOrderedPool * pool);

/* Runs of results go downstream as one GstBufferList (events between
 * them in their place) instead of one push per buffer: one wake-up of a
 * queue's thread downstream per run. Off by default: a pad probe on the
 * src pad then needs GST_PAD_PROBE_TYPE_BUFFER_LIST to see every buffer
 * (elements that take lists split them: GstPad's default chain_list). */
void wsi_ordered_pool_set_push_lists (WsiOrderedPool * pool,
    gboolean push_lists);

/* Queues a copy of @work (the pool then owns what it holds). */
GstFlowReturn wsi_ordered_pool_queue_work (WsiOrderedPool * pool,
    gconstpointer work);
/* Queues a copy of @work that the caller already processed into @result
 * (ownership taken; NULL drops the item): no worker is woken, the task
 * pushes it at its place after `finish`. For work that costs less than a
 * hand-over to a worker (patchstoresrc wrapping stored bytes). */
GstFlowReturn wsi_ordered_pool_queue_done (WsiOrderedPool * pool,
    gconstpointer work, GstBuffer * result);
/* Queues a serialized event (ownership taken). EOS is remembered. */
GstFlowReturn wsi_ordered_pool_queue_event (WsiOrderedPool * pool,
    GstEvent * event);
/* Waits until everything queued has been pushed. */
GstFlowReturn wsi_ordered_pool_drain (WsiOrderedPool * pool);

/* Flush start: unblocks queueing, workers and the task. */
void wsi_ordered_pool_set_flushing (WsiOrderedPool * pool);
/* Flush stop: waits for the workers to leave their items, discards every
 * item and resets the flow. */
void wsi_ordered_pool_reset (WsiOrderedPool * pool);

/* The pad task that pushes results. */
gboolean wsi_ordered_pool_start_task (WsiOrderedPool * pool);
gboolean wsi_ordered_pool_pause_task (WsiOrderedPool * pool);
gboolean wsi_ordered_pool_stop_task (WsiOrderedPool * pool);

/* Forgets a remembered downstream flow and EOS (new stream). */
void wsi_ordered_pool_reset_flow (WsiOrderedPool * pool);

G_END_DECLS

#endif /* __WSI_ORDERED_POOL_H__ */
