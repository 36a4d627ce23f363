/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * mallinfoloop.c: an LD_PRELOAD shim for scripts/soak.sh that appends
 * glibc's heap accounting (mallinfo2) to a file at a fixed interval, from
 * a thread of its own, so that a soak can tell a leak from allocator
 * behaviour without a profiler:
 *
 *   WSI_MALLINFO_FILE=PATH (required; without it the shim does nothing):
 *     one line per sample, appended and flushed:
 *       pid seconds arena hblkhd uordblks fordblks
 *     pid: every process that inherits the preload samples itself (a
 *     wrapper such as env or nice before its exec, gst-plugin-scanner),
 *     so the reader keeps the lines of the process it watches; seconds
 *     since the shim started in that process (monotonic clock); arena =
 *     bytes the heaps hold from the kernel (brk and mmap'ed arenas); hblkhd =
 *     bytes in chunks mmap'ed one by one (allocations of 128 KiB and more,
 *     by default); uordblks = bytes in chunks in use (allocated, not yet
 *     freed); fordblks = free bytes the arenas keep. Memory of the program
 *     is uordblks + hblkhd; what malloc keeps for later is fordblks.
 *   WSI_MALLINFO_SECONDS=N (default 10): seconds between samples.
 *
 * Reading it: bytes in use (uordblks + hblkhd) that grow after warm-up
 * are memory still allocated (a leak or an unbounded structure, ours or a
 * library's); bytes in use flat while RSS grows is memory that malloc
 * keeps (fragmentation, per-thread arenas).
 *
 * Cost: mallinfo2() walks every arena's free lists under that arena's
 * lock, a few hundred microseconds every N seconds; nothing is done in
 * the threads of the program.
 */

#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double
monotonic_seconds (void)
{
  struct timespec now;

  clock_gettime (CLOCK_MONOTONIC, &now);
  return now.tv_sec + now.tv_nsec / 1e9;
}

static void
append_sample (const char *path, double seconds)
{
  struct mallinfo2 info = mallinfo2 ();
  FILE *file = fopen (path, "a");

  if (file == NULL)
    return;
  fprintf (file, "%ld %.1f %zu %zu %zu %zu\n", (long) getpid (), seconds,
      info.arena, info.hblkhd, info.uordblks, info.fordblks);
  fclose (file);
}

static void *
sample_loop (void *data)
{
  const char *path = data;
  const char *text = getenv ("WSI_MALLINFO_SECONDS");
  unsigned seconds = text ? (unsigned) strtoul (text, NULL, 10) : 10;
  double start = monotonic_seconds ();

  if (seconds == 0)
    seconds = 10;
  for (;;) {
    append_sample (path, monotonic_seconds () - start);
    sleep (seconds);
  }
  return NULL;
}

__attribute__((constructor))
static void
start_sample_loop (void)
{
  const char *path = getenv ("WSI_MALLINFO_FILE");
  pthread_t thread;

  if (path == NULL || *path == '\0')
    return;
  if (pthread_create (&thread, NULL, sample_loop, (void *) path) == 0)
    pthread_detach (thread);
}
