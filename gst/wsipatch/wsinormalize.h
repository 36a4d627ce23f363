/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsinormalize.h: 8-bit interleaved pixels (HWC) to normalised float32
 * channel planes (CHW), the CPU side of "ToTensor + Normalize".
 *
 * Contract: output channel c of pixel p is
 *   (src[p * pixel_bytes + offset[c]] / 255 - mean[c]) / std[c],
 * computed as one float multiply-add (v * scale[c] + bias[c], scale and
 * bias folded once in wsi_normalize_init), so it matches the double
 * precision formula within a few float ulps (tested). Channel c goes to
 * plane c, planes of width × height floats back to back: one NCHW image.
 * Cost: one load, one int-to-float conversion, one multiply and one add
 * per output value; RGB, RGBx/RGBA and BGRx rows are done by loops with
 * the layout fixed at compile time, all three channels in one pass, which
 * GCC vectorises at -O3 (meson builds this file so; no lookup tables, no
 * branches on pixel data); other layouts take a plain loop per channel.
 * Built with -ffp-contract=off, so the multiply and add round the same
 * with and without FMA: the floats are the same on every x86-64. No
 * allocation, no locks. Threading: a WsiNormalize is read-only
 * once initialised; any number of threads may use it at once.
 * GStreamer-free. */

#ifndef __WSI_NORMALIZE_H__
#define __WSI_NORMALIZE_H__

#include <glib.h>

G_BEGIN_DECLS

#define WSI_NORMALIZE_MAX_CHANNELS 4

typedef struct
{
  guint pixel_bytes;            /* bytes per input pixel: 1, 3 or 4 */
  guint n_channels;             /* output channels (planes) */
  guint offset[WSI_NORMALIZE_MAX_CHANNELS];     /* byte of channel c */
  gfloat scale[WSI_NORMALIZE_MAX_CHANNELS];     /* 1 / (255 std[c]) */
  gfloat bias[WSI_NORMALIZE_MAX_CHANNELS];      /* -mean[c] / std[c] */
} WsiNormalize;

/* Fills @norm for pixels of @pixel_bytes bytes whose output channels sit
 * at byte @offset[0..n_channels-1]. @mean and @std hold @n_mean and @n_std
 * values: one per output channel, or a single value for all. Returns FALSE
 * (and leaves @norm unusable) when a count is neither, a std is not > 0,
 * or a value is not finite. */
gboolean wsi_normalize_init (WsiNormalize * norm, guint pixel_bytes,
    const guint * offset, guint n_channels, const gdouble * mean,
    guint n_mean, const gdouble * std, guint n_std);

/* Normalises one @width × @height image whose rows start @src_stride bytes
 * apart into @dst: n_channels planes of width × height floats. */
void wsi_normalize_image (const WsiNormalize * norm, const guint8 * src,
    gsize src_stride, guint width, guint height, gfloat * dst);

G_END_DECLS

#endif /* __WSI_NORMALIZE_H__ */
