/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsiorderedpool.c: workers in parallel, results in order (see
 * wsiorderedpool.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsiorderedpool.h"
#include "wsirefusal.h"
#include "wsiworkmeta.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

GST_DEBUG_CATEGORY_STATIC (wsi_ordered_pool_debug);
#define GST_CAT_DEFAULT wsi_ordered_pool_debug

/* In-flight items per worker: enough to keep every worker busy while the
 * task waits for the oldest one. */
#define RING_ITEMS_PER_WORKER 4
#define RING_MIN_ITEMS 8

/* The task is woken for a run of done items at the head, not for each
 * one: this many, or half the queue limit if that is less, or every
 * queued item when all are done. More would delay the first of them
 * further for little: the task's wake-up is then paid once per run. */
#define HANDOVER_RUN_MAX 16

typedef enum
{
  ITEM_EMPTY,
  ITEM_WORK,
  ITEM_EVENT,
} ItemKind;

typedef enum
{
  ITEM_WAITING,                 /* work no worker has taken yet */
  ITEM_PROCESSING,
  ITEM_DONE,                    /* ready for the task */
} ItemState;

typedef struct
{
  ItemKind kind;
  ItemState state;
  GstEvent *event;
  GstBuffer *result;            /* NULL: dropped */
  gpointer work;                /* work_size bytes, owned by the ring */
  /* for the buffer's WsiWorkMeta (timelines) */
  const gchar *worker_name;
  gint worker_tid, queued_tid;
  GstClockTime start, end, wait_start, wait_end;
  WsiWorkIoWaits io;            /* the worker's waits on remote bytes */
} PoolItem;

typedef struct
{
  WsiOrderedPool *pool;
  GThread *thread;
  const gchar *name;            /* interned full name, see start_workers */
  gint tid;
} PoolWorker;

struct _WsiOrderedPool
{
  GstPad *srcpad;
  gsize work_size;
  WsiOrderedPoolFuncs funcs;
  gpointer user_data;

  GMutex lock;
  GCond item_added;             /* workers wait here for work */
  GCond item_done;              /* the task and resets wait here */
  GCond space_freed;            /* queueing and drain wait here */
  /* threads waiting on each condition and not yet woken: a signal
   * without a waiter is skipped (GLib's costs a futex system call even
   * then). The waker takes them off when it decides to wake them, so a
   * waiter that has not run yet is not woken again by the next item. */
  guint added_waiters, done_waiters, room_waiters, drain_waiters;
  PoolItem *ring;
  guint min_items;              /* ring size asked by the element, or 0 */
  guint default_items;          /* the ring size for the thread count */
  guint limit;                  /* items queued at most, see set_limit */
  guint8 *work_memory;          /* capacity * work_size */
  guint capacity;
  guint64 n_queued;             /* items ever queued */
  guint64 n_taken;              /* items the task took out */
  guint64 n_dispatched;         /* items workers looked at */
  guint n_processing;
  gboolean flushing;
  gboolean workers_quit;
  gboolean eos_queued;
  gboolean task_pushing;        /* the task pushes items it took */
  gboolean push_lists;          /* runs go downstream as buffer lists */
  GstFlowReturn flow;           /* last downstream flow, back to upstream */
  PoolWorker *workers;
  guint n_workers;
  gpointer task_work;           /* the task's copy of the head's work */
};

static inline PoolItem *
ring_slot (WsiOrderedPool * pool, guint64 position)
{
  return &pool->ring[position % pool->capacity];
}

/* Waits on @cond, counted in @waiters (lock held); the waker takes the
 * count off (a spurious wake-up leaves one too many: at worst a signal
 * nobody needed). */
static void
wait_counted (WsiOrderedPool * pool, GCond * cond, guint * waiters)
{
  (*waiters)++;
  g_cond_wait (cond, &pool->lock);
}

/* Wake-ups are decided with the lock held and made once it is released
 * (unlock_and_wake): a thread woken while its waker still holds the lock
 * would block on the lock at once and need a second wake-up. */
typedef enum
{
  WAKE_ADDED = 1 << 0,          /* one worker */
  WAKE_DONE = 1 << 1,           /* the task and reset */
  WAKE_ROOM = 1 << 2,           /* queueing and drain */
} PoolWakes;

static void
unlock_and_wake (WsiOrderedPool * pool, guint wakes)
{
  g_mutex_unlock (&pool->lock);
  if (wakes & WAKE_ADDED)
    g_cond_signal (&pool->item_added);
  if (wakes & WAKE_DONE)
    g_cond_broadcast (&pool->item_done);
  if (wakes & WAKE_ROOM)
    g_cond_broadcast (&pool->space_freed);
}

/* Wakes everything waiting, now (flushing, quitting, errors, limits). */
static void
broadcast_all_locked (WsiOrderedPool * pool)
{
  pool->added_waiters = pool->done_waiters = 0;
  pool->room_waiters = pool->drain_waiters = 0;
  g_cond_broadcast (&pool->item_added);
  g_cond_broadcast (&pool->item_done);
  g_cond_broadcast (&pool->space_freed);
}

static guint
wake_item_done_locked (WsiOrderedPool * pool)
{
  if (pool->done_waiters == 0)
    return 0;
  pool->done_waiters = 0;
  return WAKE_DONE;
}

static guint
wake_worker_locked (WsiOrderedPool * pool)
{
  if (pool->added_waiters == 0)
    return 0;
  pool->added_waiters--;
  return WAKE_ADDED;
}

static guint queue_limit (WsiOrderedPool * pool);

/* The task took or pushed an item. Queueing that waits for room is woken
 * once half the ring is free, not at every item: a producer faster than
 * downstream would otherwise sleep and wake once per item (a context
 * switch each, which costs as much as serving a stored patch). Drain is
 * woken every time (it waits for the ring to empty). */
static guint
wake_room_freed_locked (WsiOrderedPool * pool)
{
  if (pool->drain_waiters > 0 || (pool->room_waiters > 0
          && pool->n_queued - pool->n_taken <= queue_limit (pool) / 2)) {
    pool->room_waiters = pool->drain_waiters = 0;
    return WAKE_ROOM;
  }
  return 0;
}

static void
item_clear (WsiOrderedPool * pool, PoolItem * item)
{
  gpointer work = item->work;

  if (item->kind == ITEM_WORK && pool->funcs.work_clear)
    pool->funcs.work_clear (work, pool->user_data);
  gst_clear_event (&item->event);
  gst_clear_buffer (&item->result);
  memset (item, 0, sizeof (*item));
  item->work = work;
}

/* Empties the ring; callers make sure no worker processes. */
static void
ring_clear_locked (WsiOrderedPool * pool)
{
  while (pool->n_taken < pool->n_queued) {
    item_clear (pool, ring_slot (pool, pool->n_taken));
    pool->n_taken++;
  }
  pool->n_queued = pool->n_taken = pool->n_dispatched = 0;
}

WsiOrderedPool *
wsi_ordered_pool_new (GstPad * srcpad, gsize work_size,
    const WsiOrderedPoolFuncs * funcs, gpointer user_data)
{
  WsiOrderedPool *pool = g_new0 (WsiOrderedPool, 1);

  if (g_once_init_enter (&wsi_ordered_pool_debug)) {
    GstDebugCategory *cat = NULL;

    GST_DEBUG_CATEGORY_INIT (cat, "wsiorderedpool", 0,
        "gst-wsi ordered worker pool");
    g_once_init_leave (&wsi_ordered_pool_debug, cat);
  }
  pool->srcpad = srcpad;
  pool->work_size = MAX (work_size, 1);
  pool->funcs = *funcs;
  pool->user_data = user_data;
  pool->flow = GST_FLOW_OK;
  pool->limit = G_MAXUINT;      /* the whole ring */
  pool->task_work = g_malloc0 (pool->work_size);
  wsi_work_meta_get_info ();
  g_mutex_init (&pool->lock);
  g_cond_init (&pool->item_added);
  g_cond_init (&pool->item_done);
  g_cond_init (&pool->space_freed);
  return pool;
}

void
wsi_ordered_pool_free (WsiOrderedPool * pool)
{
  if (pool == NULL)
    return;
  wsi_ordered_pool_stop_workers (pool);
  g_mutex_clear (&pool->lock);
  g_cond_clear (&pool->item_added);
  g_cond_clear (&pool->item_done);
  g_cond_clear (&pool->space_freed);
  g_free (pool->task_work);
  g_free (pool);
}

/* Whether the task has a run to push (lock held): HANDOVER_RUN_MAX done
 * items in a row from the head (fewer for a small queue limit), or every
 * queued item done, so nothing else would end the wait (the stream
 * pauses, drains or ends; a producer that waits for output before it
 * queues more). Whatever makes it true (a worker finishing, an item or
 * event queued done) checks it, and until then some item is in flight
 * whose end checks again. */
static gboolean
task_due_locked (WsiOrderedPool * pool)
{
  guint run = CLAMP (queue_limit (pool) / 2, 1, HANDOVER_RUN_MAX);
  guint64 position = pool->n_taken;

  while (position < pool->n_queued
      && ring_slot (pool, position)->state == ITEM_DONE) {
    position++;
    if (position - pool->n_taken >= run)
      return TRUE;
  }
  return position > pool->n_taken && position == pool->n_queued;
}

/* ---- workers ------------------------------------------------------------ */

/* The oldest work no worker has taken, or NULL. */
static PoolItem *
take_next_work_locked (WsiOrderedPool * pool)
{
  if (pool->flushing)
    return NULL;
  /* Events leave without a worker: skip what the task took. */
  pool->n_dispatched = MAX (pool->n_dispatched, pool->n_taken);
  while (pool->n_dispatched < pool->n_queued) {
    PoolItem *item = ring_slot (pool, pool->n_dispatched++);

    if (item->kind == ITEM_WORK && item->state == ITEM_WAITING)
      return item;
  }
  return NULL;
}

static gpointer
worker_main (gpointer data)
{
  PoolWorker *worker = data;
  WsiOrderedPool *pool = worker->pool;
  gpointer state = NULL;
  PoolItem *item;
  GstBuffer *result;

  worker->tid = (gint) syscall (SYS_gettid);
  if (pool->funcs.thread_state_new)
    state = pool->funcs.thread_state_new (pool->user_data);

  g_mutex_lock (&pool->lock);
  while (!pool->workers_quit) {
    guint wakes = 0;

    item = take_next_work_locked (pool);
    if (item == NULL) {
      wait_counted (pool, &pool->item_added, &pool->added_waiters);
      continue;
    }
    item->state = ITEM_PROCESSING;
    item->worker_name = worker->name;
    item->worker_tid = worker->tid;
    pool->n_processing++;
    g_mutex_unlock (&pool->lock);

    item->start = gst_util_get_timestamp ();
    wsi_work_io_waits_begin (&item->io);
    result = pool->funcs.process (item->work, state, pool->user_data);
    wsi_work_io_waits_end ();
    item->end = gst_util_get_timestamp ();

    g_mutex_lock (&pool->lock);
    item->result = result;
    item->state = ITEM_DONE;
    pool->n_processing--;
    /* the task waits for a run of done items from the head, reset for
     * no processing: an item done out of order changes neither */
    if (pool->n_processing == 0 || task_due_locked (pool))
      wakes = wake_item_done_locked (pool);
    if (wakes != 0) {
      /* wake after unlocking (see PoolWakes), then take the lock again */
      unlock_and_wake (pool, wakes);
      g_mutex_lock (&pool->lock);
    }
  }
  g_mutex_unlock (&pool->lock);

  if (pool->funcs.thread_state_free)
    pool->funcs.thread_state_free (state, pool->user_data);
  return NULL;
}

/* "patchreader0: worker 2/4": the element, the pool and the worker. */
static gchar *
worker_full_name (WsiOrderedPool * pool, const gchar * prefix, guint i,
    guint n)
{
  GstObject *element = gst_pad_get_parent (pool->srcpad);
  gchar *name = g_strdup_printf ("%s: worker %u/%u",
      element ? GST_OBJECT_NAME (element) : prefix, i + 1, n);

  gst_clear_object (&element);
  return name;
}

void
wsi_ordered_pool_set_min_items (WsiOrderedPool * pool, guint min_items)
{
  g_mutex_lock (&pool->lock);
  pool->min_items = min_items;
  g_mutex_unlock (&pool->lock);
}

void
wsi_ordered_pool_set_push_lists (WsiOrderedPool * pool, gboolean push_lists)
{
  g_mutex_lock (&pool->lock);
  pool->push_lists = push_lists;
  g_mutex_unlock (&pool->lock);
}

void
wsi_ordered_pool_set_limit (WsiOrderedPool * pool, guint n_items)
{
  g_mutex_lock (&pool->lock);
  if (n_items > pool->limit) {
    pool->room_waiters = pool->drain_waiters = 0;
    g_cond_broadcast (&pool->space_freed);
  }
  pool->limit = n_items;
  g_mutex_unlock (&pool->lock);
}

/* Items queued at most now: the limit, at least the default ring size, at
 * most the ring. Called with the lock held. */
static guint
queue_limit (WsiOrderedPool * pool)
{
  return CLAMP (pool->limit, pool->default_items, pool->capacity);
}

void
wsi_ordered_pool_start_workers (WsiOrderedPool * pool, guint n_threads,
    const gchar * thread_name_prefix)
{
  guint i, n = MAX (n_threads, 1);

  g_mutex_lock (&pool->lock);
  pool->n_workers = n;
  pool->default_items = MAX (RING_ITEMS_PER_WORKER * n, RING_MIN_ITEMS);
  pool->capacity = MAX (pool->default_items, pool->min_items);
  pool->ring = g_new0 (PoolItem, pool->capacity);
  pool->work_memory = g_malloc0 (pool->capacity * pool->work_size);
  for (i = 0; i < pool->capacity; i++)
    pool->ring[i].work = pool->work_memory + i * pool->work_size;
  pool->n_queued = pool->n_taken = pool->n_dispatched = 0;
  pool->workers_quit = FALSE;
  pool->workers = g_new0 (PoolWorker, n);
  g_mutex_unlock (&pool->lock);

  GST_DEBUG ("starting %u %s threads", n, thread_name_prefix);
  for (i = 0; i < n; i++) {
    gchar *name = g_strdup_printf ("%s%u", thread_name_prefix, i);
    gchar *full = worker_full_name (pool, thread_name_prefix, i, n);

    pool->workers[i].pool = pool;
    /* the OS keeps 15 bytes of @name; timelines get the full one */
    pool->workers[i].name = g_intern_string (full);
    pool->workers[i].thread = g_thread_new (name, worker_main,
        &pool->workers[i]);
    g_free (full);
    g_free (name);
  }
}

void
wsi_ordered_pool_stop_workers (WsiOrderedPool * pool)
{
  guint i;

  if (pool->workers == NULL)
    return;
  g_mutex_lock (&pool->lock);
  pool->workers_quit = TRUE;
  pool->added_waiters = 0;
  g_cond_broadcast (&pool->item_added);
  g_mutex_unlock (&pool->lock);

  for (i = 0; i < pool->n_workers; i++)
    g_thread_join (pool->workers[i].thread);

  g_mutex_lock (&pool->lock);
  ring_clear_locked (pool);
  g_clear_pointer (&pool->ring, g_free);
  g_clear_pointer (&pool->work_memory, g_free);
  g_clear_pointer (&pool->workers, g_free);
  pool->n_workers = 0;
  pool->capacity = 0;
  g_mutex_unlock (&pool->lock);
}

/* ---- the pad task ------------------------------------------------------- */

static gboolean
head_ready_locked (WsiOrderedPool * pool)
{
  return pool->n_taken < pool->n_queued
      && ring_slot (pool, pool->n_taken)->state == ITEM_DONE;
}

/* Takes the head item's event or result out of the ring; its work moves
 * to pool->task_work (for finish) when @has_work is set. */
static guint
take_head_locked (WsiOrderedPool * pool, GstEvent ** event,
    GstBuffer ** buffer, gboolean * has_work, PoolItem * timing)
{
  PoolItem *item = ring_slot (pool, pool->n_taken);

  *timing = *item;
  *event = g_steal_pointer (&item->event);
  *buffer = g_steal_pointer (&item->result);
  *has_work = item->kind == ITEM_WORK && pool->funcs.finish != NULL;
  if (*has_work) {
    memcpy (pool->task_work, item->work, pool->work_size);
    item->kind = ITEM_EMPTY;    /* the copy owns what the work holds */
  }
  item_clear (pool, item);
  pool->n_taken++;
  pool->task_pushing = TRUE;
  return wake_room_freed_locked (pool);
}

/* Tells tracers which worker made @buffer and when (wsiworkmeta.h). The
 * work's own reference is gone by now, so the buffer is usually writable
 * as it is and nothing is copied. */
static GstBuffer *
stamp_work (WsiOrderedPool * pool, GstBuffer * buffer, const PoolItem * item)
{
  WsiWorkMeta *meta;

  if (item->worker_name == NULL)
    return buffer;
  buffer = gst_buffer_make_writable (buffer);
  meta = wsi_work_meta_ensure (buffer);
  meta->pad = pool->srcpad;
  meta->worker_name = item->worker_name;
  meta->worker_tid = item->worker_tid;
  meta->start = item->start;
  meta->end = item->end;
  meta->queued_tid = item->queued_tid;
  meta->wait_start = item->wait_start;
  meta->wait_end = item->wait_end;
  meta->io = item->io;
  return buffer;
}

/* Pushes @list (owned), a single buffer as itself. */
static GstFlowReturn
push_list (GstPad * pad, GstBufferList * list)
{
  if (gst_buffer_list_length (list) == 1) {
    GstBuffer *buffer = gst_buffer_ref (gst_buffer_list_get (list, 0));

    gst_buffer_list_unref (list);
    return gst_pad_push (pad, buffer);
  }
  return gst_pad_push_list (pad, list);
}

/* One wake-up: takes the run of done items at the head (and what gets
 * done meanwhile, up to the queue limit) and pushes it in order, as one
 * buffer list between events when push_lists is set. */
static void
task_loop (gpointer data)
{
  WsiOrderedPool *pool = data;
  GstPad *pad = pool->srcpad;
  GstEvent *event;
  GstBuffer *buffer;
  GstBufferList *list = NULL;
  GstFlowReturn ret = GST_FLOW_OK;
  gboolean eos_queued, has_work, lists;
  PoolItem timing;
  guint wakes, n_run = 0, max_run;

  g_mutex_lock (&pool->lock);
  while (!pool->flushing && !task_due_locked (pool))
    wait_counted (pool, &pool->item_done, &pool->done_waiters);
  if (pool->flushing) {
    g_mutex_unlock (&pool->lock);
    gst_pad_pause_task (pad);
    return;
  }
  max_run = queue_limit (pool);
  lists = pool->push_lists;
  while (ret == GST_FLOW_OK && !pool->flushing && n_run < max_run
      && head_ready_locked (pool)) {
    wakes = take_head_locked (pool, &event, &buffer, &has_work, &timing);
    n_run++;
    unlock_and_wake (pool, wakes);

    if (has_work) {
      buffer = pool->funcs.finish (pool->task_work, buffer, pool->user_data);
      if (pool->funcs.work_clear)
        pool->funcs.work_clear (pool->task_work, pool->user_data);
    }

    if (event != NULL) {
      /* the buffers before it go first */
      if (list != NULL)
        ret = push_list (pad, g_steal_pointer (&list));
      if (ret == GST_FLOW_OK) {
        GST_LOG_OBJECT (pad, "pushing %" GST_PTR_FORMAT, event);
        gst_pad_push_event (pad, event);
      } else {
        gst_event_unref (event);
      }
    } else if (buffer != NULL) {        /* else a dropped item */
      buffer = stamp_work (pool, buffer, &timing);
      if (lists) {
        if (list == NULL)
          list = gst_buffer_list_new_sized (max_run);
        gst_buffer_list_add (list, buffer);
      } else {
        ret = gst_pad_push (pad, buffer);
      }
    }
    g_mutex_lock (&pool->lock);
  }
  g_mutex_unlock (&pool->lock);
  if (list != NULL)
    ret = push_list (pad, list);

  /* drain() waits for this: new caps must not overtake the last push. */
  g_mutex_lock (&pool->lock);
  pool->task_pushing = FALSE;
  if (ret != GST_FLOW_OK && (!pool->flushing || ret != GST_FLOW_FLUSHING))
    pool->flow = ret;
  eos_queued = pool->eos_queued;
  /* a flow error must reach whoever waits for room now */
  if (ret != GST_FLOW_OK) {
    pool->room_waiters = pool->drain_waiters = 0;
    wakes = WAKE_ROOM;
  } else {
    wakes = wake_room_freed_locked (pool);
  }
  unlock_and_wake (pool, wakes);
  if (ret == GST_FLOW_OK)
    return;

  GST_DEBUG_OBJECT (pad, "pausing: %s", gst_flow_get_name (ret));
  gst_pad_pause_task (pad);
  if (ret == GST_FLOW_FLUSHING)
    return;
  /* Upstream hears of the flow through the next queue call, unless it is
   * done: then it is ours to report the error and finish the stream. */
  if (eos_queued) {
    GstElement *element = GST_ELEMENT (gst_pad_get_parent (pad));

    if (element && (ret == GST_FLOW_NOT_LINKED || ret < GST_FLOW_EOS))
      GST_ELEMENT_FLOW_ERROR (element, ret);
    gst_pad_push_event (pad, gst_event_new_eos ());
    gst_clear_object (&element);
  }
}

gboolean
wsi_ordered_pool_start_task (WsiOrderedPool * pool)
{
  return gst_pad_start_task (pool->srcpad, task_loop, pool, NULL);
}

gboolean
wsi_ordered_pool_pause_task (WsiOrderedPool * pool)
{
  return gst_pad_pause_task (pool->srcpad);
}

gboolean
wsi_ordered_pool_stop_task (WsiOrderedPool * pool)
{
  return gst_pad_stop_task (pool->srcpad);
}

/* ---- queueing ------------------------------------------------------------ */

/* Waits for room; returns with the lock held on GST_FLOW_OK only. A wait
 * (the pool is full: blocked on downstream) is timed into @wait_start and
 * @wait_end when given; they stay 0 when there was room. */
static GstFlowReturn
wait_for_room (WsiOrderedPool * pool, GstClockTime * wait_start,
    GstClockTime * wait_end)
{
  GstFlowReturn ret = GST_FLOW_OK;
  GstClockTime began = 0;

  g_mutex_lock (&pool->lock);
  while (!pool->flushing && pool->flow == GST_FLOW_OK && pool->ring != NULL
      && pool->n_queued - pool->n_taken >= queue_limit (pool)) {
    if (began == 0)
      began = gst_util_get_timestamp ();
    wait_counted (pool, &pool->space_freed, &pool->room_waiters);
  }
  if (began != 0 && wait_start != NULL) {
    *wait_start = began;
    *wait_end = gst_util_get_timestamp ();
  }
  if (pool->flushing || pool->ring == NULL)
    ret = GST_FLOW_FLUSHING;
  else if (pool->flow != GST_FLOW_OK)
    ret = pool->flow;
  if (ret != GST_FLOW_OK)
    g_mutex_unlock (&pool->lock);
  return ret;
}

/* Waits for room and fills the next slot with a copy of @work; returns
 * with the lock held on GST_FLOW_OK only (else @work is cleared). */
static GstFlowReturn
queue_work_locked (WsiOrderedPool * pool, gconstpointer work,
    PoolItem ** item_out)
{
  GstClockTime wait_start = 0, wait_end = 0;
  GstFlowReturn ret = wait_for_room (pool, &wait_start, &wait_end);
  PoolItem *item;

  if (ret != GST_FLOW_OK) {
    if (pool->funcs.work_clear) {
      gpointer copy = g_memdup2 (work, pool->work_size);

      pool->funcs.work_clear (copy, pool->user_data);
      g_free (copy);
    }
    return ret;
  }
  item = ring_slot (pool, pool->n_queued);
  memcpy (item->work, work, pool->work_size);
  item->kind = ITEM_WORK;
  item->wait_start = wait_start;
  item->wait_end = wait_end;
  item->queued_tid = wait_start ? (gint) syscall (SYS_gettid) : 0;
  pool->n_queued++;
  *item_out = item;
  return GST_FLOW_OK;
}

GstFlowReturn
wsi_ordered_pool_queue_work (WsiOrderedPool * pool, gconstpointer work)
{
  PoolItem *item;
  GstFlowReturn ret = queue_work_locked (pool, work, &item);

  if (ret != GST_FLOW_OK)
    return ret;
  item->state = ITEM_WAITING;
  unlock_and_wake (pool, wake_worker_locked (pool));
  return GST_FLOW_OK;
}

GstFlowReturn
wsi_ordered_pool_queue_done (WsiOrderedPool * pool, gconstpointer work,
    GstBuffer * result)
{
  PoolItem *item;
  GstFlowReturn ret = queue_work_locked (pool, work, &item);

  if (ret != GST_FLOW_OK) {
    gst_clear_buffer (&result);
    return ret;
  }
  /* workers skip it (not ITEM_WAITING); no worker name: no WsiWorkMeta */
  item->state = ITEM_DONE;
  item->result = result;
  unlock_and_wake (pool, task_due_locked (pool) ?
      wake_item_done_locked (pool) : 0);
  return GST_FLOW_OK;
}

GstFlowReturn
wsi_ordered_pool_queue_event (WsiOrderedPool * pool, GstEvent * event)
{
  GstFlowReturn ret = wait_for_room (pool, NULL, NULL);
  PoolItem *item;

  if (ret != GST_FLOW_OK) {
    /* Downstream already ended the flow (e.g. a sink with num-buffers
     * returned EOS) and the task stopped: upstream's EOS must still
     * reach the sink, or the application never sees end of stream. */
    if (ret != GST_FLOW_FLUSHING && GST_EVENT_TYPE (event) == GST_EVENT_EOS)
      gst_pad_push_event (pool->srcpad, event);
    else
      gst_event_unref (event);
    return ret;
  }
  item = ring_slot (pool, pool->n_queued);
  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS)
    pool->eos_queued = TRUE;
  else if (GST_EVENT_TYPE (event) == GST_EVENT_STREAM_START)
    pool->eos_queued = FALSE;
  item->kind = ITEM_EVENT;
  item->state = ITEM_DONE;
  item->event = event;
  pool->n_queued++;
  unlock_and_wake (pool, task_due_locked (pool) ?
      wake_item_done_locked (pool) : 0);
  return GST_FLOW_OK;
}

GstFlowReturn
wsi_ordered_pool_drain (WsiOrderedPool * pool)
{
  GstFlowReturn ret;

  g_mutex_lock (&pool->lock);
  while (!pool->flushing && pool->flow == GST_FLOW_OK
      && (pool->n_taken < pool->n_queued || pool->task_pushing))
    wait_counted (pool, &pool->space_freed, &pool->drain_waiters);
  ret = pool->flushing ? GST_FLOW_FLUSHING : pool->flow;
  g_mutex_unlock (&pool->lock);
  return ret;
}

/* ---- flushing ------------------------------------------------------------ */

void
wsi_ordered_pool_set_flushing (WsiOrderedPool * pool)
{
  g_mutex_lock (&pool->lock);
  pool->flushing = TRUE;
  broadcast_all_locked (pool);
  g_mutex_unlock (&pool->lock);
}

void
wsi_ordered_pool_reset (WsiOrderedPool * pool)
{
  g_mutex_lock (&pool->lock);
  while (pool->n_processing > 0)
    wait_counted (pool, &pool->item_done, &pool->done_waiters);
  if (pool->ring != NULL)
    ring_clear_locked (pool);
  pool->flushing = FALSE;
  pool->eos_queued = FALSE;
  pool->flow = GST_FLOW_OK;
  g_mutex_unlock (&pool->lock);
}

void
wsi_ordered_pool_reset_flow (WsiOrderedPool * pool)
{
  g_mutex_lock (&pool->lock);
  pool->flow = GST_FLOW_OK;
  pool->eos_queued = FALSE;
  g_mutex_unlock (&pool->lock);
}

GParamSpec *
wsi_ordered_pool_param_spec_threads (const gchar * work,
    guint default_threads)
{
  gchar *blurb = g_strdup_printf ("%s, 0 to %u (default %u; 0 = one per "
      "CPU core, shared among the LOCAL_WORLD_SIZE ranks torchrun starts on "
      "a node); the output does not depend on it; read when the element "
      "leaves READY", work, WSI_ORDERED_POOL_MAX_THREADS, default_threads);
  /* the blurb is copied: not G_PARAM_STATIC_BLURB */
  GParamSpec *spec = wsi_param_spec_uint ("threads", "Threads", blurb, 0,
      WSI_ORDERED_POOL_MAX_THREADS, default_threads,
      G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY | G_PARAM_STATIC_NAME |
      G_PARAM_STATIC_NICK);

  g_free (blurb);
  return spec;
}

guint
wsi_ordered_pool_auto_threads (guint max_threads)
{
  guint cores = g_get_num_processors ();
  const gchar *world = g_getenv ("LOCAL_WORLD_SIZE");
  guint64 ranks = world ? g_ascii_strtoull (world, NULL, 10) : 0;

  /* torchrun starts one process per GPU: share the cores among them. */
  if (ranks > 1)
    cores /= ranks;
  return CLAMP (cores, 1, MAX (max_threads, 1));
}
