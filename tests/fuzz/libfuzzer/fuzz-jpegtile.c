/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzz-jpegtile.c: libFuzzer target for the JPEG tile path of the direct
 * reader (ext/wsislide/read/wsijpegdecode.c): an abbreviated JPEGTables
 * stream, then one tile's stream, decoded as wsislide-tiff.c decodes them.
 *
 * Input layout (all of it comes from the fuzzer; seeds are cut out of real
 * JPEG-tiled TIFFs by tests/fuzz/libfuzzer/make-jpeg-seeds.py):
 *
 *   byte 0      flags: bit 0 photometric RGB, bits 1-2 scale (1, 2, 4, 8),
 *               bits 3-5 output layout (WSI_JPEG_OUT_ARGB or a patch
 *               pixel format), bit 6 decode a crop rather than the tile
 *   bytes 1-2   tile width / 16, tile height / 16 (1..256 each: the 16..4096
 *               sides wsitiffdir.c accepts, bounded to keep inputs fast)
 *   bytes 3-6   the crop: x, y, w, h in 1/256 of the scaled tile
 *   bytes 7-8   length of the JPEGTables stream (big-endian; 0 = none)
 *   then        the JPEGTables stream, then the tile stream (the rest)
 *
 * Every decode is into a buffer exactly as large as the request; ASan
 * catches a byte written past it. Cost: one decode of at most a
 * 4096x4096 tile (usually far less). Single-threaded.
 */

#include "wsijpegdecode.h"
#include "wsislide.h"

#include <stdint.h>

#define HEADER_SIZE 9

/* The layouts wsislide-tiff.c asks for. */
static const gint layouts[] = {
  WSI_JPEG_OUT_ARGB, WSI_PIXEL_RGB, WSI_PIXEL_RGBA,
  WSI_PIXEL_RGBX, WSI_PIXEL_BGRX,
};

static guint
layout_bpp (gint layout)
{
  return layout == WSI_PIXEL_RGB ? 3 : 4;
}

/* [from, from + n) of @side in 1/256 steps, never empty. */
static void
crop_span (guint side, guint8 start, guint8 length, guint * from, guint * n)
{
  *from = (guint) ((guint64) side * start / 256);
  *n = MAX (1, (guint) ((guint64) (side - *from) * (length + 1) / 256));
}

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static WsiJpegDecoder *decoder;
  WsiJpegTile tile = { 0 };
  guint scale, sw, sh, x = 0, y = 0, w, h, bpp;
  gsize tables_size, stride;
  gint layout;
  guint8 *dst;
  GError *error = NULL;

  if (size < HEADER_SIZE)
    return 0;
  tables_size = ((gsize) data[7] << 8) | data[8];
  if (tables_size > size - HEADER_SIZE)
    return 0;
  /* one decoder for every input, as one worker thread keeps one: a failed
   * decode must leave it fit for the next tile */
  if (decoder == NULL)
    decoder = wsi_jpeg_decoder_new ();

  tile.rgb = data[0] & 1;
  scale = 1u << ((data[0] >> 1) & 3);
  layout = layouts[((data[0] >> 3) & 7) % G_N_ELEMENTS (layouts)];
  tile.width = 16u * (data[1] + 1u);
  tile.height = 16u * (data[2] + 1u);
  tile.tables = tables_size ? data + HEADER_SIZE : NULL;
  tile.tables_size = tables_size;
  tile.data = data + HEADER_SIZE + tables_size;
  tile.size = size - HEADER_SIZE - tables_size;

  sw = (tile.width + scale - 1) / scale;
  sh = (tile.height + scale - 1) / scale;
  w = sw;
  h = sh;
  if (data[0] & 0x40) {
    crop_span (sw, data[3], data[5], &x, &w);
    crop_span (sh, data[4], data[6], &y, &h);
  }
  bpp = layout_bpp (layout);
  stride = (gsize) w * bpp;
  dst = g_malloc ((gsize) h * stride);
  if (!wsi_jpeg_decoder_decode (decoder, &tile, scale, x, y, w, h, dst,
          stride, layout, &error))
    g_assert (error != NULL && error->message != NULL);
  g_clear_error (&error);
  g_free (dst);
  return 0;
}
