/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitiledread.c: region reads over a grid of tiles (see wsitiledread.h):
 * the window, DCT scale and tile cache rules, with the measurements behind
 * them, and the prefetch hints of a read's tiles.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "wsitiledread.h"
#include "wsitilecache.h"

typedef struct _TileMosaic TileMosaic;

typedef struct
{
  WsiSlide *slide;
  const WsiTiledLevel *level;
  gint level_index;
  guint scale;                  /* 1, 2, 4, 8 */
  guint tile_w, tile_h;         /* a tile at that scale */
  gint64 width, height;         /* the level at that scale */
  WsiReadContext *ctx;
  WsiTileCache *cache;          /* NULL: decode only what a region needs */
  gboolean grid_order;          /* WsiReadRequest.grid_order */
  guint tiles_decoded, tiles_from_cache;
  /* non-NULL: cached tiles of an ARGB fill are kept here, read in place
   * by the resampler, instead of copied into the region */
  TileMosaic *mosaic;
} LevelReader;

static void
level_reader_init (LevelReader * lr, WsiSlide * slide, WsiReadContext * ctx,
    const WsiTiledLevel * level, gint level_index, guint scale,
    WsiTileCache * cache, gboolean grid_order)
{
  memset (lr, 0, sizeof (*lr));
  lr->slide = slide;
  lr->level = level;
  lr->level_index = level_index;
  lr->scale = scale;
  lr->tile_w = (level->tile_width + scale - 1) / scale;
  lr->tile_h = (level->tile_height + scale - 1) / scale;
  lr->width = (level->width + scale - 1) / scale;
  lr->height = (level->height + scale - 1) / scale;
  lr->ctx = ctx;
  if (cache != NULL && wsi_tile_cache_get_max_bytes (cache) > 0)
    lr->cache = cache;
  lr->grid_order = grid_order;
}

void
wsi_tiled_target_fill_white (const WsiTiledTarget * t, guint w, guint h)
{
  guint i;

  for (i = 0; i < h; i++)
    memset (t->data + (gsize) i * t->stride, 0xFF, (gsize) w * t->bpp);
}

void
wsi_tiled_target_put_rgb (const WsiTiledTarget * t, const guint8 * src,
    gsize src_stride, guint w, guint h)
{
  guint i, j;

  for (i = 0; i < h; i++) {
    const guint8 *s = src + (gsize) i * src_stride;
    guint8 *d = t->data + (gsize) i * t->stride;

    switch (t->layout) {
      case WSI_TILED_LAYOUT_ARGB:
        for (j = 0; j < w; j++)
          ((guint32 *) d)[j] = 0xFF000000u | ((guint32) s[3 * j] << 16)
              | ((guint32) s[3 * j + 1] << 8) | s[3 * j + 2];
        break;
      case WSI_PIXEL_RGB:
        memcpy (d, s, (gsize) w * 3);
        break;
      case WSI_PIXEL_BGRX:
        for (j = 0; j < w; j++) {
          d[4 * j] = s[3 * j + 2];
          d[4 * j + 1] = s[3 * j + 1];
          d[4 * j + 2] = s[3 * j];
          d[4 * j + 3] = 0xFF;
        }
        break;
      default:                 /* RGBA, RGBX */
        for (j = 0; j < w; j++) {
          d[4 * j] = s[3 * j];
          d[4 * j + 1] = s[3 * j + 1];
          d[4 * j + 2] = s[3 * j + 2];
          d[4 * j + 3] = 0xFF;
        }
        break;
    }
  }
}

static WsiTiledTarget
argb_target (guint32 * argb, gsize stride_words)
{
  WsiTiledTarget t = { (guint8 *) argb, stride_words * sizeof (guint32),
    WSI_TILED_LAYOUT_ARGB, sizeof (guint32)
  };
  return t;
}

gboolean
wsi_tiled_tile_fail (const WsiSlide * slide, gint level, gint64 col,
    gint64 row, GError ** error, const gchar * format, ...)
{
  va_list args;
  gchar *reason;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
      "%s: level %d tile (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "): %s",
      slide->display, level, col, row, reason);
  g_free (reason);
  return FALSE;
}

static gboolean
tile_decode (LevelReader * lr, gint64 col, gint64 row, guint x, guint y,
    guint w, guint h, guint8 * dst, const WsiTiledTarget * t, GError ** error)
{
  WsiTiledTarget at = { dst, t->stride, t->layout, t->bpp };

  if (!lr->level->decode (lr->slide, lr->ctx, lr->level_index, col, row,
          lr->scale, x, y, w, h, &at, error))
    return FALSE;
  lr->tiles_decoded++;
  return TRUE;
}

/* Tile (col, row) decoded whole (its part inside the level) and cached. */
static WsiTile *
tile_decode_cached (LevelReader * lr, const WsiTileKey * key, gint64 col,
    gint64 row, GError ** error)
{
  guint w = MIN (lr->tile_w, lr->width - col * lr->tile_w);
  guint h = MIN (lr->tile_h, lr->height - row * lr->tile_h);
  guint32 *argb = wsi_tile_cache_alloc_argb (lr->cache, w, h);
  WsiTiledTarget whole;

  if (argb == NULL) {
    wsi_tiled_tile_fail (lr->slide, lr->level_index, col, row, error,
        "out of memory for a %ux%u tile", w, h);
    return NULL;
  }
  whole = argb_target (argb, w);
  if (!tile_decode (lr, col, row, 0, 0, w, h, whole.data, &whole, error)) {
    g_free (argb);
    return NULL;
  }
  return wsi_tile_cache_insert (lr->cache, key, argb, w, h);
}

/* Copies part of a cached ARGB tile to @dst, converted to the target's
 * format (composited on white) when it is not ARGB. */
static gboolean
tile_copy (LevelReader * lr, const WsiTile * tile, guint x, guint y, guint w,
    guint h, guint8 * dst, const WsiTiledTarget * t)
{
  const guint32 *src = tile->argb + (gsize) y * tile->width + x;
  WsiImage image = { dst, t->stride, w, h, (WsiPixelFormat) t->layout };
  guint i;

  if (t->layout != WSI_TILED_LAYOUT_ARGB)
    return wsi_resample_argb (wsi_read_context_resampler (lr->ctx), src, w, h,
        tile->width, 0.0, 0.0, w, h, &image);
  for (i = 0; i < h; i++)
    memcpy (dst + i * t->stride, src + (gsize) i * tile->width,
        (gsize) w * sizeof (guint32));
  return TRUE;
}

static gboolean mosaic_keep (LevelReader * lr, WsiTile * tile, guint x,
    guint y, guint w, guint h);

/* Part of a cached tile into the region: kept in the reader's mosaic when
 * it has one (no copy), else copied. */
static gboolean
tile_place (LevelReader * lr, WsiTile * tile, guint x, guint y, guint w,
    guint h, guint8 * dst, const WsiTiledTarget * t)
{
  if (lr->mosaic != NULL && t->layout == WSI_TILED_LAYOUT_ARGB
      && mosaic_keep (lr, tile, x, y, w, h))
    return TRUE;
  return tile_copy (lr, tile, x, y, w, h, dst, t);
}

/* Writes part of scaled tile (col, row) at @dst: straight from the decoder,
 * or copied out of the cached tile. Only tiles asked for twice are decoded
 * whole and kept; a first miss decodes just the part needed (see
 * wsi_tile_cache_lookup_or_admit). In grid order a tile covered only in
 * part is kept on its first miss (a neighbour needs the rest: every tile of
 * the grid is then decoded once, where the second-request rule decodes a
 * shared tile about 1.6 times, part then whole), and a tile covered whole
 * and not cached (no overlap brought it there) goes straight to the region.
 * In grid order, neighbouring patches are read by different threads at
 * about the same time: a tile another thread is decoding is not decoded
 * again (one in seven tiles at two threads was); with @may_defer the call
 * then paints nothing and sets *@deferred (the caller paints its other
 * tiles first and comes back without @may_defer, which waits for it). */
static gboolean
tile_paint (LevelReader * lr, gint64 col, gint64 row, guint x, guint y,
    guint w, guint h, guint8 * dst, const WsiTiledTarget * t,
    gboolean may_defer, gboolean * deferred, GError ** error)
{
  WsiTileKey key = {
    .slide_uid = lr->slide->uid,
    .level = lr->level_index,
    .scale = lr->scale,
    .column = col,
    .row = row,
  };
  gboolean admit, ok;
  WsiTile *tile;

  *deferred = FALSE;
  if (lr->cache == NULL)
    return tile_decode (lr, col, row, x, y, w, h, dst, t, error);
  if (lr->grid_order) {
    guint whole_w = MIN (lr->tile_w, lr->width - col * lr->tile_w);
    guint whole_h = MIN (lr->tile_h, lr->height - row * lr->tile_h);
    gboolean claimed;

    if (x == 0 && y == 0 && w == whole_w && h == whole_h) {
      /* Only this patch needs it (no overlap): no claim, no wait. */
      tile = wsi_tile_cache_lookup (lr->cache, &key);
      if (tile == NULL)
        return tile_decode (lr, col, row, x, y, w, h, dst, t, error);
    } else {
      while ((tile = wsi_tile_cache_lookup_or_claim (lr->cache, &key,
                  &claimed)) == NULL && !claimed) {
        if (may_defer) {
          *deferred = TRUE;
          return TRUE;
        }
        wsi_tile_cache_wait_claim (lr->cache, &key);
      }
      if (tile == NULL) {
        tile = tile_decode_cached (lr, &key, col, row, error);
        if (tile == NULL) {
          wsi_tile_cache_abandon (lr->cache, &key);
          return FALSE;
        }
      } else {
        lr->tiles_from_cache++;
      }
    }
  } else {
    tile = wsi_tile_cache_lookup_or_admit (lr->cache, &key, &admit);
    if (tile != NULL)
      lr->tiles_from_cache++;
    else if (!admit)
      return tile_decode (lr, col, row, x, y, w, h, dst, t, error);
    else
      tile = tile_decode_cached (lr, &key, col, row, error);
  }
  if (tile == NULL)
    return FALSE;
  if (x + w > tile->width || y + h > tile->height) {
    ok = wsi_tiled_tile_fail (lr->slide, lr->level_index, col, row, error,
        "the cached tile is only %ux%u", tile->width, tile->height);
  } else {
    ok = tile_place (lr, tile, x, y, w, h, dst, t);
    if (!ok)
      wsi_tiled_tile_fail (lr->slide, lr->level_index, col, row, error,
          "out of memory converting it");
  }
  wsi_tile_unref (tile);
  return ok;
}

/* Outside the level: transparent ARGB (0), or glass white in a patch
 * format (every byte 0xFF: white, opaque alpha, 0xFF padding). */
static void
region_clear (const WsiTiledTarget * t, gint64 w, gint64 h)
{
  gint64 i;

  for (i = 0; i < h; i++)
    memset (t->data + i * t->stride,
        t->layout == WSI_TILED_LAYOUT_ARGB ? 0 : 0xFF, (gsize) w * t->bpp);
}

/* Fills the w x h region of @t with the scaled level pixels whose top-left
 * is (x, y): every tile the region touches paints its part; outside the
 * level is transparent (white in patch formats), as OpenSlide clips edge
 * tiles. */
static gboolean
level_reader_fill (LevelReader * lr, const WsiTiledTarget * t, gint64 x,
    gint64 y, gint64 w, gint64 h, GError ** error)
{
  gint64 x0 = MAX (x, 0), y0 = MAX (y, 0);
  gint64 x1 = MIN (x + w, lr->width), y1 = MIN (y + h, lr->height);
  gint64 tw = lr->tile_w, th = lr->tile_h, col, row;
  /* Tiles deferred in the first pass, by their index in the region (only
   * the first 64 may be deferred: a patch covers a few tiles). */
  gint64 columns = x1 > x0 ? (x1 - 1) / tw - x0 / tw + 1 : 0;
  guint64 deferred_mask = 0;
  gboolean any_deferred = FALSE;
  gint pass;

  if (x0 != x || y0 != y || x1 != x + w || y1 != y + h)
    region_clear (t, w, h);
  if (x0 >= x1 || y0 >= y1)
    return TRUE;
  if (lr->grid_order && lr->cache != NULL) {
    /* Raster order: no later patch needs a row above the previous patch
     * row's first (kept for a thread still on that row), nor another
     * slide's tiles; evicting them keeps the cache at a few rows. */
    gint64 first = y0 / th, span = (y1 - 1) / th - first + 1;
    WsiTileKey band = {
      .slide_uid = lr->slide->uid,
      .level = lr->level_index,
      .scale = lr->scale,
      .row = MAX (first - span, 0),
    };

    wsi_tile_cache_keep_band (lr->cache, &band);
  }

  /* Two passes: the tiles another thread is decoding are painted last,
   * when that decode has most likely ended (tile_paint). */
  for (pass = 0; pass < 2 && (pass == 0 || any_deferred); pass++) {
    for (row = y0 / th; row * th < y1; row++) {
      gint64 ty0 = MAX (y0, row * th), ty1 = MIN (y1, (row + 1) * th);
      for (col = x0 / tw; col * tw < x1; col++) {
        gint64 tx0 = MAX (x0, col * tw), tx1 = MIN (x1, (col + 1) * tw);
        guint8 *dst = t->data + (gsize) (ty0 - y) * t->stride
            + (gsize) (tx0 - x) * t->bpp;
        gsize bit = (gsize) (row - y0 / th) * columns + (col - x0 / tw);
        gboolean deferred;

        if (pass == 1 && (bit >= 64 || !(deferred_mask & (1ull << bit))))
          continue;
        if (!tile_paint (lr, col, row, tx0 - col * tw, ty0 - row * th,
                tx1 - tx0, ty1 - ty0, dst, t, pass == 0 && bit < 64,
                &deferred, error))
          return FALSE;
        if (deferred) {
          deferred_mask |= 1ull << bit;
          any_deferred = TRUE;
        }
      }
    }
  }
  return TRUE;
}

static void
report_fill (WsiReadReport * report, const LevelReader * lr, gint level,
    gint64 read_width, gint64 read_height)
{
  if (report == NULL)
    return;
  report->backend = lr->slide->backend->name;
  report->level = level;
  report->read_width = read_width;
  report->read_height = read_height;
  report->native_scale = MAX (lr->scale, 1);
  report->tiles_decoded = lr->tiles_decoded;
  report->tiles_from_cache = lr->tiles_from_cache;
  report->sticky = FALSE;
}

/* ---- prefetch: the tiles a read covers --------------------------------- */

/* Tiles hinted for one read (a patch, a whole overview level) at most: the
 * read's own region bounds the count; this only bounds a hint's memory. */
#define MAX_PREFETCH_REGION_TILES 16384

/* Hints the tiles of @level under level pixels [x0, x1] x [y0, y1]
 * (clipped), at most @max_tiles, one prefetch call per run of tiles in one
 * byte source (a DICOM level may span several files). */
static void
prefetch_level_region (WsiSlide * slide, const WsiTiledLevel * level,
    gint level_index, gint64 x0, gint64 y0, gint64 x1, gint64 y1,
    guint max_tiles)
{
  WsiByteSource *run_source = NULL, *source;
  WsiByteRange *ranges, range;
  gint64 col, row, n_tiles;
  guint n = 0, hinted = 0;

  if (level->tile_bytes == NULL)
    return;
  x0 = MAX (x0, 0);
  y0 = MAX (y0, 0);
  x1 = MIN (x1, level->width - 1);
  y1 = MIN (y1, level->height - 1);
  if (x1 < x0 || y1 < y0)
    return;
  n_tiles = (x1 / level->tile_width - x0 / level->tile_width + 1)
      * (y1 / level->tile_height - y0 / level->tile_height + 1);
  max_tiles = (guint) MIN ((gint64) max_tiles, n_tiles);
  ranges = g_new (WsiByteRange, max_tiles);
  for (row = y0 / level->tile_height;
      row <= y1 / level->tile_height && hinted < max_tiles; row++) {
    for (col = x0 / level->tile_width;
        col <= x1 / level->tile_width && hinted < max_tiles; col++) {
      if (!level->tile_bytes (slide, level_index, col, row, &source, &range))
        continue;
      if (source != run_source && n > 0) {
        wsi_byte_source_prefetch (run_source, ranges, n);
        n = 0;
      }
      run_source = source;
      ranges[n++] = range;
      hinted++;
    }
  }
  if (n > 0)
    wsi_byte_source_prefetch (run_source, ranges, n);
  g_free (ranges);
}

static void
tiled_prefetch (WsiSlide * slide, const WsiTiledLevel * level,
    const WsiReadPlan * plan)
{
  gdouble ds = slide->level_downsample[plan->level];

  /* One level pixel of margin: a window moved onto a DCT grid stays in. */
  prefetch_level_region (slide, level, plan->level,
      (gint64) floor (plan->x / ds) - 1, (gint64) floor (plan->y / ds) - 1,
      (gint64) ceil (plan->x / ds) + plan->read_width,
      (gint64) ceil (plan->y / ds) + plan->read_height,
      MAX_PREFETCH_REGION_TILES);
}

/* ---- read_argb: a level region at 1:1 ----------------------------------- */

static gboolean
tiled_read_argb (WsiSlide * slide, WsiReadContext * ctx,
    const WsiTiledLevel * level, guint32 * argb, gint64 x, gint64 y,
    gint level_index, gint64 w, gint64 h, WsiReadReport * report,
    GError ** error)
{
  WsiReadContext *own_ctx = NULL;
  gdouble ds = slide->level_downsample[level_index];
  WsiTiledTarget target = argb_target (argb, (gsize) w);
  LevelReader lr;
  gboolean ok;

  /* A remote slide's tiles for the whole region come at once (coalesced),
   * not one round trip per tile as the fill reaches them. */
  prefetch_level_region (slide, level, level_index, (gint64) floor (x / ds),
      (gint64) floor (y / ds), (gint64) floor (x / ds) + w,
      (gint64) floor (y / ds) + h, MAX_PREFETCH_REGION_TILES);
  if (ctx == NULL)
    ctx = own_ctx = wsi_read_context_new ();
  /* Whole level pixels: the top-left level pixel under (x, y). */
  level_reader_init (&lr, slide, ctx, level, level_index, 1, NULL, FALSE);
  ok = level_reader_fill (&lr, &target, (gint64) floor (x / ds),
      (gint64) floor (y / ds), w, h, error);
  report_fill (report, &lr, level_index, w, h);
  if (own_ctx != NULL)
    wsi_read_context_free (own_ctx);
  return ok;
}

/* ---- read_argb_scaled: a level region at a DCT scale (overviews) -------- */

static gboolean scale_fits_tiles (const WsiTiledLevel * level, guint scale);

static guint
tiled_native_scale (const WsiTiledLevel * level, guint wanted)
{
  guint scale;

  for (scale = level->max_scale; scale > 1; scale /= 2) {
    if (scale <= wanted && scale_fits_tiles (level, scale))
      return scale;
  }
  return 1;
}

/* A scaled level region into @target (ARGB, or RGB on white: the same
 * tiles, no cache). */
static gboolean
tiled_read_scaled (WsiSlide * slide, WsiReadContext * ctx,
    const WsiTiledLevel * level, const WsiTiledTarget * target,
    gint level_index, guint scale, gint64 x, gint64 y, gint64 w, gint64 h,
    GError ** error)
{
  WsiReadContext *own_ctx = NULL;
  LevelReader lr;
  gboolean ok;

  /* The region's tiles at once, as tiled_read_argb() does. */
  prefetch_level_region (slide, level, level_index, x * scale, y * scale,
      (x + w) * scale, (y + h) * scale, MAX_PREFETCH_REGION_TILES);
  if (ctx == NULL)
    ctx = own_ctx = wsi_read_context_new ();
  level_reader_init (&lr, slide, ctx, level, level_index, scale, NULL,
      FALSE);
  ok = level_reader_fill (&lr, target, x, y, w, h, error);
  if (own_ctx != NULL)
    wsi_read_context_free (own_ctx);
  return ok;
}

static gboolean
tiled_read_argb_scaled (WsiSlide * slide, WsiReadContext * ctx,
    const WsiTiledLevel * level, guint32 * argb, gint level_index,
    guint scale, gint64 x, gint64 y, gint64 w, gint64 h, GError ** error)
{
  WsiTiledTarget target = argb_target (argb, (gsize) w);

  return tiled_read_scaled (slide, ctx, level, &target, level_index, scale,
      x, y, w, h, error);
}

/* RGB straight from the decoders: their patch layout WSI_PIXEL_RGB is
 * what compositing their ARGB on white gives (opaque tiles; glass outside
 * the level is white in both). */
static gboolean
tiled_read_rgb_scaled (WsiSlide * slide, WsiReadContext * ctx,
    const WsiTiledLevel * level, guint8 * rgb, gsize stride,
    gint level_index, guint scale, gint64 x, gint64 y, gint64 w, gint64 h,
    GError ** error)
{
  WsiTiledTarget target = { rgb, stride, WSI_PIXEL_RGB, 3 };

  return tiled_read_scaled (slide, ctx, level, &target, level_index, scale,
      x, y, w, h, error);
}

/* ---- read: the whole contract ------------------------------------------- */

/* TRUE when @v (level pixels) lies on the grid of scale @scale. */
static gboolean
on_scaled_grid (gdouble v, guint scale)
{
  gdouble q = v / scale;
  return fabs (q - round (q)) < 1e-3;
}

/* Tiles stay at least 8 pixels, and whole, at @scale. */
static gboolean
scale_fits_tiles (const WsiTiledLevel * level, guint scale)
{
  return scale <= level->tile_width / 8 && scale <= level->tile_height / 8
      && level->tile_width % scale == 0 && level->tile_height % scale == 0;
}

/* The DCT scale: up to the level's max_scale when the request allows it,
 * else 1. DCT scaling is a virtual pyramid level. Whole multiples first
 * (*@whole TRUE): its pixels match the area average of the full decode when
 * every output pixel covers whole scaled pixels: the read size a whole
 * multiple of scale x the output size, the window starting on the scaled
 * grid (worst PSNR 41.8 dB against the full decode over random patches of
 * synthetic and real slides). Off that grid the scaled pixels' phase would
 * blur the output (worst 22-32 dB measured, as reading a pyramid level at a
 * fractional offset does), so window_compute() moves the window onto the
 * grid, by less than one output pixel, and the report says where the patch
 * really starts.
 * Otherwise (near-whole factors, *@whole FALSE: 1.979 = 0.5 um/px from a
 * 0.2527 um/px scan is 1/2 then 0.99; 3.957 = 1.0 um/px is 1/2 then 1.98;
 * 3 is 1/2 then 1.5) the largest scale leaving at least
 * WSI_NATIVE_SCALE_MIN_REST to the area average, else the largest keeping
 * the output's resolution within WSI_NATIVE_SCALE_MARGIN, the remaining
 * factor left to the area resample at the requested position: a quarter of
 * the IDCT and colour work of a full decode, or less. */
static guint
pick_scale (const WsiTiledLevel * level, const WsiReadRequest * request,
    const WsiReadPlan * plan, const WsiImage * out, gboolean * whole)
{
  const gdouble rests[] = {
    WSI_NATIVE_SCALE_MIN_REST, 1.0 - WSI_NATIVE_SCALE_MARGIN
  };
  guint scale, i;

  *whole = TRUE;
  if (!request->native_scaling || out->width == 0 || out->height == 0)
    return 1;
  for (scale = level->max_scale; scale > 1; scale /= 2) {
    if (scale_fits_tiles (level, scale)
        && plan->read_width % ((gint64) scale * out->width) == 0
        && plan->read_height % ((gint64) scale * out->height) == 0)
      return scale;
  }
  for (i = 0; i < G_N_ELEMENTS (rests); i++) {
    for (scale = level->max_scale; scale > 1; scale /= 2) {
      if (scale_fits_tiles (level, scale)
          && (gdouble) plan->read_width / scale >= out->width * rests[i]
          && (gdouble) plan->read_height / scale >= out->height * rests[i]) {
        *whole = FALSE;
        return scale;
      }
    }
  }
  return 1;
}

typedef struct
{
  gdouble x0, y0, span_w, span_h;
  gint64 x, y, w, h;
} Window;

/* The plan's level window in scaled level pixels, and the whole pixels
 * under it. @snap: a whole-multiple scale, whose window moves onto the
 * scaled grid (see pick_scale()); near-whole ones keep the requested
 * position. Dividing by a power of two is exact: same as x / (ds * scale).
 * Bounded so that w x h words fit in memory arithmetic. */
static gboolean
window_compute (Window * win, const WsiSlide * slide,
    const WsiReadPlan * plan, guint scale, gboolean snap)
{
  gdouble ds = slide->level_downsample[plan->level];

  win->x0 = plan->x / ds / scale;
  win->y0 = plan->y / ds / scale;
  if (snap && !on_scaled_grid (plan->x / ds, scale))
    win->x0 = floor (win->x0);
  if (snap && !on_scaled_grid (plan->y / ds, scale))
    win->y0 = floor (win->y0);
  win->span_w = (gdouble) plan->read_width / scale;
  win->span_h = (gdouble) plan->read_height / scale;
  win->x = (gint64) floor (win->x0);
  win->y = (gint64) floor (win->y0);
  win->w = (gint64) ceil (win->x0 + win->span_w) - win->x;
  win->h = (gint64) ceil (win->y0 + win->span_h) - win->y;
  return win->w > 0 && win->h > 0 && win->w <= G_MAXINT && win->h <= G_MAXINT
      && (guint64) win->w * (guint64) win->h <= G_MAXSIZE / 8;
}

/* TRUE when the window is the output pixel for pixel (1:1 after any DCT
 * scaling, whole-pixel origin): tiles then decode straight into the
 * output's memory in its format, with no ARGB intermediate. */
static gboolean
window_is_output (const Window * win, const WsiImage * out)
{
  return win->x0 == win->x && win->y0 == win->y
      && win->span_w == out->width && win->span_h == out->height;
}

/* ---- the resampled read: cached tiles read in place --------------------- */

/* Pieces a side at most (a 256 px patch over tiles of 120 px has 4 or 5;
 * more falls back to copying every tile into the region). */
#define MOSAIC_MAX 16

/* The window cut at every tile edge and level edge: each piece is either
 * part of one cached tile, read where it lies, or part of the region
 * buffer (tiles decoded for this read only, glass outside the level). */
struct _TileMosaic
{
  gint64 x, y;                  /* the window's top-left, scaled pixels */
  guint n_columns, n_rows;
  guint xs[MOSAIC_MAX + 1], ys[MOSAIC_MAX + 1];
  const guint32 *origin[MOSAIC_MAX * MOSAIC_MAX];
  gsize stride[MOSAIC_MAX * MOSAIC_MAX];
  WsiTile *tiles[MOSAIC_MAX * MOSAIC_MAX];      /* held; NULL: region */
};

/* Edges of [@start, @start + @len) at every multiple of @tile and at the
 * level's end @size, relative to @start; FALSE when there are too many. */
static gboolean
mosaic_edges (guint * edges, guint * n, gint64 start, gint64 len,
    gint64 tile, gint64 size)
{
  gint64 e = (start >= 0 ? start / tile + 1 : 0) * tile;

  *n = 0;
  edges[0] = 0;
  while (TRUE) {
    gint64 next = e;

    if (size > start && size < next)
      next = size;
    if (next <= start || next >= start + len)
      break;
    if (*n + 1 >= MOSAIC_MAX)
      return FALSE;
    edges[++*n] = (guint) (next - start);
    if (next == e)
      e += tile;
    if (next >= size)
      size = -1;                /* the level's end: once */
  }
  edges[++*n] = (guint) len;
  return TRUE;
}

/* Every piece in the region buffer @buf (@win->w words a row), until a
 * cached tile takes its place; FALSE: too many pieces for a mosaic. */
static gboolean
mosaic_init (TileMosaic * m, const LevelReader * lr, const Window * win,
    const guint32 * buf)
{
  guint c, r;

  if (!mosaic_edges (m->xs, &m->n_columns, win->x, win->w, lr->tile_w,
          lr->width)
      || !mosaic_edges (m->ys, &m->n_rows, win->y, win->h, lr->tile_h,
          lr->height))
    return FALSE;
  m->x = win->x;
  m->y = win->y;
  for (r = 0; r < m->n_rows; r++) {
    for (c = 0; c < m->n_columns; c++) {
      guint p = r * m->n_columns + c;

      m->origin[p] = buf + (gsize) m->ys[r] * win->w + m->xs[c];
      m->stride[p] = (gsize) win->w;
      m->tiles[p] = NULL;
    }
  }
  return TRUE;
}

static void
mosaic_release (TileMosaic * m)
{
  guint p;

  for (p = 0; p < m->n_columns * m->n_rows; p++)
    g_clear_pointer (&m->tiles[p], wsi_tile_unref);
}

/* Keeps [x, x + w) x [y, y + h) of @tile as the piece it is exactly;
 * FALSE when no piece matches (the caller copies). */
static gboolean
mosaic_keep (LevelReader * lr, WsiTile * tile, guint x, guint y, guint w,
    guint h)
{
  TileMosaic *m = lr->mosaic;
  gint64 px = tile->key.column * lr->tile_w + x - m->x;
  gint64 py = tile->key.row * lr->tile_h + y - m->y;
  guint c, r, p;

  for (c = 0; c < m->n_columns && m->xs[c] != px; c++);
  for (r = 0; r < m->n_rows && m->ys[r] != py; r++);
  if (c == m->n_columns || r == m->n_rows || m->xs[c + 1] - m->xs[c] != w
      || m->ys[r + 1] - m->ys[r] != h)
    return FALSE;
  p = r * m->n_columns + c;
  if (m->tiles[p] != NULL)
    return FALSE;
  m->tiles[p] = wsi_tile_ref (tile);
  m->origin[p] = tile->argb + (gsize) y * tile->width + x;
  m->stride[p] = tile->width;
  return TRUE;
}

/* Resamples the window into @out from its tiles: cached ones read where
 * they lie (no copy into the region), the others decoded into ARGB
 * scratch. The bytes are those of one region buffer (see
 * wsi_resample_argb_mosaic). */
static gboolean
read_resampled (LevelReader * lr, WsiReadContext * ctx, const Window * win,
    const WsiImage * out, GError ** error)
{
  guint32 *buf = wsi_read_context_scratch (ctx, WSI_TILED_SCRATCH_REGION,
      (gsize) win->w * win->h * sizeof (guint32));
  TileMosaic mosaic;
  WsiArgbMosaic view;
  WsiTiledTarget target;
  gboolean ok;

  if (buf == NULL) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "%s: out of memory for a %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
        " region", lr->slide->display, win->w, win->h);
    return FALSE;
  }
  target = argb_target (buf, (gsize) win->w);
  if (!mosaic_init (&mosaic, lr, win, buf)) {
    /* one piece: the region buffer, every tile copied into it */
    mosaic.n_columns = mosaic.n_rows = 1;
    mosaic.xs[1] = (guint) win->w;
    mosaic.ys[1] = (guint) win->h;
    mosaic.origin[0] = buf;
    mosaic.stride[0] = (gsize) win->w;
    mosaic.tiles[0] = NULL;
  } else {
    lr->mosaic = &mosaic;
  }
  ok = level_reader_fill (lr, &target, win->x, win->y, win->w, win->h, error);
  lr->mosaic = NULL;
  if (ok) {
    view = (WsiArgbMosaic) {
    mosaic.n_columns, mosaic.n_rows, mosaic.xs, mosaic.ys, mosaic.origin,
          mosaic.stride};
    ok = wsi_resample_argb_mosaic (wsi_read_context_resampler (ctx), &view,
        win->x0 - win->x, win->y0 - win->y, win->span_w, win->span_h, out);
    if (!ok)
      g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
          "%s: out of memory resampling a region", lr->slide->display);
  }
  mosaic_release (&mosaic);
  return ok;
}

static gboolean
tiled_read (WsiSlide * slide, WsiReadContext * ctx,
    const WsiTiledLevel * level, const WsiReadRequest * request,
    const WsiReadPlan * plan, const WsiImage * out, WsiReadReport * report,
    GError ** error)
{
  gboolean whole;
  guint scale = pick_scale (level, request, plan, out, &whole);
  gboolean moved = scale > 1 && whole;
  WsiReadContext *own_ctx = NULL;
  LevelReader lr;
  Window win = { 0, };
  gboolean ok = TRUE;

  /* A patch's tiles are fetched together (a no-op when patchreader hinted
   * them already, or for local files). */
  tiled_prefetch (slide, level, plan);
  if (ctx == NULL)
    ctx = own_ctx = wsi_read_context_new ();
  level_reader_init (&lr, slide, ctx, level, plan->level, scale,
      request->tile_cache, request->grid_order);
  if (!window_compute (&win, slide, plan, scale, moved)) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "%s: a %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " region at level %d "
        "is too large", slide->display, plan->read_width, plan->read_height,
        plan->level);
    ok = FALSE;
  }
  if (ok && window_is_output (&win, out)) {
    WsiTiledTarget direct = { out->data, out->stride, out->format,
      wsi_pixel_format_bytes (out->format)
    };
    ok = level_reader_fill (&lr, &direct, win.x, win.y, win.w, win.h, error);
  } else if (ok) {
    ok = read_resampled (&lr, ctx, &win, out, error);
  }

  report_fill (report, &lr, plan->level, plan->read_width, plan->read_height);
  if (report != NULL) {
    report->footprint_width = plan->footprint_width;
    report->footprint_height = plan->footprint_height;
    /* Where the (possibly moved) window starts, in level-0 pixels. */
    report->x = moved && ok ? llround (win.x0 * scale *
        slide->level_downsample[plan->level]) : plan->x;
    report->y = moved && ok ? llround (win.y0 * scale *
        slide->level_downsample[plan->level]) : plan->y;
  }
  if (own_ctx != NULL)
    wsi_read_context_free (own_ctx);
  return ok;
}

/* ---- the backend's entry points ----------------------------------------- */

void
wsi_tiled_slide_init (WsiTiledSlide * tiled, guint n_levels)
{
  tiled->levels = g_new0 (const WsiTiledLevel *, MAX (n_levels, 1));
  tiled->n_levels = n_levels;
}

void
wsi_tiled_slide_clear (WsiTiledSlide * tiled)
{
  g_clear_pointer (&tiled->levels, g_free);
  tiled->n_levels = 0;
}

static const WsiTiledLevel *
tiled_level (const WsiSlide * slide, gint level)
{
  const WsiTiledSlide *tiled = slide->handle;

  return tiled->levels[level];
}

gboolean
wsi_tiled_backend_read_argb (WsiSlide * slide, WsiReadContext * ctx,
    guint32 * argb, gint64 x, gint64 y, gint level, gint64 w, gint64 h,
    WsiReadReport * report, GError ** error)
{
  return tiled_read_argb (slide, ctx, tiled_level (slide, level), argb, x, y,
      level, w, h, report, error);
}

gboolean
wsi_tiled_backend_read (WsiSlide * slide, WsiReadContext * ctx,
    const WsiReadRequest * request, const WsiReadPlan * plan,
    const WsiImage * out, WsiReadReport * report, GError ** error)
{
  return tiled_read (slide, ctx, tiled_level (slide, plan->level), request,
      plan, out, report, error);
}

guint
wsi_tiled_backend_native_scale (const WsiSlide * slide, gint level,
    guint wanted)
{
  return tiled_native_scale (tiled_level (slide, level), wanted);
}

gboolean
wsi_tiled_backend_read_argb_scaled (WsiSlide * slide, WsiReadContext * ctx,
    guint32 * argb, gint level, guint scale, gint64 x, gint64 y, gint64 w,
    gint64 h, GError ** error)
{
  return tiled_read_argb_scaled (slide, ctx, tiled_level (slide, level),
      argb, level, scale, x, y, w, h, error);
}

gboolean
wsi_tiled_backend_read_rgb_scaled (WsiSlide * slide, WsiReadContext * ctx,
    guint8 * rgb, gsize stride, gint level, guint scale, gint64 x, gint64 y,
    gint64 w, gint64 h, GError ** error)
{
  return tiled_read_rgb_scaled (slide, ctx, tiled_level (slide, level), rgb,
      stride, level, scale, x, y, w, h, error);
}

void
wsi_tiled_backend_prefetch (WsiSlide * slide, const WsiReadPlan * plan)
{
  const WsiTiledSlide *tiled = slide->handle;

  if (tiled != NULL && plan->level >= 0
      && (guint) plan->level < tiled->n_levels)
    tiled_prefetch (slide, tiled->levels[plan->level], plan);
}
