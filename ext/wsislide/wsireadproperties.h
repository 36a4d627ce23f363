/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsireadproperties.h: the read-layer properties of the elements that read
 * slides (patchreader, and patchviews for its context views), installed,
 * set and got once: backend, dct-scaling, max-open-slides,
 * tile-cache-size and the tile cache's hit and miss counters.
 *
 * Contract: an element keeps a WsiReadProperties in its instance and
 * describes, in a static WsiReadPropertySpec, the id it gives each
 * property (ids set the order gst-inspect lists them in), its blurb (what
 * the property means for that element) and its tile cache's default size;
 * names, types, ranges, flags and the other defaults are the same for both.
 * wsi_read_properties_install() installs them from class_init;
 * wsi_read_properties_set()/_get() handle an id of the spec (TRUE) or leave
 * it to the element (FALSE). The values are read at start (backend, the
 * caches' limits through WsiReadCachesClient) and per read (dct-scaling).
 *
 * Cost: a lookup in a table of six on a property access; nothing on the
 * read path beyond an atomic read. Threading: set and get from any thread,
 * with or without the element's object lock (backend and dct-scaling are
 * atomic; the caches client locks itself).
 */

#ifndef __WSI_READ_PROPERTIES_H__
#define __WSI_READ_PROPERTIES_H__

#include <gst/gst.h>

#include "gstwsibackend.h"
#include "wsireadcaches.h"

G_BEGIN_DECLS

typedef enum
{
  WSI_READ_PROP_BACKEND,
  WSI_READ_PROP_DCT_SCALING,
  WSI_READ_PROP_MAX_OPEN_SLIDES,
  WSI_READ_PROP_TILE_CACHE_SIZE,
  WSI_READ_PROP_TILE_CACHE_HITS,
  WSI_READ_PROP_TILE_CACHE_MISSES,
  WSI_READ_N_PROPS
} WsiReadProp;

/* What one element says of the shared properties. */
typedef struct
{
  struct
  {
    guint id;                   /* the element's property id, > 0 */
    const gchar *blurb;
  } props[WSI_READ_N_PROPS];
  guint default_tile_cache_mb;
} WsiReadPropertySpec;

/* An element's values. */
typedef struct
{
  gint backend;                 /* GstWsiBackend, atomic */
  gint dct_scaling;             /* gboolean, atomic: read by the workers */
  WsiReadCachesClient caches;
} WsiReadProperties;

void wsi_read_properties_install (GObjectClass * klass,
    const WsiReadPropertySpec * spec);

/* Defaults: backend auto, dct-scaling on, 8 open slides, the spec's tile
 * cache size. */
void wsi_read_properties_init (WsiReadProperties * props,
    const WsiReadPropertySpec * spec);
/* Stops the caches client and frees its lock. */
void wsi_read_properties_clear (WsiReadProperties * props);

gboolean wsi_read_properties_set (WsiReadProperties * props,
    const WsiReadPropertySpec * spec, guint prop_id, const GValue * value);
gboolean wsi_read_properties_get (WsiReadProperties * props,
    const WsiReadPropertySpec * spec, guint prop_id, GValue * value);

GstWsiBackend wsi_read_properties_backend (WsiReadProperties * props);
gboolean wsi_read_properties_dct_scaling (WsiReadProperties * props);

G_END_DECLS

#endif /* __WSI_READ_PROPERTIES_H__ */
