/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzz-zarrchunk.c: libFuzzer target for OME-Zarr chunk decoding
 * (wsi_zarr_chunk_decode() in ext/wsislide/read/wsizarr.c and the zlib,
 * gzip and zstd decoders of wsitiffcodec.c it shares; blosc through
 * libblosc).
 *
 * The input's first byte picks the codec (raw, zlib, gzip, zstd, blosc),
 * the next two the chunk's height and width (1 to 256 each, 3 channels);
 * the rest is the chunk's bytes, decoded into a buffer of exactly the
 * decoded chunk's size (heap: the sanitizers see any write past it). A
 * decode either fills the chunk or fails saying why.
 *
 * Cost: one decode of at most 192 kB per input. Single-threaded.
 */

#include "wsizarr.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  WsiZarrLevel level;
  GError *error = NULL;
  guint8 *dst;

  if (size < 3)
    return 0;
  memset (&level, 0, sizeof (level));
  level.codec = (WsiZarrCodec) (data[0] % (WSI_ZARR_BLOSC + 1));
  level.chunk_height = 1 + data[1];
  level.chunk_width = 1 + data[2];
  level.chunk_bytes = (gsize) level.chunk_height * level.chunk_width * 3;
  dst = g_malloc (level.chunk_bytes);
  if (!wsi_zarr_chunk_decode (&level, data + 3, size - 3, dst, &error))
    g_assert (error != NULL && error->message != NULL);
  g_clear_error (&error);
  g_free (dst);
  return 0;
}
