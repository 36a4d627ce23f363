/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsireadcaches.h: one slide cache and one decoded-tile cache per pipeline
 * and backend, shared by the elements that read slides in it (patchreader,
 * and patchviews for its context views), so a pipeline does not hold two
 * caches of the same tiles nor two handles on the same file.
 *
 * Contract: wsi_read_caches_acquire() returns the caches of the top-level
 * bin @element is in for slides opened with @backend, made when the first
 * reader of the pipeline starts (an element outside any bin gets caches of
 * its own). Its limits are raised to @max_open slides and @tile_bytes
 * bytes when they are below: the shared budget is the largest any member
 * asked for when it started. Elements with different backends get
 * different caches (a slide is opened by one backend). The last
 * wsi_read_caches_release() closes the slides and frees the tiles.
 * Counters (hits, misses) are the shared cache's.
 *
 * Cost: one lookup under a global lock at start and stop, nothing on the
 * read path (the caches are the ones of wsislidecache.h and
 * read/wsitilecache.h, thread-safe). Threading: acquire and release from
 * state changes; the caches from any thread.
 */

#ifndef __WSI_READ_CACHES_H__
#define __WSI_READ_CACHES_H__

#include <gst/gst.h>

#include "wsislidecache.h"
#include "wsitilecache.h"

G_BEGIN_DECLS

typedef struct _WsiReadCaches WsiReadCaches;

WsiReadCaches *wsi_read_caches_acquire (GstElement * element,
    const gchar * backend, guint max_open, gsize tile_bytes);
void wsi_read_caches_release (WsiReadCaches * caches);

WsiSlideCache *wsi_read_caches_slides (WsiReadCaches * caches);
WsiTileCache *wsi_read_caches_tiles (WsiReadCaches * caches);
/* How many elements use these caches now. */
guint wsi_read_caches_users (WsiReadCaches * caches);

/* An element's side: its cache properties (set any time) and the shared
 * caches it holds from start to stop. The counters read after a stop are
 * the ones seen at that stop. Thread-safe. */
typedef struct
{
  GMutex lock;
  guint max_open;
  guint tile_cache_mb;
  WsiReadCaches *caches;        /* from start to stop */
  guint64 hits_at_stop;
  guint64 misses_at_stop;
} WsiReadCachesClient;

void wsi_read_caches_client_init (WsiReadCachesClient * client,
    guint max_open, guint tile_cache_mb);
/* Stops, then frees the lock. */
void wsi_read_caches_client_clear (WsiReadCachesClient * client);

/* READY -> PAUSED / PAUSED -> READY (workers joined). */
void wsi_read_caches_client_start (WsiReadCachesClient * client,
    GstElement * element, const gchar * backend);
void wsi_read_caches_client_stop (WsiReadCachesClient * client);
/* The caches held (from start to stop only). */
WsiSlideCache *wsi_read_caches_client_slides (WsiReadCachesClient * client);
WsiTileCache *wsi_read_caches_client_tiles (WsiReadCachesClient * client);

/* Properties: a change while running applies to the shared caches. */
void wsi_read_caches_client_set_max_open (WsiReadCachesClient * client,
    guint max_open);
guint wsi_read_caches_client_get_max_open (WsiReadCachesClient * client);
void wsi_read_caches_client_set_tile_cache_mb (WsiReadCachesClient * client,
    guint mb);
guint wsi_read_caches_client_get_tile_cache_mb (WsiReadCachesClient *
    client);
guint64 wsi_read_caches_client_hits (WsiReadCachesClient * client);
guint64 wsi_read_caches_client_misses (WsiReadCachesClient * client);

G_END_DECLS

#endif /* __WSI_READ_CACHES_H__ */
