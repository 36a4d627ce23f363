/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#ifndef __GST_WSI_SLIDE_SRC_H__
#define __GST_WSI_SLIDE_SRC_H__

#include <gst/gst.h>
#include <gst/base/gstpushsrc.h>

#include "wsislidesrcsettings.h"

G_BEGIN_DECLS

#define GST_TYPE_WSI_SLIDE_SRC (gst_wsi_slide_src_get_type ())
G_DECLARE_FINAL_TYPE (GstWsiSlideSrc, gst_wsi_slide_src, GST, WSI_SLIDE_SRC,
    GstPushSrc);

GST_ELEMENT_REGISTER_DECLARE (wsislidesrc);

G_END_DECLS

#endif /* __GST_WSI_SLIDE_SRC_H__ */
