/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsisamplerfootprint.h: how large a patch is on the slide and which level
 * it is read from: the footprint and level rule. From the slide's level-0
 * mpp and the settings (target-mpp, level, or the magnification modes'
 * range of mpps) it gives the footprint in level-0 pixels, the output size
 * and mpp every record of the visit shares, or a reason the slide cannot
 * be sampled (no resolution, a target finer than the scan, a level it does
 * not have), warned about once per slide.
 *
 * Contract: patch_sampler_footprint() fills @tmpl or returns FALSE with
 * @reason; the level itself is chosen downstream by the one level rule
 * (wsilevel.h) from the footprint written on each record.
 *
 * Cost: arithmetic per slide visit.
 *
 * Threading: the streaming thread.
 */

#ifndef __WSI_SAMPLER_FOOTPRINT_H__
#define __WSI_SAMPLER_FOOTPRINT_H__

#include "gstpatchsamplerpriv.h"

G_BEGIN_DECLS

gboolean patch_sampler_mode_draws_mpp (GstPatchSamplerMode mode);
gboolean patch_sampler_footprint (GstPatchSampler * self, const GstPatchSamplerSettings * settings, const WsiSlideVisit * visit, const GstStructure * meta, WsiRecordTemplate * tmpl, gchar ** reason);

G_END_DECLS

#endif /* __WSI_SAMPLER_FOOTPRINT_H__ */
