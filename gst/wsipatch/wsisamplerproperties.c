/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsisamplerproperties.h"

#include <gst/wsi/wsirefusal.h>

#include "gstpatchsamplerpriv.h"
#include "wsisamplerquota.h"
#include "wsisamplersettings.h"

void
wsi_sampler_properties_install (GObjectClass * gobject_class)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_PLAYING;
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;
  const GParamFlags rw_ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;

  g_object_class_install_property (gobject_class, PROP_MODE,
      g_param_spec_enum ("mode", "Mode",
          "Where patches go: random = uniformly random positions on tissue; "
          "grid = a regular grid (step: stride) in raster order; "
          "multi-magnification = each patch one of target-mpps, then a random "
          "position; continuous-magnification = each patch its own "
          "resolution in [mpp-min, mpp-max] (mpp-distribution), then a random "
          "position",
          GST_TYPE_PATCH_SAMPLER_MODE, DEFAULT_MODE, rw));
  g_object_class_install_property (gobject_class, PROP_PATCH_SIZE,
      wsi_param_spec_uint ("patch-size", "Patch size",
          "Side of the output patch, in output pixels (8..8192, default 256)",
          MIN_PATCH_SIZE, MAX_PATCH_SIZE, DEFAULT_PATCH_SIZE, rw));
  g_object_class_install_property (gobject_class, PROP_TARGET_MPP,
      wsi_param_spec_double ("target-mpp", "Target resolution",
          "Resolution of the output patches in microns per pixel "
          "(0..1000, default 0 = the slide's level 0). > 0 needs the slide's "
          "mpp (footprint = round (patch-size * target-mpp / mpp-x)) and "
          "takes precedence over level",
          0.0, MAX_TARGET_MPP, DEFAULT_TARGET_MPP, rw));
  g_object_class_install_property (gobject_class, PROP_LEVEL,
      wsi_param_spec_int ("level", "Level",
          "Pyramid level whose scale the patches have, when target-mpp is 0 "
          "(footprint = round (patch-size * downsample (level))); -1..64, "
          "default -1 = unused. Slides without that level are skipped",
          -1, MAX_LEVEL, DEFAULT_LEVEL, rw));
  g_object_class_install_property (gobject_class, PROP_PATCHES_PER_SLIDE,
      wsi_param_spec_int ("patches-per-slide", "Patches per slide",
          "Patches planned per slide visit (1..1000000, default 100); "
          "-1 = all positions (grid mode only). Random mode plans fewer only "
          "when no lattice position has enough tissue; grid mode takes the "
          "next chunk of a per-slide shuffle of its tissue cells, so visits "
          "walk the whole grid before a cell repeats (each visit in raster "
          "order)",
          -1, MAX_PATCHES_PER_SLIDE, DEFAULT_PATCHES_PER_SLIDE, rw));
  g_object_class_install_property (gobject_class, PROP_MIN_TISSUE,
      wsi_param_spec_double ("min-tissue", "Minimum tissue share",
          "Share of a patch footprint's mask pixels that must be tissue for "
          "the patch to be kept (0..1, default 0.5; 0 = anywhere on the "
          "slide, 1 = wholly on tissue)",
          0.0, 1.0, DEFAULT_MIN_TISSUE, rw));
  g_object_class_install_property (gobject_class, PROP_REPLACEMENT,
      g_param_spec_boolean ("replacement", "With replacement",
          "Random mode: TRUE (default) draws positions independently, so a "
          "position may repeat; FALSE takes non-overlapping positions (a "
          "lattice of step footprint) and repeats none, across all the "
          "slide's visits and cycles, until every one was used, then starts "
          "a fresh shuffle. The magnification modes need TRUE",
          DEFAULT_REPLACEMENT, rw));
  g_object_class_install_property (gobject_class, PROP_STRIDE,
      wsi_param_spec_uint ("stride", "Grid stride",
          "Grid mode: distance between grid positions in level-0 pixels "
          "(0..2147483647, default 0 = the footprint, non-overlapping)",
          0, G_MAXINT, DEFAULT_STRIDE, rw));
  g_object_class_install_property (gobject_class, PROP_ALIGN,
      g_param_spec_enum ("align", "Align",
          "none: positions as drawn; tile: snap every position down to the "
          "tile grid of the pyramid level patchreader will read (from the "
          "slide meta's level-tile-widths/-heights), so that a patch the "
          "size of a tile costs one tile decode. Slides whose format has no "
          "tiles keep their positions",
          GST_TYPE_PATCH_SAMPLER_ALIGN, DEFAULT_ALIGN, rw));
  g_object_class_install_property (gobject_class, PROP_MAX_ATTEMPTS,
      wsi_param_spec_uint ("max-attempts", "Maximum attempts",
          "Random mode with replacement: most uniformly random positions "
          "drawn per slide visit (magnification modes: this / "
          "patches-per-slide per patch); on a slide with so little tissue that they "
          "run out, the remaining patches are drawn from the tissue positions "
          "of a lattice of step footprint/4 (0..4294967295, default 0 = "
          "50 * patches-per-slide)",
          0, G_MAXUINT, DEFAULT_MAX_ATTEMPTS, rw));
  g_object_class_install_property (gobject_class, PROP_SLIDES_SAMPLED,
      wsi_param_spec_uint64 ("slides-sampled", "Slides sampled",
          "Slide visits that gave at least one patch since the element "
          "last started (read-only)", 0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_SLIDES_SKIPPED,
      wsi_param_spec_uint64 ("slides-skipped", "Slides skipped",
          "Slide visits that gave no patch (rejected, too small, unknown "
          "mpp, missing level, no tissue found) since the element last "
          "started (read-only)", 0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_PATCHES_PLANNED,
      wsi_param_spec_uint64 ("patches-planned", "Patches planned",
          "Patch records pushed since the element last started (read-only)",
          0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_MAX_PATCHES,
      wsi_param_spec_int64 ("max-patches", "Maximum patches",
          "Most patches planned over the whole stream (the last slide's plan "
          "is cut short); then EOS goes downstream and upstream is told to "
          "stop. Patches, -1 to 2^63-1, default -1 = unlimited",
          -1, G_MAXINT64, DEFAULT_MAX_PATCHES, rw_ready));
  g_object_class_install_property (gobject_class, PROP_RANK_QUOTA,
      g_param_spec_boolean ("rank-quota", "Per-rank quota",
          "Finite DDP runs: end the stream after exactly rank-slides-min x "
          "patches-per-slide patches (rank-slides-min from the first slide's "
          "meta, the same on every rank; with max-patches too the smaller "
          "wins). Use with wsislidesrc cycle=true so shortfalls are refilled; "
          "an upstream EOS before the quota is an error. Default: false",
          DEFAULT_RANK_QUOTA, rw_ready));
  g_object_class_install_property (gobject_class, PROP_QUOTA,
      wsi_param_spec_int64 ("quota", "Quota",
          "Patches this stream ends after, decided at the first slide from "
          "max-patches and rank-quota (read-only; patches, -1 = none or not "
          "yet known)", -1, G_MAXINT64, WSI_SAMPLER_NO_QUOTA, ro));

  g_object_class_install_property (gobject_class, PROP_TARGET_MPPS,
      g_param_spec_string ("target-mpps", "Target resolutions",
          "mode=multi-magnification: the resolutions each patch draws from, "
          "microns per output pixel, comma-separated, each > 0, at most 32 "
          "(default \"0.25,0.5,1,2\", Midnight's)",
          DEFAULT_TARGET_MPPS, rw));
  g_object_class_install_property (gobject_class, PROP_MPP_WEIGHTS,
      g_param_spec_string ("mpp-weights", "Resolution weights",
          "mode=multi-magnification: relative probability of each of "
          "target-mpps, comma-separated, each > 0, as many as target-mpps "
          "(default \"\" = equal weights)", "", rw));
  g_object_class_install_property (gobject_class, PROP_MPP_MIN,
      wsi_param_spec_double ("mpp-min", "Finest resolution",
          "mode=continuous-magnification: lower end of the resolution range, "
          "microns per output pixel (> 0 .. 1000, below mpp-max, default "
          "0.25)", 0.0, MAX_TARGET_MPP, DEFAULT_MPP_MIN, rw));
  g_object_class_install_property (gobject_class, PROP_MPP_MAX,
      wsi_param_spec_double ("mpp-max", "Coarsest resolution",
          "mode=continuous-magnification: upper end of the resolution range, "
          "microns per output pixel (> 0 .. 1000, above mpp-min, default 2)",
          0.0, MAX_TARGET_MPP, DEFAULT_MPP_MAX, rw));
  g_object_class_install_property (gobject_class, PROP_MPP_DISTRIBUTION,
      g_param_spec_enum ("mpp-distribution", "Resolution distribution",
          "mode=continuous-magnification: how each patch's resolution is "
          "drawn from [mpp-min, mpp-max] (uniform, maxavg, minmax; "
          "default uniform)", GST_TYPE_PATCH_SAMPLER_MPP_DISTRIBUTION,
          DEFAULT_MPP_DISTRIBUTION, rw));
  g_object_class_install_property (gobject_class, PROP_MAXAVG_LAMBDA,
      wsi_param_spec_double ("maxavg-lambda", "maxavg temperature",
          "mpp-distribution=maxavg: entropy regularisation lambda of the "
          "density exp (K(x) / lambda); larger is closer to uniform (0.001 "
          ".. 1000, default 1)", 0.001, 1000.0, DEFAULT_MAXAVG_LAMBDA, rw));

  patch_sampler_annotation_install (gobject_class, PROP_ANNOTATION_MODE, rw);
  g_object_class_install_property (gobject_class,
      PROP_SLIDES_WITHOUT_REGIONS, wsi_param_spec_uint64
      ("slides-without-regions", "Slides without regions",
          "Slide visits skipped because annotation-mode is on and the slide "
          "has no usable region of annotation-classes (no file, a malformed "
          "one, or none of those classes) since the element last started "
          "(read-only)", 0, G_MAXUINT64, 0, ro));

  gst_type_mark_as_plugin_api (GST_TYPE_PATCH_SAMPLER_MODE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_PATCH_SAMPLER_ALIGN, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_PATCH_SAMPLER_MPP_DISTRIBUTION, 0);
  patch_sampler_annotation_mark_api ();
}
