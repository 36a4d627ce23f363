/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#ifndef __GST_STAIN_ESTIMATE_H__
#define __GST_STAIN_ESTIMATE_H__

#include <gst/gst.h>
#include <gst/wsi/wsipoolelement.h>

G_BEGIN_DECLS

#define GST_TYPE_STAIN_ESTIMATE (gst_stain_estimate_get_type ())
G_DECLARE_FINAL_TYPE (GstStainEstimate, gst_stain_estimate,
    GST, STAIN_ESTIMATE, WsiPoolElement);

GST_ELEMENT_REGISTER_DECLARE (stainestimate);

G_END_DECLS

#endif /* __GST_STAIN_ESTIMATE_H__ */
