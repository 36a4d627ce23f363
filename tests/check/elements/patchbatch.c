/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit tests for patchbatch: batch bytes and layout, caps, metas, short
 * last batch, formats and strides, negotiated pools, flushing, states;
 * multi-view batches, slide columns, normalised float batches. */

#include <math.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <gst/app/gstappsink.h>
#include <gst/wsi/wsirecord.h>
#include "wsitestutil.h"

/* Byte @byte of row @row of patch @index: distinct for every patch. */
static guint8
patch_byte (guint index, guint row, guint byte)
{
  return (guint8) (index * 37 + row * 11 + byte * 3 + 1);
}

/* A patch laid out as GstVideoInfo says for @caps_str (padded rows for RGB
 * widths that are not multiples of 4), or with rows of @stride bytes and a
 * GstVideoMeta when @stride is not 0. The padding holds 0xEE. */
static GstBuffer *
make_patch (const GstVideoInfo * info, guint index, gint stride)
{
  gsize row_bytes = GST_VIDEO_INFO_WIDTH (info) *
      GST_VIDEO_INFO_COMP_PSTRIDE (info, 0);
  guint height = GST_VIDEO_INFO_HEIGHT (info);
  gint real_stride = stride ? stride : GST_VIDEO_INFO_PLANE_STRIDE (info, 0);
  gsize size = stride ? (gsize) stride * height : GST_VIDEO_INFO_SIZE (info);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
  WsiPatchRecord record = { 0, };
  gchar *path = g_strdup_printf ("/slides/s%u.svs", index / 2);
  gchar *label = g_strdup_printf ("class-%u", index % 3);
  const gchar *paths[] = { path, NULL };
  const gchar *labels[] = { label, NULL };
  GstMapInfo map;
  guint row, b;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  memset (map.data, 0xEE, map.size);
  for (row = 0; row < height; row++)
    for (b = 0; b < row_bytes; b++)
      map.data[row * real_stride + b] = patch_byte (index, row, b);
  gst_buffer_unmap (buf, &map);

  if (stride) {
    gsize offset[GST_VIDEO_MAX_PLANES] = { 0, };
    gint strides[GST_VIDEO_MAX_PLANES] = { stride, };

    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_INFO_FORMAT (info), GST_VIDEO_INFO_WIDTH (info), height, 1,
        offset, strides);
  }

  record.sequence = 1000 + index;
  record.x = index * 256;
  record.y = 7;
  record.slide_index = index / 2;
  record.out_size = GST_VIDEO_INFO_WIDTH (info);
  wsi_patch_meta_add (buf, &record, 1, paths, labels);
  GST_BUFFER_OFFSET (buf) = 1000 + index;
  g_free (path);
  g_free (label);
  return buf;
}

static GstHarness *
new_batch (guint batch_size, const gchar * caps_str, GstVideoInfo * info)
{
  GstHarness *h = gst_harness_new ("patchbatch");
  GstCaps *caps = gst_caps_from_string (caps_str);

  fail_unless (gst_video_info_from_caps (info, caps));
  gst_caps_unref (caps);
  g_object_set (h->element, "batch-size", batch_size, NULL);
  gst_harness_set_src_caps_str (h, caps_str);
  return h;
}

static void
push_patches (GstHarness * h, const GstVideoInfo * info, guint first,
    guint count, gint stride)
{
  guint i;

  for (i = first; i < first + count; i++)
    fail_unless_equals_int (gst_harness_push (h, make_patch (info, i,
                stride)), GST_FLOW_OK);
}

/* Checks that @batch holds patches @first.. tightly stacked, and that its
 * GstVideoMeta says so. */
static void
check_batch_pixels (GstBuffer * batch, const GstVideoInfo * info,
    guint first, guint count)
{
  gsize row_bytes = GST_VIDEO_INFO_WIDTH (info) *
      GST_VIDEO_INFO_COMP_PSTRIDE (info, 0);
  guint height = GST_VIDEO_INFO_HEIGHT (info);
  GstVideoMeta *vmeta = gst_buffer_get_video_meta (batch);
  GstMapInfo map;
  guint p, row, b;

  fail_unless_equals_int (gst_buffer_get_size (batch),
      count * height * row_bytes);
  fail_unless (vmeta != NULL);
  fail_unless_equals_int (vmeta->format, GST_VIDEO_INFO_FORMAT (info));
  fail_unless_equals_int (vmeta->width, GST_VIDEO_INFO_WIDTH (info));
  fail_unless_equals_int (vmeta->height, count * height);
  fail_unless_equals_int (vmeta->stride[0], row_bytes);
  fail_unless_equals_int (vmeta->offset[0], 0);

  fail_unless (gst_buffer_map (batch, &map, GST_MAP_READ));
  for (p = 0; p < count; p++)
    for (row = 0; row < height; row++)
      for (b = 0; b < row_bytes; b++) {
        gsize at = (p * height + row) * row_bytes + b;

        if (map.data[at] != patch_byte (first + p, row, b))
          fail ("batch byte %" G_GSIZE_FORMAT " (patch %u row %u byte %u) "
              "is %u, expected %u", at, p, row, b, map.data[at],
              patch_byte (first + p, row, b));
      }
  gst_buffer_unmap (batch, &map);
}

static void
check_caps_height (GstCaps * caps, const gchar * format, gint width,
    gint height)
{
  GstStructure *s = gst_caps_get_structure (caps, 0);
  gint value, num, den;

  fail_unless_equals_string (gst_structure_get_string (s, "format"), format);
  fail_unless (gst_structure_get_int (s, "width", &value));
  fail_unless_equals_int (value, width);
  fail_unless (gst_structure_get_int (s, "height", &value));
  fail_unless_equals_int (value, height);
  fail_unless (gst_structure_get_fraction (s, "framerate", &num, &den));
  fail_unless_equals_int (num, 0);
}

/* The heights of the CAPS events the harness received, in order, e.g.
 * "12 8". */
static gchar *
caps_heights (GstHarness * h)
{
  GString *heights = g_string_new (NULL);
  GstEvent *event;

  while ((event = gst_harness_try_pull_event (h)) != NULL) {
    if (GST_EVENT_TYPE (event) == GST_EVENT_CAPS) {
      GstCaps *caps;
      gint height;

      gst_event_parse_caps (event, &caps);
      gst_structure_get_int (gst_caps_get_structure (caps, 0), "height",
          &height);
      g_string_append_printf (heights, "%s%d", heights->len ? " " : "",
          height);
    }
    gst_event_unref (event);
  }
  return g_string_free (heights, FALSE);
}

static guint
batches_pushed (GstHarness * h)
{
  guint n;

  g_object_get (h->element, "batches-pushed", &n, NULL);
  return n;
}

GST_START_TEST (test_batch_is_concatenation)
{
  GstVideoInfo info;
  GstHarness *h = new_batch (3,
      "video/x-raw,format=RGB,width=4,height=4,framerate=0/1", &info);
  GstBuffer *batch;
  GstCaps *caps;
  guint i;

  push_patches (h, &info, 0, 6, 0);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 2);
  fail_unless_equals_int (batches_pushed (h), 2);

  caps = gst_pad_get_current_caps (h->sinkpad);
  check_caps_height (caps, "RGB", 4, 3 * 4);
  gst_caps_unref (caps);

  for (i = 0; i < 2; i++) {
    batch = gst_harness_pull (h);
    check_batch_pixels (batch, &info, 3 * i, 3);
    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (batch), i);
    fail_unless_equals_uint64 (GST_BUFFER_OFFSET_END (batch), i + 3);
    fail_if (GST_BUFFER_PTS_IS_VALID (batch));
    gst_buffer_unref (batch);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_meta_concatenated_in_order)
{
  GstVideoInfo info;
  GstHarness *h = new_batch (5,
      "video/x-raw,format=RGBA,width=8,height=8", &info);
  GstBuffer *batch;
  GstStructure *meta;
  const WsiPatchRecord *records;
  guint n, count, i;

  push_patches (h, &info, 0, 5, 0);
  batch = gst_harness_pull (h);
  meta = wsi_patch_meta_get (batch);
  fail_unless (meta != NULL);
  fail_unless (gst_structure_get_uint (meta, "count", &count));
  fail_unless_equals_int (count, 5);
  records = wsi_patch_meta_records (meta, &n);
  fail_unless_equals_int (n, 5);
  for (i = 0; i < 5; i++) {
    gchar *path = g_strdup_printf ("/slides/s%u.svs", i / 2);
    gchar *label = g_strdup_printf ("class-%u", i % 3);

    fail_unless_equals_uint64 (records[i].sequence, 1000 + i);
    fail_unless_equals_int64 (records[i].x, i * 256);
    fail_unless_equals_int (records[i].slide_index, i / 2);
    fail_unless_equals_string (wsi_patch_meta_string (meta, "paths", i),
        path);
    fail_unless_equals_string (wsi_patch_meta_string (meta, "labels", i),
        label);
    g_free (path);
    g_free (label);
  }
  fail_unless (wsi_patch_meta_string (meta, "paths", 5) == NULL);
  gst_buffer_unref (batch);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Each patch's slide uri and level-0 mpp (patch meta `uris`, `mpps`, set
 * by patchreader) reach the batch, one entry per patch in order; a patch
 * without them gets "" and 0; a batch where no patch has them has neither
 * field. */
GST_START_TEST (test_slide_uris_and_mpps_gathered)
{
  GstVideoInfo info;
  GstHarness *h = new_batch (4,
      "video/x-raw,format=RGB,width=4,height=4,framerate=0/1", &info);
  GstBuffer *batch;
  GstStructure *meta;
  const GValue *mpps;
  guint i;

  for (i = 0; i < 4; i++) {
    GstBuffer *patch = make_patch (&info, i, 0);
    gchar *uri = g_strdup_printf ("file:///slides/s%u.svs", i / 2);
    const gchar *uris[] = { uri, NULL };
    gdouble mpp = 0.25 * (1 + i / 2);

    if (i != 3)
      wsi_patch_meta_set_slides (wsi_patch_meta_get (patch), uris, &mpp, 1);
    fail_unless_equals_int (gst_harness_push (h, patch), GST_FLOW_OK);
    g_free (uri);
  }
  batch = gst_harness_pull (h);
  meta = wsi_patch_meta_get (batch);
  mpps = gst_structure_get_value (meta, "mpps");
  fail_unless (mpps != NULL && GST_VALUE_HOLDS_ARRAY (mpps));
  fail_unless_equals_int (gst_value_array_get_size (mpps), 4);
  for (i = 0; i < 3; i++) {
    gchar *uri = g_strdup_printf ("file:///slides/s%u.svs", i / 2);

    fail_unless_equals_string (wsi_patch_meta_string (meta, "uris", i), uri);
    fail_unless_equals_float (wsi_patch_meta_mpp (meta, i),
        0.25 * (1 + i / 2));
    g_free (uri);
  }
  fail_unless_equals_string (wsi_patch_meta_string (meta, "uris", 3), "");
  fail_unless_equals_float (wsi_patch_meta_mpp (meta, 3), 0.0);
  fail_unless (wsi_patch_meta_string (meta, "uris", 4) == NULL);
  gst_buffer_unref (batch);

  push_patches (h, &info, 4, 4, 0);
  batch = gst_harness_pull (h);
  meta = wsi_patch_meta_get (batch);
  fail_if (gst_structure_has_field (meta, "uris"));
  fail_if (gst_structure_has_field (meta, "mpps"));
  gst_buffer_unref (batch);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_short_last_batch)
{
  GstVideoInfo info;
  GstHarness *h = new_batch (4,
      "video/x-raw,format=RGB,width=4,height=4", &info);
  GstBuffer *batch;
  GstStructure *meta;
  guint count;
  gchar *heights;

  push_patches (h, &info, 0, 6, 0);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 2);
  fail_unless_equals_int (batches_pushed (h), 2);

  gst_buffer_unref (gst_harness_pull (h));
  batch = gst_harness_pull (h);
  check_batch_pixels (batch, &info, 4, 2);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (batch), 1);
  meta = wsi_patch_meta_get (batch);
  fail_unless (gst_structure_get_uint (meta, "count", &count));
  fail_unless_equals_int (count, 2);
  gst_buffer_unref (batch);

  /* full-batch caps first, then the short batch's own */
  heights = caps_heights (h);
  fail_unless_equals_string (heights, "16 8");
  g_free (heights);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_drop_remainder)
{
  GstVideoInfo info;
  GstHarness *h = new_batch (4,
      "video/x-raw,format=RGB,width=4,height=4", &info);
  GstEvent *event;
  gboolean saw_eos = FALSE;

  g_object_set (h->element, "drop-remainder", TRUE, NULL);
  push_patches (h, &info, 0, 7, 0);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 1);
  fail_unless_equals_int (batches_pushed (h), 1);
  while ((event = gst_harness_try_pull_event (h)) != NULL) {
    saw_eos |= GST_EVENT_TYPE (event) == GST_EVENT_EOS;
    gst_event_unref (event);
  }
  fail_unless (saw_eos);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_rgbx_and_bgrx)
{
  static const gchar *formats[] = { "RGBx", "BGRx" };
  guint f;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    GstVideoInfo info;
    gchar *caps_str = g_strdup_printf ("video/x-raw,format=%s,width=5,"
        "height=3", formats[f]);
    GstHarness *h = new_batch (2, caps_str, &info);
    GstBuffer *batch;
    GstCaps *caps;

    push_patches (h, &info, 0, 2, 0);
    batch = gst_harness_pull (h);
    check_batch_pixels (batch, &info, 0, 2);
    caps = gst_pad_get_current_caps (h->sinkpad);
    check_caps_height (caps, formats[f], 5, 6);
    gst_caps_unref (caps);
    gst_buffer_unref (batch);
    gst_harness_teardown (h);
    g_free (caps_str);
  }
}

GST_END_TEST;

GST_START_TEST (test_rgb_width_not_multiple_of_4)
{
  GstVideoInfo info;
  GstHarness *h = new_batch (3,
      "video/x-raw,format=RGB,width=6,height=6", &info);
  GstBuffer *batch;

  /* GStreamer pads RGB rows of 18 bytes to 20: the batch must not */
  fail_unless_equals_int (GST_VIDEO_INFO_PLANE_STRIDE (&info, 0), 20);
  push_patches (h, &info, 0, 1, 0);     /* default padded layout */
  push_patches (h, &info, 1, 1, 24);    /* GstVideoMeta with wider rows */
  push_patches (h, &info, 2, 1, 18);    /* GstVideoMeta, tight rows */
  batch = gst_harness_pull (h);
  check_batch_pixels (batch, &info, 0, 3);
  gst_buffer_unref (batch);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_videoconvert_reads_tight_rgb)
{
  GstVideoInfo info;
  GstHarness *h = gst_harness_new_parse ("patchbatch batch-size=2 ! "
      "videoconvert ! capsfilter caps=video/x-raw,format=RGBA");
  GstCaps *caps = gst_caps_from_string ("video/x-raw,format=RGB,width=6,"
      "height=6");
  GstBuffer *out;
  GstVideoFrame frame;
  GstVideoInfo out_info;
  GstCaps *out_caps;
  guint p, row, x, c;

  fail_unless (gst_video_info_from_caps (&info, caps));
  gst_harness_set_src_caps (h, caps);
  push_patches (h, &info, 0, 2, 0);
  out = gst_harness_pull (h);
  out_caps = gst_pad_get_current_caps (h->sinkpad);
  fail_unless (gst_video_info_from_caps (&out_info, out_caps));
  gst_caps_unref (out_caps);
  fail_unless_equals_int (GST_VIDEO_INFO_HEIGHT (&out_info), 12);

  /* every RGB byte must come through videoconvert where it belongs */
  fail_unless (gst_video_frame_map (&frame, &out_info, out, GST_MAP_READ));
  for (p = 0; p < 2; p++)
    for (row = 0; row < 6; row++)
      for (x = 0; x < 6; x++) {
        const guint8 *px = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame,
            0) + (p * 6 + row) * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0)
            + x * 4;

        for (c = 0; c < 3; c++)
          fail_unless_equals_int (px[c], patch_byte (p, row, x * 3 + c));
        fail_unless_equals_int (px[3], 255);
      }
  gst_video_frame_unmap (&frame);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

static GstPadProbeReturn
offer_pool (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstQuery *query = GST_PAD_PROBE_INFO_QUERY (info);
  GstBufferPool *pool = user_data;

  if (GST_QUERY_TYPE (query) == GST_QUERY_ALLOCATION) {
    GstCaps *caps;
    GstVideoInfo vinfo;

    gst_query_parse_allocation (query, &caps, NULL);
    fail_unless (gst_video_info_from_caps (&vinfo, caps));
    /* a downstream pool sized for the caps, as cudaupload would offer */
    gst_query_add_allocation_pool (query, pool, vinfo.size, 0, 0);
  }
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_downstream_pool_used)
{
  GstVideoInfo info;
  GstHarness *h = gst_harness_new ("patchbatch");
  GstBufferPool *offered = gst_buffer_pool_new ();
  GstBuffer *batch;

  gst_pad_add_probe (h->sinkpad, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM,
      offer_pool, offered, NULL);
  g_object_set (h->element, "batch-size", 2, NULL);
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGB,width=6,height=6");
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, 6, 6);

  push_patches (h, &info, 0, 4, 0);
  batch = gst_harness_pull (h);
  fail_unless (batch->pool == offered);
  check_batch_pixels (batch, &info, 0, 2);
  gst_buffer_unref (batch);
  batch = gst_harness_pull (h);
  fail_unless (batch->pool == offered);
  check_batch_pixels (batch, &info, 2, 2);
  gst_buffer_unref (batch);

  gst_harness_teardown (h);
  gst_object_unref (offered);
}

GST_END_TEST;

GST_START_TEST (test_own_video_pool_without_offer)
{
  GstVideoInfo info;
  GstHarness *h = new_batch (2,
      "video/x-raw,format=RGBA,width=4,height=4", &info);
  GstBuffer *batch;

  push_patches (h, &info, 0, 2, 0);
  batch = gst_harness_pull (h);
  fail_unless (batch->pool != NULL);
  fail_unless (GST_IS_VIDEO_BUFFER_POOL (batch->pool));
  gst_buffer_unref (batch);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The VmFlags line of the mapping of /proc/self/smaps holding @addr. */
static gchar *
smaps_vm_flags (gconstpointer addr)
{
  gchar *text = NULL, **lines, *flags = NULL;
  gboolean inside = FALSE;
  guint i;

  if (!g_file_get_contents ("/proc/self/smaps", &text, NULL, NULL))
    return NULL;
  lines = g_strsplit (text, "\n", -1);
  for (i = 0; lines[i] != NULL && flags == NULL; i++) {
    guint64 start, end;

    if (sscanf (lines[i], "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x ",
            &start, &end) == 2 && strchr (lines[i], ' ') != NULL
        && g_ascii_isxdigit (lines[i][0]) && strchr (lines[i], ':') != NULL
        && !g_str_has_prefix (lines[i], "VmFlags"))
      inside = start <= (guintptr) addr && (guintptr) addr < end;
    else if (inside && g_str_has_prefix (lines[i], "VmFlags:"))
      flags = g_strdup (lines[i] + strlen ("VmFlags:"));
  }
  g_strfreev (lines);
  g_free (text);
  return flags;
}

/* A 12 MiB batch asks the kernel for transparent huge pages (madvise: the
 * mapping's VmFlags gain "hg"), so its first fill does not fault each 4 KiB
 * page. Skipped where the kernel has no THP or has it off. */
GST_START_TEST (test_large_batches_ask_for_huge_pages)
{
  gchar *mode = NULL, *flags;
  GstVideoInfo info;
  GstHarness *h;
  GstBuffer *batch;
  GstMapInfo map;

  if (!g_file_get_contents ("/sys/kernel/mm/transparent_hugepage/enabled",
          &mode, NULL, NULL) || strstr (mode, "[never]") != NULL) {
    WSI_TEST_SKIP ("no transparent huge pages on this kernel");
    g_free (mode);
    return;
  }
  g_free (mode);
  h = new_batch (64, "video/x-raw,format=RGB,width=256,height=256", &info);
  push_patches (h, &info, 0, 64, 0);
  batch = gst_harness_pull (h);
  fail_unless (gst_buffer_map (batch, &map, GST_MAP_READ));
  fail_unless (map.size >= 64 * 256 * 256 * 3);
  /* the middle of the batch lies in its 2 MiB-aligned part */
  flags = smaps_vm_flags (map.data + map.size / 2);
  fail_unless (flags != NULL, "no mapping holds the batch");
  fail_unless (strstr (flags, " hg") != NULL, "VmFlags:%s", flags);
  g_free (flags);
  gst_buffer_unmap (batch, &map);
  gst_buffer_unref (batch);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_flush_discards_partial_batch)
{
  GstVideoInfo info;
  GstHarness *h = new_batch (4,
      "video/x-raw,format=RGB,width=4,height=4", &info);
  GstSegment segment;
  GstBuffer *batch;

  push_patches (h, &info, 0, 3, 0);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);

  push_patches (h, &info, 10, 4, 0);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 1);
  batch = gst_harness_pull (h);
  check_batch_pixels (batch, &info, 10, 4);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (batch), 0);
  gst_buffer_unref (batch);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_caps_change_pushes_partial_batch)
{
  GstVideoInfo small, big;
  GstHarness *h = new_batch (4,
      "video/x-raw,format=RGB,width=4,height=4", &small);
  GstCaps *caps = gst_caps_from_string ("video/x-raw,format=RGBA,width=8,"
      "height=8");
  GstBuffer *batch;
  gchar *heights;

  fail_unless (gst_video_info_from_caps (&big, caps));
  push_patches (h, &small, 0, 3, 0);
  gst_harness_set_src_caps (h, caps);
  push_patches (h, &big, 3, 4, 0);

  batch = gst_harness_pull (h);
  check_batch_pixels (batch, &small, 0, 3);
  gst_buffer_unref (batch);
  batch = gst_harness_pull (h);
  check_batch_pixels (batch, &big, 3, 4);
  gst_buffer_unref (batch);

  heights = caps_heights (h);
  fail_unless_equals_string (heights, "16 12 32");
  g_free (heights);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_batch_size_change_applies_to_next_batch)
{
  GstVideoInfo info;
  GstHarness *h = new_batch (3,
      "video/x-raw,format=RGB,width=4,height=4,framerate=0/1", &info);
  GstBuffer *batch;
  gchar *heights;

  push_patches (h, &info, 0, 2, 0);
  g_object_set (h->element, "batch-size", 5, NULL);
  /* same layout, other framerate: the batch in progress goes on */
  gst_harness_set_src_caps_str (h,
      "video/x-raw,format=RGB,width=4,height=4,framerate=1/1");
  push_patches (h, &info, 2, 1, 0);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 1);
  push_patches (h, &info, 3, 5, 0);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 2);

  batch = gst_harness_pull (h);
  check_batch_pixels (batch, &info, 0, 3);
  gst_buffer_unref (batch);
  batch = gst_harness_pull (h);
  check_batch_pixels (batch, &info, 3, 5);
  gst_buffer_unref (batch);
  heights = caps_heights (h);
  fail_unless_equals_string (heights, "12 20");
  g_free (heights);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_too_small_patch_is_an_error)
{
  GstVideoInfo info;
  GstHarness *h = new_batch (2,
      "video/x-raw,format=RGBA,width=4,height=4", &info);
  GstBuffer *patch = make_patch (&info, 0, 0);

  gst_buffer_resize (patch, 0, 40);
  fail_unless_equals_int (gst_harness_push (h, patch), GST_FLOW_ERROR);
  gst_harness_teardown (h);
}

GST_END_TEST;

static gpointer
push_one_patch (gpointer data)
{
  GstHarness *h = data;
  GstVideoInfo info;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGBA, 4, 4);
  return GINT_TO_POINTER (gst_harness_push (h, make_patch (&info, 9, 0)));
}

static GstPadProbeReturn
offer_pool_of_one (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstQuery *query = GST_PAD_PROBE_INFO_QUERY (info);

  if (GST_QUERY_TYPE (query) == GST_QUERY_ALLOCATION)
    gst_query_add_allocation_pool (query, GST_BUFFER_POOL (user_data),
        64, 1, 1);
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_flush_unblocks_waiting_acquire)
{
  GstVideoInfo info;
  GstHarness *h = gst_harness_new ("patchbatch");
  GstBufferPool *pool_of_one = gst_buffer_pool_new ();
  GstBuffer *held;
  GThread *thread;

  gst_pad_add_probe (h->sinkpad, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM,
      offer_pool_of_one, pool_of_one, NULL);
  g_object_set (h->element, "batch-size", 1, NULL);
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGBA,width=4,height=4");
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGBA, 4, 4);

  push_patches (h, &info, 0, 1, 0);
  held = gst_harness_pull (h);  /* the pool's only buffer stays out */

  thread = g_thread_new ("pusher", push_one_patch, h);
  /* give it time to block in acquire (no result depends on the delay) */
  g_usleep (G_USEC_PER_SEC / 10);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless_equals_int (GPOINTER_TO_INT (g_thread_join (thread)),
      GST_FLOW_FLUSHING);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));

  gst_buffer_unref (held);
  gst_harness_teardown (h);
  gst_object_unref (pool_of_one);
}

GST_END_TEST;

GST_START_TEST (test_bad_property_refused)
{
  GstElement *e = gst_element_factory_make ("patchbatch", NULL);
  guint value;

  fail_unless (e != NULL);
  /* outside the range: the value kept, no start (wsirefusal.h) */
  g_object_set (e, "batch-size", 0, NULL);
  g_object_set (e, "batch-size", 65537, NULL);
  g_object_get (e, "batch-size", &value, NULL);
  fail_unless_equals_int (value, 64);
  wsi_test_assert_refuses_start (e, GST_STATE_READY,
      "batch-size=\"65537\" (accepted: an integer from 1 to 65536)");
  gst_object_unref (e);
}

GST_END_TEST;

GST_START_TEST (test_null_playing_null_repeated)
{
  GstElement *pipeline = gst_parse_launch ("videotestsrc num-buffers=10 ! "
      "video/x-raw,format=RGB,width=16,height=16 ! patchbatch batch-size=4 "
      "name=batch ! appsink name=sink sync=false wait-on-eos=false", NULL);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstElement *batch = gst_bin_get_by_name (GST_BIN (pipeline), "batch");
  GstBus *bus = gst_element_get_bus (pipeline);
  guint round;

  for (round = 0; round < 3; round++) {
    GstMessage *msg;
    GstSample *sample;
    guint heights = 0, n_pushed;

    fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless (msg != NULL);
    fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
    gst_message_unref (msg);
    /* 4 + 4 + 2 patches of 16 rows */
    while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), 0))) {
      gint height;

      gst_structure_get_int (gst_caps_get_structure (gst_sample_get_caps
              (sample), 0), "height", &height);
      heights += height;
      gst_sample_unref (sample);
    }
    fail_unless_equals_int (heights, 10 * 16);
    g_object_get (batch, "batches-pushed", &n_pushed, NULL);
    fail_unless_equals_int (n_pushed, 3);
    fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
  }

  gst_object_unref (bus);
  gst_object_unref (batch);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
}

GST_END_TEST;

/* ---- multi-view batches, columns, normalised floats -------------------- */

#define N_VIEWS 3
static const gchar *view_names[] = { "global_0", "global_1", "context",
  NULL
};

static const guint view_w[N_VIEWS] = { 8, 6, 4 };
static const guint view_h[N_VIEWS] = { 8, 5, 3 };

/* Byte @b of view @v of location @loc: distinct per location and view. */
static guint8
view_byte (guint loc, guint v, gsize b)
{
  return (guint8) (loc * 53 + v * 29 + b * 7 + 3);
}

static void
add_columns (GstStructure * meta, const gchar * const *names,
    guint n_names, guint first, guint count)
{
  GPtrArray *values = g_ptr_array_new_with_free_func (g_free);
  guint loc, j;

  for (loc = first; loc < first + count; loc++)
    for (j = 0; j < n_names; j++)
      g_ptr_array_add (values, g_strdup_printf ("%s-%u", names[j], loc));
  g_ptr_array_add (values, NULL);
  gst_structure_set (meta, "record-version", G_TYPE_UINT, 2,
      "column-names", G_TYPE_STRV, names,
      "column-values", G_TYPE_STRV, values->pdata, NULL);
  g_ptr_array_unref (values);
}

static const gchar *column_names[] = { "label", "site", NULL };

/* A multi-view buffer of locations @first.. (@count of them), as patchviews
 * makes them: one memory per view, view records, view names, columns. */
static GstBuffer *
make_views (guint first, guint count, guint pixel_bytes)
{
  GstBuffer *buf = gst_buffer_new ();
  WsiPatchRecord *records = g_new0 (WsiPatchRecord, count);
  WsiViewRecord *views = g_new0 (WsiViewRecord, count * N_VIEWS);
  gchar **paths = g_new0 (gchar *, count + 1);
  gchar **labels = g_new0 (gchar *, count + 1);
  GstStructure *meta;
  GBytes *bytes;
  guint v, loc;

  for (v = 0; v < N_VIEWS; v++) {
    gsize image = (gsize) view_w[v] * view_h[v] * pixel_bytes, b;
    GstMemory *mem = gst_allocator_alloc (NULL, count * image, NULL);
    GstMapInfo map;

    fail_unless (gst_memory_map (mem, &map, GST_MAP_WRITE));
    for (loc = 0; loc < count; loc++)
      for (b = 0; b < image; b++)
        map.data[loc * image + b] = view_byte (first + loc, v, b);
    gst_memory_unmap (mem, &map);
    gst_buffer_append_memory (buf, mem);
  }
  for (loc = 0; loc < count; loc++) {
    records[loc].sequence = first + loc;
    records[loc].x = 100 * (first + loc);
    records[loc].slide_index = (first + loc) / 2;
    paths[loc] = g_strdup_printf ("/slides/s%u.svs", (first + loc) / 2);
    labels[loc] = g_strdup_printf ("class-%u", (first + loc) % 3);
    for (v = 0; v < N_VIEWS; v++) {
      WsiViewRecord *r = &views[loc * N_VIEWS + v];

      r->x = 1000.0 * (first + loc) + v;
      r->y = 0.5 * v;
      r->view_index = v;
      r->out_width = view_w[v];
      r->out_height = view_h[v];
      r->flags = v == 2 ? WSI_VIEW_FLAG_CONTEXT : 0;
    }
  }
  meta = wsi_patch_meta_add (buf, records, count,
      (const gchar * const *) paths, (const gchar * const *) labels);
  bytes = g_bytes_new (views, count * N_VIEWS * sizeof (WsiViewRecord));
  gst_structure_set (meta, "record-version", G_TYPE_UINT, 2,
      "view-names", G_TYPE_STRV, view_names, "views", G_TYPE_BYTES, bytes,
      NULL);
  add_columns (meta, column_names, 2, first, count);
  GST_BUFFER_OFFSET (buf) = first;
  g_bytes_unref (bytes);
  g_strfreev (paths);
  g_strfreev (labels);
  g_free (records);
  g_free (views);
  return buf;
}

static const gchar *
strv_at (GstStructure * s, const gchar * field, guint i, guint expect_len)
{
  const GValue *value = gst_structure_get_value (s, field);
  const gchar *const *strv;

  fail_unless (value != NULL && G_VALUE_HOLDS (value, G_TYPE_STRV),
      "no %s", field);
  strv = g_value_get_boxed (value);
  fail_unless_equals_int (g_strv_length ((gchar **) strv), expect_len);
  return strv[i];
}

/* Checks the metadata of a batch of locations @first..@first+n-1 made by
 * make_views (or make_patch with columns when @with_views is FALSE). */
static void
check_location_meta (GstBuffer * batch, guint first, guint n,
    gboolean with_views)
{
  GstStructure *meta = wsi_patch_meta_get (batch);
  const WsiPatchRecord *records;
  const WsiViewRecord *views;
  guint n_records, n_views, i, v, version = 0;

  fail_unless (meta != NULL);
  records = wsi_patch_meta_records (meta, &n_records);
  fail_unless_equals_int (n_records, n);
  fail_unless (gst_structure_get_uint (meta, "record-version", &version));
  fail_unless_equals_int (version, 2);
  for (i = 0; i < n; i++) {
    gchar *path = g_strdup_printf ("/slides/s%u.svs", (first + i) / 2);
    gchar *label = g_strdup_printf ("label-%u", first + i);
    gchar *site = g_strdup_printf ("site-%u", first + i);
    guint64 sequence = (with_views ? 0 : 1000) + first + i;

    fail_unless_equals_int (records[i].sequence, sequence);
    fail_unless_equals_string (strv_at (meta, "paths", i, n), path);
    fail_unless_equals_string (strv_at (meta, "column-names", 0, 2), "label");
    fail_unless_equals_string (strv_at (meta, "column-names", 1, 2), "site");
    fail_unless_equals_string (strv_at (meta, "column-values", 2 * i, 2 * n),
        label);
    fail_unless_equals_string (strv_at (meta, "column-values", 2 * i + 1,
            2 * n), site);
    g_free (path);
    g_free (label);
    g_free (site);
  }
  if (!with_views) {
    fail_if (gst_structure_has_field (meta, "views"));
    return;
  }
  for (v = 0; v < N_VIEWS; v++)
    fail_unless_equals_string (strv_at (meta, "view-names", v, N_VIEWS),
        view_names[v]);
  views = wsi_patch_meta_views (meta, &n_views);
  fail_unless_equals_int (n_views, n * N_VIEWS);
  for (i = 0; i < n; i++)
    for (v = 0; v < N_VIEWS; v++) {
      const WsiViewRecord *r = &views[i * N_VIEWS + v];
      gdouble x = 1000.0 * (first + i) + v;

      fail_unless_equals_float (r->x, x);
      fail_unless_equals_int (r->view_index, v);
      fail_unless_equals_int (r->out_width, view_w[v]);
      fail_unless_equals_int (r->out_height, view_h[v]);
      fail_unless_equals_int (r->flags, v == 2 ? WSI_VIEW_FLAG_CONTEXT : 0);
    }
}

/* Memory v of @batch holds the n images of view v of locations @first..,
 * back to back. */
static void
check_view_pixels (GstBuffer * batch, guint first, guint n)
{
  guint v, i;

  fail_unless_equals_int (gst_buffer_n_memory (batch), N_VIEWS);
  for (v = 0; v < N_VIEWS; v++) {
    gsize image = (gsize) view_w[v] * view_h[v] * 3, b;
    GstMapInfo map;

    fail_unless (gst_memory_map (gst_buffer_peek_memory (batch, v), &map,
            GST_MAP_READ));
    fail_unless_equals_int (map.size, n * image);
    for (i = 0; i < n; i++)
      for (b = 0; b < image; b++)
        if (map.data[i * image + b] != view_byte (first + i, v, b))
          fail ("view %u, location %u, byte %" G_GSIZE_FORMAT ": %u, "
              "expected %u", v, first + i, b, map.data[i * image + b],
              view_byte (first + i, v, b));
    gst_memory_unmap (gst_buffer_peek_memory (batch, v), &map);
  }
}

GST_START_TEST (test_views_batched_by_location)
{
  GstHarness *h = gst_harness_new ("patchbatch");
  GstBuffer *batch;
  GstCaps *caps;
  GstStructure *s;
  gint n_views = 0;

  g_object_set (h->element, "batch-size", 2, NULL);
  gst_harness_set_src_caps_str (h, WSI_VIEWS_MEDIA_TYPE
      ",format=RGB,n-views=3");
  /* 5 locations: one, then three in one buffer (split over two batches),
   * then one; 2 full batches and a short one at EOS */
  fail_unless_equals_int (gst_harness_push (h, make_views (0, 1, 3)),
      GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_push (h, make_views (1, 3, 3)),
      GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_push (h, make_views (4, 1, 3)),
      GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 2);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 3);

  caps = gst_pad_get_current_caps (h->sinkpad);
  s = gst_caps_get_structure (caps, 0);
  fail_unless (gst_structure_has_name (s, WSI_VIEWS_MEDIA_TYPE));
  fail_unless_equals_string (gst_structure_get_string (s, "format"), "RGB");
  fail_unless (gst_structure_get_int (s, "n-views", &n_views));
  fail_unless_equals_int (n_views, 3);
  gst_caps_unref (caps);

  batch = gst_harness_pull (h);
  check_view_pixels (batch, 0, 2);
  check_location_meta (batch, 0, 2, TRUE);
  fail_unless_equals_int (GST_BUFFER_OFFSET (batch), 0);
  fail_unless_equals_int (GST_BUFFER_OFFSET_END (batch), 2);
  gst_buffer_unref (batch);
  batch = gst_harness_pull (h);
  check_view_pixels (batch, 2, 2);
  check_location_meta (batch, 2, 2, TRUE);
  gst_buffer_unref (batch);
  batch = gst_harness_pull (h);
  check_view_pixels (batch, 4, 1);
  check_location_meta (batch, 4, 1, TRUE);
  fail_unless_equals_int (GST_BUFFER_OFFSET_END (batch), 3);
  gst_buffer_unref (batch);
  gst_harness_teardown (h);
}

GST_END_TEST;

static gpointer
push_one_view (gpointer data)
{
  return GINT_TO_POINTER (gst_harness_push ((GstHarness *) data,
          make_views (9, 1, 3)));
}

GST_START_TEST (test_views_pool_is_bounded)
{
  GstHarness *h = gst_harness_new ("patchbatch");
  GstBuffer *held;
  GThread *thread;
  guint pushed;

  g_object_set (h->element, "batch-size", 1, "max-batches", 2, NULL);
  gst_harness_set_src_caps_str (h, WSI_VIEWS_MEDIA_TYPE
      ",format=RGB,n-views=3");
  fail_unless_equals_int (gst_harness_push (h, make_views (0, 2, 3)),
      GST_FLOW_OK);
  /* both batches are out (queued in the harness): the next one waits */
  thread = g_thread_new ("pusher", push_one_view, h);
  g_usleep (G_USEC_PER_SEC / 5);
  g_object_get (h->element, "batches-pushed", &pushed, NULL);
  fail_unless_equals_int (pushed, 2);
  held = gst_harness_pull (h);
  gst_buffer_unref (held);      /* back to the pool: the pusher goes on */
  fail_unless_equals_int (GPOINTER_TO_INT (g_thread_join (thread)),
      GST_FLOW_OK);
  g_object_get (h->element, "batches-pushed", &pushed, NULL);
  fail_unless_equals_int (pushed, 3);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_views_bad_buffers_are_errors)
{
  GstHarness *h = gst_harness_new ("patchbatch");
  GstBuffer *buf;
  GstStructure *meta;

  gst_harness_set_src_caps_str (h, WSI_VIEWS_MEDIA_TYPE
      ",format=RGB,n-views=3");
  /* a view missing */
  buf = make_views (0, 1, 3);
  gst_memory_unref (gst_buffer_get_memory (buf, 2));
  gst_buffer_remove_memory (buf, 2);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_ERROR);
  /* no view records: sizes unknown */
  buf = make_views (0, 1, 3);
  meta = wsi_patch_meta_get (buf);
  gst_structure_remove_field (meta, "views");
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_ERROR);
  /* a view of another size than the stream's */
  fail_unless_equals_int (gst_harness_push (h, make_views (0, 1, 3)),
      GST_FLOW_OK);
  buf = make_views (1, 1, 3);
  gst_buffer_resize (buf, 0, gst_buffer_get_size (buf) - 3);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_ERROR);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Columns on ordinary patches, matched by name when a patch lists them in
 * another order. */
GST_START_TEST (test_columns_on_video_patches)
{
  GstVideoInfo info;
  GstHarness *h = new_batch (4,
      "video/x-raw,format=RGB,width=4,height=4,framerate=0/1", &info);
  static const gchar *reversed[] = { "site", "label", NULL };
  GstBuffer *batch;
  guint i;

  for (i = 0; i < 4; i++) {
    GstBuffer *patch = make_patch (&info, i, 0);

    add_columns (wsi_patch_meta_get (patch), i == 2 ? reversed :
        column_names, 2, i, 1);
    fail_unless_equals_int (gst_harness_push (h, patch), GST_FLOW_OK);
  }
  batch = gst_harness_pull (h);
  check_batch_pixels (batch, &info, 0, 4);
  check_location_meta (batch, 0, 4, FALSE);
  gst_buffer_unref (batch);

  /* patches without columns: no column fields, record version 1 */
  push_patches (h, &info, 4, 4, 0);
  batch = gst_harness_pull (h);
  fail_if (gst_structure_has_field (wsi_patch_meta_get (batch),
          "column-names"));
  fail_if (gst_structure_has_field (wsi_patch_meta_get (batch),
          "record-version"));
  gst_buffer_unref (batch);
  gst_harness_teardown (h);
}

GST_END_TEST;

static void
check_float (gfloat got, gdouble expected, const gchar * what, guint a,
    guint b, guint c)
{
  if (fabs (got - expected) > 1e-5 * MAX (1.0, fabs (expected)))
    fail ("%s %u/%u/%u: %.8f, expected %.8f", what, a, b, c, got, expected);
}

static const gdouble test_mean[] = { 0.1, 0.2, 0.3 };
static const gdouble test_std[] = { 0.5, 0.25, 0.125 };

static void
set_channel_array (GstElement * e, const gchar * name, const gdouble * v,
    guint n)
{
  GValue array = G_VALUE_INIT, item = G_VALUE_INIT;
  guint i;

  gst_value_array_init (&array, n);
  g_value_init (&item, G_TYPE_DOUBLE);
  for (i = 0; i < n; i++) {
    g_value_set_double (&item, v[i]);
    gst_value_array_append_value (&array, &item);
  }
  g_object_set_property (G_OBJECT (e), name, &array);
  g_value_unset (&item);
  g_value_unset (&array);
}

/* Float NCHW batches of RGBx and BGRx patches against the formula in
 * double precision, channels in RGB order. */
GST_START_TEST (test_normalize_video_patches)
{
  static const gchar *formats[] = { "RGBx", "BGRx", "RGB" };
  /* vector loops and their tails; RGB rows padded to 4 bytes on input */
  const guint W = 37;
  guint f;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    gchar *caps_str = g_strdup_printf ("video/x-raw,format=%s,width=%u,"
        "height=3,framerate=0/1", formats[f], W);
    GstVideoInfo info;
    GstHarness *h = gst_harness_new ("patchbatch");
    GstCaps *caps;
    GstStructure *s;
    gboolean bgr = f == 1;
    guint ps = f == 2 ? 3 : 4;
    guint batch_index, n, c, y, x, first = 0;
    gint value;

    caps = gst_caps_from_string (caps_str);
    fail_unless (gst_video_info_from_caps (&info, caps));
    gst_caps_unref (caps);
    g_object_set (h->element, "batch-size", 2, "normalize", TRUE, NULL);
    set_channel_array (h->element, "mean", test_mean, 3);
    set_channel_array (h->element, "std", test_std, 3);
    gst_harness_set_src_caps_str (h, caps_str);
    push_patches (h, &info, 0, 3, 0);
    fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    fail_unless_equals_int (gst_harness_buffers_in_queue (h), 2);

    caps = gst_pad_get_current_caps (h->sinkpad);
    s = gst_caps_get_structure (caps, 0);
    fail_unless (gst_structure_has_name (s, "application/x-wsi-tensor"));
    fail_unless_equals_string (gst_structure_get_string (s, "dtype"),
        "float32");
    fail_unless_equals_string (gst_structure_get_string (s, "layout"),
        "NCHW");
    fail_unless (gst_structure_get_int (s, "channels", &value));
    fail_unless_equals_int (value, 3);
    fail_unless (gst_structure_get_int (s, "width", &value));
    fail_unless_equals_int (value, W);
    gst_caps_unref (caps);

    for (batch_index = 0; batch_index < 2; batch_index++) {
      GstBuffer *batch = gst_harness_pull (h);
      guint count = batch_index == 0 ? 2 : 1, n_records;
      GstMapInfo map;
      const gfloat *out;

      fail_unless_equals_int (gst_buffer_get_size (batch),
          count * 3 * 3 * W * sizeof (gfloat));
      wsi_patch_meta_records (wsi_patch_meta_get (batch), &n_records);
      fail_unless_equals_int (n_records, count);
      fail_unless (gst_buffer_map (batch, &map, GST_MAP_READ));
      out = (const gfloat *) map.data;
      for (n = 0; n < count; n++)
        for (c = 0; c < 3; c++)
          for (y = 0; y < 3; y++)
            for (x = 0; x < W; x++) {
              guint byte = x * ps + (bgr ? 2 - c : c);
              gdouble expected = (patch_byte (first + n, y, byte) / 255.0 -
                  test_mean[c]) / test_std[c];

              check_float (out[((n * 3 + c) * 3 + y) * W + x], expected,
                  formats[f], n, c, y * W + x);
            }
      gst_buffer_unmap (batch, &map);
      gst_buffer_unref (batch);
      first += count;
    }
    gst_harness_teardown (h);
    g_free (caps_str);
  }
}

GST_END_TEST;

/* GRAY8 views, one mean and one std for the single channel: memory v is
 * the float (n, 1, h, w) array of view v. */
GST_START_TEST (test_normalize_views)
{
  GstHarness *h = gst_harness_new ("patchbatch");
  static const gdouble mean = 0.25, std = 2.0;
  GstBuffer *batch;
  GstCaps *caps;
  gint value;
  guint v, i;

  g_object_set (h->element, "batch-size", 2, "normalize", TRUE, NULL);
  set_channel_array (h->element, "mean", &mean, 1);
  set_channel_array (h->element, "std", &std, 1);
  gst_harness_set_src_caps_str (h, WSI_VIEWS_MEDIA_TYPE
      ",format=GRAY8,n-views=3");
  fail_unless_equals_int (gst_harness_push (h, make_views (0, 2, 1)),
      GST_FLOW_OK);
  caps = gst_pad_get_current_caps (h->sinkpad);
  fail_unless (gst_structure_get_int (gst_caps_get_structure (caps, 0),
          "channels", &value));
  fail_unless_equals_int (value, 1);
  fail_unless (gst_structure_get_int (gst_caps_get_structure (caps, 0),
          "n-views", &value));
  fail_unless_equals_int (value, 3);
  gst_caps_unref (caps);

  batch = gst_harness_pull (h);
  check_location_meta (batch, 0, 2, TRUE);
  fail_unless_equals_int (gst_buffer_n_memory (batch), N_VIEWS);
  for (v = 0; v < N_VIEWS; v++) {
    gsize image = (gsize) view_w[v] * view_h[v], b;
    GstMapInfo map;
    const gfloat *out;

    fail_unless (gst_memory_map (gst_buffer_peek_memory (batch, v), &map,
            GST_MAP_READ));
    fail_unless_equals_int (map.size, 2 * image * sizeof (gfloat));
    out = (const gfloat *) map.data;
    for (i = 0; i < 2; i++)
      for (b = 0; b < image; b++)
        check_float (out[i * image + b], (view_byte (i, v, b) / 255.0 -
                mean) / std, "view", v, i, b);
    gst_memory_unmap (gst_buffer_peek_memory (batch, v), &map);
  }
  gst_buffer_unref (batch);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_bad_mean_std_refused)
{
  GstElement *e = gst_element_factory_make ("patchbatch", NULL);
  static const gdouble five[] = { 1, 2, 3, 4, 5 };
  static const gdouble zero = 0.0, two[] = { 0.5, 0.5 };
  GValue array = G_VALUE_INIT;
  GstHarness *h;
  GstCaps *caps;
  GstBus *bus;
  GstMessage *msg;

  /* ours to refuse (count): no warning, no start */
  set_channel_array (e, "mean", five, 5);
  wsi_test_assert_refuses_start (e, GST_STATE_READY, "mean=\"<");
  set_channel_array (e, "mean", five, 0);
  wsi_test_assert_refuses_start (e, GST_STATE_READY, "mean=\"<");
  /* an item out of the element spec's range: the element's own check */
  set_channel_array (e, "std", &zero, 1);
  wsi_test_assert_refuses_start (e, GST_STATE_READY, "std=");
  gst_util_set_object_arg (G_OBJECT (e), "std", "<-1.0>");
  wsi_test_assert_refuses_start (e, GST_STATE_READY, "std=");
  g_value_init (&array, GST_TYPE_ARRAY);
  g_object_get_property (G_OBJECT (e), "std", &array);
  fail_unless_equals_int (gst_value_array_get_size (&array), 3);
  fail_unless_equals_float (g_value_get_double (gst_value_array_get_value
          (&array, 0)), 0.229);
  g_value_unset (&array);
  g_object_get_property (G_OBJECT (e), "mean", &array);
  fail_unless_equals_int (gst_value_array_get_size (&array), 3);
  g_value_unset (&array);
  /* the launch syntax works */
  gst_util_set_object_arg (G_OBJECT (e), "mean", "<0.5, 0.25, 1>");
  g_value_init (&array, GST_TYPE_ARRAY);
  g_object_get_property (G_OBJECT (e), "mean", &array);
  fail_unless_equals_float (g_value_get_double (gst_value_array_get_value
          (&array, 1)), 0.25);
  g_value_unset (&array);
  gst_object_unref (e);

  /* two values for three channels: refused at negotiation, with reason */
  h = gst_harness_new ("patchbatch");
  bus = gst_bus_new ();
  gst_element_set_bus (h->element, bus);
  g_object_set (h->element, "normalize", TRUE, NULL);
  set_channel_array (h->element, "mean", two, 2);
  fail_unless (gst_harness_push_event (h, gst_event_new_stream_start ("s")));
  /* (a sticky event is stored, so the push itself says TRUE) */
  caps = gst_caps_from_string ("video/x-raw,format=RGB,width=4,height=4,"
      "framerate=0/1");
  gst_harness_push_event (h, gst_event_new_caps (caps));
  gst_caps_unref (caps);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  {
    GError *err = NULL;

    gst_message_parse_error (msg, &err, NULL);
    fail_unless (strstr (err->message, "2 mean and 3 std") != NULL,
        "%s", err->message);
    g_error_free (err);
  }
  gst_message_unref (msg);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_views_flush_discards_partial_batch)
{
  GstHarness *h = gst_harness_new ("patchbatch");
  GstSegment segment;
  GstBuffer *batch;

  g_object_set (h->element, "batch-size", 2, NULL);
  gst_harness_set_src_caps_str (h, WSI_VIEWS_MEDIA_TYPE
      ",format=RGB,n-views=3");
  fail_unless_equals_int (gst_harness_push (h, make_views (0, 1, 3)),
      GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  fail_unless_equals_int (gst_harness_push (h, make_views (1, 2, 3)),
      GST_FLOW_OK);
  batch = gst_harness_pull (h);
  check_view_pixels (batch, 1, 2);
  check_location_meta (batch, 1, 2, TRUE);
  fail_unless_equals_int (GST_BUFFER_OFFSET (batch), 0);
  gst_buffer_unref (batch);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_normalize_null_playing_null_repeated)
{
  GstElement *pipeline = gst_parse_launch ("videotestsrc num-buffers=5 ! "
      "video/x-raw,format=RGBx,width=8,height=8 ! patchbatch batch-size=2 "
      "normalize=true ! appsink name=sink sync=false wait-on-eos=false",
      NULL);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstBus *bus = gst_element_get_bus (pipeline);
  guint round;

  for (round = 0; round < 3; round++) {
    GstMessage *msg;
    GstSample *sample;
    gsize bytes = 0;

    fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless (msg != NULL);
    fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
    gst_message_unref (msg);
    /* 2 + 2 + 1 patches of 3 x 8 x 8 floats */
    while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), 0))) {
      bytes += gst_buffer_get_size (gst_sample_get_buffer (sample));
      gst_sample_unref (sample);
    }
    fail_unless_equals_int (bytes, 5 * 3 * 8 * 8 * sizeof (gfloat));
    fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
  }

  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
}

GST_END_TEST;

static Suite *
patchbatch_suite (void)
{
  Suite *s = suite_create ("patchbatch");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_batch_is_concatenation);
  tcase_add_test (tc, test_meta_concatenated_in_order);
  tcase_add_test (tc, test_slide_uris_and_mpps_gathered);
  tcase_add_test (tc, test_short_last_batch);
  tcase_add_test (tc, test_drop_remainder);
  tcase_add_test (tc, test_rgbx_and_bgrx);
  tcase_add_test (tc, test_rgb_width_not_multiple_of_4);
  tcase_add_test (tc, test_videoconvert_reads_tight_rgb);
  tcase_add_test (tc, test_downstream_pool_used);
  tcase_add_test (tc, test_own_video_pool_without_offer);
  tcase_add_test (tc, test_large_batches_ask_for_huge_pages);
  tcase_add_test (tc, test_flush_discards_partial_batch);
  tcase_add_test (tc, test_caps_change_pushes_partial_batch);
  tcase_add_test (tc, test_batch_size_change_applies_to_next_batch);
  tcase_add_test (tc, test_too_small_patch_is_an_error);
  tcase_add_test (tc, test_flush_unblocks_waiting_acquire);
  tcase_add_test (tc, test_bad_property_refused);
  tcase_add_test (tc, test_null_playing_null_repeated);
  tcase_add_test (tc, test_views_batched_by_location);
  tcase_add_test (tc, test_views_pool_is_bounded);
  tcase_add_test (tc, test_views_bad_buffers_are_errors);
  tcase_add_test (tc, test_columns_on_video_patches);
  tcase_add_test (tc, test_normalize_video_patches);
  tcase_add_test (tc, test_normalize_views);
  tcase_add_test (tc, test_bad_mean_std_refused);
  tcase_add_test (tc, test_views_flush_discards_partial_batch);
  tcase_add_test (tc, test_normalize_null_playing_null_repeated);
  return s;
}

GST_CHECK_MAIN (patchbatch);
