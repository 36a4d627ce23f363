/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzz-zarrmeta.c: libFuzzer target for OME-Zarr metadata
 * (ext/wsislide/read/wsizarr.c): a group's `.zattrs` or `zarr.json`
 * (multiscales, axes, datasets, scales; NGFF 0.4 and 0.5) and its levels'
 * `.zarray` or array `zarr.json` (shape, chunks, dtype, order, chunk keys,
 * codecs, transpose, fill value).
 *
 * The input is NUL-separated parts: the group's metadata, then one part
 * per level. When the group does not parse, the levels are parsed against
 * a (y, x, c) image of the format the input's length picks, so the array
 * parser is reached either way. Every accepted level must describe chunks
 * the tile decode can index: the last sample of the chunk's last pixel
 * lies inside chunk_bytes (what wsislide-zarr.c relies on when it copies
 * a rectangle out); every refusal must say why.
 *
 * Cost: json-glib parses of the input's parts. Single-threaded.
 */

#include "wsizarr.h"

#include <stdint.h>
#include <string.h>

#define MAX_LEVELS 8

static void
check_level (const WsiZarrLevel * level, const WsiZarrImage * image)
{
  gsize last;

  g_assert (level->chunk_bytes > 0);
  g_assert (level->width > 0 && level->height > 0);
  g_assert (level->chunk_width > 0 && level->chunk_height > 0);
  g_assert (level->separator == '.' || level->separator == '/');
  g_assert (level->ndim > 0 && level->ndim <= WSI_ZARR_MAX_DIMS);
  last = (gsize) (level->chunk_height - 1) * level->stride_y
      + (gsize) (level->chunk_width - 1) * level->stride_x
      + 2 * level->stride_c;
  g_assert (last < level->chunk_bytes);
  g_assert (level->stride_c != level->stride_x
      && level->stride_c != level->stride_y
      && level->stride_x != level->stride_y);
}

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  const gchar *text = (const gchar *) data;
  const gchar *part[MAX_LEVELS + 1];
  gsize part_size[MAX_LEVELS + 1];
  WsiZarrImage image;
  GError *error = NULL;
  guint n = 0, i;
  gsize at = 0;

  /* NUL-separated parts */
  while (at <= size && n < G_N_ELEMENTS (part)) {
    const guint8 *nul = memchr (data + at, 0, size - at);
    gsize end = nul ? (gsize) (nul - data) : size;
    part[n] = text + at;
    part_size[n] = end - at;
    n++;
    if (nul == NULL)
      break;
    at = end + 1;
  }
  if (n == 0)
    return 0;

  if (!wsi_zarr_image_parse (&image, "fuzz.zarr", part[0], part_size[0],
          &error)) {
    g_assert (error != NULL && error->message != NULL);
    g_clear_error (&error);
    g_assert (image.levels == NULL && image.n_levels == 0);
    /* the levels against a (y, x, c) image */
    image.axis_y = 0;
    image.axis_x = 1;
    image.axis_c = 2;
    image.zarr_format = 2 + (size & 1);
    image.n_levels = MIN (n - 1, MAX_LEVELS);
    image.levels = g_new0 (WsiZarrLevel, MAX (image.n_levels, 1));
  } else {
    g_assert (image.n_levels > 0 && image.levels != NULL);
    g_assert (image.zarr_format == 2 || image.zarr_format == 3);
    g_assert (image.axis_c >= 0 && image.axis_y >= 0 && image.axis_x >= 0);
    g_assert (image.mpp_x >= 0 && image.mpp_y >= 0);
    for (i = 0; i < image.n_levels; i++)
      g_assert (image.levels[i].dataset != NULL
          && strstr (image.levels[i].dataset, "..") == NULL);
  }
  for (i = 0; i < image.n_levels && i + 1 < n; i++) {
    WsiZarrLevel *level = &image.levels[i];
    if (wsi_zarr_level_parse (level, &image, "fuzz.zarr", i, part[i + 1],
            part_size[i + 1], &error))
      check_level (level, &image);
    else
      g_assert (error != NULL && error->message != NULL);
    g_clear_error (&error);
  }
  wsi_zarr_image_clear (&image);
  return 0;
}
