/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsitoplevel.c: see wsitoplevel.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsitoplevel.h"

GstElement *
wsi_element_get_top_level (GstElement * element)
{
  GstObject *top;
  GstObject *parent;

  g_return_val_if_fail (GST_IS_ELEMENT (element), NULL);

  top = gst_object_ref (GST_OBJECT (element));
  while ((parent = gst_object_get_parent (top)) != NULL) {
    gst_object_unref (top);
    top = parent;
  }
  return GST_ELEMENT (top);
}
