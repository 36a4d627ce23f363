/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * slowloop.c: an LD_PRELOAD shim for tests that sleeps before every
 * g_main_loop_run() (300 ms, or $WSI_SLOW_LOOP_MS), then runs the real one.
 *
 * gst-launch-1.0 (1.22) sets the pipeline to PAUSED, then runs its main
 * loop; its bus sync handler calls g_main_loop_quit() on an ERROR message,
 * and a quit that comes before g_main_loop_run() is lost (the loop is not
 * running yet, so there is nothing to stop, and the watch that runs later
 * ignores errors). The sleep widens that window from microseconds to
 * 300 ms, so a fatal error posted from a streaming thread right after the
 * state change lands in it every time: only an element that also ends the
 * stream (EOS downstream, as GstBaseSrc does after a fatal flow return) or
 * fails the state change itself lets gst-launch end. Used by
 * tests/launch/test-fatal-errors.sh.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <glib.h>
#include <stdlib.h>

void
g_main_loop_run (GMainLoop * loop)
{
  static void (*real_run) (GMainLoop *);
  const char *ms = getenv ("WSI_SLOW_LOOP_MS");

  if (real_run == NULL)
    real_run = (void (*)(GMainLoop *)) dlsym (RTLD_NEXT, "g_main_loop_run");
  g_usleep ((ms != NULL ? strtoul (ms, NULL, 10) : 300) * 1000);
  real_run (loop);
}
