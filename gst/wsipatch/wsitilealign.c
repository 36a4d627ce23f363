/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsitilealign.c: patchsampler's align=tile (see wsitilealign.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <gst/wsi/wsilevel.h>

#include "wsitilealign.h"

/* The level patchreader reads for a patch (the read layer's rule,
 * wsilevel.h), from the slide meta's level downsamples. */
static gint
read_level (const GstStructure * meta, const WsiPatchRecord * record)
{
  gint level, levels = 1;
  gdouble *downsamples;

  gst_structure_get_int (meta, "level-count", &levels);
  levels = CLAMP (levels, 1, 64);
  downsamples = g_newa (gdouble, levels);
  for (level = 0; level < levels; level++)
    downsamples[level] = wsi_structure_array_get (meta, "level-downsamples",
        level, 0.0);
  return wsi_level_for_downsample (downsamples, levels,
      (gdouble) record->footprint / record->out_size);
}

/* align=tile: snaps every position down to the tile grid of the level that
 * will be read, in level-0 pixels (a tile edge at level pixel c * tw lies at
 * level-0 c * tw * downsample). Snapping down keeps patches on the slide. */
static void
align_record_to_tiles (WsiPatchRecord * record, const GstStructure * meta)
{
  gint level = read_level (meta, record);
  gdouble ds = wsi_structure_array_get (meta, "level-downsamples", level,
      1.0);
  gdouble tw = wsi_structure_array_get (meta, "level-tile-widths", level, 0.0);
  gdouble th = wsi_structure_array_get (meta, "level-tile-heights", level,
      0.0);
  gint64 column, row;

  if (tw < 1.0 || th < 1.0)
    return;                     /* untiled format: positions as drawn */
  column = (gint64) floor (record->x / (tw * ds));
  row = (gint64) floor (record->y / (th * ds));
  record->x = (gint64) floor (column * tw * ds);
  record->y = (gint64) floor (row * th * ds);
}

/* Each record has its own footprint, hence its own level in the
 * magnification modes. */
void
wsi_tile_align_records (GstBuffer * out, const GstStructure * meta)
{
  GstMapInfo info;
  WsiPatchRecord *records;
  gsize i, n;

  gst_buffer_map (out, &info, GST_MAP_READWRITE);
  records = (WsiPatchRecord *) info.data;
  n = info.size / sizeof (WsiPatchRecord);
  for (i = 0; i < n; i++)
    align_record_to_tiles (&records[i], meta);
  gst_buffer_unmap (out, &info);
}
