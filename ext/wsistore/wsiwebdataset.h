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
 * one sample by key. A multi-view location (patchviews) is one sample
 * too: one image per view, "KKKKKKKKKK.NAME.jpg" (NAME the view's name,
 * [A-Za-z][A-Za-z0-9_-]*: webdataset's key stops at the first dot, so
 * the views are fields "NAME.jpg" of sample KKKKKKKKKK), and the JSON
 * lists the views' records under "views", in view order.
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

/* One image of a sample: the patch (@name and @view NULL: member
 * KEY.EXTENSION) or a view (member KEY.NAME.EXTENSION, its record in the
 * JSON). */
typedef struct
{
  const gchar *name;
  const WsiViewRecord *view;
  const guint8 *data;
  gsize size;
} WsiWebDatasetImage;

/* @extension: "jpg" or "png"; @images: the patch, or every view of a
 * location (1..16). */
gboolean wsi_web_dataset_writer_add (WsiWebDatasetWriter * writer,
    const gchar * extension, const WsiWebDatasetImage * images,
    guint n_images, const WsiPatchRecord * record,
    const WsiStoreSlideRef * slide, GError ** error);

guint wsi_web_dataset_writer_shards (const WsiWebDatasetWriter * writer);

/* Completes the last shard and frees the writer (also on failure). */
gboolean wsi_web_dataset_writer_finish (WsiWebDatasetWriter * writer,
    GError ** error);
/* Removes the shard being written; frees the writer. */
void wsi_web_dataset_writer_abandon (WsiWebDatasetWriter * writer);

G_END_DECLS

#endif /* __WSI_WEB_DATASET_H__ */
