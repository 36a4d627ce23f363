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

#include "fuzzinput.h"

#define CORNER 32

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

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static guint32 argb[CORNER * CORNER];
  FuzzInput input;
  WsiSlide *slide;

  if (!fuzz_input_open (&input, "fuzz-dicom", data, size))
    return 0;
  parse (input.path, TRUE);
  parse (input.path, FALSE);
  slide = wsi_slide_open (input.path, WSI_BACKEND_DICOM, NULL);
  if (slide != NULL) {
    fuzz_read_corners (slide, argb, CORNER);
    wsi_slide_close (slide);
  }
  fuzz_input_close (&input);
  return 0;
}
