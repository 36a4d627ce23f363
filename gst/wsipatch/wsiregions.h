/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiregions.h: annotation regions of one slide as geometry (GLib only):
 * which class a patch lies in, and positions drawn inside a class.
 *
 * Contract: built from the packed polygons of wsiannotation.h and a map
 * from the file's class indices to roles: a stream class id (>= 0: sampled
 * and labelled), WSI_REGION_EXCLUDED (no patch may lie there) or
 * WSI_REGION_IGNORED (as if absent). A patch (x, y, side) is classified
 * by its centre (min_coverage 0: the regions containing the centre, holes
 * respected, even-odd) or by coverage (the regions covering at least
 * min_coverage of the footprint, exact polygon ∩ square areas). Excluded
 * regions veto: centre rule, when one contains the centre; coverage rule,
 * when one overlaps the footprint at all. Among the qualifying regions the
 * overlap rule picks the one whose class labels the patch (smallest area,
 * largest area, first or last in the file; ties to the earlier one).
 * Draws are uniform over the union of a class's regions: a region drawn
 * with probability ∝ its area, a point uniform in it, kept only when that
 * region is the one the overlap rule gives at the patch (so overlapped
 * parts are not counted twice).
 *
 * Cost: building is O(points) plus a uniform grid index over the slide
 * (about 4 cells per region, at most 2^20 cells, items capped by
 * coarsening), so a query touches only the regions near it: a centre
 * lookup is one cell's regions with a bounding-box test, then a crossing
 * count over their rings; a coverage lookup clips the rings of the
 * regions near the footprint (O(points of those rings)).
 *
 * Threading: read-only once built; may be shared by threads.
 */

#ifndef __WSI_REGIONS_H__
#define __WSI_REGIONS_H__

#include <glib.h>
#include <gst/wsi/wsirng.h>
#include <gst/wsi/wsiannotation.h>

#include "wsisampling.h"

G_BEGIN_DECLS

#define WSI_REGION_EXCLUDED (-2)
#define WSI_REGION_IGNORED (-3)

typedef enum
{
  WSI_OVERLAP_SMALLEST,
  WSI_OVERLAP_LARGEST,
  WSI_OVERLAP_FIRST,
  WSI_OVERLAP_LAST,
} WsiOverlapRule;

typedef struct _WsiRegions WsiRegions;

/* NULL when @data is corrupt. @roles has @n_roles entries, one per class
 * index of the file (indices beyond count as ignored). */
WsiRegions *wsi_regions_new (const guint8 * data, gsize size,
    const gint32 * roles, guint n_roles, gint64 slide_width,
    gint64 slide_height, WsiOverlapRule rule);
void wsi_regions_free (WsiRegions * regions);

/* Regions with a sampled class, and the area (level-0 px²) of class
 * @class_id's regions (sum, overlaps counted twice). */
guint wsi_regions_n_sampled (const WsiRegions * regions);
gdouble wsi_regions_class_area (const WsiRegions * regions, gint32 class_id);

/* The stream class id of the patch (x, y, side), or WSI_CLASS_NONE when it
 * lies in no sampled region or touches an excluded one. @region (may be
 * NULL) gets the labelling region's index. */
gint32 wsi_regions_classify (const WsiRegions * regions, gint64 x, gint64 y,
    gint64 side, gdouble min_coverage, guint * region);

/* Area share of the square (x, y, side) that region @region covers. */
gdouble wsi_regions_coverage (const WsiRegions * regions, guint region,
    gdouble x, gdouble y, gdouble side);

/* Leaves regions smaller than @min_area (level-0 px²) out of the draws
 * and of wsi_regions_class_area (the coverage rule's exact bound: such a
 * region never covers enough of a footprint). Not thread-safe. */
void wsi_regions_set_min_draw_area (WsiRegions * regions, gdouble min_area);

/* A point uniform in a region of class @class_id (-1: any sampled class),
 * the region drawn ∝ area. FALSE when the class has no region. */
gboolean wsi_regions_draw_point (const WsiRegions * regions,
    gint32 class_id, WsiRng * rng, gdouble * x, gdouble * y, guint * region);

/* ---- sampling ---------------------------------------------------------- */

/* A WsiRegionFilter for the lattice modes (grid, without replacement):
 * data is a WsiRegionTest. */
typedef struct
{
  const WsiRegions *regions;
  gdouble min_coverage;
} WsiRegionTest;

gint32 wsi_regions_filter (gpointer test, gint64 x, gint64 y, gint64 side);

/* Random mode with replacement inside the regions: for each of
 * req->n_wanted patches, a class drawn from @class_shares (@n_classes
 * entries summing to 1; NULL = uniform over the union of every sampled
 * class), then a position uniform in that class's regions, kept when it
 * is labelled by the region drawn and its tissue share reaches
 * req->min_tissue on @map (a map without a region filter). At most
 * req->max_attempts draws (0 = 200 per patch); a pure function of (seed,
 * slide index, visit). Returns the patches placed in @samples. */
guint wsi_regions_plan_random (const WsiRegionTest * test,
    const WsiSamplingRequest * req, const WsiTissueMap * map,
    const gdouble * class_shares, guint n_classes, WsiSample * samples);

G_END_DECLS

#endif /* __WSI_REGIONS_H__ */
