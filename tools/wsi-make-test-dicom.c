/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsi-make-test-dicom: writes a DICOM VL Whole Slide Microscopy series from
 * a JPEG-tiled TIFF pyramid (wsitestdicom.h), e.g. one made by
 * wsi-make-test-slides:
 *
 *   wsi-make-test-dicom slide.tiff out/ --sparse --table=none --thumbnail
 */

#include <stdlib.h>
#include <string.h>

#include "wsitestdicom.h"

int
main (int argc, char **argv)
{
  gboolean sparse = FALSE, uncompressed = FALSE, thumbnail = FALSE;
  gboolean concatenation = FALSE, icc = FALSE;
  gdouble objective = 0.0;
  gchar *table = NULL, *prefix = NULL, *j2k = NULL, *jpegls = NULL;
  gdouble mpp = 0.0;
  gint seed = 1;
  GOptionEntry entries[] = {
    {"sparse", 0, 0, G_OPTION_ARG_NONE, &sparse,
        "TILED_SPARSE with per-frame positions (default TILED_FULL)", NULL},
    {"uncompressed", 0, 0, G_OPTION_ARG_NONE, &uncompressed,
        "Explicit VR little endian RGB frames (default: the JPEG tiles)", NULL},
    {"j2k", 0, 0, G_OPTION_ARG_STRING, &j2k,
        "JPEG 2000 frames: lossless (.4.90), lossy (.4.91) or htj2k (HTJ2K "
        "lossless .4.201, needs ojph_compress)", "KIND"},
    {"jpegls", 0, 0, G_OPTION_ARG_STRING, &jpegls,
        "JPEG-LS lossless frames (.4.80), interleaved by sample, line or "
        "planar", "MODE"},
    {"table", 0, 0, G_OPTION_ARG_STRING, &table,
        "Frame index: basic (default), extended or none", "KIND"},
    {"concatenation", 0, 0, G_OPTION_ARG_NONE, &concatenation,
        "Level 0 as two instances of one concatenation", NULL},
    {"thumbnail", 0, 0, G_OPTION_ARG_NONE, &thumbnail,
        "Also a THUMBNAIL instance (the smallest level)", NULL},
    {"objective-power", 0, 0, G_OPTION_ARG_DOUBLE, &objective,
        "ObjectiveLensPower of an OpticalPathSequence item (default: none)",
        "X"},
    {"icc-profile", 0, 0, G_OPTION_ARG_NONE, &icc,
        "A stand-in ICC profile in that item", NULL},
    {"mpp", 0, 0, G_OPTION_ARG_DOUBLE, &mpp,
        "Level-0 microns per pixel for PixelSpacing (default: none)", "UM"},
    {"prefix", 0, 0, G_OPTION_ARG_STRING, &prefix,
        "File names PREFIX-levelN.dcm (default: slide)", "PREFIX"},
    {"seed", 0, 0, G_OPTION_ARG_INT, &seed, "UID seed (default 1)", "N"},
    {NULL}
  };
  GOptionContext *context = g_option_context_new ("TIFF OUT_DIR");
  WsiTestDicomSpec spec;
  GError *error = NULL;
  gchar **paths = NULL;
  guint i;

  g_option_context_set_summary (context, "Writes a DICOM WSI series, one "
      "instance per level, from a JPEG-tiled TIFF pyramid.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 3) {
    g_printerr ("%s\n", error ? error->message :
        "usage: wsi-make-test-dicom TIFF OUT_DIR [options]");
    return 2;
  }
  wsi_test_dicom_spec_init (&spec);
  spec.sparse = sparse;
  spec.uncompressed = uncompressed;
  spec.thumbnail = thumbnail;
  spec.concatenation = concatenation;
  spec.mpp = mpp;
  spec.objective_power = objective;
  spec.icc_profile = icc;
  spec.seed = seed;
  if (g_strcmp0 (j2k, "lossless") == 0)
    spec.j2k = WSI_TEST_DICOM_J2K_LOSSLESS;
  else if (g_strcmp0 (j2k, "lossy") == 0)
    spec.j2k = WSI_TEST_DICOM_J2K_LOSSY;
  else if (g_strcmp0 (j2k, "htj2k") == 0)
    spec.j2k = WSI_TEST_DICOM_J2K_HT_LOSSLESS;
  else if (j2k != NULL) {
    g_printerr ("--j2k: lossless, lossy or htj2k, not %s\n", j2k);
    return 2;
  }
  if (g_strcmp0 (jpegls, "sample") == 0)
    spec.jpegls = WSI_TEST_DICOM_JPEGLS_SAMPLE;
  else if (g_strcmp0 (jpegls, "line") == 0)
    spec.jpegls = WSI_TEST_DICOM_JPEGLS_LINE;
  else if (g_strcmp0 (jpegls, "planar") == 0)
    spec.jpegls = WSI_TEST_DICOM_JPEGLS_PLANAR;
  else if (jpegls != NULL) {
    g_printerr ("--jpegls: sample, line or planar, not %s\n", jpegls);
    return 2;
  }
  if (g_strcmp0 (table, "extended") == 0)
    spec.table = WSI_TEST_DICOM_TABLE_EXTENDED;
  else if (g_strcmp0 (table, "none") == 0)
    spec.table = WSI_TEST_DICOM_TABLE_NONE;
  else if (table != NULL && strcmp (table, "basic") != 0) {
    g_printerr ("--table: basic, extended or none, not %s\n", table);
    return 2;
  }
  if (!wsi_test_dicom_from_tiff (argv[1], argv[2], prefix ? prefix : "slide",
          &spec, &paths, &error)) {
    g_printerr ("%s\n", error->message);
    return 1;
  }
  for (i = 0; paths[i] != NULL; i++)
    g_print ("%s\n", paths[i]);
  g_strfreev (paths);
  g_free (table);
  g_free (j2k);
  g_free (jpegls);
  g_free (prefix);
  g_option_context_free (context);
  return 0;
}
