/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzz-ometiff.c: libFuzzer target for OME-TIFF and SubIFD pyramids as the
 * direct TIFF backend opens and reads them (ext/wsislide/read/
 * wsislide-tiff.c: the OME-XML ImageDescription, the SubIFD walk and its
 * loop guard, the refusals of pixels that are not 8-bit RGB, and the
 * lossless tile codecs of wsitiffcodec.c).
 *
 * The input is a whole file, put in an anonymous in-memory file
 * (memfd_create) and opened by path (/proc/self/fd/N) with the `tiff`
 * backend, as wsislidesrc opens a slide. When it opens, the first and the
 * last tile of every level are read (a small corner each) through the
 * tiled read path, so every level's table and codec is used, not just
 * parsed. A refusal must say why; a read error is a correct answer to a
 * damaged tile.
 *
 * Cost: one open and at most two small reads per level per input.
 * Single-threaded.
 */

#define _GNU_SOURCE
#include "wsislide.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define CORNER 32

static int
memory_file (const uint8_t * data, size_t size)
{
  int fd = memfd_create ("fuzz-ometiff", MFD_CLOEXEC);
  size_t done = 0;

  if (fd < 0)
    return -1;
  while (done < size) {
    ssize_t n = write (fd, data + done, size - done);
    if (n <= 0) {
      close (fd);
      return -1;
    }
    done += n;
  }
  return fd;
}

static void
read_corners (WsiSlide * slide)
{
  static guint32 argb[CORNER * CORNER];
  gint level;

  for (level = 0; level < slide->level_count; level++) {
    gdouble ds = slide->level_downsample[level];
    gint64 w = slide->level_width[level], h = slide->level_height[level];
    gint64 tw = MAX (slide->level_tile_width[level], 1);
    gint64 th = MAX (slide->level_tile_height[level], 1);
    gint64 last_x = (w - 1) / tw * tw, last_y = (h - 1) / th * th;
    GError *error = NULL;

    g_assert (w > 0 && h > 0 && ds >= 1.0);
    if (!wsi_slide_read_region (slide, NULL, argb, 0, 0, level, CORNER,
            CORNER, &error))
      g_assert (error != NULL && error->message != NULL);
    g_clear_error (&error);
    if (!wsi_slide_read_region (slide, NULL, argb, (gint64) (last_x * ds),
            (gint64) (last_y * ds), level, CORNER, CORNER, &error))
      g_assert (error != NULL && error->message != NULL);
    g_clear_error (&error);
  }
}

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  int fd;
  gchar *path;
  WsiSlide *slide;
  GError *error = NULL;

  if (size == 0)
    return 0;
  fd = memory_file (data, size);
  if (fd < 0)
    return 0;
  path = g_strdup_printf ("/proc/self/fd/%d", fd);
  slide = wsi_slide_open (path, WSI_BACKEND_TIFF, &error);
  if (slide != NULL) {
    g_assert (slide->level_count > 0);
    read_corners (slide);
    wsi_slide_close (slide);
  } else {
    /* a refusal always says why */
    g_assert (error != NULL && error->message != NULL);
  }
  g_clear_error (&error);
  g_free (path);
  close (fd);
  return 0;
}
