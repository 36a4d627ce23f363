/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-stainnorm
 * @title: stainnorm
 *
 * stainnorm maps the H&E stains of each decoded patch onto a target's:
 * Reinhard et al. 2001 (#GstStainNorm:method=reinhard: each channel of
 * Ruderman's l-alpha-beta space matched in mean and standard deviation)
 * or Macenko et al. 2009 (method=macenko, torchstain's defaults Io = 240,
 * beta = 0.15, alpha = 1: concentrations on the source's stain vectors,
 * rescaled by the 99th percentiles, recomposed on the target's) or
 * Vahadane et al. 2016 (method=vahadane: the stain vectors of a sparse
 * non-negative factorisation that stainestimate runs once per slide,
 * applied as Macenko's; estimate=slide only). The maths is in
 * `gst/wsipatch/wsistain.h`.
 *
 * The target is #GstStainNorm:reference, an image file whose pixels (all
 * of them) give the target statistics, decoded by GStreamer's own
 * decoders (PNG and JPEG with gst-plugins-good; whatever decodebin reads;
 * a TIFF's first image through gst-plugins-good's gdk-pixbuf decoder),
 * or, when unset, torchstain's built-in Macenko target (HERef and maxCRef
 * of Macenko's reference implementation; Vahadane's too). Reinhard has no standard
 * target: method=reinhard needs a reference.
 *
 * The source estimate is the slide's (#GstStainNorm:estimate=slide, the
 * default): `stainestimate` on the slide branch estimates each slide once
 * from its overview's tissue, and patchreader copies the numbers onto
 * every patch as columns, so neighbouring patches of one slide get the
 * same mapping. estimate=patch estimates each patch from its own pixels,
 * as the Python tools do, and uses the slide's estimate where the patch
 * has too little tissue (#GstStainNorm:min-tissue) or no usable estimate
 * (glass, one colour, black): counted in #GstStainNorm:patches-fallback.
 * A patch with no estimate at all passes unchanged
 * (#GstStainNorm:patches-unchanged); nothing fails on glass, pen or black.
 * Each patch gets the columns `stain-source` (slide, patch, fallback or
 * none), `stain-used` (the numbers applied) and `stain-jitter`, seen in
 * Python as `Batch.columns`.
 *
 * Stain augmentation (#GstStainNorm:augment-probability, Macenko and
 * Vahadane): Tellez et al.'s HED jitter on the slide's own stain matrix
 * instead of a fixed one: each stain's scaled concentration becomes
 * alpha c + beta, alpha from [1 - #GstStainNorm:augment-sigma,
 * 1 + augment-sigma], beta from [-#GstStainNorm:augment-bias,
 * augment-bias], then recomposed on the target's stains; the draws are a
 * pure function of #GstStainNorm:seed and the patch's sequence number, and
 * are written in the `stain-jitter` column ("alpha_h alpha_e beta_h
 * beta_e", "" when none).
 *
 * RandStainNA-style augmentation (#GstStainNorm:randstain-probability,
 * method=reinhard; `wsirandstain.h`): a drawn patch is normalised onto
 * l-alpha-beta means and deviations drawn from normal distributions fitted
 * to the statistics of the distinct slides seen so far in stream order
 * (the deviations times #GstStainNorm:randstain-spread) instead of onto
 * the reference's; without a reference, undrawn patches pass unchanged.
 * The draws are a pure function of #GstStainNorm:seed, the patch's
 * sequence and the stream order, written in the columns `stain-randstain`
 * and `stain-randstain-dist`.
 *
 * Input: single patches (video/x-raw RGB, RGBA, RGBx or BGRx, as
 * patchreader makes them) or patchviews' multi-view buffers of one
 * location (`application/x-wsi-views`, one GstMemory per view): every view
 * gets the location's mapping (estimate=patch: its own estimate; the
 * columns then say view 0's), its augmentation draws keyed by its view
 * index, and `stain-jitter` / `stain-randstain` hold one field per view,
 * separated by ';'.
 *
 * The work runs on a pool of worker threads; output order is input order
 * and every byte is the same whatever #GstStainNorm:threads is.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 wsislidesrc location=slides/ ! tissuemask ! stainestimate ! \
 *     queue ! patchsampler patch-size=224 patches-per-slide=16 ! \
 *     patchinterleave ! patchreader ! stainnorm method=macenko ! \
 *     patchbatch batch-size=16 ! fakesink sync=false
 * ]| Normalises every patch with its slide's estimate onto torchstain's
 * target, and ends when every slide has given its 16 patches.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <gst/video/video.h>
#include <gst/wsi/wsienumtype.h>
#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsirefusal.h>
#include <gst/wsi/wsirng.h>

#include "gststainnorm.h"
#include "gstwsipatchelements.h"
#include "wsistain.h"
#include "wsistainmeta.h"
#include "wsirandstain.h"
#include "wsistainref.h"

GST_DEBUG_CATEGORY_STATIC (gst_stain_norm_debug);
#define GST_CAT_DEFAULT gst_stain_norm_debug

#define DEFAULT_THREADS 0
#define DEFAULT_METHOD WSI_STAIN_MACENKO
#define DEFAULT_MIN_TISSUE 0.1
#define DEFAULT_AUGMENT_SIGMA 0.05

#define PATCH_FORMATS "{ RGB, RGBA, RGBx, BGRx }"
#define NORM_CAPS \
  GST_VIDEO_CAPS_MAKE (PATCH_FORMATS) "; " \
  WSI_VIEWS_MEDIA_TYPE ", format = (string) " PATCH_FORMATS \
  ", n-views = (int) [ 1, MAX ]"

typedef enum
{
  STAIN_ESTIMATE_SLIDE = 0,
  STAIN_ESTIMATE_PATCH = 1,
} StainEstimateMode;

enum
{
  PROP_0,
  PROP_THREADS,
  PROP_METHOD,
  PROP_REFERENCE,
  PROP_ESTIMATE,
  PROP_MIN_TISSUE,
  PROP_SEED,
  PROP_AUGMENT_PROBABILITY,
  PROP_AUGMENT_SIGMA,
  PROP_AUGMENT_BIAS,
  PROP_RANDSTAIN_PROBABILITY,
  PROP_RANDSTAIN_SPREAD,
  PROP_PATCHES_SLIDE,
  PROP_PATCHES_PATCH,
  PROP_PATCHES_FALLBACK,
  PROP_PATCHES_UNCHANGED,
};

/* Stain augmentation settings, copied into each work item. */
typedef WsiStainJitter StainJitter;

typedef struct
{
  GstBuffer *buffer;
  StainJitter jitter;
  /* RandStainNA (method=reinhard): drawn on the streaming thread, in
   * stream order, since the distribution grows with each new slide */
  gboolean randstain;           /* the element draws at all */
  gdouble randstain_probability;
  WsiRandStainDist randstain_dist;      /* n_slides 0: none yet */
} NormWork;

struct _GstStainNorm
{
  WsiPoolElement parent;

  /* properties, object lock; read by the workers only between start and
   * stop (set in NULL or READY) */
  guint threads;
  WsiStainMethod method;
  gchar *reference;
  StainEstimateMode estimate;
  gdouble min_tissue;
  StainJitter jitter;           /* mutable in PLAYING: copied per patch */
  gdouble randstain_probability;
  gdouble randstain_spread;

  /* the slides' statistics so far: the streaming thread only */
  WsiRandStain randstain;

  /* the target, fixed by start */
  WsiStainMatrix target_matrix;
  WsiStainLab target_lab;
  gboolean have_target_lab;

  /* set by set_caps with nothing in flight */
  GstVideoInfo info;
  guint pixel_bytes, r, g, b;
  gboolean views;               /* multi-view buffers of n_views */
  guint n_views;

  gint counts[WSI_STAIN_N_SOURCES];       /* atomics; patch counts wrap at 2^31 */
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (NORM_CAPS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (NORM_CAPS));

#define gst_stain_norm_parent_class parent_class
G_DEFINE_TYPE (GstStainNorm, gst_stain_norm, WSI_TYPE_POOL_ELEMENT);

#define GST_TYPE_STAIN_NORM_METHOD (gst_stain_norm_method_get_type ())
static GType
gst_stain_norm_method_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {WSI_STAIN_REINHARD, "Reinhard: l-alpha-beta means and deviations",
        "reinhard"},
    {WSI_STAIN_MACENKO, "Macenko: stain vectors and concentrations",
        "macenko"},
    {WSI_STAIN_VAHADANE, "Vahadane: the slide's sparse stain factorisation, "
          "applied as Macenko", "vahadane"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type, "GstStainNormMethod", values);
}

#define GST_TYPE_STAIN_NORM_ESTIMATE (gst_stain_norm_estimate_get_type ())
static GType
gst_stain_norm_estimate_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {STAIN_ESTIMATE_SLIDE, "The slide's estimate (stainestimate)", "slide"},
    {STAIN_ESTIMATE_PATCH, "Each patch's own, the slide's as fallback",
        "patch"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type, "GstStainNormEstimate", values);
}

static void
do_element_init (GstPlugin * plugin)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_stain_norm_debug, "stainnorm", 0,
        "Stain normalisation of patches");
    wsipatch_element_init (plugin);
    g_once_init_leave (&done, 1);
  }
}

GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (stainnorm, "stainnorm",
    GST_RANK_NONE, GST_TYPE_STAIN_NORM, do_element_init (plugin));

/* ---- the reference image ------------------------------------------------- */

/* The target statistics of the reference file. */
static gboolean
load_reference (GstStainNorm * self, const gchar * path)
{
  gchar *error = NULL;
  gboolean ok = wsi_stain_reference_load (path, self->method,
      &self->target_matrix, &self->target_lab, &error);

  if (!ok)
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
        ("Cannot use stain reference \"%s\": %s.", path, error), (NULL));
  self->have_target_lab = ok && self->method == WSI_STAIN_REINHARD;
  g_free (error);
  return ok;
}

/* ---- caps ---------------------------------------------------------------- */

static GstCaps *
gst_stain_norm_set_caps (WsiPoolElement * element, GstCaps * caps)
{
  GstStainNorm *self = GST_STAIN_NORM (element);
  GstStructure *s = gst_caps_get_structure (caps, 0);
  const GstVideoFormatInfo *finfo;
  gint n_views = 0;

  if (gst_structure_has_name (s, WSI_VIEWS_MEDIA_TYPE)) {
    const gchar *format = gst_structure_get_string (s, "format");
    GstVideoFormat f = format ? gst_video_format_from_string (format) :
        GST_VIDEO_FORMAT_UNKNOWN;

    if (!gst_structure_get_int (s, "n-views", &n_views) || n_views < 1
        || (f != GST_VIDEO_FORMAT_RGB && f != GST_VIDEO_FORMAT_RGBA
            && f != GST_VIDEO_FORMAT_RGBx && f != GST_VIDEO_FORMAT_BGRx)) {
      GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
          ("Multi-view caps need an 8-bit RGB format and n-views >= 1."),
          ("caps: %" GST_PTR_FORMAT, caps));
      return NULL;
    }
    finfo = gst_video_format_get_info (f);
    self->views = TRUE;
    self->n_views = n_views;
  } else if (!gst_video_info_from_caps (&self->info, caps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Patches must be packed 8-bit RGB, RGBA, RGBx or BGRx."),
        ("caps: %" GST_PTR_FORMAT, caps));
    return NULL;
  } else {
    finfo = self->info.finfo;
    self->views = FALSE;
  }
  self->pixel_bytes = GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, 0);
  self->r = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, 0);
  self->g = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, 1);
  self->b = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, 2);
  return gst_caps_ref (caps);
}

/* ---- the work, on the workers ------------------------------------------- */

static gpointer
norm_thread_state_new (WsiPoolElement * element)
{
  return wsi_stain_scratch_new ();
}

static void
norm_thread_state_free (WsiPoolElement * element, gpointer state)
{
  wsi_stain_scratch_free (state);
}

/* The source estimate for the patch @image with meta @meta, and the plan;
 * the source used, WSI_STAIN_SOURCE_NONE when nothing applies. */
static WsiStainSource
choose_plan (GstStainNorm * self, const GstStructure * meta,
    const WsiStainImage * image, const gdouble * alpha, const gdouble * beta,
    const WsiStainLab * target_lab, WsiStainPlan * plan, gdouble * used)
{
  WsiStainMatrix m;
  WsiStainLab lab;
  WsiStainSource source = WSI_STAIN_SOURCE_SLIDE;

  /* Reinhard with randstain and no reference: undrawn patches pass */
  if (self->method == WSI_STAIN_REINHARD && target_lab == NULL)
    return WSI_STAIN_SOURCE_NONE;

  if (self->estimate == STAIN_ESTIMATE_PATCH) {
    WsiStainPixels px = { image, NULL, 0 };

    source = WSI_STAIN_SOURCE_FALLBACK;
    if (wsi_stain_tissue_share (image) >= self->min_tissue) {
      if (self->method == WSI_STAIN_MACENKO
          && wsi_stain_estimate_macenko (&px, &m, NULL)
          && wsi_stain_plan_macenko_jitter (plan, &m, &self->target_matrix,
              alpha, beta))
        source = WSI_STAIN_SOURCE_PATCH;
      else if (self->method == WSI_STAIN_REINHARD
          && wsi_stain_estimate_lab (&px, &lab)
          && wsi_stain_plan_reinhard (plan, &lab, target_lab))
        source = WSI_STAIN_SOURCE_PATCH;
    }
  }
  if (source != WSI_STAIN_SOURCE_PATCH) {
    gboolean ok = FALSE;

    if (meta != NULL && self->method != WSI_STAIN_REINHARD)
      ok = wsi_stain_meta_get_matrix (meta,
          self->method == WSI_STAIN_VAHADANE, &m)
          && wsi_stain_plan_macenko_jitter (plan, &m, &self->target_matrix,
          alpha, beta);
    else if (meta != NULL)
      ok = wsi_stain_meta_get_lab (meta, &lab)
          && wsi_stain_plan_reinhard (plan, &lab, target_lab);
    if (!ok)
      return WSI_STAIN_SOURCE_NONE;
  }
  if (self->method != WSI_STAIN_REINHARD) {
    memcpy (used, m.stains[0], 3 * sizeof (gdouble));
    memcpy (used + 3, m.stains[1], 3 * sizeof (gdouble));
    memcpy (used + 6, m.max_c, 2 * sizeof (gdouble));
  } else {
    memcpy (used, lab.mean, 3 * sizeof (gdouble));
    memcpy (used + 3, lab.std, 3 * sizeof (gdouble));
  }
  return source;
}

/* The sequence number keying a patch's draws: its record's, else the
 * buffer offset. */
static guint64
patch_sequence (GstBuffer * buffer, const GstStructure * meta)
{
  const WsiPatchRecord *records = NULL;
  guint n = 0;

  if (meta != NULL)
    records = wsi_patch_meta_records (meta, &n);
  if (n > 0)
    return records[0].sequence;
  return GST_BUFFER_OFFSET_IS_VALID (buffer) ? GST_BUFFER_OFFSET (buffer) : 0;
}

/* Normalises one image: a patch, or view @view of a multi-view buffer. */
static void
norm_image (GstStainNorm * self, const NormWork * work,
    const GstStructure * meta, guint64 sequence, guint view,
    const WsiStainImage * image, WsiStainScratch * scratch,
    WsiStainColumns * cols)
{
  gdouble alpha[2] = { 1.0, 1.0 }, beta[2] = { 0.0, 0.0 }, used[8];
  gboolean jittered = wsi_stain_jitter_draw (&work->jitter, sequence, view,
      alpha, beta);
  WsiStainLab drawn;
  gboolean redrawn = work->randstain && work->randstain_dist.n_slides > 0
      && wsi_rand_stain_draw (&work->randstain_dist, work->jitter.seed,
      sequence, view, work->randstain_probability, &drawn);
  WsiStainPlan plan;
  WsiStainSource source;

  source = choose_plan (self, meta, image, alpha, beta, redrawn ? &drawn :
      (self->have_target_lab ? &self->target_lab : NULL), &plan, used);
  if (source != WSI_STAIN_SOURCE_NONE)
    wsi_stain_apply (&plan, image, scratch);
  g_atomic_int_inc (&self->counts[source]);
  {
    const gdouble draws[4] = { alpha[0], alpha[1], beta[0], beta[1] };

    wsi_stain_columns_add (cols, source, used, jittered ? draws : NULL,
        redrawn ? &drawn : NULL);
  }
}

/* Writes @cols into @meta (and frees its strings). */
static void
set_columns (GstStainNorm * self, GstStructure * meta, const NormWork * work,
    WsiStainColumns * cols)
{
  wsi_stain_columns_write (cols, meta, self->method != WSI_STAIN_REINHARD,
      work->randstain ? &work->randstain_dist : NULL);
}

/* A multi-view buffer of one location: every view (one GstMemory each,
 * tight rows) normalised with the location's slide estimate (or its own,
 * estimate=patch), its draws keyed by the view index. */
static GstBuffer *
norm_views (GstStainNorm * self, NormWork * work, GstBuffer * buffer,
    WsiStainScratch * scratch)
{
  GstStructure *meta = wsi_patch_meta_get (buffer);
  const WsiPatchRecord *records = NULL;
  const WsiViewRecord *views = NULL;
  guint count = 0, n_total = 0, v;
  WsiStainColumns cols;

  if (meta != NULL) {
    records = wsi_patch_meta_records (meta, &count);
    views = wsi_patch_meta_views (meta, &n_total);
  }
  if (meta == NULL || count != 1 || n_total != self->n_views
      || gst_buffer_n_memory (buffer) != self->n_views) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("A multi-view buffer (slide \"%s\") is not one location with its "
            "caps' %u views: %u memories, %u locations, %u view records.",
            meta ? wsi_patch_meta_string (meta, "paths", 0) : "?",
            self->n_views, gst_buffer_n_memory (buffer), count, n_total),
        (NULL));
    gst_buffer_unref (buffer);
    return NULL;
  }
  wsi_stain_columns_init (&cols);
  for (v = 0; v < self->n_views; v++) {
    const WsiViewRecord *view = &views[v];
    gsize size = (gsize) view->out_width * view->out_height *
        self->pixel_bytes;
    WsiStainImage image = { NULL, view->out_width, view->out_height,
      (gsize) view->out_width * self->pixel_bytes, self->pixel_bytes,
      self->r, self->g, self->b
    };
    GstMapInfo map;

    if (!gst_buffer_map_range (buffer, v, 1, &map, GST_MAP_READWRITE)
        || map.size < size) {
      if (map.memory != NULL)
        gst_buffer_unmap (buffer, &map);
      GST_ELEMENT_ERROR (self, STREAM, FORMAT,
          ("View %u of a multi-view buffer (slide \"%s\") is smaller than "
              "its view record says, or cannot be written.", v,
              wsi_patch_meta_string (meta, "paths", 0)), (NULL));
      set_columns (self, NULL, work, &cols);
      gst_buffer_unref (buffer);
      return NULL;
    }
    image.data = map.data;
    norm_image (self, work, meta, records[0].sequence, view->view_index,
        &image, scratch, &cols);
    gst_buffer_unmap (buffer, &map);
  }
  set_columns (self, meta, work, &cols);
  return buffer;
}

static GstBuffer *
norm_process (WsiPoolElement * element, gpointer data, gpointer state)
{
  GstStainNorm *self = GST_STAIN_NORM (element);
  NormWork *work = data;
  GstBuffer *buffer = gst_buffer_make_writable (g_steal_pointer
      (&work->buffer));
  GstStructure *meta = wsi_patch_meta_get (buffer);
  GstVideoFrame frame;
  WsiStainImage image;
  WsiStainColumns cols;

  if (self->views)
    return norm_views (self, work, buffer, state);
  if (!gst_video_frame_map (&frame, &self->info, buffer, GST_MAP_READWRITE)) {
    const gchar *path = meta ? wsi_patch_meta_string (meta, "paths", 0) : NULL;

    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Could not map the pixels of a patch of slide \"%s\" for writing "
            "(buffer of %" G_GSIZE_FORMAT " bytes, caps say %" G_GSIZE_FORMAT
            ").", path ? path : "?", gst_buffer_get_size (buffer),
            GST_VIDEO_INFO_SIZE (&self->info)), (NULL));
    gst_buffer_unref (buffer);
    return NULL;
  }
  image.data = GST_VIDEO_FRAME_PLANE_DATA (&frame, 0);
  image.width = GST_VIDEO_FRAME_WIDTH (&frame);
  image.height = GST_VIDEO_FRAME_HEIGHT (&frame);
  image.stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);
  image.pixel_bytes = self->pixel_bytes;
  image.r = self->r;
  image.g = self->g;
  image.b = self->b;
  wsi_stain_columns_init (&cols);
  norm_image (self, work, meta, patch_sequence (buffer, meta), 0, &image,
      state, &cols);
  gst_video_frame_unmap (&frame);
  set_columns (self, meta, work, &cols);
  return buffer;
}

static void
norm_work_clear (WsiPoolElement * element, gpointer data)
{
  NormWork *work = data;

  gst_clear_buffer (&work->buffer);
}

static GstFlowReturn
gst_stain_norm_handle_buffer (WsiPoolElement * element, GstBuffer * buffer)
{
  GstStainNorm *self = GST_STAIN_NORM (element);
  NormWork work = { buffer };

  GST_OBJECT_LOCK (self);
  work.jitter = self->jitter;
  GST_OBJECT_UNLOCK (self);
  if (self->method == WSI_STAIN_REINHARD && self->randstain_probability > 0) {
    const GstStructure *meta = wsi_patch_meta_get (buffer);
    const gchar *slide = meta ? wsi_patch_meta_string (meta, "paths", 0) :
        NULL;
    WsiStainLab lab;

    work.randstain = TRUE;
    work.randstain_probability = self->randstain_probability;
    /* in stream order: a slide counts when its first patch arrives; the
     * workers draw from the distribution as it is now */
    if (slide != NULL && wsi_stain_meta_get_lab (meta, &lab))
      wsi_rand_stain_add (&self->randstain, slide, &lab);
    wsi_rand_stain_distribution (&self->randstain, self->randstain_spread,
        &work.randstain_dist);
  }

  return wsi_pool_element_queue_work (element, &work);
}

/* ---- state and properties ------------------------------------------------ */

static gboolean
gst_stain_norm_start (WsiPoolElement * element, guint * n_threads)
{
  GstStainNorm *self = GST_STAIN_NORM (element);
  gchar *reference;
  guint i;

  GST_OBJECT_LOCK (self);
  *n_threads = self->threads;
  reference = g_strdup (self->reference);
  GST_OBJECT_UNLOCK (self);
  for (i = 0; i < WSI_STAIN_N_SOURCES; i++)
    g_atomic_int_set (&self->counts[i], 0);
  wsi_rand_stain_clear (&self->randstain);
  wsi_rand_stain_init (&self->randstain);
  self->have_target_lab = FALSE;

  if (self->method == WSI_STAIN_REINHARD && self->jitter.probability > 0.0) {
    g_free (reference);
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("augment-probability needs stain vectors: method=macenko or "
            "vahadane (Reinhard's method has none)."), (NULL));
    return FALSE;
  }
  if (self->method == WSI_STAIN_VAHADANE
      && self->estimate == STAIN_ESTIMATE_PATCH) {
    g_free (reference);
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("method=vahadane works with estimate=slide only: its sparse "
            "factorisation runs once per slide (stainestimate), never per "
            "patch."), (NULL));
    return FALSE;
  }
  if (reference == NULL || *reference == '\0') {
    g_free (reference);
    if (self->method == WSI_STAIN_REINHARD
        && self->randstain_probability <= 0.0) {
      GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
          ("method=reinhard needs a reference image (reference=FILE) "
              "or randstain-probability: Reinhard's method has no standard "
              "target."), (NULL));
      return FALSE;
    }
    self->target_matrix = wsi_stain_macenko_default;
    return TRUE;
  }
  if (!load_reference (self, reference)) {
    g_free (reference);
    return FALSE;
  }
  g_free (reference);
  return TRUE;
}

static gboolean
refuse_when_running (GstStainNorm * self, const gchar * name)
{
  if (GST_STATE (self) > GST_STATE_READY
      || GST_STATE_PENDING (self) > GST_STATE_READY) {
    g_warning ("stainnorm: %s can only be set in the NULL or READY state",
        name);
    return TRUE;
  }
  return FALSE;
}

static void
gst_stain_norm_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstStainNorm *self = GST_STAIN_NORM (object);

  GST_OBJECT_LOCK (self);
  if (prop_id != PROP_THREADS && prop_id != PROP_SEED
      && prop_id != PROP_AUGMENT_SIGMA && prop_id != PROP_AUGMENT_BIAS
      && refuse_when_running (self, pspec->name)) {
    GST_OBJECT_UNLOCK (self);
    return;
  }
  switch (prop_id) {
    case PROP_THREADS:
      self->threads = g_value_get_uint (value);
      break;
    case PROP_METHOD:
      self->method = g_value_get_enum (value);
      break;
    case PROP_REFERENCE:
      g_free (self->reference);
      self->reference = g_value_dup_string (value);
      break;
    case PROP_ESTIMATE:
      self->estimate = g_value_get_enum (value);
      break;
    case PROP_MIN_TISSUE:
      self->min_tissue = g_value_get_double (value);
      break;
    case PROP_SEED:
      self->jitter.seed = g_value_get_uint64 (value);
      break;
    case PROP_AUGMENT_PROBABILITY:
      self->jitter.probability = g_value_get_double (value);
      break;
    case PROP_AUGMENT_SIGMA:
      self->jitter.sigma = g_value_get_double (value);
      break;
    case PROP_AUGMENT_BIAS:
      self->jitter.bias = g_value_get_double (value);
      break;
    case PROP_RANDSTAIN_PROBABILITY:
      self->randstain_probability = g_value_get_double (value);
      break;
    case PROP_RANDSTAIN_SPREAD:
      self->randstain_spread = g_value_get_double (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_stain_norm_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstStainNorm *self = GST_STAIN_NORM (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_THREADS:
      g_value_set_uint (value, self->threads);
      break;
    case PROP_METHOD:
      g_value_set_enum (value, self->method);
      break;
    case PROP_REFERENCE:
      g_value_set_string (value, self->reference);
      break;
    case PROP_ESTIMATE:
      g_value_set_enum (value, self->estimate);
      break;
    case PROP_MIN_TISSUE:
      g_value_set_double (value, self->min_tissue);
      break;
    case PROP_SEED:
      g_value_set_uint64 (value, self->jitter.seed);
      break;
    case PROP_AUGMENT_PROBABILITY:
      g_value_set_double (value, self->jitter.probability);
      break;
    case PROP_AUGMENT_SIGMA:
      g_value_set_double (value, self->jitter.sigma);
      break;
    case PROP_AUGMENT_BIAS:
      g_value_set_double (value, self->jitter.bias);
      break;
    case PROP_RANDSTAIN_PROBABILITY:
      g_value_set_double (value, self->randstain_probability);
      break;
    case PROP_RANDSTAIN_SPREAD:
      g_value_set_double (value, self->randstain_spread);
      break;
    case PROP_PATCHES_SLIDE:
      g_value_set_uint64 (value, (guint) g_atomic_int_get (&self->counts
              [WSI_STAIN_SOURCE_SLIDE]));
      break;
    case PROP_PATCHES_PATCH:
      g_value_set_uint64 (value, (guint) g_atomic_int_get (&self->counts
              [WSI_STAIN_SOURCE_PATCH]));
      break;
    case PROP_PATCHES_FALLBACK:
      g_value_set_uint64 (value, (guint) g_atomic_int_get (&self->counts
              [WSI_STAIN_SOURCE_FALLBACK]));
      break;
    case PROP_PATCHES_UNCHANGED:
      g_value_set_uint64 (value, (guint) g_atomic_int_get (&self->counts
              [WSI_STAIN_SOURCE_NONE]));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_stain_norm_finalize (GObject * object)
{
  GstStainNorm *self = GST_STAIN_NORM (object);

  g_free (self->reference);
  wsi_rand_stain_clear (&self->randstain);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
install_counter (GObjectClass * gobject_class, guint id, const gchar * name,
    const gchar * nick, const gchar * blurb)
{
  g_object_class_install_property (gobject_class, id,
      wsi_param_spec_uint64 (name, nick, blurb, 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
}

static void
gst_stain_norm_class_init (GstStainNormClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  WsiPoolElementClass *pool_class = WSI_POOL_ELEMENT_CLASS (klass);
  const GParamFlags ready = G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY |
      G_PARAM_STATIC_STRINGS;

  gobject_class->set_property = gst_stain_norm_set_property;
  gobject_class->get_property = gst_stain_norm_get_property;
  gobject_class->finalize = gst_stain_norm_finalize;

  g_object_class_install_property (gobject_class, PROP_THREADS,
      wsi_ordered_pool_param_spec_threads ("Worker threads normalising "
          "patches", DEFAULT_THREADS));
  g_object_class_install_property (gobject_class, PROP_METHOD,
      g_param_spec_enum ("method", "Method",
          "Normalisation: reinhard (l-alpha-beta statistics; needs "
          "reference), macenko (stain vectors, torchstain's defaults) or "
          "vahadane (the slide's sparse factorisation, estimate=slide only); "
          "default macenko. Set in NULL or READY", GST_TYPE_STAIN_NORM_METHOD,
          DEFAULT_METHOD, ready));
  g_object_class_install_property (gobject_class, PROP_REFERENCE,
      g_param_spec_string ("reference", "Reference image",
          "Image file whose stains are the target (PNG, JPEG or TIFF, any "
          "file GStreamer's decodebin decodes to RGB; all its pixels count); "
          "unset (default): torchstain's built-in Macenko target. Read when "
          "the element leaves READY", NULL, ready));
  g_object_class_install_property (gobject_class, PROP_ESTIMATE,
      g_param_spec_enum ("estimate", "Estimate",
          "Source statistics: slide (default: the slide's, from "
          "stainestimate's columns) or patch (each patch's own; the slide's "
          "where the patch has less tissue than min-tissue or no usable "
          "estimate). Set in NULL or READY", GST_TYPE_STAIN_NORM_ESTIMATE,
          STAIN_ESTIMATE_SLIDE, ready));
  g_object_class_install_property (gobject_class, PROP_MIN_TISSUE,
      wsi_param_spec_double ("min-tissue", "Minimum tissue",
          "estimate=patch: least share of a patch's pixels with optical "
          "density above 0.15 in every channel for its own estimate "
          "(fraction, 0 to 1, default 0.1)", 0.0, 1.0, DEFAULT_MIN_TISSUE,
          ready));
  g_object_class_install_property (gobject_class, PROP_SEED,
      wsi_param_spec_uint64 ("seed", "Seed", "Seed of the stain augmentation "
          "draws; with the patch sequence it fixes every patch's draws "
          "(0 to 2^64-1, default 0)", 0, G_MAXUINT64, 0,
          G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
          G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_AUGMENT_PROBABILITY,
      wsi_param_spec_double ("augment-probability", "Augment probability",
          "Probability of stain augmentation on the slide's own stain "
          "matrix (Tellez's HED jitter with the estimated stains): each "
          "stain's scaled concentration becomes alpha c + beta before "
          "recomposition (0 to 1, default 0: off; macenko and vahadane "
          "only). Set in NULL or READY", 0.0, 1.0, 0.0, ready));
  g_object_class_install_property (gobject_class, PROP_AUGMENT_SIGMA,
      wsi_param_spec_double ("augment-sigma", "Augment sigma",
          "Half-width of the per-stain scale range: alpha from "
          "[1 - sigma, 1 + sigma] (factor, 0 to 1, default 0.05)", 0.0, 1.0,
          DEFAULT_AUGMENT_SIGMA, G_PARAM_READWRITE |
          GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_AUGMENT_BIAS,
      wsi_param_spec_double ("augment-bias", "Augment bias",
          "Half-width of the per-stain bias range: beta from [-bias, bias] "
          "(optical density units, -1 to 1, default -1: the same as "
          "augment-sigma, as Tellez et al. define it)", -1.0, 1.0, -1.0,
          G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
          G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_RANDSTAIN_PROBABILITY,
      wsi_param_spec_double ("randstain-probability", "RandStainNA probability",
          "method=reinhard: probability that a patch is normalised onto "
          "target statistics drawn from the distribution of the slides' own "
          "(RandStainNA: l-alpha-beta means and deviations, one normal per "
          "number, fitted to the distinct slides seen so far in stream "
          "order) instead of the reference's; without a reference undrawn "
          "patches pass unchanged (0 to 1, default 0: off). Set in NULL or "
          "READY", 0.0, 1.0, 0.0, ready));
  g_object_class_install_property (gobject_class, PROP_RANDSTAIN_SPREAD,
      wsi_param_spec_double ("randstain-spread", "RandStainNA spread",
          "Factor on the distribution's standard deviations "
          "(RandStainNA's std_hyper + 1; factor, 0 to 10, default 1). Set "
          "in NULL or READY", 0.0, 10.0, 1.0, ready));
  install_counter (gobject_class, PROP_PATCHES_SLIDE, "patches-slide",
      "Patches by slide estimate", "Patches normalised with their slide's "
      "estimate since the element left READY (0 to 2^31-1)");
  install_counter (gobject_class, PROP_PATCHES_PATCH, "patches-patch",
      "Patches by own estimate", "estimate=patch: patches normalised with "
      "their own estimate since the element left READY (0 to 2^31-1)");
  install_counter (gobject_class, PROP_PATCHES_FALLBACK, "patches-fallback",
      "Patches by fallback", "estimate=patch: patches with too little "
      "tissue or no usable estimate, normalised with their slide's "
      "estimate (0 to 2^31-1)");
  install_counter (gobject_class, PROP_PATCHES_UNCHANGED,
      "patches-unchanged", "Patches unchanged", "Patches passed unchanged: "
      "no estimate of their own or of their slide (0 to 2^31-1)");

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Stain normalisation", "Filter/Effect/Video",
      "Maps the H&E stains of patches onto a reference's (Reinhard, "
      "Macenko), with each slide's estimate or each patch's",
      "gst-wsi developers");

  pool_class->work_size = sizeof (NormWork);
  pool_class->worker_name = "stainnorm";
  pool_class->start = GST_DEBUG_FUNCPTR (gst_stain_norm_start);
  pool_class->thread_state_new = norm_thread_state_new;
  pool_class->thread_state_free = norm_thread_state_free;
  pool_class->handle_buffer = GST_DEBUG_FUNCPTR (gst_stain_norm_handle_buffer);
  pool_class->process = norm_process;
  pool_class->work_clear = norm_work_clear;
  pool_class->set_caps = GST_DEBUG_FUNCPTR (gst_stain_norm_set_caps);

  /* numbers outside their range refuse the start (wsirefusal.h) */
  wsi_refusal_class_init (GST_ELEMENT_CLASS (klass));
}

static void
gst_stain_norm_init (GstStainNorm * self)
{
  GST_PAD_SET_PROXY_CAPS (WSI_POOL_ELEMENT_SINK_PAD (self));
  GST_PAD_SET_PROXY_ALLOCATION (WSI_POOL_ELEMENT_SINK_PAD (self));
  GST_PAD_SET_PROXY_CAPS (WSI_POOL_ELEMENT_SRC_PAD (self));
  GST_PAD_SET_PROXY_ALLOCATION (WSI_POOL_ELEMENT_SRC_PAD (self));
  self->threads = DEFAULT_THREADS;
  self->method = DEFAULT_METHOD;
  self->estimate = STAIN_ESTIMATE_SLIDE;
  self->min_tissue = DEFAULT_MIN_TISSUE;
  self->jitter.sigma = DEFAULT_AUGMENT_SIGMA;
  self->jitter.bias = -1.0;
  self->randstain_spread = 1.0;
  wsi_rand_stain_init (&self->randstain);
}
