/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsisamplersettings.c: the GTypes of wsisamplersettings.h's
 * enumerations. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/wsi/wsienumtype.h>

#include "wsisamplersettings.h"

GType
gst_patch_sampler_mode_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_PATCH_SAMPLER_MODE_RANDOM,
        "Uniformly random positions on tissue", "random"},
    {GST_PATCH_SAMPLER_MODE_GRID,
        "Regular grid of positions on tissue, raster order", "grid"},
    {GST_PATCH_SAMPLER_MODE_MULTI_MAGNIFICATION,
          "Each patch draws one of target-mpps, then a random position on "
          "tissue", "multi-magnification"},
    {GST_PATCH_SAMPLER_MODE_CONTINUOUS_MAGNIFICATION,
          "Each patch draws its resolution in [mpp-min, mpp-max], then a "
          "random position on tissue", "continuous-magnification"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type, "GstPatchSamplerMode", values);
}

GType
gst_patch_sampler_align_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_PATCH_SAMPLER_ALIGN_NONE, "Positions as drawn", "none"},
    {GST_PATCH_SAMPLER_ALIGN_TILE, "Snapped to the tile grid of the level "
          "read", "tile"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type, "GstPatchSamplerAlign", values);
}

GType
gst_patch_sampler_mpp_distribution_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_PATCH_SAMPLER_MPP_UNIFORM, "Uniform on [mpp-min, mpp-max]",
        "uniform"},
    {GST_PATCH_SAMPLER_MPP_MAXAVG, "Maximises the average transfer across "
          "resolutions: density exp (K(x) / maxavg-lambda), peaks inside "
          "the range", "maxavg"},
    {GST_PATCH_SAMPLER_MPP_MINMAX, "Maximises the worst transfer: both ends "
          "weighted, log-uniform between", "minmax"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type, "GstPatchSamplerMppDistribution", values);
}
