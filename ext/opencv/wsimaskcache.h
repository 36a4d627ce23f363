/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsimaskcache.h: tissuemask's masks kept in memory, per slide path, so
 * that a slide visited again (a cycling stream, a visit planned ahead)
 * skips its overview's mask computation. The policy: least recently used
 * first out, within a count (mask-cache-size) and a byte cap (the memory
 * bound, whatever the count); a mask just handed to a slide buffer goes
 * last in line when the cache is full, so that a cycle over more slides
 * than fit keeps hitting the rest instead of evicting every mask before
 * its next visit. Masks on disk across runs are wsimaskstore.h's; when
 * either is used is wsimaskpolicy.h's.
 *
 * Contract: masks are kept run-length coded (two values, lengths as
 * varints: wsimaskruns.h), or raw when coding would not make them smaller;
 * every hit decodes a fresh GstMemory, so nothing downstream can alter the
 * cache. A path holds one mask: a mask of another overview size replaces
 * it. With a count of 0 nothing is kept.
 *
 * Cost: a lookup is a hash lookup and a list move; a hit decodes the mask
 * (a memset per run); an insert codes it once.
 *
 * Threading: none; the caller holds its lock around every call
 * (wsimaskpolicy.h's, which also guards its counters).
 */

#ifndef __WSI_MASK_CACHE_H__
#define __WSI_MASK_CACHE_H__

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct _WsiMaskCache WsiMaskCache;

WsiMaskCache *wsi_mask_cache_new (guint max_masks, gsize max_bytes);
void wsi_mask_cache_free (WsiMaskCache * cache);
void wsi_mask_cache_clear (WsiMaskCache * cache);

/* Fewer masks evict the least recently used at once. */
void wsi_mask_cache_set_max_masks (WsiMaskCache * cache, guint max_masks);
guint wsi_mask_cache_get_max_masks (const WsiMaskCache * cache);
/* Coded bytes held. */
gsize wsi_mask_cache_get_bytes (const WsiMaskCache * cache);

/* Whether a mask of @path (any size) is kept; makes it the most recently
 * used. */
gboolean wsi_mask_cache_touch (WsiMaskCache * cache, const gchar * path);

/* A new memory with the @width x @height mask of @path and its tissue
 * fraction, making it the most recently used; NULL when none is kept. */
GstMemory *wsi_mask_cache_get (WsiMaskCache * cache, const gchar * path,
    gint width, gint height, gdouble * fraction);

/* Keeps @mask for @path; returns whether it was kept (not with a count of
 * 0, nor when it alone outgrows the byte cap). @used: the mask was just
 * handed to a slide buffer; otherwise it was loaded for a visit still to
 * come and goes first in line even when the cache is full, so that the
 * next new masks do not evict it before that visit. */
gboolean wsi_mask_cache_insert (WsiMaskCache * cache, const gchar * path,
    gint width, gint height, GstMemory * mask, gdouble fraction,
    gboolean used);

G_END_DECLS

#endif /* __WSI_MASK_CACHE_H__ */
