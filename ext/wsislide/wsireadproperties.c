/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsireadproperties.c: the read-layer properties of patchreader and
 * patchviews (see wsireadproperties.h).
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsireadproperties.h"

#include <gst/wsi/wsirefusal.h>

#define DEFAULT_BACKEND GST_WSI_BACKEND_AUTO
#define DEFAULT_DCT_SCALING TRUE
#define DEFAULT_MAX_OPEN_SLIDES 8
#define MAX_MAX_OPEN_SLIDES 1024
#define MAX_TILE_CACHE_MB (1024 * 1024)

static GParamSpec *
read_param_spec (WsiReadProp prop, const WsiReadPropertySpec * spec)
{
  const gchar *blurb = spec->props[prop].blurb;
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  switch (prop) {
    case WSI_READ_PROP_BACKEND:
      return g_param_spec_enum ("backend", "Backend", blurb,
          GST_TYPE_WSI_BACKEND, DEFAULT_BACKEND,
          rw | GST_PARAM_MUTABLE_READY);
    case WSI_READ_PROP_DCT_SCALING:
      return g_param_spec_boolean ("dct-scaling", "DCT scaling", blurb,
          DEFAULT_DCT_SCALING, rw | GST_PARAM_MUTABLE_PLAYING);
    case WSI_READ_PROP_MAX_OPEN_SLIDES:
      return wsi_param_spec_uint ("max-open-slides", "Max open slides", blurb,
          1, MAX_MAX_OPEN_SLIDES, DEFAULT_MAX_OPEN_SLIDES,
          rw | GST_PARAM_MUTABLE_PLAYING);
    case WSI_READ_PROP_TILE_CACHE_SIZE:
      return wsi_param_spec_uint ("tile-cache-size", "Tile cache size", blurb,
          0, MAX_TILE_CACHE_MB, spec->default_tile_cache_mb,
          rw | GST_PARAM_MUTABLE_PLAYING);
    case WSI_READ_PROP_TILE_CACHE_HITS:
      return wsi_param_spec_uint64 ("tile-cache-hits", "Tile cache hits",
          blurb, 0, G_MAXUINT64, 0, ro);
    case WSI_READ_PROP_TILE_CACHE_MISSES:
      return wsi_param_spec_uint64 ("tile-cache-misses", "Tile cache misses",
          blurb, 0, G_MAXUINT64, 0, ro);
    default:
      g_assert_not_reached ();
  }
  return NULL;
}

void
wsi_read_properties_install (GObjectClass * klass,
    const WsiReadPropertySpec * spec)
{
  guint i;

  for (i = 0; i < WSI_READ_N_PROPS; i++)
    g_object_class_install_property (klass, spec->props[i].id,
        read_param_spec (i, spec));
}

void
wsi_read_properties_init (WsiReadProperties * props,
    const WsiReadPropertySpec * spec)
{
  props->backend = DEFAULT_BACKEND;
  props->dct_scaling = DEFAULT_DCT_SCALING;
  wsi_read_caches_client_init (&props->caches, DEFAULT_MAX_OPEN_SLIDES,
      spec->default_tile_cache_mb);
}

void
wsi_read_properties_clear (WsiReadProperties * props)
{
  wsi_read_caches_client_clear (&props->caches);
}

/* Which shared property @prop_id is for this element; WSI_READ_N_PROPS
 * when none. */
static WsiReadProp
read_prop_of (const WsiReadPropertySpec * spec, guint prop_id)
{
  guint i;

  for (i = 0; i < WSI_READ_N_PROPS; i++) {
    if (spec->props[i].id == prop_id)
      return i;
  }
  return WSI_READ_N_PROPS;
}

gboolean
wsi_read_properties_set (WsiReadProperties * props,
    const WsiReadPropertySpec * spec, guint prop_id, const GValue * value)
{
  switch (read_prop_of (spec, prop_id)) {
    case WSI_READ_PROP_BACKEND:
      g_atomic_int_set (&props->backend, g_value_get_enum (value));
      return TRUE;
    case WSI_READ_PROP_DCT_SCALING:
      g_atomic_int_set (&props->dct_scaling, g_value_get_boolean (value));
      return TRUE;
    case WSI_READ_PROP_MAX_OPEN_SLIDES:
      wsi_read_caches_client_set_max_open (&props->caches,
          g_value_get_uint (value));
      return TRUE;
    case WSI_READ_PROP_TILE_CACHE_SIZE:
      wsi_read_caches_client_set_tile_cache_mb (&props->caches,
          g_value_get_uint (value));
      return TRUE;
    default:                   /* the counters are read-only */
      return FALSE;
  }
}

gboolean
wsi_read_properties_get (WsiReadProperties * props,
    const WsiReadPropertySpec * spec, guint prop_id, GValue * value)
{
  switch (read_prop_of (spec, prop_id)) {
    case WSI_READ_PROP_BACKEND:
      g_value_set_enum (value, g_atomic_int_get (&props->backend));
      return TRUE;
    case WSI_READ_PROP_DCT_SCALING:
      g_value_set_boolean (value, g_atomic_int_get (&props->dct_scaling));
      return TRUE;
    case WSI_READ_PROP_MAX_OPEN_SLIDES:
      g_value_set_uint (value,
          wsi_read_caches_client_get_max_open (&props->caches));
      return TRUE;
    case WSI_READ_PROP_TILE_CACHE_SIZE:
      g_value_set_uint (value,
          wsi_read_caches_client_get_tile_cache_mb (&props->caches));
      return TRUE;
    case WSI_READ_PROP_TILE_CACHE_HITS:
      g_value_set_uint64 (value, wsi_read_caches_client_hits (&props->caches));
      return TRUE;
    case WSI_READ_PROP_TILE_CACHE_MISSES:
      g_value_set_uint64 (value,
          wsi_read_caches_client_misses (&props->caches));
      return TRUE;
    default:
      return FALSE;
  }
}

GstWsiBackend
wsi_read_properties_backend (WsiReadProperties * props)
{
  return g_atomic_int_get (&props->backend);
}

gboolean
wsi_read_properties_dct_scaling (WsiReadProperties * props)
{
  return g_atomic_int_get (&props->dct_scaling);
}
