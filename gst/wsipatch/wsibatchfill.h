/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsibatchfill.h: the batch patchbatch is filling: a buffer from the pool
 * kept mapped while locations are copied into it (uint8 NHWC, one memory
 * per view, or normalised float NCHW: wsibatchformat.h), the batch meta's
 * records beside them, and the push when it is full (or at EOS, a short
 * one unless drop-remainder).
 *
 * Contract: patch_batch_add_location() copies location @i of a patch
 * buffer (one view per memory for multi-view buffers) and pushes the batch
 * it completes; patch_batch_chain_views() checks and adds every location of
 * a multi-view buffer; patch_batch_push_batch() pushes what is there;
 * patch_batch_discard_batch() drops it (flush, stop). An error posts an
 * element error naming the slide and returns GST_FLOW_ERROR.
 *
 * Cost: one copy of each patch (streaming stores for large batches,
 * wsibatchcopy.h), or one normalisation pass (wsinormalize.h). Each pooled
 * batch memory is advised for transparent huge pages once, before its first
 * fill (MADV_HUGEPAGE: one fault per 2 MiB instead of per 4 KiB where the
 * kernel's THP mode is "madvise").
 *
 * Threading: the streaming thread only.
 */
#ifndef __WSI_BATCH_FILL_H__
#define __WSI_BATCH_FILL_H__

#include "gstpatchbatchpriv.h"

G_BEGIN_DECLS

void patch_batch_discard_batch (GstPatchBatch * self);
GstFlowReturn patch_batch_push_batch (GstPatchBatch * self);
GstFlowReturn patch_batch_add_location (GstPatchBatch * self, GstBuffer * patch, GstStructure * meta, GstMapInfo * in_maps, guint i);
GstFlowReturn patch_batch_chain_views (GstPatchBatch * self, GstBuffer * buf, GstStructure * meta);

G_END_DECLS

#endif /* __WSI_BATCH_FILL_H__ */
