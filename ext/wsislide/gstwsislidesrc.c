/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-wsislidesrc
 * @title: wsislidesrc
 *
 * Turns a collection of whole-slide images into a stream of slides: one
 * buffer per slide visit, with caps `application/x-wsi-slide`. The buffer
 * holds the slide's overview (its longest side is #wsislidesrc:thumbnail-size
 * pixels, tightly packed RGB, transparent areas shown as white glass) and a
 * `WsiSlideMeta` custom meta describing the slide: path, index in the
 * collection, label, vendor, pyramid levels, microns per pixel, overview
 * size (see gst-libs/gst/wsi/wsirecord.h). GST_BUFFER_OFFSET is the visit
 * number; there are no timestamps.
 *
 * #wsislidesrc:location names one slide, a directory (searched
 * recursively for slide files by extension), a manifest, or a text list
 * file holding one slide path per line, optionally followed by a TAB and a
 * label; blank lines and lines starting with `#` are ignored. Relative
 * paths are relative to the list's or manifest's folder. The collection is
 * sorted by path, so that every run and every process sees the same order.
 *
 * Slides, lists and manifests may live behind `http://`, `https://`,
 * `s3://` or `gs://` (ranged GETs, see docs/remote.md; `s3://BUCKET/PREFIX/`
 * or `gs://BUCKET/PREFIX/` is listed like a folder): JPEG-tiled TIFF
 * pyramids (Aperio SVS, generic tiled TIFF) stream from there
 * byte-identical to the same file on disk; every other format fails with
 * "this format needs a local file".
 * Messages and metadata show URLs without user, password or query.
 *
 * A manifest is a CSV (RFC 4180 quoting) or TSV table with a header row:
 * a file ending in `.csv` or `.tsv`, or any file whose first line starts
 * with a `path` field followed by a comma or a TAB. Its `path` column names
 * the slides; every other column (label, patient, split...) travels as
 * strings with the slide (`WsiSlideMeta` fields `column-names` and
 * `column-values`) and with each of its patches (patchreader copies them
 * into `WsiPatchMeta`); a `label` column also fills `label`. A manifest
 * without a path column, with a row of the wrong width, an empty path or
 * an unclosed quote stops the source with an error naming the file and the
 * line. With #wsislidesrc:tcga the TCGA barcode in each file name adds the
 * columns project, barcode, patient, sample, sample_type, vial, portion,
 * tissue_source_site and slide_type (a name without a barcode is warned
 * about once and gets empty values).
 *
 * Read-only counters: #wsislidesrc:slides-opened (distinct slides opened),
 * #wsislidesrc:slides-failed, #wsislidesrc:slides-damaged (opened, but a
 * file declares frames it does not hold, or a TILED_FULL DICOM instance has
 * fewer frames than its grid: warned about once, naming the file and the
 * reason; the stream goes on; #wsislidesrc:damaged-slides names them, and
 * the wsistats summary and gstwsi's Monitor show them),
 * #wsislidesrc:slides-rejected (rejected by a
 * tissuemask downstream, reported with an upstream `wsi-slide-rejected`
 * event) and #wsislidesrc:slides-blank (of those, masks without tissue).
 *
 * For distributed training, #wsislidesrc:rank and #wsislidesrc:world-size
 * (by default read from the RANK and WORLD_SIZE environment variables that
 * torchrun sets) split the collection: rank r takes slides r, r + W, r + 2W
 * and so on. With #wsislidesrc:cycle the source starts over after the last
 * slide, and with `slide-order=random` it reshuffles its own slides every
 * cycle, reproducibly for a given #wsislidesrc:seed.
 *
 * Every `WsiSlideMeta` also says where the slide sits in that split:
 * `rank` and `world-size` (uint), `rank-slides` (uint: slides this rank
 * holds) and `rank-slides-min` (uint: floor(total / world-size), the slide
 * count of the smallest rank, also the #wsislidesrc:rank-slides-min
 * property). `rank-slides-min` follows from the sorted collection alone, so
 * every rank computes the same number without communicating: patchsampler
 * with `rank-quota=true` turns it into a per-rank patch quota, so that a
 * finite DDP run emits exactly as many patches on every rank.
 *
 * A slide that cannot be read is reported with a warning message naming the
 * file and the reason, counted in #wsislidesrc:slides-failed and skipped
 * (never retried on later cycles); the stream goes on. Only when every slide
 * of the rank fails does the source post an error. The first visit is made
 * while the source starts (going to PAUSED), as filesrc opens its file: a
 * set of which no slide can be read fails that state change, with an error
 * naming every slide and why, so that the application learns it from
 * gst_element_set_state() and not from a streaming thread.
 *
 * Slide visits are prepared ahead of need (#wsislidesrc:prepare-ahead, by
 * default as many as patchinterleave's pool downstream holds): worker
 * threads open the next slides and read their overviews while earlier ones
 * stream, and the source hands them out strictly in visit order, so the
 * stream is the same whatever the look-ahead or the thread count. The
 * overview's level is decoded at the largest JPEG DCT scale (1/2, 1/4,
 * 1/8) that keeps it at least the overview's size. The wsistats tracer
 * shows the preparation per slide (`prep-*-ns` fields of the meta).
 *
 * On revisits the source reopens nothing it does not need: it remembers
 * each slide's description, and before reading an overview it asks
 * downstream with a custom query (structure `wsi-mask-cached`, field `path`)
 * whether the tissue mask of that slide is already known; an element that
 * answers by setting the boolean field `cached` to %TRUE gets the slide
 * without overview (`has-overview` %FALSE, empty buffer). The query also
 * carries `source-identity` (a local file's size and mtime in ns, "" for a
 * remote slide) and `thumbnail-size`, as does the slide meta: tissuemask's
 * `mask-cache-dir` keys the masks it keeps across runs on them, so a later
 * run reads no overview either.
 *
 * ## Annotations
 *
 * A slide's annotation file (QuPath GeoJSON or ASAP XML, level-0 pixels) is
 * read once, when the slide is first opened: the one a manifest column
 * `annotations` names, else `SLIDE.geojson`, `SLIDE.json` or `SLIDE.xml`
 * in the folder of the `annotations` property, else next to the slide. Its
 * polygons travel in the slide meta (`annotation-*` fields) for
 * patchsampler's `annotation-mode`. Unusable shapes are dropped and a
 * malformed file leaves the slide without regions, each with a warning
 * naming the file; a file in the `annotations` folder named after no slide
 * is warned about too (docs/annotations.md).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/slides thumbnail-size=512 ! fakesink dump=false silent=false -v
 * ]| Prints one buffer per slide of /data/slides.
 * |[
 * gst-launch-1.0 wsislidesrc location=train.lst cycle=true slide-order=random seed=7 rank=0 world-size=4 ! tissuemask ! queue ! patchsampler ! fakesink
 * ]| Streams the first quarter of the slides listed in train.lst forever,
 * reshuffled on every pass.
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/tcga/manifest.csv tcga=true ! tissuemask ! queue ! patchsampler ! patchinterleave ! patchreader ! fakesink
 * ]| Streams the slides a manifest names, each patch carrying the
 * manifest's columns and the TCGA fields of its file name.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <glib/gstdio.h>
#include <string.h>

#include <gst/wsi/wsiannotation.h>
#include <gst/wsi/wsierrorrelay.h>
#include <gst/wsi/wsiorderedpool.h>
#include <gst/wsi/wsievent.h>
#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsirefusal.h>
#include <gst/wsi/wsirng.h>

#include "gstwsislidesrc.h"
#include "gstwsislideelements.h"
#include "wsiannotations.h"
#include "wsicollection.h"
#include "wsioverview.h"
#include "wsiprepqueue.h"
#include "wsislide.h"
#include "wsibytesource.h"
#ifdef WSI_HAVE_CURL
#include "wsihttpsource.h"
#endif

GST_DEBUG_CATEGORY_STATIC (gst_wsi_slide_src_debug);
#define GST_CAT_DEFAULT gst_wsi_slide_src_debug

#define DEFAULT_LOCATION NULL
#define DEFAULT_RANK -1
#define DEFAULT_WORLD_SIZE -1
#define DEFAULT_CYCLE FALSE
#define DEFAULT_SLIDE_ORDER GST_WSI_SLIDE_ORDER_SEQUENTIAL
#define DEFAULT_SEED 0
#define DEFAULT_THUMBNAIL_SIZE 1024
#define MIN_THUMBNAIL_SIZE 64
#define MAX_THUMBNAIL_SIZE 8192
#define DEFAULT_DEFAULT_MPP 0.0
#define DEFAULT_TCGA FALSE
#define MAX_DEFAULT_MPP 1000.0
/* -1: as many as the pool downstream holds (patchinterleave answers the
 * wsi-pool-size query): the slides it holds at once are the ones a new
 * slide must be ready to replace; 8, its default pool, when nobody
 * answers. */
#define DEFAULT_PREPARE_AHEAD -1
#define FALLBACK_PREPARE_AHEAD 8
#define MAX_PREPARE_AHEAD 256

#define MPP_SOURCE_DEFAULT "default-mpp"

enum
{
  PROP_0,
  PROP_LOCATION,
  PROP_RANK,
  PROP_WORLD_SIZE,
  PROP_CYCLE,
  PROP_SLIDE_ORDER,
  PROP_SEED,
  PROP_THUMBNAIL_SIZE,
  PROP_DEFAULT_MPP,
  PROP_SLIDES_TOTAL,
  PROP_SLIDES_FAILED,
  PROP_SLIDES_DAMAGED,
  PROP_DAMAGED_SLIDES,
  PROP_SLIDE_PATHS,
  PROP_CYCLES_COMPLETED,
  PROP_RANK_SLIDES_MIN,
  PROP_TCGA,
  PROP_SLIDES_OPENED,
  PROP_SLIDES_REJECTED,
  PROP_SLIDES_BLANK,
  PROP_ANNOTATIONS,
  PROP_PREPARE_AHEAD
};

/* Settings copied from the properties when the source starts, so that the
 * streaming thread reads them without the lock. */
typedef struct
{
  gchar *location;
  gchar *display;               /* location for messages: no credentials */
  gint rank;
  gint world_size;
  gboolean cycle;
  GstWsiSlideOrder order;
  guint64 seed;
  gint thumbnail_size;
  gdouble default_mpp;
  gboolean tcga;
  gchar *annotations;
  guint prepare_ahead;
} WsiSlideSrcSettings;

struct _GstWsiSlideSrc
{
  GstPushSrc parent;

  /* Protects the property fields and the counters. */
  GMutex lock;
  gchar *location;
  gint rank;
  gint world_size;
  gboolean cycle;
  GstWsiSlideOrder order;
  guint64 seed;
  gint thumbnail_size;
  gdouble default_mpp;
  gboolean tcga;
  gchar *annotations;           /* folder of annotation files, or NULL */
  gint prepare_ahead;           /* -1: the pool downstream */
  guint slides_total;
  guint slides_failed;
  guint slides_damaged;         /* opened, but damaged (WsiSlide.damaged) */
  GPtrArray *damaged_names;     /* their display names, in the order found */
  gchar **slide_paths;          /* the rank's slides as opened, from start */
  guint slides_opened;
  /* Slide index -> GINT_TO_POINTER (blank): slides tissuemask rejected
   * (WSI_SLIDE_REJECTED_EVENT), each counted once. */
  GHashTable *rejected;
  guint slides_blank;
  guint cycles_completed;
  guint rank_slides_min;
  gboolean started;
  gboolean http_held;           /* wsi_http_hold() from start to stop */
  /* Slides a reader downstream gave up (WSI_SLIDE_GIVEN_UP_EVENT), for the
   * streaming thread to skip from now on: GstStructure copies. */
  GPtrArray *given_up;

  /* Streaming state, set up in start() and used by the streaming thread. */
  WsiSlideSrcSettings run;
  GPtrArray *entries;           /* WsiSlideEntry of this rank, sorted */
  gchar **column_names;         /* the collection's, for every slide */
  guint collection_size;        /* slides before the rank split */
  guint smallest_rank_slides;   /* floor(collection_size / world_size) */
  /* Visits are planned ahead of the stream (the slides to prepare): the
   * plan's cycle and order; the stream's cycle is cycle_number. */
  guint *visit_order;           /* indices into entries for plan_cycle */
  guint position;               /* next position in visit_order */
  guint plan_cycle;
  WsiPrepQueue *prep;           /* slides being prepared, visit order */
  gpointer inline_prep;         /* SlidePrep of prepare-ahead=0, or NULL */
  GstBuffer *first_buffer;      /* made in start(), handed out by create() */
  guint cycle_number;
  guint failed_count;
  guint64 visits;               /* buffers pushed: GST_BUFFER_OFFSET */
  /* path -> GstStructure, per slide; in a one-pass stream the value is
   * dropped (NULL) after the visit: a slide seen once is not described
   * again, and its description (about 3 KiB, more with annotation
   * regions) is not held for the rest of the run */
  GHashTable *descriptions;
  gint flushing;                /* atomic: unlock() was called */
};

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (WSI_SLIDE_MEDIA_TYPE));

static void gst_wsi_slide_src_uri_handler_init (gpointer g_iface,
    gpointer iface_data);

#define gst_wsi_slide_src_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstWsiSlideSrc, gst_wsi_slide_src, GST_TYPE_PUSH_SRC,
    G_IMPLEMENT_INTERFACE (GST_TYPE_URI_HANDLER,
        gst_wsi_slide_src_uri_handler_init);
    GST_DEBUG_CATEGORY_INIT (gst_wsi_slide_src_debug, "wsislidesrc", 0,
        "whole-slide image collection source"));
GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (wsislidesrc, "wsislidesrc",
    GST_RANK_NONE, GST_TYPE_WSI_SLIDE_SRC, wsislide_element_init (plugin));

GType
gst_wsi_slide_order_get_type (void)
{
  static GType order_type = 0;
  static const GEnumValue values[] = {
    {GST_WSI_SLIDE_ORDER_SEQUENTIAL, "Sorted path order", "sequential"},
    {GST_WSI_SLIDE_ORDER_RANDOM, "Reshuffled every cycle", "random"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&order_type)) {
    GType type = g_enum_register_static ("GstWsiSlideOrder", values);
    g_once_init_leave (&order_type, type);
  }
  return order_type;
}

/* ---- Rank and visit order ----------------------------------------------- */

/* The property when set, else the environment variable, else @fallback. */
static gboolean
resolve_rank_setting (GstWsiSlideSrc * self, gint property,
    const gchar * env_name, gint minimum, gint fallback, gint * value)
{
  const gchar *env = g_getenv (env_name);
  gint64 parsed;
  GError *err = NULL;

  if (property >= 0) {
    *value = property;
    return TRUE;
  }
  if (env == NULL || env[0] == '\0') {
    *value = fallback;
    return TRUE;
  }
  if (!g_ascii_string_to_signed (env, 10, minimum, G_MAXINT, &parsed, &err)) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("The environment variable %s=\"%s\" is not a valid value.", env_name,
            env), ("%s", err->message));
    g_clear_error (&err);
    return FALSE;
  }
  *value = (gint) parsed;
  return TRUE;
}

/* Sequential: sorted order. Random: a Fisher-Yates shuffle drawn from
 * wsirng.h keyed by the seed, the rank and the cycle, so runs are
 * reproducible on every GLib version (GRand's sequence is not promised). */
static void
arrange_visit_order (GstWsiSlideSrc * self)
{
  guint n = self->entries->len, i;
  WsiRng rng;

  for (i = 0; i < n; i++)
    self->visit_order[i] = i;
  if (self->run.order != GST_WSI_SLIDE_ORDER_RANDOM || n < 2)
    return;

  /* Key 0x5348 ("SH") keeps this stream apart from the sampler's, which
   * is keyed by (seed, slide index, cycle). */
  wsi_rng_seed_keys (&rng, self->run.seed, self->run.rank,
      self->plan_cycle, 0x5348);
  for (i = n - 1; i > 0; i--) {
    guint j = (guint) wsi_rng_below (&rng, (guint64) i + 1);
    guint tmp = self->visit_order[i];

    self->visit_order[i] = self->visit_order[j];
    self->visit_order[j] = tmp;
  }
}

/* The plan (slides prepared ahead) starts its next pass. */
static void
plan_next_cycle (GstWsiSlideSrc * self)
{
  self->plan_cycle++;
  self->position = 0;
  arrange_visit_order (self);
}

/* The stream reaches a visit of cycle @cycle. */
static void
enter_cycle (GstWsiSlideSrc * self, guint cycle)
{
  if (cycle == self->cycle_number)
    return;
  self->cycle_number = cycle;
  g_mutex_lock (&self->lock);
  self->cycles_completed = self->cycle_number;
  g_mutex_unlock (&self->lock);
  GST_DEBUG_OBJECT (self, "starting cycle %u", self->cycle_number);
}

/* ---- Slide description ------------------------------------------------- */

/* Longest side @longest, aspect kept, never larger than level 0. */
static void
overview_size (gint64 width, gint64 height, gint longest, gint * ow, gint * oh)
{
  if (MAX (width, height) <= longest) {
    *ow = (gint) width;
    *oh = (gint) height;
  } else if (width >= height) {
    *ow = longest;
    *oh = (gint) CLAMP (llround ((gdouble) height * longest / width), 1,
        longest);
  } else {
    *oh = longest;
    *ow = (gint) CLAMP (llround ((gdouble) width * longest / height), 1,
        longest);
  }
}

/* The pyramid geometry, one GstValueArray entry per level (wsirecord.h):
 * typed values, so consumers read numbers, never parse text. */
static void
describe_levels (GstStructure * s, const WsiSlide * slide)
{
  guint n = (guint) slide->level_count;

  wsi_structure_set_double_array (s, "level-downsamples",
      slide->level_downsample, n);
  wsi_structure_set_int64_array (s, "level-widths", slide->level_width, n);
  wsi_structure_set_int64_array (s, "level-heights", slide->level_height, n);
  wsi_structure_set_int64_array (s, "level-tile-widths",
      slide->level_tile_width, n);
  wsi_structure_set_int64_array (s, "level-tile-heights",
      slide->level_tile_height, n);
}

/* What is true of the slide whichever visit it is: cached by path. */
static GstStructure *
describe_slide (GstWsiSlideSrc * self, const WsiSlide * slide)
{
  gdouble mpp_x = slide->mpp_x, mpp_y = slide->mpp_y;
  const gchar *mpp_source = slide->mpp_source;
  GstStructure *s;
  gint ow, oh;

  if (!(mpp_x > 0.0 && mpp_y > 0.0) && self->run.default_mpp > 0.0) {
    mpp_x = mpp_y = self->run.default_mpp;
    mpp_source = MPP_SOURCE_DEFAULT;
  }
  overview_size (slide->level_width[0], slide->level_height[0],
      self->run.thumbnail_size, &ow, &oh);
  s = gst_structure_new (WSI_SLIDE_META_NAME,
      "vendor", G_TYPE_STRING, slide->vendor ? slide->vendor : "",
      "width", G_TYPE_INT64, slide->level_width[0],
      "height", G_TYPE_INT64, slide->level_height[0],
      "level-count", G_TYPE_INT, slide->level_count,
      "backend", G_TYPE_STRING, slide->backend->name,
      "mpp-x", G_TYPE_DOUBLE, mpp_x,
      "mpp-y", G_TYPE_DOUBLE, mpp_y,
      "mpp-source", G_TYPE_STRING, mpp_source,
      "objective-power", G_TYPE_DOUBLE, slide->objective_power,
      "icc-profile-size", G_TYPE_UINT64, slide->icc_profile_size,
      "icc-profile-sha256", G_TYPE_STRING, slide->icc_profile_sha256 != NULL
      ? slide->icc_profile_sha256 : "",
      "overview-width", G_TYPE_INT, ow,
      "overview-height", G_TYPE_INT, oh, NULL);
  describe_levels (s, slide);
  GST_DEBUG_OBJECT (self, "%s: %s backend, vendor %s, %d levels",
      slide->path, slide->backend->name, slide->vendor, slide->level_count);
  return s;
}

/* ---- One slide visit ---------------------------------------------------- */

/* The identity of @entry's file for masks kept across runs (tissuemask's
 * mask-cache-dir): its size and mtime to the nanosecond, so a rewrite or a
 * touch makes a new key. NULL for a remote object, whose validator is only
 * known once it is opened: its mask is not looked up on disk. */
static gchar *
entry_identity (const WsiSlideEntry * entry)
{
  GStatBuf st;

  if (wsi_location_is_remote (entry->path) || g_stat (entry->path, &st) != 0)
    return NULL;
  return g_strdup_printf ("%" G_GUINT64_FORMAT ":%" G_GINT64_FORMAT ".%09ld",
      (guint64) st.st_size, (gint64) st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

/* TRUE when a downstream element (tissuemask) already holds the mask of
 * @entry (file @identity), so the overview need not be decoded again. */
static gboolean
downstream_has_mask (GstWsiSlideSrc * self, const WsiSlideEntry * entry,
    const gchar * identity)
{
  GstQuery *query = wsi_query_new_mask_cached (entry->display);
  gboolean cached = FALSE;

  wsi_query_set_mask_source (query, identity, self->run.thumbnail_size);
  if (gst_pad_peer_query (GST_BASE_SRC_PAD (self), query))
    wsi_query_parse_mask_cached (query, NULL, &cached, NULL);
  gst_query_unref (query);
  return cached;
}

static gboolean
fill_overview (GstWsiSlideSrc * self, GstBuffer * buffer, WsiSlide * slide,
    gint ow, gint oh, GError ** error)
{
  GstMapInfo map;
  gboolean ok;
  gint level;

  if (!gst_buffer_map (buffer, &map, GST_MAP_WRITE)) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "cannot map a %dx%d overview buffer", ow, oh);
    return FALSE;
  }
  level = wsi_overview_level (slide, ow, oh);
  GST_DEBUG_OBJECT (self, "overview %dx%d of %s from level %d (%"
      G_GINT64_FORMAT "x%" G_GINT64_FORMAT ")", ow, oh, slide->path, level,
      slide->level_width[level], slide->level_height[level]);
  /* Fails without an error when flushing starts: the caller sees the flag. */
  ok = wsi_overview_read (slide, ow, oh, &self->flushing, map.data, error);
  gst_buffer_unmap (buffer, &map);
  return ok;
}

/* ---- annotations -------------------------------------------------------- */

/* The manifest's "annotations" value for @entry, or NULL. */
static const gchar *
entry_annotation_column (GstWsiSlideSrc * self, const WsiSlideEntry * entry)
{
  guint i;

  for (i = 0; self->column_names && self->column_names[i]; i++)
    if (g_ascii_strcasecmp (self->column_names[i], "annotations") == 0)
      return entry->values ? entry->values[i] : NULL;
  return NULL;
}

/* Reads the slide's annotation file, once per slide, into the fields of
 * wsiannotation.h on its cached description. A file that cannot be used is
 * warned about (file and reason) and leaves the slide without regions, for
 * patchsampler to skip and count. */
static void
describe_annotations (GstWsiSlideSrc * self, const WsiSlideEntry * entry,
    GstStructure * description)
{
  gchar *file = wsi_annotations_find (entry->path, self->run.annotations,
      entry_annotation_column (self, entry));
  static const gchar *const none[] = { NULL };
  WsiAnnotations *annotations = NULL;
  gint64 width = 0, height = 0;
  GError *error = NULL;
  GBytes *bytes;

  gst_structure_set (description, WSI_ANNOTATION_FILE_FIELD, G_TYPE_STRING,
      file ? file : "", WSI_ANNOTATION_CLASSES_FIELD, G_TYPE_STRV, none,
      WSI_ANNOTATION_POLYGONS_FIELD, G_TYPE_UINT, 0,
      WSI_ANNOTATION_SKIPPED_FIELD, G_TYPE_UINT, 0, NULL);
  if (file == NULL)
    return;
  gst_structure_get_int64 (description, "width", &width);
  gst_structure_get_int64 (description, "height", &height);
  annotations = wsi_annotations_load (file, (gdouble) width,
      (gdouble) height, &error);
  if (annotations == NULL) {
    GST_ELEMENT_WARNING (self, STREAM, FORMAT,
        ("The annotation file of slide \"%s\" cannot be used, so the slide "
            "has no regions: %s", entry->display, error->message), (NULL));
    g_clear_error (&error);
    g_free (file);
    return;
  }
  if (annotations->n_skipped > 0)
    GST_ELEMENT_WARNING (self, STREAM, FORMAT,
        ("%s: %u of %u shapes are not usable regions and were dropped "
            "(first: %s).", file, annotations->n_skipped,
            annotations->n_skipped + annotations->n_polygons,
            annotations->first_problem), (NULL));
  g_ptr_array_add (annotations->classes, NULL);
  bytes = g_bytes_new (annotations->regions->data, annotations->regions->len);
  gst_structure_set (description, WSI_ANNOTATION_CLASSES_FIELD, G_TYPE_STRV,
      annotations->classes->pdata, WSI_ANNOTATION_REGIONS_FIELD, G_TYPE_BYTES,
      bytes, WSI_ANNOTATION_POLYGONS_FIELD, G_TYPE_UINT,
      annotations->n_polygons, WSI_ANNOTATION_SKIPPED_FIELD, G_TYPE_UINT,
      annotations->n_skipped, NULL);
  g_ptr_array_remove_index (annotations->classes,
      annotations->classes->len - 1);
  g_bytes_unref (bytes);
  wsi_annotations_free (annotations);
  g_free (file);
}

/* With an annotations folder: a file there named after no slide of the
 * collection is most likely a misspelt slide name. */
static void
warn_unmatched_annotations (GstWsiSlideSrc * self,
    const WsiCollection * collection)
{
  GHashTable *stems;
  GDir *dir;
  const gchar *name;
  guint i;

  if (self->run.annotations == NULL || *self->run.annotations == '\0')
    return;
  dir = g_dir_open (self->run.annotations, 0, NULL);
  if (dir == NULL) {
    GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND,
        ("The annotation folder \"%s\" cannot be read.",
            self->run.annotations), (NULL));
    return;
  }
  stems = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (i = 0; i < collection->entries->len; i++) {
    const WsiSlideEntry *entry = g_ptr_array_index (collection->entries, i);
    gchar *base = g_path_get_basename (entry->path);
    gchar *dot = strrchr (base, '.');

    if (dot != NULL && dot != base)
      *dot = '\0';
    g_hash_table_add (stems, base);
  }
  while ((name = g_dir_read_name (dir)) != NULL) {
    gchar *stem;

    if (!wsi_annotations_is_file_name (name))
      continue;
    stem = g_strndup (name, strrchr (name, '.') - name);
    if (!g_hash_table_contains (stems, stem))
      GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND,
          ("The annotation file \"%s\" in \"%s\" matches no slide of the "
              "collection (a slide named %s.* was expected); it is not "
              "used.", name, self->run.annotations, stem), (NULL));
    g_free (stem);
  }
  g_dir_close (dir);
  g_hash_table_unref (stems);
}

static void
attach_slide_meta (GstWsiSlideSrc * self, GstBuffer * buffer,
    const WsiSlideEntry * entry, const GstStructure * description,
    gboolean has_overview)
{
  GstStructure *meta = wsi_slide_meta_add (buffer);
  /* The exact bytes of the file name, losslessly (a file URI is ASCII); a
   * URL as shown (credentials stay in the read layer, see
   * wsi_location_remember). */
  gchar *uri = wsi_location_is_remote (entry->path) ?
      g_strdup (entry->display) : g_filename_to_uri (entry->path, NULL, NULL);

  gst_structure_foreach (description, wsi_structure_copy_field, meta);
  gst_structure_set (meta,
      "path", G_TYPE_STRING, entry->display,
      "uri", G_TYPE_STRING, uri,
      "index", G_TYPE_UINT, entry->index,
      "cycle", G_TYPE_UINT, self->cycle_number,
      "seed", G_TYPE_UINT64, self->run.seed,
      "label", G_TYPE_STRING, entry->label,
      "rank", G_TYPE_UINT, (guint) self->run.rank,
      "world-size", G_TYPE_UINT, (guint) self->run.world_size,
      "rank-slides", G_TYPE_UINT, self->entries->len,
      "rank-slides-min", G_TYPE_UINT, self->smallest_rank_slides,
      "has-overview", G_TYPE_BOOLEAN, has_overview,
      "has-mask", G_TYPE_BOOLEAN, FALSE,
      "tissue-fraction", G_TYPE_DOUBLE, -1.0,
      "tissue-rejected", G_TYPE_BOOLEAN, FALSE, NULL);
  wsi_meta_set_columns (meta, (const gchar * const *) self->column_names,
      (const gchar * const *) entry->values);
  g_free (uri);
}

/* @reason without the file name it starts with ("PATH: why"). */
static const gchar *
reason_without_path (const WsiSlideEntry * entry, const gchar * reason)
{
  if (g_str_has_prefix (reason, entry->path)
      && g_str_has_prefix (reason + strlen (entry->path), ": "))
    return reason + strlen (entry->path) + 2;
  return reason;
}

/* Once per slide (its first open): the direct reader declined a file of a
 * format it reads, and another backend reads it now, slower and painting
 * whatever it paints where the file is damaged. */
static void
warn_declined (GstWsiSlideSrc * self, const WsiSlideEntry * entry,
    const gchar * declined, const GstStructure * description)
{
  if (declined == NULL)
    return;
  GST_ELEMENT_WARNING (self, RESOURCE, READ,
      ("Slide %s is read through %s: %s.", entry->display,
          gst_structure_get_string (description, "backend"),
          reason_without_path (entry, declined)),
      ("backend=auto fell back; patchreader does the same for its patches"));
}

/* damaged-slides keeps this many names; slides-damaged counts them all. */
#define MAX_DAMAGED_NAMES 100

/* A NULL-terminated copy of the damaged slides' names (self->lock held). */
static gchar **
damaged_names_copy (GstWsiSlideSrc * self)
{
  gchar **names = g_new0 (gchar *, self->damaged_names->len + 1);
  guint i;

  for (i = 0; i < self->damaged_names->len; i++)
    names[i] = g_strdup (g_ptr_array_index (self->damaged_names, i));
  return names;
}

/* Once per slide (its first open): the file opened but is damaged
 * (WsiSlide.damaged: frames it declares and does not hold); the stream goes
 * on without the tiles it lacks. Counted in slides-damaged. */
static void
warn_damaged (GstWsiSlideSrc * self, const WsiSlideEntry * entry,
    const gchar * damaged)
{
  if (damaged == NULL)
    return;
  GST_ELEMENT_WARNING (self, RESOURCE, READ,
      ("Slide %s is damaged: %s.", entry->display,
          reason_without_path (entry, damaged)),
      ("the slide is read; patches over the missing tiles fail to read"));
  g_mutex_lock (&self->lock);
  self->slides_damaged++;
  if (self->damaged_names->len < MAX_DAMAGED_NAMES)
    g_ptr_array_add (self->damaged_names, g_strdup (entry->display));
  g_mutex_unlock (&self->lock);
}

/* ---- Slide preparation ahead of need ------------------------------------ */

/* One visit being prepared: what it needs is decided on the streaming
 * thread when it is planned, the work (open, description, overview) runs
 * on a worker of self->prep, and the streaming thread takes the results in
 * visit order (wsiprepqueue.h), so the stream does not depend on timing. */
typedef struct
{
  GstWsiSlideSrc *self;
  WsiSlideEntry *entry;         /* read-only on the worker */
  guint cycle;
  gboolean describe;            /* no description was known when planned */
  gboolean overview;            /* no mask was cached downstream then */
  gchar *identity;              /* entry_identity(), or NULL */
  gint ow, oh;                  /* overview size, when already described */
  /* results */
  GstStructure *description;
  gchar *declined;              /* auto fell back: why (wsislide.h) */
  gchar *damaged;               /* opened, but damaged: why (wsislide.h) */
  GstBuffer *buffer;            /* the overview, or NULL */
  GError *error;
  gboolean cancelled;           /* a flush stopped it: run it again */
  /* for the tracer (WsiSlideMeta prep-*-ns): worker time opening and
   * reading the overview, streaming-thread time waiting for it */
  guint64 open_ns, overview_ns, wait_ns;
} SlidePrep;

static void
slide_prep_free (SlidePrep * prep)
{
  g_clear_pointer (&prep->description, gst_structure_free);
  g_free (prep->declined);
  g_free (prep->damaged);
  g_free (prep->identity);
  gst_clear_buffer (&prep->buffer);
  g_clear_error (&prep->error);
  g_free (prep);
}

/* Runs on a worker (or inline): opens the slide when its description or
 * its overview is needed and closes it again (patchreader keeps its own
 * handles). Touches only @prep and settings fixed while streaming. */
static void
slide_prep_run (gpointer data, gpointer user_data)
{
  SlidePrep *prep = data;
  GstWsiSlideSrc *self = prep->self;
  gboolean describe = prep->describe && prep->description == NULL;
  WsiSlide *slide;

  gint64 start = g_get_monotonic_time (), opened;

  prep->cancelled = FALSE;
  if (!describe && !prep->overview)
    return;
  slide = wsi_slide_open (prep->entry->path, WSI_BACKEND_AUTO, &prep->error);
  opened = g_get_monotonic_time ();
  prep->open_ns += (guint64) (opened - start) * 1000;
  if (slide == NULL)
    return;
  if (describe) {
    prep->description = describe_slide (self, slide);
    prep->declined = g_strdup (slide->declined);
    prep->damaged = g_strdup (slide->damaged);
    gst_structure_get_int (prep->description, "overview-width", &prep->ow);
    gst_structure_get_int (prep->description, "overview-height", &prep->oh);
  }
  if (prep->overview) {
    prep->buffer = gst_buffer_new_allocate (NULL,
        (gsize) prep->ow * prep->oh * 3, NULL);
    if (!fill_overview (self, prep->buffer, slide, prep->ow, prep->oh,
            &prep->error)) {
      gst_clear_buffer (&prep->buffer);
      /* No error: the flushing flag stopped it. */
      prep->cancelled = prep->error == NULL;
    }
    prep->overview_ns += (guint64) (g_get_monotonic_time () - opened) * 1000;
  }
  wsi_slide_close (slide);
}

/* The next visit of the plan, skipping failed slides; FALSE when the
 * collection is done (no cycling) or every slide failed. */
static gboolean
plan_next_visit (GstWsiSlideSrc * self, WsiSlideEntry ** entry, guint * cycle)
{
  guint tries;

  for (tries = 0; tries <= self->entries->len; tries++) {
    if (self->position == self->entries->len) {
      if (!self->run.cycle)
        return FALSE;
      plan_next_cycle (self);
    }
    *entry = g_ptr_array_index (self->entries,
        self->visit_order[self->position++]);
    *cycle = self->plan_cycle;
    if (!(*entry)->failed)
      return TRUE;
  }
  return FALSE;
}

static SlidePrep *
slide_prep_new (GstWsiSlideSrc * self, WsiSlideEntry * entry, guint cycle)
{
  GstStructure *description =
      g_hash_table_lookup (self->descriptions, entry->path);
  SlidePrep *prep = g_new0 (SlidePrep, 1);

  prep->self = self;
  prep->entry = entry;
  prep->cycle = cycle;
  prep->describe = description == NULL;
  prep->identity = entry_identity (entry);
  prep->overview = !downstream_has_mask (self, entry, prep->identity);
  if (description != NULL) {
    gst_structure_get_int (description, "overview-width", &prep->ow);
    gst_structure_get_int (description, "overview-height", &prep->oh);
  }
  return prep;
}

/* Plans visits until #wsislidesrc:prepare-ahead of them are being prepared
 * (one, run inline by the caller, when it is 0). */
static void
plan_ahead (GstWsiSlideSrc * self)
{
  guint ahead = MAX (self->run.prepare_ahead, 1);
  WsiSlideEntry *entry;
  guint cycle;

  while (wsi_prep_queue_length (self->prep) < ahead
      && plan_next_visit (self, &entry, &cycle))
    wsi_prep_queue_push (self->prep, slide_prep_new (self, entry, cycle));
}

/* A value of self->descriptions: NULL once dropped (one-pass streams). */
static void
description_free (gpointer description)
{
  if (description != NULL)
    gst_structure_free (description);
}

/* The first visit of a slide: keep its description and say what it is. */
static GstStructure *
remember_description (GstWsiSlideSrc * self, SlidePrep * prep)
{
  WsiSlideEntry *entry = prep->entry;
  GstStructure *description = NULL;
  gboolean seen = g_hash_table_lookup_extended (self->descriptions,
      entry->path, NULL, (gpointer *) & description);

  if (description != NULL)
    return description;
  description = g_steal_pointer (&prep->description);
  if (!seen) {
    warn_declined (self, entry, prep->declined, description);
    warn_damaged (self, entry, prep->damaged);
  }
  describe_annotations (self, entry, description);
  g_hash_table_insert (self->descriptions, g_strdup (entry->path),
      description);
  if (!seen) {
    g_mutex_lock (&self->lock);
    self->slides_opened++;
    g_mutex_unlock (&self->lock);
  }
  return description;
}

/* The buffer of a prepared visit, or NULL with @error set. A mask that was
 * cached downstream when the visit was planned may have left that cache
 * since: the overview is then read now. */
static GstBuffer *
make_slide_buffer (GstWsiSlideSrc * self, SlidePrep * prep, GError ** error)
{
  GstStructure *description;
  GstBuffer *buffer;
  gboolean has_overview;

  if (prep->error == NULL && prep->buffer == NULL
      && !downstream_has_mask (self, prep->entry, prep->identity)) {
    prep->overview = TRUE;
    slide_prep_run (prep, NULL);
  }
  if (prep->error != NULL) {
    g_propagate_error (error, g_steal_pointer (&prep->error));
    return NULL;
  }
  if (prep->cancelled)
    return NULL;                /* flushing: the caller sees the flag */

  description = remember_description (self, prep);
  has_overview = prep->buffer != NULL;
  if (has_overview)
    buffer = g_steal_pointer (&prep->buffer);
  else {
    GST_DEBUG_OBJECT (self, "mask of %s cached downstream: no overview",
        prep->entry->display);
    buffer = gst_buffer_new ();
  }
  attach_slide_meta (self, buffer, prep->entry, description, has_overview);
  /* the meta holds a copy; a one-pass stream will not visit it again */
  if (!self->run.cycle)
    g_hash_table_insert (self->descriptions, g_strdup (prep->entry->path),
        NULL);
  /* Not part of the stream's content: timings for wsistats. */
  gst_structure_set (wsi_slide_meta_get (buffer),
      "prep-open-ns", G_TYPE_UINT64, prep->open_ns,
      "prep-overview-ns", G_TYPE_UINT64, prep->overview_ns,
      "prep-wait-ns", G_TYPE_UINT64, prep->wait_ns, NULL);
  /* What tissuemask keys the masks it keeps across runs on. */
  gst_structure_set (wsi_slide_meta_get (buffer),
      "source-identity", G_TYPE_STRING, prep->identity ? prep->identity : "",
      "thumbnail-size", G_TYPE_INT, self->run.thumbnail_size, NULL);
  return buffer;
}

/* The next prepared visit (it stays first in the queue until popped), or
 * NULL at the end of the plan. A visit a flush interrupted is prepared
 * again here once the flush is over. */
static SlidePrep *
next_prepared (GstWsiSlideSrc * self)
{
  WsiSlideEntry *entry;
  SlidePrep *prep;
  guint cycle;

  if (self->prep != NULL) {
    gint64 start;

    plan_ahead (self);
    start = g_get_monotonic_time ();
    prep = wsi_prep_queue_wait_head (self->prep);
    if (prep != NULL)
      prep->wait_ns += (guint64) (g_get_monotonic_time () - start) * 1000;
  } else {
    /* prepare-ahead=0: each visit on this thread, when it is needed. */
    if (self->inline_prep == NULL && plan_next_visit (self, &entry, &cycle)) {
      self->inline_prep = slide_prep_new (self, entry, cycle);
      slide_prep_run (self->inline_prep, NULL);
    }
    prep = self->inline_prep;
  }
  if (prep != NULL && prep->cancelled
      && !g_atomic_int_get (&self->flushing))
    slide_prep_run (prep, NULL);
  return prep;
}

/* Takes the visit next_prepared() returned out of the queue. */
static SlidePrep *
pop_prepared (GstWsiSlideSrc * self)
{
  if (self->prep == NULL)
    return g_steal_pointer (&self->inline_prep);
  return wsi_prep_queue_pop (self->prep);
}

static void
report_unreadable (GstWsiSlideSrc * self, WsiSlideEntry * entry,
    const GError * error)
{
  entry->failed = TRUE;
  g_free (entry->failure);
  entry->failure = g_strdup (error ? error->message : "unknown error");
  self->failed_count++;
  g_mutex_lock (&self->lock);
  self->slides_failed++;
  g_mutex_unlock (&self->lock);

  GST_ELEMENT_WARNING (self, RESOURCE, READ,
      ("Skipping slide %s: %s", entry->display,
          error ? reason_without_path (entry, error->message) :
          "unknown error"),
      ("%u of %u slides of this rank failed so far", self->failed_count,
          self->entries->len));
}

/* "a.svs (reason); b.svs (reason)" for the first few failed slides, so
 * the error that ends the stream names the files and why, whichever
 * element notices first that nothing can progress. */
static gchar *
describe_failures (GstWsiSlideSrc * self)
{
  GString *why = g_string_new (NULL);
  guint i, shown = 0;

  for (i = 0; i < self->entries->len; i++) {
    WsiSlideEntry *entry = g_ptr_array_index (self->entries, i);

    if (!entry->failed)
      continue;
    if (shown == 5) {
      g_string_append_printf (why, "; and %u more", self->failed_count - 5);
      break;
    }
    g_string_append_printf (why, "%s%s (%s)", shown ? "; " : "",
        entry->display, GST_STR_NULL (entry->failure));
    shown++;
  }
  return g_string_free (why, FALSE);
}

/* Slides that opened here but that a reader downstream gave up (damaged
 * tiles, truncated while the stream ran): skipped from now on and counted
 * as failed, like slides that do not open. */
static void
skip_given_up (GstWsiSlideSrc * self)
{
  GPtrArray *reports;
  guint i, j;

  g_mutex_lock (&self->lock);
  reports = self->given_up;
  self->given_up = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_event_unref);
  g_mutex_unlock (&self->lock);

  for (i = 0; i < reports->len; i++) {
    const gchar *reason = NULL;
    guint index = G_MAXUINT;
    GError *error;

    wsi_event_parse_slide_given_up (g_ptr_array_index (reports, i), &index,
        NULL, &reason);
    for (j = 0; j < self->entries->len; j++) {
      WsiSlideEntry *entry = g_ptr_array_index (self->entries, j);

      if (entry->index != index || entry->failed)
        continue;
      error = g_error_new (WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
          "the patch reader gave it up: %s", GST_STR_NULL (reason));
      report_unreadable (self, entry, error);
      g_error_free (error);
    }
  }
  g_ptr_array_unref (reports);
}

/* Once per slide: tcga=true but the name holds no barcode. */
static void
warn_tcga_unparsed (GstWsiSlideSrc * self, WsiSlideEntry * entry)
{
  if (!entry->tcga_unparsed || entry->tcga_warned)
    return;
  entry->tcga_warned = TRUE;
  GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
      ("The file name of slide %s holds no TCGA slide barcode "
          "(TCGA-SS-PPPP-NNV-NN-DX1 and the like): its TCGA columns are "
          "empty.", entry->display), (NULL));
}

/* Counts a slide tissuemask rejected, once per slide. */
static void
count_rejected (GstWsiSlideSrc * self, GstEvent * event)
{
  guint index = G_MAXUINT;
  gboolean blank = FALSE;
  gpointer key;

  if (!wsi_event_parse_slide_rejected (event, &index, NULL, NULL, &blank))
    return;
  key = GUINT_TO_POINTER (index + 1);
  g_mutex_lock (&self->lock);
  if (!g_hash_table_contains (self->rejected, key)) {
    g_hash_table_add (self->rejected, key);
    self->slides_blank += blank;
  }
  g_mutex_unlock (&self->lock);
}

static gboolean
gst_wsi_slide_src_event (GstBaseSrc * bsrc, GstEvent * event)
{
  GstWsiSlideSrc *self = GST_WSI_SLIDE_SRC (bsrc);

  if (wsi_event_parse_slide_rejected (event, NULL, NULL, NULL, NULL)) {
    count_rejected (self, event);
    return TRUE;
  }

  if (wsi_event_parse_slide_given_up (event, NULL, NULL, NULL)) {
    g_mutex_lock (&self->lock);
    g_ptr_array_add (self->given_up, gst_event_ref (event));
    g_mutex_unlock (&self->lock);
    return TRUE;
  }
  return GST_BASE_SRC_CLASS (parent_class)->event (bsrc, event);
}

/* The next visit's buffer: skips slides that fail (a warning each) and
 * ends with an error naming them when none is left. */
static GstFlowReturn
next_slide_buffer (GstWsiSlideSrc * self, GstBuffer ** outbuf)
{
  for (;;) {
    SlidePrep *prep;
    GstBuffer *buffer;
    GError *err = NULL;

    if (g_atomic_int_get (&self->flushing))
      return GST_FLOW_FLUSHING;
    skip_given_up (self);
    if (self->failed_count == self->entries->len) {
      gchar *why = describe_failures (self);

      GST_ELEMENT_ERROR (self, RESOURCE, READ,
          ("None of the %u slides of rank %d in %s could be read: %s.",
              self->entries->len, self->run.rank, self->run.display, why),
          ("every slide was skipped"));
      g_free (why);
      return GST_FLOW_ERROR;
    }

    prep = next_prepared (self);
    if (prep == NULL)
      return GST_FLOW_EOS;
    if (prep->cancelled)
      return GST_FLOW_FLUSHING; /* prepared again after the flush */
    enter_cycle (self, prep->cycle);
    if (prep->entry->failed) {
      /* failed on an earlier visit planned after this one was */
      slide_prep_free (pop_prepared (self));
      continue;
    }
    warn_tcga_unparsed (self, prep->entry);

    buffer = make_slide_buffer (self, prep, &err);
    if (buffer == NULL && err == NULL)
      return GST_FLOW_FLUSHING; /* interrupted: visited after the flush */
    pop_prepared (self);
    if (buffer != NULL) {
      slide_prep_free (prep);
      GST_BUFFER_OFFSET (buffer) = self->visits;
      GST_BUFFER_OFFSET_END (buffer) = self->visits + 1;
      self->visits++;
      *outbuf = buffer;
      return GST_FLOW_OK;
    }
    report_unreadable (self, prep->entry, err);
    slide_prep_free (prep);
    g_clear_error (&err);
  }
}

static GstFlowReturn
gst_wsi_slide_src_create (GstPushSrc * psrc, GstBuffer ** outbuf)
{
  GstWsiSlideSrc *self = GST_WSI_SLIDE_SRC (psrc);

  if (self->first_buffer != NULL) {
    *outbuf = g_steal_pointer (&self->first_buffer);
    return GST_FLOW_OK;
  }
  return next_slide_buffer (self, outbuf);
}

/* ---- GstBaseSrc --------------------------------------------------------- */

static void
clear_streaming_state (GstWsiSlideSrc * self)
{
  /* Overviews being read stop at once; no worker runs after this. */
  g_atomic_int_set (&self->flushing, 1);
  g_clear_pointer (&self->prep, wsi_prep_queue_free);
  g_clear_pointer (&self->inline_prep, slide_prep_free);
  g_clear_pointer (&self->entries, g_ptr_array_unref);
  g_clear_pointer (&self->column_names, g_strfreev);
  g_clear_pointer (&self->visit_order, g_free);
  g_clear_pointer (&self->descriptions, g_hash_table_unref);
  g_clear_pointer (&self->run.location, g_free);
  g_clear_pointer (&self->run.annotations, g_free);
  gst_clear_buffer (&self->first_buffer);
  g_clear_pointer (&self->run.display, g_free);
  g_mutex_lock (&self->lock);
  g_ptr_array_set_size (self->given_up, 0);
  g_mutex_unlock (&self->lock);
}

/* The first visit is made here, in the state change, as filesrc opens its
 * file in start(): a set of which no slide can be read then fails the
 * change to PAUSED (the error names every slide and why) instead of
 * failing later in the streaming thread, where an error during preroll can
 * leave an application such as gst-launch-1.0 (1.22) waiting for ever: its
 * bus sync handler quits a main loop that may not be running yet. The
 * buffer is the stream's first; create() hands it out. */
static gboolean
open_first_slide (GstWsiSlideSrc * self)
{
  GstFlowReturn ret;

  /* no streaming thread yet: an unlock() of a previous run is over */
  g_atomic_int_set (&self->flushing, 0);
  ret = next_slide_buffer (self, &self->first_buffer);
  if (ret == GST_FLOW_OK || ret == GST_FLOW_EOS)
    return TRUE;
  clear_streaming_state (self);
  g_mutex_lock (&self->lock);
  self->started = FALSE;
  g_mutex_unlock (&self->lock);
  return FALSE;
}

/* prepare-ahead=-1: the slides patchinterleave's pool holds (its
 * pool-size), else FALLBACK_PREPARE_AHEAD. */
static guint
downstream_pool_size (GstWsiSlideSrc * self)
{
  GstQuery *query = wsi_query_new_pool_size ();
  guint pool_size = 0;

  if (gst_pad_peer_query (GST_BASE_SRC_PAD (self), query))
    wsi_query_parse_pool_size (query, &pool_size);
  gst_query_unref (query);
  GST_DEBUG_OBJECT (self, "pool downstream: %u slides", pool_size);
  if (pool_size == 0)
    return FALLBACK_PREPARE_AHEAD;
  return MIN (pool_size, MAX_PREPARE_AHEAD);
}

/* Why this rank got no slide, in the user's terms: a folder or list with
 * none (naming the extensions searched), or more ranks than slides. */
static void
post_no_slides_error (GstWsiSlideSrc * self)
{
  /* shown without credentials (and as UTF-8) */
  const gchar *location = self->run.display;

  if (self->collection_size > 0) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("Rank %d has no slides: %s holds %u slides for %d ranks.",
            self->run.rank, location, self->collection_size,
            self->run.world_size),
        ("give at most %u ranks, or more slides", self->collection_size));
  } else if (g_file_test (self->run.location, G_FILE_TEST_IS_DIR)) {
    gchar *known = wsi_slide_known_extensions_text ();

    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No slides in %s: no file in it or its subfolders has an extension "
            "of a format this build reads (%s).", location, known),
        ("give a folder of slides, a slide, or a list file"));
    g_free (known);
  } else {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No slides in %s: the list names none.", location),
        ("one slide path per line; empty lines and # comments are ignored"));
  }
}

static gboolean
gst_wsi_slide_src_start_inner (GstBaseSrc * bsrc)
{
  GstWsiSlideSrc *self = GST_WSI_SLIDE_SRC (bsrc);
  WsiCollection *collection;
  gint rank_prop, world_size_prop, prepare_ahead;
  GError *err = NULL;

  if (!wsi_refusal_check (GST_ELEMENT (self), wsi_refusal_of (self)))
    return FALSE;

  g_mutex_lock (&self->lock);
  rank_prop = self->rank;
  world_size_prop = self->world_size;
  g_free (self->run.location);
  self->run.location = g_strdup (self->location);
  g_free (self->run.annotations);
  self->run.annotations = g_strdup (self->annotations);
  g_free (self->run.display);
  self->run.display = self->location ?
      wsi_location_display (self->location) : NULL;
  self->run.cycle = self->cycle;
  self->run.order = self->order;
  self->run.seed = self->seed;
  self->run.thumbnail_size = self->thumbnail_size;
  self->run.default_mpp = self->default_mpp;
  self->run.tcga = self->tcga;
  prepare_ahead = self->prepare_ahead;
  g_mutex_unlock (&self->lock);
  self->run.prepare_ahead = prepare_ahead >= 0 ? (guint) prepare_ahead :
      downstream_pool_size (self);

  if (self->run.location == NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No slide location was set."),
        ("set the location property to a slide, a directory or a list file"));
    return FALSE;
  }
  if (!resolve_rank_setting (self, rank_prop, "RANK", 0, 0, &self->run.rank)
      || !resolve_rank_setting (self, world_size_prop, "WORLD_SIZE", 1, 1,
          &self->run.world_size))
    return FALSE;
  if (self->run.rank >= self->run.world_size) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Rank %d does not exist in a world of %d ranks.", self->run.rank,
            self->run.world_size),
        ("rank must be between 0 and world-size - 1"));
    return FALSE;
  }

  collection = wsi_collection_load (self->run.location, self->run.tcga, &err);
  if (collection == NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
        ("Could not read the slide collection %s: %s", self->run.display,
            err->message), (NULL));
    g_clear_error (&err);
    return FALSE;
  }
  for (guint i = 0; i < collection->warnings->len; i++)
    GST_ELEMENT_WARNING (self, RESOURCE, READ, ("%s.",
            (const gchar *) g_ptr_array_index (collection->warnings, i)),
        ("found while listing %s", self->run.display));
  self->collection_size = collection->entries->len;
  /* The round-robin split gives every rank either floor(N / W) or one more
   * slide: the smallest share follows from N and W alone, so every rank
   * computes the same quota without talking to the others. */
  self->smallest_rank_slides = self->collection_size / self->run.world_size;
  /* Before the rank split takes the entries: the whole collection. */
  warn_unmatched_annotations (self, collection);
  self->entries = wsi_collection_take_rank (collection, self->run.rank,
      self->run.world_size);
  self->column_names = g_strdupv (collection->column_names);
  wsi_collection_free (collection);

  if (self->entries->len == 0) {
    post_no_slides_error (self);
    clear_streaming_state (self);
    return FALSE;
  }

  self->visit_order = g_new (guint, self->entries->len);
  self->position = 0;
  self->plan_cycle = 0;
  self->cycle_number = 0;
  self->failed_count = 0;
  self->visits = 0;
  self->descriptions = g_hash_table_new_full (g_str_hash, g_str_equal,
      g_free, description_free);
  arrange_visit_order (self);
  if (self->run.prepare_ahead > 0)
    self->prep = wsi_prep_queue_new (wsi_ordered_pool_auto_threads
        (self->run.prepare_ahead), slide_prep_run,
        (GDestroyNotify) slide_prep_free, self);

  g_mutex_lock (&self->lock);
  g_strfreev (self->slide_paths);
  self->slide_paths = g_new0 (gchar *, self->entries->len + 1);
  for (guint i = 0; i < self->entries->len; i++)
    self->slide_paths[i] = g_strdup (((WsiSlideEntry *)
            g_ptr_array_index (self->entries, i))->path);
  self->slides_total = self->entries->len;
  self->slides_failed = 0;
  self->slides_damaged = 0;
  g_ptr_array_set_size (self->damaged_names, 0);
  self->slides_opened = 0;
  self->slides_blank = 0;
  g_hash_table_remove_all (self->rejected);
  self->cycles_completed = 0;
  self->rank_slides_min = self->smallest_rank_slides;
  self->started = TRUE;
  g_mutex_unlock (&self->lock);

  GST_INFO_OBJECT (self, "rank %d of %d: %u of %u slides", self->run.rank,
      self->run.world_size, self->entries->len, self->collection_size);
  return open_first_slide (self);
}

/* Remote connections stay open from start (listing, first slide) to
 * stop, not closed and opened again between slides (wsihttpsource.h). */
static gboolean
gst_wsi_slide_src_start (GstBaseSrc * bsrc)
{
  GstWsiSlideSrc *self = GST_WSI_SLIDE_SRC (bsrc);
  gboolean ok;

#ifdef WSI_HAVE_CURL
  if (!self->http_held) {
    wsi_http_hold ();
    self->http_held = TRUE;
  }
#endif
  ok = gst_wsi_slide_src_start_inner (bsrc);
#ifdef WSI_HAVE_CURL
  /* basesrc calls no stop() after a failed start() */
  if (!ok && self->http_held) {
    self->http_held = FALSE;
    wsi_http_unhold ();
  }
#endif
  return ok;
}

static gboolean
gst_wsi_slide_src_stop (GstBaseSrc * bsrc)
{
  GstWsiSlideSrc *self = GST_WSI_SLIDE_SRC (bsrc);

  g_mutex_lock (&self->lock);
  self->started = FALSE;
  g_mutex_unlock (&self->lock);
  clear_streaming_state (self);
#ifdef WSI_HAVE_CURL
  if (self->http_held) {
    self->http_held = FALSE;
    wsi_http_unhold ();
  }
#endif
  return TRUE;
}

static gboolean
gst_wsi_slide_src_unlock (GstBaseSrc * bsrc)
{
  GstWsiSlideSrc *self = GST_WSI_SLIDE_SRC (bsrc);

  g_atomic_int_set (&self->flushing, 1);
  return TRUE;
}

static gboolean
gst_wsi_slide_src_unlock_stop (GstBaseSrc * bsrc)
{
  GstWsiSlideSrc *self = GST_WSI_SLIDE_SRC (bsrc);

  g_atomic_int_set (&self->flushing, 0);
  return TRUE;
}

static gboolean
gst_wsi_slide_src_is_seekable (GstBaseSrc * bsrc)
{
  return FALSE;
}

/* DURATION in buffers: the rank's slides when not cycling, unknown (-1)
 * when cycling forever. */
static gboolean
gst_wsi_slide_src_query (GstBaseSrc * bsrc, GstQuery * query)
{
  GstWsiSlideSrc *self = GST_WSI_SLIDE_SRC (bsrc);
  GstFormat format;
  gboolean ret = FALSE;

  if (GST_QUERY_TYPE (query) != GST_QUERY_DURATION)
    return GST_BASE_SRC_CLASS (parent_class)->query (bsrc, query);

  gst_query_parse_duration (query, &format, NULL);
  if (format != GST_FORMAT_BUFFERS)
    return GST_BASE_SRC_CLASS (parent_class)->query (bsrc, query);

  g_mutex_lock (&self->lock);
  if (self->started) {
    gst_query_set_duration (query, format,
        self->run.cycle ? -1 : (gint64) self->slides_total);
    ret = TRUE;
  }
  g_mutex_unlock (&self->lock);
  return ret;
}

/* ---- GObject ------------------------------------------------------------ */

static void
gst_wsi_slide_src_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstWsiSlideSrc *self = GST_WSI_SLIDE_SRC (object);

  g_mutex_lock (&self->lock);
  switch (prop_id) {
    case PROP_LOCATION:
      g_free (self->location);
      self->location = g_value_dup_string (value);
      break;
    case PROP_RANK:
      self->rank = g_value_get_int (value);
      break;
    case PROP_WORLD_SIZE:
      if (g_value_get_int (value) == 0) {
        /* refused: start() refuses to start (wsirefusal.h) */
        GST_OBJECT_LOCK (self);
        wsi_refusal_record (wsi_refusal_of (self), "world-size", "0",
            "-1 (from the environment) or a number of ranks >= 1");
        GST_OBJECT_UNLOCK (self);
        if (GST_STATE (self) > GST_STATE_READY)
          g_warning ("wsislidesrc: world-size 0 is not valid; use -1 (from "
              "the environment) or a number of ranks >= 1. Keeping %d.",
              self->world_size);
      } else {
        self->world_size = g_value_get_int (value);
        GST_OBJECT_LOCK (self);
        wsi_refusal_forget (wsi_refusal_of (self), "world-size");
        GST_OBJECT_UNLOCK (self);
      }
      break;
    case PROP_CYCLE:
      self->cycle = g_value_get_boolean (value);
      break;
    case PROP_SLIDE_ORDER:
      self->order = g_value_get_enum (value);
      break;
    case PROP_SEED:
      self->seed = g_value_get_uint64 (value);
      break;
    case PROP_PREPARE_AHEAD:
      self->prepare_ahead = g_value_get_int (value);
      break;
    case PROP_THUMBNAIL_SIZE:
      self->thumbnail_size = g_value_get_int (value);
      break;
    case PROP_DEFAULT_MPP:
      self->default_mpp = g_value_get_double (value);
      break;
    case PROP_TCGA:
      self->tcga = g_value_get_boolean (value);
      break;
    case PROP_ANNOTATIONS:
      g_free (self->annotations);
      self->annotations = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  g_mutex_unlock (&self->lock);
}

static void
gst_wsi_slide_src_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstWsiSlideSrc *self = GST_WSI_SLIDE_SRC (object);

  g_mutex_lock (&self->lock);
  switch (prop_id) {
    case PROP_LOCATION:
      g_value_set_string (value, self->location);
      break;
    case PROP_RANK:
      g_value_set_int (value, self->rank);
      break;
    case PROP_WORLD_SIZE:
      g_value_set_int (value, self->world_size);
      break;
    case PROP_CYCLE:
      g_value_set_boolean (value, self->cycle);
      break;
    case PROP_SLIDE_ORDER:
      g_value_set_enum (value, self->order);
      break;
    case PROP_SEED:
      g_value_set_uint64 (value, self->seed);
      break;
    case PROP_PREPARE_AHEAD:
      g_value_set_int (value, self->prepare_ahead);
      break;
    case PROP_THUMBNAIL_SIZE:
      g_value_set_int (value, self->thumbnail_size);
      break;
    case PROP_DEFAULT_MPP:
      g_value_set_double (value, self->default_mpp);
      break;
    case PROP_SLIDES_TOTAL:
      g_value_set_uint (value, self->slides_total);
      break;
    case PROP_SLIDES_FAILED:
      g_value_set_uint (value, self->slides_failed);
      break;
    case PROP_SLIDES_DAMAGED:
      g_value_set_uint (value, self->slides_damaged);
      break;
    case PROP_DAMAGED_SLIDES:
      g_value_take_boxed (value, damaged_names_copy (self));
      break;
    case PROP_SLIDE_PATHS:
      g_value_set_boxed (value, self->slide_paths);
      break;
    case PROP_CYCLES_COMPLETED:
      g_value_set_uint (value, self->cycles_completed);
      break;
    case PROP_RANK_SLIDES_MIN:
      g_value_set_uint (value, self->rank_slides_min);
      break;
    case PROP_TCGA:
      g_value_set_boolean (value, self->tcga);
      break;
    case PROP_SLIDES_OPENED:
      g_value_set_uint (value, self->slides_opened);
      break;
    case PROP_SLIDES_REJECTED:
      g_value_set_uint (value, g_hash_table_size (self->rejected));
      break;
    case PROP_ANNOTATIONS:
      g_value_set_string (value, self->annotations);
      break;
    case PROP_SLIDES_BLANK:
      g_value_set_uint (value, self->slides_blank);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  g_mutex_unlock (&self->lock);
}

static void
gst_wsi_slide_src_finalize (GObject * object)
{
  GstWsiSlideSrc *self = GST_WSI_SLIDE_SRC (object);

  clear_streaming_state (self);
  g_free (self->location);
  g_free (self->annotations);
  g_ptr_array_unref (self->given_up);
  g_hash_table_unref (self->rejected);
  g_ptr_array_unref (self->damaged_names);
  g_strfreev (self->slide_paths);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_wsi_slide_src_install_properties (GObjectClass * gobject_class)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  g_object_class_install_property (gobject_class, PROP_LOCATION,
      g_param_spec_string ("location", "Location",
          "A slide file, a directory searched recursively for slide files, "
          "a CSV or TSV manifest (.csv/.tsv, or a first line starting with "
          "a 'path' field: header row, a path column, any other columns "
          "carried with every patch), or a text file listing one slide path "
          "per line (optional TAB and label, '#' comments). Relative paths "
          "are relative to the list's folder. A slide, list or manifest may "
          "also be an http://, https://, s3:// or gs:// URL, lists may hold "
          "URLs, and s3://BUCKET/PREFIX/ or gs://BUCKET/PREFIX/ is listed "
          "like a folder "
          "(read by the direct TIFF and DICOM backends; other formats need a local "
          "file). Default: none",
          DEFAULT_LOCATION, rw));
  g_object_class_install_property (gobject_class, PROP_TCGA,
      g_param_spec_boolean ("tcga", "TCGA columns",
          "Parse TCGA slide barcodes from the file names into the columns "
          "project (from a parent folder such as TCGA-BRCA), barcode, "
          "patient, sample, sample_type, vial, portion, tissue_source_site "
          "and slide_type; a name without a barcode is warned about once "
          "and gets empty values. Default: false", DEFAULT_TCGA, rw));
  g_object_class_install_property (gobject_class, PROP_RANK,
      wsi_param_spec_int ("rank", "Rank",
          "This process's rank: it reads slides rank, rank + world-size, ... "
          "of the sorted collection. -1 = the RANK environment variable, "
          "else 0. Range: -1 to world-size - 1. Default: -1",
          -1, G_MAXINT, DEFAULT_RANK, rw));
  g_object_class_install_property (gobject_class, PROP_WORLD_SIZE,
      wsi_param_spec_int ("world-size", "World size",
          "Number of ranks sharing the collection. -1 = the WORLD_SIZE "
          "environment variable, else 1. Range: -1 or 1 to 2147483647. "
          "Default: -1", -1, G_MAXINT, DEFAULT_WORLD_SIZE, rw));
  g_object_class_install_property (gobject_class, PROP_CYCLE,
      g_param_spec_boolean ("cycle", "Cycle",
          "Start over after the last slide instead of ending the stream. "
          "Default: false", DEFAULT_CYCLE, rw));
  g_object_class_install_property (gobject_class, PROP_SLIDE_ORDER,
      g_param_spec_enum ("slide-order", "Slide order",
          "Order of the rank's slides: sorted by path, or reshuffled every "
          "cycle (never across ranks). Default: sequential",
          GST_TYPE_WSI_SLIDE_ORDER, DEFAULT_SLIDE_ORDER, rw));
  g_object_class_install_property (gobject_class, PROP_SEED,
      wsi_param_spec_uint64 ("seed", "Seed",
          "Seed of the random slide order (mixed with rank and cycle); "
          "copied into each slide's meta. Range: 0 to 2^64-1. Default: 0",
          0, G_MAXUINT64, DEFAULT_SEED, rw));
  g_object_class_install_property (gobject_class, PROP_PREPARE_AHEAD,
      wsi_param_spec_int ("prepare-ahead", "Slides prepared ahead",
          "Slide visits prepared ahead of the stream on worker threads (one "
          "per core, at most this many): the slide opened, described and "
          "its overview read while earlier slides stream, and handed out in "
          "visit order, so the stream is the same for every value. Each "
          "costs one overview of memory (thumbnail-size squared x 3 bytes "
          "at most). -1 = as many as patchinterleave's pool-size downstream "
          "(a new slide ready whenever the pool replaces one; 8 when there "
          "is none); 0 = prepare each slide on the streaming thread when it "
          "is needed. Range: -1 to 256 slides. Default: -1",
          -1, MAX_PREPARE_AHEAD, DEFAULT_PREPARE_AHEAD, rw));
  g_object_class_install_property (gobject_class, PROP_THUMBNAIL_SIZE,
      wsi_param_spec_int ("thumbnail-size", "Thumbnail size",
          "Longest side of the overview in pixels (smaller slides keep "
          "their level-0 size). Range: 64 to 8192. Default: 1024",
          MIN_THUMBNAIL_SIZE, MAX_THUMBNAIL_SIZE, DEFAULT_THUMBNAIL_SIZE, rw));
  g_object_class_install_property (gobject_class, PROP_DEFAULT_MPP,
      wsi_param_spec_double ("default-mpp", "Default mpp",
          "Microns per level-0 pixel for slides that state none (neither "
          "scanner metadata nor TIFF resolution); 0 = leave unknown. "
          "Range: 0 to 1000. Default: 0", 0.0, MAX_DEFAULT_MPP,
          DEFAULT_DEFAULT_MPP, rw));
  g_object_class_install_property (gobject_class, PROP_ANNOTATIONS,
      g_param_spec_string ("annotations", "Annotation folder",
          "Folder of annotation files (QuPath GeoJSON or ASAP XML, level-0 "
          "pixel coordinates) named after the slides: SLIDE.geojson, "
          "SLIDE.json or SLIDE.xml for SLIDE.svs. Default NULL = look next "
          "to each slide. A manifest column \"annotations\" names a slide's "
          "file instead. The regions travel in the slide meta for "
          "patchsampler's annotation-mode", NULL, rw));
  g_object_class_install_property (gobject_class, PROP_SLIDES_TOTAL,
      wsi_param_spec_uint ("slides-total", "Slides total",
          "Slides assigned to this rank (read-only, known once started)",
          0, G_MAXUINT, 0, ro));
  g_object_class_install_property (gobject_class, PROP_SLIDES_FAILED,
      wsi_param_spec_uint ("slides-failed", "Slides failed",
          "Slides skipped because they could not be read (read-only)",
          0, G_MAXUINT, 0, ro));
  g_object_class_install_property (gobject_class, PROP_SLIDES_DAMAGED,
      wsi_param_spec_uint ("slides-damaged", "Slides damaged",
          "Distinct slides that opened although a file declares frames it "
          "does not hold (truncated, or a TILED_FULL NumberOfFrames short of "
          "its grid); warned about once each (read-only)",
          0, G_MAXUINT, 0, ro));
  g_object_class_install_property (gobject_class, PROP_DAMAGED_SLIDES,
      g_param_spec_boxed ("damaged-slides", "Damaged slides",
          "The slides counted in slides-damaged, named as in the warnings, "
          "in the order found (the first 100; read-only)", G_TYPE_STRV, ro));
  g_object_class_install_property (gobject_class, PROP_SLIDE_PATHS,
      g_param_spec_boxed ("slide-paths", "Slide paths",
          "The rank's slides as they are opened (paths or URLs: a folder, "
          "list, manifest or s3:// / gs:// prefix resolved), in sorted order "
          "(read-only, known once started; what a tool that handles each "
          "slide itself lists a location with)", G_TYPE_STRV, ro));
  g_object_class_install_property (gobject_class, PROP_CYCLES_COMPLETED,
      wsi_param_spec_uint ("cycles-completed", "Cycles completed",
          "Passes over the rank's slides completed so far (read-only)",
          0, G_MAXUINT, 0, ro));
  g_object_class_install_property (gobject_class, PROP_RANK_SLIDES_MIN,
      wsi_param_spec_uint ("rank-slides-min", "Slides of the smallest rank",
          "floor(slides in the collection / world-size): the slide count of "
          "the smallest rank, the same number on every rank; also in every "
          "WsiSlideMeta (read-only, known once started, 0 before)",
          0, G_MAXUINT, 0, ro));
  g_object_class_install_property (gobject_class, PROP_SLIDES_OPENED,
      wsi_param_spec_uint ("slides-opened", "Slides opened",
          "Distinct slides of this rank opened successfully since the "
          "source started (read-only)", 0, G_MAXUINT, 0, ro));
  g_object_class_install_property (gobject_class, PROP_SLIDES_REJECTED,
      wsi_param_spec_uint ("slides-rejected", "Slides rejected",
          "Distinct slides a tissuemask downstream rejected (too little "
          "tissue, or no overview and no cached mask) since the source "
          "started (read-only)", 0, G_MAXUINT, 0, ro));
  g_object_class_install_property (gobject_class, PROP_SLIDES_BLANK,
      wsi_param_spec_uint ("slides-blank", "Slides blank",
          "Rejected slides whose tissue mask holds no tissue at all "
          "(included in slides-rejected; read-only)", 0, G_MAXUINT, 0, ro));
}

/* Every error of ours must end the application's main loop, however
 * early it comes (wsierrorrelay.h). */
static gboolean
gst_wsi_slide_src_post_message (GstElement * element, GstMessage * message)
{
  return wsi_error_relay_post (element, message,
      GST_ELEMENT_CLASS (gst_wsi_slide_src_parent_class));
}

static void
gst_wsi_slide_src_class_init (GstWsiSlideSrcClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSrcClass *basesrc_class = GST_BASE_SRC_CLASS (klass);
  GstPushSrcClass *pushsrc_class = GST_PUSH_SRC_CLASS (klass);

  element_class->post_message =
      GST_DEBUG_FUNCPTR (gst_wsi_slide_src_post_message);
  gobject_class->set_property = gst_wsi_slide_src_set_property;
  gobject_class->get_property = gst_wsi_slide_src_get_property;
  gobject_class->finalize = gst_wsi_slide_src_finalize;
  gst_wsi_slide_src_install_properties (gobject_class);

  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Whole-slide image source", "Source/File",
      "Streams a collection of whole-slide images as one overview buffer "
      "with a slide description per slide, split across ranks",
      "gst-wsi developers");

  basesrc_class->start = gst_wsi_slide_src_start;
  basesrc_class->stop = gst_wsi_slide_src_stop;
  basesrc_class->unlock = gst_wsi_slide_src_unlock;
  basesrc_class->unlock_stop = gst_wsi_slide_src_unlock_stop;
  basesrc_class->is_seekable = gst_wsi_slide_src_is_seekable;
  basesrc_class->query = gst_wsi_slide_src_query;
  basesrc_class->event = gst_wsi_slide_src_event;
  pushsrc_class->create = gst_wsi_slide_src_create;

  gst_type_mark_as_plugin_api (GST_TYPE_WSI_SLIDE_ORDER, 0);

  /* numbers outside their range refuse the start (wsirefusal.h) */
  wsi_refusal_class_init (GST_ELEMENT_CLASS (klass));
}

static void
gst_wsi_slide_src_init (GstWsiSlideSrc * self)
{
  g_mutex_init (&self->lock);
  self->given_up = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_event_unref);
  self->rejected = g_hash_table_new (g_direct_hash, g_direct_equal);
  self->damaged_names = g_ptr_array_new_with_free_func (g_free);
  self->tcga = DEFAULT_TCGA;
  self->location = g_strdup (DEFAULT_LOCATION);
  self->rank = DEFAULT_RANK;
  self->world_size = DEFAULT_WORLD_SIZE;
  self->cycle = DEFAULT_CYCLE;
  self->order = DEFAULT_SLIDE_ORDER;
  self->seed = DEFAULT_SEED;
  self->thumbnail_size = DEFAULT_THUMBNAIL_SIZE;
  self->prepare_ahead = DEFAULT_PREPARE_AHEAD;
  self->default_mpp = DEFAULT_DEFAULT_MPP;

  /* No clock, no timestamps: slides are not media. */
  gst_base_src_set_format (GST_BASE_SRC (self), GST_FORMAT_TIME);
  gst_base_src_set_live (GST_BASE_SRC (self), FALSE);
}

/* ---- GstURIHandler: wsi:///path?property=value&... ---------------------- */

static GstURIType
gst_wsi_slide_src_uri_get_type (GType type)
{
  return GST_URI_SRC;
}

static const gchar *const *
gst_wsi_slide_src_uri_get_protocols (GType type)
{
  static const gchar *protocols[] = { "wsi", NULL };

  return protocols;
}

static gchar *
gst_wsi_slide_src_uri_get_uri (GstURIHandler * handler)
{
  GstWsiSlideSrc *self = GST_WSI_SLIDE_SRC (handler);
  gchar *uri = NULL;

  g_mutex_lock (&self->lock);
  if (self->location != NULL) {
    gchar *escaped = g_uri_escape_string (self->location,
        G_URI_RESERVED_CHARS_ALLOWED_IN_PATH, FALSE);
    uri = g_strconcat ("wsi://", escaped, NULL);
    g_free (escaped);
  }
  g_mutex_unlock (&self->lock);
  return uri;
}

static gboolean
gst_wsi_slide_src_uri_set_uri (GstURIHandler * handler, const gchar * uri,
    GError ** error)
{
  GstWsiSlideSrc *self = GST_WSI_SLIDE_SRC (handler);
  GstUri *parsed = gst_uri_from_string (uri);
  GHashTable *query;
  GHashTableIter iter;
  gpointer key, value;
  gchar *path;

  if (parsed == NULL || g_strcmp0 (gst_uri_get_scheme (parsed), "wsi") != 0) {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
        "wsislidesrc: '%s' is not a wsi:// URI", uri);
    if (parsed)
      gst_uri_unref (parsed);
    return FALSE;
  }
  path = gst_uri_get_path (parsed);
  if (path == NULL || path[0] == '\0') {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
        "wsislidesrc: '%s' names no path", uri);
    g_free (path);
    gst_uri_unref (parsed);
    return FALSE;
  }
  g_object_set (self, "location", path, NULL);

  /* Properties may ride along: wsi:///data?cycle=true&seed=3 */
  query = gst_uri_get_query_table (parsed);
  if (query != NULL) {
    g_hash_table_iter_init (&iter, query);
    while (g_hash_table_iter_next (&iter, &key, &value)) {
      if (value != NULL)
        gst_util_set_object_arg (G_OBJECT (self), key, value);
    }
    g_hash_table_unref (query);
  }
  g_free (path);
  gst_uri_unref (parsed);
  return TRUE;
}

static void
gst_wsi_slide_src_uri_handler_init (gpointer g_iface, gpointer iface_data)
{
  GstURIHandlerInterface *iface = (GstURIHandlerInterface *) g_iface;

  iface->get_type = gst_wsi_slide_src_uri_get_type;
  iface->get_protocols = gst_wsi_slide_src_uri_get_protocols;
  iface->get_uri = gst_wsi_slide_src_uri_get_uri;
  iface->set_uri = gst_wsi_slide_src_uri_set_uri;
}
