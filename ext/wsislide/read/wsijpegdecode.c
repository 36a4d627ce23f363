/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsijpegdecode.c: one TIFF JPEG tile, or a rectangle of it, into ARGB
 * (see wsijpegdecode.h). */

#include "wsijpegdecode.h"
#include "wsiresample.h"
#include "wsislide.h"

#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

/* Memory libjpeg may take for one tile beyond its strip buffers: a
 * progressive tile keeps every coefficient (8192^2 x 3 x 2 bytes would be
 * 400 MB); over this it fails instead of allocating. */
#define JPEG_MAX_MEMORY (256L << 20)

/* Four bytes per pixel that read as one 0xAARRGGBB host word, alpha 255:
 * what OpenSlide 3.4.1 asks libjpeg-turbo for too. */
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
#define OUT_COLOR_SPACE JCS_EXT_BGRA
#else
#define OUT_COLOR_SPACE JCS_EXT_ARGB
#endif

struct _WsiJpegDecoder
{
  struct jpeg_decompress_struct cinfo;
  struct jpeg_error_mgr jerr;
  jmp_buf env;                  /* where libjpeg errors land */
  gchar message[JMSG_LENGTH_MAX];
  guint8 *row;                  /* one row of a widened crop */
  gsize row_capacity;           /* pixels */
};

/* ---- errors: longjmp out of libjpeg ------------------------------------- */

static void
decoder_error_exit (j_common_ptr cinfo)
{
  WsiJpegDecoder *decoder = cinfo->client_data;

  cinfo->err->format_message (cinfo, decoder->message);
  longjmp (decoder->env, 1);
}

/* Warnings are corrupt or truncated data: fail like OpenSlide does. */
static void
decoder_emit_message (j_common_ptr cinfo, int msg_level)
{
  if (msg_level < 0)
    cinfo->err->error_exit (cinfo);
}

/* Nothing goes to stderr. */
static void
decoder_output_message (j_common_ptr cinfo)
{
}

static gboolean
decoder_fail (GError ** error, const gchar * format, ...)
G_GNUC_PRINTF (2, 3);

static gboolean
decoder_fail (GError ** error, const gchar * format, ...)
{
  va_list args;
  gchar *reason;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ, "JPEG: %s",
      reason);
  g_free (reason);
  return FALSE;
}

/* ---- life cycle --------------------------------------------------------- */

WsiJpegDecoder *
wsi_jpeg_decoder_new (void)
{
  WsiJpegDecoder *decoder = g_try_new0 (WsiJpegDecoder, 1);

  if (decoder == NULL)
    return NULL;
  decoder->cinfo.err = jpeg_std_error (&decoder->jerr);
  decoder->jerr.error_exit = decoder_error_exit;
  decoder->jerr.emit_message = decoder_emit_message;
  decoder->jerr.output_message = decoder_output_message;
  decoder->cinfo.client_data = decoder;
  if (setjmp (decoder->env) != 0) {
    /* Only an allocation can fail here. */
    jpeg_destroy_decompress (&decoder->cinfo);
    g_free (decoder);
    return NULL;
  }
  jpeg_create_decompress (&decoder->cinfo);
  decoder->cinfo.mem->max_memory_to_use = JPEG_MAX_MEMORY;
  return decoder;
}

void
wsi_jpeg_decoder_free (WsiJpegDecoder * decoder)
{
  if (decoder == NULL)
    return;
  jpeg_destroy_decompress (&decoder->cinfo);
  g_free (decoder->row);
  g_free (decoder);
}

gpointer
wsi_jpeg_decoder_state_new (void)
{
  return wsi_jpeg_decoder_new ();
}

void
wsi_jpeg_decoder_state_free (gpointer state)
{
  wsi_jpeg_decoder_free (state);
}

/* ---- one decode (every step may longjmp to the caller's setjmp) -------- */

/* TIFF JPEG tiles are abbreviated streams: the tables come first, from the
 * directory's JPEGTables, then the tile's own header. */
static gboolean
decoder_read_headers (WsiJpegDecoder * decoder, const WsiJpegTile * tile,
    GError ** error)
{
  j_decompress_ptr cinfo = &decoder->cinfo;

  if (tile->tables != NULL) {
    jpeg_mem_src (cinfo, tile->tables, tile->tables_size);
    if (jpeg_read_header (cinfo, FALSE) != JPEG_HEADER_TABLES_ONLY)
      return decoder_fail (error, "JPEGTables is not a tables-only stream");
  }
  jpeg_mem_src (cinfo, tile->data, tile->size);
  if (jpeg_read_header (cinfo, TRUE) != JPEG_HEADER_OK)
    return decoder_fail (error, "no image in the tile's stream");
  if (cinfo->image_width != tile->width || cinfo->image_height != tile->height
      || cinfo->num_components != 3)
    return decoder_fail (error, "the stream is %ux%u with %d components, the "
        "tile %ux%u with 3", cinfo->image_width, cinfo->image_height,
        cinfo->num_components, tile->width, tile->height);
  return TRUE;
}

/* After jpeg_read_header() (which resets them): the colour space from the
 * TIFF photometric, DCT scaling, the output layout; libjpeg's defaults for
 * the rest (JDCT_ISLOW, fancy upsampling), as OpenSlide. */
static J_COLOR_SPACE
output_color_space (gint layout)
{
  switch (layout) {
    case WSI_PIXEL_RGB:
      return JCS_EXT_RGB;
    case WSI_PIXEL_RGBA:
      return JCS_EXT_RGBA;
    case WSI_PIXEL_RGBX:
      return JCS_EXT_RGBX;
    case WSI_PIXEL_BGRX:
      return JCS_EXT_BGRX;
    default:
      return OUT_COLOR_SPACE;
  }
}

static void
decoder_configure (WsiJpegDecoder * decoder, const WsiJpegTile * tile,
    guint scale, gint layout)
{
  j_decompress_ptr cinfo = &decoder->cinfo;

  cinfo->jpeg_color_space = tile->rgb ? JCS_RGB : JCS_YCbCr;
  cinfo->out_color_space = output_color_space (layout);
  cinfo->scale_num = 1;
  cinfo->scale_denom = scale;
}

/* TRUE when some component is upsampled horizontally to the output: its
 * samples times its IDCT output size fall short of the luma's. With DCT
 * scaling libjpeg-turbo scales chroma up in the IDCT where it can (4:2:0
 * at 1/2: chroma IDCT at 8x8, luma at 4x4), so no upsampler runs and a
 * crop edge needs no margin; at full scale this is chroma subsampling. */
static gboolean
chroma_upsampled_horizontally (j_decompress_ptr cinfo)
{
  int luma = cinfo->max_h_samp_factor * cinfo->min_DCT_scaled_size;
  int ci;

  for (ci = 0; ci < cinfo->num_components; ci++) {
    const jpeg_component_info *comp = &cinfo->comp_info[ci];

    if (comp->h_samp_factor * comp->DCT_scaled_size < luma)
      return TRUE;
  }
  return FALSE;
}

/* jpeg_crop_scanline() in libjpeg-turbo 2.1.5 crops exactly, checked
 * column by column against whole decodes and under valgrind
 * (tests/check/libs/wsislide.c test_scaled_crop_identical), for chroma 1x1
 * with luma 1x1, 2x1, 2x2 or 4x1 (4:4:4, 4:2:2, 4:2:0, 4:1:1: what slides
 * use) at full scale and at 1/2, with the one-iMCU margin of
 * decoder_crop() where chroma is upsampled. Elsewhere it is not: without
 * that margin it left output columns unwritten (they kept whatever an
 * earlier decode had left in libjpeg's buffers); at 1/4 and 1/8 valgrind
 * still finds uninitialised bytes of libjpeg's main buffer in the output
 * (4:4:4 at 1/4, 4:2:0 at 1/8); at full scale h1v2 and h4v2 luma do the
 * same. Those decode whole rows. */
static gboolean
crop_is_exact (j_decompress_ptr cinfo, guint scale)
{
  int h = cinfo->comp_info[0].h_samp_factor;
  int v = cinfo->comp_info[0].v_samp_factor;
  int ci;

  if (scale > 2)
    return FALSE;
  for (ci = 1; ci < cinfo->num_components; ci++) {
    if (cinfo->comp_info[ci].h_samp_factor != 1
        || cinfo->comp_info[ci].v_samp_factor != 1)
      return FALSE;
  }
  return (v == 1 && (h == 1 || h == 2 || h == 4)) || (h == 2 && v == 2);
}

/* Crops to the columns [x, x + w) where that is exact (libjpeg rounds the
 * start down to an iMCU and may widen the end), else decodes the whole
 * width; returns how many decoded columns come before x.
 *
 * With subsampled chroma a crop edge is not a safe place for a wanted
 * column: it is upsampled as if it were the image edge, and with
 * libjpeg-turbo 2.1.5 (4:2:0 tiles, fancy upsampling) a wanted column one
 * column inside the crop's right edge still took values left in libjpeg's
 * buffers by the decoder's earlier decodes (chroma the crop never wrote):
 * a patch's last column then depended on which tile that thread had
 * decoded before, and pipelines_dicom's streams changed from run to run
 * with threads=2. So a whole iMCU more is kept on each side: the columns
 * we want get the values of a whole-tile decode, whatever came before. */
static guint
decoder_crop (WsiJpegDecoder * decoder, guint scale, guint x, guint w)
{
  j_decompress_ptr cinfo = &decoder->cinfo;
  JDIMENSION start = x, width = w;

  if (x == 0 && w == cinfo->output_width)
    return 0;
  if (!crop_is_exact (cinfo, scale))
    return x;
  if (chroma_upsampled_horizontally (cinfo)) {
    JDIMENSION imcu = (JDIMENSION) cinfo->max_h_samp_factor *
        (JDIMENSION) cinfo->min_DCT_scaled_size;
    JDIMENSION end = ((x + w + imcu - 1) / imcu + 1) * imcu;

    end = MIN (end, cinfo->output_width);
    start = x >= imcu ? x - imcu : 0;
    width = end - start;
    if (start == 0 && end == cinfo->output_width)
      return x;
  }
  jpeg_crop_scanline (cinfo, &start, &width);
  return x - start;
}

static gboolean
decoder_reserve_row (WsiJpegDecoder * decoder, gsize pixels)
{
  guint8 *row;

  if (pixels <= decoder->row_capacity)
    return TRUE;
  row = g_try_realloc (decoder->row, pixels * sizeof (guint32));
  if (row == NULL)
    return FALSE;
  decoder->row = row;
  decoder->row_capacity = pixels;
  return TRUE;
}

/* Rows straight into @dst when the crop is exact, else through the row
 * buffer. Stops after the last wanted row. */
static gboolean
decoder_read_rows (WsiJpegDecoder * decoder, guint skip, guint w, guint h,
    guint8 * dst, gsize dst_stride, GError ** error)
{
  j_decompress_ptr cinfo = &decoder->cinfo;
  gboolean direct = skip == 0 && cinfo->output_width == w;
  gsize bpp = cinfo->out_color_components;
  guint i;

  if (!direct && !decoder_reserve_row (decoder, cinfo->output_width))
    return decoder_fail (error, "out of memory for a %u-pixel row",
        cinfo->output_width);
  for (i = 0; i < h; i++) {
    guint8 *out = dst + i * dst_stride;
    JSAMPROW row = direct ? out : decoder->row;

    if (jpeg_read_scanlines (cinfo, &row, 1) != 1)
      return decoder_fail (error, "the stream ended at row %u",
          cinfo->output_scanline);
    if (!direct)
      memcpy (out, decoder->row + skip * bpp, (gsize) w * bpp);
  }
  return TRUE;
}

static gboolean
decoder_run (WsiJpegDecoder * decoder, const WsiJpegTile * tile, guint scale,
    guint x, guint y, guint w, guint h, guint8 * dst, gsize dst_stride,
    gint layout, GError ** error)
{
  j_decompress_ptr cinfo = &decoder->cinfo;
  guint skip;

  if (!decoder_read_headers (decoder, tile, error))
    return FALSE;
  decoder_configure (decoder, tile, scale, layout);
  jpeg_start_decompress (cinfo);
  if (w == 0 || h == 0 || w > cinfo->output_width
      || h > cinfo->output_height || x > cinfo->output_width - w
      || y > cinfo->output_height - h)
    return decoder_fail (error, "%ux%u at (%u, %u) is outside the %ux%u "
        "decoded tile", w, h, x, y, cinfo->output_width,
        cinfo->output_height);
  skip = decoder_crop (decoder, scale, x, w);
  if (y > 0 && jpeg_skip_scanlines (cinfo, y) != y)
    return decoder_fail (error, "could not skip to row %u", y);
  return decoder_read_rows (decoder, skip, w, h, dst, dst_stride, error);
}

gboolean
wsi_jpeg_decoder_decode (WsiJpegDecoder * decoder, const WsiJpegTile * tile,
    guint scale, guint x, guint y, guint w, guint h, guint8 * dst,
    gsize dst_stride, gint layout, GError ** error)
{
  gboolean ok;

  g_return_val_if_fail (scale == 1 || scale == 2 || scale == 4
      || scale == 8, FALSE);

  if (setjmp (decoder->env) != 0) {
    /* libjpeg gave up; its state is reset for the next tile. */
    jpeg_abort_decompress (&decoder->cinfo);
    return decoder_fail (error, "%s", decoder->message);
  }
  ok = decoder_run (decoder, tile, scale, x, y, w, h, dst, dst_stride,
      layout, error);
  /* Also after a partial decode: the rows below are not wanted. */
  jpeg_abort_decompress (&decoder->cinfo);
  return ok;
}
