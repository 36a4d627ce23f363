/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsishardwriter.h: writes one shard of a patch store (layout in
 * wsistoreformat.h).
 *
 * Contract: the shard is written to "<name>.tmp" in the store directory
 * and renamed to its final name only by wsi_shard_writer_finish(), after
 * the footer is written and the file synced: a shard under its final name
 * is always complete. Every failure (disk full, file too large, I/O error)
 * comes back as a GError naming the file and the reason; the caller then
 * abandons the shard, which removes the temporary file and leaves every
 * finished shard as it was.
 *
 * Cost: payloads are appended to a 4 MiB buffer and written with write(2)
 * when it fills (one crc32 pass over every byte); the entries and the
 * slide table are kept in memory until finish (128 bytes per patch, one
 * copy of each distinct slide's strings). Threading: one thread at a time.
 */

#ifndef __WSI_SHARD_WRITER_H__
#define __WSI_SHARD_WRITER_H__

#include "wsistoreformat.h"

G_BEGIN_DECLS

typedef struct _WsiShardWriter WsiShardWriter;

/* What a finished shard looks like (for the manifest). */
typedef struct
{
  gchar *name;                  /* file name in the store, e.g. shard-00003.wsis */
  guint n_patches;
  guint64 bytes;
  guint32 crc32;
} WsiShardSummary;

void wsi_shard_summary_clear (WsiShardSummary * summary);

/* The slide a patch comes from, as WsiPatchMeta names it. */
typedef struct
{
  const gchar *path;
  const gchar *uri;             /* "" or NULL when unknown */
  const gchar *label;
  const gchar *const *column_names;     /* NULL = none */
  const gchar *const *column_values;
  gdouble mpp;                  /* level-0 um/px (`mpps`), 0 = unknown */
} WsiStoreSlideRef;

/* @views: the shard holds multi-view locations (format version 2). */
WsiShardWriter *wsi_shard_writer_new (const gchar * dir, guint index,
    WsiStoreEncoding encoding, const gchar * video_format, gboolean views,
    GError ** error);

/* Appends one patch (@n_views 0) or multi-view location: @payload (@size
 * bytes, already encoded; for views laid out as wsistoreformat.h says) and
 * its entry fields. */
gboolean wsi_shard_writer_add (WsiShardWriter * writer,
    const WsiPatchRecord * record, guint width, guint height, guint channels,
    guint n_views, const guint8 * payload, gsize size,
    const WsiStoreSlideRef * slide, GError ** error);

guint wsi_shard_writer_count (const WsiShardWriter * writer);

/* Writes the entries, slide table and footer, syncs, renames to the final
 * name and frees the writer (also on failure: then the temporary file is
 * removed). */
gboolean wsi_shard_writer_finish (WsiShardWriter * writer,
    WsiShardSummary * summary, GError ** error);

/* Closes and removes the temporary file; frees the writer. */
void wsi_shard_writer_abandon (WsiShardWriter * writer);

G_END_DECLS

#endif /* __WSI_SHARD_WRITER_H__ */
