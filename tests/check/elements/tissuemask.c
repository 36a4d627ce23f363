/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit tests for tissuemask. Overviews are painted here: a noisy white
 * glass background with a pink ellipse of known area, plus specks and
 * holes where a test needs them; for fluorescence, a noisy black
 * background with bright blue (DAPI-like) discs and nuclei. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/wsi/wsievent.h>
#include <gst/wsi/wsirecord.h>
#include "wsitestutil.h"

#define OV_W 400
#define OV_H 300

static const guint8 PINK[3] = { 210, 120, 175 };
static const guint8 WHITE[3] = { 246, 245, 247 };
/* Fluorescence: a black background with a faint blue cast (noise makes its
 * brightness 2-16) and bright DAPI-blue stain. */
static const guint8 BLACK[3] = { 6, 5, 12 };
static const guint8 DAPI[3] = { 20, 40, 230 };

typedef struct
{
  guint8 *rgb;
  gint width;
  gint height;
  guint tissue_pixels;          /* pixels painted pink */
} Overview;

/* Deterministic small noise (+-4), like JPEG noise on glass. */
static guint8
noisy (guint8 value, guint32 * state)
{
  gint v;

  *state = *state * 1664525u + 1013904223u;
  v = (gint) value + (gint) ((*state >> 24) % 9) - 4;
  return (guint8) CLAMP (v, 0, 255);
}

static void
paint_pixel (Overview * ov, gint x, gint y, const guint8 color[3],
    guint32 * noise)
{
  guint8 *p = ov->rgb + ((gsize) y * ov->width + x) * 3;

  p[0] = noisy (color[0], noise);
  p[1] = noisy (color[1], noise);
  p[2] = noisy (color[2], noise);
}

static Overview
overview_new_blank (gint width, gint height)
{
  Overview ov = { NULL, width, height, 0 };
  guint32 noise = 12345;

  ov.rgb = g_malloc ((gsize) width * height * 3);
  for (gint y = 0; y < height; y++)
    for (gint x = 0; x < width; x++)
      paint_pixel (&ov, x, y, WHITE, &noise);
  return ov;
}

static gboolean
pixel_is_pink (Overview * ov, gint x, gint y)
{
  const guint8 *p = ov->rgb + ((gsize) y * ov->width + x) * 3;

  return p[1] < 200;
}

static void
overview_recount (Overview * ov)
{
  ov->tissue_pixels = 0;
  for (gint y = 0; y < ov->height; y++)
    for (gint x = 0; x < ov->width; x++)
      ov->tissue_pixels += pixel_is_pink (ov, x, y);
}

static void
paint_ellipse (Overview * ov, gdouble cx, gdouble cy, gdouble a, gdouble b)
{
  guint32 noise = 777;

  for (gint y = 0; y < ov->height; y++) {
    for (gint x = 0; x < ov->width; x++) {
      gdouble dx = (x - cx) / a, dy = (y - cy) / b;
      if (dx * dx + dy * dy <= 1.0)
        paint_pixel (ov, x, y, PINK, &noise);
    }
  }
  overview_recount (ov);
}

static void
paint_rect (Overview * ov, gint x0, gint y0, gint w, gint h,
    const guint8 color[3])
{
  guint32 noise = 4242;

  for (gint y = y0; y < y0 + h; y++)
    for (gint x = x0; x < x0 + w; x++)
      paint_pixel (ov, x, y, color, &noise);
  overview_recount (ov);
}

/* The standard scene: an ellipse covering about 31 % of the overview. */
static Overview
overview_new_ellipse (void)
{
  Overview ov = overview_new_blank (OV_W, OV_H);

  paint_ellipse (&ov, 180, 150, 140, 85);
  return ov;
}

static gdouble
overview_tissue_share (const Overview * ov)
{
  return (gdouble) ov->tissue_pixels / ((gdouble) ov->width * ov->height);
}

/* A slide buffer as wsislidesrc pushes it: the overview (or nothing when
 * @ov is NULL) and a WsiSlideMeta, for a slide whose level 0 is
 * @slide_width x @slide_height. */
static GstBuffer *
slide_buffer_new_sized (const gchar * path, const Overview * ov, gint width,
    gint height, gint64 slide_width, gint64 slide_height)
{
  GstBuffer *buffer;
  GstStructure *meta;

  if (ov != NULL)
    buffer = gst_buffer_new_memdup (ov->rgb, (gsize) width * height * 3);
  else
    buffer = gst_buffer_new ();
  meta = wsi_slide_meta_add (buffer);
  gst_structure_set (meta, "path", G_TYPE_STRING, path,
      "index", G_TYPE_UINT, 0, "cycle", G_TYPE_UINT, 0,
      "label", G_TYPE_STRING, "", "vendor", G_TYPE_STRING, "generic-tiff",
      "width", G_TYPE_INT64, slide_width,
      "height", G_TYPE_INT64, slide_height,
      "overview-width", G_TYPE_INT, width,
      "overview-height", G_TYPE_INT, height,
      "has-overview", G_TYPE_BOOLEAN, ov != NULL,
      "has-mask", G_TYPE_BOOLEAN, FALSE,
      "tissue-fraction", G_TYPE_DOUBLE, -1.0,
      "tissue-rejected", G_TYPE_BOOLEAN, FALSE, NULL);
  return buffer;
}

/* A slide no larger than its overview (its level 0), so that the kernels
 * apply in overview pixels as given (kernel-reference-size). */
static GstBuffer *
slide_buffer_new (const gchar * path, const Overview * ov, gint width,
    gint height)
{
  return slide_buffer_new_sized (path, ov, width, height, width, height);
}

static GstHarness *
harness_new (void)
{
  GstHarness *h = gst_harness_new ("tissuemask");

  gst_harness_set_src_caps_str (h, WSI_SLIDE_MEDIA_TYPE);
  return h;
}

/* Pushes a slide and returns what came out. */
static GstBuffer *
push_slide (GstHarness * h, const gchar * path, const Overview * ov)
{
  GstBuffer *in = slide_buffer_new (path, ov, OV_W, OV_H);

  fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
  return gst_harness_pull (h);
}

static gboolean
meta_boolean (GstBuffer * buffer, const gchar * field)
{
  gboolean value = FALSE;

  fail_unless (gst_structure_get_boolean (wsi_slide_meta_get (buffer), field,
          &value));
  return value;
}

static gdouble
meta_fraction (GstBuffer * buffer)
{
  gdouble value = -2.0;

  fail_unless (gst_structure_get_double (wsi_slide_meta_get (buffer),
          "tissue-fraction", &value));
  return value;
}

/* Copies the mask (the last width*height bytes) out of a slide buffer. */
static guint8 *
extract_mask (GstBuffer * buffer)
{
  gsize size = gst_buffer_get_size (buffer);
  gsize mask_size = (gsize) OV_W * OV_H;
  guint8 *mask = g_malloc (mask_size);

  fail_unless (size >= mask_size);
  fail_unless_equals_int (gst_buffer_extract (buffer, size - mask_size, mask,
          mask_size), mask_size);
  return mask;
}

/* Share of mask bytes that are 255; every byte must be 0 or 255. */
static gdouble
mask_share (const guint8 * mask)
{
  guint tissue = 0;
  gsize bad = G_MAXSIZE;

  /* One assertion, not one per pixel (check's bookkeeping is slow). */
  for (gsize i = 0; i < (gsize) OV_W * OV_H; i++) {
    if (mask[i] != 0 && mask[i] != 255 && bad == G_MAXSIZE)
      bad = i;
    tissue += mask[i] == 255;
  }
  fail_unless (bad == G_MAXSIZE, "mask byte %u at %" G_GSIZE_FORMAT,
      bad == G_MAXSIZE ? 0 : mask[bad], bad);
  return (gdouble) tissue / (OV_W * OV_H);
}

#define MASK_AT(mask, x, y) ((mask)[(y) * OV_W + (x)])

/* Checks the common shape of an output buffer and returns its mask. */
static guint8 *
check_masked_slide (GstBuffer * out, const Overview * ov)
{
  guint8 *mask = extract_mask (out);

  fail_unless (meta_boolean (out, "has-mask"));
  if (ov != NULL) {
    fail_unless_equals_int (gst_buffer_get_size (out),
        (gsize) OV_W * OV_H * 4);
    fail_unless (gst_buffer_memcmp (out, 0, ov->rgb,
            (gsize) OV_W * OV_H * 3) == 0, "overview pixels were altered");
  }
  fail_unless (G_APPROX_VALUE (meta_fraction (out), mask_share (mask), 1e-9));
  return mask;
}

static void
check_ellipse_with_method (const gchar * method)
{
  GstHarness *h = harness_new ();
  Overview ov = overview_new_ellipse ();
  GstBuffer *out;
  guint8 *mask;
  gdouble expected = overview_tissue_share (&ov);

  gst_util_set_object_arg (G_OBJECT (h->element), "method", method);
  out = push_slide (h, "/slides/ellipse.tiff", &ov);
  mask = check_masked_slide (out, &ov);

  fail_unless (fabs (mask_share (mask) - expected) < 0.01,
      "%s: mask share %f, ellipse share %f", method, mask_share (mask),
      expected);
  fail_unless_equals_int (MASK_AT (mask, 180, 150), 255);
  fail_unless_equals_int (MASK_AT (mask, 5, 5), 0);
  fail_unless_equals_int (MASK_AT (mask, 390, 290), 0);
  fail_if (meta_boolean (out, "tissue-rejected"));

  g_free (mask);
  g_free (ov.rgb);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_START_TEST (test_ellipse_otsu)
{
  check_ellipse_with_method ("otsu");
}

GST_END_TEST;

GST_START_TEST (test_ellipse_hsv)
{
  check_ellipse_with_method ("hsv");
}

GST_END_TEST;

GST_START_TEST (test_ellipse_clam)
{
  check_ellipse_with_method ("clam");
}

GST_END_TEST;

GST_START_TEST (test_method_none_is_all_tissue)
{
  GstHarness *h = harness_new ();
  Overview ov = overview_new_blank (OV_W, OV_H);
  GstBuffer *out;
  guint8 *mask;

  gst_util_set_object_arg (G_OBJECT (h->element), "method", "none");
  out = push_slide (h, "/slides/none.tiff", &ov);
  mask = check_masked_slide (out, &ov);
  fail_unless_equals_float (mask_share (mask), 1.0);
  fail_unless_equals_float (meta_fraction (out), 1.0);
  fail_if (meta_boolean (out, "tissue-rejected"));

  g_free (mask);
  g_free (ov.rgb);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Pops the next warning posted on @bus and returns its message text. */
static gchar *
pop_warning_text (GstBus * bus)
{
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  GError *err = NULL;
  gchar *text;

  fail_unless (msg != NULL, "no warning was posted");
  gst_message_parse_warning (msg, &err, NULL);
  text = g_strdup (err->message);
  g_error_free (err);
  gst_message_unref (msg);
  return text;
}

GST_START_TEST (test_blank_slide_rejected)
{
  const gchar *methods[] = { "otsu", "hsv", "clam" };

  for (guint i = 0; i < G_N_ELEMENTS (methods); i++) {
    GstHarness *h = harness_new ();
    GstBus *bus = gst_bus_new ();
    Overview ov = overview_new_blank (OV_W, OV_H);
    GstBuffer *out;
    guint8 *mask;
    gchar *text;

    gst_element_set_bus (h->element, bus);
    gst_util_set_object_arg (G_OBJECT (h->element), "method", methods[i]);
    out = push_slide (h, "/slides/blank glass.svs", &ov);
    mask = check_masked_slide (out, &ov);

    fail_unless (mask_share (mask) < 0.001, "%s called %f of glass tissue",
        methods[i], mask_share (mask));
    fail_unless (meta_boolean (out, "tissue-rejected"));
    text = pop_warning_text (bus);
    fail_unless (strstr (text, "/slides/blank glass.svs") != NULL,
        "warning does not name the slide: %s", text);

    g_free (text);
    g_free (mask);
    g_free (ov.rgb);
    gst_buffer_unref (out);
    gst_element_set_bus (h->element, NULL);
    gst_object_unref (bus);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

GST_START_TEST (test_min_tissue_fraction)
{
  GstHarness *h = harness_new ();
  Overview ov = overview_new_ellipse ();
  GstBuffer *out;

  /* The ellipse covers about 31 %: 0.5 rejects it, 0.2 keeps it. */
  g_object_set (h->element, "min-tissue-fraction", 0.5, NULL);
  out = push_slide (h, "/slides/a.tiff", &ov);
  fail_unless (meta_boolean (out, "tissue-rejected"));
  gst_buffer_unref (out);

  g_object_set (h->element, "min-tissue-fraction", 0.2, NULL);
  out = push_slide (h, "/slides/a.tiff", &ov);
  fail_if (meta_boolean (out, "tissue-rejected"));
  gst_buffer_unref (out);

  g_free (ov.rgb);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_clam_drops_specks_fills_holes)
{
  Overview ov = overview_new_ellipse ();
  const gchar *methods[] = { "hsv", "clam" };
  /* Both thresholds: 0.002 * 400 * 300 = 240 pixels. */
  const gdouble min_area = 0.002;

  paint_rect (&ov, 350, 20, 12, 12, PINK);      /* speck, 144 px */
  paint_rect (&ov, 120, 140, 10, 10, WHITE);    /* small hole, 100 px */
  paint_rect (&ov, 200, 130, 30, 30, WHITE);    /* large hole, 900 px */

  for (guint i = 0; i < G_N_ELEMENTS (methods); i++) {
    GstHarness *h = harness_new ();
    gboolean clam = i == 1;
    GstBuffer *out;
    guint8 *mask;

    gst_util_set_object_arg (G_OBJECT (h->element), "method", methods[i]);
    g_object_set (h->element, "min-component-area", min_area,
        "min-hole-area", min_area, NULL);
    out = push_slide (h, "/slides/speck.tiff", &ov);
    mask = check_masked_slide (out, &ov);

    /* hsv keeps what it sees; clam cleans up. */
    fail_unless_equals_int (MASK_AT (mask, 356, 26), clam ? 0 : 255);
    fail_unless_equals_int (MASK_AT (mask, 125, 145), clam ? 255 : 0);
    fail_unless_equals_int (MASK_AT (mask, 215, 145), 0);
    fail_unless_equals_int (MASK_AT (mask, 180, 100), 255);

    g_free (mask);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
  g_free (ov.rgb);
}

GST_END_TEST;

/* Sends wsislidesrc's query; returns whether it was answered TRUE and
 * checks that a TRUE answer carries cached=TRUE. */
static gboolean
query_mask_cached (GstHarness * h, const gchar * path)
{
  GstQuery *query = wsi_query_new_mask_cached (path);
  gboolean answered = gst_pad_peer_query (h->srcpad, query);
  gboolean cached = FALSE;

  fail_unless (wsi_query_parse_mask_cached (query, NULL, &cached, NULL));
  fail_unless_equals_int (answered, cached);
  gst_query_unref (query);
  return answered;
}

static guint64
counter (GstHarness * h, const gchar * name)
{
  guint64 value = G_MAXUINT64;

  g_object_get (h->element, name, &value, NULL);
  return value;
}

/* Pushes @path again without an overview and fails unless the mask comes
 * back from the cache, byte for byte @mask, as its first hit. */
static void
assert_served_from_cache (GstHarness * h, const gchar * path,
    const guint8 * mask)
{
  GstBuffer *out = push_slide (h, path, NULL);
  guint8 *again = check_masked_slide (out, NULL);

  fail_unless (memcmp (mask, again, OV_W * OV_H) == 0);
  fail_unless_equals_uint64 (counter (h, "cache-hits"), 1);
  g_free (again);
  gst_buffer_unref (out);
}

GST_START_TEST (test_cache_hit_without_overview)
{
  GstHarness *h = harness_new ();
  Overview ov = overview_new_ellipse ();
  GstBuffer *out1, *out2, *out3;
  guint8 *mask1, *mask2, *mask3;
  GstMapInfo map;

  fail_if (query_mask_cached (h, "/slides/a.tiff"));
  out1 = push_slide (h, "/slides/a.tiff", &ov);
  mask1 = check_masked_slide (out1, &ov);
  fail_unless_equals_uint64 (counter (h, "masks-computed"), 1);
  fail_unless_equals_uint64 (counter (h, "cache-hits"), 0);

  fail_unless (query_mask_cached (h, "/slides/a.tiff"));
  fail_if (query_mask_cached (h, "/slides/b.tiff"));

  /* Downstream scribbling on its mask must not reach the cache. */
  fail_unless (gst_buffer_map_range (out1, 1, 1, &map, GST_MAP_WRITE));
  memset (map.data, 0x55, map.size);
  gst_buffer_unmap (out1, &map);

  out2 = push_slide (h, "/slides/a.tiff", NULL);
  fail_unless_equals_int (gst_buffer_get_size (out2), OV_W * OV_H);
  mask2 = check_masked_slide (out2, NULL);
  fail_unless (memcmp (mask1, mask2, OV_W * OV_H) == 0);
  fail_unless_equals_float (meta_fraction (out2), meta_fraction (out1));
  fail_if (meta_boolean (out2, "tissue-rejected"));
  fail_unless_equals_uint64 (counter (h, "masks-computed"), 1);
  fail_unless_equals_uint64 (counter (h, "cache-hits"), 1);

  /* With an overview again: still served from the cache. */
  out3 = push_slide (h, "/slides/a.tiff", &ov);
  mask3 = check_masked_slide (out3, &ov);
  fail_unless (memcmp (mask1, mask3, OV_W * OV_H) == 0);
  fail_unless_equals_uint64 (counter (h, "masks-computed"), 1);
  fail_unless_equals_uint64 (counter (h, "cache-hits"), 2);

  g_free (mask1);
  g_free (mask2);
  g_free (mask3);
  g_free (ov.rgb);
  gst_buffer_unref (out1);
  gst_buffer_unref (out2);
  gst_buffer_unref (out3);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Masks are cached run-length coded, or raw when coding gains nothing: a
 * checkerboard of tissue pixels (a run per pixel) must come back from the
 * cache byte for byte, as the ellipse does above. */
GST_START_TEST (test_cache_keeps_speckled_mask)
{
  GstHarness *h = harness_new ();
  Overview ov = overview_new_blank (OV_W, OV_H);
  guint32 noise = 99;
  GstBuffer *out1;
  guint8 *mask1;
  guint changes = 0;

  for (gint y = 0; y < OV_H; y++)
    for (gint x = (y & 1); x < OV_W; x += 2)
      paint_pixel (&ov, x, y, PINK, &noise);
  overview_recount (&ov);
  out1 = push_slide (h, "/slides/speckled.tiff", &ov);
  mask1 = check_masked_slide (out1, &ov);
  for (gsize i = 1; i < (gsize) OV_W * OV_H; i++)
    changes += mask1[i] != mask1[i - 1];
  fail_unless (changes > OV_W * OV_H / 2, "the mask is not speckled: %u "
      "changes", changes);

  assert_served_from_cache (h, "/slides/speckled.tiff", mask1);

  g_free (mask1);
  g_free (ov.rgb);
  gst_buffer_unref (out1);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Runs of every length class (1 to 127 pixels, 128 and more, and one of
 * 40,000: one, two and three bytes of run length) come back from the
 * cache byte for byte, and the coding takes at most two bytes a run for
 * runs under 16,384 pixels (issue 23: real H&E masks at 1024 px have tens
 * of thousands of short runs; the old coding took five bytes each). */
GST_START_TEST (test_cache_codes_runs_compactly)
{
  GstHarness *h = harness_new ();
  Overview ov = overview_new_blank (OV_W, OV_H);
  guint32 noise = 7;
  GstBuffer *out1;
  guint8 *mask1;
  guint runs = 1, short_runs = 0, long_runs = 0, run = 1;
  gint x, y, length = 1;

  /* Rows 0-99: tissue stripes 1, 2, 3 ... pixels long, one pixel apart;
   * rows 150-249: all tissue (one run of 40,000 pixels). */
  for (y = 0; y < 100; y++)
    for (x = 0; x < OV_W; x += length + 1, length = length % 300 + 1)
      for (gint i = x; i < MIN (x + length, OV_W); i++)
        paint_pixel (&ov, i, y, PINK, &noise);
  for (y = 150; y < 250; y++)
    for (x = 0; x < OV_W; x++)
      paint_pixel (&ov, x, y, PINK, &noise);
  overview_recount (&ov);
  out1 = push_slide (h, "/slides/runs.tiff", &ov);
  mask1 = check_masked_slide (out1, &ov);
  for (gsize i = 1; i <= (gsize) OV_W * OV_H; i++) {
    if (i < (gsize) OV_W * OV_H && mask1[i] == mask1[i - 1]) {
      run++;
      continue;
    }
    short_runs += run < 128;
    long_runs += run >= 16384;
    runs += i < (gsize) OV_W * OV_H;
    run = 1;
  }
  fail_unless (runs > 300 && short_runs > 100 && long_runs > 0,
      "%u runs, %u under 128 pixels, %u of 16384 or more", runs, short_runs,
      long_runs);
  fail_unless (counter (h, "mask-cache-bytes") <= 2 * runs + 2,
      "%" G_GUINT64_FORMAT " bytes for %u runs",
      counter (h, "mask-cache-bytes"), runs);

  assert_served_from_cache (h, "/slides/runs.tiff", mask1);

  g_free (mask1);
  g_free (ov.rgb);
  gst_buffer_unref (out1);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The default cache holds the masks of a thousand distinct slides (issue
 * 23: bench-churn's N = 1,000 cycled): none is masked twice, and the
 * bytes they take are counted (a few hundred each for this ellipse). */
GST_START_TEST (test_cache_holds_many_slides)
{
  GstHarness *h = harness_new ();
  Overview ov = overview_new_ellipse ();
  const guint slides = 1000;
  guint64 one_mask = 0;
  guint i;

  fail_unless_equals_uint64 (counter (h, "mask-cache-bytes"), 0);
  for (i = 0; i < slides; i++) {
    gchar *path = g_strdup_printf ("/slides/s%04u.tiff", i);

    gst_buffer_unref (push_slide (h, path, &ov));
    if (i == 0)
      one_mask = counter (h, "mask-cache-bytes");
    g_free (path);
  }
  /* Run-length coded: far under the 120,000 raw bytes of this mask. */
  fail_unless (one_mask > 0 && one_mask < OV_W * OV_H / 20,
      "%" G_GUINT64_FORMAT " bytes", one_mask);
  fail_unless_equals_uint64 (counter (h, "mask-cache-bytes"),
      slides * one_mask);
  for (i = 0; i < slides; i++) {
    gchar *path = g_strdup_printf ("/slides/s%04u.tiff", i);

    fail_unless (query_mask_cached (h, path), "%s evicted", path);
    gst_buffer_unref (push_slide (h, path, NULL));
    g_free (path);
  }
  fail_unless_equals_uint64 (counter (h, "masks-computed"), slides);
  fail_unless_equals_uint64 (counter (h, "cache-hits"), slides);

  g_free (ov.rgb);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* One pass of wsislidesrc over @n slides, as it visits them: it asks
 * first and sends the overview only when the mask is not cached. Returns
 * how many were cached, and sets bit i of @cached when slide i was. */
static guint
visit_slides (GstHarness * h, const Overview * ov, guint n, guint32 * cached)
{
  guint i, hits = 0;

  *cached = 0;
  for (i = 0; i < n; i++) {
    gchar *path = g_strdup_printf ("/slides/s%03u.tiff", i);
    gboolean hit = query_mask_cached (h, path);
    GstBuffer *out = push_slide (h, path, hit ? NULL : ov);

    fail_unless (meta_boolean (out, "has-mask"), "%s has no mask", path);
    if (hit) {
      *cached |= 1u << i;
      hits++;
    }
    gst_buffer_unref (out);
    g_free (path);
  }
  return hits;
}

/* A cycle over more slides than the cache holds (issue 23: a rank with
 * more slides than mask-cache-size). Plain LRU would evict each mask just
 * before its revisit and never hit; a new mask is kept last in line
 * instead, so every later pass finds the same size - 1 masks cached. */
GST_START_TEST (test_cache_cycle_over_capacity)
{
  GstHarness *h = harness_new ();
  Overview ov = overview_new_ellipse ();
  const guint size = 4, slides = 6, passes = 4;
  guint32 first_cached, cached;
  guint pass;

  g_object_set (h->element, "mask-cache-size", size, NULL);
  fail_unless_equals_int (visit_slides (h, &ov, slides, &cached), 0);
  fail_unless_equals_uint64 (counter (h, "masks-computed"), slides);
  fail_unless_equals_int (visit_slides (h, &ov, slides, &first_cached),
      size - 1);
  for (pass = 2; pass < passes; pass++) {
    fail_unless_equals_int (visit_slides (h, &ov, slides, &cached),
        size - 1);
    fail_unless_equals_int (cached, first_cached);
  }
  fail_unless_equals_uint64 (counter (h, "cache-hits"),
      (passes - 1) * (size - 1));
  fail_unless_equals_uint64 (counter (h, "masks-computed"),
      slides + (passes - 1) * (slides - size + 1));

  g_free (ov.rgb);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_cache_is_bounded)
{
  GstHarness *h = harness_new ();
  GstBus *bus = gst_bus_new ();
  Overview ov = overview_new_ellipse ();
  const gchar *paths[] = { "/slides/a.tiff", "/slides/b.tiff",
    "/slides/c.tiff"
  };
  GstBuffer *out;
  gchar *text;

  gst_element_set_bus (h->element, bus);
  g_object_set (h->element, "mask-cache-size", 2, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    gst_buffer_unref (push_slide (h, paths[i], &ov));

  fail_if (query_mask_cached (h, paths[0]));
  fail_unless (query_mask_cached (h, paths[1]));
  fail_unless (query_mask_cached (h, paths[2]));

  /* An evicted slide arriving without overview: warned and rejected. */
  out = push_slide (h, paths[0], NULL);
  fail_if (meta_boolean (out, "has-mask"));
  fail_unless (meta_boolean (out, "tissue-rejected"));
  text = pop_warning_text (bus);
  fail_unless (strstr (text, paths[0]) != NULL, "%s", text);
  g_free (text);
  gst_buffer_unref (out);

  /* Shrinking the cache evicts the least recently used first. */
  fail_unless (query_mask_cached (h, paths[1]));        /* b is now newest */
  g_object_set (h->element, "mask-cache-size", 1, NULL);
  fail_unless (query_mask_cached (h, paths[1]));
  fail_if (query_mask_cached (h, paths[2]));
  g_object_set (h->element, "mask-cache-size", 0, NULL);
  fail_if (query_mask_cached (h, paths[1]));
  gst_buffer_unref (push_slide (h, paths[1], &ov));
  fail_if (query_mask_cached (h, paths[1]));

  g_free (ov.rgb);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_property_change_clears_cache)
{
  GstHarness *h = harness_new ();
  Overview ov = overview_new_ellipse ();

  gst_buffer_unref (push_slide (h, "/slides/a.tiff", &ov));
  fail_unless (query_mask_cached (h, "/slides/a.tiff"));

  /* Same value: nothing changes, the mask stays. */
  gst_util_set_object_arg (G_OBJECT (h->element), "method", "otsu");
  fail_unless (query_mask_cached (h, "/slides/a.tiff"));
  /* min-tissue-fraction does not shape the mask. */
  g_object_set (h->element, "min-tissue-fraction", 0.2, NULL);
  fail_unless (query_mask_cached (h, "/slides/a.tiff"));

  g_object_set (h->element, "saturation-threshold", 20, NULL);
  fail_if (query_mask_cached (h, "/slides/a.tiff"));

  gst_buffer_unref (push_slide (h, "/slides/a.tiff", &ov));
  fail_unless (query_mask_cached (h, "/slides/a.tiff"));
  gst_util_set_object_arg (G_OBJECT (h->element), "method", "clam");
  fail_if (query_mask_cached (h, "/slides/a.tiff"));
  fail_unless_equals_uint64 (counter (h, "masks-computed"), 2);

  gst_buffer_unref (push_slide (h, "/slides/a.tiff", &ov));
  fail_unless (query_mask_cached (h, "/slides/a.tiff"));
  g_object_set (h->element, "value-floor", 40, NULL);
  fail_if (query_mask_cached (h, "/slides/a.tiff"));
  fail_unless_equals_uint64 (counter (h, "masks-computed"), 3);

  g_free (ov.rgb);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_bad_values_refused)
{
  GstElement *mask = gst_element_factory_make ("tissuemask", NULL);
  guint kernel = 0;
  gdouble fraction = 0;
  gint method = -1;

  fail_unless (mask != NULL);
  /* ours to refuse (even kernels): no warning, no start */
  g_object_set (mask, "median-kernel", 4, NULL);
  /* numbers outside their range: refused the same way (wsirefusal.h) */
  g_object_set (mask, "min-tissue-fraction", 1.5, NULL);
  WSI_ASSERT_SET_REFUSED (g_object_set (mask, "method", 42, NULL)); /* GLib's */
  g_object_set (mask, "saturation-threshold", 300, NULL);
  g_object_set (mask, "value-floor", 256, NULL);
  g_object_set (mask, "hue-max", 181, NULL);
  g_object_set (mask, "hsv-saturation-min", -2, NULL);
  g_object_set (mask, "otsu-blur-kernel", 4, NULL);
  g_object_set (mask, "otsu-min-area", 1.5, NULL);
  gst_util_set_object_arg (G_OBJECT (mask), "otsu-channel", "grey-ish");
  gst_util_set_object_arg (G_OBJECT (mask), "method", "bogus");

  g_object_get (mask, "median-kernel", &kernel, "min-tissue-fraction",
      &fraction, "method", &method, NULL);
  fail_unless_equals_int (kernel, 7);
  g_object_get (mask, "value-floor", &kernel, NULL);
  fail_unless_equals_int (kernel, 20);
  fail_unless_equals_float (fraction, 0.01);
  fail_unless_equals_int (method, 0);
  g_object_get (mask, "hue-max", &kernel, NULL);
  fail_unless_equals_int (kernel, 180);
  g_object_get (mask, "otsu-blur-kernel", &kernel, NULL);
  fail_unless_equals_int (kernel, 1);
  g_object_get (mask, "otsu-channel", &method, NULL);
  fail_unless_equals_int (method, 0);

  wsi_test_assert_refuses_start (mask, GST_STATE_PAUSED,
      "median-kernel=\"4\"");
  wsi_test_assert_refuses_start (mask, GST_STATE_PAUSED,
      "otsu-blur-kernel=\"4\"");
  wsi_test_assert_refuses_start (mask, GST_STATE_PAUSED,
      "min-tissue-fraction=\"1.5\" (accepted: a number from 0 to 1)");
  wsi_test_assert_refuses_start (mask, GST_STATE_PAUSED, "hue-max=\"181\"");
  /* good values of those forget their refusals */
  g_object_set (mask, "min-tissue-fraction", 0.01, "saturation-threshold", 8,
      "value-floor", 20, "hue-max", 180, "otsu-min-area", 0.0,
      "hsv-saturation-min", -1, NULL);

  /* Good values are taken (and the refusals forgotten). */
  g_object_set (mask, "median-kernel", 5, "otsu-blur-kernel", 3, NULL);
  gst_util_set_object_arg (G_OBJECT (mask), "method", "hsv");
  g_object_get (mask, "median-kernel", &kernel, "method", &method, NULL);
  fail_unless_equals_int (kernel, 5);
  fail_unless_equals_int (method, 1);
  gst_util_set_object_arg (G_OBJECT (mask), "method", "fluorescence");
  g_object_get (mask, "method", &method, NULL);
  fail_unless_equals_int (method, 4);
  gst_util_set_object_arg (G_OBJECT (mask), "method", "combined");
  g_object_get (mask, "method", &method, NULL);
  fail_unless_equals_int (method, 5);

  gst_object_unref (mask);
}

GST_END_TEST;

GST_START_TEST (test_no_meta_is_an_error)
{
  GstHarness *h = harness_new ();
  GstBuffer *bare = gst_buffer_new_allocate (NULL, 12, NULL);

  fail_unless_equals_int (gst_harness_push (h, bare), GST_FLOW_ERROR);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_wrong_overview_size_is_an_error)
{
  GstHarness *h = harness_new ();
  GstBuffer *in = slide_buffer_new ("/slides/short.tiff", NULL, OV_W, OV_H);
  GstStructure *meta = wsi_slide_meta_get (in);

  gst_structure_set (meta, "has-overview", G_TYPE_BOOLEAN, TRUE, NULL);
  gst_buffer_append_memory (in, gst_allocator_alloc (NULL, 100, NULL));
  fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_ERROR);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* appsrc ! tissuemask ! appsink, NULL -> PLAYING -> NULL several times, a
 * slide and EOS each round; the counters restart with the element. */
GST_START_TEST (test_state_cycles)
{
  Overview ov = overview_new_ellipse ();
  GstElement *pipeline = gst_parse_launch ("appsrc name=src format=bytes "
      "caps=" WSI_SLIDE_MEDIA_TYPE " ! tissuemask name=mask ! "
      "appsink name=sink sync=false", NULL);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstElement *mask = gst_bin_get_by_name (GST_BIN (pipeline), "mask");

  fail_unless (pipeline != NULL);
  for (gint round = 0; round < 3; round++) {
    GstFlowReturn ret;
    GstSample *sample;
    GstMessage *msg;
    guint64 computed = 0;
    GstBuffer *slide = slide_buffer_new ("/slides/a.tiff", &ov, OV_W, OV_H);

    fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
        GST_STATE_CHANGE_FAILURE);
    /* The action signal does not take the buffer. */
    g_signal_emit_by_name (src, "push-buffer", slide, &ret);
    gst_buffer_unref (slide);
    g_signal_emit_by_name (src, "end-of-stream", &ret);

    g_signal_emit_by_name (sink, "pull-sample", &sample);
    fail_unless (sample != NULL);
    fail_unless (meta_boolean (gst_sample_get_buffer (sample), "has-mask"));
    gst_sample_unref (sample);
    msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipeline),
        GST_CLOCK_TIME_NONE,
        (GstMessageType) (GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
    gst_message_unref (msg);
    g_object_get (mask, "masks-computed", &computed, NULL);
    fail_unless_equals_uint64 (computed, 1);

    fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
  }

  g_free (ov.rgb);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (mask);
  gst_object_unref (pipeline);
}

GST_END_TEST;

GST_START_TEST (test_flush_keeps_working)
{
  GstHarness *h = harness_new ();
  Overview ov = overview_new_ellipse ();
  GstBuffer *out;
  guint8 *mask;

  gst_buffer_unref (push_slide (h, "/slides/a.tiff", &ov));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  gst_harness_set_src_caps_str (h, WSI_SLIDE_MEDIA_TYPE);

  out = push_slide (h, "/slides/b.tiff", &ov);
  mask = check_masked_slide (out, &ov);
  fail_unless (fabs (mask_share (mask) - overview_tissue_share (&ov)) < 0.01);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));

  g_free (mask);
  g_free (ov.rgb);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* ---- fluorescence ------------------------------------------------------- */

static Overview
overview_new_dark (void)
{
  Overview ov = { NULL, OV_W, OV_H, 0 };
  guint32 noise = 999;

  ov.rgb = g_malloc ((gsize) OV_W * OV_H * 3);
  for (gint y = 0; y < OV_H; y++)
    for (gint x = 0; x < OV_W; x++)
      paint_pixel (&ov, x, y, BLACK, &noise);
  return ov;
}

static void
paint_disc (Overview * ov, gint cx, gint cy, gint r, guint32 * noise)
{
  for (gint y = MAX (cy - r, 0); y <= MIN (cy + r, ov->height - 1); y++)
    for (gint x = MAX (cx - r, 0); x <= MIN (cx + r, ov->width - 1); x++)
      if ((x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r)
        paint_pixel (ov, x, y, DAPI, noise);
}

/* Counts the stained (bright) pixels into ov->tissue_pixels. */
static void
overview_count_bright (Overview * ov)
{
  ov->tissue_pixels = 0;
  for (gsize i = 0; i < (gsize) ov->width * ov->height; i++)
    ov->tissue_pixels += ov->rgb[3 * i + 2] > 128;
}

/* Black background, five stained discs covering about 13 %. */
static Overview
overview_new_fluorescence (void)
{
  Overview ov = overview_new_dark ();
  guint32 noise = 31337;

  paint_disc (&ov, 80, 80, 45, &noise);
  paint_disc (&ov, 300, 70, 30, &noise);
  paint_disc (&ov, 200, 200, 40, &noise);
  paint_disc (&ov, 340, 240, 25, &noise);
  paint_disc (&ov, 60, 240, 20, &noise);
  overview_count_bright (&ov);
  return ov;
}

/* Pushes @ov through a fresh tissuemask with @method and returns the mask
 * (and the output buffer in @out). */
static guint8 *
mask_with_method (const Overview * ov, const gchar * method,
    guint close_kernel, GstBuffer ** out)
{
  GstHarness *h = harness_new ();
  guint8 *mask;

  gst_util_set_object_arg (G_OBJECT (h->element), "method", method);
  g_object_set (h->element, "close-kernel", close_kernel, NULL);
  *out = push_slide (h, "/slides/dapi.ndpi", ov);
  mask = check_masked_slide (*out, ov);
  gst_harness_teardown (h);
  return mask;
}

/* The fluorescence method finds the stained discs; the saturation methods,
 * on the same image, call the dark background tissue (a dark pixel with a
 * blue cast has a high saturation): that is why the method exists. */
GST_START_TEST (test_fluorescence_finds_bright_blobs)
{
  Overview ov = overview_new_fluorescence ();
  const gchar *saturation_methods[] = { "otsu", "hsv", "clam" };
  gdouble expected = overview_tissue_share (&ov);
  GstBuffer *out;
  guint8 *mask;

  fail_unless (expected > 0.10 && expected < 0.16, "%f", expected);
  mask = mask_with_method (&ov, "fluorescence", 4, &out);
  fail_unless (fabs (mask_share (mask) - expected) < 0.01,
      "fluorescence: mask share %f, stained share %f", mask_share (mask),
      expected);
  fail_unless_equals_int (MASK_AT (mask, 80, 80), 255);
  fail_unless_equals_int (MASK_AT (mask, 200, 200), 255);
  fail_unless_equals_int (MASK_AT (mask, 5, 5), 0);
  fail_unless_equals_int (MASK_AT (mask, 390, 150), 0);
  fail_unless_equals_int (MASK_AT (mask, 150, 280), 0);
  fail_if (meta_boolean (out, "tissue-rejected"));
  g_free (mask);
  gst_buffer_unref (out);

  for (guint i = 0; i < G_N_ELEMENTS (saturation_methods); i++) {
    mask = mask_with_method (&ov, saturation_methods[i], 4, &out);
    /* More than half of the image: most of the black background. */
    fail_unless (mask_share (mask) > 0.5, "%s: mask share %f (stained %f): "
        "the saturation methods were expected to fail on a dark background",
        saturation_methods[i], mask_share (mask), expected);
    g_free (mask);
    gst_buffer_unref (out);
  }
  g_free (ov.rgb);
}

GST_END_TEST;

/* Separate nuclei (3x3 dots, 2-pixel gaps) become one region thanks to the
 * closing; without it the gaps stay background. */
GST_START_TEST (test_fluorescence_closing_joins_nuclei)
{
  Overview ov = overview_new_fluorescence ();
  guint32 noise = 55;
  GstBuffer *out_closed, *out_open;
  guint8 *closed, *open;

  /* A 60x40 cluster of nuclei at (250..310, 130..170), away from the
   * discs. */
  for (gint y = 130; y < 170; y += 5)
    for (gint x = 250; x < 310; x += 5)
      for (gint dy = 0; dy < 3; dy++)
        for (gint dx = 0; dx < 3; dx++)
          paint_pixel (&ov, x + dx, y + dy, DAPI, &noise);

  closed = mask_with_method (&ov, "fluorescence", 4, &out_closed);
  open = mask_with_method (&ov, "fluorescence", 0, &out_open);

  /* A nucleus is tissue either way. */
  fail_unless_equals_int (MASK_AT (closed, 266, 146), 255);
  fail_unless_equals_int (MASK_AT (open, 266, 146), 255);
  /* The gap between two nuclei inside the cluster. */
  fail_unless_equals_int (MASK_AT (open, 268, 148), 0);
  fail_unless_equals_int (MASK_AT (closed, 268, 148), 255);
  /* Outside the cluster the closing adds nothing. */
  fail_unless_equals_int (MASK_AT (closed, 240, 150), 0);
  fail_unless (mask_share (closed) > mask_share (open) + 0.01,
      "closed %f, open %f", mask_share (closed), mask_share (open));

  g_free (closed);
  g_free (open);
  gst_buffer_unref (out_closed);
  gst_buffer_unref (out_open);
  g_free (ov.rgb);
}

GST_END_TEST;

/* Fluorescence mask of @ov (nuclei cluster) as an overview of a slide
 * whose level 0 is @scale times larger, with @close_kernel and
 * @reference (kernel-reference-size). */
static guint8 *
mask_of_slide_overview (const Overview * ov, gint scale, guint close_kernel,
    gint reference)
{
  GstHarness *h = harness_new ();
  GstBuffer *out;
  guint8 *mask;

  g_object_set (h->element, "close-kernel", close_kernel,
      "kernel-reference-size", reference, NULL);
  gst_util_set_object_arg (G_OBJECT (h->element), "method", "fluorescence");
  fail_unless_equals_int (gst_harness_push (h, slide_buffer_new_sized
          ("/slides/dapi.ndpi", ov, OV_W, OV_H, (gint64) OV_W * scale,
              (gint64) OV_H * scale)), GST_FLOW_OK);
  out = gst_harness_pull (h);
  mask = check_masked_slide (out, ov);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  return mask;
}

/* Kernel sides are in pixels of the slide's kernel-reference-size
 * overview: the 400 px overview of an 800 px slide (reference 1024: level
 * 0) is at half its resolution, so close-kernel=4 closes over 2 of its
 * pixels (the 2-pixel gaps between nuclei stay open) and close-kernel=8
 * over 4 (they close); (269, 149) is the second pixel of a diagonal gap,
 * which an even kernel's off-centre anchor cannot reach by shifting an
 * edge. With kernel-reference-size=0 the sides are in
 * pixels of the overview received, as before: 4 closes them; and a
 * 400 px reference on a large slide is this very overview. */
GST_START_TEST (test_kernels_follow_overview_resolution)
{
  Overview ov = overview_new_fluorescence ();
  guint32 noise = 55;
  guint8 *mask;

  for (gint y = 130; y < 170; y += 5)
    for (gint x = 250; x < 310; x += 5)
      for (gint dy = 0; dy < 3; dy++)
        for (gint dx = 0; dx < 3; dx++)
          paint_pixel (&ov, x + dx, y + dy, DAPI, &noise);

  mask = mask_of_slide_overview (&ov, 2, 4, 1024);
  fail_unless_equals_int (MASK_AT (mask, 266, 146), 255);
  fail_unless_equals_int (MASK_AT (mask, 269, 149), 0);
  g_free (mask);
  mask = mask_of_slide_overview (&ov, 2, 8, 1024);
  fail_unless_equals_int (MASK_AT (mask, 269, 149), 255);
  fail_unless_equals_int (MASK_AT (mask, 240, 150), 0);
  g_free (mask);
  mask = mask_of_slide_overview (&ov, 2, 4, 0);
  fail_unless_equals_int (MASK_AT (mask, 269, 149), 255);
  g_free (mask);
  mask = mask_of_slide_overview (&ov, 32, 4, OV_W);
  fail_unless_equals_int (MASK_AT (mask, 269, 149), 255);
  g_free (mask);
  g_free (ov.rgb);
}

GST_END_TEST;

/* A blank black overview is not tissue: value-floor keeps Otsu from
 * splitting the background noise. With no floor, it does. */
GST_START_TEST (test_fluorescence_blank_dark_rejected)
{
  Overview ov = overview_new_dark ();
  GstHarness *h = harness_new ();
  GstBus *bus = gst_bus_new ();
  GstBuffer *out;
  guint8 *mask;
  gchar *text;

  gst_element_set_bus (h->element, bus);
  gst_util_set_object_arg (G_OBJECT (h->element), "method", "fluorescence");
  out = push_slide (h, "/slides/blank dark.ndpi", &ov);
  mask = check_masked_slide (out, &ov);
  fail_unless (mask_share (mask) < 0.001, "%f of a black overview is tissue",
      mask_share (mask));
  fail_unless (meta_boolean (out, "tissue-rejected"));
  text = pop_warning_text (bus);
  fail_unless (strstr (text, "/slides/blank dark.ndpi") != NULL, "%s", text);
  g_free (text);
  g_free (mask);
  gst_buffer_unref (out);

  g_object_set (h->element, "value-floor", 0, NULL);
  out = push_slide (h, "/slides/blank dark.ndpi", &ov);
  mask = check_masked_slide (out, &ov);
  fail_unless (mask_share (mask) > 0.1, "without a floor Otsu should split "
      "the noise, got %f", mask_share (mask));
  g_free (mask);
  gst_buffer_unref (out);

  g_free (ov.rgb);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* ---- combined, hue ranges, chains --------------------------------------- */

/* Colours that each method alone treats differently (OpenCV 8-bit HSV):
 * BLUE: hue 113, saturation 140, value 200; DIM: hue 150, value 60 (below
 * a value-min of 103); PALE: hue 160, saturation 20 (above 8, below
 * Otsu's threshold between glass and pink); RED: hue 0. PINK has hue 160,
 * saturation 109, value 210. */
static const guint8 BLUE[3] = { 90, 110, 200 };
static const guint8 DIM[3] = { 60, 30, 60 };
static const guint8 PALE[3] = { 230, 212, 224 };
static const guint8 RED[3] = { 200, 60, 60 };

/* The ellipse plus one region that only some methods call tissue each,
 * and pink specks (9 px) that clam drops. */
static Overview
overview_new_mixed (void)
{
  Overview ov = overview_new_ellipse ();

  paint_rect (&ov, 330, 20, 50, 40, BLUE);
  paint_rect (&ov, 330, 120, 50, 40, DIM);
  paint_rect (&ov, 330, 220, 50, 40, PALE);
  paint_rect (&ov, 10, 10, 3, 3, PINK);
  paint_rect (&ov, 10, 280, 3, 3, PINK);
  paint_rect (&ov, 20, 130, 30, 30, RED);
  return ov;
}

/* Properties shared by the single-method and combined runs below. */
static const gchar *const MIXED_PROPS[] = {
  "hue-min", "140", "hue-max", "180", "value-min", "103",
  "value-threshold", "255", "min-component-area", "0.0005", NULL
};

/* Pushes @ov through a fresh tissuemask with @method and the name/value
 * pairs @props, and returns the mask. */
static guint8 *
mask_with_props (const Overview * ov, const gchar * method,
    const gchar * const *props)
{
  GstHarness *h = harness_new ();
  GstBuffer *out;
  guint8 *mask;

  gst_util_set_object_arg (G_OBJECT (h->element), "method", method);
  for (; props != NULL && props[0] != NULL; props += 2)
    gst_util_set_object_arg (G_OBJECT (h->element), props[0], props[1]);
  out = push_slide (h, "/slides/mixed.tiff", ov);
  mask = check_masked_slide (out, ov);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  return mask;
}

/* First pixel where @mask differs from the AND of @a, @b and @c (@c may be
 * NULL), or -1. Checked in one assertion by the caller: check's per-call
 * bookkeeping would cost seconds over 120 000 pixels. */
static gint
first_and_mismatch (const guint8 * mask, const guint8 * a, const guint8 * b,
    const guint8 * c)
{
  for (gsize i = 0; i < (gsize) OV_W * OV_H; i++)
    if (mask[i] != (a[i] & b[i] & (c ? c[i] : 255)))
      return (gint) i;
  return -1;
}

/* Pixels where @a is tissue and @b is not. */
static guint
mask_only_in (const guint8 * a, const guint8 * b)
{
  guint n = 0;

  for (gsize i = 0; i < (gsize) OV_W * OV_H; i++)
    n += a[i] && !b[i];
  return n;
}

GST_START_TEST (test_combined_is_and_of_methods)
{
  Overview ov = overview_new_mixed ();
  guint8 *otsu = mask_with_props (&ov, "otsu", MIXED_PROPS);
  guint8 *hsv = mask_with_props (&ov, "hsv", MIXED_PROPS);
  guint8 *clam = mask_with_props (&ov, "clam", MIXED_PROPS);
  guint8 *combined = mask_with_props (&ov, "combined", MIXED_PROPS);

  fail_unless_equals_int (first_and_mismatch (combined, otsu, hsv, clam), -1);

  /* Each method alone keeps something the AND drops, so the test would
   * catch an OR or a single method. */
  fail_unless (MASK_AT (hsv, 355, 40) == 0 && MASK_AT (otsu, 355, 40) == 255
      && MASK_AT (clam, 355, 40) == 255, "blue: hue outside 140-180");
  fail_unless (MASK_AT (hsv, 355, 140) == 0 && MASK_AT (otsu, 355, 140)
      == 255 && MASK_AT (clam, 355, 140) == 255, "dim: value below 103");
  fail_unless (MASK_AT (otsu, 355, 240) == 0 && MASK_AT (hsv, 355, 240)
      == 255 && MASK_AT (clam, 355, 240) == 255, "pale: below Otsu");
  fail_unless (MASK_AT (clam, 11, 11) == 0 && MASK_AT (otsu, 11, 11) == 255
      && MASK_AT (hsv, 11, 11) == 255, "speck: clam drops it");
  fail_unless (mask_only_in (otsu, combined) > 1000);
  fail_unless (mask_only_in (hsv, combined) > 1000);
  fail_unless (mask_only_in (clam, combined) > 1000);
  fail_unless_equals_int (MASK_AT (combined, 180, 150), 255);

  g_free (otsu);
  g_free (hsv);
  g_free (clam);
  g_free (combined);
  g_free (ov.rgb);
}

GST_END_TEST;

/* combined runs each method with its own parameters: hsv's saturation
 * minimum and otsu's grey channel do not leak into clam. */
GST_START_TEST (test_combined_keeps_own_parameters)
{
  Overview ov = overview_new_mixed ();
  const gchar *const hsv_strict[] = { "hsv-saturation-min", "30", NULL };
  const gchar *const gray[] = { "otsu-channel", "gray",
    "otsu-blur-kernel", "7", "otsu-close-kernel", "5", "otsu-min-area",
    "0.001", NULL
  };
  guint8 *hsv = mask_with_props (&ov, "hsv", hsv_strict);
  guint8 *clam = mask_with_props (&ov, "clam", hsv_strict);
  guint8 *otsu = mask_with_props (&ov, "otsu", gray);
  guint8 *combined = mask_with_props (&ov, "combined", gray);
  guint8 *hsv_default = mask_with_props (&ov, "hsv", NULL);
  guint8 *clam_default = mask_with_props (&ov, "clam", NULL);

  /* PALE has saturation 20: out for hsv at 30, still in for clam at 8. */
  fail_unless_equals_int (MASK_AT (hsv, 355, 240), 0);
  fail_unless_equals_int (MASK_AT (clam, 355, 240), 255);
  /* Grey Otsu with the peer's steps: its own mask goes into combined. */
  fail_unless_equals_int (first_and_mismatch (combined, otsu, hsv_default,
          clam_default), -1);
  /* The closing and blur fill no speck: the 9-px specks are below the
   * 0.001 area (120 px). */
  fail_unless_equals_int (MASK_AT (otsu, 11, 11), 0);
  fail_unless_equals_int (MASK_AT (otsu, 180, 150), 255);

  g_free (hsv);
  g_free (clam);
  g_free (otsu);
  g_free (combined);
  g_free (hsv_default);
  g_free (clam_default);
  g_free (ov.rgb);
}

GST_END_TEST;

GST_START_TEST (test_hue_range)
{
  Overview ov = overview_new_mixed ();
  const gchar *const pinks[] = { "hue-min", "140", "hue-max", "180", NULL };
  const gchar *const reds[] = { "hue-min", "170", "hue-max", "10", NULL };
  const gchar *const midnight[] = { "hue-min", "90", "hue-max", "180",
    "hsv-saturation-min", "8", "value-min", "103", "value-threshold", "255",
    NULL
  };
  guint8 *all = mask_with_props (&ov, "hsv", NULL);
  guint8 *pink = mask_with_props (&ov, "hsv", pinks);
  guint8 *red = mask_with_props (&ov, "hsv", reds);
  guint8 *mid = mask_with_props (&ov, "hsv", midnight);

  /* Default: every hue. */
  fail_unless_equals_int (MASK_AT (all, 355, 40), 255);
  fail_unless_equals_int (MASK_AT (all, 35, 145), 255);
  /* 140-180: pink (160) in, blue (113) and red (0) out. */
  fail_unless_equals_int (MASK_AT (pink, 180, 150), 255);
  fail_unless_equals_int (MASK_AT (pink, 355, 40), 0);
  fail_unless_equals_int (MASK_AT (pink, 35, 145), 0);
  /* 170-10 wraps round red: red in, pink and blue out. */
  fail_unless_equals_int (MASK_AT (red, 35, 145), 255);
  fail_unless_equals_int (MASK_AT (red, 180, 150), 0);
  fail_unless_equals_int (MASK_AT (red, 355, 40), 0);
  /* Midnight: hue 90-180, saturation >= 8, value >= 103: blue and pink
   * in, red and dim out (noisy glass is partly in, as in the peer). */
  fail_unless_equals_int (MASK_AT (mid, 355, 40), 255);
  fail_unless_equals_int (MASK_AT (mid, 180, 150), 255);
  fail_unless_equals_int (MASK_AT (mid, 35, 145), 0);
  fail_unless_equals_int (MASK_AT (mid, 355, 140), 0);

  g_free (all);
  g_free (pink);
  g_free (red);
  g_free (mid);
  g_free (ov.rgb);
}

GST_END_TEST;

/* Debug lines of the tissuemask category that mention a combination. */
static gint combine_lines;

static void
count_combine_lines (GstDebugCategory * category, GstDebugLevel level,
    const gchar * file, const gchar * function, gint line, GObject * object,
    GstDebugMessage * message, gpointer user_data)
{
  if (strcmp (gst_debug_category_get_name (category), "tissuemask") == 0
      && strstr (gst_debug_message_get (message), "combined") != NULL)
    g_atomic_int_inc (&combine_lines);
}

static guint8 *
pull_chain_mask (GstHarness * h, const gchar * path, const Overview * ov,
    gdouble * fraction)
{
  GstBuffer *out = push_slide (h, path, ov);
  guint8 *mask = check_masked_slide (out, ov);

  /* One mask only, whatever the chain's length. */
  fail_unless_equals_int (gst_buffer_get_size (out),
      (gsize) OV_W * OV_H * (ov ? 4 : 1));
  *fraction = meta_fraction (out);
  gst_buffer_unref (out);
  return mask;
}

GST_START_TEST (test_chained_masks_and)
{
  Overview ov = overview_new_mixed ();
  const gchar *const pinks[] = { "hue-min", "140", "hue-max", "180", NULL };
  guint8 *clam = mask_with_props (&ov, "clam", NULL);
  guint8 *hsv = mask_with_props (&ov, "hsv", pinks);
  GstHarness *h = gst_harness_new_parse ("tissuemask name=first method=clam "
      "! tissuemask name=second method=hsv hue-min=140 hue-max=180");
  guint8 *chained, *again;
  gdouble fraction, fraction2;
  guint tissue = 0;

  gst_harness_set_src_caps_str (h, WSI_SLIDE_MEDIA_TYPE);
  gst_debug_add_log_function (count_combine_lines, NULL, NULL);
  gst_debug_set_threshold_for_name ("tissuemask", GST_LEVEL_DEBUG);
  chained = pull_chain_mask (h, "/slides/mixed.tiff", &ov, &fraction);
  gst_debug_set_threshold_for_name ("tissuemask", GST_LEVEL_ERROR);
  gst_debug_remove_log_function (count_combine_lines);

  fail_unless_equals_int (first_and_mismatch (chained, clam, hsv, NULL), -1);
  for (gsize i = 0; i < (gsize) OV_W * OV_H; i++)
    tissue += chained[i] != 0;
  fail_unless (mask_only_in (clam, chained) > 1000);
  fail_unless (mask_only_in (hsv, chained) > 0);
  fail_unless (G_APPROX_VALUE (fraction, (gdouble) tissue / (OV_W * OV_H),
          1e-9));
  fail_unless (g_atomic_int_get (&combine_lines) >= 1,
      "the combination was not in the debug log");

  /* Both hold the mask: the source may skip the overview, and the cached
   * masks combine the same way. */
  fail_unless (query_mask_cached (h, "/slides/mixed.tiff"));
  again = pull_chain_mask (h, "/slides/mixed.tiff", NULL, &fraction2);
  fail_unless (memcmp (again, chained, (gsize) OV_W * OV_H) == 0);
  fail_unless_equals_float (fraction2, fraction);

  g_free (again);
  g_free (chained);
  g_free (clam);
  g_free (hsv);
  g_free (ov.rgb);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A later tissuemask that lacks the mask makes the query fail even though
 * an earlier one holds it: it needs the overview. */
GST_START_TEST (test_chain_query_needs_every_mask)
{
  Overview ov = overview_new_ellipse ();
  GstHarness *h = gst_harness_new_parse ("tissuemask method=clam ! "
      "tissuemask method=hsv mask-cache-size=0");
  guint8 *mask;
  gdouble fraction;

  gst_harness_set_src_caps_str (h, WSI_SLIDE_MEDIA_TYPE);
  mask = pull_chain_mask (h, "/slides/a.tiff", &ov, &fraction);
  fail_if (query_mask_cached (h, "/slides/a.tiff"));
  g_free (mask);
  g_free (ov.rgb);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A rejected slide is reported upstream, so wsislidesrc can count it. */
GST_START_TEST (test_rejected_reported_upstream)
{
  GstHarness *h = harness_new ();
  Overview blank = overview_new_blank (OV_W, OV_H);
  Overview ov = overview_new_ellipse ();
  GstBuffer *out;
  GstEvent *event;
  gboolean is_blank = FALSE;
  guint n_events = 0;

  out = push_slide (h, "/slides/glass.svs", &blank);
  gst_buffer_unref (out);
  out = push_slide (h, "/slides/tissue.svs", &ov);
  gst_buffer_unref (out);
  while ((event = gst_harness_try_pull_upstream_event (h)) != NULL) {
    const gchar *path = NULL;

    if (wsi_event_parse_slide_rejected (event, NULL, &path, NULL,
            &is_blank)) {
      fail_unless_equals_string (path, "/slides/glass.svs");
      n_events++;
    }
    gst_event_unref (event);
  }
  fail_unless_equals_int (n_events, 1);
  fail_unless (is_blank);
  g_free (blank.rgb);
  g_free (ov.rgb);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
tissuemask_suite (void)
{
  Suite *s = suite_create ("tissuemask");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_ellipse_otsu);
  tcase_add_test (tc, test_ellipse_hsv);
  tcase_add_test (tc, test_ellipse_clam);
  tcase_add_test (tc, test_method_none_is_all_tissue);
  tcase_add_test (tc, test_blank_slide_rejected);
  tcase_add_test (tc, test_min_tissue_fraction);
  tcase_add_test (tc, test_clam_drops_specks_fills_holes);
  tcase_add_test (tc, test_cache_hit_without_overview);
  tcase_add_test (tc, test_cache_keeps_speckled_mask);
  tcase_add_test (tc, test_cache_codes_runs_compactly);
  tcase_add_test (tc, test_cache_holds_many_slides);
  tcase_add_test (tc, test_cache_cycle_over_capacity);
  tcase_add_test (tc, test_cache_is_bounded);
  tcase_add_test (tc, test_property_change_clears_cache);
  tcase_add_test (tc, test_bad_values_refused);
  tcase_add_test (tc, test_no_meta_is_an_error);
  tcase_add_test (tc, test_wrong_overview_size_is_an_error);
  tcase_add_test (tc, test_state_cycles);
  tcase_add_test (tc, test_flush_keeps_working);
  tcase_add_test (tc, test_fluorescence_finds_bright_blobs);
  tcase_add_test (tc, test_fluorescence_closing_joins_nuclei);
  tcase_add_test (tc, test_kernels_follow_overview_resolution);
  tcase_add_test (tc, test_fluorescence_blank_dark_rejected);
  tcase_add_test (tc, test_combined_is_and_of_methods);
  tcase_add_test (tc, test_combined_keeps_own_parameters);
  tcase_add_test (tc, test_hue_range);
  tcase_add_test (tc, test_chained_masks_and);
  tcase_add_test (tc, test_chain_query_needs_every_mask);
  tcase_add_test (tc, test_rejected_reported_upstream);
  return s;
}

GST_CHECK_MAIN (tissuemask);
