/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit tests for patchsampler: slide buffers are built by hand (a
 * WsiSlideMeta and a synthetic mask with a known tissue rectangle). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsievent.h>

#include "wsitestutil.h"
#include "wsidelivery.h"          /* WSI_DELIVERY_KEPT_CYCLES */

/* A test slide: level-0 size, resolution, and a mask of MASK_SCALE
 * level-0 pixels per mask pixel whose tissue is the rectangle
 * [tx0, tx1) x [ty0, ty1) in mask pixels (empty rectangle: blank). */
#define MASK_SCALE 16

typedef struct
{
  const gchar *path;
  guint index;
  guint cycle;
  guint64 seed;
  gint64 width;
  gint64 height;
  gdouble mpp;
  gboolean has_overview;
  gboolean has_mask;
  gboolean rejected;
  gint tx0, ty0, tx1, ty1;
  gdouble downsamples[3];        /* level-downsamples, level 0 first */
  gint level_count;
} TestSlide;

static void
test_slide_init (TestSlide * s)
{
  memset (s, 0, sizeof (*s));
  s->path = "/slides/test-a.svs";
  s->seed = 42;
  s->width = 4096;
  s->height = 3072;
  s->mpp = 0.25;
  s->has_overview = TRUE;
  s->has_mask = TRUE;
  /* tissue: level-0 [1000, 3000) x [800, 2400), not grid aligned */
  s->tx0 = 1000 / MASK_SCALE;
  s->ty0 = 800 / MASK_SCALE;
  s->tx1 = 3000 / MASK_SCALE;
  s->ty1 = 2400 / MASK_SCALE;
  s->downsamples[0] = 1.0;
  s->downsamples[1] = 4.0;
  s->downsamples[2] = 16.0;
  s->level_count = 3;
}

static gint
mask_width (const TestSlide * s)
{
  return (gint) (s->width / MASK_SCALE);
}

static gint
mask_height (const TestSlide * s)
{
  return (gint) (s->height / MASK_SCALE);
}

static gboolean
mask_is_tissue (const TestSlide * s, gint mx, gint my)
{
  return mx >= s->tx0 && mx < s->tx1 && my >= s->ty0 && my < s->ty1;
}

static GstBuffer *
test_slide_buffer (const TestSlide * s, guint64 offset)
{
  gint mw = mask_width (s), mh = mask_height (s), x, y;
  gsize overview = s->has_overview ? (gsize) mw * mh * 3 : 0;
  gsize mask = s->has_mask ? (gsize) mw * mh : 0;
  guint8 *data = g_malloc (overview + mask + 1);
  GstBuffer *buf;
  GstStructure *meta;

  memset (data, 0xEE, overview);        /* glass-white overview */
  if (s->has_mask)
    for (y = 0; y < mh; y++)
      for (x = 0; x < mw; x++)
        data[overview + (gsize) y * mw + x] = mask_is_tissue (s, x, y) ?
            255 : 0;
  buf = gst_buffer_new_wrapped (data, overview + mask + 1);
  gst_buffer_set_size (buf, overview + mask);
  GST_BUFFER_OFFSET (buf) = offset;

  meta = wsi_slide_meta_add (buf);
  gst_structure_set (meta, "path", G_TYPE_STRING, s->path,
      "index", G_TYPE_UINT, s->index, "cycle", G_TYPE_UINT, s->cycle,
      "seed", G_TYPE_UINT64, s->seed, "label", G_TYPE_STRING, "tumour",
      "vendor", G_TYPE_STRING, "aperio",
      "width", G_TYPE_INT64, s->width, "height", G_TYPE_INT64, s->height,
      "level-count", G_TYPE_INT, s->level_count,
      "mpp-x", G_TYPE_DOUBLE, s->mpp, "mpp-y", G_TYPE_DOUBLE, s->mpp,
      "mpp-source", G_TYPE_STRING, s->mpp > 0 ? "openslide" : "unknown",
      "overview-width", G_TYPE_INT, mw, "overview-height", G_TYPE_INT, mh,
      "has-overview", G_TYPE_BOOLEAN, s->has_overview,
      "has-mask", G_TYPE_BOOLEAN, s->has_mask,
      "tissue-fraction", G_TYPE_DOUBLE, 0.3,
      "tissue-rejected", G_TYPE_BOOLEAN, s->rejected, NULL);
  /* Level geometry as wsislidesrc writes it: typed arrays (wsirecord.h). */
  wsi_structure_set_double_array (meta, "level-downsamples", s->downsamples,
      s->level_count);
  return buf;
}

/* Tissue share of the mask pixels that footprint (x, y, side) touches,
 * counted pixel by pixel (the element uses an integral image). */
static gdouble
brute_force_fraction (const TestSlide * s, gint64 x, gint64 y, gint64 side)
{
  gint64 mx0 = x / MASK_SCALE, my0 = y / MASK_SCALE;
  gint64 mx1 = (x + side + MASK_SCALE - 1) / MASK_SCALE;
  gint64 my1 = (y + side + MASK_SCALE - 1) / MASK_SCALE;
  gint64 mx, my, tissue = 0;

  for (my = my0; my < my1; my++)
    for (mx = mx0; mx < mx1; mx++)
      tissue += mask_is_tissue (s, mx, my);
  return (gdouble) tissue / ((mx1 - mx0) * (my1 - my0));
}

static GstHarness *
sampler_new (GstBus ** bus)
{
  GstHarness *h = gst_harness_new ("patchsampler");

  gst_harness_set_src_caps_str (h, WSI_SLIDE_MEDIA_TYPE);
  if (bus) {
    *bus = gst_bus_new ();
    gst_element_set_bus (h->element, *bus);
  }
  return h;
}

/* Drops the queued messages first: they hold the element, which holds
 * the bus. */
static void
sampler_free (GstHarness * h, GstBus * bus)
{
  gst_bus_set_flushing (bus, TRUE);
  gst_harness_teardown (h);
  gst_object_unref (bus);
}

/* Pushes @s and returns the planned records (NULL when none) and their
 * count; the output buffer, if any, goes to @out_buf when not NULL. */
static WsiPatchRecord *
push_slide (GstHarness * h, const TestSlide * s, guint * n, GstBuffer ** out)
{
  GstBuffer *buf;
  WsiPatchRecord *records = NULL;
  gsize size;

  fail_unless_equals_int (gst_harness_push (h, test_slide_buffer (s, 7)),
      GST_FLOW_OK);
  buf = gst_harness_try_pull (h);
  *n = 0;
  if (buf != NULL) {
    size = gst_buffer_get_size (buf);
    fail_unless_equals_int (size % sizeof (WsiPatchRecord), 0);
    fail_unless (size > 0);
    records = g_malloc (size);
    gst_buffer_extract (buf, 0, records, size);
    *n = size / sizeof (WsiPatchRecord);
    if (out)
      *out = buf;
    else
      gst_buffer_unref (buf);
  }
  fail_unless (gst_harness_try_pull (h) == NULL);
  return records;
}

/* Checks what every record must satisfy for @s. */
static void
check_records (const TestSlide * s, const WsiPatchRecord * r, guint n,
    guint footprint, guint out_size, gdouble min_tissue)
{
  guint i;

  for (i = 0; i < n; i++) {
    fail_unless (r[i].x >= 0 && r[i].x + footprint <= s->width,
        "x %" G_GINT64_FORMAT " out of bounds", r[i].x);
    fail_unless (r[i].y >= 0 && r[i].y + footprint <= s->height,
        "y %" G_GINT64_FORMAT " out of bounds", r[i].y);
    fail_unless_equals_int (r[i].footprint, footprint);
    fail_unless_equals_int (r[i].out_size, out_size);
    fail_unless_equals_int (r[i].slide_index, s->index);
    fail_unless_equals_int (r[i].cycle, s->cycle);
    fail_unless_equals_uint64 (r[i].level, WSI_LEVEL_UNSET);
    fail_unless_equals_int (r[i].read_size, 0);
    fail_unless (r[i].created_ns > 0);
    fail_unless (r[i].tissue_fraction >= min_tissue - 1e-6);
    if (s->has_mask)
      fail_unless (fabs (r[i].tissue_fraction -
              brute_force_fraction (s, r[i].x, r[i].y, footprint)) < 1e-5);
    else
      fail_unless_equals_float (r[i].tissue_fraction, 1.0);
  }
}

GST_START_TEST (test_random_count_and_bounds)
{
  GstHarness *h = sampler_new (NULL);
  TestSlide s;
  WsiPatchRecord *r;
  guint n, i;

  test_slide_init (&s);
  g_object_set (h->element, "patches-per-slide", 60, NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 60);
  check_records (&s, r, n, 256, 256, 0.5);
  for (i = 0; i < n; i++) {
    /* patchinterleave, which decides the stream order, numbers them */
    fail_unless_equals_uint64 (r[i].sequence, 0);
    fail_unless_equals_float (r[i].out_mpp, 0.25f);
  }
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "patches-planned"), 60);
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "slides-sampled"), 1);
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "slides-skipped"), 0);
  g_free (r);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* min-tissue=1: every patch lies wholly inside the tissue rectangle. */
GST_START_TEST (test_random_wholly_on_tissue)
{
  GstHarness *h = sampler_new (NULL);
  TestSlide s;
  WsiPatchRecord *r;
  guint n, i;

  test_slide_init (&s);
  g_object_set (h->element, "patches-per-slide", 40, "min-tissue", 1.0,
      "patch-size", 128, NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 40);
  check_records (&s, r, n, 128, 128, 1.0);
  for (i = 0; i < n; i++) {
    fail_unless (r[i].x >= s.tx0 * MASK_SCALE);
    fail_unless (r[i].x + 128 <= s.tx1 * MASK_SCALE);
    fail_unless (r[i].y >= s.ty0 * MASK_SCALE);
    fail_unless (r[i].y + 128 <= s.ty1 * MASK_SCALE);
  }
  g_free (r);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Patches with min-tissue 0.5 are spread over the tissue, not one spot,
 * and none is on pure background. */
GST_START_TEST (test_random_spread_on_tissue)
{
  GstHarness *h = sampler_new (NULL);
  TestSlide s;
  WsiPatchRecord *r;
  guint n, i;
  gint64 min_x = G_MAXINT64, max_x = 0;

  test_slide_init (&s);
  g_object_set (h->element, "patches-per-slide", 200, NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 200);
  for (i = 0; i < n; i++) {
    min_x = MIN (min_x, r[i].x);
    max_x = MAX (max_x, r[i].x);
    fail_unless (r[i].tissue_fraction > 0.0);
  }
  /* tissue spans x 1000..3000: 200 uniform draws cover most of it */
  fail_unless (min_x < 1300 && max_x > 2400);
  g_free (r);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* With a low min-tissue, patches that only overlap the tissue edge count
 * too: the draws are not confined to the tissue itself. */
GST_START_TEST (test_random_edge_overlap)
{
  GstHarness *h = sampler_new (NULL);
  TestSlide s;
  WsiPatchRecord *r;
  guint n, i;
  gint64 min_x = G_MAXINT64, max_y = 0;

  test_slide_init (&s);
  g_object_set (h->element, "patches-per-slide", 300, "min-tissue", 0.02,
      NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 300);
  check_records (&s, r, n, 256, 256, 0.02);
  for (i = 0; i < n; i++) {
    min_x = MIN (min_x, r[i].x);
    max_y = MAX (max_y, r[i].y);
  }
  /* tissue starts at x 992 and ends at y 2400 */
  fail_unless (min_x < 992 - 128, "min x %" G_GINT64_FORMAT, min_x);
  fail_unless (max_y > 2400 - 128, "max y %" G_GINT64_FORMAT, max_y);
  g_free (r);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_no_mask_is_all_tissue)
{
  GstHarness *h = sampler_new (NULL);
  TestSlide s;
  WsiPatchRecord *r;
  guint n;

  test_slide_init (&s);
  s.has_mask = FALSE;
  s.has_overview = FALSE;
  g_object_set (h->element, "patches-per-slide", 30, "min-tissue", 1.0, NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 30);
  check_records (&s, r, n, 256, 256, 1.0);
  g_free (r);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Share of [p, p + side) inside [t0, t1) */
static gdouble
overlap_1d (gint64 p, gint64 side, gint64 t0, gint64 t1)
{
  gint64 lo = MAX (p, t0), hi = MIN (p + side, t1);
  return hi > lo ? (gdouble) (hi - lo) / side : 0.0;
}

/* Grid positions expected for a stride, counted from the rectangle's
 * geometry (tissue edges are on mask pixel edges, so shares are exact). */
static guint
expected_grid_count (const TestSlide * s, gint64 side, gint64 stride,
    gdouble min_tissue)
{
  gint64 x, y;
  guint count = 0;

  for (y = 0; y + side <= s->height; y += stride)
    for (x = 0; x + side <= s->width; x += stride)
      if (overlap_1d (x, side, s->tx0 * MASK_SCALE, s->tx1 * MASK_SCALE) *
          overlap_1d (y, side, s->ty0 * MASK_SCALE, s->ty1 * MASK_SCALE)
          >= min_tissue)
        count++;
  return count;
}

static void
check_grid (guint stride, gdouble min_tissue)
{
  GstHarness *h = sampler_new (NULL);
  TestSlide s;
  WsiPatchRecord *r;
  guint n, i, expected;
  guint step = stride ? stride : 256;

  test_slide_init (&s);
  /* tissue [1024, 2048) x [768, 1536) plus a half-patch fringe */
  s.tx0 = 56;
  s.tx1 = 128;
  s.ty0 = 40;
  s.ty1 = 96;
  g_object_set (h->element, "mode", 1, "patches-per-slide", -1,
      "min-tissue", min_tissue, "stride", stride, NULL);
  r = push_slide (h, &s, &n, NULL);
  expected = expected_grid_count (&s, 256, step, min_tissue);
  fail_unless (expected > 4);
  fail_unless_equals_int (n, expected);
  check_records (&s, r, n, 256, 256, min_tissue);
  for (i = 0; i < n; i++) {
    fail_unless_equals_int (r[i].x % step, 0);
    fail_unless_equals_int (r[i].y % step, 0);
    /* raster order */
    if (i > 0)
      fail_unless (r[i].y > r[i - 1].y ||
          (r[i].y == r[i - 1].y && r[i].x > r[i - 1].x));
  }
  g_free (r);
  gst_harness_teardown (h);
}

GST_START_TEST (test_grid_count)
{
  check_grid (0, 0.5);
  check_grid (0, 1.0);
}

GST_END_TEST;

GST_START_TEST (test_grid_stride)
{
  check_grid (128, 1.0);
  check_grid (96, 0.25);
}

GST_END_TEST;

/* A limited grid picks a subset of the tissue positions. */
GST_START_TEST (test_grid_limited)
{
  GstHarness *h = sampler_new (NULL);
  TestSlide s;
  WsiPatchRecord *r;
  guint n, i;

  test_slide_init (&s);
  g_object_set (h->element, "mode", 1, "patches-per-slide", 5,
      "min-tissue", 1.0, NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 5);
  check_records (&s, r, n, 256, 256, 1.0);
  for (i = 0; i < n; i++)
    fail_unless_equals_int (r[i].x % 256, 0);
  g_free (r);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_target_mpp)
{
  GstHarness *h = sampler_new (NULL);
  TestSlide s;
  WsiPatchRecord *r;
  guint n;

  test_slide_init (&s);
  g_object_set (h->element, "target-mpp", 0.5, "patches-per-slide", 20,
      NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 20);
  check_records (&s, r, n, 512, 256, 0.5);
  fail_unless_equals_float (r[0].out_mpp, 0.5f);
  g_free (r);

  /* non-integer ratio rounds: 224 * 0.5 / 0.3 = 373.33 */
  s.mpp = 0.3;
  g_object_set (h->element, "patch-size", 224, NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 20);
  check_records (&s, r, n, 373, 224, 0.5);
  g_free (r);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_level_mode)
{
  GstBus *bus;
  GstHarness *h = sampler_new (&bus);
  TestSlide s;
  WsiPatchRecord *r;
  guint n;
  gchar *text;

  test_slide_init (&s);
  g_object_set (h->element, "level", 1, "patch-size", 128,
      "patches-per-slide", 10, NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 10);
  check_records (&s, r, n, 512, 128, 0.5);
  fail_unless_equals_float (r[0].out_mpp, 1.0f);
  g_free (r);

  /* a level the slide lacks: warning and nothing */
  g_object_set (h->element, "level", 3, NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless (r == NULL);
  text = wsi_test_pop_message_text (bus, GST_MESSAGE_WARNING);
  fail_unless (text != NULL);
  fail_unless (strstr (text, s.path) != NULL, "%s", text);
  fail_unless (strstr (text, "level") != NULL, "%s", text);
  g_free (text);
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "slides-skipped"), 1);

  sampler_free (h, bus);
}

GST_END_TEST;

static WsiPatchRecord *
plan_once (const TestSlide * s, gboolean replacement, guint * n)
{
  GstHarness *h = sampler_new (NULL);
  WsiPatchRecord *r;

  g_object_set (h->element, "patches-per-slide", 25, "replacement",
      replacement, NULL);
  r = push_slide (h, s, n, NULL);
  gst_harness_teardown (h);
  return r;
}

static gboolean
same_positions (const WsiPatchRecord * a, const WsiPatchRecord * b, guint n)
{
  guint i;

  for (i = 0; i < n; i++)
    if (a[i].x != b[i].x || a[i].y != b[i].y)
      return FALSE;
  return TRUE;
}

static void
check_determinism (gboolean replacement)
{
  TestSlide s;
  WsiPatchRecord *a, *b, *c, *d, *e;
  guint na, nb, nc, nd, ne, i;

  test_slide_init (&s);
  a = plan_once (&s, replacement, &na);
  b = plan_once (&s, replacement, &nb);
  fail_unless_equals_int (na, 25);
  fail_unless_equals_int (nb, 25);
  for (i = 0; i < na; i++) {
    b[i].created_ns = a[i].created_ns;
    fail_unless (memcmp (&a[i], &b[i], sizeof (WsiPatchRecord)) == 0);
  }

  s.seed = 43;
  c = plan_once (&s, replacement, &nc);
  fail_unless_equals_int (nc, 25);
  fail_if (same_positions (a, c, 25));

  s.seed = 42;
  s.cycle = 1;
  d = plan_once (&s, replacement, &nd);
  fail_unless_equals_int (nd, 25);
  fail_if (same_positions (a, d, 25));

  s.cycle = 0;
  s.index = 1;
  e = plan_once (&s, replacement, &ne);
  fail_unless_equals_int (ne, 25);
  fail_if (same_positions (a, e, 25));

  g_free (a);
  g_free (b);
  g_free (c);
  g_free (d);
  g_free (e);
}

GST_START_TEST (test_determinism)
{
  check_determinism (TRUE);
  check_determinism (FALSE);
}

GST_END_TEST;

/* No two of @n patches of side @side overlap (hence none repeats). */
static void
check_no_overlap (const WsiPatchRecord * r, guint n, gint64 side)
{
  guint i, j;

  for (i = 0; i < n; i++)
    for (j = i + 1; j < n; j++)
      fail_unless (ABS (r[i].x - r[j].x) >= side ||
          ABS (r[i].y - r[j].y) >= side,
          "(%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") and (%"
          G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") overlap", r[i].x, r[i].y,
          r[j].x, r[j].y);
}

GST_START_TEST (test_without_replacement)
{
  GstHarness *h = sampler_new (NULL);
  TestSlide s;
  WsiPatchRecord *r;
  guint n, i, lattice;

  test_slide_init (&s);
  /* tissue 512 x 512 px: a non-overlapping lattice (step = footprint 256)
   * has 1 to 4 wholly-on-tissue positions depending on its origin, so a
   * visit asking for 1000 gets them all, each once. */
  s.tx0 = 64;
  s.tx1 = 96;
  s.ty0 = 64;
  s.ty1 = 96;
  g_object_set (h->element, "replacement", FALSE, "min-tissue", 1.0,
      "patches-per-slide", 1000, NULL);
  r = push_slide (h, &s, &n, NULL);
  lattice = 4;
  fail_unless (n >= 1 && n <= lattice, "%u positions", n);
  check_records (&s, r, n, 256, 256, 1.0);
  check_no_overlap (r, n, 256);
  g_free (r);

  /* a normal request gets exactly the count, still without overlap */
  test_slide_init (&s);
  g_object_set (h->element, "patches-per-slide", 30, "min-tissue", 0.5,
      NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 30);
  check_records (&s, r, n, 256, 256, 0.5);
  check_no_overlap (r, n, 256);
  /* drawn from a lattice but handed out shuffled, not in raster order */
  for (i = 1; i < n; i++)
    if (r[i].y < r[i - 1].y || (r[i].y == r[i - 1].y && r[i].x < r[i - 1].x))
      break;
  fail_unless (i < n, "records come in raster order");
  g_free (r);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_tiny_slide)
{
  GstBus *bus;
  GstHarness *h = sampler_new (&bus);
  TestSlide s;
  WsiPatchRecord *r;
  guint n;
  gchar *text;

  test_slide_init (&s);
  s.path = "/slides/tiny.tiff";
  s.width = 320;
  s.height = 200;
  r = push_slide (h, &s, &n, NULL);
  fail_unless (r == NULL);
  text = wsi_test_pop_message_text (bus, GST_MESSAGE_WARNING);
  fail_unless (text != NULL);
  fail_unless (strstr (text, "tiny.tiff") != NULL, "%s", text);
  fail_unless (strstr (text, "smaller than one patch") != NULL, "%s", text);
  g_free (text);
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "slides-skipped"), 1);
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "slides-sampled"), 0);
  sampler_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_unknown_mpp)
{
  GstBus *bus;
  GstHarness *h = sampler_new (&bus);
  TestSlide s;
  WsiPatchRecord *r;
  guint n;
  gchar *text;

  test_slide_init (&s);
  s.mpp = 0.0;
  s.path = "/slides/nompp.tiff";
  g_object_set (h->element, "target-mpp", 0.5, NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless (r == NULL);
  text = wsi_test_pop_message_text (bus, GST_MESSAGE_WARNING);
  fail_unless (text != NULL);
  fail_unless (strstr (text, "nompp.tiff") != NULL, "%s", text);
  fail_unless (strstr (text, "default-mpp") != NULL, "%s", text);
  g_free (text);

  /* without target-mpp the same slide is sampled at level 0, mpp 0 */
  g_object_set (h->element, "target-mpp", 0.0, NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 100);
  fail_unless_equals_float (r[0].out_mpp, 0.0f);
  g_free (r);
  sampler_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_rejected_slide)
{
  GstBus *bus;
  GstHarness *h = sampler_new (&bus);
  TestSlide s;
  WsiPatchRecord *r;
  guint n;

  test_slide_init (&s);
  s.rejected = TRUE;
  r = push_slide (h, &s, &n, NULL);
  fail_unless (r == NULL);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING) == NULL);
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "slides-skipped"), 1);

  /* the next, accepted slide is sampled normally */
  s.rejected = FALSE;
  s.index = 1;
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 100);
  g_free (r);
  sampler_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_cycle_without_patch_errors)
{
  GstBus *bus;
  GstHarness *h = sampler_new (&bus);
  TestSlide s;
  WsiPatchRecord *r;
  guint n;
  gchar *text;

  test_slide_init (&s);
  s.tx1 = s.tx0;                /* blank mask */
  r = push_slide (h, &s, &n, NULL);
  fail_unless (r == NULL);
  s.index = 1;
  s.rejected = TRUE;
  r = push_slide (h, &s, &n, NULL);
  fail_unless (r == NULL);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR) == NULL);

  /* the first slide of cycle 1 finds that cycle 0 gave nothing */
  s.index = 0;
  s.cycle = 1;
  s.rejected = FALSE;
  fail_unless_equals_int (gst_harness_push (h, test_slide_buffer (&s, 2)),
      GST_FLOW_ERROR);
  text = wsi_test_pop_message_text (bus, GST_MESSAGE_ERROR);
  fail_unless (text != NULL);
  fail_unless (strstr (text, "whole pass") != NULL, "%s", text);
  g_free (text);
  sampler_free (h, bus);
}

GST_END_TEST;

/* A drop that arrives after WSI_DELIVERY_KEPT_CYCLES later cycles began
 * (patches in flight far behind the planner) is counted, and the sampler
 * warns once that a whole-pass loss can no longer be detected. */
GST_START_TEST (test_forgotten_cycle_drop_warns)
{
  GstBus *bus;
  GstHarness *h = sampler_new (&bus);
  TestSlide s;
  WsiPatchRecord *r;
  guint n, i;
  gchar *text;

  test_slide_init (&s);
  r = push_slide (h, &s, &n, NULL);
  fail_unless (n > 0);
  g_free (r);
  s.cycle = WSI_DELIVERY_KEPT_CYCLES;   /* takes cycle 0's slot */
  r = push_slide (h, &s, &n, NULL);
  fail_unless (n > 0);
  g_free (r);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING) == NULL);

  for (i = 0; i < 2; i++)
    fail_unless (gst_harness_push_upstream_event (h,
            wsi_event_new_patch_dropped (0, 0, i, "/slides/a.svs", "late")));
  text = wsi_test_pop_message_text (bus, GST_MESSAGE_WARNING);
  fail_unless (text != NULL);
  fail_unless (strstr (text, "can no longer be detected") != NULL, "%s", text);
  g_free (text);
  /* Once per stream. */
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING) == NULL);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR) == NULL);
  sampler_free (h, bus);
}

GST_END_TEST;

/* A cycle where only some slides give patches goes on. */
GST_START_TEST (test_cycle_with_patch_continues)
{
  GstHarness *h = sampler_new (NULL);
  TestSlide s;
  WsiPatchRecord *r;
  guint n;

  test_slide_init (&s);
  s.rejected = TRUE;
  r = push_slide (h, &s, &n, NULL);
  fail_unless (r == NULL);
  s.index = 1;
  s.rejected = FALSE;
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 100);
  g_free (r);
  s.index = 0;
  s.cycle = 1;
  s.rejected = TRUE;
  r = push_slide (h, &s, &n, NULL);
  fail_unless (r == NULL);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A finite run that plans nothing at all (only blank, tiny, mpp-less or
 * rejected slides) is an error, not a quiet exit. */
GST_START_TEST (test_eos_without_patch_errors)
{
  GstBus *bus;
  GstHarness *h = sampler_new (&bus);
  TestSlide s;
  WsiPatchRecord *r;
  guint n;
  gchar *text;
  GstEvent *event;

  test_slide_init (&s);
  s.rejected = TRUE;
  r = push_slide (h, &s, &n, NULL);
  fail_unless (r == NULL);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  text = wsi_test_pop_message_text (bus, GST_MESSAGE_ERROR);
  fail_unless (text != NULL);
  fail_unless (strstr (text, "without a single patch") != NULL, "%s", text);
  fail_unless (strstr (text, "rejected by tissuemask") != NULL, "%s", text);
  g_free (text);
  /* EOS still travels downstream */
  while ((event = gst_harness_try_pull_event (h))) {
    gboolean eos = GST_EVENT_TYPE (event) == GST_EVENT_EOS;
    gst_event_unref (event);
    if (eos)
      break;
  }
  fail_unless (event != NULL);
  sampler_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_meta_offset_sequence_time)
{
  GstHarness *h = sampler_new (NULL);
  TestSlide s;
  WsiPatchRecord *a, *b;
  guint na, nb, i;
  GstBuffer *out;
  GstStructure *meta;
  gint64 width = 0;
  guint index = 99;
  GstSegment segment;

  test_slide_init (&s);
  s.index = 3;
  g_object_set (h->element, "patches-per-slide", 10, NULL);
  a = push_slide (h, &s, &na, &out);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (out), 7);
  meta = wsi_slide_meta_get (out);
  fail_unless (meta != NULL);
  fail_unless_equals_string (gst_structure_get_string (meta, "path"), s.path);
  fail_unless_equals_string (gst_structure_get_string (meta, "label"),
      "tumour");
  fail_unless (gst_structure_get_int64 (meta, "width", &width));
  fail_unless_equals_int64 (width, s.width);
  fail_unless (gst_structure_get_uint (meta, "index", &index));
  fail_unless_equals_int (index, 3);
  gst_buffer_unref (out);

  s.index = 4;
  b = push_slide (h, &s, &nb, NULL);
  fail_unless_equals_int (na, 10);
  fail_unless_equals_int (nb, 10);
  /* sequence is patchinterleave's to write; time never goes back */
  for (i = 0; i < 10; i++) {
    fail_unless_equals_uint64 (a[i].sequence, 0);
    fail_unless_equals_uint64 (b[i].sequence, 0);
    fail_unless (a[i].created_ns > 0);
    if (i > 0)
      fail_unless (a[i].created_ns >= a[i - 1].created_ns);
    fail_unless (b[i].created_ns >= a[9].created_ns);
  }
  g_free (a);
  g_free (b);

  /* a flush leaves the element working */
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  a = push_slide (h, &s, &na, NULL);
  fail_unless_equals_int (na, 10);
  g_free (a);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_caps_out)
{
  GstHarness *h = sampler_new (NULL);
  TestSlide s;
  WsiPatchRecord *r;
  guint n;
  GstCaps *caps;

  test_slide_init (&s);
  r = push_slide (h, &s, &n, NULL);
  g_free (r);
  caps = gst_pad_get_current_caps (h->sinkpad);
  fail_unless (caps != NULL);
  fail_unless (gst_structure_has_name (gst_caps_get_structure (caps, 0),
          WSI_PATCHES_MEDIA_TYPE));
  gst_caps_unref (caps);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_state_cycles)
{
  GstElement *pipeline, *src, *sampler, *sink;
  guint i;

  for (i = 0; i < 3; i++) {
    pipeline = gst_parse_launch ("appsrc name=src format=buffers "
        "caps=application/x-wsi-slide ! patchsampler name=s "
        "patches-per-slide=5 ! fakesink name=sink sync=false", NULL);
    fail_unless (pipeline != NULL);
    src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
    sampler = gst_bin_get_by_name (GST_BIN (pipeline), "s");
    sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");

    {
      guint round;

      for (round = 0; round < 2; round++) {
        TestSlide s;
        GstFlowReturn ret;
        GstBuffer *slide;

        fail_unless_equals_int (gst_element_set_state (pipeline,
                GST_STATE_PLAYING), GST_STATE_CHANGE_ASYNC);
        test_slide_init (&s);
        slide = test_slide_buffer (&s, 0);
        g_signal_emit_by_name (src, "push-buffer", slide, &ret);
        gst_buffer_unref (slide);
        g_signal_emit_by_name (src, "end-of-stream", &ret);
        wsi_test_wait_eos (pipeline, GST_CLOCK_TIME_NONE);
        fail_unless_equals_uint64 (wsi_test_get_u64 (sampler,
                "patches-planned"), 5);
        fail_unless_equals_int (gst_element_set_state (pipeline,
                GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
      }
    }
    gst_object_unref (src);
    gst_object_unref (sampler);
    gst_object_unref (sink);
    gst_object_unref (pipeline);
  }
}

GST_END_TEST;

GST_START_TEST (test_bad_properties)
{
  GstElement *e = gst_element_factory_make ("patchsampler", NULL);
  guint size;
  gint per_slide;
  gdouble tissue;

  fail_unless (e != NULL);
  /* numbers outside their range: no warning, the previous value kept, no
   * start (wsirefusal.h; GLib used to warn and the element ran on) */
  g_object_set (e, "patch-size", 4, NULL);
  g_object_set (e, "patch-size", 10000, NULL);
  g_object_get (e, "patch-size", &size, NULL);
  fail_unless_equals_int (size, 256);

  g_object_set (e, "min-tissue", 1.5, NULL);
  g_object_get (e, "min-tissue", &tissue, NULL);
  fail_unless_equals_float (tissue, 0.5);

  g_object_set (e, "patches-per-slide", -2, NULL);
  wsi_test_assert_refuses_start (e, GST_STATE_READY,
      "patch-size=\"10000\" (accepted: an integer from 8 to 8192)");
  wsi_test_assert_refuses_start (e, GST_STATE_READY, "min-tissue=\"1.5\"");
  /* ours to refuse: no warning, the previous value kept, no start */
  g_object_set (e, "patches-per-slide", 0, NULL);
  g_object_get (e, "patches-per-slide", &per_slide, NULL);
  fail_unless_equals_int (per_slide, 100);
  wsi_test_assert_refuses_start (e, GST_STATE_READY,
      "patches-per-slide=\"0\"");

  g_object_set (e, "target-mpp", -0.5, NULL);
  g_object_set (e, "level", -3, NULL);
  g_object_set (e, "target-mpp", NAN, NULL);
  wsi_test_assert_refuses_start (e, GST_STATE_READY, "target-mpp=\"nan\"");
  wsi_test_assert_refuses_start (e, GST_STATE_READY, "level=\"-3\"");

  /* good values stick */
  g_object_set (e, "patch-size", 224, "patches-per-slide", -1,
      "min-tissue", 0.25, "target-mpp", 0.0, "level", 0, NULL);
  g_object_get (e, "patch-size", &size, "patches-per-slide", &per_slide,
      "min-tissue", &tissue, NULL);
  fail_unless_equals_int (size, 224);
  fail_unless_equals_int (per_slide, -1);
  fail_unless_equals_float (tissue, 0.25);
  /* a good value after a refused one: the refusal is forgotten */
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_object_unref (e);
}

GST_END_TEST;

/* patches-per-slide=-1 means "all" only on a grid; random plans the
 * default count and says so. */
GST_START_TEST (test_random_unlimited_warns)
{
  GstBus *bus;
  GstHarness *h = sampler_new (&bus);
  TestSlide s;
  WsiPatchRecord *r;
  guint n;
  gchar *text;

  test_slide_init (&s);
  g_object_set (h->element, "patches-per-slide", -1, NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 100);
  g_free (r);
  text = wsi_test_pop_message_text (bus, GST_MESSAGE_WARNING);
  fail_unless (text != NULL);
  fail_unless (strstr (text, "patches-per-slide") != NULL, "%s", text);
  g_free (text);
  sampler_free (h, bus);
}

GST_END_TEST;

/* A slide with a sliver of tissue still gives the full count once
 * max-attempts runs out (the rest come from a lattice), all on tissue. */
static void
check_sliver (guint max_attempts)
{
  GstHarness *h = sampler_new (NULL);
  TestSlide s;
  WsiPatchRecord *r;
  guint n, i, distinct_y = 0;

  test_slide_init (&s);
  s.tx1 = s.tx0 + 20;           /* 320 x 1600 px of tissue */
  g_object_set (h->element, "patches-per-slide", 500, "max-attempts",
      max_attempts, "min-tissue", 1.0, NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 500);
  check_records (&s, r, n, 256, 256, 1.0);
  for (i = 1; i < n; i++)
    distinct_y += r[i].y != r[0].y;
  fail_unless (distinct_y > 0);
  g_free (r);
  gst_harness_teardown (h);
}

GST_START_TEST (test_little_tissue_full_count)
{
  check_sliver (0);
  check_sliver (1);
}

GST_END_TEST;

/* ---- finite runs: max-patches and rank-quota ---------------------------- */

/* A slide buffer with the rank fields wsislidesrc adds. */
static GstBuffer *
ranked_slide_buffer (const TestSlide * s, guint rank, guint rank_slides_min)
{
  GstBuffer *buf = test_slide_buffer (s, s->index);

  gst_structure_set (wsi_slide_meta_get (buf), "rank", G_TYPE_UINT, rank,
      "world-size", G_TYPE_UINT, 2, "rank-slides", G_TYPE_UINT,
      rank_slides_min + 1, "rank-slides-min", G_TYPE_UINT, rank_slides_min,
      NULL);
  return buf;
}

/* Pulls one buffer and returns its record count. */
static guint
pull_record_count (GstHarness * h)
{
  GstBuffer *buf = gst_harness_try_pull (h);
  guint n;

  fail_unless (buf != NULL);
  n = gst_buffer_get_size (buf) / sizeof (WsiPatchRecord);
  gst_buffer_unref (buf);
  return n;
}

/* Number of EOS events that went downstream so far. */
static guint
count_eos_events (GstHarness * h)
{
  GstEvent *event;
  guint n = 0;

  while ((event = gst_harness_try_pull_event (h))) {
    n += GST_EVENT_TYPE (event) == GST_EVENT_EOS;
    gst_event_unref (event);
  }
  return n;
}

GST_START_TEST (test_max_patches_truncates_and_stops)
{
  GstBus *bus;
  GstHarness *h = sampler_new (&bus);
  TestSlide s;
  guint i;

  g_object_set (h->element, "max-patches", (gint64) 250,
      "patches-per-slide", 100, NULL);
  fail_unless_equals_int64 (wsi_test_get_i64 (h->element, "quota"), -1);
  test_slide_init (&s);
  for (i = 0; i < 2; i++) {
    s.index = i;
    fail_unless_equals_int (gst_harness_push (h, test_slide_buffer (&s, i)),
        GST_FLOW_OK);
    fail_unless_equals_int (pull_record_count (h), 100);
  }
  fail_unless_equals_int64 (wsi_test_get_i64 (h->element, "quota"), 250);
  fail_unless_equals_int (count_eos_events (h), 0);

  /* the third slide's plan is cut to the 50 left, then the stream ends */
  s.index = 2;
  fail_unless_equals_int (gst_harness_push (h, test_slide_buffer (&s, 2)),
      GST_FLOW_EOS);
  fail_unless_equals_int (pull_record_count (h), 50);
  fail_unless_equals_int (count_eos_events (h), 1);
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "patches-planned"), 250);

  /* later slides are refused, and upstream's own EOS is not sent twice */
  s.index = 3;
  fail_unless_equals_int (gst_harness_push (h, test_slide_buffer (&s, 3)),
      GST_FLOW_EOS);
  fail_unless (gst_harness_try_pull (h) == NULL);
  gst_harness_push_event (h, gst_event_new_eos ());
  fail_unless_equals_int (count_eos_events (h), 0);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR) == NULL);
  sampler_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_rank_quota_from_meta)
{
  GstHarness *h = sampler_new (NULL);
  TestSlide s;

  g_object_set (h->element, "rank-quota", TRUE, "patches-per-slide", 30,
      NULL);
  test_slide_init (&s);
  /* quota = rank-slides-min (2) x patches-per-slide (30) */
  fail_unless_equals_int (gst_harness_push (h, ranked_slide_buffer (&s, 1,
              2)), GST_FLOW_OK);
  fail_unless_equals_int64 (wsi_test_get_i64 (h->element, "quota"), 60);
  fail_unless_equals_int (pull_record_count (h), 30);
  s.cycle = 1;                  /* a revisit fills the rest */
  fail_unless_equals_int (gst_harness_push (h, ranked_slide_buffer (&s, 1,
              2)), GST_FLOW_EOS);
  fail_unless_equals_int (pull_record_count (h), 30);
  fail_unless_equals_int (count_eos_events (h), 1);
  gst_harness_teardown (h);

  /* with max-patches as well, the smaller wins */
  h = sampler_new (NULL);
  g_object_set (h->element, "rank-quota", TRUE, "patches-per-slide", 30,
      "max-patches", (gint64) 45, NULL);
  s.cycle = 0;
  fail_unless_equals_int (gst_harness_push (h, ranked_slide_buffer (&s, 1,
              2)), GST_FLOW_OK);
  fail_unless_equals_int64 (wsi_test_get_i64 (h->element, "quota"), 45);
  fail_unless_equals_int (pull_record_count (h), 30);
  fail_unless_equals_int (gst_harness_push (h, ranked_slide_buffer (&s, 1,
              2)), GST_FLOW_EOS);
  fail_unless_equals_int (pull_record_count (h), 15);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_rank_quota_shortfall_errors)
{
  GstBus *bus;
  GstHarness *h = sampler_new (&bus);
  TestSlide s;
  gchar *text;

  g_object_set (h->element, "rank-quota", TRUE, "patches-per-slide", 30,
      NULL);
  test_slide_init (&s);
  fail_unless_equals_int (gst_harness_push (h, ranked_slide_buffer (&s, 1,
              3)), GST_FLOW_OK);
  fail_unless_equals_int (pull_record_count (h), 30);
  /* the source ends (cycle=false) before 3 x 30 patches */
  gst_harness_push_event (h, gst_event_new_eos ());
  text = wsi_test_pop_message_text (bus, GST_MESSAGE_ERROR);
  fail_unless (text != NULL);
  fail_unless (strstr (text, "rank 1 delivered only 30 of its quota of 90 "
          "patches") != NULL, "%s", text);
  fail_unless (strstr (text, "cycle=true") != NULL, "%s", text);
  g_free (text);
  sampler_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_rank_quota_needs_rank_meta)
{
  GstBus *bus;
  GstHarness *h = sampler_new (&bus);
  TestSlide s;
  gchar *text;

  g_object_set (h->element, "rank-quota", TRUE, NULL);
  test_slide_init (&s);
  fail_unless_equals_int (gst_harness_push (h, test_slide_buffer (&s, 0)),
      GST_FLOW_ERROR);
  text = wsi_test_pop_message_text (bus, GST_MESSAGE_ERROR);
  fail_unless (text != NULL && strstr (text, "rank-slides-min") != NULL,
      "%s", GST_STR_NULL (text));
  g_free (text);
  sampler_free (h, bus);
}

GST_END_TEST;

/* align=tile snaps every position down to the tile grid of the level that
 * will be read: level 0 (240 px tiles) for 256 px patches at 0.25 um/px,
 * level 1 (downsample 4, 256 px tiles = 1024 level-0 px) at 1 um/px. */
static void
check_aligned (gdouble target_mpp, gint64 grid)
{
  GstHarness *h = sampler_new (NULL);
  const gint64 tiles[3] = { 240, 256, 256 };
  TestSlide s;
  WsiPatchRecord *aligned, *drawn;
  GstBuffer *buf;
  GstStructure *meta;
  guint i, n, n_drawn, moved = 0;

  test_slide_init (&s);
  g_object_set (h->element, "patch-size", 256, "target-mpp", target_mpp,
      "patches-per-slide", 64, "min-tissue", 0.0, NULL);
  gst_harness_play (h);

  drawn = push_slide (h, &s, &n_drawn, NULL);
  gst_util_set_object_arg (G_OBJECT (h->element), "align", "tile");
  buf = test_slide_buffer (&s, 7);
  meta = wsi_slide_meta_get (buf);
  wsi_structure_set_int64_array (meta, "level-tile-widths", tiles, 3);
  wsi_structure_set_int64_array (meta, "level-tile-heights", tiles, 3);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  buf = gst_harness_pull (h);
  n = gst_buffer_get_size (buf) / sizeof (WsiPatchRecord);
  aligned = g_malloc (gst_buffer_get_size (buf));
  gst_buffer_extract (buf, 0, aligned, gst_buffer_get_size (buf));
  gst_buffer_unref (buf);

  /* Same draws (the stream restarts at the same slide), then snapped. */
  fail_unless_equals_int (n, n_drawn);
  for (i = 0; i < n; i++) {
    fail_unless_equals_int64 (aligned[i].x % grid, 0);
    fail_unless_equals_int64 (aligned[i].y % grid, 0);
    fail_unless_equals_int64 (aligned[i].x, drawn[i].x - drawn[i].x % grid);
    fail_unless_equals_int64 (aligned[i].y, drawn[i].y - drawn[i].y % grid);
    moved += aligned[i].x != drawn[i].x || aligned[i].y != drawn[i].y;
  }
  fail_unless (moved > 0);
  g_free (aligned);
  g_free (drawn);
  gst_harness_teardown (h);
}

GST_START_TEST (test_align_tile)
{
  check_aligned (0.25, 240);
  check_aligned (1.0, 1024);
}

GST_END_TEST;

/* A target far finer than the scan warns that patches are upsampled. */
GST_START_TEST (test_target_finer_than_scan_warns)
{
  GstBus *bus;
  GstHarness *h = sampler_new (&bus);
  TestSlide s;
  WsiPatchRecord *r;
  guint n;
  gchar *text;

  test_slide_init (&s);         /* 0.25 um/px */
  g_object_set (h->element, "patch-size", 64, "target-mpp", 0.01, NULL);
  gst_harness_play (h);
  r = push_slide (h, &s, &n, NULL);
  g_free (r);
  text = wsi_test_pop_message_text (bus, GST_MESSAGE_WARNING);
  fail_unless (text != NULL, "no warning");
  fail_unless (strstr (text, "upsampled from 3 level-0 pixels") != NULL, "%s",
      text);
  g_free (text);
  sampler_free (h, bus);
}

GST_END_TEST;

/* Checks a magnification-mode record: inside the slide, on tissue (pixel
 * by pixel), out_mpp what its own footprint gives. */
static void
check_magnification_record (const TestSlide * s, const WsiPatchRecord * r,
    guint out_size, gdouble min_tissue)
{
  fail_unless (r->x >= 0 && r->x + r->footprint <= s->width);
  fail_unless (r->y >= 0 && r->y + r->footprint <= s->height);
  fail_unless_equals_int (r->out_size, out_size);
  fail_unless_equals_int (r->cycle, s->cycle);
  fail_unless_equals_uint64 (r->level, WSI_LEVEL_UNSET);
  fail_unless (fabs (r->tissue_fraction - brute_force_fraction (s, r->x, r->y,
              r->footprint)) < 1e-5);
  fail_unless (r->tissue_fraction >= min_tissue - 1e-6);
  fail_unless (fabs (r->out_mpp - r->footprint * s->mpp / out_size) < 1e-6);
}

/* multi-magnification: each patch one of target-mpps, as often as the
 * weights say (chi-square, df 3, 0.1 % tail 16.3), exact out_mpp. */
GST_START_TEST (test_multi_magnification)
{
  const gdouble mpps[] = { 0.25, 0.5, 1.0, 2.0 };
  const gdouble p[] = { 0.4, 0.3, 0.2, 0.1 };
  GstHarness *h = sampler_new (NULL);
  guint counts[4] = { 0, }, n, i, k;
  gdouble chi = 0.0;
  WsiPatchRecord *r;
  TestSlide s;
  gchar *text;

  test_slide_init (&s);
  g_object_set (h->element, "mode", 2, "target-mpps", "0.25, 0.5,1,2",
      "mpp-weights", "4,3,2,1", "patches-per-slide", 1000, NULL);
  g_object_get (h->element, "target-mpps", &text, NULL);
  fail_unless_equals_string (text, "0.25,0.5,1,2");
  g_free (text);
  r = push_slide (h, &s, &n, NULL);
  fail_unless_equals_int (n, 1000);
  for (i = 0; i < n; i++) {
    check_magnification_record (&s, &r[i], 256, 0.5);
    for (k = 0; k < 4 && r[i].out_mpp != (gfloat) mpps[k]; k++);
    fail_unless (k < 4, "out_mpp %g", r[i].out_mpp);
    fail_unless_equals_int (r[i].footprint, (guint) (256 * mpps[k] / 0.25));
    counts[k]++;
  }
  for (k = 0; k < 4; k++)
    chi += (counts[k] - p[k] * n) * (counts[k] - p[k] * n) / (p[k] * n);
  fail_unless (chi < 16.3, "%u %u %u %u", counts[0], counts[1], counts[2],
      counts[3]);
  g_free (r);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* continuous-magnification: every patch its own resolution in range, on
 * tissue at that resolution, for each distribution. */
GST_START_TEST (test_continuous_magnification)
{
  GstHarness *h = sampler_new (NULL);
  WsiPatchRecord *r;
  TestSlide s;
  guint n, i, dist, at_ends;
  GHashTable *footprints;

  test_slide_init (&s);
  s.mpp = 0.26;
  for (dist = 0; dist < 3; dist++) {
    g_object_set (h->element, "mode", 3, "mpp-min", 0.3, "mpp-max", 1.5,
        "mpp-distribution", dist, "maxavg-lambda", 0.5,
        "patches-per-slide", 400, "patch-size", 224, NULL);
    r = push_slide (h, &s, &n, NULL);
    fail_unless_equals_int (n, 400);
    footprints = g_hash_table_new (g_direct_hash, g_direct_equal);
    at_ends = 0;
    for (i = 0; i < n; i++) {
      check_magnification_record (&s, &r[i], 224, 0.5);
      /* rounding the footprint moves the mpp by < half a level-0 pixel */
      fail_unless (r[i].out_mpp > 0.3 - 0.26 / 224 &&
          r[i].out_mpp < 1.5 + 0.26 / 224, "%g", r[i].out_mpp);
      g_hash_table_add (footprints, GUINT_TO_POINTER (r[i].footprint));
      at_ends += r[i].footprint == 258 || r[i].footprint == 1292;
    }
    fail_unless (g_hash_table_size (footprints) > 100, "distribution %u: "
        "%u footprints", dist, g_hash_table_size (footprints));
    /* minmax puts about 1/(2 (1 + ln 5)) = 19 % at each end */
    if (dist == 2)
      fail_unless (at_ends > 100 && at_ends < 210, "%u at the ends", at_ends);
    else
      fail_unless (at_ends < 20, "%u at the ends", at_ends);
    g_hash_table_unref (footprints);
    g_free (r);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A slide without mpp is skipped with the usual warning, naming the mode. */
GST_START_TEST (test_magnification_unknown_mpp)
{
  GstBus *bus;
  GstHarness *h = sampler_new (&bus);
  WsiPatchRecord *r;
  TestSlide s;
  guint n;
  gchar *text;

  test_slide_init (&s);
  s.mpp = 0;
  s.path = "/slides/no-mpp.tiff";
  g_object_set (h->element, "mode", 2, NULL);
  r = push_slide (h, &s, &n, NULL);
  fail_unless (r == NULL);
  text = wsi_test_pop_message_text (bus, GST_MESSAGE_WARNING);
  fail_unless (text != NULL);
  fail_unless (strstr (text, "no-mpp.tiff") != NULL, "%s", text);
  fail_unless (strstr (text, "multi-magnification") != NULL, "%s", text);
  g_free (text);
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "slides-skipped"),
      1);
  sampler_free (h, bus);
}

GST_END_TEST;

/* Settings that contradict each other stop the stream with a message. */
static void
check_settings_error (const gchar * mode, const gchar * prop,
    const gchar * value, const gchar * expected)
{
  GstBus *bus;
  GstHarness *h = sampler_new (&bus);
  TestSlide s;
  gchar *text;

  test_slide_init (&s);
  gst_util_set_object_arg (G_OBJECT (h->element), "mode", mode);
  gst_util_set_object_arg (G_OBJECT (h->element), prop, value);
  fail_unless_equals_int (gst_harness_push (h, test_slide_buffer (&s, 0)),
      GST_FLOW_ERROR);
  text = wsi_test_pop_message_text (bus, GST_MESSAGE_ERROR);
  fail_unless (text != NULL);
  fail_unless (strstr (text, expected) != NULL, "%s", text);
  g_free (text);
  sampler_free (h, bus);
}

GST_START_TEST (test_magnification_bad_settings)
{
  GstElement *e = gst_element_factory_make ("patchsampler", NULL);
  gchar *text;
  gdouble v;

  /* refused one by one, old value kept, and the element will not start:
   * one error names every refused value */
  g_object_set (e, "target-mpps", "0.5,abc", NULL);
  g_object_get (e, "target-mpps", &text, NULL);
  fail_unless_equals_string (text, "0.25,0.5,1,2");
  g_free (text);
  g_object_set (e, "target-mpps", "", NULL);
  g_object_set (e, "mpp-weights", "1,-2", NULL);
  g_object_set (e, "mpp-min", 0.0, NULL);
  g_object_set (e, "maxavg-lambda", 0.0, NULL);     /* outside its range */
  g_object_get (e, "target-mpps", &text, "mpp-min", &v, NULL);
  fail_unless_equals_string (text, "0.25,0.5,1,2");
  fail_unless_equals_float (v, 0.25);
  g_free (text);
  wsi_test_assert_refuses_start (e, GST_STATE_READY, "target-mpps=\"\"");
  wsi_test_assert_refuses_start (e, GST_STATE_READY, "mpp-weights=\"1,-2\"");
  wsi_test_assert_refuses_start (e, GST_STATE_READY, "mpp-min=\"0\"");
  /* good values replace the refused ones: it starts */
  g_object_set (e, "target-mpps", "0.5,1", "mpp-weights", "", "mpp-min", 0.5,
      "maxavg-lambda", 1.0, NULL);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_object_unref (e);

  /* refused together, at the first slide */
  check_settings_error ("continuous-magnification", "mpp-min", "2.5",
      "mpp-min < mpp-max");
  check_settings_error ("multi-magnification", "mpp-weights", "1,2,3",
      "mpp-weights has 3 entries");
  check_settings_error ("multi-magnification", "replacement", "false",
      "replacement=false");
}

GST_END_TEST;

/* replacement=false across the cycles of one slide (one visit per cycle):
 * every tissue position of the non-overlapping lattice once before any
 * repeats, none overlapping, the cycle in every record. */
GST_START_TEST (test_without_replacement_across_cycles)
{
  GstHarness *h = sampler_new (NULL);
  GArray *all = g_array_new (FALSE, FALSE, sizeof (WsiPatchRecord));
  const WsiPatchRecord *r;
  WsiPatchRecord *v;
  GHashTable *seen = g_hash_table_new (g_int64_hash, g_int64_equal);
  gint64 *keys;
  TestSlide s;
  guint n, cycle, i, n_cells = 0;
  gint64 x, y, x0, y0;

  test_slide_init (&s);
  g_object_set (h->element, "replacement", FALSE, "patches-per-slide", 9,
      NULL);
  for (cycle = 0; cycle < 12; cycle++) {
    s.cycle = cycle;
    v = push_slide (h, &s, &n, NULL);
    fail_unless_equals_int (n, 9);
    check_records (&s, v, n, 256, 256, 0.5);
    g_array_append_vals (all, v, n);
    g_free (v);
  }
  r = (const WsiPatchRecord *) all->data;
  /* the lattice: origin from any position, step the footprint */
  x0 = r[0].x % 256;
  y0 = r[0].y % 256;
  for (y = y0; y + 256 <= s.height; y += 256)
    for (x = x0; x + 256 <= s.width; x += 256)
      n_cells += brute_force_fraction (&s, x, y, 256) >= 0.5;
  fail_unless (n_cells > 27 && n_cells < all->len - 9, "%u cells", n_cells);
  keys = g_new (gint64, n_cells);
  for (i = 0; i < n_cells; i++) {
    keys[i] = r[i].y * s.width + r[i].x;
    fail_unless (g_hash_table_add (seen, &keys[i]), "record %u repeats a "
        "position before the slide's %u positions are exhausted", i, n_cells);
  }
  check_no_overlap (r, n_cells, 256);
  /* the next epoch starts over on the same positions */
  for (i = n_cells; i < all->len; i++) {
    gint64 key = r[i].y * s.width + r[i].x;

    fail_unless (g_hash_table_contains (seen, &key));
  }
  g_free (keys);
  g_hash_table_unref (seen);
  g_array_unref (all);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
patchsampler_suite (void)
{
  Suite *s = suite_create ("patchsampler");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_random_count_and_bounds);
  tcase_add_test (tc, test_random_wholly_on_tissue);
  tcase_add_test (tc, test_random_spread_on_tissue);
  tcase_add_test (tc, test_random_edge_overlap);
  tcase_add_test (tc, test_no_mask_is_all_tissue);
  tcase_add_test (tc, test_grid_count);
  tcase_add_test (tc, test_grid_stride);
  tcase_add_test (tc, test_grid_limited);
  tcase_add_test (tc, test_target_mpp);
  tcase_add_test (tc, test_level_mode);
  tcase_add_test (tc, test_determinism);
  tcase_add_test (tc, test_without_replacement);
  tcase_add_test (tc, test_tiny_slide);
  tcase_add_test (tc, test_unknown_mpp);
  tcase_add_test (tc, test_rejected_slide);
  tcase_add_test (tc, test_cycle_without_patch_errors);
  tcase_add_test (tc, test_forgotten_cycle_drop_warns);
  tcase_add_test (tc, test_cycle_with_patch_continues);
  tcase_add_test (tc, test_eos_without_patch_errors);
  tcase_add_test (tc, test_meta_offset_sequence_time);
  tcase_add_test (tc, test_caps_out);
  tcase_add_test (tc, test_state_cycles);
  tcase_add_test (tc, test_bad_properties);
  tcase_add_test (tc, test_random_unlimited_warns);
  tcase_add_test (tc, test_little_tissue_full_count);
  tcase_add_test (tc, test_max_patches_truncates_and_stops);
  tcase_add_test (tc, test_rank_quota_from_meta);
  tcase_add_test (tc, test_rank_quota_shortfall_errors);
  tcase_add_test (tc, test_rank_quota_needs_rank_meta);
  tcase_add_test (tc, test_align_tile);
  tcase_add_test (tc, test_target_finer_than_scan_warns);
  tcase_add_test (tc, test_multi_magnification);
  tcase_add_test (tc, test_continuous_magnification);
  tcase_add_test (tc, test_magnification_unknown_mpp);
  tcase_add_test (tc, test_magnification_bad_settings);
  tcase_add_test (tc, test_without_replacement_across_cycles);
  return s;
}

GST_CHECK_MAIN (patchsampler);
