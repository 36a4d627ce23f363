/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsijlsdecode.h: decodes a rectangle of one JPEG-LS frame (DICOM transfer
 * syntaxes 1.2.840.10008.1.2.4.80 lossless and .81 near-lossless) into
 * 8-bit RGB, for the DICOM backend, through CharLS (Debian libcharls-dev).
 *
 * Contract: CharLS decodes whole frames only, so the frame is decoded into
 * a buffer of its own and the rectangle copied out; no native scaling. One
 * component is grey (repeated, MONOCHROME1 inverted); three are RGB, in any
 * interleave mode (planar frames are interleaved here); samples of more
 * than 8 bits are scaled to 8 over their precision as round (v * 255 /
 * max), as for uncompressed frames. A damaged stream, a frame of another
 * size than @width x @height or another component count fails with
 * WSI_SLIDE_ERROR_READ and CharLS's reason.
 *
 * Cost: one whole-frame decode per call (a tile cache keeps whole frames
 * when a tile is asked for twice) and a frame-sized buffer allocated for
 * it. Threading: no shared state.
 */

#ifndef __WSI_JLS_DECODE_H__
#define __WSI_JLS_DECODE_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  const guint8 *data;           /* the JPEG-LS stream (SOI ... EOI) */
  gsize size;
  guint width, height;          /* the frame size the stream must have */
  guint components;             /* 1 or 3, as the data set says */
  gboolean invert;              /* MONOCHROME1 */
} WsiJlsFrame;

/* Decodes [x, x + w) x [y, y + h) of @frame into @rgb, 3 bytes a pixel,
 * @stride bytes a row. */
gboolean wsi_jls_decode (const WsiJlsFrame * frame, guint x, guint y,
    guint w, guint h, guint8 * rgb, gsize stride, GError ** error);

G_END_DECLS

#endif /* __WSI_JLS_DECODE_H__ */
