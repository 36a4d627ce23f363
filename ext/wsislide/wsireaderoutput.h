/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsireaderoutput.h: patchreader's output — the caps of its patches and the
 * buffer pool they are decoded into.
 *
 * Contract: wsi_reader_output_set_size() sets the output up for square
 * patches of @size: RGB when downstream takes it, else the format of
 * RGB, RGBA, RGBx or BGRx downstream prefers (fixated), pushed as a caps
 * event on @srcpad, then buffers from downstream's pool when it offers one
 * that takes our configuration (with GstVideoMeta when downstream asks),
 * else our own video pool; the previous pool is deactivated. It fails with
 * GST_FLOW_NOT_NEGOTIATED (no format downstream takes) or GST_FLOW_ERROR
 * (no pool), the error posted on @element naming the size. The caller
 * drains its ring first, so that every earlier patch leaves with the caps
 * it was made for. wsi_reader_output_set_flushing() unblocks (or blocks
 * again) a chain waiting for a free buffer; wsi_reader_output_stop() drops
 * the pool and the caps.
 *
 * Cost: a caps query and an allocation query per size change (once per
 * stream in practice); nothing per patch but a pool reference.
 *
 * Threading: the pool is swapped under the output's lock (the streaming
 * thread sets it up, flushes and state changes deactivate it); vinfo,
 * format and size change only on the streaming thread with an empty ring,
 * so the workers read them without a lock.
 */

#ifndef __WSI_READER_OUTPUT_H__
#define __WSI_READER_OUTPUT_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "wsislide.h"

G_BEGIN_DECLS

#define WSI_READER_OUTPUT_FORMATS "{ RGB, RGBA, RGBx, BGRx }"

typedef struct
{
  GMutex lock;                  /* guards pool */
  GstBufferPool *pool;
  GstVideoInfo vinfo;           /* of the patches, once negotiated */
  WsiPixelFormat format;
  guint size;                   /* patch side the caps are for, 0 = none */
} WsiReaderOutput;

void wsi_reader_output_init (WsiReaderOutput * out);
void wsi_reader_output_clear (WsiReaderOutput * out);

GstFlowReturn wsi_reader_output_set_size (WsiReaderOutput * out,
    GstElement * element, GstPad * srcpad, guint size);

/* The pool (a reference), or NULL when there is none (flushing, stopped). */
GstBufferPool *wsi_reader_output_ref_pool (WsiReaderOutput * out);
void wsi_reader_output_set_flushing (WsiReaderOutput * out,
    gboolean flushing);
void wsi_reader_output_stop (WsiReaderOutput * out);

G_END_DECLS

#endif /* __WSI_READER_OUTPUT_H__ */
