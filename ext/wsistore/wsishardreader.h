/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsishardreader.h: one shard of a patch store, memory-mapped and checked
 * (layout in wsistoreformat.h).
 *
 * Contract: wsi_shard_open() maps the file read-only and accepts it only
 * when the header and footer carry the magic and a version it reads
 * (WSI_STORE_VERSION, or WSI_STORE_VERSION_VIEWS for views), every
 * entry's payload lies inside the payload area, every slide reference
 * exists and (with @verify) the crc32 of the file matches its footer;
 * otherwise it returns NULL with an error naming the file and the reason.
 * An accepted shard is immutable: its entries, payloads and slide strings
 * may be read from any number of threads without a lock.
 *
 * Cost: opening maps the file (no read) and parses the slide table; @verify
 * reads every byte once (crc32, about 1 GB/s) and so also warms the page
 * cache. Serving a patch touches only its payload pages.
 */

#ifndef __WSI_SHARD_READER_H__
#define __WSI_SHARD_READER_H__

#include "wsistoreformat.h"

G_BEGIN_DECLS

#define WSI_SHARD_ERROR (g_quark_from_static_string ("wsi-shard-error"))

typedef enum
{
  WSI_SHARD_ERROR_DAMAGED,      /* truncated, corrupt or not a shard */
  WSI_SHARD_ERROR_VERSION,      /* another store format version */
  WSI_SHARD_ERROR_OPEN,         /* missing or unreadable file */
} WsiShardError;

/* One slide of a shard's slide table. */
typedef struct
{
  gchar *path;
  gchar *uri;
  gchar *label;
  gchar **column_names;
  gchar **column_values;
} WsiStoreSlide;

typedef struct
{
  gchar *name;                  /* file name in the store */
  gchar *path;                  /* full path, for messages */
  GMappedFile *map;
  const guint8 *data;
  gsize size;
  WsiStoreEncoding encoding;
  gboolean views;               /* entries are multi-view locations */
  gchar video_format[16];
  const WsiStoreEntry *entries;
  guint n_patches;
  guint32 crc32;
  GPtrArray *slides;            /* WsiStoreSlide */
} WsiShard;

WsiShard *wsi_shard_open (const gchar * path, gboolean verify,
    GError ** error);
void wsi_shard_free (WsiShard * shard);

static inline const guint8 *
wsi_shard_payload (const WsiShard * shard, guint i)
{
  return shard->data + shard->entries[i].offset;
}

/* The view table of multi-view location @i (shard->views). */
static inline const WsiStoreView *
wsi_shard_views (const WsiShard * shard, guint i)
{
  return (const WsiStoreView *) (wsi_shard_payload (shard, i)
      + sizeof (WsiStoreViewsHeader));
}

static inline const WsiStoreSlide *
wsi_shard_slide (const WsiShard * shard, guint i)
{
  return g_ptr_array_index (shard->slides, shard->entries[i].slide);
}

G_END_DECLS

#endif /* __WSI_SHARD_READER_H__ */
