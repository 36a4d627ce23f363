/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiwindowresize.h: resamples a fractional window of a packed 8-bit image
 * (1..4 interleaved channels, e.g. a decoded RGB patch) to an output size,
 * up or down: patchviews' random-resized crops.
 *
 * Contract: the window [x0, x0 + win_w) x [y0, y0 + win_h) in source
 * pixels (fractional, inside the image) maps onto dst_w x dst_h output
 * pixels. Bilinear: each output pixel samples the source at its centre
 * (half-pixel centres, edges replicated), as torch's interpolate with
 * align_corners=False and no antialiasing. Area: each output pixel is the
 * average of the source area under it, edge pixels weighted by the part
 * inside (a box filter, like OpenCV's INTER_AREA when shrinking); use it
 * when the window is much larger than the output. Every channel is
 * filtered alike (alpha stays 255).
 *
 * Not wsiresample.h: that one reads premultiplied ARGB from the slide
 * backends and only shrinks; crops read packed patches and enlarge too.
 *
 * Bilinear runs in fixed point (weights rounded to 1/256 horizontally,
 * 1/32768 vertically): within one level of the exact filter, >= 40 dB
 * (tests/check/libs/wsiwindowresize.c); area, and bilinear from a source
 * 1 pixel wide or high, in floats.
 *
 * Cost: separable, one horizontal pass over the window rows the output
 * reads and one vertical pass (bilinear: 16-bit lanes, SSE2 where the
 * compiler targets it); no allocation once the resizer has seen the
 * sizes. Results are bit-identical for identical inputs on any thread.
 * Threading: a WsiWindowResizer is one thread's scratch.
 */

#ifndef __WSI_WINDOW_RESIZE_H__
#define __WSI_WINDOW_RESIZE_H__

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  WSI_RESIZE_BILINEAR,
  WSI_RESIZE_AREA,
} WsiResizeMethod;

typedef struct _WsiWindowResizer WsiWindowResizer;

WsiWindowResizer *wsi_window_resizer_new (void);
void wsi_window_resizer_free (WsiWindowResizer * resizer);

/* See the top of this file. Returns FALSE when scratch memory ran out or
 * the arguments are out of range (empty window, 0 or > 4 channels). */
gboolean wsi_window_resize (WsiWindowResizer * resizer,
    WsiResizeMethod method, const guint8 * src, guint src_w, guint src_h,
    gsize src_stride, guint channels, gdouble x0, gdouble y0, gdouble win_w,
    gdouble win_h, guint8 * dst, guint dst_w, guint dst_h, gsize dst_stride);

G_END_DECLS

#endif /* __WSI_WINDOW_RESIZE_H__ */
