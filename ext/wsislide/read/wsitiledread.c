/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitiledread.c: region reads over a grid of tiles (see wsitiledread.h).
 * The window, scale and cache rules are those of wsislide-tiff.c, whose
 * comments give the measurements behind them.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "wsitiledread.h"
#include "wsitilecache.h"

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
  guint tiles_decoded, tiles_from_cache;
} LevelReader;

static void
level_reader_init (LevelReader * lr, WsiSlide * slide, WsiReadContext * ctx,
    const WsiTiledLevel * level, gint level_index, guint scale,
    WsiTileCache * cache)
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
}

void
wsi_tiled_target_fill_white (const WsiTiledTarget * t, guint w, guint h)
{
  guint i;

  for (i = 0; i < h; i++)
    memset (t->data + (gsize) i * t->stride, 0xFF, (gsize) w * t->bpp);
}

static WsiTiledTarget
argb_target (guint32 * argb, gsize stride_words)
{
  WsiTiledTarget t = { (guint8 *) argb, stride_words * sizeof (guint32),
    WSI_TILED_LAYOUT_ARGB, sizeof (guint32)
  };
  return t;
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
  guint32 *argb = g_try_malloc ((gsize) w * h * sizeof (guint32));
  WsiTiledTarget whole;

  if (argb == NULL) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "%s: level %d: out of memory for a %ux%u tile", lr->slide->display,
        lr->level_index, w, h);
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

/* Writes part of scaled tile (col, row) at @dst: straight from the decoder,
 * or copied out of the cached tile (tiles asked for twice are kept). */
static gboolean
tile_paint (LevelReader * lr, gint64 col, gint64 row, guint x, guint y,
    guint w, guint h, guint8 * dst, const WsiTiledTarget * t, GError ** error)
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

  if (lr->cache == NULL)
    return tile_decode (lr, col, row, x, y, w, h, dst, t, error);
  tile = wsi_tile_cache_lookup_or_admit (lr->cache, &key, &admit);
  if (tile != NULL)
    lr->tiles_from_cache++;
  else if (!admit)
    return tile_decode (lr, col, row, x, y, w, h, dst, t, error);
  else
    tile = tile_decode_cached (lr, &key, col, row, error);
  if (tile == NULL)
    return FALSE;
  ok = x + w <= tile->width && y + h <= tile->height
      && tile_copy (lr, tile, x, y, w, h, dst, t);
  wsi_tile_unref (tile);
  if (!ok)
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "%s: level %d tile (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "): "
        "the cached tile cannot be copied", lr->slide->display, lr->level_index,
        col, row);
  return ok;
}

/* Outside the level: transparent ARGB (0), or glass white in a patch
 * format. */
static void
region_clear (const WsiTiledTarget * t, gint64 w, gint64 h)
{
  gint64 i;

  for (i = 0; i < h; i++)
    memset (t->data + i * t->stride,
        t->layout == WSI_TILED_LAYOUT_ARGB ? 0 : 0xFF, (gsize) w * t->bpp);
}

/* Fills the w x h region of @t with the scaled level pixels whose top-left
 * is (x, y), tile by tile. */
static gboolean
level_reader_fill (LevelReader * lr, const WsiTiledTarget * t, gint64 x,
    gint64 y, gint64 w, gint64 h, GError ** error)
{
  gint64 x0 = MAX (x, 0), y0 = MAX (y, 0);
  gint64 x1 = MIN (x + w, lr->width), y1 = MIN (y + h, lr->height);
  gint64 tw = lr->tile_w, th = lr->tile_h, col, row;

  if (x0 != x || y0 != y || x1 != x + w || y1 != y + h)
    region_clear (t, w, h);
  if (x0 >= x1 || y0 >= y1)
    return TRUE;

  for (row = y0 / th; row * th < y1; row++) {
    gint64 ty0 = MAX (y0, row * th), ty1 = MIN (y1, (row + 1) * th);
    for (col = x0 / tw; col * tw < x1; col++) {
      gint64 tx0 = MAX (x0, col * tw), tx1 = MIN (x1, (col + 1) * tw);
      guint8 *dst = t->data + (gsize) (ty0 - y) * t->stride
          + (gsize) (tx0 - x) * t->bpp;

      if (!tile_paint (lr, col, row, tx0 - col * tw, ty0 - row * th,
              tx1 - tx0, ty1 - ty0, dst, t, error))
        return FALSE;
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

gboolean
wsi_tiled_read_argb (WsiSlide * slide, WsiReadContext * ctx,
    const WsiTiledLevel * level, guint32 * argb, gint64 x, gint64 y,
    gint level_index, gint64 w, gint64 h, WsiReadReport * report,
    GError ** error)
{
  WsiReadContext *own_ctx = NULL;
  gdouble ds = slide->level_downsample[level_index];
  WsiTiledTarget target = argb_target (argb, (gsize) w);
  LevelReader lr;
  gboolean ok;

  if (ctx == NULL)
    ctx = own_ctx = wsi_read_context_new ();
  level_reader_init (&lr, slide, ctx, level, level_index, 1, NULL);
  ok = level_reader_fill (&lr, &target, (gint64) floor (x / ds),
      (gint64) floor (y / ds), w, h, error);
  report_fill (report, &lr, level_index, w, h);
  if (own_ctx != NULL)
    wsi_read_context_free (own_ctx);
  return ok;
}

static gboolean scale_fits_tiles (const WsiTiledLevel * level, guint scale);

guint
wsi_tiled_native_scale (const WsiTiledLevel * level, guint wanted)
{
  guint scale;

  for (scale = level->max_scale; scale > 1; scale /= 2) {
    if (scale <= wanted && scale_fits_tiles (level, scale))
      return scale;
  }
  return 1;
}

gboolean
wsi_tiled_read_argb_scaled (WsiSlide * slide, WsiReadContext * ctx,
    const WsiTiledLevel * level, guint32 * argb, gint level_index,
    guint scale, gint64 x, gint64 y, gint64 w, gint64 h, GError ** error)
{
  WsiReadContext *own_ctx = NULL;
  WsiTiledTarget target = argb_target (argb, (gsize) w);
  LevelReader lr;
  gboolean ok;

  if (ctx == NULL)
    ctx = own_ctx = wsi_read_context_new ();
  level_reader_init (&lr, slide, ctx, level, level_index, scale, NULL);
  ok = level_reader_fill (&lr, &target, x, y, w, h, error);
  if (own_ctx != NULL)
    wsi_read_context_free (own_ctx);
  return ok;
}

static gboolean
on_scaled_grid (gdouble v, guint scale)
{
  gdouble q = v / scale;
  return fabs (q - round (q)) < 1e-3;
}

static gboolean
scale_fits_tiles (const WsiTiledLevel * level, guint scale)
{
  return scale <= level->tile_width / 8 && scale <= level->tile_height / 8
      && level->tile_width % scale == 0 && level->tile_height % scale == 0;
}

/* The DCT scale, the rules of pick_scale() in wsislide-tiff.c (which gives
 * the measurements): whole multiples first, on the scaled grid (*@whole
 * TRUE); else a near-whole scale leaving at least 1.5x to the area average,
 * else one within WSI_NATIVE_SCALE_MARGIN of the output's resolution, read
 * at the requested position (*@whole FALSE). Tiles of at least 8 pixels. */
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

/* @snap: a whole-multiple scale, whose window moves onto the scaled grid. */
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

static gboolean
window_is_output (const Window * win, const WsiImage * out)
{
  return win->x0 == win->x && win->y0 == win->y
      && win->span_w == out->width && win->span_h == out->height;
}

static gboolean
read_resampled (LevelReader * lr, WsiReadContext * ctx, const Window * win,
    const WsiImage * out, GError ** error)
{
  guint32 *buf = wsi_read_context_scratch (ctx, WSI_TILED_SCRATCH_REGION,
      (gsize) win->w * win->h * sizeof (guint32));
  WsiTiledTarget target;

  if (buf == NULL) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "%s: out of memory for a %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
        " region", lr->slide->display, win->w, win->h);
    return FALSE;
  }
  target = argb_target (buf, (gsize) win->w);
  if (!level_reader_fill (lr, &target, win->x, win->y, win->w, win->h, error))
    return FALSE;
  if (!wsi_resample_argb (wsi_read_context_resampler (ctx), buf,
          (guint) win->w, (guint) win->h, (gsize) win->w, win->x0 - win->x,
          win->y0 - win->y, win->span_w, win->span_h, out)) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "%s: out of memory resampling a region", lr->slide->display);
    return FALSE;
  }
  return TRUE;
}

gboolean
wsi_tiled_read (WsiSlide * slide, WsiReadContext * ctx,
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

  if (ctx == NULL)
    ctx = own_ctx = wsi_read_context_new ();
  level_reader_init (&lr, slide, ctx, level, plan->level, scale,
      request->tile_cache);
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
    report->x = moved && ok ? llround (win.x0 * scale *
        slide->level_downsample[plan->level]) : plan->x;
    report->y = moved && ok ? llround (win.y0 * scale *
        slide->level_downsample[plan->level]) : plan->y;
  }
  if (own_ctx != NULL)
    wsi_read_context_free (own_ctx);
  return ok;
}
