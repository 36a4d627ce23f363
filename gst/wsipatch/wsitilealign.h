/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitilealign.h: patchsampler's `align=tile` — patch positions snapped to
 * the tile grid of the level patchreader will read, so a patch decodes as
 * few tiles as it can.
 *
 * Contract: wsi_tile_align_records() rewrites x and y of every
 * WsiPatchRecord in @out (a writable buffer of records) in
 * level-0 pixels: each position moves down (never up, so a patch stays on
 * the slide) to the nearest tile edge of the level chosen for its
 * footprint by the read layer's rule (wsilevel.h), from the slide meta's
 * `level-downsamples`, `level-tile-widths` and `level-tile-heights`.
 * Records of an untiled level (tile size 0 in the meta) keep their
 * positions. A pure function of the records and the meta.
 *
 * Cost: O(records × levels); no allocation beyond a stack array of the
 * level downsamples per record.
 *
 * Threading: no state; the caller owns @out.
 */

#ifndef __WSI_TILE_ALIGN_H__
#define __WSI_TILE_ALIGN_H__

#include <gst/gst.h>
#include <gst/wsi/wsirecord.h>

G_BEGIN_DECLS

void wsi_tile_align_records (GstBuffer * out, const GstStructure * meta);

G_END_DECLS

#endif /* __WSI_TILE_ALIGN_H__ */
