/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsibatchcopy.h: copying a patch into a batch too big for the CPU caches.
 *
 * Contract: wsi_batch_copy() copies @size bytes from @src to @dest (no
 * overlap), byte for byte as memcpy() would. With @streaming it writes
 * with non-temporal stores (x86-64: AVX when the CPU has it, else SSE2;
 * other CPUs: memcpy), which bypass the caches: the destination lines are
 * not read first and do not evict what is cached. patchbatch streams when
 * the batches it cycles through (at least two are alive at a time) are
 * larger than the last-level cache could hold anyway, so the rows would
 * have left it before anyone reads them (wsi_batch_copy_should_stream()).
 *
 * Cost: memory bandwidth only; on a 2-core AMD EPYC with a 32 MB L3,
 * copying 256 px RGB patches out of a page-cache mapping into three 12.5
 * MB batches, memcpy() ran at about 45,000 patches per CPU-second and the
 * streaming copy at about 75,000 (bench-store measures it in the
 * pipeline).
 *
 * Threading: no state; any thread.
 */

#ifndef __WSI_BATCH_COPY_H__
#define __WSI_BATCH_COPY_H__

#include <glib.h>

G_BEGIN_DECLS

/* Whether batches of @batch_bytes are copied with streaming stores. */
gboolean wsi_batch_copy_should_stream (gsize batch_bytes);

void wsi_batch_copy (guint8 * dest, const guint8 * src, gsize size,
    gboolean streaming);

G_END_DECLS

#endif /* __WSI_BATCH_COPY_H__ */
