/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistorepatch.h: patchstoresrc's work on one stored patch — the item its
 * ordered pool carries and the buffer a worker thread makes of it.
 *
 * Contract: wsi_store_patch_make() returns the buffer of @work's entry:
 * its payload as stored, wrapped without a copy (@work->as_stored:
 * image/jpeg, or raw rows at the default strides; read-only memory that
 * keeps the shard's mapping alive, so the buffer may outlive the store),
 * or the patch decoded with @codec into @work->buffer (taken) at
 * @work->stride, or a multi-view location decoded into one allocation
 * with one memory per view (tight rows), as patchviews pushes it. The
 * buffer carries the `WsiPatchMeta` as the sink stored it (record, slide
 * path, label, uri and level-0 mpp, the slide's columns plus
 * "store-epoch" and "store-index"; a views entry also its view names and
 * records) and offset = @work->position. NULL, with @work->error set, when
 * the payload does not decode (the element warns and counts it, in stream
 * order). wsi_store_patch_clear() drops what a work item still holds.
 *
 * Cost: one decode per patch (none for a payload served as stored), one
 * allocation per patch or location.
 *
 * Threading: a pool worker, with its own @codec; the shard and @pixels are
 * only read (they do not change from READY->PAUSED to PAUSED->READY).
 */

#ifndef __WSI_STORE_PATCH_H__
#define __WSI_STORE_PATCH_H__

#include <gst/gst.h>

#include "wsishardreader.h"
#include "wsistorecodec.h"

G_BEGIN_DECLS

/* One patch in the ordered pool: where it is stored, where it goes in
 * the stream, and how it leaves. */
typedef struct
{
  GstBuffer *buffer;            /* output, default strides */
  const WsiShard *shard;
  guint local;                  /* entry in the shard */
  guint stride;                 /* output row stride */
  guint epoch;
  guint64 index;                /* in the store */
  guint64 position;             /* in the served stream */
  gboolean as_stored;           /* push the payload as it is: image/jpeg,
                                 * or raw rows with the default strides */
  GError *error;                /* why the patch did not decode */
} WsiStorePatch;

GstBuffer *wsi_store_patch_make (WsiStorePatch * work,
    const WsiStorePixels * pixels, WsiStoreCodec * codec);

void wsi_store_patch_clear (WsiStorePatch * work);

G_END_DECLS

#endif /* __WSI_STORE_PATCH_H__ */
