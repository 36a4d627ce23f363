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

#include "wsistoremanifest.h"
#include "wsilocalfile.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

WsiStoreManifest *
wsi_store_manifest_new (void)
{
  WsiStoreManifest *m = g_new0 (WsiStoreManifest, 1);

  m->version = WSI_STORE_VERSION;
  m->shards = g_array_new (FALSE, TRUE, sizeof (WsiShardSummary));
  g_array_set_clear_func (m->shards,
      (GDestroyNotify) wsi_shard_summary_clear);
  return m;
}

void
wsi_store_manifest_free (WsiStoreManifest * m)
{
  if (m == NULL)
    return;
  g_array_unref (m->shards);
  g_free (m->video_format);
  g_free (m->subsampling);
  if (m->pipeline)
    json_node_unref (m->pipeline);
  g_free (m);
}

static JsonNode *
manifest_to_json (const WsiStoreManifest * m)
{
  JsonBuilder *b = json_builder_new ();
  JsonNode *root;
  guint i;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "format");
  json_builder_add_string_value (b, WSI_STORE_FORMAT_NAME);
  json_builder_set_member_name (b, "version");
  json_builder_add_int_value (b, m->version);
  json_builder_set_member_name (b, "encoding");
  json_builder_add_string_value (b, wsi_store_encoding_name (m->encoding));
  json_builder_set_member_name (b, "video-format");
  json_builder_add_string_value (b, m->video_format);
  if (m->encoding == WSI_STORE_ENCODING_JPEG) {
    json_builder_set_member_name (b, "quality");
    json_builder_add_int_value (b, m->quality);
    json_builder_set_member_name (b, "subsampling");
    json_builder_add_string_value (b, m->subsampling);
  }
  json_builder_set_member_name (b, "patches");
  json_builder_add_int_value (b, (gint64) m->n_patches);
  json_builder_set_member_name (b, "patches-per-shard");
  json_builder_add_int_value (b, m->patches_per_shard);
  if (m->has_seed) {
    /* as a string: JSON numbers lose 64-bit integers in most readers */
    gchar seed[24];

    g_snprintf (seed, sizeof (seed), "%" G_GUINT64_FORMAT, m->seed);
    json_builder_set_member_name (b, "seed");
    json_builder_add_string_value (b, seed);
  }
  json_builder_set_member_name (b, "shards");
  json_builder_begin_array (b);
  for (i = 0; i < m->shards->len; i++) {
    const WsiShardSummary *s = &g_array_index (m->shards, WsiShardSummary, i);
    gchar crc[9];

    g_snprintf (crc, sizeof (crc), "%08x", s->crc32);
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "name");
    json_builder_add_string_value (b, s->name);
    json_builder_set_member_name (b, "patches");
    json_builder_add_int_value (b, s->n_patches);
    json_builder_set_member_name (b, "bytes");
    json_builder_add_int_value (b, (gint64) s->bytes);
    json_builder_set_member_name (b, "crc32");
    json_builder_add_string_value (b, crc);
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
  if (m->pipeline) {
    json_builder_set_member_name (b, "pipeline");
    json_builder_add_value (b, json_node_copy (m->pipeline));
  }
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  g_object_unref (b);
  return root;
}

gboolean
wsi_store_manifest_write (const WsiStoreManifest * m, const gchar * dir,
    GError ** error)
{
  JsonNode *root = manifest_to_json (m);
  gchar *text = json_to_string (root, TRUE);
  gchar *path = g_build_filename (dir, WSI_STORE_MANIFEST, NULL);
  gchar *contents = g_strconcat (text, "\n", NULL);
  gboolean ok;

  json_node_unref (root);
  /* g_file_set_contents syncs and renames: the manifest appears whole. */
  ok = g_file_set_contents_full (path, contents, -1,
      G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_DURABLE, 0644,
      error);
  g_free (contents);
  g_free (text);
  g_free (path);
  return ok;
}

static gboolean
refuse (GError ** error, const gchar * path, const gchar * reason)
{
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
      "\"%s\" is not a usable patch store manifest: %s", path, reason);
  return FALSE;
}

static gboolean
parse_encoding (const gchar * name, WsiStoreEncoding * encoding)
{
  WsiStoreEncoding e;

  for (e = WSI_STORE_ENCODING_RAW; e <= WSI_STORE_ENCODING_JPEG; e++)
    if (g_strcmp0 (name, wsi_store_encoding_name (e)) == 0) {
      *encoding = e;
      return TRUE;
    }
  return FALSE;
}

static gboolean
parse_shards (WsiStoreManifest * m, JsonArray * shards, const gchar * path,
    GError ** error)
{
  guint i;

  for (i = 0; shards && i < json_array_get_length (shards); i++) {
    JsonObject *o = json_array_get_object_element (shards, i);
    WsiShardSummary s = { 0, };
    const gchar *crc;

    if (o == NULL || !json_object_has_member (o, "name"))
      return refuse (error, path, "a shard without a name");
    s.name = g_strdup (json_object_get_string_member (o, "name"));
    s.n_patches = json_object_get_int_member_with_default (o, "patches", 0);
    s.bytes = json_object_get_int_member_with_default (o, "bytes", 0);
    crc = json_object_get_string_member_with_default (o, "crc32", "0");
    s.crc32 = (guint32) g_ascii_strtoull (crc, NULL, 16);
    g_array_append_val (m->shards, s);
  }
  return TRUE;
}

static gboolean
manifest_from_json (WsiStoreManifest * m, JsonObject * o, const gchar * path,
    GError ** error)
{
  const gchar *format = json_object_get_string_member_with_default (o,
      "format", "");
  gint64 version = json_object_get_int_member_with_default (o, "version", 0);

  if (g_strcmp0 (format, WSI_STORE_FORMAT_NAME) != 0)
    return refuse (error, path, "its format is not " WSI_STORE_FORMAT_NAME);
  if (version < WSI_STORE_VERSION || version > WSI_STORE_VERSION_MAX) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
        "\"%s\" is patch store version %" G_GINT64_FORMAT "; this gst-wsi "
        "reads versions %d to %d", path, version, WSI_STORE_VERSION,
        WSI_STORE_VERSION_MAX);
    return FALSE;
  }
  m->version = version;
  if (!parse_encoding (json_object_get_string_member_with_default (o,
              "encoding", ""), &m->encoding))
    return refuse (error, path, "unknown encoding");
  m->video_format = g_strdup (json_object_get_string_member_with_default (o,
          "video-format", ""));
  m->quality = json_object_get_int_member_with_default (o, "quality", 0);
  m->subsampling = g_strdup (json_object_get_string_member_with_default (o,
          "subsampling", ""));
  m->n_patches = json_object_get_int_member_with_default (o, "patches", 0);
  m->patches_per_shard = json_object_get_int_member_with_default (o,
      "patches-per-shard", 0);
  if (json_object_has_member (o, "seed")) {
    m->has_seed = TRUE;
    m->seed = g_ascii_strtoull (json_object_get_string_member_with_default
        (o, "seed", "0"), NULL, 10);
  }
  if (json_object_has_member (o, "pipeline"))
    m->pipeline = json_node_copy (json_object_get_member (o, "pipeline"));
  return parse_shards (m, json_object_has_member (o, "shards") ?
      json_object_get_array_member (o, "shards") : NULL, path, error);
}

/* Through the one non-blocking, regular-file-checked open. */
static gboolean
read_json (JsonParser * parser, const gchar * path, GError ** error)
{
  gchar *contents;
  gsize length;
  gboolean ok;

  if (!wsi_local_file_read (path, G_MAXSSIZE, &contents, &length, error))
    return FALSE;
  ok = json_parser_load_from_data (parser, contents, (gssize) length, error);
  g_free (contents);
  return ok;
}

WsiStoreManifest *
wsi_store_manifest_read (const gchar * dir, GError ** error)
{
  gchar *path = g_build_filename (dir, WSI_STORE_MANIFEST, NULL);
  JsonParser *parser = json_parser_new ();
  WsiStoreManifest *m = NULL;
  GError *parse_error = NULL;
  JsonNode *root;

  if (!g_file_test (path, G_FILE_TEST_EXISTS)) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
        "\"%s\" has no %s: the store is incomplete (still being written, or "
        "the writer was interrupted)", dir, WSI_STORE_MANIFEST);
  } else if (!read_json (parser, path, &parse_error)) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
        "Could not read the patch store manifest \"%s\": %s", path,
        parse_error->message);
    g_error_free (parse_error);
  } else if ((root = json_parser_get_root (parser)) == NULL
      || !JSON_NODE_HOLDS_OBJECT (root)) {
    refuse (error, path, "not a JSON object");
  } else {
    m = wsi_store_manifest_new ();
    if (!manifest_from_json (m, json_node_get_object (root), path, error))
      g_clear_pointer (&m, wsi_store_manifest_free);
  }
  g_object_unref (parser);
  g_free (path);
  return m;
}
