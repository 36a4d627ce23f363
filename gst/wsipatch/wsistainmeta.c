/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsistainmeta.c: see wsistainmeta.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/wsi/wsirecord.h>
#include <string.h>

#include "wsistainmeta.h"

void
wsi_stain_meta_set_columns (GstStructure * s, const gchar * const *names,
    const gchar * const *values)
{
  const gchar *const *old_names = wsi_structure_get_strv (s, "column-names");
  const gchar *const *old_values = wsi_structure_get_strv (s,
      "column-values");
  GPtrArray *n = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *v = g_ptr_array_new_with_free_func (g_free);
  guint i, j, n_old = old_names ? g_strv_length ((gchar **) old_names) : 0;
  guint n_old_values = old_values ? g_strv_length ((gchar **) old_values) : 0;

  for (i = 0; i < n_old; i++) {
    gboolean replaced = FALSE;

    for (j = 0; names[j] != NULL; j++)
      replaced |= strcmp (old_names[i], names[j]) == 0;
    if (replaced)
      continue;
    g_ptr_array_add (n, g_strdup (old_names[i]));
    g_ptr_array_add (v, g_strdup (i < n_old_values ? old_values[i] : ""));
  }
  for (j = 0; names[j] != NULL; j++) {
    g_ptr_array_add (n, g_strdup (names[j]));
    g_ptr_array_add (v, g_strdup (values[j] ? values[j] : ""));
  }
  g_ptr_array_add (n, NULL);
  g_ptr_array_add (v, NULL);
  wsi_meta_set_columns (s, (const gchar * const *) n->pdata,
      (const gchar * const *) v->pdata);
  g_ptr_array_unref (n);
  g_ptr_array_unref (v);
}

gboolean
wsi_stain_meta_get_matrix (const GstStructure * s, gboolean vahadane,
    WsiStainMatrix * out)
{
  gdouble m[6], c[2];
  guint i;

  if (!wsi_stain_parse_numbers (wsi_meta_column (s, vahadane ?
              WSI_STAIN_COL_VAHADANE_MATRIX : WSI_STAIN_COL_MATRIX, 0), m, 6)
      || !wsi_stain_parse_numbers (wsi_meta_column (s, vahadane ?
              WSI_STAIN_COL_VAHADANE_MAX_C : WSI_STAIN_COL_MAX_C, 0), c, 2))
    return FALSE;
  for (i = 0; i < 3; i++) {
    out->stains[0][i] = m[i];
    out->stains[1][i] = m[3 + i];
  }
  out->max_c[0] = c[0];
  out->max_c[1] = c[1];
  return TRUE;
}

gboolean
wsi_stain_meta_get_lab (const GstStructure * s, WsiStainLab * out)
{
  return wsi_stain_parse_numbers (wsi_meta_column (s, WSI_STAIN_COL_LAB_MEAN,
          0), out->mean, 3)
      && wsi_stain_parse_numbers (wsi_meta_column (s, WSI_STAIN_COL_LAB_STD,
          0), out->std, 3);
}

static const gchar *const source_names[WSI_STAIN_N_SOURCES] = {
  "none", "slide", "patch", "fallback"
};

void
wsi_stain_columns_init (WsiStainColumns * cols)
{
  memset (cols, 0, sizeof (*cols));
  cols->source = WSI_STAIN_N_SOURCES;
  cols->jitter = g_string_new (NULL);
  cols->randstain = g_string_new (NULL);
}

static void
append_numbers (GString * s, const gdouble * v, guint n)
{
  gchar *text = wsi_stain_format_numbers (v, n);

  g_string_append (s, text);
  g_free (text);
}

void
wsi_stain_columns_add (WsiStainColumns * cols, WsiStainSource source,
    const gdouble * used, const gdouble * jitter, const WsiStainLab * drawn)
{
  /* fields line up with views: one ';' before each view after the first */
  if (cols->source == WSI_STAIN_N_SOURCES) {
    cols->source = source;
    memcpy (cols->used, used, sizeof (cols->used));
  } else {
    g_string_append_c (cols->jitter, ';');
    g_string_append_c (cols->randstain, ';');
  }
  if (jitter != NULL && source != WSI_STAIN_SOURCE_NONE) {
    append_numbers (cols->jitter, jitter, 4);
    cols->any_jitter = TRUE;
  }
  if (drawn != NULL && source != WSI_STAIN_SOURCE_NONE) {
    gdouble t[6];

    memcpy (t, drawn->mean, 3 * sizeof (gdouble));
    memcpy (t + 3, drawn->std, 3 * sizeof (gdouble));
    append_numbers (cols->randstain, t, 6);
    cols->any_randstain = TRUE;
  }
}

void
wsi_stain_columns_write (WsiStainColumns * cols, GstStructure * meta,
    gboolean matrix, const WsiRandStainDist * dist)
{
  static const gchar *const names[] = { WSI_STAIN_COL_SOURCE,
    WSI_STAIN_COL_USED, WSI_STAIN_COL_JITTER, NULL
  };
  static const gchar *const rs_names[] = { WSI_STAIN_COL_RANDSTAIN,
    WSI_STAIN_COL_RANDSTAIN_DIST, NULL
  };
  const gchar *values[4] = { NULL, NULL, NULL, NULL };
  gchar *used_text = NULL, *dist_text = NULL;

  if (meta != NULL) {
    values[0] = source_names[cols->source];
    if (cols->source != WSI_STAIN_SOURCE_NONE)
      used_text = wsi_stain_format_numbers (cols->used, matrix ? 8 : 6);
    values[1] = used_text ? used_text : "";
    values[2] = cols->any_jitter ? cols->jitter->str : "";
    wsi_stain_meta_set_columns (meta, names, values);
    if (dist != NULL) {
      if (dist->n_slides > 0) {
        gdouble t[13];

        memcpy (t, dist->mu, 6 * sizeof (gdouble));
        memcpy (t + 6, dist->sigma, 6 * sizeof (gdouble));
        t[12] = dist->n_slides;
        dist_text = wsi_stain_format_numbers (t, 13);
      }
      values[0] = cols->any_randstain ? cols->randstain->str : "";
      values[1] = dist_text ? dist_text : "";
      values[2] = NULL;
      wsi_stain_meta_set_columns (meta, rs_names, values);
    }
  }
  g_free (used_text);
  g_free (dist_text);
  g_string_free (cols->jitter, TRUE);
  g_string_free (cols->randstain, TRUE);
}
