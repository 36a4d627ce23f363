/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * gstwsistoreelements.h: what every element of the wsistore plugin needs set up
 * once before it is registered (as gst-plugins-good's rtp_element_init):
 * the custom metas of wsirecord.h.
 *
 * Contract: each element's GST_ELEMENT_REGISTER_DEFINE_WITH_CODE calls
 * wsistore_element_init(); the first call does the work, later ones nothing
 * (g_once). Each element makes its own debug category. Threading: any
 * thread.
 */

#ifndef __GST_WSISTORE_ELEMENTS_H__
#define __GST_WSISTORE_ELEMENTS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

void wsistore_element_init (GstPlugin * plugin);

G_END_DECLS

#endif
