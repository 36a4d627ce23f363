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
 * and the records, slide paths and labels of the patches in order, each
 * slide's `uris` entry and level-0 `mpps` (when the patches carry them),
 * plus the slide columns (`column-names` once, `column-values` count × columns) when
 * the patches carry them (record version 2, docs/data-formats.md).
 * `GST_BUFFER_OFFSET` is the batch number (from 0) and
 * `GST_BUFFER_OFFSET_END` is offset + count; batch numbers restart after a
 * flush and after going back to READY. There are no timestamps.
 *
 * ## Multi-view input
 *
 * `application/x-wsi-views` buffers (from patchviews: one location, n views,
 * one GstMemory per view) are batched by location: a batch of B locations
 * has one GstMemory per view, memory v holding the B images of view v back
 * to back (NHWC, tight rows), so each view is one array aligned on the same
 * locations. The caps stay `application/x-wsi-views` (format, n-views); the
 * meta holds B records, paths and labels (once per location), the
 * `view-names` and the B × n-views view records. Every location of a
 * stream must have the same view sizes.
 *
 * ## Normalised float output
 *
 * With #GstPatchBatch:normalize, batches are float32 NCHW instead, each
 * value (pixel / 255 − mean[c]) / std[c] with #GstPatchBatch:mean and
 * #GstPatchBatch:std (ImageNet's by default), for training on the CPU.
 * Caps `application/x-wsi-tensor, dtype=float32, layout=NCHW, channels=C,
 * n-views=N` (plus `width` and `height` for video patches): one GstMemory
 * per view of count × C × H × W floats. RGB, RGBA, RGBx and BGRx give the
 * three colour channels in RGB order (alpha and padding dropped), GRAY8
 * one. GPU users keep uint8 NHWC and normalise on the GPU (docs/python.md):
 * it moves 4 times fewer bytes.
 *
 * At EOS a last, shorter batch is pushed (video: with caps of its own,
 * `height = n × P`; others: the same caps, the meta's count tells), unless
 * #GstPatchBatch:drop-remainder is set. A change of input caps first pushes
 * the batch in progress the same way. A flush discards the batch in
 * progress.
 *
 * Output memory comes from the buffer pool negotiated with the ALLOCATION
 * query (for instance pinned host memory from a CUDA upload element), or
 * from a #GstVideoBufferPool of its own when downstream offers none
 * (multi-view and float batches: a pool of their own, with downstream's
 * allocator). At most #GstPatchBatch:max-batches batches exist at once (in
 * the pool, queued downstream or held by the consumer): when the consumer
 * pauses, patchbatch waits for a batch to come back and the whole pipeline
 * stops behind it, so memory stays bounded whatever the consumer does. A
 * consumer that keeps more batches alive than that stalls the stream: it
 * must copy them.
 *
 * With #GstPatchBatch:stats-interval set, a `wsi-stream-stats` element
 * message is posted every that many milliseconds and at EOS: patches
 * delivered, their tissue fraction mean, an mpp histogram, per-label and
 * per-column counts, and the slide and patch counters of the elements
 * upstream (docs/design.md, "Stream statistics").
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=100 ! \
 *     video/x-raw,format=RGB,width=256,height=256 ! \
 *     patchbatch batch-size=32 ! fakesink sync=false
 * ]| Stacks 256×256 RGB frames by 32 into 256×8192 frames (four batches,
 * then a short one of 4 patches).
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=64 ! \
 *     video/x-raw,format=RGBx,width=224,height=224 ! \
 *     patchbatch batch-size=16 normalize=true \
 *     mean="<0.5,0.5,0.5>" std="<0.25,0.25,0.25>" ! fakesink sync=false
 * ]| Four float32 batches of shape (16, 3, 224, 224).
 * |[
 * gst-launch-1.0 wsislidesrc location=slides/ ! tissuemask ! queue ! \
 *     patchsampler patch-size=256 target-mpp=0.5 ! patchinterleave ! \
 *     patchreader ! patchviews preset=dinov2 ! queue ! \
 *     patchbatch batch-size=32 ! fakesink sync=false
 * ]| DINOv2 multi-crop batches: 10 memories a batch, (32, 224, 224, 3) for
 * global_0 and global_1, (32, 96, 96, 3) for local_0 to local_7.
 * |[
 * gst-launch-1.0 -m wsislidesrc location=slides/ ! tissuemask ! queue ! \
 *     patchsampler ! patchinterleave ! patchreader ! queue ! \
 *     patchbatch stats-interval=1000 ! fakesink sync=false
 * ]| Prints a `wsi-stream-stats` message every second (`-m`).
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <gst/video/video.h>
#include <gst/wsi/wsierrorrelay.h>
#include <gst/wsi/wsievent.h>
#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsirefusal.h>

#include "gstpatchbatch.h"
#include "gstpatchbatchpriv.h"
#include "wsibatchalloc.h"
#include "wsibatchfill.h"
#include "gstwsipatchelements.h"
#include "wsistreamstats.h"
#include "wsibatchdelivery.h"
#include "wsibatchcopy.h"
#include "wsibatchformat.h"
#include "wsibatchmeta.h"
#include "wsinormalize.h"
#include "wsiplanarpool.h"

GST_DEBUG_CATEGORY (gst_patch_batch_debug);
#define GST_CAT_DEFAULT gst_patch_batch_debug

#define DEFAULT_BATCH_SIZE 64
#define MAX_BATCH_SIZE 65536
#define DEFAULT_DROP_REMAINDER FALSE
#define DEFAULT_MAX_BATCHES 8
#define MAX_MAX_BATCHES 65536
#define DEFAULT_NORMALIZE FALSE

#define PATCH_FORMATS "{ RGB, RGBA, RGBx, BGRx }"
#define VIEW_FORMATS "{ RGB, RGBA, RGBx, BGRx, GRAY8 }"
#define VIEWS_CAPS WSI_VIEWS_MEDIA_TYPE ", format = (string) " VIEW_FORMATS \
    ", n-views = (int) [ 1, 16 ]"

/* ImageNet's statistics, which most pathology models were trained with. */
static const gdouble default_mean[] = { 0.485, 0.456, 0.406 };
static const gdouble default_std[] = { 0.229, 0.224, 0.225 };

enum
{
  PROP_0,
  PROP_BATCH_SIZE,
  PROP_DROP_REMAINDER,
  PROP_MAX_BATCHES,
  PROP_BATCHES_PUSHED,
  PROP_STATS_INTERVAL,
  PROP_NORMALIZE,
  PROP_MEAN,
  PROP_STD,
};


static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw, format = (string) " PATCH_FORMATS ", "
        "width = (int) [ 1, max ], height = (int) [ 1, max ]; " VIEWS_CAPS));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw, format = (string) " PATCH_FORMATS ", "
        "width = (int) [ 1, max ], height = (int) [ 1, max ], "
        "framerate = (fraction) 0/1; " VIEWS_CAPS "; "
        WSI_TENSOR_MEDIA_TYPE ", dtype = (string) float32, "
        "layout = (string) NCHW, channels = (int) { 1, 3 }, "
        "n-views = (int) [ 1, 16 ]"));

#define gst_patch_batch_parent_class parent_class
G_DEFINE_TYPE (GstPatchBatch, gst_patch_batch, GST_TYPE_ELEMENT);

static void
do_element_init (GstPlugin * plugin)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_patch_batch_debug, "patchbatch", 0,
        "Stacks patches into batches");
    wsipatch_element_init (plugin);
    g_once_init_leave (&done, 1);
  }
}

GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (patchbatch, "patchbatch",
    GST_RANK_NONE, GST_TYPE_PATCH_BATCH, do_element_init (plugin));

/* ---- caps -------------------------------------------------------------- */

/* Pushes @caps (taken) downstream unless they are already there. */
gboolean
patch_batch_push_src_caps (GstPatchBatch * self, GstCaps * caps)
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

/* What the sink pad can take: float batches are made from any input;
 * otherwise whatever format and width downstream can take for some height,
 * and the views downstream takes as they are. */
static GstCaps *
sink_query_caps (GstPatchBatch * self, GstCaps * filter)
{
  GstCaps *templ = gst_pad_get_pad_template_caps (self->sinkpad);
  GstCaps *peer = NULL;
  GstCaps *result;
  gboolean normalize;
  guint i;

  GST_OBJECT_LOCK (self);
  normalize = self->normalize;
  GST_OBJECT_UNLOCK (self);
  if (!normalize)
    peer = gst_pad_peer_query_caps (self->srcpad, NULL);

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


static GstFlowReturn
gst_patch_batch_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  GstPatchBatch *self = GST_PATCH_BATCH (parent);
  GstStructure *meta = wsi_patch_meta_get (buf);
  GstFlowReturn ret;

  if (!self->have_in_info) {
    gst_buffer_unref (buf);
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Received a patch before its caps."), (NULL));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (self->layout.views_input)
    ret = patch_batch_chain_views (self, buf, meta);
  else
    ret = patch_batch_add_location (self, buf, meta, NULL, 0);
  gst_buffer_unref (buf);
  return ret;
}

/* ---- events and queries ------------------------------------------------ */

/* Prepares the float output for patches of @format; posts an error when
 * mean and std do not fit its channels. */
static gboolean
setup_normalize (GstPatchBatch * self, GstVideoFormat format,
    guint pixel_bytes, WsiNormalize * norm)
{
  ChannelValues mean, std;
  guint offset[WSI_NORMALIZE_MAX_CHANNELS], n_channels;

  GST_OBJECT_LOCK (self);
  mean = self->mean;
  std = self->std;
  GST_OBJECT_UNLOCK (self);
  n_channels = wsi_batch_channel_offsets (format, offset);
  if (!wsi_normalize_init (norm, pixel_bytes, offset, n_channels,
          mean.values, mean.n, std.values, std.n)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Cannot normalise %s patches (%u channels) with %u mean and %u std "
            "values: give one value per channel, or one for all.",
            gst_video_format_to_string (format), n_channels, mean.n, std.n),
        (NULL));
    return FALSE;
  }
  return TRUE;
}

/* The layout a CAPS event announces; FALSE (error posted) when it cannot
 * be batched. */
typedef struct
{
  gboolean views;
  GstVideoInfo info;            /* views: format only */
  guint n_planes;
  gboolean normalizing;
  WsiNormalize norm;
} InputLayout;

static gboolean
parse_input_caps (GstPatchBatch * self, GstCaps * caps, InputLayout * in)
{
  GstStructure *s = gst_caps_get_structure (caps, 0);
  gint n_views = 0;

  memset (in, 0, sizeof (*in));
  in->views = gst_structure_has_name (s, WSI_VIEWS_MEDIA_TYPE);
  in->n_planes = 1;
  if (in->views) {
    GstVideoFormat format = gst_video_format_from_string
        (gst_structure_get_string (s, "format"));

    gst_structure_get_int (s, "n-views", &n_views);
    if (format == GST_VIDEO_FORMAT_UNKNOWN || n_views < 1
        || n_views > MAX_VIEWS) {
      GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
          ("Multi-view caps %" GST_PTR_FORMAT " need a format and 1 to %d "
              "views.", caps, MAX_VIEWS), (NULL));
      return FALSE;
    }
    gst_video_info_set_format (&in->info, format, 1, 1);
    in->n_planes = n_views;
  } else if (!gst_video_info_from_caps (&in->info, caps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Patch caps %" GST_PTR_FORMAT " are not raw video.", caps), (NULL));
    return FALSE;
  }
  GST_OBJECT_LOCK (self);
  in->normalizing = self->normalize;
  GST_OBJECT_UNLOCK (self);
  return !in->normalizing || setup_normalize (self,
      GST_VIDEO_INFO_FORMAT (&in->info),
      GST_VIDEO_INFO_COMP_PSTRIDE (&in->info, 0), &in->norm);
}

/* Can patches of @in join the batch in progress? (A change of framerate
 * or colorimetry alone keeps it going.) */
static gboolean
same_layout (GstPatchBatch * self, const InputLayout * in)
{
  const GstVideoInfo *a = &in->info, *b = &self->layout.in_info;

  return in->views == self->layout.views_input
      && in->n_planes == self->layout.n_planes
      && in->normalizing == self->layout.normalizing
      && GST_VIDEO_INFO_FORMAT (a) == GST_VIDEO_INFO_FORMAT (b)
      && GST_VIDEO_INFO_WIDTH (a) == GST_VIDEO_INFO_WIDTH (b)
      && GST_VIDEO_INFO_HEIGHT (a) == GST_VIDEO_INFO_HEIGHT (b);
}

/* Takes the layout of @in for the patches that follow. */
static void
apply_layout (GstPatchBatch * self, const InputLayout * in)
{
  guint width = GST_VIDEO_INFO_WIDTH (&in->info);
  guint height = GST_VIDEO_INFO_HEIGHT (&in->info);

  self->layout.in_info = in->info;
  self->layout.views_input = in->views;
  self->layout.n_planes = in->n_planes;
  self->layout.normalizing = in->normalizing;
  self->layout.norm = in->norm;
  self->have_in_info = TRUE;
  self->layout.pixel_bytes = GST_VIDEO_INFO_COMP_PSTRIDE (&in->info, 0);
  self->layout.row_bytes = (gsize) width * self->layout.pixel_bytes;
  self->layout.patch_bytes = self->layout.row_bytes * height;
  /* views: sizes come with the first buffer */
  memset (self->layout.in_bytes, 0, sizeof (self->layout.in_bytes));
  memset (self->layout.out_bytes, 0, sizeof (self->layout.out_bytes));
  if (!in->views) {
    self->layout.width[0] = width;
    self->layout.height[0] = height;
    self->layout.in_bytes[0] = self->layout.patch_bytes;
    self->layout.out_bytes[0] = in->normalizing ? (gsize) in->norm.n_channels *
        width * height * sizeof (gfloat) : self->layout.patch_bytes;
  }
}

static gboolean
set_input_caps (GstPatchBatch * self, GstCaps * caps)
{
  InputLayout in;

  if (!parse_input_caps (self, caps, &in))
    return FALSE;
  if (self->have_in_info && same_layout (self, &in)) {
    self->layout.in_info = in.info;
  } else {
    /* a new layout cannot join the batch so far: push it as it is */
    if (self->batch != NULL && patch_batch_push_batch (self) != GST_FLOW_OK)
      GST_DEBUG_OBJECT (self, "short batch before a caps change not taken");
    apply_layout (self, &in);
  }

  /* the capacity of a batch in progress is fixed until it is pushed */
  if (self->batch == NULL) {
    GST_OBJECT_LOCK (self);
    self->capacity = self->batch_size;
    GST_OBJECT_UNLOCK (self);
  }
  /* announce the batch caps now, so that SEGMENT follows CAPS */
  return patch_batch_push_src_caps (self, wsi_batch_layout_caps (&self->layout,
          self->capacity));
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
    patch_batch_discard_batch (self);
    return;
  }
  ret = patch_batch_push_batch (self);
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
      if (wsi_event_parse_delivery_check (event, NULL))
        return wsi_batch_delivery_acknowledge (GST_ELEMENT_CAST (self),
            self->sinkpad, event);
      break;
    case GST_EVENT_EOS:
      drain_at_eos (self);
      wsi_stream_stats_post_now (self->stats, GST_ELEMENT_CAST (self));
      break;
    case GST_EVENT_FLUSH_START:
      /* unblock a chain function waiting for a free batch buffer */
      set_pool_flushing (self, TRUE);
      break;
    case GST_EVENT_FLUSH_STOP:
      patch_batch_discard_batch (self);
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
      if (wsi_batch_delivery_answer_query (query))
        return TRUE;
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
  patch_batch_discard_batch (self);
  patch_batch_replace_pool (self, NULL, NULL);
  gst_caps_replace (&self->src_caps, NULL);
  self->have_in_info = FALSE;
  self->batch_number = 0;
}

static GstStateChangeReturn
gst_patch_batch_change_state (GstElement * element, GstStateChange transition)
{
  GstPatchBatch *self = GST_PATCH_BATCH (element);
  GstStateChangeReturn ret;

  if ((transition == GST_STATE_CHANGE_NULL_TO_READY
          || transition == GST_STATE_CHANGE_READY_TO_PAUSED)
      && !wsi_refusal_check (element, wsi_refusal_of (self)))
    return GST_STATE_CHANGE_FAILURE;
  switch (transition) {
    case GST_STATE_CHANGE_READY_TO_PAUSED:
      g_atomic_int_set (&self->batches_pushed, 0);
      wsi_stream_stats_reset (self->stats);
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

/* Reads a GstValueArray of 1 to 4 numbers into @out; FALSE (and @out
 * untouched) when it is not one, or a value is not finite, or
 * @positive and a value is not > 0. */
static gboolean
channel_values_from_array (const GValue * array, gboolean positive,
    ChannelValues * out)
{
  ChannelValues parsed;
  guint i;

  parsed.n = gst_value_array_get_size (array);
  if (parsed.n < 1 || parsed.n > WSI_NORMALIZE_MAX_CHANNELS)
    return FALSE;
  for (i = 0; i < parsed.n; i++) {
    const GValue *item = gst_value_array_get_value (array, i);
    GValue number = G_VALUE_INIT;

    g_value_init (&number, G_TYPE_DOUBLE);
    if (!g_value_type_transformable (G_VALUE_TYPE (item), G_TYPE_DOUBLE)
        || !g_value_transform (item, &number))
      return FALSE;
    parsed.values[i] = g_value_get_double (&number);
    if (!isfinite (parsed.values[i]) || (positive && !(parsed.values[i] > 0)))
      return FALSE;
  }
  *out = parsed;
  return TRUE;
}

static void
channel_values_to_array (const ChannelValues * in, GValue * array)
{
  GValue item = G_VALUE_INIT;
  guint i;

  g_value_init (&item, G_TYPE_DOUBLE);
  for (i = 0; i < in->n; i++) {
    g_value_set_double (&item, in->values[i]);
    gst_value_array_append_value (array, &item);
  }
  g_value_unset (&item);
}

/* Sets mean or std; a bad value is refused: the previous one is kept and
 * the element refuses to start (wsirefusal.h); running already, a warning
 * says it was not taken. */
static void
set_channel_values (GstPatchBatch * self, guint prop_id, const GValue * value)
{
  gboolean positive = prop_id == PROP_STD;
  const gchar *name = positive ? "std" : "mean";
  ChannelValues parsed;
  gchar *text, *accepted;

  if (channel_values_from_array (value, positive, &parsed)) {
    GST_OBJECT_LOCK (self);
    if (positive)
      self->std = parsed;
    else
      self->mean = parsed;
    wsi_refusal_forget (wsi_refusal_of (self), name);
    GST_OBJECT_UNLOCK (self);
    return;
  }
  text = gst_value_serialize (value);
  accepted = g_strdup_printf ("1 to %d finite numbers%s, one per channel or "
      "one for all, e.g. \"<0.485,0.456,0.406>\"", WSI_NORMALIZE_MAX_CHANNELS,
      positive ? " greater than 0" : "");
  GST_OBJECT_LOCK (self);
  wsi_refusal_record (wsi_refusal_of (self), name, text, accepted);
  if (GST_STATE (self) > GST_STATE_READY)
    g_warning ("patchbatch: %s=%s refused (accepted: %s); keeping the "
        "previous value", name, text ? text : "(null)", accepted);
  GST_OBJECT_UNLOCK (self);
  g_free (accepted);
  g_free (text);
}

static void
gst_patch_batch_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstPatchBatch *self = GST_PATCH_BATCH (object);

  if (prop_id == PROP_MEAN || prop_id == PROP_STD) {
    set_channel_values (self, prop_id, value);
    return;
  }
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_NORMALIZE:
      self->normalize = g_value_get_boolean (value);
      break;
    case PROP_BATCH_SIZE:
      self->batch_size = g_value_get_uint (value);
      break;
    case PROP_DROP_REMAINDER:
      self->drop_remainder = g_value_get_boolean (value);
      break;
    case PROP_MAX_BATCHES:
      self->max_batches = g_value_get_uint (value);
      break;
    case PROP_STATS_INTERVAL:
      wsi_stream_stats_set_interval (self->stats, g_value_get_uint (value));
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
    case PROP_STATS_INTERVAL:
      g_value_set_uint (value, wsi_stream_stats_get_interval (self->stats));
      break;
    case PROP_NORMALIZE:
      g_value_set_boolean (value, self->normalize);
      break;
    case PROP_MEAN:
      channel_values_to_array (&self->mean, value);
      break;
    case PROP_STD:
      channel_values_to_array (&self->std, value);
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
  wsi_stream_stats_free (self->stats);
  wsi_batch_meta_clear (&self->meta);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_patch_batch_class_init (GstPatchBatchClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  /* every error of ours must end the application's main loop, however
   * early it comes (wsierrorrelay.h) */
  wsi_error_relay_class_init (element_class);
  gobject_class->set_property = gst_patch_batch_set_property;
  gobject_class->get_property = gst_patch_batch_get_property;
  gobject_class->finalize = gst_patch_batch_finalize;

  g_object_class_install_property (gobject_class, PROP_BATCH_SIZE,
      wsi_param_spec_uint ("batch-size", "Batch size",
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
      wsi_param_spec_uint ("max-batches", "Max batches",
          "Most batches in existence at once (in the pool, queued "
          "downstream, held by the consumer): the memory bound of the "
          "output, max-batches x batch bytes. When all are out, patchbatch "
          "waits and the pipeline stops behind it. 0 = unbounded. "
          "Range 0..65536, default 8; applies at the next negotiation",
          0, MAX_MAX_BATCHES, DEFAULT_MAX_BATCHES,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  g_object_class_install_property (gobject_class, PROP_BATCHES_PUSHED,
      wsi_param_spec_uint ("batches-pushed", "Batches pushed",
          "Batches accepted downstream since the element left READY, short "
          "ones included (read-only, batches)", 0, G_MAXUINT, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  g_object_class_install_property (gobject_class, PROP_STATS_INTERVAL,
      wsi_param_spec_uint ("stats-interval", "Stats interval",
          "Post a \"wsi-stream-stats\" element message every this many "
          "milliseconds and at EOS: patches delivered, tissue fraction "
          "mean, mpp histogram, per-label and per-column counts, and the "
          "upstream elements' slide and patch counters (docs/design.md). "
          "Milliseconds, 0 to 4294967295, default 0 = no messages",
          0, G_MAXUINT, 0, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));

  g_object_class_install_property (gobject_class, PROP_NORMALIZE,
      g_param_spec_boolean ("normalize", "Normalize",
          "Emit float32 NCHW batches, (pixel / 255 - mean) / std per "
          "channel, caps application/x-wsi-tensor, instead of uint8 NHWC "
          "(boolean, default false; for CPU training: GPU users normalise "
          "uint8 batches on the GPU). Applies at the next caps",
          DEFAULT_NORMALIZE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  g_object_class_install_property (gobject_class, PROP_MEAN,
      gst_param_spec_array ("mean", "Mean",
          "Per-channel mean subtracted by normalize=true, in units of "
          "pixel / 255, R,G,B order (or one value for all channels): 1 to 4 "
          "finite numbers, default <0.485, 0.456, 0.406> (ImageNet)",
          wsi_param_spec_double ("value", "Value", "A channel's mean",
              -G_MAXDOUBLE, G_MAXDOUBLE, 0,
              G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  g_object_class_install_property (gobject_class, PROP_STD,
      gst_param_spec_array ("std", "Standard deviation",
          "Per-channel standard deviation divided by normalize=true, in "
          "units of pixel / 255, R,G,B order (or one value for all "
          "channels): 1 to 4 numbers > 0, default <0.229, 0.224, 0.225> "
          "(ImageNet)",
          wsi_param_spec_double ("value", "Value", "A channel's std",
              G_MINDOUBLE, G_MAXDOUBLE, 1,
              G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Patch batcher", "Filter/Converter/Video",
      "Stacks patches (or multi-view locations) into one batch buffer: "
      "uint8 NHWC, or normalised float32 NCHW, with the records of all "
      "its patches",
      "gst-wsi developers");

  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_patch_batch_change_state);

  /* numbers outside their range refuse the start (wsirefusal.h) */
  wsi_refusal_class_init (GST_ELEMENT_CLASS (klass));
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
  self->stats = wsi_stream_stats_new ();
  self->normalize = DEFAULT_NORMALIZE;
  memcpy (self->mean.values, default_mean, sizeof (default_mean));
  self->mean.n = G_N_ELEMENTS (default_mean);
  memcpy (self->std.values, default_std, sizeof (default_std));
  self->std.n = G_N_ELEMENTS (default_std);
  wsi_batch_meta_init (&self->meta);
}
