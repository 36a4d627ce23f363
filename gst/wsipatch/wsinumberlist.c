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

#include "wsinumberlist.h"

gchar *
wsi_number_list_format (const gdouble * values, guint n, gchar separator,
    const gchar * format)
{
  GString *text = g_string_new (NULL);
  gchar number[G_ASCII_DTOSTR_BUF_SIZE];
  guint i;

  for (i = 0; i < n; i++) {
    if (i > 0)
      g_string_append_c (text, separator);
    g_string_append (text, g_ascii_formatd (number, sizeof (number), format,
            values[i]));
  }
  return g_string_free (text, FALSE);
}
