/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsisamplerproperties.h: patchsampler's properties as the user sees them —
 * their ids and their installation with the blurbs (units, ranges,
 * defaults) that gst-inspect-1.0 and the docs show.
 *
 * Contract: wsi_sampler_properties_install() installs every property of
 * patchsampler on its class, once, from class_init, under the ids below:
 * the sampling settings (mutable in PLAYING), the finite-run settings
 * max-patches and rank-quota (mutable up to READY), the read-only
 * counters and quota, and the annotation settings that
 * wsisamplerannotation.h installs from PROP_ANNOTATION_MODE on; it marks
 * the settings' enumerations (wsisamplersettings.h, wsiannotation.h) as
 * plugin API. Numbers are installed through wsirefusal.h, so a value
 * outside its range is refused and the element then refuses to start.
 * The defaults and limits are gstpatchsamplerpriv.h's, the ones the
 * instance starts with, so a blurb's default and the element's cannot
 * part. The element sets and gets the values; nothing outside
 * patchsampler includes this header.
 *
 * Cost: class_init only. Threading: GType class initialisation (once).
 */

#ifndef __WSI_SAMPLER_PROPERTIES_H__
#define __WSI_SAMPLER_PROPERTIES_H__

#include <gst/gst.h>

#include "wsisamplerannotation.h"

G_BEGIN_DECLS

enum
{
  PROP_0,
  PROP_MODE,
  PROP_PATCH_SIZE,
  PROP_TARGET_MPP,
  PROP_LEVEL,
  PROP_PATCHES_PER_SLIDE,
  PROP_MIN_TISSUE,
  PROP_REPLACEMENT,
  PROP_STRIDE,
  PROP_MAX_ATTEMPTS,
  PROP_ALIGN,
  PROP_SLIDES_SAMPLED,
  PROP_SLIDES_SKIPPED,
  PROP_PATCHES_PLANNED,
  PROP_MAX_PATCHES,
  PROP_RANK_QUOTA,
  PROP_QUOTA,
  PROP_TARGET_MPPS,
  PROP_MPP_WEIGHTS,
  PROP_MPP_MIN,
  PROP_MPP_MAX,
  PROP_MPP_DISTRIBUTION,
  PROP_MAXAVG_LAMBDA,
  PROP_ANNOTATION_MODE,
  PROP_ANNOTATION_CLASSES,
  PROP_ANNOTATION_EXCLUDE,
  PROP_MIN_ANNOTATION_COVERAGE,
  PROP_ANNOTATION_OVERLAP,
  PROP_CLASS_BALANCE,
  PROP_CLASS_WEIGHTS,
  PROP_SLIDES_WITHOUT_REGIONS,
};

/* the annotation properties, numbered as wsisamplerannotation.h installs
 * them */
G_STATIC_ASSERT (PROP_CLASS_WEIGHTS - PROP_ANNOTATION_MODE + 1 ==
    WSI_SAMPLER_ANNOTATION_N_PROPS);

void wsi_sampler_properties_install (GObjectClass * gobject_class);

G_END_DECLS

#endif /* __WSI_SAMPLER_PROPERTIES_H__ */
