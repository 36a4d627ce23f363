/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-wsicudaupload
 * @title: wsicudaupload
 *
 * Uploads patch batches (the tall `video/x-raw` frames of `patchbatch`) to
 * CUDA memory, faster than the stock `cudaupload` of gst-plugins-bad 1.22:
 *
 * - it answers the upstream ALLOCATION query with a pool of page-locked
 *   (pinned) host memory, so `patchbatch` assembles each batch straight
 *   into memory the GPU can DMA from, with no staging copy;
 * - it copies on its own CUDA stream and waits only for that copy (an
 *   event), never for the whole context;
 * - with #GstWsiCudaUpload:overlap (the default) it pushes batch N only
 *   after the copy of batch N+1 has been queued, so the copy of one batch
 *   overlaps the assembly of the next and the consumer of the previous one.
 *   This holds one batch back: EOS and caps changes push it, a flush drops
 *   it.
 *
 * Per-patch metadata (`WsiPatchMeta`) and every other meta without tags
 * travel with the batch; the output's row pitch is CUDA's, not the input's.
 * The CUDA context is shared with other elements and with the application
 * through the usual `gst.cuda.context` need-context query, so an
 * application can hand GStreamer PyTorch's context (see docs/cuda.md and
 * the gstwsi_cuda helper).
 *
 * Without a CUDA driver or device the element fails its NULL→READY state
 * change with a resource error that says so.
 *
 * ## Example launch line (needs an NVIDIA GPU and driver)
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=10 ! \
 *     video/x-raw,format=RGBx,width=224,height=7168 ! \
 *     wsicudaupload ! fakesink
 * ]| Uploads ten 32-patch batches of 224×224 RGBx patches.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/video/video.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudautils.h>
#include <gst/cuda/cuda-gst.h>
#include <gst/wsi/wsierrorrelay.h>
#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsirefusal.h>

#include "gstwsicudaupload.h"
#include "wsicudadriver.h"
#include "wsicudahostallocator.h"

GST_DEBUG_CATEGORY_STATIC (gst_wsi_cuda_upload_debug);
#define GST_CAT_DEFAULT gst_wsi_cuda_upload_debug

#define DEFAULT_DEVICE_ID -1
#define DEFAULT_PINNED_BUFFERS 4
#define DEFAULT_OVERLAP TRUE

enum
{
  PROP_0,
  PROP_DEVICE_ID,
  PROP_PINNED_BUFFERS,
  PROP_OVERLAP,
};

#define UPLOAD_FORMATS "{ RGB, RGBA, RGBx, BGRx }"

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (UPLOAD_FORMATS)));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE_WITH_FEATURES
        (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, UPLOAD_FORMATS)));

/* One copy queued on the stream: the output it fills, the (pinned) input
 * it reads, which must stay alive until the copy is done, and the event
 * that says it is done. */
typedef struct
{
  GstBuffer *output;
  GstBuffer *input;
  CUevent done;
} WsiUploadCopy;

struct _GstWsiCudaUpload
{
  GstBaseTransform parent;

  /* properties, under the object lock */
  gint device_id;
  guint pinned_buffers;
  gboolean overlap;

  /* from NULL→READY to READY→NULL */
  GstCudaContext *context;
  const WsiCudaDriver *driver;
  CUstream stream;
  CUevent events[2];            /* alternate: one queued, one pending */
  guint next_event;
  GstAllocator *pinned_allocator;

  /* streaming thread only */
  GstVideoInfo in_info;
  GstVideoInfo out_info;
  WsiUploadCopy staged;         /* queued by transform(), not yet paired */
  WsiUploadCopy pending;        /* copy held back by overlap */
  guint64 batches_from_pinned;
  guint64 batches;
};

#define gst_wsi_cuda_upload_parent_class parent_class
G_DEFINE_TYPE (GstWsiCudaUpload, gst_wsi_cuda_upload, GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (wsicudaupload, "wsicudaupload",
    GST_RANK_NONE, GST_TYPE_WSI_CUDA_UPLOAD,
    GST_DEBUG_CATEGORY_INIT (gst_wsi_cuda_upload_debug, "wsicudaupload", 0,
        "pinned-memory CUDA upload of patch batches"));

/* ---- the CUDA side: context, stream, events -------------------------- */

static const gchar *
cuda_error_name (CUresult res)
{
  const gchar *name = NULL;

  if (CuGetErrorName (res, &name) != CUDA_SUCCESS || name == NULL)
    return "unknown CUDA error";
  return name;
}

static gboolean
open_device (GstWsiCudaUpload * self)
{
  gint device_id;
  CUresult res = CUDA_SUCCESS;
  guint i;

  GST_OBJECT_LOCK (self);
  device_id = self->device_id;
  GST_OBJECT_UNLOCK (self);

  self->driver = gst_cuda_load_library () ? wsi_cuda_driver_get () : NULL;
  if (self->driver == NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No CUDA driver: libcuda.so.1 could not be loaded, so batches "
            "cannot be uploaded (is the NVIDIA driver installed?)."),
        ("gst_cuda_load_library or the event symbols of libcuda failed"));
    return FALSE;
  }
  /* registers libgstcuda's CUDA allocator, which GstCudaBufferPool
   * allocates from: without it (no nvcodec element loaded in the process)
   * the output pool refuses every config. Found on a GPU (issue 25). */
  gst_cuda_memory_init_once ();
  /* asks neighbours and the application (need-context) before creating one */
  if (!gst_cuda_ensure_element_context (GST_ELEMENT_CAST (self), device_id,
          &self->context)) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No usable CUDA device %d: the driver loaded but no context could "
            "be created on it (no GPU, or device-id out of range).",
            device_id), ("gst_cuda_ensure_element_context failed"));
    return FALSE;
  }

  if (!gst_cuda_context_push (self->context))
    goto push_failed;
  /* non-blocking: our copies never wait for work on the legacy stream */
  res = CuStreamCreate (&self->stream, CU_STREAM_NON_BLOCKING);
  for (i = 0; res == CUDA_SUCCESS && i < G_N_ELEMENTS (self->events); i++)
    res = self->driver->EventCreate (&self->events[i], CU_EVENT_DISABLE_TIMING);
  gst_cuda_context_pop (NULL);
  if (res != CUDA_SUCCESS) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Could not create a CUDA stream for uploads: %s.",
            cuda_error_name (res)), (NULL));
    return FALSE;
  }

  self->pinned_allocator = wsi_cuda_host_allocator_new (self->context);
  return TRUE;

push_failed:
  GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
      ("Could not make the CUDA context current."), (NULL));
  return FALSE;
}

static void
close_device (GstWsiCudaUpload * self)
{
  guint i;

  gst_clear_object (&self->pinned_allocator);
  if (self->context && gst_cuda_context_push (self->context)) {
    for (i = 0; i < G_N_ELEMENTS (self->events); i++) {
      if (self->events[i])
        self->driver->EventDestroy (self->events[i]);
      self->events[i] = NULL;
    }
    if (self->stream)
      CuStreamDestroy (self->stream);
    self->stream = NULL;
    gst_cuda_context_pop (NULL);
  }
  gst_clear_object (&self->context);
}

/* ---- copies in flight ------------------------------------------------ */

/* Waits for @copy, lets go of its input; returns its output (full). */
static GstBuffer *
copy_finish (GstWsiCudaUpload * self, WsiUploadCopy * copy)
{
  GstBuffer *output = copy->output;

  if (copy->done && gst_cuda_context_push (self->context)) {
    CUresult res = self->driver->EventSynchronize (copy->done);
    gst_cuda_context_pop (NULL);
    if (res != CUDA_SUCCESS)
      GST_WARNING_OBJECT (self, "waiting for an upload failed: %s",
          cuda_error_name (res));
  }
  gst_clear_buffer (&copy->input);
  copy->output = NULL;
  copy->done = NULL;
  return output;
}

static void
copy_discard (GstWsiCudaUpload * self, WsiUploadCopy * copy)
{
  GstBuffer *output = copy_finish (self, copy);

  gst_clear_buffer (&output);
}

/* Pushes the batch held back by overlap (EOS, caps change). */
static GstFlowReturn
push_pending (GstWsiCudaUpload * self)
{
  GstBuffer *output = copy_finish (self, &self->pending);

  if (output == NULL)
    return GST_FLOW_OK;
  return gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (self), output);
}

/* Pushes the held-back batch from an event (EOS, caps change), where no
 * chain function returns the flow upstream: a fatal flow (not-linked or an
 * error) is posted on the bus instead, as a source's loop would; flushing
 * and EOS are not errors. */
static void
push_pending_from_event (GstWsiCudaUpload * self)
{
  GstFlowReturn ret = push_pending (self);

  if (ret == GST_FLOW_NOT_LINKED || ret < GST_FLOW_EOS)
    GST_ELEMENT_FLOW_ERROR (self, ret);
}

/* ---- GstBaseTransform ------------------------------------------------ */

static GstCaps *
gst_wsi_cuda_upload_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter)
{
  GstCaps *result = gst_caps_copy (caps);
  const gchar *feature = direction == GST_PAD_SINK ?
      GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY :
      GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY;
  guint i;

  for (i = 0; i < gst_caps_get_size (result); i++)
    gst_caps_set_features (result, i, gst_caps_features_new (feature, NULL));

  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, result,
        GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (result);
    result = tmp;
  }
  return result;
}

static gboolean
gst_wsi_cuda_upload_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstWsiCudaUpload *self = GST_WSI_CUDA_UPLOAD (trans);

  if (!gst_video_info_from_caps (&self->in_info, incaps)
      || !gst_video_info_from_caps (&self->out_info, outcaps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Cannot upload batches with caps %" GST_PTR_FORMAT ".", incaps),
        (NULL));
    return FALSE;
  }
  return TRUE;
}

/* Upstream (patchbatch) asks where to put batches: in pinned memory. */
static gboolean
gst_wsi_cuda_upload_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  GstWsiCudaUpload *self = GST_WSI_CUDA_UPLOAD (trans);
  GstAllocationParams params;
  GstVideoInfo info;
  GstCaps *caps;
  gboolean need_pool;
  guint n_buffers;

  gst_query_parse_allocation (query, &caps, &need_pool);
  if (caps == NULL || !gst_video_info_from_caps (&info, caps)
      || self->pinned_allocator == NULL)
    return FALSE;

  GST_OBJECT_LOCK (self);
  n_buffers = self->pinned_buffers;
  GST_OBJECT_UNLOCK (self);

  gst_allocation_params_init (&params);
  if (need_pool) {
    GstBufferPool *pool = gst_buffer_pool_new ();
    GstStructure *config = gst_buffer_pool_get_config (pool);

    gst_buffer_pool_config_set_params (config, caps, info.size, n_buffers, 0);
    gst_buffer_pool_config_set_allocator (config, self->pinned_allocator,
        &params);
    if (!gst_buffer_pool_set_config (pool, config)) {
      GST_WARNING_OBJECT (self, "pinned pool refused its config");
      gst_object_unref (pool);
      return FALSE;
    }
    gst_query_add_allocation_pool (query, pool, info.size, n_buffers, 0);
    gst_object_unref (pool);
  }
  gst_query_add_allocation_param (query, self->pinned_allocator, &params);
  /* transform() maps the input with gst_video_frame_map, which honours a
   * GstVideoMeta: patchbatch's tight rows (RGB widths not a multiple of 4)
   * are read right, so say so. */
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  return TRUE;
}

static gboolean
is_pool_of_context (GstBufferPool * pool, GstCudaContext * context)
{
  return GST_IS_CUDA_BUFFER_POOL (pool)
      && GST_CUDA_BUFFER_POOL (pool)->context == context;
}

/* Downstream decides nothing but the count: output is CUDA memory of ours. */
static gboolean
gst_wsi_cuda_upload_decide_allocation (GstBaseTransform * trans,
    GstQuery * query)
{
  GstWsiCudaUpload *self = GST_WSI_CUDA_UPLOAD (trans);
  GstBufferPool *pool = NULL;
  GstStructure *config;
  GstCaps *caps;
  GstVideoInfo info;
  guint size, min = 0, max = 0;
  gboolean have_pool;

  gst_query_parse_allocation (query, &caps, NULL);
  if (caps == NULL || !gst_video_info_from_caps (&info, caps))
    return FALSE;

  have_pool = gst_query_get_n_allocation_pools (query) > 0;
  if (have_pool)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
  if (pool && !is_pool_of_context (pool, self->context))
    gst_clear_object (&pool);
  if (pool == NULL)
    pool = gst_cuda_buffer_pool_new (self->context);

  /* overlap holds one batch back while another is being filled */
  min = MAX (min, 2);
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, info.size, min, max);
  if (!gst_buffer_pool_set_config (pool, config)) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("The CUDA buffer pool refused batches of %" GST_PTR_FORMAT ".", caps),
        (NULL));
    gst_object_unref (pool);
    return FALSE;
  }
  /* the CUDA pool pads rows to its pitch: take the size it settled on */
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_get_params (config, NULL, &size, NULL, NULL);
  gst_structure_free (config);

  if (have_pool)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool (query, pool, size, min, max);
  gst_object_unref (pool);
  return TRUE;
}

/* Only metas that describe the batch, not its memory, apply to the copy:
 * WsiPatchMeta (no tags) yes, GstVideoMeta (the host layout) no. */
static gboolean
gst_wsi_cuda_upload_transform_meta (GstBaseTransform * trans,
    GstBuffer * outbuf, GstMeta * meta, GstBuffer * inbuf)
{
  const gchar *const *tags = gst_meta_api_type_get_tags (meta->info->api);

  return tags == NULL || tags[0] == NULL;
}

static gboolean
queue_copy (GstWsiCudaUpload * self, const GstVideoFrame * in_frame,
    CUdeviceptr dst, gsize dst_pitch, CUevent done)
{
  CUDA_MEMCPY2D copy = { 0, };
  CUresult res;

  copy.srcMemoryType = CU_MEMORYTYPE_HOST;
  copy.srcHost = GST_VIDEO_FRAME_PLANE_DATA (in_frame, 0);
  copy.srcPitch = GST_VIDEO_FRAME_PLANE_STRIDE (in_frame, 0);
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = dst;
  copy.dstPitch = dst_pitch;
  copy.WidthInBytes = GST_VIDEO_FRAME_WIDTH (in_frame)
      * GST_VIDEO_FRAME_COMP_PSTRIDE (in_frame, 0);
  copy.Height = GST_VIDEO_FRAME_HEIGHT (in_frame);

  if (!gst_cuda_context_push (self->context))
    return FALSE;
  res = CuMemcpy2DAsync (&copy, self->stream);
  if (res == CUDA_SUCCESS)
    res = self->driver->EventRecord (done, self->stream);
  gst_cuda_context_pop (NULL);
  if (res != CUDA_SUCCESS)
    GST_ERROR_OBJECT (self, "cuMemcpy2DAsync failed: %s",
        cuda_error_name (res));
  return res == CUDA_SUCCESS;
}

/* Queues the copy and returns at once; generate_output() decides when the
 * output may leave (after its event). */
static GstFlowReturn
gst_wsi_cuda_upload_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  GstWsiCudaUpload *self = GST_WSI_CUDA_UPLOAD (trans);
  GstMemory *out_mem = gst_buffer_peek_memory (outbuf, 0);
  GstVideoFrame in_frame;
  GstMapInfo out_map;
  CUevent done = self->events[self->next_event];
  gboolean ok;

  if (gst_buffer_n_memory (outbuf) != 1 || !gst_is_cuda_memory (out_mem))
    goto not_cuda;
  if (!gst_video_frame_map (&in_frame, &self->in_info, inbuf, GST_MAP_READ))
    goto map_failed;
  if (!gst_memory_map (out_mem, &out_map, GST_MAP_WRITE | GST_MAP_CUDA)) {
    gst_video_frame_unmap (&in_frame);
    goto map_failed;
  }

  ok = queue_copy (self, &in_frame, (CUdeviceptr) out_map.data,
      GST_VIDEO_INFO_PLANE_STRIDE (&GST_CUDA_MEMORY_CAST (out_mem)->info, 0),
      done);
  gst_memory_unmap (out_mem, &out_map);
  gst_video_frame_unmap (&in_frame);
  if (!ok) {
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
        ("Could not copy a batch of %" G_GSIZE_FORMAT " bytes to the GPU.",
            gst_buffer_get_size (inbuf)), (NULL));
    return GST_FLOW_ERROR;
  }

  self->batches++;
  if (wsi_is_cuda_host_memory (gst_buffer_peek_memory (inbuf, 0)))
    self->batches_from_pinned++;
  else
    GST_LOG_OBJECT (self, "batch %" G_GUINT64_FORMAT " came from pageable "
        "memory: upstream ignored the pinned pool", self->batches);

  /* the DMA reads the input until the event: keep it out of its pool */
  self->staged.input = gst_buffer_ref (inbuf);
  self->staged.done = done;
  self->next_event = (self->next_event + 1) % G_N_ELEMENTS (self->events);
  return GST_FLOW_OK;

not_cuda:
  GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
      ("The output buffer is not CUDA memory."), (NULL));
  return GST_FLOW_ERROR;
map_failed:
  GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
      ("Could not map a batch for upload."), (NULL));
  return GST_FLOW_ERROR;
}

static GstFlowReturn
gst_wsi_cuda_upload_generate_output (GstBaseTransform * trans,
    GstBuffer ** outbuf)
{
  GstWsiCudaUpload *self = GST_WSI_CUDA_UPLOAD (trans);
  GstFlowReturn ret;
  GstBuffer *fresh = NULL;
  gboolean overlap;

  /* prepares the output and runs transform(), i.e. queues the copy */
  ret = GST_BASE_TRANSFORM_CLASS (parent_class)->generate_output (trans,
      &fresh);
  if (ret != GST_FLOW_OK || fresh == NULL) {
    /* nothing new (the base class asks again after each push) or failed */
    gst_clear_buffer (&fresh);
    copy_discard (self, &self->staged);
    *outbuf = NULL;
    return ret;
  }
  self->staged.output = fresh;

  GST_OBJECT_LOCK (self);
  overlap = self->overlap;
  GST_OBJECT_UNLOCK (self);

  if (!overlap) {
    *outbuf = copy_finish (self, &self->staged);
    return GST_FLOW_OK;
  }
  /* the new copy is queued: the previous one may leave once it is done */
  *outbuf = copy_finish (self, &self->pending);
  self->pending = self->staged;
  memset (&self->staged, 0, sizeof (self->staged));
  return GST_FLOW_OK;
}

static gboolean
gst_wsi_cuda_upload_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GstWsiCudaUpload *self = GST_WSI_CUDA_UPLOAD (trans);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_EOS:
    case GST_EVENT_CAPS:
      /* the held-back batch belongs before these */
      push_pending_from_event (self);
      break;
    case GST_EVENT_FLUSH_STOP:
      copy_discard (self, &self->pending);
      break;
    default:
      break;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

static gboolean
gst_wsi_cuda_upload_query (GstBaseTransform * trans, GstPadDirection direction,
    GstQuery * query)
{
  GstWsiCudaUpload *self = GST_WSI_CUDA_UPLOAD (trans);

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT
      && gst_cuda_handle_context_query (GST_ELEMENT_CAST (self), query,
          self->context))
    return TRUE;
  return GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction,
      query);
}

static gboolean
gst_wsi_cuda_upload_start (GstBaseTransform * trans)
{
  GstWsiCudaUpload *self = GST_WSI_CUDA_UPLOAD (trans);

  self->batches = self->batches_from_pinned = 0;
  return TRUE;
}

static gboolean
gst_wsi_cuda_upload_stop (GstBaseTransform * trans)
{
  GstWsiCudaUpload *self = GST_WSI_CUDA_UPLOAD (trans);

  copy_discard (self, &self->staged);
  copy_discard (self, &self->pending);
  GST_DEBUG_OBJECT (self, "%" G_GUINT64_FORMAT " batches uploaded, %"
      G_GUINT64_FORMAT " from pinned memory", self->batches,
      self->batches_from_pinned);
  return TRUE;
}

/* ---- GstElement ------------------------------------------------------ */

static void
gst_wsi_cuda_upload_set_context (GstElement * element, GstContext * context)
{
  GstWsiCudaUpload *self = GST_WSI_CUDA_UPLOAD (element);
  gint device_id;

  GST_OBJECT_LOCK (self);
  device_id = self->device_id;
  GST_OBJECT_UNLOCK (self);
  gst_cuda_handle_set_context (element, context, device_id, &self->context);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static GstStateChangeReturn
gst_wsi_cuda_upload_change_state (GstElement * element,
    GstStateChange transition)
{
  GstWsiCudaUpload *self = GST_WSI_CUDA_UPLOAD (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_NULL_TO_READY && !open_device (self)) {
    close_device (self);
    return GST_STATE_CHANGE_FAILURE;
  }
  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  if (transition == GST_STATE_CHANGE_READY_TO_NULL)
    close_device (self);
  return ret;
}

/* ---- GObject --------------------------------------------------------- */

static void
gst_wsi_cuda_upload_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstWsiCudaUpload *self = GST_WSI_CUDA_UPLOAD (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_DEVICE_ID:
      self->device_id = g_value_get_int (value);
      break;
    case PROP_PINNED_BUFFERS:
      self->pinned_buffers = g_value_get_uint (value);
      break;
    case PROP_OVERLAP:
      self->overlap = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_wsi_cuda_upload_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstWsiCudaUpload *self = GST_WSI_CUDA_UPLOAD (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_DEVICE_ID:
      g_value_set_int (value, self->device_id);
      break;
    case PROP_PINNED_BUFFERS:
      g_value_set_uint (value, self->pinned_buffers);
      break;
    case PROP_OVERLAP:
      g_value_set_boolean (value, self->overlap);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_wsi_cuda_upload_finalize (GObject * object)
{
  GstWsiCudaUpload *self = GST_WSI_CUDA_UPLOAD (object);

  close_device (self);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_wsi_cuda_upload_class_init (GstWsiCudaUploadClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;

  /* every error of ours must end the application's main loop, however
   * early it comes (wsierrorrelay.h) */
  wsi_error_relay_class_init (element_class);
  gobject_class->set_property = gst_wsi_cuda_upload_set_property;
  gobject_class->get_property = gst_wsi_cuda_upload_get_property;
  gobject_class->finalize = gst_wsi_cuda_upload_finalize;

  g_object_class_install_property (gobject_class, PROP_DEVICE_ID,
      wsi_param_spec_int ("cuda-device-id", "CUDA device id",
          "CUDA device ordinal to upload to (-1 .. 2147483647, default -1: "
          "the device of a context shared by the application or a "
          "neighbour, else device 0); read when the element goes to READY",
          -1, G_MAXINT, DEFAULT_DEVICE_ID, flags));
  g_object_class_install_property (gobject_class, PROP_PINNED_BUFFERS,
      wsi_param_spec_uint ("pinned-buffers", "Pinned buffers",
          "Minimum number of pinned (page-locked) host batches in the pool "
          "offered upstream, in buffers (2 .. 64, default 4); each one pins "
          "a whole batch of RAM",
          2, 64, DEFAULT_PINNED_BUFFERS, flags));
  g_object_class_install_property (gobject_class, PROP_OVERLAP,
      g_param_spec_boolean ("overlap", "Overlap copies",
          "Push each batch only once the next one's copy is queued, so "
          "copies overlap batch assembly (adds one batch of latency; "
          "default true). false waits for every copy before pushing",
          DEFAULT_OVERLAP, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "WSI CUDA upload", "Filter/Video/Hardware",
      "Uploads patch batches from pinned host memory to CUDA memory on its "
      "own stream, overlapping copies with batch assembly",
      "gst-wsi developers");

  element_class->set_context =
      GST_DEBUG_FUNCPTR (gst_wsi_cuda_upload_set_context);
  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_wsi_cuda_upload_change_state);

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_caps =
      GST_DEBUG_FUNCPTR (gst_wsi_cuda_upload_transform_caps);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_wsi_cuda_upload_set_caps);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_wsi_cuda_upload_propose_allocation);
  trans_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_wsi_cuda_upload_decide_allocation);
  trans_class->transform_meta =
      GST_DEBUG_FUNCPTR (gst_wsi_cuda_upload_transform_meta);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_wsi_cuda_upload_transform);
  trans_class->generate_output =
      GST_DEBUG_FUNCPTR (gst_wsi_cuda_upload_generate_output);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_wsi_cuda_upload_sink_event);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_wsi_cuda_upload_query);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_wsi_cuda_upload_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_wsi_cuda_upload_stop);

  /* numbers outside their range refuse the start (wsirefusal.h) */
  wsi_refusal_class_init (GST_ELEMENT_CLASS (klass));
}

static void
gst_wsi_cuda_upload_init (GstWsiCudaUpload * self)
{
  self->device_id = DEFAULT_DEVICE_ID;
  self->pinned_buffers = DEFAULT_PINNED_BUFFERS;
  self->overlap = DEFAULT_OVERLAP;
  gst_video_info_init (&self->in_info);
  gst_video_info_init (&self->out_info);
}
