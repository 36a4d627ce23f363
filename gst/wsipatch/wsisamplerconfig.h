/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsisamplerconfig.h: patchsampler's settings as values: the checks a
 * value gets when it is set (the resolution lists target-mpps and
 * mpp-weights parsed and written back, numbers that must be > 0, NaN),
 * the snapshot of the settings one slide is planned with, the checks of
 * settings that are valid one by one but not together, and the warnings,
 * once per stream, about settings that have no effect (patches-per-slide
 * -1 outside grid mode, annotation settings with annotation-mode off).
 *
 * Contract: a refused value keeps the previous one and is recorded
 * (wsirefusal.h): the element refuses to start, and while it runs a
 * warning says the value was not taken. The snapshot holds a reference to
 * the class plan (wsi_class_plan_unref() it); FALSE from it means an error
 * was posted and the slide must not be planned.
 *
 * Cost: a list set parses at most MAX_MPPS numbers; a snapshot is a struct
 * copy and a few comparisons.
 *
 * Threading: the setters and patch_sampler_format_mpp_list()'s caller hold
 * the object lock; the snapshot takes it, on the streaming thread.
 */

#ifndef __WSI_SAMPLER_CONFIG_H__
#define __WSI_SAMPLER_CONFIG_H__

#include "gstpatchsamplerpriv.h"

G_BEGIN_DECLS

void patch_sampler_refuse_value (GstPatchSampler * self,
    const gchar * property, const gchar * value, const gchar * accepted);
void patch_sampler_refuse_number (GstPatchSampler * self,
    const gchar * property, gdouble value, const gchar * accepted);
/* "0.25,0.5,1,2" into @values (at most MAX_MPPS, each > 0); @may_be_empty:
 * "" is taken as no values. */
void patch_sampler_set_mpp_list (GstPatchSampler * self, const gchar * name,
    const gchar * text, gdouble * values, guint * n_values,
    gboolean may_be_empty);
/* The list as the user would write it back. */
gchar *patch_sampler_format_mpp_list (const gdouble * values, guint n);
/* A double that must be > 0 (the range check lets NaN through). */
void patch_sampler_set_positive (GstPatchSampler * self, const gchar * name,
    gdouble value, gdouble * field);

gboolean patch_sampler_settings_snapshot (GstPatchSampler * self,
    GstPatchSamplerSettings * settings);

G_END_DECLS

#endif /* __WSI_SAMPLER_CONFIG_H__ */
