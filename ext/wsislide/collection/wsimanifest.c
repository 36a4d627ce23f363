/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsimanifest.c: CSV and TSV slide manifests (see wsimanifest.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsimanifest.h"

#include <string.h>

#define UTF8_BOM "\xEF\xBB\xBF"
#define PATH_COLUMN "path"

typedef struct
{
  const gchar *file;
  const gchar *p;
  const gchar *end;
  gchar separator;
  guint line;                   /* line of @p, 1-based */
} Reader;

static void
manifest_error (GError ** error, const Reader * r, guint line,
    const gchar * format, ...) G_GNUC_PRINTF (4, 5);

static void
manifest_error (GError ** error, const Reader * r, guint line,
    const gchar * format, ...)
{
  va_list args;
  gchar *reason;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s:%u: %s", r->file,
      line, reason);
  g_free (reason);
}

/* Steps over a line end at @r->p, if there is one (LF or CRLF). */
static gboolean
skip_line_end (Reader * r)
{
  if (r->p < r->end && *r->p == '\n') {
    r->p++;
  } else if (r->end - r->p >= 2 && r->p[0] == '\r' && r->p[1] == '\n') {
    r->p += 2;
  } else {
    return FALSE;
  }
  r->line++;
  return TRUE;
}

/* After a field: a separator (more fields follow), a line end or the end
 * of the text (the record ends). FALSE when something else follows. */
static gboolean
finish_field (Reader * r, gboolean * last)
{
  if (r->p >= r->end || skip_line_end (r)) {
    *last = TRUE;
    return TRUE;
  }
  if (*r->p == r->separator) {
    r->p++;
    *last = FALSE;
    return TRUE;
  }
  return FALSE;
}

/* A field in double quotes: separators and line breaks are text, "" is a
 * quote. */
static gboolean
read_quoted_field (Reader * r, guint row_line, GString * field,
    gboolean * last, GError ** error)
{
  r->p++;
  for (;;) {
    if (r->p >= r->end) {
      manifest_error (error, r, row_line, "a quoted field is never closed");
      return FALSE;
    }
    if (*r->p == '"') {
      if (r->end - r->p >= 2 && r->p[1] == '"') {
        g_string_append_c (field, '"');
        r->p += 2;
        continue;
      }
      r->p++;
      break;
    }
    if (*r->p == '\n')
      r->line++;
    g_string_append_c (field, *r->p++);
  }
  if (!finish_field (r, last)) {
    manifest_error (error, r, row_line, "text after a closing quote (a "
        "quote inside a quoted field is written \"\")");
    return FALSE;
  }
  return TRUE;
}

static gboolean
read_field (Reader * r, guint row_line, GString * field, gboolean * last,
    GError ** error)
{
  g_string_truncate (field, 0);
  if (r->p < r->end && *r->p == '"')
    return read_quoted_field (r, row_line, field, last, error);

  while (r->p < r->end && *r->p != r->separator && *r->p != '\n')
    g_string_append_c (field, *r->p++);
  if (field->len > 0 && field->str[field->len - 1] == '\r'
      && (r->p >= r->end || *r->p == '\n'))
    g_string_truncate (field, field->len - 1);
  return finish_field (r, last);
}

/* Reads the next non-blank record into @fields; returns 1, 0 at the end of
 * the text, -1 on error. */
static gint
read_record (Reader * r, GPtrArray * fields, guint * row_line,
    GError ** error)
{
  GString *field;
  gboolean last = FALSE;

  while (skip_line_end (r));
  if (r->p >= r->end)
    return 0;

  *row_line = r->line;
  g_ptr_array_set_size (fields, 0);
  field = g_string_new (NULL);
  while (!last) {
    if (!read_field (r, *row_line, field, &last, error)) {
      g_string_free (field, TRUE);
      return -1;
    }
    g_ptr_array_add (fields, g_strdup (field->str));
  }
  g_string_free (field, TRUE);
  return 1;
}

/* Finds the path column and keeps the others' names; FALSE (error set) on
 * an empty or repeated name or no path column. */
static gboolean
parse_header (Reader * r, GPtrArray * header, guint line,
    guint * path_column, WsiManifest * manifest, GError ** error)
{
  GPtrArray *names = g_ptr_array_new ();
  guint i, j;

  *path_column = G_MAXUINT;
  for (i = 0; i < header->len; i++) {
    gchar *name = g_strstrip ((gchar *) g_ptr_array_index (header, i));

    if (name[0] == '\0') {
      manifest_error (error, r, line, "column %u of the header has no name",
          i + 1);
      goto failed;
    }
    for (j = 0; j < i; j++) {
      if (strcmp (g_ptr_array_index (header, j), name) == 0) {
        manifest_error (error, r, line, "column \"%s\" appears twice", name);
        goto failed;
      }
    }
    if (g_ascii_strcasecmp (name, PATH_COLUMN) == 0) {
      /* the match ignores case, the repeat check above does not: a
       * second path column would leave the rows one field short of the
       * header's count, and the path read past the row's fields */
      if (*path_column != G_MAXUINT) {
        manifest_error (error, r, line, "two path columns (\"%s\" and "
            "\"%s\")", (const gchar *) g_ptr_array_index (header,
                *path_column), name);
        goto failed;
      }
      *path_column = i;
    } else
      g_ptr_array_add (names, g_strdup (name));
  }
  if (*path_column == G_MAXUINT) {
    GString *all = g_string_new (NULL);

    for (i = 0; i < header->len; i++)
      g_string_append_printf (all, "%s\"%s\"", i ? ", " : "",
          (const gchar *) g_ptr_array_index (header, i));
    manifest_error (error, r, line, "no \"path\" column (the header names %s)",
        all->str);
    g_string_free (all, TRUE);
    goto failed;
  }
  g_ptr_array_add (names, NULL);
  manifest->names = (gchar **) g_ptr_array_free (names, FALSE);
  return TRUE;

failed:
  g_ptr_array_set_free_func (names, g_free);
  g_ptr_array_unref (names);
  return FALSE;
}

static void
manifest_row_free (WsiManifestRow * row)
{
  g_free (row->path);
  g_strfreev (row->values);
  g_free (row);
}

/* Turns one record into a row; FALSE (error set) on a wrong field count or
 * an empty path. */
static gboolean
add_row (Reader * r, GPtrArray * fields, guint n_columns, guint path_column,
    guint line, WsiManifest * manifest, GError ** error)
{
  WsiManifestRow *row;
  guint i, k = 0;

  if (fields->len != n_columns) {
    manifest_error (error, r, line, "%u fields, the header has %u",
        fields->len, n_columns);
    return FALSE;
  }
  if (g_strstrip ((gchar *) g_ptr_array_index (fields, path_column))[0] == 0) {
    manifest_error (error, r, line, "the path is empty");
    return FALSE;
  }
  row = g_new0 (WsiManifestRow, 1);
  row->line = line;
  row->values = g_new0 (gchar *, n_columns);
  for (i = 0; i < n_columns; i++) {
    if (i == path_column)
      row->path = g_strdup (g_ptr_array_index (fields, i));
    else
      row->values[k++] = g_strdup (g_ptr_array_index (fields, i));
  }
  g_ptr_array_add (manifest->rows, row);
  return TRUE;
}

WsiManifest *
wsi_manifest_parse (const gchar * file_name, const gchar * contents,
    gsize length, WsiManifestFormat format, GError ** error)
{
  Reader r = { file_name, contents, contents + length,
    format == WSI_MANIFEST_TSV ? '\t' : ',', 1
  };
  WsiManifest *manifest = g_new0 (WsiManifest, 1);
  GPtrArray *fields = g_ptr_array_new_with_free_func (g_free);
  guint path_column, n_columns, line;
  gint got;

  manifest->rows = g_ptr_array_new_with_free_func ((GDestroyNotify)
      manifest_row_free);
  if (length >= 3 && memcmp (contents, UTF8_BOM, 3) == 0)
    r.p += 3;

  got = read_record (&r, fields, &line, error);
  if (got == 0)
    manifest_error (error, &r, 1, "empty: a header row naming a \"path\" "
        "column is needed");
  if (got <= 0)
    goto failed;
  if (!parse_header (&r, fields, line, &path_column, manifest, error))
    goto failed;
  n_columns = g_strv_length (manifest->names) + 1;

  while ((got = read_record (&r, fields, &line, error)) == 1) {
    if (!add_row (&r, fields, n_columns, path_column, line, manifest, error))
      goto failed;
  }
  if (got < 0)
    goto failed;
  g_ptr_array_unref (fields);
  return manifest;

failed:
  g_ptr_array_unref (fields);
  wsi_manifest_free (manifest);
  return NULL;
}

void
wsi_manifest_free (WsiManifest * manifest)
{
  if (manifest == NULL)
    return;
  g_strfreev (manifest->names);
  g_ptr_array_unref (manifest->rows);
  g_free (manifest);
}

WsiManifestFormat
wsi_manifest_sniff (const gchar * file_name, const gchar * contents)
{
  gchar *lower = g_ascii_strdown (file_name, -1);
  WsiManifestFormat format = WSI_MANIFEST_NONE;
  gsize n = strlen (PATH_COLUMN);

  if (g_str_has_suffix (lower, ".csv"))
    format = WSI_MANIFEST_CSV;
  else if (g_str_has_suffix (lower, ".tsv"))
    format = WSI_MANIFEST_TSV;
  g_free (lower);
  if (format != WSI_MANIFEST_NONE || contents == NULL)
    return format;

  if (g_str_has_prefix (contents, UTF8_BOM))
    contents += 3;
  if (g_ascii_strncasecmp (contents, PATH_COLUMN, n) == 0) {
    if (contents[n] == ',')
      return WSI_MANIFEST_CSV;
    if (contents[n] == '\t')
      return WSI_MANIFEST_TSV;
  }
  return WSI_MANIFEST_NONE;
}
