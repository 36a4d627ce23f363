/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsilevel.h: the pyramid level a region is read at, one rule for the read
 * layer (which reads there) and patchsampler (whose align=tile snaps to that
 * level's tiles): the coarsest level whose downsample does not exceed the
 * wanted one, with 1 % tolerance, so a level of downsample 2.0005 serves a
 * 2x read. Levels of unknown downsample (<= 0) are never chosen.
 *
 * Header only (GLib): a few comparisons per call, any thread.
 */

#ifndef __WSI_LEVEL_H__
#define __WSI_LEVEL_H__

#include <glib.h>

G_BEGIN_DECLS

/* How far above the wanted downsample a level may lie and still be read. */
#define WSI_LEVEL_TOLERANCE 1.01

/* The index into @downsamples (@n_levels of them, level 0 first) to read
 * at for @downsample (footprint / output size); 0 when none fits. */
static inline gint
wsi_level_for_downsample (const gdouble * downsamples, gint n_levels,
    gdouble downsample)
{
  gint level, best = 0;

  for (level = 0; level < n_levels; level++) {
    if (downsamples[level] > 0.0
        && downsamples[level] <= downsample * WSI_LEVEL_TOLERANCE)
      best = level;
  }
  return best;
}

G_END_DECLS

#endif /* __WSI_LEVEL_H__ */
