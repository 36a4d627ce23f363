/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * gstwsibackend.h: the `backend` property's enum, once, for the elements
 * that read slides (patchreader, and patchviews for its context views).
 *
 * Contract: GST_TYPE_WSI_BACKEND is a GEnum ("auto", "openslide", "tiff",
 * "dicom");
 * gst_wsi_backend_name() gives the read layer's name of a value
 * (WSI_BACKEND_* in read/wsislide.h). Cost: none after the first call.
 * Threading: any thread.
 */

#ifndef __GST_WSI_BACKEND_H__
#define __GST_WSI_BACKEND_H__

#include <gst/gst.h>

G_BEGIN_DECLS

typedef enum
{
  GST_WSI_BACKEND_AUTO,
  GST_WSI_BACKEND_OPENSLIDE,
  GST_WSI_BACKEND_TIFF,
  GST_WSI_BACKEND_DICOM,
} GstWsiBackend;

#define GST_TYPE_WSI_BACKEND (gst_wsi_backend_get_type ())
GType gst_wsi_backend_get_type (void);

/* The read layer's backend name (wsi_slide_open's argument). */
const gchar *gst_wsi_backend_name (GstWsiBackend backend);

G_END_DECLS

#endif /* __GST_WSI_BACKEND_H__ */
