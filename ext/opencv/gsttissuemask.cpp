/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-tissuemask
 * @title: tissuemask
 *
 * tissuemask finds the tissue on the overview (thumbnail) of each slide
 * that wsislidesrc pushes, so that patchsampler only draws patches where
 * there is tissue. It appends the mask (one byte per overview pixel,
 * 0 = background, 255 = tissue, tight rows) after the overview RGB bytes of
 * the slide buffer and updates the slide's `WsiSlideMeta`: `has-mask`,
 * `tissue-fraction` (share of overview pixels that are tissue) and
 * `tissue-rejected` (the fraction is below #GstTissueMask:min-tissue-fraction;
 * such a slide still goes downstream, but patchsampler samples nothing from
 * it, and a warning naming the slide is posted).
 *
 * Methods (#GstTissueMask:method):
 *
 * * `otsu` (default): Otsu's threshold on the HSV saturation channel, the
 *   usual choice for H&E. The threshold never goes below 15, so a blank or
 *   nearly uniform overview is not called tissue.
 * * `hsv`: saturation >= #GstTissueMask:saturation-threshold and
 *   value <= #GstTissueMask:value-threshold.
 * * `clam`: CLAM's segment_tissue: saturation, median blur
 *   (#GstTissueMask:median-kernel), threshold at
 *   #GstTissueMask:saturation-threshold, morphological closing
 *   (#GstTissueMask:close-kernel), then tissue pieces smaller than
 *   #GstTissueMask:min-component-area are dropped and holes smaller than
 *   #GstTissueMask:min-hole-area are filled.
 * * `fluorescence`: for dark-background fluorescence scans (DAPI, TRITC,
 *   FITC...: black background, bright nuclei). Tissue is what is brighter
 *   than Otsu's threshold on the HSV value channel (the brightest of R, G
 *   and B, so a pure blue or pure red stain counts at full strength); the
 *   threshold never goes below #GstTissueMask:value-floor, so a blank dark
 *   overview is not called tissue. A morphological closing
 *   (#GstTissueMask:close-kernel) then joins clusters of nuclei into
 *   regions. The saturation-based methods are useless here: a dark pixel
 *   with a faint colour cast has a high HSV saturation, so they call nearly
 *   the whole black background tissue.
 * * `none`: every pixel is tissue.
 *
 * Masks are kept in a small LRU cache keyed by slide path and overview size
 * (#GstTissueMask:mask-cache-size), because wsislidesrc in cycle mode visits
 * the same slides again. Before reading an overview, wsislidesrc sends a
 * custom downstream query named `wsi-mask-cached` with a string field `path`;
 * tissuemask answers it (boolean field `cached` = %TRUE) when it holds that
 * slide's mask, and the source then pushes the slide without its overview
 * (`has-overview` = %FALSE): the cached mask is attached instead. Changing
 * any property that shapes the mask empties the cache.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/slides/ ! tissuemask method=clam min-tissue-fraction=0.05 ! \
 *     fakesink dump=false
 * ]| Computes CLAM-style tissue masks for every slide of a folder and drops
 * (marks rejected) slides with less than 5 % tissue on their overview.
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/dapi/ ! tissuemask method=fluorescence value-floor=30 ! \
 *     queue ! patchsampler patch-size=256 ! patchinterleave ! patchreader ! fakesink
 * ]| Samples patches only on the bright (stained) parts of fluorescence
 * slides, ignoring anything darker than 30 on their overviews.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsttissuemask.h"

#include <gst/wsi/wsirecord.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

GST_DEBUG_CATEGORY_STATIC (gst_tissue_mask_debug);
#define GST_CAT_DEFAULT gst_tissue_mask_debug

/* Otsu never thresholds saturation below this: on a blank overview Otsu
 * would otherwise split JPEG noise into "tissue" and "glass". */
#define OTSU_SATURATION_FLOOR 15

#define MASK_CACHED_QUERY_NAME "wsi-mask-cached"

#define DEFAULT_METHOD GST_TISSUE_MASK_METHOD_OTSU
#define DEFAULT_SATURATION_THRESHOLD 8  /* CLAM's sthresh */
#define DEFAULT_VALUE_THRESHOLD 245
/* Above the sensor noise of a black fluorescence background (a few grey
 * levels), below the dimmest stain the NDPI samples show. */
#define DEFAULT_VALUE_FLOOR 20
#define DEFAULT_MEDIAN_KERNEL 7 /* CLAM's mthresh */
#define DEFAULT_CLOSE_KERNEL 4  /* CLAM's presets */
#define DEFAULT_MIN_COMPONENT_AREA 0.0005
#define DEFAULT_MIN_HOLE_AREA 0.0002
#define DEFAULT_MIN_TISSUE_FRACTION 0.01
#define DEFAULT_MASK_CACHE_SIZE 64
#define MAX_KERNEL 255
#define MAX_MASK_CACHE_SIZE 65536

enum
{
  PROP_0,
  PROP_METHOD,
  PROP_SATURATION_THRESHOLD,
  PROP_VALUE_THRESHOLD,
  PROP_VALUE_FLOOR,
  PROP_MEDIAN_KERNEL,
  PROP_CLOSE_KERNEL,
  PROP_MIN_COMPONENT_AREA,
  PROP_MIN_HOLE_AREA,
  PROP_MIN_TISSUE_FRACTION,
  PROP_MASK_CACHE_SIZE,
  PROP_MASKS_COMPUTED,
  PROP_CACHE_HITS,
};

/* Everything that shapes a mask; a copy is taken for each computation so
 * that property changes never race with OpenCV. */
typedef struct
{
  GstTissueMaskMethod method;
  guint saturation_threshold;
  guint value_threshold;
  guint value_floor;
  guint median_kernel;
  guint close_kernel;
  gdouble min_component_area;
  gdouble min_hole_area;
} MaskSettings;

/* One cached mask. The cache holds an exclusive lock on @mask, so the
 * buffers that share it can never map it writable and alter the cache. */
typedef struct
{
  gchar *path;
  gint width;
  gint height;
  GstMemory *mask;
  gdouble fraction;
} MaskCacheEntry;

struct _GstTissueMask
{
  GstBaseTransform parent;

  /* Guards every field below (properties, cache and counters). */
  GMutex lock;
  MaskSettings settings;
  /* Bumped whenever settings change: a mask computed with older settings
   * is not cached. */
  guint settings_generation;
  gdouble min_tissue_fraction;
  guint mask_cache_size;
  /* MaskCacheEntry*, most recently used first. A list is enough: it is
   * searched once per slide, never per patch. */
  GQueue cache;
  guint64 masks_computed;
  guint64 cache_hits;
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (WSI_SLIDE_MEDIA_TYPE));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (WSI_SLIDE_MEDIA_TYPE));

#define gst_tissue_mask_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstTissueMask, gst_tissue_mask,
    GST_TYPE_BASE_TRANSFORM,
    GST_DEBUG_CATEGORY_INIT (gst_tissue_mask_debug, "tissuemask", 0,
        "Tissue detection on slide overviews"));
GST_ELEMENT_REGISTER_DEFINE (tissuemask, "tissuemask", GST_RANK_NONE,
    GST_TYPE_TISSUE_MASK);

GType
gst_tissue_mask_method_get_type (void)
{
  static gsize type_id = 0;
  static const GEnumValue values[] = {
    {GST_TISSUE_MASK_METHOD_OTSU,
        "Otsu threshold on HSV saturation (H&E default)", "otsu"},
    {GST_TISSUE_MASK_METHOD_HSV,
          "Saturation >= saturation-threshold and value <= value-threshold",
        "hsv"},
    {GST_TISSUE_MASK_METHOD_CLAM,
          "CLAM segment_tissue: saturation, median blur, threshold, closing, "
          "small pieces dropped, small holes filled", "clam"},
    {GST_TISSUE_MASK_METHOD_NONE, "No detection: everything is tissue",
        "none"},
    {GST_TISSUE_MASK_METHOD_FLUORESCENCE,
          "Dark-background fluorescence: brighter than Otsu on HSV value "
          "(at least value-floor), then closing (close-kernel)",
        "fluorescence"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type_id)) {
    GType type = g_enum_register_static ("GstTissueMaskMethod", values);
    g_once_init_leave (&type_id, type);
  }
  return (GType) type_id;
}

/* ---- mask computation (OpenCV, no GStreamer state) ---------------------- */

static cv::Mat
saturation_channel (const cv::Mat & hsv)
{
  cv::Mat saturation;

  cv::extractChannel (hsv, saturation, 1);
  return saturation;
}

static void
mask_otsu (const cv::Mat & hsv, cv::Mat & mask)
{
  cv::Mat saturation = saturation_channel (hsv);
  double threshold = cv::threshold (saturation, mask, 0, 255,
      cv::THRESH_BINARY | cv::THRESH_OTSU);

  if (threshold < OTSU_SATURATION_FLOOR) {
    GST_DEBUG ("Otsu threshold %.0f below the floor, using %d", threshold,
        OTSU_SATURATION_FLOOR);
    cv::threshold (saturation, mask, OTSU_SATURATION_FLOOR, 255,
        cv::THRESH_BINARY);
  }
}

/* Square closing (dilate, then erode) with a @side x @side kernel; 0 does
 * nothing. */
static void
close_mask (cv::Mat & mask, guint side)
{
  if (side > 0) {
    cv::Mat kernel = cv::Mat::ones (side, side, CV_8U);
    cv::morphologyEx (mask, mask, cv::MORPH_CLOSE, kernel);
  }
}

/* Fluorescence: the background is black and the stain is bright, in
 * whatever colour the channel is shown, so brightness (HSV value, the
 * largest of R, G, B) is the signal and saturation is meaningless. */
static void
mask_fluorescence (const cv::Mat & hsv, const MaskSettings * s, cv::Mat & mask)
{
  cv::Mat value;
  double threshold;

  cv::extractChannel (hsv, value, 2);
  threshold = cv::threshold (value, mask, 0, 255,
      cv::THRESH_BINARY | cv::THRESH_OTSU);
  if (threshold < s->value_floor) {
    GST_DEBUG ("Otsu value threshold %.0f below value-floor, using %u",
        threshold, s->value_floor);
    cv::threshold (value, mask, s->value_floor, 255, cv::THRESH_BINARY);
  } else {
    GST_DEBUG ("Otsu value threshold %.0f", threshold);
  }
  close_mask (mask, s->close_kernel);
}

static void
mask_hsv (const cv::Mat & hsv, const MaskSettings * s, cv::Mat & mask)
{
  /* inRange bounds are inclusive on both ends. */
  cv::inRange (hsv, cv::Scalar (0, s->saturation_threshold, 0),
      cv::Scalar (255, 255, s->value_threshold), mask);
}

/* Zeroes the 8-connected tissue pieces smaller than @min_pixels. */
static void
drop_small_components (cv::Mat & mask, double min_pixels)
{
  cv::Mat labels, stats, centroids;
  int n = cv::connectedComponentsWithStats (mask, labels, stats, centroids,
      8, CV_32S);
  std::vector < guint8 > keep (n, 255);
  bool any_dropped = false;

  keep[0] = 0;                  /* label 0 is the background */
  for (int i = 1; i < n; i++) {
    if (stats.at < int >(i, cv::CC_STAT_AREA) < min_pixels) {
      keep[i] = 0;
      any_dropped = true;
    }
  }
  if (!any_dropped)
    return;
  for (int y = 0; y < mask.rows; y++) {
    const int *label = labels.ptr < int >(y);
    guint8 *out = mask.ptr < guint8 > (y);
    for (int x = 0; x < mask.cols; x++)
      out[x] = keep[label[x]];
  }
}

/* Fills background regions enclosed by tissue (not touching the overview
 * border) smaller than @max_pixels. Background is taken 4-connected, the
 * dual of 8-connected tissue. */
static void
fill_small_holes (cv::Mat & mask, double max_pixels)
{
  cv::Mat background, labels, stats, centroids;
  int n;

  cv::bitwise_not (mask, background);
  n = cv::connectedComponentsWithStats (background, labels, stats, centroids,
      4, CV_32S);
  std::vector < bool > fill (n, false);
  bool any_filled = false;

  for (int i = 1; i < n; i++) {
    int left = stats.at < int >(i, cv::CC_STAT_LEFT);
    int top = stats.at < int >(i, cv::CC_STAT_TOP);
    int right = left + stats.at < int >(i, cv::CC_STAT_WIDTH);
    int bottom = top + stats.at < int >(i, cv::CC_STAT_HEIGHT);
    bool on_border = left == 0 || top == 0 || right == mask.cols
        || bottom == mask.rows;

    if (!on_border && stats.at < int >(i, cv::CC_STAT_AREA) < max_pixels) {
      fill[i] = true;
      any_filled = true;
    }
  }
  if (!any_filled)
    return;
  for (int y = 0; y < mask.rows; y++) {
    const int *label = labels.ptr < int >(y);
    guint8 *out = mask.ptr < guint8 > (y);
    for (int x = 0; x < mask.cols; x++)
      if (fill[label[x]])
        out[x] = 255;
  }
}

static void
mask_clam (const cv::Mat & hsv, const MaskSettings * s, cv::Mat & mask)
{
  cv::Mat blurred;
  double area = (double) hsv.rows * hsv.cols;

  cv::medianBlur (saturation_channel (hsv), blurred, s->median_kernel);
  cv::threshold (blurred, mask, s->saturation_threshold, 255,
      cv::THRESH_BINARY);
  close_mask (mask, s->close_kernel);
  drop_small_components (mask, s->min_component_area * area);
  fill_small_holes (mask, s->min_hole_area * area);
}

/* Computes the mask of a tight RGB overview into @mask_data (width*height
 * bytes) and returns the tissue fraction. Throws cv::Exception. */
static gdouble
compute_mask (const guint8 * rgb, gint width, gint height,
    const MaskSettings * s, guint8 * mask_data)
{
  cv::Mat overview (height, width, CV_8UC3, (void *) rgb, (size_t) width * 3);
  cv::Mat out (height, width, CV_8UC1, mask_data, (size_t) width);
  cv::Mat hsv, mask;

  if (s->method == GST_TISSUE_MASK_METHOD_NONE) {
    out.setTo (255);
    return 1.0;
  }

  cv::cvtColor (overview, hsv, cv::COLOR_RGB2HSV);
  switch (s->method) {
    case GST_TISSUE_MASK_METHOD_HSV:
      mask_hsv (hsv, s, mask);
      break;
    case GST_TISSUE_MASK_METHOD_CLAM:
      mask_clam (hsv, s, mask);
      break;
    case GST_TISSUE_MASK_METHOD_FLUORESCENCE:
      mask_fluorescence (hsv, s, mask);
      break;
    case GST_TISSUE_MASK_METHOD_OTSU:
    default:
      mask_otsu (hsv, mask);
      break;
  }
  mask.copyTo (out);
  return (gdouble) cv::countNonZero (out) / ((gdouble) width * height);
}

/* ---- the cache (call with the lock held) -------------------------------- */

static void
mask_cache_entry_free (MaskCacheEntry * entry)
{
  gst_mini_object_unlock (GST_MINI_OBJECT_CAST (entry->mask),
      GST_LOCK_FLAG_EXCLUSIVE);
  gst_memory_unref (entry->mask);
  g_free (entry->path);
  g_free (entry);
}

static void
mask_cache_clear (GstTissueMask * self)
{
  g_queue_clear_full (&self->cache, (GDestroyNotify) mask_cache_entry_free);
}

static void
mask_cache_trim (GstTissueMask * self)
{
  while (self->cache.length > self->mask_cache_size)
    mask_cache_entry_free ((MaskCacheEntry *) g_queue_pop_tail (&self->cache));
}

/* Finds @path (any overview size when @width is 0) and makes it the most
 * recently used entry. */
static MaskCacheEntry *
mask_cache_lookup (GstTissueMask * self, const gchar * path, gint width,
    gint height)
{
  for (GList * l = self->cache.head; l != NULL; l = l->next) {
    MaskCacheEntry *entry = (MaskCacheEntry *) l->data;

    if (strcmp (entry->path, path) != 0)
      continue;
    if (width != 0 && (entry->width != width || entry->height != height))
      continue;
    g_queue_unlink (&self->cache, l);
    g_queue_push_head_link (&self->cache, l);
    return entry;
  }
  return NULL;
}

static void
mask_cache_insert (GstTissueMask * self, const gchar * path, gint width,
    gint height, GstMemory * mask, gdouble fraction)
{
  MaskCacheEntry *entry;

  if (self->mask_cache_size == 0)
    return;
  /* Same path, other overview size: the new mask replaces the old one. */
  entry = mask_cache_lookup (self, path, 0, 0);
  if (entry != NULL)
    mask_cache_entry_free ((MaskCacheEntry *) g_queue_pop_head (&self->cache));

  entry = g_new0 (MaskCacheEntry, 1);
  entry->path = g_strdup (path);
  entry->width = width;
  entry->height = height;
  entry->mask = gst_memory_ref (mask);
  gst_mini_object_lock (GST_MINI_OBJECT_CAST (mask), GST_LOCK_FLAG_EXCLUSIVE);
  entry->fraction = fraction;
  g_queue_push_head (&self->cache, entry);
  mask_cache_trim (self);
}

/* ---- buffers ------------------------------------------------------------ */

/* Computes the mask of the overview in @buffer; returns NULL (error posted)
 * when the buffer does not hold what its meta says. */
static GstMemory *
gst_tissue_mask_compute (GstTissueMask * self, GstBuffer * buffer,
    const gchar * path, gint width, gint height, gdouble * fraction)
{
  gsize expected = (gsize) width * height * 3;
  MaskSettings settings;
  guint generation;
  GstMapInfo overview, mask;
  GstMemory *memory;

  if (gst_buffer_get_size (buffer) != expected) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("The overview of slide \"%s\" has %" G_GSIZE_FORMAT " bytes, "
            "expected %" G_GSIZE_FORMAT " (%dx%d RGB).", path,
            gst_buffer_get_size (buffer), expected, width, height), (NULL));
    return NULL;
  }

  g_mutex_lock (&self->lock);
  settings = self->settings;
  generation = self->settings_generation;
  g_mutex_unlock (&self->lock);

  memory = gst_allocator_alloc (NULL, (gsize) width * height, NULL);
  gst_buffer_map (buffer, &overview, GST_MAP_READ);
  gst_memory_map (memory, &mask, GST_MAP_WRITE);
  try {
    *fraction = compute_mask (overview.data, width, height, &settings,
        mask.data);
  }
  catch (const cv::Exception & e) {
    gst_memory_unmap (memory, &mask);
    gst_buffer_unmap (buffer, &overview);
    gst_memory_unref (memory);
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
        ("Could not compute the tissue mask of slide \"%s\".", path),
        ("OpenCV: %s", e.what ()));
    return NULL;
  }
  gst_memory_unmap (memory, &mask);
  gst_buffer_unmap (buffer, &overview);

  GST_DEBUG_OBJECT (self, "mask of %s (%dx%d): tissue fraction %.4f", path,
      width, height, *fraction);

  g_mutex_lock (&self->lock);
  self->masks_computed++;
  if (generation == self->settings_generation)
    mask_cache_insert (self, path, width, height, memory, *fraction);
  g_mutex_unlock (&self->lock);
  return memory;
}

/* Returns a new reference to the cached mask of @path, or NULL. */
static GstMemory *
gst_tissue_mask_lookup (GstTissueMask * self, const gchar * path, gint width,
    gint height, gdouble * fraction)
{
  MaskCacheEntry *entry;
  GstMemory *memory = NULL;

  g_mutex_lock (&self->lock);
  entry = mask_cache_lookup (self, path, width, height);
  if (entry != NULL) {
    memory = gst_memory_ref (entry->mask);
    *fraction = entry->fraction;
    self->cache_hits++;
  }
  g_mutex_unlock (&self->lock);
  return memory;
}

static void
gst_tissue_mask_set_result (GstTissueMask * self, GstStructure * meta,
    const gchar * path, gboolean has_mask, gdouble fraction, gboolean warn)
{
  gdouble min_fraction;
  gboolean rejected;

  g_mutex_lock (&self->lock);
  min_fraction = self->min_tissue_fraction;
  g_mutex_unlock (&self->lock);

  rejected = !has_mask || fraction < min_fraction;
  gst_structure_set (meta, "has-mask", G_TYPE_BOOLEAN, has_mask,
      "tissue-fraction", G_TYPE_DOUBLE, fraction,
      "tissue-rejected", G_TYPE_BOOLEAN, rejected, NULL);

  /* Warn once, when the mask is computed, not on every later visit. */
  if (has_mask && rejected && warn)
    GST_ELEMENT_WARNING (self, STREAM, FAILED,
        ("Slide \"%s\" is rejected: only %.4f of its overview is tissue "
            "(min-tissue-fraction is %.4f).", path, fraction, min_fraction),
        (NULL));
}

static GstFlowReturn
gst_tissue_mask_transform_ip (GstBaseTransform * trans, GstBuffer * buffer)
{
  GstTissueMask *self = GST_TISSUE_MASK (trans);
  GstStructure *meta = wsi_slide_meta_get (buffer);
  gboolean has_overview = FALSE, has_mask = FALSE;
  gint width = 0, height = 0;
  gdouble fraction = 0.0;
  GstMemory *mask;
  gboolean computed = FALSE;
  gchar *path;

  if (meta == NULL) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Received a slide buffer without a " WSI_SLIDE_META_NAME "."),
        ("tissuemask needs wsislidesrc (or an equivalent) upstream"));
    return GST_FLOW_ERROR;
  }
  path = g_strdup (gst_structure_get_string (meta, "path"));
  if (path == NULL)
    path = g_strdup ("(unnamed slide)");
  gst_structure_get_boolean (meta, "has-overview", &has_overview);
  gst_structure_get_boolean (meta, "has-mask", &has_mask);
  gst_structure_get_int (meta, "overview-width", &width);
  gst_structure_get_int (meta, "overview-height", &height);

  if (has_mask) {
    GST_LOG_OBJECT (self, "%s already has a mask, left as it is", path);
    g_free (path);
    return GST_FLOW_OK;
  }

  mask = gst_tissue_mask_lookup (self, path, width, height, &fraction);
  if (mask == NULL && has_overview && width > 0 && height > 0) {
    mask = gst_tissue_mask_compute (self, buffer, path, width, height,
        &fraction);
    if (mask == NULL) {
      g_free (path);
      return GST_FLOW_ERROR;
    }
    computed = TRUE;
  }

  if (mask != NULL) {
    gst_buffer_append_memory (buffer, mask);
    gst_tissue_mask_set_result (self, meta, path, TRUE, fraction, computed);
  } else {
    GST_ELEMENT_WARNING (self, STREAM, FAILED,
        ("Slide \"%s\" is rejected: it came without an overview (%dx%d) "
            "and its mask is not cached.", path, width, height), (NULL));
    gst_tissue_mask_set_result (self, meta, path, FALSE, 0.0, FALSE);
  }
  g_free (path);
  return GST_FLOW_OK;
}

/* Answers wsislidesrc's "is this slide's mask cached?" query. */
static gboolean
gst_tissue_mask_query (GstBaseTransform * trans, GstPadDirection direction,
    GstQuery * query)
{
  GstTissueMask *self = GST_TISSUE_MASK (trans);

  if (direction == GST_PAD_SINK && GST_QUERY_TYPE (query) == GST_QUERY_CUSTOM) {
    const GstStructure *s = gst_query_get_structure (query);
    const gchar *path;
    gboolean cached = FALSE;

    if (s != NULL && gst_structure_has_name (s, MASK_CACHED_QUERY_NAME)
        && (path = gst_structure_get_string (s, "path")) != NULL) {
      g_mutex_lock (&self->lock);
      cached = mask_cache_lookup (self, path, 0, 0) != NULL;
      g_mutex_unlock (&self->lock);
      GST_LOG_OBJECT (self, "mask of %s cached: %d", path, cached);
    }
    if (cached) {
      gst_structure_set (gst_query_writable_structure (query), "cached",
          G_TYPE_BOOLEAN, TRUE, NULL);
      return TRUE;
    }
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction,
      query);
}

static gboolean
gst_tissue_mask_start (GstBaseTransform * trans)
{
  GstTissueMask *self = GST_TISSUE_MASK (trans);

  g_mutex_lock (&self->lock);
  self->masks_computed = 0;
  self->cache_hits = 0;
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static gboolean
gst_tissue_mask_stop (GstBaseTransform * trans)
{
  GstTissueMask *self = GST_TISSUE_MASK (trans);

  g_mutex_lock (&self->lock);
  mask_cache_clear (self);
  g_mutex_unlock (&self->lock);
  return TRUE;
}

/* ---- properties --------------------------------------------------------- */

/* Stores a mask-shaping setting; a real change empties the cache, whose
 * masks were made with the old value. Call with the lock held. */
static void
settings_changed (GstTissueMask * self)
{
  self->settings_generation++;
  mask_cache_clear (self);
}

#define SET_SETTING(field, value) G_STMT_START {      \
    if (self->settings.field != (value)) {            \
      self->settings.field = (value);                 \
      settings_changed (self);                        \
    }                                                 \
  } G_STMT_END

static void
gst_tissue_mask_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstTissueMask *self = GST_TISSUE_MASK (object);

  g_mutex_lock (&self->lock);
  switch (prop_id) {
    case PROP_METHOD:
      SET_SETTING (method, (GstTissueMaskMethod) g_value_get_enum (value));
      break;
    case PROP_SATURATION_THRESHOLD:
      SET_SETTING (saturation_threshold, g_value_get_uint (value));
      break;
    case PROP_VALUE_THRESHOLD:
      SET_SETTING (value_threshold, g_value_get_uint (value));
      break;
    case PROP_VALUE_FLOOR:
      SET_SETTING (value_floor, g_value_get_uint (value));
      break;
    case PROP_MEDIAN_KERNEL:{
      guint kernel = g_value_get_uint (value);

      if (kernel % 2 == 0) {
        g_warning ("tissuemask: median-kernel must be odd, got %u; "
            "keeping %u", kernel, self->settings.median_kernel);
        break;
      }
      SET_SETTING (median_kernel, kernel);
      break;
    }
    case PROP_CLOSE_KERNEL:
      SET_SETTING (close_kernel, g_value_get_uint (value));
      break;
    case PROP_MIN_COMPONENT_AREA:
      SET_SETTING (min_component_area, g_value_get_double (value));
      break;
    case PROP_MIN_HOLE_AREA:
      SET_SETTING (min_hole_area, g_value_get_double (value));
      break;
    case PROP_MIN_TISSUE_FRACTION:
      /* Rejection is decided per buffer: the cache stays valid. */
      self->min_tissue_fraction = g_value_get_double (value);
      break;
    case PROP_MASK_CACHE_SIZE:
      self->mask_cache_size = g_value_get_uint (value);
      mask_cache_trim (self);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  g_mutex_unlock (&self->lock);
}

static void
gst_tissue_mask_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstTissueMask *self = GST_TISSUE_MASK (object);

  g_mutex_lock (&self->lock);
  switch (prop_id) {
    case PROP_METHOD:
      g_value_set_enum (value, self->settings.method);
      break;
    case PROP_SATURATION_THRESHOLD:
      g_value_set_uint (value, self->settings.saturation_threshold);
      break;
    case PROP_VALUE_THRESHOLD:
      g_value_set_uint (value, self->settings.value_threshold);
      break;
    case PROP_VALUE_FLOOR:
      g_value_set_uint (value, self->settings.value_floor);
      break;
    case PROP_MEDIAN_KERNEL:
      g_value_set_uint (value, self->settings.median_kernel);
      break;
    case PROP_CLOSE_KERNEL:
      g_value_set_uint (value, self->settings.close_kernel);
      break;
    case PROP_MIN_COMPONENT_AREA:
      g_value_set_double (value, self->settings.min_component_area);
      break;
    case PROP_MIN_HOLE_AREA:
      g_value_set_double (value, self->settings.min_hole_area);
      break;
    case PROP_MIN_TISSUE_FRACTION:
      g_value_set_double (value, self->min_tissue_fraction);
      break;
    case PROP_MASK_CACHE_SIZE:
      g_value_set_uint (value, self->mask_cache_size);
      break;
    case PROP_MASKS_COMPUTED:
      g_value_set_uint64 (value, self->masks_computed);
      break;
    case PROP_CACHE_HITS:
      g_value_set_uint64 (value, self->cache_hits);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  g_mutex_unlock (&self->lock);
}

static void
gst_tissue_mask_finalize (GObject * object)
{
  GstTissueMask *self = GST_TISSUE_MASK (object);

  mask_cache_clear (self);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_tissue_mask_install_properties (GObjectClass * gobject_class)
{
  const GParamFlags rw = (GParamFlags) (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  const GParamFlags ro = (GParamFlags) (G_PARAM_READABLE |
      G_PARAM_STATIC_STRINGS);

  g_object_class_install_property (gobject_class, PROP_METHOD,
      g_param_spec_enum ("method", "Method",
          "How tissue is told from the background: otsu (Otsu on HSV "
          "saturation, floor 15), hsv (fixed thresholds), clam (CLAM "
          "segment_tissue), fluorescence (dark background: Otsu on HSV "
          "value, floor value-floor, then closing) or none (all tissue). "
          "Default: otsu",
          GST_TYPE_TISSUE_MASK_METHOD, DEFAULT_METHOD, rw));
  g_object_class_install_property (gobject_class, PROP_SATURATION_THRESHOLD,
      g_param_spec_uint ("saturation-threshold", "Saturation threshold",
          "HSV saturation (0-255) at or above which a pixel is tissue, for "
          "methods hsv and clam (clam: strictly above, as CLAM's sthresh). "
          "Range 0-255, default 8",
          0, 255, DEFAULT_SATURATION_THRESHOLD, rw));
  g_object_class_install_property (gobject_class, PROP_VALUE_THRESHOLD,
      g_param_spec_uint ("value-threshold", "Value threshold",
          "HSV value (brightness, 0-255) at or below which a pixel can be "
          "tissue, for method hsv (brighter pixels are glass). "
          "Range 0-255, default 245",
          0, 255, DEFAULT_VALUE_THRESHOLD, rw));
  g_object_class_install_property (gobject_class, PROP_VALUE_FLOOR,
      g_param_spec_uint ("value-floor", "Value floor",
          "Lowest threshold on HSV value (brightness, 0-255) for method "
          "fluorescence: tissue is brighter than Otsu's threshold or this, "
          "whichever is higher, so sensor noise on a blank dark overview is "
          "not tissue. Range 0-255, default 20",
          0, 255, DEFAULT_VALUE_FLOOR, rw));
  g_object_class_install_property (gobject_class, PROP_MEDIAN_KERNEL,
      g_param_spec_uint ("median-kernel", "Median kernel",
          "Side in overview pixels of the median blur applied to the "
          "saturation, for method clam (CLAM's mthresh). Odd, range 1-255 "
          "(1 = no blur), default 7",
          1, MAX_KERNEL, DEFAULT_MEDIAN_KERNEL, rw));
  g_object_class_install_property (gobject_class, PROP_CLOSE_KERNEL,
      g_param_spec_uint ("close-kernel", "Close kernel",
          "Side in overview pixels of the square morphological closing, for "
          "methods clam (CLAM's close) and fluorescence (joins clusters of "
          "nuclei). Range 0-255 (0 = no closing), default 4",
          0, MAX_KERNEL, DEFAULT_CLOSE_KERNEL, rw));
  g_object_class_install_property (gobject_class, PROP_MIN_COMPONENT_AREA,
      g_param_spec_double ("min-component-area", "Minimum component area",
          "Tissue pieces smaller than this fraction of the overview area are "
          "dropped, for method clam. Range 0-1, default 0.0005",
          0.0, 1.0, DEFAULT_MIN_COMPONENT_AREA, rw));
  g_object_class_install_property (gobject_class, PROP_MIN_HOLE_AREA,
      g_param_spec_double ("min-hole-area", "Minimum hole area",
          "Holes in the tissue smaller than this fraction of the overview "
          "area are filled, for method clam. Range 0-1, default 0.0002",
          0.0, 1.0, DEFAULT_MIN_HOLE_AREA, rw));
  g_object_class_install_property (gobject_class, PROP_MIN_TISSUE_FRACTION,
      g_param_spec_double ("min-tissue-fraction", "Minimum tissue fraction",
          "Slides whose mask covers less than this fraction of the overview "
          "are marked tissue-rejected (a warning is posted; patchsampler "
          "samples nothing from them). Range 0-1, default 0.01",
          0.0, 1.0, DEFAULT_MIN_TISSUE_FRACTION, rw));
  g_object_class_install_property (gobject_class, PROP_MASK_CACHE_SIZE,
      g_param_spec_uint ("mask-cache-size", "Mask cache size",
          "Number of slides whose masks are kept (least recently used "
          "evicted first) so that revisited slides need no overview. "
          "Range 0-65536 (0 = no cache), default 64",
          0, MAX_MASK_CACHE_SIZE, DEFAULT_MASK_CACHE_SIZE, rw));
  g_object_class_install_property (gobject_class, PROP_MASKS_COMPUTED,
      g_param_spec_uint64 ("masks-computed", "Masks computed",
          "Number of masks computed from overviews since the element "
          "started (read-only)", 0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_CACHE_HITS,
      g_param_spec_uint64 ("cache-hits", "Cache hits",
          "Number of slides that got their mask from the cache since the "
          "element started (read-only)", 0, G_MAXUINT64, 0, ro));
}

static void
gst_tissue_mask_class_init (GstTissueMaskClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->set_property = gst_tissue_mask_set_property;
  gobject_class->get_property = gst_tissue_mask_get_property;
  gobject_class->finalize = gst_tissue_mask_finalize;
  gst_tissue_mask_install_properties (gobject_class);

  gst_element_class_set_static_metadata (element_class,
      "Tissue mask", "Filter/Analyzer",
      "Finds the tissue on each slide's overview and appends the mask "
      "to the slide buffer", "gst-wsi developers");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);

  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_tissue_mask_transform_ip);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_tissue_mask_query);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_tissue_mask_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_tissue_mask_stop);

  gst_type_mark_as_plugin_api (GST_TYPE_TISSUE_MASK_METHOD,
      (GstPluginAPIFlags) 0);
}

static void
gst_tissue_mask_init (GstTissueMask * self)
{
  g_mutex_init (&self->lock);
  self->settings.method = DEFAULT_METHOD;
  self->settings.saturation_threshold = DEFAULT_SATURATION_THRESHOLD;
  self->settings.value_threshold = DEFAULT_VALUE_THRESHOLD;
  self->settings.value_floor = DEFAULT_VALUE_FLOOR;
  self->settings.median_kernel = DEFAULT_MEDIAN_KERNEL;
  self->settings.close_kernel = DEFAULT_CLOSE_KERNEL;
  self->settings.min_component_area = DEFAULT_MIN_COMPONENT_AREA;
  self->settings.min_hole_area = DEFAULT_MIN_HOLE_AREA;
  self->min_tissue_fraction = DEFAULT_MIN_TISSUE_FRACTION;
  self->mask_cache_size = DEFAULT_MASK_CACHE_SIZE;
  g_queue_init (&self->cache);

  /* The slide buffer leaves with a mask appended: never passthrough. */
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), FALSE);
}
