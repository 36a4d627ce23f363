/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsidicomseries.c: one slide per DICOM series of a folder (see
 * wsidicomseries.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsidicomseries.h"

#include <string.h>

#ifdef WSI_HAVE_DICOM
#include "wsibytesource.h"
#include "wsidicom.h"
#include "wsidicomseriesmap.h"
#endif

gboolean
wsi_dicom_series_is_dicom_file (const gchar * path)
{
#ifdef WSI_HAVE_DICOM
  return wsi_dicom_path_is_dicom (path);
#else
  return FALSE;
#endif
}

#ifdef WSI_HAVE_DICOM

/* The best instance seen of one series. */
typedef struct
{
  gchar *path;
  guint64 area;
  guint order;                  /* position in the input, for the output */
} SeriesPick;

static void
series_pick_free (SeriesPick * pick)
{
  g_free (pick->path);
  g_free (pick);
}

/* Every instance of a series: VOLUME or not, the backend sorts them. */
static void
series_add_member (GHashTable * members, const gchar * series_uid,
    const gchar * path)
{
  GPtrArray *list = g_hash_table_lookup (members, series_uid);

  if (list == NULL) {
    list = g_ptr_array_new_with_free_func (g_free);
    g_hash_table_insert (members, g_strdup (series_uid), list);
  }
  g_ptr_array_add (list, g_strdup (path));
}

static gint
series_pick_compare (gconstpointer a, gconstpointer b)
{
  const SeriesPick *pa = *(SeriesPick * const *) a;
  const SeriesPick *pb = *(SeriesPick * const *) b;

  return (gint) pa->order - (gint) pb->order;
}

/* Header of @path: FALSE when it cannot be parsed. */
static gboolean
read_header (const gchar * path, WsiDicomInstance * inst)
{
  WsiByteSource *source = wsi_byte_source_open (path, NULL);
  gboolean ok;

  if (source == NULL)
    return FALSE;
  ok = wsi_dicom_instance_read (inst, source, TRUE, NULL);
  wsi_byte_source_unref (source);
  return ok;
}

GPtrArray *
wsi_dicom_series_pick (GPtrArray * paths)
{
  GHashTable *series = g_hash_table_new_full (g_str_hash, g_str_equal,
      g_free, (GDestroyNotify) series_pick_free);
  GHashTable *members = g_hash_table_new_full (g_str_hash, g_str_equal,
      g_free, (GDestroyNotify) g_ptr_array_unref);
  GPtrArray *picks = g_ptr_array_new ();
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter iter;
  gpointer key, value;
  guint i;

  for (i = 0; i < paths->len; i++) {
    const gchar *path = paths->pdata[i];
    WsiDicomInstance inst;
    SeriesPick *pick;
    guint64 area;

    if (!read_header (path, &inst)) {
      /* Opening it will say what is wrong. */
      pick = g_new0 (SeriesPick, 1);
      pick->path = g_strdup (path);
      pick->order = i;
      g_hash_table_insert (series, g_strdup_printf ("\001%u", i), pick);
      continue;
    }
    area = inst.total_columns * inst.total_rows;
    if (inst.series_uid != NULL)
      series_add_member (members, inst.series_uid, path);
    if (inst.flavor == WSI_DICOM_FLAVOR_VOLUME && inst.series_uid != NULL
        && g_strcmp0 (inst.sop_class_uid, WSI_DICOM_SOP_CLASS_WSI) == 0) {
      pick = g_hash_table_lookup (series, inst.series_uid);
      if (pick == NULL) {
        pick = g_new0 (SeriesPick, 1);
        pick->order = i;
        g_hash_table_insert (series, g_strdup (inst.series_uid), pick);
      }
      /* Inputs come sorted by name: the first of the widest wins. */
      if (pick->path == NULL || area > pick->area) {
        g_free (pick->path);
        pick->path = g_strdup (path);
        pick->area = area;
      }
    }
    wsi_dicom_instance_clear (&inst);
  }

  g_hash_table_iter_init (&iter, series);
  while (g_hash_table_iter_next (&iter, &key, &value)) {
    SeriesPick *pick = value;
    GPtrArray *list = g_hash_table_lookup (members, key);
    /* Opening the slide finds its series where this scan did. */
    if (list != NULL && pick->path != NULL)
      wsi_dicom_series_map_set (pick->path,
          (const gchar * const *) list->pdata, list->len);
    g_ptr_array_add (picks, value);
  }
  g_ptr_array_sort (picks, series_pick_compare);
  for (i = 0; i < picks->len; i++)
    g_ptr_array_add (out, g_strdup (((SeriesPick *) picks->pdata[i])->path));
  g_ptr_array_unref (picks);
  g_hash_table_unref (series);
  g_hash_table_unref (members);
  return out;
}

#else

/* Without the DICOM backend every file stays a slide of its own (and fails
 * to open with a message saying no backend reads it). */
GPtrArray *
wsi_dicom_series_pick (GPtrArray * paths)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  guint i;

  for (i = 0; i < paths->len; i++)
    g_ptr_array_add (out, g_strdup (paths->pdata[i]));
  return out;
}

#endif
