/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsisamplerplan.h: a slide visit's plan: the visit read from its slide
 * description (WsiSlideMeta), the tissue map from the mask on the slide
 * buffer (only the memories holding it mapped), the sampling request
 * (wsisampling.h: modes, lattices, quota arithmetic), and the records
 * buffer of the positions drawn.
 *
 * Contract: the plan is a pure function of (seed, slide, settings): the
 * same visit gives the same records at any thread count. Records carry no
 * sequence number (patchinterleave writes it).
 *
 * Cost: one integral image of the mask per visit (reused scratch), then
 * per patch a constant-time tissue check.
 *
 * Threading: the streaming thread.
 */

#ifndef __WSI_SAMPLER_PLAN_H__
#define __WSI_SAMPLER_PLAN_H__

#include "gstpatchsamplerpriv.h"

G_BEGIN_DECLS

GstBuffer *patch_sampler_records_from_samples (const WsiSample * samples, guint n, const WsiRecordTemplate * tmpl);
gboolean patch_sampler_slide_visit_read (WsiSlideVisit * visit, const GstStructure * meta);
gboolean patch_sampler_tissue_map (GstPatchSampler * self, const WsiSlideVisit * visit, GstBuffer * slide, WsiTissueMap * map);
WsiMppDistribution *patch_sampler_settings_mpp_distribution (const GstPatchSamplerSettings * settings);
void patch_sampler_sampling_request_init (WsiSamplingRequest * req_out, const GstPatchSamplerSettings * settings, const WsiSlideVisit * visit, const WsiRecordTemplate * tmpl, const WsiMppDistribution * mpps);
GstBuffer *patch_sampler_records (const GstPatchSamplerSettings * settings, const GstStructure * meta, WsiSample * samples, guint n, const WsiRecordTemplate * tmpl, gboolean labelled, gint32 ** labels);
GstBuffer *patch_sampler_plan (const GstPatchSamplerSettings * settings, const WsiSlideVisit * visit, const GstStructure * meta, const WsiTissueMap * map, const WsiRecordTemplate * tmpl, const WsiMppDistribution * mpps, gchar ** reason);

G_END_DECLS

#endif /* __WSI_SAMPLER_PLAN_H__ */
