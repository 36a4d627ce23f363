/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitilecache.h: decoded tiles shared by every reader thread and slide,
 * bounded in bytes, least recently used evicted first.
 *
 * Contract: a tile is identified by (slide uid, level, native scale, tile
 * column, tile row); its pixels are premultiplied ARGB words, immutable once
 * inserted. Lookups hand out a reference: an evicted tile stays valid until
 * its last holder unrefs it, so eviction never waits for readers. The byte
 * budget counts pixel memory of cached tiles; tiles held only by readers
 * after eviction are not counted (at most one per reader thread and tile of
 * the region it reads).
 *
 * Cost: a lookup or insert is one hash and one uncontended mutex of one of
 * WSI_TILE_CACHE_SHARDS shards (picked by the key's hash), so threads
 * reading different tiles rarely meet. Pixel memory of freed tiles (8 MB
 * at most) is kept for the next tiles of the same size
 * (wsi_tile_cache_alloc_argb), under one more mutex, taken once a tile
 * decoded and once a tile freed. Threading: every function is
 * thread-safe; hit and miss counters are atomic.
 */

#ifndef __WSI_TILE_CACHE_H__
#define __WSI_TILE_CACHE_H__

#include <glib.h>

G_BEGIN_DECLS

#define WSI_TILE_CACHE_SHARDS 16

typedef struct _WsiTileCache WsiTileCache;
typedef struct _WsiTile WsiTile;
typedef struct _WsiTileRecycler WsiTileRecycler;

typedef struct
{
  guint64 slide_uid;
  gint level;
  guint scale;                  /* 1, 2, 4, 8 */
  gint64 column, row;
} WsiTileKey;

struct _WsiTile
{
  gint ref_count;               /* atomic */
  WsiTileKey key;
  guint width, height;          /* pixels held (stride = width) */
  guint32 *argb;
  /* cache bookkeeping */
  GList lru_link;
  gboolean cached;
  WsiTileRecycler *recycler;    /* where its pixels go back, or NULL */
};

/* @max_bytes = 0 gives a cache that keeps nothing (lookups miss). */
WsiTileCache *wsi_tile_cache_new (gsize max_bytes);
void wsi_tile_cache_free (WsiTileCache * cache);

/* Shrinks or grows the budget; evicts at once when over it. */
void wsi_tile_cache_set_max_bytes (WsiTileCache * cache, gsize max_bytes);
gsize wsi_tile_cache_get_max_bytes (WsiTileCache * cache);

/* A reference to the cached tile, or NULL (counted as a miss). */
WsiTile *wsi_tile_cache_lookup (WsiTileCache * cache, const WsiTileKey * key);

/* Admission: a tile is worth decoding whole and keeping only when it is
 * asked for again. Returns a reference to the cached tile (a hit), or NULL
 * with *@admit set: FALSE the first time @key misses (decode only the part
 * needed, keep nothing: random reads that never repeat never pay a whole
 * tile), TRUE when it missed before, recently (decode it whole and
 * insert it). The last SEEN_PER_SHARD missed keys of each shard are
 * remembered. */
WsiTile *wsi_tile_cache_lookup_or_admit (WsiTileCache * cache,
    const WsiTileKey * key, gboolean * admit);

/* Single flight, for readers whose threads ask for the same tiles at about
 * the same time (neighbouring patches of a grid, read in parallel): a
 * reference to the cached tile (a hit); else NULL with *@claimed TRUE (a
 * miss: no other thread is decoding @key, and the caller now must end the
 * claim with wsi_tile_cache_insert() or wsi_tile_cache_abandon(), also on
 * failure); else NULL with *@claimed FALSE: another thread is decoding
 * @key (counted neither way until asked again). The caller should first
 * do the rest of its work, then wsi_tile_cache_wait_claim() and ask again
 * (the tile is then usually a hit; it may be a claim again when the
 * decoder failed or the tile was evicted). A thread that holds a claim
 * must never wait for another's: end every claim before waiting, and no
 * two threads can wait for each other. */
WsiTile *wsi_tile_cache_lookup_or_claim (WsiTileCache * cache,
    const WsiTileKey * key, gboolean * claimed);

/* Blocks until no thread holds a claim on @key. */
void wsi_tile_cache_wait_claim (WsiTileCache * cache, const WsiTileKey * key);

/* Ends the caller's claim on @key without a tile (decode failed, or the
 * tile went elsewhere uncached); waiters then claim it themselves. */
void wsi_tile_cache_abandon (WsiTileCache * cache, const WsiTileKey * key);

/* Room for a tile's width x height words (g_malloc'ed, for
 * wsi_tile_cache_insert), or NULL when memory ran out: the pixel memory
 * of a tile freed earlier when the sizes match (up to 8 MB of it is kept
 * for this), so decoding a grid row after row does not make malloc grow
 * and fault in its heap again for every row. */
guint32 *wsi_tile_cache_alloc_argb (WsiTileCache * cache, guint width,
    guint height);

/* Takes @argb (g_malloc'ed, width x height words) and returns a reference
 * to the tile now cached under @key (an equal tile inserted meanwhile by
 * another thread wins; @argb is then freed). With a zero budget the tile is
 * returned uncached. Ends a claim on @key (wsi_tile_cache_lookup_or_claim)
 * either way. */
WsiTile *wsi_tile_cache_insert (WsiTileCache * cache, const WsiTileKey * key,
    guint32 * argb, guint width, guint height);

/* Another reference to a tile the caller holds one of (a reader keeping
 * tiles to read them in place). */
WsiTile *wsi_tile_ref (WsiTile * tile);
void wsi_tile_unref (WsiTile * tile);

/* Grid order (patches of one slide at a time, in raster order): keeps only
 * the band of @key's slide, level and scale from tile row @key->row down
 * and evicts every other tile (rows above, other levels and scales, other
 * slides), so the cache holds a few rows of tiles instead of filling its
 * whole budget with tiles no later patch of the grid asks for. Cheap when
 * called again with the same slide, level and scale and a row not below
 * the last one (one lock, no scan); a scan of every shard otherwise. A
 * tile evicted too early is only decoded again: the pixels never change. */
void wsi_tile_cache_keep_band (WsiTileCache * cache, const WsiTileKey * key);

guint64 wsi_tile_cache_hits (WsiTileCache * cache);
guint64 wsi_tile_cache_misses (WsiTileCache * cache);
gsize wsi_tile_cache_bytes (WsiTileCache * cache);
void wsi_tile_cache_reset_counters (WsiTileCache * cache);

/* Drops every tile (e.g. when the element stops). */
void wsi_tile_cache_clear (WsiTileCache * cache);

G_END_DECLS

#endif /* __WSI_TILE_CACHE_H__ */
