/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsibatchalloc.c: see wsibatchalloc.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsibatchalloc.h"
#include "wsiplanarpool.h"

#define GST_CAT_DEFAULT gst_patch_batch_debug

/* ---- output memory ----------------------------------------------------- */

static gboolean
configure_pool (GstBufferPool * pool, GstCaps * caps, guint size,
    guint min, guint max, GstAllocator * allocator,
    const GstAllocationParams * params)
{
  GstStructure *config = gst_buffer_pool_get_config (pool);

  gst_buffer_pool_config_set_params (config, caps, size, min, max);
  gst_buffer_pool_config_set_allocator (config, allocator, params);
  if (gst_buffer_pool_set_config (pool, config))
    return TRUE;

  /* the pool may have adjusted the config: accept it if it still fits */
  config = gst_buffer_pool_get_config (pool);
  if (!gst_buffer_pool_config_validate_params (config, caps, size, min, max)) {
    gst_structure_free (config);
    return FALSE;
  }
  return gst_buffer_pool_set_config (pool, config);
}

void
patch_batch_replace_pool (GstPatchBatch * self, GstBufferPool * pool, GstCaps * caps)
{
  GstBufferPool *old;

  GST_OBJECT_LOCK (self);
  old = self->pool;
  self->pool = pool;
  gst_caps_replace (&self->pool_caps, caps);
  GST_OBJECT_UNLOCK (self);

  if (old) {
    gst_buffer_pool_set_active (old, FALSE);
    gst_object_unref (old);
  }
}

static guint
get_max_batches (GstPatchBatch * self)
{
  guint max_batches;

  GST_OBJECT_LOCK (self);
  max_batches = self->max_batches;
  GST_OBJECT_UNLOCK (self);
  return max_batches;
}

/* Multi-view and float batches: a planar pool of ours (one memory per
 * plane) with downstream's allocator, if it names one. */
static GstBufferPool *
planar_pool (GstPatchBatch * self, GstCaps * caps, GstQuery * query)
{
  GstAllocator *allocator = NULL;
  GstAllocationParams params;
  gsize sizes[MAX_VIEWS], total = 0;
  GstBufferPool *pool;
  guint i;
  gboolean ok;

  gst_allocation_params_init (&params);
  if (gst_query_get_n_allocation_params (query) > 0)
    gst_query_parse_nth_allocation_param (query, 0, &allocator, &params);
  for (i = 0; i < self->layout.n_planes; i++) {
    sizes[i] = self->capacity * self->layout.out_bytes[i];
    total += sizes[i];
  }
  pool = wsi_planar_pool_new (sizes, self->layout.n_planes);
  ok = configure_pool (pool, caps, total, 0, get_max_batches (self),
      allocator, &params);
  if (allocator)
    gst_object_unref (allocator);
  if (!ok)
    gst_clear_object (&pool);
  return pool;
}

/* uint8 video batches: downstream's pool and allocator when it offers
 * them (e.g. pinned memory for a GPU upload), else a GstVideoBufferPool of
 * our own. */
static GstBufferPool *
video_pool (GstPatchBatch * self, GstCaps * caps, GstQuery * query,
    gsize batch_bytes)
{
  GstBufferPool *pool = NULL;
  GstAllocator *allocator = NULL;
  GstAllocationParams params;
  guint size = 0, min = 0, max = 0, max_batches = get_max_batches (self);
  GstVideoInfo caps_info;
  gboolean ok;

  /* a video pool wants room for the default (possibly padded) layout */
  if (gst_video_info_from_caps (&caps_info, caps))
    batch_bytes = MAX (batch_bytes, GST_VIDEO_INFO_SIZE (&caps_info));
  gst_allocation_params_init (&params);
  if (gst_query_get_n_allocation_params (query) > 0)
    gst_query_parse_nth_allocation_param (query, 0, &allocator, &params);
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
  if (!gst_query_find_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL)
      && (gsize) GST_VIDEO_INFO_PLANE_STRIDE (&self->layout.in_info, 0) !=
      self->layout.row_bytes)
    GST_WARNING_OBJECT (self, "downstream does not announce GstVideoMeta "
        "support but the tight stride %" G_GSIZE_FORMAT " differs from the "
        "default one: use a patch width that is a multiple of 4",
        self->layout.row_bytes);

  size = MAX (size, batch_bytes);
  /* Bounded memory: downstream's pool gets our bound too, unless its own is
   * tighter (it may need at least its min). */
  if (max_batches > 0 && (max == 0 || max > max_batches))
    max = MAX (max_batches, min);
  ok = pool && configure_pool (pool, caps, size, min, max, allocator, &params);
  if (pool && !ok) {
    GST_INFO_OBJECT (self, "downstream pool refused our config, using ours");
    gst_object_unref (pool);
  }
  if (!ok) {
    pool = gst_video_buffer_pool_new ();
    ok = configure_pool (pool, caps, batch_bytes, 0, max_batches, allocator,
        &params);
  }
  if (allocator)
    gst_object_unref (allocator);
  if (!ok)
    gst_clear_object (&pool);
  return pool;
}

/* Asks downstream about memory for batches with @caps and sets up the
 * pool batches come from. */
gboolean
patch_batch_decide_allocation (GstPatchBatch * self, GstCaps * caps, gsize batch_bytes)
{
  GstQuery *query = gst_query_new_allocation (caps, TRUE);
  GstBufferPool *pool;

  /* let go of the current pool first: downstream may offer it again, and
   * an active pool cannot be reconfigured */
  patch_batch_replace_pool (self, NULL, NULL);
  if (!gst_pad_peer_query (self->srcpad, query))
    GST_DEBUG_OBJECT (self, "downstream did not answer the allocation query");
  pool = wsi_batch_layout_video_output (&self->layout)
      ? video_pool (self, caps, query, batch_bytes)
      : planar_pool (self, caps, query);
  gst_query_unref (query);

  if (pool == NULL || !gst_buffer_pool_set_active (pool, TRUE)) {
    gst_clear_object (&pool);
    return FALSE;
  }
  GST_DEBUG_OBJECT (self, "using pool %" GST_PTR_FORMAT, pool);
  patch_batch_replace_pool (self, pool, caps);
  self->pool_capacity = self->capacity;
  return TRUE;
}
