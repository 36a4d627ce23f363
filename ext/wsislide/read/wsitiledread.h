/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitiledread.h: the read contract of wsislide.h for a backend whose levels
 * are grids of equal tiles it can decode one at a time (the DICOM backend;
 * the TIFF backend has the same logic in wsislide-tiff.c and can move onto
 * this file).
 *
 * Contract: the backend describes a level (size, tile size, the largest
 * native scale its codec does: 8 for JPEG's DCT scaling, 1 for raw pixels)
 * and decodes a rectangle of one tile at a scale into a WsiTiledTarget; this
 * file does the rest exactly as the TIFF backend does: picks the DCT scale
 * (only on the scaled grid, see wsi_tiled_read()), decodes only the tiles a
 * region touches, shares whole tiles through the tile cache once one is
 * asked for twice, writes straight into the caller's patch when the window
 * is the output pixel for pixel, else decodes into ARGB scratch and
 * area-averages with wsiresample.h. Outside the level: transparent ARGB, or
 * white in patch formats. A decode failure fails the read with the
 * backend's error (WSI_SLIDE_ERROR_READ, never sticky).
 *
 * Cost: what the tiles cost to decode, plus one copy for cached tiles.
 * Scratch slot WSI_TILED_SCRATCH_REGION of the read context holds the ARGB
 * region; the backend may use the other slots. Threading: as wsislide.h.
 */

#ifndef __WSI_TILED_READ_H__
#define __WSI_TILED_READ_H__

#include <glib.h>
#include "wsislide.h"

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

/* One level as the backend sees it. */
typedef struct
{
  gint64 width, height;         /* level pixels */
  guint tile_width, tile_height;
  guint max_scale;              /* 1, 2, 4 or 8 */
  WsiTileDecodeFunc decode;
} WsiTiledLevel;

/* read_argb of wsislide.h: the level region at 1:1 (no cache). */
gboolean wsi_tiled_read_argb (WsiSlide * slide, WsiReadContext * ctx,
    const WsiTiledLevel * level, guint32 * argb, gint64 x, gint64 y,
    gint level_index, gint64 w, gint64 h, WsiReadReport * report,
    GError ** error);

/* native_scale and read_argb_scaled of wsislide.h: the largest DCT scale
 * not above @wanted this level decodes at, and a region of the level at
 * that scale (scaled pixels, no cache). */
guint wsi_tiled_native_scale (const WsiTiledLevel * level, guint wanted);
gboolean wsi_tiled_read_argb_scaled (WsiSlide * slide, WsiReadContext * ctx,
    const WsiTiledLevel * level, guint32 * argb, gint level_index,
    guint scale, gint64 x, gint64 y, gint64 w, gint64 h, GError ** error);

/* read of wsislide.h for @plan at @level. */
gboolean wsi_tiled_read (WsiSlide * slide, WsiReadContext * ctx,
    const WsiTiledLevel * level, const WsiReadRequest * request,
    const WsiReadPlan * plan, const WsiImage * out, WsiReadReport * report,
    GError ** error);

/* Fills a w x h rectangle of @target with glass: opaque white. */
void wsi_tiled_target_fill_white (const WsiTiledTarget * target, guint w,
    guint h);

G_END_DECLS

#endif /* __WSI_TILED_READ_H__ */
