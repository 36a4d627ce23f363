/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsicudahostallocator.c: GstAllocator over cuMemAllocHost/cuMemFreeHost.
 * Memory maps like system memory (it is host memory); what makes it
 * special is that the driver can DMA from it without a staging copy. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/cuda-gst.h>
#include "wsicudahostallocator.h"

GST_DEBUG_CATEGORY_STATIC (wsi_cuda_host_allocator_debug);
#define GST_CAT_DEFAULT wsi_cuda_host_allocator_debug

struct _WsiCudaHostAllocator
{
  GstAllocator parent;
  GstCudaContext *context;      /* the context the pinned pages belong to */
};

typedef struct
{
  GstMemory mem;
  guint8 *data;                 /* start of the whole block (maxsize) */
} WsiCudaHostMemory;

G_DEFINE_TYPE_WITH_CODE (WsiCudaHostAllocator, wsi_cuda_host_allocator,
    GST_TYPE_ALLOCATOR,
    GST_DEBUG_CATEGORY_INIT (wsi_cuda_host_allocator_debug,
        "wsicudahostallocator", 0, "pinned host memory for CUDA uploads"));

static GstMemory *
host_alloc (GstAllocator * allocator, gsize size, GstAllocationParams * params)
{
  WsiCudaHostAllocator *self = WSI_CUDA_HOST_ALLOCATOR (allocator);
  gsize maxsize = size + params->prefix + params->padding;
  WsiCudaHostMemory *mem;
  void *data = NULL;
  CUresult res;

  /* cuMemAllocHost returns page-aligned blocks: any GStreamer alignment
   * (a mask below the page size) is already met */
  if (maxsize > G_MAXUINT || params->align >= 4096) {
    GST_ERROR_OBJECT (self, "cannot pin %" G_GSIZE_FORMAT " bytes aligned to %"
        G_GSIZE_FORMAT, maxsize, params->align + 1);
    return NULL;
  }
  if (!gst_cuda_context_push (self->context))
    return NULL;
  res = CuMemAllocHost (&data, (unsigned int) maxsize);
  gst_cuda_context_pop (NULL);
  if (res != CUDA_SUCCESS || data == NULL) {
    GST_ERROR_OBJECT (self, "cuMemAllocHost(%" G_GSIZE_FORMAT ") failed: %d",
        maxsize, res);
    return NULL;
  }

  mem = g_new0 (WsiCudaHostMemory, 1);
  gst_memory_init (GST_MEMORY_CAST (mem), params->flags, allocator, NULL,
      maxsize, params->align, params->prefix, size);
  mem->data = data;
  GST_LOG_OBJECT (self, "pinned %" G_GSIZE_FORMAT " bytes at %p", maxsize,
      data);
  return GST_MEMORY_CAST (mem);
}

static void
host_free (GstAllocator * allocator, GstMemory * memory)
{
  WsiCudaHostAllocator *self = WSI_CUDA_HOST_ALLOCATOR (allocator);
  WsiCudaHostMemory *mem = (WsiCudaHostMemory *) memory;

  /* shared sub-memories point into their parent's block */
  if (memory->parent == NULL && gst_cuda_context_push (self->context)) {
    CuMemFreeHost (mem->data);
    gst_cuda_context_pop (NULL);
  }
  g_free (mem);
}

static gpointer
host_mem_map (GstMemory * memory, gsize maxsize, GstMapFlags flags)
{
  return ((WsiCudaHostMemory *) memory)->data;
}

static void
host_mem_unmap (GstMemory * memory)
{
}

static GstMemory *
host_mem_share (GstMemory * memory, gssize offset, gssize size)
{
  WsiCudaHostMemory *mem = (WsiCudaHostMemory *) memory;
  GstMemory *parent = memory->parent ? memory->parent : memory;
  WsiCudaHostMemory *sub;

  if (size == -1)
    size = memory->size - offset;
  sub = g_new0 (WsiCudaHostMemory, 1);
  gst_memory_init (GST_MEMORY_CAST (sub),
      GST_MINI_OBJECT_FLAGS (parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY,
      memory->allocator, parent, memory->maxsize, memory->align,
      memory->offset + offset, size);
  sub->data = mem->data;
  return GST_MEMORY_CAST (sub);
}

static void
wsi_cuda_host_allocator_finalize (GObject * object)
{
  WsiCudaHostAllocator *self = WSI_CUDA_HOST_ALLOCATOR (object);

  gst_clear_object (&self->context);
  G_OBJECT_CLASS (wsi_cuda_host_allocator_parent_class)->finalize (object);
}

static void
wsi_cuda_host_allocator_class_init (WsiCudaHostAllocatorClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstAllocatorClass *allocator_class = GST_ALLOCATOR_CLASS (klass);

  gobject_class->finalize = wsi_cuda_host_allocator_finalize;
  allocator_class->alloc = host_alloc;
  allocator_class->free = host_free;
}

static void
wsi_cuda_host_allocator_init (WsiCudaHostAllocator * self)
{
  GstAllocator *allocator = GST_ALLOCATOR_CAST (self);

  allocator->mem_type = WSI_CUDA_HOST_MEMORY_TYPE;
  allocator->mem_map = host_mem_map;
  allocator->mem_unmap = host_mem_unmap;
  allocator->mem_share = host_mem_share;
  /* gst_allocator_alloc() must call our alloc, not the sysmem default */
  GST_OBJECT_FLAG_SET (self, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

/**
 * wsi_cuda_host_allocator_new:
 * @context: the #GstCudaContext the pinned memory is registered with
 *
 * Returns: (transfer full): a new allocator of pinned host memory
 */
GstAllocator *
wsi_cuda_host_allocator_new (GstCudaContext * context)
{
  WsiCudaHostAllocator *self;

  g_return_val_if_fail (GST_IS_CUDA_CONTEXT (context), NULL);
  self = g_object_new (WSI_TYPE_CUDA_HOST_ALLOCATOR, NULL);
  gst_object_ref_sink (self);
  self->context = gst_object_ref (context);
  return GST_ALLOCATOR_CAST (self);
}

gboolean
wsi_is_cuda_host_memory (GstMemory * mem)
{
  return mem != NULL && gst_memory_is_type (mem, WSI_CUDA_HOST_MEMORY_TYPE);
}
