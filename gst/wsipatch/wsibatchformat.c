/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsibatchformat.c: patchbatch's output formats (see wsibatchformat.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/wsi/wsirecord.h>

#include "wsibatchformat.h"

/* uint8 video batches: one tall frame in a video pool; everything else
 * (views, floats): one memory per plane in a planar pool. */
gboolean
wsi_batch_layout_video_output (const WsiBatchLayout * l)
{
  return !l->views_input && !l->normalizing;
}

/* Caps of a batch of @n patches of layout @l. */
GstCaps *
wsi_batch_layout_caps (const WsiBatchLayout * l, guint n)
{
  GstVideoInfo out;
  GstCaps *caps;

  if (l->normalizing) {
    caps = gst_caps_new_simple (WSI_TENSOR_MEDIA_TYPE,
        "dtype", G_TYPE_STRING, "float32", "layout", G_TYPE_STRING, "NCHW",
        "channels", G_TYPE_INT, (gint) l->norm.n_channels,
        "n-views", G_TYPE_INT, (gint) l->n_planes, NULL);
    if (!l->views_input)
      gst_caps_set_simple (caps, "width", G_TYPE_INT, (gint) l->width[0],
          "height", G_TYPE_INT, (gint) l->height[0], NULL);
    return caps;
  }
  if (l->views_input)
    return gst_caps_new_simple (WSI_VIEWS_MEDIA_TYPE, "format", G_TYPE_STRING,
        GST_VIDEO_INFO_NAME (&l->in_info), "n-views", G_TYPE_INT,
        (gint) l->n_planes, NULL);

  gst_video_info_set_format (&out, GST_VIDEO_INFO_FORMAT (&l->in_info),
      GST_VIDEO_INFO_WIDTH (&l->in_info),
      n * GST_VIDEO_INFO_HEIGHT (&l->in_info));
  out.colorimetry = l->in_info.colorimetry;
  out.par_n = l->in_info.par_n;
  out.par_d = l->in_info.par_d;
  caps = gst_video_info_to_caps (&out);
  gst_caps_set_simple (caps, "framerate", GST_TYPE_FRACTION, 0, 1, NULL);
  return caps;
}

/* Bytes of a full batch of @capacity locations. */
gsize
wsi_batch_layout_bytes (const WsiBatchLayout * l, guint capacity)
{
  gsize total = 0;
  guint i;

  for (i = 0; i < l->n_planes; i++)
    total += capacity * l->out_bytes[i];
  return total;
}

/* Describes the tight layout of the first @n patches of @buf. */
void
wsi_batch_layout_set_video_meta (const WsiBatchLayout * l, GstBuffer * buf,
    guint n)
{
  GstVideoFormat format = GST_VIDEO_INFO_FORMAT (&l->in_info);
  guint width = GST_VIDEO_INFO_WIDTH (&l->in_info);
  guint height = n * GST_VIDEO_INFO_HEIGHT (&l->in_info);
  gsize offset[GST_VIDEO_MAX_PLANES] = { 0, };
  gint stride[GST_VIDEO_MAX_PLANES] = { (gint) l->row_bytes, };
  GstVideoMeta *vmeta;

  gst_buffer_set_size (buf, n * l->patch_bytes);
  /* a pool of downstream's may have added a meta for its own layout */
  vmeta = gst_buffer_get_video_meta (buf);
  if (vmeta == NULL) {
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE, format,
        width, height, 1, offset, stride);
    return;
  }
  vmeta->format = format;
  vmeta->width = width;
  vmeta->height = height;
  vmeta->n_planes = 1;
  vmeta->offset[0] = 0;
  vmeta->stride[0] = stride[0];
}

/* A planar batch of @n locations out of a full one: each memory cut to
 * its first n images. The pool's buffer is not reused (its memories are
 * shared now); short batches only end streams. */
GstBuffer *
wsi_batch_layout_cut_planar (const WsiBatchLayout * l, GstBuffer * full,
    guint n)
{
  GstBuffer *buf = gst_buffer_new ();
  guint i;

  for (i = 0; i < l->n_planes; i++) {
    GstMemory *mem = gst_buffer_peek_memory (full, i);
    gsize size = n * l->out_bytes[i];
    GstMemory *part = GST_MEMORY_FLAG_IS_SET (mem, GST_MEMORY_FLAG_NO_SHARE)
        ? NULL : gst_memory_share (mem, 0, size);

    /* an allocator of downstream's may refuse sharing: copy then */
    gst_buffer_append_memory (buf, part ? part : gst_memory_copy (mem, 0,
            size));
  }
  gst_buffer_unref (full);
  return buf;
}

/* Output channels of @format for float batches: the colour channels in
 * RGB order (alpha and padding dropped), or the grey one. */
guint
wsi_batch_channel_offsets (GstVideoFormat format, guint * offset)
{
  switch (format) {
    case GST_VIDEO_FORMAT_GRAY8:
      offset[0] = 0;
      return 1;
    case GST_VIDEO_FORMAT_BGRx:
      offset[0] = 2;
      offset[1] = 1;
      offset[2] = 0;
      return 3;
    default:                   /* RGB, RGBA, RGBx */
      offset[0] = 0;
      offset[1] = 1;
      offset[2] = 2;
      return 3;
  }
}
