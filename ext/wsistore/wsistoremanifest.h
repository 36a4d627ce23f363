/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistoremanifest.h: a patch store's manifest.json — what the store holds
 * and what made it (docs/data-formats.md, "Patch store").
 *
 * Contract: the writer writes the manifest last, to "manifest.json.tmp"
 * then renamed, so a store directory with a manifest is complete and one
 * without is still being written or was interrupted. Reading refuses a
 * manifest of another "format" or "version" with an error that says which
 * version was found; a missing manifest is G_IO_ERROR_NOT_FOUND.
 *
 * Cost: JSON of a few hundred bytes per shard, read and written once per
 * stream. Threading: plain data, one thread.
 */

#ifndef __WSI_STORE_MANIFEST_H__
#define __WSI_STORE_MANIFEST_H__

#include <json-glib/json-glib.h>

#include "wsishardwriter.h"

G_BEGIN_DECLS

#define WSI_STORE_FORMAT_NAME "gst-wsi-patch-store"

typedef struct
{
  guint version;
  WsiStoreEncoding encoding;
  gchar *video_format;
  guint quality;                /* jpeg only */
  gchar *subsampling;           /* jpeg only: "444" or "420" */
  guint64 n_patches;
  guint patches_per_shard;
  GArray *shards;               /* WsiShardSummary, in order */
  gboolean has_seed;
  guint64 seed;                 /* wsislidesrc's seed, when one wrote it */
  JsonNode *pipeline;           /* what made the store (may be NULL) */
} WsiStoreManifest;

WsiStoreManifest *wsi_store_manifest_new (void);
void wsi_store_manifest_free (WsiStoreManifest * manifest);

gboolean wsi_store_manifest_write (const WsiStoreManifest * manifest,
    const gchar * dir, GError ** error);
WsiStoreManifest *wsi_store_manifest_read (const gchar * dir,
    GError ** error);

G_END_DECLS

#endif /* __WSI_STORE_MANIFEST_H__ */
