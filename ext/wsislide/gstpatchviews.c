/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-patchviews
 * @title: patchviews
 *
 * patchviews turns each decoded patch (one `video/x-raw` buffer per patch
 * with its `WsiPatchMeta`, as patchreader pushes them) into several views
 * of the same location, for self-supervised and multi-resolution training,
 * and pushes ONE buffer per location carrying all of them
 * (`application/x-wsi-views`, record version 2 in wsirecord.h): one
 * GstMemory per view (tight rows, `format` as the input), and a
 * `WsiPatchMeta` with the location's record, `record-version` 2,
 * `view-names` and `views` (a #WsiViewRecord per view: footprint box in
 * level-0 pixels, mpp, output size, flags). Paths, labels and any other
 * field of the input meta are copied. `GST_BUFFER_OFFSET` stays the
 * record's sequence.
 *
 * Views, set by #GstPatchViews:preset or #GstPatchViews:views:
 *
 * - random-resized crops of the patch (torchvision's RandomResizedCrop: an
 *   area fraction uniform in a scale range, an aspect ratio log-uniform in
 *   a ratio range, resampled to a square output size with
 *   #GstPatchViews:interpolation);
 * - the patch itself;
 * - context views, re-read from the slide through the read layer around
 *   the patch's level-0 centre at another mpp and output size (the read
 *   picks the pyramid level; no large read and pooling).
 *
 * Presets: `dinov2` (2 global 224 px crops at scale 0.32-1, 8 local 96 px
 * at 0.05-0.32), `two-view` (2 crops of 224 px at 0.08-1, SimCLR/BYOL),
 * `target-context` (the patch, named `target`, and one `context` view of
 * the same size at 4x its mpp).
 *
 * Every crop is a pure function of (#GstPatchViews:seed, the record's
 * sequence, the view index); the work runs on #GstPatchViews:threads
 * worker threads and leaves in input order, so the bytes do not depend on
 * the number of threads. A location whose context region cannot be read
 * is dropped with a warning and reported upstream (`wsi-patch-dropped`)
 * so that finite quotas refill it.
 *
 * Patches may also arrive compressed: `image/jpeg` with a `decoded-format`
 * field, as patchstoresrc serves a jpeg store when patchviews prefers it:
 * it does unless its views gain nothing from decoding here (the patch
 * itself is a view, or the crops can neither be DCT scaled nor are small
 * enough for region decodes to beat one whole decode, as DINOv2's): then
 * it prefers pixels, decoded upstream on that element's threads, same
 * bytes. Each location's crops are then drawn first and the JPEG is
 * decoded once as a whole, or, when that is cheaper, once per crop for
 * only the rows and columns the crop's resampling reads (libjpeg-turbo's
 * jpeg_skip_scanlines and jpeg_crop_scanline): never a whole decode then a
 * crop when less will do. The views are byte-identical to those made from
 * the decoded patch, except `interpolation=area` crops reduced 2x or more,
 * which (with #GstPatchViews:dct-scaling) are decoded at 1/2 scale
 * (>= 40 dB PSNR from the full-size path). #GstPatchViews:jpeg-pixels-decoded
 * counts what was decoded.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 wsislidesrc location=slides/ ! tissuemask ! queue ! \
 *     patchsampler patch-size=256 target-mpp=0.5 ! patchinterleave ! \
 *     patchreader ! patchviews preset=dinov2 seed=42 threads=4 ! \
 *     fakesink sync=false
 * ]| Ten DINOv2 crops (global_0, global_1, local_0 .. local_7) of every
 * 256 px patch at 0.5 um/px.
 * |[
 * ... ! patchreader ! patchviews views="target:patch,ctx:context:224:2.0" ! ...
 * ]| Each patch and a 224 px view at 2 um/px around the same centre.
 * |[
 * gst-launch-1.0 patchstoresrc location=store/ ! \
 *     patchviews preset=dinov2 seed=42 ! patchbatch batch-size=64 ! \
 *     fakesink sync=false
 * ]| DINOv2 crops from a patch store (from a jpeg store, decoded by
 * patchstoresrc's threads: these crops gain nothing from a partial
 * decode).
 * |[
 * gst-launch-1.0 patchstoresrc location=store/ ! \
 *     patchviews views=small:8:32:0.01:0.05 seed=42 ! \
 *     patchbatch batch-size=64 ! fakesink sync=false
 * ]| Small crops from a jpeg store: patchviews takes the JPEGs and decodes
 * only the rows and columns each crop reads.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstpatchviews.h"
#include "gstwsislideelements.h"
#include "wsiorderedpool.h"
#include "wsislide.h"
#include "wsislidecache.h"
#include "wsireadproperties.h"
#include "wsivideoformat.h"
#include "wsitilecache.h"
#include "wsiviewsmake.h"

#include <gst/wsi/wsienumtype.h>
#include <gst/wsi/wsirefusal.h>

#include <gst/video/video.h>
#include <gst/wsi/wsievent.h>
#include <gst/wsi/wsirecord.h>
#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (gst_patch_views_debug);
#define GST_CAT_DEFAULT gst_patch_views_debug

#define DEFAULT_THREADS 0
#define DEFAULT_SEED 0
#define DEFAULT_PRESET GST_PATCH_VIEWS_PRESET_DINOV2
#define DEFAULT_INTERPOLATION WSI_RESIZE_BILINEAR
#define DEFAULT_TILE_CACHE_MB 32
/* Drop warnings posted per stream before they go to the debug log only. */
#define MAX_DROP_WARNINGS 10

enum
{
  PROP_0,
  PROP_PRESET,
  PROP_VIEWS,
  PROP_SEED,
  PROP_THREADS,
  PROP_INTERPOLATION,
  PROP_DCT_SCALING,
  PROP_MAX_OPEN_SLIDES,
  PROP_BACKEND,
  PROP_TILE_CACHE_SIZE,
  PROP_TILE_CACHE_HITS,
  PROP_TILE_CACHE_MISSES,
  PROP_LOCATIONS_OUT,
  PROP_LOCATIONS_DROPPED,
  PROP_JPEG_PIXELS_DECODED,
};

/* The read-layer properties (wsireadproperties.h): ids and what they mean
 * here. */
static const WsiReadPropertySpec read_property_spec = {
  .props = {
    [WSI_READ_PROP_BACKEND] = {PROP_BACKEND,
          "Which slide reader decodes context views (set it as patchreader's "
          "for the same pixels): auto = the DICOM reader for DICOM series, "
          "the direct TIFF/JPEG reader for JPEG-tiled TIFF pyramids, "
          "OpenSlide for every other format; openslide, tiff or dicom force "
          "one. Takes effect for slides opened from "
          "then on"},
    [WSI_READ_PROP_DCT_SCALING] = {PROP_DCT_SCALING,
          "Context views: let the direct reader decode JPEG tiles at 1/2, "
          "1/4 or 1/8 scale, as patchreader dct-scaling does: by a whole "
          "multiple the view starts on that scale's grid, moved by less than "
          "one output pixel (its view record gives the position read); by a "
          "near-whole factor (2 % margin) the rest is resampled at the "
          "requested position. Crops of JPEG patches (image/jpeg input): "
          "area crops reduced 2x or more are decoded at 1/2 scale. false = "
          "decode at full size and average exactly"},
    [WSI_READ_PROP_MAX_OPEN_SLIDES] = {PROP_MAX_OPEN_SLIDES,
          "Slides kept open for context views at once, least recently used "
          "closed first (1..1024)"},
    [WSI_READ_PROP_TILE_CACHE_SIZE] = {PROP_TILE_CACHE_SIZE,
          "Context views: memory for decoded tiles shared by the threads, "
          "in MiB (0..1048576; 0 = no cache). Context regions of nearby "
          "locations overlap (a 4x context covers 16 patch footprints), so "
          "their tiles are decoded once (admitted on their second miss). "
          "Shared with patchreader of the same pipeline and backend (its "
          "size: the larger request when the stream starts)"},
    [WSI_READ_PROP_TILE_CACHE_HITS] = {PROP_TILE_CACHE_HITS,
          "Context tiles found decoded in the tile cache since the last "
          "READY to PAUSED change (count)"},
    [WSI_READ_PROP_TILE_CACHE_MISSES] = {PROP_TILE_CACHE_MISSES,
          "Context tiles looked up in the tile cache and decoded since the "
          "last READY to PAUSED change (count)"},
  },
  .default_tile_cache_mb = DEFAULT_TILE_CACHE_MB,
};

typedef enum
{
  GST_PATCH_VIEWS_PRESET_NONE,
  GST_PATCH_VIEWS_PRESET_DINOV2,
  GST_PATCH_VIEWS_PRESET_TWO_VIEW,
  GST_PATCH_VIEWS_PRESET_TARGET_CONTEXT,
} GstPatchViewsPreset;

/* The `views` text of each preset, indexed by GstPatchViewsPreset. */
static const gchar *const preset_views[] = {
  NULL,
  "global:2:224:0.32:1.0,local:8:96:0.05:0.32",
  "view:2:224:0.08:1.0",
  "target:patch,context:context:0:4x",
};

#define GST_TYPE_PATCH_VIEWS_PRESET (gst_patch_views_preset_get_type ())
static GType
gst_patch_views_preset_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_PATCH_VIEWS_PRESET_NONE, "No preset: the views property says",
        "none"},
    {GST_PATCH_VIEWS_PRESET_DINOV2, "DINOv2 multi-crop: "
          "global:2:224:0.32:1.0,local:8:96:0.05:0.32", "dinov2"},
    {GST_PATCH_VIEWS_PRESET_TWO_VIEW, "SimCLR/BYOL two views: "
          "view:2:224:0.08:1.0", "two-view"},
    {GST_PATCH_VIEWS_PRESET_TARGET_CONTEXT, "The patch and a context view "
          "of its size at 4x its mpp: target:patch,context:context:0:4x",
        "target-context"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type, "GstPatchViewsPreset", values);
}

#define GST_TYPE_PATCH_VIEWS_INTERPOLATION \
  (gst_patch_views_interpolation_get_type ())
static GType
gst_patch_views_interpolation_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {WSI_RESIZE_BILINEAR, "Bilinear, half-pixel centres, no antialiasing "
          "(torch interpolate, torchvision's tensor default)", "bilinear"},
    {WSI_RESIZE_AREA, "Area average (box filter; for strong shrinking)",
        "area"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type, "GstPatchViewsInterpolation", values);
}

#define FORMATS "{ RGB, RGBA, RGBx, BGRx }"

/* image/jpeg: one stored patch, compressed (patchstoresrc on a jpeg
 * store); decoded-format is the layout to decode it into. Listed first:
 * a source that can deliver either prefers it (patchstoresrc). */
static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("image/jpeg, decoded-format = (string) " FORMATS
        ", width = (int) [ 1, max ], height = (int) [ 1, max ]; "
        "video/x-raw, format = (string) " FORMATS
        ", width = (int) [ 1, max ], height = (int) [ 1, max ]"));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (WSI_VIEWS_MEDIA_TYPE ", format = (string) " FORMATS
        ", n-views = (int) [ 1, 16 ]"));

/* ---- stream state -------------------------------------------------------- */

struct _GstPatchViews
{
  WsiPoolElement parent;

  /* properties, under the object lock */
  GstPatchViewsPreset preset;
  gchar *views;                 /* the text of the current view list */
  WsiViewSet *view_set;         /* parsed */
  guint64 seed;
  guint threads;
  WsiResizeMethod interpolation;

  WsiViewsConfig config;          /* workers' copy while PAUSED/PLAYING */
  /* backend, dct-scaling and the caches' properties; slides and decoded
   * tiles of context views, shared with patchreader in the pipeline
   * (wsireadcaches.h): the pointers valid from start to stop */
  WsiReadProperties read;
  WsiSlideCache *slide_cache;
  WsiTileCache *tile_cache;

  /* streaming thread */
  gboolean have_info;
  GstVideoInfo info;            /* of the patch, decoded */
  WsiPixelFormat format;
  gboolean compressed;          /* patches arrive as JPEG */
  gboolean warned_no_meta;
  /* atomic, set at start: the views gain nothing from decoding JPEG
   * patches here (wsi_crop_plan_always_whole()), so the sink pad's caps
   * list video/x-raw before image/jpeg and the upstream element decodes
   * on its own threads, beside the crops. */
  gint prefer_pixels;

  /* source task (finish, in order) */
  guint drop_warnings;

  /* counters, under the object lock */
  guint64 locations_out;
  guint64 locations_dropped;
  guint64 jpeg_pixels_decoded;
};

#define gst_patch_views_parent_class parent_class
G_DEFINE_TYPE (GstPatchViews, gst_patch_views, WSI_TYPE_POOL_ELEMENT);

GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (patchviews, "patchviews",
    GST_RANK_NONE, GST_TYPE_PATCH_VIEWS,
    wsislide_element_init (plugin);
    GST_DEBUG_CATEGORY_INIT (gst_patch_views_debug, "patchviews", 0,
        "multi-view crops and context views of patches"));

/* ---- ordered pool callbacks ---------------------------------------------- */

/* Where the workers' views come from: valid from start to stop. */
static void
views_sources (GstPatchViews * self, WsiViewsSources * src)
{
  src->config = &self->config;
  src->read = &self->read;
  src->slide_cache = self->slide_cache;
  src->tile_cache = self->tile_cache;
}

static gpointer
views_thread_new (WsiPoolElement * element)
{
  return wsi_views_thread_new ();
}

static void
views_thread_free (WsiPoolElement * element, gpointer state)
{
  wsi_views_thread_free (state);
}

static GstBuffer *
views_process (WsiPoolElement * element, gpointer data, gpointer state)
{
  WsiViewsSources src;

  views_sources (GST_PATCH_VIEWS (element), &src);
  return wsi_views_make (&src, state, data);
}

/* In stream order: counts the location; a dropped one is warned about
 * and reported upstream, as patchreader does. */
static GstBuffer *
views_finish (WsiPoolElement * element, gpointer data, GstBuffer * result)
{
  GstPatchViews *self = GST_PATCH_VIEWS (element);
  WsiViewsWork *work = data;
  const gchar *path;

  GST_OBJECT_LOCK (self);
  if (result != NULL)
    self->locations_out++;
  else
    self->locations_dropped++;
  self->jpeg_pixels_decoded += work->decoded;
  GST_OBJECT_UNLOCK (self);
  if (result != NULL)
    return result;

  path = wsi_patch_meta_string (wsi_patch_meta_get (work->in), "paths", 0);
  if (self->drop_warnings++ < MAX_DROP_WARNINGS)
    GST_ELEMENT_WARNING (self, RESOURCE, READ,
        ("Dropping the location at (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
            ") of slide \"%s\": %s.", work->record.x, work->record.y,
            GST_STR_NULL (path), GST_STR_NULL (work->reason)),
        ("sequence %" G_GUINT64_FORMAT, work->record.sequence));
  else
    GST_WARNING_OBJECT (self, "dropping sequence %" G_GUINT64_FORMAT ": %s",
        work->record.sequence, GST_STR_NULL (work->reason));
  wsi_pool_element_report_dropped (element, &work->record, path,
      work->reason);
  return NULL;
}

static void
views_work_clear (WsiPoolElement * element, gpointer data)
{
  WsiViewsWork *work = data;

  gst_clear_buffer (&work->in);
  g_clear_pointer (&work->reason, g_free);
}

/* ---- streaming thread ---------------------------------------------------- */

static GstFlowReturn
gst_patch_views_handle_buffer (WsiPoolElement * element, GstBuffer * buffer)
{
  GstPatchViews *self = GST_PATCH_VIEWS (element);
  const GstStructure *meta = wsi_patch_meta_get (buffer);
  const WsiPatchRecord *records = NULL;
  WsiViewsWork work;
  guint n = 0;

  if (!self->have_info) {
    gst_buffer_unref (buffer);
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("A patch arrived before its caps."), (NULL));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (meta != NULL)
    records = wsi_patch_meta_records (meta, &n);
  if (n > 1) {
    gst_buffer_unref (buffer);
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("patchviews takes one patch per buffer, this one holds %u (put "
            "patchviews before patchbatch).", n), (NULL));
    return GST_FLOW_ERROR;
  }
  if (n == 0) {
    if (!self->warned_no_meta)
      GST_ELEMENT_WARNING (self, STREAM, FORMAT,
          ("Dropping patches without a WsiPatchMeta record (patchviews "
              "needs the patch's position)."), (NULL));
    self->warned_no_meta = TRUE;
    gst_buffer_unref (buffer);
    return GST_FLOW_OK;
  }

  memset (&work, 0, sizeof (work));
  work.in = buffer;
  work.info = self->info;
  work.format = self->format;
  work.compressed = self->compressed;
  work.record = records[0];
  return wsi_pool_element_queue_work (element, &work);
}

/* image/jpeg caps: the decoded patch's layout, from decoded-format. */
static gboolean
info_from_jpeg_caps (GstVideoInfo * info, GstCaps * caps)
{
  GstStructure *s = gst_caps_get_structure (caps, 0);
  const gchar *name = gst_structure_get_string (s, "decoded-format");
  GstVideoFormat format = name ? gst_video_format_from_string (name) :
      GST_VIDEO_FORMAT_UNKNOWN;
  gint width, height;

  if (format == GST_VIDEO_FORMAT_UNKNOWN
      || !gst_structure_get_int (s, "width", &width)
      || !gst_structure_get_int (s, "height", &height))
    return FALSE;
  return gst_video_info_set_format (info, format, width, height);
}

/* Input caps: a square patch in a format the read layer writes, decoded
 * or (image/jpeg) to decode; the output caps (views of that format) go out
 * in stream order, after the patches before them. */
static GstCaps *
gst_patch_views_set_caps (WsiPoolElement * element, GstCaps * caps)
{
  GstPatchViews *self = GST_PATCH_VIEWS (element);
  gboolean compressed = gst_structure_has_name (gst_caps_get_structure (caps,
          0), "image/jpeg");
  GstVideoInfo info;
  WsiPixelFormat format;
  gboolean parsed = compressed ? info_from_jpeg_caps (&info, caps) :
      gst_video_info_from_caps (&info, caps);

  if (!parsed
      || !wsi_pixel_format_for_video (GST_VIDEO_INFO_FORMAT (&info), &format)
      || GST_VIDEO_INFO_WIDTH (&info) != GST_VIDEO_INFO_HEIGHT (&info)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("patchviews takes square RGB, RGBA, RGBx or BGRx patches, "
            "decoded or as JPEG (image/jpeg with a decoded-format)."),
        ("caps: %" GST_PTR_FORMAT, caps));
    return NULL;
  }
  self->info = info;
  self->format = format;
  self->compressed = compressed;
  self->have_info = TRUE;
  return gst_caps_new_simple (WSI_VIEWS_MEDIA_TYPE,
      "format", G_TYPE_STRING,
      gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (&info)),
      "n-views", G_TYPE_INT, (gint) self->config.set->n_views, NULL);
}

/* The sink template, image/jpeg first (decoding JPEG patches here can
 * skip what the crops do not read) or, when that gains nothing
 * (prefer_pixels), video/x-raw first: caps are in order of preference, and
 * patchstoresrc serves JPEG only to a peer that prefers it. Both give the
 * same bytes when every location is one whole decode at full scale. */
static GstCaps *
sink_caps_in_preference (GstPatchViews * self, GstCaps * filter)
{
  GstCaps *tmpl = gst_static_pad_template_get_caps (&sink_template);
  GstCaps *ordered = gst_caps_new_empty (), *result;
  gboolean pixels_first = g_atomic_int_get (&self->prefer_pixels);
  guint pass, i;

  for (pass = 0; pass < 2; pass++)
    for (i = 0; i < gst_caps_get_size (tmpl); i++) {
      gboolean is_jpeg = gst_structure_has_name (gst_caps_get_structure (tmpl,
              i), "image/jpeg");

      if (is_jpeg == (pass == (pixels_first ? 1u : 0u)))
        gst_caps_append_structure (ordered,
            gst_structure_copy (gst_caps_get_structure (tmpl, i)));
    }
  gst_caps_unref (tmpl);
  if (filter == NULL)
    return ordered;
  result = gst_caps_intersect_full (filter, ordered, GST_CAPS_INTERSECT_FIRST);
  gst_caps_unref (ordered);
  return result;
}

/* Patches and views share no memory to allocate; caps come in the order
 * of preference (sink_caps_in_preference()); the rest (the
 * delivery-accounting query) is answered as usual. */
static gboolean
gst_patch_views_sink_query (WsiPoolElement * element, GstQuery * query)
{
  GstPatchViews *self = GST_PATCH_VIEWS (element);

  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_ALLOCATION:
      return FALSE;
    case GST_QUERY_CAPS:{
      GstCaps *filter, *caps;

      gst_query_parse_caps (query, &filter);
      caps = sink_caps_in_preference (self, filter);
      gst_query_set_caps_result (query, caps);
      gst_caps_unref (caps);
      return TRUE;
    }
    default:
      return WSI_POOL_ELEMENT_CLASS (parent_class)->sink_query (element,
          query);
  }
}

/* ---- state and properties ------------------------------------------------ */

static void
stream_config_clear (WsiViewsConfig * config)
{
  g_clear_pointer (&config->set, wsi_view_set_free);
  g_clear_pointer (&config->names, g_strfreev);
}

/* READY -> PAUSED: fixes what the workers read for the stream. */
static gboolean
gst_patch_views_start (WsiPoolElement * element, guint * n_threads)
{
  GstPatchViews *self = GST_PATCH_VIEWS (element);
  WsiViewsSources src;
  GstWsiBackend backend;

  /* a views value was refused: not what was asked for (wsirefusal.h) */
  if (!wsi_refusal_check (GST_ELEMENT (self), wsi_refusal_of (self)))
    return FALSE;
  stream_config_clear (&self->config);
  GST_OBJECT_LOCK (self);
  /* A private parse: the property may change while the stream runs. */
  self->config.set = wsi_view_set_parse (self->views, NULL);
  self->config.seed = self->seed;
  self->config.method = self->interpolation;
  *n_threads = self->threads;
  backend = wsi_read_properties_backend (&self->read);
  self->locations_out = self->locations_dropped = 0;
  self->jpeg_pixels_decoded = 0;
  GST_OBJECT_UNLOCK (self);
  g_assert (self->config.set != NULL);  /* set_property keeps valid text */
  wsi_read_caches_client_start (&self->read.caches, GST_ELEMENT (self),
      gst_wsi_backend_name (backend));
  self->slide_cache = wsi_read_caches_client_slides (&self->read.caches);
  self->tile_cache = wsi_read_caches_client_tiles (&self->read.caches);
  self->config.names = wsi_view_set_names (self->config.set);
  views_sources (self, &src);
  g_atomic_int_set (&self->prefer_pixels,
      wsi_crop_plan_always_whole (self->config.set,
          wsi_views_crop_max_dct_scale (&src)));

  self->drop_warnings = 0;
  GST_DEBUG_OBJECT (self, "%u views", self->config.set->n_views);
  return TRUE;
}

/* PAUSED -> READY, the workers joined (and finalize): drops the stream's
 * slides, tiles and settings. */
static void
gst_patch_views_stop (WsiPoolElement * element)
{
  GstPatchViews *self = GST_PATCH_VIEWS (element);

  self->slide_cache = NULL;
  self->tile_cache = NULL;
  wsi_read_caches_client_stop (&self->read.caches);
  stream_config_clear (&self->config);
  self->have_info = FALSE;
  self->warned_no_meta = FALSE;
}

/* Installs @text as the view list, or keeps the current one with a
 * warning naming the problem. Object lock held. */
static gboolean
set_views_locked (GstPatchViews * self, const gchar * text)
{
  GError *error = NULL;
  WsiViewSet *set = wsi_view_set_parse (text, &error);

  if (set == NULL) {
    gchar *accepted = g_strdup_printf ("a view list as docs/design.md "
        "describes; %s", error->message);

    /* the element refuses to start; running, the run goes on unchanged */
    wsi_refusal_record (wsi_refusal_of (self), "views", text, accepted);
    if (GST_STATE (self) > GST_STATE_READY)
      g_warning ("patchviews: views \"%s\" refused: %s; keeping \"%s\"",
          GST_STR_NULL (text), error->message, self->views);
    g_free (accepted);
    g_error_free (error);
    return FALSE;
  }
  wsi_refusal_forget (wsi_refusal_of (self), "views");
  wsi_view_set_free (self->view_set);
  self->view_set = set;
  g_free (self->views);
  self->views = g_strdup (text);
  return TRUE;
}

static void
gst_patch_views_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstPatchViews *self = GST_PATCH_VIEWS (object);

  if (wsi_read_properties_set (&self->read, &read_property_spec, prop_id,
          value))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_PRESET:{
      GstPatchViewsPreset preset = g_value_get_enum (value);

      /* none keeps the current views: it only says they are custom. */
      if (preset == GST_PATCH_VIEWS_PRESET_NONE
          || set_views_locked (self, preset_views[preset]))
        self->preset = preset;
      break;
    }
    case PROP_VIEWS:
      if (set_views_locked (self, g_value_get_string (value)))
        self->preset = GST_PATCH_VIEWS_PRESET_NONE;
      break;
    case PROP_SEED:
      self->seed = g_value_get_uint64 (value);
      break;
    case PROP_THREADS:
      self->threads = g_value_get_uint (value);
      break;
    case PROP_INTERPOLATION:
      self->interpolation = g_value_get_enum (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_views_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstPatchViews *self = GST_PATCH_VIEWS (object);

  if (wsi_read_properties_get (&self->read, &read_property_spec, prop_id,
          value))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_PRESET:
      g_value_set_enum (value, self->preset);
      break;
    case PROP_VIEWS:
      g_value_set_string (value, self->views);
      break;
    case PROP_SEED:
      g_value_set_uint64 (value, self->seed);
      break;
    case PROP_THREADS:
      g_value_set_uint (value, self->threads);
      break;
    case PROP_INTERPOLATION:
      g_value_set_enum (value, self->interpolation);
      break;
    case PROP_LOCATIONS_OUT:
      g_value_set_uint64 (value, self->locations_out);
      break;
    case PROP_LOCATIONS_DROPPED:
      g_value_set_uint64 (value, self->locations_dropped);
      break;
    case PROP_JPEG_PIXELS_DECODED:
      g_value_set_uint64 (value, self->jpeg_pixels_decoded);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_views_finalize (GObject * object)
{
  GstPatchViews *self = GST_PATCH_VIEWS (object);

  gst_patch_views_stop (WSI_POOL_ELEMENT (self));
  wsi_read_properties_clear (&self->read);
  wsi_view_set_free (self->view_set);
  g_free (self->views);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_patch_views_class_init (GstPatchViewsClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  WsiPoolElementClass *pool_class = WSI_POOL_ELEMENT_CLASS (klass);

  gobject_class->set_property = gst_patch_views_set_property;
  gobject_class->get_property = gst_patch_views_get_property;
  gobject_class->finalize = gst_patch_views_finalize;

  g_object_class_install_property (gobject_class, PROP_PRESET,
      g_param_spec_enum ("preset", "Preset",
          "A common recipe; sets views to its text (none: views as set; "
          "setting views makes the preset none)",
          GST_TYPE_PATCH_VIEWS_PRESET, DEFAULT_PRESET,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_VIEWS,
      g_param_spec_string ("views", "Views",
          "The views of each location, comma-separated groups, at most 16 "
          "views: NAME:COUNT:SIZE:SCALE_MIN:SCALE_MAX[:RATIO_MIN:RATIO_MAX] "
          "= COUNT random-resized crops NAME_0.. of SIZE px (1..4096) "
          "covering SCALE_MIN..SCALE_MAX of the patch area (0 < min <= max "
          "<= 1), aspect ratio log-uniform in RATIO_MIN..RATIO_MAX (default "
          "0.75..1.3333); NAME:patch = the patch itself; "
          "NAME:context:SIZE:MPP = SIZE px (0 = the patch's size) re-read "
          "from the slide around the patch's centre at MPP um/px, or at "
          "MPP times the patch's mpp when it ends in x (4x). Invalid text "
          "is refused with a warning", preset_views[DEFAULT_PRESET],
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_SEED,
      wsi_param_spec_uint64 ("seed", "Seed",
          "Seed of the crop draws (0..2^64-1): each crop is a function of "
          "(seed, the patch's sequence, the view index) alone",
          0, G_MAXUINT64, DEFAULT_SEED,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_THREADS,
      wsi_ordered_pool_param_spec_threads ("Worker threads making "
          "views", DEFAULT_THREADS));
  g_object_class_install_property (gobject_class, PROP_INTERPOLATION,
      g_param_spec_enum ("interpolation", "Interpolation",
          "How crops are resampled to their output size",
          GST_TYPE_PATCH_VIEWS_INTERPOLATION, DEFAULT_INTERPOLATION,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  wsi_read_properties_install (gobject_class, &read_property_spec);
  g_object_class_install_property (gobject_class, PROP_LOCATIONS_OUT,
      wsi_param_spec_uint64 ("locations-out", "Locations out",
          "Locations pushed with all their views since the last READY to "
          "PAUSED change (count)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_LOCATIONS_DROPPED,
      wsi_param_spec_uint64 ("locations-dropped", "Locations dropped",
          "Locations dropped because a view could not be made (unreadable "
          "context region, unknown mpp) since the last READY to PAUSED "
          "change (count)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_JPEG_PIXELS_DECODED,
      wsi_param_spec_uint64 ("jpeg-pixels-decoded", "JPEG pixels decoded",
          "Pixels decoded from compressed (image/jpeg) patches since the "
          "last READY to PAUSED change, counted at the scale decoded at "
          "(count; a whole 256 px patch at full size is 65536)", 0,
          G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Whole-slide patch views", "Filter/Converter/Video",
      "Makes several views of each patch location (random-resized crops, "
      "the patch, context views re-read from the slide), in one buffer",
      "gst-wsi developers");

  pool_class->work_size = sizeof (WsiViewsWork);
  pool_class->worker_name = "patchviews";
  pool_class->start = GST_DEBUG_FUNCPTR (gst_patch_views_start);
  pool_class->stop = GST_DEBUG_FUNCPTR (gst_patch_views_stop);
  pool_class->thread_state_new = views_thread_new;
  pool_class->thread_state_free = views_thread_free;
  pool_class->handle_buffer =
      GST_DEBUG_FUNCPTR (gst_patch_views_handle_buffer);
  pool_class->process = views_process;
  pool_class->finish = views_finish;
  pool_class->work_clear = views_work_clear;
  pool_class->set_caps = GST_DEBUG_FUNCPTR (gst_patch_views_set_caps);
  pool_class->sink_query = GST_DEBUG_FUNCPTR (gst_patch_views_sink_query);

  gst_type_mark_as_plugin_api (GST_TYPE_PATCH_VIEWS_PRESET, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_PATCH_VIEWS_INTERPOLATION, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_WSI_BACKEND, 0);

  /* numbers outside their range refuse the start (wsirefusal.h) */
  wsi_refusal_class_init (GST_ELEMENT_CLASS (klass));
}

static void
gst_patch_views_init (GstPatchViews * self)
{
  gst_pad_use_fixed_caps (WSI_POOL_ELEMENT_SRC_PAD (self));

  self->preset = DEFAULT_PRESET;
  self->views = g_strdup (preset_views[DEFAULT_PRESET]);
  self->view_set = wsi_view_set_parse (self->views, NULL);
  self->seed = DEFAULT_SEED;
  self->threads = DEFAULT_THREADS;
  self->interpolation = DEFAULT_INTERPOLATION;
  wsi_read_properties_init (&self->read, &read_property_spec);
}
