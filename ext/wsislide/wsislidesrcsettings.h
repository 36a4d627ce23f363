/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsislidesrcsettings.h: the enumeration of wsislidesrc's slide-order
 * setting and its GType, for the element, its parts (gstwsislidesrcpriv.h)
 * and applications; the GType is defined in gstwsislidesrc.c. Header only,
 * no cost, no state.
 */

#ifndef __WSI_SLIDE_SRC_SETTINGS_H__
#define __WSI_SLIDE_SRC_SETTINGS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/**
 * GstWsiSlideOrder:
 * @GST_WSI_SLIDE_ORDER_SEQUENTIAL: the rank's slides in sorted path order
 * @GST_WSI_SLIDE_ORDER_RANDOM: the rank's slides reshuffled every cycle
 */
typedef enum
{
  GST_WSI_SLIDE_ORDER_SEQUENTIAL,
  GST_WSI_SLIDE_ORDER_RANDOM
} GstWsiSlideOrder;

#define GST_TYPE_WSI_SLIDE_ORDER (gst_wsi_slide_order_get_type ())
GType gst_wsi_slide_order_get_type (void);

G_END_DECLS

#endif /* __WSI_SLIDE_SRC_SETTINGS_H__ */
