/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsicudatensor.c: zero-copy tensor views of batch buffers, and sharing
 * the application's CUDA context with GStreamer. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/video/video.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>

#include "wsicudatensor.h"
#include "wsicudadriver.h"

typedef struct
{
  GstBuffer *buffer;
  GstMemory *memory;
  GstMapInfo map;
} WsiTensorPriv;

/* 8-bit packed RGB(A/x): the only layouts patchbatch makes */
static gboolean
is_packed_8bit (const GstVideoInfo * info)
{
  return GST_VIDEO_INFO_N_PLANES (info) == 1
      && GST_VIDEO_INFO_COMP_DEPTH (info, 0) == 8
      && GST_VIDEO_INFO_IS_RGB (info);
}

/* Row pitch and offset of the data in @mem as the producer laid it out. */
static gboolean
find_layout (GstBuffer * buffer, GstMemory * mem, const GstVideoInfo * info,
    gint64 * pitch, gsize * offset)
{
  GstVideoMeta *vmeta;

  if (gst_is_cuda_memory (mem)) {
    *pitch = GST_VIDEO_INFO_PLANE_STRIDE (&GST_CUDA_MEMORY_CAST (mem)->info, 0);
    *offset = 0;
    return TRUE;
  }
  vmeta = gst_buffer_get_video_meta (buffer);
  *pitch = vmeta ? vmeta->stride[0] : GST_VIDEO_INFO_PLANE_STRIDE (info, 0);
  *offset = vmeta ? vmeta->offset[0] : GST_VIDEO_INFO_PLANE_OFFSET (info, 0);
  return *pitch > 0;
}

/**
 * wsi_tensor_new:
 * @buffer: a batch: one memory, CUDA or system
 * @caps: its caps (video/x-raw, 8-bit packed RGB formats)
 * @patch_height: rows per patch; 0 means square patches (= width)
 * @error: (out) (optional): why it failed; static string
 *
 * Keeps @buffer alive and mapped (CUDA maps give the device pointer) until
 * wsi_tensor_free(). Data is read-only: the buffer may be shared.
 *
 * Returns: (nullable): the tensor, or NULL with @error set
 */
WsiTensor *
wsi_tensor_new (GstBuffer * buffer, const GstCaps * caps, guint patch_height,
    const gchar ** error)
{
  const gchar *dummy;
  GstVideoInfo info;
  GstMemory *mem;
  WsiTensorPriv *priv;
  WsiTensor *tensor;
  gint64 pitch, rows;
  gsize offset;
  gboolean cuda;
  gint device_id = -1;

  error = error ? error : &dummy;
  if (!GST_IS_BUFFER (buffer) || !GST_IS_CAPS (caps)
      || !gst_video_info_from_caps (&info, caps) || !is_packed_8bit (&info)) {
    *error = "not a batch: need a buffer and 8-bit packed RGB video caps";
    return NULL;
  }
  rows = patch_height ? (gint64) patch_height
      : (gint64) GST_VIDEO_INFO_WIDTH (&info);
  if (GST_VIDEO_INFO_HEIGHT (&info) % rows != 0) {
    *error = "frame height is not a whole number of patches";
    return NULL;
  }
  if (gst_buffer_n_memory (buffer) != 1) {
    *error = "batch spans several memories: a view would need a copy";
    return NULL;
  }
  mem = gst_buffer_peek_memory (buffer, 0);
  cuda = gst_is_cuda_memory (mem);
  if (!find_layout (buffer, mem, &info, &pitch, &offset)) {
    *error = "cannot tell the row pitch of the batch";
    return NULL;
  }
  if (cuda)
    g_object_get (GST_CUDA_MEMORY_CAST (mem)->context, "cuda-device-id",
        &device_id, NULL);

  priv = g_new0 (WsiTensorPriv, 1);
  priv->buffer = gst_buffer_ref (buffer);
  priv->memory = gst_memory_ref (mem);
  if (!gst_memory_map (mem, &priv->map,
          cuda ? GST_MAP_READ | GST_MAP_CUDA : GST_MAP_READ)) {
    gst_memory_unref (priv->memory);
    gst_buffer_unref (priv->buffer);
    g_free (priv);
    *error = "cannot map the batch";
    return NULL;
  }

  tensor = g_new0 (WsiTensor, 1);
  tensor->priv = priv;
  tensor->data = (guint64) (guintptr) priv->map.data + offset;
  tensor->is_cuda = cuda;
  tensor->device_id = device_id;
  tensor->shape[0] = GST_VIDEO_INFO_HEIGHT (&info) / rows;
  tensor->shape[1] = rows;
  tensor->shape[2] = GST_VIDEO_INFO_WIDTH (&info);
  tensor->shape[3] = GST_VIDEO_INFO_COMP_PSTRIDE (&info, 0);
  tensor->strides[0] = pitch * rows;
  tensor->strides[1] = pitch;
  tensor->strides[2] = tensor->shape[3];
  tensor->strides[3] = 1;
  *error = NULL;
  return tensor;
}

void
wsi_tensor_free (WsiTensor * tensor)
{
  WsiTensorPriv *priv;

  if (tensor == NULL)
    return;
  priv = tensor->priv;
  gst_memory_unmap (priv->memory, &priv->map);
  gst_memory_unref (priv->memory);
  gst_buffer_unref (priv->buffer);
  g_free (priv);
  g_free (tensor);
}

/**
 * wsi_cuda_share_current_context:
 * @element: the pipeline (or any element) that should use the context
 *
 * Wraps the CUDA context current on the calling thread (PyTorch's primary
 * context once torch.cuda is initialised) in a #GstCudaContext and sets it
 * on @element, so CUDA elements answer their need-context query with it
 * instead of creating a second context.
 *
 * Returns: NULL on success, else why not (static string)
 */
const gchar *
wsi_cuda_share_current_context (GstElement * element)
{
  const WsiCudaDriver *driver;
  GstCudaContext *cuda_context;
  GstContext *context;
  CUcontext current = NULL;
  CUdevice device;

  if (!GST_IS_ELEMENT (element))
    return "not an element";
  if (!gst_cuda_load_library () || (driver = wsi_cuda_driver_get ()) == NULL)
    return "no CUDA driver (libcuda.so.1) on this machine";
  if (driver->CtxGetCurrent (&current) != CUDA_SUCCESS || current == NULL)
    return "no CUDA context is current on this thread (initialise torch.cuda first)";
  if (driver->CtxGetDevice (&device) != CUDA_SUCCESS)
    return "cannot tell the device of the current CUDA context";

  cuda_context = gst_cuda_context_new_wrapped (current, device);
  if (cuda_context == NULL)
    return "libgstcuda refused to wrap the current CUDA context";
  context = gst_context_new_cuda_context (cuda_context);
  gst_element_set_context (element, context);
  gst_context_unref (context);
  gst_object_unref (cuda_context);
  return NULL;
}
