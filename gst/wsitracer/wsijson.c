/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsijson.c: GstStructure to JSON (see wsijson.h). */

#include <math.h>

#include "wsijson.h"

void
wsi_json_append_string (GString * out, const gchar * text)
{
  const guchar *c;

  g_string_append_c (out, '"');
  for (c = (const guchar *) (text ? text : ""); *c; c++) {
    switch (*c) {
      case '"':
        g_string_append (out, "\\\"");
        break;
      case '\\':
        g_string_append (out, "\\\\");
        break;
      case '\n':
        g_string_append (out, "\\n");
        break;
      case '\t':
        g_string_append (out, "\\t");
        break;
      default:
        if (*c < 0x20)
          g_string_append_printf (out, "\\u%04x", *c);
        else
          g_string_append_c (out, *c);
    }
  }
  g_string_append_c (out, '"');
}

static void
append_double (GString * out, gdouble d)
{
  gchar buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (!isfinite (d)) {
    g_string_append (out, "null");
    return;
  }
  g_string_append (out, g_ascii_formatd (buf, sizeof (buf), "%.6g", d));
}

static void append_value (GString * out, const GValue * value);

static void
append_sequence (GString * out, const GValue * value, gboolean is_list)
{
  guint i, n = is_list ? gst_value_list_get_size (value)
      : gst_value_array_get_size (value);

  g_string_append_c (out, '[');
  for (i = 0; i < n; i++) {
    if (i > 0)
      g_string_append_c (out, ',');
    append_value (out, is_list ? gst_value_list_get_value (value, i)
        : gst_value_array_get_value (value, i));
  }
  g_string_append_c (out, ']');
}

static void
append_value (GString * out, const GValue * value)
{
  GType type = G_VALUE_TYPE (value);

  if (type == G_TYPE_STRING)
    wsi_json_append_string (out, g_value_get_string (value));
  else if (type == G_TYPE_BOOLEAN)
    g_string_append (out, g_value_get_boolean (value) ? "true" : "false");
  else if (type == G_TYPE_INT)
    g_string_append_printf (out, "%d", g_value_get_int (value));
  else if (type == G_TYPE_UINT)
    g_string_append_printf (out, "%u", g_value_get_uint (value));
  else if (type == G_TYPE_INT64)
    g_string_append_printf (out, "%" G_GINT64_FORMAT,
        g_value_get_int64 (value));
  else if (type == G_TYPE_UINT64)
    g_string_append_printf (out, "%" G_GUINT64_FORMAT,
        g_value_get_uint64 (value));
  else if (type == G_TYPE_DOUBLE)
    append_double (out, g_value_get_double (value));
  else if (type == G_TYPE_FLOAT)
    append_double (out, g_value_get_float (value));
  else if (type == GST_TYPE_STRUCTURE)
    wsi_json_append_structure (out, gst_value_get_structure (value));
  else if (type == GST_TYPE_ARRAY)
    append_sequence (out, value, FALSE);
  else if (type == GST_TYPE_LIST)
    append_sequence (out, value, TRUE);
  else {
    gchar *text = gst_value_serialize (value);
    wsi_json_append_string (out, text);
    g_free (text);
  }
}

void
wsi_json_append_structure (GString * out, const GstStructure * s)
{
  gint i, n;

  g_string_append_c (out, '{');
  if (s == NULL) {
    g_string_append_c (out, '}');
    return;
  }
  n = gst_structure_n_fields (s);
  for (i = 0; i < n; i++) {
    const gchar *name = gst_structure_nth_field_name (s, i);

    if (i > 0)
      g_string_append_c (out, ',');
    wsi_json_append_string (out, name);
    g_string_append_c (out, ':');
    append_value (out, gst_structure_get_value (s, name));
  }
  g_string_append_c (out, '}');
}
