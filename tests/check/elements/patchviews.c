/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit tests for patchviews: crops inside the patch at the requested sizes
 * and scale distribution, context views centred on the patch's level-0
 * centre (pixels compared on a generated slide), views aligned with their
 * locations, the same bytes for any thread count, unreadable context
 * regions dropped and reported upstream, state changes, and refused
 * property values. Each test runs appsrc ! patchreader ! patchviews !
 * appsink on slides generated at test time. */

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <gst/wsi/wsievent.h>
#include <gst/wsi/wsirecord.h>
#include <math.h>
#include <string.h>

#include "wsitestslide.h"
#include "wsitestutil.h"

#define PATCH 64
#define SLIDE_MPP 0.25

/* ---- slides and coordinates --------------------------------------------- */

/* A generic tiled TIFF, 1024x768, 3 levels (downsamples 1, 2, 4). */
static gchar *
make_slide (const gchar * name, guint32 seed, WsiTestSlideSpec * spec_out)
{
  WsiTestSlideSpec spec;

  wsi_test_slide_spec_init (&spec);
  spec.width = 1024;
  spec.height = 768;
  spec.levels = 3;
  spec.level_step = 2;
  spec.mpp = SLIDE_MPP;
  spec.seed = seed;
  spec.tissue_blobs = 6;
  if (spec_out)
    *spec_out = spec;
  return wsi_test_write_slide (WSI_TEST_TMPDIR, name, &spec);
}

/* A level-0 patch (footprint = out size = PATCH) at (x, y). */
static WsiPatchRecord
make_record (guint64 sequence, gint64 x, gint64 y)
{
  WsiPatchRecord r;

  memset (&r, 0, sizeof (r));
  r.sequence = sequence;
  r.x = x;
  r.y = y;
  r.footprint = PATCH;
  r.out_size = PATCH;
  r.level = WSI_LEVEL_UNSET;
  r.slide_index = 3;
  r.cycle = 1;
  r.out_mpp = SLIDE_MPP;
  r.tissue_fraction = 1.0f;
  return r;
}

/* Spread over the slide, away from its edges so context views stay in. */
static void
make_records (WsiPatchRecord * r, guint n)
{
  guint i;

  for (i = 0; i < n; i++)
    r[i] = make_record (i, 160 + (i * 97) % 640, 160 + (i * 61) % 380);
}

/* A coordinate buffer as patchinterleave sends it. */
static GstBuffer *
make_coords (const gchar * path, const WsiPatchRecord * records, guint n)
{
  GstBuffer *buf = gst_buffer_new_memdup (records, n * sizeof (*records));
  GstStructure *s = wsi_slide_meta_add (buf);

  gst_structure_set (s, "path", G_TYPE_STRING, path, "index", G_TYPE_UINT, 3,
      "label", G_TYPE_STRING, "tumour", NULL);
  return buf;
}

/* ---- running patchreader ! patchviews ----------------------------------- */

/* Runs the records through patchreader and, when @views_props is not NULL,
 * patchviews with those properties; returns every output buffer in order.
 * @bus_out (optional) gets the pipeline's bus with its messages. */
static GList *
run_views_full (const gchar * path, const WsiPatchRecord * records, guint n,
    const gchar * reader_props, const gchar * reader_caps,
    const gchar * views_props, GstBus ** bus_out, GstElement ** views_out,
    GstElement ** reader_out)
{
  gchar *desc = g_strdup_printf ("appsrc name=src format=bytes "
      "caps=application/x-wsi-patches ! patchreader name=reader threads=2 "
      "%s %s%s%s%s ! appsink name=sink sync=false max-buffers=0",
      reader_props ? reader_props : "", reader_caps ? "! " : "",
      reader_caps ? reader_caps : "", views_props ?
      "! patchviews name=views " : "", views_props ? views_props : "");
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &error);
  GstElement *src, *sink;
  GstSample *sample;
  GList *out = NULL;

  fail_unless (pipeline != NULL, "%s: %s", desc, error ? error->message : "");
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src),
          make_coords (path, records, n)), GST_FLOW_OK);
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
              60 * GST_SECOND)) != NULL) {
    out = g_list_append (out, gst_buffer_ref (gst_sample_get_buffer (sample)));
    gst_sample_unref (sample);
  }
  fail_unless (gst_app_sink_is_eos (GST_APP_SINK (sink)), "no EOS: %s", desc);
  if (views_out)
    *views_out = gst_bin_get_by_name (GST_BIN (pipeline), "views");
  if (reader_out)
    *reader_out = gst_bin_get_by_name (GST_BIN (pipeline), "reader");
  if (bus_out)
    *bus_out = gst_element_get_bus (pipeline);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (desc);
  return out;
}

static GList *
run_views (const gchar * path, const WsiPatchRecord * records, guint n,
    const gchar * views_props, GstBus ** bus_out, GstElement ** views_out)
{
  return run_views_full (path, records, n, NULL, NULL, views_props, bus_out,
      views_out, NULL);
}

static void
free_buffers (GList * buffers)
{
  g_list_free_full (buffers, (GDestroyNotify) gst_buffer_unref);
}

/* The location record, the view records and names of an output buffer. */
typedef struct
{
  WsiPatchRecord record;
  const WsiViewRecord *views;
  guint n_views;
  const gchar *const *names;
  const gchar *path;
  const gchar *label;
} ViewsInfo;

static ViewsInfo
views_info (GstBuffer * buf)
{
  GstStructure *s = wsi_patch_meta_get (buf);
  const WsiPatchRecord *records;
  ViewsInfo info;
  guint n, count = 0, version = 0;

  fail_unless (s != NULL, "no WsiPatchMeta");
  fail_unless (gst_structure_get_uint (s, "count", &count));
  fail_unless_equals_int (count, 1);
  fail_unless (gst_structure_get_uint (s, "record-version", &version));
  fail_unless_equals_int (version, WSI_RECORD_VERSION);
  records = wsi_patch_meta_records (s, &n);
  fail_unless_equals_int (n, 1);
  info.record = records[0];
  info.views = wsi_patch_meta_views (s, &info.n_views);
  fail_unless (info.views != NULL);
  info.names = g_value_get_boxed (gst_structure_get_value (s, "view-names"));
  fail_unless_equals_int (g_strv_length ((gchar **) info.names),
      info.n_views);
  fail_unless_equals_int (gst_buffer_n_memory (buf), info.n_views);
  info.path = wsi_patch_meta_string (s, "paths", 0);
  info.label = wsi_patch_meta_string (s, "labels", 0);
  return info;
}

/* The bytes of view @v of @buf (g_free them). */
static guint8 *
view_bytes (GstBuffer * buf, guint v, gsize * size)
{
  GstMemory *mem = gst_buffer_peek_memory (buf, v);
  GstMapInfo map;
  guint8 *copy;

  fail_unless (gst_memory_map (mem, &map, GST_MAP_READ));
  copy = g_memdup2 (map.data, map.size);
  *size = map.size;
  gst_memory_unmap (mem, &map);
  return copy;
}

/* ---- tests -------------------------------------------------------------- */

/* DINOv2: ten views named as documented, each of its size, its footprint
 * inside the patch's, location metadata copied. */
GST_START_TEST (test_crops_inside_and_sized)
{
  gchar *path = make_slide ("crops.tiff", 5, NULL);
  WsiPatchRecord r[30];
  GList *out, *l;
  guint64 expected = 0;
  guint v;

  make_records (r, 30);
  out = run_views (path, r, 30, "preset=dinov2 seed=3", NULL, NULL);
  fail_unless_equals_int (g_list_length (out), 30);
  for (l = out; l; l = l->next, expected++) {
    ViewsInfo info = views_info (l->data);
    const WsiPatchRecord *rec = &info.record;

    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (l->data), expected);
    fail_unless_equals_uint64 (rec->sequence, expected);
    fail_unless_equals_int (rec->x, r[expected].x);
    fail_unless_equals_string (info.path, path);
    fail_unless_equals_string (info.label, "tumour");
    fail_unless_equals_int (info.n_views, 10);
    for (v = 0; v < 10; v++) {
      const WsiViewRecord *vr = &info.views[v];
      guint side = v < 2 ? 224 : 96;
      gchar *name = g_strdup_printf (v < 2 ? "global_%u" : "local_%u",
          v < 2 ? v : v - 2);
      gsize size;
      g_free (view_bytes (l->data, v, &size));

      fail_unless_equals_string (info.names[v], name);
      fail_unless_equals_int (vr->view_index, v);
      fail_unless_equals_int (vr->out_width, side);
      fail_unless_equals_int (vr->out_height, side);
      fail_unless_equals_int (size, side * side * 3);
      fail_unless_equals_int (vr->flags, 0);
      fail_unless (vr->x >= rec->x - 1e-6 && vr->y >= rec->y - 1e-6);
      fail_unless (vr->x + vr->width0 <= rec->x + rec->footprint + 1e-3);
      fail_unless (vr->y + vr->height0 <= rec->y + rec->footprint + 1e-3);
      fail_unless (vr->width0 > 0 && vr->height0 > 0);
      /* mpp: the level-0 mpp times the geometric mean of the sides */
      fail_unless (fabs (vr->mpp - SLIDE_MPP * sqrt (vr->width0 *
                  vr->height0) / side) < 1e-4);
      g_free (name);
    }
  }
  free_buffers (out);
  g_free (path);
}

GST_END_TEST;

/* The area fraction follows the requested range: uniform, so the mean is
 * the middle; every draw inside the range; ratios inside theirs. */
GST_START_TEST (test_scale_distribution)
{
  gchar *path = make_slide ("scales.tiff", 6, NULL);
  WsiPatchRecord r[64];
  GList *out, *l;
  gdouble sum[2] = { 0, 0 }, lo[2] = { 2, 2 }, hi[2] = { -1, -1 };
  guint count[2] = { 0, 0 }, v;

  make_records (r, 64);
  /* group a: square crops, scale 0.1-0.5; group b: DINOv2-local-like */
  out = run_views (path, r, 64, "views=a:8:16:0.1:0.5:1:1,"
      "b:8:16:0.05:0.32:0.75:1.3333333 seed=11", NULL, NULL);
  fail_unless_equals_int (g_list_length (out), 64);
  for (l = out; l; l = l->next) {
    ViewsInfo info = views_info (l->data);

    fail_unless_equals_int (info.n_views, 16);
    for (v = 0; v < 16; v++) {
      const WsiViewRecord *vr = &info.views[v];
      gdouble scale = vr->width0 * vr->height0 / (PATCH * PATCH);
      gdouble ratio = vr->width0 / vr->height0;
      guint g = v / 8;

      sum[g] += scale;
      count[g]++;
      lo[g] = MIN (lo[g], scale);
      hi[g] = MAX (hi[g], scale);
      if (g == 0)
        fail_unless (fabs (ratio - 1.0) < 1e-4, "ratio %g", ratio);
      else
        fail_unless (ratio > 0.75 - 1e-4 && ratio < 4.0 / 3.0 + 1e-4,
            "ratio %g", ratio);
    }
  }
  /* 512 draws of a uniform: standard error of the mean about 0.005 */
  fail_unless (fabs (sum[0] / count[0] - 0.3) < 0.02, "mean %g",
      sum[0] / count[0]);
  fail_unless (fabs (sum[1] / count[1] - 0.185) < 0.012, "mean %g",
      sum[1] / count[1]);
  fail_unless (lo[0] >= 0.1 - 1e-4 && hi[0] <= 0.5 + 1e-4);
  fail_unless (lo[1] >= 0.05 - 1e-4 && hi[1] <= 0.32 + 1e-4);
  /* and the whole range is used */
  fail_unless (lo[0] < 0.12 && hi[0] > 0.48, "%g..%g", lo[0], hi[0]);
  fail_unless (lo[1] < 0.07 && hi[1] > 0.30, "%g..%g", lo[1], hi[1]);
  free_buffers (out);
  g_free (path);
}

GST_END_TEST;

/* The patch view is patchreader's patch, byte for byte, at every location,
 * and a full-size 1:1 crop resamples to the same bytes (the crop kernel's
 * identity). */
GST_START_TEST (test_views_aligned_with_locations)
{
  gchar *path = make_slide ("aligned.tiff", 7, NULL);
  WsiPatchRecord r[24];
  GList *plain, *views, *p, *l;

  make_records (r, 24);
  plain = run_views (path, r, 24, NULL, NULL, NULL);
  views = run_views (path, r, 24, "views=full:1:64:1:1:1:1,t:patch,"
      "small:2:16:0.1:0.2 threads=3", NULL, NULL);
  fail_unless_equals_int (g_list_length (plain), 24);
  fail_unless_equals_int (g_list_length (views), 24);
  for (p = plain, l = views; p; p = p->next, l = l->next) {
    ViewsInfo info = views_info (l->data);
    GstMapInfo map;
    gsize full_size, patch_size;
    guint8 *full = view_bytes (l->data, 0, &full_size);
    guint8 *patch = view_bytes (l->data, 1, &patch_size);

    fail_unless_equals_string (info.names[1], "t");
    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (p->data),
        GST_BUFFER_OFFSET (l->data));
    fail_unless (gst_buffer_map (p->data, &map, GST_MAP_READ));
    fail_unless_equals_int (map.size, patch_size);
    fail_unless (memcmp (map.data, patch, patch_size) == 0,
        "patch view of location %" G_GUINT64_FORMAT " differs",
        GST_BUFFER_OFFSET (p->data));
    gst_buffer_unmap (p->data, &map);
    fail_unless_equals_int (full_size, patch_size);
    fail_unless (memcmp (full, patch, patch_size) == 0);
    fail_unless_equals_int (info.views[1].x, info.record.x);
    fail_unless_equals_float (info.views[1].width0, PATCH);
    g_free (full);
    g_free (patch);
  }
  free_buffers (plain);
  free_buffers (views);
  g_free (path);
}

GST_END_TEST;

/* Reference resampling, written the plain way in doubles: the value of
 * output pixel (ox, oy), channel c, of the window (x0, y0, w, h) of the
 * PATCH x PATCH RGB @src resized to @side. */
static gdouble
reference_bilinear (const guint8 * src, gdouble x0, gdouble y0, gdouble w,
    gdouble h, guint side, guint ox, guint oy, guint c)
{
  gdouble sx = x0 + (ox + 0.5) * w / side - 0.5;
  gdouble sy = y0 + (oy + 0.5) * h / side - 0.5;
  gint ix = (gint) floor (sx), iy = (gint) floor (sy);
  gdouble fx = sx - ix, fy = sy - iy, v = 0.0;
  gint i, j;

  for (j = 0; j < 2; j++)
    for (i = 0; i < 2; i++) {
      gint px = CLAMP (ix + i, 0, PATCH - 1), py = CLAMP (iy + j, 0, PATCH - 1);
      v += (i ? fx : 1 - fx) * (j ? fy : 1 - fy) * src[(py * PATCH + px) * 3
          + c];
    }
  return v;
}

static gdouble
reference_area (const guint8 * src, gdouble x0, gdouble y0, gdouble w,
    gdouble h, guint side, guint ox, guint oy, guint c)
{
  gdouble a0 = x0 + ox * w / side, a1 = x0 + (ox + 1) * w / side;
  gdouble b0 = y0 + oy * h / side, b1 = y0 + (oy + 1) * h / side;
  gdouble sum = 0.0, area = 0.0;
  gint x, y;

  for (y = (gint) floor (b0); y < (gint) ceil (b1); y++)
    for (x = (gint) floor (a0); x < (gint) ceil (a1); x++) {
      gdouble wgt = (MIN (a1, x + 1.0) - MAX (a0, (gdouble) x)) *
          (MIN (b1, y + 1.0) - MAX (b0, (gdouble) y));
      sum += wgt * src[(y * PATCH + x) * 3 + c];
      area += wgt;
    }
  return sum / area;
}

/* The crop's pixels are its record's box of the patch, resampled: checked
 * against plain reference formulas for both interpolations, up (24 px
 * crops of small boxes) and down (48 px of large ones). */
static void
check_crop_pixels (const gchar * interpolation)
{
  gchar *path = make_slide ("pixels.tiff", 13, NULL);
  gchar *props = g_strdup_printf ("views=t:patch,up:3:40:0.05:0.2,"
      "down:3:24:0.4:1 interpolation=%s seed=9", interpolation);
  gboolean area = g_str_equal (interpolation, "area");
  WsiPatchRecord r[8];
  GList *out, *l;
  guint v, x, y, c;

  make_records (r, 8);
  out = run_views (path, r, 8, props, NULL, NULL);
  fail_unless_equals_int (g_list_length (out), 8);
  for (l = out; l; l = l->next) {
    ViewsInfo info = views_info (l->data);
    gsize size;
    guint8 *patch = view_bytes (l->data, 0, &size);

    for (v = 1; v < info.n_views; v++) {
      const WsiViewRecord *vr = &info.views[v];
      /* level-0 box back to patch pixels (footprint = PATCH here) */
      gdouble x0 = vr->x - info.record.x, y0 = vr->y - info.record.y;
      guint side = vr->out_width;
      guint8 *crop = view_bytes (l->data, v, &size);
      gdouble worst = 0.0;

      fail_unless_equals_int (size, side * side * 3);
      for (y = 0; y < side; y++)
        for (x = 0; x < side; x++)
          for (c = 0; c < 3; c++) {
            gdouble want = area ? reference_area (patch, x0, y0, vr->width0,
                vr->height0, side, x, y, c) : reference_bilinear (patch, x0,
                y0, vr->width0, vr->height0, side, x, y, c);
            worst = MAX (worst, fabs (want - crop[(y * side + x) * 3 + c]));
          }
      /* float kernels and a float record: within one level */
      fail_unless (worst <= 1.0, "%s view %u: off by %.2f", interpolation,
          v, worst);
      g_free (crop);
    }
    g_free (patch);
  }
  free_buffers (out);
  g_free (props);
  g_free (path);
}

GST_START_TEST (test_crop_pixels_bilinear)
{
  check_crop_pixels ("bilinear");
}

GST_END_TEST;

GST_START_TEST (test_crop_pixels_area)
{
  check_crop_pixels ("area");
}

GST_END_TEST;

/* Mean absolute difference between the context view's centre (side
 * @inner, displaced by dx, dy) and the patch shrunk by @factor. */
static gdouble
centre_difference (const guint8 * context, guint ctx_side,
    const guint8 * patch, guint factor, gint dx, gint dy)
{
  guint inner = PATCH / factor, off = (ctx_side - inner) / 2;
  gdouble total = 0.0;
  guint x, y, c, i, j;

  for (y = 0; y < inner; y++)
    for (x = 0; x < inner; x++)
      for (c = 0; c < 3; c++) {
        gdouble avg = 0.0;
        for (j = 0; j < factor; j++)
          for (i = 0; i < factor; i++)
            avg += patch[((y * factor + j) * PATCH + x * factor + i) * 3 + c];
        avg /= factor * factor;
        total += fabs (avg - context[((off + y + dy) * ctx_side + off + x +
                    dx) * 3 + c]);
      }
  return total / (inner * inner * 3);
}

/* Context views at 2x and 4x the patch's mpp: their records are centred on
 * the patch's centre, and their pixels too — the patch shrunk to the
 * context's scale matches the context's centre best unshifted. */
GST_START_TEST (test_context_centred)
{
  WsiTestSlideSpec spec;
  gchar *path;
  WsiPatchRecord r[40];
  GList *out, *l;
  guint n = 0, i, checked = 0;

  /* One level: the generator paints every level with its textures at
   * that level's own scale, so only level 0 can be compared with level 0
   * shrunk. */
  wsi_test_slide_spec_init (&spec);
  spec.width = 1024;
  spec.height = 768;
  spec.levels = 1;
  spec.mpp = SLIDE_MPP;
  spec.seed = 8;
  spec.tissue_blobs = 6;
  path = wsi_test_write_slide (WSI_TEST_TMPDIR, "context.tiff", &spec);

  /* locations well inside tissue (texture to compare) */
  for (i = 0; n < 40 && i < 4000; i++) {
    gint64 x = 128 + (i * 37) % 700, y = 128 + (i * 53) % 460;
    if (wsi_test_slide_is_tissue (&spec, x - 32, y - 32)
        && wsi_test_slide_is_tissue (&spec, x + 96, y + 96)
        && wsi_test_slide_is_tissue (&spec, x - 32, y + 96)
        && wsi_test_slide_is_tissue (&spec, x + 96, y - 32)) {
      r[n] = make_record (n, x, y);
      n++;
    }
  }
  fail_unless (n >= 10, "only %u tissue locations", n);

  out = run_views (path, r, n, "views=t:patch,c2:context:0:2x,"
      "c4:context:0:4x,abs:context:32:1.0 dct-scaling=false", NULL, NULL);
  fail_unless_equals_int (g_list_length (out), n);
  for (l = out; l; l = l->next) {
    ViewsInfo info = views_info (l->data);
    gdouble cx = info.record.x + PATCH / 2.0, cy = info.record.y + PATCH / 2.0;
    gsize size;
    guint8 *patch = view_bytes (l->data, 0, &size);
    guint v;

    fail_unless_equals_string (info.names[3], "abs");
    for (v = 1; v < 4; v++) {
      const WsiViewRecord *vr = &info.views[v];
      guint factor = v == 1 ? 2 : 4;
      guint8 *ctx;
      gdouble best = G_MAXDOUBLE, centred;
      gint dx, dy, best_dx = 99, best_dy = 99;

      fail_unless (vr->flags & WSI_VIEW_FLAG_CONTEXT);
      fail_unless (fabs (vr->x + vr->width0 / 2.0 - cx) <= 0.5);
      fail_unless (fabs (vr->y + vr->height0 / 2.0 - cy) <= 0.5);
      if (v == 3) {
        /* 32 px at 1 um/px on a 0.25 um/px slide: 128 level-0 px */
        fail_unless_equals_float (vr->width0, 128);
        fail_unless_equals_int (vr->out_width, 32);
        fail_unless (fabs (vr->mpp - 1.0) < 1e-5);
        continue;
      }
      fail_unless_equals_float (vr->width0, PATCH * factor);
      fail_unless_equals_int (vr->out_width, PATCH);
      fail_unless (fabs (vr->mpp - SLIDE_MPP * factor) < 1e-5);

      ctx = view_bytes (l->data, v, &size);
      fail_unless_equals_int (size, PATCH * PATCH * 3);
      centred = centre_difference (ctx, PATCH, patch, factor, 0, 0);
      for (dy = -3; dy <= 3; dy++)
        for (dx = -3; dx <= 3; dx++) {
          gdouble d = centre_difference (ctx, PATCH, patch, factor, dx, dy);
          if (d < best) {
            best = d;
            best_dx = dx;
            best_dy = dy;
          }
        }
      /* JPEG noise aside, the unshifted comparison is the best one */
      fail_unless (best_dx == 0 && best_dy == 0,
          "location %" G_GUINT64_FORMAT " x%u: best shift (%d, %d) "
          "(%.2f vs %.2f unshifted)", info.record.sequence, factor, best_dx,
          best_dy, best, centred);
      fail_unless (centred < 6.0, "difference %.2f", centred);
      checked++;
      g_free (ctx);
    }
    g_free (patch);
  }
  fail_unless_equals_int (checked, 2 * n);
  free_buffers (out);
  g_free (path);
}

GST_END_TEST;

/* The checksum of every view and record of a stream. */
static gchar *
stream_digest (GList * buffers)
{
  GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
  GList *l;
  gchar *digest;
  guint v;

  for (l = buffers; l; l = l->next) {
    ViewsInfo info = views_info (l->data);

    g_checksum_update (sum, (const guchar *) info.views,
        info.n_views * sizeof (WsiViewRecord));
    for (v = 0; v < info.n_views; v++) {
      gsize size;
      guint8 *bytes = view_bytes (l->data, v, &size);
      g_checksum_update (sum, bytes, size);
      g_free (bytes);
    }
  }
  digest = g_strdup (g_checksum_get_string (sum));
  g_checksum_free (sum);
  return digest;
}

/* patchreader and patchviews of one pipeline read through one slide cache
 * and one tile cache (wsireadcaches.h), so they report the same counters;
 * with different backends each keeps its own. */
GST_START_TEST (test_reader_and_views_share_caches)
{
  gchar *path = make_slide ("shared.tiff", 9, NULL);
  const gchar *views = "views=t:patch,ctx:context:32:2x seed=5 threads=2";
  gchar *other_backend = g_strdup_printf ("%s backend=openslide", views);
  GstElement *reader, *element;
  WsiPatchRecord r[24];
  GList *out;

  make_records (r, 24);
  out = run_views_full (path, r, 24, NULL, NULL, views, NULL, &element,
      &reader);
  fail_unless_equals_int (g_list_length (out), 24);
  fail_unless (wsi_test_get_u64 (reader, "tile-cache-hits") > 0);
  fail_unless_equals_uint64 (wsi_test_get_u64 (element, "tile-cache-hits"),
      wsi_test_get_u64 (reader, "tile-cache-hits"));
  fail_unless_equals_uint64 (wsi_test_get_u64 (element,
          "tile-cache-misses"), wsi_test_get_u64 (reader,
          "tile-cache-misses"));
  gst_object_unref (element);
  gst_object_unref (reader);
  free_buffers (out);

  /* OpenSlide decodes no tile of ours: views' cache stays empty */
  out = run_views_full (path, r, 24, NULL, NULL, other_backend, NULL,
      &element, &reader);
  fail_unless_equals_int (g_list_length (out), 24);
  fail_unless (wsi_test_get_u64 (reader, "tile-cache-hits") > 0);
  fail_unless_equals_uint64 (wsi_test_get_u64 (element,
          "tile-cache-misses"), 0);
  gst_object_unref (element);
  gst_object_unref (reader);
  free_buffers (out);
  g_free (other_backend);
  g_free (path);
}

GST_END_TEST;

GST_START_TEST (test_same_bytes_for_any_thread_count)
{
  gchar *path = make_slide ("threads.tiff", 9, NULL);
  const gchar *views = "views=g:2:48:0.32:1,l:4:24:0.05:0.32,"
      "c:context:32:2x interpolation=area";
  WsiPatchRecord r[40];
  gchar *digest[3], *other_seed, *props;
  guint threads[3] = { 1, 2, 4 }, i;
  GstElement *element;
  GList *out;

  make_records (r, 40);
  for (i = 0; i < 3; i++) {
    props = g_strdup_printf ("%s seed=5 threads=%u", views, threads[i]);
    out = run_views (path, r, 40, props, NULL, NULL);
    fail_unless_equals_int (g_list_length (out), 40);
    digest[i] = stream_digest (out);
    free_buffers (out);
    g_free (props);
  }
  fail_unless_equals_string (digest[0], digest[1]);
  fail_unless_equals_string (digest[0], digest[2]);

  /* the context tile cache is used and changes no byte (it is shared with
   * patchreader's, so both are off for the run without) */
  props = g_strdup_printf ("%s seed=5 threads=2 tile-cache-size=0", views);
  out = run_views_full (path, r, 40, "tile-cache-size=0", NULL, props, NULL,
      &element, NULL);
  other_seed = stream_digest (out);
  fail_unless_equals_string (other_seed, digest[0]);
  fail_unless_equals_uint64 (wsi_test_get_u64 (element, "tile-cache-hits"),
      0);
  gst_object_unref (element);
  free_buffers (out);
  g_free (props);
  g_free (other_seed);
  props = g_strdup_printf ("%s seed=5 threads=2", views);
  out = run_views (path, r, 40, props, NULL, &element);
  fail_unless (wsi_test_get_u64 (element, "tile-cache-hits") > 0);
  gst_object_unref (element);
  free_buffers (out);
  g_free (props);

  /* and the seed matters */
  props = g_strdup_printf ("%s seed=6 threads=2", views);
  out = run_views (path, r, 40, props, NULL, NULL);
  other_seed = stream_digest (out);
  fail_if (g_str_equal (other_seed, digest[0]));
  free_buffers (out);
  g_free (props);
  g_free (other_seed);
  for (i = 0; i < 3; i++)
    g_free (digest[i]);
  g_free (path);
}

GST_END_TEST;

static GstPadProbeReturn
count_dropped (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstEvent *event = GST_PAD_PROBE_INFO_EVENT (info);

  guint64 sequence = 0;
  const gchar *reason = NULL;

  if (wsi_event_parse_patch_dropped (event, NULL, NULL, &sequence, NULL,
          &reason)) {
    g_mutex_lock (&check_mutex);
    *(guint64 *) user_data = sequence;
    fail_unless (strstr (reason, "context view \"ctx\"") != NULL);
    g_mutex_unlock (&check_mutex);
  }
  return GST_PAD_PROBE_OK;
}

/* A context region over damaged tiles: that location is dropped, warned
 * about and reported upstream; the others go through. */
GST_START_TEST (test_unreadable_context_dropped)
{
  WsiTestSlideSpec spec;
  gchar *path = g_build_filename (WSI_TEST_TMPDIR, "damaged.tiff", NULL);
  GError *error = NULL;
  GstElement *pipeline, *src, *sink, *views;
  GstPad *pad;
  GstBus *bus;
  GstSample *sample;
  WsiPatchRecord r[3];
  guint64 dropped = G_MAXUINT64, got[3];
  guint n = 0;
  gchar *warning;

  wsi_test_slide_spec_init (&spec);
  spec.width = 1024;
  spec.height = 768;
  spec.mpp = SLIDE_MPP;
  g_mkdir_with_parents (WSI_TEST_TMPDIR, 0755);
  /* tiles 256 px; row-major tile index even = damaged: (1, 0) is good,
   * (0, 0) and (2, 0) damaged */
  fail_unless (wsi_test_slide_write_partly_damaged (path, &spec, 2, &error));
  r[0] = make_record (0, 352, 96);      /* context 320..448: tile 1 only */
  r[1] = make_record (1, 260, 96);      /* context 228..356: reaches tile 0 */
  r[2] = make_record (2, 380, 120);
  pipeline = gst_parse_launch ("appsrc name=src format=bytes "
      "caps=application/x-wsi-patches ! patchreader threads=2 ! "
      "patchviews name=views threads=2 views=t:patch,ctx:context:128:1x ! "
      "appsink name=sink sync=false", NULL);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  views = gst_bin_get_by_name (GST_BIN (pipeline), "views");
  pad = gst_element_get_static_pad (views, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, count_dropped,
      &dropped, NULL);
  bus = gst_element_get_bus (pipeline);

  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src),
          make_coords (path, r, 3)), GST_FLOW_OK);
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
              60 * GST_SECOND)) != NULL) {
    fail_unless (n < 3);
    got[n++] = GST_BUFFER_OFFSET (gst_sample_get_buffer (sample));
    gst_sample_unref (sample);
  }
  fail_unless (gst_app_sink_is_eos (GST_APP_SINK (sink)));
  fail_unless_equals_int (n, 2);
  fail_unless_equals_uint64 (got[0], 0);
  fail_unless_equals_uint64 (got[1], 2);
  fail_unless_equals_uint64 (dropped, 1);
  fail_unless_equals_uint64 (wsi_test_get_u64 (views, "locations-dropped"), 1);
  fail_unless_equals_uint64 (wsi_test_get_u64 (views, "locations-out"), 2);
  warning = wsi_test_pop_message_text (bus, GST_MESSAGE_WARNING);
  fail_unless (warning != NULL);
  fail_unless (strstr (warning, path) != NULL, "%s", warning);
  fail_unless (strstr (warning, "(260, 96)") != NULL, "%s", warning);
  g_free (warning);

  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (pad);
  gst_object_unref (bus);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (views);
  gst_object_unref (pipeline);
  g_free (path);
}

GST_END_TEST;

/* Pushes @coords (a coordinate buffer with its slide meta, taken) through
 * patchreader ! patchviews @views_props; returns every output in order. */
static GList *
run_views_on (GstBuffer * coords, const gchar * views_props)
{
  gchar *desc = g_strdup_printf ("appsrc name=src format=bytes "
      "caps=application/x-wsi-patches ! patchreader ! patchviews %s ! "
      "appsink name=sink sync=false", views_props);
  GstElement *pipeline = gst_parse_launch (desc, NULL);
  GstElement *src, *sink;
  GstSample *sample;
  GList *out = NULL;

  fail_unless (pipeline != NULL, "%s", desc);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src),
          coords), GST_FLOW_OK);
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
              60 * GST_SECOND)) != NULL) {
    out = g_list_append (out, gst_buffer_ref (gst_sample_get_buffer (sample)));
    gst_sample_unref (sample);
  }
  fail_unless (gst_app_sink_is_eos (GST_APP_SINK (sink)), "no EOS: %s", desc);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (desc);
  return out;
}

/* A slide whose file name is Latin-1: patchreader opens it by the uri and
 * shows its path escaped (\xE9); the context view reopens the real file. */
GST_START_TEST (test_latin1_file_name)
{
  WsiTestSlideSpec spec;
  gchar *name = g_strdup ("latin-\xe9.tiff");
  gchar *path, *shown, *uri;
  GstBuffer *coords;
  WsiPatchRecord r[2];
  GList *out, *l;

  wsi_test_slide_spec_init (&spec);
  spec.width = 1024;
  spec.height = 768;
  spec.mpp = SLIDE_MPP;
  path = wsi_test_write_slide (WSI_TEST_TMPDIR, name, &spec);
  shown = g_strdup_printf ("%s/latin-\\xE9.tiff", WSI_TEST_TMPDIR);
  uri = g_filename_to_uri (path, NULL, NULL);
  fail_unless (uri != NULL);
  make_records (r, 2);
  coords = gst_buffer_new_memdup (r, sizeof (r));
  gst_structure_set (wsi_slide_meta_add (coords), "path", G_TYPE_STRING,
      shown, "uri", G_TYPE_STRING, uri, "index", G_TYPE_UINT, 3, "label",
      G_TYPE_STRING, "", NULL);

  out = run_views_on (coords, "views=c:context:32:2x");
  fail_unless_equals_int (g_list_length (out), 2);
  for (l = out; l; l = l->next) {
    ViewsInfo info = views_info (l->data);

    fail_unless_equals_string (info.path, shown);
    fail_unless (info.views[0].flags & WSI_VIEW_FLAG_CONTEXT);
  }
  free_buffers (out);
  g_free (uri);
  g_free (shown);
  g_free (path);
  g_free (name);
}

GST_END_TEST;

/* A context view at an absolute mpp is sized by the slide's level-0 mpp as
 * the patch meta carries it (`mpps`, from the slide meta's mpp-x), not by
 * the file's own mpp nor worked back from the record: here the slide meta
 * says 0.5 um/px (as wsislidesrc's default-mpp would) while the file and
 * the records say 0.25. The views keep the meta's `uris` and `mpps`. */
GST_START_TEST (test_context_mpp_from_meta)
{
  gchar *path = make_slide ("meta-mpp.tiff", 12, NULL);
  gchar *uri = g_filename_to_uri (path, NULL, NULL);
  WsiPatchRecord r[3];
  GstBuffer *coords;
  GList *out, *l;

  make_records (r, 3);
  coords = gst_buffer_new_memdup (r, sizeof (r));
  gst_structure_set (wsi_slide_meta_add (coords), "path", G_TYPE_STRING,
      path, "uri", G_TYPE_STRING, uri, "mpp-x", G_TYPE_DOUBLE, 0.5,
      "index", G_TYPE_UINT, 3, "label", G_TYPE_STRING, "", NULL);

  /* 32 px at 1 um/px on a 0.5 um/px slide: 64 level-0 px (128 at 0.25) */
  out = run_views_on (coords, "views=t:patch,abs:context:32:1.0");
  fail_unless_equals_int (g_list_length (out), 3);
  for (l = out; l; l = l->next) {
    ViewsInfo info = views_info (l->data);
    GstStructure *s = wsi_patch_meta_get (l->data);

    fail_unless (info.views[1].flags & WSI_VIEW_FLAG_CONTEXT);
    fail_unless_equals_float (info.views[1].width0, 64);
    fail_unless_equals_int (info.views[1].out_width, 32);
    fail_unless (fabs (info.views[1].mpp - 1.0) < 1e-5, "mpp %g",
        info.views[1].mpp);
    fail_unless_equals_string (wsi_patch_meta_string (s, "uris", 0), uri);
    fail_unless_equals_float (wsi_patch_meta_mpp (s, 0), 0.5);
  }
  free_buffers (out);
  g_free (uri);
  g_free (path);
}

GST_END_TEST;

/* NULL -> PLAYING -> NULL four times, half of them stopped mid-stream. */
GST_START_TEST (test_state_cycles)
{
  gchar *path = make_slide ("cycles.tiff", 10, NULL);
  GstElement *pipeline, *src, *views;
  WsiPatchRecord r[20];
  guint cycle;

  make_records (r, 20);
  pipeline = gst_parse_launch ("appsrc name=src format=bytes "
      "caps=application/x-wsi-patches ! patchreader threads=2 ! "
      "patchviews name=views threads=2 preset=target-context ! "
      "fakesink sync=false", NULL);
  fail_unless (pipeline != NULL);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  views = gst_bin_get_by_name (GST_BIN (pipeline), "views");
  for (cycle = 0; cycle < 4; cycle++) {
    GstBus *bus = gst_element_get_bus (pipeline);

    fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src),
            make_coords (path, r, 20)), GST_FLOW_OK);
    if (cycle % 2 == 0) {
      gst_app_src_end_of_stream (GST_APP_SRC (src));
      wsi_test_wait_eos (pipeline, 60 * GST_SECOND);
      fail_unless_equals_uint64 (wsi_test_get_u64 (views, "locations-out"),
          20);
    }
    fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    gst_bus_set_flushing (bus, TRUE);
    gst_bus_set_flushing (bus, FALSE);
    gst_object_unref (bus);
  }
  gst_object_unref (src);
  gst_object_unref (views);
  gst_object_unref (pipeline);
  g_free (path);
}

GST_END_TEST;

static gchar *
get_views (GstElement * e, gint * preset)
{
  gchar *text = NULL;

  g_object_get (e, "views", &text, "preset", preset, NULL);
  return text;
}

GST_START_TEST (test_properties_validated)
{
  GstElement *e = gst_element_factory_make ("patchviews", NULL);
  const gchar *bad[] = {
    "",                         /* no view */
    "a:0:224:0.1:1",            /* no crop */
    "a:2:0:0.1:1",              /* size 0 */
    "a:2:224:0.5:0.1",          /* min > max */
    "a:2:224:0:1",              /* scale 0 */
    "a:2:224:0.1:1.5",          /* scale > 1 */
    "a:2:224:0.1:1:2:1",        /* ratio min > max */
    "a:2:224:0.1",              /* fields missing */
    "a:2:224:x:1",              /* not a number */
    "a:context:224:-1",         /* negative mpp */
    "a:context:224:0x",         /* zero factor */
    "a:context:224",            /* no mpp */
    "a:patch:3",                /* patch takes nothing */
    "a:patch,a:patch",          /* duplicate name */
    "a:16:8:0.1:1,b:1:8:0.1:1", /* 17 views */
    "9a:patch",                 /* bad name */
    "a:2:5000:0.1:1",           /* size over 4096 */
  };
  gchar *text;
  gint preset;
  guint i;

  fail_unless (e != NULL);
  text = get_views (e, &preset);
  fail_unless_equals_string (text,
      "global:2:224:0.32:1.0,local:8:96:0.05:0.32");
  g_free (text);
  for (i = 0; i < G_N_ELEMENTS (bad); i++) {
    gchar *expected = g_strdup_printf ("views=\"%s\"", bad[i]);

    g_object_set (e, "views", bad[i], NULL);
    wsi_test_assert_refuses_start (e, GST_STATE_PAUSED, expected);
    g_free (expected);
    text = get_views (e, &preset);
    fail_unless_equals_string (text,
        "global:2:224:0.32:1.0,local:8:96:0.05:0.32");
    fail_unless_equals_int (preset, 1);
    g_free (text);
  }

  /* a preset sets the text; custom text makes the preset none */
  gst_util_set_object_arg (G_OBJECT (e), "preset", "target-context");
  text = get_views (e, &preset);
  fail_unless_equals_string (text, "target:patch,context:context:0:4x");
  g_free (text);
  g_object_set (e, "views", "x:patch, y:context:64:0.5", NULL);
  text = get_views (e, &preset);
  fail_unless_equals_string (text, "x:patch, y:context:64:0.5");
  fail_unless_equals_int (preset, 0);
  g_free (text);
  gst_util_set_object_arg (G_OBJECT (e), "preset", "two-view");
  text = get_views (e, &preset);
  fail_unless_equals_string (text, "view:2:224:0.08:1.0");
  g_free (text);
  gst_object_unref (e);
}

GST_END_TEST;

/* Caps out name the format and the number of views. */
GST_START_TEST (test_output_caps)
{
  gchar *path = make_slide ("caps.tiff", 12, NULL);
  GstElement *pipeline, *src, *sink;
  WsiPatchRecord r[2];
  GstSample *sample;
  GstStructure *s;
  gint n_views = 0;

  make_records (r, 2);
  pipeline = gst_parse_launch ("appsrc name=src format=bytes "
      "caps=application/x-wsi-patches ! patchreader ! "
      "video/x-raw,format=RGBx ! patchviews preset=two-view ! "
      "appsink name=sink sync=false", NULL);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src),
          make_coords (path, r, 2)), GST_FLOW_OK);
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
      60 * GST_SECOND);
  fail_unless (sample != NULL);
  s = gst_caps_get_structure (gst_sample_get_caps (sample), 0);
  fail_unless (gst_structure_has_name (s, WSI_VIEWS_MEDIA_TYPE));
  fail_unless_equals_string (gst_structure_get_string (s, "format"), "RGBx");
  fail_unless (gst_structure_get_int (s, "n-views", &n_views));
  fail_unless_equals_int (n_views, 2);
  fail_unless_equals_int (gst_memory_get_sizes (gst_buffer_peek_memory
          (gst_sample_get_buffer (sample), 1), NULL, NULL), 224 * 224 * 4);
  gst_sample_unref (sample);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (path);
}

GST_END_TEST;

/* ---- real slides (skipped when absent) --------------------------------- */

/* The real slide @name, or NULL after a SKIP line naming the calling
 * check (a failure under CI=true). */
#define shared_slide(name) WSI_TEST_SHARED_SLIDE (name)

/* CMU (one level, the TIFF backend): the 2x context's centre is the patch
 * shrunk, unshifted. NDPI (OpenSlide): 4x context views centred, at 4x the
 * mpp. TCGA JPEG 2000 (no mpp): a factor works, an absolute mpp drops the
 * location with a reason. */
GST_START_TEST (test_real_slides)
{
  gchar *cmu = shared_slide ("Aperio-CMU-1-Small-Region.svs");
  gchar *ndpi = shared_slide ("Hamamatsu-test3-DAPI-2-387.ndpi");
  gchar *tcga = shared_slide ("Aperio-JP2K-TCGA-CR-7395-01A-01-TS1.svs");
  WsiPatchRecord r[4];
  GList *out, *l;
  GstElement *views;
  guint i;

  if (cmu) {
    for (i = 0; i < 4; i++) {
      r[i] = make_record (i, 800 + 200 * i, 1200 + 150 * i);
      r[i].out_mpp = 0.499f;
    }
    out = run_views (cmu, r, 4, "views=t:patch,c:context:0:2x "
        "dct-scaling=false", NULL, NULL);
    fail_unless_equals_int (g_list_length (out), 4);
    for (l = out; l; l = l->next) {
      ViewsInfo info = views_info (l->data);
      gsize size;
      guint8 *patch = view_bytes (l->data, 0, &size);
      guint8 *ctx = view_bytes (l->data, 1, &size);
      gdouble centred = centre_difference (ctx, PATCH, patch, 2, 0, 0);

      fail_unless (centred < 2.0, "CMU: %.2f", centred);
      fail_unless (centred < centre_difference (ctx, PATCH, patch, 2, 1, 0));
      fail_unless (centred < centre_difference (ctx, PATCH, patch, 2, 0, 1));
      fail_unless (fabs (info.views[1].mpp - 0.998) < 1e-3);
      g_free (patch);
      g_free (ctx);
    }
    free_buffers (out);
  }
  if (ndpi) {
    for (i = 0; i < 4; i++) {
      r[i] = make_record (i, 1024 + 256 * i, 2048 + 128 * i);
      r[i].out_mpp = 0.2282f;
    }
    out = run_views (ndpi, r, 4, "preset=target-context", NULL, NULL);
    fail_unless_equals_int (g_list_length (out), 4);
    for (l = out; l; l = l->next) {
      ViewsInfo info = views_info (l->data);
      const WsiViewRecord *vr = &info.views[1];

      fail_unless_equals_string (info.names[1], "context");
      fail_unless_equals_float (vr->width0, 4 * PATCH);
      fail_unless (fabs (vr->x + vr->width0 / 2 - info.record.x - PATCH / 2)
          <= 0.5);
      fail_unless (fabs (vr->mpp - 4 * 0.2282) < 1e-3);
    }
    free_buffers (out);
    /* the direct reader declines NDPI: backend=tiff drops every location */
    out = run_views (ndpi, r, 4, "preset=target-context backend=tiff", NULL,
        &views);
    fail_unless_equals_int (g_list_length (out), 0);
    fail_unless_equals_uint64 (wsi_test_get_u64 (views, "locations-dropped"),
        4);
    gst_object_unref (views);
  }
  if (tcga) {
    for (i = 0; i < 2; i++)
      r[i] = make_record (i, 1500 + 300 * i, 1500);     /* out_mpp 0 below */
    r[0].out_mpp = r[1].out_mpp = 0.0f;
    out = run_views (tcga, r, 2, "views=c:context:64:2x", NULL, NULL);
    fail_unless_equals_int (g_list_length (out), 2);
    free_buffers (out);
    out = run_views (tcga, r, 2, "views=c:context:64:1.0", NULL, &views);
    fail_unless_equals_int (g_list_length (out), 0);
    fail_unless_equals_uint64 (wsi_test_get_u64 (views, "locations-dropped"),
        2);
    gst_object_unref (views);
  }
  g_free (cmu);
  g_free (ndpi);
  g_free (tcga);
}

GST_END_TEST;

/* ---- patchviews alone, on synthetic patches ------------------------------ */

#define SMALL 32

/* A SMALL x SMALL RGB patch whose bytes depend on @sequence, with its
 * record. */
static GstBuffer *
make_patch (guint64 sequence, guint count)
{
  const gchar *paths[] = { "synthetic.tiff", "synthetic.tiff", NULL };
  const gchar *labels[] = { "", "", NULL };
  GstBuffer *buf = gst_buffer_new_allocate (NULL, SMALL * SMALL * 3, NULL);
  WsiPatchRecord rec[2];
  GstMapInfo map;
  guint i;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  for (i = 0; i < map.size; i++)
    map.data[i] = (guint8) (i * 7 + sequence * 13);
  gst_buffer_unmap (buf, &map);
  rec[0] = make_record (sequence, 100, 100);
  rec[0].footprint = rec[0].out_size = SMALL;
  rec[1] = rec[0];
  if (count > 0)
    wsi_patch_meta_add (buf, rec, count, paths, labels);
  GST_BUFFER_OFFSET (buf) = sequence;
  return buf;
}

static GstHarness *
views_harness (const gchar * views, guint threads)
{
  GstElement *e = gst_element_factory_make ("patchviews", NULL);
  GstHarness *h;

  fail_unless (e != NULL);
  g_object_set (e, "views", views, "threads", threads, NULL);
  h = gst_harness_new_with_element (e, "sink", "src");
  gst_object_unref (e);
  gst_harness_set_src_caps_str (h, "video/x-raw, format=RGB, width=32, "
      "height=32, framerate=0/1");
  return h;
}

/* A flush drops what is in flight; the stream then goes on in order and
 * ends with EOS. */
GST_START_TEST (test_flush_then_continue)
{
  GstHarness *h = views_harness ("a:3:16:0.1:1,p:patch", 2);
  GstBuffer *buf;
  guint64 expected = 100;
  guint i, n = 0;

  for (i = 0; i < 6; i++)
    fail_unless_equals_int (gst_harness_push (h, make_patch (i, 1)),
        GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  /* whatever got out before the flush */
  while ((buf = gst_harness_try_pull (h)) != NULL) {
    fail_unless (GST_BUFFER_OFFSET (buf) < 6);
    gst_buffer_unref (buf);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_segment
          (&(GstSegment) {
            .format = GST_FORMAT_TIME,.rate = 1.0,.applied_rate = 1.0,
            .stop = GST_CLOCK_TIME_NONE,.duration = GST_CLOCK_TIME_NONE})));
  for (i = 0; i < 5; i++)
    fail_unless_equals_int (gst_harness_push (h, make_patch (100 + i, 1)),
        GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  while (TRUE) {
    fail_unless (gst_harness_pull_until_eos (h, &buf));
    if (buf == NULL)
      break;
    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (buf), expected);
    fail_unless_equals_int (gst_buffer_n_memory (buf), 4);
    expected++;
    n++;
    gst_buffer_unref (buf);
  }
  fail_unless_equals_int (n, 5);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A buffer without a record is dropped with one warning; a batch is an
 * error (patchviews goes before patchbatch). */
GST_START_TEST (test_bad_input)
{
  GstHarness *h = views_harness ("p:patch", 1);
  GstBus *bus = gst_bus_new ();
  GstBuffer *buf;
  gchar *text;

  gst_element_set_bus (h->element, bus);
  fail_unless_equals_int (gst_harness_push (h, make_patch (0, 0)),
      GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_push (h, make_patch (1, 1)),
      GST_FLOW_OK);
  buf = gst_harness_pull (h);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (buf), 1);
  gst_buffer_unref (buf);
  text = wsi_test_pop_message_text (bus, GST_MESSAGE_WARNING);
  fail_unless (text != NULL && strstr (text, "WsiPatchMeta") != NULL);
  g_free (text);

  fail_unless_equals_int (gst_harness_push (h, make_patch (2, 2)),
      GST_FLOW_ERROR);
  text = wsi_test_pop_message_text (bus, GST_MESSAGE_ERROR);
  fail_unless (text != NULL && strstr (text, "before patchbatch") != NULL,
      "%s", GST_STR_NULL (text));
  g_free (text);

  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The same views in BGRx as in RGB: every view (patch, crop, context) is
 * the RGB one with its channels reordered and padding 255. */
GST_START_TEST (test_bgrx_matches_rgb)
{
  gchar *path = make_slide ("bgrx.tiff", 14, NULL);
  const gchar *views = "views=t:patch,c:2:24:0.2:0.9,ctx:context:32:2x "
      "seed=4 dct-scaling=false";
  WsiPatchRecord r[6];
  GList *rgb, *bgrx, *a, *b;
  guint v;
  gsize i;

  make_records (r, 6);
  rgb = run_views (path, r, 6, views, NULL, NULL);
  bgrx = run_views_full (path, r, 6, NULL, "video/x-raw,format=BGRx", views,
      NULL, NULL, NULL);
  fail_unless_equals_int (g_list_length (rgb), 6);
  fail_unless_equals_int (g_list_length (bgrx), 6);
  for (a = rgb, b = bgrx; a; a = a->next, b = b->next) {
    for (v = 0; v < 4; v++) {
      gsize na, nb;
      guint8 *pa = view_bytes (a->data, v, &na);
      guint8 *pb = view_bytes (b->data, v, &nb);

      fail_unless_equals_int (na / 3, nb / 4);
      for (i = 0; i < na / 3; i++) {
        fail_unless (pb[4 * i] == pa[3 * i + 2]
            && pb[4 * i + 1] == pa[3 * i + 1]
            && pb[4 * i + 2] == pa[3 * i], "view %u pixel %" G_GSIZE_FORMAT,
            v, i);
        /* crops resample the padding too: it stays 255 */
        fail_unless_equals_int (pb[4 * i + 3], 255);
      }
      g_free (pa);
      g_free (pb);
    }
  }
  free_buffers (rgb);
  free_buffers (bgrx);
  g_free (path);
}

GST_END_TEST;

static Suite *
patchviews_suite (void)
{
  Suite *s = suite_create ("patchviews");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 180);
  tcase_add_test (tc, test_crops_inside_and_sized);
  tcase_add_test (tc, test_scale_distribution);
  tcase_add_test (tc, test_views_aligned_with_locations);
  tcase_add_test (tc, test_crop_pixels_bilinear);
  tcase_add_test (tc, test_crop_pixels_area);
  tcase_add_test (tc, test_context_centred);
  tcase_add_test (tc, test_same_bytes_for_any_thread_count);
  tcase_add_test (tc, test_reader_and_views_share_caches);
  tcase_add_test (tc, test_unreadable_context_dropped);
  tcase_add_test (tc, test_latin1_file_name);
  tcase_add_test (tc, test_context_mpp_from_meta);
  tcase_add_test (tc, test_state_cycles);
  tcase_add_test (tc, test_properties_validated);
  tcase_add_test (tc, test_output_caps);
  tcase_add_test (tc, test_bgrx_matches_rgb);
  tcase_add_test (tc, test_real_slides);
  tcase_add_test (tc, test_flush_then_continue);
  tcase_add_test (tc, test_bad_input);
  return s;
}

GST_CHECK_MAIN (patchviews);
