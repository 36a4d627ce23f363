/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsicudatensor.h: describes a batch buffer (patchbatch's tall frame, in
 * CUDA or system memory) as an NHWC uint8 tensor that PyTorch can wrap
 * without a copy, and hands the caller's current CUDA context (PyTorch's)
 * to a pipeline. Plain C with no GObject-Introspection so that ctypes (see
 * gstwsi_cuda/) can call it. */

#ifndef __WSI_CUDA_TENSOR_H__
#define __WSI_CUDA_TENSOR_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* Public fields first, in this order: gstwsi_cuda mirrors them. */
typedef struct
{
  guint64 data;                 /* device pointer, or host address */
  gint32 is_cuda;               /* 1: data is a CUdeviceptr */
  gint32 device_id;             /* CUDA ordinal, -1 for host memory */
  gint64 shape[4];              /* N (patches), H, W, C (bytes per pixel) */
  gint64 strides[4];            /* in bytes */
  gpointer priv;                /* the buffer, kept mapped and alive */
} WsiTensor;

WsiTensor *wsi_tensor_new (GstBuffer * buffer, const GstCaps * caps,
    guint patch_height, const gchar ** error);

void wsi_tensor_free (WsiTensor * tensor);

const gchar *wsi_cuda_share_current_context (GstElement * element);

G_END_DECLS

#endif /* __WSI_CUDA_TENSOR_H__ */
