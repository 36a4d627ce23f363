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

#include "wsisamplersettings.h"

G_BEGIN_DECLS

#define GST_TYPE_PATCH_SAMPLER (gst_patch_sampler_get_type ())
G_DECLARE_FINAL_TYPE (GstPatchSampler, gst_patch_sampler, GST, PATCH_SAMPLER,
    GstElement);

GST_ELEMENT_REGISTER_DECLARE (patchsampler);

G_END_DECLS

#endif /* __GST_PATCH_SAMPLER_H__ */
