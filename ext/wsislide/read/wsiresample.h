/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiresample.h: the pixel kernels every slide backend shares: premultiplied
 * ARGB (OpenSlide's format, and what the TIFF backend decodes into)
 * composited on white and written as a patch in RGB, RGBA, RGBx or BGRx,
 * at the same size or area-averaged down.
 *
 * Contract: wsi_resample_argb() maps the source window [x0, x0 + span_w) x
 * [y0, y0 + span_h) (fractional source pixels) onto the output image; each
 * output pixel is the area average of the source pixels under it (edge
 * pixels weighted by the part inside, as OpenCV's INTER_AREA), composited
 * on white (c + 255 - alpha). Same-size windows at whole-pixel offsets are
 * copied (ORC kernels for the 4-byte formats), whole-number factors at
 * whole-pixel offsets are summed in integers (about 3x cheaper), anything
 * else takes separable fractional weights in 14-bit fixed point: per
 * output row a vertical pass over the source rows under it, then a
 * horizontal pass per output pixel, composited on white at the end (SSE2
 * multiply-adds on x86-64 for the passes of two taps, AVX2 ones chosen at
 * run time where the CPU has them, vectorised loops for the rest; the
 * same integer arithmetic in C elsewhere: the bytes are the same on every
 * host). It rounds the
 * exact area average to within a few hundredths of a level more than
 * rounding alone (tests/check/libs/wsiresample.c).
 *
 * Cost: about one pass over the source window; for the near-whole rests
 * of issue 23 (254 -> 256 px) about 0.16 ms of CPU a 256 px patch,
 * 3.3x less than the float kernel before it. No allocation once the
 * resampler has seen the sizes. Threading: a WsiResampler is one thread's
 * scratch; the functions are otherwise pure.
 *
 * There are two area averages in gst-wsi, on purpose: this one averages a
 * region held whole in memory (patches), wsislidesrc's overview reader
 * consumes a level strip by strip in source order (whole levels do not fit
 * in memory). Moving patches onto the source-oriented form measured 5 %
 * slower per resampled patch, so both stay; wsi_box_taps_new() below is the
 * overview's.
 */

#ifndef __WSI_RESAMPLE_H__
#define __WSI_RESAMPLE_H__

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  WSI_PIXEL_RGB,                /* 3 bytes: R, G, B */
  WSI_PIXEL_RGBA,               /* 4 bytes, alpha 255 */
  WSI_PIXEL_RGBX,               /* 4 bytes, padding 255 */
  WSI_PIXEL_BGRX,               /* 4 bytes, padding 255 */
} WsiPixelFormat;

/* Caller-owned output memory. */
typedef struct
{
  guint8 *data;
  gsize stride;                 /* bytes per row */
  guint width, height;
  WsiPixelFormat format;
} WsiImage;

/* Bytes per pixel of @format. */
guint wsi_pixel_format_bytes (WsiPixelFormat format);

typedef struct _WsiResampler WsiResampler;

WsiResampler *wsi_resampler_new (void);
void wsi_resampler_free (WsiResampler * resampler);

/* See the top of this file. @argb is src_w x src_h, row stride
 * @src_stride words. Returns FALSE only when scratch memory ran out. */
gboolean wsi_resample_argb (WsiResampler * resampler, const guint32 * argb,
    guint src_w, guint src_h, gsize src_stride, gdouble x0, gdouble y0,
    gdouble span_w, gdouble span_h, const WsiImage * out);

/* A source window held in pieces (tiles read where they lie, not copied
 * into one block first): @n_columns x @n_rows pieces, piece (c, r)
 * covering window pixels [x[c], x[c + 1]) x [y[r], y[r + 1]); its pixel
 * (x[c], y[r]) at origin[r * n_columns + c], stride[r * n_columns + c]
 * words a row. x[0] = y[0] = 0; the window is x[n_columns] x y[n_rows]. */
typedef struct
{
  guint n_columns, n_rows;
  const guint *x, *y;
  const guint32 *const *origin;
  const gsize *stride;
} WsiArgbMosaic;

/* wsi_resample_argb() over a mosaic, with the same bytes as over the same
 * pixels in one block: the fractional path reads each piece in place (its
 * vertical pass is per byte column); the copy and whole-factor paths
 * gather the pieces into the resampler's scratch first (one copy). */
gboolean wsi_resample_argb_mosaic (WsiResampler * resampler,
    const WsiArgbMosaic * mosaic, gdouble x0, gdouble y0, gdouble span_w,
    gdouble span_h, const WsiImage * out);

/* Premultiplied ARGB composited on white into tight RGB (n pixels). */
void wsi_argb_to_rgb_on_white (const guint32 * argb, guint8 * rgb, gsize n);

/* The overview's source-oriented box taps: source pixel i of @in_size
 * contributes share0 to output `first` and share1 to `first + 1`. */
typedef struct
{
  gint first;
  gfloat share0, share1;
} WsiBoxTap;

WsiBoxTap *wsi_box_taps_new (gint64 in_size, gint out_size);

G_END_DECLS

#endif /* __WSI_RESAMPLE_H__ */
