/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#ifndef __GST_WSI_STATS_H__
#define __GST_WSI_STATS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_WSI_STATS (gst_wsi_stats_get_type ())
G_DECLARE_FINAL_TYPE (GstWsiStats, gst_wsi_stats, GST, WSI_STATS, GstTracer)

G_END_DECLS

#endif /* __GST_WSI_STATS_H__ */
