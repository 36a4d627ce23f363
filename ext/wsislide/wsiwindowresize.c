/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsiwindowresize.c: separable window resampling of packed 8-bit images
 * (see the header). */

#include "wsiwindowresize.h"

#include <math.h>
#include <string.h>

/* Output sample o of one axis is the sum of weights[offset + k] times
 * source sample first + k, k < n. */
typedef struct
{
  guint first;
  guint n;
  guint offset;
} Tap;

typedef struct
{
  Tap *taps;
  gsize taps_len;
  gfloat *weights;
  gsize weights_len;
} TapSet;

struct _WsiWindowResizer
{
  TapSet tx, ty;
  gfloat *rows;                 /* horizontal pass, one line per window row */
  gsize rows_len;
  gfloat *line;                 /* vertical pass accumulator */
  gsize line_len;
  gfloat *src_row;              /* a source row's window, as floats */
  gsize src_row_len;
};

/* Grows *@buf to at least @n elements of @size bytes; FALSE on OOM. */
static gboolean
grow (gpointer * buf, gsize * len, gsize n, gsize size)
{
  gpointer bigger;

  if (n <= *len)
    return TRUE;
  bigger = g_try_realloc (*buf, n * size);
  if (bigger == NULL)
    return FALSE;
  *buf = bigger;
  *len = n;
  return TRUE;
}

static gboolean
tap_set_reserve (TapSet * set, guint out_len, gsize max_taps)
{
  return grow ((gpointer *) & set->taps, &set->taps_len, out_len,
      sizeof (Tap)) && grow ((gpointer *) & set->weights, &set->weights_len,
      (gsize) out_len * max_taps, sizeof (gfloat));
}

/* Bilinear: two neighbours of the output centre's source position. */
static gboolean
taps_bilinear (TapSet * set, guint src_len, gdouble start, gdouble span,
    guint out_len)
{
  gdouble step = span / out_len;
  guint o;

  if (!tap_set_reserve (set, out_len, 2))
    return FALSE;
  for (o = 0; o < out_len; o++) {
    gdouble c = start + (o + 0.5) * step - 0.5;
    gdouble f0 = floor (c);
    gint64 i0 = (gint64) f0, i1 = i0 + 1;
    gfloat frac = (gfloat) (c - f0);
    Tap *tap = &set->taps[o];

    i0 = CLAMP (i0, 0, (gint64) src_len - 1);
    i1 = CLAMP (i1, 0, (gint64) src_len - 1);
    tap->offset = o * 2;
    if (i0 != i1) {
      tap->first = (guint) i0;
      set->weights[tap->offset] = 1.0f - frac;
      set->weights[tap->offset + 1] = frac;
    } else if (i0 + 1 < (gint64) src_len) {
      /* An edge, replicated: still two taps, so the fast path applies. */
      tap->first = (guint) i0;
      set->weights[tap->offset] = 1.0f;
      set->weights[tap->offset + 1] = 0.0f;
    } else {
      tap->first = (guint) MAX (i0 - 1, 0);
      set->weights[tap->offset] = 0.0f;
      set->weights[tap->offset + 1] = 1.0f;
    }
    tap->n = src_len > 1 ? 2 : 1;
  }
  return TRUE;
}

/* Area: the source interval under the output sample, edges weighted by
 * their covered part, normalised to sum 1. */
static gboolean
taps_area (TapSet * set, guint src_len, gdouble start, gdouble span,
    guint out_len)
{
  gdouble step = span / out_len;
  gsize max_taps = (gsize) ceil (step) + 2;
  guint o;

  if (!tap_set_reserve (set, out_len, max_taps))
    return FALSE;
  for (o = 0; o < out_len; o++) {
    gdouble a = CLAMP (start + o * step, 0.0, (gdouble) src_len);
    gdouble b = CLAMP (start + (o + 1) * step, 0.0, (gdouble) src_len);
    gint64 i, lo = (gint64) floor (a), hi = (gint64) ceil (b);
    Tap *tap = &set->taps[o];
    gdouble total = 0.0;
    guint k;

    if (hi <= lo)               /* a zero-width interval at an edge */
      hi = lo + 1;
    lo = MIN (lo, (gint64) src_len - 1);
    hi = MIN (hi, (gint64) src_len);
    tap->first = (guint) lo;
    tap->offset = o * (guint) max_taps;
    tap->n = (guint) MIN (hi - lo, (gint64) max_taps);
    for (k = 0; k < tap->n; k++) {
      i = lo + k;
      set->weights[tap->offset + k] =
          (gfloat) MAX (MIN (b, i + 1.0) - MAX (a, (gdouble) i), 0.0);
      total += set->weights[tap->offset + k];
    }
    for (k = 0; k < tap->n; k++) {
      if (total > 0.0)
        set->weights[tap->offset + k] /= (gfloat) total;
      else
        set->weights[tap->offset + k] = 1.0f / tap->n;
    }
  }
  return TRUE;
}

static gboolean
make_taps (TapSet * set, WsiResizeMethod method, guint src_len,
    gdouble start, gdouble span, guint out_len)
{
  if (method == WSI_RESIZE_AREA)
    return taps_area (set, src_len, start, span, out_len);
  return taps_bilinear (set, src_len, start, span, out_len);
}

/* One source row through the horizontal taps; @C is a constant at each
 * call site so the channel loop unrolls. */
static G_ALWAYS_INLINE inline void
filter_row (const TapSet * tx, const guint8 * src, gfloat * out,
    guint dst_w, const guint C)
{
  guint o, k, c;

  for (o = 0; o < dst_w; o++) {
    const Tap *tap = &tx->taps[o];
    const gfloat *w = tx->weights + tap->offset;
    const guint8 *s = src + (gsize) tap->first * C;
    gfloat acc[4] = { 0.0f, 0.0f, 0.0f, 0.0f };

    for (k = 0; k < tap->n; k++)
      for (c = 0; c < C; c++)
        acc[c] += w[k] * s[k * C + c];
    for (c = 0; c < C; c++)
      out[o * C + c] = acc[c];
  }
}

static void
filter_row_any (const TapSet * tx, const guint8 * src, gfloat * out,
    guint dst_w, guint channels)
{
  switch (channels) {
    case 1:
      filter_row (tx, src, out, dst_w, 1);
      break;
    case 2:
      filter_row (tx, src, out, dst_w, 2);
      break;
    case 3:
      filter_row (tx, src, out, dst_w, 3);
      break;
    default:
      filter_row (tx, src, out, dst_w, 4);
      break;
  }
}

static inline guint8
to_u8 (gfloat v)
{
  /* Through a 32-bit int, clamped as such: float to int32 and integer
   * min/max vectorise, a float to uint8 conversion does not. */
  gint i = (gint) (v + 0.5f);

  i = i < 0 ? 0 : i;
  i = i > 255 ? 255 : i;
  return (guint8) i;
}

/* Bilinear fast path: every tap has exactly two weights. Always inlined
 * so that each call site's constant @C unrolls the channel loop. */
static G_ALWAYS_INLINE inline void
filter_row2 (const TapSet * tx, const gfloat * src, guint base,
    gfloat * out, guint dst_w, const guint C)
{
  guint o;

  for (o = 0; o < dst_w; o++) {
    const Tap *tap = &tx->taps[o];
    const gfloat w0 = tx->weights[tap->offset];
    const gfloat w1 = tx->weights[tap->offset + 1];
    const gfloat *s = src + (gsize) (tap->first - base) * C;
    gfloat *d = out + (gsize) o * C;

    /* Written out: -O2 does not unroll even a constant 3-step loop. */
    d[0] = w0 * s[0] + w1 * s[C];
    if (C > 1)
      d[1] = w0 * s[1] + w1 * s[C + 1];
    if (C > 2)
      d[2] = w0 * s[2] + w1 * s[C + 2];
    if (C > 3)
      d[3] = w0 * s[3] + w1 * s[C + 3];
  }
}

/* @src holds the source row from column @base on. */
static void
filter_row2_any (const TapSet * tx, const gfloat * src, guint base,
    gfloat * out, guint dst_w, guint channels)
{
  switch (channels) {
    case 3:
      filter_row2 (tx, src, base, out, dst_w, 3);
      break;
    case 4:
      filter_row2 (tx, src, base, out, dst_w, 4);
      break;
    case 2:
      filter_row2 (tx, src, base, out, dst_w, 2);
      break;
    default:
      filter_row2 (tx, src, base, out, dst_w, 1);
      break;
  }
}

/* Two rows weighted into one output row. */
static void
blend_rows2 (const gfloat * restrict a, const gfloat * restrict b,
    gfloat wa, gfloat wb, guint8 * restrict out, gsize n)
{
  gsize x;

  for (x = 0; x < n; x++)
    out[x] = to_u8 (wa * a[x] + wb * b[x]);
}

WsiWindowResizer *
wsi_window_resizer_new (void)
{
  return g_new0 (WsiWindowResizer, 1);
}

void
wsi_window_resizer_free (WsiWindowResizer * resizer)
{
  if (resizer == NULL)
    return;
  g_free (resizer->tx.taps);
  g_free (resizer->tx.weights);
  g_free (resizer->ty.taps);
  g_free (resizer->ty.weights);
  g_free (resizer->rows);
  g_free (resizer->line);
  g_free (resizer->src_row);
  g_free (resizer);
}

/* Every window row the vertical taps need through the horizontal taps,
 * into r->rows. */
static gboolean
horizontal_pass (WsiWindowResizer * r, gboolean two_taps, const guint8 * src,
    gsize src_stride, guint channels, guint row_lo, guint row_hi,
    guint dst_w)
{
  gsize line = (gsize) dst_w * channels, span, x;
  guint col_lo = r->tx.taps[0].first, y;

  span = (gsize) (r->tx.taps[dst_w - 1].first + r->tx.taps[dst_w - 1].n -
      col_lo) * channels;
  if (!grow ((gpointer *) & r->rows, &r->rows_len,
          (gsize) (row_hi - row_lo) * line, sizeof (gfloat))
      || !grow ((gpointer *) & r->src_row, &r->src_row_len, span,
          sizeof (gfloat)))
    return FALSE;

  for (y = row_lo; y < row_hi; y++) {
    const guint8 *in = src + (gsize) y * src_stride;
    gfloat *row = r->rows + (gsize) (y - row_lo) * line;

    if (!two_taps) {
      filter_row_any (&r->tx, in, row, dst_w, channels);
      continue;
    }
    /* Floats once per source value, in a loop that vectorises. */
    in += (gsize) col_lo * channels;
    for (x = 0; x < span; x++)
      r->src_row[x] = in[x];
    filter_row2_any (&r->tx, r->src_row, col_lo, row, dst_w, channels);
  }
  return TRUE;
}

/* The output rows from r->rows (window row @row_lo first). */
static gboolean
vertical_pass (WsiWindowResizer * r, gboolean two_taps, guint row_lo,
    gsize line, guint8 * dst, guint dst_h, gsize dst_stride)
{
  guint oy, k;
  gsize x;

  if (!grow ((gpointer *) & r->line, &r->line_len, line, sizeof (gfloat)))
    return FALSE;
  for (oy = 0; oy < dst_h; oy++) {
    const Tap *tap = &r->ty.taps[oy];
    const gfloat *w = r->ty.weights + tap->offset;
    const gfloat *first = r->rows + (gsize) (tap->first - row_lo) * line;
    guint8 *out = dst + (gsize) oy * dst_stride;

    if (two_taps) {
      blend_rows2 (first, first + line, w[0], w[1], out, line);
      continue;
    }
    memset (r->line, 0, line * sizeof (gfloat));
    for (k = 0; k < tap->n; k++)
      for (x = 0; x < line; x++)
        r->line[x] += w[k] * first[k * line + x];
    for (x = 0; x < line; x++)
      out[x] = to_u8 (r->line[x]);
  }
  return TRUE;
}

gboolean
wsi_window_resize (WsiWindowResizer * r, WsiResizeMethod method,
    const guint8 * src, guint src_w, guint src_h, gsize src_stride,
    guint channels, gdouble x0, gdouble y0, gdouble win_w, gdouble win_h,
    guint8 * dst, guint dst_w, guint dst_h, gsize dst_stride)
{
  gboolean two_taps;
  guint row_lo, row_hi;

  if (channels == 0 || channels > 4 || src_w == 0 || src_h == 0
      || dst_w == 0 || dst_h == 0 || !(win_w > 0.0) || !(win_h > 0.0))
    return FALSE;
  if (!make_taps (&r->tx, method, src_w, x0, win_w, dst_w)
      || !make_taps (&r->ty, method, src_h, y0, win_h, dst_h))
    return FALSE;

  /* Bilinear taps always have two weights (edges padded with 0). */
  two_taps = method == WSI_RESIZE_BILINEAR && src_w > 1 && src_h > 1;
  /* Only the rows some output row needs (taps are monotonic). */
  row_lo = r->ty.taps[0].first;
  row_hi = r->ty.taps[dst_h - 1].first + r->ty.taps[dst_h - 1].n;
  return horizontal_pass (r, two_taps, src, src_stride, channels, row_lo,
      row_hi, dst_w) && vertical_pass (r, two_taps, row_lo,
      (gsize) dst_w * channels, dst, dst_h, dst_stride);
}
