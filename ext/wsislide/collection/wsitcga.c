/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsitcga.c: TCGA slide barcodes (see wsitcga.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsitcga.h"

enum
{
  COL_PROJECT,
  COL_BARCODE,
  COL_PATIENT,
  COL_SAMPLE,
  COL_SAMPLE_TYPE,
  COL_VIAL,
  COL_PORTION,
  COL_SITE,
  COL_SLIDE_TYPE,
};

const gchar *const wsi_tcga_column_names[WSI_TCGA_N_COLUMNS + 1] = {
  "project", "barcode", "patient", "sample", "sample_type", "vial",
  "portion", "tissue_source_site", "slide_type", NULL
};

/* Slide barcode in the upper-cased name: at its start or after a
 * character that is neither a letter nor a digit ("Aperio-TCGA-..."), ended
 * by a '.' or the end of the name. Groups: barcode, site, participant,
 * sample type, vial, portion, slide type. */
#define BARCODE_PATTERN "(?:^|[^A-Z0-9])(TCGA-([A-Z0-9]{2})-([A-Z0-9]{4})-" \
  "([0-9]{2})([A-Z])-([0-9]{2})-(DX|TS|BS|MS)[0-9A-Z]+)(?:\\.|$)"
#define PROJECT_PATTERN "^TCGA-[A-Z0-9]+$"

/* The parent or grandparent folder named like a TCGA project, or "". */
static gchar *
project_of (const gchar * path)
{
  gchar *dir = g_path_get_dirname (path);
  gchar *project = NULL;

  for (guint up = 0; up < 2 && project == NULL; up++) {
    gchar *name = g_path_get_basename (dir);
    gchar *upper = g_ascii_strup (name, -1);
    gchar *parent = g_path_get_dirname (dir);

    if (g_regex_match_simple (PROJECT_PATTERN, upper, 0, 0))
      project = g_steal_pointer (&upper);
    g_free (upper);
    g_free (name);
    g_free (dir);
    dir = parent;
  }
  g_free (dir);
  return project ? project : g_strdup ("");
}

gboolean
wsi_tcga_parse (const gchar * path, gchar * values[WSI_TCGA_N_COLUMNS])
{
  gchar *base = g_path_get_basename (path);
  gchar *name = g_ascii_strup (base, -1);
  GRegex *regex = g_regex_new (BARCODE_PATTERN, 0, 0, NULL);
  GMatchInfo *info = NULL;
  gboolean ok = g_regex_match (regex, name, 0, &info);
  guint i;

  values[COL_PROJECT] = project_of (path);
  for (i = COL_BARCODE; i < WSI_TCGA_N_COLUMNS; i++)
    values[i] = NULL;
  if (ok) {
    gchar *site = g_match_info_fetch (info, 2);
    gchar *participant = g_match_info_fetch (info, 3);

    values[COL_BARCODE] = g_match_info_fetch (info, 1);
    values[COL_PATIENT] = g_strdup_printf ("TCGA-%s-%s", site, participant);
    values[COL_SAMPLE_TYPE] = g_match_info_fetch (info, 4);
    values[COL_VIAL] = g_match_info_fetch (info, 5);
    values[COL_SAMPLE] = g_strdup_printf ("%s-%s%s", values[COL_PATIENT],
        values[COL_SAMPLE_TYPE], values[COL_VIAL]);
    values[COL_PORTION] = g_match_info_fetch (info, 6);
    values[COL_SITE] = site;
    values[COL_SLIDE_TYPE] = g_match_info_fetch (info, 7);
    g_free (participant);
  }
  for (i = COL_BARCODE; i < WSI_TCGA_N_COLUMNS; i++)
    if (values[i] == NULL)
      values[i] = g_strdup ("");
  g_match_info_free (info);
  g_regex_unref (regex);
  g_free (name);
  g_free (base);
  return ok;
}
