/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-patchfilter
 * @title: patchfilter
 *
 * patchfilter drops patches that hold too little stained tissue, with the
 * per-tile HSV check of Midnight (Karasikov et al., 2025, arXiv:2504.05186).
 * Each decoded patch (RGB, RGBA, RGBx or BGRx; caps are the same on both
 * sides and the pixels are never modified) is converted to HSV pixel by
 * pixel; a pixel counts when its hue lies in [#GstPatchFilter:hue-min,
 * #GstPatchFilter:hue-max], its saturation in
 * [#GstPatchFilter:saturation-min, #GstPatchFilter:saturation-max] and its
 * value in [#GstPatchFilter:value-min, #GstPatchFilter:value-max] (all
 * bounds inclusive). The patch passes when the share of counted pixels is
 * at least #GstPatchFilter:min-pixel-fraction; otherwise it is dropped.
 *
 * The test is identical to the Python peer's `wsistream.filters.
 * HSVPatchFilter.accept()`: HSV follows OpenCV's 8-bit
 * `cv2.cvtColor(COLOR_RGB2HSV)` bit for bit (H in 0..179 — half degrees —,
 * S and V in 0..255, same fixed-point rounding; checked on all 2^24
 * colours against OpenCV 4.6), the ranges are inclusive like
 * `cv2.inRange`, the comparison is `fraction >= min-pixel-fraction`, and
 * the defaults are Midnight's and the peer's: hue 90–180, saturation
 * 8–255, value 103–255, fraction 0.6. Alpha is ignored.
 *
 * A dropped patch is counted in #GstPatchFilter:patches-rejected and
 * reported upstream with the `wsi-patch-dropped` event (fields
 * `slide-index`, `cycle`, `sequence`, `path` from the patch's
 * `WsiPatchMeta`, and a `reason` such as "rejected by patchfilter: 12 % of
 * pixels in the HSV range, 60 % needed"), so that patchsampler counts it as
 * not delivered: finite quotas are refilled, and a cycle in which the
 * filter rejects every patch ends the stream with patchsampler's "delivered
 * no patch" error instead of sampling forever. Patches without a
 * `WsiPatchMeta` are filtered too, but nothing is reported for them.
 *
 * Cost: about fifteen integer operations per pixel, no multiply, no
 * allocation (the unit test prints patches a second for one core). The
 * check runs on #GstPatchFilter:threads worker threads (the ordered pool
 * patchreader uses); verdicts are counted, and drops reported, in stream
 * order on the pool's task, so counts and events never depend on thread
 * timing and the output order is the input order.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 wsislidesrc location=slides/ cycle=true ! \
 *     tissuemask ! queue ! patchsampler patch-size=256 ! patchinterleave ! \
 *     patchreader ! patchfilter ! queue ! patchbatch batch-size=64 ! \
 *     fakesink sync=false
 * ]| Streams 256×256 patches from every slide in slides/, keeping those
 * of which at least 60 % of the pixels look like H&E-stained tissue.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>
#include <gst/video/video.h>
#include <gst/wsi/wsievent.h>
#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsirefusal.h>

#include "gstpatchfilter.h"
#include "gstwsipatchelements.h"
#include "wsihsvfilter.h"

GST_DEBUG_CATEGORY_STATIC (gst_patch_filter_debug);
#define GST_CAT_DEFAULT gst_patch_filter_debug

#define DEFAULT_HUE_MIN 90
#define DEFAULT_HUE_MAX 180
#define DEFAULT_SATURATION_MIN 8
#define DEFAULT_SATURATION_MAX 255
#define DEFAULT_VALUE_MIN 103
#define DEFAULT_VALUE_MAX 255
#define DEFAULT_MIN_PIXEL_FRACTION 0.6
#define DEFAULT_THREADS 1

#define PATCH_FORMATS "{ RGB, RGBA, RGBx, BGRx }"

enum
{
  PROP_0,
  PROP_HUE_MIN,
  PROP_HUE_MAX,
  PROP_SATURATION_MIN,
  PROP_SATURATION_MAX,
  PROP_VALUE_MIN,
  PROP_VALUE_MAX,
  PROP_MIN_PIXEL_FRACTION,
  PROP_PATCHES_PASSED,
  PROP_PATCHES_REJECTED,
  PROP_THREADS,
};

/* A patch in the pool, the settings it is judged by, and the count the
 * worker found (judged in stream order by filter_finish()). */
typedef struct
{
  GstBuffer *buffer;
  WsiHsvRange range;
  gdouble min_fraction;
  guint64 in_range;
  guint64 total;
  gboolean mapped;
} FilterWork;

/* A worker's compiled range, recompiled when the range changes. */
typedef struct
{
  WsiHsvFilter filter;
  WsiHsvRange range;
  gboolean valid;
} FilterThreadState;

struct _GstPatchFilter
{
  WsiPoolElement parent;

  /* properties, under the object lock */
  WsiHsvRange range;
  gdouble min_pixel_fraction;
  guint threads;

  /* set by set_caps with nothing in flight; read by the workers */
  GstVideoInfo info;
  WsiHsvLayout layout;

  /* counters, under the object lock; reset when leaving READY */
  guint64 patches_passed;
  guint64 patches_rejected;
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (PATCH_FORMATS)));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (PATCH_FORMATS)));

#define gst_patch_filter_parent_class parent_class
G_DEFINE_TYPE (GstPatchFilter, gst_patch_filter, WSI_TYPE_POOL_ELEMENT);

static void
do_element_init (GstPlugin * plugin)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_patch_filter_debug, "patchfilter", 0,
        "Drops patches outside an HSV range");
    wsipatch_element_init (plugin);
    g_once_init_leave (&done, 1);
  }
}

GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (patchfilter, "patchfilter",
    GST_RANK_NONE, GST_TYPE_PATCH_FILTER, do_element_init (plugin));

/* The output caps are the input caps. */
static GstCaps *
gst_patch_filter_set_caps (WsiPoolElement * element, GstCaps * caps)
{
  GstPatchFilter *self = GST_PATCH_FILTER (element);
  const GstVideoFormatInfo *finfo;

  if (!gst_video_info_from_caps (&self->info, caps))
    return NULL;
  finfo = self->info.finfo;
  self->layout.pixel_bytes = GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, 0);
  self->layout.r = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, 0);
  self->layout.g = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, 1);
  self->layout.b = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, 2);
  return gst_caps_ref (caps);
}

/* ---- the check, on the workers ------------------------------------------- */

static gpointer
filter_thread_state_new (WsiPoolElement * element)
{
  return g_new0 (FilterThreadState, 1);
}

static void
filter_thread_state_free (WsiPoolElement * element, gpointer state)
{
  g_free (state);
}

static GstBuffer *
filter_process (WsiPoolElement * element, gpointer data, gpointer state)
{
  GstPatchFilter *self = GST_PATCH_FILTER (element);
  FilterWork *work = data;
  FilterThreadState *ts = state;
  GstVideoFrame frame;

  if (!ts->valid || memcmp (&work->range, &ts->range, sizeof (ts->range))) {
    wsi_hsv_filter_init (&ts->filter, &work->range);
    ts->range = work->range;
    ts->valid = TRUE;
  }
  /* Read only: the pixels are never modified, shared buffers not copied. */
  if (gst_video_frame_map (&frame, &self->info, work->buffer, GST_MAP_READ)) {
    work->mapped = TRUE;
    work->total = (guint64) GST_VIDEO_FRAME_WIDTH (&frame) *
        GST_VIDEO_FRAME_HEIGHT (&frame);
    work->in_range = wsi_hsv_filter_count (&ts->filter,
        GST_VIDEO_FRAME_PLANE_DATA (&frame, 0),
        GST_VIDEO_FRAME_WIDTH (&frame), GST_VIDEO_FRAME_HEIGHT (&frame),
        GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0), &self->layout);
    gst_video_frame_unmap (&frame);
  }
  return g_steal_pointer (&work->buffer);
}

/* Tells upstream (patchsampler's accounting) that the patch of @buffer will
 * not be delivered. */
static void
gst_patch_filter_report_dropped (GstPatchFilter * self, GstBuffer * buffer,
    const gchar * reason)
{
  GstStructure *meta = wsi_patch_meta_get (buffer);
  const WsiPatchRecord *records;
  guint n_records, i;

  if (meta == NULL)
    return;
  records = wsi_patch_meta_records (meta, &n_records);
  for (i = 0; i < n_records; i++)
    wsi_pool_element_report_dropped (WSI_POOL_ELEMENT (self), &records[i],
        wsi_patch_meta_string (meta, "paths", i), reason);
}

/* In stream order, on the pool's task: passes the patch on and counts it,
 * or reports it upstream, then counts it, and drops it (counting last, so
 * whoever sees the count sees the event). */
static GstBuffer *
filter_finish (WsiPoolElement * element, gpointer data, GstBuffer * result)
{
  GstPatchFilter *self = GST_PATCH_FILTER (element);
  FilterWork *work = data;
  gdouble fraction;
  gchar *reason;

  if (result == NULL)
    return NULL;
  if (!work->mapped) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Could not read the pixels of a patch."),
        ("gst_video_frame_map failed on %" GST_PTR_FORMAT, result));
    gst_buffer_unref (result);
    return NULL;
  }
  fraction = work->total ? (gdouble) work->in_range / work->total : 0.0;
  if (work->total > 0 && fraction >= work->min_fraction) {
    GST_OBJECT_LOCK (self);
    self->patches_passed++;
    GST_OBJECT_UNLOCK (self);
    return result;
  }

  /* Whole percent, rounded down, so "60 %" is never shown for 59.9 %. */
  reason = g_strdup_printf ("rejected by patchfilter: %d %% of pixels in "
      "the HSV range, %d %% needed", (gint) floor (fraction * 100.0),
      (gint) ceil (work->min_fraction * 100.0));
  GST_LOG_OBJECT (self, "%s", reason);
  gst_patch_filter_report_dropped (self, result, reason);
  g_free (reason);
  GST_OBJECT_LOCK (self);
  self->patches_rejected++;
  GST_OBJECT_UNLOCK (self);
  gst_buffer_unref (result);
  return NULL;
}

static void
filter_work_clear (WsiPoolElement * element, gpointer data)
{
  FilterWork *work = data;

  gst_clear_buffer (&work->buffer);
}

/* ---- streaming thread and state ------------------------------------------ */

static GstFlowReturn
gst_patch_filter_handle_buffer (WsiPoolElement * element, GstBuffer * buffer)
{
  GstPatchFilter *self = GST_PATCH_FILTER (element);
  FilterWork work = { buffer, };

  GST_OBJECT_LOCK (self);
  work.range = self->range;
  work.min_fraction = self->min_pixel_fraction;
  GST_OBJECT_UNLOCK (self);
  return wsi_pool_element_queue_work (element, &work);
}

/* READY -> PAUSED: counts start again; the thread count is read now. */
static gboolean
gst_patch_filter_start (WsiPoolElement * element, guint * n_threads)
{
  GstPatchFilter *self = GST_PATCH_FILTER (element);

  GST_OBJECT_LOCK (self);
  self->patches_passed = 0;
  self->patches_rejected = 0;
  *n_threads = self->threads;
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static void
gst_patch_filter_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstPatchFilter *self = GST_PATCH_FILTER (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_HUE_MIN:
      self->range.hue_min = g_value_get_uint (value);
      break;
    case PROP_HUE_MAX:
      self->range.hue_max = g_value_get_uint (value);
      break;
    case PROP_SATURATION_MIN:
      self->range.sat_min = g_value_get_uint (value);
      break;
    case PROP_SATURATION_MAX:
      self->range.sat_max = g_value_get_uint (value);
      break;
    case PROP_VALUE_MIN:
      self->range.val_min = g_value_get_uint (value);
      break;
    case PROP_VALUE_MAX:
      self->range.val_max = g_value_get_uint (value);
      break;
    case PROP_MIN_PIXEL_FRACTION:
      self->min_pixel_fraction = g_value_get_double (value);
      break;
    case PROP_THREADS:
      self->threads = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_filter_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstPatchFilter *self = GST_PATCH_FILTER (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_PATCHES_PASSED:
      g_value_set_uint64 (value, self->patches_passed);
      break;
    case PROP_PATCHES_REJECTED:
      g_value_set_uint64 (value, self->patches_rejected);
      break;
    case PROP_HUE_MIN:
      g_value_set_uint (value, self->range.hue_min);
      break;
    case PROP_HUE_MAX:
      g_value_set_uint (value, self->range.hue_max);
      break;
    case PROP_SATURATION_MIN:
      g_value_set_uint (value, self->range.sat_min);
      break;
    case PROP_SATURATION_MAX:
      g_value_set_uint (value, self->range.sat_max);
      break;
    case PROP_VALUE_MIN:
      g_value_set_uint (value, self->range.val_min);
      break;
    case PROP_VALUE_MAX:
      g_value_set_uint (value, self->range.val_max);
      break;
    case PROP_MIN_PIXEL_FRACTION:
      g_value_set_double (value, self->min_pixel_fraction);
      break;
    case PROP_THREADS:
      g_value_set_uint (value, self->threads);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
install_bound (GObjectClass * gobject_class, guint prop_id,
    const gchar * name, const gchar * nick, const gchar * blurb, guint max,
    guint def)
{
  g_object_class_install_property (gobject_class, prop_id,
      wsi_param_spec_uint (name, nick, blurb, 0, max, def,
          G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
          G_PARAM_STATIC_STRINGS));
}

static void
gst_patch_filter_class_init (GstPatchFilterClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  WsiPoolElementClass *pool_class = WSI_POOL_ELEMENT_CLASS (klass);

  gobject_class->set_property = gst_patch_filter_set_property;
  gobject_class->get_property = gst_patch_filter_get_property;

  install_bound (gobject_class, PROP_HUE_MIN, "hue-min", "Hue min",
      "Lowest hue a pixel may have to count (OpenCV half degrees, 0 to 180, "
      "inclusive, default 90)", 180, DEFAULT_HUE_MIN);
  install_bound (gobject_class, PROP_HUE_MAX, "hue-max", "Hue max",
      "Highest hue a pixel may have to count (OpenCV half degrees, 0 to 180, "
      "inclusive, default 180; OpenCV hues stop at 179)", 180,
      DEFAULT_HUE_MAX);
  install_bound (gobject_class, PROP_SATURATION_MIN, "saturation-min",
      "Saturation min", "Lowest saturation a pixel may have to count "
      "(0 to 255, inclusive, default 8)", 255, DEFAULT_SATURATION_MIN);
  install_bound (gobject_class, PROP_SATURATION_MAX, "saturation-max",
      "Saturation max", "Highest saturation a pixel may have to count "
      "(0 to 255, inclusive, default 255)", 255, DEFAULT_SATURATION_MAX);
  install_bound (gobject_class, PROP_VALUE_MIN, "value-min", "Value min",
      "Lowest value (brightest channel) a pixel may have to count "
      "(0 to 255, inclusive, default 103)", 255, DEFAULT_VALUE_MIN);
  install_bound (gobject_class, PROP_VALUE_MAX, "value-max", "Value max",
      "Highest value (brightest channel) a pixel may have to count "
      "(0 to 255, inclusive, default 255)", 255, DEFAULT_VALUE_MAX);
  g_object_class_install_property (gobject_class, PROP_MIN_PIXEL_FRACTION,
      wsi_param_spec_double ("min-pixel-fraction", "Min pixel fraction",
          "Share of the patch's pixels that must lie in the HSV range for "
          "the patch to pass (fraction, 0 to 1, default 0.6; 0 passes every "
          "patch)", 0.0, 1.0, DEFAULT_MIN_PIXEL_FRACTION,
          G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
          G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_PATCHES_PASSED,
      wsi_param_spec_uint64 ("patches-passed", "Patches passed",
          "Patches passed on since the element left READY (read-only, "
          "patches)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_PATCHES_REJECTED,
      wsi_param_spec_uint64 ("patches-rejected", "Patches rejected",
          "Patches dropped for too few pixels in the HSV range since the "
          "element left READY (read-only, patches)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_THREADS,
      wsi_ordered_pool_param_spec_threads ("Worker threads checking "
          "patches", DEFAULT_THREADS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Patch HSV filter", "Filter/Analyzer/Video",
      "Drops patches of which too few pixels lie in an HSV range "
      "(Midnight's tissue check) and reports them upstream",
      "gst-wsi developers");

  pool_class->work_size = sizeof (FilterWork);
  pool_class->worker_name = "patchfilter";
  pool_class->start = GST_DEBUG_FUNCPTR (gst_patch_filter_start);
  pool_class->thread_state_new = filter_thread_state_new;
  pool_class->thread_state_free = filter_thread_state_free;
  pool_class->handle_buffer =
      GST_DEBUG_FUNCPTR (gst_patch_filter_handle_buffer);
  pool_class->process = filter_process;
  pool_class->finish = filter_finish;
  pool_class->work_clear = filter_work_clear;
  pool_class->set_caps = GST_DEBUG_FUNCPTR (gst_patch_filter_set_caps);

  /* numbers outside their range refuse the start (wsirefusal.h) */
  wsi_refusal_class_init (GST_ELEMENT_CLASS (klass));
}

static void
gst_patch_filter_init (GstPatchFilter * self)
{
  self->range.hue_min = DEFAULT_HUE_MIN;
  self->range.hue_max = DEFAULT_HUE_MAX;
  self->range.sat_min = DEFAULT_SATURATION_MIN;
  self->range.sat_max = DEFAULT_SATURATION_MAX;
  self->range.val_min = DEFAULT_VALUE_MIN;
  self->range.val_max = DEFAULT_VALUE_MAX;
  self->min_pixel_fraction = DEFAULT_MIN_PIXEL_FRACTION;
  self->threads = DEFAULT_THREADS;
  /* Caps and buffers pass unchanged: let the peers negotiate through us. */
  GST_PAD_SET_PROXY_CAPS (WSI_POOL_ELEMENT_SINK_PAD (self));
  GST_PAD_SET_PROXY_ALLOCATION (WSI_POOL_ELEMENT_SINK_PAD (self));
  GST_PAD_SET_PROXY_CAPS (WSI_POOL_ELEMENT_SRC_PAD (self));
  GST_PAD_SET_PROXY_ALLOCATION (WSI_POOL_ELEMENT_SRC_PAD (self));
}
