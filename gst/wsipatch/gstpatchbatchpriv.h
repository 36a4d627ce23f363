/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * gstpatchbatchpriv.h: patchbatch's instance, shared by the element
 * (gstpatchbatch.c: pads, caps, events, properties, state changes), its
 * output memory (wsibatchalloc.c) and the batch it fills
 * (wsibatchfill.c). Nothing outside patchbatch includes it. The fields
 * say which lock guards them.
 */

#ifndef __GST_PATCH_BATCH_PRIV_H__
#define __GST_PATCH_BATCH_PRIV_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "wsibatchformat.h"
#include "wsibatchmeta.h"
#include "wsinormalize.h"
#include "wsistreamstats.h"

G_BEGIN_DECLS

/* the same typedef as gstpatchbatch.h's G_DECLARE_FINAL_TYPE (C11 allows
 * it twice), so the parts need no header of the element */
typedef struct _GstPatchBatch GstPatchBatch;

GST_DEBUG_CATEGORY_EXTERN (gst_patch_batch_debug);

/* a GstBuffer holds at most 16 memories, one per view */
#define MAX_VIEWS WSI_BATCH_MAX_VIEWS

/* Per-channel statistics as set (1 to 4 values). */
typedef struct
{
  gdouble values[WSI_NORMALIZE_MAX_CHANNELS];
  guint n;
} ChannelValues;

struct _GstPatchBatch
{
  GstElement parent;

  GstPad *sinkpad;
  GstPad *srcpad;

  /* properties, under the object lock */
  guint batch_size;
  gboolean drop_remainder;
  guint max_batches;            /* 0 = unbounded */
  gboolean normalize;
  ChannelValues mean;
  ChannelValues std;

  /* input layout, set by the CAPS event */
  gboolean have_in_info;
  WsiBatchLayout layout;        /* wsibatchformat.h */

  GstCaps *src_caps;            /* caps last pushed downstream */
  guint64 batch_number;

  /* the batch being filled, kept mapped until it is pushed */
  GstBuffer *batch;
  GstMapInfo maps[MAX_VIEWS];   /* video uint8: maps[0] maps the buffer */
  guint capacity;               /* locations in a full batch */
  WsiBatchMeta meta;            /* meta.n = locations so far */
  gboolean stream_copy;         /* copies bypass the caches (wsibatchcopy.h) */

  /* output memory; the object lock guards the pointer because FLUSH_START
   * (another thread) must unblock an acquire */
  GstBufferPool *pool;
  GstCaps *pool_caps;
  guint pool_capacity;

  gint batches_pushed;          /* atomic */
  WsiStreamStats *stats;        /* stats-interval messages */
};

/* Pushes @caps downstream when they differ from the last pushed
 * (gstpatchbatch.c). */
gboolean patch_batch_push_src_caps (GstPatchBatch * self, GstCaps * caps);

G_END_DECLS

#endif /* __GST_PATCH_BATCH_PRIV_H__ */
