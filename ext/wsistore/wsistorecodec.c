/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsistorecodec.h"

#include <gio/gio.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <zlib.h>

/* libjpeg reports errors through a longjmp back to the call. */
typedef struct
{
  struct jpeg_error_mgr mgr;
  jmp_buf jump;
  gchar message[JMSG_LENGTH_MAX];
} JpegError;

struct _WsiStoreCodec
{
  struct jpeg_compress_struct compress;
  struct jpeg_decompress_struct decompress;
  JpegError compress_error;
  JpegError decompress_error;
  guint8 **rows;
  guint n_rows;
};

gboolean
wsi_store_pixels_from_format (const gchar * format, WsiStorePixels * px)
{
  static const struct
  {
    const gchar *name;
    WsiStorePixels pixels;
  } formats[] = {
    {"RGB", {3, 0, 1, 2, -1, FALSE}},
    {"RGBA", {4, 0, 1, 2, 3, TRUE}},
    {"RGBx", {4, 0, 1, 2, 3, FALSE}},
    {"BGRx", {4, 2, 1, 0, 3, FALSE}},
    {"GRAY8", {1, -1, -1, -1, -1, FALSE}},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (formats); i++)
    if (g_strcmp0 (format, formats[i].name) == 0) {
      *px = formats[i].pixels;
      return TRUE;
    }
  return FALSE;
}

static void
jpeg_error_exit (j_common_ptr cinfo)
{
  JpegError *error = (JpegError *) cinfo->err;

  cinfo->err->format_message (cinfo, error->message);
  longjmp (error->jump, 1);
}

static void
jpeg_no_output (j_common_ptr cinfo)
{
}

static void
init_error (JpegError * error)
{
  jpeg_std_error (&error->mgr);
  error->mgr.error_exit = jpeg_error_exit;
  error->mgr.output_message = jpeg_no_output;
}

WsiStoreCodec *
wsi_store_codec_new (void)
{
  WsiStoreCodec *codec = g_new0 (WsiStoreCodec, 1);

  init_error (&codec->compress_error);
  codec->compress.err = &codec->compress_error.mgr;
  jpeg_create_compress (&codec->compress);
  init_error (&codec->decompress_error);
  codec->decompress.err = &codec->decompress_error.mgr;
  jpeg_create_decompress (&codec->decompress);
  return codec;
}

void
wsi_store_codec_free (WsiStoreCodec * codec)
{
  if (codec == NULL)
    return;
  jpeg_destroy_compress (&codec->compress);
  jpeg_destroy_decompress (&codec->decompress);
  g_free (codec->rows);
  g_free (codec);
}

static J_COLOR_SPACE
jpeg_space (const WsiStorePixels * px)
{
  if (px->channels == 1)
    return JCS_GRAYSCALE;
  if (px->channels == 3)
    return JCS_RGB;
  return px->r == 0 ? JCS_EXT_RGBX : JCS_EXT_BGRX;
}

/* Row pointers for @height rows of @data, @stride apart (reused). */
static guint8 **
row_pointers (WsiStoreCodec * codec, const guint8 * data, gsize stride,
    guint height)
{
  guint y;

  if (codec->n_rows < height) {
    codec->rows = g_renew (guint8 *, codec->rows, height);
    codec->n_rows = height;
  }
  for (y = 0; y < height; y++)
    codec->rows[y] = (guint8 *) data + y * stride;
  return codec->rows;
}

static gboolean
encode_jpeg (WsiStoreCodec * codec, guint quality, gboolean subsample_420,
    const WsiStorePixels * px, const guint8 * data, gsize stride,
    guint width, guint height, GByteArray * out, GError ** error)
{
  struct jpeg_compress_struct *c = &codec->compress;
  unsigned char *buffer = NULL;
  unsigned long size = 0;
  guint8 **rows = row_pointers (codec, data, stride, height);

  if (setjmp (codec->compress_error.jump)) {
    jpeg_abort_compress (c);
    free (buffer);
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
        "JPEG encoding failed: %s", codec->compress_error.message);
    return FALSE;
  }
  jpeg_mem_dest (c, &buffer, &size);
  c->image_width = width;
  c->image_height = height;
  c->input_components = px->channels;
  c->in_color_space = jpeg_space (px);
  jpeg_set_defaults (c);
  jpeg_set_quality (c, quality, TRUE);
  if (px->channels > 1) {
    /* component 0 is Y: 2x2 for 4:2:0, 1x1 for 4:4:4; chroma 1x1 */
    c->comp_info[0].h_samp_factor = c->comp_info[0].v_samp_factor =
        subsample_420 ? 2 : 1;
    c->comp_info[1].h_samp_factor = c->comp_info[1].v_samp_factor = 1;
    c->comp_info[2].h_samp_factor = c->comp_info[2].v_samp_factor = 1;
  }
  c->dct_method = JDCT_ISLOW;
  jpeg_start_compress (c, TRUE);
  while (c->next_scanline < height)
    jpeg_write_scanlines (c, rows + c->next_scanline,
        height - c->next_scanline);
  jpeg_finish_compress (c);
  g_byte_array_append (out, buffer, size);
  free (buffer);
  return TRUE;
}

static gboolean
decode_jpeg (WsiStoreCodec * codec, const WsiStorePixels * px,
    const guint8 * payload, gsize size, guint width, guint height,
    guint8 * dest, gsize stride, GError ** error)
{
  struct jpeg_decompress_struct *d = &codec->decompress;
  guint8 **rows = row_pointers (codec, dest, stride, height);

  if (setjmp (codec->decompress_error.jump)) {
    jpeg_abort_decompress (d);
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
        "JPEG decoding failed: %s", codec->decompress_error.message);
    return FALSE;
  }
  jpeg_mem_src (d, payload, size);
  jpeg_read_header (d, TRUE);
  if (d->image_width != width || d->image_height != height
      || d->num_components != (px->channels == 1 ? 1 : 3)) {
    jpeg_abort_decompress (d);
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
        "the JPEG is %ux%u with %d components, the entry says %ux%u",
        d->image_width, d->image_height, d->num_components, width, height);
    return FALSE;
  }
  d->out_color_space = jpeg_space (px);
  d->dct_method = JDCT_ISLOW;
  jpeg_start_decompress (d);
  while (d->output_scanline < height)
    jpeg_read_scanlines (d, rows + d->output_scanline,
        height - d->output_scanline);
  jpeg_finish_decompress (d);
  return TRUE;
}

/* ---- yuv420: planar Y, U (Cb), V (Cr); BT.601 full range ------------------ */

static inline guint8
clamp_u8 (gint v)
{
  return v < 0 ? 0 : v > 255 ? 255 : (guint8) v;
}

static gsize
yuv420_size (guint width, guint height, guint channels)
{
  gsize luma = (gsize) width * height;

  if (channels == 1)
    return luma;
  return luma + 2 * (gsize) ((width + 1) / 2) * ((height + 1) / 2);
}

/* Fixed point, 16 fractional bits: JFIF's coefficients. */
static void
encode_yuv420 (const WsiStorePixels * px, const guint8 * data, gsize stride,
    guint width, guint height, guint8 * out)
{
  guint cw = (width + 1) / 2, ch = (height + 1) / 2, x, y;
  guint8 *u = out + (gsize) width * height, *v = u + (gsize) cw * ch;

  for (y = 0; y < height; y++) {
    const guint8 *row = data + y * stride;

    for (x = 0; x < width; x++) {
      const guint8 *p = row + x * px->channels;

      out[(gsize) y * width + x] = px->channels == 1 ? p[0] :
          (guint8) ((19595 * p[px->r] + 38470 * p[px->g] + 7471 * p[px->b]
              + 32768) >> 16);
    }
  }
  if (px->channels == 1)
    return;
  for (y = 0; y < ch; y++)
    for (x = 0; x < cw; x++) {
      gint r = 0, g = 0, b = 0, n = 0;
      guint dy, dx;

      for (dy = 0; dy < 2 && 2 * y + dy < height; dy++)
        for (dx = 0; dx < 2 && 2 * x + dx < width; dx++) {
          const guint8 *p = data + (2 * y + dy) * stride +
              (2 * x + dx) * px->channels;

          r += p[px->r];
          g += p[px->g];
          b += p[px->b];
          n++;
        }
      u[y * cw + x] = clamp_u8 (128 + (-11059 * r - 21709 * g + 32768 * b
              + 32768 * n) / (65536 * n));
      v[y * cw + x] = clamp_u8 (128 + (32768 * r - 27439 * g - 5329 * b
              + 32768 * n) / (65536 * n));
    }
}

static void
decode_yuv420 (const WsiStorePixels * px, const guint8 * in, guint width,
    guint height, guint8 * dest, gsize stride)
{
  guint cw = (width + 1) / 2, ch = (height + 1) / 2, x, y;
  const guint8 *u = in + (gsize) width * height, *v = u + (gsize) cw * ch;

  for (y = 0; y < height; y++) {
    const guint8 *luma = in + (gsize) y * width;
    const guint8 *urow = u + (y / 2) * cw, *vrow = v + (y / 2) * cw;
    guint8 *row = dest + y * stride;

    if (px->channels == 1) {
      memcpy (row, luma, width);
      continue;
    }
    for (x = 0; x < width; x++) {
      gint l = luma[x] << 16, cb = urow[x / 2] - 128, cr = vrow[x / 2] - 128;
      guint8 *p = row + x * px->channels;

      p[px->r] = clamp_u8 ((l + 91881 * cr + 32768) >> 16);
      p[px->g] = clamp_u8 ((l - 22554 * cb - 46802 * cr + 32768) >> 16);
      p[px->b] = clamp_u8 ((l + 116130 * cb + 32768) >> 16);
      if (px->fill >= 0)
        p[px->fill] = 255;
    }
  }
  (void) ch;
}

/* ---- raw ------------------------------------------------------------------ */

static void
copy_rows (const guint8 * src, gsize src_stride, guint8 * dest,
    gsize dest_stride, gsize row, guint height)
{
  guint y;

  if (src_stride == row && dest_stride == row) {
    memcpy (dest, src, row * height);
    return;
  }
  for (y = 0; y < height; y++)
    memcpy (dest + y * dest_stride, src + y * src_stride, row);
}

gboolean
wsi_store_encode (WsiStoreCodec * codec, WsiStoreEncoding encoding,
    guint quality, gboolean subsample_420, const WsiStorePixels * px,
    const guint8 * data, gsize stride, guint width, guint height,
    GByteArray * out, GError ** error)
{
  gsize row = (gsize) width * px->channels, start = out->len;

  switch (encoding) {
    case WSI_STORE_ENCODING_RAW:
      g_byte_array_set_size (out, start + row * height);
      copy_rows (data, stride, out->data + start, row, row, height);
      return TRUE;
    case WSI_STORE_ENCODING_YUV420:
      g_byte_array_set_size (out, start + yuv420_size (width, height,
              px->channels));
      encode_yuv420 (px, data, stride, width, height, out->data + start);
      return TRUE;
    case WSI_STORE_ENCODING_JPEG:
      return encode_jpeg (codec, quality, subsample_420, px, data, stride,
          width, height, out, error);
  }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
      "unknown encoding %d", encoding);
  return FALSE;
}

/* Row padding is set, not left as the allocator's bytes: the output is a
 * pure function of the store. */
static void
clear_padding (guint8 * dest, gsize stride, gsize row, guint height)
{
  guint y;

  if (stride > row)
    for (y = 0; y < height; y++)
      memset (dest + y * stride + row, 0, stride - row);
}

static gboolean
decode_payload (WsiStoreCodec * codec, WsiStoreEncoding encoding,
    const WsiStorePixels * px, const guint8 * payload, gsize size,
    guint width, guint height, guint8 * dest, gsize stride, GError ** error)
{
  gsize row = (gsize) width * px->channels;

  switch (encoding) {
    case WSI_STORE_ENCODING_RAW:
      if (size != row * height)
        break;
      copy_rows (payload, row, dest, stride, row, height);
      return TRUE;
    case WSI_STORE_ENCODING_YUV420:
      if (size != yuv420_size (width, height, px->channels))
        break;
      decode_yuv420 (px, payload, width, height, dest, stride);
      return TRUE;
    case WSI_STORE_ENCODING_JPEG:
      return decode_jpeg (codec, px, payload, size, width, height, dest,
          stride, error);
  }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
      "a %s payload of %" G_GSIZE_FORMAT " bytes is not a %ux%u patch",
      wsi_store_encoding_name (encoding), size, width, height);
  return FALSE;
}

gboolean
wsi_store_decode (WsiStoreCodec * codec, WsiStoreEncoding encoding,
    const WsiStorePixels * px, const guint8 * payload, gsize size,
    guint width, guint height, guint8 * dest, gsize stride, GError ** error)
{
  if (!decode_payload (codec, encoding, px, payload, size, width, height,
          dest, stride, error))
    return FALSE;
  clear_padding (dest, stride, (gsize) width * px->channels, height);
  return TRUE;
}

/* ---- png (webdataset export) -------------------------------------------- */

static void
put_be32 (GByteArray * out, guint32 v)
{
  guint8 b[4] = { v >> 24, v >> 16, v >> 8, v };

  g_byte_array_append (out, b, 4);
}

static void
put_chunk (GByteArray * out, const gchar * type, const guint8 * data,
    gsize size)
{
  guint32 crc = crc32 (0, (const Bytef *) type, 4);

  put_be32 (out, (guint32) size);
  g_byte_array_append (out, (const guint8 *) type, 4);
  if (size > 0)
    g_byte_array_append (out, data, size);
  crc = crc32 (crc, data, size);
  put_be32 (out, crc);
}

gboolean
wsi_store_encode_png (const WsiStorePixels * px, const guint8 * data,
    gsize stride, guint width, guint height, GByteArray * out,
    GError ** error)
{
  static const guint8 signature[8] = { 137, 'P', 'N', 'G', 13, 10, 26, 10 };
  /* RGBA keeps its alpha; RGBx and BGRx become RGB */
  guint channels = px->alpha ? 4 : px->channels == 1 ? 1 : 3;
  gsize row = 1 + (gsize) width * channels;
  guint8 *filtered = g_malloc (row * height), ihdr[13];
  uLongf packed_size = compressBound (row * height);
  guint8 *packed = g_malloc (packed_size);
  guint x, y;
  int z;

  for (y = 0; y < height; y++) {
    const guint8 *in = data + y * stride;
    guint8 *o = filtered + y * row;

    *o++ = 0;                   /* filter: none */
    for (x = 0; x < width; x++, in += px->channels) {
      if (channels == 1) {
        *o++ = in[0];
        continue;
      }
      *o++ = in[px->r];
      *o++ = in[px->g];
      *o++ = in[px->b];
      if (channels == 4)
        *o++ = in[px->fill];
    }
  }
  z = compress2 (packed, &packed_size, filtered, row * height, 3);
  g_free (filtered);
  if (z != Z_OK) {
    g_free (packed);
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
        "PNG compression failed (zlib error %d)", z);
    return FALSE;
  }
  ihdr[0] = width >> 24;
  ihdr[1] = width >> 16;
  ihdr[2] = width >> 8;
  ihdr[3] = width;
  ihdr[4] = height >> 24;
  ihdr[5] = height >> 16;
  ihdr[6] = height >> 8;
  ihdr[7] = height;
  ihdr[8] = 8;                  /* bit depth */
  ihdr[9] = channels == 1 ? 0 : channels == 3 ? 2 : 6;
  ihdr[10] = ihdr[11] = ihdr[12] = 0;
  g_byte_array_append (out, signature, 8);
  put_chunk (out, "IHDR", ihdr, 13);
  put_chunk (out, "IDAT", packed, packed_size);
  put_chunk (out, "IEND", NULL, 0);
  g_free (packed);
  return TRUE;
}
