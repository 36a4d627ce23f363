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
