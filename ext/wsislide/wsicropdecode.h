/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsicropdecode.h: the random-resized crops of one JPEG-compressed patch
 * (what patchstoresrc delivers from a jpeg store when patchviews is
 * downstream), decoded no more than they need.
 *
 * Contract: wsi_crop_plan() picks, for one location, between one decode
 * of the whole patch at the largest DCT scale (1, 1/2, 1/4, 1/8) at which
 * every crop still covers at least its output size, and one decode per
 * crop of only the rows and columns its resampling reads, each at its own
 * largest such scale (libjpeg-turbo's jpeg_skip_scanlines and
 * jpeg_crop_scanline through wsijpegdecode.h), whichever the cost model
 * in wsicropdecode.c finds cheaper. Either way each stored patch is
 * decoded at most once per crop and never at full size when a whole decode
 * at full size is not the cheapest.
 * wsi_crop_decoder_decode() always hands back an image with the scaled
 * patch's full dimensions (only the decoded rectangle is valid): window
 * coordinates are the crop box divided by the scale, so at scale 1 the
 * resizer computes the very taps and reads the very pixels of a whole
 * decode, and the crop is byte-identical to a whole decode then a crop.
 * At 1/2..1/8 the DCT's scaled inverse transform stands in for the first
 * halvings (a box-like filter where bilinear would alias): close to, not
 * equal to, the full-size path (the tests ask >= 40 dB PSNR).
 *
 * Cost: the decode of the planned pixels plus the entropy decode of every
 * row above them (JPEG has no row index); one scratch image per decoder,
 * grown to the largest patch once. Threading: a decoder is one thread's.
 */

#ifndef __WSI_CROP_DECODE_H__
#define __WSI_CROP_DECODE_H__

#include "wsiresample.h"
#include "wsiviewspec.h"

G_BEGIN_DECLS

/* One stored patch, compressed. */
typedef struct
{
  const guint8 *data;
  gsize size;
  guint width, height;          /* of the patch the stream holds */
  WsiPixelFormat format;        /* what to decode into */
} WsiCompressedPatch;

/* A decoded (part of a) patch: @width x @height pixels of the patch
 * scaled by 1 / @scale, @stride bytes a row; only the rectangle decoded is
 * valid. Points into the decoder's scratch: valid until its next decode. */
typedef struct
{
  const guint8 *data;
  gsize stride;
  guint width, height;
  guint bpp;
  guint scale;
  guint64 decoded;              /* pixels this decode wrote */
} WsiDecodedPatch;

/* What to decode for one location. */
typedef struct
{
  gboolean per_crop;            /* one decode per crop, of its region */
  guint whole_scale;            /* else: the whole patch at 1 / this */
} WsiCropPlan;

typedef struct _WsiCropDecoder WsiCropDecoder;

WsiCropDecoder *wsi_crop_decoder_new (void);
void wsi_crop_decoder_free (WsiCropDecoder * decoder);

/* The largest DCT scale in 1, 2, 4, 8 (at most @max_scale) at which @box
 * still covers @out_side x @out_side output pixels. */
guint wsi_crop_dct_scale (const WsiCropBox * box, guint out_side,
    guint max_scale);

/* The cheaper way to make @n_crops crops (@boxes, each to be decoded at
 * @scales[i]) of a @width x @height patch; @need_whole when another view
 * needs the whole patch at full size (then: one decode at scale 1). */
void wsi_crop_plan (guint width, guint height, const WsiCropBox * boxes,
    const guint * scales, guint n_crops, gboolean need_whole,
    WsiCropPlan * plan);

/* TRUE when wsi_crop_plan() is sure to pick one whole decode at full
 * scale for every location of @set, whatever the patch size and the
 * draws (crops decoded at scales up to @max_scale): a view is the patch
 * itself, or no crop can be DCT scaled and the cheapest boxes the crops
 * can draw already cost a whole decode in region decodes. Then decoding
 * the JPEG beside the crops gains nothing over pixels decoded upstream. */
gboolean wsi_crop_plan_always_whole (const WsiViewSet * set,
    guint max_scale);

/* Decodes @patch at 1 / @scale: the whole of it (@region NULL), or the
 * part the resampling of the crop @region (patch pixels) reads. FALSE
 * with @error (libjpeg's reason) on a damaged stream. */
gboolean wsi_crop_decoder_decode (WsiCropDecoder * decoder,
    const WsiCompressedPatch * patch, guint scale, const WsiCropBox * region,
    WsiDecodedPatch * out, GError ** error);

G_END_DECLS

#endif /* __WSI_CROP_DECODE_H__ */
