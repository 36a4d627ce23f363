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

#include <gst/wsi/wsicpu.h>

#include <math.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined (__x86_64__) && defined (__GNUC__) && !defined (WSI_RESIZE_NO_AVX2)
#include <immintrin.h>
/* An AVX2 variant of the horizontal SIMD loop, picked at run time
 * (tests build without it too, -DWSI_RESIZE_NO_AVX2, to check the SSE2
 * loop on machines that have AVX2). */
#define HAVE_AVX2_VARIANT 1
#endif

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

/* Bilinear taps of one axis: output o reads first[o] and first[o] + 1,
 * the second with weight w1[o] out of 1 << bits. */
typedef struct
{
  guint32 *first;
  gsize first_len;
  guint16 *w1;
  gsize w1_len;
  /* 3 or 4 channels, horizontal: per output, the weights of its two
   * pixels' channels as one 8-lane vector (a a a b b b 0 0, a a a a b b b
   * b), for the SIMD row filter. */
  guint16 *pair_w;
  gsize pair_w_len;
  guint simd_n;                 /* outputs 0.. whose 8-byte load stays
                                 * inside the source row */
} LinearTaps;

struct _WsiWindowResizer
{
  /* Bilinear, fixed point. */
  LinearTaps lx, ly;
  guint16 *fixed_rows;          /* horizontal pass, one line (+ 4 lanes of
                                 * slack for 8-byte stores) per window row */
  gsize fixed_rows_len;
  guint8 *row_done;             /* which of them are made */
  gsize row_done_len;
  /* Any filter, floats. */
  TapSet tx, ty;
  gfloat *rows;                 /* horizontal pass, one line per window row */
  gsize rows_len;
  gfloat *line;                 /* vertical pass accumulator */
  gsize line_len;
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
      /* An edge, replicated: still two taps. */
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

/* ---- bilinear, fixed point ----------------------------------------------
 * The horizontal pass weighs two u8 samples with Q8 weights into a u16
 * (at most 255 * 256: exact in 16 bits), the vertical pass takes the high
 * halves of two of those times Q15 weights (SSE2's pmulhuw, which GCC
 * emits for the pattern below) and rounds once. 16-bit lanes are 8 to a
 * vector; the horizontal pass, a gather, uses SSE2 directly (one output
 * pixel's two source pixels in one 8-byte load). The weights' rounding
 * (at most 1/512 of a neighbour difference) and the high halves (1/64 of
 * a level) leave the result within one level of the exact float filter
 * (tests/check/libs/wsiwindowresize.c asks that and >= 40 dB). */

#define H_BITS 8
#define V_BITS 15

static gboolean
linear_taps (LinearTaps * taps, guint src_len, gdouble start, gdouble span,
    guint out_len, guint bits)
{
  gdouble step = span / out_len;
  guint o, one = 1u << bits;

  if (!grow ((gpointer *) & taps->first, &taps->first_len, out_len,
          sizeof (guint32))
      || !grow ((gpointer *) & taps->w1, &taps->w1_len, out_len,
          sizeof (guint16)))
    return FALSE;
  for (o = 0; o < out_len; o++) {
    /* The very sampling positions of taps_bilinear(). */
    gdouble c = start + (o + 0.5) * step - 0.5;
    gdouble f0 = floor (c);
    gint64 i0 = (gint64) f0;
    guint w1 = (guint) lrint ((c - f0) * one);

    if (i0 < 0) {
      i0 = 0;
      w1 = 0;
    } else if (i0 >= (gint64) src_len - 1) {
      /* The last sample, replicated: read it as the second tap. */
      i0 = (gint64) src_len - 2;
      w1 = one;
    }
    taps->first[o] = (guint32) i0;
    taps->w1[o] = (guint16) MIN (w1, one);
  }
  return TRUE;
}

/* The SIMD weight vectors of the horizontal taps (3 or 4 channels). */
static gboolean
linear_pair_weights (LinearTaps * taps, guint out_len, guint channels,
    guint src_len)
{
  guint o, c;

  if (!grow ((gpointer *) & taps->pair_w, &taps->pair_w_len,
          (gsize) out_len * 8, sizeof (guint16)))
    return FALSE;
  for (o = 0; o < out_len; o++) {
    guint16 *w = taps->pair_w + (gsize) o * 8;
    guint16 b = taps->w1[o], a = (guint16) ((1u << H_BITS) - b);

    memset (w, 0, 8 * sizeof (guint16));
    for (c = 0; c < channels; c++) {
      w[c] = a;
      w[channels + c] = b;
    }
  }
  /* Taps are monotonic: the outputs that may load 8 bytes are a prefix. */
  for (o = 0; o < out_len; o++)
    if ((gsize) taps->first[o] * channels + 8 > (gsize) src_len * channels)
      break;
  taps->simd_n = o;
  return TRUE;
}

#ifdef __SSE2__
/* Output pixels @o .. tx->simd_n of one row through SSE2: load both
 * source pixels (8 bytes), widen to 16 bits, multiply by the weight
 * vector, fold the second pixel onto the first, store 4 lanes (the 4th is
 * the next pixel's first, overwritten next). Returns how many it made. */
static G_ALWAYS_INLINE inline guint
linear_row_sse2 (const LinearTaps * tx, const guint8 * src, guint16 * out,
    guint o, const guint C)
{
  const __m128i zero = _mm_setzero_si128 ();
  /* Locals: the stores to @out could alias @tx for all the compiler knows,
   * which made it reload every field on every pixel. */
  const guint32 *first = tx->first;
  const guint16 *weights = tx->pair_w;
  const guint n = tx->simd_n;

  for (; o < n; o++) {
    __m128i px, prod;

    px = _mm_unpacklo_epi8 (_mm_loadl_epi64 ((const __m128i *) (src +
                (gsize) first[o] * C)), zero);
    prod = _mm_mullo_epi16 (px,
        _mm_loadu_si128 ((const __m128i *) (weights + (gsize) o * 8)));
    prod = _mm_add_epi16 (prod, C == 3 ? _mm_srli_si128 (prod, 6) :
        _mm_srli_si128 (prod, 8));
    _mm_storel_epi64 ((__m128i *) (out + (gsize) o * C), prod);
  }
  return o;
}
#endif

#ifdef HAVE_AVX2_VARIANT
/* linear_row_sse2() two output pixels at a time: both pixels' 8 bytes in
 * one 256-bit register (one per 128-bit lane), so one widening, one
 * multiply and one in-lane fold serve two pixels. The same integer
 * arithmetic: the same bytes. Returns the pixels made (even). */
__attribute__ ((target ("avx2")))
static guint
linear_row_avx2 (const LinearTaps * tx, const guint8 * src, guint16 * out,
    guint C)
{
  const guint32 *first = tx->first;
  const guint16 *weights = tx->pair_w;
  const guint n = tx->simd_n;
  guint o;

  for (o = 0; o + 1 < n; o += 2) {
    __m128i a = _mm_loadl_epi64 ((const __m128i *) (src +
            (gsize) first[o] * C));
    __m128i b = _mm_loadl_epi64 ((const __m128i *) (src +
            (gsize) first[o + 1] * C));
    __m256i px = _mm256_cvtepu8_epi16 (_mm_unpacklo_epi64 (a, b));
    __m256i prod = _mm256_mullo_epi16 (px,
        _mm256_loadu_si256 ((const __m256i *) (weights + (gsize) o * 8)));

    prod = _mm256_add_epi16 (prod, C == 3 ? _mm256_srli_si256 (prod, 6) :
        _mm256_srli_si256 (prod, 8));
    /* pixel o first: its 4th lane is overwritten by pixel o + 1 */
    _mm_storel_epi64 ((__m128i *) (out + (gsize) o * C),
        _mm256_castsi256_si128 (prod));
    _mm_storel_epi64 ((__m128i *) (out + (gsize) (o + 1) * C),
        _mm256_extracti128_si256 (prod, 1));
  }
  return o;
}
#endif

/* Output pixels @o.. of one source row through the horizontal taps; @C
 * is a constant at each call site so the channel loop unrolls. */
static G_ALWAYS_INLINE inline void
linear_row (const LinearTaps * tx, const guint8 * src, guint16 * out,
    guint o, guint dst_w, const guint C)
{
  const guint one = 1u << H_BITS;
  const guint32 *first = tx->first;     /* locals: see linear_row_sse2() */
  const guint16 *w1 = tx->w1;

  for (; o < dst_w; o++) {
    const guint8 *s = src + (gsize) first[o] * C;
    const guint b = w1[o], a = one - b;
    guint16 *d = out + (gsize) o * C;

    /* Written out: -O2 does not unroll even a constant 3-step loop. */
    d[0] = (guint16) (a * s[0] + b * s[C]);
    if (C > 1)
      d[1] = (guint16) (a * s[1] + b * s[C + 1]);
    if (C > 2)
      d[2] = (guint16) (a * s[2] + b * s[C + 2]);
    if (C > 3)
      d[3] = (guint16) (a * s[3] + b * s[C + 3]);
  }
}

static void
linear_row_any (const LinearTaps * tx, const guint8 * src, guint16 * out,
    guint dst_w, guint channels)
{
  guint o = 0;

#ifdef HAVE_AVX2_VARIANT
  if ((channels == 3 || channels == 4) && wsi_cpu_has (WSI_CPU_AVX2))
    o = linear_row_avx2 (tx, src, out, channels);
#endif
  switch (channels) {
    case 3:
#ifdef __SSE2__
      o = linear_row_sse2 (tx, src, out, o, 3);
#endif
      linear_row (tx, src, out, o, dst_w, 3);
      break;
    case 4:
#ifdef __SSE2__
      o = linear_row_sse2 (tx, src, out, o, 4);
#endif
      linear_row (tx, src, out, o, dst_w, 4);
      break;
    case 2:
      linear_row (tx, src, out, 0, dst_w, 2);
      break;
    default:
      linear_row (tx, src, out, 0, dst_w, 1);
      break;
  }
}

/* Two filtered rows weighted into one output row. */
static void
linear_blend (const guint16 * restrict a, const guint16 * restrict b,
    guint16 wa, guint16 wb, guint8 * restrict out, gsize n)
{
  /* The high halves are Q(H_BITS + V_BITS - 16): at most 32640 each, and
   * so is their sum (wa + wb is 1 << V_BITS). */
  const guint shift = H_BITS + V_BITS - 16;
  gsize x;

  for (x = 0; x < n; x++) {
    guint16 ta = (guint16) (((guint32) a[x] * wa) >> 16);
    guint16 tb = (guint16) (((guint32) b[x] * wb) >> 16);

    out[x] = (guint8) ((guint16) (ta + tb + (1u << (shift - 1))) >> shift);
  }
}

/* The filtered source row @y (window row @y - @row_lo), made on first
 * use: a shrinking crop reads only some of its window's rows. */
static const guint16 *
linear_source_row (WsiWindowResizer * r, const guint8 * src,
    gsize src_stride, guint channels, guint row_lo, guint y, guint dst_w)
{
  gsize line = (gsize) dst_w * channels + 4;
  guint16 *row = r->fixed_rows + (gsize) (y - row_lo) * line;

  if (!r->row_done[y - row_lo]) {
    linear_row_any (&r->lx, src + (gsize) y * src_stride, row, dst_w,
        channels);
    r->row_done[y - row_lo] = TRUE;
  }
  return row;
}

static gboolean
resize_linear (WsiWindowResizer * r, const guint8 * src, guint src_w,
    guint src_h, gsize src_stride, guint channels, gdouble x0, gdouble y0,
    gdouble win_w, gdouble win_h, guint8 * dst, guint dst_w, guint dst_h,
    gsize dst_stride)
{
  gsize line = (gsize) dst_w * channels + 4;
  guint row_lo, row_hi, oy;

  if (!linear_taps (&r->lx, src_w, x0, win_w, dst_w, H_BITS)
      || !linear_taps (&r->ly, src_h, y0, win_h, dst_h, V_BITS)
      || ((channels == 3 || channels == 4)
          && !linear_pair_weights (&r->lx, dst_w, channels, src_w)))
    return FALSE;
  /* Only the rows some output row reads (taps are monotonic). */
  row_lo = r->ly.first[0];
  row_hi = r->ly.first[dst_h - 1] + 2;
  if (!grow ((gpointer *) & r->fixed_rows, &r->fixed_rows_len,
          (gsize) (row_hi - row_lo) * line, sizeof (guint16))
      || !grow ((gpointer *) & r->row_done, &r->row_done_len,
          row_hi - row_lo, sizeof (guint8)))
    return FALSE;
  memset (r->row_done, 0, row_hi - row_lo);

  for (oy = 0; oy < dst_h; oy++) {
    guint y = r->ly.first[oy];
    guint16 wb = r->ly.w1[oy], wa = (guint16) ((1u << V_BITS) - wb);
    const guint16 *a = linear_source_row (r, src, src_stride,
        channels, row_lo, y, dst_w);
    const guint16 *b = linear_source_row (r, src, src_stride,
        channels, row_lo, y + 1, dst_w);

    linear_blend (a, b, wa, wb, dst + (gsize) oy * dst_stride,
        (gsize) dst_w * channels);
  }
  return TRUE;
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
  g_free (resizer->lx.first);
  g_free (resizer->lx.w1);
  g_free (resizer->lx.pair_w);
  g_free (resizer->ly.first);
  g_free (resizer->ly.w1);
  g_free (resizer->fixed_rows);
  g_free (resizer->row_done);
  g_free (resizer->tx.taps);
  g_free (resizer->tx.weights);
  g_free (resizer->ty.taps);
  g_free (resizer->ty.weights);
  g_free (resizer->rows);
  g_free (resizer->line);
  g_free (resizer);
}

/* Every window row the vertical taps need through the horizontal taps,
 * into r->rows. */
static gboolean
horizontal_pass (WsiWindowResizer * r, const guint8 * src, gsize src_stride,
    guint channels, guint row_lo, guint row_hi, guint dst_w)
{
  gsize line = (gsize) dst_w * channels;
  guint y;

  if (!grow ((gpointer *) & r->rows, &r->rows_len,
          (gsize) (row_hi - row_lo) * line, sizeof (gfloat)))
    return FALSE;
  for (y = row_lo; y < row_hi; y++)
    filter_row_any (&r->tx, src + (gsize) y * src_stride,
        r->rows + (gsize) (y - row_lo) * line, dst_w, channels);
  return TRUE;
}

/* The output rows from r->rows (window row @row_lo first). */
static gboolean
vertical_pass (WsiWindowResizer * r, guint row_lo, gsize line, guint8 * dst,
    guint dst_h, gsize dst_stride)
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
  guint row_lo, row_hi;

  if (channels == 0 || channels > 4 || src_w == 0 || src_h == 0
      || dst_w == 0 || dst_h == 0 || !(win_w > 0.0) || !(win_h > 0.0))
    return FALSE;
  /* Bilinear always reads two neighbours: integers, where there are two. */
  if (method == WSI_RESIZE_BILINEAR && src_w > 1 && src_h > 1)
    return resize_linear (r, src, src_w, src_h, src_stride, channels, x0, y0,
        win_w, win_h, dst, dst_w, dst_h, dst_stride);

  if (!make_taps (&r->tx, method, src_w, x0, win_w, dst_w)
      || !make_taps (&r->ty, method, src_h, y0, win_h, dst_h))
    return FALSE;
  /* Only the rows some output row needs (taps are monotonic). */
  row_lo = r->ty.taps[0].first;
  row_hi = r->ty.taps[dst_h - 1].first + r->ty.taps[dst_h - 1].n;
  return horizontal_pass (r, src, src_stride, channels, row_lo, row_hi,
      dst_w) && vertical_pass (r, row_lo, (gsize) dst_w * channels, dst, dst_h,
      dst_stride);
}
