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
#include "fuzzinput.h"
#include "wsislide.h"

#define CORNER 32

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static guint32 argb[CORNER * CORNER];
  FuzzInput input;
  WsiSlide *slide;
  GError *error = NULL;

  if (size == 0 || !fuzz_input_open (&input, "fuzz-ometiff", data, size))
    return 0;
  slide = wsi_slide_open (input.path, WSI_BACKEND_TIFF, &error);
  if (slide != NULL) {
    g_assert (slide->level_count > 0);
    fuzz_read_corners (slide, argb, CORNER);
    wsi_slide_close (slide);
  } else {
    /* a refusal always says why */
    g_assert (error != NULL && error->message != NULL);
  }
  g_clear_error (&error);
  fuzz_input_close (&input);
  return 0;
}
