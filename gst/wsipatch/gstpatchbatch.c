/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-patchbatch
 * @title: patchbatch
 *
 * patchbatch stacks #GstPatchBatch:batch-size patches into one buffer, a
 * tall video frame `width = P`, `height = batch-size × P` in the input's
 * format (RGB, RGBA, RGBx or BGRx). The rows are tightly packed
 * (stride = P × bytes per pixel), so the buffer is a contiguous NHWC tensor
 * that stock elements (videoconvert, cudaupload, appsink) take unchanged and
 * that numpy or torch can wrap without a copy.
 *
 * Input patches whose rows are padded (a #GstVideoMeta stride, or the
 * default 4-byte-aligned stride of RGB) are copied row by row; tight ones in
 * one copy. Each patch is copied into the batch as it arrives: patches are
 * never queued.
 *
 * GStreamer's default stride for RGB is rounded up to a multiple of 4
 * bytes, so for RGB patches whose width is not a multiple of 4 the caps
 * alone would describe a padded layout. patchbatch always attaches a
 * #GstVideoMeta giving the real, tight stride; downstream elements that
 * honour #GstVideoMeta (all stock ones do) read it right. Patch sizes that
 * are multiples of 4 (224, 256, 512, ...) have no padding at all.
 *
 * Each batch carries one `WsiPatchMeta` with `count` = patches in the batch
 * and the records, slide paths and labels of the patches in order.
 * `GST_BUFFER_OFFSET` is the batch number (from 0) and
 * `GST_BUFFER_OFFSET_END` is offset + count; batch numbers restart after a
 * flush and after going back to READY. There are no timestamps.
 *
 * At EOS a last, shorter batch is pushed with caps of its own
 * (`height = n × P`), unless #GstPatchBatch:drop-remainder is set. A change
 * of input caps first pushes the batch in progress the same way. A flush
 * discards the batch in progress.
 *
 * Output memory comes from the buffer pool negotiated with the ALLOCATION
 * query (for instance pinned host memory from a CUDA upload element), or
 * from a #GstVideoBufferPool of its own when downstream offers none. At most
 * #GstPatchBatch:max-batches batches exist at once (in the pool, queued
 * downstream or held by the consumer): when the consumer pauses, patchbatch
 * waits for a batch to come back and the whole pipeline stops behind it, so
 * memory stays bounded whatever the consumer does. A consumer that keeps
 * more batches alive than that stalls the stream: it must copy them.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=100 ! \
 *     video/x-raw,format=RGB,width=256,height=256 ! \
 *     patchbatch batch-size=32 ! fakesink sync=false
 * ]| Stacks 256×256 RGB frames by 32 into 256×8192 frames (four batches,
 * then a short one of 4 patches).
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/video/video.h>
#include <gst/wsi/wsirecord.h>

#include "gstpatchbatch.h"

GST_DEBUG_CATEGORY_STATIC (gst_patch_batch_debug);
#define GST_CAT_DEFAULT gst_patch_batch_debug

#define DEFAULT_BATCH_SIZE 64
#define MAX_BATCH_SIZE 65536
#define DEFAULT_DROP_REMAINDER FALSE
#define DEFAULT_MAX_BATCHES 8
#define MAX_MAX_BATCHES 65536

#define PATCH_FORMATS "{ RGB, RGBA, RGBx, BGRx }"

enum
{
  PROP_0,
  PROP_BATCH_SIZE,
  PROP_DROP_REMAINDER,
  PROP_MAX_BATCHES,
  PROP_BATCHES_PUSHED,
};

struct _GstPatchBatch
{
  GstElement parent;

  GstPad *sinkpad;
  GstPad *srcpad;

  /* properties, under the object lock */
  guint batch_size;
  gboolean drop_remainder;
  guint max_batches;            /* 0 = unbounded */

  /* input layout, set by the CAPS event */
  GstVideoInfo in_info;
  gboolean have_in_info;
  gsize row_bytes;              /* tight bytes per patch row */
  gsize patch_bytes;            /* tight bytes per patch */

  GstCaps *src_caps;            /* caps last pushed downstream */
  guint64 batch_number;

  /* the batch being filled, kept mapped until it is pushed */
  GstBuffer *batch;
  GstMapInfo batch_map;
  guint capacity;               /* patches in a full batch */
  guint n_patches;
  WsiPatchRecord *records;      /* metadata of the batch, allocated once */
  const gchar **paths;          /* interned strings, NULL-terminated */
  const gchar **labels;
  guint arrays_capacity;
  const gchar *last_path;       /* interning cache: runs of one slide */
  const gchar *last_label;

  /* output memory; the object lock guards the pointer because FLUSH_START
   * (another thread) must unblock an acquire */
  GstBufferPool *pool;
  GstCaps *pool_caps;

  gint batches_pushed;          /* atomic */
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw, format = (string) " PATCH_FORMATS ", "
        "width = (int) [ 1, max ], height = (int) [ 1, max ]"));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw, format = (string) " PATCH_FORMATS ", "
        "width = (int) [ 1, max ], height = (int) [ 1, max ], "
        "framerate = (fraction) 0/1"));

#define gst_patch_batch_parent_class parent_class
G_DEFINE_TYPE (GstPatchBatch, gst_patch_batch, GST_TYPE_ELEMENT);

static void
do_element_init (GstPlugin * plugin)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_patch_batch_debug, "patchbatch", 0,
        "Stacks patches into batches");
    wsi_record_register_metas ();
    g_once_init_leave (&done, 1);
  }
}

GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (patchbatch, "patchbatch",
    GST_RANK_NONE, GST_TYPE_PATCH_BATCH, do_element_init (plugin));

/* ---- caps -------------------------------------------------------------- */

/* Caps of a batch of @n patches of the current input. */
static GstCaps *
batch_caps (GstPatchBatch * self, guint n)
{
  GstVideoInfo out;
  GstCaps *caps;

  gst_video_info_set_format (&out, GST_VIDEO_INFO_FORMAT (&self->in_info),
      GST_VIDEO_INFO_WIDTH (&self->in_info),
      n * GST_VIDEO_INFO_HEIGHT (&self->in_info));
  out.colorimetry = self->in_info.colorimetry;
  out.par_n = self->in_info.par_n;
  out.par_d = self->in_info.par_d;
  caps = gst_video_info_to_caps (&out);
  gst_caps_set_simple (caps, "framerate", GST_TYPE_FRACTION, 0, 1, NULL);
  return caps;
}

/* Pushes @caps (taken) downstream unless they are already there. */
static gboolean
push_src_caps (GstPatchBatch * self, GstCaps * caps)
{
  gboolean ok;

  if (self->src_caps && gst_caps_is_equal (caps, self->src_caps)) {
    gst_caps_unref (caps);
    return TRUE;
  }
  GST_DEBUG_OBJECT (self, "output caps %" GST_PTR_FORMAT, caps);
  gst_caps_replace (&self->src_caps, caps);
  ok = gst_pad_push_event (self->srcpad, gst_event_new_caps (caps));
  gst_caps_unref (caps);
  if (!ok)
    gst_caps_replace (&self->src_caps, NULL);
  return ok;
}

/* What the sink pad can take: whatever format and width downstream can
 * take for some height. */
static GstCaps *
sink_query_caps (GstPatchBatch * self, GstCaps * filter)
{
  GstCaps *templ = gst_pad_get_pad_template_caps (self->sinkpad);
  GstCaps *peer = gst_pad_peer_query_caps (self->srcpad, NULL);
  GstCaps *result;
  guint i;

  if (peer == NULL || gst_caps_is_any (peer)) {
    result = gst_caps_ref (templ);
  } else {
    peer = gst_caps_make_writable (peer);
    for (i = 0; i < gst_caps_get_size (peer); i++)
      gst_structure_remove_fields (gst_caps_get_structure (peer, i),
          "height", "framerate", NULL);
    result = gst_caps_intersect_full (templ, peer, GST_CAPS_INTERSECT_FIRST);
  }
  if (peer)
    gst_caps_unref (peer);
  gst_caps_unref (templ);

  if (filter) {
    GstCaps *filtered = gst_caps_intersect_full (filter, result,
        GST_CAPS_INTERSECT_FIRST);

    gst_caps_unref (result);
    result = filtered;
  }
  return result;
}

/* ---- output memory ----------------------------------------------------- */

static gboolean
configure_pool (GstBufferPool * pool, GstCaps * caps, guint size,
    guint min, guint max, GstAllocator * allocator,
    const GstAllocationParams * params)
{
  GstStructure *config = gst_buffer_pool_get_config (pool);

  gst_buffer_pool_config_set_params (config, caps, size, min, max);
  gst_buffer_pool_config_set_allocator (config, allocator, params);
  if (gst_buffer_pool_set_config (pool, config))
    return TRUE;

  /* the pool may have adjusted the config: accept it if it still fits */
  config = gst_buffer_pool_get_config (pool);
  if (!gst_buffer_pool_config_validate_params (config, caps, size, min, max)) {
    gst_structure_free (config);
    return FALSE;
  }
  return gst_buffer_pool_set_config (pool, config);
}

static void
replace_pool (GstPatchBatch * self, GstBufferPool * pool, GstCaps * caps)
{
  GstBufferPool *old;

  GST_OBJECT_LOCK (self);
  old = self->pool;
  self->pool = pool;
  gst_caps_replace (&self->pool_caps, caps);
  GST_OBJECT_UNLOCK (self);

  if (old) {
    gst_buffer_pool_set_active (old, FALSE);
    gst_object_unref (old);
  }
}

/* Asks downstream for a pool for batches with @caps; uses its pool and
 * allocator when it offers them (e.g. pinned memory for a GPU upload),
 * else a GstVideoBufferPool of our own. */
static gboolean
decide_allocation (GstPatchBatch * self, GstCaps * caps, gsize batch_bytes)
{
  GstQuery *query = gst_query_new_allocation (caps, TRUE);
  GstBufferPool *pool = NULL;
  GstAllocator *allocator = NULL;
  GstAllocationParams params;
  guint size = 0, min = 0, max = 0, max_batches;
  GstVideoInfo caps_info;
  gboolean ok;

  /* a video pool wants room for the default (possibly padded) layout */
  if (gst_video_info_from_caps (&caps_info, caps))
    batch_bytes = MAX (batch_bytes, GST_VIDEO_INFO_SIZE (&caps_info));
  /* let go of the current pool first: downstream may offer it again, and
   * an active pool cannot be reconfigured */
  replace_pool (self, NULL, NULL);

  gst_allocation_params_init (&params);
  if (!gst_pad_peer_query (self->srcpad, query))
    GST_DEBUG_OBJECT (self, "downstream did not answer the allocation query");

  if (gst_query_get_n_allocation_params (query) > 0)
    gst_query_parse_nth_allocation_param (query, 0, &allocator, &params);
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
  if (!gst_query_find_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL)
      && (gsize) GST_VIDEO_INFO_PLANE_STRIDE (&self->in_info, 0) !=
      self->row_bytes)
    GST_WARNING_OBJECT (self, "downstream does not announce GstVideoMeta "
        "support but the tight stride %" G_GSIZE_FORMAT " differs from the "
        "default one: use a patch width that is a multiple of 4",
        self->row_bytes);
  gst_query_unref (query);

  size = MAX (size, batch_bytes);
  GST_OBJECT_LOCK (self);
  max_batches = self->max_batches;
  GST_OBJECT_UNLOCK (self);
  /* Bounded memory: downstream's pool gets our bound too, unless its own is
   * tighter (it may need at least its min). */
  if (max_batches > 0 && (max == 0 || max > max_batches))
    max = MAX (max_batches, min);
  ok = pool && configure_pool (pool, caps, size, min, max, allocator, &params);
  if (pool && !ok) {
    GST_INFO_OBJECT (self, "downstream pool refused our config, using ours");
    gst_object_unref (pool);
  }
  if (!ok) {
    pool = gst_video_buffer_pool_new ();
    ok = configure_pool (pool, caps, batch_bytes, 0, max_batches, allocator,
        &params);
  }
  if (allocator)
    gst_object_unref (allocator);

  if (!ok || !gst_buffer_pool_set_active (pool, TRUE)) {
    gst_object_unref (pool);
    return FALSE;
  }
  GST_DEBUG_OBJECT (self, "using pool %" GST_PTR_FORMAT, pool);
  replace_pool (self, pool, caps);
  return TRUE;
}

/* ---- the batch in progress --------------------------------------------- */

static void
ensure_meta_arrays (GstPatchBatch * self, guint capacity)
{
  if (capacity <= self->arrays_capacity)
    return;
  self->records = g_renew (WsiPatchRecord, self->records, capacity);
  self->paths = g_renew (const gchar *, self->paths, capacity + 1);
  self->labels = g_renew (const gchar *, self->labels, capacity + 1);
  self->arrays_capacity = capacity;
}

static GstFlowReturn
start_batch (GstPatchBatch * self)
{
  GstFlowReturn ret;
  gsize batch_bytes;
  gboolean reconfigure;

  GST_OBJECT_LOCK (self);
  self->capacity = self->batch_size;
  GST_OBJECT_UNLOCK (self);
  ensure_meta_arrays (self, self->capacity);
  batch_bytes = self->capacity * self->patch_bytes;

  if (!push_src_caps (self, batch_caps (self, self->capacity)))
    return GST_FLOW_NOT_NEGOTIATED;

  /* always test (and so clear) the flag, which is set at link time */
  reconfigure = gst_pad_check_reconfigure (self->srcpad);
  if (reconfigure || self->pool == NULL
      || !gst_caps_is_equal (self->src_caps, self->pool_caps)) {
    if (!decide_allocation (self, self->src_caps, batch_bytes)) {
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
          ("Could not set up a buffer pool for batches of %u patches "
              "(%" G_GSIZE_FORMAT " bytes).", self->capacity, batch_bytes),
          (NULL));
      return GST_FLOW_ERROR;
    }
  }

  ret = gst_buffer_pool_acquire_buffer (self->pool, &self->batch, NULL);
  if (ret != GST_FLOW_OK)
    return ret;
  if (gst_buffer_get_size (self->batch) < batch_bytes
      || !gst_buffer_map (self->batch, &self->batch_map, GST_MAP_WRITE)) {
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
        ("Could not write into a batch buffer of %" G_GSIZE_FORMAT " bytes.",
            batch_bytes), (NULL));
    gst_clear_buffer (&self->batch);
    return GST_FLOW_ERROR;
  }
  self->n_patches = 0;
  return GST_FLOW_OK;
}

static void
discard_batch (GstPatchBatch * self)
{
  if (self->batch == NULL)
    return;
  GST_DEBUG_OBJECT (self, "discarding a batch of %u patches", self->n_patches);
  gst_buffer_unmap (self->batch, &self->batch_map);
  gst_clear_buffer (&self->batch);
  self->n_patches = 0;
}

/* Describes the tight layout of the first @n patches of @buf. */
static void
set_batch_layout (GstPatchBatch * self, GstBuffer * buf, guint n)
{
  GstVideoFormat format = GST_VIDEO_INFO_FORMAT (&self->in_info);
  guint width = GST_VIDEO_INFO_WIDTH (&self->in_info);
  guint height = n * GST_VIDEO_INFO_HEIGHT (&self->in_info);
  gsize offset[GST_VIDEO_MAX_PLANES] = { 0, };
  gint stride[GST_VIDEO_MAX_PLANES] = { (gint) self->row_bytes, };
  GstVideoMeta *vmeta;

  gst_buffer_set_size (buf, n * self->patch_bytes);
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

/* Hands the batch in progress downstream; a batch shorter than the
 * capacity gets caps of its own first. */
static GstFlowReturn
push_batch (GstPatchBatch * self)
{
  GstBuffer *buf = self->batch;
  guint n = self->n_patches;
  GstFlowReturn ret;

  gst_buffer_unmap (buf, &self->batch_map);
  self->batch = NULL;
  self->n_patches = 0;

  set_batch_layout (self, buf, n);
  self->paths[n] = NULL;
  self->labels[n] = NULL;
  wsi_patch_meta_add (buf, self->records, n, self->paths, self->labels);
  GST_BUFFER_OFFSET (buf) = self->batch_number;
  GST_BUFFER_OFFSET_END (buf) = self->batch_number + n;
  self->batch_number++;

  if (n < self->capacity && !push_src_caps (self, batch_caps (self, n))) {
    GST_ELEMENT_WARNING (self, CORE, NEGOTIATION,
        ("Downstream refused the caps of a short batch (%u patches "
            "instead of %u): these patches are dropped.", n, self->capacity),
        ("use drop-remainder=true to drop short batches on purpose"));
    gst_buffer_unref (buf);
    return GST_FLOW_OK;
  }

  GST_LOG_OBJECT (self, "pushing batch %" G_GUINT64_FORMAT " of %u patches",
      GST_BUFFER_OFFSET (buf), n);
  ret = gst_pad_push (self->srcpad, buf);
  if (ret == GST_FLOW_OK)
    g_atomic_int_inc (&self->batches_pushed);
  return ret;
}

/* ---- one patch --------------------------------------------------------- */

/* Finds where the rows of @patch are; FALSE when it is too small. */
static gboolean
patch_layout (GstPatchBatch * self, GstBuffer * patch, gsize size,
    gsize * offset, gsize * stride)
{
  GstVideoMeta *vmeta = gst_buffer_get_video_meta (patch);
  guint height = GST_VIDEO_INFO_HEIGHT (&self->in_info);

  if (vmeta) {
    *offset = vmeta->offset[0];
    *stride = vmeta->stride[0];
  } else if (size < GST_VIDEO_INFO_SIZE (&self->in_info)
      && size == self->patch_bytes) {
    /* tight RGB rows without a meta: take them as they are */
    *offset = 0;
    *stride = self->row_bytes;
  } else {
    *offset = GST_VIDEO_INFO_PLANE_OFFSET (&self->in_info, 0);
    *stride = GST_VIDEO_INFO_PLANE_STRIDE (&self->in_info, 0);
  }
  return *stride >= self->row_bytes
      && size >= *offset + (height - 1) * *stride + self->row_bytes;
}

static gboolean
copy_patch_pixels (GstPatchBatch * self, GstBuffer * patch)
{
  guint8 *dest = self->batch_map.data + self->n_patches * self->patch_bytes;
  guint height = GST_VIDEO_INFO_HEIGHT (&self->in_info);
  gsize offset, stride;
  GstMapInfo map;
  gboolean ok;
  guint row;

  if (!gst_buffer_map (patch, &map, GST_MAP_READ))
    return FALSE;
  ok = patch_layout (self, patch, map.size, &offset, &stride);
  if (ok && stride == self->row_bytes) {
    memcpy (dest, map.data + offset, self->patch_bytes);
  } else if (ok) {
    for (row = 0; row < height; row++)
      memcpy (dest + row * self->row_bytes, map.data + offset + row * stride,
          self->row_bytes);
  }
  gst_buffer_unmap (patch, &map);
  return ok;
}

static const gchar *
intern_cached (const gchar * str, const gchar ** cache)
{
  if (str == NULL)
    str = "";
  /* consecutive patches mostly share a slide: skip the global table */
  if (*cache == NULL || strcmp (*cache, str) != 0)
    *cache = g_intern_string (str);
  return *cache;
}

static void
copy_patch_meta (GstPatchBatch * self, GstBuffer * patch)
{
  GstStructure *meta = wsi_patch_meta_get (patch);
  WsiPatchRecord *record = &self->records[self->n_patches];
  const WsiPatchRecord *records = NULL;
  const gchar *path = NULL, *label = NULL;
  guint n = 0;

  if (meta) {
    records = wsi_patch_meta_records (meta, &n);
    path = wsi_patch_meta_string (meta, "paths", 0);
    label = wsi_patch_meta_string (meta, "labels", 0);
  }
  if (n > 0) {
    *record = records[0];
  } else {
    memset (record, 0, sizeof (*record));
    record->sequence = GST_BUFFER_OFFSET (patch);
    record->level = WSI_LEVEL_UNSET;
  }
  self->paths[self->n_patches] = intern_cached (path, &self->last_path);
  self->labels[self->n_patches] = intern_cached (label, &self->last_label);
}

static GstFlowReturn
gst_patch_batch_chain (GstPad * pad, GstObject * parent, GstBuffer * patch)
{
  GstPatchBatch *self = GST_PATCH_BATCH (parent);
  GstFlowReturn ret = GST_FLOW_OK;

  if (!self->have_in_info) {
    gst_buffer_unref (patch);
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Received a patch before its caps."), (NULL));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (self->batch == NULL && (ret = start_batch (self)) != GST_FLOW_OK) {
    gst_buffer_unref (patch);
    return ret;
  }

  if (!copy_patch_pixels (self, patch)) {
    GstStructure *meta = wsi_patch_meta_get (patch);
    const gchar *path = meta ? wsi_patch_meta_string (meta, "paths", 0) : NULL;

    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("A %dx%d %s patch of slide %s is only %" G_GSIZE_FORMAT " bytes, "
            "too small for its caps.", GST_VIDEO_INFO_WIDTH (&self->in_info),
            GST_VIDEO_INFO_HEIGHT (&self->in_info),
            GST_VIDEO_INFO_NAME (&self->in_info), path ? path : "(unknown)",
            gst_buffer_get_size (patch)), (NULL));
    gst_buffer_unref (patch);
    return GST_FLOW_ERROR;
  }
  copy_patch_meta (self, patch);
  gst_buffer_unref (patch);

  if (++self->n_patches == self->capacity)
    ret = push_batch (self);
  return ret;
}

/* ---- events and queries ------------------------------------------------ */

static gboolean
same_layout (const GstVideoInfo * a, const GstVideoInfo * b)
{
  return GST_VIDEO_INFO_FORMAT (a) == GST_VIDEO_INFO_FORMAT (b)
      && GST_VIDEO_INFO_WIDTH (a) == GST_VIDEO_INFO_WIDTH (b)
      && GST_VIDEO_INFO_HEIGHT (a) == GST_VIDEO_INFO_HEIGHT (b);
}

static gboolean
set_input_caps (GstPatchBatch * self, GstCaps * caps)
{
  GstVideoInfo info;

  if (!gst_video_info_from_caps (&info, caps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Patch caps %" GST_PTR_FORMAT " are not raw video.", caps), (NULL));
    return FALSE;
  }
  /* a new size or format cannot join the batch so far: push it as it is
   * (a change of framerate or colorimetry alone keeps it going) */
  if (self->batch != NULL && !same_layout (&info, &self->in_info)
      && push_batch (self) != GST_FLOW_OK)
    GST_DEBUG_OBJECT (self, "short batch before a caps change not taken");

  self->in_info = info;
  self->have_in_info = TRUE;
  self->row_bytes = (gsize) GST_VIDEO_INFO_WIDTH (&info) *
      GST_VIDEO_INFO_COMP_PSTRIDE (&info, 0);
  self->patch_bytes = self->row_bytes * GST_VIDEO_INFO_HEIGHT (&info);

  /* the capacity of a batch in progress is fixed until it is pushed */
  if (self->batch == NULL) {
    GST_OBJECT_LOCK (self);
    self->capacity = self->batch_size;
    GST_OBJECT_UNLOCK (self);
  }
  /* announce the batch caps now, so that SEGMENT follows CAPS */
  return push_src_caps (self, batch_caps (self, self->capacity));
}

static void
drain_at_eos (GstPatchBatch * self)
{
  gboolean drop;
  GstFlowReturn ret;

  if (self->batch == NULL)
    return;
  GST_OBJECT_LOCK (self);
  drop = self->drop_remainder;
  GST_OBJECT_UNLOCK (self);

  if (drop) {
    discard_batch (self);
    return;
  }
  ret = push_batch (self);
  if (ret == GST_FLOW_NOT_LINKED || ret < GST_FLOW_EOS)
    GST_ELEMENT_FLOW_ERROR (self, ret);
}

static void
set_pool_flushing (GstPatchBatch * self, gboolean flushing)
{
  GstBufferPool *pool;

  GST_OBJECT_LOCK (self);
  pool = self->pool ? gst_object_ref (self->pool) : NULL;
  GST_OBJECT_UNLOCK (self);
  if (pool) {
    gst_buffer_pool_set_flushing (pool, flushing);
    gst_object_unref (pool);
  }
}

/* Every patch planned before @check reached us (or was reported dropped
 * upstream): say so to the planner and keep the check to ourselves. */
static gboolean
acknowledge_delivery_check (GstPatchBatch * self, GstEvent * check)
{
  guint round = 0;

  gst_structure_get_uint (gst_event_get_structure (check), "round", &round);
  gst_event_unref (check);
  GST_LOG_OBJECT (self, "delivery check %u: acknowledged", round);
  return gst_pad_push_event (self->sinkpad,
      gst_event_new_custom (GST_EVENT_CUSTOM_UPSTREAM,
          gst_structure_new (WSI_DELIVERY_ACK_EVENT, "round", G_TYPE_UINT,
              round, NULL)));
}

static gboolean
gst_patch_batch_sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  GstPatchBatch *self = GST_PATCH_BATCH (parent);
  GstCaps *caps;
  gboolean ok;

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:
      gst_event_parse_caps (event, &caps);
      ok = set_input_caps (self, caps);
      gst_event_unref (event);
      return ok;
    case GST_EVENT_CUSTOM_DOWNSTREAM:
      if (gst_event_has_name (event, WSI_DELIVERY_CHECK_EVENT))
        return acknowledge_delivery_check (self, event);
      break;
    case GST_EVENT_EOS:
      drain_at_eos (self);
      break;
    case GST_EVENT_FLUSH_START:
      /* unblock a chain function waiting for a free batch buffer */
      set_pool_flushing (self, TRUE);
      break;
    case GST_EVENT_FLUSH_STOP:
      discard_batch (self);
      self->batch_number = 0;
      set_pool_flushing (self, FALSE);
      break;
    default:
      break;
  }
  return gst_pad_event_default (pad, parent, event);
}

static gboolean
gst_patch_batch_sink_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  GstPatchBatch *self = GST_PATCH_BATCH (parent);
  GstCaps *filter, *caps;

  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_CAPS:
      gst_query_parse_caps (query, &filter);
      caps = sink_query_caps (self, filter);
      gst_query_set_caps_result (query, caps);
      gst_caps_unref (caps);
      return TRUE;
    case GST_QUERY_CUSTOM:
      /* We answer delivery checks (we are the last to see patches). */
      if (gst_structure_has_name (gst_query_get_structure (query),
              WSI_DELIVERY_QUERY)) {
        gst_structure_set (gst_query_writable_structure (query),
            "answered", G_TYPE_BOOLEAN, TRUE, NULL);
        return TRUE;
      }
      return gst_pad_query_default (pad, parent, query);
    case GST_QUERY_ALLOCATION:
      /* patches are copied, so any memory will do; padded rows too */
      gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
      return TRUE;
    default:
      return gst_pad_query_default (pad, parent, query);
  }
}

/* ---- GObject / GstElement ---------------------------------------------- */

static void
reset_stream (GstPatchBatch * self)
{
  discard_batch (self);
  replace_pool (self, NULL, NULL);
  gst_caps_replace (&self->src_caps, NULL);
  self->have_in_info = FALSE;
  self->batch_number = 0;
}

static GstStateChangeReturn
gst_patch_batch_change_state (GstElement * element, GstStateChange transition)
{
  GstPatchBatch *self = GST_PATCH_BATCH (element);
  GstStateChangeReturn ret;

  switch (transition) {
    case GST_STATE_CHANGE_READY_TO_PAUSED:
      g_atomic_int_set (&self->batches_pushed, 0);
      break;
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      /* a chain function may wait in acquire: wake it before pads stop */
      set_pool_flushing (self, TRUE);
      break;
    default:
      break;
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  if (ret == GST_STATE_CHANGE_FAILURE)
    return ret;

  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    reset_stream (self);
  return ret;
}

static void
gst_patch_batch_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstPatchBatch *self = GST_PATCH_BATCH (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_BATCH_SIZE:
      self->batch_size = g_value_get_uint (value);
      break;
    case PROP_DROP_REMAINDER:
      self->drop_remainder = g_value_get_boolean (value);
      break;
    case PROP_MAX_BATCHES:
      self->max_batches = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_batch_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstPatchBatch *self = GST_PATCH_BATCH (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_BATCH_SIZE:
      g_value_set_uint (value, self->batch_size);
      break;
    case PROP_DROP_REMAINDER:
      g_value_set_boolean (value, self->drop_remainder);
      break;
    case PROP_MAX_BATCHES:
      g_value_set_uint (value, self->max_batches);
      break;
    case PROP_BATCHES_PUSHED:
      g_value_set_uint (value,
          (guint) g_atomic_int_get (&self->batches_pushed));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_batch_finalize (GObject * object)
{
  GstPatchBatch *self = GST_PATCH_BATCH (object);

  reset_stream (self);
  g_free (self->records);
  g_free (self->paths);
  g_free (self->labels);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_patch_batch_class_init (GstPatchBatchClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->set_property = gst_patch_batch_set_property;
  gobject_class->get_property = gst_patch_batch_get_property;
  gobject_class->finalize = gst_patch_batch_finalize;

  g_object_class_install_property (gobject_class, PROP_BATCH_SIZE,
      g_param_spec_uint ("batch-size", "Batch size",
          "Patches stacked into one output frame (patches, 1 to 65536, "
          "default 64); a change applies from the next batch",
          1, MAX_BATCH_SIZE, DEFAULT_BATCH_SIZE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));

  g_object_class_install_property (gobject_class, PROP_DROP_REMAINDER,
      g_param_spec_boolean ("drop-remainder", "Drop remainder",
          "Drop the last batch at EOS when it holds fewer than batch-size "
          "patches, instead of pushing it with its own caps "
          "(boolean, default false)", DEFAULT_DROP_REMAINDER,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));

  g_object_class_install_property (gobject_class, PROP_MAX_BATCHES,
      g_param_spec_uint ("max-batches", "Max batches",
          "Most batches in existence at once (in the pool, queued "
          "downstream, held by the consumer): the memory bound of the "
          "output, max-batches x batch bytes. When all are out, patchbatch "
          "waits and the pipeline stops behind it. 0 = unbounded. "
          "Range 0..65536, default 8; applies at the next negotiation",
          0, MAX_MAX_BATCHES, DEFAULT_MAX_BATCHES,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  g_object_class_install_property (gobject_class, PROP_BATCHES_PUSHED,
      g_param_spec_uint ("batches-pushed", "Batches pushed",
          "Batches accepted downstream since the element left READY, short "
          "ones included (read-only, batches)", 0, G_MAXUINT, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Patch batcher", "Filter/Converter/Video",
      "Stacks patches into one tall, tightly packed frame per batch "
      "(NHWC) with the records of all its patches",
      "gst-wsi developers");

  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_patch_batch_change_state);
}

static void
gst_patch_batch_init (GstPatchBatch * self)
{
  self->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_patch_batch_chain));
  gst_pad_set_event_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_patch_batch_sink_event));
  gst_pad_set_query_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_patch_batch_sink_query));
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);

  self->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  gst_pad_use_fixed_caps (self->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  self->batch_size = DEFAULT_BATCH_SIZE;
  self->drop_remainder = DEFAULT_DROP_REMAINDER;
  self->max_batches = DEFAULT_MAX_BATCHES;
}
