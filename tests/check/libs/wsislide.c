/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit tests of the slide layer's direct TIFF backend against OpenSlide:
 * the same pyramid (levels, downsamples, tiles, mpp), the same pixels at
 * 1:1, close pixels at other levels and with DCT scaling, the decoded-tile
 * cache, and damaged, truncated and foreign files. Slides are generated at
 * test time; the real slides in WSI_SHARED_SLIDES_DIR are used when
 * present. */

#include <gst/check/gstcheck.h>
#include <glib/gstdio.h>
#include <tiffio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "wsislide.h"
#include "wsitilecache.h"
#include "wsiresample.h"
#include "wsitestslide.h"
#include "wsitestutil.h"

#define CMU_SLIDE "Aperio-CMU-1-Small-Region.svs"
#define TCGA_SLIDE "Aperio-JP2K-TCGA-CR-7395-01A-01-TS1.svs"
#define NDPI_SLIDE "Hamamatsu-test3-DAPI-2-387.ndpi"

/* ---- files -------------------------------------------------------------- */

static gchar *
test_path (const gchar * name)
{
  g_mkdir_with_parents (WSI_TEST_TMPDIR, 0755);
  return g_build_filename (WSI_TEST_TMPDIR, name, NULL);
}

/* The real slide @name, or NULL after a SKIP line naming the calling
 * check (a failure under CI=true). */
#define shared_slide(name) WSI_TEST_SHARED_SLIDE (name)

static WsiTestSlideSpec
slide_spec (WsiTestLayout layout, guint width, guint height, guint tile,
    guint levels, guint step, gdouble mpp)
{
  WsiTestSlideSpec spec;

  wsi_test_slide_spec_init (&spec);
  spec.layout = layout;
  spec.width = width;
  spec.height = height;
  spec.tile_size = tile;
  spec.levels = levels;
  spec.level_step = step;
  spec.mpp = mpp;
  spec.tissue_blobs = 4;
  spec.seed = 7;
  return spec;
}

static gchar *
write_slide (const gchar * name, const WsiTestSlideSpec * spec)
{
  gchar *path = test_path (name);
  GError *error = NULL;

  fail_unless (wsi_test_slide_write (path, spec, &error), "%s",
      error ? error->message : "?");
  return path;
}

/* Generic 1100x900, 256-pixel tiles, downsamples 1, 2, 4. */
static gchar *
generic_slide (void)
{
  WsiTestSlideSpec spec = slide_spec (WSI_TEST_LAYOUT_GENERIC, 1100, 900,
      256, 3, 2, 0.25);
  return write_slide ("generic.tiff", &spec);
}

/* Aperio 1100x900, 240-pixel tiles, downsamples 1, 3, ~9. */
static gchar *
aperio_slide (void)
{
  WsiTestSlideSpec spec = slide_spec (WSI_TEST_LAYOUT_APERIO, 1100, 900,
      240, 3, 3, 0.5);
  return write_slide ("aperio.svs", &spec);
}

/* A single-level TIFF written with libtiff directly, for what the
 * generator does not make: other codecs, stripped images, RGB JPEG,
 * other vendors' tags. Smooth gradients with some texture. */
typedef struct
{
  guint16 compression;          /* COMPRESSION_JPEG or COMPRESSION_LZW */
  guint16 photometric;          /* PHOTOMETRIC_YCBCR or PHOTOMETRIC_RGB */
  gboolean tiled;
  const gchar *description;
  const gchar *software;
  guint width, height, tile;
  guint16 sub_h, sub_v;         /* YCbCr subsampling; 0: 2x2 */
} RawTiff;

static void
paint_pattern (guint8 * rgb, guint x0, guint y0, guint w, guint h)
{
  guint x, y;

  for (y = 0; y < h; y++) {
    for (x = 0; x < w; x++) {
      guint gx = x0 + x, gy = y0 + y;
      guint8 *p = rgb + ((gsize) y * w + x) * 3;
      p[0] = (guint8) (128 + 100 * sin (gx / 17.0) * cos (gy / 23.0));
      p[1] = (guint8) ((gx + 2 * gy) / 7);
      p[2] = (guint8) (((gx * 2654435761u) ^ (gy * 40503u)) >> 28) * 12 + 40;
    }
  }
}

static void
write_raw_tiff (const gchar * path, const RawTiff * spec)
{
  TIFF *tif = TIFFOpen (path, "w");
  guint side = spec->tiled ? spec->tile : spec->width;
  guint rows = spec->tiled ? spec->tile : 16;
  guint8 *buf = g_malloc ((gsize) side * rows * 3);
  guint x, y;

  fail_unless (tif != NULL);
  TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, spec->width);
  TIFFSetField (tif, TIFFTAG_IMAGELENGTH, spec->height);
  TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 8);
  TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 3);
  TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField (tif, TIFFTAG_COMPRESSION, spec->compression);
  TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, spec->photometric);
  if (spec->compression == COMPRESSION_JPEG) {
    TIFFSetField (tif, TIFFTAG_JPEGQUALITY, 90);
    if (spec->photometric == PHOTOMETRIC_YCBCR) {
      TIFFSetField (tif, TIFFTAG_YCBCRSUBSAMPLING, spec->sub_h ? spec->sub_h :
          2, spec->sub_v ? spec->sub_v : 2);
      TIFFSetField (tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
    }
  }
  if (spec->description)
    TIFFSetField (tif, TIFFTAG_IMAGEDESCRIPTION, spec->description);
  if (spec->software)
    TIFFSetField (tif, TIFFTAG_SOFTWARE, spec->software);
  if (spec->tiled) {
    TIFFSetField (tif, TIFFTAG_TILEWIDTH, spec->tile);
    TIFFSetField (tif, TIFFTAG_TILELENGTH, spec->tile);
    for (y = 0; y < spec->height; y += spec->tile) {
      for (x = 0; x < spec->width; x += spec->tile) {
        paint_pattern (buf, x, y, spec->tile, spec->tile);
        fail_unless (TIFFWriteEncodedTile (tif, TIFFComputeTile (tif, x, y, 0,
                    0), buf, (tmsize_t) spec->tile * spec->tile * 3) >= 0);
      }
    }
  } else {
    TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, rows);
    for (y = 0; y < spec->height; y += rows) {
      guint n = MIN (rows, spec->height - y);
      paint_pattern (buf, 0, y, spec->width, n);
      fail_unless (TIFFWriteEncodedStrip (tif, y / rows, buf,
              (tmsize_t) spec->width * n * 3) >= 0);
    }
  }
  TIFFClose (tif);
  g_free (buf);
}

/* ---- slides and reads --------------------------------------------------- */

static WsiSlide *
open_slide (const gchar * path, const gchar * backend)
{
  GError *error = NULL;
  WsiSlide *slide = wsi_slide_open (path, backend, &error);

  fail_unless (slide != NULL, "%s with %s: %s", path, backend,
      error ? error->message : "?");
  fail_unless_equals_string (slide->backend->name, backend);
  return slide;
}

static WsiImage
image_new (guint width, guint height, WsiPixelFormat format)
{
  WsiImage image;

  image.width = width;
  image.height = height;
  image.format = format;
  image.stride = (gsize) width * wsi_pixel_format_bytes (format);
  image.data = g_malloc0 (image.stride * height);
  return image;
}

typedef struct
{
  gint64 x, y, w, h;            /* level-0 footprint */
  guint out_w, out_h;
  gboolean native_scaling;
  WsiTileCache *cache;
  WsiPixelFormat format;
} Patch;

static Patch
patch_1to1 (gint64 x, gint64 y, guint w, guint h)
{
  Patch p = { x, y, w, h, w, h, FALSE, NULL, WSI_PIXEL_RGB };
  return p;
}

/* Reads @p, failing the test on error; returns the pixels. */
static guint8 *
read_patch (WsiSlide * slide, WsiReadContext * ctx, const Patch * p,
    WsiReadReport * report)
{
  WsiReadRequest request = { 0, };
  WsiReadReport local;
  WsiImage out = image_new (p->out_w, p->out_h, p->format);
  GError *error = NULL;

  request.x = p->x;
  request.y = p->y;
  request.width = p->w;
  request.height = p->h;
  request.resample_tolerance = 0.0;
  request.native_scaling = p->native_scaling;
  request.tile_cache = p->cache;
  fail_unless (wsi_slide_read (slide, ctx, &request, &out,
          report ? report : &local, &error),
      "%s read of %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " at (%"
      G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") failed: %s",
      slide->backend->name, p->w, p->h, p->x, p->y,
      error ? error->message : "?");
  return out.data;
}

/* Expects the read to fail with WSI_SLIDE_ERROR_READ naming the file. */
static void
read_patch_fails (WsiSlide * slide, WsiReadContext * ctx, const Patch * p)
{
  WsiReadRequest request = { 0, };
  WsiReadReport report;
  WsiImage out = image_new (p->out_w, p->out_h, p->format);
  GError *error = NULL;

  request.x = p->x;
  request.y = p->y;
  request.width = p->w;
  request.height = p->h;
  request.native_scaling = p->native_scaling;
  request.tile_cache = p->cache;
  fail_if (wsi_slide_read (slide, ctx, &request, &out, &report, &error),
      "reading damaged data at (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
      ") succeeded", p->x, p->y);
  fail_unless (g_error_matches (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ),
      "%s", error ? error->message : "no error");
  fail_unless (g_str_has_prefix (error->message, slide->path), "%s",
      error->message);
  fail_if (report.sticky);
  GST_DEBUG ("expected failure: %s", error->message);
  g_error_free (error);
  g_free (out.data);
}

/* ---- image comparison --------------------------------------------------- */

typedef struct
{
  guint max_diff;
  gdouble psnr;                 /* INFINITY when equal */
} Diff;

static Diff
compare_bytes (const guint8 * a, const guint8 * b, gsize n)
{
  Diff d = { 0, INFINITY };
  gdouble sum = 0.0;
  gsize i;

  for (i = 0; i < n; i++) {
    guint diff = ABS ((gint) a[i] - (gint) b[i]);
    d.max_diff = MAX (d.max_diff, diff);
    sum += (gdouble) diff * diff;
  }
  if (sum > 0.0)
    d.psnr = 10.0 * log10 (255.0 * 255.0 / (sum / n));
  return d;
}

/* PSNR of the luma (Rec. 601 Y') of two RGB images of @n pixels. */
static gdouble
luma_psnr (const guint8 * a, const guint8 * b, gsize n)
{
  gdouble sum = 0.0;
  gsize i;

  for (i = 0; i < n; i++, a += 3, b += 3) {
    gdouble d = 0.299 * (a[0] - b[0]) + 0.587 * (a[1] - b[1]) +
        0.114 * (a[2] - b[2]);
    sum += d * d;
  }
  return sum > 0.0 ? 10.0 * log10 (255.0 * 255.0 / (sum / n)) : INFINITY;
}

/* ---- geometry ----------------------------------------------------------- */

static void
assert_same_geometry (const gchar * path)
{
  WsiSlide *direct = open_slide (path, WSI_BACKEND_TIFF);
  WsiSlide *os = open_slide (path, WSI_BACKEND_OPENSLIDE);
  gint i;

  fail_unless_equals_string (direct->vendor, os->vendor);
  fail_unless_equals_int (direct->level_count, os->level_count);
  for (i = 0; i < os->level_count; i++) {
    fail_unless_equals_int64 (direct->level_width[i], os->level_width[i]);
    fail_unless_equals_int64 (direct->level_height[i], os->level_height[i]);
    fail_unless (fabs (direct->level_downsample[i] -
            os->level_downsample[i]) < 1e-9, "%s level %d: downsample %.12g "
        "vs OpenSlide's %.12g", path, i, direct->level_downsample[i],
        os->level_downsample[i]);
    fail_unless_equals_int64 (direct->level_tile_width[i],
        os->level_tile_width[i]);
    fail_unless_equals_int64 (direct->level_tile_height[i],
        os->level_tile_height[i]);
  }
  fail_unless (fabs (direct->mpp_x - os->mpp_x) < 1e-9
      && fabs (direct->mpp_y - os->mpp_y) < 1e-9, "%s: mpp %g x %g vs "
      "OpenSlide's %g x %g", path, direct->mpp_x, direct->mpp_y, os->mpp_x,
      os->mpp_y);
  wsi_slide_close (direct);
  wsi_slide_close (os);
}

GST_START_TEST (test_geometry_matches_openslide)
{
  static const guint tiles[] = { 256, 240 };
  static const guint steps[] = { 2, 3, 4 };
  static const gdouble mpps[] = { 0.25, 0.0 };
  guint layout, t, s, m;

  for (layout = 0; layout < 2; layout++) {
    for (t = 0; t < G_N_ELEMENTS (tiles); t++) {
      for (s = 0; s < G_N_ELEMENTS (steps); s++) {
        for (m = 0; m < G_N_ELEMENTS (mpps); m++) {
          WsiTestSlideSpec spec = slide_spec (layout, 700, 520, tiles[t], 3,
              steps[s], mpps[m]);
          gchar *name = g_strdup_printf ("geometry-%u-%u-%u-%u.%s", layout,
              tiles[t], steps[s], m, layout ? "svs" : "tiff");
          gchar *path = write_slide (name, &spec);
          WsiSlide *slide;

          assert_same_geometry (path);
          /* And the mpp is where it should come from. */
          slide = open_slide (path, WSI_BACKEND_TIFF);
          fail_unless_equals_string (slide->vendor, layout ? "aperio" :
              "generic-tiff");
          if (mpps[m] > 0.0) {
            fail_unless (fabs (slide->mpp_x - mpps[m]) < 1e-6);
            fail_unless_equals_string (slide->mpp_source, layout ?
                WSI_MPP_SOURCE_APERIO : WSI_MPP_SOURCE_TIFF);
          } else {
            fail_unless_equals_float (slide->mpp_x, 0.0);
            fail_unless_equals_string (slide->mpp_source,
                WSI_MPP_SOURCE_UNKNOWN);
          }
          wsi_slide_close (slide);
          g_unlink (path);
          g_free (path);
          g_free (name);
        }
      }
    }
  }
}

GST_END_TEST;

GST_START_TEST (test_geometry_placeholder_resolution)
{
  WsiTestSlideSpec spec = slide_spec (WSI_TEST_LAYOUT_GENERIC, 700, 520, 256,
      2, 2, 0.25);
  gchar *path;
  WsiSlide *slide;

  /* 72 dpi is a writer's default, not a scan resolution. */
  spec.resolution_placeholder = TRUE;
  path = write_slide ("placeholder.tiff", &spec);
  assert_same_geometry (path);
  slide = open_slide (path, WSI_BACKEND_TIFF);
  fail_unless_equals_float (slide->mpp_x, 0.0);
  fail_unless_equals_string (slide->mpp_source, WSI_MPP_SOURCE_UNKNOWN);
  wsi_slide_close (slide);
  g_free (path);
}

GST_END_TEST;

GST_START_TEST (test_geometry_real_cmu)
{
  gchar *path = shared_slide (CMU_SLIDE);
  WsiSlide *slide;

  if (path == NULL)
    return;
  assert_same_geometry (path);
  slide = open_slide (path, WSI_BACKEND_TIFF);
  fail_unless_equals_int (slide->level_count, 1);
  fail_unless_equals_int64 (slide->level_width[0], 2220);
  fail_unless_equals_int64 (slide->level_height[0], 2967);
  fail_unless_equals_int64 (slide->level_tile_width[0], 240);
  fail_unless (fabs (slide->mpp_x - 0.499) < 1e-9);
  fail_unless_equals_string (slide->mpp_source, WSI_MPP_SOURCE_APERIO);
  wsi_slide_close (slide);
  g_free (path);
}

GST_END_TEST;

/* ---- what the direct reader declines ------------------------------------ */

static void
assert_declined (const gchar * path, gboolean openslide_reads_it)
{
  GError *error = NULL;
  WsiSlide *slide = wsi_slide_open (path, WSI_BACKEND_TIFF, &error);

  fail_unless (slide == NULL, "%s opened with the tiff backend", path);
  fail_unless (g_error_matches (error, WSI_SLIDE_ERROR,
          WSI_SLIDE_ERROR_UNSUPPORTED), "%s: %s", path,
      error ? error->message : "no error");
  fail_unless (g_str_has_prefix (error->message, path), "%s",
      error->message);
  GST_INFO ("declined: %s", error->message);
  g_clear_error (&error);

  /* `auto` hands it to OpenSlide. */
  slide = wsi_slide_open (path, WSI_BACKEND_AUTO, &error);
  if (openslide_reads_it) {
    fail_unless (slide != NULL, "%s: %s", path,
        error ? error->message : "?");
    fail_unless_equals_string (slide->backend->name, WSI_BACKEND_OPENSLIDE);
    wsi_slide_close (slide);
  } else {
    fail_unless (slide == NULL);
    g_clear_error (&error);
  }
}

GST_START_TEST (test_declines_real_slides)
{
  const gchar *names[] = { TCGA_SLIDE, NDPI_SLIDE,
    "Hamamatsu-test3-TRITC-2-560.ndpi"
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (names); i++) {
    gchar *path = shared_slide (names[i]);
    if (path != NULL)
      assert_declined (path, TRUE);
    g_free (path);
  }
}

GST_END_TEST;

GST_START_TEST (test_declines_other_layouts)
{
  RawTiff lzw = { COMPRESSION_LZW, PHOTOMETRIC_RGB, TRUE, NULL, NULL,
    512, 384, 256
  };
  RawTiff stripped = { COMPRESSION_JPEG, PHOTOMETRIC_YCBCR, FALSE, NULL, NULL,
    512, 384, 0
  };
  RawTiff xml = { COMPRESSION_JPEG, PHOTOMETRIC_YCBCR, TRUE,
    "<?xml version=\"1.0\"?><DataObject ObjectType=\"DPUfsImport\"/>", NULL,
    512, 384, 256
  };
  RawTiff philips = { COMPRESSION_JPEG, PHOTOMETRIC_YCBCR, TRUE,
    "scanned", "Philips DP v1.0", 512, 384, 256
  };
  RawTiff trestle = { COMPRESSION_JPEG, PHOTOMETRIC_YCBCR, TRUE,
    "Background Color=FFFFFF", "MedScan", 512, 384, 256
  };
  struct
  {
    const gchar *name;
    const RawTiff *spec;
    gboolean openslide_reads_it;
  } cases[] = {
    {"lzw-tiles.tiff", &lzw, TRUE},
    {"stripped.tiff", &stripped, FALSE},
    {"xml.tiff", &xml, FALSE},
    {"philips.tiff", &philips, FALSE},
    {"trestle.tif", &trestle, FALSE},
  };
  gchar *path;
  guint i;

  TIFFSetWarningHandler (NULL);
  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    path = test_path (cases[i].name);
    write_raw_tiff (path, cases[i].spec);
    /* Whether OpenSlide reads the foreign layouts depends on details this
     * file does not have: only ask `auto` where the answer is sure. */
    if (cases[i].openslide_reads_it)
      assert_declined (path, TRUE);
    else {
      GError *error = NULL;
      fail_if (wsi_slide_open (path, WSI_BACKEND_TIFF, &error) != NULL);
      fail_unless (g_error_matches (error, WSI_SLIDE_ERROR,
              WSI_SLIDE_ERROR_UNSUPPORTED), "%s", error->message);
      GST_INFO ("declined: %s", error->message);
      g_error_free (error);
    }
    g_unlink (path);
    g_free (path);
  }

  /* Not TIFF at all: garbage, an empty file, a missing file. */
  path = test_path ("garbage.svs");
  fail_unless (wsi_test_slide_write_garbage (path, 4096, 3, NULL));
  assert_declined (path, FALSE);
  fail_unless (wsi_test_slide_write_empty (path, NULL));
  assert_declined (path, FALSE);
  g_unlink (path);
  assert_declined (path, FALSE);
  g_free (path);
}

GST_END_TEST;

/* ---- pixels against OpenSlide ------------------------------------------- */

/* A random footprint at level 0 read 1:1; one in four crosses the right or
 * bottom image border, a few start left of or above the image. */
static Patch
random_patch (GRand * rand, const WsiSlide * slide, guint max_side)
{
  gint64 w0 = slide->level_width[0], h0 = slide->level_height[0];
  guint w = g_rand_int_range (rand, 1, max_side + 1);
  guint h = g_rand_int_range (rand, 1, max_side + 1);
  /* Always at least one pixel inside the image. */
  gint64 x = g_rand_int_range (rand, -MIN (40, (gint) w - 1), w0 - 1);
  gint64 y = g_rand_int_range (rand, -MIN (40, (gint) h - 1), h0 - 1);

  if (g_rand_int_range (rand, 0, 4) == 0) {
    x = w0 - w / 2;
    y = h0 - g_rand_int_range (rand, 1, h + 1);
  }
  return patch_1to1 (x, y, w, h);
}

/* Level-0 patches at 1:1 through both backends: the very same bytes. */
static void
assert_level0_identical (const gchar * path, guint patches, guint max_side,
    guint32 seed)
{
  WsiSlide *direct = open_slide (path, WSI_BACKEND_TIFF);
  WsiSlide *os = open_slide (path, WSI_BACKEND_OPENSLIDE);
  WsiReadContext *ctx = wsi_read_context_new ();
  GRand *rand = g_rand_new_with_seed (seed);
  guint i;

  for (i = 0; i < patches; i++) {
    Patch p = random_patch (rand, os, max_side);
    WsiReadReport report;
    guint8 *a, *b;
    Diff d;

    p.format = i % 5 == 4 ? WSI_PIXEL_BGRX : WSI_PIXEL_RGB;
    a = read_patch (direct, ctx, &p, &report);
    fail_unless_equals_string (report.backend, WSI_BACKEND_TIFF);
    fail_unless_equals_int (report.level, 0);
    fail_unless_equals_int (report.native_scale, 1);
    fail_unless (report.tiles_decoded >= 1);
    b = read_patch (os, ctx, &p, NULL);
    d = compare_bytes (a, b, (gsize) p.out_w * p.out_h *
        wsi_pixel_format_bytes (p.format));
    fail_unless (d.max_diff == 0, "%s: %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
        " at (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") differs from "
        "OpenSlide: max %u, PSNR %.2f dB", path, p.w, p.h, p.x, p.y,
        d.max_diff, d.psnr);
    g_free (a);
    g_free (b);
  }
  g_rand_free (rand);
  wsi_read_context_free (ctx);
  wsi_slide_close (direct);
  wsi_slide_close (os);
}

GST_START_TEST (test_level0_pixels_identical)
{
  gchar *generic = generic_slide ();
  gchar *aperio = aperio_slide ();

  assert_level0_identical (generic, 40, 300, 1);
  assert_level0_identical (aperio, 40, 300, 2);
  g_free (generic);
  g_free (aperio);
}

GST_END_TEST;

/* RGB photometric JPEG (no YCbCr transform, no subsampling) and a
 * last tile column/row cut by the image border. */
GST_START_TEST (test_level0_pixels_identical_rgb_jpeg)
{
  RawTiff spec = { COMPRESSION_JPEG, PHOTOMETRIC_RGB, TRUE, NULL, NULL,
    700, 500, 128
  };
  gchar *path = test_path ("rgb-jpeg.tiff");

  write_raw_tiff (path, &spec);
  assert_level0_identical (path, 30, 260, 3);
  g_free (path);
}

GST_END_TEST;

/* Chroma samplings where libjpeg-turbo cannot crop exactly (h1v2, h4v2)
 * and 4:2:2: whole rows are decoded there, still OpenSlide's pixels. */
GST_START_TEST (test_level0_pixels_identical_samplings)
{
  static const guint16 samplings[][2] = { {2, 1}, {1, 2}, {4, 2}, {1, 1} };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (samplings); i++) {
    RawTiff spec = { COMPRESSION_JPEG, PHOTOMETRIC_YCBCR, TRUE, NULL, NULL,
      600, 400, 128, samplings[i][0], samplings[i][1]
    };
    gchar *name = g_strdup_printf ("sampling-%ux%u.tiff", samplings[i][0],
        samplings[i][1]);
    gchar *path = test_path (name);

    write_raw_tiff (path, &spec);
    assert_level0_identical (path, 20, 200, 20 + i);
    g_unlink (path);
    g_free (path);
    g_free (name);
  }
}

GST_END_TEST;

/* A rectangle of a DCT-scaled tile (jpeg_crop_scanline, row skip, early
 * stop; issue 23) has the very bytes of the whole scaled tile decode, for
 * every chroma sampling and scale, whatever the decoder decoded before
 * (one read context for all reads: a column the crop left unwritten would
 * keep an earlier tile's values). The whole level read at the scale
 * decodes every tile whole; random regions crop their edge tiles. */
static void
assert_scaled_crops_identical (WsiSlide * slide, WsiReadContext * ctx,
    guint scale, GRand * rand)
{
  gint64 w = (slide->level_width[0] + scale - 1) / scale;
  gint64 h = (slide->level_height[0] + scale - 1) / scale;
  guint32 *whole = g_new (guint32, w * h), *part = g_new (guint32, w * h);
  GError *error = NULL;
  guint i;

  fail_unless (wsi_slide_read_region_scaled (slide, ctx, whole, 0, scale, 0,
          0, w, h, &error), "%s", error ? error->message : "?");
  for (i = 0; i < 40; i++) {
    gint64 x = g_rand_int_range (rand, 0, w - 1);
    gint64 y = g_rand_int_range (rand, 0, h - 1);
    gint64 rw = g_rand_int_range (rand, 1, w - x + 1);
    gint64 rh = g_rand_int_range (rand, 1, h - y + 1);
    gint64 row;

    fail_unless (wsi_slide_read_region_scaled (slide, ctx, part, 0, scale, x,
            y, rw, rh, &error), "%s", error ? error->message : "?");
    for (row = 0; row < rh; row++)
      fail_unless (memcmp (part + row * rw, whole + (y + row) * w + x,
              rw * 4) == 0, "1/%u: %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
          " at (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") differs from "
          "the whole decode in row %" G_GINT64_FORMAT, scale, rw, rh, x, y,
          row);
  }
  g_free (whole);
  g_free (part);
}

GST_START_TEST (test_scaled_crop_identical)
{
  static const guint16 samplings[][2] = {
    {2, 2}, {2, 1}, {4, 1}, {1, 1}, {1, 2}, {4, 2}
  };
  WsiReadContext *ctx = wsi_read_context_new ();
  GRand *rand = g_rand_new_with_seed (23);
  guint i, scale;

  for (i = 0; i < G_N_ELEMENTS (samplings); i++) {
    RawTiff spec = { COMPRESSION_JPEG, PHOTOMETRIC_YCBCR, TRUE, NULL, NULL,
      600, 400, 128, samplings[i][0], samplings[i][1]
    };
    gchar *name = g_strdup_printf ("crop-%ux%u.tiff", samplings[i][0],
        samplings[i][1]);
    gchar *path = test_path (name);
    WsiSlide *slide;

    write_raw_tiff (path, &spec);
    slide = open_slide (path, WSI_BACKEND_TIFF);
    for (scale = 1; scale <= 8; scale *= 2)
      assert_scaled_crops_identical (slide, ctx, scale, rand);
    wsi_slide_close (slide);
    g_unlink (path);
    g_free (path);
    g_free (name);
  }
  g_rand_free (rand);
  wsi_read_context_free (ctx);
}

GST_END_TEST;

GST_START_TEST (test_level0_pixels_identical_real_cmu)
{
  gchar *path = shared_slide (CMU_SLIDE);

  if (path == NULL)
    return;
  assert_level0_identical (path, 40, 400, 4);
  g_free (path);
}

GST_END_TEST;

/* Premultiplied ARGB words (the overview path): identical at level 0 and
 * at a level whose downsample is exactly 2 (whole level pixels). */
GST_START_TEST (test_read_region_argb_identical)
{
  gchar *path = generic_slide ();
  WsiSlide *direct = open_slide (path, WSI_BACKEND_TIFF);
  WsiSlide *os = open_slide (path, WSI_BACKEND_OPENSLIDE);
  WsiReadContext *ctx = wsi_read_context_new ();
  struct
  {
    gint64 x, y;
    gint level;
    gint64 w, h;
  } regions[] = {
    {0, 0, 0, 300, 200}, {1000, 850, 0, 150, 90},       /* past the corner */
    {-20, -30, 0, 64, 64}, {300, 200, 1, 500, 400},     /* level 1, past its edge */
    {0, 0, 2, 275, 225},
  };
  guint i;

  fail_unless_equals_float (direct->level_downsample[1], 2.0);
  for (i = 0; i < G_N_ELEMENTS (regions); i++) {
    gsize n = regions[i].w * regions[i].h;
    guint32 *a = g_new0 (guint32, n), *b = g_new0 (guint32, n);
    GError *error = NULL;

    fail_unless (wsi_slide_read_region (direct, ctx, a, regions[i].x,
            regions[i].y, regions[i].level, regions[i].w, regions[i].h,
            &error), "%s", error ? error->message : "?");
    /* And once without a context: the backend makes its own. */
    fail_unless (wsi_slide_read_region (os, NULL, b, regions[i].x,
            regions[i].y, regions[i].level, regions[i].w, regions[i].h,
            &error), "%s", error ? error->message : "?");
    fail_unless (memcmp (a, b, n * 4) == 0, "region %u differs", i);
    fail_unless (wsi_slide_read_region (direct, NULL, b, regions[i].x,
            regions[i].y, regions[i].level, regions[i].w, regions[i].h,
            &error), "%s", error ? error->message : "?");
    fail_unless (memcmp (a, b, n * 4) == 0, "region %u differs", i);
    g_free (a);
    g_free (b);
  }
  wsi_read_context_free (ctx);
  wsi_slide_close (direct);
  wsi_slide_close (os);
  g_free (path);
}

GST_END_TEST;

/* Overviews read a level scaled natively (issue 23): scale 1 is the plain
 * level read; at 1/2 and 1/4 every pixel is close to the area average of
 * the full decode's pixels it stands for (glass outside the level stays
 * transparent); OpenSlide has no native scale. */
/* The overview's RGB read (issue 23): at every DCT scale, on generic
 * (256 px tiles) and Aperio (240 px) slides, regions inside the level,
 * across tiles and past the level's edge (glass), the RGB the decoders
 * write equals the ARGB read composited on white, byte for byte, at a
 * stride wider than the row (the bytes past it untouched). */
GST_START_TEST (test_read_region_scaled_rgb)
{
  gchar *paths[] = { generic_slide (), aperio_slide () };
  WsiReadContext *ctx = wsi_read_context_new ();
  guint p;

  for (p = 0; p < G_N_ELEMENTS (paths); p++) {
    WsiSlide *direct = open_slide (paths[p], WSI_BACKEND_TIFF);
    WsiSlide *os = open_slide (paths[p], WSI_BACKEND_OPENSLIDE);
    guint scale;

    fail_if (wsi_slide_has_rgb_scaled (direct, 0, 1));
    fail_if (wsi_slide_has_rgb_scaled (os, 0, 2));
    for (scale = 2; scale <= 8; scale *= 2) {
      const gint64 regions[][4] = {
        {0, 0, 1100 / scale, 900 / scale},      /* the whole level */
        {7, 5, 61, 43},         /* inside, across tiles */
        {1100 / scale - 20, 900 / scale - 9, 40, 30},   /* past the edge */
      };
      guint k;

      fail_unless (wsi_slide_has_rgb_scaled (direct, 0, scale));
      for (k = 0; k < G_N_ELEMENTS (regions); k++) {
        gint64 x = regions[k][0], y = regions[k][1];
        gint64 w = regions[k][2], h = regions[k][3], i;
        gsize stride = (gsize) w * 3 + 5;
        guint32 *argb = g_new (guint32, w * h);
        guint8 *expected = g_new (guint8, w * 3);
        guint8 *rgb = g_new (guint8, stride * h);
        GError *error = NULL;

        memset (rgb, 0x5a, stride * h);
        fail_unless (wsi_slide_read_region_scaled (direct, ctx, argb, 0,
                scale, x, y, w, h, &error), "%s", error ? error->message : "");
        fail_unless (wsi_slide_read_region_scaled_rgb (direct, ctx, rgb,
                stride, 0, scale, x, y, w, h, &error), "%s",
            error ? error->message : "");
        for (i = 0; i < h; i++) {
          wsi_argb_to_rgb_on_white (argb + i * w, expected, w);
          fail_unless (memcmp (rgb + i * stride, expected, w * 3) == 0,
              "%s 1/%u region %u row %" G_GINT64_FORMAT " differs", paths[p],
              scale, k, i);
          fail_unless (rgb[i * stride + w * 3] == 0x5a);
        }
        g_free (argb);
        g_free (expected);
        g_free (rgb);
      }
    }
    wsi_slide_close (direct);
    wsi_slide_close (os);
    g_free (paths[p]);
  }
  wsi_read_context_free (ctx);
}

GST_END_TEST;

GST_START_TEST (test_read_region_scaled)
{
  gchar *path = generic_slide ();
  WsiSlide *direct = open_slide (path, WSI_BACKEND_TIFF);
  WsiSlide *os = open_slide (path, WSI_BACKEND_OPENSLIDE);
  WsiReadContext *ctx = wsi_read_context_new ();
  const gint64 w = 200, h = 150;
  guint scale;

  fail_unless_equals_int (wsi_slide_native_scale (direct, 0, 8), 8);
  fail_unless_equals_int (wsi_slide_native_scale (direct, 0, 3), 2);
  fail_unless_equals_int (wsi_slide_native_scale (direct, 0, 1), 1);
  fail_unless_equals_int (wsi_slide_native_scale (os, 0, 8), 1);
  for (scale = 1; scale <= 4; scale *= 2) {
    guint32 *full = g_new (guint32, w * h * scale * scale);
    guint32 *scaled = g_new (guint32, w * h);
    guint8 *expected = g_new (guint8, w * h * 4);
    GError *error = NULL;
    gint64 x, y;
    Diff d;

    fail_unless (wsi_slide_read_region (direct, ctx, full, 96 * scale,
            64 * scale, 0, w * scale, h * scale, &error), "%s",
        error ? error->message : "?");
    fail_unless (wsi_slide_read_region_scaled (direct, ctx, scaled, 0, scale,
            96, 64, w, h, &error), "%s", error ? error->message : "?");
    /* the area average of the full decode, byte by byte of the words */
    for (y = 0; y < h; y++) {
      for (x = 0; x < w; x++) {
        guint c, i, j;

        for (c = 0; c < 4; c++) {
          guint sum = 0;

          for (j = 0; j < scale; j++)
            for (i = 0; i < scale; i++)
              sum += ((const guint8 *) &full[(y * scale + j) * w * scale +
                      x * scale + i])[c];
          expected[(y * w + x) * 4 + c] = (sum + scale * scale / 2) /
              (scale * scale);
        }
      }
    }
    d = compare_bytes (expected, (const guint8 *) scaled, w * h * 4);
    if (scale == 1) {
      fail_unless_equals_int (d.max_diff, 0);
    } else {
      fail_unless (d.psnr >= 35.0, "1/%u: PSNR %.2f dB", scale, d.psnr);
    }
    g_free (full);
    g_free (scaled);
    g_free (expected);
  }
  wsi_read_context_free (ctx);
  wsi_slide_close (direct);
  wsi_slide_close (os);
  g_free (path);
}

GST_END_TEST;

/* Levels > 0: OpenSlide shifts by the fractional level offset with cairo's
 * bilinear filter, the direct reader area-averages the same window. */
static void
assert_levels_close (const gchar * path, guint patches, guint32 seed,
    gdouble min_psnr)
{
  WsiSlide *direct = open_slide (path, WSI_BACKEND_TIFF);
  WsiSlide *os = open_slide (path, WSI_BACKEND_OPENSLIDE);
  WsiReadContext *ctx = wsi_read_context_new ();
  GRand *rand = g_rand_new_with_seed (seed);
  gdouble worst_psnr = INFINITY;
  guint worst_diff = 0, i;
  gint level;

  for (level = 1; level < os->level_count; level++) {
    gdouble ds = os->level_downsample[level];
    for (i = 0; i < patches; i++) {
      guint out = g_rand_int_range (rand, 16, 160);
      gint64 side = (gint64) llround (out * ds);
      Patch p = patch_1to1 (g_rand_int_range (rand, 0,
              os->level_width[0] - side / 2), g_rand_int_range (rand, 0,
              os->level_height[0] - side / 2), out, out);
      WsiReadReport report;
      guint8 *a, *b;
      Diff d;

      p.w = p.h = side;
      a = read_patch (direct, ctx, &p, &report);
      fail_unless_equals_int (report.level, level);
      fail_unless_equals_int64 (report.read_width, out);
      b = read_patch (os, ctx, &p, NULL);
      d = compare_bytes (a, b, (gsize) out * out * 3);
      worst_psnr = MIN (worst_psnr, d.psnr);
      worst_diff = MAX (worst_diff, d.max_diff);
      fail_unless (d.psnr >= min_psnr, "%s level %d: %" G_GINT64_FORMAT
          " at (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") to %u: PSNR "
          "%.2f dB, max difference %u", path, level, side, p.x, p.y, out,
          d.psnr, d.max_diff);
      g_free (a);
      g_free (b);
    }
  }
  g_print ("%s, levels > 0 against OpenSlide: worst PSNR %.2f dB, max "
      "difference %u\n", path, worst_psnr, worst_diff);
  g_rand_free (rand);
  wsi_read_context_free (ctx);
  wsi_slide_close (direct);
  wsi_slide_close (os);
}

/* Levels are derived from level 0, as a scanner makes them: a patch read
 * at level k's mpp from a one-level copy of the slide (the reader
 * area-averages level 0) matches the same patch read from level k (1:1), to
 * within JPEG's losses: >= 35 dB on luma. Footprints start on the level's
 * pixel grid, so both average the same level-0 pixels. Luma, because JPEG
 * halves the chroma resolution of each level: at 16x a nucleus is a pixel
 * or two of level k, whose colour 4:2:0 smears (about 30 dB in RGB, 42 in
 * luma, at quality 95; at 85, quantisation costs luma another 9 dB); RGB
 * is held to 25 dB. Painted at its own scale as before, level k matched
 * level 0 averaged to about 15 dB. */
static void
assert_levels_derived (WsiTestLayout layout, guint step, const gchar * name)
{
  WsiTestSlideSpec spec = slide_spec (layout, 3072, 2304, 256, 3, step,
      0.25);
  gchar *pyramid_path;
  gchar *flat_name = g_strconcat ("flat-", name, NULL);
  gchar *flat_path;
  WsiSlide *pyramid, *flat;
  WsiReadContext *ctx = wsi_read_context_new ();
  GRand *rand = g_rand_new_with_seed (step);
  gint level;
  guint i;

  spec.jpeg_quality = 95;
  pyramid_path = write_slide (name, &spec);
  spec.levels = 1;
  flat_path = write_slide (flat_name, &spec);
  pyramid = open_slide (pyramid_path, WSI_BACKEND_TIFF);
  flat = open_slide (flat_path, WSI_BACKEND_TIFF);
  fail_unless_equals_int (pyramid->level_count, 3);
  fail_unless_equals_int (flat->level_count, 1);
  for (level = 1; level < pyramid->level_count; level++) {
    gint64 ds = (gint64) llround (pyramid->level_downsample[level]);
    gdouble worst = INFINITY, worst_rgb = INFINITY, luma;

    for (i = 0; i < 12; i++) {
      guint out = 48;
      gint64 side = out * ds;
      Patch p = patch_1to1 (g_rand_int_range (rand, 0,
              (gint32) ((spec.width - side) / ds)) * ds,
          g_rand_int_range (rand, 0,
              (gint32) ((spec.height - side) / ds)) * ds, out, out);
      WsiReadReport from_level, from_zero;
      guint8 *a, *b;
      Diff d;

      p.w = p.h = side;
      a = read_patch (pyramid, ctx, &p, &from_level);
      b = read_patch (flat, ctx, &p, &from_zero);
      fail_unless_equals_int (from_level.level, level);
      fail_unless_equals_int (from_zero.level, 0);
      d = compare_bytes (a, b, (gsize) out * out * 3);
      luma = luma_psnr (a, b, (gsize) out * out);
      worst = MIN (worst, luma);
      worst_rgb = MIN (worst_rgb, d.psnr);
      fail_unless (luma >= 35.0 && d.psnr >= 25.0, "%s level %d (downsample "
          "%" G_GINT64_FORMAT ") at (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
          "): %.2f dB luma, %.2f dB RGB against level 0 averaged, max "
          "difference %u", name, level, ds, p.x, p.y, luma, d.psnr,
          d.max_diff);
      g_free (a);
      g_free (b);
    }
    g_print ("%s level %d (downsample %" G_GINT64_FORMAT "): worst %.2f dB "
        "luma, %.2f dB RGB against level 0 averaged\n", name, level, ds,
        worst, worst_rgb);
  }
  g_rand_free (rand);
  wsi_read_context_free (ctx);
  wsi_slide_close (pyramid);
  wsi_slide_close (flat);
  g_free (flat_path);
  g_free (flat_name);
  g_free (pyramid_path);
}

GST_START_TEST (test_generated_levels_derive_from_level0)
{
  assert_levels_derived (WSI_TEST_LAYOUT_GENERIC, 2, "derived.tiff");
  assert_levels_derived (WSI_TEST_LAYOUT_APERIO, 4, "derived.svs");
}

GST_END_TEST;

GST_START_TEST (test_levels_close_to_openslide)
{
  gchar *generic = generic_slide ();
  gchar *aperio = aperio_slide ();

  assert_levels_close (generic, 15, 5, 40.0);
  assert_levels_close (aperio, 15, 6, 40.0);
  g_free (generic);
  g_free (aperio);
}

GST_END_TEST;

/* ---- DCT scaling -------------------------------------------------------- */

/* Footprints of @factor x the output at level 0, on the scaled grid: with
 * native scaling the JPEG is decoded at 1/factor; against the full decode
 * averaged down. */
static void
assert_native_scaling_close (const gchar * path, guint factor, guint patches,
    gdouble min_psnr)
{
  WsiSlide *slide = open_slide (path, WSI_BACKEND_TIFF);
  WsiReadContext *ctx = wsi_read_context_new ();
  WsiTileCache *cache = wsi_tile_cache_new (64 << 20);
  GRand *rand = g_rand_new_with_seed (factor);
  gdouble worst = INFINITY;
  guint worst_diff = 0, i;

  for (i = 0; i < patches; i++) {
    guint out = g_rand_int_range (rand, 16, 96);
    /* Some start left of or above the image (on the grid all the same). */
    Patch p = patch_1to1 (g_rand_int_range (rand, -4, (slide->level_width[0]
                - 10) / factor) * factor, g_rand_int_range (rand, -4,
            (slide->level_height[0] - 10) / factor) * factor, out, out);
    WsiReadReport scaled_report, full_report;
    guint8 *scaled, *full, *whole_tiles;
    Diff d;

    p.w = p.h = (gint64) out * factor;
    p.native_scaling = TRUE;
    scaled = read_patch (slide, ctx, &p, &scaled_report);
    /* Scaled tiles decoded whole (the cache) give the same bytes as the
     * parts decoded for the region alone. */
    p.cache = cache;
    whole_tiles = read_patch (slide, ctx, &p, NULL);
    fail_unless (memcmp (scaled, whole_tiles, (gsize) out * out * 3) == 0,
        "%s 1/%u at (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "): whole "
        "tiles differ", path, factor, p.x, p.y);
    g_free (whole_tiles);
    p.cache = NULL;
    p.native_scaling = FALSE;
    full = read_patch (slide, ctx, &p, &full_report);
    fail_unless_equals_int (scaled_report.level, 0);
    fail_unless_equals_int (scaled_report.native_scale, factor);
    fail_unless_equals_int (full_report.native_scale, 1);
    d = compare_bytes (scaled, full, (gsize) out * out * 3);
    worst = MIN (worst, d.psnr);
    worst_diff = MAX (worst_diff, d.max_diff);
    fail_unless (d.psnr >= min_psnr, "%s 1/%u: %" G_GINT64_FORMAT " at (%"
        G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") to %u: PSNR %.2f dB", path,
        factor, p.w, p.x, p.y, out, d.psnr);
    g_free (scaled);
    g_free (full);
  }
  g_print ("%s, DCT scaling 1/%u against full decode: worst PSNR %.2f dB, "
      "max difference %u\n", path, factor, worst, worst_diff);
  wsi_tile_cache_free (cache);
  g_rand_free (rand);
  wsi_read_context_free (ctx);
  wsi_slide_close (slide);
}

/* Off the scaled grid (odd start) the window moves onto the grid, by less
 * than one output pixel, and the report says where it starts: the pixels
 * are those of the exact read at that position. A footprint 6 % below a
 * whole multiple of scale x output (1.875x: more than
 * WSI_NATIVE_SCALE_MARGIN below 1/2's resolution) decodes at full size. */
static void
assert_native_scaling_snapped (const gchar * path)
{
  WsiSlide *slide = open_slide (path, WSI_BACKEND_TIFF);
  WsiReadContext *ctx = wsi_read_context_new ();
  Patch patches[] = {
    {101, 200, 128, 128, 64, 64, TRUE, NULL, WSI_PIXEL_RGB},
    {100, 201, 128, 128, 64, 64, TRUE, NULL, WSI_PIXEL_RGB},
    {100, 200, 120, 128, 64, 64, TRUE, NULL, WSI_PIXEL_RGB},
    {102, 200, 256, 256, 64, 64, TRUE, NULL, WSI_PIXEL_RGB},
    {103, 205, 256, 256, 64, 64, TRUE, NULL, WSI_PIXEL_RGB},
  };
  /* native scale, and where the read must start */
  const gint64 expect[][3] = {
    {2, 100, 200}, {2, 100, 200}, {1, 100, 200}, {4, 100, 200}, {4, 100, 204},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (patches); i++) {
    WsiReadReport report;
    guint8 *scaled, *full;
    Diff d;

    scaled = read_patch (slide, ctx, &patches[i], &report);
    fail_unless_equals_int (report.native_scale, expect[i][0]);
    if (expect[i][0] > 1) {
      fail_unless_equals_int64 (report.x, expect[i][1]);
      fail_unless_equals_int64 (report.y, expect[i][2]);
      fail_unless (ABS (report.x - patches[i].x) < expect[i][0]);
      fail_unless (ABS (report.y - patches[i].y) < expect[i][0]);
    } else {
      fail_unless_equals_int64 (report.x, patches[i].x);
    }
    /* the exact read where the scaled one really starts */
    patches[i].native_scaling = FALSE;
    patches[i].x = report.x;
    patches[i].y = report.y;
    full = read_patch (slide, ctx, &patches[i], NULL);
    d = compare_bytes (scaled, full, 64 * 64 * 3);
    if (expect[i][0] == 1)
      fail_unless (d.max_diff == 0);
    else
      fail_unless (d.psnr >= 35.0, "patch %u: PSNR %.2f dB", i, d.psnr);
    g_free (scaled);
    g_free (full);
  }
  wsi_read_context_free (ctx);
  wsi_slide_close (slide);
}

GST_START_TEST (test_native_scaling_close)
{
  WsiTestSlideSpec spec = slide_spec (WSI_TEST_LAYOUT_GENERIC, 1500, 1100,
      256, 1, 2, 0.25);
  gchar *path = write_slide ("single-level.tiff", &spec);
  gchar *cmu = shared_slide (CMU_SLIDE);

  assert_native_scaling_close (path, 2, 20, 35.0);
  assert_native_scaling_close (path, 4, 20, 35.0);
  assert_native_scaling_close (path, 8, 10, 35.0);
  assert_native_scaling_snapped (path);
  if (cmu != NULL) {
    assert_native_scaling_close (cmu, 2, 20, 35.0);
    assert_native_scaling_close (cmu, 4, 20, 35.0);
    assert_native_scaling_close (cmu, 8, 10, 35.0);
  }
  g_free (path);
  g_free (cmu);
}

GST_END_TEST;

/* Near-whole downscales (issue 23): 0.5 and 1.0 um/px from a 40x scan at
 * 0.2527 um/px (factors 1.979 and 3.957, read at level 0) decode at 1/2
 * and 1/4 and resample the rest at the requested position: the report
 * keeps that position and says the scale; the scaled tiles cached whole
 * give the same bytes. Quality: PSNR against the exact read (full decode,
 * area average) at the same position, over all patches together (@min_psnr)
 * and per patch (@min_patch_psnr). */
static void
assert_near_whole_scaling (const gchar * path, gdouble factor,
    guint min_out, guint expect_scale, guint patches, gdouble min_psnr,
    gdouble min_patch_psnr)
{
  WsiSlide *slide = open_slide (path, WSI_BACKEND_TIFF);
  WsiReadContext *ctx = wsi_read_context_new ();
  WsiTileCache *cache = wsi_tile_cache_new (64 << 20);
  GRand *rand = g_rand_new_with_seed (23);
  gdouble target_mpp = factor * slide->mpp_x, worst = INFINITY;
  gdouble squared = 0.0, pooled;
  guint64 bytes = 0;
  guint i, j;

  for (i = 0; i < patches; i++) {
    guint out = g_rand_int_range (rand, min_out, 257);
    gint64 side = (gint64) llround (out * factor);
    Patch p = patch_1to1 (g_rand_int_range (rand, -7,
            slide->level_width[0] - side / 2), g_rand_int_range (rand, -7,
            slide->level_height[0] - side / 2), out, out);
    WsiReadReport scaled_report, full_report;
    guint8 *scaled, *full, *cached = NULL;
    Diff d;

    p.w = p.h = side;
    p.native_scaling = TRUE;
    scaled = read_patch (slide, ctx, &p, &scaled_report);
    fail_unless_equals_int (scaled_report.level, 0);
    fail_unless_equals_int (scaled_report.native_scale, expect_scale);
    fail_unless_equals_int64 (scaled_report.x, p.x);
    fail_unless_equals_int64 (scaled_report.y, p.y);
    fail_unless_equals_int64 (scaled_report.read_width, side);
    /* Third read: whole scaled tiles from the cache (admitted at the
     * second miss). */
    p.cache = cache;
    for (j = 0; j < 3; j++) {
      g_free (cached);
      cached = read_patch (slide, ctx, &p, NULL);
    }
    fail_unless (memcmp (scaled, cached, (gsize) out * out * 3) == 0,
        "%s %.2f um/px at (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "): "
        "cached scaled tiles differ", path, target_mpp, p.x, p.y);
    p.cache = NULL;
    p.native_scaling = FALSE;
    full = read_patch (slide, ctx, &p, &full_report);
    fail_unless_equals_int (full_report.native_scale, 1);
    d = compare_bytes (scaled, full, (gsize) out * out * 3);
    worst = MIN (worst, d.psnr);
    squared += (gdouble) out * out * 3 * 255.0 * 255.0 / pow (10.0,
        d.psnr / 10.0);
    bytes += (guint64) out * out * 3;
    fail_unless (d.psnr >= min_patch_psnr, "%s %.2f um/px: %" G_GINT64_FORMAT
        " at (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") to %u: PSNR "
        "%.2f dB", path, target_mpp, side, p.x, p.y, out, d.psnr);
    g_free (scaled);
    g_free (full);
    g_free (cached);
  }
  pooled = squared > 0.0 ? 10.0 * log10 (255.0 * 255.0 * bytes / squared) :
      INFINITY;
  g_print ("%s, %.3f um/px (factor %.3f) at 1/%u DCT against the exact area "
      "average: PSNR %.2f dB over %u patches, worst patch %.2f dB\n", path,
      target_mpp, factor, expect_scale, pooled, patches, worst);
  fail_unless (pooled >= min_psnr, "%s factor %.3f: PSNR %.2f dB", path,
      factor, pooled);
  wsi_tile_cache_free (cache);
  g_rand_free (rand);
  wsi_read_context_free (ctx);
  wsi_slide_close (slide);
}

GST_START_TEST (test_native_scaling_near_whole)
{
  WsiTestSlideSpec spec = slide_spec (WSI_TEST_LAYOUT_APERIO, 2400, 1800,
      240, 2, 4, 0.2527);
  gchar *path = write_slide ("aperio-40x.svs", &spec);
  gchar *cmu = shared_slide (CMU_SLIDE);
  WsiSlide *slide = open_slide (path, WSI_BACKEND_TIFF);
  WsiReadContext *ctx = wsi_read_context_new ();
  Patch exact_two = patch_1to1 (100, 60, 64, 64);
  Patch three = patch_1to1 (100, 60, 64, 64);
  WsiReadReport report;

  fail_unless (fabs (slide->mpp_x - 0.2527) < 1e-6);
  /* Per patch: 35.6 and 43.0 dB measured at worst. */
  assert_near_whole_scaling (path, 0.5 / 0.2527, 32, 2, 24, 35.0, 34.0);
  /* From 200 px up the rounded footprint stays below 4 / 1.01 x the
   * output: level 0 (smaller outputs may round onto level 1). 1/2 then
   * 1.98 (not 1/4 then 0.99: see WSI_NATIVE_SCALE_MIN_REST). */
  assert_near_whole_scaling (path, 1.0 / 0.2527, 200, 2, 16, 35.0, 40.0);
  if (cmu != NULL) {
    /* The same factors on a real slide; it is a 20x scan, sharper at the
     * pixel level than 40x scans: worst patches 30.1 and 38.1 dB. */
    assert_near_whole_scaling (cmu, 0.5 / 0.2527, 32, 2, 24, 35.0, 29.0);
    assert_near_whole_scaling (cmu, 1.0 / 0.2527, 200, 2, 16, 35.0, 36.0);
  }

  /* Whole multiples keep the exact path; 3x takes 1/2 then 1.5; 1.9x
   * (5 % below 1/2's resolution) decodes at full size; 7.9x reads level 1
   * (downsample 4), then 1/2 and 0.99. */
  exact_two.w = exact_two.h = 128;
  exact_two.native_scaling = TRUE;
  g_free (read_patch (slide, ctx, &exact_two, &report));
  fail_unless_equals_int (report.native_scale, 2);
  three.w = three.h = 192;
  three.native_scaling = TRUE;
  g_free (read_patch (slide, ctx, &three, &report));
  fail_unless_equals_int (report.native_scale, 2);
  three.w = three.h = 122;
  g_free (read_patch (slide, ctx, &three, &report));
  fail_unless_equals_int (report.native_scale, 1);
  three.w = three.h = 506;
  g_free (read_patch (slide, ctx, &three, &report));
  fail_unless_equals_int (report.level, 1);
  fail_unless_equals_int (report.native_scale, 2);
  fail_unless_equals_int64 (report.x, three.x);
  wsi_read_context_free (ctx);
  wsi_slide_close (slide);
  g_free (path);
  g_free (cmu);
}

GST_END_TEST;

/* ---- tile cache --------------------------------------------------------- */

GST_START_TEST (test_tile_cache_same_bytes_and_hits)
{
  gchar *path = aperio_slide ();
  WsiSlide *slide = open_slide (path, WSI_BACKEND_TIFF);
  WsiReadContext *ctx = wsi_read_context_new ();
  WsiTileCache *cache = wsi_tile_cache_new (64 << 20);
  GRand *rand = g_rand_new_with_seed (9);
  guint i;

  for (i = 0; i < 30; i++) {
    Patch p = random_patch (rand, slide, 300);
    WsiReadReport report1, report2;
    guint8 *plain, *cached, *again;
    guint64 hits;

    if (i % 3 == 1) {
      /* Scaled tiles are cached apart from full-size ones. */
      p.x &= ~1;
      p.y &= ~1;
      p.w = p.out_w * 2;
      p.h = p.out_h * 2;
      p.native_scaling = TRUE;
    }
    plain = read_patch (slide, ctx, &p, NULL);
    p.cache = cache;
    cached = read_patch (slide, ctx, &p, &report1);
    fail_unless (memcmp (plain, cached, (gsize) p.out_w * p.out_h * 3) == 0,
        "patch %u differs with the cache", i);
    fail_unless_equals_int (report1.native_scale, p.native_scaling ? 2 : 1);

    /* Admission: a tile missed once is decoded whole and kept at its
     * second miss; from the third read on, the region is all cache hits. */
    again = read_patch (slide, ctx, &p, NULL);
    fail_unless (memcmp (plain, again, (gsize) p.out_w * p.out_h * 3) == 0);
    g_free (again);
    hits = wsi_tile_cache_hits (cache);
    again = read_patch (slide, ctx, &p, &report2);
    fail_unless (memcmp (plain, again, (gsize) p.out_w * p.out_h * 3) == 0);
    fail_unless_equals_int (report2.tiles_decoded, 0);
    fail_unless_equals_int (report2.tiles_from_cache,
        report1.tiles_decoded + report1.tiles_from_cache);
    fail_unless (wsi_tile_cache_hits (cache) > hits);
    fail_unless (wsi_tile_cache_bytes (cache) <= 64 << 20);
    g_free (plain);
    g_free (cached);
    g_free (again);
  }
  wsi_tile_cache_free (cache);
  g_rand_free (rand);
  wsi_read_context_free (ctx);
  wsi_slide_close (slide);
  g_free (path);
}

GST_END_TEST;

/* A budget of a few tiles: evictions all the time, bytes stay under it,
 * pixels stay right. */
GST_START_TEST (test_tile_cache_small_budget)
{
  gchar *path = generic_slide ();
  WsiSlide *slide = open_slide (path, WSI_BACKEND_TIFF);
  WsiReadContext *ctx = wsi_read_context_new ();
  /* One 256x256 ARGB tile per shard. */
  gsize budget = WSI_TILE_CACHE_SHARDS * 256 * 256 * 4;
  WsiTileCache *cache = wsi_tile_cache_new (budget);
  GRand *rand = g_rand_new_with_seed (10);
  guint i;

  for (i = 0; i < 40; i++) {
    Patch p = random_patch (rand, slide, 400);
    guint8 *plain = read_patch (slide, ctx, &p, NULL), *cached;

    p.cache = cache;
    cached = read_patch (slide, ctx, &p, NULL);
    fail_unless (memcmp (plain, cached, (gsize) p.out_w * p.out_h * 3) == 0);
    fail_unless (wsi_tile_cache_bytes (cache) <= budget);
    g_free (plain);
    g_free (cached);
  }
  fail_unless (wsi_tile_cache_misses (cache) > 0);
  wsi_tile_cache_set_max_bytes (cache, 0);
  fail_unless_equals_uint64 (wsi_tile_cache_bytes (cache), 0);
  wsi_tile_cache_free (cache);
  g_rand_free (rand);
  wsi_read_context_free (ctx);
  wsi_slide_close (slide);
  g_free (path);
}

GST_END_TEST;

static guint32 *
tile_pixels (guint n, guint32 value)
{
  guint32 *argb = g_new (guint32, n);
  guint i;

  for (i = 0; i < n; i++)
    argb[i] = value;
  return argb;
}

GST_START_TEST (test_tile_cache_api)
{
  /* 16 shards x 2 tiles of 64x64. */
  WsiTileCache *cache = wsi_tile_cache_new (WSI_TILE_CACHE_SHARDS * 2 * 64 *
      64 * 4);
  WsiTileKey key = { 42, 1, 1, 3, 4 };
  WsiTile *tile, *again, *other;
  guint i;

  fail_unless (wsi_tile_cache_lookup (cache, &key) == NULL);
  fail_unless_equals_uint64 (wsi_tile_cache_misses (cache), 1);
  tile = wsi_tile_cache_insert (cache, &key, tile_pixels (64 * 64, 7), 64,
      64);
  fail_unless (tile->cached);
  fail_unless_equals_uint64 (wsi_tile_cache_bytes (cache), 64 * 64 * 4);

  /* The same key again: the first tile wins, the second buffer goes. */
  again = wsi_tile_cache_insert (cache, &key, tile_pixels (64 * 64, 8), 64,
      64);
  fail_unless (again == tile);
  fail_unless_equals_int (again->argb[0], 7);
  wsi_tile_unref (again);
  again = wsi_tile_cache_lookup (cache, &key);
  fail_unless (again == tile);
  fail_unless_equals_uint64 (wsi_tile_cache_hits (cache), 1);
  wsi_tile_unref (again);

  /* Other scales and slides are other tiles. */
  key.scale = 2;
  fail_unless (wsi_tile_cache_lookup (cache, &key) == NULL);
  key.scale = 1;
  key.slide_uid = 43;
  fail_unless (wsi_tile_cache_lookup (cache, &key) == NULL);
  key.slide_uid = 42;

  /* Fill far past the budget: ours is evicted but stays readable. */
  for (i = 0; i < 200; i++) {
    WsiTileKey k = { 1, 0, 1, i, 0 };
    other = wsi_tile_cache_insert (cache, &k, tile_pixels (64 * 64, i), 64,
        64);
    wsi_tile_unref (other);
    fail_unless (wsi_tile_cache_bytes (cache) <= wsi_tile_cache_get_max_bytes
        (cache));
  }
  fail_if (tile->cached);
  fail_unless_equals_int (tile->argb[64 * 64 - 1], 7);
  wsi_tile_unref (tile);

  /* Too large for a shard: handed back uncached. */
  key.column = 99;
  tile = wsi_tile_cache_insert (cache, &key, tile_pixels (128 * 128, 1), 128,
      128);
  fail_if (tile->cached);
  wsi_tile_unref (tile);
  fail_unless (wsi_tile_cache_lookup (cache, &key) == NULL);

  wsi_tile_cache_reset_counters (cache);
  fail_unless_equals_uint64 (wsi_tile_cache_hits (cache), 0);
  fail_unless_equals_uint64 (wsi_tile_cache_misses (cache), 0);
  wsi_tile_cache_clear (cache);
  fail_unless_equals_uint64 (wsi_tile_cache_bytes (cache), 0);

  /* A zero budget keeps nothing. */
  wsi_tile_cache_set_max_bytes (cache, 0);
  tile = wsi_tile_cache_insert (cache, &key, tile_pixels (4, 1), 2, 2);
  fail_if (tile->cached);
  wsi_tile_unref (tile);
  fail_unless (wsi_tile_cache_lookup (cache, &key) == NULL);
  wsi_tile_cache_free (cache);
}

GST_END_TEST;

/* Pixel memory of freed tiles goes to the next tile of its size, as it
 * was left (glibc's M_PERTURB fills memory malloc hands out, so a buffer
 * that went back to malloc would not keep the marker); other sizes and a
 * cleared cache get fresh memory; a tile may outlive its cache. */
GST_START_TEST (test_tile_cache_recycles_pixels)
{
#ifdef __GLIBC__
  WsiTileCache *cache = wsi_tile_cache_new (WSI_TILE_CACHE_SHARDS * 2 * 64 *
      64 * 4);
  WsiTileKey key = { 42, 0, 1, 0, 0 };
  guint32 *argb, *again, *small;
  WsiTile *tile;
  guint i;

  mallopt (M_PERTURB, 0x5a);
  argb = wsi_tile_cache_alloc_argb (cache, 64, 64);
  for (i = 0; i < 64 * 64; i++)
    argb[i] = 0x12345678u;
  wsi_tile_unref (wsi_tile_cache_insert (cache, &key, argb, 64, 64));
  wsi_tile_cache_set_max_bytes (cache, 0);      /* evicted and freed */
  again = wsi_tile_cache_alloc_argb (cache, 64, 64);
  fail_unless (again == argb, "the freed tile's memory was not reused");
  fail_unless_equals_int (again[0], 0x12345678u);
  fail_unless_equals_int (again[64 * 64 - 1], 0x12345678u);
  small = wsi_tile_cache_alloc_argb (cache, 32, 32);
  fail_if (small == argb);
  fail_if (small[100] == 0x12345678u);
  g_free (small);

  /* a tile held past its cache gives its memory back to nobody */
  wsi_tile_cache_set_max_bytes (cache, WSI_TILE_CACHE_SHARDS * 2 * 64 * 64 *
      4);
  tile = wsi_tile_cache_insert (cache, &key, again, 64, 64);
  fail_unless (tile->cached);
  wsi_tile_cache_free (cache);
  fail_unless_equals_int (tile->argb[7], 0x12345678u);
  wsi_tile_unref (tile);

  /* clear gives the kept memory back */
  cache = wsi_tile_cache_new (WSI_TILE_CACHE_SHARDS * 2 * 64 * 64 * 4);
  argb = wsi_tile_cache_alloc_argb (cache, 64, 64);
  for (i = 0; i < 64 * 64; i++)
    argb[i] = 0x12345678u;
  wsi_tile_unref (wsi_tile_cache_insert (cache, &key, argb, 64, 64));
  wsi_tile_cache_clear (cache);
  again = wsi_tile_cache_alloc_argb (cache, 64, 64);
  fail_if (again[100] == 0x12345678u, "cleared memory was kept");
  g_free (again);
  wsi_tile_cache_free (cache);
  mallopt (M_PERTURB, 0);
#endif
}

GST_END_TEST;

/* Inserts the 16x16 tile @key (value @v) and drops our reference. */
static void
band_insert (WsiTileCache * cache, WsiTileKey key, guint32 v)
{
  wsi_tile_unref (wsi_tile_cache_insert (cache, &key, tile_pixels (256, v),
          16, 16));
}

static gboolean
band_has (WsiTileCache * cache, WsiTileKey key)
{
  WsiTile *tile = wsi_tile_cache_lookup (cache, &key);

  wsi_tile_unref (tile);
  return tile != NULL;
}

/* Grid order's band: rows above it, other levels, scales and slides go at
 * once (the budget is far from full, so only keep_band evicts). */
GST_START_TEST (test_tile_cache_keep_band)
{
  WsiTileCache *cache = wsi_tile_cache_new (64 << 20);
  WsiTileKey band = { 7, 0, 2, 0, 3 };
  WsiTileKey k;
  gint64 row, col;

  for (row = 0; row < 6; row++) {
    for (col = 0; col < 4; col++) {
      WsiTileKey t = { 7, 0, 2, col, row };
      band_insert (cache, t, row);
    }
  }
  k = (WsiTileKey) { 8, 0, 2, 0, 5 };   /* another slide */
  band_insert (cache, k, 1);
  k = (WsiTileKey) { 7, 1, 2, 0, 5 };   /* another level */
  band_insert (cache, k, 1);
  k = (WsiTileKey) { 7, 0, 1, 0, 5 };   /* another scale */
  band_insert (cache, k, 1);
  fail_unless_equals_uint64 (wsi_tile_cache_bytes (cache), 27 * 256 * 4);

  wsi_tile_cache_keep_band (cache, &band);
  fail_unless_equals_uint64 (wsi_tile_cache_bytes (cache), 12 * 256 * 4);
  for (row = 0; row < 6; row++) {
    for (col = 0; col < 4; col++) {
      WsiTileKey t = { 7, 0, 2, col, row };
      fail_unless_equals_int (band_has (cache, t), row >= 3);
    }
  }
  k = (WsiTileKey) { 8, 0, 2, 0, 5 };
  fail_if (band_has (cache, k));
  k = (WsiTileKey) { 7, 1, 2, 0, 5 };
  fail_if (band_has (cache, k));

  /* The same band or one above it again: nothing to scan, nothing goes
   * (a tile inserted meanwhile above the band stays). */
  k = (WsiTileKey) { 7, 0, 2, 0, 1 };
  band_insert (cache, k, 1);
  band.row = 2;
  wsi_tile_cache_keep_band (cache, &band);
  fail_unless (band_has (cache, k));
  /* The band moves down: that tile and row 3 go. */
  band.row = 4;
  wsi_tile_cache_keep_band (cache, &band);
  fail_if (band_has (cache, k));
  fail_unless_equals_uint64 (wsi_tile_cache_bytes (cache), 8 * 256 * 4);
  /* Another slide's band: all of slide 7 goes. */
  band.slide_uid = 9;
  band.row = 0;
  wsi_tile_cache_keep_band (cache, &band);
  fail_unless_equals_uint64 (wsi_tile_cache_bytes (cache), 0);
  wsi_tile_cache_free (cache);
}

GST_END_TEST;

/* Single flight: one claim per key; others see it pending, wait for its
 * end and then find the tile (insert) or claim it themselves (abandon). */
typedef struct
{
  WsiTileCache *cache;
  WsiTileKey key;
  gint woke;                    /* atomic */
} ClaimWaiter;

static gpointer
claim_waiter (gpointer data)
{
  ClaimWaiter *w = data;

  wsi_tile_cache_wait_claim (w->cache, &w->key);
  g_atomic_int_set (&w->woke, 1);
  return NULL;
}

GST_START_TEST (test_tile_cache_single_flight)
{
  WsiTileCache *cache = wsi_tile_cache_new (64 << 20);
  WsiTileKey key = { 3, 0, 2, 5, 6 };
  ClaimWaiter w = { cache, key, 0 };
  WsiTile *tile, *again;
  GThread *thread;
  gboolean claimed;

  /* The first asker claims it (a miss); the second sees it pending. */
  fail_unless (wsi_tile_cache_lookup_or_claim (cache, &key, &claimed) == NULL);
  fail_unless (claimed);
  fail_unless (wsi_tile_cache_lookup_or_claim (cache, &key, &claimed) == NULL);
  fail_if (claimed);
  fail_unless_equals_uint64 (wsi_tile_cache_misses (cache), 1);
  fail_unless_equals_uint64 (wsi_tile_cache_hits (cache), 0);

  /* A waiter sleeps until the claim ends with the tile. */
  thread = g_thread_new ("waiter", claim_waiter, &w);
  g_usleep (50 * 1000);
  fail_if (g_atomic_int_get (&w.woke), "returned while the key was claimed");
  tile = wsi_tile_cache_insert (cache, &key, tile_pixels (256, 9), 16, 16);
  g_thread_join (thread);
  fail_unless (g_atomic_int_get (&w.woke));
  again = wsi_tile_cache_lookup_or_claim (cache, &key, &claimed);
  fail_unless (again == tile);
  fail_unless_equals_uint64 (wsi_tile_cache_hits (cache), 1);
  wsi_tile_unref (again);
  wsi_tile_unref (tile);

  /* A claim abandoned (a failed decode): the waiter wakes and the next
   * asker claims the key again. */
  key.column = 6;
  w.key = key;
  w.woke = 0;
  fail_unless (wsi_tile_cache_lookup_or_claim (cache, &key, &claimed) == NULL);
  fail_unless (claimed);
  thread = g_thread_new ("waiter", claim_waiter, &w);
  g_usleep (50 * 1000);
  fail_if (g_atomic_int_get (&w.woke));
  wsi_tile_cache_abandon (cache, &key);
  g_thread_join (thread);
  fail_unless (wsi_tile_cache_lookup_or_claim (cache, &key, &claimed) == NULL);
  fail_unless (claimed);
  wsi_tile_cache_abandon (cache, &key);
  /* Waiting on a key nobody claimed returns at once. */
  wsi_tile_cache_wait_claim (cache, &key);

  /* With a zero budget nothing is kept: every asker decodes, none waits. */
  wsi_tile_cache_set_max_bytes (cache, 0);
  key.column = 7;
  fail_unless (wsi_tile_cache_lookup_or_claim (cache, &key, &claimed) == NULL);
  fail_unless (claimed);
  fail_unless (wsi_tile_cache_lookup_or_claim (cache, &key, &claimed) == NULL);
  fail_unless (claimed);
  wsi_tile_unref (wsi_tile_cache_insert (cache, &key, tile_pixels (256, 1),
          16, 16));
  wsi_tile_cache_free (cache);
}

GST_END_TEST;

/* ---- threads ------------------------------------------------------------ */

typedef struct
{
  WsiSlide *slide;
  WsiTileCache *cache;
  Patch *patches;
  guint8 **expected;
  guint n;
  guint start;
  gboolean ok;
} ThreadJob;

static gpointer
thread_reads (gpointer data)
{
  ThreadJob *job = data;
  WsiReadContext *ctx = wsi_read_context_new ();
  guint i;

  job->ok = TRUE;
  for (i = 0; i < job->n; i++) {
    guint k = (job->start + i) % job->n;
    Patch p = job->patches[k];
    WsiReadRequest request = { p.x, p.y, p.w, p.h, 0.0, p.native_scaling,
      job->cache
    };
    WsiImage out = image_new (p.out_w, p.out_h, WSI_PIXEL_RGB);
    WsiReadReport report;

    if (!wsi_slide_read (job->slide, ctx, &request, &out, &report, NULL)
        || memcmp (out.data, job->expected[k], out.stride * out.height) != 0)
      job->ok = FALSE;
    g_free (out.data);
  }
  wsi_read_context_free (ctx);
  return NULL;
}

/* Four threads read one slide through one cache, each with its own
 * context: the same bytes as one thread alone. */
GST_START_TEST (test_threads_share_slide_and_cache)
{
  gchar *path = generic_slide ();
  WsiSlide *slide = open_slide (path, WSI_BACKEND_TIFF);
  WsiReadContext *ctx = wsi_read_context_new ();
  WsiTileCache *cache = wsi_tile_cache_new (8 << 20);
  GRand *rand = g_rand_new_with_seed (12);
  Patch patches[24];
  guint8 *expected[G_N_ELEMENTS (patches)];
  ThreadJob jobs[4];
  GThread *threads[4];
  guint i;

  for (i = 0; i < G_N_ELEMENTS (patches); i++) {
    patches[i] = random_patch (rand, slide, 256);
    if (i % 2) {
      /* Half of them DCT-scaled by 2. */
      patches[i].x &= ~1;
      patches[i].y &= ~1;
      patches[i].w = patches[i].out_w * 2;
      patches[i].h = patches[i].out_h * 2;
      patches[i].native_scaling = TRUE;
    }
    expected[i] = read_patch (slide, ctx, &patches[i], NULL);
  }
  for (i = 0; i < G_N_ELEMENTS (jobs); i++) {
    jobs[i].slide = slide;
    jobs[i].cache = cache;
    jobs[i].patches = patches;
    jobs[i].expected = expected;
    jobs[i].n = G_N_ELEMENTS (patches);
    jobs[i].start = i * 5;      /* each thread starts elsewhere */
    jobs[i].ok = FALSE;
    threads[i] = g_thread_new ("reader", thread_reads, &jobs[i]);
  }
  for (i = 0; i < G_N_ELEMENTS (jobs); i++) {
    g_thread_join (threads[i]);
    fail_unless (jobs[i].ok, "thread %u read different bytes", i);
  }
  fail_unless (wsi_tile_cache_hits (cache) > 0);
  for (i = 0; i < G_N_ELEMENTS (patches); i++)
    g_free (expected[i]);
  wsi_tile_cache_free (cache);
  g_rand_free (rand);
  wsi_read_context_free (ctx);
  wsi_slide_close (slide);
  g_free (path);
}

GST_END_TEST;

/* Threads reading a grid of GRID_SIDE px patches in grid order, all in
 * the same order from the same start (released together), so that they
 * meet on the same tiles. */
typedef struct
{
  WsiSlide *slide;
  WsiTileCache *cache;
  guint cols, rows;
  guint8 **expected;            /* NULL: the patch touches a damaged tile */
  gint *go;                     /* atomic: 1 = start */
  GMutex *lock;
  GCond *finished_cond;
  guint *finished;
  gboolean ok;
} GridJob;

#define GRID_SIDE 100
#define GRID_THREADS 4

static gpointer
grid_thread_reads (gpointer data)
{
  GridJob *job = data;
  WsiReadContext *ctx = wsi_read_context_new ();
  guint i;

  while (!g_atomic_int_get (job->go))
    g_thread_yield ();
  job->ok = TRUE;
  for (i = 0; i < job->cols * job->rows; i++) {
    WsiReadRequest request = { 0, };
    WsiImage out = image_new (GRID_SIDE, GRID_SIDE, WSI_PIXEL_RGB);
    WsiReadReport report;
    GError *error = NULL;
    gboolean read;

    request.x = (i % job->cols) * GRID_SIDE;
    request.y = (i / job->cols) * GRID_SIDE;
    request.width = request.height = GRID_SIDE;
    request.tile_cache = job->cache;
    request.grid_order = TRUE;
    read = wsi_slide_read (job->slide, ctx, &request, &out, &report, &error);
    if (job->expected[i] == NULL) {
      if (read || !g_error_matches (error, WSI_SLIDE_ERROR,
              WSI_SLIDE_ERROR_READ)
          || !g_str_has_prefix (error->message, job->slide->path))
        job->ok = FALSE;
    } else if (!read
        || memcmp (out.data, job->expected[i], out.stride * out.height) != 0) {
      job->ok = FALSE;
    }
    g_clear_error (&error);
    g_free (out.data);
  }
  wsi_read_context_free (ctx);
  g_mutex_lock (job->lock);
  (*job->finished)++;
  g_cond_signal (job->finished_cond);
  g_mutex_unlock (job->lock);
  return NULL;
}

/* GRID_THREADS threads read the cols x rows grid of @slide through @cache;
 * fails unless all finish within a minute (a claim never ended would
 * leave its waiters asleep: give up rather than hang the suite) and every
 * read is as @expected. */
static void
run_grid_threads (WsiSlide * slide, WsiTileCache * cache, guint cols,
    guint rows, guint8 ** expected)
{
  GridJob jobs[GRID_THREADS];
  GThread *threads[GRID_THREADS];
  GMutex lock;
  GCond finished_cond;
  guint finished = 0, done, i;
  gint64 deadline;
  gint go = 0;

  g_mutex_init (&lock);
  g_cond_init (&finished_cond);
  for (i = 0; i < GRID_THREADS; i++) {
    jobs[i] = (GridJob) {
    slide, cache, cols, rows, expected, &go, &lock, &finished_cond,
          &finished, FALSE};
    threads[i] = g_thread_new ("grid", grid_thread_reads, &jobs[i]);
  }
  g_atomic_int_set (&go, 1);
  deadline = g_get_monotonic_time () + 60 * G_TIME_SPAN_SECOND;
  g_mutex_lock (&lock);
  while (finished < GRID_THREADS
      && g_cond_wait_until (&finished_cond, &lock, deadline));
  done = finished;
  g_mutex_unlock (&lock);
  fail_unless (done == GRID_THREADS,
      "only %u of %u reader threads finished: a tile claim was never ended",
      done, (guint) GRID_THREADS);
  for (i = 0; i < GRID_THREADS; i++) {
    g_thread_join (threads[i]);
    fail_unless (jobs[i].ok, "thread %u: a read differs from a read alone", i);
  }
  g_mutex_clear (&lock);
  g_cond_clear (&finished_cond);
}

/* Threads reading neighbouring grid patches at once: each tile is decoded
 * once, whichever thread gets to it first, and every read has the bytes
 * of a read alone. Without the single flight nearly every tile would be
 * decoded by several threads. */
GST_START_TEST (test_threads_grid_decode_each_tile_once)
{
  const guint cols = 11, rows = 4;
  gchar *path = aperio_slide ();
  WsiSlide *slide = open_slide (path, WSI_BACKEND_TIFF);
  WsiReadContext *ctx = wsi_read_context_new ();
  WsiTileCache *cache = wsi_tile_cache_new (64 << 20);
  guint8 *expected[11 * 4];
  guint i;

  /* 100 px patches over 240 px tiles: none covers a tile whole, all of
   * them lie in tile rows 0-1 (no band moves, nothing is evicted):
   * 5 x 2 tiles. */
  for (i = 0; i < cols * rows; i++) {
    Patch p = patch_1to1 ((i % cols) * GRID_SIDE, (i / cols) * GRID_SIDE,
        GRID_SIDE, GRID_SIDE);
    expected[i] = read_patch (slide, ctx, &p, NULL);
  }
  run_grid_threads (slide, cache, cols, rows, expected);
  fail_unless_equals_uint64 (wsi_tile_cache_misses (cache), 5 * 2);
  for (i = 0; i < cols * rows; i++)
    g_free (expected[i]);
  wsi_tile_cache_free (cache);
  wsi_read_context_free (ctx);
  wsi_slide_close (slide);
  g_free (path);
}

GST_END_TEST;

/* Grid order over damaged tiles: a reader whose decode fails ends its
 * claim (wsi_tile_cache_abandon), so the threads waiting for that tile
 * wake and fail their own reads instead of sleeping for ever. Every read
 * touching a damaged tile fails naming the file, every other read has the
 * bytes of a read alone, and all threads finish. */
GST_START_TEST (test_threads_grid_damaged_tiles_end_claims)
{
  const guint cols = 10, rows = 7;
  WsiTestSlideSpec spec = slide_spec (WSI_TEST_LAYOUT_APERIO, 1024, 768,
      256, 2, 4, 0.25);
  gchar *path = test_path ("grid-damaged.svs");
  WsiReadContext *ctx = wsi_read_context_new ();
  WsiTileCache *cache = wsi_tile_cache_new (64 << 20);
  guint8 *expected[10 * 7];
  GError *error = NULL;
  WsiSlide *slide;
  guint failing = 0, i;

  /* Tiles 0, 3, 6, 9 of the 4x3 grid of 256 px tiles are damaged; the
   * 100 px patches touching one are known from the geometry alone. */
  fail_unless (wsi_test_slide_write_partly_damaged (path, &spec, 3, &error),
      "%s", error ? error->message : "?");
  slide = open_slide (path, WSI_BACKEND_TIFF);
  for (i = 0; i < cols * rows; i++) {
    gint64 x = (i % cols) * GRID_SIDE, y = (i / cols) * GRID_SIDE;
    Patch p = patch_1to1 (x, y, GRID_SIDE, GRID_SIDE);
    gboolean damaged = FALSE;
    gint64 col, row;

    for (row = y / 256; row <= (y + GRID_SIDE - 1) / 256; row++)
      for (col = x / 256; col <= (x + GRID_SIDE - 1) / 256; col++)
        if ((row * 4 + col) % 3 == 0)
          damaged = TRUE;
    if (damaged) {
      read_patch_fails (slide, ctx, &p);
      expected[i] = NULL;
      failing++;
    } else {
      expected[i] = read_patch (slide, ctx, &p, NULL);
    }
  }
  fail_unless (failing > 0 && failing < cols * rows);
  run_grid_threads (slide, cache, cols, rows, expected);
  /* the good tiles stayed cached */
  fail_unless (wsi_tile_cache_bytes (cache) > 0);
  for (i = 0; i < cols * rows; i++)
    g_free (expected[i]);
  wsi_tile_cache_free (cache);
  wsi_read_context_free (ctx);
  wsi_slide_close (slide);
  g_free (path);
}

GST_END_TEST;

/* ---- damaged and truncated files ---------------------------------------- */

GST_START_TEST (test_damaged_tiles_fail_reads)
{
  /* Downsamples 1 and 4: a 2x reduction stays on (damaged) level 0. */
  WsiTestSlideSpec spec = slide_spec (WSI_TEST_LAYOUT_GENERIC, 1024, 768,
      256, 2, 4, 0.25);
  gchar *path = test_path ("damaged.tiff");
  WsiReadContext *ctx = wsi_read_context_new ();
  WsiTileCache *cache = wsi_tile_cache_new (16 << 20);
  WsiSlide *slide;
  Patch p = patch_1to1 (300, 200, 128, 128);
  Patch overview = patch_1to1 (0, 0, 1024, 768);
  guint32 argb[64 * 64];
  GError *error = NULL;
  guint8 *pixels;

  fail_unless (wsi_test_slide_write_damaged_tiles (path, &spec, &error), "%s",
      error ? error->message : "?");
  slide = open_slide (path, WSI_BACKEND_TIFF);
  read_patch_fails (slide, ctx, &p);
  p.native_scaling = TRUE;
  p.w = p.h = 256;
  read_patch_fails (slide, ctx, &p);
  p.cache = cache;
  read_patch_fails (slide, ctx, &p);
  fail_unless_equals_uint64 (wsi_tile_cache_bytes (cache), 0);

  fail_if (wsi_slide_read_region (slide, ctx, argb, 0, 0, 0, 64, 64,
          &error));
  fail_unless (g_error_matches (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ));
  fail_unless (strstr (error->message, path) != NULL, "%s", error->message);
  g_clear_error (&error);

  /* No sticky state: the overview level still reads, repeatedly. */
  overview.out_w = 256;
  overview.out_h = 192;
  pixels = read_patch (slide, ctx, &overview, NULL);
  g_free (pixels);
  read_patch_fails (slide, ctx, &p);
  pixels = read_patch (slide, ctx, &overview, NULL);
  g_free (pixels);

  wsi_slide_close (slide);
  wsi_tile_cache_free (cache);
  wsi_read_context_free (ctx);
  g_free (path);
}

GST_END_TEST;

/* Damaged tiles here and there: patches on good tiles read, the ones
 * touching a damaged tile fail, in any order. */
GST_START_TEST (test_partly_damaged_tiles)
{
  WsiTestSlideSpec spec = slide_spec (WSI_TEST_LAYOUT_APERIO, 1024, 768,
      256, 2, 4, 0.25);
  gchar *path = test_path ("partly-damaged.svs");
  WsiReadContext *ctx = wsi_read_context_new ();
  GError *error = NULL;
  WsiSlide *slide;
  guint tile;

  /* Tiles 0, 3, 6, 9 of the 4x3 grid are damaged. */
  fail_unless (wsi_test_slide_write_partly_damaged (path, &spec, 3, &error),
      "%s", error ? error->message : "?");
  slide = open_slide (path, WSI_BACKEND_TIFF);
  for (tile = 0; tile < 12; tile++) {
    Patch p = patch_1to1 ((tile % 4) * 256 + 64, (tile / 4) * 256 + 64, 128,
        128);
    if (tile % 3 == 0) {
      read_patch_fails (slide, ctx, &p);
    } else {
      g_free (read_patch (slide, ctx, &p, NULL));
    }
  }
  wsi_slide_close (slide);
  wsi_read_context_free (ctx);
  g_free (path);
}

GST_END_TEST;

/* Reads every tile-sized block of every level; each read succeeds or fails
 * with a READ error naming the file. Returns the failures. */
static guint
read_everything (WsiSlide * slide, WsiReadContext * ctx)
{
  guint failures = 0;
  gint level;

  for (level = 0; level < slide->level_count; level++) {
    gint64 x, y, w = slide->level_width[level], h = slide->level_height[level];
    gdouble ds = slide->level_downsample[level];

    for (y = 0; y < h; y += 200) {
      for (x = 0; x < w; x += 200) {
        guint32 *argb = g_new (guint32, 200 * 200);
        GError *error = NULL;

        if (!wsi_slide_read_region (slide, ctx, argb, (gint64) (x * ds),
                (gint64) (y * ds), level, 200, 200, &error)) {
          fail_unless (g_error_matches (error, WSI_SLIDE_ERROR,
                  WSI_SLIDE_ERROR_READ), "%s", error->message);
          fail_unless (g_str_has_prefix (error->message, slide->path), "%s",
              error->message);
          g_error_free (error);
          failures++;
        }
        g_free (argb);
      }
    }
  }
  return failures;
}

GST_START_TEST (test_truncated_files_fail_cleanly)
{
  static const gdouble keep[] = { 0.0, 0.01, 0.2, 0.5, 0.8, 0.97 };
  WsiTestSlideSpec spec = slide_spec (WSI_TEST_LAYOUT_APERIO, 1024, 768,
      256, 3, 2, 0.25);
  WsiReadContext *ctx = wsi_read_context_new ();
  guint i;

  for (i = 0; i < G_N_ELEMENTS (keep); i++) {
    gchar *path = test_path ("truncated.svs");
    GError *error = NULL;
    WsiSlide *slide;

    fail_unless (wsi_test_slide_write_truncated (path, &spec, keep[i],
            &error), "%s", error ? error->message : "?");
    slide = wsi_slide_open (path, WSI_BACKEND_TIFF, &error);
    if (slide == NULL) {
      fail_unless (error != NULL && g_str_has_prefix (error->message, path));
      GST_INFO ("keep %.2f: open failed: %s", keep[i], error->message);
      g_clear_error (&error);
    } else {
      GST_INFO ("keep %.2f: %d levels, %u failed reads", keep[i],
          slide->level_count, read_everything (slide, ctx));
      wsi_slide_close (slide);
    }
    g_unlink (path);
    g_free (path);
  }
  wsi_read_context_free (ctx);
}

GST_END_TEST;

/* The file shrinks after open: the tiles past the new end fail, the ones
 * before still read. */
GST_START_TEST (test_truncated_after_open)
{
  WsiTestSlideSpec spec = slide_spec (WSI_TEST_LAYOUT_GENERIC, 1024, 768,
      256, 2, 2, 0.25);
  gchar *path = write_slide ("shrinks.tiff", &spec);
  WsiSlide *slide = open_slide (path, WSI_BACKEND_TIFF);
  WsiReadContext *ctx = wsi_read_context_new ();
  Patch first_tile = patch_1to1 (0, 0, 64, 64);
  GStatBuf st;

  fail_unless (g_stat (path, &st) == 0);
  /* Level 0's tiles come first in the file: keep about half of them. */
  fail_unless (truncate (path, st.st_size / 4) == 0);
  fail_unless (read_everything (slide, ctx) > 0);
  g_free (read_patch (slide, ctx, &first_tile, NULL));
  wsi_read_context_free (ctx);
  wsi_slide_close (slide);
  g_free (path);
}

GST_END_TEST;

/* Random bytes flipped inside the tile data: reads succeed or fail, never
 * crash or touch memory they should not (run under valgrind). */
GST_START_TEST (test_corrupted_tile_data)
{
  WsiTestSlideSpec spec = slide_spec (WSI_TEST_LAYOUT_GENERIC, 512, 512,
      128, 2, 2, 0.25);
  gchar *clean = write_slide ("clean.tiff", &spec);
  gchar *path = test_path ("corrupted.tiff");
  WsiReadContext *ctx = wsi_read_context_new ();
  GRand *rand = g_rand_new_with_seed (13);
  gchar *bytes;
  gsize size;
  guint round, total_failures = 0;

  fail_unless (g_file_get_contents (clean, &bytes, &size, NULL));
  for (round = 0; round < 12; round++) {
    gchar *copy = g_memdup2 (bytes, size);
    WsiSlide *slide;
    guint i;

    /* Only the first half: tile data, not the directories at the end. */
    for (i = 0; i < 1 + round * 3; i++)
      copy[g_rand_int_range (rand, 8, size / 2)] = g_rand_int (rand);
    fail_unless (g_file_set_contents (path, copy, size, NULL));
    slide = wsi_slide_open (path, WSI_BACKEND_TIFF, NULL);
    if (slide != NULL) {
      total_failures += read_everything (slide, ctx);
      wsi_slide_close (slide);
    }
    g_free (copy);
  }
  GST_INFO ("%u reads of corrupted tiles failed", total_failures);
  g_free (bytes);
  g_rand_free (rand);
  wsi_read_context_free (ctx);
  g_free (path);
  g_free (clean);
}

GST_END_TEST;

static Suite *
wsislide_suite (void)
{
  Suite *s = suite_create ("wsislide");
  TCase *tc = tcase_create ("tiff-backend");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 600);
  tcase_add_test (tc, test_tile_cache_api);
  tcase_add_test (tc, test_tile_cache_recycles_pixels);
  tcase_add_test (tc, test_tile_cache_keep_band);
  tcase_add_test (tc, test_tile_cache_single_flight);
#ifdef WSI_HAVE_TIFF
#ifdef WSI_HAVE_OPENSLIDE
  tcase_add_test (tc, test_geometry_matches_openslide);
  tcase_add_test (tc, test_geometry_placeholder_resolution);
  tcase_add_test (tc, test_geometry_real_cmu);
  tcase_add_test (tc, test_declines_real_slides);
  tcase_add_test (tc, test_declines_other_layouts);
  tcase_add_test (tc, test_level0_pixels_identical);
  tcase_add_test (tc, test_level0_pixels_identical_rgb_jpeg);
  tcase_add_test (tc, test_level0_pixels_identical_samplings);
  tcase_add_test (tc, test_scaled_crop_identical);
  tcase_add_test (tc, test_level0_pixels_identical_real_cmu);
  tcase_add_test (tc, test_read_region_argb_identical);
  tcase_add_test (tc, test_read_region_scaled);
  tcase_add_test (tc, test_read_region_scaled_rgb);
  tcase_add_test (tc, test_levels_close_to_openslide);
  tcase_add_test (tc, test_generated_levels_derive_from_level0);
#endif
  tcase_add_test (tc, test_native_scaling_close);
  tcase_add_test (tc, test_native_scaling_near_whole);
  tcase_add_test (tc, test_tile_cache_same_bytes_and_hits);
  tcase_add_test (tc, test_tile_cache_small_budget);
  tcase_add_test (tc, test_threads_share_slide_and_cache);
  tcase_add_test (tc, test_threads_grid_decode_each_tile_once);
  tcase_add_test (tc, test_threads_grid_damaged_tiles_end_claims);
  tcase_add_test (tc, test_damaged_tiles_fail_reads);
  tcase_add_test (tc, test_partly_damaged_tiles);
  tcase_add_test (tc, test_truncated_files_fail_cleanly);
  tcase_add_test (tc, test_truncated_after_open);
  tcase_add_test (tc, test_corrupted_tile_data);
#endif
  return s;
}

GST_CHECK_MAIN (wsislide);
