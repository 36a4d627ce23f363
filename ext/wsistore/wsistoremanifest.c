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

/* The members below are read with their type checked first: json-glib's
 * typed getters warn (a GLib critical) on a member of another type and
 * hand back NULL for a string that is a number, which the callers would
 * then use. A member of the wrong type refuses the manifest, naming it. */

/* @name's string, @fallback when absent or null; FALSE when it is there
 * and not a string. */
static gboolean
get_string (JsonObject * o, const gchar * name, const gchar * fallback,
    const gchar ** value)
{
  JsonNode *node = json_object_get_member (o, name);

  *value = fallback;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node)
      || json_node_get_value_type (node) != G_TYPE_STRING)
    return FALSE;
  *value = json_node_get_string (node);
  return TRUE;
}

/* @name's whole number in 0..@max, 0 when absent or null; FALSE when it
 * is there and not such a number. */
static gboolean
get_count (JsonObject * o, const gchar * name, gint64 max, gint64 * value)
{
  JsonNode *node = json_object_get_member (o, name);

  *value = 0;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node)
      || json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  *value = json_node_get_int (node);
  return *value >= 0 && *value <= max;
}

static gboolean
refuse_member (GError ** error, const gchar * path, const gchar * name,
    const gchar * what)
{
  gchar *reason = g_strdup_printf ("\"%s\" is not %s", name, what);

  refuse (error, path, reason);
  g_free (reason);
  return FALSE;
}

/* A crc32 as the writer writes it: 1 to 8 hex digits. */
static gboolean
parse_crc32 (const gchar * text, guint32 * crc32)
{
  gchar *end = NULL;
  guint64 value;

  if (text == NULL || !g_ascii_isxdigit (text[0]) || strlen (text) > 8)
    return FALSE;
  value = g_ascii_strtoull (text, &end, 16);
  if (end == NULL || *end != '\0')
    return FALSE;
  *crc32 = (guint32) value;
  return TRUE;
}

static gboolean
parse_shards (WsiStoreManifest * m, JsonArray * shards, const gchar * path,
    GError ** error)
{
  guint i;

  for (i = 0; shards && i < json_array_get_length (shards); i++) {
    JsonNode *node = json_array_get_element (shards, i);
    JsonObject *o;
    WsiShardSummary s = { 0, };
    const gchar *name, *crc;
    gint64 patches, bytes;

    if (!JSON_NODE_HOLDS_OBJECT (node))
      return refuse (error, path, "a shard that is not a JSON object");
    o = json_node_get_object (node);
    /* a file of the store folder: no separator, not "." or ".." (the
     * name is opened inside the folder) */
    if (!get_string (o, "name", NULL, &name) || name == NULL
        || name[0] == '\0' || strchr (name, '/') != NULL
        || strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
      return refuse (error, path, "a shard without a file name");
    if (!get_count (o, "patches", G_MAXUINT, &patches))
      return refuse_member (error, path, "patches",
          "a count of patches");
    if (!get_count (o, "bytes", G_MAXINT64, &bytes))
      return refuse_member (error, path, "bytes", "a size in bytes");
    if (!get_string (o, "crc32", "0", &crc) || !parse_crc32 (crc, &s.crc32))
      return refuse_member (error, path, "crc32",
          "a crc32 of 1 to 8 hex digits");
    s.name = g_strdup (name);
    s.n_patches = patches;
    s.bytes = bytes;
    g_array_append_val (m->shards, s);
  }
  return TRUE;
}

static gboolean
manifest_from_json (WsiStoreManifest * m, JsonObject * o, const gchar * path,
    GError ** error)
{
  const gchar *format, *encoding, *video_format, *subsampling, *seed;
  gint64 version, quality, patches, per_shard;
  JsonNode *node;

  if (!get_string (o, "format", "", &format)
      || g_strcmp0 (format, WSI_STORE_FORMAT_NAME) != 0)
    return refuse (error, path, "its format is not " WSI_STORE_FORMAT_NAME);
  if (!get_count (o, "version", G_MAXINT64, &version))
    return refuse_member (error, path, "version", "a version number");
  if (version < WSI_STORE_VERSION || version > WSI_STORE_VERSION_MAX) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
        "\"%s\" is patch store version %" G_GINT64_FORMAT "; this gst-wsi "
        "reads versions %d to %d", path, version, WSI_STORE_VERSION,
        WSI_STORE_VERSION_MAX);
    return FALSE;
  }
  m->version = version;
  if (!get_string (o, "encoding", "", &encoding)
      || !parse_encoding (encoding, &m->encoding))
    return refuse (error, path, "unknown encoding");
  if (!get_string (o, "video-format", "", &video_format))
    return refuse_member (error, path, "video-format", "a string");
  if (!get_string (o, "subsampling", "", &subsampling))
    return refuse_member (error, path, "subsampling", "a string");
  if (!get_count (o, "quality", 100, &quality))
    return refuse_member (error, path, "quality", "a number from 0 to 100");
  if (!get_count (o, "patches", G_MAXINT64, &patches))
    return refuse_member (error, path, "patches", "a count of patches");
  if (!get_count (o, "patches-per-shard", G_MAXUINT, &per_shard))
    return refuse_member (error, path, "patches-per-shard",
        "a count of patches");
  m->video_format = g_strdup (video_format);
  m->subsampling = g_strdup (subsampling);
  m->quality = quality;
  m->n_patches = patches;
  m->patches_per_shard = per_shard;
  if (json_object_has_member (o, "seed")) {
    gchar *end = NULL;

    /* a decimal string: JSON numbers lose 64-bit integers */
    if (!get_string (o, "seed", "0", &seed) || !g_ascii_isdigit (seed[0]))
      return refuse_member (error, path, "seed", "a decimal string");
    m->seed = g_ascii_strtoull (seed, &end, 10);
    if (*end != '\0')
      return refuse_member (error, path, "seed", "a decimal string");
    m->has_seed = TRUE;
  }
  node = json_object_get_member (o, "pipeline");
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node)) {
    if (!JSON_NODE_HOLDS_ARRAY (node))
      return refuse_member (error, path, "pipeline",
          "a JSON array of elements");
    m->pipeline = json_node_copy (node);
  }
  node = json_object_get_member (o, "shards");
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node)
      && !JSON_NODE_HOLDS_ARRAY (node))
    return refuse_member (error, path, "shards", "a JSON array");
  return parse_shards (m, node != NULL && JSON_NODE_HOLDS_ARRAY (node) ?
      json_node_get_array (node) : NULL, path, error);
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
