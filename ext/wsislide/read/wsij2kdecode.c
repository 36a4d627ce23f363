/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsij2kdecode.c: JPEG 2000 frames through OpenJPEG (see wsij2kdecode.h).
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <openjpeg.h>

#include "wsij2kdecode.h"
#include "wsislide.h"

/* The JP2 signature box, for the rare frame stored as a JP2 file. */
static const guint8 jp2_signature[12] = { 0x00, 0x00, 0x00, 0x0C, 'j', 'P',
  ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A
};

/* ---- the main header ------------------------------------------------------ */

/* The offset of the main header's first marker segment (after SOC), or 0
 * when there is no SOC SIZ in @data. */
static gsize
main_header_start (const guint8 * data, gsize size)
{
  gsize i;

  /* A JP2 file holds the codestream in a box: find its SOC SIZ. */
  for (i = 0; i + 4 <= size; i++)
    if (data[i] == 0xFF && data[i + 1] == 0x4F && data[i + 2] == 0xFF
        && data[i + 3] == 0x51)
      break;
  return i + 4 <= size ? i + 2 : 0;
}

/* The main header's marker segment @wanted (its marker's offset), or 0. */
static gsize
main_header_find (const guint8 * data, gsize size, guint wanted)
{
  gsize i = main_header_start (data, size);

  /* Marker segments after SOC until the first tile-part (SOT). */
  while (i > 0 && i + 4 <= size && data[i] == 0xFF) {
    guint marker = data[i + 1];
    gsize length = ((gsize) data[i + 2] << 8) | data[i + 3];
    if (marker == 0x90 || length < 2)
      break;
    if (marker == wanted)
      return i;
    i += 2 + length;
  }
  return 0;
}

#ifndef WSI_DECODE_HTJ2K
/* Does the codestream select the HT block coder anywhere: a CAP marker, or
 * a COD or COC (main header or any tile-part header) whose code-block style
 * has the HT bit? OpenJPEG picks its HT decoder per code-block from that
 * bit, and asserts (aborting the process) on some damaged HT code-blocks,
 * so a frame is handed to it only when the walk proves it HT-free: headers
 * that cannot be walked count as "may use HT". */
static gboolean
codestream_may_use_ht (const guint8 * data, gsize size)
{
  gsize siz = main_header_start (data, size), i = siz, next = 0;
  gboolean in_tile_part = FALSE;
  guint ccoc_bytes;

  if (siz == 0 || siz + 40 > size)
    return TRUE;
  /* SIZ: Csiz after L, Rsiz and eight 32-bit sizes; COC's component
   * index is 2 bytes when Csiz >= 257. */
  ccoc_bytes = (((guint) data[siz + 38] << 8) | data[siz + 39]) < 257 ? 1 : 2;
  for (;;) {
    guint marker;
    gsize length;

    if (!in_tile_part && next > 0 && i >= size)
      return FALSE;             /* every tile-part walked, no EOC */
    if (i + 2 > size || data[i] != 0xFF)
      return TRUE;
    marker = data[i + 1];
    if (marker == 0xD9)         /* EOC */
      return FALSE;
    if (marker == 0x93) {       /* SOD: the tile-part's data follows */
      if (!in_tile_part)
        return TRUE;
      if (next == 0)            /* Psot 0: the last tile-part */
        return FALSE;
      i = next;
      in_tile_part = FALSE;
      continue;
    }
    if (i + 4 > size)
      return TRUE;
    length = ((gsize) data[i + 2] << 8) | data[i + 3];
    if (length < 2 || i + 2 + length > size)
      return TRUE;
    switch (marker) {
      case 0x50:               /* CAP */
        return TRUE;
      case 0x52:               /* COD: cblksty after Scod, SGcod, levels, xcb, ycb */
        if (length < 11 || (data[i + 12] & 0x40) != 0)
          return TRUE;
        break;
      case 0x53:               /* COC: the same after Ccoc and Scoc */
        if (length < 7 + ccoc_bytes || (data[i + 8 + ccoc_bytes] & 0x40) != 0)
          return TRUE;
        break;
      case 0x90:{              /* SOT: Isot, Psot (the tile-part's length) */
        guint32 psot;
        if (length != 10 || in_tile_part)
          return TRUE;
        psot = ((guint32) data[i + 6] << 24) | ((guint32) data[i + 7] << 16)
            | ((guint32) data[i + 8] << 8) | data[i + 9];
        if (psot != 0 && (psot < 14 || psot > size - i))
          return TRUE;
        next = psot == 0 ? 0 : i + psot;
        in_tile_part = TRUE;
        break;
      }
      default:
        break;
    }
    i += 2 + length;
  }
}
#endif

gint
wsi_j2k_decomposition_levels (const guint8 * data, gsize size)
{
  /* COD: Lcod, Scod, progression, layers (2), MCT, decompositions. */
  gsize cod = main_header_find (data, size, 0x52);

  return cod > 0 && cod + 9 < size ? data[cod + 9] : -1;
}

/* ---- OpenJPEG over memory ------------------------------------------------- */

typedef struct
{
  const guint8 *data;
  gsize size;
  gsize position;
} MemoryStream;

static OPJ_SIZE_T
memory_read (void *buffer, OPJ_SIZE_T n, void *user)
{
  MemoryStream *m = user;
  gsize left = m->size - m->position;

  if (left == 0)
    return (OPJ_SIZE_T) - 1;
  n = MIN (n, left);
  memcpy (buffer, m->data + m->position, n);
  m->position += n;
  return n;
}

static OPJ_OFF_T
memory_skip (OPJ_OFF_T n, void *user)
{
  MemoryStream *m = user;

  if (n < 0) {
    n = MAX (n, -(OPJ_OFF_T) m->position);
  } else {
    n = MIN ((guint64) n, (guint64) (m->size - m->position));
  }
  m->position += n;
  return n;
}

static OPJ_BOOL
memory_seek (OPJ_OFF_T n, void *user)
{
  MemoryStream *m = user;

  if (n < 0 || (guint64) n > m->size)
    return OPJ_FALSE;
  m->position = n;
  return OPJ_TRUE;
}

static opj_stream_t *
memory_stream_new (MemoryStream * m)
{
  opj_stream_t *stream = opj_stream_create (64 * 1024, OPJ_TRUE);

  if (stream == NULL)
    return NULL;
  opj_stream_set_user_data (stream, m, NULL);
  opj_stream_set_user_data_length (stream, m->size);
  opj_stream_set_read_function (stream, memory_read);
  opj_stream_set_skip_function (stream, memory_skip);
  opj_stream_set_seek_function (stream, memory_seek);
  return stream;
}

/* OpenJPEG's first error message, kept for ours. */
static void
on_error (const char *message, void *user)
{
  gchar **first = user;

  if (*first == NULL)
    *first = g_strchomp (g_strdup (message));
}

static void
on_quiet (const char *message, void *user)
{
}

/* ---- samples to RGB ------------------------------------------------------- */

static guint8
to8 (OPJ_INT32 v, guint32 max)
{
  if (v <= 0)
    return 0;
  if ((guint32) v >= max)
    return 255;
  return max == 255 ? (guint8) v : (guint8) (((guint64) v * 255 + max / 2)
      / max);
}

static guint8
clamp8 (gdouble v)
{
  return v <= 0.0 ? 0 : v >= 255.0 ? 255 : (guint8) (v + 0.5);
}

/* The w x h samples at (@sx, @sy) of the decoded components as RGB. */
static void
image_to_rgb (const opj_image_t * image, guint sx, guint sy, guint w, guint h,
    WsiJ2kColor color, guint8 * rgb, gsize stride)
{
  guint32 max = (1u << image->comps[0].prec) - 1;
  guint i, j;

  for (j = 0; j < h; j++) {
    guint8 *out = rgb + (gsize) j * stride;
    for (i = 0; i < w; i++) {
      gsize at = (gsize) (sy + j) * image->comps[0].w + sx + i;
      if (image->numcomps == 1) {
        guint8 v = to8 (image->comps[0].data[at], max);
        if (color == WSI_J2K_COLOR_GREY_INVERTED)
          v = 255 - v;
        out[3 * i] = out[3 * i + 1] = out[3 * i + 2] = v;
      } else if (color == WSI_J2K_COLOR_YBR_FULL) {
        gdouble y = to8 (image->comps[0].data[at], max);
        gdouble cb = to8 (image->comps[1].data[at], max) - 128.0;
        gdouble cr = to8 (image->comps[2].data[at], max) - 128.0;
        out[3 * i] = clamp8 (y + 1.402 * cr);
        out[3 * i + 1] = clamp8 (y - 0.344136 * cb - 0.714136 * cr);
        out[3 * i + 2] = clamp8 (y + 1.772 * cb);
      } else {
        out[3 * i] = to8 (image->comps[0].data[at], max);
        out[3 * i + 1] = to8 (image->comps[1].data[at], max);
        out[3 * i + 2] = to8 (image->comps[2].data[at], max);
      }
    }
  }
}

/* ---- one frame ------------------------------------------------------------ */

static gboolean
decode_fail (GError ** error, const gchar * opj_message, const gchar * what)
{
  g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
      "JPEG 2000: %s%s%s", what, opj_message != NULL ? ": " : "",
      opj_message != NULL ? opj_message : "");
  return FALSE;
}

/* The header says what the frame is: is it one we read? */
static gboolean
header_check (const opj_image_t * image, const WsiJ2kFrame * frame,
    GError ** error)
{
  guint c;

  if (image->x1 - image->x0 != frame->width
      || image->y1 - image->y0 != frame->height) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "JPEG 2000: the codestream is %ux%u, not the frame's %ux%u",
        image->x1 - image->x0, image->y1 - image->y0, frame->width,
        frame->height);
    return FALSE;
  }
  if (image->numcomps != 1 && image->numcomps != 3)
    return decode_fail (error, NULL, "only 1 or 3 components are read");
  for (c = 0; c < image->numcomps; c++) {
    const opj_image_comp_t *comp = &image->comps[c];
    if (comp->dx != 1 || comp->dy != 1 || comp->sgnd || comp->prec < 1
        || comp->prec > 16 || comp->prec != image->comps[0].prec)
      return decode_fail (error, NULL, "subsampled, signed or mixed-"
          "precision components are not read");
  }
  return TRUE;
}

gboolean
wsi_j2k_decode (const WsiJ2kFrame * frame, guint scale, guint x, guint y,
    guint w, guint h, guint8 * rgb, gsize stride, GError ** error)
{
  MemoryStream memory = { frame->data, frame->size, 0 };
  gboolean jp2 = frame->size >= sizeof (jp2_signature)
      && memcmp (frame->data, jp2_signature, sizeof (jp2_signature)) == 0;
  opj_codec_t *codec = opj_create_decompress (jp2 ? OPJ_CODEC_JP2 :
      OPJ_CODEC_J2K);
  opj_stream_t *stream = memory_stream_new (&memory);
  opj_image_t *image = NULL;
  opj_dparameters_t parameters;
  gchar *message = NULL;
  guint reduce = scale >= 8 ? 3 : scale >= 4 ? 2 : scale >= 2 ? 1 : 0;
  /* HTJ2K (a CAP marker): OpenJPEG 2.5.0 decodes a sub-area of HT
   * code-blocks wrongly (measured: half the samples off by up to 128), so
   * the whole frame is decoded (at the reduced resolution) and cropped. */
  gboolean whole = main_header_find (frame->data, frame->size, 0x50) > 0;
  guint sx = whole ? x : 0, sy = whole ? y : 0;
  gboolean ok = FALSE;
  guint c;

  if (codec == NULL || stream == NULL) {
    decode_fail (error, NULL, "out of memory");
    goto done;
  }
#ifndef WSI_DECODE_HTJ2K
  if (codestream_may_use_ht (frame->data, frame->size)) {
    decode_fail (error, NULL, "HTJ2K code-blocks (or marker segments that "
        "cannot be walked) are not decoded in this build: OpenJPEG asserts "
        "on some damaged HT code-blocks, which would abort the process "
        "(-Dhtj2k=enabled reads them)");
    goto done;
  }
#endif
  opj_set_error_handler (codec, on_error, &message);
  opj_set_warning_handler (codec, on_quiet, NULL);
  opj_set_info_handler (codec, on_quiet, NULL);
  opj_set_default_decoder_parameters (&parameters);
  parameters.cp_reduce = reduce;
  if (!opj_setup_decoder (codec, &parameters)
      || !opj_decoder_set_strict_mode (codec, OPJ_TRUE)
      || !opj_read_header (stream, codec, &image)) {
    decode_fail (error, message, "unreadable main header");
    goto done;
  }
  if (!header_check (image, frame, error))
    goto done;
  /* The area in full-resolution reference-grid coordinates. */
  if ((!whole && !opj_set_decode_area (codec, image,
              image->x0 + x * scale, image->y0 + y * scale,
              image->x0 + MIN ((x + w) * scale, frame->width),
              image->y0 + MIN ((y + h) * scale, frame->height)))
      || !opj_decode (codec, stream, image)
      || !opj_end_decompress (codec, stream)) {
    decode_fail (error, message, "undecodable");
    goto done;
  }
  for (c = 0; c < image->numcomps; c++) {
    if (image->comps[c].w < sx + w || image->comps[c].h < sy + h
        || image->comps[c].data == NULL) {
      g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
          "JPEG 2000: component %u decoded %ux%u, not %ux%u", c,
          image->comps[c].w, image->comps[c].h, w, h);
      goto done;
    }
  }
  image_to_rgb (image, sx, sy, w, h, frame->color, rgb, stride);
  ok = TRUE;

done:
  if (image != NULL)
    opj_image_destroy (image);
  if (stream != NULL)
    opj_stream_destroy (stream);
  if (codec != NULL)
    opj_destroy_codec (codec);
  g_free (message);
  return ok;
}
