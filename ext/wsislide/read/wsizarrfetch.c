/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsizarrfetch.c: remote OME-Zarr chunks fetched ahead (see
 * wsizarrfetch.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsizarrfetch.h"
#include "wsibytesource.h"

typedef enum
{
  CHUNK_PENDING,
  CHUNK_DONE,
  CHUNK_ABSENT,
  CHUNK_FAILED,
} ChunkState;

typedef struct
{
  gchar *location;              /* the key; also in the order queue */
  gsize limit;
  ChunkState state;
  guint8 *data;
  gsize size;
} Chunk;

struct _WsiZarrFetch
{
  WsiZarrObjectReadFunc read;
  GThreadPool *pool;
  GMutex lock;
  GCond done;
  GHashTable *chunks;           /* location -> Chunk */
  GQueue order;                 /* locations, oldest hint first */
};

static void
chunk_free (gpointer data)
{
  Chunk *c = data;

  g_free (c->data);
  g_free (c->location);
  g_free (c);
}

/* Pool thread: one whole-object read. @data is the Chunk (pending chunks
 * are never evicted, so it stays alive until this sets its state). */
static void
fetch_one (gpointer data, gpointer user_data)
{
  Chunk *c = data;
  WsiZarrFetch *fetch = user_data;
  GError *error = NULL;
  gsize size = 0;
  guint8 *bytes = fetch->read (c->location, c->limit, &size, &error);

  g_mutex_lock (&fetch->lock);
  if (bytes != NULL) {
    c->data = bytes;
    c->size = size;
    c->state = CHUNK_DONE;
  } else {
    c->state = g_error_matches (error, WSI_BYTE_SOURCE_ERROR,
        WSI_BYTE_SOURCE_ERROR_NOT_FOUND) ? CHUNK_ABSENT : CHUNK_FAILED;
  }
  g_cond_broadcast (&fetch->done);
  g_mutex_unlock (&fetch->lock);
  g_clear_error (&error);
}

WsiZarrFetch *
wsi_zarr_fetch_new (WsiZarrObjectReadFunc read)
{
  WsiZarrFetch *fetch = g_new0 (WsiZarrFetch, 1);

  fetch->read = read;
  g_mutex_init (&fetch->lock);
  g_cond_init (&fetch->done);
  fetch->chunks = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
      chunk_free);
  g_queue_init (&fetch->order);
  fetch->pool = g_thread_pool_new (fetch_one, fetch, WSI_ZARR_FETCH_THREADS,
      FALSE, NULL);
  return fetch;
}

void
wsi_zarr_fetch_free (WsiZarrFetch * fetch)
{
  if (fetch == NULL)
    return;
  /* queued fetches are dropped, running ones finish first */
  g_thread_pool_free (fetch->pool, TRUE, TRUE);
  g_hash_table_destroy (fetch->chunks);
  g_queue_clear (&fetch->order);
  g_cond_clear (&fetch->done);
  g_mutex_clear (&fetch->lock);
  g_free (fetch);
}

/* With the lock: makes room for one more chunk by forgetting the oldest
 * one not in flight; FALSE when every chunk held is in flight. */
static gboolean
make_room (WsiZarrFetch * fetch)
{
  GList *l;

  if (g_hash_table_size (fetch->chunks) < WSI_ZARR_FETCH_MAX_HELD)
    return TRUE;
  for (l = fetch->order.head; l != NULL; l = l->next) {
    Chunk *c = g_hash_table_lookup (fetch->chunks, l->data);
    if (c->state != CHUNK_PENDING) {
      g_queue_delete_link (&fetch->order, l);
      g_hash_table_remove (fetch->chunks, c->location);
      return TRUE;
    }
  }
  return FALSE;
}

void
wsi_zarr_fetch_hint (WsiZarrFetch * fetch, const gchar * location,
    gsize limit)
{
  Chunk *c;

  g_mutex_lock (&fetch->lock);
  if (g_hash_table_contains (fetch->chunks, location)
      || !make_room (fetch)) {
    g_mutex_unlock (&fetch->lock);
    return;
  }
  c = g_new0 (Chunk, 1);
  c->location = g_strdup (location);
  c->limit = limit;
  c->state = CHUNK_PENDING;
  g_hash_table_insert (fetch->chunks, c->location, c);
  g_queue_push_tail (&fetch->order, c->location);
  g_mutex_unlock (&fetch->lock);
  g_thread_pool_push (fetch->pool, c, NULL);
}

guint8 *
wsi_zarr_fetch_get (WsiZarrFetch * fetch, const gchar * location,
    gsize limit, gsize * size, GError ** error)
{
  guint8 *data = NULL;
  ChunkState state;
  Chunk *c;

  g_mutex_lock (&fetch->lock);
  c = g_hash_table_lookup (fetch->chunks, location);
  if (c == NULL) {
    /* not hinted (or evicted): read here, the chunk marked in flight so
     * that a hint arriving meanwhile does not fetch it a second time */
    c = g_new0 (Chunk, 1);
    c->location = g_strdup (location);
    c->state = CHUNK_PENDING;
    g_hash_table_insert (fetch->chunks, c->location, c);
    g_queue_push_tail (&fetch->order, c->location);
    g_mutex_unlock (&fetch->lock);
    data = fetch->read (location, limit, size, error);
    g_mutex_lock (&fetch->lock);
    g_queue_remove (&fetch->order, c->location);
    g_hash_table_remove (fetch->chunks, location);
    g_cond_broadcast (&fetch->done);
    g_mutex_unlock (&fetch->lock);
    return data;
  }
  while (c->state == CHUNK_PENDING) {
    g_cond_wait (&fetch->done, &fetch->lock);
    /* look again: another reader waiting for the same chunk may have
     * taken (and freed) it, and a chunk a reader reads itself is gone
     * when that read is done */
    c = g_hash_table_lookup (fetch->chunks, location);
    if (c == NULL) {
      g_mutex_unlock (&fetch->lock);
      return wsi_zarr_fetch_get (fetch, location, limit, size, error);
    }
  }
  state = c->state;
  if (state == CHUNK_DONE) {
    data = c->data;
    *size = c->size;
    c->data = NULL;
  }
  g_queue_remove (&fetch->order, c->location);
  g_hash_table_remove (fetch->chunks, location);
  g_mutex_unlock (&fetch->lock);
  if (state == CHUNK_ABSENT)
    g_set_error (error, WSI_BYTE_SOURCE_ERROR,
        WSI_BYTE_SOURCE_ERROR_NOT_FOUND, "no such object");
  else if (state == CHUNK_FAILED)
    /* the fetch failed: read again here, for the error or the bytes */
    data = fetch->read (location, limit, size, error);
  return data;
}
