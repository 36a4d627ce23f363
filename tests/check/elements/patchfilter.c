/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* patchfilter: the HSV pixel test on synthetic patches (glass, H&E purple,
 * half and half), the counters, the drop event upstream, every format, and
 * a cycling pipeline whose every patch is rejected, which must end with
 * patchsampler's error instead of running forever. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <gst/app/gstappsink.h>
#include <gst/wsi/wsievent.h>
#include <gst/wsi/wsirecord.h>

#include "wsitestutil.h"
/* The GStreamer-free helper (compiled into this test by meson). */
#include "wsihsvfilter.h"

#define SIZE 32

static const guint8 WHITE[3] = { 255, 255, 255 };
static const guint8 PURPLE[3] = { 160, 90, 190 };       /* hematoxylin-ish */

/* HSV hue in OpenCV half degrees from the textbook formula (floats). */
static guint
textbook_hue (const guint8 * rgb)
{
  gdouble r = rgb[0], g = rgb[1], b = rgb[2];
  gdouble v = MAX (MAX (r, g), b), diff = v - MIN (MIN (r, g), b);
  gdouble h;

  if (diff == 0)
    return 0;
  if (v == r)
    h = 60.0 * (g - b) / diff;
  else if (v == g)
    h = 120.0 + 60.0 * (b - r) / diff;
  else
    h = 240.0 + 60.0 * (r - g) / diff;
  if (h < 0)
    h += 360.0;
  return (guint) floor (h / 2.0 + 0.5);
}

/* A @format patch SIZE x SIZE: the first @top_rows rows @top, the rest
 * @bottom; with a WsiPatchMeta record (slide 3, cycle 2, sequence 41). */
static GstBuffer *
make_patch (const gchar * format, const guint8 * top, const guint8 * bottom,
    guint top_rows, guint width)
{
  GstVideoInfo info;
  GstVideoFrame frame;
  GstBuffer *buf;
  WsiPatchRecord rec = { 0 };
  const gchar *paths[] = { "/slides/a.tiff", NULL };
  const gchar *labels[] = { "", NULL };
  const GstVideoFormatInfo *f;
  guint x, y;

  gst_video_info_set_format (&info, gst_video_format_from_string (format),
      width, SIZE);
  buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  gst_buffer_memset (buf, 0, 0x11, GST_VIDEO_INFO_SIZE (&info));
  fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_WRITE));
  f = info.finfo;
  for (y = 0; y < SIZE; y++) {
    guint8 *row = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame, 0) +
        y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);
    const guint8 *c = y < top_rows ? top : bottom;

    for (x = 0; x < width; x++) {
      guint8 *p = row + x * GST_VIDEO_FORMAT_INFO_PSTRIDE (f, 0);

      p[GST_VIDEO_FORMAT_INFO_POFFSET (f, 0)] = c[0];
      p[GST_VIDEO_FORMAT_INFO_POFFSET (f, 1)] = c[1];
      p[GST_VIDEO_FORMAT_INFO_POFFSET (f, 2)] = c[2];
    }
  }
  gst_video_frame_unmap (&frame);
  rec.slide_index = 3;
  rec.cycle = 2;
  rec.sequence = 41;
  rec.out_size = SIZE;
  wsi_patch_meta_add (buf, &rec, 1, paths, labels);
  return buf;
}

static GstHarness *
filter_harness (const gchar * format, guint width)
{
  GstHarness *h = gst_harness_new ("patchfilter");
  gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%u,height=%u,"
      "framerate=0/1", format, width, SIZE);

  gst_harness_set_src_caps_str (h, caps);
  g_free (caps);
  return h;
}

/* Pushes @buf; TRUE when it came out the other side. The verdict is
 * given on the element's pool task (counted last, after a drop event), so
 * wait for the counters to move, then for the patch when it passed. */
static gboolean
passes (GstHarness * h, GstBuffer * buf)
{
  guint64 passed = wsi_test_get_u64 (h->element, "patches-passed");
  guint64 rejected = wsi_test_get_u64 (h->element, "patches-rejected");
  gint64 deadline = g_get_monotonic_time () + 30 * G_TIME_SPAN_SECOND;
  GstBuffer *out;

  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  while (wsi_test_get_u64 (h->element, "patches-rejected") == rejected) {
    if (wsi_test_get_u64 (h->element, "patches-passed") != passed) {
      out = gst_harness_pull (h);
      fail_unless (out != NULL, "counted as passed, never pushed");
      gst_buffer_unref (out);
      return TRUE;
    }
    fail_unless (g_get_monotonic_time () < deadline, "no verdict in 30 s");
    g_usleep (200);
  }
  fail_unless (gst_harness_try_pull (h) == NULL, "rejected, yet pushed");
  return FALSE;
}

/* The next wsi-patch-dropped event upstream of @h, or NULL. */
static GstEvent *
pull_dropped (GstHarness * h)
{
  GstEvent *ev;

  while ((ev = gst_harness_try_pull_upstream_event (h)) != NULL) {
    if (wsi_event_parse_patch_dropped (ev, NULL, NULL, NULL, NULL, NULL))
      return ev;
    gst_event_unref (ev);
  }
  return NULL;
}

GST_START_TEST (test_hsv_matches_formula)
{
  static const guint8 colours[][3] = {
    {160, 90, 190}, {230, 150, 200}, {200, 50, 60}, {40, 200, 90},
    {10, 20, 250}, {128, 128, 128}, {255, 0, 255}, {0, 0, 0},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (colours); i++) {
    guint8 h, s, v;
    const guint8 *c = colours[i];
    gint vmax = MAX (MAX (c[0], c[1]), c[2]);
    gint vmin = MIN (MIN (c[0], c[1]), c[2]);

    wsi_hsv_from_rgb (c[0], c[1], c[2], &h, &s, &v);
    fail_unless_equals_int (v, vmax);
    fail_unless_equals_int (s, vmax ? (gint) floor ((vmax - vmin) * 255.0 /
            vmax + 0.5) : 0);
    /* fixed point: within one half degree of the exact hue */
    fail_unless (ABS ((gint) h - (gint) textbook_hue (c)) <= 1,
        "colour %u: hue %u, formula %u", i, h, textbook_hue (c));
  }
  /* The H&E purple is in Midnight's box: hue 141, saturation 134. */
  fail_unless_equals_int (textbook_hue (PURPLE), 141);
}

GST_END_TEST;

/* The compiled count equals a pixel-by-pixel test of wsi_hsv_from_rgb()
 * (itself checked against OpenCV 4.6 on all 2^24 colours when written),
 * on random colours and random ranges, empty ones included. */
GST_START_TEST (test_count_matches_per_pixel)
{
  const guint n = 4096, rounds = 200;
  guint8 *pixels = g_malloc (n * 3);
  GRand *rand = g_rand_new_with_seed (11);
  WsiHsvLayout layout = { 3, 0, 1, 2 };
  WsiHsvFilter filter;
  guint i, k;

  for (k = 0; k < rounds; k++) {
    WsiHsvRange r;
    guint64 expected = 0;

    r.hue_min = g_rand_int_range (rand, 0, 181);
    r.hue_max = g_rand_int_range (rand, r.hue_min / 2, 181);
    r.sat_min = g_rand_int_range (rand, 0, 256);
    r.sat_max = g_rand_int_range (rand, r.sat_min / 2, 256);
    r.val_min = g_rand_int_range (rand, 0, 256);
    r.val_max = g_rand_int_range (rand, r.val_min / 2, 256);
    for (i = 0; i < n * 3; i++)
      pixels[i] = g_rand_int_range (rand, 0, 256);
    for (i = 0; i < n; i++) {
      guint8 h, s, v;

      wsi_hsv_from_rgb (pixels[3 * i], pixels[3 * i + 1], pixels[3 * i + 2],
          &h, &s, &v);
      expected += h >= r.hue_min && h <= r.hue_max && s >= r.sat_min &&
          s <= r.sat_max && v >= r.val_min && v <= r.val_max;
    }
    wsi_hsv_filter_init (&filter, &r);
    fail_unless_equals_uint64 (wsi_hsv_filter_count (&filter, pixels, 64,
            64, 64 * 3, &layout), expected);
  }
  g_rand_free (rand);
  g_free (pixels);
}

GST_END_TEST;

GST_START_TEST (test_glass_rejected_purple_accepted)
{
  GstHarness *h = filter_harness ("RGBx", SIZE);
  guint64 passed, rejected;

  fail_unless (!passes (h, make_patch ("RGBx", WHITE, WHITE, 0, SIZE)));
  fail_unless (passes (h, make_patch ("RGBx", PURPLE, PURPLE, 0, SIZE)));
  fail_unless (!passes (h, make_patch ("RGBx", WHITE, WHITE, 0, SIZE)));
  passed = wsi_test_get_u64 (h->element, "patches-passed");
  rejected = wsi_test_get_u64 (h->element, "patches-rejected");
  fail_unless_equals_uint64 (passed, 1);
  fail_unless_equals_uint64 (rejected, 2);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_half_and_half)
{
  GstHarness *h = filter_harness ("RGB", SIZE);

  /* 50 % purple: rejected at the default 0.6, accepted at 0.5 and below */
  fail_unless (!passes (h, make_patch ("RGB", PURPLE, WHITE, SIZE / 2,
              SIZE)));
  g_object_set (h->element, "min-pixel-fraction", 0.5, NULL);
  fail_unless (passes (h, make_patch ("RGB", PURPLE, WHITE, SIZE / 2, SIZE)));
  g_object_set (h->element, "min-pixel-fraction", 0.51, NULL);
  fail_unless (!passes (h, make_patch ("RGB", PURPLE, WHITE, SIZE / 2,
              SIZE)));
  /* 0 passes everything, glass included */
  g_object_set (h->element, "min-pixel-fraction", 0.0, NULL);
  fail_unless (passes (h, make_patch ("RGB", WHITE, WHITE, 0, SIZE)));
  /* a range that excludes purple by value */
  g_object_set (h->element, "min-pixel-fraction", 0.6, "value-max", 10,
      NULL);
  fail_unless (!passes (h, make_patch ("RGB", PURPLE, PURPLE, 0, SIZE)));
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element,
          "patches-passed"), 2);
  fail_unless_equals_uint64 (wsi_test_get_u64 (h->element,
          "patches-rejected"), 3);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_drop_event_upstream)
{
  GstHarness *h = filter_harness ("RGBA", SIZE);
  const gchar *reason = NULL, *path = NULL;
  guint u = 0, cycle = 0;
  guint64 seq = 0;
  GstEvent *ev;

  /* a purple patch sends nothing */
  fail_unless (passes (h, make_patch ("RGBA", PURPLE, PURPLE, 0, SIZE)));
  ev = pull_dropped (h);
  fail_unless (ev == NULL);

  /* 8 of 32 rows purple: 25 % */
  fail_unless (!passes (h, make_patch ("RGBA", PURPLE, WHITE, 8, SIZE)));
  ev = pull_dropped (h);
  fail_unless (ev != NULL, "no wsi-patch-dropped event upstream");
  fail_unless (wsi_event_parse_patch_dropped (ev, &u, &cycle, &seq, &path,
          &reason));
  fail_unless_equals_int (u, 3);
  fail_unless_equals_int (cycle, 2);
  fail_unless_equals_uint64 (seq, 41);
  fail_unless_equals_string (path, "/slides/a.tiff");
  fail_unless_equals_string (reason, "rejected by patchfilter: 25 % of "
      "pixels in the HSV range, 60 % needed");
  gst_event_unref (ev);
  fail_unless (pull_dropped (h) == NULL);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_every_format)
{
  static const gchar *formats[] = { "RGB", "RGBA", "RGBx", "BGRx" };
  guint i, w;

  for (i = 0; i < G_N_ELEMENTS (formats); i++) {
    /* width 30: RGB rows are padded to a multiple of 4 bytes */
    for (w = 30; w <= 32; w += 2) {
      GstHarness *h = filter_harness (formats[i], w);

      fail_unless (passes (h, make_patch (formats[i], PURPLE, PURPLE, 0, w)),
          "%s: purple rejected", formats[i]);
      fail_unless (!passes (h, make_patch (formats[i], WHITE, WHITE, 0, w)),
          "%s: glass accepted", formats[i]);
      /* red-blue swapped purple is a blue-green hue (outside 90..180 only
       * if the channel order is read wrong, so this catches BGRx) */
      {
        const guint8 swapped[3] = { PURPLE[2], PURPLE[1], PURPLE[0] };
        guint8 hh, ss, vv;

        wsi_hsv_from_rgb (swapped[0], swapped[1], swapped[2], &hh, &ss, &vv);
        fail_unless (passes (h, make_patch (formats[i], swapped, swapped, 0,
                    w)) == (hh >= 90 && hh <= 180), "%s: channel order",
            formats[i]);
      }
      gst_harness_teardown (h);
    }
  }
}

GST_END_TEST;

GST_START_TEST (test_properties_validated)
{
  GstElement *f = gst_element_factory_make ("patchfilter", NULL);
  GParamSpecUInt *hue = (GParamSpecUInt *)
      g_object_class_find_property (G_OBJECT_GET_CLASS (f), "hue-max");
  GParamSpecDouble *frac = (GParamSpecDouble *)
      g_object_class_find_property (G_OBJECT_GET_CLASS (f),
      "min-pixel-fraction");
  guint hmin, hmax, smin, smax, vmin, vmax;
  gdouble fraction;

  g_object_get (f, "hue-min", &hmin, "hue-max", &hmax, "saturation-min",
      &smin, "saturation-max", &smax, "value-min", &vmin, "value-max", &vmax,
      "min-pixel-fraction", &fraction, NULL);
  fail_unless_equals_int (hmin, 90);
  fail_unless_equals_int (hmax, 180);
  fail_unless_equals_int (smin, 8);
  fail_unless_equals_int (smax, 255);
  fail_unless_equals_int (vmin, 103);
  fail_unless_equals_int (vmax, 255);
  fail_unless_equals_float (fraction, 0.6);
  fail_unless_equals_int (hue->maximum, 180);
  fail_unless_equals_float (frac->maximum, 1.0);
  fail_unless (!(g_object_class_find_property (G_OBJECT_GET_CLASS (f),
              "patches-rejected")->flags & G_PARAM_WRITABLE));
  gst_object_unref (f);
}

GST_END_TEST;

/* 60 patches, a third glass: with 1, 2 and 4 threads the same patches
 * pass, in order, with the same drop events upstream in the same order. */
static gchar *
filter_run (guint threads)
{
  gchar *launch = g_strdup_printf ("patchfilter threads=%u", threads);
  GstHarness *h = gst_harness_new_parse (launch);
  GString *log = g_string_new (NULL);
  GstElement *filter;
  GstBuffer *out;
  GstEvent *ev;
  guint i;

  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGB,width=32,"
      "height=32,framerate=0/1");
  for (i = 0; i < 60; i++) {
    GstBuffer *b = make_patch ("RGB", i % 3 ? PURPLE : WHITE, WHITE,
        i % 3 == 2 ? SIZE / 4 : SIZE, SIZE);
    WsiPatchRecord rec = { 0 };
    const gchar *paths[] = { "/slides/a.tiff", NULL }, *labels[] = { "",
      NULL
    };

    /* renumber: sequence i */
    gst_buffer_remove_meta (b, (GstMeta *) gst_buffer_get_custom_meta (b,
            WSI_PATCH_META_NAME));
    rec.sequence = i;
    wsi_patch_meta_add (b, &rec, 1, paths, labels);
    GST_BUFFER_OFFSET (b) = i;
    fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  /* EOS comes out after every verdict */
  while ((ev = gst_harness_pull_event (h)) != NULL) {
    gboolean eos = GST_EVENT_TYPE (ev) == GST_EVENT_EOS;

    gst_event_unref (ev);
    if (eos)
      break;
  }
  while ((out = gst_harness_try_pull (h)) != NULL) {
    g_string_append_printf (log, "pass %" G_GUINT64_FORMAT ",",
        GST_BUFFER_OFFSET (out));
    gst_buffer_unref (out);
  }
  while ((ev = pull_dropped (h)) != NULL) {
    guint64 seq = 0;

    wsi_event_parse_patch_dropped (ev, NULL, NULL, &seq, NULL, NULL);
    g_string_append_printf (log, "drop %" G_GUINT64_FORMAT ",", seq);
    gst_event_unref (ev);
  }
  filter = gst_harness_find_element (h, "patchfilter");
  fail_unless_equals_uint64 (wsi_test_get_u64 (filter, "patches-passed"), 20);
  fail_unless_equals_uint64 (wsi_test_get_u64 (filter, "patches-rejected"),
      40);
  gst_object_unref (filter);
  gst_harness_teardown (h);
  g_free (launch);
  return g_string_free (log, FALSE);
}

GST_START_TEST (test_threads_same_verdicts)
{
  gchar *one = filter_run (1), *two = filter_run (2), *four = filter_run (4);

  fail_unless (strstr (one, "pass 1,pass 4,") == one, "%s", one);
  fail_unless (strstr (one, "drop 0,drop 2,drop 3,") != NULL, "%s", one);
  fail_unless_equals_string (one, two);
  fail_unless_equals_string (one, four);
  g_free (one);
  g_free (two);
  g_free (four);
}

GST_END_TEST;

/* Printed, never asserted: 256x256 patches a second on one core. */
GST_START_TEST (test_speed_figure)
{
  const guint side = 256, rounds = 300;
  guint8 *pixels = g_malloc (side * side * 4);
  WsiHsvLayout layout = { 4, 0, 1, 2 };
  WsiHsvRange range = { 90, 180, 8, 255, 103, 255 };
  WsiHsvFilter filter;
  guint32 state = 12345;
  guint64 sum = 0;
  gint64 t0, t1;
  guint i;

  /* stained-looking noise: purple and pink around glass */
  for (i = 0; i < side * side; i++) {
    state = state * 1664525u + 1013904223u;
    pixels[4 * i + 0] = 150 + (state >> 24) % 100;
    pixels[4 * i + 1] = 80 + (state >> 16) % 170;
    pixels[4 * i + 2] = 170 + (state >> 8) % 80;
    pixels[4 * i + 3] = 255;
  }
  wsi_hsv_filter_init (&filter, &range);
  t0 = g_get_monotonic_time ();
  for (i = 0; i < rounds; i++) {
    /* a different patch each round, so the call cannot be hoisted */
    pixels[(i * 4 * 97) % (side * side * 4)] ^= 0x40;
    sum += wsi_hsv_filter_count (&filter, pixels, side, side, side * 4,
        &layout);
  }
  t1 = g_get_monotonic_time ();
  g_print ("patchfilter HSV check: %.0f 256x256 patches/s on one core "
      "(%.1f %% of pixels in range)\n",
      rounds * 1e6 / MAX (t1 - t0, 1), 100.0 * sum / rounds / (side * side));
  g_free (pixels);
}

GST_END_TEST;

static gboolean
have_elements (const gchar * const *names)
{
  for (; *names; names++) {
    GstElementFactory *f = gst_element_factory_find (*names);

    if (f == NULL)
      return FALSE;
    gst_object_unref (f);
  }
  return TRUE;
}

/* Cycling over slides whose every patch the filter rejects: patchsampler
 * sees a whole pass delivered nothing and stops with its error. */
GST_START_TEST (test_pipeline_rejects_everything_errors)
{
  static const gchar *needed[] = { "wsislidesrc", "tissuemask",
    "patchsampler", "patchinterleave", "patchreader", "patchbatch", NULL
  };
  WsiTestSlideSpec spec;
  gchar *dir, *desc, *text;
  GstElement *pipeline;
  GstBus *bus;
  GstMessage *msg;
  GError *err = NULL;

  if (!have_elements (needed)) {
    WSI_TEST_SKIP ("the slide elements are not built");
    return;
  }
  dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "rejected");
  wsi_test_slide_spec_init (&spec);
  spec.seed = 4;
  g_free (wsi_test_write_slide (dir, "a.tiff", &spec));
  spec.seed = 5;
  g_free (wsi_test_write_slide (dir, "b.tiff", &spec));

  desc = g_strdup_printf ("wsislidesrc location=\"%s\" cycle=true ! "
      "tissuemask method=none ! queue ! patchsampler patch-size=64 "
      "patches-per-slide=10 min-tissue=0 ! patchinterleave ! patchreader ! "
      "patchfilter name=f value-max=10 ! queue ! patchbatch batch-size=4 ! "
      "appsink name=sink sync=false", dir);
  pipeline = gst_parse_launch (desc, &err);
  fail_unless (pipeline != NULL, "%s", err ? err->message : "");
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  bus = gst_element_get_bus (pipeline);
  msg = gst_bus_timed_pop_filtered (bus, 120 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "still running after 120 s");
  fail_unless (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR,
      "EOS instead of an error");
  gst_message_parse_error (msg, &err, NULL);
  text = g_strdup (err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  fail_unless (strstr (text, "delivered no patch") != NULL, "%s", text);
  g_print ("patchfilter pipeline stopped as expected: %s\n", text);
  {
    GstElement *f = gst_bin_get_by_name (GST_BIN (pipeline), "f");

    fail_unless (wsi_test_get_u64 (f, "patches-rejected") > 0);
    fail_unless_equals_uint64 (wsi_test_get_u64 (f, "patches-passed"), 0);
    gst_object_unref (f);
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  g_free (text);
  g_free (desc);
  g_free (dir);
}

GST_END_TEST;

static Suite *
patchfilter_suite (void)
{
  Suite *s = suite_create ("patchfilter");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_hsv_matches_formula);
  tcase_add_test (tc, test_count_matches_per_pixel);
  tcase_add_test (tc, test_glass_rejected_purple_accepted);
  tcase_add_test (tc, test_half_and_half);
  tcase_add_test (tc, test_drop_event_upstream);
  tcase_add_test (tc, test_every_format);
  tcase_add_test (tc, test_properties_validated);
  tcase_add_test (tc, test_threads_same_verdicts);
  tcase_add_test (tc, test_speed_figure);
  tcase_add_test (tc, test_pipeline_rejects_everything_errors);
  return s;
}

GST_CHECK_MAIN (patchfilter);
