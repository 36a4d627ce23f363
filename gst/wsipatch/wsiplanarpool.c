/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#include "wsiplanarpool.h"

struct _WsiPlanarPool
{
  GstBufferPool parent;

  gsize *sizes;
  guint n_planes;
  GstAllocator *allocator;      /* from the config; NULL = system memory */
  GstAllocationParams params;
};

G_DEFINE_TYPE (WsiPlanarPool, wsi_planar_pool, GST_TYPE_BUFFER_POOL);

static gboolean
wsi_planar_pool_set_config (GstBufferPool * pool, GstStructure * config)
{
  WsiPlanarPool *self = WSI_PLANAR_POOL (pool);
  GstAllocator *allocator = NULL;
  GstAllocationParams params;

  if (!gst_buffer_pool_config_get_allocator (config, &allocator, &params))
    return FALSE;
  gst_object_replace ((GstObject **) & self->allocator,
      (GstObject *) allocator);
  self->params = params;
  return GST_BUFFER_POOL_CLASS (wsi_planar_pool_parent_class)->set_config
      (pool, config);
}

static GstFlowReturn
wsi_planar_pool_alloc_buffer (GstBufferPool * pool, GstBuffer ** buffer,
    GstBufferPoolAcquireParams * acquire_params)
{
  WsiPlanarPool *self = WSI_PLANAR_POOL (pool);
  GstBuffer *buf = gst_buffer_new ();
  guint i;

  for (i = 0; i < self->n_planes; i++) {
    GstMemory *mem = gst_allocator_alloc (self->allocator, self->sizes[i],
        &self->params);

    if (mem == NULL) {
      gst_buffer_unref (buf);
      return GST_FLOW_ERROR;
    }
    gst_buffer_append_memory (buf, mem);
  }
  *buffer = buf;
  return GST_FLOW_OK;
}

static void
wsi_planar_pool_finalize (GObject * object)
{
  WsiPlanarPool *self = WSI_PLANAR_POOL (object);

  g_free (self->sizes);
  gst_clear_object (&self->allocator);
  G_OBJECT_CLASS (wsi_planar_pool_parent_class)->finalize (object);
}

static void
wsi_planar_pool_class_init (WsiPlanarPoolClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstBufferPoolClass *pool_class = GST_BUFFER_POOL_CLASS (klass);

  gobject_class->finalize = wsi_planar_pool_finalize;
  pool_class->set_config = wsi_planar_pool_set_config;
  pool_class->alloc_buffer = wsi_planar_pool_alloc_buffer;
}

static void
wsi_planar_pool_init (WsiPlanarPool * self)
{
  gst_allocation_params_init (&self->params);
}

GstBufferPool *
wsi_planar_pool_new (const gsize * sizes, guint n_planes)
{
  WsiPlanarPool *self = g_object_new (WSI_TYPE_PLANAR_POOL, NULL);

  gst_object_ref_sink (self);
  self->sizes = g_memdup2 (sizes, n_planes * sizeof (gsize));
  self->n_planes = n_planes;
  return GST_BUFFER_POOL (self);
}
