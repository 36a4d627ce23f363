/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsitilecache.c: decoded tiles in WSI_TILE_CACHE_SHARDS independent LRU
 * shards, each with its own lock, table and byte budget (max_bytes /
 * shards); see wsitilecache.h. Evicted tiles are unlinked under the lock
 * and unreffed after it, so freeing pixels never holds a shard. A claim
 * (single flight) is a key in its shard's claimed set; its end wakes every
 * waiter of the shard, who each look again for their own key. */

#include "wsitilecache.h"

#include <string.h>

/* Keys remembered per shard for admission (wsi_tile_cache_lookup_or_admit):
 * about 40 bytes each, 2.6 MB for all shards at most. */
#define SEEN_PER_SHARD 4096

/* Pixel buffers of evicted tiles kept for the next decodes, in bytes at
 * most: a band eviction in grid order drops a whole row of tiles (133 of
 * 120 x 120 px on a 32000 px wide slide at DCT scale 1/2, 7.7 MB) and the
 * next row decodes as many; handing them back to malloc made it grow its
 * heap again for the next row, a page fault a tile on average. */
#define RECYCLE_MAX_BYTES (8 * 1024 * 1024)

/* Shared by the cache and each of its tiles (a tile may outlive the
 * cache): free buffers of one size, the last ones given back. */
struct _WsiTileRecycler
{
  gint ref_count;               /* atomic */
  GMutex lock;
  gsize size;                   /* bytes each; 0 while empty */
  GPtrArray *free;              /* of g_malloc'ed buffers of @size */
};

static WsiTileRecycler *
recycler_new (void)
{
  WsiTileRecycler *r = g_new0 (WsiTileRecycler, 1);

  r->ref_count = 1;
  g_mutex_init (&r->lock);
  r->free = g_ptr_array_new_with_free_func (g_free);
  return r;
}

static void
recycler_unref (WsiTileRecycler * r)
{
  if (!g_atomic_int_dec_and_test (&r->ref_count))
    return;
  g_ptr_array_unref (r->free);
  g_mutex_clear (&r->lock);
  g_free (r);
}

/* Takes @argb back (kept, or freed when full or of another size). */
static void
recycler_put (WsiTileRecycler * r, guint32 * argb, gsize size)
{
  g_mutex_lock (&r->lock);
  if (r->free->len == 0)
    r->size = size;
  if (size == r->size && (r->free->len + 1) * size <= RECYCLE_MAX_BYTES) {
    g_ptr_array_add (r->free, argb);
    argb = NULL;
  }
  g_mutex_unlock (&r->lock);
  g_free (argb);
}

static guint32 *
recycler_take (WsiTileRecycler * r, gsize size)
{
  guint32 *argb = NULL;

  g_mutex_lock (&r->lock);
  if (r->free->len > 0 && r->size == size)
    argb = g_ptr_array_steal_index_fast (r->free, r->free->len - 1);
  g_mutex_unlock (&r->lock);
  return argb != NULL ? argb : g_try_malloc (size);
}

typedef struct
{
  GMutex lock;
  GHashTable *tiles;            /* &tile->key -> tile (the cache's ref) */
  GQueue lru;                   /* of tile->lru_link, most recent first */
  gsize bytes;                  /* pixel bytes of the tiles in @tiles */
  GHashTable *seen;             /* keys missed once: key -> its seen_fifo link */
  GQueue seen_fifo;             /* of WsiTileKey copies, oldest first */
  /* wsi_tile_cache_lookup_or_claim(): keys a thread is decoding (copies),
   * and the condition their waiters sleep on until the claim ends */
  GHashTable *claimed;
  GCond claim_ended;
  /* threads sleeping on claim_ended: GLib's GCond makes a futex call on
   * every broadcast, waiter or not, and most claims end unwaited for */
  guint claim_waiters;
} Shard;

struct _WsiTileCache
{
  Shard shards[WSI_TILE_CACHE_SHARDS];
  gsize max_bytes;              /* atomic */
  guint64 hits, misses;         /* atomic */
  /* wsi_tile_cache_keep_band(): the band kept last, if any */
  GMutex band_lock;
  gboolean band_set;
  WsiTileKey band;
  WsiTileRecycler *recycler;
};

/* ---- keys --------------------------------------------------------------- */

/* splitmix64's finaliser: every key bit reaches every hash bit, so both the
 * shard (top bits) and GHashTable's bucket (low bits) spread well. */
static guint64
mix64 (guint64 z)
{
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static guint64
tile_key_hash64 (const WsiTileKey * key)
{
  guint64 h = mix64 (key->slide_uid);

  h = mix64 (h ^ ((guint64) (guint) key->level << 8) ^ key->scale);
  h = mix64 (h ^ (guint64) key->column);
  return mix64 (h ^ (guint64) key->row);
}

static guint
tile_key_hash (gconstpointer key)
{
  return (guint) tile_key_hash64 (key);
}

static gboolean
tile_key_equal (gconstpointer a, gconstpointer b)
{
  const WsiTileKey *ka = a, *kb = b;

  return ka->slide_uid == kb->slide_uid && ka->level == kb->level
      && ka->scale == kb->scale && ka->column == kb->column
      && ka->row == kb->row;
}

static Shard *
shard_for (WsiTileCache * cache, const WsiTileKey * key)
{
  return &cache->shards[tile_key_hash64 (key) >> 60];
}

G_STATIC_ASSERT (WSI_TILE_CACHE_SHARDS == 16);  /* the 4 bits above */

/* ---- tiles -------------------------------------------------------------- */

static gsize
tile_bytes (const WsiTile * tile)
{
  return (gsize) tile->width * tile->height * sizeof (guint32);
}

static WsiTile *
tile_new (const WsiTileKey * key, guint32 * argb, guint width, guint height)
{
  WsiTile *tile = g_new0 (WsiTile, 1);

  tile->ref_count = 1;
  tile->key = *key;
  tile->width = width;
  tile->height = height;
  tile->argb = argb;
  tile->lru_link.data = tile;
  return tile;
}

WsiTile *
wsi_tile_ref (WsiTile * tile)
{
  g_atomic_int_inc (&tile->ref_count);
  return tile;
}

void
wsi_tile_unref (WsiTile * tile)
{
  if (tile == NULL || !g_atomic_int_dec_and_test (&tile->ref_count))
    return;
  if (tile->recycler != NULL) {
    recycler_put (tile->recycler, tile->argb, tile_bytes (tile));
    recycler_unref (tile->recycler);
  } else {
    g_free (tile->argb);
  }
  g_free (tile);
}

/* Unrefs tiles chained through lru_link.next (after the lock is gone). */
static void
tile_chain_unref (GList * chain)
{
  while (chain != NULL) {
    GList *next = chain->next;
    wsi_tile_unref (chain->data);
    chain = next;
  }
}

/* ---- shards (call with the lock held) ----------------------------------- */

static void
shard_touch (Shard * shard, WsiTile * tile)
{
  g_queue_unlink (&shard->lru, &tile->lru_link);
  g_queue_push_head_link (&shard->lru, &tile->lru_link);
}

/* Takes the tile of @link (already out of the LRU queue) out of @shard and
 * puts @link at the head of the chain @evicted; returns the chain. */
static GList *
shard_drop (Shard * shard, GList * link, GList * evicted)
{
  WsiTile *tile = link->data;

  g_hash_table_remove (shard->tiles, &tile->key);
  shard->bytes -= tile_bytes (tile);
  tile->cached = FALSE;
  link->prev = NULL;
  link->next = evicted;
  return link;
}

/* Drops least recently used tiles until the shard holds at most @budget
 * bytes; returns them chained for tile_chain_unref(). */
static GList *
shard_evict (Shard * shard, gsize budget)
{
  GList *evicted = NULL;

  while (shard->bytes > budget && shard->lru.tail != NULL)
    evicted = shard_drop (shard, g_queue_pop_tail_link (&shard->lru),
        evicted);
  return evicted;
}

static gsize
shard_budget (WsiTileCache * cache)
{
  return __atomic_load_n (&cache->max_bytes, __ATOMIC_RELAXED)
      / WSI_TILE_CACHE_SHARDS;
}

/* ---- the cache ---------------------------------------------------------- */

WsiTileCache *
wsi_tile_cache_new (gsize max_bytes)
{
  WsiTileCache *cache = g_new0 (WsiTileCache, 1);
  guint i;

  for (i = 0; i < WSI_TILE_CACHE_SHARDS; i++) {
    Shard *shard = &cache->shards[i];
    g_mutex_init (&shard->lock);
    shard->tiles = g_hash_table_new (tile_key_hash, tile_key_equal);
    g_queue_init (&shard->lru);
    shard->seen = g_hash_table_new (tile_key_hash, tile_key_equal);
    g_queue_init (&shard->seen_fifo);
    shard->claimed = g_hash_table_new_full (tile_key_hash, tile_key_equal,
        g_free, NULL);
    g_cond_init (&shard->claim_ended);
  }
  g_mutex_init (&cache->band_lock);
  cache->max_bytes = max_bytes;
  cache->recycler = recycler_new ();
  return cache;
}

void
wsi_tile_cache_free (WsiTileCache * cache)
{
  guint i;

  if (cache == NULL)
    return;
  wsi_tile_cache_clear (cache);
  for (i = 0; i < WSI_TILE_CACHE_SHARDS; i++) {
    g_hash_table_destroy (cache->shards[i].tiles);
    g_hash_table_destroy (cache->shards[i].seen);
    g_queue_clear_full (&cache->shards[i].seen_fifo, g_free);
    g_hash_table_destroy (cache->shards[i].claimed);
    g_cond_clear (&cache->shards[i].claim_ended);
    g_mutex_clear (&cache->shards[i].lock);
  }
  g_mutex_clear (&cache->band_lock);
  recycler_unref (cache->recycler);
  g_free (cache);
}

void
wsi_tile_cache_set_max_bytes (WsiTileCache * cache, gsize max_bytes)
{
  gsize budget = max_bytes / WSI_TILE_CACHE_SHARDS;
  guint i;

  __atomic_store_n (&cache->max_bytes, max_bytes, __ATOMIC_RELAXED);
  for (i = 0; i < WSI_TILE_CACHE_SHARDS; i++) {
    Shard *shard = &cache->shards[i];
    GList *evicted;

    g_mutex_lock (&shard->lock);
    evicted = shard_evict (shard, budget);
    g_mutex_unlock (&shard->lock);
    tile_chain_unref (evicted);
  }
}

gsize
wsi_tile_cache_get_max_bytes (WsiTileCache * cache)
{
  return __atomic_load_n (&cache->max_bytes, __ATOMIC_RELAXED);
}

/* Remembers @key as missed once; TRUE when it already was (and forgets
 * it: the caller now caches the tile). Under the shard lock. */
static gboolean
shard_seen_before (Shard * shard, const WsiTileKey * key)
{
  GList *link = g_hash_table_lookup (shard->seen, key);
  WsiTileKey *copy;

  if (link != NULL) {
    g_hash_table_remove (shard->seen, key);
    g_free (link->data);
    g_queue_delete_link (&shard->seen_fifo, link);
    return TRUE;
  }
  if (g_queue_get_length (&shard->seen_fifo) >= SEEN_PER_SHARD) {
    copy = g_queue_pop_head (&shard->seen_fifo);
    g_hash_table_remove (shard->seen, copy);
    g_free (copy);
  }
  copy = g_memdup2 (key, sizeof (*key));
  g_queue_push_tail (&shard->seen_fifo, copy);
  g_hash_table_insert (shard->seen, copy, shard->seen_fifo.tail);
  return FALSE;
}

/* The cached tile of @key, referenced and made most recent, or NULL.
 * Under the lock. */
static WsiTile *
shard_take (Shard * shard, const WsiTileKey * key)
{
  WsiTile *tile = g_hash_table_lookup (shard->tiles, key);

  if (tile != NULL) {
    shard_touch (shard, tile);
    g_atomic_int_inc (&tile->ref_count);
  }
  return tile;
}

/* A hit (a reference, the tile made most recent) or NULL; on a miss with
 * @admit, whether the key missed before (see the header). Counts either. */
static WsiTile *
cache_lookup (WsiTileCache * cache, const WsiTileKey * key, gboolean * admit)
{
  Shard *shard = shard_for (cache, key);
  WsiTile *tile;

  g_mutex_lock (&shard->lock);
  tile = shard_take (shard, key);
  if (tile == NULL && admit != NULL && shard_budget (cache) > 0) {
    *admit = shard_seen_before (shard, key);
  }
  g_mutex_unlock (&shard->lock);

  __atomic_fetch_add (tile ? &cache->hits : &cache->misses, 1,
      __ATOMIC_RELAXED);
  return tile;
}

WsiTile *
wsi_tile_cache_lookup (WsiTileCache * cache, const WsiTileKey * key)
{
  return cache_lookup (cache, key, NULL);
}

WsiTile *
wsi_tile_cache_lookup_or_admit (WsiTileCache * cache, const WsiTileKey * key,
    gboolean * admit)
{
  *admit = FALSE;
  return cache_lookup (cache, key, admit);
}

/* Ends a claim on @key, if any, and wakes its waiters. Under the lock. */
static void
shard_end_claim (Shard * shard, const WsiTileKey * key)
{
  if (g_hash_table_size (shard->claimed) > 0
      && g_hash_table_remove (shard->claimed, key) && shard->claim_waiters > 0)
    g_cond_broadcast (&shard->claim_ended);
}

WsiTile *
wsi_tile_cache_lookup_or_claim (WsiTileCache * cache, const WsiTileKey * key,
    gboolean * claimed)
{
  Shard *shard = shard_for (cache, key);
  WsiTile *tile;

  *claimed = FALSE;
  g_mutex_lock (&shard->lock);
  tile = shard_take (shard, key);
  if (tile == NULL && !g_hash_table_contains (shard->claimed, key)) {
    /* With a zero budget nothing is ever kept: nobody would find the tile
     * after the claim, so there is nothing to wait for. */
    if (shard_budget (cache) > 0)
      g_hash_table_add (shard->claimed, g_memdup2 (key, sizeof (*key)));
    *claimed = TRUE;
  }
  g_mutex_unlock (&shard->lock);

  /* A pending key counts when its waiter comes back for it. */
  if (tile != NULL || *claimed)
    __atomic_fetch_add (tile ? &cache->hits : &cache->misses, 1,
        __ATOMIC_RELAXED);
  return tile;
}

void
wsi_tile_cache_wait_claim (WsiTileCache * cache, const WsiTileKey * key)
{
  Shard *shard = shard_for (cache, key);

  g_mutex_lock (&shard->lock);
  while (g_hash_table_contains (shard->claimed, key)) {
    shard->claim_waiters++;
    g_cond_wait (&shard->claim_ended, &shard->lock);
    shard->claim_waiters--;
  }
  g_mutex_unlock (&shard->lock);
}

void
wsi_tile_cache_abandon (WsiTileCache * cache, const WsiTileKey * key)
{
  Shard *shard = shard_for (cache, key);

  g_mutex_lock (&shard->lock);
  shard_end_claim (shard, key);
  g_mutex_unlock (&shard->lock);
}

guint32 *
wsi_tile_cache_alloc_argb (WsiTileCache * cache, guint width, guint height)
{
  return recycler_take (cache->recycler, (gsize) width * height *
      sizeof (guint32));
}

WsiTile *
wsi_tile_cache_insert (WsiTileCache * cache, const WsiTileKey * key,
    guint32 * argb, guint width, guint height)
{
  Shard *shard = shard_for (cache, key);
  gsize budget = shard_budget (cache);
  WsiTile *tile = tile_new (key, argb, width, height);
  WsiTile *existing;
  GList *evicted;

  g_atomic_int_inc (&cache->recycler->ref_count);
  tile->recycler = cache->recycler;

  /* Nothing is kept with a zero budget; a tile larger than its shard's
   * whole budget would only flush it; an empty one would never be
   * evicted. A claim on the key ends either way (its waiters then decode
   * the tile themselves). */
  if (budget == 0 || tile_bytes (tile) > budget || tile_bytes (tile) == 0) {
    wsi_tile_cache_abandon (cache, key);
    return tile;
  }

  g_mutex_lock (&shard->lock);
  shard_end_claim (shard, key);
  existing = shard_take (shard, key);
  if (existing != NULL) {
    /* Another thread decoded it first: share that one. */
    g_mutex_unlock (&shard->lock);
    wsi_tile_unref (tile);
    return existing;
  }
  tile->cached = TRUE;
  tile->ref_count++;            /* the cache's, not yet visible to others */
  g_hash_table_insert (shard->tiles, &tile->key, tile);
  g_queue_push_head_link (&shard->lru, &tile->lru_link);
  shard->bytes += tile_bytes (tile);
  /* The new tile is the most recent and fits alone: never evicted here. */
  evicted = shard_evict (shard, budget);
  g_mutex_unlock (&shard->lock);

  tile_chain_unref (evicted);
  return tile;
}

guint64
wsi_tile_cache_hits (WsiTileCache * cache)
{
  return __atomic_load_n (&cache->hits, __ATOMIC_RELAXED);
}

guint64
wsi_tile_cache_misses (WsiTileCache * cache)
{
  return __atomic_load_n (&cache->misses, __ATOMIC_RELAXED);
}

gsize
wsi_tile_cache_bytes (WsiTileCache * cache)
{
  gsize total = 0;
  guint i;

  for (i = 0; i < WSI_TILE_CACHE_SHARDS; i++) {
    g_mutex_lock (&cache->shards[i].lock);
    total += cache->shards[i].bytes;
    g_mutex_unlock (&cache->shards[i].lock);
  }
  return total;
}

void
wsi_tile_cache_reset_counters (WsiTileCache * cache)
{
  __atomic_store_n (&cache->hits, 0, __ATOMIC_RELAXED);
  __atomic_store_n (&cache->misses, 0, __ATOMIC_RELAXED);
}

void
wsi_tile_cache_clear (WsiTileCache * cache)
{
  guint i;

  for (i = 0; i < WSI_TILE_CACHE_SHARDS; i++) {
    Shard *shard = &cache->shards[i];
    GList *evicted;

    g_mutex_lock (&shard->lock);
    evicted = shard_evict (shard, 0);
    g_hash_table_remove_all (shard->seen);
    g_queue_clear_full (&shard->seen_fifo, g_free);
    g_queue_init (&shard->seen_fifo);
    g_mutex_unlock (&shard->lock);
    tile_chain_unref (evicted);
  }
  /* and the kept pixel memory (tiles still held give theirs back later) */
  g_mutex_lock (&cache->recycler->lock);
  g_ptr_array_set_size (cache->recycler->free, 0);
  g_mutex_unlock (&cache->recycler->lock);
}

/* Unlinks the tiles outside @band (see wsi_tile_cache_keep_band) from
 * @shard; returns them chained for tile_chain_unref(). */
static GList *
shard_evict_outside (Shard * shard, const WsiTileKey * band)
{
  GList *evicted = NULL, *link = shard->lru.head;

  while (link != NULL) {
    GList *next = link->next;
    WsiTile *tile = link->data;

    if (tile->key.slide_uid != band->slide_uid
        || tile->key.level != band->level || tile->key.scale != band->scale
        || tile->key.row < band->row) {
      g_queue_unlink (&shard->lru, link);
      evicted = shard_drop (shard, link, evicted);
    }
    link = next;
  }
  return evicted;
}

void
wsi_tile_cache_keep_band (WsiTileCache * cache, const WsiTileKey * key)
{
  guint i;

  g_mutex_lock (&cache->band_lock);
  if (cache->band_set && cache->band.slide_uid == key->slide_uid
      && cache->band.level == key->level && cache->band.scale == key->scale
      && key->row <= cache->band.row) {
    g_mutex_unlock (&cache->band_lock);
    return;                     /* nothing new to evict */
  }
  cache->band = *key;
  cache->band.column = 0;
  cache->band_set = TRUE;
  /* Shards are scanned under band_lock so that two threads moving the band
   * at once cannot evict each other's newer band. */
  for (i = 0; i < WSI_TILE_CACHE_SHARDS; i++) {
    Shard *shard = &cache->shards[i];
    GList *evicted;

    g_mutex_lock (&shard->lock);
    evicted = shard_evict_outside (shard, &cache->band);
    g_mutex_unlock (&shard->lock);
    tile_chain_unref (evicted);
  }
  g_mutex_unlock (&cache->band_lock);
}
