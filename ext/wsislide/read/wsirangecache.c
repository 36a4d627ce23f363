/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsirangecache.c: an LRU of fetched byte ranges per owner, each owner's
 * extents in a tree sorted by offset (see wsirangecache.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "wsirangecache.h"

typedef struct
{
  gconstpointer owner;
  guint64 offset;
  GBytes *bytes;
  GList lru;                    /* link in cache->lru; data = this extent */
} Extent;

struct _WsiRangeCache
{
  GMutex lock;
  GHashTable *owners;           /* owner -> GTree (guint64 * offset -> Extent) */
  GQueue lru;                   /* head: most recently used */
  guint64 bytes;
  guint64 max_bytes;
};

static gint
offset_compare (gconstpointer a, gconstpointer b, gpointer user_data)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;

  return x < y ? -1 : x > y ? 1 : 0;
}

static void
extent_free (Extent * extent)
{
  g_bytes_unref (extent->bytes);
  g_free (extent);
}

static GTree *
owner_tree_new (void)
{
  return g_tree_new_full (offset_compare, NULL, NULL,
      (GDestroyNotify) extent_free);
}

WsiRangeCache *
wsi_range_cache_new (guint64 max_bytes)
{
  WsiRangeCache *cache = g_new0 (WsiRangeCache, 1);

  g_mutex_init (&cache->lock);
  cache->owners = g_hash_table_new_full (NULL, NULL, NULL,
      (GDestroyNotify) g_tree_unref);
  g_queue_init (&cache->lru);
  cache->max_bytes = max_bytes;
  return cache;
}

void
wsi_range_cache_free (WsiRangeCache * cache)
{
  if (cache == NULL)
    return;
  g_hash_table_unref (cache->owners);
  g_mutex_clear (&cache->lock);
  g_free (cache);
}

/* Removes @extent from the LRU, the byte count and its tree (which frees
 * it). Called with the lock held. */
static void
extent_remove (WsiRangeCache * cache, Extent * extent)
{
  GTree *tree = g_hash_table_lookup (cache->owners, extent->owner);

  g_queue_unlink (&cache->lru, &extent->lru);
  cache->bytes -= g_bytes_get_size (extent->bytes);
  g_tree_remove (tree, &extent->offset);
}

static void
evict_to (WsiRangeCache * cache, guint64 bound)
{
  while (cache->bytes > bound && cache->lru.tail != NULL)
    extent_remove (cache, cache->lru.tail->data);
}

void
wsi_range_cache_set_max_bytes (WsiRangeCache * cache, guint64 max_bytes)
{
  g_mutex_lock (&cache->lock);
  cache->max_bytes = max_bytes;
  evict_to (cache, max_bytes);
  g_mutex_unlock (&cache->lock);
}

guint64
wsi_range_cache_get_max_bytes (WsiRangeCache * cache)
{
  guint64 max;

  g_mutex_lock (&cache->lock);
  max = cache->max_bytes;
  g_mutex_unlock (&cache->lock);
  return max;
}

/* The extent with the greatest offset <= @offset, when it covers the whole
 * range. Called with the lock held. */
static Extent *
find_covering (WsiRangeCache * cache, gconstpointer owner, guint64 offset,
    gsize length)
{
  GTree *tree = g_hash_table_lookup (cache->owners, owner);
  GTreeNode *node;
  Extent *extent;

  if (tree == NULL)
    return NULL;
  node = g_tree_upper_bound (tree, &offset);
  node = node != NULL ? g_tree_node_previous (node) : g_tree_node_last (tree);
  if (node == NULL)
    return NULL;
  extent = g_tree_node_value (node);
  if (offset - extent->offset + length > g_bytes_get_size (extent->bytes))
    return NULL;
  return extent;
}

gboolean
wsi_range_cache_lookup (WsiRangeCache * cache, gconstpointer owner,
    guint64 offset, gsize length, guint8 * dest)
{
  Extent *extent;

  g_mutex_lock (&cache->lock);
  extent = find_covering (cache, owner, offset, length);
  if (extent != NULL) {
    const guint8 *data = g_bytes_get_data (extent->bytes, NULL);
    memcpy (dest, data + (offset - extent->offset), length);
    g_queue_unlink (&cache->lru, &extent->lru);
    g_queue_push_head_link (&cache->lru, &extent->lru);
  }
  g_mutex_unlock (&cache->lock);
  return extent != NULL;
}

gboolean
wsi_range_cache_contains (WsiRangeCache * cache, gconstpointer owner,
    guint64 offset, gsize length)
{
  gboolean found;

  g_mutex_lock (&cache->lock);
  found = find_covering (cache, owner, offset, length) != NULL;
  g_mutex_unlock (&cache->lock);
  return found;
}

void
wsi_range_cache_insert (WsiRangeCache * cache, gconstpointer owner,
    guint64 offset, GBytes * bytes)
{
  gsize size = g_bytes_get_size (bytes);
  GTree *tree;
  Extent *extent, *old;

  g_mutex_lock (&cache->lock);
  if (size == 0 || size > cache->max_bytes) {
    g_mutex_unlock (&cache->lock);
    return;
  }
  tree = g_hash_table_lookup (cache->owners, owner);
  if (tree == NULL) {
    tree = owner_tree_new ();
    g_hash_table_insert (cache->owners, (gpointer) owner, tree);
  }
  /* One extent per offset: the longer one stays. */
  old = g_tree_lookup (tree, &offset);
  if (old != NULL && g_bytes_get_size (old->bytes) >= size) {
    g_mutex_unlock (&cache->lock);
    return;
  }
  if (old != NULL)
    extent_remove (cache, old);
  extent = g_new0 (Extent, 1);
  extent->owner = owner;
  extent->offset = offset;
  extent->bytes = g_bytes_ref (bytes);
  extent->lru.data = extent;
  g_tree_insert (tree, &extent->offset, extent);
  g_queue_push_head_link (&cache->lru, &extent->lru);
  cache->bytes += size;
  evict_to (cache, cache->max_bytes);
  g_mutex_unlock (&cache->lock);
}

void
wsi_range_cache_drop_owner (WsiRangeCache * cache, gconstpointer owner)
{
  GTree *tree;
  GList *link, *next;

  g_mutex_lock (&cache->lock);
  tree = g_hash_table_lookup (cache->owners, owner);
  if (tree != NULL) {
    for (link = cache->lru.head; link != NULL; link = next) {
      Extent *extent = link->data;
      next = link->next;
      if (extent->owner == owner) {
        g_queue_unlink (&cache->lru, link);
        cache->bytes -= g_bytes_get_size (extent->bytes);
      }
    }
    g_hash_table_remove (cache->owners, owner);
  }
  g_mutex_unlock (&cache->lock);
}

guint64
wsi_range_cache_get_bytes (WsiRangeCache * cache)
{
  guint64 bytes;

  g_mutex_lock (&cache->lock);
  bytes = cache->bytes;
  g_mutex_unlock (&cache->lock);
  return bytes;
}
