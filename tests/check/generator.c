/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * Unit tests of the test-slide generator (tools/wsitestslide.c), read back
 * with libtiff alone so they need no OpenSlide.
 */

#include <gst/check/gstcheck.h>
#include <glib/gstdio.h>
#include <tiffio.h>
#include <string.h>

#include "wsitestslide.h"

static gchar *tmpdir;

static void
setup (void)
{
  GError *error = NULL;

  tmpdir = g_dir_make_tmp ("wsi-generator-XXXXXX", &error);
  fail_unless (tmpdir != NULL, "%s", error ? error->message : "");
  /* Damaged and truncated files make libtiff complain on stderr. */
  TIFFSetErrorHandler (NULL);
  TIFFSetWarningHandler (NULL);
}

static void
teardown (void)
{
  GDir *dir = g_dir_open (tmpdir, 0, NULL);
  const gchar *name;

  while (dir && (name = g_dir_read_name (dir))) {
    gchar *path = g_build_filename (tmpdir, name, NULL);
    g_unlink (path);
    g_free (path);
  }
  if (dir)
    g_dir_close (dir);
  g_rmdir (tmpdir);
  g_clear_pointer (&tmpdir, g_free);
}

static gchar *
tmp_path (const gchar * name)
{
  return g_build_filename (tmpdir, name, NULL);
}

static guint
count_directories (TIFF * tif)
{
  guint n = 0;

  TIFFSetDirectory (tif, 0);
  do
    n++;
  while (TIFFReadDirectory (tif));
  TIFFSetDirectory (tif, 0);
  return n;
}

static void
dir_size (TIFF * tif, guint32 * w, guint32 * h)
{
  fail_unless (TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, w));
  fail_unless (TIFFGetField (tif, TIFFTAG_IMAGELENGTH, h));
}

/* HSV saturation of a libtiff ABGR pixel. */
static gdouble
saturation (guint32 abgr)
{
  gint r = TIFFGetR (abgr), g = TIFFGetG (abgr), b = TIFFGetB (abgr);
  gint mx = MAX (r, MAX (g, b)), mn = MIN (r, MIN (g, b));

  return mx ? (gdouble) (mx - mn) / mx : 0.0;
}

static WsiTestSlideSpec
small_spec (WsiTestLayout layout)
{
  WsiTestSlideSpec spec;

  wsi_test_slide_spec_init (&spec);
  spec.layout = layout;
  spec.width = 1500;
  spec.height = 1100;
  spec.levels = 3;
  spec.level_step = layout == WSI_TEST_LAYOUT_APERIO ? 3 : 2;
  spec.seed = 11;
  spec.tissue_blobs = 4;
  return spec;
}

GST_START_TEST (test_spec_defaults)
{
  WsiTestSlideSpec spec;

  memset (&spec, 0xAB, sizeof (spec));
  wsi_test_slide_spec_init (&spec);
  fail_unless_equals_int (spec.layout, WSI_TEST_LAYOUT_GENERIC);
  fail_unless_equals_int (spec.width, 2048);
  fail_unless_equals_int (spec.height, 1536);
  fail_unless_equals_int (spec.tile_size, 256);
  fail_unless_equals_int (spec.levels, 3);
  fail_unless_equals_int (spec.level_step, 2);
  fail_unless_equals_float (spec.mpp, 0.25);
  fail_if (spec.resolution_placeholder);
  fail_unless_equals_int (spec.tissue_blobs, 3);
  fail_unless_equals_int (spec.seed, 1);
  fail_unless_equals_int (spec.jpeg_quality, 85);
}

GST_END_TEST;

GST_START_TEST (test_generic_pyramid)
{
  WsiTestSlideSpec spec = small_spec (WSI_TEST_LAYOUT_GENERIC);
  gchar *path = tmp_path ("generic.tiff");
  GError *error = NULL;
  TIFF *tif;
  guint level;

  fail_unless (wsi_test_slide_write (path, &spec, &error), "%s",
      error ? error->message : "");
  tif = TIFFOpen (path, "r");
  fail_unless (tif != NULL);
  fail_unless_equals_int (count_directories (tif), spec.levels);

  for (level = 0; level < spec.levels; level++) {
    guint32 w, h, tw = 0;
    guint16 unit = 0, compression = 0;
    gfloat xres = 0;

    fail_unless (TIFFSetDirectory (tif, level));
    dir_size (tif, &w, &h);
    fail_unless_equals_int (w, spec.width >> level);
    fail_unless_equals_int (h, spec.height >> level);
    fail_unless (TIFFIsTiled (tif));
    TIFFGetField (tif, TIFFTAG_TILEWIDTH, &tw);
    fail_unless_equals_int (tw, spec.tile_size);
    TIFFGetField (tif, TIFFTAG_COMPRESSION, &compression);
    fail_unless_equals_int (compression, COMPRESSION_JPEG);
    /* 10000 / mpp pixels per centimetre at level 0, scaled per level. */
    fail_unless (TIFFGetField (tif, TIFFTAG_RESOLUTIONUNIT, &unit));
    fail_unless_equals_int (unit, RESUNIT_CENTIMETER);
    fail_unless (TIFFGetField (tif, TIFFTAG_XRESOLUTION, &xres));
    fail_unless (fabs (xres - 40000.0 / (1 << level)) < 1.0, "xres %f", xres);
  }
  TIFFClose (tif);
  g_free (path);
}

GST_END_TEST;

GST_START_TEST (test_generic_placeholder_resolution)
{
  WsiTestSlideSpec spec = small_spec (WSI_TEST_LAYOUT_GENERIC);
  gchar *path = tmp_path ("placeholder.tiff");
  guint16 unit = 0;
  gfloat xres = 0;
  TIFF *tif;

  spec.resolution_placeholder = TRUE;
  fail_unless (wsi_test_slide_write (path, &spec, NULL));
  tif = TIFFOpen (path, "r");
  fail_unless (tif != NULL);
  fail_unless (TIFFGetField (tif, TIFFTAG_XRESOLUTION, &xres));
  fail_unless_equals_float (xres, 72.0);
  fail_unless (TIFFGetField (tif, TIFFTAG_RESOLUTIONUNIT, &unit));
  fail_unless_equals_int (unit, RESUNIT_INCH);
  TIFFClose (tif);
  g_free (path);
}

GST_END_TEST;

GST_START_TEST (test_aperio_layout)
{
  WsiTestSlideSpec spec = small_spec (WSI_TEST_LAYOUT_APERIO);
  gchar *path = tmp_path ("aperio.svs");
  const gchar *desc = NULL;
  guint32 w, h;
  TIFF *tif;

  fail_unless (wsi_test_slide_write (path, &spec, NULL));
  tif = TIFFOpen (path, "r");
  fail_unless (tif != NULL);
  /* levels + thumbnail + label + macro */
  fail_unless_equals_int (count_directories (tif), spec.levels + 3);

  fail_unless (TIFFGetField (tif, TIFFTAG_IMAGEDESCRIPTION, &desc));
  fail_unless (g_str_has_prefix (desc, "Aperio Image Library"), "%s", desc);
  fail_unless (strstr (desc, "|MPP = 0.2500") != NULL, "%s", desc);
  fail_unless (strstr (desc, "1500x1100") != NULL, "%s", desc);
  fail_unless (TIFFIsTiled (tif));

  fail_unless (TIFFSetDirectory (tif, 1));
  fail_if (TIFFIsTiled (tif), "the thumbnail must be stripped");

  /* Non-power-of-two steps, rounded down. */
  fail_unless (TIFFSetDirectory (tif, 2));
  dir_size (tif, &w, &h);
  fail_unless_equals_int (w, 500);
  fail_unless_equals_int (h, 366);
  fail_unless (TIFFIsTiled (tif));
  fail_unless (TIFFSetDirectory (tif, 3));
  dir_size (tif, &w, &h);
  fail_unless_equals_int (w, 166);
  fail_unless_equals_int (h, 122);

  fail_unless (TIFFSetDirectory (tif, 4));
  fail_unless (TIFFGetField (tif, TIFFTAG_IMAGEDESCRIPTION, &desc));
  fail_unless (strstr (desc, "\nlabel ") != NULL, "%s", desc);
  fail_unless (TIFFSetDirectory (tif, 5));
  fail_unless (TIFFGetField (tif, TIFFTAG_IMAGEDESCRIPTION, &desc));
  fail_unless (strstr (desc, "\nmacro ") != NULL, "%s", desc);
  TIFFClose (tif);

  /* No mpp: no MPP field at all. */
  spec.mpp = 0;
  fail_unless (wsi_test_slide_write (path, &spec, NULL));
  tif = TIFFOpen (path, "r");
  fail_unless (TIFFGetField (tif, TIFFTAG_IMAGEDESCRIPTION, &desc));
  fail_unless (strstr (desc, "MPP") == NULL, "%s", desc);
  TIFFClose (tif);
  g_free (path);
}

GST_END_TEST;

/* Every decoded pixel away from a blob edge (JPEG blurs a few pixels) is
 * saturated exactly when wsi_test_slide_is_tissue() says tissue. */
static void
check_pixels_match_truth (TIFF * tif, const WsiTestSlideSpec * spec,
    guint dir, guint * tissue_seen, guint * glass_seen)
{
  guint32 lw, lh, tile, tx, ty, x, y;
  guint32 *rgba;
  gdouble ds_x, ds_y;

  fail_unless (TIFFSetDirectory (tif, dir));
  dir_size (tif, &lw, &lh);
  TIFFGetField (tif, TIFFTAG_TILEWIDTH, &tile);
  ds_x = (gdouble) spec->width / lw;
  ds_y = (gdouble) spec->height / lh;
  rgba = g_new (guint32, tile * tile);

  for (ty = 0; ty < lh; ty += tile) {
    for (tx = 0; tx < lw; tx += tile) {
      fail_unless (TIFFReadRGBATile (tif, tx, ty, rgba));
      for (y = ty; y < MIN (ty + tile, lh); y += 7) {
        for (x = tx; x < MIN (tx + tile, lw); x += 7) {
          gdouble x0 = (x + 0.5) * ds_x, y0 = (y + 0.5) * ds_y;
          gboolean truth = wsi_test_slide_is_tissue (spec, x0, y0);
          /* TIFFReadRGBATile returns rows bottom-up. */
          guint32 px = rgba[(tile - 1 - (y - ty)) * tile + (x - tx)];
          gint d;

          for (d = -4; d <= 4; d += 8) {
            if (wsi_test_slide_is_tissue (spec, x0 + d * ds_x, y0) != truth ||
                wsi_test_slide_is_tissue (spec, x0, y0 + d * ds_y) != truth)
              goto next;
          }
          fail_unless_equals_int (saturation (px) > 0.12, truth);
          if (truth)
            (*tissue_seen)++;
          else
            (*glass_seen)++;
        next:;
        }
      }
    }
  }
  g_free (rgba);
}

GST_START_TEST (test_pixels_match_ground_truth)
{
  WsiTestLayout layouts[] = { WSI_TEST_LAYOUT_GENERIC, WSI_TEST_LAYOUT_APERIO };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (layouts); i++) {
    WsiTestSlideSpec spec = small_spec (layouts[i]);
    gchar *path = tmp_path ("truth.tif");
    guint tissue = 0, glass = 0;
    TIFF *tif;

    spec.tile_size = 240;
    fail_unless (wsi_test_slide_write (path, &spec, NULL));
    tif = TIFFOpen (path, "r");
    fail_unless (tif != NULL);
    check_pixels_match_truth (tif, &spec, 0, &tissue, &glass);
    /* The last pyramid level (directory 1 in Aperio is the thumbnail). */
    check_pixels_match_truth (tif, &spec,
        layouts[i] == WSI_TEST_LAYOUT_APERIO ? spec.levels : spec.levels - 1,
        &tissue, &glass);
    TIFFClose (tif);
    fail_unless (tissue > 100 && glass > 100, "tissue %u glass %u", tissue,
        glass);
    g_free (path);
  }
}

GST_END_TEST;

GST_START_TEST (test_tissue_fraction_and_seed)
{
  WsiTestSlideSpec spec = small_spec (WSI_TEST_LAYOUT_GENERIC);
  WsiTestSlideSpec other = spec;
  guint x, y, inside = 0, differ = 0, n = 0;
  gdouble fraction = wsi_test_slide_tissue_fraction (&spec);

  other.seed = spec.seed + 1;
  for (y = 0; y < spec.height; y += 5) {
    for (x = 0; x < spec.width; x += 5) {
      gboolean t = wsi_test_slide_is_tissue (&spec, x + 2.5, y + 2.5);
      inside += t;
      differ += t != wsi_test_slide_is_tissue (&other, x + 2.5, y + 2.5);
      n++;
    }
  }
  fail_unless (fraction > 0.05 && fraction < 0.8, "fraction %f", fraction);
  fail_unless (fabs (fraction - (gdouble) inside / n) < 0.01,
      "fraction %f, sampled %f", fraction, (gdouble) inside / n);
  fail_unless (differ > n / 50, "another seed must move the tissue");

  spec.tissue_blobs = 0;
  fail_unless_equals_float (wsi_test_slide_tissue_fraction (&spec), 0.0);
  fail_if (wsi_test_slide_is_tissue (&spec, 750, 550));
}

GST_END_TEST;

GST_START_TEST (test_deterministic_bytes)
{
  WsiTestSlideSpec spec = small_spec (WSI_TEST_LAYOUT_APERIO);
  gchar *a = tmp_path ("a.svs"), *b = tmp_path ("b.svs");
  gchar *bytes_a, *bytes_b;
  gsize len_a, len_b;

  fail_unless (wsi_test_slide_write (a, &spec, NULL));
  fail_unless (wsi_test_slide_write (b, &spec, NULL));
  fail_unless (g_file_get_contents (a, &bytes_a, &len_a, NULL));
  fail_unless (g_file_get_contents (b, &bytes_b, &len_b, NULL));
  fail_unless_equals_uint64 (len_a, len_b);
  fail_unless (memcmp (bytes_a, bytes_b, len_a) == 0);
  g_free (bytes_a);
  g_free (bytes_b);
  g_free (a);
  g_free (b);
}

GST_END_TEST;

GST_START_TEST (test_damaged_tiles)
{
  WsiTestSlideSpec spec = small_spec (WSI_TEST_LAYOUT_GENERIC);
  gchar *path = tmp_path ("damaged.tiff");
  guint32 *rgba = g_new (guint32, spec.tile_size * spec.tile_size);
  TIFF *tif;

  fail_unless (wsi_test_slide_write_damaged_tiles (path, &spec, NULL));
  tif = TIFFOpen (path, "r");
  fail_unless (tif != NULL, "a damaged slide must still open");
  fail_unless_equals_int (count_directories (tif), spec.levels);
  fail_if (TIFFReadRGBATile (tif, 0, 0, rgba), "level 0 must not decode");
  fail_unless (TIFFSetDirectory (tif, spec.levels - 1));
  fail_unless (TIFFReadRGBATile (tif, 0, 0, rgba), "the top level decodes");
  TIFFClose (tif);
  g_free (rgba);
  g_free (path);
}

GST_END_TEST;

GST_START_TEST (test_broken_files)
{
  WsiTestSlideSpec spec = small_spec (WSI_TEST_LAYOUT_GENERIC);
  gchar *valid = tmp_path ("valid.tiff"), *cut = tmp_path ("cut.tiff");
  gchar *garbage = tmp_path ("garbage.svs"), *empty = tmp_path ("empty.svs");
  GStatBuf st_valid, st_cut, st;
  TIFF *tif;

  fail_unless (wsi_test_slide_write (valid, &spec, NULL));
  fail_unless (wsi_test_slide_write_truncated (cut, &spec, 0.5, NULL));
  fail_unless (g_stat (valid, &st_valid) == 0 && g_stat (cut, &st_cut) == 0);
  fail_unless_equals_int64 (st_cut.st_size, st_valid.st_size / 2);
  /* The directories follow their tiles: cut in half, level 0's is gone. */
  tif = TIFFOpen (cut, "r");
  fail_unless (tif == NULL);

  fail_unless (wsi_test_slide_write_garbage (garbage, 4096, 5, NULL));
  fail_unless (g_stat (garbage, &st) == 0);
  fail_unless_equals_int64 (st.st_size, 4096);
  fail_unless (TIFFOpen (garbage, "r") == NULL);

  fail_unless (wsi_test_slide_write_empty (empty, NULL));
  fail_unless (g_stat (empty, &st) == 0);
  fail_unless_equals_int64 (st.st_size, 0);

  g_free (valid);
  g_free (cut);
  g_free (garbage);
  g_free (empty);
}

GST_END_TEST;

GST_START_TEST (test_bad_spec_refused)
{
  WsiTestSlideSpec spec = small_spec (WSI_TEST_LAYOUT_GENERIC);
  gchar *path = tmp_path ("bad.tiff");
  GError *error = NULL;

  spec.tile_size = 100;
  fail_if (wsi_test_slide_write (path, &spec, &error));
  fail_unless (error != NULL && strstr (error->message, "tile_size"));
  fail_if (g_file_test (path, G_FILE_TEST_EXISTS));
  g_clear_error (&error);

  spec = small_spec (WSI_TEST_LAYOUT_APERIO);
  spec.level_step = 1;
  fail_if (wsi_test_slide_write (path, &spec, &error));
  fail_unless (error != NULL);
  g_clear_error (&error);
  g_free (path);
}

GST_END_TEST;

static Suite *
generator_suite (void)
{
  Suite *s = suite_create ("generator");
  TCase *tc = tcase_create ("general");

  tcase_add_checked_fixture (tc, setup, teardown);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_spec_defaults);
  tcase_add_test (tc, test_generic_pyramid);
  tcase_add_test (tc, test_generic_placeholder_resolution);
  tcase_add_test (tc, test_aperio_layout);
  tcase_add_test (tc, test_pixels_match_ground_truth);
  tcase_add_test (tc, test_tissue_fraction_and_seed);
  tcase_add_test (tc, test_deterministic_bytes);
  tcase_add_test (tc, test_damaged_tiles);
  tcase_add_test (tc, test_broken_files);
  tcase_add_test (tc, test_bad_spec_refused);
  return s;
}

GST_CHECK_MAIN (generator);
