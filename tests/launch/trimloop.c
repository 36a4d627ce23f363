/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * trimloop.c: an LD_PRELOAD shim for scripts/soak.sh that calls glibc's
 * malloc_trim(0) every $WSI_TRIM_SECONDS (default 10) from a thread of its
 * own, so that a soak can compare the RSS of a run with and without free
 * memory handed back to the kernel: memory that malloc_trim gives back was
 * free (fragmentation or cached arenas), memory it cannot give back is
 * still allocated (a leak, or a cache still growing).
 */

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static void *
trim_loop (void *data)
{
  const char *text = getenv ("WSI_TRIM_SECONDS");
  unsigned seconds = text ? (unsigned) strtoul (text, NULL, 10) : 10;

  if (seconds == 0)
    seconds = 10;
  for (;;) {
    sleep (seconds);
    malloc_trim (0);
  }
  return NULL;
}

__attribute__((constructor))
static void
start_trim_loop (void)
{
  pthread_t thread;

  if (pthread_create (&thread, NULL, trim_loop, NULL) == 0)
    pthread_detach (thread);
}
