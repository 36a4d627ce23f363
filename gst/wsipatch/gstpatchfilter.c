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
 * allocation (the unit test prints patches a second for one core). Place
 * it after patchreader and before a queue, so that the filter runs on its
 * own streaming thread.
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
#include <gst/wsi/wsirecord.h>

#include "gstpatchfilter.h"
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
};

struct _GstPatchFilter
{
  GstBaseTransform parent;

  /* properties, under the object lock */
  WsiHsvRange range;
  gdouble min_pixel_fraction;

  /* set by set_caps */
  GstVideoInfo info;
  WsiHsvLayout layout;

  /* streaming thread only: @range compiled, redone when the range changes */
  WsiHsvFilter filter;
  WsiHsvRange filter_range;
  gboolean have_filter;

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
G_DEFINE_TYPE (GstPatchFilter, gst_patch_filter, GST_TYPE_BASE_TRANSFORM);

static void
do_element_init (GstPlugin * plugin)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_patch_filter_debug, "patchfilter", 0,
        "Drops patches outside an HSV range");
    wsi_record_register_metas ();
    g_once_init_leave (&done, 1);
  }
}

GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (patchfilter, "patchfilter",
    GST_RANK_NONE, GST_TYPE_PATCH_FILTER, do_element_init (plugin));

static gboolean
gst_patch_filter_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstPatchFilter *self = GST_PATCH_FILTER (trans);
  const GstVideoFormatInfo *finfo;

  if (!gst_video_info_from_caps (&self->info, incaps))
    return FALSE;
  finfo = self->info.finfo;
  self->layout.pixel_bytes = GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, 0);
  self->layout.r = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, 0);
  self->layout.g = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, 1);
  self->layout.b = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, 2);
  return TRUE;
}

static gboolean
gst_patch_filter_start (GstBaseTransform * trans)
{
  GstPatchFilter *self = GST_PATCH_FILTER (trans);

  GST_OBJECT_LOCK (self);
  self->patches_passed = 0;
  self->patches_rejected = 0;
  GST_OBJECT_UNLOCK (self);
  return TRUE;
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
  for (i = 0; i < n_records; i++) {
    const gchar *path = wsi_patch_meta_string (meta, "paths", i);
    GstStructure *s = gst_structure_new (WSI_PATCH_DROPPED_EVENT,
        "slide-index", G_TYPE_UINT, records[i].slide_index,
        "cycle", G_TYPE_UINT, records[i].cycle,
        "sequence", G_TYPE_UINT64, records[i].sequence,
        "path", G_TYPE_STRING, path ? path : "",
        "reason", G_TYPE_STRING, reason, NULL);

    gst_pad_push_event (GST_BASE_TRANSFORM_SINK_PAD (self),
        gst_event_new_custom (GST_EVENT_CUSTOM_UPSTREAM, s));
  }
}

static GstFlowReturn
gst_patch_filter_transform_ip (GstBaseTransform * trans, GstBuffer * buffer)
{
  GstPatchFilter *self = GST_PATCH_FILTER (trans);
  GstVideoFrame frame;
  WsiHsvRange range = { 0 };
  gdouble min_fraction, fraction;
  guint64 in_range, total;
  guint width, height;
  gchar *reason;

  GST_OBJECT_LOCK (self);
  range = self->range;
  min_fraction = self->min_pixel_fraction;
  GST_OBJECT_UNLOCK (self);
  if (!self->have_filter
      || memcmp (&range, &self->filter_range, sizeof (range)) != 0) {
    wsi_hsv_filter_init (&self->filter, &range);
    self->filter_range = range;
    self->have_filter = TRUE;
  }

  if (!gst_video_frame_map (&frame, &self->info, buffer, GST_MAP_READ)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Could not read the pixels of a patch."),
        ("gst_video_frame_map failed on %" GST_PTR_FORMAT, buffer));
    return GST_FLOW_ERROR;
  }
  width = GST_VIDEO_FRAME_WIDTH (&frame);
  height = GST_VIDEO_FRAME_HEIGHT (&frame);
  in_range = wsi_hsv_filter_count (&self->filter,
      GST_VIDEO_FRAME_PLANE_DATA (&frame, 0), width, height,
      GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0), &self->layout);
  gst_video_frame_unmap (&frame);

  total = (guint64) width * height;
  fraction = total ? (gdouble) in_range / total : 0.0;
  if (total > 0 && fraction >= min_fraction) {
    GST_OBJECT_LOCK (self);
    self->patches_passed++;
    GST_OBJECT_UNLOCK (self);
    return GST_FLOW_OK;
  }

  GST_OBJECT_LOCK (self);
  self->patches_rejected++;
  GST_OBJECT_UNLOCK (self);
  /* Whole percent, rounded down, so "60 %" is never shown for 59.9 %. */
  reason = g_strdup_printf ("rejected by patchfilter: %d %% of pixels in "
      "the HSV range, %d %% needed", (gint) floor (fraction * 100.0),
      (gint) ceil (min_fraction * 100.0));
  GST_LOG_OBJECT (self, "%s", reason);
  gst_patch_filter_report_dropped (self, buffer, reason);
  g_free (reason);
  return GST_BASE_TRANSFORM_FLOW_DROPPED;
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
      g_param_spec_uint (name, nick, blurb, 0, max, def,
          G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
          G_PARAM_STATIC_STRINGS));
}

static void
gst_patch_filter_class_init (GstPatchFilterClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

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
      g_param_spec_double ("min-pixel-fraction", "Min pixel fraction",
          "Share of the patch's pixels that must lie in the HSV range for "
          "the patch to pass (fraction, 0 to 1, default 0.6; 0 passes every "
          "patch)", 0.0, 1.0, DEFAULT_MIN_PIXEL_FRACTION,
          G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
          G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_PATCHES_PASSED,
      g_param_spec_uint64 ("patches-passed", "Patches passed",
          "Patches passed on since the element left READY (read-only, "
          "patches)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_PATCHES_REJECTED,
      g_param_spec_uint64 ("patches-rejected", "Patches rejected",
          "Patches dropped for too few pixels in the HSV range since the "
          "element left READY (read-only, patches)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Patch HSV filter", "Filter/Analyzer/Video",
      "Drops patches of which too few pixels lie in an HSV range "
      "(Midnight's tissue check) and reports them upstream",
      "gst-wsi developers");

  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_patch_filter_set_caps);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_patch_filter_start);
  trans_class->transform_ip =
      GST_DEBUG_FUNCPTR (gst_patch_filter_transform_ip);
  /* Passthrough with transform_ip: buffers are read, never made writable
   * (no copy of shared buffers), and may still be dropped. */
  trans_class->passthrough_on_same_caps = TRUE;
  trans_class->transform_ip_on_passthrough = TRUE;
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
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), TRUE);
}
