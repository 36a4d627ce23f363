/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsirangecache.h: fetched byte ranges of remote objects, kept in memory
 * under one bound in bytes (least recently used first out), so that a
 * remote source pays a request only for bytes it has not fetched yet.
 *
 * Contract: an extent is a run of bytes of one owner (a byte source) at an
 * offset, stored as fetched and never changed; a lookup copies a range out
 * when one stored extent covers it whole (a range spanning two extents is a
 * miss: the caller fetches it again, which is correct, only slower). Owners
 * drop their extents when they close. Nothing here validates bytes: the
 * source stores only responses it checked (status, Content-Range, identity).
 *
 * Cost: lookup and insert are O(log n) in the owner's extents plus the
 * copy; one mutex for the whole cache (held only for the tree walk and the
 * copy). Threading: every function may be called from any thread.
 */

#ifndef __WSI_RANGE_CACHE_H__
#define __WSI_RANGE_CACHE_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct _WsiRangeCache WsiRangeCache;

/* @max_bytes: the bound for all owners together (0 keeps nothing). */
WsiRangeCache *wsi_range_cache_new (guint64 max_bytes);
void wsi_range_cache_free (WsiRangeCache * cache);

void wsi_range_cache_set_max_bytes (WsiRangeCache * cache,
    guint64 max_bytes);
guint64 wsi_range_cache_get_max_bytes (WsiRangeCache * cache);

/* Copies @length bytes at @offset of @owner into @dest when one extent
 * holds them all; FALSE (and @dest untouched) otherwise. */
gboolean wsi_range_cache_lookup (WsiRangeCache * cache, gconstpointer owner,
    guint64 offset, gsize length, guint8 * dest);

/* TRUE when one extent holds the range (no copy, no LRU update). */
gboolean wsi_range_cache_contains (WsiRangeCache * cache, gconstpointer owner,
    guint64 offset, gsize length);

/* Stores @bytes (a reference is taken) as @owner's bytes at @offset,
 * evicting the least recently used extents beyond the bound. */
void wsi_range_cache_insert (WsiRangeCache * cache, gconstpointer owner,
    guint64 offset, GBytes * bytes);

/* Forgets every extent of @owner. */
void wsi_range_cache_drop_owner (WsiRangeCache * cache, gconstpointer owner);

/* Bytes held now. */
guint64 wsi_range_cache_get_bytes (WsiRangeCache * cache);

G_END_DECLS

#endif /* __WSI_RANGE_CACHE_H__ */
