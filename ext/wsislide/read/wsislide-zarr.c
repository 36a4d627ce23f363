/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsislide-zarr.c: the OME-Zarr backend ("zarr"): NGFF 0.4 multiscales of
 * uint8 RGB on Zarr v2, in a local folder or at an http(s)://, s3:// or
 * gs:// prefix, read through byte sources without any Zarr library.
 *
 * Contract: wsizarr.c reads the metadata (levels from the datasets, mpp
 * from the first dataset's scale and the axes' units) and refuses what it
 * cannot deliver as RGB, naming the store and the reason
 * (WSI_SLIDE_ERROR_REFUSED: `auto` stops there). Chunks are the tiles of
 * wsitiledread.h (no native scale): a tile decode fetches the chunk whole
 * (one object), decodes it into the read context's scratch and copies the
 * rectangle out in the target's layout, so every format the tiled path
 * serves (patches, overviews, ARGB) comes out the same. A damaged chunk
 * fails the read naming the store, level, chunk and reason.
 *
 * Cost: open reads 1 + levels small objects; a tile is one object fetch
 * and one decode of the whole chunk (the tile cache keeps decoded tiles
 * asked for twice). Nothing is coalesced. A remote store's chunks are
 * fetched ahead, in parallel, by the prefetch hints of the reads to come
 * (wsizarrfetch.h): a reader then finds its chunk fetched or in flight
 * instead of waiting a round trip per chunk. Threading: the slide is
 * immutable after open (the fetch has its own lock).
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsislide.h"
#include "wsitiledread.h"
#include "wsizarr.h"

#include <math.h>
#include <string.h>

/* Scratch slot of a decoded chunk (slot 1 is wsitiledread's region). */
#define SCRATCH_CHUNK 2

typedef struct
{
  WsiTiledSlide head;           /* first: read by wsitiledread.c */
  WsiZarrImage image;
  WsiTiledLevel *tiled;
  WsiZarrFetch *fetch;          /* remote stores: chunks fetched ahead */
} ZarrSlide;

/* Chunks hinted by one plan at most (a patch covers a few). */
#define MAX_PLAN_CHUNKS 64

static gboolean
zarr_detect (const gchar * path)
{
  return wsi_zarr_is_store (path);
}

static void
zarr_slide_free (ZarrSlide * zs)
{
  if (zs == NULL)
    return;
  /* first: its fetch threads read the image's locations */
  wsi_zarr_fetch_free (zs->fetch);
  wsi_zarr_image_clear (&zs->image);
  wsi_tiled_slide_clear (&zs->head);
  g_free (zs->tiled);
  g_free (zs);
}

/* WsiTileDecodeFunc: chunk (col, row) fetched and decoded whole, the
 * rectangle copied out as RGB. */
static gboolean
zarr_decode_tile (WsiSlide * slide, WsiReadContext * ctx, gint li,
    gint64 col, gint64 row, guint scale, guint x, guint y, guint w, guint h,
    const WsiTiledTarget * target, GError ** error)
{
  const ZarrSlide *zs = slide->handle;
  const WsiZarrLevel *level = &zs->image.levels[li];
  guint8 *chunk = wsi_read_context_scratch (ctx, SCRATCH_CHUNK,
      level->chunk_bytes);
  guint8 *rgb;
  GError *local = NULL;
  guint i, j;

  if (chunk == NULL)
    return wsi_tiled_tile_fail (slide, li, col, row, error,
        "out of memory for a %" G_GSIZE_FORMAT "-byte chunk",
        level->chunk_bytes);
  if (!wsi_zarr_chunk_read (level, row, col, &zs->image, zs->fetch, chunk,
          &local)) {
    wsi_tiled_tile_fail (slide, li, col, row, error, "%s", local->message);
    g_error_free (local);
    return FALSE;
  }
  if (level->stride_c == 1 && level->stride_x == 3) {
    /* (y, x, c): rows of RGB already */
    wsi_tiled_target_put_rgb (target, chunk + y * level->stride_y + x * 3,
        level->stride_y, w, h);
    return TRUE;
  }
  /* planar chunk: interleave row by row into the last scratch slot */
  rgb = wsi_read_context_scratch (ctx, 3, (gsize) w * 3);
  if (rgb == NULL)
    return wsi_tiled_tile_fail (slide, li, col, row, error, "out of memory");
  for (i = 0; i < h; i++) {
    const guint8 *r = chunk + (gsize) (y + i) * level->stride_y
        + (gsize) x * level->stride_x;
    WsiTiledTarget at = *target;
    for (j = 0; j < w; j++) {
      const guint8 *p = r + (gsize) j * level->stride_x;
      rgb[3 * j] = p[0];
      rgb[3 * j + 1] = p[level->stride_c];
      rgb[3 * j + 2] = p[2 * level->stride_c];
    }
    at.data = target->data + (gsize) i * target->stride;
    wsi_tiled_target_put_rgb (&at, rgb, (gsize) w * 3, w, 1);
  }
  return TRUE;
}

static gboolean
zarr_open (WsiSlide * slide, GError ** error)
{
  ZarrSlide *zs = g_new0 (ZarrSlide, 1);
  guint i;

  if (!wsi_zarr_image_read (&zs->image, slide->path, slide->display, error)) {
    g_free (zs);
    return FALSE;
  }
  wsi_slide_alloc_levels (slide, zs->image.n_levels);
  zs->tiled = g_new0 (WsiTiledLevel, zs->image.n_levels);
  wsi_tiled_slide_init (&zs->head, zs->image.n_levels);
  for (i = 0; i < zs->image.n_levels; i++) {
    const WsiZarrLevel *level = &zs->image.levels[i];
    WsiTiledLevel *tiled = &zs->tiled[i];

    wsi_slide_set_level (slide, i, level->width, level->height,
        level->chunk_width, level->chunk_height);
    tiled->width = level->width;
    tiled->height = level->height;
    tiled->tile_width = level->chunk_width;
    tiled->tile_height = level->chunk_height;
    tiled->max_scale = 1;
    tiled->decode = zarr_decode_tile;
    tiled->tile_bytes = NULL;   /* whole objects: fetched by the decode */
    zs->head.levels[i] = tiled;
  }
  wsi_slide_set_origin (slide, "ome-zarr", zs->image.mpp_x, zs->image.mpp_y,
      WSI_MPP_SOURCE_NGFF);
  if (wsi_location_is_remote (slide->path))
    zs->fetch = wsi_zarr_fetch_new (wsi_zarr_object_read);
  slide->handle = zs;
  return TRUE;
}

/* prefetch: the chunks under @plan (one level pixel of margin, as the
 * tiled path's hints), each queued as a whole-object fetch. Local stores:
 * nothing (a read is one open and pread). */
static void
zarr_prefetch (WsiSlide * slide, const WsiReadPlan * plan)
{
  const ZarrSlide *zs = slide->handle;
  const WsiZarrLevel *level;
  gint64 x0, y0, x1, y1, row, col;
  gdouble ds;
  guint n = 0;

  if (zs == NULL || zs->fetch == NULL || plan->level < 0
      || (guint) plan->level >= zs->image.n_levels)
    return;
  level = &zs->image.levels[plan->level];
  /* inner chunks of shards are ranged reads, not whole objects to fetch */
  if (level->sharded)
    return;
  ds = slide->level_downsample[plan->level];
  x0 = MAX ((gint64) floor (plan->x / ds) - 1, 0);
  y0 = MAX ((gint64) floor (plan->y / ds) - 1, 0);
  x1 = MIN ((gint64) ceil (plan->x / ds) + plan->read_width,
      level->width - 1);
  y1 = MIN ((gint64) ceil (plan->y / ds) + plan->read_height,
      level->height - 1);
  for (row = y0 / level->chunk_height; row <= y1 / level->chunk_height
      && n < MAX_PLAN_CHUNKS; row++) {
    for (col = x0 / level->chunk_width; col <= x1 / level->chunk_width
        && n < MAX_PLAN_CHUNKS; col++, n++) {
      gchar *location = wsi_zarr_chunk_location (level, row, col, &zs->image);
      wsi_zarr_fetch_hint (zs->fetch, location, wsi_zarr_chunk_limit (level));
      g_free (location);
    }
  }
}

static void
zarr_close (WsiSlide * slide)
{
  zarr_slide_free (slide->handle);
  slide->handle = NULL;
}

const WsiSlideBackend wsi_slide_backend_zarr = {
  .name = WSI_BACKEND_ZARR,
  .opens_folders = TRUE,
  .detect = zarr_detect,
  .open = zarr_open,
  .read_argb = wsi_tiled_backend_read_argb,
  .read = wsi_tiled_backend_read,
  .close = zarr_close,
  .prefetch = zarr_prefetch,
  .native_scale = wsi_tiled_backend_native_scale,
  .read_argb_scaled = wsi_tiled_backend_read_argb_scaled,
  .read_rgb_scaled = wsi_tiled_backend_read_rgb_scaled,
};
