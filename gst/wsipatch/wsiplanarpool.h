/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsiplanarpool.h: a GstBufferPool whose buffers hold several memories of
 * fixed sizes, one per plane (a view of a multi-view batch, or the single
 * float tensor of a normalised batch).
 *
 * Contract: every buffer has exactly n GstMemory, memory i of sizes[i]
 * bytes, allocated with the allocator and params of the pool's config
 * (system memory when none). Configure it as any pool, with the total of
 * the sizes as the config size: min/max buffers bound memory as usual, and
 * set_flushing unblocks a waiting acquire. A buffer whose memories were
 * replaced or resized is not reused (GstBufferPool's own checks).
 * Cost: n allocations per buffer, once (buffers are reused). Threading:
 * GstBufferPool's. */

#ifndef __WSI_PLANAR_POOL_H__
#define __WSI_PLANAR_POOL_H__

#include <gst/gst.h>

G_BEGIN_DECLS

#define WSI_TYPE_PLANAR_POOL (wsi_planar_pool_get_type ())
G_DECLARE_FINAL_TYPE (WsiPlanarPool, wsi_planar_pool, WSI, PLANAR_POOL,
    GstBufferPool);

/* A pool of buffers of @n_planes memories of @sizes bytes. */
GstBufferPool *wsi_planar_pool_new (const gsize * sizes, guint n_planes);

G_END_DECLS

#endif /* __WSI_PLANAR_POOL_H__ */
