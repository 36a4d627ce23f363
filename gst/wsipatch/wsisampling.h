/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsisampling.h: where patches go on a slide, as plain maths (GLib only).
 *
 * Contract: given a tissue map (an integral image over a tissue mask), a
 * request (mode, footprint or resolution distribution, count, tissue
 * share, seed, slide index, visit) the plan functions return positions
 * (level-0 top-left corners, footprint, output mpp, tissue share). The
 * result is a pure function of the request and the mask: every random
 * draw comes from wsirng.h seeded by (seed, slide index, visit), and the
 * without-replacement walk of a slide is a chain of per-epoch permutations
 * keyed by (seed, slide index, epoch), so a visit's positions never depend
 * on earlier visits having been planned in this process (resume, ranks).
 * patchsampler keeps the policy (properties, events, quotas, records).
 *
 * Cost: building the tissue map is one pass over the mask to find the
 * tissue's bounding box (16 bytes a step) and a vectorised pass over the
 * box for the integral image; a tissue share is four reads; random
 * draws are O(patches) with a bounded number of rejections, then one
 * lattice pass when a slide has little tissue;
 * lattice plans (grid, without replacement) are one or two passes over the
 * lattice plus O(tissue positions) for the permutation of an epoch.
 *
 * Threading: no shared state; a WsiTissueMap and a WsiMppDistribution are
 * read-only once built and may be shared by threads.
 */

#ifndef __WSI_SAMPLING_H__
#define __WSI_SAMPLING_H__

#include <glib.h>
#include <gst/wsi/wsirng.h>

G_BEGIN_DECLS

/* Mask bytes at or above this are tissue (tissuemask writes 0 or 255). */
#define WSI_TISSUE_THRESHOLD 128

/* Optional extra test on a position (annotation regions): returns the
 * position's label (>= 0, or -1 = no label) to keep it, or
 * WSI_SAMPLE_REJECT to refuse it. */
#define WSI_SAMPLE_REJECT (-2)
typedef gint32 (*WsiRegionFilter) (gpointer data, gint64 x, gint64 y,
    gint64 side);

/* Tissue lookup for one slide: an integral image over the mask's tissue
 * bounding box (there is no tissue outside it, so a rectangle is clamped
 * to the box first), so the tissue share of any footprint costs four
 * reads. */
typedef struct
{
  const guint32 *integral;      /* NULL: the whole slide is tissue */
  gint64 mask_width;
  gint64 mask_height;
  gint64 slide_width;
  gint64 slide_height;
  /* bounding box of the tissue, mask pixels, end exclusive (empty when
   * the mask has no tissue); the integral image's origin */
  gint64 tissue_x0, tissue_y0, tissue_x1, tissue_y1;
  /* entries per integral row: tissue_x1 - tissue_x0 + 1 */
  gint64 integral_stride;
  /* NULL, or a test every kept position must also pass (and its label) */
  WsiRegionFilter region_filter;
  gpointer region_data;
} WsiTissueMap;

void wsi_tissue_map_init (WsiTissueMap * map, gint64 slide_width,
    gint64 slide_height);
void wsi_tissue_map_build (WsiTissueMap * map, guint32 * integral,
    const guint8 * mask, gint64 mask_width, gint64 mask_height);
gboolean wsi_tissue_map_is_blank (const WsiTissueMap * map);
guint64 wsi_tissue_map_count (const WsiTissueMap * map, gint64 mx0,
    gint64 my0, gint64 mx1, gint64 my1);
gdouble wsi_tissue_map_fraction (const WsiTissueMap * map, gint64 x,
    gint64 y, gint64 side);
gboolean wsi_tissue_map_accepts (const WsiTissueMap * map, gint64 x,
    gint64 y, gint64 side, gdouble min_tissue, gdouble * fraction,
    gint32 * label);

/* ---- resolution distributions ------------------------------------------ */

typedef enum
{
  WSI_MPP_UNIFORM,              /* uniform on [lo, hi] */
  WSI_MPP_MAXAVG,               /* p(x) ∝ exp (K̄(x) / λ) */
  WSI_MPP_MINMAX,               /* best worst transfer: end atoms, log-uniform */
} WsiMppDensity;

typedef struct _WsiMppDistribution WsiMppDistribution;

WsiMppDistribution *wsi_mpp_distribution_new_discrete (const gdouble * mpps,
    const gdouble * weights, guint n);
WsiMppDistribution *wsi_mpp_distribution_new_continuous (WsiMppDensity
    density, gdouble lo, gdouble hi, gdouble lambda);
void wsi_mpp_distribution_free (WsiMppDistribution * dist);
gdouble wsi_mpp_distribution_draw (const WsiMppDistribution * dist,
    WsiRng * rng);
gdouble wsi_mpp_distribution_min (const WsiMppDistribution * dist);
gdouble wsi_mpp_transfer_potential (gdouble x, gdouble lo, gdouble hi);
gdouble wsi_mpp_minmax_end_weight (gdouble lo, gdouble hi);

gboolean wsi_sampling_parse_list (const gchar * text, GArray * values,
    gchar ** error);

/* ---- plans ------------------------------------------------------------- */

typedef enum
{
  WSI_SAMPLING_RANDOM,
  WSI_SAMPLING_GRID,
  WSI_SAMPLING_MULTI_MAGNIFICATION,
  WSI_SAMPLING_CONTINUOUS_MAGNIFICATION,
  WSI_SAMPLING_N_MODES
} WsiSamplingMode;

/* One planned patch. */
typedef struct
{
  gint64 x;                     /* level-0 left edge */
  gint64 y;                     /* level-0 top edge */
  guint32 footprint;            /* side, level-0 pixels */
  gfloat out_mpp;               /* what the rounding of footprint gives */
  gfloat tissue_fraction;
  gint32 label;                 /* region_filter's label, -1 = none */
} WsiSample;

typedef struct
{
  WsiSamplingMode mode;
  guint out_size;               /* output side, pixels */
  /* random and grid: one footprint for every patch */
  guint32 footprint;
  gfloat out_mpp;
  /* magnification modes: footprint = round (out_size × mpp / slide_mpp) */
  gdouble slide_mpp;
  const WsiMppDistribution *mpps;
  gint64 n_wanted;              /* patches per visit; -1: every grid cell */
  gdouble min_tissue;
  gboolean replacement;
  gint64 stride;                /* grid step, 0 = footprint */
  guint max_attempts;           /* rejection draws per visit, 0 = 50 each */
  guint64 seed;
  guint slide_index;
  guint visit;                  /* the slide's cycle */
} WsiSamplingRequest;

WsiSample *wsi_sampling_plan (const WsiSamplingRequest * req,
    const WsiTissueMap * map, guint * n_samples);
guint32 wsi_sampling_footprint (guint out_size, gdouble mpp,
    gdouble slide_mpp, gfloat * out_mpp);
guint64 wsi_sampling_epoch (guint64 n_positions, guint64 chunk, guint visit);

/* ---- finite runs -------------------------------------------------------- */

gint64 wsi_quota_decide (gint64 max_patches, gboolean rank_quota,
    guint rank_slides_min, gint patches_per_slide);
gint64 wsi_quota_left (gint64 quota, guint64 planned, guint64 dropped);

G_END_DECLS

#endif /* __WSI_SAMPLING_H__ */
