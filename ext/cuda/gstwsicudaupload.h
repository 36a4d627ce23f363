/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * gstwsicudaupload.h: the wsicudaupload element's type (GstWsiCudaUpload)
 * and its registration, for the cuda plugin's plugin_init.
 *
 * Contract: what the element does — pads and caps, properties (units,
 * ranges, when each takes effect), messages, events and a gst-launch example
 * — is its documentation block in gstwsicudaupload.c and its property
 * blurbs, as gst-inspect-1.0 shows them; nothing else of the element is
 * public (its instance lives in its .c or a private header). Cost and
 * threading are said there too: properties may be set from any thread.
 */

#ifndef __GST_WSI_CUDA_UPLOAD_H__
#define __GST_WSI_CUDA_UPLOAD_H__

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

#define GST_TYPE_WSI_CUDA_UPLOAD (gst_wsi_cuda_upload_get_type ())
G_DECLARE_FINAL_TYPE (GstWsiCudaUpload, gst_wsi_cuda_upload,
    GST, WSI_CUDA_UPLOAD, GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (wsicudaupload);

G_END_DECLS

#endif /* __GST_WSI_CUDA_UPLOAD_H__ */
