/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsihsvfilter.h: counts the pixels of an 8-bit RGB image whose HSV value
 * falls in a box, the per-pixel test of the Midnight tile filter.
 *
 * Contract: HSV follows OpenCV's cv2.cvtColor(COLOR_RGB2HSV) for 8-bit
 * images bit for bit (H in 0..179, S and V in 0..255; the same fixed-point
 * tables, 12 fractional bits, and rounding), so a range means what it means
 * to the Python peer's HSVPatchFilter (cv2.inRange: bounds inclusive).
 * Cost: wsi_hsv_filter_init() turns a range into per-value and
 * per-chroma intervals (a few thousand integer steps, once per range);
 * wsi_hsv_filter_count() then tests each pixel with a max, a min, a
 * select and three unsigned compares: no multiply, no division, no
 * branch on pixel data, so noise costs what flat colour costs; built at
 * -O3 with an AVX2 clone, the loop runs 8 pixels at a time with gathered
 * table lookups (about twice the scalar rate). Integer
 * arithmetic only, no allocation (a WsiHsvFilter is a plain 7 KiB struct
 * the caller owns), no locks. Threading: the two OpenCV division tables
 * are computed once per process behind g_once; a WsiHsvFilter is read-only
 * once initialised, so any number of threads may count with it at once.
 * GStreamer-free. */

#ifndef __WSI_HSV_FILTER_H__
#define __WSI_HSV_FILTER_H__

#include <glib.h>

G_BEGIN_DECLS

/* Inclusive bounds: hue 0..180 (OpenCV), saturation and value 0..255. */
typedef struct
{
  guint hue_min, hue_max;
  guint sat_min, sat_max;
  guint val_min, val_max;
} WsiHsvRange;

/* Pixel layout: @pixel_bytes bytes a pixel (3 or 4), red, green and blue
 * at byte offsets @r, @g, @b within it. */
typedef struct
{
  guint pixel_bytes;
  guint r, g, b;
} WsiHsvLayout;

/* A range compiled for counting; fill with wsi_hsv_filter_init(). For
 * value v the saturation test passes for chroma (max - min) in
 * [sat_lo[v], sat_lo[v] + sat_span[v]] (empty when v is out of range);
 * for chroma d the hue test passes for the OpenCV hue numerator in one of
 * two intervals (hues wrap at 180). */
typedef struct
{
  gint32 sat_lo[256];
  guint32 sat_span[256];
  gint32 hue_lo[2][256];
  guint32 hue_span[2][256];
} WsiHsvFilter;

/* OpenCV's 8-bit RGB to HSV of one pixel. */
void wsi_hsv_from_rgb (guint8 r, guint8 g, guint8 b,
    guint8 * h, guint8 * s, guint8 * v);

/* Compiles @range into @filter. A bound pair with min > max matches
 * nothing. */
void wsi_hsv_filter_init (WsiHsvFilter * filter, const WsiHsvRange * range);

/* Pixels of the @width x @height image at @pixels (rows @stride bytes
 * apart) whose HSV lies in the range @filter was made from. */
guint64 wsi_hsv_filter_count (const WsiHsvFilter * filter,
    const guint8 * pixels, guint width, guint height, gsize stride,
    const WsiHsvLayout * layout);

G_END_DECLS

#endif /* __WSI_HSV_FILTER_H__ */
