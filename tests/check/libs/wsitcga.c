/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit test of the TCGA slide barcode parser (ext/wsislide/collection/wsitcga.c),
 * one table row per file name. */

#include <gst/check/gstcheck.h>

#include "wsitcga.h"

typedef struct
{
  const gchar *path;
  gboolean ok;
  /* project, barcode, patient, sample, sample_type, vial, portion,
   * tissue_source_site, slide_type */
  const gchar *expected[WSI_TCGA_N_COLUMNS];
} TcgaCase;

static const TcgaCase cases[] = {
  /* A GDC diagnostic slide in its UUID folder under a project folder. */
  {"/data/TCGA-BRCA/0a1b2c3d-uuid/"
        "TCGA-A1-A0SB-01Z-00-DX1.B34C267B-CAAA-4AB6-AD5C-276C26F997A1.svs",
        TRUE, {"TCGA-BRCA", "TCGA-A1-A0SB-01Z-00-DX1", "TCGA-A1-A0SB",
              "TCGA-A1-A0SB-01Z", "01", "Z", "00", "A1", "DX"}},
  /* Frozen top slide directly in the project folder. */
  {"/data/TCGA-LUAD/TCGA-05-4244-01A-01-TS1.2a9c5e0e.svs", TRUE,
        {"TCGA-LUAD", "TCGA-05-4244-01A-01-TS1", "TCGA-05-4244",
              "TCGA-05-4244-01A", "01", "A", "01", "05", "TS"}},
  /* Bottom slide of a normal sample, no project folder, lower case. */
  {"slides/tcga-3c-aaau-11a-02-bs2.svs", TRUE,
        {"", "TCGA-3C-AAAU-11A-02-BS2", "TCGA-3C-AAAU", "TCGA-3C-AAAU-11A",
              "11", "A", "02", "3C", "BS"}},
  /* Barcode alone, no extension. */
  {"TCGA-02-0001-01C-01-MS1", TRUE,
        {"", "TCGA-02-0001-01C-01-MS1", "TCGA-02-0001", "TCGA-02-0001-01C",
              "01", "C", "01", "02", "MS"}},
  /* Not slide barcodes: the project is still read, the rest is empty. */
  {"/data/TCGA-BRCA/TCGA-A1-A0SB.svs", FALSE,
        {"TCGA-BRCA", "", "", "", "", "", "", "", ""}},
  {"/data/TCGA-A1-A0SB-01Z-00-XX1.svs", FALSE,
        {"", "", "", "", "", "", "", "", ""}},
  {"/data/TCGA-A1-A0SB-1Z-00-DX1.svs", FALSE,
        {"", "", "", "", "", "", "", "", ""}},
  {"/data/TCGA-A1-A0SB-01Z-00-DX.svs", FALSE,
        {"", "", "", "", "", "", "", "", ""}},
  {"/data/xTCGA-A1-A0SB-01Z-00-DX1.svs", FALSE,
        {"", "", "", "", "", "", "", "", ""}},
  /* After a prefix, as the real slide in ../shared/slides is named. */
  {"/work/shared/slides/Aperio-JP2K-TCGA-CR-7395-01A-01-TS1.svs", TRUE,
        {"", "TCGA-CR-7395-01A-01-TS1", "TCGA-CR-7395", "TCGA-CR-7395-01A",
              "01", "A", "01", "CR", "TS"}},
  {"/data/TCGA-OV/x_TCGA-04-1331-01A-01-BS1_y.svs", FALSE,
        {"TCGA-OV", "", "", "", "", "", "", "", ""}},
  {"/data/TCGA-A1-A0SB-01Z-00-DX1x.svs", TRUE,
        {"", "TCGA-A1-A0SB-01Z-00-DX1X", "TCGA-A1-A0SB", "TCGA-A1-A0SB-01Z",
              "01", "Z", "00", "A1", "DX"}},
  {"/data/TCGA-A1-A0SB-01Z-00-DX1-extra.svs", FALSE,
        {"", "", "", "", "", "", "", "", ""}},
  {"/data/slide-001.svs", FALSE, {"", "", "", "", "", "", "", "", ""}},
  {"", FALSE, {"", "", "", "", "", "", "", "", ""}},
};

GST_START_TEST (test_barcode_table)
{
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *values[WSI_TCGA_N_COLUMNS];
    gboolean ok = wsi_tcga_parse (cases[i].path, values);

    fail_unless_equals_int (ok, cases[i].ok);
    for (guint c = 0; c < WSI_TCGA_N_COLUMNS; c++) {
      fail_unless (g_strcmp0 (values[c], cases[i].expected[c]) == 0,
          "%s: %s is \"%s\", expected \"%s\"", cases[i].path,
          wsi_tcga_column_names[c], values[c], cases[i].expected[c]);
      g_free (values[c]);
    }
  }
}

GST_END_TEST;

GST_START_TEST (test_column_names)
{
  fail_unless_equals_int (g_strv_length ((gchar **) wsi_tcga_column_names),
      WSI_TCGA_N_COLUMNS);
  fail_unless_equals_string (wsi_tcga_column_names[0], "project");
  fail_unless_equals_string (wsi_tcga_column_names[WSI_TCGA_N_COLUMNS - 1],
      "slide_type");
}

GST_END_TEST;

static Suite *
wsitcga_suite (void)
{
  Suite *s = suite_create ("wsitcga");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_barcode_table);
  tcase_add_test (tc, test_column_names);
  return s;
}

GST_CHECK_MAIN (wsitcga);
