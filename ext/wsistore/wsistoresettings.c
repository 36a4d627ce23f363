/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsistoresettings.c: a store's recorded settings and the resume check
 * (see wsistoresettings.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsistoresettings.h"
#include "wsistoreformat.h"
#include "wsistoremanifest.h"
#include "wsilocalfile.h"

#include <string.h>

/* Properties that change how fast a stream is made, not what it holds
 * (the stream is byte-identical at any of these values). */
static const gchar *const neutral_properties[] = {
  "threads", "prepare-ahead", "max-open-slides", "prefetch-bytes",
  "prefetch-requests", "read-ahead", "tile-cache-size", "mask-cache-dir",
  "mask-cache-size", "max-read-failures", "qos", "blocksize",
  "do-timestamp", "stats-interval", "max-batches", "sync", "async",
  "enable-last-sample", "max-lateness", "max-bitrate", "processing-deadline",
  "render-delay", "throttle-time", "ts-offset", "resume", "skip-patches",
  "max-size-buffers", "max-size-bytes", "max-size-time", "min-threshold-buffers",
  "min-threshold-bytes", "min-threshold-time", "leaky", "silent",
  "flush-on-eos", NULL
};

/* Elements that pass patches through unchanged. */
static const gchar *const neutral_elements[] = {
  "queue", "queue2", "multiqueue", "identity", "tee", "fakesink", NULL
};

static gboolean
in_list (const gchar * const *list, const gchar * name)
{
  return name != NULL && g_strv_contains (list, name);
}

gboolean
wsi_store_settings_record (const gchar * dir, JsonNode * pipeline,
    GError ** error)
{
  gchar *path = g_build_filename (dir, WSI_STORE_SETTINGS, NULL);
  gchar *text = json_to_string (pipeline, TRUE);
  /* g_file_set_contents: a temporary file renamed over the name. */
  gboolean ok = g_file_set_contents (path, text, -1, error);

  g_free (text);
  g_free (path);
  return ok;
}

JsonNode *
wsi_store_settings_recorded (const gchar * dir, GError ** error)
{
  gchar *manifest = g_build_filename (dir, WSI_STORE_MANIFEST, NULL);
  gchar *path = g_build_filename (dir, WSI_STORE_SETTINGS, NULL);
  JsonNode *recorded = NULL;
  gchar *contents = NULL;
  gsize length = 0;

  if (g_file_test (manifest, G_FILE_TEST_EXISTS)) {
    WsiStoreManifest *m = wsi_store_manifest_read (dir, error);

    if (m != NULL && m->pipeline != NULL)
      recorded = json_node_copy (m->pipeline);
    if (m != NULL)
      wsi_store_manifest_free (m);
  } else if (g_file_test (path, G_FILE_TEST_EXISTS)
      && wsi_local_file_read (path, 64 << 20, &contents, &length, error)) {
    JsonParser *parser = json_parser_new ();
    GError *parse_error = NULL;

    if (!json_parser_load_from_data (parser, contents, (gssize) length,
            &parse_error)) {
      /* json-glib says "<data>:1:2: ...": the file is named here */
      gchar *path_shown = wsi_text_escape (path, -1);

      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
          "%s: not valid JSON (%s)", path_shown, parse_error->message);
      g_free (path_shown);
      g_error_free (parse_error);
    } else if (json_parser_get_root (parser) != NULL
        && JSON_NODE_HOLDS_ARRAY (json_parser_get_root (parser))) {
      recorded = json_node_copy (json_parser_get_root (parser));
    } else {
      gchar *path_shown = wsi_text_escape (path, -1);

      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
          "%s: not a JSON array of elements", path_shown);
      g_free (path_shown);
    }
    g_object_unref (parser);
  }
  g_free (contents);
  g_free (path);
  g_free (manifest);
  return recorded;
}

/* @object's member @name when it is a string, else NULL (a damaged or
 * foreign settings file: json-glib's getters warn on other types). */
static const gchar *
string_member (JsonObject * object, const gchar * name)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node)
      || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

/* key -> JsonObject of properties, for the elements that count. The key
 * is the factory name ("wsislidesrc"; "patchfilter#2" for a second one):
 * element names are numbered per process (patchinterleave0 in one run,
 * patchinterleave3 in the next) and cannot be compared. */
static GHashTable *
elements_by_name (JsonNode * pipeline, GHashTable * factories)
{
  GHashTable *by_name = g_hash_table_new_full (g_str_hash, g_str_equal,
      g_free, NULL);
  GHashTable *seen;
  JsonArray *array;
  guint i;

  if (pipeline == NULL || !JSON_NODE_HOLDS_ARRAY (pipeline))
    return by_name;
  seen = g_hash_table_new (g_str_hash, g_str_equal);
  array = json_node_get_array (pipeline);
  for (i = 0; i < json_array_get_length (array); i++) {
    JsonNode *node = json_array_get_element (array, i);
    JsonObject *element;
    const gchar *name, *factory;
    JsonNode *properties;
    gchar *key;
    guint count;

    if (!JSON_NODE_HOLDS_OBJECT (node))
      continue;
    element = json_node_get_object (node);
    name = string_member (element, "name");
    factory = string_member (element, "element");
    properties = json_object_get_member (element, "properties");
    if (name == NULL || factory == NULL || in_list (neutral_elements, factory)
        || properties == NULL || !JSON_NODE_HOLDS_OBJECT (properties))
      continue;
    count = GPOINTER_TO_UINT (g_hash_table_lookup (seen, factory)) + 1;
    g_hash_table_insert (seen, (gpointer) factory, GUINT_TO_POINTER (count));
    key = count == 1 ? g_strdup (factory) :
        g_strdup_printf ("%s#%u", factory, count);
    g_hash_table_insert (factories, g_strdup (key), (gpointer) factory);
    g_hash_table_insert (by_name, key, json_node_get_object (properties));
  }
  g_hash_table_unref (seen);
  return by_name;
}

static const gchar *
property_value (JsonObject * properties, const gchar * name)
{
  JsonNode *node = json_object_get_member (properties, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return NULL;
  return json_node_get_string (node);
}

/* The first property of @name that differs, or NULL. */
static gchar *
compare_element (const gchar * name, const gchar * factory,
    JsonObject * before, JsonObject * now)
{
  GList *names = g_list_sort (g_list_concat (json_object_get_members (before),
          json_object_get_members (now)), (GCompareFunc) strcmp);
  gchar *difference = NULL;

  for (GList * l = names; l != NULL && difference == NULL; l = l->next) {
    const gchar *property = l->data;
    const gchar *was = property_value (before, property);
    const gchar *is = property_value (now, property);

    if (in_list (neutral_properties, property)
        || (g_strcmp0 (factory, "patchstoresink") == 0
            && strcmp (property, "location") == 0))
      continue;
    if (g_strcmp0 (was, is) != 0)
      difference = g_strdup_printf ("%s %s: %s in the store, %s now", name,
          property, was ? was : "the default", is ? is : "the default");
  }
  g_list_free (names);
  return difference;
}

gchar *
wsi_store_settings_difference (JsonNode * recorded, JsonNode * current)
{
  GHashTable *factories = g_hash_table_new_full (g_str_hash, g_str_equal,
      g_free, NULL);
  GHashTable *before = elements_by_name (recorded, factories);
  GHashTable *now = elements_by_name (current, factories);
  GList *names = g_list_sort (g_list_concat (g_hash_table_get_keys (before),
          g_hash_table_get_keys (now)), (GCompareFunc) strcmp);
  gchar *difference = NULL;

  for (GList * l = names; l != NULL && difference == NULL; l = l->next) {
    const gchar *name = l->data;
    JsonObject *was = g_hash_table_lookup (before, name);
    JsonObject *is = g_hash_table_lookup (now, name);

    if (was == NULL)
      difference = g_strdup_printf ("element %s is new (the store was "
          "written without it)", name);
    else if (is == NULL)
      difference = g_strdup_printf ("element %s is gone (the store was "
          "written with it)", name);
    else
      difference = compare_element (name, g_hash_table_lookup (factories,
              name), was, is);
  }
  g_list_free (names);
  g_hash_table_unref (before);
  g_hash_table_unref (now);
  g_hash_table_unref (factories);
  if (difference != NULL) {
    /* values came from files and property values: UTF-8 for messages */
    gchar *shown = wsi_text_escape (difference, -1);
    g_free (difference);
    difference = shown;
  }
  return difference;
}
