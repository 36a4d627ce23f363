/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsisamplerannotation.h: patchsampler's annotation settings as
 * properties: annotation-mode, annotation-classes, annotation-exclude,
 * min-annotation-coverage, annotation-overlap, class-balance and
 * class-weights (their blurbs and enumeration types), their values as set
 * (GstPatchSamplerAnnotationProps) and the class plan built from them
 * (wsiclassplan.h), which the slides planned afterwards use. How a slide
 * is then sampled inside its regions is wsisamplerregions.h's.
 *
 * Contract: the element numbers the seven properties consecutively from
 * the id it gives patch_sampler_annotation_install(), in the order above,
 * and hands every set and get of one of them here (ids relative to that
 * first one). A text is kept as given; whether it can be used is decided
 * by the plan (its `problem`), which the element reports when it starts
 * planning.
 *
 * Cost: a property set rebuilds the plan (parses the class lists: a few
 * microseconds); slides already being planned keep the plan they took.
 *
 * Threading: the element's object lock is held around every call but
 * install and the enumeration types.
 */

#ifndef __WSI_SAMPLER_ANNOTATION_H__
#define __WSI_SAMPLER_ANNOTATION_H__

#include "gstpatchsamplerpriv.h"

G_BEGIN_DECLS

/* The properties, relative to the first id. */
typedef enum
{
  WSI_SAMPLER_ANNOTATION_MODE,
  WSI_SAMPLER_ANNOTATION_CLASSES,
  WSI_SAMPLER_ANNOTATION_EXCLUDE,
  WSI_SAMPLER_ANNOTATION_MIN_COVERAGE,
  WSI_SAMPLER_ANNOTATION_OVERLAP,
  WSI_SAMPLER_ANNOTATION_CLASS_BALANCE,
  WSI_SAMPLER_ANNOTATION_CLASS_WEIGHTS,
  WSI_SAMPLER_ANNOTATION_N_PROPS
} WsiSamplerAnnotationProp;

void patch_sampler_annotation_install (GObjectClass * gobject_class,
    guint first_id, GParamFlags flags);
/* Marks the enumeration types as plugin API (gst-inspect, docs). */
void patch_sampler_annotation_mark_api (void);

/* The defaults: off, every text empty. */
void patch_sampler_annotation_init (GstPatchSamplerAnnotationProps * props);
void patch_sampler_annotation_clear (GstPatchSamplerAnnotationProps * props);

void patch_sampler_annotation_set (GstPatchSamplerAnnotationProps * props,
    WsiSamplerAnnotationProp prop, const GValue * value);
void patch_sampler_annotation_get (const GstPatchSamplerAnnotationProps *
    props, WsiSamplerAnnotationProp prop, GValue * value);

/* A new plan from the values as set. */
WsiClassPlan *patch_sampler_annotation_plan (const
    GstPatchSamplerAnnotationProps * props);

G_END_DECLS

#endif /* __WSI_SAMPLER_ANNOTATION_H__ */
