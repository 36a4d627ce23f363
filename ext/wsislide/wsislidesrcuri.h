/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsislidesrcuri.h: wsislidesrc as the source of `wsi://` URIs
 * (GstURIHandler), so that playbin, uridecodebin and
 * gst_element_make_from_uri() find it.
 *
 * Contract: wsi_slide_src_uri_handler_init() fills the interface of a
 * source (GST_URI_SRC) for the protocol "wsi". Setting
 * `wsi:///path?property=value&...` sets location to the path (unescaped)
 * and then each query parameter as the property of that name, from its
 * text (gst_util_set_object_arg(): a name the element does not have, or
 * a value that does not parse, is passed over); a URI of another scheme,
 * or one that names no path, is refused with GST_URI_ERROR_BAD_URI naming
 * it.
 * Getting the URI gives `wsi://` and the location, escaped as a path;
 * NULL while no location is set.
 *
 * Cost: one parse per set. Threading: any thread; location is read under
 * the element's lock, and set through its property (which takes it).
 */

#ifndef __WSI_SLIDE_SRC_URI_H__
#define __WSI_SLIDE_SRC_URI_H__

#include "gstwsislidesrcpriv.h"

G_BEGIN_DECLS

void wsi_slide_src_uri_handler_init (gpointer g_iface, gpointer iface_data);

G_END_DECLS

#endif /* __WSI_SLIDE_SRC_URI_H__ */
