/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsitiffcodec.c: lossless TIFF tile codecs from memory (see
 * wsitiffcodec.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsitiffcodec.h"
#include "wsislide.h"

#include <string.h>
#include <zlib.h>
#ifdef WSI_HAVE_ZSTD
#include <zstd.h>
#endif

static gboolean
codec_fail (GError ** error, const gchar * format, ...)
G_GNUC_PRINTF (2, 3);

static gboolean
codec_fail (GError ** error, const gchar * format, ...)
{
  va_list args;
  gchar *reason;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ, reason);
  g_free (reason);
  return FALSE;
}

gboolean
wsi_tiff_codec_supported (guint compression)
{
  switch (compression) {
    case WSI_TIFF_COMPRESSION_NONE:
    case WSI_TIFF_COMPRESSION_LZW:
    case WSI_TIFF_COMPRESSION_DEFLATE:
    case WSI_TIFF_COMPRESSION_DEFLATE_OLD:
    case WSI_TIFF_COMPRESSION_PACKBITS:
      return TRUE;
    case WSI_TIFF_COMPRESSION_ZSTD:
#ifdef WSI_HAVE_ZSTD
      return TRUE;
#else
      return FALSE;
#endif
    default:
      return FALSE;
  }
}

const gchar *
wsi_tiff_codec_name (guint compression)
{
  switch (compression) {
    case WSI_TIFF_COMPRESSION_NONE:
      return "uncompressed";
    case WSI_TIFF_COMPRESSION_LZW:
      return "LZW";
    case WSI_TIFF_COMPRESSION_JPEG:
      return "JPEG";
    case WSI_TIFF_COMPRESSION_DEFLATE:
    case WSI_TIFF_COMPRESSION_DEFLATE_OLD:
      return "deflate";
    case WSI_TIFF_COMPRESSION_PACKBITS:
      return "PackBits";
    case WSI_TIFF_COMPRESSION_ZSTD:
      return "zstd";
    default:
      return NULL;
  }
}

/* ---- LZW (TIFF 6.0 section 13, with libtiff's early code-width change) - */

#define LZW_CLEAR 256
#define LZW_EOI 257
#define LZW_FIRST 258
#define LZW_MAX_CODES 4096

typedef struct
{
  guint16 prefix[LZW_MAX_CODES];
  guint16 length[LZW_MAX_CODES];
  guint8 suffix[LZW_MAX_CODES];
  guint8 first[LZW_MAX_CODES];
} LzwTable;

/* Writes the string of @code at dst + *out (backwards from its end). */
static gboolean
lzw_emit (const LzwTable * t, guint code, guint8 * dst, gsize dst_size,
    gsize * out, GError ** error)
{
  guint len = t->length[code];
  gsize at;

  if (len > dst_size - *out)
    return codec_fail (error, "LZW data decodes past the tile's %"
        G_GSIZE_FORMAT " bytes", dst_size);
  at = *out + len;
  while (code >= LZW_FIRST) {
    dst[--at] = t->suffix[code];
    code = t->prefix[code];
  }
  dst[--at] = (guint8) code;
  *out += len;
  return TRUE;
}

static gboolean
lzw_decode (const guint8 * src, gsize size, guint8 * dst, gsize dst_size,
    GError ** error)
{
  LzwTable *t = g_new (LzwTable, 1);
  guint64 bitpos = 0, bits_total = (guint64) size * 8;
  guint width = 9, next = LZW_FIRST;
  gint old = -1;
  gsize out = 0;
  gboolean ok = TRUE;
  guint i;

  for (i = 0; i < 256; i++) {
    t->length[i] = 1;
    t->first[i] = (guint8) i;
  }
  if (size >= 2 && src[0] == 0 && (src[1] & 1)) {
    g_free (t);
    return codec_fail (error, "old-style (pre-TIFF 6.0) LZW is not read");
  }
  while (ok && out < dst_size) {
    guint code = 0, b;

    if (bitpos + width > bits_total)
      break;                    /* no EOI: the data ends (libtiff accepts it) */
    for (b = 0; b < width; b++, bitpos++)
      code = (code << 1) | ((src[bitpos >> 3] >> (7 - (bitpos & 7))) & 1);
    if (code == LZW_EOI)
      break;
    if (code == LZW_CLEAR) {
      width = 9;
      next = LZW_FIRST;
      old = -1;
      continue;
    }
    if (old < 0) {
      if (code >= 256) {
        ok = codec_fail (error, "LZW code %u before any string", code);
        break;
      }
      ok = lzw_emit (t, code, dst, dst_size, &out, error);
      old = code;
      continue;
    }
    if (code > next || (code == next && next >= LZW_MAX_CODES)) {
      ok = codec_fail (error, "LZW code %u is not in the table (%u codes)",
          code, next);
      break;
    }
    if (next < LZW_MAX_CODES) {
      /* The new entry: old's string plus the first byte of code's string
       * (of old's own when code is the entry being made). */
      t->prefix[next] = (guint16) old;
      t->first[next] = t->first[old];
      t->suffix[next] = code == next ? t->first[old] : t->first[code];
      t->length[next] = t->length[old] + 1;
      next++;
    }
    ok = lzw_emit (t, code, dst, dst_size, &out, error);
    old = code;
    if (next + 1 >= (1u << width) && width < 12)
      width++;
  }
  g_free (t);
  if (ok && out != dst_size)
    ok = codec_fail (error, "LZW data decodes to %" G_GSIZE_FORMAT " of the "
        "tile's %" G_GSIZE_FORMAT " bytes", out, dst_size);
  return ok;
}

/* ---- PackBits ----------------------------------------------------------- */

static gboolean
packbits_decode (const guint8 * src, gsize size, guint8 * dst, gsize dst_size,
    GError ** error)
{
  gsize in = 0, out = 0;

  while (in < size && out < dst_size) {
    gint8 n = (gint8) src[in++];
    if (n >= 0) {
      gsize count = (gsize) n + 1;
      if (count > size - in || count > dst_size - out)
        return codec_fail (error, "PackBits literal run past the data");
      memcpy (dst + out, src + in, count);
      in += count;
      out += count;
    } else if (n != -128) {
      gsize count = (gsize) (1 - n);
      if (in >= size || count > dst_size - out)
        return codec_fail (error, "PackBits repeat run past the data");
      memset (dst + out, src[in++], count);
      out += count;
    }
  }
  if (out != dst_size)
    return codec_fail (error, "PackBits data decodes to %" G_GSIZE_FORMAT
        " of the tile's %" G_GSIZE_FORMAT " bytes", out, dst_size);
  return TRUE;
}

/* ---- zlib, zstd --------------------------------------------------------- */

gboolean
wsi_codec_inflate (const guint8 * src, gsize size, guint8 * dst,
    gsize dst_size, gboolean gzip, GError ** error)
{
  z_stream z;
  int ret;
  gsize produced;

  memset (&z, 0, sizeof (z));
  if (inflateInit2 (&z, gzip ? 15 + 32 : 15) != Z_OK)
    return codec_fail (error, "zlib cannot start");
  z.next_in = (Bytef *) src;
  z.avail_in = (uInt) MIN (size, (gsize) G_MAXUINT32);
  z.next_out = dst;
  z.avail_out = (uInt) MIN (dst_size, (gsize) G_MAXUINT32);
  ret = inflate (&z, Z_FINISH);
  produced = dst_size - z.avail_out;
  inflateEnd (&z);
  if (ret != Z_STREAM_END) {
    if (ret == Z_BUF_ERROR && produced == dst_size)
      return codec_fail (error, "deflate data decodes past the %"
          G_GSIZE_FORMAT " bytes expected", dst_size);
    return codec_fail (error, "deflate data is damaged (%s)",
        z.msg != NULL ? z.msg : ret == Z_BUF_ERROR ? "cut short" : "zlib");
  }
  if (produced != dst_size)
    return codec_fail (error, "deflate data decodes to %" G_GSIZE_FORMAT
        " of %" G_GSIZE_FORMAT " bytes", produced, dst_size);
  return TRUE;
}

gboolean
wsi_codec_zstd (const guint8 * src, gsize size, guint8 * dst, gsize dst_size,
    GError ** error)
{
#ifdef WSI_HAVE_ZSTD
  size_t got = ZSTD_decompress (dst, dst_size, src, size);

  if (ZSTD_isError (got))
    return codec_fail (error, "zstd data is damaged (%s)",
        ZSTD_getErrorName (got));
  if (got != dst_size)
    return codec_fail (error, "zstd data decodes to %" G_GSIZE_FORMAT " of %"
        G_GSIZE_FORMAT " bytes", (gsize) got, dst_size);
  return TRUE;
#else
  return codec_fail (error, "zstd: this build has no libzstd");
#endif
}

/* ---- the tile ----------------------------------------------------------- */

gboolean
wsi_tiff_codec_decode (guint compression, guint predictor,
    const guint8 * src, gsize size, guint8 * dst, gsize dst_size,
    gsize row_bytes, guint samples, GError ** error)
{
  gboolean ok;

  switch (compression) {
    case WSI_TIFF_COMPRESSION_NONE:
      /* Writers may pad an uncompressed tile; fewer bytes are damage. */
      if (size < dst_size)
        return codec_fail (error, "%" G_GSIZE_FORMAT " bytes for an "
            "uncompressed tile of %" G_GSIZE_FORMAT, size, dst_size);
      memcpy (dst, src, dst_size);
      ok = TRUE;
      break;
    case WSI_TIFF_COMPRESSION_LZW:
      ok = lzw_decode (src, size, dst, dst_size, error);
      break;
    case WSI_TIFF_COMPRESSION_DEFLATE:
    case WSI_TIFF_COMPRESSION_DEFLATE_OLD:
      ok = wsi_codec_inflate (src, size, dst, dst_size, FALSE, error);
      break;
    case WSI_TIFF_COMPRESSION_PACKBITS:
      ok = packbits_decode (src, size, dst, dst_size, error);
      break;
    case WSI_TIFF_COMPRESSION_ZSTD:
      ok = wsi_codec_zstd (src, size, dst, dst_size, error);
      break;
    default:
      return codec_fail (error, "compression %u is not decoded here",
          compression);
  }
  if (ok && predictor == 2 && row_bytes > samples) {
    gsize r, i;
    for (r = 0; r + row_bytes <= dst_size; r += row_bytes) {
      guint8 *row = dst + r;
      for (i = samples; i < row_bytes; i++)
        row[i] = (guint8) (row[i] + row[i - samples]);
    }
  }
  return ok;
}
