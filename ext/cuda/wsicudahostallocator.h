/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsicudahostallocator.h: page-locked (pinned) host memory from
 * cuMemAllocHost, so host→device copies are real asynchronous DMA.
 * libgstcuda 1.22 has no host allocator of its own. */

#ifndef __WSI_CUDA_HOST_ALLOCATOR_H__
#define __WSI_CUDA_HOST_ALLOCATOR_H__

#include <gst/gst.h>
#include <gst/cuda/gstcudacontext.h>

G_BEGIN_DECLS

#define WSI_CUDA_HOST_MEMORY_TYPE "WsiCudaHostMemory"

#define WSI_TYPE_CUDA_HOST_ALLOCATOR (wsi_cuda_host_allocator_get_type ())
G_DECLARE_FINAL_TYPE (WsiCudaHostAllocator, wsi_cuda_host_allocator,
    WSI, CUDA_HOST_ALLOCATOR, GstAllocator)

GstAllocator *wsi_cuda_host_allocator_new (GstCudaContext * context);

gboolean wsi_is_cuda_host_memory (GstMemory * mem);

G_END_DECLS

#endif /* __WSI_CUDA_HOST_ALLOCATOR_H__ */
