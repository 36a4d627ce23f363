/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsisamplerregions.h: sampling inside annotation regions: the slide's
 * regions with this stream's roles (annotation-mode, -classes, -exclude,
 * min-annotation-coverage, annotation-overlap: wsiregions.h), the plan
 * drawn from them by the class policy (class-balance, class-weights:
 * wsiclassplan.h), each record's class attached, and a warning for
 * requested classes no annotation file had.
 *
 * Contract: a slide without regions to sample is counted
 * (slides-without-regions) and warned about once; the class counts that
 * balance the classes live on the instance for the stream.
 *
 * Cost: the regions are built per visit (about 1.5 ms for 10^4
 * polygons), a small share of reading the patches.
 *
 * Threading: the streaming thread.
 */

#ifndef __WSI_SAMPLER_REGIONS_H__
#define __WSI_SAMPLER_REGIONS_H__

#include "gstpatchsamplerpriv.h"

G_BEGIN_DECLS

GstBuffer *patch_sampler_plan_regions (GstPatchSampler * self, const GstPatchSamplerSettings * settings, const WsiSlideVisit * visit, const GstStructure * meta, WsiTissueMap * map, const WsiRecordTemplate * tmpl, const WsiMppDistribution * mpps, gint32 ** labels, gchar ** reason);
void patch_sampler_attach_classes (GstPatchSampler * self, const WsiClassPlan * plan, GstBuffer * out, const gint32 * labels, guint n);
void patch_sampler_warn_unseen_classes (GstPatchSampler * self, const WsiClassPlan * plan);

G_END_DECLS

#endif /* __WSI_SAMPLER_REGIONS_H__ */
