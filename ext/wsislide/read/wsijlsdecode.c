/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsijlsdecode.c: JPEG-LS frames through CharLS (see wsijlsdecode.h).
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <charls/charls.h>

#include "wsijlsdecode.h"
#include "wsislide.h"

static gboolean
jls_fail (GError ** error, const gchar * what, charls_jpegls_errc code)
{
  g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
      "JPEG-LS: %s%s%s", what, code != 0 ? ": " : "",
      code != 0 ? charls_get_error_message (code) : "");
  return FALSE;
}

/* Sample @index of a component row: 8 or 16 bits, scaled to 8. */
static guint8
sample8 (const guint8 * row, gsize index, gboolean wide, guint32 max)
{
  guint32 v = wide ? ((const guint16 *) row)[index] : row[index];

  if (v >= max)
    return 255;
  return max == 255 ? (guint8) v : (guint8) ((v * 255 + max / 2) / max);
}

/* The rectangle out of the whole decoded frame @pixels. */
static void
crop_to_rgb (const guint8 * pixels, const charls_frame_info * info,
    charls_interleave_mode mode, const WsiJlsFrame * frame, guint x, guint y,
    guint w, guint h, guint8 * rgb, gsize stride)
{
  gboolean wide = info->bits_per_sample > 8;
  gsize sample_bytes = wide ? 2 : 1;
  guint32 max = (1u << info->bits_per_sample) - 1;
  gsize plane_row = (gsize) info->width * sample_bytes;
  gsize plane = plane_row * info->height;
  guint i, j, c;

  for (j = 0; j < h; j++) {
    guint8 *out = rgb + (gsize) j * stride;
    for (i = 0; i < w; i++) {
      for (c = 0; c < 3; c++) {
        guint component = info->component_count == 1 ? 0 : c;
        const guint8 *row;
        gsize index;
        guint8 v;
        /* CharLS hands planar frames over planar, line- and sample-
         * interleaved ones pixel by pixel. */
        if (info->component_count == 1 || mode == CHARLS_INTERLEAVE_MODE_NONE) {
          row = pixels + component * plane + (gsize) (y + j) * plane_row;
          index = x + i;
        } else {
          row = pixels + (gsize) (y + j) * plane_row * 3;
          index = (gsize) (x + i) * 3 + component;
        }
        v = sample8 (row, index, wide, max);
        out[3 * i + c] = frame->invert ? 255 - v : v;
      }
    }
  }
}

gboolean
wsi_jls_decode (const WsiJlsFrame * frame, guint x, guint y, guint w,
    guint h, guint8 * rgb, gsize stride, GError ** error)
{
  charls_jpegls_decoder *decoder = charls_jpegls_decoder_create ();
  charls_frame_info info = { 0, };
  charls_interleave_mode mode = CHARLS_INTERLEAVE_MODE_NONE;
  charls_jpegls_errc code;
  guint8 *pixels = NULL;
  size_t size = 0;
  gboolean ok = FALSE;

  if (decoder == NULL)
    return jls_fail (error, "out of memory", 0);
  if ((code = charls_jpegls_decoder_set_source_buffer (decoder, frame->data,
              frame->size)) != 0
      || (code = charls_jpegls_decoder_read_header (decoder)) != 0
      || (code = charls_jpegls_decoder_get_frame_info (decoder, &info)) != 0
      || (code = charls_jpegls_decoder_get_interleave_mode (decoder,
              &mode)) != 0) {
    jls_fail (error, "unreadable header", code);
    goto done;
  }
  if (info.width != frame->width || info.height != frame->height
      || (guint) info.component_count != frame->components
      || info.bits_per_sample < 2 || info.bits_per_sample > 16) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ, "JPEG-LS: the "
        "stream is %ux%u, %d components of %d bits, not the frame's %ux%u, "
        "%u components", info.width, info.height, info.component_count,
        info.bits_per_sample, frame->width, frame->height, frame->components);
    goto done;
  }
  if ((code = charls_jpegls_decoder_get_destination_size (decoder, 0,
              &size)) != 0) {
    jls_fail (error, "no destination size", code);
    goto done;
  }
  pixels = g_try_malloc (size);
  if (pixels == NULL) {
    jls_fail (error, "out of memory", 0);
    goto done;
  }
  if ((code = charls_jpegls_decoder_decode_to_buffer (decoder, pixels, size,
              0)) != 0) {
    jls_fail (error, "undecodable", code);
    goto done;
  }
  crop_to_rgb (pixels, &info, mode, frame, x, y, w, h, rgb, stride);
  ok = TRUE;

done:
  g_free (pixels);
  charls_jpegls_decoder_destroy (decoder);
  return ok;
}
