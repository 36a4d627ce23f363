/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * gstpatchviews.h: the patchviews element's type (GstPatchViews) and its
 * registration, for the wsislide plugin's plugin_init.
 *
 * Contract: what the element does — pads and caps, properties (units,
 * ranges, when each takes effect), messages, events and a gst-launch example
 * — is its documentation block in gstpatchviews.c and its property blurbs,
 * as gst-inspect-1.0 shows them; nothing else of the element is public (its
 * instance lives in its .c or a private header). Cost and threading are said
 * there too: properties may be set from any thread.
 */

#ifndef __GST_PATCH_VIEWS_H__
#define __GST_PATCH_VIEWS_H__

#include <gst/gst.h>
#include <gst/wsi/wsipoolelement.h>

G_BEGIN_DECLS

#define GST_TYPE_PATCH_VIEWS (gst_patch_views_get_type ())
G_DECLARE_FINAL_TYPE (GstPatchViews, gst_patch_views, GST, PATCH_VIEWS,
    WsiPoolElement);

GST_ELEMENT_REGISTER_DECLARE (patchviews);

G_END_DECLS

#endif /* __GST_PATCH_VIEWS_H__ */
