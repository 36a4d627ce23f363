/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsihsvfilter.c: OpenCV's RGB2HSV_b (modules/imgproc color_hsv), integer
 * form, and the in-range pixel count. See wsihsvfilter.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsihsvfilter.h"

#define HSV_SHIFT 12
#define HSV_ROUND (1 << (HSV_SHIFT - 1))

/* sdiv[v] = round(255 << 12 / v), hdiv[d] = round(180 << 12 / (6 d)), as
 * OpenCV's saturate_cast<int> of the double quotient; entry 0 is 0. */
static gint sdiv_table[256];
static gint hdiv_table[256];

static void
hsv_tables_init (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    guint i;

    sdiv_table[0] = hdiv_table[0] = 0;
    for (i = 1; i < 256; i++) {
      /* saturate_cast<int>(double) rounds half to even (cvRound): the
       * quotients here are never exactly half-way, so +0.5 floors alike. */
      sdiv_table[i] = (gint) ((255 << HSV_SHIFT) / (1.0 * i) + 0.5);
      hdiv_table[i] = (gint) ((180 << HSV_SHIFT) / (6.0 * i) + 0.5);
    }
    g_once_init_leave (&done, 1);
  }
}

static inline guint
hsv_saturation (gint v, gint diff)
{
  return (guint) ((diff * sdiv_table[v] + HSV_ROUND) >> HSV_SHIFT);
}

static inline guint
hsv_hue (gint r, gint g, gint b, gint v, gint diff)
{
  gint h;

  if (v == r)
    h = g - b;
  else if (v == g)
    h = b - r + 2 * diff;
  else
    h = r - g + 4 * diff;
  h = (h * hdiv_table[diff] + HSV_ROUND) >> HSV_SHIFT;
  return (guint) (h < 0 ? h + 180 : h);
}

void
wsi_hsv_from_rgb (guint8 r, guint8 g, guint8 b, guint8 * h, guint8 * s,
    guint8 * v)
{
  gint vmax = MAX (MAX (r, g), b);
  gint vmin = MIN (MIN (r, g), b);
  gint diff = vmax - vmin;

  hsv_tables_init ();
  *v = (guint8) vmax;
  *s = (guint8) hsv_saturation (vmax, diff);
  *h = (guint8) hsv_hue (r, g, b, vmax, diff);
}

/* An interval no value reaches: (guint) (x - lo) <= span never holds for
 * the small numbers compared here. */
#define EMPTY_LO (1 << 20)
#define EMPTY_SPAN 0

/* Smallest x in [lo, hi] with f (x) >= target, or hi + 1; f is
 * non-decreasing. */
#define LOWER_BOUND(result, lo, hi, target, f_of_x) G_STMT_START {     \
  gint _l = (lo), _h = (hi) + 1;                                        \
  while (_l < _h) {                                                     \
    gint x = _l + (_h - _l) / 2;                                        \
    if ((f_of_x) >= (target)) _h = x; else _l = x + 1;                  \
  }                                                                     \
  (result) = _l;                                                        \
} G_STMT_END

static void
set_interval (gint32 * lo, guint32 * span, gint first, gint last)
{
  if (first > last) {
    *lo = EMPTY_LO;
    *span = EMPTY_SPAN;
  } else {
    *lo = first;
    *span = (guint32) (last - first);
  }
}

void
wsi_hsv_filter_init (WsiHsvFilter * filter, const WsiHsvRange * range)
{
  gint hlo = range->hue_min, hhi = MIN (range->hue_max, 179u);
  gint v, d;

  hsv_tables_init ();
  /* saturation (and value): chroma d in [0, v], s non-decreasing in d */
  for (v = 0; v < 256; v++) {
    gint first, end;

    if ((guint) v < range->val_min || (guint) v > range->val_max ||
        range->sat_min > range->sat_max) {
      set_interval (&filter->sat_lo[v], &filter->sat_span[v], 1, 0);
      continue;
    }
    LOWER_BOUND (first, 0, v, (gint) range->sat_min,
        (gint) hsv_saturation (v, x));
    LOWER_BOUND (end, 0, v, (gint) range->sat_max + 1,
        (gint) hsv_saturation (v, x));
    set_interval (&filter->sat_lo[v], &filter->sat_span[v], first, end - 1);
  }
  /* hue: numerator n in [-d, 5d]; u (n) = rounded n * 180 / (6 d) is
   * non-decreasing, hue = u, or u + 180 when u < 0 */
  for (d = 0; d < 256; d++) {
    gint k;

    for (k = 0; k < 2; k++) {
      /* k = 0: u in [hlo, hhi] (u >= 0); k = 1: u + 180 in [hlo, hhi] */
      gint ulo = k == 0 ? MAX (hlo, 0) : hlo - 180;
      gint uhi = k == 0 ? hhi : MIN (hhi - 180, -1);
      gint first, end;

      if (ulo > uhi) {
        set_interval (&filter->hue_lo[k][d], &filter->hue_span[k][d], 1, 0);
        continue;
      }
      if (d == 0) {
        /* grey: OpenCV's hue is 0 */
        if (ulo <= 0 && 0 <= uhi)
          set_interval (&filter->hue_lo[k][d], &filter->hue_span[k][d], 0,
              0);
        else
          set_interval (&filter->hue_lo[k][d], &filter->hue_span[k][d], 1,
              0);
        continue;
      }
      LOWER_BOUND (first, -d, 5 * d, ulo,
          (x * hdiv_table[d] + HSV_ROUND) >> HSV_SHIFT);
      LOWER_BOUND (end, -d, 5 * d, uhi + 1,
          (x * hdiv_table[d] + HSV_ROUND) >> HSV_SHIFT);
      set_interval (&filter->hue_lo[k][d], &filter->hue_span[k][d], first,
          end - 1);
    }
  }
}

/* The count for one pixel layout, inlined per layout below so the
 * channel offsets and the pixel size are constants. Built at -O3 (meson),
 * the table lookups become AVX2 gathers in the avx2 clone; integers only,
 * so every clone counts the same. */
static inline guint64
count_layout (const WsiHsvFilter * filter, const guint8 * pixels,
    guint width, guint height, gsize stride, const guint px, const guint ro,
    const guint go, const guint bo)
{
  guint64 count = 0;
  guint x, y;

  for (y = 0; y < height; y++) {
    const guint8 *p = pixels + y * stride;
    guint row_count = 0;

    for (x = 0; x < width; x++, p += px) {
      gint r = p[ro], g = p[go], b = p[bo];
      gint v = MAX (MAX (r, g), b);
      gint d = v - MIN (MIN (r, g), b);
      /* OpenCV's hue numerator; written as selects, not branches */
      gint n_gb = g - b, n_br = b - r + 2 * d, n_rg = r - g + 4 * d;
      gint n = v == r ? n_gb : (v == g ? n_br : n_rg);
      guint sat_ok = (guint32) (d - filter->sat_lo[v]) <= filter->sat_span[v];
      guint hue_ok =
          ((guint32) (n - filter->hue_lo[0][d]) <= filter->hue_span[0][d]) |
          ((guint32) (n - filter->hue_lo[1][d]) <= filter->hue_span[1][d]);

      row_count += sat_ok & hue_ok;
    }
    count += row_count;
  }
  return count;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
    && defined(__ELF__) && !defined(__SANITIZE_ADDRESS__)
__attribute__ ((target_clones ("avx2", "default")))
#endif
guint64
wsi_hsv_filter_count (const WsiHsvFilter * filter, const guint8 * pixels,
    guint width, guint height, gsize stride, const WsiHsvLayout * layout)
{
  const guint px = layout->pixel_bytes;

  if (px == 3 && layout->r == 0 && layout->g == 1 && layout->b == 2)
    return count_layout (filter, pixels, width, height, stride, 3, 0, 1, 2);
  if (px == 4 && layout->r == 0 && layout->g == 1 && layout->b == 2)
    return count_layout (filter, pixels, width, height, stride, 4, 0, 1, 2);
  return count_layout (filter, pixels, width, height, stride, px, layout->r,
      layout->g, layout->b);
}
