/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsislidecache.h: the slides patchreader keeps open, shared by its
 * decoding threads, least recently used closed first.
 *
 * Contract: wsi_slide_cache_acquire() returns an open slide for a path
 * (opening it with the cache's backend choice when needed) and holds it
 * until wsi_slide_cache_release(); a handle that left the cache (trimmed
 * or evicted) is closed when its last user releases it, so a slide is never
 * closed under a reader. wsi_slide_cache_evict() makes the next acquire
 * open a fresh handle (OpenSlide's errors stick to a handle).
 *
 * Cost: a lookup is one hash under one mutex; opening and closing happen
 * outside the lock, so other threads keep reading meanwhile (two threads
 * may open the same slide at once: the second handle is closed). Threading:
 * every function is thread-safe.
 */

#ifndef __WSI_SLIDE_CACHE_H__
#define __WSI_SLIDE_CACHE_H__

#include "wsislide.h"

G_BEGIN_DECLS

typedef struct _WsiSlideCache WsiSlideCache;

typedef struct
{
  gchar *path;
  WsiSlide *slide;
  /* cache bookkeeping, under the cache's lock */
  guint users;
  gboolean cached;              /* still findable by path */
  GList lru_link;
} WsiSlideHandle;

WsiSlideCache *wsi_slide_cache_new (guint max_open);

/* The name a slide is opened and cached by: the file name of its file
 * URI (exact bytes), else @path (a remote location, or no URI). */
gchar *wsi_slide_cache_file_name (const gchar * uri, const gchar * path);
void wsi_slide_cache_free (WsiSlideCache * cache);

/* Backend for slides opened from now on (WSI_BACKEND_*). */
void wsi_slide_cache_set_backend (WsiSlideCache * cache, const gchar * name);
gchar *wsi_slide_cache_get_backend (WsiSlideCache * cache);

WsiSlideHandle *wsi_slide_cache_acquire (WsiSlideCache * cache,
    const gchar * path, GError ** error);
void wsi_slide_cache_release (WsiSlideCache * cache, WsiSlideHandle * handle);
void wsi_slide_cache_evict (WsiSlideCache * cache, WsiSlideHandle * handle);

void wsi_slide_cache_set_max_open (WsiSlideCache * cache, guint max_open);
guint wsi_slide_cache_get_max_open (WsiSlideCache * cache);

/* Closes every slide; only while no thread holds one. */
void wsi_slide_cache_clear (WsiSlideCache * cache);

/* Reads @request through @handle and releases the handle. A failure that
 * poisoned the handle (OpenSlide's sticky error, possibly caused by another
 * thread's bad read) evicts it and is retried once on a private handle
 * opened from @path, so whether a read succeeds depends on the request
 * alone, not on what other threads did. Any thread. */
gboolean wsi_slide_cache_read_isolated (WsiSlideCache * cache,
    const gchar * path, WsiSlideHandle * handle, WsiReadContext * rctx,
    const WsiReadRequest * request, const WsiImage * image,
    WsiReadReport * report, GError ** error);

G_END_DECLS

#endif /* __WSI_SLIDE_CACHE_H__ */
