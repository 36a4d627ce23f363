/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* The whole pipeline on real scanned slides (../shared/slides): Aperio JPEG,
 * Aperio JPEG 2000 without mpp, Hamamatsu NDPI. Each test is skipped (and
 * says so) when the slide is absent. */

#include "wsipipeline.h"
#include "wsitestutil.h"

#include <openslide.h>
#include <string.h>

#define CMU "Aperio-CMU-1-Small-Region.svs"
#define TCGA "Aperio-JP2K-TCGA-CR-7395-01A-01-TS1.svs"
#define NDPI "Hamamatsu-test3-DAPI-2-387.ndpi"
#define NDPI_TRITC "Hamamatsu-test3-TRITC-2-560.ndpi"

/* The real slide @name, or NULL after a SKIP line naming the calling
 * check (a failure under CI=true). */
#define real_slide(name) WSI_TEST_SHARED_SLIDE (name)

static WsiRun *
run_real (const gchar * location, const gchar * src_extra,
    const gchar * mask_extra, const gchar * sampler_extra, guint threads)
{
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" %s ! "
      "tissuemask %s ! queue ! patchsampler %s ! patchinterleave ! "
      "patchreader threads=%u ! queue max-size-buffers=64 max-size-bytes=0 "
      "max-size-time=0 ! patchbatch batch-size=8 ! appsink name=sink "
      "sync=false", location, src_extra, mask_extra, sampler_extra, threads);
  WsiRun *r = wsi_run_pipeline (desc, 0);

  g_free (desc);
  return r;
}

/* Patch pixels equal OpenSlide's own read of the same region at level 0
 * (composited on white), so nothing is lost or shifted on the way. */
static void
assert_pixels_match_openslide (const gchar * path, WsiRun * r, guint patch)
{
  openslide_t *osr = openslide_open (path);
  guint32 *argb = g_new (guint32, patch * patch);
  guint checked = 0, b, i;

  fail_unless (osr != NULL);
  for (b = 0; b < r->batches->len && checked < 4; b++) {
    GstBuffer *batch = g_ptr_array_index (r->batches, b);
    GstMapInfo map;
    const WsiPatchRecord *rec = WSI_RECORD (r, b * 8);
    guint p;

    fail_unless_equals_int (rec->level, 0);
    openslide_read_region (osr, argb, rec->x, rec->y, 0, patch, patch);
    fail_unless (openslide_get_error (osr) == NULL);
    fail_unless (gst_buffer_map (batch, &map, GST_MAP_READ));
    for (p = 0; p < patch * patch; p++) {
      guint32 px = argb[p];
      guint glass = 255 - (px >> 24);
      guint8 expect[3] = { ((px >> 16) & 0xff) + glass,
        ((px >> 8) & 0xff) + glass, (px & 0xff) + glass
      };

      for (i = 0; i < 3; i++)
        fail_unless_equals_int (map.data[3 * p + i], expect[i]);
    }
    gst_buffer_unmap (batch, &map);
    checked++;
  }
  fail_unless (checked > 0);
  g_free (argb);
  openslide_close (osr);
}

GST_START_TEST (test_aperio_jpeg)
{
  gchar *path = real_slide (CMU);
  WsiRun *r;
  guint i;

  if (path == NULL)
    return;
  r = run_real (path, "", "", "patch-size=128 patches-per-slide=24", 2);
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 24);
  for (i = 0; i < r->records->len; i++) {
    const WsiPatchRecord *rec = WSI_RECORD (r, i);

    fail_unless (rec->x >= 0 && rec->x + 128 <= 2220);
    fail_unless (rec->y >= 0 && rec->y + 128 <= 2967);
    /* CMU has mpp 0.499: native output keeps it. */
    fail_unless (G_APPROX_VALUE (rec->out_mpp, 0.499, 1e-3));
  }
  assert_pixels_match_openslide (path, r, 128);
  wsi_run_free (r);

  /* target-mpp 0.5 on a 0.499 um/px slide: 256.5 level-0 px would be
   * resampled to 256 for a 0.2 % difference; within patchreader's
   * resample-tolerance (default 1 %) they are read at 256, unblurred, and the
   * record says 0.499 um/px. */
  r = run_real (path, "", "", "patch-size=256 patches-per-slide=8 "
      "target-mpp=0.5", 1);
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 8);
  for (i = 0; i < r->records->len; i++) {
    fail_unless_equals_int (WSI_RECORD (r, i)->read_size, 256);
    fail_unless_equals_int (WSI_RECORD (r, i)->footprint, 256);
    fail_unless (G_APPROX_VALUE (WSI_RECORD (r, i)->out_mpp, 0.499, 1e-4));
  }
  assert_pixels_match_openslide (path, r, 256);
  wsi_run_free (r);

  /* The tolerance is the reader's property: 0 resamples 257 -> 256. */
  {
    gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" ! "
        "tissuemask ! queue ! patchsampler patch-size=256 "
        "patches-per-slide=8 target-mpp=0.5 ! patchinterleave ! "
        "patchreader resample-tolerance=0 ! queue ! patchbatch "
        "batch-size=8 ! appsink name=sink sync=false", path);

    r = wsi_run_pipeline (desc, 0);
    fail_unless (r->error == NULL, "%s", r->error);
    fail_unless_equals_int (r->records->len, 8);
    fail_unless_equals_int (WSI_RECORD (r, 0)->read_size, 257);
    fail_unless_equals_int (WSI_RECORD (r, 0)->footprint, 257);
    wsi_run_free (r);
    g_free (desc);
  }

  /* target-mpp 1.0 on a single-level slide: read ~2x and resample. */
  r = run_real (path, "", "", "patch-size=128 patches-per-slide=8 "
      "target-mpp=1.0", 1);
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 8);
  fail_unless_equals_int (WSI_RECORD (r, 0)->level, 0);
  fail_unless_equals_int (WSI_RECORD (r, 0)->read_size, 257);
  fail_unless_equals_int (WSI_RECORD (r, 0)->out_size, 128);
  wsi_run_free (r);
  g_free (path);
}

GST_END_TEST;

/* JPEG 2000 with no mpp: target-mpp needs default-mpp, and says so. */
GST_START_TEST (test_aperio_jp2k_without_mpp)
{
  gchar *path = real_slide (TCGA);
  WsiRun *r;
  guint i;

  if (path == NULL)
    return;
  r = run_real (path, "", "", "patch-size=128 patches-per-slide=4 "
      "target-mpp=0.5", 1);
  fail_unless_equals_int (r->records->len, 0);
  fail_unless (wsi_run_has_warning (r, TCGA, "default-mpp", NULL),
      "no warning naming the slide and default-mpp");
  wsi_run_free (r);

  /* With default-mpp=0.25, 0.5 um/px is a 2x downsample: level 1
   * (downsample 2.0005) read at 128 px. */
  r = run_real (path, "default-mpp=0.25", "", "patch-size=128 "
      "patches-per-slide=6 target-mpp=0.5", 2);
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 6);
  for (i = 0; i < r->records->len; i++) {
    fail_unless_equals_int (WSI_RECORD (r, i)->level, 1);
    fail_unless_equals_int (WSI_RECORD (r, i)->footprint, 256);
    fail_unless (WSI_RECORD (r, i)->read_size >= 127
        && WSI_RECORD (r, i)->read_size <= 128);
  }
  wsi_run_free (r);
  g_free (path);
}

GST_END_TEST;

/* Mean brightness (HSV value) of the overview pixels that the mask
 * appended to @slide calls background; -1 when there are none. */
static gdouble
mean_background_brightness (GstBuffer * slide)
{
  GstStructure *meta = wsi_slide_meta_get (slide);
  gint ow = 0, oh = 0;
  guint64 sum = 0, pixels = 0;
  GstMapInfo map;
  gsize n, i;

  fail_unless (gst_structure_get_int (meta, "overview-width", &ow));
  fail_unless (gst_structure_get_int (meta, "overview-height", &oh));
  n = (gsize) ow * oh;
  fail_unless (gst_buffer_map (slide, &map, GST_MAP_READ));
  fail_unless_equals_int (map.size, n * 4);
  for (i = 0; i < n; i++) {
    const guint8 *rgb = map.data + 3 * i;

    if (map.data[3 * n + i] == 0) {
      sum += MAX (MAX (rgb[0], rgb[1]), rgb[2]);
      pixels++;
    }
  }
  gst_buffer_unmap (slide, &map);
  return pixels > 0 ? (gdouble) sum / pixels : -1.0;
}

/* Slide-level tissue fraction that tissuemask @method finds on @path, and
 * the brightness of what it leaves as background (NULL: not wanted). */
static gdouble
slide_tissue_fraction (const gchar * path, const gchar * method,
    gdouble * background)
{
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" ! "
      "tissuemask method=%s ! appsink name=sink sync=false", path, method);
  GstElement *pipeline = gst_parse_launch (desc, NULL);
  GstElement *sink;
  GstSample *sample;
  gdouble fraction = -1.0;

  fail_unless (pipeline != NULL, "cannot parse %s", desc);
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  sample = gst_app_sink_pull_sample (GST_APP_SINK (sink));
  fail_unless (sample != NULL, "%s: no slide buffer", desc);
  fail_unless (gst_structure_get_double (wsi_slide_meta_get
          (gst_sample_get_buffer (sample)), "tissue-fraction", &fraction));
  if (background != NULL)
    *background = mean_background_brightness (gst_sample_get_buffer (sample));
  gst_sample_unref (sample);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (desc);
  return fraction;
}

/* Mean brightness (HSV value: the largest of R, G, B) of every patch pixel
 * of a run. */
static gdouble
mean_patch_brightness (WsiRun * r)
{
  guint64 sum = 0, pixels = 0;
  guint b;

  for (b = 0; b < r->batches->len; b++) {
    GstBuffer *batch = g_ptr_array_index (r->batches, b);
    GstMapInfo map;
    gsize i;

    fail_unless (gst_buffer_map (batch, &map, GST_MAP_READ));
    for (i = 0; i + 2 < map.size; i += 3) {
      sum += MAX (MAX (map.data[i], map.data[i + 1]), map.data[i + 2]);
      pixels++;
    }
    gst_buffer_unmap (batch, &map);
  }
  fail_unless (pixels > 0);
  return (gdouble) sum / pixels;
}

/* Level choice on a 7-level pyramid: 4x of 0.22818 um/px picks level 2. */
static void
check_ndpi_geometry (WsiRun * r, guint expected)
{
  guint i;

  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, expected);
  for (i = 0; i < r->records->len; i++) {
    fail_unless_equals_int (WSI_RECORD (r, i)->footprint, 256);
    fail_unless_equals_int (WSI_RECORD (r, i)->level, 2);
    fail_unless_equals_int (WSI_RECORD (r, i)->read_size, 64);
    fail_unless (WSI_RECORD (r, i)->x + 256 <= 3968);
    fail_unless (WSI_RECORD (r, i)->y + 256 <= 4864);
  }
}

#define NDPI_SAMPLER "patch-size=64 patches-per-slide=24 target-mpp=0.91270022"

/* NDPI fluorescence: black background, bright nuclei. H&E's Otsu on
 * saturation calls nearly all of it tissue; method=fluorescence finds the
 * stained part, and its patches are clearly brighter than the overview
 * pixels it calls background and than patches drawn anywhere
 * (method=none). The TRITC slide is dim (stain around 20-30 over a black
 * around 5), hence the modest margin over patches drawn anywhere. */
static void
check_ndpi_fluorescence (const gchar * check, const gchar * name)
{
  gchar *path = wsi_test_shared_slide (check, name);
  gdouble otsu, fluorescence, background, bright, anywhere;
  WsiRun *r;
  guint i;

  if (path == NULL)
    return;

  otsu = slide_tissue_fraction (path, "otsu", NULL);
  fluorescence = slide_tissue_fraction (path, "fluorescence", &background);
  g_print ("%s: tissue fraction otsu %.4f, fluorescence %.4f\n", name, otsu,
      fluorescence);
  fail_unless (otsu > 0.95, "%s: otsu %f", name, otsu);
  fail_unless (fluorescence > 0.05 && fluorescence < 0.6,
      "%s: fluorescence %f", name, fluorescence);

  r = run_real (path, "", "method=none", NDPI_SAMPLER, 2);
  check_ndpi_geometry (r, 24);
  anywhere = mean_patch_brightness (r);
  wsi_run_free (r);

  r = run_real (path, "", "method=fluorescence", NDPI_SAMPLER, 2);
  check_ndpi_geometry (r, 24);
  for (i = 0; i < r->records->len; i++)
    fail_unless (WSI_RECORD (r, i)->tissue_fraction >= 0.5,
        "patch %u: tissue fraction %f", i, WSI_RECORD (r, i)->tissue_fraction);
  bright = mean_patch_brightness (r);
  wsi_run_free (r);

  g_print ("%s: mean brightness: overview background %.1f, patches "
      "anywhere %.1f, patches on tissue %.1f\n", name, background, anywhere,
      bright);
  fail_unless (background >= 0.0);
  fail_unless (bright > 2.0 * background, "%s: patches on tissue have mean "
      "brightness %.1f, the background %.1f", name, bright, background);
  fail_unless (bright > 1.2 * anywhere, "%s: patches on tissue have mean "
      "brightness %.1f, patches anywhere %.1f", name, bright, anywhere);
  g_free (path);
}

GST_START_TEST (test_ndpi)
{
  check_ndpi_fluorescence (__func__, NDPI);
}

GST_END_TEST;

GST_START_TEST (test_ndpi_tritc)
{
  check_ndpi_fluorescence (__func__, NDPI_TRITC);
}

GST_END_TEST;

/* All real slides in one directory, cycling, two ranks: each rank streams
 * its own slides. */
GST_START_TEST (test_real_directory_two_ranks)
{
  gchar *probe = real_slide (CMU);
  gchar *dir;
  guint rank;

  if (probe == NULL)
    return;
  dir = g_path_get_dirname (probe);
  for (rank = 0; rank < 2; rank++) {
    gchar *src = g_strdup_printf ("rank=%u world-size=2 default-mpp=0.25 "
        "cycle=true", rank);
    gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" %s ! "
        "tissuemask method=none ! queue ! patchsampler patch-size=64 "
        "patches-per-slide=8 target-mpp=0.5 ! patchinterleave ! "
        "patchreader ! queue ! patchbatch batch-size=8 ! "
        "appsink name=sink sync=false", dir, src);
    WsiRun *r = wsi_run_pipeline (desc, 6);
    guint i;

    fail_unless (r->error == NULL, "%s", r->error);
    fail_unless_equals_int (r->records->len, 48);
    for (i = 0; i < r->records->len; i++)
      fail_unless_equals_int (WSI_RECORD (r, i)->slide_index % 2, rank);
    wsi_run_free (r);
    g_free (desc);
    g_free (src);
  }
  g_free (dir);
  g_free (probe);
}

GST_END_TEST;

static Suite *
realslides_suite (void)
{
  Suite *s = suite_create ("pipelines_realslides");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_aperio_jpeg);
  tcase_add_test (tc, test_aperio_jp2k_without_mpp);
  tcase_add_test (tc, test_ndpi);
  tcase_add_test (tc, test_ndpi_tritc);
  tcase_add_test (tc, test_real_directory_two_ranks);
  return s;
}

GST_CHECK_MAIN (realslides);
