/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzz-tiffdir.c: libFuzzer target for the direct reader's TIFF directory
 * walk and tile table (ext/wsislide/read/wsitiffdir.c).
 *
 * The input is a whole file. It is put in an anonymous in-memory file
 * (memfd_create: no disk, nothing left behind) and read as the direct
 * backend reads a slide, through the local-file byte source
 * (wsibytesource.h) on /proc/self/fd/N: wsi_tiff_check_tiles() (the guard
 * run before OpenSlide sees a file), then wsi_tiff_pyramid_read(). When the pyramid
 * is accepted, its tile table is used the way wsislide-tiff.c uses it: the
 * first and the last tile of every level are cut out of the input by their
 * offset and byte count and decoded (a 64x64 corner, at a scale taken from
 * the input's last byte) with the level's JPEGTables and photometric, so
 * that every table the walk copies out is exercised, not just parsed.
 *
 * Cost: one libtiff open and walk per input, at most two small decodes per
 * level. Single-threaded.
 */

#define _GNU_SOURCE
#include "wsitiffdir.h"
#include "wsibytesource.h"
#include "wsijpegdecode.h"
#include "wsislide.h"

#include "fuzzinput.h"

/* Decoded corner of a tile: small, so that a huge tile costs no more than
 * a small one (the decoder's skip/crop paths are what matters). */
#define CORNER 64

/* Decodes the top-left corner of tile @index of @level when the tile table
 * puts it inside the input; the result is thrown away (a decode error is a
 * correct answer to a damaged tile). */
static void
decode_tile (WsiJpegDecoder * decoder, const WsiTiffLevel * level,
    guint64 index, const uint8_t * data, size_t size, guint scale)
{
  static guint32 corner[CORNER * CORNER];
  guint64 offset = level->tile_offsets[index];
  guint64 count = level->tile_byte_counts[index];
  WsiJpegTile tile = { 0 };
  guint scaled_w, scaled_h;
  GError *error = NULL;

  if (offset > size || count > size - offset || count == 0)
    return;
  tile.tables = level->jpeg_tables;
  tile.tables_size = level->jpeg_tables_size;
  tile.data = data + offset;
  tile.size = count;
  tile.rgb = level->rgb;
  tile.width = level->tile_width;
  tile.height = level->tile_height;
  scaled_w = (tile.width + scale - 1) / scale;
  scaled_h = (tile.height + scale - 1) / scale;
  wsi_jpeg_decoder_decode (decoder, &tile, scale, 0, 0, MIN (scaled_w,
          CORNER), MIN (scaled_h, CORNER), (guint8 *) corner,
      CORNER * sizeof (guint32), WSI_JPEG_OUT_ARGB, &error);
  g_clear_error (&error);
}

static void
use_tile_tables (const WsiTiffPyramid * pyramid, const uint8_t * data,
    size_t size)
{
  static const guint scales[] = { 1, 2, 4, 8 };
  guint scale = scales[data[size - 1] & 3];
  WsiJpegDecoder *decoder = wsi_jpeg_decoder_new ();
  guint i;

  if (decoder == NULL)
    return;
  for (i = 0; i < pyramid->n_levels; i++) {
    const WsiTiffLevel *level = &pyramid->levels[i];
    guint64 n_tiles = (guint64) level->tiles_across * level->tiles_down;

    /* the contract: a level always has a tile, and both tables cover it */
    g_assert (n_tiles > 0);
    g_assert (level->tile_offsets != NULL && level->tile_byte_counts != NULL);
    decode_tile (decoder, level, 0, data, size, scale);
    decode_tile (decoder, level, n_tiles - 1, data, size, scale);
  }
  wsi_jpeg_decoder_free (decoder);
}

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  WsiTiffPyramid pyramid;
  WsiByteSource *source;
  GError *error = NULL;
  FuzzInput input;

  if (size == 0 || !fuzz_input_open (&input, "fuzz-tiffdir", data, size))
    return 0;

  if (!wsi_tiff_check_tiles (input.path, &error))
    g_assert (error != NULL && error->message != NULL);
  g_clear_error (&error);

  /* the local-file byte source, as the backend opens a slide */
  source = wsi_byte_source_open (input.path, &error);
  g_assert (source != NULL);
  if (wsi_tiff_pyramid_read (&pyramid, source, &error)) {
    g_assert (pyramid.n_levels > 0);
    use_tile_tables (&pyramid, data, size);
    wsi_tiff_pyramid_clear (&pyramid);
  } else {
    /* a refusal always says why */
    g_assert (error != NULL && error->message != NULL);
    g_assert (pyramid.n_levels == 0 && pyramid.levels == NULL);
  }
  g_clear_error (&error);
  wsi_byte_source_unref (source);
  fuzz_input_close (&input);
  return 0;
}
