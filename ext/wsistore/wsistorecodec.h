/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistorecodec.h: how a patch store turns pixels into payload bytes and
 * back: raw (exact), yuv420 (planar I420, half the bytes of RGB, no entropy
 * decode) and jpeg (libjpeg-turbo, baseline, 4:4:4 or 4:2:0).
 *
 * Contract: pixels are 8-bit packed rows in one of the store's video
 * formats (RGB, RGBA, RGBx, BGRx: 3 or 4 bytes a pixel; GRAY8: 1).
 * wsi_store_encode() appends the payload of one patch to @out;
 * wsi_store_decode() writes the patch into @dest (rows @stride bytes
 * apart) and fails, with an error saying why, on a payload that does not
 * decode to @width x @height: never a partial or out-of-bounds write.
 * yuv420 and jpeg do not keep the fourth byte of RGBA, RGBx or BGRx: it
 * decodes as 255.
 * yuv420 uses the BT.601 full-range matrix (JFIF's), chroma averaged over
 * 2x2 pixels; GRAY8 stores its one plane.
 *
 * Cost: raw is a copy; yuv420 a few integer operations a pixel; jpeg
 * decode is libjpeg-turbo's (SIMD), about 1 ms for 256x256 RGB on one
 * core. A codec holds one libjpeg compressor and decompressor, made once
 * and reused. Threading: one codec per thread (the store source keeps one
 * per worker).
 */

#ifndef __WSI_STORE_CODEC_H__
#define __WSI_STORE_CODEC_H__

#include "wsistoreformat.h"

G_BEGIN_DECLS

typedef struct _WsiStoreCodec WsiStoreCodec;

/* How pixels are laid out, from the video format name. */
typedef struct
{
  guint channels;               /* bytes per pixel: 1, 3 or 4 */
  gint r, g, b;                 /* byte of each colour in a pixel (-1: gray) */
  gint fill;                    /* byte set to 255 on decode, -1 = none */
  gboolean alpha;               /* the fourth byte is alpha (RGBA) */
} WsiStorePixels;

gboolean wsi_store_pixels_from_format (const gchar * video_format,
    WsiStorePixels * pixels);

WsiStoreCodec *wsi_store_codec_new (void);
void wsi_store_codec_free (WsiStoreCodec * codec);

gboolean wsi_store_encode (WsiStoreCodec * codec, WsiStoreEncoding encoding,
    guint quality, gboolean subsample_420, const WsiStorePixels * pixels,
    const guint8 * data, gsize stride, guint width, guint height,
    GByteArray * out, GError ** error);

gboolean wsi_store_decode (WsiStoreCodec * codec, WsiStoreEncoding encoding,
    const WsiStorePixels * pixels, const guint8 * payload, gsize size,
    guint width, guint height, guint8 * dest, gsize stride,
    GError ** error);

/* A PNG of the patch (webdataset export): RGB, RGBA with its alpha, or
 * gray; RGBx and BGRx become RGB. zlib level 3, no row filter. */
gboolean wsi_store_encode_png (const WsiStorePixels * pixels,
    const guint8 * data, gsize stride, guint width, guint height,
    GByteArray * out, GError ** error);

G_END_DECLS

#endif /* __WSI_STORE_CODEC_H__ */
