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

#include "wsiwebdataset.h"
#include "wsitarwriter.h"

#include <json-glib/json-glib.h>
#include <string.h>

struct _WsiWebDatasetWriter
{
  gchar *dir;
  guint samples_per_shard;
  WsiTarWriter *tar;            /* the shard being written, or NULL */
  guint in_shard;
  guint shards;                 /* completed */
  guint64 key;
};

WsiWebDatasetWriter *
wsi_web_dataset_writer_new (const gchar * dir, guint samples_per_shard)
{
  WsiWebDatasetWriter *writer = g_new0 (WsiWebDatasetWriter, 1);

  writer->dir = g_strdup (dir);
  writer->samples_per_shard = MAX (samples_per_shard, 1);
  return writer;
}

static void
writer_free (WsiWebDatasetWriter * writer)
{
  g_free (writer->dir);
  g_free (writer);
}

/* "views": each view's name and record (wsirecord.h), in view order. */
static void
add_views_json (JsonBuilder * b, const WsiWebDatasetImage * images, guint n)
{
  guint i;

  json_builder_set_member_name (b, "views");
  json_builder_begin_array (b);
  for (i = 0; i < n; i++) {
    const WsiViewRecord *v = images[i].view;

    json_builder_begin_object (b);
    json_builder_set_member_name (b, "name");
    json_builder_add_string_value (b, images[i].name);
#define NUMBER(name, value) \
  json_builder_set_member_name (b, name); \
  json_builder_add_double_value (b, value);
    NUMBER ("x", v->x);
    NUMBER ("y", v->y);
    NUMBER ("width0", v->width0);
    NUMBER ("height0", v->height0);
    NUMBER ("mpp", v->mpp);
#undef NUMBER
#define INT_FIELD(name, value) \
  json_builder_set_member_name (b, name); \
  json_builder_add_int_value (b, (gint64) (value));
    INT_FIELD ("view_index", v->view_index);
    INT_FIELD ("out_width", v->out_width);
    INT_FIELD ("out_height", v->out_height);
    INT_FIELD ("flags", v->flags);
#undef INT_FIELD
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
}

static gchar *
sample_json (guint64 key, const WsiPatchRecord * r,
    const WsiStoreSlideRef * slide, const WsiWebDatasetImage * images,
    guint n_images)
{
  JsonBuilder *b = json_builder_new ();
  JsonNode *root;
  gchar *text, key_text[24];
  guint i;

  g_snprintf (key_text, sizeof (key_text), "%010" G_GUINT64_FORMAT, key);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "key");
  json_builder_add_string_value (b, key_text);
  json_builder_set_member_name (b, "path");
  json_builder_add_string_value (b, slide->path ? slide->path : "");
  json_builder_set_member_name (b, "label");
  json_builder_add_string_value (b, slide->label ? slide->label : "");
  json_builder_set_member_name (b, "record");
  json_builder_begin_object (b);
#define INT_FIELD(name, value) \
  json_builder_set_member_name (b, name); \
  json_builder_add_int_value (b, (gint64) (value));
  INT_FIELD ("sequence", r->sequence);
  INT_FIELD ("x", r->x);
  INT_FIELD ("y", r->y);
  INT_FIELD ("created_ns", r->created_ns);
  INT_FIELD ("slide_index", r->slide_index);
  INT_FIELD ("cycle", r->cycle);
  INT_FIELD ("footprint", r->footprint);
  INT_FIELD ("out_size", r->out_size);
  INT_FIELD ("level", r->level);
  INT_FIELD ("read_size", r->read_size);
#undef INT_FIELD
  json_builder_set_member_name (b, "out_mpp");
  json_builder_add_double_value (b, r->out_mpp);
  json_builder_set_member_name (b, "tissue_fraction");
  json_builder_add_double_value (b, r->tissue_fraction);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "columns");
  json_builder_begin_object (b);
  for (i = 0; slide->column_names && slide->column_names[i]; i++) {
    json_builder_set_member_name (b, slide->column_names[i]);
    json_builder_add_string_value (b, slide->column_values
        && i < g_strv_length ((gchar **) slide->column_values) ?
        slide->column_values[i] : "");
  }
  json_builder_end_object (b);
  if (images[0].view != NULL)
    add_views_json (b, images, n_images);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  text = json_to_string (root, FALSE);
  json_node_unref (root);
  g_object_unref (b);
  return text;
}

/* Member KEY.EXTENSION, or KEY.FIELD.EXTENSION when @field is set. */
static gboolean
add_member (WsiWebDatasetWriter * writer, const gchar * field,
    const gchar * extension, const guint8 * data, gsize size, GError ** error)
{
  gchar *name = g_strdup_printf ("%010" G_GUINT64_FORMAT "%s%s.%s",
      writer->key, field ? "." : "", field ? field : "", extension);
  gboolean ok = wsi_tar_writer_add (writer->tar, name, data, size, error);

  g_free (name);
  return ok;
}

static gboolean
finish_shard (WsiWebDatasetWriter * writer, GError ** error)
{
  gboolean ok = wsi_tar_writer_finish (g_steal_pointer (&writer->tar), error);

  if (ok)
    writer->shards++;
  writer->in_shard = 0;
  return ok;
}

gboolean
wsi_web_dataset_writer_add (WsiWebDatasetWriter * writer,
    const gchar * extension, const WsiWebDatasetImage * images,
    guint n_images, const WsiPatchRecord * record,
    const WsiStoreSlideRef * slide, GError ** error)
{
  const gchar *label = slide->label ? slide->label : "";
  gchar *json;
  gboolean ok = TRUE;
  guint i;

  g_return_val_if_fail (n_images >= 1, FALSE);

  if (writer->tar == NULL) {
    gchar *name = g_strdup_printf ("shard-%06u.tar", writer->shards);
    gchar *path = g_build_filename (writer->dir, name, NULL);

    writer->tar = wsi_tar_writer_new (path, error);
    g_free (path);
    g_free (name);
    if (writer->tar == NULL)
      return FALSE;
  }
  json = sample_json (writer->key, record, slide, images, n_images);
  for (i = 0; i < n_images && ok; i++)
    ok = add_member (writer, images[i].name, extension, images[i].data,
        images[i].size, error);
  ok = ok && add_member (writer, NULL, "json", (const guint8 *) json,
      strlen (json), error)
      && add_member (writer, NULL, "cls", (const guint8 *) label,
      strlen (label), error);
  g_free (json);
  if (!ok)
    return FALSE;
  writer->key++;
  if (++writer->in_shard >= writer->samples_per_shard)
    return finish_shard (writer, error);
  return TRUE;
}

guint
wsi_web_dataset_writer_shards (const WsiWebDatasetWriter * writer)
{
  return writer->shards;
}

gboolean
wsi_web_dataset_writer_finish (WsiWebDatasetWriter * writer, GError ** error)
{
  gboolean ok = writer->tar == NULL || finish_shard (writer, error);

  writer_free (writer);
  return ok;
}

void
wsi_web_dataset_writer_abandon (WsiWebDatasetWriter * writer)
{
  if (writer->tar)
    wsi_tar_writer_abandon (writer->tar);
  writer_free (writer);
}
