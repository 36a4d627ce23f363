/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitiffcodec.h: the lossless codecs of TIFF tiles (and of the general
 * purpose compressors OME-Zarr chunks share with them), decoded from bytes
 * in memory without libtiff.
 *
 * Contract: wsi_tiff_codec_decode() turns one tile's compressed bytes into
 * exactly @dst_size bytes of samples (the tile's full, padded size) or fails
 * with WSI_SLIDE_ERROR_READ and a short reason (the caller prefixes file,
 * level and tile): output shorter or longer than the tile, a damaged
 * stream. Codecs: none (1), LZW (5, the TIFF 6.0 "new style" with early
 * change), Adobe deflate (8) and old deflate (32946) through zlib, PackBits
 * (32773), zstd (50000) when built with libzstd. Predictor 2 (horizontal
 * differencing of 8-bit samples) is undone after the decode. Reads never
 * touch libtiff, so a slide's handle needs no lock: each thread decodes
 * into its own memory.
 *
 * wsi_codec_inflate() and wsi_codec_zstd() are the zlib/gzip and zstd
 * decoders on their own (whole output size known), for Zarr chunks.
 *
 * Cost: one pass over the compressed bytes and one over the output (the
 * predictor); no allocation except zlib's and zstd's own state.
 * Threading: no shared state.
 */

#ifndef __WSI_TIFF_CODEC_H__
#define __WSI_TIFF_CODEC_H__

#include <glib.h>

G_BEGIN_DECLS

#define WSI_TIFF_COMPRESSION_NONE 1
#define WSI_TIFF_COMPRESSION_LZW 5
#define WSI_TIFF_COMPRESSION_JPEG 7
#define WSI_TIFF_COMPRESSION_DEFLATE 8
#define WSI_TIFF_COMPRESSION_PACKBITS 32773
#define WSI_TIFF_COMPRESSION_DEFLATE_OLD 32946
#define WSI_TIFF_COMPRESSION_ZSTD 50000

/* TRUE when this build decodes @compression (other than JPEG, which
 * wsijpegdecode.h does) itself. */
gboolean wsi_tiff_codec_supported (guint compression);

/* Its name in messages ("LZW", "zstd", ...; "compression N" if unknown,
 * in a static buffer only for known ones: unknown ones return NULL). */
const gchar *wsi_tiff_codec_name (guint compression);

/* Decodes @src into @dst (@dst_size bytes: rows of @row_bytes bytes, each
 * @samples 8-bit samples a pixel), then undoes @predictor (1: none, 2:
 * horizontal). */
gboolean wsi_tiff_codec_decode (guint compression, guint predictor,
    const guint8 * src, gsize size, guint8 * dst, gsize dst_size,
    gsize row_bytes, guint samples, GError ** error);

/* zlib (@gzip FALSE) or gzip/zlib auto-detected (@gzip TRUE) stream into
 * exactly @dst_size bytes. */
gboolean wsi_codec_inflate (const guint8 * src, gsize size, guint8 * dst,
    gsize dst_size, gboolean gzip, GError ** error);

/* One zstd frame into exactly @dst_size bytes (FALSE with a reason when
 * built without libzstd). */
gboolean wsi_codec_zstd (const guint8 * src, gsize size, guint8 * dst,
    gsize dst_size, GError ** error);

G_END_DECLS

#endif /* __WSI_TIFF_CODEC_H__ */
