/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsimaskcache.c: see wsimaskcache.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "wsimaskcache.h"
#include "wsimaskruns.h"

GST_DEBUG_CATEGORY_STATIC (wsi_mask_cache_debug);

/* One cached mask: @runs holds its run lengths (mask_encode()), the runs
 * alternating between @values, or the raw bytes when coding would not make
 * it smaller (@coded FALSE). Each
 * hit decodes a fresh memory, so downstream can never alter the cache. */
typedef struct
{
  gchar *path;
  gint width;
  gint height;
  GBytes *runs;
  gboolean coded;
  guint8 values[2];
  gdouble fraction;
} MaskCacheEntry;

struct _WsiMaskCache
{
  guint max_masks;
  gsize max_bytes;
  /* MaskCacheEntry*, most recently used first, and the link of each path
   * in it: a visit looks its slide up three or four times, and walking a
   * list of thousands of entries for each cost more than the hit saved. */
  GQueue queue;
  GHashTable *index;            /* entry->path (not owned) -> GList* */
  gsize bytes;                  /* coded bytes held by the entries */
};


/* Run-length codes @n mask bytes. A mask holds two values (tissue and
 * glass), so each run's value is the other one than its predecessor's:
 * only the lengths are kept, as varints, alternating from @values[0] (real
 * H&E masks at 1024 px have tens of thousands of short runs: one byte each
 * instead of five with a value byte and a 32-bit length, issue 23).
 * Returns NULL when that is no smaller than the mask itself (a speckled
 * mask) or when the mask holds a third value. */
static GBytes *
mask_encode (const guint8 * mask, gsize n, guint8 values[2])
{
  GByteArray *runs = g_byte_array_new ();
  gsize i = 0, k = 0;

  values[0] = values[1] = n > 0 ? mask[0] : 0;
  if (n > G_MAXUINT32)
    return NULL;                /* a run length is 32 bits */
  while (i < n) {
    guint8 value = mask[i];
    gsize length = wsi_mask_runs_length_at (mask, n, i);

    if (k == 1)
      values[1] = value;        /* the second run names the other value */
    else if (k > 1 && value != values[k & 1]) {
      g_byte_array_unref (runs);
      return NULL;
    }
    wsi_mask_runs_put_length (runs, (guint32) length);
    i += length;
    k++;
    if (runs->len >= n) {
      g_byte_array_unref (runs);
      return NULL;
    }
  }
  return g_byte_array_free_to_bytes (runs);
}

/* A new memory of @n bytes holding the mask @entry keeps. */
static GstMemory *
mask_decode (const MaskCacheEntry * entry, gsize n)
{
  GstMemory *memory = gst_allocator_alloc (NULL, n, NULL);
  gsize size, at = 0, i = 0, k = 0;
  guint32 length;
  const guint8 *runs = g_bytes_get_data (entry->runs, &size);
  GstMapInfo map;

  gst_memory_map (memory, &map, GST_MAP_WRITE);
  if (!entry->coded) {
    memcpy (map.data, runs, MIN (size, n));
  } else {
    while (at < n && wsi_mask_runs_take_length (runs, size, &i, &length)) {
      gsize span = MIN ((gsize) length, n - at);

      memset (map.data + at, entry->values[k++ & 1], span);
      at += span;
    }
  }
  gst_memory_unmap (memory, &map);
  return memory;
}

static void
mask_cache_entry_free (MaskCacheEntry * entry)
{
  g_bytes_unref (entry->runs);
  g_free (entry->path);
  g_free (entry);
}

void
wsi_mask_cache_clear (WsiMaskCache * cache)
{
  g_hash_table_remove_all (cache->index);
  g_queue_clear_full (&cache->queue, (GDestroyNotify) mask_cache_entry_free);
  cache->bytes = 0;
}

/* Drops @link's entry from the cache (queue, index and bytes). */
static void
mask_cache_remove (WsiMaskCache * cache, GList * link)
{
  MaskCacheEntry *entry = link->data;

  g_hash_table_remove (cache->index, entry->path);
  g_queue_delete_link (&cache->queue, link);
  cache->bytes -= g_bytes_get_size (entry->runs);
  mask_cache_entry_free (entry);
}

static void
mask_cache_pop_oldest (WsiMaskCache * cache)
{
  mask_cache_remove (cache, cache->queue.tail);
}

static void
mask_cache_trim (WsiMaskCache * cache)
{
  while (cache->queue.length > cache->max_masks
      || (cache->queue.length > 0 && cache->bytes > cache->max_bytes))
    mask_cache_pop_oldest (cache);
}

/* Finds @path (any overview size when @width is 0) and makes it the most
 * recently used entry. */
static MaskCacheEntry *
mask_cache_lookup (WsiMaskCache * cache, const gchar * path, gint width,
    gint height)
{
  GList *l = g_hash_table_lookup (cache->index, path);
  MaskCacheEntry *entry = l != NULL ? l->data : NULL;

  if (entry == NULL
      || (width != 0 && (entry->width != width || entry->height != height)))
    return NULL;
  g_queue_unlink (&cache->queue, l);
  g_queue_push_head_link (&cache->queue, l);
  return entry;
}

/* Evicts least recently used entries until one more entry of @size bytes
 * fits; returns whether the cache was full (anything had to go). */
static gboolean
mask_cache_make_room (WsiMaskCache * cache, gsize size)
{
  gboolean full = FALSE;

  while (cache->queue.length > 0
      && (cache->queue.length + 1 > cache->max_masks
          || cache->bytes + size > cache->max_bytes)) {
    mask_cache_pop_oldest (cache);
    full = TRUE;
  }
  return full;
}

/* Returns whether the mask was kept (not with mask-cache-size=0, nor
 * when it alone outgrows the byte cap).
 * @used: the mask was just handed to a slide buffer (computed, or loaded
 * for it). Otherwise it was loaded for a visit still to come (the query
 * of a visit planned ahead) and goes first in line even when the cache is
 * full, so that the next new masks do not evict it before that visit. */
gboolean
wsi_mask_cache_insert (WsiMaskCache * cache, const gchar * path, gint width,
    gint height, GstMemory * mask, gdouble fraction, gboolean used)
{
  MaskCacheEntry *entry;
  GstMapInfo map;
  gsize size;

  if (cache->max_masks == 0)
    return FALSE;
  /* Same path, other overview size: the new mask replaces the old one. */
  if (mask_cache_lookup (cache, path, 0, 0) != NULL)
    mask_cache_remove (cache, cache->queue.head);

  entry = g_new0 (MaskCacheEntry, 1);
  entry->path = g_strdup (path);
  entry->width = width;
  entry->height = height;
  gst_memory_map (mask, &map, GST_MAP_READ);
  entry->runs = mask_encode (map.data, map.size, entry->values);
  entry->coded = entry->runs != NULL;
  if (!entry->coded)
    entry->runs = g_bytes_new (map.data, map.size);
  gst_memory_unmap (mask, &map);
  entry->fraction = fraction;
  size = g_bytes_get_size (entry->runs);
  if (size > cache->max_bytes) {
    mask_cache_entry_free (entry);
    return FALSE;
  }
  /* Full: a used mask goes last in line (see the section above), so
   * that a cycle over more slides than fit keeps hitting the rest. */
  if (mask_cache_make_room (cache, size) && used) {
    g_queue_push_tail (&cache->queue, entry);
    g_hash_table_insert (cache->index, entry->path, cache->queue.tail);
  } else {
    g_queue_push_head (&cache->queue, entry);
    g_hash_table_insert (cache->index, entry->path, cache->queue.head);
  }
  cache->bytes += size;
  GST_CAT_DEBUG (wsi_mask_cache_debug, "cached the %dx%d mask of %s in %" G_GSIZE_FORMAT
      " bytes (%s): %u masks, %" G_GSIZE_FORMAT " bytes held", width, height,
      path, g_bytes_get_size (entry->runs), entry->coded ? "run-length coded"
      : "raw", cache->queue.length, cache->bytes);
  return TRUE;
}

WsiMaskCache *
wsi_mask_cache_new (guint max_masks, gsize max_bytes)
{
  WsiMaskCache *cache = g_new0 (WsiMaskCache, 1);

  if (wsi_mask_cache_debug == NULL)
    GST_DEBUG_CATEGORY_INIT (wsi_mask_cache_debug, "tissuemask-cache", 0,
        "tissuemask's in-memory mask cache");
  cache->max_masks = max_masks;
  cache->max_bytes = max_bytes;
  g_queue_init (&cache->queue);
  cache->index = g_hash_table_new (g_str_hash, g_str_equal);
  return cache;
}

void
wsi_mask_cache_free (WsiMaskCache * cache)
{
  if (cache == NULL)
    return;
  wsi_mask_cache_clear (cache);
  g_hash_table_unref (cache->index);
  g_free (cache);
}

void
wsi_mask_cache_set_max_masks (WsiMaskCache * cache, guint max_masks)
{
  cache->max_masks = max_masks;
  mask_cache_trim (cache);
}

guint
wsi_mask_cache_get_max_masks (const WsiMaskCache * cache)
{
  return cache->max_masks;
}

gsize
wsi_mask_cache_get_bytes (const WsiMaskCache * cache)
{
  return cache->bytes;
}

gboolean
wsi_mask_cache_touch (WsiMaskCache * cache, const gchar * path)
{
  return mask_cache_lookup (cache, path, 0, 0) != NULL;
}

GstMemory *
wsi_mask_cache_get (WsiMaskCache * cache, const gchar * path, gint width,
    gint height, gdouble * fraction)
{
  MaskCacheEntry *entry = mask_cache_lookup (cache, path, width, height);

  if (entry == NULL)
    return NULL;
  *fraction = entry->fraction;
  return mask_decode (entry, (gsize) width * height);
}
