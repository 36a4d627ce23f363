/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * gstpatchfilter.h: the patchfilter element's type (GstPatchFilter) and its
 * registration, for the wsipatch plugin's plugin_init.
 *
 * Contract: what the element does — pads and caps, properties (units,
 * ranges, when each takes effect), messages, events and a gst-launch example
 * — is its documentation block in gstpatchfilter.c and its property blurbs,
 * as gst-inspect-1.0 shows them; nothing else of the element is public (its
 * instance lives in its .c or a private header). Cost and threading are said
 * there too: properties may be set from any thread.
 */

#ifndef __GST_PATCH_FILTER_H__
#define __GST_PATCH_FILTER_H__

#include <gst/gst.h>
#include <gst/wsi/wsipoolelement.h>

G_BEGIN_DECLS

#define GST_TYPE_PATCH_FILTER (gst_patch_filter_get_type ())
G_DECLARE_FINAL_TYPE (GstPatchFilter, gst_patch_filter,
    GST, PATCH_FILTER, WsiPoolElement);

GST_ELEMENT_REGISTER_DECLARE (patchfilter);

G_END_DECLS

#endif /* __GST_PATCH_FILTER_H__ */
