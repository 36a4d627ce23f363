/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#include <string.h>

#include "wsibatchmeta.h"

void
wsi_batch_meta_init (WsiBatchMeta * m)
{
  memset (m, 0, sizeof (*m));
}

void
wsi_batch_meta_clear (WsiBatchMeta * m)
{
  g_free (m->records);
  g_free (m->paths);
  g_free (m->labels);
  g_free (m->uris);
  g_free (m->mpps);
  g_strfreev (m->view_names);
  g_free (m->views);
  g_strfreev (m->column_names);
  g_free (m->column_values);
  g_free (m->last_values);
  wsi_batch_meta_init (m);
}

/* As wsi_batch_meta_strv(), by quark (wsi_meta_quarks()). */
static const gchar *const *
strv_by_id (const GstStructure * s, GQuark field, guint * n)
{
  const GValue *value = s ? gst_structure_id_get_value (s, field) : NULL;
  const gchar *const *strv = NULL;

  if (value != NULL && G_VALUE_HOLDS (value, G_TYPE_STRV))
    strv = (const gchar * const *) g_value_get_boxed (value);
  *n = strv ? g_strv_length ((gchar **) strv) : 0;
  return strv;
}

const gchar *const *
wsi_batch_meta_strv (const GstStructure * s, const gchar * field, guint * n)
{
  return strv_by_id (s, g_quark_from_string (field), n);
}

void
wsi_batch_meta_start (WsiBatchMeta * m, guint capacity)
{
  if (capacity > m->capacity) {
    m->records = g_renew (WsiPatchRecord, m->records, capacity);
    m->paths = g_renew (const gchar *, m->paths, capacity + 1);
    m->labels = g_renew (const gchar *, m->labels, capacity + 1);
    m->uris = g_renew (const gchar *, m->uris, capacity + 1);
    m->mpps = g_renew (gdouble, m->mpps, capacity);
    m->capacity = capacity;
  }
  /* the view and column arrays are sized when a batch adopts names */
  m->n = 0;
  m->has_slides = FALSE;
  g_clear_pointer (&m->view_names, g_strfreev);
  g_clear_pointer (&m->column_names, g_strfreev);
  m->n_views = 0;
  m->n_columns = 0;
}

/* Interns @str, skipping the global table when it repeats @*last. */
static const gchar *
intern_cached (const gchar * str, const gchar ** last)
{
  if (str == NULL)
    str = "";
  /* consecutive patches mostly share a slide: skip the global table */
  if (*last == NULL || strcmp (*last, str) != 0)
    *last = g_intern_string (str);
  return *last;
}

static gboolean
same_names (gchar ** a, const gchar * const *b, guint n_b)
{
  guint i;

  if (g_strv_length (a) != n_b)
    return FALSE;
  for (i = 0; i < n_b; i++)
    if (strcmp (a[i], b[i]) != 0)
      return FALSE;
  return TRUE;
}

/* The first location of a batch decides its view names. */
static gboolean
append_views (WsiBatchMeta * m, const GstStructure * in, guint i,
    gchar ** error)
{
  guint n_names, n_records = 0;
  const gchar *const *names = wsi_batch_meta_strv (in, "view-names",
      &n_names);
  const WsiViewRecord *views = in ? wsi_patch_meta_views (in, &n_records)
      : NULL;

  if (n_names == 0) {
    *error = g_strdup ("a multi-view buffer has no view-names in its "
        "WsiPatchMeta");
    return FALSE;
  }
  if (m->n == 0) {
    m->view_names = g_strdupv ((gchar **) names);
    m->n_views = n_names;
    m->views = g_renew (WsiViewRecord, m->views, m->capacity * n_names);
  } else if (!same_names (m->view_names, names, n_names)) {
    gchar *had = g_strjoinv (",", m->view_names);
    gchar *got = g_strjoinv (",", (gchar **) names);

    *error = g_strdup_printf ("the view names changed within a batch "
        "(%s, then %s)", had, got);
    g_free (had);
    g_free (got);
    return FALSE;
  }
  if (views == NULL || n_records < (i + 1) * n_names) {
    *error = g_strdup_printf ("location %u of a multi-view buffer has no "
        "view records (%u records for %u views)", i, n_records, n_names);
    return FALSE;
  }
  memcpy (m->views + m->n * m->n_views, views + i * n_names,
      n_names * sizeof (WsiViewRecord));
  return TRUE;
}

/* Index of @name in @names, or -1. */
static gint
find_name (const gchar * const *names, guint n, const gchar * name)
{
  guint j;

  for (j = 0; j < n; j++)
    if (strcmp (names[j], name) == 0)
      return j;
  return -1;
}

/* The first location of a batch decides its column names; later ones are
 * matched by name. */
static void
append_columns (WsiBatchMeta * m, const GstStructure * in, guint i)
{
  guint n_names, n_values, j;
  const WsiMetaQuarks *q = wsi_meta_quarks ();
  const gchar *const *names = strv_by_id (in, q->column_names, &n_names);
  const gchar *const *values = strv_by_id (in, q->column_values,
      &n_values);
  gboolean aligned;

  if (m->n == 0) {
    if (n_names == 0)
      return;
    m->column_names = g_strdupv ((gchar **) names);
    m->n_columns = n_names;
    m->column_values = g_renew (const gchar *, m->column_values,
        m->capacity * n_names + 1);
    m->last_values = g_renew (const gchar *, m->last_values, n_names);
    memset (m->last_values, 0, n_names * sizeof (const gchar *));
  }
  if (m->n_columns == 0)
    return;
  aligned = n_names > 0 && same_names (m->column_names, names, n_names);
  for (j = 0; j < m->n_columns; j++) {
    gint k = aligned ? (gint) j : (n_names ? find_name (names, n_names,
            m->column_names[j]) : -1);
    guint at = i * n_names + (guint) k;
    const gchar *value = (k >= 0 && at < n_values) ? values[at] : "";

    m->column_values[m->n * m->n_columns + j] =
        intern_cached (value, &m->last_values[j]);
  }
}

/* Location @i's slide as the patch meta names it (uris, mpps: set by
 * patchreader), so the batch hands on what no later stage reconstructs. */
static void
append_slide (WsiBatchMeta * m, const GstStructure * in, guint i)
{
  guint n_uris;
  const gchar *const *uris = strv_by_id (in, wsi_meta_quarks ()->uris,
      &n_uris);

  m->uris[m->n] = intern_cached (i < n_uris ? uris[i] : NULL, &m->last_uri);
  m->mpps[m->n] = in ? wsi_patch_meta_mpp (in, i) : 0.0;
  if (i < n_uris)
    m->has_slides = TRUE;
}

gboolean
wsi_batch_meta_append (WsiBatchMeta * m, const GstStructure * in, guint i,
    guint64 sequence, gboolean expect_views, gchar ** error)
{
  WsiPatchRecord *record = &m->records[m->n];
  const WsiPatchRecord *records = NULL;
  guint n_records = 0, n_strings;
  const WsiMetaQuarks *q = wsi_meta_quarks ();
  const gchar *const *paths = strv_by_id (in, q->paths, &n_strings);
  const gchar *const *labels;

  g_return_val_if_fail (m->n < m->capacity, FALSE);
  if (in)
    records = wsi_patch_meta_records (in, &n_records);
  if (i < n_records) {
    *record = records[i];
  } else {
    memset (record, 0, sizeof (*record));
    record->sequence = sequence;
    record->level = WSI_LEVEL_UNSET;
  }
  m->paths[m->n] = intern_cached (i < n_strings ? paths[i] : NULL,
      &m->last_path);
  labels = strv_by_id (in, q->labels, &n_strings);
  m->labels[m->n] = intern_cached (i < n_strings ? labels[i] : NULL,
      &m->last_label);
  append_slide (m, in, i);

  if (expect_views && !append_views (m, in, i, error))
    return FALSE;
  append_columns (m, in, i);
  m->n++;
  return TRUE;
}

void
wsi_batch_meta_attach (WsiBatchMeta * m, GstBuffer * buf)
{
  GstStructure *s;

  m->paths[m->n] = NULL;
  m->labels[m->n] = NULL;
  s = wsi_patch_meta_add (buf, m->records, m->n, m->paths, m->labels);
  if (m->has_slides) {
    m->uris[m->n] = NULL;
    wsi_patch_meta_set_slides (s, m->uris, m->mpps, m->n);
  }
  if (m->n_views > 0) {
    GBytes *views = g_bytes_new (m->views,
        m->n * m->n_views * sizeof (WsiViewRecord));

    gst_structure_set (s, "view-names", G_TYPE_STRV, m->view_names,
        "views", G_TYPE_BYTES, views, NULL);
    g_bytes_unref (views);
  }
  if (m->n_columns > 0) {
    m->column_values[m->n * m->n_columns] = NULL;
    gst_structure_set (s, "column-names", G_TYPE_STRV, m->column_names,
        "column-values", G_TYPE_STRV, m->column_values, NULL);
  }
  if (m->n_views > 0 || m->n_columns > 0)
    gst_structure_set (s, "record-version", G_TYPE_UINT, WSI_RECORD_VERSION,
        NULL);
}
