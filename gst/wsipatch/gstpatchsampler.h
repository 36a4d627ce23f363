/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#ifndef __GST_PATCH_SAMPLER_H__
#define __GST_PATCH_SAMPLER_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/**
 * GstPatchSamplerMode:
 * @GST_PATCH_SAMPLER_MODE_RANDOM: uniformly random positions on tissue
 * @GST_PATCH_SAMPLER_MODE_GRID: a regular grid of positions, raster order
 *
 * How patchsampler places patches on a slide.
 */
typedef enum
{
  GST_PATCH_SAMPLER_MODE_RANDOM,
  GST_PATCH_SAMPLER_MODE_GRID
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

#define GST_TYPE_PATCH_SAMPLER (gst_patch_sampler_get_type ())
G_DECLARE_FINAL_TYPE (GstPatchSampler, gst_patch_sampler, GST, PATCH_SAMPLER,
    GstElement);

GST_ELEMENT_REGISTER_DECLARE (patchsampler);

G_END_DECLS

#endif /* __GST_PATCH_SAMPLER_H__ */
