/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * gstpatchstoresink.h: the patchstoresink element's type (GstPatchStoreSink)
 * and its registration, for the wsistore plugin's plugin_init.
 *
 * Contract: what the element does — pads and caps, properties (units,
 * ranges, when each takes effect), messages, events and a gst-launch example
 * — is its documentation block in gstpatchstoresink.c and its property
 * blurbs, as gst-inspect-1.0 shows them; nothing else of the element is
 * public (its instance lives in its .c or a private header). Cost and
 * threading are said there too: properties may be set from any thread.
 */

#ifndef __GST_PATCH_STORE_SINK_H__
#define __GST_PATCH_STORE_SINK_H__

#include <gst/gst.h>
#include <gst/base/gstbasesink.h>

G_BEGIN_DECLS

#define GST_TYPE_PATCH_STORE_SINK (gst_patch_store_sink_get_type ())
G_DECLARE_FINAL_TYPE (GstPatchStoreSink, gst_patch_store_sink,
    GST, PATCH_STORE_SINK, GstBaseSink);

GST_ELEMENT_REGISTER_DECLARE (patchstoresink);

G_END_DECLS

#endif /* __GST_PATCH_STORE_SINK_H__ */
