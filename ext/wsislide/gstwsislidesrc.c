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

#include <gst/wsi/wsienumtype.h>
#include <gst/wsi/wsierrorrelay.h>
#include <gst/wsi/wsiorderedpool.h>
#include <gst/wsi/wsievent.h>
#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsirefusal.h>

#include "gstwsislidesrc.h"
#include "gstwsislidesrcpriv.h"
#include "gstwsislideelements.h"
#include "wsislidesrcannotations.h"
#include "wsislidesrcplan.h"
#include "wsislidesrcreports.h"
#include "wsislidesrcuri.h"
#include "wsislidesrcvisit.h"
#include "wsislide.h"
#ifdef WSI_HAVE_CURL
#include "wsihttpsource.h"
#endif

GST_DEBUG_CATEGORY (gst_wsi_slide_src_debug);
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

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (WSI_SLIDE_MEDIA_TYPE));

#define gst_wsi_slide_src_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstWsiSlideSrc, gst_wsi_slide_src, GST_TYPE_PUSH_SRC,
    G_IMPLEMENT_INTERFACE (GST_TYPE_URI_HANDLER,
        wsi_slide_src_uri_handler_init);
    GST_DEBUG_CATEGORY_INIT (gst_wsi_slide_src_debug, "wsislidesrc", 0,
        "whole-slide image collection source"));
GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (wsislidesrc, "wsislidesrc",
    GST_RANK_NONE, GST_TYPE_WSI_SLIDE_SRC, wsislide_element_init (plugin));

GType
gst_wsi_slide_order_get_type (void)
{
  static gsize order_type = 0;
  static const GEnumValue values[] = {
    {GST_WSI_SLIDE_ORDER_SEQUENTIAL, "Sorted path order", "sequential"},
    {GST_WSI_SLIDE_ORDER_RANDOM, "Reshuffled every cycle", "random"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&order_type, "GstWsiSlideOrder", values);
}

static gboolean
gst_wsi_slide_src_event (GstBaseSrc * bsrc, GstEvent * event)
{
  GstWsiSlideSrc *self = GST_WSI_SLIDE_SRC (bsrc);

  if (wsi_event_parse_slide_rejected (event, NULL, NULL, NULL, NULL)) {
    slide_src_count_rejected (self, event);
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
    slide_src_skip_given_up (self);
    if (self->failed_count == self->entries->len) {
      gchar *why = slide_src_describe_failures (self);

      GST_ELEMENT_ERROR (self, RESOURCE, READ,
          ("None of the %u slides of rank %d in %s could be read: %s.",
              self->entries->len, self->run.rank, self->run.display, why),
          ("every slide was skipped"));
      g_free (why);
      return GST_FLOW_ERROR;
    }

    prep = slide_src_next_prepared (self);
    if (prep == NULL)
      return GST_FLOW_EOS;
    if (prep->cancelled)
      return GST_FLOW_FLUSHING; /* prepared again after the flush */
    slide_src_enter_cycle (self, prep->cycle);
    if (prep->entry->failed) {
      /* failed on an earlier visit planned after this one was */
      slide_prep_free (slide_src_pop_prepared (self));
      continue;
    }
    slide_src_warn_tcga_unparsed (self, prep->entry);

    buffer = slide_src_make_slide_buffer (self, prep, &err);
    if (buffer == NULL && err == NULL)
      return GST_FLOW_FLUSHING; /* interrupted: visited after the flush */
    slide_src_pop_prepared (self);
    if (buffer != NULL) {
      slide_prep_free (prep);
      GST_BUFFER_OFFSET (buffer) = self->visits;
      GST_BUFFER_OFFSET_END (buffer) = self->visits + 1;
      self->visits++;
      *outbuf = buffer;
      return GST_FLOW_OK;
    }
    slide_src_report_unreadable (self, prep->entry, err);
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
      slide_src_downstream_pool_size (self);

  if (self->run.location == NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No slide location was set."),
        ("set the location property to a slide, a directory or a list file"));
    return FALSE;
  }
  if (!slide_src_resolve_rank_setting (self, rank_prop, "RANK", 0, 0,
          &self->run.rank)
      || !slide_src_resolve_rank_setting (self, world_size_prop,
          "WORLD_SIZE", 1, 1, &self->run.world_size))
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
  slide_src_warn_unmatched_annotations (self, collection);
  self->entries = wsi_collection_take_rank (collection, self->run.rank,
      self->run.world_size);
  self->column_names = g_strdupv (collection->column_names);
  wsi_collection_free (collection);

  if (self->entries->len == 0) {
    slide_src_post_no_slides_error (self);
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
      g_free, slide_src_description_free);
  slide_src_arrange_visit_order (self);
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
      g_value_take_boxed (value, slide_src_damaged_names_copy (self));
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

static void
gst_wsi_slide_src_class_init (GstWsiSlideSrcClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSrcClass *basesrc_class = GST_BASE_SRC_CLASS (klass);
  GstPushSrcClass *pushsrc_class = GST_PUSH_SRC_CLASS (klass);

  /* every error of ours must end the application's main loop, however
   * early it comes (wsierrorrelay.h) */
  wsi_error_relay_class_init (element_class);
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
