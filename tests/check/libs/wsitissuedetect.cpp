/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit tests for wsitissuedetect (ext/opencv/wsitissuedetect.cpp, compiled
 * in), in C++ because the reference is OpenCV itself: the saturation and
 * value planes the tissue methods compute straight from RGB must be the
 * bytes of cv::cvtColor (COLOR_RGB2HSV), for every 8-bit colour, so that
 * masks do not change with the shortcut (issue 23). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The C++ headers first: check's fail* macros would rename std::ios's
 * members. */
#include <algorithm>
#include <string.h>
#include <vector>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <gst/check/gstcheck.h>

#include "wsitissuedetect.h"

/* 4096 x 4096 pixels: every (R, G, B) once. */
#define SIDE 4096

GST_START_TEST (test_hsv_planes_match_opencv_every_colour)
{
  cv::Mat rgb (SIDE, SIDE, CV_8UC3), hsv, reference;
  std::vector < guint8 > plane ((size_t) SIDE * SIDE);

  for (guint32 i = 0; i < (guint32) SIDE * SIDE; i++) {
    rgb.data[3 * i] = (guint8) (i >> 16);
    rgb.data[3 * i + 1] = (guint8) (i >> 8);
    rgb.data[3 * i + 2] = (guint8) i;
  }
  cv::cvtColor (rgb, hsv, cv::COLOR_RGB2HSV);

  /* Each kernel: whole vectors, then a count that leaves 29 pixels (AVX2:
   * 16 of them to the 128-bit kernel, 13 to the scalar tail; 128-bit: 13
   * to the scalar tail). */
  for (int k = WSI_TISSUE_KERNEL_128; k <= WSI_TISSUE_KERNEL_AVX2; k++) {
    WsiTissueKernel kernel = (WsiTissueKernel) k;

    if (kernel == WSI_TISSUE_KERNEL_AVX2 && !wsi_tissue_have_avx2 ()) {
      g_print ("AVX2 kernel skipped: this CPU (or build) has no AVX2\n");
      fail_if (wsi_tissue_hsv_plane_with (rgb.data, 1, 1, 1, plane.data (),
              kernel));
      continue;
    }
    for (int tail = 0; tail <= 1; tail++) {
      gint width = tail ? SIDE * SIDE - 3 : SIDE, height = tail ? 1 : SIDE;
      gsize n = (gsize) width * height;

      for (int channel = 1; channel <= 2; channel++) {
        gsize differ = 0, first = 0;

        cv::extractChannel (hsv, reference, channel);
        std::fill (plane.begin (), plane.end (), 0x5a);
        fail_unless (wsi_tissue_hsv_plane_with (rgb.data, width, height,
                channel, plane.data (), kernel));
        for (gsize i = 0; i < n; i++) {
          if (plane[i] != reference.data[i] && differ++ == 0)
            first = i;
        }
        fail_unless (differ == 0, "kernel %d, channel %d (%dx%d): %"
            G_GSIZE_FORMAT " colours differ from OpenCV, the first RGB %06"
            G_GSIZE_MODIFIER "x (%u, OpenCV %u)", k, channel, width, height,
            differ, first, plane[first], reference.data[first]);
      }
    }
  }
  /* AUTO (what tissuemask runs) is one of them. */
  wsi_tissue_hsv_plane (rgb.data, SIDE, SIDE, 1, plane.data ());
  cv::extractChannel (hsv, reference, 1);
  fail_unless (memcmp (plane.data (), reference.data, plane.size ()) == 0);
}

GST_END_TEST;

/* The otsu method (saturation plane) gives the mask that Otsu's threshold
 * on OpenCV's own saturation gives, floor included. */
GST_START_TEST (test_otsu_mask_as_with_opencv_hsv)
{
  const int w = 320, h = 240;
  cv::Mat rgb (h, w, CV_8UC3), hsv, saturation, expected;
  std::vector < guint8 > mask ((size_t) w * h);
  WsiTissueSettings settings = { };
  double threshold;
  gchar *error = NULL;

  cv::randu (rgb, cv::Scalar::all (150), cv::Scalar::all (256));
  cv::ellipse (rgb, cv::Point (160, 120), cv::Size (90, 60), 0, 0, 360,
      cv::Scalar (200, 110, 170), -1);
  cv::cvtColor (rgb, hsv, cv::COLOR_RGB2HSV);
  cv::extractChannel (hsv, saturation, 1);
  threshold = cv::threshold (saturation, expected, 0, 255,
      cv::THRESH_BINARY | cv::THRESH_OTSU);
  if (threshold < WSI_OTSU_SATURATION_FLOOR)
    cv::threshold (saturation, expected, WSI_OTSU_SATURATION_FLOOR, 255,
        cv::THRESH_BINARY);

  settings.method = WSI_TISSUE_OTSU;
  settings.otsu_channel = WSI_OTSU_SATURATION;
  settings.otsu_blur_kernel = 1;
  settings.kernel_scale = 1.0;
  fail_unless (wsi_tissue_detect (rgb.data, w, h, &settings, mask.data (),
          NULL, &error) > 0.0);
  fail_unless (memcmp (mask.data (), expected.data, mask.size ()) == 0);
}

GST_END_TEST;

static Suite *
wsitissuedetect_suite (void)
{
  Suite *s = suite_create ("wsitissuedetect");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_hsv_planes_match_opencv_every_colour);
  tcase_add_test (tc, test_otsu_mask_as_with_opencv_hsv);
  return s;
}

GST_CHECK_MAIN (wsitissuedetect);
