/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiprepqueue.h: jobs run ahead of need on a few worker threads and taken
 * back strictly in the order they were pushed — how wsislidesrc prepares
 * the next slides (open, description, overview) while the stream goes on.
 *
 * Contract: the owner pushes jobs (opaque pointers it allocates) in the
 * order it will want them; a worker calls `run` on each, with no lock
 * held, at most `n_threads` at a time; wsi_prep_queue_wait_head() blocks
 * until the oldest job has run and returns it, wsi_prep_queue_pop() hands
 * it back. Results therefore come back in push order whatever the thread
 * count or timing, so a stream built from them stays a pure function of
 * its settings. The queue holds what the owner pushed and no more: the
 * owner bounds it (wsi_prep_queue_length()).
 *
 * Cost: one mutex round trip per push, run and pop; the work is the jobs'.
 * The `n_threads` workers are made with the queue and live until it is
 * freed (no thread is created or ended while a stream runs).
 *
 * Threading: every function but `run` is called from one owner thread
 * (wsislidesrc's streaming thread or its state change); `run` runs on a
 * worker and must only touch its job and read-only state. free() waits for
 * running jobs, so `run` may not block on the owner.
 */

#ifndef __WSI_PREP_QUEUE_H__
#define __WSI_PREP_QUEUE_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct _WsiPrepQueue WsiPrepQueue;

/* Runs @job on a worker. */
typedef void (*WsiPrepRunFunc) (gpointer job, gpointer user_data);

/* @n_threads workers (at least 1); @job_free releases a job that was
 * never popped when the queue is freed. */
WsiPrepQueue *wsi_prep_queue_new (guint n_threads, WsiPrepRunFunc run,
    GDestroyNotify job_free, gpointer user_data);

/* Waits for running jobs, drops pending ones unrun, frees the rest. */
void wsi_prep_queue_free (WsiPrepQueue * queue);

void wsi_prep_queue_push (WsiPrepQueue * queue, gpointer job);

/* Jobs pushed and not popped yet (running, waiting or done). */
guint wsi_prep_queue_length (WsiPrepQueue * queue);

/* The oldest job once it has run (NULL when the queue is empty); it stays
 * in the queue until popped. */
gpointer wsi_prep_queue_wait_head (WsiPrepQueue * queue);

/* Removes and returns the oldest job, which must have run
 * (wsi_prep_queue_wait_head() first). */
gpointer wsi_prep_queue_pop (WsiPrepQueue * queue);

G_END_DECLS

#endif /* __WSI_PREP_QUEUE_H__ */
