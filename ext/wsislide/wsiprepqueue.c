/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsiprepqueue.c: ordered jobs on a GThreadPool (see wsiprepqueue.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsiprepqueue.h"

typedef struct
{
  gpointer job;
  gboolean done;                /* under the queue's lock */
} PrepItem;

struct _WsiPrepQueue
{
  GThreadPool *pool;
  WsiPrepRunFunc run;
  GDestroyNotify job_free;
  gpointer user_data;
  GMutex lock;
  GCond done_cond;
  GQueue items;                 /* PrepItem, push order */
};

static void
prep_queue_worker (gpointer data, gpointer user_data)
{
  PrepItem *item = data;
  WsiPrepQueue *queue = user_data;

  queue->run (item->job, queue->user_data);
  g_mutex_lock (&queue->lock);
  item->done = TRUE;
  g_cond_broadcast (&queue->done_cond);
  g_mutex_unlock (&queue->lock);
}

WsiPrepQueue *
wsi_prep_queue_new (guint n_threads, WsiPrepRunFunc run,
    GDestroyNotify job_free, gpointer user_data)
{
  WsiPrepQueue *queue = g_new0 (WsiPrepQueue, 1);

  queue->run = run;
  queue->job_free = job_free;
  queue->user_data = user_data;
  g_mutex_init (&queue->lock);
  g_cond_init (&queue->done_cond);
  g_queue_init (&queue->items);
  /* Exclusive: the workers live as long as the queue. GLib's shared
   * threads leave an idle pool after half a second and are replaced by new
   * ones when work comes again: a thread created and destroyed every few
   * slide visits for as long as the stream runs, which a week-long run
   * should not pay for. If the threads cannot be made now, fall back to the
   * shared ones, whose pushes never fail. */
  queue->pool = g_thread_pool_new (prep_queue_worker, queue,
      (gint) MAX (n_threads, 1), TRUE, NULL);
  if (queue->pool == NULL)
    queue->pool = g_thread_pool_new (prep_queue_worker, queue,
        (gint) MAX (n_threads, 1), FALSE, NULL);
  return queue;
}

void
wsi_prep_queue_free (WsiPrepQueue * queue)
{
  PrepItem *item;

  if (queue == NULL)
    return;
  /* Pending jobs are dropped unrun; running ones finish first. */
  g_thread_pool_free (queue->pool, TRUE, TRUE);
  while ((item = g_queue_pop_head (&queue->items)) != NULL) {
    if (queue->job_free != NULL)
      queue->job_free (item->job);
    g_free (item);
  }
  g_mutex_clear (&queue->lock);
  g_cond_clear (&queue->done_cond);
  g_free (queue);
}

void
wsi_prep_queue_push (WsiPrepQueue * queue, gpointer job)
{
  PrepItem *item = g_new0 (PrepItem, 1);

  item->job = job;
  g_mutex_lock (&queue->lock);
  g_queue_push_tail (&queue->items, item);
  g_mutex_unlock (&queue->lock);
  g_thread_pool_push (queue->pool, item, NULL);
}

guint
wsi_prep_queue_length (WsiPrepQueue * queue)
{
  guint n;

  g_mutex_lock (&queue->lock);
  n = queue->items.length;
  g_mutex_unlock (&queue->lock);
  return n;
}

gpointer
wsi_prep_queue_wait_head (WsiPrepQueue * queue)
{
  PrepItem *item;

  g_mutex_lock (&queue->lock);
  item = g_queue_peek_head (&queue->items);
  while (item != NULL && !item->done)
    g_cond_wait (&queue->done_cond, &queue->lock);
  g_mutex_unlock (&queue->lock);
  return item ? item->job : NULL;
}

gpointer
wsi_prep_queue_pop (WsiPrepQueue * queue)
{
  PrepItem *item;
  gpointer job;

  g_mutex_lock (&queue->lock);
  item = g_queue_pop_head (&queue->items);
  g_mutex_unlock (&queue->lock);
  g_return_val_if_fail (item != NULL && item->done, NULL);
  job = item->job;
  g_free (item);
  return job;
}
