/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* What wsislidesrc knows about slides, through whole pipelines on slides
 * generated at test time: manifest columns (CSV and TSV, relative paths,
 * quoting) and TCGA columns on every patch at appsink, bad manifests
 * refused with the file and line named, and the source's slide counters
 * (opened, failed, rejected, blank). */

#include "wsipipeline.h"
#include "wsitestslide.h"
#include "wsitestutil.h"

#include <string.h>

static void
small_spec (WsiTestSlideSpec * spec, guint32 seed, guint blobs)
{
  wsi_test_slide_spec_init (spec);
  spec->width = 1024;
  spec->height = 768;
  spec->tile_size = 256;
  spec->levels = 2;
  spec->tissue_blobs = blobs;
  spec->seed = seed;
}

static gchar *
write_slide (const gchar * dir, const gchar * name, guint32 seed)
{
  WsiTestSlideSpec spec;

  small_spec (&spec, seed, 3);
  return wsi_test_write_slide (dir, name, &spec);
}

/* Patches straight from patchreader: one WsiPatchMeta per patch. */
static WsiRun *
run_patches (const gchar * location, const gchar * src_extra)
{
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" %s ! "
      "tissuemask ! queue max-size-buffers=4 ! patchsampler patch-size=32 "
      "patches-per-slide=3 ! patchinterleave ! patchreader threads=2 ! "
      "appsink name=sink sync=false wait-on-eos=false", location, src_extra);
  WsiRun *r = wsi_run_pipeline (desc, 0);

  g_free (desc);
  return r;
}

/* Checks that every patch of @r carries @names, and the values @rows gives
 * for its slide: rows of {basename, value, value...}. */
static void
check_patch_columns (WsiRun * r, const gchar * const *names,
    const gchar * const rows[][8], guint n_rows, guint n_patches)
{
  guint n_names = g_strv_length ((gchar **) names);

  fail_unless_equals_int (r->batches->len, n_patches);
  for (guint i = 0; i < r->batches->len; i++) {
    GstStructure *meta = wsi_patch_meta_get (g_ptr_array_index (r->batches,
            i));
    const gchar *const *got = wsi_structure_get_strv (meta, "column-names");
    const gchar *path = wsi_patch_meta_string (meta, "paths", 0);
    const gchar *const *row = NULL;

    fail_unless (got != NULL, "patch %u has no column-names", i);
    fail_unless (g_strv_equal (got, names), "patch %u: other columns", i);
    for (guint k = 0; k < n_rows; k++)
      if (g_str_has_suffix (path, rows[k][0]))
        row = rows[k];
    fail_unless (row != NULL, "patch %u of unexpected slide %s", i, path);
    fail_unless_equals_int (g_strv_length ((gchar **)
            wsi_structure_get_strv (meta, "column-values")), n_names);
    for (guint c = 0; c < n_names; c++)
      fail_unless_equals_string (wsi_meta_column (meta, names[c], 0),
          row[c + 1]);
  }
}

GST_START_TEST (test_csv_manifest_columns_on_every_patch)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "csv");
  gchar *manifest = g_build_filename (dir, "train.csv", NULL);
  const gchar *names[] = { "patient", "label", "split", NULL };
  const gchar *const rows[][8] = {
    {"data/one.tiff", "P, 1", "tumour", "train"},
    {"other/two.tiff", "P\"2\"", "normal", ""},
  };
  WsiRun *r;

  g_free (write_slide (dir, "data/one.tiff", 1));
  g_free (write_slide (dir, "other/two.tiff", 2));
  fail_unless (g_file_set_contents (manifest, "patient,path,label,split\r\n"
          "\"P\"\"2\"\"\",other/two.tiff,normal,\r\n"
          "\"P, 1\",data/one.tiff,tumour,train\r\n", -1, NULL));

  r = run_patches (manifest, "");
  fail_unless (r->error == NULL, "%s", r->error);
  check_patch_columns (r, names, rows, 2, 6);
  /* The label column is also the label. */
  for (guint i = 0; i < r->labels->len; i++)
    fail_unless_equals_string (g_ptr_array_index (r->labels, i),
        g_str_has_suffix (g_ptr_array_index (r->paths, i), "one.tiff") ?
        "tumour" : "normal");

  wsi_run_free (r);
  g_free (manifest);
  g_free (dir);
}

GST_END_TEST;

/* TSV with tcga=true: the barcode columns follow the manifest's, the
 * project comes from the folder, and a name without a barcode warns once
 * and gets empty values. */
GST_START_TEST (test_tsv_manifest_with_tcga)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "tsv");
  gchar *manifest = g_build_filename (dir, "slides.tsv", NULL);
  const gchar *names[] = { "split", "project", "barcode", "patient",
    "sample", "sample_type", "vial", "portion", "tissue_source_site",
    "slide_type", NULL
  };
  const gchar *const rows[][8] = {
    {"TCGA-A1-A0SB-01Z-00-DX1.ab12.tiff", "train", "TCGA-BRCA",
        "TCGA-A1-A0SB-01Z-00-DX1", "TCGA-A1-A0SB", "TCGA-A1-A0SB-01Z", "01",
        "Z"},
    {"plain.tiff", "test", "", "", "", "", "", ""},
  };
  WsiRun *r;
  guint unparsed_warnings = 0;

  g_free (write_slide (dir, "TCGA-BRCA/TCGA-A1-A0SB-01Z-00-DX1.ab12.tiff",
          3));
  g_free (write_slide (dir, "plain.tiff", 4));
  fail_unless (g_file_set_contents (manifest, "path\tsplit\n"
          "TCGA-BRCA/TCGA-A1-A0SB-01Z-00-DX1.ab12.tiff\ttrain\n"
          "plain.tiff\ttest\n", -1, NULL));

  /* Cycle twice: the warning must not repeat on the second visit. */
  r = run_patches (manifest, "tcga=true cycle=true num-buffers=4");
  fail_unless (r->error == NULL, "%s", r->error);
  /* rows[] holds the first 7 columns; check those, then the rest. */
  {
    const gchar *leading[] = { "split", "project", "barcode", "patient",
      "sample", "sample_type", "vial", NULL
    };
    for (guint i = 0; i < r->batches->len; i++) {
      GstStructure *meta = wsi_patch_meta_get (g_ptr_array_index (r->batches,
              i));
      gboolean tcga = g_str_has_suffix (wsi_patch_meta_string (meta, "paths",
              0), "DX1.ab12.tiff");

      fail_unless (g_strv_equal (wsi_structure_get_strv (meta,
                  "column-names"), names));
      for (guint c = 0; leading[c] != NULL; c++)
        fail_unless_equals_string (wsi_meta_column (meta, leading[c], 0),
            rows[tcga ? 0 : 1][c + 1]);
      fail_unless_equals_string (wsi_meta_column (meta, "portion", 0),
          tcga ? "00" : "");
      fail_unless_equals_string (wsi_meta_column (meta,
              "tissue_source_site", 0), tcga ? "A1" : "");
      fail_unless_equals_string (wsi_meta_column (meta, "slide_type", 0),
          tcga ? "DX" : "");
    }
  }
  fail_unless_equals_int (r->batches->len, 12);
  for (guint i = 0; i < r->warnings->len; i++)
    if (strstr (g_ptr_array_index (r->warnings, i), "no TCGA") != NULL) {
      fail_unless (strstr (g_ptr_array_index (r->warnings, i),
              "plain.tiff") != NULL);
      unparsed_warnings++;
    }
  fail_unless_equals_int (unparsed_warnings, 1);
  fail_unless (wsi_run_has_warning (r, "plain.tiff", "no TCGA", NULL));

  wsi_run_free (r);
  g_free (manifest);
  g_free (dir);
}

GST_END_TEST;

/* Runs wsislidesrc alone on @text saved as @name; returns the error. */
static gchar *
manifest_error (const gchar * dir, const gchar * name, const gchar * text)
{
  gchar *path = g_build_filename (dir, name, NULL);
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" ! "
      "appsink name=sink sync=false", path);
  WsiRun *r;
  gchar *error;

  fail_unless (g_file_set_contents (path, text, -1, NULL));
  r = wsi_run_pipeline (desc, 0);
  fail_unless (r->error != NULL, "%s was accepted", name);
  fail_unless_equals_int (r->batches->len, 0);
  error = g_strdup (r->error);
  wsi_run_free (r);
  g_free (desc);
  g_free (path);
  return error;
}

GST_START_TEST (test_bad_manifest_names_file_and_line)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "bad");
  const struct
  {
    const gchar *name, *text, *where;
  } cases[] = {
    {"nopath.csv", "slide,label\na.tiff,1\n", "nopath.csv:1: no \"path\""},
    {"short.tsv", "path\tlabel\na.tiff\t1\nb.tiff\n", "short.tsv:3: 1 "
          "fields"},
    {"quote.csv", "path,label\n\"a.tiff,1\n", "quote.csv:2: a quoted"},
    {"sniffed.txt", "path,label\n,1\n", "sniffed.txt:2: the path is empty"},
  };

  g_free (write_slide (dir, "a.tiff", 5));
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *error = manifest_error (dir, cases[i].name, cases[i].text);

    fail_unless (strstr (error, cases[i].where) != NULL,
        "error \"%s\" does not say \"%s\"", error, cases[i].where);
    g_free (error);
  }
  g_free (dir);
}

GST_END_TEST;

/* slides-opened, -failed, -rejected and -blank after three passes over a
 * good slide, a blank one (tissuemask rejects it) and a garbage file:
 * every slide is counted once, however often it is visited. */
GST_START_TEST (test_slide_counters)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "counters");
  WsiTestSlideSpec blank;
  gchar *desc;
  GstElement *pipeline, *src;
  guint opened, failed, rejected, n_blank;

  g_free (write_slide (dir, "a-good.tiff", 6));
  small_spec (&blank, 7, 0);
  g_free (wsi_test_write_slide (dir, "b-blank.tiff", &blank));
  g_free (wsi_test_write_garbage (dir, "c-garbage.svs", 4096, 8));

  desc = g_strdup_printf ("wsislidesrc name=src location=\"%s\" cycle=true "
      "num-buffers=6 thumbnail-size=256 ! tissuemask ! fakesink sync=false",
      dir);
  pipeline = gst_parse_launch (desc, NULL);
  fail_unless (pipeline != NULL);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  wsi_test_wait_eos (pipeline, 60 * GST_SECOND);
  g_object_get (src, "slides-opened", &opened, "slides-failed", &failed,
      "slides-rejected", &rejected, "slides-blank", &n_blank, NULL);
  fail_unless_equals_int (opened, 2);
  fail_unless_equals_int (failed, 1);
  fail_unless_equals_int (rejected, 1);
  fail_unless_equals_int (n_blank, 1);

  /* NULL -> PLAYING starts the counts again. */
  gst_element_set_state (pipeline, GST_STATE_NULL);
  g_object_get (src, "slides-opened", &opened, NULL);
  fail_unless_equals_int (opened, 2);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  wsi_test_wait_eos (pipeline, 60 * GST_SECOND);
  g_object_get (src, "slides-opened", &opened, "slides-rejected", &rejected,
      NULL);
  fail_unless_equals_int (opened, 2);
  fail_unless_equals_int (rejected, 1);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (pipeline);
  g_free (desc);
  g_free (dir);
}

GST_END_TEST;


/* tcga=true on the real slides: the TCGA export (named
 * "Aperio-JP2K-TCGA-CR-7395-01A-01-TS1.svs") gets its barcode in the slide
 * meta, the others (three, and the two DICOM series of dicom/) empty values
 * and one warning each. */
GST_START_TEST (test_tcga_on_real_slides)
{
  gchar *dir = WSI_TEST_SHARED_SLIDES_DIR ();
  gchar *desc;
  GstElement *pipeline, *sink;
  GstSample *sample;
  GstBus *bus;
  guint slides = 0, parsed = 0, warnings = 0;
  guint dicom_slides = 0, dicom_series = 0;
  gchar *text, *dicom_dir;

  if (dir == NULL)
    return;
  dicom_dir = g_build_filename (dir, "dicom", NULL);
  /* Three series; the JPEG-LS one is read with CharLS, else refused. */
  if (g_file_test (dicom_dir, G_FILE_TEST_IS_DIR))
    dicom_slides = WSI_TEST_READS_JPEGLS ? 3 : 2, dicom_series = 3;
  g_free (dicom_dir);
  desc = g_strdup_printf ("wsislidesrc location=\"%s\" tcga=true "
      "thumbnail-size=64 ! appsink name=sink sync=false", dir);
  pipeline = gst_parse_launch (desc, NULL);
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  while ((sample = gst_app_sink_pull_sample (GST_APP_SINK (sink))) != NULL) {
    GstStructure *meta = wsi_slide_meta_get (gst_sample_get_buffer (sample));
    const gchar *path = gst_structure_get_string (meta, "path");
    gboolean tcga = strstr (path, "TCGA-CR-7395") != NULL;

    fail_unless_equals_int (g_strv_length ((gchar **)
            wsi_structure_get_strv (meta, "column-names")), 9);
    fail_unless_equals_string (wsi_meta_column (meta, "barcode", 0),
        tcga ? "TCGA-CR-7395-01A-01-TS1" : "");
    fail_unless_equals_string (wsi_meta_column (meta, "patient", 0),
        tcga ? "TCGA-CR-7395" : "");
    fail_unless_equals_string (wsi_meta_column (meta, "slide_type", 0),
        tcga ? "TS" : "");
    fail_unless_equals_string (wsi_meta_column (meta, "project", 0), "");
    parsed += tcga;
    slides++;
    gst_sample_unref (sample);
  }
  bus = gst_element_get_bus (pipeline);
  while ((text = wsi_test_pop_message_text (bus, GST_MESSAGE_WARNING))) {
    warnings += strstr (text, "no TCGA slide barcode") != NULL;
    g_free (text);
  }
  /* Four slides at the top; dicom/ adds three series, two readable (the
   * JPEG-LS one is refused when opened, after its barcode warning). */
  fail_unless_equals_int (slides, 4 + dicom_slides);
  fail_unless_equals_int (parsed, 1);
  fail_unless_equals_int (warnings, 3 + dicom_series);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (desc);
  g_free (dir);
}

GST_END_TEST;

static Suite *
manifest_suite (void)
{
  Suite *s = suite_create ("manifest");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, test_csv_manifest_columns_on_every_patch);
  tcase_add_test (tc, test_tsv_manifest_with_tcga);
  tcase_add_test (tc, test_bad_manifest_names_file_and_line);
  tcase_add_test (tc, test_slide_counters);
  tcase_add_test (tc, test_tcga_on_real_slides);
  return s;
}

GST_CHECK_MAIN (manifest);
