/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#ifndef __GST_TISSUE_MASK_H__
#define __GST_TISSUE_MASK_H__

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

#define GST_TYPE_TISSUE_MASK (gst_tissue_mask_get_type ())
G_DECLARE_FINAL_TYPE (GstTissueMask, gst_tissue_mask, GST, TISSUE_MASK,
    GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (tissuemask);

G_END_DECLS

#endif /* __GST_TISSUE_MASK_H__ */
