/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiindexcache.h: the parsed index of a remote slide (its level geometry
 * and tile tables, as a backend serialized it) kept on local disk, so that
 * the next open of the same object — the next epoch, the next run — costs
 * no metadata round trips.
 *
 * Contract: an entry is an opaque payload of one @kind ("tiff-pyramid",
 * versioned by the caller) for one object: its display URI, size and pinned
 * identity (ETag or Last-Modified; wsibytesource.h). A lookup returns the
 * payload only when the file holds exactly that key (a changed object has a
 * new identity, so a stale index is never returned); a missing, unreadable,
 * corrupt or foreign file is a miss, logged with g_debug. The payload is NOT
 * trusted: the caller validates it as it would the file itself. Only remote
 * objects with a pinned identity are cached (a local file's index costs no
 * round trip). Entries are written atomically (temporary file, rename) and
 * the folder is kept under its bound by removing the least recently used
 * entries (file mtime, touched on each hit).
 *
 * Settings (environment, read at each call): WSI_INDEX_CACHE_DIR (default
 * $XDG_CACHE_HOME/gst-wsi/index; empty or "none" turns the cache off),
 * WSI_INDEX_CACHE_MB (bound of the folder, MiB, default 256).
 *
 * Cost: a lookup reads one file (16 bytes per tile: ~2 MB for a 100k x 80k
 * slide); a store writes one and lists the folder to keep the bound.
 * Threading: any thread; processes may share the folder (renames are
 * atomic, a file removed under a reader is a miss).
 */

#ifndef __WSI_INDEX_CACHE_H__
#define __WSI_INDEX_CACHE_H__

#include <glib.h>
#include "wsibytesource.h"

G_BEGIN_DECLS

/* The folder in use now, or NULL when the cache is off. */
gchar *wsi_index_cache_dir (void);

/* The payload stored for @source under @kind, or NULL (a miss). */
GBytes *wsi_index_cache_lookup (const gchar * kind, WsiByteSource * source);

/* Stores @payload for @source under @kind (nothing for local or unpinned
 * sources, or when the cache is off); failures are only logged. */
void wsi_index_cache_store (const gchar * kind, WsiByteSource * source,
    GBytes * payload);

/* The file an entry of @source under @kind lives in (for tests), or NULL
 * when it would not be cached. */
gchar *wsi_index_cache_path (const gchar * kind, WsiByteSource * source);

G_END_DECLS

#endif /* __WSI_INDEX_CACHE_H__ */
