/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsijpegdecode.h: decodes a rectangle of one TIFF JPEG tile into
 * premultiplied ARGB words (0xAARRGGBB in host order, alpha 255), for the
 * direct TIFF backend.
 *
 * Contract: the pixels are those OpenSlide 3.4.1 decodes for the same tile
 * (openslide-decode-tiff.c): JPEGTables loaded first with
 * jpeg_read_header(FALSE), the colour space forced from the TIFF photometric
 * (RGB tiles carry component ids that libjpeg would take for YCbCr),
 * libjpeg's defaults otherwise (JDCT_ISLOW, fancy upsampling), output
 * straight in JCS_EXT_BGRA (little-endian) or JCS_EXT_ARGB (big-endian).
 * Every libjpeg warning (corrupt data, premature end) is an error, as in
 * OpenSlide, so a damaged tile fails instead of coming out grey.
 *
 * Only the rectangle is decoded: jpeg_skip_scanlines() for the rows above
 * it, the decode stops after its last row, and jpeg_crop_scanline() keeps
 * its columns, widened by one iMCU on each side when chroma is upsampled
 * horizontally (fancy upsampling of a crop edge would otherwise treat it as
 * the image edge and differ from a whole-tile decode). Cropping is used only
 * where libjpeg-turbo 2.1.5 crops exactly: at full scale and at 1/2 with
 * 4:4:4, 4:2:2, 4:2:0 or 4:1:1 sampling (see crop_is_exact(); at 1/2 a
 * 4:2:0 tile's chroma is scaled up in the IDCT, so no margin is needed
 * there); elsewhere whole rows are decoded. With @scale 2, 4 or 8
 * libjpeg's DCT scaling decodes the tile at 1/scale of its size.
 *
 * Cost: about (rectangle rows + one iMCU row) x (rectangle width rounded
 * out to iMCUs, or the tile width) of IDCT work; no allocation once the row
 * buffer has grown to the widest row. Threading: a decoder is one thread's
 * state.
 */

#ifndef __WSI_JPEG_DECODE_H__
#define __WSI_JPEG_DECODE_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct _WsiJpegDecoder WsiJpegDecoder;

/* One tile's compressed data. */
typedef struct
{
  const guint8 *tables;         /* abbreviated JPEGTables stream, or NULL */
  gsize tables_size;
  const guint8 *data;           /* the tile's JPEG stream */
  gsize size;
  gboolean rgb;                 /* photometric RGB: no YCbCr transform */
  guint width, height;          /* the tile size the stream must have */
} WsiJpegTile;

/* NULL when out of memory. */
WsiJpegDecoder *wsi_jpeg_decoder_new (void);
void wsi_jpeg_decoder_free (WsiJpegDecoder * decoder);

/* The same as a backend's thread_state_new/free (wsislide.h): the JPEG
 * backends' per-thread state is this decoder. */
gpointer wsi_jpeg_decoder_state_new (void);
void wsi_jpeg_decoder_state_free (gpointer state);

/* Decodes [x, x + w) x [y, y + h) of the tile scaled by 1/@scale (1, 2, 4
 * or 8; the scaled tile is ceil(width / scale) x ceil(height / scale))
 * into @dst, @dst_stride words per row. On failure sets
 * WSI_SLIDE_ERROR_READ with libjpeg's reason (the caller prefixes the file
 * and tile); @dst may then be partly written. */
/* The pixel layout written: premultiplied ARGB host-order words (the
 * shared kernels' input), or one of WsiPixelFormat's patch formats
 * straight from libjpeg-turbo's colour converter (JCS_EXT_RGB, _RGBA,
 * _RGBX, _BGRX; padding and alpha 0xFF). */
#define WSI_JPEG_OUT_ARGB (-1)

/* Decodes [x, x + w) x [y, y + h) of @tile at 1/@scale into @dst, @stride
 * bytes a row, in @layout (WSI_JPEG_OUT_ARGB or a WsiPixelFormat). */
gboolean wsi_jpeg_decoder_decode (WsiJpegDecoder * decoder,
    const WsiJpegTile * tile, guint scale, guint x, guint y, guint w, guint h,
    guint8 * dst, gsize stride, gint layout, GError ** error);

G_END_DECLS

#endif /* __WSI_JPEG_DECODE_H__ */
