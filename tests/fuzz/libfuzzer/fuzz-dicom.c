/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzz-dicom.c: libFuzzer target for the DICOM parser and backend
 * (ext/wsislide/read/wsidicom.c, wsislide-dicom.c, wsitiledread.c).
 *
 * The input is a whole DICOM file. It is put in an anonymous in-memory file
 * (memfd_create) and read as the backend reads an instance, through the
 * local-file byte source on /proc/self/fd/N: wsi_dicom_instance_read()
 * with and without the frame index, then wsi_slide_open() with the dicom
 * backend (the series is the one instance: nothing in /proc/self/fd ends
 * in .dcm) and, when it opens, a 32x32 corner of the first and the last
 * tile of every level, so that frame offsets, fragment joins and the JPEG,
 * JPEG 2000 (OpenJPEG) and raw decoders all see what the parser accepted.
 *
 * Cost: one parse of the data set, at most two small reads per level.
 * Single-threaded.
 */

#define _GNU_SOURCE
#include "wsidicom.h"
#include "wsibytesource.h"
#include "wsislide.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define CORNER 32

static int
memory_file (const uint8_t * data, size_t size)
{
  int fd = memfd_create ("fuzz-dicom", MFD_CLOEXEC);
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
parse (const gchar * path, gboolean header_only)
{
  WsiByteSource *source = wsi_byte_source_open (path, NULL);
  WsiDicomInstance inst;

  if (source == NULL)
    return;
  if (wsi_dicom_instance_read (&inst, source, header_only, NULL))
    wsi_dicom_instance_clear (&inst);
  wsi_byte_source_unref (source);
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

    wsi_slide_read_region (slide, NULL, argb, 0, 0, level, CORNER, CORNER,
        NULL);
    wsi_slide_read_region (slide, NULL, argb, (gint64) (last_x * ds),
        (gint64) (last_y * ds), level, CORNER, CORNER, NULL);
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  int fd = memory_file (data, size);
  gchar *path;
  WsiSlide *slide;

  if (fd < 0)
    return 0;
  path = g_strdup_printf ("/proc/self/fd/%d", fd);
  parse (path, TRUE);
  parse (path, FALSE);
  slide = wsi_slide_open (path, WSI_BACKEND_DICOM, NULL);
  if (slide != NULL) {
    read_corners (slide);
    wsi_slide_close (slide);
  }
  g_free (path);
  close (fd);
  return 0;
}
