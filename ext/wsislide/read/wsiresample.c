/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsiresample.c: the shared pixel kernels (see wsiresample.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsiresample.h"
#include "wsiconvert.h"

#include <math.h>
#include <string.h>

/* Whole-number downscales up to this factor sum in 32 bits (255 * 256^2
 * fits easily); larger ones take the general area path. */
#define MAX_BOX_FACTOR 256

/* A whole-frame ORC kernel (wsiconvert.orc): premultiplied ARGB composited
 * on white, with the destination and source strides. */
typedef void (*OnWhiteKernel) (guint8 * dst, int dst_stride,
    const guint32 * argb, int argb_stride, int width, int height);

/* The kernels write host-order words: the byte layouts they name hold on
 * little-endian hosts only; elsewhere every format takes the C loop. */
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
#define ON_WHITE_RGBX wsi_orc_argb_on_white_rgbx
#define ON_WHITE_BGRX wsi_orc_argb_on_white_bgrx
#else
#define ON_WHITE_RGBX NULL
#define ON_WHITE_BGRX NULL
#endif

/* Where R, G, B (and alpha, when the format has a 4th byte) go in a pixel. */
typedef struct
{
  guint pixel_stride;
  guint r, g, b;
  gint a;                       /* -1 for 3-byte RGB */
  OnWhiteKernel on_white;       /* NULL: write_row_on_white() */
} PixelLayout;

/* Box-filter taps of one axis: output i averages source pixels
 * first[i] .. first[i] + count[i] - 1 with fixed-point weights summing to
 * exactly 1 << WEIGHT_BITS. */
typedef struct
{
  guint in_size, out_size, max_taps;
  gdouble origin, span;
  guint *first;
  guint *count;
  guint16 *weight;              /* out_size * max_taps */
  gsize first_len, count_len, weight_len;       /* grow-only capacities */
} AxisTaps;

struct _WsiResampler
{
  AxisTaps taps_x, taps_y;
  guint32 *sums;                /* out_w ARGB channel sums (4 each) */
  gsize sums_len;
  guint16 *column_sums;         /* one output row's vertical pass: the
                                 * window's columns, 4 channels each */
  gsize column_sums_len;
  guint32 *wide;                /* the same before narrowing (3+ taps) */
  gsize wide_len;
};

static PixelLayout
pixel_layout (WsiPixelFormat format)
{
  switch (format) {
    case WSI_PIXEL_RGBA:
    case WSI_PIXEL_RGBX:
      return (PixelLayout) { 4, 0, 1, 2, 3, ON_WHITE_RGBX };
    case WSI_PIXEL_BGRX:
      return (PixelLayout) { 4, 2, 1, 0, 3, ON_WHITE_BGRX };
    case WSI_PIXEL_RGB:
    default:
      /* no ORC kernel: 3-byte pixels have no ORC element type */
      return (PixelLayout) { 3, 0, 1, 2, -1, NULL };
  }
}

guint
wsi_pixel_format_bytes (WsiPixelFormat format)
{
  return pixel_layout (format).pixel_stride;
}

WsiResampler *
wsi_resampler_new (void)
{
  return g_new0 (WsiResampler, 1);
}

static void
axis_taps_clear (AxisTaps * taps)
{
  g_free (taps->first);
  g_free (taps->count);
  g_free (taps->weight);
  memset (taps, 0, sizeof (*taps));
}

void
wsi_resampler_free (WsiResampler * resampler)
{
  if (resampler == NULL)
    return;
  axis_taps_clear (&resampler->taps_x);
  axis_taps_clear (&resampler->taps_y);
  g_free (resampler->sums);
  g_free (resampler->column_sums);
  g_free (resampler->wide);
  g_free (resampler);
}

void
wsi_argb_to_rgb_on_white (const guint32 * argb, guint8 * rgb, gsize n)
{
  gsize i;

  /* Premultiplied: composited on white, c' = c + (255 - alpha). */
  for (i = 0; i < n; i++) {
    guint32 p = argb[i];
    guint32 glass = 255 - (p >> 24);
    rgb[3 * i + 0] = ((p >> 16) & 0xff) + glass;
    rgb[3 * i + 1] = ((p >> 8) & 0xff) + glass;
    rgb[3 * i + 2] = (p & 0xff) + glass;
  }
}

/* The same arithmetic into any output layout. */
static void
write_row_on_white (const guint32 * argb, guint8 * dst, guint n,
    const PixelLayout * layout)
{
  guint i;

  if (layout->a < 0) {
    wsi_argb_to_rgb_on_white (argb, dst, n);
    return;
  }
  for (i = 0; i < n; i++, dst += 4) {
    guint32 p = argb[i];
    guint32 glass = 255 - (p >> 24);

    dst[layout->r] = ((p >> 16) & 0xff) + glass;
    dst[layout->g] = ((p >> 8) & 0xff) + glass;
    dst[layout->b] = (p & 0xff) + glass;
    dst[layout->a] = 255;
  }
}

/* Grow-only scratch: after the first reads the hot path allocates nothing. */
static gboolean
reserve (gpointer * mem, gsize * have, gsize need, gsize elem)
{
  if (need <= *have)
    return TRUE;
  g_free (*mem);
  *mem = g_try_malloc (need * elem);
  *have = *mem ? need : 0;
  return *mem != NULL;
}

/* Fixed-point weights: each axis's taps sum to exactly 1 << WEIGHT_BITS,
 * so an average of bytes never exceeds 255, and the vertical pass's
 * results (255 << MID_BITS at most: below 2^15, a signed 16-bit lane)
 * times the horizontal weights stay below 2^29. 14 bits of weight and 7
 * kept between the passes hold the rounding error of the whole resample
 * near half a level (against 0.5 for any rounding to bytes). */
#define WEIGHT_BITS 14
#define WEIGHT_ONE (1u << WEIGHT_BITS)
/* Fractional bits the vertical pass keeps for the horizontal one. */
#define MID_BITS 7
#define MID_SHIFT (WEIGHT_BITS - MID_BITS)
#define OUT_SHIFT (WEIGHT_BITS + MID_BITS)

/* Rounds @w (@count fractions summing to 1) to integers summing to exactly
 * WEIGHT_ONE: the rounding remainder goes to the largest tap, where it
 * matters least. */
static void
quantise_weights (const gdouble * w, guint count, guint max_taps,
    guint16 * out)
{
  guint k, largest = 0;
  gint total = 0;

  memset (out, 0, max_taps * sizeof (guint16));
  for (k = 0; k < count; k++) {
    out[k] = (guint16) floor (w[k] * WEIGHT_ONE + 0.5);
    total += out[k];
    if (w[k] > w[largest])
      largest = k;
  }
  out[largest] = (guint16) (out[largest] + ((gint) WEIGHT_ONE - total));
}

/* Output pixel i covers [origin + i * s, origin + (i + 1) * s) of the
 * source, s = span / out; edge source pixels count for the part of them
 * inside that interval, as cv::INTER_AREA does. Recomputed only when the
 * geometry changes. */
static gboolean
axis_taps_prepare (AxisTaps * taps, guint in_size, gdouble origin,
    gdouble span, guint out_size)
{
  gdouble scale = span / out_size;
  gdouble small[64], *exact;
  guint i;

  if (taps->in_size == in_size && taps->out_size == out_size
      && taps->origin == origin && taps->span == span)
    return TRUE;
  /* A fractional origin (near-whole factors) changes with every patch:
   * the arrays are kept and only grow. */
  taps->in_size = 0;
  taps->max_taps = (guint) ceil (scale) + 2;
  if (!reserve ((gpointer *) & taps->first, &taps->first_len, out_size,
          sizeof (guint))
      || !reserve ((gpointer *) & taps->count, &taps->count_len, out_size,
          sizeof (guint))
      || !reserve ((gpointer *) & taps->weight, &taps->weight_len,
          (gsize) out_size * taps->max_taps, sizeof (guint16))) {
    axis_taps_clear (taps);
    return FALSE;
  }
  exact = taps->max_taps <= G_N_ELEMENTS (small) ? small :
      g_new (gdouble, taps->max_taps);
  taps->in_size = in_size;
  taps->out_size = out_size;
  taps->origin = origin;
  taps->span = span;

  for (i = 0; i < out_size; i++) {
    gdouble start = origin + i * scale;
    gdouble end = MIN (origin + (i + 1) * scale, (gdouble) in_size);
    guint k0 = MIN ((guint) floor (start), in_size - 1);
    guint k1 = MIN ((guint) ceil (end), in_size);
    gdouble total = 0.0;
    guint k;

    if (k1 <= k0)
      k1 = k0 + 1;
    taps->first[i] = k0;
    taps->count[i] = MIN (k1 - k0, taps->max_taps);
    for (k = 0; k < taps->count[i]; k++) {
      gdouble lo = MAX (start, (gdouble) (k0 + k));
      gdouble hi = MIN (end, (gdouble) (k0 + k + 1));
      exact[k] = MAX (hi - lo, 0.0);
      total += exact[k];
    }
    for (k = 0; k < taps->count[i]; k++)
      exact[k] = total > 0.0 ? exact[k] / total : 1.0 / taps->count[i];
    quantise_weights (exact, taps->count[i], taps->max_taps,
        taps->weight + (gsize) i * taps->max_taps);
  }
  if (exact != small)
    g_free (exact);
  return TRUE;
}

static void
copy_on_white (const guint32 * argb, gsize src_stride, const WsiImage * out,
    const PixelLayout * layout)
{
  guint y;

  if (layout->on_white) {
    layout->on_white (out->data, out->stride, argb,
        src_stride * sizeof (guint32), out->width, out->height);
    return;
  }
  for (y = 0; y < out->height; y++)
    write_row_on_white (argb + (gsize) y * src_stride,
        out->data + (gsize) y * out->stride, out->width, layout);
}

/* Area average for a whole-number factor k (the common 2x and 4x targets):
 * each output pixel is the mean of a k x k block, summed in integers.
 * Compositing on white is linear, so it is applied to the sums:
 * mean (c + 255 - a) = (sum c + 255 k^2 - sum a) / k^2. */
static void
box_integer (WsiResampler * r, const guint32 * argb, gsize src_stride,
    guint k, const WsiImage * out, const PixelLayout * layout)
{
  guint32 block = k * k;
  gfloat inverse = 1.0f / block;
  guint32 *sums = r->sums;
  guint x, y, dx, dy;

  for (y = 0; y < out->height; y++) {
    guint8 *dst = out->data + (gsize) y * out->stride;

    memset (sums, 0, (gsize) out->width * 4 * sizeof (guint32));
    for (dy = 0; dy < k; dy++) {
      const guint32 *src = argb + (gsize) (y * k + dy) * src_stride;

      for (x = 0; x < out->width; x++, src += k) {
        guint32 *sum = sums + 4 * x;

        for (dx = 0; dx < k; dx++) {
          guint32 p = src[dx];

          sum[0] += p >> 24;
          sum[1] += (p >> 16) & 0xff;
          sum[2] += (p >> 8) & 0xff;
          sum[3] += p & 0xff;
        }
      }
    }
    for (x = 0; x < out->width; x++, dst += layout->pixel_stride) {
      const guint32 *sum = sums + 4 * x;
      guint32 glass = 255 * block - sum[0];

      dst[layout->r] = (guint8) ((sum[1] + glass) * inverse + 0.5f);
      dst[layout->g] = (guint8) ((sum[2] + glass) * inverse + 0.5f);
      dst[layout->b] = (guint8) ((sum[3] + glass) * inverse + 0.5f);
      if (layout->a >= 0)
        dst[layout->a] = 255;
    }
  }
}

/* Where A, R, G, B lie in the bytes of a host-order ARGB word. */
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
enum { BYTE_B, BYTE_G, BYTE_R, BYTE_A };
#else
enum { BYTE_A, BYTE_R, BYTE_G, BYTE_B };
#endif

/* The vertical pass is plain loops over arrays that GCC vectorises at
 * -O3 (checked with -fopt-info-vec; -O2's very-cheap cost model leaves
 * loops of unknown length scalar). */
#if defined(__GNUC__) && !defined(__clang__)
#define VECTORISE __attribute__ ((optimize ("O3")))
#else
#define VECTORISE
#endif

/* The two-row vertical pass (the near-whole rests' usual case) with
 * SSE2 multiply-adds of 16-bit pairs (bytes times weights up to 2^14 fit):
 * the same arithmetic as the C loop after it, 16 bytes at a time. Returns
 * how many bytes it did (0 without SSE2). */
#if defined(__SSE2__)
#include <emmintrin.h>

static gsize
two_rows_sse2 (const guint8 * top, const guint8 * next, guint16 w0,
    guint16 w1, gsize n, guint16 * sums)
{
  const __m128i zero = _mm_setzero_si128 ();
  const __m128i weights = _mm_set1_epi32 ((gint) (w0 | ((guint32) w1 << 16)));
  const __m128i half = _mm_set1_epi32 (1 << (MID_SHIFT - 1));
  gsize j;

  for (j = 0; j + 16 <= n; j += 16) {
    __m128i a = _mm_loadu_si128 ((const __m128i *) (top + j));
    __m128i b = _mm_loadu_si128 ((const __m128i *) (next + j));
    __m128i a_lo = _mm_unpacklo_epi8 (a, zero), a_hi = _mm_unpackhi_epi8 (a,
        zero);
    __m128i b_lo = _mm_unpacklo_epi8 (b, zero), b_hi = _mm_unpackhi_epi8 (b,
        zero);
    /* (a, b) pairs times (w0, w1), added: 4 sums a register. */
    __m128i s0 = _mm_madd_epi16 (_mm_unpacklo_epi16 (a_lo, b_lo), weights);
    __m128i s1 = _mm_madd_epi16 (_mm_unpackhi_epi16 (a_lo, b_lo), weights);
    __m128i s2 = _mm_madd_epi16 (_mm_unpacklo_epi16 (a_hi, b_hi), weights);
    __m128i s3 = _mm_madd_epi16 (_mm_unpackhi_epi16 (a_hi, b_hi), weights);

    s0 = _mm_srai_epi32 (_mm_add_epi32 (s0, half), MID_SHIFT);
    s1 = _mm_srai_epi32 (_mm_add_epi32 (s1, half), MID_SHIFT);
    s2 = _mm_srai_epi32 (_mm_add_epi32 (s2, half), MID_SHIFT);
    s3 = _mm_srai_epi32 (_mm_add_epi32 (s3, half), MID_SHIFT);
    /* Below 2^15: the signed packs keep them. */
    _mm_storeu_si128 ((__m128i *) (sums + j), _mm_packs_epi32 (s0, s1));
    _mm_storeu_si128 ((__m128i *) (sums + j + 8), _mm_packs_epi32 (s2, s3));
  }
  return j;
}
#else
static gsize
two_rows_sse2 (const guint8 * top, const guint8 * next, guint16 w0,
    guint16 w1, gsize n, guint16 * sums)
{
  return 0;
}
#endif

/* One output row's vertical pass: the weighted sum of the @count source
 * rows under it (from @top, @stride_bytes apart), byte by byte over @n
 * bytes (the window's columns, 4 channels each, still premultiplied),
 * kept with MID_BITS fractional bits. @wide: n words of scratch for
 * three taps or more. */
static void VECTORISE
vertical_pass (const guint8 * restrict top, gsize stride_bytes,
    const guint16 * w, guint count, gsize n, guint16 * restrict sums,
    guint32 * restrict wide)
{
  const guint32 half = 1u << (MID_SHIFT - 1);
  gsize j;
  guint k;

  if (count == 1) {
    /* The one weight is WEIGHT_ONE: (b << 14 + half) >> 7 = b << 7. */
    for (j = 0; j < n; j++)
      sums[j] = (guint16) (top[j] << MID_BITS);
  } else if (count == 2) {
    const guint8 *restrict next = top + stride_bytes;
    guint16 w0 = w[0], w1 = w[1];

    j = two_rows_sse2 (top, next, w0, w1, n, sums);
    for (; j < n; j++)
      sums[j] = (guint16) (((guint32) top[j] * w0 + (guint32) next[j] * w1 +
              half) >> MID_SHIFT);
  } else {
    guint16 w0 = w[0];

    for (j = 0; j < n; j++)
      wide[j] = (guint32) top[j] * w0 + half;
    for (k = 1; k < count; k++) {
      const guint8 *restrict row = top + k * stride_bytes;
      guint16 wk = w[k];

      for (j = 0; j < n; j++)
        wide[j] += (guint32) row[j] * wk;
    }
    for (j = 0; j < n; j++)
      sums[j] = (guint16) (wide[j] >> MID_SHIFT);
  }
}

/* The horizontal pass works on one output pixel at a time: PixelSums
 * holds its 4 channel sums (OUT_SHIFT fractional bits, in the byte order
 * of the source words), sums_add_pair() adds two neighbouring pixels of
 * the vertical sums with their weights, sums_write() composites on white
 * and stores. SSE2 (every x86-64) does a pair in one multiply-add of
 * 16-bit lanes (sums below 2^15, weights up to 2^14, so the 32-bit
 * results cannot overflow); elsewhere the same integer arithmetic in C,
 * so the bytes are the same on every host. */
#if defined(__SSE2__) && G_BYTE_ORDER == G_LITTLE_ENDIAN
#include <emmintrin.h>

typedef __m128i PixelSums;

static inline PixelSums
sums_zero (void)
{
  return _mm_setzero_si128 ();
}

static inline PixelSums
sums_add_pair (PixelSums s, const guint16 * p, guint16 w0, guint16 w1)
{
  __m128i two = _mm_loadu_si128 ((const __m128i *) p);
  /* (p0 c, p1 c) pairs of each channel c, times (w0, w1), added. */
  __m128i pairs = _mm_unpacklo_epi16 (two, _mm_unpackhi_epi64 (two, two));

  return _mm_add_epi32 (s, _mm_madd_epi16 (pairs,
          _mm_set1_epi32 ((gint) (w0 | ((guint32) w1 << 16)))));
}

/* Composited on white: mean (c + 255 - a) = mean c + 255 - mean a
 * (compositing is linear, so it is applied once, here); the alpha lane
 * becomes 255 by the same sum. The packs saturate a colour above its
 * alpha (not premultiplied) at 255. @tight: write 3 bytes of an RGB pixel
 * exactly (the row's last), else 4 (the next pixel overwrites the 4th). */
static inline void
sums_write (PixelSums s, guint8 * dst, const PixelLayout * layout,
    gboolean tight)
{
  const __m128i white_half = _mm_set1_epi32 ((255 << OUT_SHIFT) +
      (1 << (OUT_SHIFT - 1)));
  __m128i alpha = _mm_shuffle_epi32 (s, _MM_SHUFFLE (3, 3, 3, 3));
  __m128i c = _mm_srai_epi32 (_mm_add_epi32 (_mm_sub_epi32 (s, alpha),
          white_half), OUT_SHIFT);
  guint32 word;

  /* Lanes are B, G, R, A: RGB, RGBA and RGBx want R, G, B, A. */
  if (layout->r == 0)
    c = _mm_shuffle_epi32 (c, _MM_SHUFFLE (3, 0, 1, 2));
  c = _mm_packs_epi32 (c, c);
  word = (guint32) _mm_cvtsi128_si32 (_mm_packus_epi16 (c, c));
  if (layout->pixel_stride == 4 || !tight) {
    memcpy (dst, &word, 4);
  } else {
    memcpy (dst, &word, 2);
    dst[2] = (guint8) (word >> 16);
  }
}
/* Output pixels x and x + 1 of a row whose pixels have at most two taps,
 * for two_taps_row(): the same arithmetic as sums_add_pair() and
 * sums_write(), two pixels sharing the packs and one store. */
static inline void
two_pixels (const guint16 * sums, const AxisTaps * tx, guint col0, guint x,
    guint8 * dst, const PixelLayout * layout)
{
  const __m128i white_half = _mm_set1_epi32 ((255 << OUT_SHIFT) +
      (1 << (OUT_SHIFT - 1)));
  const guint16 *w0 = tx->weight + (gsize) x * tx->max_taps;
  const guint16 *w1 = w0 + tx->max_taps;
  __m128i s0 = sums_add_pair (_mm_setzero_si128 (),
      sums + (gsize) (tx->first[x] - col0) * 4, w0[0], w0[1]);
  __m128i s1 = sums_add_pair (_mm_setzero_si128 (),
      sums + (gsize) (tx->first[x + 1] - col0) * 4, w1[0], w1[1]);
  __m128i c0 = _mm_srai_epi32 (_mm_add_epi32 (_mm_sub_epi32 (s0,
              _mm_shuffle_epi32 (s0, _MM_SHUFFLE (3, 3, 3, 3))), white_half),
      OUT_SHIFT);
  __m128i c1 = _mm_srai_epi32 (_mm_add_epi32 (_mm_sub_epi32 (s1,
              _mm_shuffle_epi32 (s1, _MM_SHUFFLE (3, 3, 3, 3))), white_half),
      OUT_SHIFT);
  __m128i bytes;

  if (layout->r == 0) {
    c0 = _mm_shuffle_epi32 (c0, _MM_SHUFFLE (3, 0, 1, 2));
    c1 = _mm_shuffle_epi32 (c1, _MM_SHUFFLE (3, 0, 1, 2));
  }
  bytes = _mm_packus_epi16 (_mm_packs_epi32 (c0, c1), _mm_setzero_si128 ());
  if (layout->pixel_stride == 4) {
    _mm_storel_epi64 ((__m128i *) dst, bytes);
  } else {
    /* RGB: 4 bytes each, 3 apart; the 7th byte is the next pixel's,
     * written again by it (x + 1 is never the row's last here). */
    guint32 first = (guint32) _mm_cvtsi128_si32 (bytes);
    guint32 second = (guint32) _mm_cvtsi128_si32 (_mm_srli_si128 (bytes, 4));

    memcpy (dst, &first, 4);
    memcpy (dst + 3, &second, 4);
  }
}

/* A row of at most two taps a pixel, two pixels at a time. */
static void
two_taps_row (const guint16 * sums, const AxisTaps * tx, guint col0,
    guint8 * dst, const PixelLayout * layout)
{
  guint x = 0, last = tx->out_size - 1;

  for (; x + 1 < last; x += 2, dst += 2 * layout->pixel_stride)
    two_pixels (sums, tx, col0, x, dst, layout);
  for (; x <= last; x++, dst += layout->pixel_stride) {
    const guint16 *w = tx->weight + (gsize) x * tx->max_taps;

    sums_write (sums_add_pair (sums_zero (), sums + (gsize) (tx->first[x] -
                col0) * 4, w[0], w[1]), dst, layout, x == last);
  }
}
#else
typedef struct
{
  guint32 c[4];
} PixelSums;

static inline PixelSums
sums_zero (void)
{
  PixelSums s = { {0, 0, 0, 0} };
  return s;
}

static inline PixelSums
sums_add_pair (PixelSums s, const guint16 * p, guint16 w0, guint16 w1)
{
  guint c;

  for (c = 0; c < 4; c++)
    s.c[c] += (guint32) p[c] * w0 + (guint32) p[4 + c] * w1;
  return s;
}

/* The same arithmetic as the SSE2 form above. */
static inline void
sums_write (PixelSums s, guint8 * dst, const PixelLayout * layout,
    gboolean tight)
{
  const guint32 white_half = (255u << OUT_SHIFT) + (1u << (OUT_SHIFT - 1));
  guint32 glass = white_half - s.c[BYTE_A];

  (void) tight;
  dst[layout->r] = MIN ((s.c[BYTE_R] + glass) >> OUT_SHIFT, 255);
  dst[layout->g] = MIN ((s.c[BYTE_G] + glass) >> OUT_SHIFT, 255);
  dst[layout->b] = MIN ((s.c[BYTE_B] + glass) >> OUT_SHIFT, 255);
  if (layout->a >= 0)
    dst[layout->a] = 255;
}
/* A row of at most two taps a pixel. */
static void
two_taps_row (const guint16 * sums, const AxisTaps * tx, guint col0,
    guint8 * dst, const PixelLayout * layout)
{
  guint x, last = tx->out_size - 1;

  for (x = 0; x <= last; x++, dst += layout->pixel_stride) {
    const guint16 *w = tx->weight + (gsize) x * tx->max_taps;

    sums_write (sums_add_pair (sums_zero (), sums + (gsize) (tx->first[x] -
                col0) * 4, w[0], w[1]), dst, layout, x == last);
  }
}
#endif

/* One output row's horizontal pass over the vertical pass's sums: each
 * output pixel adds its taps two at a time (a missing second tap weighs
 * 0 and reads at most the zero pixel past the window's end). */
static void
horizontal_pass (const guint16 * sums, const AxisTaps * tx, guint col0,
    guint8 * dst, const PixelLayout * layout)
{
  guint x, k, last = tx->out_size - 1;

  if (tx->max_taps <= 3) {
    /* Scales up to 1x (the near-whole rests): at most two taps. */
    two_taps_row (sums, tx, col0, dst, layout);
    return;
  }
  for (x = 0; x <= last; x++, dst += layout->pixel_stride) {
    const guint16 *w = tx->weight + (gsize) x * tx->max_taps;
    const guint16 *p = sums + (gsize) (tx->first[x] - col0) * 4;
    PixelSums s = sums_zero ();

    for (k = 0; k < tx->count[x]; k += 2, p += 8)
      s = sums_add_pair (s, p, w[k], k + 1 < tx->count[x] ? w[k + 1] : 0);
    sums_write (s, dst, layout, x == last);
  }
}

/* Area average, separable, one output row at a time: the rows under it
 * summed column by column (vertical pass, premultiplied), then the
 * columns under each output pixel (horizontal pass), composited on white
 * at the end. */
static void
area_average (WsiResampler * r, const guint32 * argb, gsize src_stride,
    const WsiImage * out, const PixelLayout * layout)
{
  const AxisTaps *tx = &r->taps_x, *ty = &r->taps_y;
  guint col0 = tx->first[0];
  gsize n = (gsize) (tx->first[out->width - 1] + tx->count[out->width - 1] -
      col0) * 4;
  guint y;

  for (y = 0; y < out->height; y++) {
    vertical_pass ((const guint8 *) (argb + (gsize) ty->first[y] *
            src_stride + col0), src_stride * sizeof (guint32),
        ty->weight + (gsize) y * ty->max_taps, ty->count[y], n,
        r->column_sums, r->wide);
    horizontal_pass (r->column_sums, tx, col0,
        out->data + (gsize) y * out->stride, layout);
  }
}

static gboolean
is_whole (gdouble v)
{
  return fabs (v - round (v)) < 1e-9;
}

gboolean
wsi_resample_argb (WsiResampler * r, const guint32 * argb, guint src_w,
    guint src_h, gsize src_stride, gdouble x0, gdouble y0, gdouble span_w,
    gdouble span_h, const WsiImage * out)
{
  PixelLayout layout = pixel_layout (out->format);
  gboolean whole_origin = is_whole (x0) && is_whole (y0);
  guint k, window_w;

  g_return_val_if_fail (out->width > 0 && out->height > 0, FALSE);
  g_return_val_if_fail (src_w > 0 && src_h > 0, FALSE);

  if (whole_origin && is_whole (span_w) && is_whole (span_h)) {
    const guint32 *origin = argb + (gsize) round (y0) * src_stride +
        (gsize) round (x0);

    if ((guint) round (span_w) == out->width
        && (guint) round (span_h) == out->height) {
      copy_on_white (origin, src_stride, out, &layout);
      return TRUE;
    }
    k = (guint) round (span_w) / out->width;
    if (k >= 2 && k <= MAX_BOX_FACTOR && k * out->width == round (span_w)
        && k * out->height == round (span_h)) {
      if (!reserve ((gpointer *) & r->sums, &r->sums_len,
              (gsize) out->width * 4, sizeof (guint32)))
        return FALSE;
      box_integer (r, origin, src_stride, k, out, &layout);
      return TRUE;
    }
  }

  if (!axis_taps_prepare (&r->taps_x, src_w, x0, span_w, out->width)
      || !axis_taps_prepare (&r->taps_y, src_h, y0, span_h, out->height))
    return FALSE;
  window_w = r->taps_x.first[out->width - 1] +
      r->taps_x.count[out->width - 1] - r->taps_x.first[0];
  /* One zero pixel past the window: a missing second tap reads it. */
  if (!reserve ((gpointer *) & r->column_sums, &r->column_sums_len,
          (gsize) (window_w + 1) * 4, sizeof (guint16))
      || !reserve ((gpointer *) & r->wide, &r->wide_len,
          (gsize) window_w * 4, sizeof (guint32)))
    return FALSE;
  memset (r->column_sums + (gsize) window_w * 4, 0, 4 * sizeof (guint16));
  area_average (r, argb, src_stride, out, &layout);
  return TRUE;
}

WsiBoxTap *
wsi_box_taps_new (gint64 n_in, gint n_out)
{
  WsiBoxTap *taps = g_new (WsiBoxTap, n_in);
  gdouble scale = (gdouble) n_out / n_in;
  gint64 i;

  for (i = 0; i < n_in; i++) {
    gdouble start = i * scale, end = (i + 1) * scale;
    gint first = MIN ((gint) start, n_out - 1);

    taps[i].first = first;
    if (end > first + 1 && first + 1 < n_out) {
      taps[i].share0 = (gfloat) (first + 1 - start);
      taps[i].share1 = (gfloat) (end - (first + 1));
    } else {
      taps[i].share0 = (gfloat) (MIN (end, (gdouble) n_out) - start);
      taps[i].share1 = 0.0f;
    }
  }
  return taps;
}
