/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * slowloop.c: an LD_PRELOAD shim for tests that holds back every
 * g_main_loop_run(), then runs the real one.
 *
 * gst-launch-1.0 (1.22) sets the pipeline to PAUSED, then runs its main
 * loop; its bus sync handler calls g_main_loop_quit() on an ERROR message,
 * and a quit that comes before g_main_loop_run() is lost (the loop is not
 * running yet, so there is nothing to stop, and the watch that runs later
 * ignores errors); an error while prerolling also fails the pipeline's
 * asynchronous state change, so no later message ends the loop. Without
 * the shim the window is a few microseconds; with it:
 *
 *   WSI_SLOW_LOOP_MS=N (default 300): sleep N ms before the loop runs;
 *   WSI_SLOW_LOOP_UNTIL_ERROR_MS=N: hold the loop back until the
 *     application's bus sync handler has handled an ERROR (its quit is then
 *     certainly lost), or N ms passed: the window every time, whatever the
 *     machine's load.
 *
 * The shim sees the sync handler by wrapping gst_bus_set_sync_handler().
 * Used by tests/launch/test-fatal-errors.sh.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <gst/gst.h>
#include <stdlib.h>

static GMutex lock;
static GCond error_handled;
static gboolean error_seen;
static GstBusSyncHandler app_handler;
static gpointer app_data;

static GstBusSyncReply
watching_handler (GstBus * bus, GstMessage * message, gpointer data)
{
  GstBusSyncReply reply = app_handler (bus, message, app_data);

  if (GST_MESSAGE_TYPE (message) == GST_MESSAGE_ERROR) {
    g_mutex_lock (&lock);
    error_seen = TRUE;
    g_cond_broadcast (&error_handled);
    g_mutex_unlock (&lock);
  }
  return reply;
}

void
gst_bus_set_sync_handler (GstBus * bus, GstBusSyncHandler func,
    gpointer user_data, GDestroyNotify notify)
{
  static void (*real_set) (GstBus *, GstBusSyncHandler, gpointer,
      GDestroyNotify);

  if (real_set == NULL)
    real_set = dlsym (RTLD_NEXT, "gst_bus_set_sync_handler");
  /* Only the application's one handler is watched (gst-launch sets one);
   * unsetting passes through. */
  if (func == NULL || app_handler != NULL) {
    real_set (bus, func, user_data, notify);
    return;
  }
  app_handler = func;
  app_data = user_data;
  real_set (bus, watching_handler, NULL, NULL);
}

void
g_main_loop_run (GMainLoop * loop)
{
  static void (*real_run) (GMainLoop *);
  const char *until_error = getenv ("WSI_SLOW_LOOP_UNTIL_ERROR_MS");
  const char *ms = getenv ("WSI_SLOW_LOOP_MS");

  if (real_run == NULL)
    real_run = (void (*)(GMainLoop *)) dlsym (RTLD_NEXT, "g_main_loop_run");
  if (until_error != NULL) {
    gint64 end = g_get_monotonic_time () +
        strtoul (until_error, NULL, 10) * G_TIME_SPAN_MILLISECOND;

    g_mutex_lock (&lock);
    while (!error_seen && g_cond_wait_until (&error_handled, &lock, end));
    g_mutex_unlock (&lock);
  } else {
    g_usleep ((ms != NULL ? strtoul (ms, NULL, 10) : 300) * 1000);
  }
  real_run (loop);
}
