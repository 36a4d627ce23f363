/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* gstwsibackend.c: see gstwsibackend.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwsibackend.h"
#include "wsislide.h"

#include <gst/wsi/wsienumtype.h>

/* Indexed by GstWsiBackend. */
static const gchar *const backend_names[] = {
  WSI_BACKEND_AUTO, WSI_BACKEND_OPENSLIDE, WSI_BACKEND_TIFF, WSI_BACKEND_DICOM
};

GType
gst_wsi_backend_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_WSI_BACKEND_AUTO, "The DICOM reader for DICOM files, the direct "
          "TIFF/JPEG reader for every slide it supports, OpenSlide for the "
          "rest", "auto"},
    {GST_WSI_BACKEND_OPENSLIDE, "OpenSlide for every slide", "openslide"},
    {GST_WSI_BACKEND_TIFF, "The direct TIFF/JPEG reader only (other slides "
          "fail to read, with a warning)", "tiff"},
    {GST_WSI_BACKEND_DICOM, "The DICOM WSI reader only (other slides fail "
          "to read, with a warning)", "dicom"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type, "GstWsiBackend", values);
}

const gchar *
gst_wsi_backend_name (GstWsiBackend backend)
{
  g_return_val_if_fail (backend < G_N_ELEMENTS (backend_names),
      WSI_BACKEND_AUTO);
  return backend_names[backend];
}
