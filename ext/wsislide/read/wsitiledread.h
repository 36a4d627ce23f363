/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitiledread.h: THE read path of wsislide.h for a backend whose levels
 * are grids of equal tiles it can decode one at a time (the TIFF and DICOM
 * backends).
 *
 * Contract: the backend's slide->handle starts with a WsiTiledSlide, whose
 * levels describe each level (size, tile size, the largest native scale
 * its codec does: 8 for JPEG's DCT scaling, 1 for raw pixels), decode a
 * rectangle of one tile at a scale into a WsiTiledTarget and, for remote
 * sources, say where a tile's bytes are; the backend's read_argb, read and
 * prefetch are the wsi_tiled_backend_* functions, which do the rest:
 * hints a read's tiles to the byte source first (so a remote read fetches
 * them together), picks the DCT scale (whole multiples on the scaled grid,
 * else near-whole, see pick_scale()), decodes only the tiles a region
 * touches, shares whole tiles through the tile cache once one is asked for
 * twice, writes straight into the caller's patch when the window is the
 * output pixel for pixel, else area-averages with wsiresample.h from the
 * cached tiles in place and ARGB scratch for the tiles decoded for this
 * read alone. Outside the level: transparent ARGB, or white in
 * patch formats. A decode failure fails the read with the backend's error
 * (WSI_SLIDE_ERROR_READ, never sticky).
 *
 * Cost: what the tiles cost to decode, plus one copy for cached tiles
 * written to the output pixel for pixel; a resampled read reads its cached
 * tiles where they lie (wsi_resample_argb_mosaic) and decodes only the
 * others into the region, so it copies no pixel. No allocation on the hot
 * path beyond the cache's tiles. Scratch slot
 * WSI_TILED_SCRATCH_REGION of the read context holds the ARGB region; the
 * backend may use the other slots. Threading: as wsislide.h (the level
 * descriptions are immutable after open).
 */

#ifndef __WSI_TILED_READ_H__
#define __WSI_TILED_READ_H__

#include <glib.h>
#include "wsislide.h"
#include "wsibytesource.h"

G_BEGIN_DECLS

#define WSI_TILED_SCRATCH_REGION 1

/* Where a tile decode writes: premultiplied ARGB words (WSI_JPEG_OUT_ARGB
 * layout, -1) or a patch in a WsiPixelFormat. */
typedef struct
{
  guint8 *data;                 /* the rectangle's top-left */
  gsize stride;                 /* bytes a row */
  gint layout;                  /* -1 (ARGB) or a WsiPixelFormat */
  guint bpp;                    /* bytes a pixel */
} WsiTiledTarget;

#define WSI_TILED_LAYOUT_ARGB (-1)

/* Decodes [x, x + w) x [y, y + h) of tile (@column, @row) of @level scaled
 * by 1/@scale into @target (its data at the rectangle's top-left). On
 * failure sets WSI_SLIDE_ERROR_READ naming the file, level and tile. */
typedef gboolean (*WsiTileDecodeFunc) (WsiSlide * slide, WsiReadContext * ctx,
    gint level, gint64 column, gint64 row, guint scale, guint x, guint y,
    guint w, guint h, const WsiTiledTarget * target, GError ** error);

/* Where the bytes of tile (@column, @row) of @level are, for prefetch
 * hints: FALSE when the tile has none to fetch (glass, missing). */
typedef gboolean (*WsiTileBytesFunc) (WsiSlide * slide, gint level,
    gint64 column, gint64 row, WsiByteSource ** source, WsiByteRange * range);

/* One level as the backend sees it. */
typedef struct
{
  gint64 width, height;         /* level pixels */
  guint tile_width, tile_height;
  guint max_scale;              /* 1, 2, 4 or 8 */
  WsiTileDecodeFunc decode;
  /* NULL when the level's tiles are local (hints would gain nothing). */
  WsiTileBytesFunc tile_bytes;
} WsiTiledLevel;

/* The first member of a tiled backend's slide->handle: its levels, widest
 * first, as this file reads them. A backend whose handle starts with one
 * takes the wsi_tiled_backend_* functions below as its own read_argb, read
 * and prefetch. */
typedef struct
{
  const WsiTiledLevel **levels; /* n_levels, into the backend's tables */
  guint n_levels;
} WsiTiledSlide;

/* Room for @n_levels level pointers (the backend sets them). */
void wsi_tiled_slide_init (WsiTiledSlide * tiled, guint n_levels);
void wsi_tiled_slide_clear (WsiTiledSlide * tiled);

/* read_argb of wsislide.h: the level region at 1:1 (no cache), its tiles
 * hinted first. */
gboolean wsi_tiled_backend_read_argb (WsiSlide * slide, WsiReadContext * ctx,
    guint32 * argb, gint64 x, gint64 y, gint level, gint64 w, gint64 h,
    WsiReadReport * report, GError ** error);

/* read of wsislide.h, the plan's tiles hinted first (a no-op when the
 * caller hinted them already). */
gboolean wsi_tiled_backend_read (WsiSlide * slide, WsiReadContext * ctx,
    const WsiReadRequest * request, const WsiReadPlan * plan,
    const WsiImage * out, WsiReadReport * report, GError ** error);

/* prefetch of wsislide.h: hints the tiles @plan covers (one level pixel of
 * margin; a whole overview level too). No-op for levels without
 * tile_bytes. */
void wsi_tiled_backend_prefetch (WsiSlide * slide, const WsiReadPlan * plan);

/* native_scale and read_argb_scaled of wsislide.h: the largest DCT scale
 * not above @wanted the level decodes at, and a region of the level at
 * that scale (scaled pixels, no cache), its tiles hinted first. */
guint wsi_tiled_backend_native_scale (const WsiSlide * slide, gint level,
    guint wanted);
gboolean wsi_tiled_backend_read_argb_scaled (WsiSlide * slide,
    WsiReadContext * ctx, guint32 * argb, gint level, guint scale, gint64 x,
    gint64 y, gint64 w, gint64 h, GError ** error);
/* read_rgb_scaled of wsislide.h: the same tiles decoded straight into RGB
 * (the decoders' patch layout; glass outside the level white). */
gboolean wsi_tiled_backend_read_rgb_scaled (WsiSlide * slide,
    WsiReadContext * ctx, guint8 * rgb, gsize stride, gint level,
    guint scale, gint64 x, gint64 y, gint64 w, gint64 h, GError ** error);

/* Sets WSI_SLIDE_ERROR_READ "<display>: level L tile (col, row): <reason>"
 * and returns FALSE: the message of every tile a read cannot produce. */
gboolean wsi_tiled_tile_fail (const WsiSlide * slide, gint level,
    gint64 column, gint64 row, GError ** error, const gchar * format, ...)
G_GNUC_PRINTF (6, 7);

/* Writes a w x h rectangle of 8-bit RGB samples (@src, @src_stride bytes
 * a row) into @target's layout: the decoders of raw pixels (lossless TIFF
 * tiles, Zarr chunks) all end here. */
void wsi_tiled_target_put_rgb (const WsiTiledTarget * target,
    const guint8 * src, gsize src_stride, guint w, guint h);

/* Fills a w x h rectangle of @target with glass: opaque white. */
void wsi_tiled_target_fill_white (const WsiTiledTarget * target, guint w,
    guint h);

G_END_DECLS

#endif /* __WSI_TILED_READ_H__ */
