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

/* The row loops get an AVX2 clone picked at load time where the compiler
 * and loader support it (GCC ifuncs): SSE2 cannot vectorise the RGB
 * de-interleave. Both clones do the same float operations in the same
 * order (the build passes -ffp-contract=off), so the floats do not depend
 * on the CPU. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
    && defined(__ELF__) && !defined(__SANITIZE_ADDRESS__)
#define WSI_VECTOR_CLONES __attribute__ ((target_clones ("avx2", "default")))
#else
#define WSI_VECTOR_CLONES
#endif

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

/* One channel of one row, any layout (the fallback). */
WSI_VECTOR_CLONES static void
normalize_channel (const guint8 * src, guint pixel_bytes, guint width,
    gfloat scale, gfloat bias, gfloat * dst)
{
  guint x;

  for (x = 0; x < width; x++)
    dst[x] = (gfloat) src[x * pixel_bytes] * scale + bias;
}

/* Three channels of one row in one pass, the layout a literal: GCC turns
 * the interleaved loads into shuffles and vectorises the loop. */
#define NORMALIZE_ROW3(name, PB, O0, O1, O2)                                \
WSI_VECTOR_CLONES static void                                               \
name (const guint8 * restrict src, guint width, const WsiNormalize * norm,  \
    gfloat * restrict d0, gfloat * restrict d1, gfloat * restrict d2)       \
{                                                                           \
  const gfloat s0 = norm->scale[0], s1 = norm->scale[1];                    \
  const gfloat s2 = norm->scale[2], b0 = norm->bias[0];                     \
  const gfloat b1 = norm->bias[1], b2 = norm->bias[2];                      \
  gsize x;                                                                  \
                                                                            \
  for (x = 0; x < width; x++) {                                             \
    d0[x] = (gfloat) src[x * PB + O0] * s0 + b0;                            \
    d1[x] = (gfloat) src[x * PB + O1] * s1 + b1;                            \
    d2[x] = (gfloat) src[x * PB + O2] * s2 + b2;                            \
  }                                                                         \
}

NORMALIZE_ROW3 (normalize_rgb, 3, 0, 1, 2);
NORMALIZE_ROW3 (normalize_rgbx, 4, 0, 1, 2);
NORMALIZE_ROW3 (normalize_bgrx, 4, 2, 1, 0);

typedef void (*NormalizeRow3) (const guint8 *, guint, const WsiNormalize *,
    gfloat *, gfloat *, gfloat *);

/* The specialised row function for @norm's layout, or NULL. */
static NormalizeRow3
row3_for (const WsiNormalize * norm)
{
  const guint *o = norm->offset;

  if (norm->n_channels != 3)
    return NULL;
  if (norm->pixel_bytes == 3 && o[0] == 0 && o[1] == 1 && o[2] == 2)
    return normalize_rgb;
  if (norm->pixel_bytes == 4 && o[0] == 0 && o[1] == 1 && o[2] == 2)
    return normalize_rgbx;
  if (norm->pixel_bytes == 4 && o[0] == 2 && o[1] == 1 && o[2] == 0)
    return normalize_bgrx;
  return NULL;
}

void
wsi_normalize_image (const WsiNormalize * norm, const guint8 * src,
    gsize src_stride, guint width, guint height, gfloat * dst)
{
  gsize plane = (gsize) width * height;
  NormalizeRow3 row3 = row3_for (norm);
  guint y, c;

  for (y = 0; y < height; y++) {
    const guint8 *in = src + y * src_stride;
    gfloat *out = dst + (gsize) y * width;

    if (row3 != NULL) {
      row3 (in, width, norm, out, out + plane, out + 2 * plane);
      continue;
    }
    for (c = 0; c < norm->n_channels; c++)
      normalize_channel (in + norm->offset[c], norm->pixel_bytes, width,
          norm->scale[c], norm->bias[c], out + c * plane);
  }
}
