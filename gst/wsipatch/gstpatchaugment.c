/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-patchaugment
 * @title: patchaugment
 *
 * patchaugment applies training augmentations to decoded patches, each
 * with its own probability, in this order: a horizontal flip
 * (#GstPatchAugment:flip-h), a vertical flip (#GstPatchAugment:flip-v),
 * 1 to 3 quarter turns counter-clockwise (#GstPatchAugment:rotate90; square
 * images only, which patches are); HED stain augmentation (Tellez et al.,
 * 2018: optical density, colour deconvolution with skimage's H&E-DAB
 * matrix, per-stain scale alpha from [1 - #GstPatchAugment:hed-sigma,
 * 1 + hed-sigma] and bias beta from [-#GstPatchAugment:hed-sigma-bias,
 * hed-sigma-bias], recomposition; as the Python peer's corrected
 * `HEDColorAugmentation`, with #GstPatchAugment:hed-probability); colour
 * jitter as torchvision's `ColorJitter` (#GstPatchAugment:brightness,
 * #GstPatchAugment:contrast, #GstPatchAugment:saturation,
 * #GstPatchAugment:hue, applied together with
 * #GstPatchAugment:jitter-probability; the hue shift rotates the YIQ chroma
 * plane instead of converting to HSV); greyscale
 * (#GstPatchAugment:grayscale-probability); a Gaussian blur of sigma
 * drawn from [#GstPatchAugment:blur-sigma-min,
 * #GstPatchAugment:blur-sigma-max] pixels over a radius of ceil (3 sigma)
 * or #GstPatchAugment:blur-radius (#GstPatchAugment:blur-probability);
 * solarization (#GstPatchAugment:solarize-probability,
 * #GstPatchAugment:solarize-threshold): DINOv2's colour order. The maths
 * and costs are in
 * `gst/wsipatch/wsiaugment.h`.
 *
 * Reproducible: the draws of a patch are a pure function of
 * #GstPatchAugment:seed, the patch's sequence number (its `WsiPatchMeta`
 * record, else the buffer offset) and the view index, so the output is
 * byte-identical whatever #GstPatchAugment:threads is and from run to run.
 * The work runs on a pool of worker threads; output order is input order.
 *
 * Input: single patches (video/x-raw RGB, RGBA, RGBx or BGRx, as
 * patchreader makes them) or multi-view buffers
 * (`application/x-wsi-views`, one GstMemory per view, see record version 2
 * in `wsirecord.h`): every view image is augmented with draws keyed by its
 * view index, and the flips and turns applied are set in its
 * `WsiViewRecord` flags (`WSI_VIEW_FLAG_FLIP_H`, `_FLIP_V`, quarter turns in
 * `WSI_VIEW_FLAG_ROT_MASK`). Caps are the same on both sides. Buffers are
 * changed in place when writable and copied otherwise; a patch whose draws
 * select nothing, and every patch when all probabilities are 0, passes
 * untouched (no copy). #GstPatchAugment:views limits an instance to some
 * views (by name or group: `views=global_1` or `views=local`), so that
 * chained instances give each view its own recipe.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 wsislidesrc location=slides/ cycle=true ! tissuemask ! \
 *     queue ! patchsampler patch-size=256 ! patchinterleave ! patchreader ! \
 *     patchaugment hed-probability=0.8 hed-sigma=0.05 jitter-probability=0.8 \
 *     seed=7 ! queue ! patchbatch batch-size=64 ! fakesink sync=false
 * ]| Flips and turns every patch at random (the defaults), recolours 80 %
 * of them in HED space and jitters 80 % of them.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <gst/video/video.h>
#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsirefusal.h>
#include "wsiaugment.h"

#include "gstpatchaugment.h"
#include "gstwsipatchelements.h"

GST_DEBUG_CATEGORY_STATIC (gst_patch_augment_debug);
#define GST_CAT_DEFAULT gst_patch_augment_debug

#define DEFAULT_THREADS 0
#define DEFAULT_FLIP 0.5
#define DEFAULT_HED_SIGMA 0.05
#define DEFAULT_HED_SIGMA_BIAS -1.0
#define DEFAULT_BRIGHTNESS 0.4
#define DEFAULT_CONTRAST 0.4
#define DEFAULT_SATURATION 0.2
#define DEFAULT_HUE 0.1
#define DEFAULT_BLUR_SIGMA_MIN 0.1
#define DEFAULT_BLUR_SIGMA_MAX 2.0
#define MAX_BLUR_SIGMA 10.0     /* radius 30 <= WSI_AUGMENT_MAX_BLUR_RADIUS */
#define DEFAULT_SEED 0

#define PATCH_FORMATS "{ RGB, RGBA, RGBx, BGRx }"
#define AUGMENT_CAPS \
  GST_VIDEO_CAPS_MAKE (PATCH_FORMATS) "; " \
  WSI_VIEWS_MEDIA_TYPE ", format = (string) " PATCH_FORMATS \
  ", n-views = (int) [ 1, MAX ]"

enum
{
  PROP_0,
  PROP_THREADS,
  PROP_SEED,
  PROP_FLIP_H,
  PROP_FLIP_V,
  PROP_ROTATE90,
  PROP_HED_SIGMA,
  PROP_HED_SIGMA_BIAS,
  PROP_HED_PROBABILITY,
  PROP_BRIGHTNESS,
  PROP_CONTRAST,
  PROP_SATURATION,
  PROP_HUE,
  PROP_JITTER_PROBABILITY,
  PROP_BLUR_SIGMA_MIN,
  PROP_BLUR_SIGMA_MAX,
  PROP_BLUR_PROBABILITY,
  PROP_BLUR_RADIUS,
  PROP_VIEWS,
  PROP_GRAYSCALE_PROBABILITY,
  PROP_SOLARIZE_PROBABILITY,
  PROP_SOLARIZE_THRESHOLD,
};

/* A buffer in the pool with the settings it was queued under. */
typedef struct
{
  GstBuffer *buffer;
  WsiAugmentSettings settings;
  guint64 seed;
} AugmentWork;

/* Pixel layout of the images, from the caps. */
typedef struct
{
  guint pixel_bytes;
  guint r, g, b;
} PixelLayout;

struct _GstPatchAugment
{
  WsiPoolElement parent;

  /* properties, under the object lock; hed_sigma_bias < 0: hed_sigma */
  guint threads;
  guint64 seed;
  WsiAugmentSettings settings;
  /* set in NULL or READY only, so the workers read it unlocked; NULL:
   * every view */
  gchar **view_selection;

  /* set by set_caps with nothing in flight; read by the workers */
  gboolean views;
  GstVideoInfo info;            /* single patches */
  guint n_views;                /* multi-view buffers */
  PixelLayout layout;

};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS (AUGMENT_CAPS));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS (AUGMENT_CAPS));

#define gst_patch_augment_parent_class parent_class
G_DEFINE_TYPE (GstPatchAugment, gst_patch_augment, WSI_TYPE_POOL_ELEMENT);

static void
do_element_init (GstPlugin * plugin)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_patch_augment_debug, "patchaugment", 0,
        "Flips, turns, HED, colour jitter and blur of patches");
    wsipatch_element_init (plugin);
    g_once_init_leave (&done, 1);
  }
}

GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (patchaugment, "patchaugment",
    GST_RANK_NONE, GST_TYPE_PATCH_AUGMENT, do_element_init (plugin));

/* ---- caps ---------------------------------------------------------------- */

static gboolean
layout_from_format (GstVideoFormat format, PixelLayout * layout)
{
  const GstVideoFormatInfo *finfo = gst_video_format_get_info (format);

  if (format == GST_VIDEO_FORMAT_UNKNOWN || finfo == NULL
      || !GST_VIDEO_FORMAT_INFO_IS_RGB (finfo)
      || GST_VIDEO_FORMAT_INFO_BITS (finfo) != 8
      || GST_VIDEO_FORMAT_INFO_N_PLANES (finfo) != 1)
    return FALSE;
  layout->pixel_bytes = GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, 0);
  layout->r = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, 0);
  layout->g = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, 1);
  layout->b = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, 2);
  return layout->pixel_bytes == 3 || layout->pixel_bytes == 4;
}

/* The output caps are the input caps. */
static GstCaps *
gst_patch_augment_set_caps (WsiPoolElement * element, GstCaps * caps)
{
  GstPatchAugment *self = GST_PATCH_AUGMENT (element);
  GstStructure *s = gst_caps_get_structure (caps, 0);
  gint n_views = 0;

  if (gst_structure_has_name (s, WSI_VIEWS_MEDIA_TYPE)) {
    const gchar *format = gst_structure_get_string (s, "format");

    if (format == NULL || !gst_structure_get_int (s, "n-views", &n_views)
        || n_views < 1 || !layout_from_format (gst_video_format_from_string
            (format), &self->layout)) {
      GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
          ("Multi-view caps need an RGB format and n-views >= 1."),
          ("caps: %" GST_PTR_FORMAT, caps));
      return NULL;
    }
    self->views = TRUE;
    self->n_views = n_views;
    return gst_caps_ref (caps);
  }
  if (!gst_video_info_from_caps (&self->info, caps)
      || !layout_from_format (GST_VIDEO_INFO_FORMAT (&self->info),
          &self->layout)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Patches must be packed 8-bit RGB, RGBA, RGBx or BGRx."),
        ("caps: %" GST_PTR_FORMAT, caps));
    return NULL;
  }
  self->views = FALSE;
  return gst_caps_ref (caps);
}

/* ---- the work, on the workers ------------------------------------------- */

static gpointer
augment_thread_state_new (WsiPoolElement * element)
{
  return wsi_augment_scratch_new ();
}

static void
augment_thread_state_free (WsiPoolElement * element, gpointer state)
{
  wsi_augment_scratch_free (state);
}

/* The sequence number keying a single patch's draws. */
static guint64
patch_sequence (GstBuffer * buffer)
{
  GstStructure *meta = wsi_patch_meta_get (buffer);
  const WsiPatchRecord *records = NULL;
  guint n = 0;

  if (meta != NULL)
    records = wsi_patch_meta_records (meta, &n);
  if (n > 0)
    return records[0].sequence;
  return GST_BUFFER_OFFSET_IS_VALID (buffer) ? GST_BUFFER_OFFSET (buffer) : 0;
}

static WsiAugmentImage
image_at (guint8 * data, guint width, guint height, gsize stride,
    const PixelLayout * layout)
{
  WsiAugmentImage image = { data, width, height, stride, layout->pixel_bytes,
    layout->r, layout->g, layout->b
  };
  return image;
}

/* The slide of a buffer's first location, for messages. */
static const gchar *
first_path (const GstStructure * meta)
{
  const gchar *path = meta ? wsi_patch_meta_string (meta, "paths", 0) : NULL;

  return path ? path : "?";
}

static GstBuffer *
augment_patch (GstPatchAugment * self, AugmentWork * work,
    WsiAugmentScratch * scratch)
{
  GstBuffer *buffer = g_steal_pointer (&work->buffer);
  WsiAugmentPlan plan;
  WsiAugmentImage image;
  GstVideoFrame frame;

  wsi_augment_plan_draw (&plan, &work->settings, work->seed,
      patch_sequence (buffer), 0);
  if (wsi_augment_plan_is_identity (&plan))
    return buffer;

  /* Writable buffer: in place; shared: a copy (the map copies memory). */
  buffer = gst_buffer_make_writable (buffer);
  if (!gst_video_frame_map (&frame, &self->info, buffer, GST_MAP_READWRITE)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Could not map the pixels of a patch of slide \"%s\" for writing "
            "(buffer of %" G_GSIZE_FORMAT " bytes, caps say %" G_GSIZE_FORMAT
            ").", first_path (wsi_patch_meta_get (buffer)),
            gst_buffer_get_size (buffer), GST_VIDEO_INFO_SIZE (&self->info)),
        ("buffer %" GST_PTR_FORMAT, buffer));
    gst_buffer_unref (buffer);
    return NULL;
  }
  image = image_at (GST_VIDEO_FRAME_PLANE_DATA (&frame, 0),
      GST_VIDEO_FRAME_WIDTH (&frame), GST_VIDEO_FRAME_HEIGHT (&frame),
      GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0), &self->layout);
  wsi_augment_apply (&plan, &image, scratch);
  gst_video_frame_unmap (&frame);
  return buffer;
}

/* TRUE when #GstPatchAugment:views selects the view named @name: the
 * name itself, or a group prefix ("local" selects "local_3"). */
static gboolean
view_selected (GstPatchAugment * self, const gchar * name)
{
  gchar **entry;

  if (self->view_selection == NULL)
    return TRUE;
  for (entry = self->view_selection; name && *entry; entry++) {
    gsize n = strlen (*entry);

    if (strncmp (name, *entry, n) == 0 && (name[n] == '\0' || name[n] == '_'))
      return TRUE;
  }
  return FALSE;
}

/* The plan of location @sequence, view @view_index: drawn when the view is
 * selected, no operation otherwise. */
static void
view_plan (GstPatchAugment * self, const AugmentWork * work,
    const GstStructure * meta, guint64 sequence, guint view_index,
    WsiAugmentPlan * plan)
{
  if (!view_selected (self, wsi_patch_meta_string (meta, "view-names",
              view_index))) {
    memset (plan, 0, sizeof (*plan));
    return;
  }
  wsi_augment_plan_draw (plan, &work->settings, work->seed, sequence,
      view_index);
}

/* TRUE when some view of some location draws an operation. */
static gboolean
views_change (GstPatchAugment * self, const AugmentWork * work,
    const GstStructure * meta, const WsiPatchRecord * records, guint count,
    const WsiViewRecord * views, guint n_views)
{
  guint i, v;

  for (i = 0; i < count; i++)
    for (v = 0; v < n_views; v++) {
      WsiAugmentPlan plan;

      view_plan (self, work, meta, records[i].sequence,
          views[i * n_views + v].view_index, &plan);
      if (!wsi_augment_plan_is_identity (&plan))
        return TRUE;
    }
  return FALSE;
}

/* Augments the count images of memory @v, updating their view records. */
static gboolean
augment_view_memory (GstPatchAugment * self, const AugmentWork * work,
    const GstStructure * meta, GstBuffer * buffer, guint v,
    const WsiPatchRecord * records, guint count, WsiViewRecord * views,
    WsiAugmentScratch * scratch)
{
  const guint n_views = self->n_views, pb = self->layout.pixel_bytes;
  GstMapInfo map;
  gsize offset = 0;
  guint i;

  if (!gst_buffer_map_range (buffer, v, 1, &map, GST_MAP_READWRITE))
    return FALSE;
  for (i = 0; i < count; i++) {
    WsiViewRecord *view = &views[i * n_views + v];
    gsize size = (gsize) view->out_width * view->out_height * pb;
    WsiAugmentPlan plan;
    WsiAugmentImage image;
    guint turns;

    if (offset + size > map.size) {
      gst_buffer_unmap (buffer, &map);
      return FALSE;
    }
    view_plan (self, work, meta, records[i].sequence, view->view_index,
        &plan);
    if (!wsi_augment_plan_is_identity (&plan)) {
      image = image_at (map.data + offset, view->out_width, view->out_height,
          (gsize) view->out_width * pb, &self->layout);
      turns = wsi_augment_apply (&plan, &image, scratch);
      if (plan.flip_h)
        view->flags |= WSI_VIEW_FLAG_FLIP_H;
      if (plan.flip_v)
        view->flags |= WSI_VIEW_FLAG_FLIP_V;
      /* turns add up; flips are listed before them (applied first) */
      turns += (view->flags & WSI_VIEW_FLAG_ROT_MASK) >>
          WSI_VIEW_FLAG_ROT_SHIFT;
      view->flags = (view->flags & ~WSI_VIEW_FLAG_ROT_MASK) |
          ((turns % 4) << WSI_VIEW_FLAG_ROT_SHIFT);
    }
    offset += size;
  }
  gst_buffer_unmap (buffer, &map);
  return TRUE;
}

static GstBuffer *
augment_views (GstPatchAugment * self, AugmentWork * work,
    WsiAugmentScratch * scratch)
{
  GstBuffer *buffer = g_steal_pointer (&work->buffer);
  GstStructure *meta = wsi_patch_meta_get (buffer);
  const WsiPatchRecord *records = NULL;
  const WsiViewRecord *views = NULL;
  WsiViewRecord *new_views;
  guint count = 0, n_total = 0, v;
  GBytes *bytes;

  if (meta != NULL) {
    records = wsi_patch_meta_records (meta, &count);
    views = wsi_patch_meta_views (meta, &n_total);
  }
  if (meta == NULL || n_total != count * self->n_views
      || gst_buffer_n_memory (buffer) != self->n_views) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("A multi-view buffer (slide \"%s\") does not match its caps (%u "
            "views): %u memories, %u locations, %u view records.",
            first_path (meta), self->n_views, gst_buffer_n_memory (buffer),
            count, n_total), (NULL));
    gst_buffer_unref (buffer);
    return NULL;
  }
  if (self->view_selection != NULL
      && gst_structure_get_value (meta, "view-names") == NULL) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("A multi-view buffer (slide \"%s\") has no view-names, so the "
            "views property cannot select among its views.",
            first_path (meta)), (NULL));
    gst_buffer_unref (buffer);
    return NULL;
  }
  if (!views_change (self, work, meta, records, count, views, self->n_views))
    return buffer;

  buffer = gst_buffer_make_writable (buffer);
  meta = wsi_patch_meta_get (buffer);
  records = wsi_patch_meta_records (meta, &count);
  views = wsi_patch_meta_views (meta, &n_total);
  new_views = g_memdup2 (views, n_total * sizeof (WsiViewRecord));
  for (v = 0; v < self->n_views; v++) {
    if (!augment_view_memory (self, work, meta, buffer, v, records, count,
            new_views, scratch)) {
      GST_ELEMENT_ERROR (self, STREAM, FORMAT,
          ("View %u of a multi-view buffer (slide \"%s\") is smaller than "
              "its view records say, or cannot be written.", v,
              first_path (meta)), (NULL));
      g_free (new_views);
      gst_buffer_unref (buffer);
      return NULL;
    }
  }
  bytes = g_bytes_new_take (new_views, n_total * sizeof (WsiViewRecord));
  gst_structure_set (meta, "views", G_TYPE_BYTES, bytes, NULL);
  g_bytes_unref (bytes);
  return buffer;
}

static GstBuffer *
augment_process (WsiPoolElement * element, gpointer data, gpointer state)
{
  GstPatchAugment *self = GST_PATCH_AUGMENT (element);
  AugmentWork *work = data;

  if (wsi_augment_settings_is_identity (&work->settings))
    return g_steal_pointer (&work->buffer);
  if (self->views)
    return augment_views (self, work, state);
  return augment_patch (self, work, state);
}

static void
augment_work_clear (WsiPoolElement * element, gpointer data)
{
  AugmentWork *work = data;

  gst_clear_buffer (&work->buffer);
}

/* ---- streaming thread ---------------------------------------------------- */

static GstFlowReturn
gst_patch_augment_handle_buffer (WsiPoolElement * element,
    GstBuffer * buffer)
{
  GstPatchAugment *self = GST_PATCH_AUGMENT (element);
  AugmentWork work = { buffer, };
  gdouble min, max;

  GST_OBJECT_LOCK (self);
  work.settings = self->settings;
  work.seed = self->seed;
  GST_OBJECT_UNLOCK (self);
  if (work.settings.hed_sigma_bias < 0.0)
    work.settings.hed_sigma_bias = work.settings.hed_sigma;
  min = work.settings.blur_sigma_min;
  max = work.settings.blur_sigma_max;
  if (min > max) {
    gst_buffer_unref (buffer);
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("blur-sigma-min (%g) is larger than blur-sigma-max (%g).", min,
            max), (NULL));
    return GST_FLOW_ERROR;
  }
  return wsi_pool_element_queue_work (element, &work);
}

/* ---- state and properties ------------------------------------------------ */

/* READY -> PAUSED: the thread count is read now. */
static gboolean
gst_patch_augment_start (WsiPoolElement * element, guint * n_threads)
{
  GstPatchAugment *self = GST_PATCH_AUGMENT (element);

  GST_OBJECT_LOCK (self);
  *n_threads = self->threads;
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

/* The double property @prop_id's field in the settings. */
static gdouble *
settings_field (GstPatchAugment * self, guint prop_id)
{
  WsiAugmentSettings *s = &self->settings;

  switch (prop_id) {
    case PROP_FLIP_H:
      return &s->flip_h_probability;
    case PROP_FLIP_V:
      return &s->flip_v_probability;
    case PROP_ROTATE90:
      return &s->rotate90_probability;
    case PROP_HED_SIGMA:
      return &s->hed_sigma;
    case PROP_HED_SIGMA_BIAS:
      return &s->hed_sigma_bias;
    case PROP_HED_PROBABILITY:
      return &s->hed_probability;
    case PROP_BRIGHTNESS:
      return &s->brightness;
    case PROP_CONTRAST:
      return &s->contrast;
    case PROP_SATURATION:
      return &s->saturation;
    case PROP_HUE:
      return &s->hue;
    case PROP_JITTER_PROBABILITY:
      return &s->jitter_probability;
    case PROP_BLUR_SIGMA_MIN:
      return &s->blur_sigma_min;
    case PROP_BLUR_SIGMA_MAX:
      return &s->blur_sigma_max;
    case PROP_BLUR_PROBABILITY:
      return &s->blur_probability;
    case PROP_GRAYSCALE_PROBABILITY:
      return &s->grayscale_probability;
    case PROP_SOLARIZE_PROBABILITY:
      return &s->solarize_probability;
    default:
      return NULL;
  }
}

static void
gst_patch_augment_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstPatchAugment *self = GST_PATCH_AUGMENT (object);
  gdouble *field;

  GST_OBJECT_LOCK (self);
  field = settings_field (self, prop_id);
  if (field != NULL) {
    *field = g_value_get_double (value);
  } else if (prop_id == PROP_THREADS) {
    self->threads = g_value_get_uint (value);
  } else if (prop_id == PROP_BLUR_RADIUS) {
    self->settings.blur_radius = g_value_get_uint (value);
  } else if (prop_id == PROP_SOLARIZE_THRESHOLD) {
    self->settings.solarize_threshold = g_value_get_uint (value);
  } else if (prop_id == PROP_VIEWS) {
    const gchar *text = g_value_get_string (value);

    /* the workers read it unlocked: only while they are not running */
    if (GST_STATE (self) > GST_STATE_READY
        || GST_STATE_PENDING (self) > GST_STATE_READY) {
      GST_OBJECT_UNLOCK (self);
      g_warning ("patchaugment: views can only be set in the NULL or READY "
          "state; \"%s\" refused", text ? text : "");
      return;
    }
    g_strfreev (self->view_selection);
    self->view_selection = NULL;
    if (text != NULL && *text != '\0') {
      guint i;

      self->view_selection = g_strsplit (text, ",", -1);
      for (i = 0; self->view_selection[i]; i++)
        g_strstrip (self->view_selection[i]);
    }
  } else if (prop_id == PROP_SEED) {
    self->seed = g_value_get_uint64 (value);
  } else {
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_augment_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstPatchAugment *self = GST_PATCH_AUGMENT (object);
  gdouble *field;

  GST_OBJECT_LOCK (self);
  field = settings_field (self, prop_id);
  if (field != NULL) {
    g_value_set_double (value, *field);
  } else if (prop_id == PROP_THREADS) {
    g_value_set_uint (value, self->threads);
  } else if (prop_id == PROP_BLUR_RADIUS) {
    g_value_set_uint (value, self->settings.blur_radius);
  } else if (prop_id == PROP_SOLARIZE_THRESHOLD) {
    g_value_set_uint (value, self->settings.solarize_threshold);
  } else if (prop_id == PROP_VIEWS) {
    g_value_take_string (value, self->view_selection ?
        g_strjoinv (",", self->view_selection) : NULL);
  } else if (prop_id == PROP_SEED) {
    g_value_set_uint64 (value, self->seed);
  } else {
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_augment_finalize (GObject * object)
{
  GstPatchAugment *self = GST_PATCH_AUGMENT (object);

  g_strfreev (self->view_selection);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
install_double (GObjectClass * gobject_class, guint prop_id,
    const gchar * name, const gchar * nick, const gchar * blurb, gdouble min,
    gdouble max, gdouble def)
{
  g_object_class_install_property (gobject_class, prop_id,
      wsi_param_spec_double (name, nick, blurb, min, max, def,
          G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
          G_PARAM_STATIC_STRINGS));
}

static void
gst_patch_augment_class_init (GstPatchAugmentClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  WsiPoolElementClass *pool_class = WSI_POOL_ELEMENT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->set_property = gst_patch_augment_set_property;
  gobject_class->get_property = gst_patch_augment_get_property;
  gobject_class->finalize = gst_patch_augment_finalize;

  g_object_class_install_property (gobject_class, PROP_THREADS,
      wsi_ordered_pool_param_spec_threads ("Worker threads augmenting "
          "patches", DEFAULT_THREADS));
  g_object_class_install_property (gobject_class, PROP_SEED,
      wsi_param_spec_uint64 ("seed", "Seed",
          "Seed of the draws; with the patch sequence and the view index it "
          "fixes every patch's augmentation (0 to 2^64-1, default 0)",
          0, G_MAXUINT64, DEFAULT_SEED,
          G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
          G_PARAM_STATIC_STRINGS));
  install_double (gobject_class, PROP_FLIP_H, "flip-h", "Flip horizontally",
      "Probability of a left-right flip (0 to 1, default 0.5)", 0.0, 1.0,
      DEFAULT_FLIP);
  install_double (gobject_class, PROP_FLIP_V, "flip-v", "Flip vertically",
      "Probability of a top-bottom flip (0 to 1, default 0.5)", 0.0, 1.0,
      DEFAULT_FLIP);
  install_double (gobject_class, PROP_ROTATE90, "rotate90",
      "Rotate by quarter turns", "Probability of turning a square patch by "
      "1, 2 or 3 quarter turns counter-clockwise, each equally likely "
      "(0 to 1, default 0.5; non-square images are never turned)", 0.0, 1.0,
      DEFAULT_FLIP);
  install_double (gobject_class, PROP_HED_SIGMA, "hed-sigma", "HED sigma",
      "Half-width of the per-stain scale range: alpha from [1 - sigma, "
      "1 + sigma] (optical density factor, 0 to 1, default 0.05: Tellez "
      "\"light\"; 0.2 is \"strong\")", 0.0, 1.0, DEFAULT_HED_SIGMA);
  install_double (gobject_class, PROP_HED_SIGMA_BIAS, "hed-sigma-bias",
      "HED bias sigma", "Half-width of the per-stain bias range: beta from "
      "[-sigma-bias, sigma-bias] (optical density units, -1 to 1, default "
      "-1; negative: the same as hed-sigma, as Tellez et al. define it)",
      -1.0, 1.0, DEFAULT_HED_SIGMA_BIAS);
  install_double (gobject_class, PROP_HED_PROBABILITY, "hed-probability",
      "HED probability", "Probability of the HED stain augmentation "
      "(0 to 1, default 0: off)", 0.0, 1.0, 0.0);
  install_double (gobject_class, PROP_BRIGHTNESS, "brightness", "Brightness",
      "Brightness jitter: pixels times a factor from [max (0, 1 - b), "
      "1 + b] (0 to 1, default 0.4)", 0.0, 1.0, DEFAULT_BRIGHTNESS);
  install_double (gobject_class, PROP_CONTRAST, "contrast", "Contrast",
      "Contrast jitter: blend with the patch's mean grey by a factor from "
      "[max (0, 1 - c), 1 + c] (0 to 1, default 0.4)", 0.0, 1.0,
      DEFAULT_CONTRAST);
  install_double (gobject_class, PROP_SATURATION, "saturation", "Saturation",
      "Saturation jitter: blend with each pixel's grey by a factor from "
      "[max (0, 1 - s), 1 + s] (0 to 1, default 0.2)", 0.0, 1.0,
      DEFAULT_SATURATION);
  install_double (gobject_class, PROP_HUE, "hue", "Hue",
      "Hue jitter: hue rotated by an angle from [-h, h] (turns, 0 to 0.5, "
      "default 0.1)", 0.0, 0.5, DEFAULT_HUE);
  install_double (gobject_class, PROP_JITTER_PROBABILITY,
      "jitter-probability", "Jitter probability", "Probability of the "
      "colour jitter, all four parts together (0 to 1, default 0: off)",
      0.0, 1.0, 0.0);
  install_double (gobject_class, PROP_BLUR_SIGMA_MIN, "blur-sigma-min",
      "Blur sigma min", "Smallest Gaussian blur sigma (pixels, 0 to 10, "
      "default 0.1; at most blur-sigma-max)", 0.0, MAX_BLUR_SIGMA,
      DEFAULT_BLUR_SIGMA_MIN);
  install_double (gobject_class, PROP_BLUR_SIGMA_MAX, "blur-sigma-max",
      "Blur sigma max", "Largest Gaussian blur sigma (pixels, 0 to 10, "
      "default 2; the kernel radius is blur-radius or ceil (3 sigma))", 0.0,
      MAX_BLUR_SIGMA, DEFAULT_BLUR_SIGMA_MAX);
  g_object_class_install_property (gobject_class, PROP_BLUR_RADIUS,
      wsi_param_spec_uint ("blur-radius", "Blur radius",
          "Gaussian blur kernel radius (pixels, 0 to 32, default 0 = "
          "ceil (3 sigma) as OpenCV; torchvision's GaussianBlur with "
          "kernel_size k, as DINOv2's k = 9, is radius (k - 1) / 2)", 0,
          WSI_AUGMENT_MAX_BLUR_RADIUS, 0,
          G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
          G_PARAM_STATIC_STRINGS));
  install_double (gobject_class, PROP_GRAYSCALE_PROBABILITY,
      "grayscale-probability", "Greyscale probability", "Probability of "
      "turning the image grey, R = G = B = 0.2989 R + 0.587 G + 0.114 B, "
      "after the jitter (torchvision's RandomGrayscale; 0 to 1, default 0)",
      0.0, 1.0, 0.0);
  install_double (gobject_class, PROP_SOLARIZE_PROBABILITY,
      "solarize-probability", "Solarize probability", "Probability of "
      "solarizing the image, last (bytes >= solarize-threshold become "
      "255 - byte, as PIL's ImageOps.solarize; 0 to 1, default 0)", 0.0,
      1.0, 0.0);
  g_object_class_install_property (gobject_class, PROP_SOLARIZE_THRESHOLD,
      wsi_param_spec_uint ("solarize-threshold", "Solarize threshold",
          "Smallest byte value that solarization inverts (0 to 256, default "
          "128; 256 inverts nothing)", 0, 256, 128,
          G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
          G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_VIEWS,
      g_param_spec_string ("views", "Views",
          "Views of multi-view buffers to augment: comma-separated view "
          "names or group names (\"local\" selects local_0, local_1, ...); "
          "unset or empty: every view (default); ignored for single "
          "patches. Chain several patchaugment with different views and "
          "settings for per-view recipes", NULL,
          G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY |
          G_PARAM_STATIC_STRINGS));
  install_double (gobject_class, PROP_BLUR_PROBABILITY, "blur-probability",
      "Blur probability", "Probability of the Gaussian blur (0 to 1, "
      "default 0: off)", 0.0, 1.0, 0.0);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Patch augmentation", "Filter/Effect/Video",
      "Random flips, quarter turns, HED stain augmentation, colour jitter "
      "and Gaussian blur of patches and views, reproducible from a seed",
      "gst-wsi developers");

  pool_class->work_size = sizeof (AugmentWork);
  pool_class->worker_name = "patchaugment";
  pool_class->start = GST_DEBUG_FUNCPTR (gst_patch_augment_start);
  pool_class->thread_state_new = augment_thread_state_new;
  pool_class->thread_state_free = augment_thread_state_free;
  pool_class->handle_buffer =
      GST_DEBUG_FUNCPTR (gst_patch_augment_handle_buffer);
  pool_class->process = augment_process;
  pool_class->work_clear = augment_work_clear;
  pool_class->set_caps = GST_DEBUG_FUNCPTR (gst_patch_augment_set_caps);

  /* numbers outside their range refuse the start (wsirefusal.h) */
  wsi_refusal_class_init (GST_ELEMENT_CLASS (klass));
}

static void
gst_patch_augment_init (GstPatchAugment * self)
{
  WsiAugmentSettings *s = &self->settings;

  /* Caps and buffers pass unchanged: let the peers negotiate through us. */
  GST_PAD_SET_PROXY_CAPS (WSI_POOL_ELEMENT_SINK_PAD (self));
  GST_PAD_SET_PROXY_ALLOCATION (WSI_POOL_ELEMENT_SINK_PAD (self));
  GST_PAD_SET_PROXY_CAPS (WSI_POOL_ELEMENT_SRC_PAD (self));
  GST_PAD_SET_PROXY_ALLOCATION (WSI_POOL_ELEMENT_SRC_PAD (self));
  self->threads = DEFAULT_THREADS;
  self->seed = DEFAULT_SEED;
  s->flip_h_probability = s->flip_v_probability = DEFAULT_FLIP;
  s->rotate90_probability = DEFAULT_FLIP;
  s->hed_sigma = DEFAULT_HED_SIGMA;
  s->hed_sigma_bias = DEFAULT_HED_SIGMA_BIAS;
  s->brightness = DEFAULT_BRIGHTNESS;
  s->contrast = DEFAULT_CONTRAST;
  s->saturation = DEFAULT_SATURATION;
  s->hue = DEFAULT_HUE;
  s->blur_sigma_min = DEFAULT_BLUR_SIGMA_MIN;
  s->blur_sigma_max = DEFAULT_BLUR_SIGMA_MAX;
  s->solarize_threshold = 128;
}
