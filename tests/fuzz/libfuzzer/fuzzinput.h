/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzzinput.h: what the libFuzzer targets of the slide readers do with
 * their input, written once: the bytes go into an anonymous in-memory file
 * (memfd_create: no disk, nothing left behind) named by a path
 * (/proc/self/fd/N), because the readers open paths, as wsislidesrc does;
 * and an opened slide has a small corner of its first and its last tile
 * read on every level, so that each level's tile table and codec is used,
 * not just parsed.
 *
 * Contract: fuzz_input_open() returns FALSE (nothing to close) when the
 * file cannot be made; fuzz_input_close() frees the path and closes the
 * file. fuzz_read_corners() asserts what every opened slide promises
 * (levels with a size, downsamples >= 1) and that a failed read says why
 * (an error with a message): a read error is a correct answer to a damaged
 * tile, a silent failure is not.
 *
 * Cost: one write of the input; two reads of @corner x @corner pixels per
 * level.
 *
 * Threading: single-threaded, as libFuzzer runs a target. Header only
 * (static inline): a target that uses one helper compiles no other.
 */

#ifndef __FUZZ_INPUT_H__
#define __FUZZ_INPUT_H__

#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before the first include (memfd_create)"
#endif

#include <glib.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wsislide.h"

typedef struct
{
  int fd;
  gchar *path;                  /* /proc/self/fd/N */
} FuzzInput;

/* Puts @size bytes of @data in an anonymous file called @name (the name
 * only shows in /proc); FALSE when it cannot be made. */
static inline gboolean
fuzz_input_open (FuzzInput * input, const char *name, const uint8_t * data,
    size_t size)
{
  size_t done = 0;

  input->path = NULL;
  input->fd = memfd_create (name, MFD_CLOEXEC);
  if (input->fd < 0)
    return FALSE;
  while (done < size) {
    ssize_t n = write (input->fd, data + done, size - done);

    if (n <= 0) {
      close (input->fd);
      input->fd = -1;
      return FALSE;
    }
    done += n;
  }
  input->path = g_strdup_printf ("/proc/self/fd/%d", input->fd);
  return TRUE;
}

static inline void
fuzz_input_close (FuzzInput * input)
{
  g_clear_pointer (&input->path, g_free);
  if (input->fd >= 0)
    close (input->fd);
  input->fd = -1;
}

/* Reads the @corner x @corner top-left pixels of the first and of the last
 * tile of every level of @slide into @argb (room for @corner squared
 * pixels; the pixels are thrown away). */
static inline void
fuzz_read_corners (WsiSlide * slide, guint32 * argb, gint corner)
{
  gint level;

  for (level = 0; level < slide->level_count; level++) {
    gdouble ds = slide->level_downsample[level];
    gint64 w = slide->level_width[level], h = slide->level_height[level];
    gint64 tw = MAX (slide->level_tile_width[level], 1);
    gint64 th = MAX (slide->level_tile_height[level], 1);
    gint64 last_x = (w - 1) / tw * tw, last_y = (h - 1) / th * th;
    GError *error = NULL;

    g_assert (w > 0 && h > 0 && ds >= 1.0);
    if (!wsi_slide_read_region (slide, NULL, argb, 0, 0, level, corner,
            corner, &error))
      g_assert (error != NULL && error->message != NULL);
    g_clear_error (&error);
    if (!wsi_slide_read_region (slide, NULL, argb, (gint64) (last_x * ds),
            (gint64) (last_y * ds), level, corner, corner, &error))
      g_assert (error != NULL && error->message != NULL);
    g_clear_error (&error);
  }
}

#endif /* __FUZZ_INPUT_H__ */
