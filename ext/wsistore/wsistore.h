/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistore.h: a patch store opened for reading — its usable shards, one
 * index space over their patches.
 *
 * Contract: wsi_store_open() reads the manifest (wsistoremanifest.h) and
 * opens the shards it lists (wsishardreader.h). A store without a manifest
 * is refused unless @allow_incomplete, which serves the complete shards
 * found in the directory. A store of another version is refused. A shard
 * that is missing, truncated, damaged or whose checksum differs from the
 * manifest's is left out: its name and the reason are in `warnings` and
 * its patches (the manifest's count) in `patches_skipped`; the store's
 * index space is the patches of the shards kept, in shard order, so
 * "patch i" is a pure function of the files. A store with no usable patch
 * is an error.
 *
 * Cost: see wsi_shard_open(); with @verify every shard is read once at
 * open. Threading: immutable once open; lookups from any thread.
 */

#ifndef __WSI_STORE_H__
#define __WSI_STORE_H__

#include "wsishardreader.h"
#include "wsistoremanifest.h"

G_BEGIN_DECLS

typedef struct
{
  gchar *dir;
  WsiStoreManifest *manifest;   /* NULL for an incomplete store */
  GPtrArray *shards;            /* WsiShard*, the usable ones */
  guint64 *first;               /* first index of each shard, and the total */
  guint64 n_patches;
  guint64 patches_skipped;
  guint shards_skipped;
  GPtrArray *warnings;          /* gchar*: one per shard left out */
  WsiStoreEncoding encoding;
  gchar *video_format;
  gboolean views;               /* multi-view locations (version 2) */
} WsiStore;

WsiStore *wsi_store_open (const gchar * dir, gboolean allow_incomplete,
    gboolean verify, GError ** error);
void wsi_store_free (WsiStore * store);

/* The shard holding patch @index (< n_patches) and its place in it. */
const WsiShard *wsi_store_locate (const WsiStore * store, guint64 index,
    guint * local);

G_END_DECLS

#endif /* __WSI_STORE_H__ */
