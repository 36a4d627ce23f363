/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsijson.h: writes a GstStructure as a JSON object (no json-glib needed).
 *
 * Fields become members in order; nested GstStructures become objects,
 * GstValueArray/GstValueList become arrays, numbers and booleans stay what
 * they are, non-finite doubles become null, anything else is written as its
 * GStreamer serialization in a string. The structure name is not written.
 */

#ifndef __WSI_JSON_H__
#define __WSI_JSON_H__

#include <gst/gst.h>

G_BEGIN_DECLS

void wsi_json_append_string (GString * out, const gchar * text);
void wsi_json_append_structure (GString * out, const GstStructure * s);

G_END_DECLS

#endif /* __WSI_JSON_H__ */
