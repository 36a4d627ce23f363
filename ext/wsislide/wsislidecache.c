/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsislidecache.c: patchreader's open slides (see wsislidecache.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsislidecache.h"

#include <gst/wsi/wsilockedstr.h>

struct _WsiSlideCache
{
  GMutex lock;
  gchar *backend;               /* WSI_BACKEND_* for slides opened next */
  GHashTable *by_path;          /* path -> WsiSlideHandle (key owned by it) */
  GQueue lru;                   /* head = most recently used */
  guint max_open;
};

static void
wsi_slide_handle_free (WsiSlideHandle * handle)
{
  wsi_slide_close (handle->slide);
  g_free (handle->path);
  g_free (handle);
}

WsiSlideCache *
wsi_slide_cache_new (guint max_open)
{
  WsiSlideCache *cache = g_new0 (WsiSlideCache, 1);

  g_mutex_init (&cache->lock);
  cache->backend = g_strdup (WSI_BACKEND_AUTO);
  cache->by_path = g_hash_table_new (g_str_hash, g_str_equal);
  g_queue_init (&cache->lru);
  cache->max_open = max_open;
  return cache;
}

static void
wsi_slide_cache_forget_locked (WsiSlideCache * cache, WsiSlideHandle * handle)
{
  g_hash_table_remove (cache->by_path, handle->path);
  g_queue_unlink (&cache->lru, &handle->lru_link);
  handle->cached = FALSE;
}

/* Takes the least recently used idle handles out of an over-full cache;
 * returns them for closing outside the lock (closing can take a while). */
static GSList *
wsi_slide_cache_trim_locked (WsiSlideCache * cache)
{
  GSList *to_close = NULL;
  GList *link = cache->lru.tail;

  while (link != NULL && g_queue_get_length (&cache->lru) > cache->max_open) {
    WsiSlideHandle *handle = link->data;
    GList *prev = link->prev;

    if (handle->users == 0) {
      wsi_slide_cache_forget_locked (cache, handle);
      to_close = g_slist_prepend (to_close, handle);
    }
    link = prev;
  }
  return to_close;
}

static void
wsi_slide_cache_close_all_of (GSList * handles)
{
  g_slist_free_full (handles, (GDestroyNotify) wsi_slide_handle_free);
}

static WsiSlideHandle *
wsi_slide_cache_lookup_locked (WsiSlideCache * cache, const gchar * path)
{
  WsiSlideHandle *handle = g_hash_table_lookup (cache->by_path, path);

  if (handle != NULL) {
    handle->users++;
    g_queue_unlink (&cache->lru, &handle->lru_link);
    g_queue_push_head_link (&cache->lru, &handle->lru_link);
  }
  return handle;
}

/* Returns the open slide for @path, opening it when needed (outside the
 * lock, so that other workers keep reading meanwhile). */
WsiSlideHandle *
wsi_slide_cache_acquire (WsiSlideCache * cache, const gchar * path, GError ** error)
{
  WsiSlideHandle *handle;
  WsiSlide *slide;
  GSList *to_close;
  gchar *backend;

  g_mutex_lock (&cache->lock);
  handle = wsi_slide_cache_lookup_locked (cache, path);
  g_mutex_unlock (&cache->lock);
  if (handle != NULL)
    return handle;

  backend = wsi_slide_cache_get_backend (cache);
  slide = wsi_slide_open (path, backend, error);
  g_free (backend);
  if (slide == NULL)
    return NULL;

  g_mutex_lock (&cache->lock);
  handle = wsi_slide_cache_lookup_locked (cache, path);
  if (handle != NULL) {
    /* Another worker opened it first. */
    g_mutex_unlock (&cache->lock);
    wsi_slide_close (slide);
    return handle;
  }
  handle = g_new0 (WsiSlideHandle, 1);
  handle->path = g_strdup (path);
  handle->slide = slide;
  handle->users = 1;
  handle->cached = TRUE;
  handle->lru_link.data = handle;
  g_hash_table_insert (cache->by_path, handle->path, handle);
  g_queue_push_head_link (&cache->lru, &handle->lru_link);
  to_close = wsi_slide_cache_trim_locked (cache);
  g_mutex_unlock (&cache->lock);

  wsi_slide_cache_close_all_of (to_close);
  return handle;
}

void
wsi_slide_cache_release (WsiSlideCache * cache, WsiSlideHandle * handle)
{
  GSList *to_close = NULL;

  g_mutex_lock (&cache->lock);
  handle->users--;
  if (!handle->cached && handle->users == 0)
    to_close = g_slist_prepend (to_close, handle);
  else
    to_close = wsi_slide_cache_trim_locked (cache);
  g_mutex_unlock (&cache->lock);

  wsi_slide_cache_close_all_of (to_close);
}

/* OpenSlide errors stick to a handle: make the next read open a new one. */
void
wsi_slide_cache_evict (WsiSlideCache * cache, WsiSlideHandle * handle)
{
  g_mutex_lock (&cache->lock);
  if (handle->cached)
    wsi_slide_cache_forget_locked (cache, handle);
  g_mutex_unlock (&cache->lock);
}

void
wsi_slide_cache_set_max_open (WsiSlideCache * cache, guint max_open)
{
  GSList *to_close;

  g_mutex_lock (&cache->lock);
  cache->max_open = max_open;
  to_close = wsi_slide_cache_trim_locked (cache);
  g_mutex_unlock (&cache->lock);
  wsi_slide_cache_close_all_of (to_close);
}

/* Closes every slide; only called when no worker runs. */
void
wsi_slide_cache_clear (WsiSlideCache * cache)
{
  GSList *to_close = NULL;
  GList *link;

  g_mutex_lock (&cache->lock);
  while ((link = cache->lru.head) != NULL) {
    WsiSlideHandle *handle = link->data;

    wsi_slide_cache_forget_locked (cache, handle);
    to_close = g_slist_prepend (to_close, handle);
  }
  g_mutex_unlock (&cache->lock);
  wsi_slide_cache_close_all_of (to_close);
}

gchar *
wsi_slide_cache_file_name (const gchar * uri, const gchar * path)
{
  gchar *file = uri ? g_filename_from_uri (uri, NULL, NULL) : NULL;

  return file ? file : g_strdup (path);
}

void
wsi_slide_cache_free (WsiSlideCache * cache)
{
  if (cache == NULL)
    return;
  wsi_slide_cache_clear (cache);
  g_hash_table_unref (cache->by_path);
  g_mutex_clear (&cache->lock);
  g_free (cache->backend);
  g_free (cache);
}

guint
wsi_slide_cache_get_max_open (WsiSlideCache * cache)
{
  guint max_open;

  g_mutex_lock (&cache->lock);
  max_open = cache->max_open;
  g_mutex_unlock (&cache->lock);
  return max_open;
}

void
wsi_slide_cache_set_backend (WsiSlideCache * cache, const gchar * name)
{
  wsi_locked_str_set (&cache->lock, &cache->backend,
      name ? name : WSI_BACKEND_AUTO);
}

gchar *
wsi_slide_cache_get_backend (WsiSlideCache * cache)
{
  return wsi_locked_str_dup (&cache->lock, &cache->backend);
}

gboolean
wsi_slide_cache_read_isolated (WsiSlideCache * cache, const gchar * path,
    WsiSlideHandle * handle, WsiReadContext * rctx,
    const WsiReadRequest * request, const WsiImage * image,
    WsiReadReport * report, GError ** error)
{
  WsiSlide *fresh;
  gchar *backend;
  gboolean ok;

  ok = wsi_slide_read (handle->slide, rctx, request, image, report, error);
  if (!ok && report->sticky)
    wsi_slide_cache_evict (cache, handle);
  wsi_slide_cache_release (cache, handle);
  if (ok || !report->sticky)
    return ok;

  g_clear_error (error);
  backend = wsi_slide_cache_get_backend (cache);
  fresh = wsi_slide_open (path, backend, error);
  g_free (backend);
  if (fresh == NULL)
    return FALSE;
  ok = wsi_slide_read (fresh, rctx, request, image, report, error);
  wsi_slide_close (fresh);
  return ok;
}
