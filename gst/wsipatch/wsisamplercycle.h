/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsisamplercycle.h: patchsampler's bookkeeping per cycle over the slides:
 * a skipped slide is warned about once per stream (not on every cycle), a
 * whole cycle that delivered no patch is an error naming the slides and
 * why (from the delivery tally, wsidelivery.h), a cycle the tally forgot
 * is warned about, and a stream that ends without a single patch is an
 * error (patch_sampler_check_stream_end(), at EOS).
 *
 * Contract: patch_sampler_check_cycle() is called per slide visit before
 * planning; it returns FALSE after posting the error when the last cycle
 * was lost.
 *
 * Cost: a hash lookup per skipped slide; the tally is a fixed ring.
 *
 * Threading: the streaming thread; the delivery tally has its own lock.
 */

#ifndef __WSI_SAMPLER_CYCLE_H__
#define __WSI_SAMPLER_CYCLE_H__

#include "gstpatchsamplerpriv.h"

G_BEGIN_DECLS

gboolean patch_sampler_first_warning (GstPatchSampler * self, guint index);
void patch_sampler_skip (GstPatchSampler * self, const WsiSlideVisit * visit, gchar * reason);
void patch_sampler_cycle_lost (GstPatchSampler * self, guint cycle);
void patch_sampler_warn_forgotten (GstPatchSampler * self, guint cycle);
gboolean patch_sampler_check_cycle (GstPatchSampler * self, const WsiSlideVisit * visit);
void patch_sampler_check_stream_end (GstPatchSampler * self);

G_END_DECLS

#endif /* __WSI_SAMPLER_CYCLE_H__ */
