/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#include <math.h>
#include <string.h>

#include "wsinormalize.h"

gboolean
wsi_normalize_init (WsiNormalize * norm, guint pixel_bytes,
    const guint * offset, guint n_channels, const gdouble * mean,
    guint n_mean, const gdouble * std, guint n_std)
{
  guint c;

  memset (norm, 0, sizeof (*norm));
  if (n_channels == 0 || n_channels > WSI_NORMALIZE_MAX_CHANNELS
      || (n_mean != 1 && n_mean != n_channels)
      || (n_std != 1 && n_std != n_channels))
    return FALSE;
  norm->pixel_bytes = pixel_bytes;
  norm->n_channels = n_channels;
  for (c = 0; c < n_channels; c++) {
    gdouble m = mean[n_mean == 1 ? 0 : c];
    gdouble s = std[n_std == 1 ? 0 : c];

    if (!isfinite (m) || !isfinite (s) || !(s > 0) || offset[c] >= pixel_bytes)
      return FALSE;
    norm->offset[c] = offset[c];
    norm->scale[c] = (gfloat) (1.0 / (255.0 * s));
    norm->bias[c] = (gfloat) (-m / s);
  }
  return TRUE;
}

/* One channel of one row; @pixel_bytes is a literal at every call site, so
 * each gets its own loop with a constant stride that GCC vectorises. */
static inline void
normalize_row (const guint8 * src, guint pixel_bytes, guint width,
    gfloat scale, gfloat bias, gfloat * dst)
{
  guint x;

  for (x = 0; x < width; x++)
    dst[x] = (gfloat) src[x * pixel_bytes] * scale + bias;
}

void
wsi_normalize_image (const WsiNormalize * norm, const guint8 * src,
    gsize src_stride, guint width, guint height, gfloat * dst)
{
  gsize plane = (gsize) width * height;
  guint y, c;

  for (c = 0; c < norm->n_channels; c++) {
    gfloat scale = norm->scale[c], bias = norm->bias[c];
    gfloat *out = dst + c * plane;

    for (y = 0; y < height; y++) {
      const guint8 *in = src + y * src_stride + norm->offset[c];

      switch (norm->pixel_bytes) {
        case 1:
          normalize_row (in, 1, width, scale, bias, out + y * width);
          break;
        case 3:
          normalize_row (in, 3, width, scale, bias, out + y * width);
          break;
        case 4:
          normalize_row (in, 4, width, scale, bias, out + y * width);
          break;
        default:
          normalize_row (in, norm->pixel_bytes, width, scale, bias,
              out + y * width);
          break;
      }
    }
  }
}
