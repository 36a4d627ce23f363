/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsibatchalloc.h: where patchbatch's batches live: the buffer pool
 * downstream offers when it fits the caps (video batches), or our own
 * multi-memory pool (wsiplanarpool.h: views, float planes), with at most
 * max-batches buffers so that a consumer holding batches stalls the
 * stream instead of growing it.
 *
 * Contract: patch_batch_decide_allocation() runs the ALLOCATION query for
 * the caps just pushed and makes self->pool an active pool of buffers of
 * @batch_bytes; patch_batch_replace_pool() swaps the pool under the object
 * lock (FLUSH_START on another thread must reach it to unblock an acquire).
 *
 * Cost: once per caps change; nothing per batch.
 *
 * Threading: the streaming thread; the pool pointer under the object lock.
 */
#ifndef __WSI_BATCH_ALLOC_H__
#define __WSI_BATCH_ALLOC_H__

#include "gstpatchbatchpriv.h"

G_BEGIN_DECLS

void patch_batch_replace_pool (GstPatchBatch * self, GstBufferPool * pool, GstCaps * caps);
gboolean patch_batch_decide_allocation (GstPatchBatch * self, GstCaps * caps, gsize batch_bytes);

G_END_DECLS

#endif /* __WSI_BATCH_ALLOC_H__ */
