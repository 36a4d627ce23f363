/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "wsireadtally.h"

void
wsi_read_tally_init (WsiReadTally * tally)
{
  memset (tally, 0, sizeof (*tally));
  g_mutex_init (&tally->lock);
  tally->read_by_backend = g_hash_table_new_full (g_str_hash, g_str_equal,
      NULL, g_free);
  tally->slides_by_backend = g_hash_table_new_full (g_str_hash, g_str_equal,
      NULL, g_free);
  tally->failed_by_slide = g_hash_table_new_full (g_str_hash, g_str_equal,
      g_free, g_free);
}

void
wsi_read_tally_clear (WsiReadTally * tally)
{
  g_hash_table_unref (tally->read_by_backend);
  g_hash_table_unref (tally->slides_by_backend);
  g_hash_table_unref (tally->failed_by_slide);
  g_free (tally->first_failure);
  g_mutex_clear (&tally->lock);
}

void
wsi_read_tally_reset (WsiReadTally * tally)
{
  g_mutex_lock (&tally->lock);
  tally->patches_read = tally->patches_failed = tally->patches_skipped = 0;
  g_hash_table_remove_all (tally->read_by_backend);
  g_hash_table_remove_all (tally->slides_by_backend);
  g_hash_table_remove_all (tally->failed_by_slide);
  g_clear_pointer (&tally->first_failure, g_free);
  g_mutex_unlock (&tally->lock);
}

/* ++table[key]; lock held. @key is taken when new (else freed with
 * @free_key). */
static guint64
count_in (GHashTable * table, gpointer key, GDestroyNotify free_key)
{
  guint64 *count = g_hash_table_lookup (table, key);

  if (count == NULL) {
    count = g_new0 (guint64, 1);
    g_hash_table_insert (table, key, count);
  } else if (free_key != NULL) {
    free_key (key);
  }
  return ++(*count);
}

void
wsi_read_tally_read (WsiReadTally * tally, const gchar * backend,
    gboolean * slide_counted)
{
  g_mutex_lock (&tally->lock);
  tally->patches_read++;
  count_in (tally->read_by_backend, (gpointer) backend, NULL);
  if (!*slide_counted) {
    *slide_counted = TRUE;
    count_in (tally->slides_by_backend, (gpointer) backend, NULL);
  }
  g_mutex_unlock (&tally->lock);
}

void
wsi_read_tally_failed (WsiReadTally * tally, const gchar * path,
    const gchar * reason)
{
  g_mutex_lock (&tally->lock);
  count_in (tally->failed_by_slide, g_strdup (path), g_free);
  if (tally->first_failure == NULL)
    tally->first_failure = g_strdup_printf ("slide \"%s\": %s", path, reason);
  g_mutex_unlock (&tally->lock);
}

void
wsi_read_tally_unread (WsiReadTally * tally, const gchar * path,
    const gchar * reason)
{
  g_mutex_lock (&tally->lock);
  if (tally->first_failure == NULL)
    tally->first_failure = g_strdup_printf ("slide \"%s\": %s", path,
        reason ? reason : "not read");
  g_mutex_unlock (&tally->lock);
}

void
wsi_read_tally_dropped (WsiReadTally * tally, gboolean failed)
{
  g_mutex_lock (&tally->lock);
  if (failed)
    tally->patches_failed++;
  else
    tally->patches_skipped++;
  g_mutex_unlock (&tally->lock);
}

guint64
wsi_read_tally_patches (WsiReadTally * tally, WsiReadTallyCount which)
{
  guint64 count[3];

  wsi_read_tally_get (tally, &count[WSI_READ_TALLY_READ],
      &count[WSI_READ_TALLY_FAILED], &count[WSI_READ_TALLY_SKIPPED], NULL,
      NULL);
  return count[which];
}

void
wsi_read_tally_get (WsiReadTally * tally, guint64 * read, guint64 * failed,
    guint64 * skipped, guint * slides_failed, gchar ** first_failure)
{
  g_mutex_lock (&tally->lock);
  if (read)
    *read = tally->patches_read;
  if (failed)
    *failed = tally->patches_failed;
  if (skipped)
    *skipped = tally->patches_skipped;
  if (slides_failed)
    *slides_failed = g_hash_table_size (tally->failed_by_slide);
  if (first_failure)
    *first_failure = g_strdup (tally->first_failure);
  g_mutex_unlock (&tally->lock);
}

/* "slides, tiff=(guint64)3, ..." or "failed-slides, ..." as an array of
 * "slide, path=(string)..., failed-reads=(guint64)N", sorted by path (the
 * same text on every run). Lock held. */
static void
set_slide_counts (GstStructure * stats, GHashTable * slides_by_backend,
    GHashTable * failed_by_slide)
{
  GstStructure *slides = gst_structure_new_empty ("slides");
  GValue array = G_VALUE_INIT, item = G_VALUE_INIT;
  GHashTableIter iter;
  gpointer key, count;
  GList *paths, *l;

  g_hash_table_iter_init (&iter, slides_by_backend);
  while (g_hash_table_iter_next (&iter, &key, &count))
    gst_structure_set (slides, key, G_TYPE_UINT64, *(guint64 *) count, NULL);
  gst_structure_set (stats, "slides", GST_TYPE_STRUCTURE, slides, NULL);
  gst_structure_free (slides);

  g_value_init (&array, GST_TYPE_ARRAY);
  paths = g_list_sort (g_hash_table_get_keys (failed_by_slide),
      (GCompareFunc) g_strcmp0);
  for (l = paths; l != NULL; l = l->next) {
    g_value_init (&item, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&item, gst_structure_new ("slide", "path",
            G_TYPE_STRING, l->data, "failed-reads", G_TYPE_UINT64,
            *(guint64 *) g_hash_table_lookup (failed_by_slide, l->data),
            NULL));
    gst_value_array_append_and_take_value (&array, &item);
  }
  g_list_free (paths);
  gst_structure_take_value (stats, "failed-slides", &array);
}

GstStructure *
wsi_read_tally_stats (WsiReadTally * tally)
{
  GstStructure *stats = gst_structure_new_empty ("read-stats");
  GHashTableIter iter;
  gpointer name, count;

  g_mutex_lock (&tally->lock);
  g_hash_table_iter_init (&iter, tally->read_by_backend);
  while (g_hash_table_iter_next (&iter, &name, &count))
    gst_structure_set (stats, name, G_TYPE_UINT64, *(guint64 *) count, NULL);
  set_slide_counts (stats, tally->slides_by_backend, tally->failed_by_slide);
  g_mutex_unlock (&tally->lock);
  return stats;
}
