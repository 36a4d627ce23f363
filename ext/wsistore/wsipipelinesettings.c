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

#include "wsipipelinesettings.h"

#include <gst/wsi/wsitoplevel.h>

#include <string.h>

static JsonNode *
describe_element (GstElement * element)
{
  GstElementFactory *factory = gst_element_get_factory (element);
  GParamSpec **specs;
  guint n, i;
  JsonObject *o = json_object_new (), *props = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);
  gchar *name = gst_element_get_name (element);

  json_object_set_string_member (o, "element", factory ?
      GST_OBJECT_NAME (factory) : G_OBJECT_TYPE_NAME (element));
  json_object_set_string_member (o, "name", name);
  g_free (name);
  specs = g_object_class_list_properties (G_OBJECT_GET_CLASS (element), &n);
  for (i = 0; i < n; i++) {
    GParamSpec *spec = specs[i];
    GValue value = G_VALUE_INIT;
    gchar *text;

    if ((spec->flags & G_PARAM_READWRITE) != G_PARAM_READWRITE
        || strcmp (spec->name, "name") == 0
        || strcmp (spec->name, "parent") == 0)
      continue;
    g_value_init (&value, spec->value_type);
    g_object_get_property (G_OBJECT (element), spec->name, &value);
    if (!g_param_value_defaults (spec, &value)
        && (text = gst_value_serialize (&value)) != NULL) {
      json_object_set_string_member (props, spec->name, text);
      g_free (text);
    }
    g_value_unset (&value);
  }
  g_free (specs);
  json_object_set_object_member (o, "properties", props);
  json_node_take_object (node, o);
  return node;
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (GST_OBJECT_NAME (*(GstElement **) a),
      GST_OBJECT_NAME (*(GstElement **) b));
}

static void
find_seed (GstElement * element, gboolean * has_seed, guint64 * seed)
{
  GstElementFactory *factory = gst_element_get_factory (element);

  if (factory && strcmp (GST_OBJECT_NAME (factory), "wsislidesrc") == 0
      && !*has_seed) {
    g_object_get (element, "seed", seed, NULL);
    *has_seed = TRUE;
  }
}

JsonNode *
wsi_pipeline_settings_describe (GstElement * element, gboolean * has_seed,
    guint64 * seed)
{
  GstElement *top = wsi_element_get_top_level (element);
  GPtrArray *elements = g_ptr_array_new_with_free_func (gst_object_unref);
  JsonArray *array = json_array_new ();
  JsonNode *node = json_node_new (JSON_NODE_ARRAY);
  guint i;

  *has_seed = FALSE;
  if (GST_IS_BIN (top)) {
    GstIterator *it = gst_bin_iterate_recurse (GST_BIN (top));
    GValue item = G_VALUE_INIT;

    while (gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
      g_ptr_array_add (elements, g_value_dup_object (&item));
      g_value_reset (&item);
    }
    g_value_unset (&item);
    gst_iterator_free (it);
  } else {
    g_ptr_array_add (elements, gst_object_ref (top));
  }
  g_ptr_array_sort (elements, compare_names);
  for (i = 0; i < elements->len; i++) {
    GstElement *e = g_ptr_array_index (elements, i);

    json_array_add_element (array, describe_element (e));
    find_seed (e, has_seed, seed);
  }
  g_ptr_array_unref (elements);
  gst_object_unref (top);
  json_node_take_array (node, array);
  return node;
}
