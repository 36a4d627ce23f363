/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsibatchformat.h: patchbatch's three output formats, from the layout of
 * its input — uint8 NHWC video (one tall frame of n patches), views
 * (`application/x-wsi-views`: one memory per view, NHWC) and float NCHW
 * tensors (`normalize=true`, one memory per view).
 *
 * Contract: a WsiBatchLayout is what a CAPS event told patchbatch about
 * its patches (filled by the element: in_info, views_input, n_planes,
 * normalizing, norm, and the derived sizes; for views the per-plane sizes
 * come with the first buffer). From it: the caps of a batch of n
 * locations (wsi_batch_layout_caps(), the formats of docs/data-formats.md),
 * the bytes of a full batch, whether the batch is one video frame (a video
 * pool) or planar (wsiplanarpool.h), the GstVideoMeta of a video batch of
 * n patches (rows tight), and a short planar batch cut out of a full one.
 * wsi_batch_channel_offsets() gives the channels a float batch keeps, in
 * RGB order (alpha and padding dropped), or the grey one.
 *
 * Cost: constant per batch, except wsi_batch_layout_cut_planar(), which
 * shares each memory (or copies it when its allocator refuses sharing):
 * only the last, short batch of a stream pays it.
 *
 * Threading: a layout belongs to the streaming thread that set it; these
 * functions keep no state.
 */

#ifndef __WSI_BATCH_FORMAT_H__
#define __WSI_BATCH_FORMAT_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "wsinormalize.h"

G_BEGIN_DECLS

/* Most views one batch carries (one memory each). */
#define WSI_BATCH_MAX_VIEWS 16

typedef struct
{
  gboolean views_input;         /* application/x-wsi-views */
  GstVideoInfo in_info;         /* video patches; views: format only */
  gsize row_bytes;              /* video: tight bytes per patch row */
  gsize patch_bytes;            /* video: tight bytes per patch */
  guint n_planes;               /* output memories: 1, or n-views */
  guint pixel_bytes;
  /* per plane: one image's size, input and output bytes (views: learnt
   * from the first buffer, 0 before) */
  guint width[WSI_BATCH_MAX_VIEWS], height[WSI_BATCH_MAX_VIEWS];
  gsize in_bytes[WSI_BATCH_MAX_VIEWS], out_bytes[WSI_BATCH_MAX_VIEWS];
  gboolean normalizing;         /* float output for this stream */
  WsiNormalize norm;
} WsiBatchLayout;

gboolean wsi_batch_layout_video_output (const WsiBatchLayout * l);

GstCaps *wsi_batch_layout_caps (const WsiBatchLayout * l, guint n);

gsize wsi_batch_layout_bytes (const WsiBatchLayout * l, guint capacity);

void wsi_batch_layout_set_video_meta (const WsiBatchLayout * l,
    GstBuffer * buf, guint n);

GstBuffer *wsi_batch_layout_cut_planar (const WsiBatchLayout * l,
    GstBuffer * full, guint n);

guint wsi_batch_channel_offsets (GstVideoFormat format, guint * offset);

G_END_DECLS

#endif /* __WSI_BATCH_FORMAT_H__ */
