/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-stainestimate
 * @title: stainestimate
 *
 * stainestimate estimates each slide's stains once, from its overview's
 * tissue pixels (the tissue mask's, when tissuemask ran before it; every
 * overview pixel otherwise), and writes them into the slide meta as
 * columns: Macenko's stain matrix and 99th-percentile concentrations
 * (torchstain's defaults), Vahadane's stain matrix (sparse non-negative
 * factorisation, lambda 0.1, of up to 20,000 tissue pixels) and Reinhard's l-alpha-beta means and standard
 * deviations (see `gst/wsipatch/wsistainmeta.h` for the names and
 * `wsistain.h` for the maths). patchreader copies slide columns onto every
 * patch, so `stainnorm` after patchreader normalises each patch with its
 * slide's estimate, and Python sees the numbers in `Batch.columns`.
 *
 * Place it on the slide branch, after tissuemask and before patchsampler.
 * An estimate is kept per slide (by its uri) for the element's life, so a
 * slide visited again, whose overview wsislidesrc skips when tissuemask
 * has its mask cached, keeps its estimate. A slide whose overview has no
 * usable tissue (glass only, one colour) gets empty columns and is named
 * once in a warning; its patches pass stainnorm unchanged. With
 * tissuemask's `mask-cache-dir` warm from an earlier run, a slide's first
 * visit may come without an overview: it is named once and gets no
 * estimate.
 *
 * Slides are estimated on worker threads (#GstStainEstimate:threads) and
 * leave in input order; an estimate is a pure function of the overview and
 * mask, whatever the thread count.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 wsislidesrc location=slides/ ! tissuemask ! stainestimate ! \
 *     queue ! patchsampler patch-size=224 patches-per-slide=16 ! \
 *     patchinterleave ! patchreader ! stainnorm method=macenko ! \
 *     patchbatch batch-size=16 ! fakesink sync=false
 * ]| Estimates every slide once, then maps each patch's stains onto
 * torchstain's reference stains.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <gst/wsi/wsienumtype.h>
#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsirefusal.h>

#include "gststainestimate.h"
#include "gstwsipatchelements.h"
#include "wsistain.h"
#include "wsistainmeta.h"

GST_DEBUG_CATEGORY_STATIC (gst_stain_estimate_debug);
#define GST_CAT_DEFAULT gst_stain_estimate_debug

#define DEFAULT_THREADS 1
#define N_COLUMNS 7

/* Which estimates a slide gets (Macenko's always: it decides whether the
 * overview has stained tissue at all). */
typedef enum
{
  METHOD_MACENKO = 1 << 0,
  METHOD_VAHADANE = 1 << 1,
  METHOD_REINHARD = 1 << 2,
} EstimateMethods;

#define DEFAULT_METHODS (METHOD_MACENKO | METHOD_VAHADANE | METHOD_REINHARD)

#define GST_TYPE_STAIN_ESTIMATE_METHODS (gst_stain_estimate_methods_get_type ())
static GType
gst_stain_estimate_methods_get_type (void)
{
  static gsize type = 0;
  static const GFlagsValue values[] = {
    {METHOD_MACENKO, "Macenko's stain matrix", "macenko"},
    {METHOD_VAHADANE, "Vahadane's sparse factorisation", "vahadane"},
    {METHOD_REINHARD, "Reinhard's l-alpha-beta statistics", "reinhard"},
    {0, NULL, NULL}
  };

  return wsi_flags_type_once (&type, "GstStainEstimateMethods", values);
}

enum
{
  PROP_0,
  PROP_THREADS,
  PROP_METHODS,
  PROP_SLIDES_ESTIMATED,
  PROP_SLIDES_WITHOUT,
};

typedef struct
{
  GstBuffer *buffer;
  guint methods;
} EstimateWork;

/* The column values of one slide's estimates. */
typedef struct
{
  gchar *values[N_COLUMNS + 1];
} SlideColumns;

struct _GstStainEstimate
{
  WsiPoolElement parent;

  guint threads;                /* object lock */
  guint methods;                /* object lock; copied per slide */

  GMutex lock;                  /* the table and the counters */
  GHashTable *estimates;        /* uri -> SlideColumns */
  GHashTable *warned;           /* uris named in a warning */
  guint64 estimated;
  guint64 without;
};

static const gchar *const column_names[N_COLUMNS + 1] = {
  WSI_STAIN_COL_PIXELS, WSI_STAIN_COL_MATRIX, WSI_STAIN_COL_MAX_C,
  WSI_STAIN_COL_LAB_MEAN, WSI_STAIN_COL_LAB_STD,
  WSI_STAIN_COL_VAHADANE_MATRIX, WSI_STAIN_COL_VAHADANE_MAX_C, NULL
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS (WSI_SLIDE_MEDIA_TYPE));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS (WSI_SLIDE_MEDIA_TYPE));

#define gst_stain_estimate_parent_class parent_class
G_DEFINE_TYPE (GstStainEstimate, gst_stain_estimate, WSI_TYPE_POOL_ELEMENT);

static void
do_element_init (GstPlugin * plugin)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_stain_estimate_debug, "stainestimate", 0,
        "Per-slide stain estimates from the overview");
    wsipatch_element_init (plugin);
    g_once_init_leave (&done, 1);
  }
}

GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (stainestimate, "stainestimate",
    GST_RANK_NONE, GST_TYPE_STAIN_ESTIMATE, do_element_init (plugin));

static void
slide_columns_free (gpointer data)
{
  SlideColumns *c = data;
  guint i;

  for (i = 0; i < N_COLUMNS; i++)
    g_free (c->values[i]);
  g_free (c);
}

/* The estimates of an overview (and mask): FALSE when neither method has
 * one (the columns are then empty). */
static gboolean
estimate_overview (const guint8 * data, gint width, gint height,
    const guint8 * mask, guint methods, SlideColumns * out)
{
  WsiStainImage image = { (guint8 *) data, width, height, (gsize) width * 3,
    3, 0, 1, 2
  };
  WsiStainPixels px = { &image, mask, (gsize) width };
  WsiStainMatrix m, v;
  WsiStainLab lab;
  guint64 n_tissue = 0;
  gboolean has_m, has_lab, has_v;
  gdouble numbers[6];

  has_m = wsi_stain_estimate_macenko (&px, &m, &n_tissue);
  has_lab = has_m && (methods & METHOD_REINHARD)
      && wsi_stain_estimate_lab (&px, &lab);
  out->values[0] = g_strdup_printf ("%" G_GUINT64_FORMAT, n_tissue);
  if (has_m) {
    memcpy (numbers, m.stains[0], sizeof (m.stains[0]));
    memcpy (numbers + 3, m.stains[1], sizeof (m.stains[1]));
    out->values[1] = wsi_stain_format_numbers (numbers, 6);
    out->values[2] = wsi_stain_format_numbers (m.max_c, 2);
  } else {
    out->values[1] = g_strdup ("");
    out->values[2] = g_strdup ("");
  }
  /* Reinhard's statistics only where there are stains: statistics of
   * glass would map glass onto tissue colours */
  out->values[3] = has_lab ? wsi_stain_format_numbers (lab.mean, 3) :
      g_strdup ("");
  out->values[4] = has_lab ? wsi_stain_format_numbers (lab.std, 3) :
      g_strdup ("");
  /* Vahadane's factorisation: here, once per slide, never per patch */
  has_v = has_m && (methods & METHOD_VAHADANE)
      && wsi_stain_estimate_vahadane (&px, &v, NULL);
  if (has_v) {
    memcpy (numbers, v.stains[0], sizeof (v.stains[0]));
    memcpy (numbers + 3, v.stains[1], sizeof (v.stains[1]));
  }
  out->values[5] = has_v ? wsi_stain_format_numbers (numbers, 6) :
      g_strdup ("");
  out->values[6] = has_v ? wsi_stain_format_numbers (v.max_c, 2) :
      g_strdup ("");
  return has_m;
}

/* Warns once per slide. */
static void
warn_slide (GstStainEstimate * self, const gchar * uri, const gchar * path,
    const gchar * why)
{
  gboolean first;

  g_mutex_lock (&self->lock);
  first = g_hash_table_add (self->warned, g_strdup (uri));
  self->without++;
  g_mutex_unlock (&self->lock);
  if (first)
    GST_ELEMENT_WARNING (self, STREAM, FORMAT,
        ("Slide \"%s\" has no stain estimate: %s; its patches pass stainnorm "
            "unchanged.", path, why), (NULL));
}

static GstBuffer *
estimate_process (WsiPoolElement * element, gpointer data, gpointer state)
{
  GstStainEstimate *self = GST_STAIN_ESTIMATE (element);
  EstimateWork *work = data;
  GstBuffer *buffer = gst_buffer_make_writable (g_steal_pointer
      (&work->buffer));
  GstStructure *meta = wsi_slide_meta_get (buffer);
  SlideColumns *cached, *fresh = NULL;
  const gchar *path, *uri;
  gboolean has_overview = FALSE, has_mask = FALSE;
  gint width = 0, height = 0;

  if (meta == NULL)
    return buffer;
  path = gst_structure_get_string (meta, "path");
  uri = gst_structure_get_string (meta, "uri");
  if (path == NULL)
    path = "?";
  if (uri == NULL)
    uri = path;

  g_mutex_lock (&self->lock);
  cached = g_hash_table_lookup (self->estimates, uri);
  g_mutex_unlock (&self->lock);

  if (cached == NULL) {
    GstMapInfo map;
    gsize rgb_size;

    gst_structure_get_boolean (meta, "has-overview", &has_overview);
    gst_structure_get_boolean (meta, "has-mask", &has_mask);
    gst_structure_get_int (meta, "overview-width", &width);
    gst_structure_get_int (meta, "overview-height", &height);
    rgb_size = (gsize) MAX (width, 0) * MAX (height, 0) * 3;
    if (!has_overview || width <= 0 || height <= 0) {
      warn_slide (self, uri, path, "it came without an overview");
      return buffer;
    }
    if (!gst_buffer_map (buffer, &map, GST_MAP_READ)
        || map.size < rgb_size) {
      if (map.memory != NULL)
        gst_buffer_unmap (buffer, &map);
      warn_slide (self, uri, path, "its overview is shorter than its size");
      return buffer;
    }
    fresh = g_new0 (SlideColumns, 1);
    if (!estimate_overview (map.data, width, height, has_mask
            && map.size >= rgb_size + (gsize) width * height ?
            map.data + rgb_size : NULL, work->methods, fresh))
      warn_slide (self, uri, path, "its overview has too little stained "
          "tissue (optical density above 0.15 in every channel) or only one "
          "colour");
    else {
      g_mutex_lock (&self->lock);
      self->estimated++;
      g_mutex_unlock (&self->lock);
    }
    gst_buffer_unmap (buffer, &map);
    g_mutex_lock (&self->lock);
    if (!g_hash_table_contains (self->estimates, uri))
      g_hash_table_insert (self->estimates, g_strdup (uri), fresh);
    else
      slide_columns_free (fresh);
    cached = g_hash_table_lookup (self->estimates, uri);
    g_mutex_unlock (&self->lock);
  }
  /* the table keeps entries for the element's life: no lock needed */
  wsi_stain_meta_set_columns (meta, column_names,
      (const gchar * const *) cached->values);
  return buffer;
}

static void
estimate_work_clear (WsiPoolElement * element, gpointer data)
{
  EstimateWork *work = data;

  gst_clear_buffer (&work->buffer);
}

static GstFlowReturn
gst_stain_estimate_handle_buffer (WsiPoolElement * element,
    GstBuffer * buffer)
{
  GstStainEstimate *self = GST_STAIN_ESTIMATE (element);
  EstimateWork work = { buffer, 0 };

  GST_OBJECT_LOCK (self);
  work.methods = self->methods;
  GST_OBJECT_UNLOCK (self);

  return wsi_pool_element_queue_work (element, &work);
}

static gboolean
gst_stain_estimate_start (WsiPoolElement * element, guint * n_threads)
{
  GstStainEstimate *self = GST_STAIN_ESTIMATE (element);

  GST_OBJECT_LOCK (self);
  *n_threads = self->threads;
  GST_OBJECT_UNLOCK (self);
  g_mutex_lock (&self->lock);
  g_hash_table_remove_all (self->warned);
  self->estimated = self->without = 0;
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static void
gst_stain_estimate_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstStainEstimate *self = GST_STAIN_ESTIMATE (object);

  switch (prop_id) {
    case PROP_THREADS:
      GST_OBJECT_LOCK (self);
      self->threads = g_value_get_uint (value);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_METHODS:
      GST_OBJECT_LOCK (self);
      self->methods = g_value_get_flags (value) | METHOD_MACENKO;
      GST_OBJECT_UNLOCK (self);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_stain_estimate_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstStainEstimate *self = GST_STAIN_ESTIMATE (object);

  switch (prop_id) {
    case PROP_THREADS:
      GST_OBJECT_LOCK (self);
      g_value_set_uint (value, self->threads);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_METHODS:
      GST_OBJECT_LOCK (self);
      g_value_set_flags (value, self->methods);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_SLIDES_ESTIMATED:
      g_mutex_lock (&self->lock);
      g_value_set_uint64 (value, self->estimated);
      g_mutex_unlock (&self->lock);
      break;
    case PROP_SLIDES_WITHOUT:
      g_mutex_lock (&self->lock);
      g_value_set_uint64 (value, self->without);
      g_mutex_unlock (&self->lock);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_stain_estimate_finalize (GObject * object)
{
  GstStainEstimate *self = GST_STAIN_ESTIMATE (object);

  g_hash_table_unref (self->estimates);
  g_hash_table_unref (self->warned);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_stain_estimate_class_init (GstStainEstimateClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  WsiPoolElementClass *pool_class = WSI_POOL_ELEMENT_CLASS (klass);

  gobject_class->set_property = gst_stain_estimate_set_property;
  gobject_class->get_property = gst_stain_estimate_get_property;
  gobject_class->finalize = gst_stain_estimate_finalize;

  g_object_class_install_property (gobject_class, PROP_THREADS,
      wsi_ordered_pool_param_spec_threads ("Worker threads estimating "
          "slides", DEFAULT_THREADS));
  g_object_class_install_property (gobject_class, PROP_METHODS,
      g_param_spec_flags ("methods", "Methods",
          "Estimates each slide gets (flags: macenko, vahadane, reinhard, "
          "joined with +; default all three). Macenko's is always made: it "
          "decides whether the overview has stained tissue. Vahadane's "
          "factorisation is most of the cost (about 60 ms of CPU a slide); "
          "a slide's estimates are kept for the element's life, so change "
          "it only before the first slide", GST_TYPE_STAIN_ESTIMATE_METHODS,
          DEFAULT_METHODS, G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY |
          G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_SLIDES_ESTIMATED,
      wsi_param_spec_uint64 ("slides-estimated", "Slides estimated",
          "Slides whose overview gave a stain estimate since the element "
          "left READY (0 to 2^64-1; a slide visited again is not estimated "
          "again)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_SLIDES_WITHOUT,
      wsi_param_spec_uint64 ("slides-without-estimate",
          "Slides without an estimate", "Slide visits that got no stain "
          "estimate (no overview, or no usable tissue in it) since the "
          "element left READY (0 to 2^64-1)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Slide stain estimate", "Filter/Analyzer",
      "Estimates each slide's H&E stains (Macenko, Vahadane, Reinhard) once from its "
      "overview's tissue pixels and writes them into the slide meta",
      "gst-wsi developers");

  pool_class->work_size = sizeof (EstimateWork);
  pool_class->worker_name = "stainestimate";
  pool_class->start = GST_DEBUG_FUNCPTR (gst_stain_estimate_start);
  pool_class->handle_buffer =
      GST_DEBUG_FUNCPTR (gst_stain_estimate_handle_buffer);
  pool_class->process = estimate_process;
  pool_class->work_clear = estimate_work_clear;

  /* numbers outside their range refuse the start (wsirefusal.h) */
  wsi_refusal_class_init (GST_ELEMENT_CLASS (klass));
}

static void
gst_stain_estimate_init (GstStainEstimate * self)
{
  GST_PAD_SET_PROXY_CAPS (WSI_POOL_ELEMENT_SINK_PAD (self));
  GST_PAD_SET_PROXY_ALLOCATION (WSI_POOL_ELEMENT_SINK_PAD (self));
  GST_PAD_SET_PROXY_CAPS (WSI_POOL_ELEMENT_SRC_PAD (self));
  GST_PAD_SET_PROXY_ALLOCATION (WSI_POOL_ELEMENT_SRC_PAD (self));
  self->threads = DEFAULT_THREADS;
  self->methods = DEFAULT_METHODS;
  g_mutex_init (&self->lock);
  self->estimates = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      slide_columns_free);
  self->warned = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      NULL);
}
