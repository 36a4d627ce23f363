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
 * first[i] .. first[i] + count[i] - 1 with weights summing to 1. */
typedef struct
{
  guint in_size, out_size, max_taps;
  gdouble origin, span;
  guint *first;
  guint *count;
  gfloat *weight;               /* out_size * max_taps */
  gsize first_len, count_len, weight_len;       /* grow-only capacities */
} AxisTaps;

struct _WsiResampler
{
  AxisTaps taps_x, taps_y;
  gfloat *rows;                 /* rows_needed x out_w RGB floats */
  gsize rows_floats;
  guint32 *sums;                /* out_w ARGB channel sums (4 each) */
  gsize sums_len;
  gfloat *composited;           /* one source row on white, RGB floats */
  gsize composited_floats;
  gfloat *acc;                  /* one output row's sums, RGB floats */
  gsize acc_floats;
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
  g_free (resampler->rows);
  g_free (resampler->sums);
  g_free (resampler->composited);
  g_free (resampler->acc);
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

/* Output pixel i covers [origin + i * s, origin + (i + 1) * s) of the
 * source, s = span / out; edge source pixels count for the part of them
 * inside that interval, as cv::INTER_AREA does. Recomputed only when the
 * geometry changes. */
static gboolean
axis_taps_prepare (AxisTaps * taps, guint in_size, gdouble origin,
    gdouble span, guint out_size)
{
  gdouble scale = span / out_size;
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
          (gsize) out_size * taps->max_taps, sizeof (gfloat))) {
    axis_taps_clear (taps);
    return FALSE;
  }
  memset (taps->weight, 0, (gsize) out_size * taps->max_taps *
      sizeof (gfloat));
  taps->in_size = in_size;
  taps->out_size = out_size;
  taps->origin = origin;
  taps->span = span;

  for (i = 0; i < out_size; i++) {
    gdouble start = origin + i * scale;
    gdouble end = MIN (origin + (i + 1) * scale, (gdouble) in_size);
    guint k0 = MIN ((guint) floor (start), in_size - 1);
    guint k1 = MIN ((guint) ceil (end), in_size);
    gfloat *w = taps->weight + (gsize) i * taps->max_taps;
    gdouble total = 0.0;
    guint k;

    if (k1 <= k0)
      k1 = k0 + 1;
    taps->first[i] = k0;
    taps->count[i] = MIN (k1 - k0, taps->max_taps);
    for (k = 0; k < taps->count[i]; k++) {
      gdouble lo = MAX (start, (gdouble) (k0 + k));
      gdouble hi = MIN (end, (gdouble) (k0 + k + 1));
      w[k] = (gfloat) MAX (hi - lo, 0.0);
      total += w[k];
    }
    for (k = 0; k < taps->count[i]; k++)
      w[k] = total > 0.0 ? (gfloat) (w[k] / total) : 1.0f / taps->count[i];
  }
  return TRUE;
}

static inline guint8
clamp_to_byte (gfloat v)
{
  v += 0.5f;
  return v >= 255.0f ? 255 : (v <= 0.0f ? 0 : (guint8) v);
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

/* @n source pixels composited on white as RGB floats: each is converted
 * once, not once per output pixel it weighs in (1-4 times). */
static void
composite_row_floats (const guint32 * src, guint n, gfloat * out)
{
  guint i;

  for (i = 0; i < n; i++, out += 3) {
    guint32 p = src[i];
    guint32 glass = 255 - (p >> 24);

    out[0] = (gfloat) (((p >> 16) & 0xff) + glass);
    out[1] = (gfloat) (((p >> 8) & 0xff) + glass);
    out[2] = (gfloat) ((p & 0xff) + glass);
  }
  out[0] = out[1] = out[2] = 0.0f;      /* the padding pixel */
}

/* acc += weight * row, element by element (no reassociation: the same
 * bits as a scalar loop, four lanes at a time). */
static void
add_weighted_row (gfloat * restrict acc,
    const gfloat * restrict row, gfloat weight, gsize n)
{
  gsize j;

  for (j = 0; j + 4 <= n; j += 4) {
    acc[j + 0] += weight * row[j + 0];
    acc[j + 1] += weight * row[j + 1];
    acc[j + 2] += weight * row[j + 2];
    acc[j + 3] += weight * row[j + 3];
  }
  for (; j < n; j++)
    acc[j] += weight * row[j];
}

/* Area average, separable: the source rows the output needs first
 * (composited on white, as floats), then columns, into the output. The
 * sums run over the taps in order, so the bytes do not depend on how the
 * loops are arranged (the vertical pass adds whole rows: it vectorises). */
static void
area_average (WsiResampler * r, const guint32 * argb, gsize src_stride,
    const WsiImage * out, const PixelLayout * layout)
{
  AxisTaps *tx = &r->taps_x, *ty = &r->taps_y;
  guint row0 = ty->first[0];
  guint row1 = ty->first[out->height - 1] + ty->count[out->height - 1];
  guint col0 = tx->first[0];
  guint col1 = tx->first[out->width - 1] + tx->count[out->width - 1];
  gsize row_floats = (gsize) out->width * 3;
  guint x, y, k;
  gsize j;

  for (y = row0; y < row1; y++) {
    gfloat *row = r->rows + (gsize) (y - row0) * row_floats;

    composite_row_floats (argb + (gsize) y * src_stride + col0, col1 - col0,
        r->composited);
    if (tx->max_taps <= 3) {
      /* Up to 1x downscales (near-whole rests such as 0.99): at most two
       * taps, summed without a loop (a missing second tap weighs 0 and
       * reads the padding pixel; adding 0 leaves the sum's bits as they
       * are). */
      for (x = 0; x < out->width; x++) {
        const gfloat *w = tx->weight + (gsize) x * tx->max_taps;
        const gfloat *p = r->composited + (gsize) (tx->first[x] - col0) * 3;
        gfloat w1 = tx->count[x] > 1 ? w[1] : 0.0f;

        row[3 * x + 0] = w[0] * p[0] + w1 * p[3];
        row[3 * x + 1] = w[0] * p[1] + w1 * p[4];
        row[3 * x + 2] = w[0] * p[2] + w1 * p[5];
      }
      continue;
    }
    for (x = 0; x < out->width; x++) {
      const gfloat *w = tx->weight + (gsize) x * tx->max_taps;
      const gfloat *p = r->composited + (gsize) (tx->first[x] - col0) * 3;
      gfloat cr = 0.0f, cg = 0.0f, cb = 0.0f;

      for (k = 0; k < tx->count[x]; k++, p += 3) {
        cr += w[k] * p[0];
        cg += w[k] * p[1];
        cb += w[k] * p[2];
      }
      row[3 * x + 0] = cr;
      row[3 * x + 1] = cg;
      row[3 * x + 2] = cb;
    }
  }

  for (y = 0; y < out->height; y++) {
    const gfloat *w = ty->weight + (gsize) y * ty->max_taps;
    guint8 *dst = out->data + (gsize) y * out->stride;
    gfloat *acc = r->acc;

    for (j = 0; j < row_floats; j++)
      acc[j] = 0.0f;
    for (k = 0; k < ty->count[y]; k++)
      add_weighted_row (acc, r->rows + (gsize) (ty->first[y] + k - row0) *
          row_floats, w[k], row_floats);
    for (x = 0; x < out->width; x++, dst += layout->pixel_stride) {
      dst[layout->r] = clamp_to_byte (acc[3 * x + 0]);
      dst[layout->g] = clamp_to_byte (acc[3 * x + 1]);
      dst[layout->b] = clamp_to_byte (acc[3 * x + 2]);
      if (layout->a >= 0)
        dst[layout->a] = 255;
    }
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
  guint k;

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
  if (!reserve ((gpointer *) & r->rows, &r->rows_floats,
          (gsize) (r->taps_y.first[out->height - 1] +
              r->taps_y.count[out->height - 1] - r->taps_y.first[0]) *
          out->width * 3, sizeof (gfloat))
      || !reserve ((gpointer *) & r->composited, &r->composited_floats,
          (gsize) (r->taps_x.first[out->width - 1] +
              r->taps_x.count[out->width - 1] - r->taps_x.first[0] + 1) * 3,
          sizeof (gfloat))
      || !reserve ((gpointer *) & r->acc, &r->acc_floats,
          (gsize) out->width * 3, sizeof (gfloat)))
    return FALSE;
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
