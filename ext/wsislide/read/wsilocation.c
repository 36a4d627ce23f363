/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsilocation.c: see wsilocation.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "wsilocation.h"
#include "wsilocalfile.h"

gboolean
wsi_location_is_remote (const gchar * location)
{
  static const gchar *const schemes[] = { "http://", "https://", "s3://",
    "gs://"
  };
  guint i;

  if (location == NULL)
    return FALSE;
  for (i = 0; i < G_N_ELEMENTS (schemes); i++)
    if (g_ascii_strncasecmp (location, schemes[i], strlen (schemes[i])) == 0)
      return TRUE;
  return FALSE;
}

gchar *
wsi_location_scheme (const gchar * location)
{
  const gchar *p;

  if (location == NULL || !g_ascii_isalpha (location[0]))
    return NULL;
  /* RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) */
  for (p = location; g_ascii_isalnum (*p) || *p == '+' || *p == '-'
      || *p == '.'; p++);
  if (strncmp (p, "://", 3) != 0)
    return NULL;
  return g_ascii_strdown (location, p - location);
}

gchar *
wsi_display_text (const gchar * text)
{
  /* The one escaping of bytes from outside, shared with the store and the
   * mask cache (wsilocalfile.h). */
  return wsi_text_escape (text, -1);
}

gchar *
wsi_location_display (const gchar * location)
{
  GUri *uri;
  gchar *display;

  if (!wsi_location_is_remote (location))
    return wsi_display_text (location);
  uri = g_uri_parse (location, G_URI_FLAGS_ENCODED | G_URI_FLAGS_NON_DNS,
      NULL);
  if (uri == NULL || g_uri_get_host (uri) == NULL) {
    /* Unparsable: show the scheme only, never text that may be a secret. */
    const gchar *colon = strchr (location, ':');
    display = g_strdup_printf ("%.*s://(invalid URL)",
        (int) (colon - location), location);
  } else {
    display = g_uri_join (G_URI_FLAGS_ENCODED | G_URI_FLAGS_NON_DNS,
        g_uri_get_scheme (uri), NULL, g_uri_get_host (uri),
        g_uri_get_port (uri), g_uri_get_path (uri), NULL, NULL);
  }
  if (uri != NULL)
    g_uri_unref (uri);
  return display;
}

static GMutex remembered_lock;
static GHashTable *remembered;  /* display -> full location */

void
wsi_location_remember (const gchar * location)
{
  gchar *display;

  if (!wsi_location_is_remote (location))
    return;
  display = wsi_location_display (location);
  if (strcmp (display, location) == 0) {
    g_free (display);
    return;
  }
  g_mutex_lock (&remembered_lock);
  if (remembered == NULL)
    remembered = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
        g_free);
  g_hash_table_replace (remembered, display, g_strdup (location));
  g_mutex_unlock (&remembered_lock);
}

gchar *
wsi_location_resolve (const gchar * location)
{
  const gchar *full = NULL;
  gchar *result;

  g_mutex_lock (&remembered_lock);
  if (remembered != NULL)
    full = g_hash_table_lookup (remembered, location);
  result = g_strdup (full ? full : location);
  g_mutex_unlock (&remembered_lock);
  return result;
}
