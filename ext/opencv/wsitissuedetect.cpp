/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsitissuedetect.cpp: the tissue mask methods (see wsitissuedetect.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsitissuedetect.h"

#include <gst/wsi/wsicpu.h>

#include <math.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/core/hal/intrin.hpp>

#if defined (__x86_64__) && defined (__GNUC__)
#include <immintrin.h>
/* An AVX2 variant of the saturation plane, picked at run time (the
 * build's baseline is SSE2). */
#define HAVE_AVX2_VARIANT 1
#endif

/* Overviews up to this many pixels (2048 x 2048) keep their scratch
 * images on the thread for the next slide; larger ones free them. */
#define SCRATCH_MAX_PIXELS (4 << 20)

/* Each thread's HSV image and channel plane, reused from one slide to the
 * next: a new slide then allocates (and faults in) neither, which with
 * many distinct slides is a visible share of a slide's CPU (issue 23). */
typedef struct
{
  cv::Mat hsv;
  cv::Mat plane;
} TissueScratch;

static thread_local TissueScratch scratch;

/* OpenCV's 8-bit saturation divisor table (RGB2HSV_b, 12-bit fixed
 * point): s = (diff * table[v] + 2^11) >> 12. */
#define HSV_SHIFT 12
struct SaturationTable
{
  int div[256];
    SaturationTable ()
  {
    div[0] = 0;
    for (int i = 1; i < 256; i++)
      div[i] = cvRound ((255 << HSV_SHIFT) / (1. * i));
  }
};

/* The scalar form, for the pixels [first, n) that do not fill a SIMD
 * vector (and every pixel where OpenCV has no 128-bit SIMD). */
static void
hsv_plane_scalar (const guint8 * rgb, gsize first, gsize n, gint channel,
    const SaturationTable & table, guint8 * out)
{
  for (gsize i = first; i < n; i++) {
    int r = rgb[3 * i], g = rgb[3 * i + 1], b = rgb[3 * i + 2];
    int v = MAX (MAX (r, g), b), vmin = MIN (MIN (r, g), b);

    out[i] = channel == 2 ? (guint8) v : (guint8) (((v - vmin) *
            table.div[v] + (1 << (HSV_SHIFT - 1))) >> HSV_SHIFT);
  }
}

#if CV_SIMD128
/* Saturation of four pixels from their value and (value - min) in 32-bit
 * lanes: the scalar formula lane by lane. The divisor is computed, not
 * looked up (a lookup per lane was most of this function's time): the
 * single-precision quotient (255 << 12) / v rounded to the nearest even
 * integer equals the table's double-precision cvRound for every v of
 * 1..255 (and v = 0 comes with diff = 0). */
static inline cv::v_int32x4
saturation_x4 (const cv::v_uint32x4 & v, const cv::v_uint32x4 & diff)
{
  cv::v_float32x4 value = cv::v_cvt_f32 (cv::v_reinterpret_as_s32 (cv::v_max
          (v, cv::v_setall_u32 (1))));
  cv::v_int32x4 div = cv::v_round (cv::v_setall_f32 ((float) (255 <<
              HSV_SHIFT)) / value);

  return (cv::v_reinterpret_as_s32 (diff) * div +
      cv::v_setall_s32 (1 << (HSV_SHIFT - 1))) >> HSV_SHIFT;
}

/* Sixteen pixels at a time in OpenCV's 128-bit universal intrinsics (SSE2
 * on x86-64, NEON on ARM): the scalar form's arithmetic, so its bytes,
 * in 0.94 instead of 1.34 ms for a 1024x768 overview (this plane was a
 * fifth of a new slide's instructions, issue 23). Does the pixels
 * [first, n) that fill whole vectors; returns where it stopped. */
static gsize
hsv_plane_simd (const guint8 * rgb, gsize first, gsize n, gint channel,
    guint8 * out)
{
  gsize i;

  for (i = first; i + 16 <= n; i += 16) {
    cv::v_uint8x16 r, g, b, v, diff;

    cv::v_load_deinterleave (rgb + 3 * i, r, g, b);
    v = cv::v_max (cv::v_max (r, g), b);
    if (channel == 2) {
      cv::v_store (out + i, v);
      continue;
    }
    diff = v - cv::v_min (cv::v_min (r, g), b);

    cv::v_uint16x8 v16[2], d16[2];
    cv::v_int32x4 s32[4];
    cv::v_expand (v, v16[0], v16[1]);
    cv::v_expand (diff, d16[0], d16[1]);
    for (int half = 0; half < 2; half++) {
      cv::v_uint32x4 v32a, v32b, d32a, d32b;

      cv::v_expand (v16[half], v32a, v32b);
      cv::v_expand (d16[half], d32a, d32b);
      s32[2 * half] = saturation_x4 (v32a, d32a);
      s32[2 * half + 1] = saturation_x4 (v32b, d32b);
    }
    /* Every lane is 0..255, so the saturating packs are exact. */
    cv::v_store (out + i, cv::v_pack_u (cv::v_pack (s32[0], s32[1]),
            cv::v_pack (s32[2], s32[3])));
  }
  return i;
}
#endif

#ifdef HAVE_AVX2_VARIANT
/* Byte shuffles that gather one channel of 16 RGB pixels (48 bytes in
 * three 16-byte blocks) into 16 bytes: block k's bytes of the channel go
 * to their place, the rest are zeroed (index -1), and the three are ORed. */
static const gint8 deinterleave_index[3][3][16] = {
  /* red: bytes 0, 3, ..., 45 */
  {{0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
   {-1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1},
   {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13}},
  /* green: bytes 1, 4, ..., 46 */
  {{1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
   {-1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1},
   {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14}},
  /* blue: bytes 2, 5, ..., 47 */
  {{2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
   {-1, -1, -1, -1, -1, 1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1},
   {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15}},
};

/* 32 pixels' channel @c: pixels 0-15 in the low 128-bit lane, 16-31 in
 * the high one (each lane shuffles its own 48 bytes). */
__attribute__ ((target ("avx2")))
static inline __m256i
channel_x32 (const __m256i block[3], int c)
{
  __m256i out = _mm256_setzero_si256 ();

  for (int k = 0; k < 3; k++) {
    __m256i index = _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const
                __m128i *) deinterleave_index[c][k]));

    out = _mm256_or_si256 (out, _mm256_shuffle_epi8 (block[k], index));
  }
  return out;
}

/* saturation_x4() eight lanes at a time: the same float quotient rounded
 * to nearest even (the default MXCSR mode, as v_round), so the same
 * divisor for every value. */
__attribute__ ((target ("avx2")))
static inline __m256i
saturation_x8 (__m256i v, __m256i diff)
{
  __m256 value = _mm256_cvtepi32_ps (_mm256_max_epi32 (v,
          _mm256_set1_epi32 (1)));
  __m256i div = _mm256_cvtps_epi32 (_mm256_div_ps (_mm256_set1_ps ((float)
              (255 << HSV_SHIFT)), value));

  return _mm256_srai_epi32 (_mm256_add_epi32 (_mm256_mullo_epi32 (diff, div),
          _mm256_set1_epi32 (1 << (HSV_SHIFT - 1))), HSV_SHIFT);
}

/* The 32 bytes of @x as eight 32-bit lanes, @part 0..3 (pixels 8 part to
 * 8 part + 7). */
__attribute__ ((target ("avx2")))
static inline __m256i
widen_part (__m256i x, int part)
{
  __m128i half = part < 2 ? _mm256_castsi256_si128 (x) :
      _mm256_extracti128_si256 (x, 1);

  return _mm256_cvtepu8_epi32 ((part & 1) ? _mm_srli_si128 (half, 8) : half);
}

/* 32 pixels a step with AVX2 (picked at run time; x86-64's baseline is
 * SSE2): the 128-bit kernel's arithmetic on twice the lanes, plus native
 * 32-bit multiplies, so the same bytes for about half the instructions.
 * Does the pixels [0, n) that fill whole steps; returns where it stopped. */
__attribute__ ((target ("avx2")))
static gsize
hsv_plane_avx2 (const guint8 * rgb, gsize n, gint channel, guint8 * out)
{
  /* packs interleave per 128-bit lane; this puts the 4-byte groups back */
  const __m256i pack_order = _mm256_setr_epi32 (0, 4, 1, 5, 2, 6, 3, 7);
  gsize i;

  for (i = 0; i + 32 <= n; i += 32) {
    const guint8 *p = rgb + 3 * i;
    __m256i block[3], r, g, b, v, diff, s[4];

    for (int k = 0; k < 3; k++)
      block[k] = _mm256_inserti128_si256 (_mm256_castsi128_si256
          (_mm_loadu_si128 ((const __m128i *) (p + 16 * k))),
          _mm_loadu_si128 ((const __m128i *) (p + 48 + 16 * k)), 1);
    r = channel_x32 (block, 0);
    g = channel_x32 (block, 1);
    b = channel_x32 (block, 2);
    v = _mm256_max_epu8 (_mm256_max_epu8 (r, g), b);
    if (channel == 2) {
      _mm256_storeu_si256 ((__m256i *) (out + i), v);
      continue;
    }
    diff = _mm256_sub_epi8 (v, _mm256_min_epu8 (_mm256_min_epu8 (r, g), b));
    for (int part = 0; part < 4; part++)
      s[part] = saturation_x8 (widen_part (v, part), widen_part (diff, part));
    /* every lane is 0..255: the saturating packs are exact */
    _mm256_storeu_si256 ((__m256i *) (out + i),
        _mm256_permutevar8x32_epi32 (_mm256_packus_epi16 (_mm256_packs_epi32
                (s[0], s[1]), _mm256_packs_epi32 (s[2], s[3])), pack_order));
  }
  return i;
}
#endif

gboolean
wsi_tissue_have_avx2 (void)
{
#ifdef HAVE_AVX2_VARIANT
  return wsi_cpu_has (WSI_CPU_AVX2);
#else
  return FALSE;
#endif
}

gboolean
wsi_tissue_hsv_plane_with (const guint8 * rgb, gint width, gint height,
    gint channel, guint8 * out, WsiTissueKernel kernel)
{
  static const SaturationTable table;
  gsize n = (gsize) width * height, done = 0;

  if (kernel == WSI_TISSUE_KERNEL_AVX2 && !wsi_tissue_have_avx2 ())
    return FALSE;
#ifdef HAVE_AVX2_VARIANT
  if (kernel != WSI_TISSUE_KERNEL_128 && wsi_tissue_have_avx2 ())
    done = hsv_plane_avx2 (rgb, n, channel, out);
#endif
#if CV_SIMD128
  done = hsv_plane_simd (rgb, done, n, channel, out);
#endif
  hsv_plane_scalar (rgb, done, n, channel, table, out);
  return TRUE;
}

void
wsi_tissue_hsv_plane (const guint8 * rgb, gint width, gint height,
    gint channel, guint8 * out)
{
  wsi_tissue_hsv_plane_with (rgb, width, height, channel, out,
      WSI_TISSUE_KERNEL_AUTO);
}

/* The overview and its HSV image when a method needs hue (has_hsv: in
 * this thread's scratch); saturation and value alone are computed
 * straight from RGB, a third of cv::cvtColor's work for the same bytes. */
typedef struct
{
  cv::Mat rgb;
  bool has_hsv;
} OverviewPlanes;

/* HSV channel 1 (saturation) or 2 (value) of the overview, in this
 * thread's scratch plane (valid until the next call). */
static cv::Mat
hsv_channel (const OverviewPlanes * o, int channel)
{
  if (o->has_hsv) {
    cv::extractChannel (scratch.hsv, scratch.plane, channel);
  } else {
    scratch.plane.create (o->rgb.rows, o->rgb.cols, CV_8UC1);
    wsi_tissue_hsv_plane (o->rgb.data, o->rgb.cols, o->rgb.rows, channel,
        scratch.plane.data);
  }
  return scratch.plane;
}

/* @side scaled by @scale, rounded; 0 stays 0 (off). */
static guint
scaled_side (guint side, gdouble scale)
{
  return (guint) lround (side * scale);
}

/* An odd @side scaled by @scale, rounded to the nearest odd side, at
 * least 1 (no blur). */
static guint
scaled_odd_side (guint side, gdouble scale)
{
  long half = lround ((side * scale - 1.0) / 2.0);

  return (guint) (2 * MAX (half, 0L) + 1);
}

/* Closing (dilate, then erode) with a @side x @side kernel; 0 does
 * nothing. CLAM closes with a square, the peer's Otsu with an ellipse. */
static void
close_mask (cv::Mat & mask, guint side, int shape)
{
  if (side > 0) {
    cv::Mat kernel = cv::getStructuringElement (shape, cv::Size (side, side));
    cv::morphologyEx (mask, mask, cv::MORPH_CLOSE, kernel);
  }
}

/* Zeroes the 8-connected tissue pieces smaller than @min_pixels. */
static void
drop_small_components (cv::Mat & mask, double min_pixels)
{
  cv::Mat labels, stats, centroids;
  int n;

  if (min_pixels <= 0)
    return;
  n = cv::connectedComponentsWithStats (mask, labels, stats, centroids, 8,
      CV_32S);
  std::vector < guint8 > keep (n, 255);
  bool any_dropped = false;

  keep[0] = 0;                  /* label 0 is the background */
  for (int i = 1; i < n; i++) {
    if (stats.at < int >(i, cv::CC_STAT_AREA) < min_pixels) {
      keep[i] = 0;
      any_dropped = true;
    }
  }
  if (!any_dropped)
    return;
  for (int y = 0; y < mask.rows; y++) {
    const int *label = labels.ptr < int >(y);
    guint8 *out = mask.ptr < guint8 > (y);
    for (int x = 0; x < mask.cols; x++)
      out[x] = keep[label[x]];
  }
}

/* Fills background regions enclosed by tissue (not touching the overview
 * border) smaller than @max_pixels. Background is taken 4-connected, the
 * dual of 8-connected tissue. */
static void
fill_small_holes (cv::Mat & mask, double max_pixels)
{
  cv::Mat background, labels, stats, centroids;
  int n;

  cv::bitwise_not (mask, background);
  n = cv::connectedComponentsWithStats (background, labels, stats, centroids,
      4, CV_32S);
  std::vector < bool > fill (n, false);
  bool any_filled = false;

  for (int i = 1; i < n; i++) {
    int left = stats.at < int >(i, cv::CC_STAT_LEFT);
    int top = stats.at < int >(i, cv::CC_STAT_TOP);
    int right = left + stats.at < int >(i, cv::CC_STAT_WIDTH);
    int bottom = top + stats.at < int >(i, cv::CC_STAT_HEIGHT);
    bool on_border = left == 0 || top == 0 || right == mask.cols
        || bottom == mask.rows;

    if (!on_border && stats.at < int >(i, cv::CC_STAT_AREA) < max_pixels) {
      fill[i] = true;
      any_filled = true;
    }
  }
  if (!any_filled)
    return;
  for (int y = 0; y < mask.rows; y++) {
    const int *label = labels.ptr < int >(y);
    guint8 *out = mask.ptr < guint8 > (y);
    for (int x = 0; x < mask.cols; x++)
      if (fill[label[x]])
        out[x] = 255;
  }
}

/* Saturation: tissue above Otsu's threshold, never below the floor.
 * Grey: tissue at or below Otsu's threshold (darker than glass), as the
 * peer's OtsuTissueDetector, no floor. Then the optional blur, closing and
 * small-piece removal, all off by default. */
static void
mask_otsu (const OverviewPlanes * o, const WsiTissueSettings * s,
    cv::Mat & mask, WsiTissueReport * report)
{
  bool gray = s->otsu_channel == WSI_OTSU_GRAY;
  cv::Mat plane;
  double threshold;
  guint blur;

  if (gray)
    cv::cvtColor (o->rgb, plane, cv::COLOR_RGB2GRAY);
  else
    plane = hsv_channel (o, 1);
  blur = scaled_odd_side (s->otsu_blur_kernel, s->kernel_scale);
  if (blur > 1)
    cv::GaussianBlur (plane, plane, cv::Size (blur, blur), 0);

  threshold = cv::threshold (plane, mask, 0, 255,
      (gray ? cv::THRESH_BINARY_INV : cv::THRESH_BINARY) | cv::THRESH_OTSU);
  if (!gray && threshold < WSI_OTSU_SATURATION_FLOOR) {
    threshold = WSI_OTSU_SATURATION_FLOOR;
    cv::threshold (plane, mask, threshold, 255, cv::THRESH_BINARY);
  }
  report->otsu_threshold = threshold;

  close_mask (mask, scaled_side (s->otsu_close_kernel, s->kernel_scale),
      cv::MORPH_ELLIPSE);
  /* The peer truncates the area to whole pixels: do the same. */
  drop_small_components (mask, floor (s->otsu_min_area * mask.total ()));
}

/* Fluorescence: the background is black and the stain is bright, in
 * whatever colour the channel is shown, so brightness (HSV value, the
 * largest of R, G, B) is the signal and saturation is meaningless. */
static void
mask_fluorescence (const OverviewPlanes * o, const WsiTissueSettings * s,
    cv::Mat & mask, WsiTissueReport * report)
{
  cv::Mat value = hsv_channel (o, 2);
  double threshold = cv::threshold (value, mask, 0, 255,
      cv::THRESH_BINARY | cv::THRESH_OTSU);

  if (threshold < s->value_floor) {
    threshold = s->value_floor;
    cv::threshold (value, mask, threshold, 255, cv::THRESH_BINARY);
  }
  report->fluorescence_threshold = threshold;
  close_mask (mask, scaled_side (s->close_kernel, s->kernel_scale),
      cv::MORPH_RECT);
}

/* Inclusive ranges on the three channels (cv::inRange); a hue range whose
 * minimum exceeds its maximum is the union of [min, 179] and [0, max], so
 * reds on both sides of 0 can be selected. */
static void
mask_hsv (const cv::Mat & hsv, const WsiTissueSettings * s, cv::Mat & mask)
{
  cv::Scalar low (s->hue_min, s->hsv_saturation_min, s->value_min);
  cv::Scalar high (s->hue_max, 255, s->value_max);

  if (s->hue_min <= s->hue_max) {
    cv::inRange (hsv, low, high, mask);
  } else {
    cv::Mat upper;

    cv::inRange (hsv, low, cv::Scalar (255, 255, s->value_max), upper);
    cv::inRange (hsv, cv::Scalar (0, s->hsv_saturation_min, s->value_min),
        high, mask);
    cv::bitwise_or (mask, upper, mask);
  }
}

static void
mask_clam (const OverviewPlanes * o, const WsiTissueSettings * s,
    cv::Mat & mask)
{
  cv::Mat blurred;
  double area = (double) o->rgb.rows * o->rgb.cols;
  guint median = scaled_odd_side (s->median_kernel, s->kernel_scale);

  if (median > 1)
    cv::medianBlur (hsv_channel (o, 1), blurred, median);
  else
    blurred = hsv_channel (o, 1);
  cv::threshold (blurred, mask, s->saturation_threshold, 255,
      cv::THRESH_BINARY);
  close_mask (mask, scaled_side (s->close_kernel, s->kernel_scale),
      cv::MORPH_RECT);
  drop_small_components (mask, s->min_component_area * area);
  fill_small_holes (mask, s->min_hole_area * area);
}

/* Every method but none, into @mask (CV_8UC1, 0 or 255). */
static void
mask_of_method (WsiTissueMethod method, const OverviewPlanes * o,
    const WsiTissueSettings * s, cv::Mat & mask, WsiTissueReport * report)
{
  switch (method) {
    case WSI_TISSUE_HSV:
      mask_hsv (scratch.hsv, s, mask);
      break;
    case WSI_TISSUE_CLAM:
      mask_clam (o, s, mask);
      break;
    case WSI_TISSUE_FLUORESCENCE:
      mask_fluorescence (o, s, mask, report);
      break;
    case WSI_TISSUE_COMBINED:{
      cv::Mat part;

      mask_otsu (o, s, mask, report);
      mask_hsv (scratch.hsv, s, part);
      cv::bitwise_and (mask, part, mask);
      mask_clam (o, s, part);
      cv::bitwise_and (mask, part, mask);
      break;
    }
    case WSI_TISSUE_OTSU:
    default:
      mask_otsu (o, s, mask, report);
      break;
  }
}

gdouble
wsi_tissue_detect (const guint8 * rgb, gint width, gint height,
    const WsiTissueSettings * s, guint8 * mask_data, WsiTissueReport * report,
    gchar ** error)
{
  WsiTissueReport unused;
  cv::Mat out (height, width, CV_8UC1, mask_data, (size_t) width);
  OverviewPlanes planes;

  if (report == NULL)
    report = &unused;
  report->otsu_threshold = -1;
  report->fluorescence_threshold = -1;

  if (s->method == WSI_TISSUE_NONE) {
    out.setTo (255);
    return 1.0;
  }
  planes.rgb = cv::Mat (height, width, CV_8UC3, (void *) rgb,
      (size_t) width * 3);
  /* Only the hue ranges need the whole HSV image. */
  planes.has_hsv = s->method == WSI_TISSUE_HSV
      || s->method == WSI_TISSUE_COMBINED;
  try {
    /* The methods write straight into the caller's memory; a header of
     * the same size and type is never reallocated by OpenCV, but copy
     * should one ever be. */
    cv::Mat mask = out;

    if (planes.has_hsv)
      cv::cvtColor (planes.rgb, scratch.hsv, cv::COLOR_RGB2HSV);
    mask_of_method (s->method, &planes, s, mask, report);
    if (mask.data != out.data)
      mask.copyTo (out);
  }
  catch (const cv::Exception & e) {
    *error = g_strdup (e.what ());
    return -1.0;
  }
  if ((gsize) width * height > SCRATCH_MAX_PIXELS) {
    scratch.hsv.release ();
    scratch.plane.release ();
  }
  return (gdouble) cv::countNonZero (out) / ((gdouble) width * height);
}

gsize
wsi_tissue_and (guint8 * dst, const guint8 * other, gsize n)
{
  gsize tissue = 0;

  for (gsize i = 0; i < n; i++) {
    dst[i] &= other[i];
    tissue += dst[i] != 0;
  }
  return tissue;
}
