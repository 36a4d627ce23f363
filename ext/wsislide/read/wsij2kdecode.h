/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsij2kdecode.h: decodes a rectangle of one JPEG 2000 frame (a DICOM
 * frame: a raw codestream, or rarely a JP2 file) into 8-bit RGB, for the
 * DICOM backend, through OpenJPEG (>= 2.5, which also decodes the
 * high-throughput block coder of HTJ2K).
 *
 * Contract: the codestream is read from memory (an OpenJPEG stream over the
 * caller's bytes, no copy). Only the rectangle is decoded
 * (opj_set_decode_area: the code-blocks it touches; HTJ2K frames, whose
 * sub-area decode OpenJPEG 2.5.0 gets wrong, are decoded whole and
 * cropped), and with @scale 2, 4
 * or 8 at a reduced resolution (opj_set_decoded_resolution_factor: the
 * wavelet's low band, 1/scale of the frame, ceil(width / scale) wide, as
 * JPEG's DCT scaling gives). The inverse component transform of the
 * codestream (YBR_RCT / YBR_ICT) is OpenJPEG's; frames marked YBR_FULL
 * (three components without it) are converted with the JFIF equations; one
 * component is grey (repeated, MONOCHROME1 inverted). Samples of more than
 * 8 bits are scaled to 8 over their precision as round (v * 255 / max).
 * OpenJPEG runs in strict mode: a truncated or damaged codestream fails
 * (WSI_SLIDE_ERROR_READ with OpenJPEG's first error) instead of decoding
 * partly; so do a frame of another size than @width x @height, subsampled
 * or signed components, and a @scale beyond the codestream's resolutions.
 *
 * Cost: OpenJPEG's decode of the touched code-blocks (one codec and stream
 * object a call, a few hundred bytes) plus one pass converting the
 * components' 32-bit samples to RGB. Threading: no shared state; OpenJPEG
 * uses no threads of its own here.
 */

#ifndef __WSI_J2K_DECODE_H__
#define __WSI_J2K_DECODE_H__

#include <glib.h>

G_BEGIN_DECLS

/* The colour of the frame's samples, from the DICOM photometric. */
typedef enum
{
  WSI_J2K_COLOR_RGB,            /* RGB, YBR_RCT, YBR_ICT: RGB after decode */
  WSI_J2K_COLOR_YBR_FULL,       /* YCbCr without the codestream's MCT */
  WSI_J2K_COLOR_GREY,           /* MONOCHROME2 */
  WSI_J2K_COLOR_GREY_INVERTED,  /* MONOCHROME1 */
} WsiJ2kColor;

typedef struct
{
  const guint8 *data;           /* codestream (FF4F FF51 ...) or JP2 file */
  gsize size;
  guint width, height;          /* the frame size the stream must have */
  WsiJ2kColor color;
} WsiJ2kFrame;

/* The number of wavelet decomposition levels in the main header's COD
 * marker of @data (the first bytes of a frame are enough), or -1 when it
 * cannot be found. A frame decodes at 1/2^k for k up to that number. */
gint wsi_j2k_decomposition_levels (const guint8 * data, gsize size);

/* Decodes [x, x + w) x [y, y + h) of @frame scaled by 1/@scale (1, 2, 4 or
 * 8) into @rgb, 3 bytes a pixel, @stride bytes a row. On failure sets
 * WSI_SLIDE_ERROR_READ with the reason (the caller prefixes file and
 * frame). */
gboolean wsi_j2k_decode (const WsiJ2kFrame * frame, guint scale, guint x,
    guint y, guint w, guint h, guint8 * rgb, gsize stride, GError ** error);

G_END_DECLS

#endif /* __WSI_J2K_DECODE_H__ */
