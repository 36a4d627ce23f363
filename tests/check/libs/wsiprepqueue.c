/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsiprepqueue: jobs come back in push order, and the workers are the same
 * threads for the queue's whole life (a week-long stream must not create a
 * thread every few slide visits: issue 26, the soak's slow rise). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wsiprepqueue.h"

typedef struct
{
  guint index;
  pid_t tid;                    /* kernel id of the thread that ran it */
} Job;

static void
run_job (gpointer data, gpointer user_data)
{
  Job *job = data;

  job->tid = (pid_t) syscall (SYS_gettid);
  /* uneven work, so that jobs finish out of push order */
  g_usleep ((job->index % 3) * 2000);
}

GST_START_TEST (test_order_and_same_workers)
{
  WsiPrepQueue *queue = wsi_prep_queue_new (2, run_job, g_free, NULL);
  GHashTable *tids = g_hash_table_new (NULL, NULL);
  guint round, i, next = 0;

  for (round = 0; round < 3; round++) {
    for (i = 0; i < 6; i++) {
      Job *job = g_new0 (Job, 1);

      job->index = next + i;
      wsi_prep_queue_push (queue, job);
    }
    for (i = 0; i < 6; i++) {
      Job *job = wsi_prep_queue_wait_head (queue);

      fail_unless (job != NULL);
      fail_unless_equals_int (job->index, next + i);
      fail_unless (wsi_prep_queue_pop (queue) == job);
      g_hash_table_add (tids, GINT_TO_POINTER (job->tid));
      g_free (job);
    }
    next += 6;
    /* longer than GLib lets a shared pool thread sit idle (0.5 s) */
    g_usleep (1200 * 1000);
  }
  fail_unless_equals_int (wsi_prep_queue_length (queue), 0);
  /* two workers ran all 18 jobs: no thread was replaced between rounds */
  fail_unless (g_hash_table_size (tids) <= 2,
      "%u threads ran the jobs of a 2-worker queue",
      g_hash_table_size (tids));
  g_hash_table_unref (tids);
  wsi_prep_queue_free (queue);
}

GST_END_TEST;

static Suite *
wsiprepqueue_suite (void)
{
  Suite *s = suite_create ("wsiprepqueue");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_order_and_same_workers);
  return s;
}

GST_CHECK_MAIN (wsiprepqueue);
