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

#include <gst/wsi/wsiannotation.h>

#include "wsislidesrcannotations.h"
#include "wsiannotations.h"

#define GST_CAT_DEFAULT gst_wsi_slide_src_debug

/* The manifest's "annotations" value for @entry, or NULL. */
static const gchar *
entry_annotation_column (GstWsiSlideSrc * self, const WsiSlideEntry * entry)
{
  guint i;

  for (i = 0; self->column_names && self->column_names[i]; i++)
    if (g_ascii_strcasecmp (self->column_names[i], "annotations") == 0)
      return entry->values ? entry->values[i] : NULL;
  return NULL;
}

/* Reads the slide's annotation file, once per slide, into the fields of
 * wsiannotation.h on its cached description. A file that cannot be used is
 * warned about (file and reason) and leaves the slide without regions, for
 * patchsampler to skip and count. */
void
slide_src_describe_annotations (GstWsiSlideSrc * self,
    const WsiSlideEntry * entry,
    GstStructure * description)
{
  gchar *file = wsi_annotations_find (entry->path, self->run.annotations,
      entry_annotation_column (self, entry));
  static const gchar *const none[] = { NULL };
  WsiAnnotations *annotations = NULL;
  gint64 width = 0, height = 0;
  GError *error = NULL;
  GBytes *bytes;

  gst_structure_set (description, WSI_ANNOTATION_FILE_FIELD, G_TYPE_STRING,
      file ? file : "", WSI_ANNOTATION_CLASSES_FIELD, G_TYPE_STRV, none,
      WSI_ANNOTATION_POLYGONS_FIELD, G_TYPE_UINT, 0,
      WSI_ANNOTATION_SKIPPED_FIELD, G_TYPE_UINT, 0, NULL);
  if (file == NULL)
    return;
  gst_structure_get_int64 (description, "width", &width);
  gst_structure_get_int64 (description, "height", &height);
  annotations = wsi_annotations_load (file, (gdouble) width,
      (gdouble) height, &error);
  if (annotations == NULL) {
    GST_ELEMENT_WARNING (self, STREAM, FORMAT,
        ("The annotation file of slide \"%s\" cannot be used, so the slide "
            "has no regions: %s", entry->display, error->message), (NULL));
    g_clear_error (&error);
    g_free (file);
    return;
  }
  if (annotations->n_skipped > 0)
    GST_ELEMENT_WARNING (self, STREAM, FORMAT,
        ("%s: %u of %u shapes are not usable regions and were dropped "
            "(first: %s).", file, annotations->n_skipped,
            annotations->n_skipped + annotations->n_polygons,
            annotations->first_problem), (NULL));
  g_ptr_array_add (annotations->classes, NULL);
  bytes = g_bytes_new (annotations->regions->data, annotations->regions->len);
  gst_structure_set (description, WSI_ANNOTATION_CLASSES_FIELD, G_TYPE_STRV,
      annotations->classes->pdata, WSI_ANNOTATION_REGIONS_FIELD, G_TYPE_BYTES,
      bytes, WSI_ANNOTATION_POLYGONS_FIELD, G_TYPE_UINT,
      annotations->n_polygons, WSI_ANNOTATION_SKIPPED_FIELD, G_TYPE_UINT,
      annotations->n_skipped, NULL);
  g_ptr_array_remove_index (annotations->classes,
      annotations->classes->len - 1);
  g_bytes_unref (bytes);
  wsi_annotations_free (annotations);
  g_free (file);
}

/* With an annotations folder: a file there named after no slide of the
 * collection is most likely a misspelt slide name. */
void
slide_src_warn_unmatched_annotations (GstWsiSlideSrc * self,
    const WsiCollection * collection)
{
  GHashTable *stems;
  GDir *dir;
  const gchar *name;
  guint i;

  if (self->run.annotations == NULL || *self->run.annotations == '\0')
    return;
  dir = g_dir_open (self->run.annotations, 0, NULL);
  if (dir == NULL) {
    GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND,
        ("The annotation folder \"%s\" cannot be read.",
            self->run.annotations), (NULL));
    return;
  }
  stems = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (i = 0; i < collection->entries->len; i++) {
    const WsiSlideEntry *entry = g_ptr_array_index (collection->entries, i);
    gchar *base = g_path_get_basename (entry->path);
    gchar *dot = strrchr (base, '.');

    if (dot != NULL && dot != base)
      *dot = '\0';
    g_hash_table_add (stems, base);
  }
  while ((name = g_dir_read_name (dir)) != NULL) {
    gchar *stem;

    if (!wsi_annotations_is_file_name (name))
      continue;
    stem = g_strndup (name, strrchr (name, '.') - name);
    if (!g_hash_table_contains (stems, stem))
      GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND,
          ("The annotation file \"%s\" in \"%s\" matches no slide of the "
              "collection (a slide named %s.* was expected); it is not "
              "used.", name, self->run.annotations, stem), (NULL));
    g_free (stem);
  }
  g_dir_close (dir);
  g_hash_table_unref (stems);
}
