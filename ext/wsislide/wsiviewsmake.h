/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiviewsmake.h: patchviews' work on one location — every view of a
 * patch (random-resized crops, the patch itself, context views re-read
 * from the slide) into one allocation, one shared memory per view, with
 * the patch meta's view records.
 *
 * Contract: wsi_views_make() draws the location's crops from (seed,
 * sequence, view) before anything is decoded (wsiviewspec.h), so the
 * views are a pure function of the settings and the record whatever the
 * thread; a JPEG patch is decoded as wsicropdecode.h plans it (one whole
 * decode, or one region decode per crop, at 1/2 DCT scale only for area
 * crops with dct-scaling), raw patches are read in place; context views
 * are read from the slide through the pipeline's shared slide and tile
 * caches (wsireadcaches.h). It returns the buffer (offset = sequence), or
 * NULL with work->reason set when a view cannot be made (the element
 * drops the location and reports it).
 *
 * Cost: one output allocation per location (the sum of the views); crops
 * are resampled from the mapped patch (wsiwindowresize.h), context views
 * are one isolated read each; no allocation beyond the per-thread state
 * (WsiViewsThread: read context, resizer, JPEG decoder, made once per
 * worker).
 *
 * Threading: called on the pool's workers with no lock held; reads only
 * the configuration fixed while streaming (WsiViewsConfig), its thread's
 * state and its work; the caches have their own locks.
 */

#ifndef __WSI_VIEWS_MAKE_H__
#define __WSI_VIEWS_MAKE_H__

#include <gst/gst.h>
#include <gst/video/video.h>
#include <gst/wsi/wsirecord.h>

#include "wsicropdecode.h"
#include "wsireadproperties.h"
#include "wsislide.h"
#include "wsislidecache.h"
#include "wsitilecache.h"
#include "wsiviewspec.h"
#include "wsiwindowresize.h"

G_BEGIN_DECLS

/* What the workers read, fixed from READY to PAUSED until back to READY. */
typedef struct
{
  WsiViewSet *set;
  gchar **names;
  guint64 seed;
  WsiResizeMethod method;
} WsiViewsConfig;

/* One location in the ordered pool. */
typedef struct
{
  GstBuffer *in;                /* the decoded patch */
  GstVideoInfo info;            /* its layout (caps may change in between) */
  WsiPixelFormat format;
  WsiPatchRecord record;
  gboolean compressed;          /* in is a JPEG of the patch */
  guint64 decoded;              /* pixels its JPEG decodes wrote */
  gchar *reason;                /* set by the worker when it drops it */
} WsiViewsWork;

/* Per worker thread. */
typedef struct
{
  WsiReadContext *rctx;
  WsiWindowResizer *resizer;
  WsiCropDecoder *crops;        /* compressed patches */
} WsiViewsThread;

/* Where a location's views come from: the configuration and the read
 * layer's properties and caches (valid from start to stop). */
typedef struct
{
  const WsiViewsConfig *config;
  WsiReadProperties *read;
  WsiSlideCache *slide_cache;
  WsiTileCache *tile_cache;
} WsiViewsSources;

WsiViewsThread *wsi_views_thread_new (void);
void wsi_views_thread_free (WsiViewsThread * thread);

/* The largest DCT scale a crop of a JPEG patch may be decoded at (1 or 2):
 * 2 only for area crops with dct-scaling. */
guint wsi_views_crop_max_dct_scale (const WsiViewsSources * src);

GstBuffer *wsi_views_make (const WsiViewsSources * src,
    WsiViewsThread * thread, WsiViewsWork * work);

G_END_DECLS

#endif /* __WSI_VIEWS_MAKE_H__ */
