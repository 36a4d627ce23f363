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

#include "wsislidesrcuri.h"

static GstURIType
gst_wsi_slide_src_uri_get_type (GType type)
{
  return GST_URI_SRC;
}

static const gchar *const *
gst_wsi_slide_src_uri_get_protocols (GType type)
{
  static const gchar *protocols[] = { "wsi", NULL };

  return protocols;
}

static gchar *
gst_wsi_slide_src_uri_get_uri (GstURIHandler * handler)
{
  GstWsiSlideSrc *self = (GstWsiSlideSrc *) handler;
  gchar *uri = NULL;

  g_mutex_lock (&self->lock);
  if (self->location != NULL) {
    gchar *escaped = g_uri_escape_string (self->location,
        G_URI_RESERVED_CHARS_ALLOWED_IN_PATH, FALSE);
    uri = g_strconcat ("wsi://", escaped, NULL);
    g_free (escaped);
  }
  g_mutex_unlock (&self->lock);
  return uri;
}

static gboolean
gst_wsi_slide_src_uri_set_uri (GstURIHandler * handler, const gchar * uri,
    GError ** error)
{
  GstWsiSlideSrc *self = (GstWsiSlideSrc *) handler;
  GstUri *parsed = gst_uri_from_string (uri);
  GHashTable *query;
  GHashTableIter iter;
  gpointer key, value;
  gchar *path;

  if (parsed == NULL || g_strcmp0 (gst_uri_get_scheme (parsed), "wsi") != 0) {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
        "wsislidesrc: '%s' is not a wsi:// URI", uri);
    if (parsed)
      gst_uri_unref (parsed);
    return FALSE;
  }
  path = gst_uri_get_path (parsed);
  if (path == NULL || path[0] == '\0') {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
        "wsislidesrc: '%s' names no path", uri);
    g_free (path);
    gst_uri_unref (parsed);
    return FALSE;
  }
  g_object_set (self, "location", path, NULL);

  /* Properties may ride along: wsi:///data?cycle=true&seed=3 */
  query = gst_uri_get_query_table (parsed);
  if (query != NULL) {
    g_hash_table_iter_init (&iter, query);
    while (g_hash_table_iter_next (&iter, &key, &value)) {
      if (value != NULL)
        gst_util_set_object_arg (G_OBJECT (self), key, value);
    }
    g_hash_table_unref (query);
  }
  g_free (path);
  gst_uri_unref (parsed);
  return TRUE;
}

void
wsi_slide_src_uri_handler_init (gpointer g_iface, gpointer iface_data)
{
  GstURIHandlerInterface *iface = (GstURIHandlerInterface *) g_iface;

  iface->get_type = gst_wsi_slide_src_uri_get_type;
  iface->get_protocols = gst_wsi_slide_src_uri_get_protocols;
  iface->get_uri = gst_wsi_slide_src_uri_get_uri;
  iface->set_uri = gst_wsi_slide_src_uri_set_uri;
}
