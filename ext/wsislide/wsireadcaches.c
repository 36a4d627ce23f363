/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsireadcaches.c: see wsireadcaches.h. The registry is qdata on the
 * top-level bin: a table backend -> caches that does not own them; the
 * caches remove themselves when their last user releases them. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsireadcaches.h"

#include <gst/wsi/wsitoplevel.h>

#include <string.h>

struct _WsiReadCaches
{
  guint users;                  /* under registry_lock */
  GWeakRef owner;               /* the top-level bin; empty when private */
  gchar *backend;
  WsiSlideCache *slides;
  WsiTileCache *tiles;
};

static GMutex registry_lock;

static GQuark
registry_quark (void)
{
  return g_quark_from_static_string ("wsi-read-caches");
}

/* The outermost bin holding @element (a ref), or NULL outside any bin. */
static GstObject *
top_level_of (GstElement * element)
{
  GstElement *top = wsi_element_get_top_level (element);

  if (top == element) {
    gst_object_unref (top);
    return NULL;
  }
  return GST_OBJECT (top);
}

static WsiReadCaches *
read_caches_new (const gchar * backend, guint max_open, gsize tile_bytes)
{
  WsiReadCaches *caches = g_new0 (WsiReadCaches, 1);

  caches->users = 1;
  g_weak_ref_init (&caches->owner, NULL);
  caches->backend = g_strdup (backend);
  caches->slides = wsi_slide_cache_new (max_open);
  wsi_slide_cache_set_backend (caches->slides, backend);
  caches->tiles = wsi_tile_cache_new (tile_bytes);
  return caches;
}

/* A later member asking for more gets more; nobody shrinks the others'. */
static void
raise_limits (WsiReadCaches * caches, guint max_open, gsize tile_bytes)
{
  if (wsi_slide_cache_get_max_open (caches->slides) < max_open)
    wsi_slide_cache_set_max_open (caches->slides, max_open);
  if (wsi_tile_cache_get_max_bytes (caches->tiles) < tile_bytes)
    wsi_tile_cache_set_max_bytes (caches->tiles, tile_bytes);
}

WsiReadCaches *
wsi_read_caches_acquire (GstElement * element, const gchar * backend,
    guint max_open, gsize tile_bytes)
{
  GstObject *top = top_level_of (element);
  GHashTable *registry;
  WsiReadCaches *caches;

  if (top == NULL)
    return read_caches_new (backend, max_open, tile_bytes);

  g_mutex_lock (&registry_lock);
  registry = g_object_get_qdata (G_OBJECT (top), registry_quark ());
  if (registry == NULL) {
    registry = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
    g_object_set_qdata_full (G_OBJECT (top), registry_quark (), registry,
        (GDestroyNotify) g_hash_table_unref);
  }
  caches = g_hash_table_lookup (registry, backend);
  if (caches != NULL) {
    caches->users++;
    raise_limits (caches, max_open, tile_bytes);
    GST_DEBUG_OBJECT (element, "shares the %s read caches of %s (%u users)",
        backend, GST_OBJECT_NAME (top), caches->users);
  } else {
    caches = read_caches_new (backend, max_open, tile_bytes);
    g_weak_ref_set (&caches->owner, top);
    g_hash_table_insert (registry, g_strdup (backend), caches);
  }
  g_mutex_unlock (&registry_lock);
  gst_object_unref (top);
  return caches;
}

void
wsi_read_caches_release (WsiReadCaches * caches)
{
  GObject *top;
  GHashTable *registry;

  g_mutex_lock (&registry_lock);
  if (--caches->users > 0) {
    g_mutex_unlock (&registry_lock);
    return;
  }
  top = g_weak_ref_get (&caches->owner);
  if (top != NULL) {
    registry = g_object_get_qdata (top, registry_quark ());
    if (registry != NULL
        && g_hash_table_lookup (registry, caches->backend) == caches)
      g_hash_table_remove (registry, caches->backend);
  }
  g_mutex_unlock (&registry_lock);
  if (top != NULL)
    g_object_unref (top);

  g_weak_ref_clear (&caches->owner);
  wsi_slide_cache_free (caches->slides);
  wsi_tile_cache_free (caches->tiles);
  g_free (caches->backend);
  g_free (caches);
}

WsiSlideCache *
wsi_read_caches_slides (WsiReadCaches * caches)
{
  return caches->slides;
}

WsiTileCache *
wsi_read_caches_tiles (WsiReadCaches * caches)
{
  return caches->tiles;
}

guint
wsi_read_caches_users (WsiReadCaches * caches)
{
  guint users;

  g_mutex_lock (&registry_lock);
  users = caches->users;
  g_mutex_unlock (&registry_lock);
  return users;
}

/* ---- an element's side ---------------------------------------------------- */

void
wsi_read_caches_client_init (WsiReadCachesClient * client, guint max_open,
    guint tile_cache_mb)
{
  memset (client, 0, sizeof (*client));
  g_mutex_init (&client->lock);
  client->max_open = max_open;
  client->tile_cache_mb = tile_cache_mb;
}

void
wsi_read_caches_client_clear (WsiReadCachesClient * client)
{
  wsi_read_caches_client_stop (client);
  g_mutex_clear (&client->lock);
}

void
wsi_read_caches_client_start (WsiReadCachesClient * client,
    GstElement * element, const gchar * backend)
{
  WsiReadCaches *caches;
  guint max_open;
  gsize tile_bytes;

  wsi_read_caches_client_stop (client);
  g_mutex_lock (&client->lock);
  max_open = client->max_open;
  tile_bytes = (gsize) client->tile_cache_mb << 20;
  g_mutex_unlock (&client->lock);

  caches = wsi_read_caches_acquire (element, backend, max_open, tile_bytes);
  /* Counted from the start of the stream (no tile flowed yet). */
  wsi_tile_cache_reset_counters (caches->tiles);
  g_mutex_lock (&client->lock);
  client->caches = caches;
  g_mutex_unlock (&client->lock);
}

void
wsi_read_caches_client_stop (WsiReadCachesClient * client)
{
  WsiReadCaches *caches;

  g_mutex_lock (&client->lock);
  caches = client->caches;
  client->caches = NULL;
  if (caches != NULL) {
    client->hits_at_stop = wsi_tile_cache_hits (caches->tiles);
    client->misses_at_stop = wsi_tile_cache_misses (caches->tiles);
  }
  g_mutex_unlock (&client->lock);
  if (caches != NULL)
    wsi_read_caches_release (caches);
}

WsiSlideCache *
wsi_read_caches_client_slides (WsiReadCachesClient * client)
{
  return client->caches ? client->caches->slides : NULL;
}

WsiTileCache *
wsi_read_caches_client_tiles (WsiReadCachesClient * client)
{
  return client->caches ? client->caches->tiles : NULL;
}

void
wsi_read_caches_client_set_max_open (WsiReadCachesClient * client,
    guint max_open)
{
  g_mutex_lock (&client->lock);
  client->max_open = max_open;
  if (client->caches != NULL)
    wsi_slide_cache_set_max_open (client->caches->slides, max_open);
  g_mutex_unlock (&client->lock);
}

guint
wsi_read_caches_client_get_max_open (WsiReadCachesClient * client)
{
  guint max_open;

  g_mutex_lock (&client->lock);
  max_open = client->max_open;
  g_mutex_unlock (&client->lock);
  return max_open;
}

void
wsi_read_caches_client_set_tile_cache_mb (WsiReadCachesClient * client,
    guint mb)
{
  g_mutex_lock (&client->lock);
  client->tile_cache_mb = mb;
  if (client->caches != NULL)
    wsi_tile_cache_set_max_bytes (client->caches->tiles, (gsize) mb << 20);
  g_mutex_unlock (&client->lock);
}

guint
wsi_read_caches_client_get_tile_cache_mb (WsiReadCachesClient * client)
{
  guint mb;

  g_mutex_lock (&client->lock);
  mb = client->tile_cache_mb;
  g_mutex_unlock (&client->lock);
  return mb;
}

guint64
wsi_read_caches_client_hits (WsiReadCachesClient * client)
{
  guint64 hits;

  g_mutex_lock (&client->lock);
  hits = client->caches ? wsi_tile_cache_hits (client->caches->tiles) :
      client->hits_at_stop;
  g_mutex_unlock (&client->lock);
  return hits;
}

guint64
wsi_read_caches_client_misses (WsiReadCachesClient * client)
{
  guint64 misses;

  g_mutex_lock (&client->lock);
  misses = client->caches ? wsi_tile_cache_misses (client->caches->tiles) :
      client->misses_at_stop;
  g_mutex_unlock (&client->lock);
  return misses;
}
