/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsisamplersettings.h: the enumerations of patchsampler's settings (mode,
 * align, mpp-distribution) and their GTypes, for the element, its parts
 * (gstpatchsamplerpriv.h) and applications; their GTypes are registered in
 * wsisamplersettings.c.
 *
 * Contract: the values and nicks are the property values of patchsampler
 * (gst-inspect-1.0 lists them); a value's number never changes.
 *
 * Cost: a type is registered once (wsienumtype.h), then read atomically.
 *
 * Threading: any thread.
 */

#ifndef __WSI_SAMPLER_SETTINGS_H__
#define __WSI_SAMPLER_SETTINGS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/**
 * GstPatchSamplerMode:
 * @GST_PATCH_SAMPLER_MODE_RANDOM: uniformly random positions on tissue
 * @GST_PATCH_SAMPLER_MODE_GRID: a regular grid of positions, raster order
 * @GST_PATCH_SAMPLER_MODE_MULTI_MAGNIFICATION: each patch draws one of
 *   target-mpps (weighted by mpp-weights), then a position on tissue
 * @GST_PATCH_SAMPLER_MODE_CONTINUOUS_MAGNIFICATION: each patch draws its
 *   resolution from [mpp-min, mpp-max] (mpp-distribution), then a position
 *
 * How patchsampler places patches on a slide.
 */
typedef enum
{
  GST_PATCH_SAMPLER_MODE_RANDOM,
  GST_PATCH_SAMPLER_MODE_GRID,
  GST_PATCH_SAMPLER_MODE_MULTI_MAGNIFICATION,
  GST_PATCH_SAMPLER_MODE_CONTINUOUS_MAGNIFICATION
} GstPatchSamplerMode;

#define GST_TYPE_PATCH_SAMPLER_MODE (gst_patch_sampler_mode_get_type ())
GType gst_patch_sampler_mode_get_type (void);

/**
 * GstPatchSamplerAlign:
 * @GST_PATCH_SAMPLER_ALIGN_NONE: positions as drawn
 * @GST_PATCH_SAMPLER_ALIGN_TILE: snapped down to the tile grid of the
 *   pyramid level that patchreader reads
 *
 * Whether patchsampler snaps positions to the slide's tiles.
 */
typedef enum
{
  GST_PATCH_SAMPLER_ALIGN_NONE,
  GST_PATCH_SAMPLER_ALIGN_TILE
} GstPatchSamplerAlign;

#define GST_TYPE_PATCH_SAMPLER_ALIGN (gst_patch_sampler_align_get_type ())
GType gst_patch_sampler_align_get_type (void);

/**
 * GstPatchSamplerMppDistribution:
 * @GST_PATCH_SAMPLER_MPP_UNIFORM: uniform on [mpp-min, mpp-max]
 * @GST_PATCH_SAMPLER_MPP_MAXAVG: density ∝ exp (K̄(x) / maxavg-lambda),
 *   the average transfer (Moellers et al. 2026)
 * @GST_PATCH_SAMPLER_MPP_MINMAX: the distribution maximising the worst
 *   transfer: both ends weighted, log-uniform between
 *
 * How mode=continuous-magnification draws each patch's resolution.
 */
typedef enum
{
  GST_PATCH_SAMPLER_MPP_UNIFORM,
  GST_PATCH_SAMPLER_MPP_MAXAVG,
  GST_PATCH_SAMPLER_MPP_MINMAX
} GstPatchSamplerMppDistribution;

#define GST_TYPE_PATCH_SAMPLER_MPP_DISTRIBUTION \
  (gst_patch_sampler_mpp_distribution_get_type ())
GType gst_patch_sampler_mpp_distribution_get_type (void);

G_END_DECLS

#endif /* __WSI_SAMPLER_SETTINGS_H__ */
