/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsidicomseriesmap.c: the location -> series members map of
 * wsidicomseriesmap.h.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsidicomseriesmap.h"

static GMutex map_lock;
static GHashTable *map;         /* gchar* -> gchar** */

void
wsi_dicom_series_map_set (const gchar * level0, const gchar * const *members,
    guint n)
{
  gchar **copy = g_new0 (gchar *, n + 1);
  guint i;

  for (i = 0; i < n; i++)
    copy[i] = g_strdup (members[i]);
  g_mutex_lock (&map_lock);
  if (map == NULL)
    map = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
        (GDestroyNotify) g_strfreev);
  g_hash_table_replace (map, g_strdup (level0), copy);
  g_mutex_unlock (&map_lock);
}

gchar **
wsi_dicom_series_map_get (const gchar * level0)
{
  gchar **members = NULL;

  g_mutex_lock (&map_lock);
  if (map != NULL)
    members = g_strdupv (g_hash_table_lookup (map, level0));
  g_mutex_unlock (&map_lock);
  return members;
}
