/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsioverview.h: the overview wsislidesrc sends for each slide visit — the
 * whole slide shrunk to ow x oh, area-averaged, as tight RGB on white.
 *
 * Contract: wsi_overview_read() fills @out (ow * oh * 3 bytes) from the
 * coarsest level still at least ow x oh (wsi_overview_level()), decoded at
 * the largest native (JPEG DCT) scale 1/2, 1/4 or 1/8 that keeps it at least
 * ow x oh where the backend has one (wsi_slide_native_scale()), each output
 * pixel the area average of the source pixels it covers; alpha is composited
 * on white. The result is a pure function of the slide and (ow, oh). It
 * returns FALSE with @error set when a read fails, and FALSE with @error
 * unset when *@cancel became non-zero (wsislidesrc's flushing flag), leaving
 * @out partly written.
 *
 * Cost: the level is decoded in strips of about 256 rows (whole tile rows
 * where the level is copied) by blocks of at most 4096 columns, so memory
 * stays at a few MB whatever the slide size; time is
 * one decode of that level at that scale (a 2048x1536 level for a 1024x768
 * overview: a quarter of the pixels at 1/2). When the level at that scale
 * is exactly ow x oh the decoded pixels are copied, not averaged (the same
 * bytes, about half the CPU of a new slide's overview), and where the
 * backend decodes RGB itself (wsi_slide_has_rgb_scaled(): the TIFF and
 * DICOM JPEG backends) they are decoded straight into @out, without the
 * ARGB block and its conversion (averaged overviews read such backends'
 * blocks as RGB too).
 *
 * Threading: a call keeps its own read context and buffers; calls on
 * different slides may run at once. Each thread keeps its decode block
 * (at most 4 MiB, usually 1 MiB) from one call to the next, so that a new
 * slide does not fault it in again. @cancel is read atomically, so another
 * thread may set it at any time.
 */

#ifndef __WSI_OVERVIEW_H__
#define __WSI_OVERVIEW_H__

#include <glib.h>

#include "wsislide.h"

G_BEGIN_DECLS

gint wsi_overview_level (const WsiSlide * slide, gint ow, gint oh);

gboolean wsi_overview_read (WsiSlide * slide, gint ow, gint oh,
    const gint * cancel, guint8 * out, GError ** error);

/* @n premultiplied ARGB pixels composited on white into @rgb (3 * @n
 * bytes, nothing written beyond): the bytes of wsi_argb_to_rgb_on_white(),
 * four pixels per SSSE3 step where the CPU has it. */
void wsi_overview_argb_to_rgb (const guint32 * argb, guint8 * rgb, gsize n);

G_END_DECLS

#endif /* __WSI_OVERVIEW_H__ */
