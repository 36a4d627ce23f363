/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit tests for patchreader: pixels against direct OpenSlide reads, level
 * choice and area averaging, order and determinism with threads, caps,
 * failures, flushing and state changes. Slides are generated at test time;
 * the real slides in WSI_SHARED_SLIDES_DIR are used when present. */

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <gst/app/gstappsrc.h>
#include <gst/wsi/wsirecord.h>
#include <glib/gstdio.h>
#include <openslide.h>
#include <math.h>
#include <string.h>

#include "wsitestslide.h"
#include "wsitestutil.h"

#define PATCH 64

/* ---- slides ------------------------------------------------------------- */

static gchar *
test_path (const gchar * name)
{
  g_mkdir_with_parents (WSI_TEST_TMPDIR, 0755);
  return g_build_filename (WSI_TEST_TMPDIR, name, NULL);
}

/* A generic tiled TIFF, 1024x768, 3 levels (downsamples 1, 2, 4). */
static gchar *
make_slide (const gchar * name, guint32 seed)
{
  WsiTestSlideSpec spec;

  wsi_test_slide_spec_init (&spec);
  spec.width = 1024;
  spec.height = 768;
  spec.levels = 3;
  spec.level_step = 2;
  spec.seed = seed;
  spec.tissue_blobs = 4;
  return wsi_test_write_slide (WSI_TEST_TMPDIR, name, &spec);
}

static gchar *
make_damaged_slide (const gchar * name)
{
  WsiTestSlideSpec spec;
  GError *error = NULL;
  gchar *path = test_path (name);

  wsi_test_slide_spec_init (&spec);
  spec.width = 1024;
  spec.height = 768;
  fail_unless (wsi_test_slide_write_damaged_tiles (path, &spec, &error), "%s",
      error ? error->message : "?");
  return path;
}


/* ---- coordinate buffers ------------------------------------------------- */

static WsiPatchRecord
make_record (guint64 sequence, gint64 x, gint64 y, guint footprint,
    guint out_size)
{
  WsiPatchRecord r;

  memset (&r, 0, sizeof (r));
  r.sequence = sequence;
  r.x = x;
  r.y = y;
  r.footprint = footprint;
  r.out_size = out_size;
  r.level = WSI_LEVEL_UNSET;
  r.slide_index = 7;
  r.tissue_fraction = 1.0f;
  return r;
}

/* A coordinate buffer as patchinterleave sends it: the records and a
 * WsiSlideMeta describing the slide (described through OpenSlide when the
 * file opens, a bare path otherwise). */
static GstBuffer *
make_coords (const gchar * path, const gchar * label,
    const WsiPatchRecord * records, guint n)
{
  GstBuffer *buf = gst_buffer_new_memdup (records, n * sizeof (*records));
  GstStructure *s = wsi_slide_meta_add (buf);
  openslide_t *osr = openslide_open (path);

  gst_structure_set (s, "path", G_TYPE_STRING, path,
      "index", G_TYPE_UINT, 7, "label", G_TYPE_STRING, label, NULL);
  if (osr && openslide_get_error (osr) == NULL) {
    gint level, count = openslide_get_level_count (osr);
    gdouble *ds = g_newa (gdouble, count);
    gint64 *ws = g_newa (gint64, count), *hs = g_newa (gint64, count);

    for (level = 0; level < count; level++) {
      openslide_get_level_dimensions (osr, level, &ws[level], &hs[level]);
      ds[level] = openslide_get_level_downsample (osr, level);
    }
    gst_structure_set (s, "width", G_TYPE_INT64, ws[0],
        "height", G_TYPE_INT64, hs[0], "level-count", G_TYPE_INT, count, NULL);
    wsi_structure_set_double_array (s, "level-downsamples", ds, count);
    wsi_structure_set_int64_array (s, "level-widths", ws, count);
    wsi_structure_set_int64_array (s, "level-heights", hs, count);
  }
  if (osr)
    openslide_close (osr);
  return buf;
}

/* ---- reference pixels --------------------------------------------------- */

/* The region straight from OpenSlide, composited on white, packed RGB. */
static guint8 *
reference_rgb (const gchar * path, gint64 x, gint64 y, gint level, guint size)
{
  openslide_t *osr = openslide_open (path);
  guint32 *argb = g_new (guint32, (gsize) size * size);
  guint8 *rgb = g_new (guint8, (gsize) size * size * 3);
  gsize i;

  fail_unless (osr != NULL && openslide_get_error (osr) == NULL);
  openslide_read_region (osr, argb, x, y, level, size, size);
  fail_unless (openslide_get_error (osr) == NULL);
  for (i = 0; i < (gsize) size * size; i++) {
    guint32 p = argb[i], glass = 255 - (p >> 24);
    rgb[3 * i + 0] = ((p >> 16) & 0xff) + glass;
    rgb[3 * i + 1] = ((p >> 8) & 0xff) + glass;
    rgb[3 * i + 2] = (p & 0xff) + glass;
  }
  openslide_close (osr);
  g_free (argb);
  return rgb;
}

/* Area average written the plain 2D way: each output pixel is the mean of
 * the source square it covers, edge pixels weighted by the covered area. */
static gdouble
reference_area_value (const guint8 * src, guint in, guint out, guint ox,
    guint oy, guint c)
{
  gdouble s = (gdouble) in / out, sum = 0.0, area = 0.0;
  gdouble x0 = ox * s, x1 = (ox + 1) * s, y0 = oy * s, y1 = (oy + 1) * s;
  guint x, y;

  for (y = (guint) floor (y0); y < MIN ((guint) ceil (y1), in); y++) {
    gdouble wy = MIN (y1, y + 1.0) - MAX (y0, (gdouble) y);
    for (x = (guint) floor (x0); x < MIN ((guint) ceil (x1), in); x++) {
      gdouble wx = MIN (x1, x + 1.0) - MAX (x0, (gdouble) x);
      sum += wx * wy * src[((gsize) y * in + x) * 3 + c];
      area += wx * wy;
    }
  }
  return sum / area;
}

/* ---- harness helpers ---------------------------------------------------- */

static GstHarness *
reader_harness (guint threads, const gchar * sink_caps)
{
  GstElement *reader = gst_element_factory_make ("patchreader", NULL);
  GstHarness *h;

  fail_unless (reader != NULL);
  /* before the harness starts it: threads apply at READY to PAUSED */
  g_object_set (reader, "threads", threads, NULL);
  h = gst_harness_new_with_element (reader, "sink", "src");
  gst_object_unref (reader);
  if (sink_caps)
    gst_harness_set_sink_caps_str (h, sink_caps);
  gst_harness_set_src_caps_str (h, WSI_PATCHES_MEDIA_TYPE);
  return h;
}

/* Pushes EOS and returns every buffer that came before it, in order. */
static GList *
finish_and_collect (GstHarness * h)
{
  GList *buffers = NULL;
  GstBuffer *buf = NULL;

  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  while (TRUE) {
    fail_unless (gst_harness_pull_until_eos (h, &buf),
        "no EOS came out of patchreader");
    if (buf == NULL)
      break;
    buffers = g_list_append (buffers, buf);
  }
  return buffers;
}

/* The patch as packed pixels (bpp bytes each), whatever the stride. */
static guint8 *
patch_pixels (GstHarness * h, GstBuffer * buf, guint * bpp, guint * size)
{
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  GstVideoInfo info;
  GstVideoFrame frame;
  guint8 *packed;
  guint y;

  fail_unless (caps != NULL);
  fail_unless (gst_video_info_from_caps (&info, caps));
  gst_caps_unref (caps);
  fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&info),
      GST_VIDEO_INFO_HEIGHT (&info));
  *size = GST_VIDEO_INFO_WIDTH (&info);
  *bpp = GST_VIDEO_INFO_COMP_PSTRIDE (&info, 0);
  fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_READ));
  packed = g_malloc ((gsize) *size * *size * *bpp);
  for (y = 0; y < *size; y++)
    memcpy (packed + (gsize) y * *size * *bpp,
        (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame, 0) +
        y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0), (gsize) *size * *bpp);
  gst_video_frame_unmap (&frame);
  return packed;
}

static WsiPatchRecord
patch_record (GstBuffer * buf, const gchar ** path, const gchar ** label)
{
  GstStructure *s = wsi_patch_meta_get (buf);
  const WsiPatchRecord *records;
  guint n, count = 0;

  fail_unless (s != NULL, "no WsiPatchMeta on the patch");
  fail_unless (gst_structure_get_uint (s, "count", &count));
  fail_unless_equals_int (count, 1);
  records = wsi_patch_meta_records (s, &n);
  fail_unless_equals_int (n, 1);
  if (path)
    *path = wsi_patch_meta_string (s, "paths", 0);
  if (label)
    *label = wsi_patch_meta_string (s, "labels", 0);
  return records[0];
}

/* Warnings the element posted, joined into one string. */
static gchar *
pop_warnings (GstBus * bus, guint * count)
{
  GString *all = g_string_new (NULL);
  GstMessage *msg;

  *count = 0;
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING)) != NULL) {
    GError *err = NULL;
    gchar *debug = NULL;

    gst_message_parse_warning (msg, &err, &debug);
    g_string_append_printf (all, "%s | %s\n", err->message, debug ? debug : "");
    (*count)++;
    g_error_free (err);
    g_free (debug);
    gst_message_unref (msg);
  }
  return g_string_free (all, FALSE);
}

/* ---- tests -------------------------------------------------------------- */

/* Each patch's meta names its slide's file URI and level-0 mpp as the
 * slide meta gave them (`uris`, `mpps`), so later stages (patchviews) open
 * the same file without reconstructing it; without a uri there is none. */
GST_START_TEST (test_patch_meta_carries_slide_uri_and_mpp)
{
  gchar *path = make_slide ("uri.tiff", 5);
  gchar *uri = g_filename_to_uri (path, NULL, NULL);
  GstHarness *h = reader_harness (1, NULL);
  WsiPatchRecord record = make_record (3, 100, 100, PATCH, PATCH);
  GstBuffer *coords = make_coords (path, "", &record, 1);
  GstStructure *slide = wsi_slide_meta_get (coords);
  GstStructure *meta;
  GList *out;

  gst_structure_set (slide, "uri", G_TYPE_STRING, uri, "mpp-x",
      G_TYPE_DOUBLE, 0.25, NULL);
  fail_unless_equals_int (gst_harness_push (h, coords), GST_FLOW_OK);
  out = finish_and_collect (h);
  fail_unless_equals_int (g_list_length (out), 1);
  meta = wsi_patch_meta_get (out->data);
  fail_unless_equals_string (wsi_patch_meta_string (meta, "uris", 0), uri);
  fail_unless_equals_float (wsi_patch_meta_mpp (meta, 0), 0.25);
  g_list_free_full (out, (GDestroyNotify) gst_buffer_unref);
  gst_harness_teardown (h);

  h = reader_harness (1, NULL);
  fail_unless_equals_int (gst_harness_push (h, make_coords (path, "",
              &record, 1)), GST_FLOW_OK);
  out = finish_and_collect (h);
  fail_unless_equals_int (g_list_length (out), 1);
  meta = wsi_patch_meta_get (out->data);
  fail_unless (wsi_patch_meta_string (meta, "uris", 0) == NULL);
  fail_unless_equals_float (wsi_patch_meta_mpp (meta, 0), 0.0);
  g_list_free_full (out, (GDestroyNotify) gst_buffer_unref);
  gst_harness_teardown (h);
  g_free (uri);
  g_free (path);
}

GST_END_TEST;

GST_START_TEST (test_native_pixels_match_openslide)
{
  gchar *path = make_slide ("native.tiff", 11);
  GstHarness *h = reader_harness (2, NULL);
  const gint64 pos[][2] = { {0, 0}, {300, 200}, {517, 341}, {990, 700},
  {1000, 740}
  };
  WsiPatchRecord records[G_N_ELEMENTS (pos)];
  GList *out, *l;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (pos); i++)
    records[i] = make_record (100 + i, pos[i][0], pos[i][1], PATCH, PATCH);
  fail_unless_equals_int (gst_harness_push (h, make_coords (path, "tumour",
              records, G_N_ELEMENTS (pos))), GST_FLOW_OK);
  out = finish_and_collect (h);
  fail_unless_equals_int (g_list_length (out), G_N_ELEMENTS (pos));

  for (l = out, i = 0; l; l = l->next, i++) {
    GstBuffer *buf = l->data;
    const gchar *p = NULL, *label = NULL;
    WsiPatchRecord r = patch_record (buf, &p, &label);
    guint bpp, size;
    guint8 *pixels = patch_pixels (h, buf, &bpp, &size);
    guint8 *ref = reference_rgb (path, pos[i][0], pos[i][1], 0, PATCH);

    fail_unless_equals_int (bpp, 3);
    fail_unless_equals_int (size, PATCH);
    fail_unless (memcmp (pixels, ref, PATCH * PATCH * 3) == 0,
        "patch %u differs from openslide_read_region", i);
    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (buf), 100 + i);
    fail_unless (!GST_BUFFER_PTS_IS_VALID (buf));
    fail_unless (!GST_BUFFER_DTS_IS_VALID (buf));
    fail_unless_equals_uint64 (r.sequence, 100 + i);
    fail_unless_equals_int (r.level, 0);
    fail_unless_equals_int (r.read_size, PATCH);
    fail_unless_equals_int (r.slide_index, 7);
    fail_unless_equals_string (p, path);
    fail_unless_equals_string (label, "tumour");
    g_free (pixels);
    g_free (ref);
  }
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "patches-read"),
      G_N_ELEMENTS (pos));

  g_list_free_full (out, (GDestroyNotify) gst_buffer_unref);
  gst_harness_teardown (h);
  g_free (path);
}

GST_END_TEST;

GST_START_TEST (test_resize_picks_level_and_averages)
{
  gchar *path = make_slide ("resize.tiff", 12);
  GstHarness *h = reader_harness (2, NULL);
  /* footprint, expected level, expected read size */
  const guint cases[][3] = {
    {2 * PATCH, 1, PATCH},      /* exactly level 1: no resize */
    {3 * PATCH, 1, 3 * PATCH / 2},      /* 1.5x down from level 1 */
    {4 * PATCH, 2, PATCH},      /* exactly level 2 */
    {5 * PATCH, 2, 5 * PATCH / 4},      /* 1.25x down from level 2 */
    {8 * PATCH, 2, 2 * PATCH},  /* 2x down from level 2: whole-number box */
    {12 * PATCH, 2, 3 * PATCH}, /* 3x, partly past the slide's edge */
  };
  WsiPatchRecord records[G_N_ELEMENTS (cases)];
  GList *out, *l;
  guint i;

  /* The exact area average (DCT-domain scaling is checked in libs/wsislide) */
  g_object_set (h->element, "dct-scaling", FALSE, NULL);
  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    records[i] = make_record (i, 200, 120, cases[i][0], PATCH);
  fail_unless_equals_int (gst_harness_push (h, make_coords (path, "",
              records, G_N_ELEMENTS (cases))), GST_FLOW_OK);
  out = finish_and_collect (h);
  fail_unless_equals_int (g_list_length (out), G_N_ELEMENTS (cases));

  for (l = out, i = 0; l; l = l->next, i++) {
    WsiPatchRecord r = patch_record (l->data, NULL, NULL);
    guint bpp, size, x, y, c, read = cases[i][2];
    guint8 *pixels = patch_pixels (h, l->data, &bpp, &size);
    guint8 *ref = reference_rgb (path, 200, 120, cases[i][1], read);
    gdouble max_diff = 0.0;

    fail_unless_equals_int (size, PATCH);
    fail_unless_equals_int (r.level, cases[i][1]);
    fail_unless_equals_int (r.read_size, read);
    for (y = 0; y < PATCH; y++)
      for (x = 0; x < PATCH; x++)
        for (c = 0; c < 3; c++) {
          gdouble want = reference_area_value (ref, read, PATCH, x, y, c);
          gdouble got = pixels[(y * PATCH + x) * 3 + c];
          max_diff = MAX (max_diff, fabs (want - got));
        }
    fail_unless (max_diff <= 1.0, "case %u: off by %.2f from the box average",
        i, max_diff);
    if (read == PATCH)
      fail_unless (memcmp (pixels, ref, PATCH * PATCH * 3) == 0);
    g_free (pixels);
    g_free (ref);
  }

  g_list_free_full (out, (GDestroyNotify) gst_buffer_unref);
  gst_harness_teardown (h);
  g_free (path);
}

GST_END_TEST;

/* Records spread over three slides and many buffers, mixed sizes. */
static GList *
read_many (guint threads, gchar ** paths, guint n_paths, guint n_buffers,
    guint per_buffer)
{
  GstHarness *h = reader_harness (threads, NULL);
  GRand *rand = g_rand_new_with_seed (42);
  guint64 sequence = 0;
  GList *out;
  guint b, i;

  for (b = 0; b < n_buffers; b++) {
    WsiPatchRecord *records = g_new (WsiPatchRecord, per_buffer);
    const gchar *path = paths[b % n_paths];

    for (i = 0; i < per_buffer; i++) {
      guint footprint = g_rand_boolean (rand) ? 32 : 80;
      records[i] = make_record (sequence++, g_rand_int_range (rand, 0, 900),
          g_rand_int_range (rand, 0, 650), footprint, 32);
    }
    fail_unless_equals_int (gst_harness_push (h, make_coords (path, path,
                records, per_buffer)), GST_FLOW_OK);
    g_free (records);
  }
  out = finish_and_collect (h);
  g_rand_free (rand);
  gst_harness_teardown (h);
  return out;
}

GST_START_TEST (test_order_kept_with_threads)
{
  gchar *paths[3] = { make_slide ("order-a.tiff", 1),
    make_slide ("order-b.tiff", 2), make_slide ("order-c.tiff", 3)
  };
  GList *out = read_many (4, paths, 3, 30, 10), *l;
  guint64 expected = 0;

  fail_unless_equals_int (g_list_length (out), 300);
  for (l = out; l; l = l->next, expected++) {
    const gchar *path = NULL;
    WsiPatchRecord r = patch_record (l->data, &path, NULL);

    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (l->data), expected);
    fail_unless_equals_uint64 (r.sequence, expected);
    /* 10 records per buffer, buffers round-robin over the slides */
    fail_unless_equals_string (path, paths[(expected / 10) % 3]);
  }
  g_list_free_full (out, (GDestroyNotify) gst_buffer_unref);
  g_free (paths[0]);
  g_free (paths[1]);
  g_free (paths[2]);
}

GST_END_TEST;

static gchar *
stream_digest (GList * buffers)
{
  GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
  GList *l;
  gchar *digest;

  for (l = buffers; l; l = l->next) {
    GstMapInfo map;
    WsiPatchRecord r = patch_record (l->data, NULL, NULL);

    fail_unless (gst_buffer_map (l->data, &map, GST_MAP_READ));
    g_checksum_update (sum, map.data, map.size);
    gst_buffer_unmap (l->data, &map);
    g_checksum_update (sum, (const guchar *) &r, sizeof (r));
  }
  digest = g_strdup (g_checksum_get_string (sum));
  g_checksum_free (sum);
  return digest;
}

GST_START_TEST (test_same_bytes_for_any_thread_count)
{
  gchar *paths[2] = { make_slide ("same-a.tiff", 5),
    make_slide ("same-b.tiff", 6)
  };
  GList *one = read_many (1, paths, 2, 12, 10);
  GList *three = read_many (3, paths, 2, 12, 10);
  gchar *d1 = stream_digest (one), *d3 = stream_digest (three);

  fail_unless_equals_int (g_list_length (one), 120);
  fail_unless_equals_int (g_list_length (three), 120);
  fail_unless_equals_string (d1, d3);

  g_free (d1);
  g_free (d3);
  g_list_free_full (one, (GDestroyNotify) gst_buffer_unref);
  g_list_free_full (three, (GDestroyNotify) gst_buffer_unref);
  g_free (paths[0]);
  g_free (paths[1]);
}

GST_END_TEST;

/* One patch read with downstream accepting only @format. */
static guint8 *
read_one_patch (const gchar * path, const gchar * sink_caps,
    gint64 x, gint64 y, guint footprint, gchar ** format, guint * bpp)
{
  GstHarness *h = reader_harness (1, sink_caps);
  WsiPatchRecord r = make_record (0, x, y, footprint, PATCH);
  GstCaps *caps;
  GList *out;
  guint size;
  guint8 *pixels;

  fail_unless_equals_int (gst_harness_push (h, make_coords (path, "", &r, 1)),
      GST_FLOW_OK);
  out = finish_and_collect (h);
  fail_unless_equals_int (g_list_length (out), 1);
  caps = gst_pad_get_current_caps (h->sinkpad);
  *format = g_strdup (gst_structure_get_string (gst_caps_get_structure (caps,
              0), "format"));
  gst_caps_unref (caps);
  pixels = patch_pixels (h, out->data, bpp, &size);
  g_list_free_full (out, (GDestroyNotify) gst_buffer_unref);
  gst_harness_teardown (h);
  return pixels;
}

GST_START_TEST (test_caps_rgbx_bgrx)
{
  gchar *path = make_slide ("formats.tiff", 21);
  gchar *format = NULL;
  guint bpp, i;
  guint8 *rgb, *rgbx, *bgrx, *rgba;

  /* Downstream accepts anything: RGB. Several formats, RGB among them: RGB. */
  rgb = read_one_patch (path, NULL, 400, 300, PATCH, &format, &bpp);
  fail_unless_equals_string (format, "RGB");
  fail_unless_equals_int (bpp, 3);
  g_free (format);
  g_free (read_one_patch (path, "video/x-raw, format=(string){BGRx, RGB}",
          400, 300, PATCH, &format, &bpp));
  fail_unless_equals_string (format, "RGB");
  g_free (format);

  rgbx = read_one_patch (path, "video/x-raw, format=RGBx", 400, 300, PATCH,
      &format, &bpp);
  fail_unless_equals_string (format, "RGBx");
  fail_unless_equals_int (bpp, 4);
  g_free (format);
  bgrx = read_one_patch (path, "video/x-raw, format=BGRx", 400, 300, PATCH,
      &format, &bpp);
  fail_unless_equals_string (format, "BGRx");
  g_free (format);
  rgba = read_one_patch (path, "video/x-raw, format=RGBA", 400, 300, PATCH,
      &format, &bpp);
  fail_unless_equals_string (format, "RGBA");
  g_free (format);

  for (i = 0; i < PATCH * PATCH; i++) {
    fail_unless (rgbx[4 * i + 0] == rgb[3 * i + 0]
        && rgbx[4 * i + 1] == rgb[3 * i + 1]
        && rgbx[4 * i + 2] == rgb[3 * i + 2], "RGBx byte order, pixel %u", i);
    fail_unless (bgrx[4 * i + 2] == rgb[3 * i + 0]
        && bgrx[4 * i + 1] == rgb[3 * i + 1]
        && bgrx[4 * i + 0] == rgb[3 * i + 2], "BGRx byte order, pixel %u", i);
    fail_unless (rgba[4 * i + 0] == rgb[3 * i + 0]
        && rgba[4 * i + 3] == 255, "RGBA, pixel %u", i);
  }
  g_free (rgb);
  g_free (rgbx);
  g_free (bgrx);
  g_free (rgba);

  /* and the area-average path, in BGRx against RGB */
  rgb = read_one_patch (path, NULL, 100, 100, 3 * PATCH, &format, &bpp);
  g_free (format);
  bgrx = read_one_patch (path, "video/x-raw, format=BGRx", 100, 100,
      3 * PATCH, &format, &bpp);
  g_free (format);
  for (i = 0; i < PATCH * PATCH; i++)
    fail_unless (bgrx[4 * i + 2] == rgb[3 * i + 0]
        && bgrx[4 * i + 0] == rgb[3 * i + 2] && bgrx[4 * i + 3] == 255);
  g_free (rgb);
  g_free (bgrx);
  g_free (path);
}

GST_END_TEST;

GST_START_TEST (test_transparent_is_white)
{
  gchar *path = make_slide ("glass.tiff", 31);
  gchar *format = NULL;
  guint bpp, i;
  guint8 *outside, *half;
  guint8 *ref;

  /* Entirely beyond the slide: OpenSlide returns transparent pixels. */
  outside = read_one_patch (path, NULL, 2000, 2000, PATCH, &format, &bpp);
  for (i = 0; i < PATCH * PATCH * 3; i++)
    fail_unless_equals_int (outside[i], 255);
  g_free (format);

  /* Half outside (left of x = 0), in RGBx: left half white, right half the
   * slide as OpenSlide composites it. */
  half = read_one_patch (path, "video/x-raw, format=RGBx", -PATCH / 2, 200,
      PATCH, &format, &bpp);
  ref = reference_rgb (path, -PATCH / 2, 200, 0, PATCH);
  for (i = 0; i < PATCH * PATCH; i++) {
    guint x = i % PATCH;
    if (x < PATCH / 2)
      fail_unless (half[4 * i] == 255 && half[4 * i + 1] == 255
          && half[4 * i + 2] == 255);
    fail_unless (half[4 * i] == ref[3 * i] && half[4 * i + 1] == ref[3 * i + 1]
        && half[4 * i + 2] == ref[3 * i + 2] && half[4 * i + 3] == 255);
  }
  g_free (format);
  g_free (outside);
  g_free (half);
  g_free (ref);
  g_free (path);
}

GST_END_TEST;

/* read-stats' failed-slides holds @path with @expected failed reads, and
 * only it. */
static void
assert_failed_reads (GstElement * reader, const gchar * path,
    guint64 expected)
{
  GstStructure *stats = NULL;
  const GValue *failed;
  const GstStructure *slide;
  guint64 n = 0;

  g_object_get (reader, "read-stats", &stats, NULL);
  failed = gst_structure_get_value (stats, "failed-slides");
  fail_unless (failed != NULL && gst_value_array_get_size (failed) == 1,
      "%" GST_PTR_FORMAT, stats);
  slide = gst_value_get_structure (gst_value_array_get_value (failed, 0));
  fail_unless_equals_string (gst_structure_get_string (slide, "path"), path);
  fail_unless (gst_structure_get_uint64 (slide, "failed-reads", &n));
  fail_unless_equals_uint64 (n, expected);
  gst_structure_free (stats);
}

/* A slide whose every tile is damaged, never given up: one warning for its
 * first failed read, the other failures only counted. */
GST_START_TEST (test_damaged_slide_warned_once)
{
  gchar *damaged = make_damaged_slide ("damaged-once.tiff");
  GstHarness *h = reader_harness (2, NULL);
  GstBus *bus = gst_bus_new ();
  WsiPatchRecord bad[8];
  GList *out;
  gchar *warnings;
  guint i, n_warnings;

  g_object_set (h->element, "max-read-failures", 100, NULL);
  gst_element_set_bus (h->element, bus);
  for (i = 0; i < 8; i++)
    bad[i] = make_record (i, 64 * i, 64, PATCH, PATCH);
  fail_unless_equals_int (gst_harness_push (h, make_coords (damaged, "",
              bad, 8)), GST_FLOW_OK);
  out = finish_and_collect (h);
  fail_unless_equals_int (g_list_length (out), 0);
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "patches-failed"),
      8);
  warnings = pop_warnings (bus, &n_warnings);
  fail_unless_equals_int (n_warnings, 1);
  fail_unless (strstr (warnings, damaged) != NULL, "%s", warnings);
  g_free (warnings);
  assert_failed_reads (h->element, damaged, 8);

  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
  g_free (damaged);
}

GST_END_TEST;

GST_START_TEST (test_damaged_slide_dropped_with_warning)
{
  gchar *damaged = make_damaged_slide ("damaged.tiff");
  gchar *good = make_slide ("good.tiff", 41);
  GstHarness *h = reader_harness (1, NULL);
  GstBus *bus = gst_bus_new ();
  WsiPatchRecord bad[6], fine[4];
  GList *out, *l;
  gchar *warnings;
  guint i, n_warnings;
  guint64 expected;

  gst_element_set_bus (h->element, bus);
  for (i = 0; i < 6; i++)
    bad[i] = make_record (i, 64 * i, 64, PATCH, PATCH);
  for (i = 0; i < 4; i++)
    fine[i] = make_record (6 + i, 64 * i, 64, PATCH, PATCH);
  fail_unless_equals_int (gst_harness_push (h, make_coords (damaged, "",
              bad, 6)), GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_push (h, make_coords (good, "",
              fine, 4)), GST_FLOW_OK);
  out = finish_and_collect (h);

  /* only the good slide's patches, in order, and the stream ended */
  fail_unless_equals_int (g_list_length (out), 4);
  for (l = out, expected = 6; l; l = l->next, expected++)
    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (l->data), expected);
  /* max-read-failures = 3: three failed reads, then the slide is given up */
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "patches-failed"),
      3);
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "patches-skipped"),
      3);
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "patches-read"), 4);

  /* one warning for the first failed read, with the decoder's words, and
   * one for giving up: not one per dropped patch */
  warnings = pop_warnings (bus, &n_warnings);
  fail_unless_equals_int (n_warnings, 2);
  fail_unless (strstr (warnings, damaged) != NULL, "%s", warnings);
  fail_unless (strstr (warnings, "(0, 64) level 0") != NULL, "%s", warnings);
  fail_unless (strstr (warnings, "tile (") != NULL, "%s", warnings);
  fail_unless (strstr (warnings, "further read failures of this slide are "
          "counted") != NULL, "%s", warnings);
  fail_unless (strstr (warnings, "Giving up") != NULL, "%s", warnings);
  g_free (warnings);
  assert_failed_reads (h->element, damaged, 3);

  g_list_free_full (out, (GDestroyNotify) gst_buffer_unref);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
  g_free (damaged);
  g_free (good);
}

GST_END_TEST;

GST_START_TEST (test_missing_slide_skipped)
{
  gchar *missing = test_path ("no-such-slide.svs");
  gchar *good = make_slide ("present.tiff", 51);
  GstHarness *h = reader_harness (2, NULL);
  GstBus *bus = gst_bus_new ();
  WsiPatchRecord r[3];
  GList *out;
  gchar *warnings;
  guint n_warnings;

  g_unlink (missing);
  gst_element_set_bus (h->element, bus);
  r[0] = make_record (0, 0, 0, PATCH, PATCH);
  r[1] = make_record (1, 64, 0, PATCH, PATCH);
  r[2] = make_record (2, 128, 0, PATCH, PATCH);
  fail_unless_equals_int (gst_harness_push (h, make_coords (missing, "", r,
              2)), GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_push (h, make_coords (good, "", r + 2,
              1)), GST_FLOW_OK);
  out = finish_and_collect (h);

  fail_unless_equals_int (g_list_length (out), 1);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (out->data), 2);
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "patches-skipped"),
      2);
  warnings = pop_warnings (bus, &n_warnings);
  fail_unless_equals_int (n_warnings, 1);
  fail_unless (strstr (warnings, missing) != NULL, "%s", warnings);

  g_free (warnings);
  g_list_free_full (out, (GDestroyNotify) gst_buffer_unref);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
  g_free (missing);
  g_free (good);
}

GST_END_TEST;

GST_START_TEST (test_flush_then_continue)
{
  gchar *path = make_slide ("flush.tiff", 61);
  GstHarness *h = reader_harness (2, NULL);
  WsiPatchRecord r[40];
  GstSegment segment;
  GstBuffer *buf;
  GList *out, *l;
  guint i;
  guint64 expected;

  for (i = 0; i < 40; i++)
    r[i] = make_record (i, 16 * i, 100, 2 * PATCH, PATCH);
  fail_unless_equals_int (gst_harness_push (h, make_coords (path, "", r,
              40)), GST_FLOW_OK);

  /* Flush with patches in flight; whatever came out came out in order. */
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  expected = 0;
  while ((buf = gst_harness_try_pull (h)) != NULL) {
    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (buf), expected++);
    gst_buffer_unref (buf);
  }
  fail_unless (expected <= 40);

  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  for (i = 0; i < 40; i++)
    r[i].sequence = 1000 + i;
  fail_unless_equals_int (gst_harness_push (h, make_coords (path, "", r,
              40)), GST_FLOW_OK);
  out = finish_and_collect (h);
  fail_unless_equals_int (g_list_length (out), 40);
  for (l = out, expected = 1000; l; l = l->next, expected++)
    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (l->data), expected);

  g_list_free_full (out, (GDestroyNotify) gst_buffer_unref);
  gst_harness_teardown (h);
  g_free (path);
}

GST_END_TEST;

GST_START_TEST (test_eos_after_every_patch)
{
  gchar *path = make_slide ("eos.tiff", 71);
  GstHarness *h = reader_harness (3, NULL);
  WsiPatchRecord r[60];
  GList *out;
  guint i;

  for (i = 0; i < 60; i++)
    r[i] = make_record (i, (i * 37) % 900, (i * 53) % 650, 3 * PATCH, PATCH);
  fail_unless_equals_int (gst_harness_push (h, make_coords (path, "", r,
              60)), GST_FLOW_OK);
  /* finish_and_collect stops at EOS: all 60 must have come before it */
  out = finish_and_collect (h);
  fail_unless_equals_int (g_list_length (out), 60);
  fail_unless (gst_harness_try_pull (h) == NULL);
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element, "patches-read"), 60);

  g_list_free_full (out, (GDestroyNotify) gst_buffer_unref);
  gst_harness_teardown (h);
  g_free (path);
}

GST_END_TEST;

GST_START_TEST (test_state_cycles)
{
  gchar *path = make_slide ("cycles.tiff", 81);
  GstElement *pipeline, *src, *reader, *sink;
  GstBus *bus;
  guint cycle, i;

  pipeline = gst_parse_launch ("appsrc name=src format=bytes "
      "caps=application/x-wsi-patches ! patchreader name=reader threads=2 "
      "max-open-slides=1 ! fakesink name=sink sync=false", NULL);
  fail_unless (pipeline != NULL);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  reader = gst_bin_get_by_name (GST_BIN (pipeline), "reader");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  bus = gst_element_get_bus (pipeline);

  for (cycle = 0; cycle < 4; cycle++) {
    WsiPatchRecord r[20];

    fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    for (i = 0; i < 20; i++)
      r[i] = make_record (i, 40 * i, 40 * i % 700, 2 * PATCH, PATCH);
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src),
            make_coords (path, "", r, 20)), GST_FLOW_OK);
    if (cycle % 2 == 0) {
      /* a full stream */
      gst_app_src_end_of_stream (GST_APP_SRC (src));
      wsi_test_wait_eos (pipeline, 60 * GST_SECOND);
      fail_unless_equals_uint64 (wsi_test_get_u64 (reader, "patches-read"),
          20);
    }
    /* odd cycles stop with patches possibly still in flight */
    fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    gst_bus_set_flushing (bus, TRUE);
    gst_bus_set_flushing (bus, FALSE);
  }

  gst_object_unref (bus);
  gst_object_unref (src);
  gst_object_unref (reader);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (path);
}

GST_END_TEST;

/* A real slide: @footprint level-0 pixels to @out pixels at (x, y); checks
 * the level and read size chosen and, when no resize happens, the exact
 * pixels against OpenSlide. */
static void
check_real_slide (const gchar * check, const gchar * name, gint64 x,
    gint64 y, guint footprint, guint out_size, guint want_level, guint want_read)
{
  gchar *path = wsi_test_shared_slide (check, name);
  GstHarness *h;
  WsiPatchRecord r = make_record (0, x, y, footprint, out_size);
  GList *out;
  WsiPatchRecord got;
  guint bpp, size;
  guint8 *pixels, *ref;

  if (path == NULL)
    return;
  h = reader_harness (2, NULL);
  fail_unless_equals_int (gst_harness_push (h, make_coords (path, "", &r, 1)),
      GST_FLOW_OK);
  out = finish_and_collect (h);
  fail_unless_equals_int (g_list_length (out), 1);
  got = patch_record (out->data, NULL, NULL);
  fail_unless_equals_int (got.level, want_level);
  fail_unless_equals_int (got.read_size, want_read);
  pixels = patch_pixels (h, out->data, &bpp, &size);
  fail_unless_equals_int (size, out_size);
  if (want_read == out_size) {
    ref = reference_rgb (path, x, y, want_level, out_size);
    fail_unless (memcmp (pixels, ref, (gsize) out_size * out_size * 3) == 0,
        "%s differs from openslide_read_region", name);
    g_free (ref);
  }
  g_free (pixels);
  g_list_free_full (out, (GDestroyNotify) gst_buffer_unref);
  gst_harness_teardown (h);
  g_free (path);
}

GST_START_TEST (test_real_slides)
{
  /* CMU: one level, 240-pixel tiles, RGB JPEG */
  check_real_slide (__func__, "Aperio-CMU-1-Small-Region.svs", 1000, 1200,
      128, 128, 0, 128);
  /* TCGA JPEG 2000: level 1 downsample 2.0005 counts as 2 */
  check_real_slide (__func__, "Aperio-JP2K-TCGA-CR-7395-01A-01-TS1.svs",
      1500, 1500, 256, 128, 1, 128);
  /* NDPI: 4x down is level 2; 6x is level 2 read at 192 and averaged */
  check_real_slide (__func__, "Hamamatsu-test3-DAPI-2-387.ndpi", 1024,
      2048, 512, 128, 2, 128);
  check_real_slide (__func__, "Hamamatsu-test3-TRITC-2-560.ndpi", 1024,
      2048, 768, 128, 2, 192);
}

GST_END_TEST;

static Suite *
patchreader_suite (void)
{
  Suite *s = suite_create ("patchreader");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_native_pixels_match_openslide);
  tcase_add_test (tc, test_patch_meta_carries_slide_uri_and_mpp);
  tcase_add_test (tc, test_resize_picks_level_and_averages);
  tcase_add_test (tc, test_order_kept_with_threads);
  tcase_add_test (tc, test_same_bytes_for_any_thread_count);
  tcase_add_test (tc, test_caps_rgbx_bgrx);
  tcase_add_test (tc, test_transparent_is_white);
  tcase_add_test (tc, test_damaged_slide_dropped_with_warning);
  tcase_add_test (tc, test_damaged_slide_warned_once);
  tcase_add_test (tc, test_missing_slide_skipped);
  tcase_add_test (tc, test_flush_then_continue);
  tcase_add_test (tc, test_eos_after_every_patch);
  tcase_add_test (tc, test_state_cycles);
  tcase_add_test (tc, test_real_slides);
  return s;
}

GST_CHECK_MAIN (patchreader);
