/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Reads the tile file that jpeg-tiles writes ("WSIJPGT1", u32 count, then
 * u32 length + one complete JPEG stream per tile, little-endian) into memory,
 * for the decode benchmarks (jpeg-decode-cpu.c, nvjpeg-decode.cu). Header
 * only, C and C++; single-threaded; the caller frees with jpeg_tiles_free.
 */
#ifndef WSI_JPEG_TILES_FILE_H
#define WSI_JPEG_TILES_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
  uint32_t count;
  unsigned char **data;         /* count streams */
  size_t *length;
  unsigned char *blob;          /* the whole file: data[] point into it */
} JpegTiles;

static uint32_t
jpeg_tiles_u32 (const unsigned char *p)
{
  return p[0] | (p[1] << 8) | (p[2] << 16) | ((uint32_t) p[3] << 24);
}

/* 0 on success; -1 with a message naming the file otherwise. */
static int
jpeg_tiles_load (const char *path, JpegTiles * tiles)
{
  FILE *f = fopen (path, "rb");
  long size;
  memset (tiles, 0, sizeof (*tiles));
  if (f == NULL || fseek (f, 0, SEEK_END) != 0 || (size = ftell (f)) < 12) {
    fprintf (stderr, "%s: cannot read a tile file\n", path);
    if (f)
      fclose (f);
    return -1;
  }
  rewind (f);
  tiles->blob = (unsigned char *) malloc (size);
  if (fread (tiles->blob, 1, size, f) != (size_t) size
      || memcmp (tiles->blob, "WSIJPGT1", 8) != 0) {
    fprintf (stderr, "%s: not a jpeg-tiles file\n", path);
    fclose (f);
    return -1;
  }
  fclose (f);
  tiles->count = jpeg_tiles_u32 (tiles->blob + 8);
  tiles->data = (unsigned char **) calloc (tiles->count, sizeof (unsigned char *));
  tiles->length = (size_t *) calloc (tiles->count, sizeof (size_t));
  size_t at = 12;
  for (uint32_t i = 0; i < tiles->count; i++) {
    if (at + 4 > (size_t) size
        || at + 4 + jpeg_tiles_u32 (tiles->blob + at) > (size_t) size) {
      fprintf (stderr, "%s: truncated at tile %u\n", path, i);
      return -1;
    }
    tiles->length[i] = jpeg_tiles_u32 (tiles->blob + at);
    tiles->data[i] = tiles->blob + at + 4;
    at += 4 + tiles->length[i];
  }
  return 0;
}

static void
jpeg_tiles_free (JpegTiles * tiles)
{
  free (tiles->data);
  free (tiles->length);
  free (tiles->blob);
}

#endif
