/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsicropdecode.c: crops of a JPEG-compressed patch, decoded no more than
 * they need (see wsicropdecode.h). */

#include "wsicropdecode.h"
#include "wsijpegdecode.h"
#include "wsislide.h"

#include <math.h>

/* The cost model, in units of "one pixel of a whole full-size decode".
 * JPEG has no row index: every row above the last one wanted is entropy
 * decoded whatever the scale or the columns; the inverse DCT, upsampling
 * and colour conversion (the rest) run only on the rows and columns
 * decoded, and on 1/scale^2 of their pixels. The entropy share is an
 * estimate for quality 80-95 photographs (libjpeg-turbo's SIMD makes the
 * rest cheap, so it is a large share); a decode also costs its header
 * parsing and set-up, counted as a few thousand pixels. The plan only
 * needs the order of two costs to be right, not their values. */
#define ENTROPY_SHARE 0.35
#define DECODE_SETUP_PIXELS 2048.0
/* Columns libjpeg decodes beyond a crop on each side: up to one iMCU of
 * rounding plus the iMCU wsijpegdecode.c keeps for subsampled chroma. */
#define CROP_MARGIN_COLUMNS 32

struct _WsiCropDecoder
{
  WsiJpegDecoder *jpeg;
  guint8 *scratch;              /* the scaled patch, only parts valid */
  gsize capacity;
};

/* A rectangle of the scaled patch, [x0, x1) x [y0, y1). */
typedef struct
{
  guint x0, y0, x1, y1;
} Rect;

WsiCropDecoder *
wsi_crop_decoder_new (void)
{
  WsiCropDecoder *decoder = g_new0 (WsiCropDecoder, 1);

  decoder->jpeg = wsi_jpeg_decoder_new ();
  if (decoder->jpeg == NULL) {
    g_free (decoder);
    return NULL;
  }
  return decoder;
}

void
wsi_crop_decoder_free (WsiCropDecoder * decoder)
{
  if (decoder == NULL)
    return;
  wsi_jpeg_decoder_free (decoder->jpeg);
  g_free (decoder->scratch);
  g_free (decoder);
}

guint
wsi_crop_dct_scale (const WsiCropBox * box, guint out_side, guint max_scale)
{
  guint scale;

  for (scale = 8; scale > 1; scale /= 2) {
    if (scale <= max_scale && box->width / scale >= out_side
        && box->height / scale >= out_side)
      return scale;
  }
  return 1;
}

/* ceil (length / scale): the scaled size libjpeg decodes to. */
static guint
scaled_length (guint length, guint scale)
{
  return (length + scale - 1) / scale;
}

/* The pixels of the 1/@scale patch (@width x @height, scaled) that the
 * window resizer reads for @box: bilinear taps reach up to one pixel
 * outside the window (half-pixel centres), area taps stay inside it. */
static Rect
crop_region (const WsiCropBox * box, guint scale, guint width, guint height)
{
  gdouble x = box->x / scale, y = box->y / scale;
  gdouble w = box->width / scale, h = box->height / scale;
  gint64 x0 = (gint64) floor (x) - 1, y0 = (gint64) floor (y) - 1;
  gint64 x1 = (gint64) ceil (x + w) + 1, y1 = (gint64) ceil (y + h) + 1;
  Rect r;

  r.x0 = (guint) CLAMP (x0, 0, (gint64) width - 1);
  r.y0 = (guint) CLAMP (y0, 0, (gint64) height - 1);
  r.x1 = (guint) CLAMP (x1, (gint64) r.x0 + 1, (gint64) width);
  r.y1 = (guint) CLAMP (y1, (gint64) r.y0 + 1, (gint64) height);
  return r;
}

/* Cost of decoding @r of the 1/@scale image of a @width x @height patch. */
static gdouble
region_cost (guint width, guint height, guint scale, const Rect * r)
{
  /* crops are exact, hence used, at full scale only (wsijpegdecode.c) */
  gdouble columns = scale == 1 ? MIN ((gdouble) width,
      (gdouble) (r->x1 - r->x0) + 2 * CROP_MARGIN_COLUMNS) : width;
  gdouble rows_above = MIN ((gdouble) height, (gdouble) r->y1 * scale);
  gdouble rows = (gdouble) (r->y1 - r->y0) * scale;

  return DECODE_SETUP_PIXELS + ENTROPY_SHARE * width * rows_above
      + (1.0 - ENTROPY_SHARE) * rows * columns / ((gdouble) scale * scale);
}

void
wsi_crop_plan (guint width, guint height, const WsiCropBox * boxes,
    const guint * scales, guint n_crops, gboolean need_whole,
    WsiCropPlan * plan)
{
  guint whole_scale = 8, i;
  gdouble whole, per_crop = 0.0;

  plan->per_crop = FALSE;
  plan->whole_scale = 1;
  if (need_whole || n_crops == 0)
    return;
  for (i = 0; i < n_crops; i++)
    whole_scale = MIN (whole_scale, scales[i]);
  for (i = 0; i < n_crops; i++) {
    Rect r = crop_region (&boxes[i], scales[i], scaled_length (width,
            scales[i]), scaled_length (height, scales[i]));

    per_crop += region_cost (width, height, scales[i], &r);
  }
  whole = DECODE_SETUP_PIXELS + ENTROPY_SHARE * width * height
      + (1.0 - ENTROPY_SHARE) * width * height
      / ((gdouble) whole_scale * whole_scale);
  plan->whole_scale = whole_scale;
  plan->per_crop = per_crop < whole;
}

/* Lower bounds, as fractions of the patch, of the height and the area of
 * any box wsi_view_draw_crop() draws for @spec: its smallest area at its
 * widest ratio, or the centred fallback box if that is smaller. */
static void
crop_lower_bounds (const WsiViewSpec * spec, gdouble * height, gdouble * area)
{
  gdouble ratio_min = exp (spec->log_ratio_min);
  gdouble ratio_max = exp (spec->log_ratio_max);
  gdouble fallback_w = ratio_max < 1.0 ? ratio_max : 1.0;
  gdouble fallback_h = ratio_min > 1.0 ? 1.0 / ratio_min : 1.0;

  *height = MIN (sqrt (spec->scale_min / ratio_max), fallback_h);
  *area = MIN (spec->scale_min, fallback_w * fallback_h);
}

gboolean
wsi_crop_plan_always_whole (const WsiViewSet * set, guint max_scale)
{
  gdouble per_crop = 0.0;
  guint v;

  for (v = 0; v < set->n_views; v++) {
    const WsiViewSpec *spec = &set->views[v];
    gdouble height, area;

    if (spec->kind == WSI_VIEW_KIND_PATCH)
      return TRUE;
    if (spec->kind != WSI_VIEW_KIND_CROP)
      continue;
    if (max_scale > 1)
      return FALSE;             /* a crop may decode at a DCT scale */
    /* region_cost() at scale 1, less its set-up and margins: every row
     * down to the crop's bottom (>= its height) entropy decoded, at least
     * its area through the rest. */
    crop_lower_bounds (spec, &height, &area);
    per_crop += ENTROPY_SHARE * height + (1.0 - ENTROPY_SHARE) * area;
  }
  /* One whole decode costs 1 (plus one set-up, fewer than n crops'). */
  return per_crop >= 1.0;
}

static gboolean
reserve_scratch (WsiCropDecoder * decoder, gsize bytes, GError ** error)
{
  guint8 *bigger;

  if (bytes <= decoder->capacity)
    return TRUE;
  bigger = g_try_realloc (decoder->scratch, bytes);
  if (bigger == NULL) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "out of memory for a %" G_GSIZE_FORMAT "-byte patch", bytes);
    return FALSE;
  }
  decoder->scratch = bigger;
  decoder->capacity = bytes;
  return TRUE;
}

gboolean
wsi_crop_decoder_decode (WsiCropDecoder * decoder,
    const WsiCompressedPatch * patch, guint scale, const WsiCropBox * region,
    WsiDecodedPatch * out, GError ** error)
{
  WsiJpegTile tile = { 0, };
  guint width = scaled_length (patch->width, scale);
  guint height = scaled_length (patch->height, scale);
  guint bpp = wsi_pixel_format_bytes (patch->format);
  gsize stride = (gsize) width * bpp;
  Rect r = { 0, 0, width, height };

  if (!reserve_scratch (decoder, stride * height, error))
    return FALSE;
  if (region != NULL)
    r = crop_region (region, scale, width, height);
  tile.data = patch->data;
  tile.size = patch->size;
  tile.width = patch->width;
  tile.height = patch->height;
  /* a stored JPEG is JFIF: YCbCr, as libjpeg's defaults say */
  tile.rgb = FALSE;
  if (!wsi_jpeg_decoder_decode (decoder->jpeg, &tile, scale, r.x0, r.y0,
          r.x1 - r.x0, r.y1 - r.y0, decoder->scratch + r.y0 * stride
          + (gsize) r.x0 * bpp, stride, patch->format, error))
    return FALSE;
  out->data = decoder->scratch;
  out->stride = stride;
  out->width = width;
  out->height = height;
  out->bpp = bpp;
  out->scale = scale;
  out->decoded = (guint64) (r.x1 - r.x0) * (r.y1 - r.y0);
  return TRUE;
}
