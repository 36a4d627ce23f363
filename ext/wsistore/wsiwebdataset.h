/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiwebdataset.h: the patch stream as webdataset shards, for tools that
 * read webdataset / litdata (patchstoresink format=webdataset).
 *
 * Contract: samples go into tar archives "shard-NNNNNN.tar" of
 * @samples_per_shard samples each (wsitarwriter.h: temporary name, renamed
 * when complete). Sample k (from 0, in stream order) is the members
 * "KKKKKKKKKK.jpg" or ".png" (the image), "KKKKKKKKKK.json" (the record's
 * fields, slide path, label and columns) and "KKKKKKKKKK.cls" (the label,
 * as text), KKKKKKKKKK being k in ten digits: what webdataset groups into
 * one sample by key.
 *
 * Cost: the image bytes as given plus a few hundred bytes of JSON a sample.
 * Threading: one thread at a time.
 */

#ifndef __WSI_WEB_DATASET_H__
#define __WSI_WEB_DATASET_H__

#include "wsishardwriter.h"

G_BEGIN_DECLS

typedef struct _WsiWebDatasetWriter WsiWebDatasetWriter;

WsiWebDatasetWriter *wsi_web_dataset_writer_new (const gchar * dir,
    guint samples_per_shard);

/* @extension: "jpg" or "png". */
gboolean wsi_web_dataset_writer_add (WsiWebDatasetWriter * writer,
    const gchar * extension, const guint8 * image, gsize size,
    const WsiPatchRecord * record, const WsiStoreSlideRef * slide,
    GError ** error);

guint wsi_web_dataset_writer_shards (const WsiWebDatasetWriter * writer);

/* Completes the last shard and frees the writer (also on failure). */
gboolean wsi_web_dataset_writer_finish (WsiWebDatasetWriter * writer,
    GError ** error);
/* Removes the shard being written; frees the writer. */
void wsi_web_dataset_writer_abandon (WsiWebDatasetWriter * writer);

G_END_DECLS

#endif /* __WSI_WEB_DATASET_H__ */
