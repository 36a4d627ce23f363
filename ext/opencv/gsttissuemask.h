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

/**
 * GstTissueMaskMethod:
 * @GST_TISSUE_MASK_METHOD_OTSU: Otsu threshold on the HSV saturation channel
 * @GST_TISSUE_MASK_METHOD_HSV: fixed saturation and value thresholds
 * @GST_TISSUE_MASK_METHOD_CLAM: CLAM's segment_tissue (saturation, median
 *   blur, threshold, closing, small components dropped, small holes filled)
 * @GST_TISSUE_MASK_METHOD_NONE: every overview pixel is tissue
 * @GST_TISSUE_MASK_METHOD_FLUORESCENCE: dark-background fluorescence: Otsu
 *   threshold on the HSV value channel (never below value-floor), then
 *   closing
 * @GST_TISSUE_MASK_METHOD_COMBINED: logical AND of otsu, hsv and clam, each
 *   with its own parameters (the peer's CombinedTissueDetector)
 *
 * How tissuemask separates tissue from the background (bright glass for
 * brightfield stains, black for fluorescence).
 */
typedef enum
{
  GST_TISSUE_MASK_METHOD_OTSU,
  GST_TISSUE_MASK_METHOD_HSV,
  GST_TISSUE_MASK_METHOD_CLAM,
  GST_TISSUE_MASK_METHOD_NONE,
  GST_TISSUE_MASK_METHOD_FLUORESCENCE,
  GST_TISSUE_MASK_METHOD_COMBINED,
} GstTissueMaskMethod;

/**
 * GstTissueMaskOtsuChannel:
 * @GST_TISSUE_MASK_OTSU_SATURATION: HSV saturation, tissue above the
 *   threshold (never below 15)
 * @GST_TISSUE_MASK_OTSU_GRAY: grey level, tissue at or below the threshold
 *   (darker than glass), as the Python peer's OtsuTissueDetector
 *
 * The channel method otsu thresholds.
 */
typedef enum
{
  GST_TISSUE_MASK_OTSU_SATURATION,
  GST_TISSUE_MASK_OTSU_GRAY,
} GstTissueMaskOtsuChannel;

#define GST_TYPE_TISSUE_MASK_OTSU_CHANNEL \
  (gst_tissue_mask_otsu_channel_get_type ())
GType gst_tissue_mask_otsu_channel_get_type (void);

#define GST_TYPE_TISSUE_MASK_METHOD (gst_tissue_mask_method_get_type ())
GType gst_tissue_mask_method_get_type (void);

#define GST_TYPE_TISSUE_MASK (gst_tissue_mask_get_type ())
G_DECLARE_FINAL_TYPE (GstTissueMask, gst_tissue_mask, GST, TISSUE_MASK,
    GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (tissuemask);

G_END_DECLS

#endif /* __GST_TISSUE_MASK_H__ */
