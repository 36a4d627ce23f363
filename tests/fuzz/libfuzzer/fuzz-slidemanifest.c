/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzz-slidemanifest.c: libFuzzer target for wsislidesrc's slide
 * manifests (ext/wsislide/collection/wsimanifest.c: CSV and TSV with a
 * header row, RFC 4180 quoting) and the TCGA barcode parse applied to each
 * row's path with `tcga=true` (wsitcga.c).
 *
 * Input: the whole manifest. It is sniffed as a file without a telling
 * extension would be (by its first line), then parsed as CSV and as TSV;
 * every accepted row's path goes through the barcode parse.
 *
 * Invariants beyond ASan's: a refusal sets an error whose message starts
 * with the file name (wsimanifest.h: "FILE:LINE:"); an accepted manifest
 * has a non-empty path and one value per column name in every row, rows
 * in file order (non-decreasing lines); the barcode parse fills all its
 * columns either way, and empty ones when it says the name is no barcode
 * (project aside). GLib criticals and warnings are fatal.
 *
 * Cost: a few passes over the input. Single-threaded.
 */

#include "wsimanifest.h"
#include "wsitcga.h"

#include <stdint.h>
#include <string.h>

#define FILE_NAME "fuzz-slides.list"

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  (void) argc;
  (void) argv;
  g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  return 0;
}

static void
check_tcga (const gchar * path)
{
  gchar *values[WSI_TCGA_N_COLUMNS];
  gboolean parsed = wsi_tcga_parse (path, values);
  guint c;

  for (c = 0; c < WSI_TCGA_N_COLUMNS; c++) {
    g_assert (values[c] != NULL);
    /* column 0 is the project, from the folders: filled either way */
    if (!parsed && c > 0)
      g_assert (values[c][0] == '\0');
    g_free (values[c]);
  }
}

static void
parse (const gchar * text, gsize length, WsiManifestFormat format)
{
  GError *error = NULL;
  WsiManifest *m = wsi_manifest_parse (FILE_NAME, text, length, format,
      &error);
  guint n_names, i, last_line = 0;

  if (m == NULL) {
    g_assert (error != NULL && g_str_has_prefix (error->message, FILE_NAME));
    g_clear_error (&error);
    return;
  }
  g_assert (error == NULL && m->names != NULL && m->rows != NULL);
  n_names = g_strv_length (m->names);
  for (i = 0; i < m->rows->len; i++) {
    const WsiManifestRow *row = g_ptr_array_index (m->rows, i);

    g_assert (row->path != NULL && row->path[0] != '\0');
    g_assert (row->values != NULL && g_strv_length (row->values) == n_names);
    g_assert (row->line > last_line);
    last_line = row->line;
    check_tcga (row->path);
  }
  wsi_manifest_free (m);
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  /* as wsi_local_file_read() hands a file over: its length (NULs and
   * all), a NUL after the end */
  gchar *text = g_malloc (size + 1);

  memcpy (text, data, size);
  text[size] = '\0';
  (void) wsi_manifest_sniff (FILE_NAME, text);
  parse (text, size, WSI_MANIFEST_CSV);
  parse (text, size, WSI_MANIFEST_TSV);
  g_free (text);
  return 0;
}
