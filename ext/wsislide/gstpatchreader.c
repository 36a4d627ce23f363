/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-patchreader
 * @title: patchreader
 *
 * patchreader turns patch coordinates into pixels. Its sink pad takes
 * buffers of packed #WsiPatchRecord (`application/x-wsi-patches`, all
 * records of a buffer from the slide named by its `WsiSlideMeta`), its source
 * pad pushes one square `video/x-raw` buffer per patch, side
 * `out_size` of the record, with a `WsiPatchMeta` that carries the record
 * (with the pyramid `level` and `read_size` filled in), the slide path and
 * the slide label. `GST_BUFFER_OFFSET` is the record's `sequence`; buffers
 * have no timestamps: patches are not media with a clock, use `sync=false`.
 *
 * Slides are read through the slide layer (ext/wsislide/read/wsislide.h):
 * with #GstPatchReader:backend `auto`, JPEG-tiled TIFF pyramids (Aperio SVS,
 * generic tiled TIFF) are decoded directly with libjpeg-turbo, only the
 * tiles a patch touches, with DCT-domain scaling for downsampled reads
 * (#GstPatchReader:dct-scaling) and a decoded-tile cache shared by the
 * threads (#GstPatchReader:tile-cache-size); every other format goes
 * through OpenSlide. For each patch the layer picks the coarsest pyramid
 * level whose downsample does not exceed footprint / out_size, reads the
 * footprint there and, when the region read is larger than the patch,
 * area-averages it down (a box filter with fractional edge weights, like
 * OpenCV's INTER_AREA). A region within #GstPatchReader:resample-tolerance of the
 * patch size (e.g. 257 px for 256 because the slide is 0.499 um/px and the
 * target 0.5) is read at the patch size instead: no resampling blur for a
 * rounding-level mismatch, and the record's footprint, read_size and out_mpp
 * say what was really read. Transparent, unscanned areas come out white, as
 * glass.
 *
 * A pool of #GstPatchReader:threads worker threads (wsiorderedpool.h)
 * decodes in parallel;
 * patches and serialized events leave in the order they came in, and the
 * bytes do not depend on the number of threads. Patches that are ready
 * together leave as one buffer list (a pad probe on the src pad needs
 * GST_PAD_PROBE_TYPE_BUFFER_LIST as well as BUFFER to see each patch). Open slides are kept in a
 * small cache (#GstPatchReader:max-open-slides). A patch that cannot be
 * read is dropped with a warning; a slide that cannot be opened, or that
 * failed #GstPatchReader:max-read-failures reads in a row, is given up for
 * the rest of the stream.
 *
 * The output is RGB unless downstream only accepts RGBA, RGBx or BGRx
 * (alpha is then 255).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 wsislidesrc location=slides/ ! tissuemask ! queue ! \
 *     patchsampler patch-size=256 ! patchinterleave ! \
 *     patchreader threads=4 ! fakesink sync=false
 * ]| Reads 256x256 RGB patches from every slide of `slides/` with four
 * decoding threads.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstpatchreader.h"
#include "gstwsislideelements.h"
#include "wsiorderedpool.h"
#include "wsislide.h"
#include "wsislidecache.h"
#include "wsireadproperties.h"
#include "wsireadtally.h"
#include "wsireaderslide.h"
#include "wsireaderoutput.h"
#include "wsireaderpatch.h"
#include "wsibytesource.h"
#include "wsiremotestats.h"
#include "wsivideoformat.h"
#include "wsitilecache.h"
#ifdef WSI_HAVE_CURL
#include "wsihttpsource.h"
#endif

#include <gst/video/video.h>
#include <gst/wsi/wsiannotation.h>
#include <gst/wsi/wsievent.h>
#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsirefusal.h>
#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY (gst_patch_reader_debug);
#define GST_CAT_DEFAULT gst_patch_reader_debug

#define DEFAULT_THREADS 0
#define DEFAULT_MAX_READ_FAILURES 3
#define DEFAULT_RESAMPLE_TOLERANCE 0.01
#define MAX_MAX_READ_FAILURES 1000000
#define DEFAULT_TILE_CACHE_MB 64
/* read-ahead=0 for slides at URLs: patches queued ahead at most, and the
 * output buffers they may hold at most (bytes). 256 patches at ~1,500
 * patches/s look ~170 ms ahead: two 50 ms round trips with room for
 * queueing behind prefetch-requests. */
#define REMOTE_READ_AHEAD_AUTO 256
#define REMOTE_READ_AHEAD_BYTES (64 << 20)

enum
{
  PROP_0,
  PROP_THREADS,
  PROP_MAX_OPEN_SLIDES,
  PROP_MAX_READ_FAILURES,
  PROP_RESAMPLE_TOLERANCE,
  PROP_BACKEND,
  PROP_DCT_SCALING,
  PROP_TILE_CACHE_SIZE,
  PROP_PATCHES_READ,
  PROP_PATCHES_FAILED,
  PROP_PATCHES_SKIPPED,
  PROP_TILE_CACHE_HITS,
  PROP_TILE_CACHE_MISSES,
  PROP_READ_STATS,
  PROP_READ_AHEAD,
  PROP_PREFETCH_REQUESTS,
  PROP_PREFETCH_BYTES,
  PROP_REMOTE_STATS,
  PROP_GRID_ORDER,
};

/* The read-layer properties (wsireadproperties.h): ids and what they mean
 * here. */
static const WsiReadPropertySpec read_property_spec = {
  .props = {
    [WSI_READ_PROP_BACKEND] = {PROP_BACKEND,
          "Which slide reader decodes: auto = the DICOM reader for DICOM "
          "VL Whole Slide Microscopy series, the direct TIFF/JPEG reader "
          "(libjpeg-turbo) for JPEG-tiled TIFF pyramids (Aperio SVS, generic "
          "tiled TIFF), OpenSlide for every other format; openslide, tiff or "
          "dicom force one (a slide the forced reader cannot read is given up with "
          "a warning). Takes effect for slides opened from then on"},
    [WSI_READ_PROP_DCT_SCALING] = {PROP_DCT_SCALING,
          "Let the direct reader decode JPEG tiles at 1/2, 1/4 or 1/8 scale "
          "in the DCT domain when a region is downsampled by 2x or more. By a "
          "whole multiple of that (2x, 4x, 8x targets) a patch starts on that "
          "scale's pixel grid, moved by less than one output pixel (its "
          "record gives the position read), > 40 dB against the exact area "
          "average; near-whole factors (1.979 = 0.5 um/px from a 0.2527 um/px "
          "scan, 3.957, 3) decode at the scale that keeps the output's "
          "resolution within 2 % and resample the rest at the requested "
          "position (35-45 dB). false = decode at full size and average "
          "exactly"},
    [WSI_READ_PROP_MAX_OPEN_SLIDES] = {PROP_MAX_OPEN_SLIDES,
          "Slides kept open at once, least recently used closed first "
          "(1..1024; OpenSlide keeps up to 32 MB of tile cache per open "
          "slide)"},
    [WSI_READ_PROP_TILE_CACHE_SIZE] = {PROP_TILE_CACHE_SIZE,
          "Memory for decoded tiles shared by all threads and slides of the "
          "direct reader, in MiB (0..1048576; 0 = no cache: each patch "
          "decodes only the tile parts it needs). Overlapping patches, grid "
          "strides below a tile and tile-aligned patches reuse decodes. "
          "patchviews of the same pipeline and backend shares the cache "
          "(its size: the larger request when the stream starts)"},
    [WSI_READ_PROP_TILE_CACHE_HITS] = {PROP_TILE_CACHE_HITS,
          "Tiles found decoded in the tile cache since the last READY to "
          "PAUSED change (count)"},
    [WSI_READ_PROP_TILE_CACHE_MISSES] = {PROP_TILE_CACHE_MISSES,
          "Tiles looked up in the tile cache and decoded since the last READY "
          "to PAUSED change (count)"},
  },
  .default_tile_cache_mb = DEFAULT_TILE_CACHE_MB,
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (WSI_PATCHES_MEDIA_TYPE));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw, format = (string) "
        WSI_READER_OUTPUT_FORMATS ", width = (int) [ 1, max ], height = (int) [ 1, max ], "
        "framerate = (fraction) 0/1"));

struct _GstPatchReader
{
  WsiPoolElement parent;

  /* properties, under the object lock */
  guint threads;
  guint read_ahead;             /* patches queued ahead of decoding; 0 auto */
  guint max_read_failures;
  gdouble resample_tolerance;
  /* atomic copies the workers read once per patch */
  gint resample_tolerance_ppm;  /* in 1e-6 */
  gint grid_order;              /* gboolean, #GstPatchReader:grid-order */

  /* backend, dct-scaling and the caches' properties; slides and decoded
   * tiles, shared with patchviews in the pipeline (wsireadcaches.h): the
   * two pointers are valid from start to stop */
  WsiReadProperties read;
  WsiSlideCache *slide_cache;
  WsiTileCache *tile_cache;

  /* counters, under their own lock (wsireadtally.h) */
  WsiReadTally tally;

  /* output caps and buffers (wsireaderoutput.h) */
  WsiReaderOutput output;
  GstBufferPool *buffer_pool;

  /* streaming thread state; vinfo changes only with an empty pool */
  GHashTable *slides;           /* path -> WsiReaderSlide */
  GstEvent *pending_segment;    /* held until the first caps are out */
  gboolean warned_no_meta;
  gboolean warned_bad_record;
  guint read_ahead_now;         /* read_ahead as of the last start */
  guint queue_limit;            /* the pool's limit now (queue_limit_for) */
};

#define gst_patch_reader_parent_class parent_class
G_DEFINE_TYPE (GstPatchReader, gst_patch_reader, WSI_TYPE_POOL_ELEMENT);

GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (patchreader, "patchreader",
    GST_RANK_NONE, GST_TYPE_PATCH_READER,
    wsislide_element_init (plugin);
    GST_DEBUG_CATEGORY_INIT (gst_patch_reader_debug, "patchreader", 0,
        "whole-slide patch reader"));

/* ---- decoding (worker threads, no lock held; wsireaderpatch.h) -------- */

/* Pool-element virtual methods: one WsiReadContext per decoding thread. */
static gpointer
reader_thread_state_new (WsiPoolElement * element)
{
  return wsi_read_context_new ();
}

static void
reader_thread_state_free (WsiPoolElement * element, gpointer state)
{
  wsi_read_context_free (state);
}

/* How a patch is read now; the settings are read once per patch
 * (atomics): a change applies from the next patch. */
static void
reader_how (GstPatchReader * self, WsiReaderPatchRead * how)
{
  how->slide_cache = self->slide_cache;
  how->tile_cache = self->tile_cache;
  how->output = &self->output;
  how->resample_tolerance =
      g_atomic_int_get (&self->resample_tolerance_ppm) / 1e6;
  how->native_scaling = wsi_read_properties_dct_scaling (&self->read);
  how->grid_order = g_atomic_int_get (&self->grid_order);
}

static GstBuffer *
reader_process (WsiPoolElement * element, gpointer data, gpointer state)
{
  GstPatchReader *self = GST_PATCH_READER (element);
  WsiReaderPatch *work = data;
  WsiReaderPatchRead how;

  reader_how (self, &how);
  wsi_reader_patch_decode (work, &how, state, GST_ELEMENT (self));
  return g_steal_pointer (&work->buffer);
}

/* In stream order: counts the patch, applies the give-up rule, and passes
 * the patch on or drops it. */
static GstBuffer *
reader_finish (WsiPoolElement * element, gpointer data, GstBuffer * result)
{
  GstPatchReader *self = GST_PATCH_READER (element);
  WsiReaderPatch *work = data;
  WsiReaderSlide *ctx = work->slide;
  WsiReaderPatchOutcome outcome = work->outcome;
  guint max_failures;

  if (outcome != WSI_READER_PATCH_OPEN_FAILED && g_atomic_int_get (&ctx->given_up))
    outcome = WSI_READER_PATCH_SKIPPED;

  switch (outcome) {
    case WSI_READER_PATCH_READ:
      ctx->consecutive_failures = 0;
      /* the slide's first read also counts the slide for its backend
       * (the tracer's per-reader line) */
      wsi_read_tally_read (&self->tally, work->backend,
          &ctx->counted_backend);
      wsi_reader_slide_label (result, ctx, &work->record, work->class_name,
          work->class_id);
      return result;
    case WSI_READER_PATCH_FAILED:
      GST_OBJECT_LOCK (self);
      max_failures = self->max_read_failures;
      GST_OBJECT_UNLOCK (self);
      wsi_read_tally_failed (&self->tally, ctx->path,
          work->error ? work->error->message : "unknown error");
      wsi_reader_slide_read_failed (ctx, element, &work->record,
          work->record.level, work->error, max_failures);
      wsi_read_tally_dropped (&self->tally, TRUE);
      break;
    case WSI_READER_PATCH_OPEN_FAILED:
      wsi_reader_slide_open_failed (ctx, element, &work->record,
          work->error);
      wsi_read_tally_unread (&self->tally, ctx->path, ctx->give_up_reason);
      wsi_read_tally_dropped (&self->tally, FALSE);
      break;
    case WSI_READER_PATCH_SKIPPED:
      wsi_read_tally_dropped (&self->tally, FALSE);
      break;
  }
  /* Tells the planner upstream that a patch it planned will not arrive. */
  wsi_pool_element_report_dropped (element, &work->record, ctx->path,
      outcome == WSI_READER_PATCH_FAILED && work->error ? work->error->message :
      ctx->give_up_reason);
  gst_clear_buffer (&result);
  return NULL;
}

static void
reader_work_clear (WsiPoolElement * element, gpointer data)
{
  wsi_reader_patch_clear (data);
}

/* READY -> PAUSED: counters start again; the thread count is read now. */
static gboolean
gst_patch_reader_start (WsiPoolElement * element, guint * n_threads)
{
  GstPatchReader *self = GST_PATCH_READER (element);
  GstWsiBackend backend;

  GST_OBJECT_LOCK (self);
  *n_threads = self->threads;
  GST_OBJECT_UNLOCK (self);
  backend = wsi_read_properties_backend (&self->read);

  wsi_read_tally_reset (&self->tally);
  wsi_read_caches_client_start (&self->read.caches, GST_ELEMENT (self),
      gst_wsi_backend_name (backend));
  self->slide_cache = wsi_read_caches_client_slides (&self->read.caches);
  self->tile_cache = wsi_read_caches_client_tiles (&self->read.caches);
  GST_OBJECT_LOCK (self);
  self->read_ahead_now = self->read_ahead;
  GST_OBJECT_UNLOCK (self);
  /* The ring is sized for the deepest look-ahead (slides at URLs); a
   * local slide uses only the part read-ahead asks (queue_limit_for). */
  wsi_pool_element_set_min_queued (element, self->read_ahead_now ?
      self->read_ahead_now : REMOTE_READ_AHEAD_AUTO);
  self->queue_limit = self->read_ahead_now ? G_MAXUINT : 0;
  wsi_pool_element_set_queue_limit (element, self->queue_limit);
  return TRUE;
}

/* ---- queueing from the streaming thread --------------------------------- */

/* (Re)negotiates for patches of @size: only with an empty ring, so that
 * every earlier patch leaves with the caps it was made for; the segment
 * held back waits for the first caps. */
static GstFlowReturn
gst_patch_reader_negotiate (GstPatchReader * self, guint size)
{
  GstFlowReturn ret = wsi_pool_element_drain (WSI_POOL_ELEMENT (self));

  if (ret != GST_FLOW_OK)
    return ret;
  ret = wsi_reader_output_set_size (&self->output, GST_ELEMENT (self),
      WSI_POOL_ELEMENT_SRC_PAD (self), size);
  if (ret == GST_FLOW_OK && self->pending_segment) {
    ret = wsi_pool_element_queue_event (WSI_POOL_ELEMENT (self),
        self->pending_segment);
    self->pending_segment = NULL;
  }
  return ret;
}

/* A record dropped before any read (streaming thread). */
static void
gst_patch_reader_skip_record (GstPatchReader * self, WsiReaderSlide * ctx,
    const WsiPatchRecord * record, const gchar * reason)
{
  wsi_read_tally_unread (&self->tally, ctx->path, reason);
  wsi_read_tally_dropped (&self->tally, FALSE);
  wsi_pool_element_report_dropped (WSI_POOL_ELEMENT (self), record,
      ctx->path, reason);
}

/* A remote slide's tiles for @record start coming now, while the patches
 * queued before it decode: the ring (read-ahead) is how far ahead this
 * looks. Opening the slide here is what the worker would do anyway; a
 * failure is left for the worker to report. */
static void
prefetch_patch (GstPatchReader * self, WsiReaderSlide * ctx,
    const WsiPatchRecord * record)
{
  WsiSlideHandle *handle;
  WsiReaderPatchRead how;
  WsiReadRequest request;

  handle = wsi_slide_cache_acquire (self->slide_cache, ctx->file, NULL);
  if (handle == NULL)
    return;
  reader_how (self, &how);
  wsi_reader_patch_request (&how, record, &request);
  wsi_slide_prefetch (handle->slide, &request, record->out_size,
      record->out_size);
  wsi_slide_cache_release (self->slide_cache, handle);
}

/* How many patches may be queued ahead while @ctx's patches are queued:
 * an explicit read-ahead is the whole ring; automatic is the pool's
 * default (4 per thread, at least 8) for a local slide, where decoding
 * needs no more, and for a slide at a URL as many as hide a round trip
 * (REMOTE_READ_AHEAD_AUTO, fewer for large patches: their buffers). */
static guint
queue_limit_for (GstPatchReader * self, const WsiReaderSlide * ctx)
{
  if (self->read_ahead_now != 0)
    return G_MAXUINT;
  if (!ctx->remote)
    return 0;
  return MAX (REMOTE_READ_AHEAD_BYTES / MAX (self->output.vinfo.size, 1), 1);
}

static GstFlowReturn
gst_patch_reader_queue_patch (GstPatchReader * self, WsiReaderSlide * ctx,
    const WsiPatchRecord * record, const gchar * class_name, gint32 class_id)
{
  WsiReaderPatch work = { 0, };
  GstBufferPool *pool;
  GstFlowReturn ret;

  if (record->out_size == 0 || record->footprint == 0) {
    if (!self->warned_bad_record)
      GST_ELEMENT_WARNING (self, STREAM, FORMAT,
          ("Dropping patch records of \"%s\" with a zero footprint or "
              "output size.", ctx->path), (NULL));
    self->warned_bad_record = TRUE;
    gst_patch_reader_skip_record (self, ctx, record,
        "zero footprint or output size");
    return GST_FLOW_OK;
  }
  if (g_atomic_int_get (&ctx->given_up)) {
    gst_patch_reader_skip_record (self, ctx, record, "the slide was given up");
    return GST_FLOW_OK;
  }
  if (record->out_size != self->output.size
      || gst_pad_check_reconfigure (WSI_POOL_ELEMENT_SRC_PAD (self))) {
    ret = gst_patch_reader_negotiate (self, record->out_size);
    if (ret != GST_FLOW_OK)
      return ret;
  }

  pool = wsi_reader_output_ref_pool (&self->output);
  if (pool == NULL)
    return GST_FLOW_FLUSHING;
  ret = gst_buffer_pool_acquire_buffer (pool, &work.buffer, NULL);
  gst_object_unref (pool);
  if (ret != GST_FLOW_OK)
    return ret;

  work.record = *record;
  work.slide = ctx;
  work.class_name = class_name;
  work.class_id = class_id;
  if (queue_limit_for (self, ctx) != self->queue_limit) {
    self->queue_limit = queue_limit_for (self, ctx);
    wsi_pool_element_set_queue_limit (WSI_POOL_ELEMENT (self),
        self->queue_limit);
  }
  if (ctx->remote)
    prefetch_patch (self, ctx, record);
  return wsi_pool_element_queue_work (WSI_POOL_ELEMENT (self), &work);
}

static GstFlowReturn
gst_patch_reader_handle_buffer (WsiPoolElement * element, GstBuffer * buffer)
{
  GstPatchReader *self = GST_PATCH_READER (element);
  const GstStructure *slide_meta = wsi_slide_meta_get (buffer);
  WsiReaderSlide *ctx = NULL;
  GstFlowReturn ret = GST_FLOW_OK;
  GstMapInfo map;
  gsize i, n, n_classes;
  const gint32 *classes;
  const gchar *const *class_names;

  if (slide_meta)
    ctx = wsi_reader_slide_lookup (self->slides, slide_meta);
  if (ctx == NULL) {
    if (!self->warned_no_meta)
      GST_ELEMENT_WARNING (self, STREAM, FORMAT,
          ("Dropping coordinate buffers without a WsiSlideMeta naming the "
              "slide path."), (NULL));
    self->warned_no_meta = TRUE;
    gst_buffer_unref (buffer);
    return GST_FLOW_OK;
  }

  if (!gst_buffer_map (buffer, &map, GST_MAP_READ)) {
    gst_buffer_unref (buffer);
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Could not read a coordinate buffer of \"%s\".", ctx->path), (NULL));
    return GST_FLOW_ERROR;
  }
  n = map.size / sizeof (WsiPatchRecord);
  if (map.size % sizeof (WsiPatchRecord) != 0)
    GST_WARNING_OBJECT (self, "ignoring %" G_GSIZE_FORMAT " trailing bytes",
        map.size % sizeof (WsiPatchRecord));

  classes = wsi_reader_patch_classes (slide_meta, &n_classes, &class_names);
  for (i = 0; i < n && ret == GST_FLOW_OK; i++) {
    WsiPatchRecord record;
    const gchar *class_name = NULL;
    gint32 class_id = WSI_CLASS_NONE;

    /* Copy: the buffer memory need not be aligned for the record. */
    memcpy (&record, map.data + i * sizeof (record), sizeof (record));
    if (i < n_classes)
      class_name = wsi_reader_class_label (class_names, classes[i], &class_id);
    ret = gst_patch_reader_queue_patch (self, ctx, &record, class_name,
        class_id);
  }
  gst_buffer_unmap (buffer, &map);
  gst_buffer_unref (buffer);
  if (ret != GST_FLOW_OK)
    GST_DEBUG_OBJECT (self, "chain returns %s", gst_flow_get_name (ret));
  return ret;
}

/* ---- flushing ----------------------------------------------------------- */

/* The chain may wait for a free output buffer: unblocked with the pool
 * (flush start, deactivation), blocking again after a flush stop. */
static void
gst_patch_reader_set_flushing (WsiPoolElement * element, gboolean flushing)
{
  wsi_reader_output_set_flushing (&GST_PATCH_READER (element)->output,
      flushing);
}

/* ---- events and queries ------------------------------------------------- */

static GstEvent *
segment_in_time (GstEvent * event)
{
  const GstSegment *segment;
  GstSegment time_segment;
  GstEvent *time_event;

  gst_event_parse_segment (event, &segment);
  if (segment->format == GST_FORMAT_TIME)
    return event;
  /* Patches carry no timestamps; video downstream wants a time segment. */
  gst_segment_init (&time_segment, GST_FORMAT_TIME);
  time_event = gst_event_new_segment (&time_segment);
  gst_event_set_seqnum (time_event, gst_event_get_seqnum (event));
  gst_event_unref (event);
  return time_event;
}

/* At EOS: a stream whose every read failed ends in an error naming why
 * (gst-launch exits non-zero, Python raises), not in a quiet EOS that
 * looks like a finished job. A stream that asked for nothing (tissuemask
 * rejected every slide) is patchsampler's to report. */
static void
check_something_read (GstPatchReader * self)
{
  guint64 read, failed, skipped;
  guint slides;
  gchar *first;

  wsi_read_tally_get (&self->tally, &read, &failed, &skipped, &slides,
      &first);

  if (read == 0 && failed + skipped > 0)
    GST_ELEMENT_ERROR (self, RESOURCE, READ,
        ("Not a single patch could be read: %" G_GUINT64_FORMAT " reads "
            "failed (over %u slides) and %" G_GUINT64_FORMAT " were not "
            "tried (slide not opened or given up); first: %s.", failed,
            slides, skipped, GST_STR_NULL (first)),
        ("the stream ended with no patch delivered"));
  g_free (first);
}

/* Output caps follow the records' out_size, not the input caps; the
 * segment waits for them; the rest is the base class's. */
static gboolean
gst_patch_reader_sink_event (WsiPoolElement * element, GstEvent * event)
{
  GstPatchReader *self = GST_PATCH_READER (element);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:
      gst_event_unref (event);
      return TRUE;
    case GST_EVENT_SEGMENT:
      event = segment_in_time (event);
      if (self->output.size == 0) {
        /* Caps must go out before the first segment. */
        gst_event_replace (&self->pending_segment, event);
        gst_event_unref (event);
        return TRUE;
      }
      break;
    case GST_EVENT_EOS:
      if (self->pending_segment) {
        wsi_pool_element_queue_event (element, self->pending_segment);
        self->pending_segment = NULL;
      }
      /* Every read done, then: did any patch get out? */
      if (wsi_pool_element_drain (element) == GST_FLOW_OK)
        check_something_read (self);
      break;
    default:
      break;
  }
  return WSI_POOL_ELEMENT_CLASS (parent_class)->sink_event (element, event);
}

/* Coordinates and pixels have nothing in common to allocate. */
static gboolean
gst_patch_reader_sink_query (WsiPoolElement * element, GstQuery * query)
{
  if (GST_QUERY_TYPE (query) == GST_QUERY_ALLOCATION)
    return FALSE;
  return WSI_POOL_ELEMENT_CLASS (parent_class)->sink_query (element, query);
}

/* ---- state and properties ----------------------------------------------- */

/* PAUSED -> READY, the workers joined (and finalize): drops the stream's
 * output buffers, slides and tiles. */
static void
gst_patch_reader_stop (WsiPoolElement * element)
{
  GstPatchReader *self = GST_PATCH_READER (element);

  wsi_reader_output_stop (&self->output);
  self->slide_cache = NULL;
  self->tile_cache = NULL;
  wsi_read_caches_client_stop (&self->read.caches);
  g_hash_table_remove_all (self->slides);
  gst_clear_event (&self->pending_segment);
  self->warned_no_meta = FALSE;
  self->warned_bad_record = FALSE;
}

/* Patches read per backend: "read-stats, tiff=(guint64)N, ...", slides per
 * backend, failed reads per slide, the tile cache's hits and misses. */
static GstStructure *
gst_patch_reader_read_stats (GstPatchReader * self)
{
  GstStructure *stats = wsi_read_tally_stats (&self->tally);

  gst_structure_set (stats,
      "tile-cache-hits", G_TYPE_UINT64,
      wsi_read_caches_client_hits (&self->read.caches),
      "tile-cache-misses", G_TYPE_UINT64,
      wsi_read_caches_client_misses (&self->read.caches), NULL);
  {
    /* Storage, when slides came from URLs (the tracer prints it). */
    GstStructure *remote = wsi_remote_stats_new ();
    guint64 requests = 0;
    if (gst_structure_get_uint64 (remote, "requests", &requests)
        && requests > 0)
      gst_structure_set (stats, "remote", GST_TYPE_STRUCTURE, remote, NULL);
    gst_structure_free (remote);
  }
  return stats;
}

static void
gst_patch_reader_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstPatchReader *self = GST_PATCH_READER (object);

  if (wsi_read_properties_set (&self->read, &read_property_spec, prop_id,
          value))
    return;
  switch (prop_id) {
    case PROP_THREADS:
      GST_OBJECT_LOCK (self);
      self->threads = g_value_get_uint (value);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_READ_AHEAD:
      GST_OBJECT_LOCK (self);
      self->read_ahead = g_value_get_uint (value);
      GST_OBJECT_UNLOCK (self);
      break;
#ifdef WSI_HAVE_CURL
    case PROP_PREFETCH_REQUESTS:
    case PROP_PREFETCH_BYTES:{
      WsiHttpSettings settings;
      wsi_http_get_settings (&settings);
      if (prop_id == PROP_PREFETCH_REQUESTS)
        settings.prefetch_requests = g_value_get_uint (value);
      else
        settings.prefetch_mb = g_value_get_uint (value);
      wsi_http_set_settings (&settings);
      break;
    }
#endif
    case PROP_MAX_READ_FAILURES:
      GST_OBJECT_LOCK (self);
      self->max_read_failures = g_value_get_uint (value);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_GRID_ORDER:
      g_atomic_int_set (&self->grid_order, g_value_get_boolean (value));
      break;
    case PROP_RESAMPLE_TOLERANCE:
      GST_OBJECT_LOCK (self);
      self->resample_tolerance = g_value_get_double (value);
      g_atomic_int_set (&self->resample_tolerance_ppm,
          (gint) lround (self->resample_tolerance * 1e6));
      GST_OBJECT_UNLOCK (self);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_patch_reader_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstPatchReader *self = GST_PATCH_READER (object);

  if (wsi_read_properties_get (&self->read, &read_property_spec, prop_id,
          value))
    return;
  switch (prop_id) {
    case PROP_THREADS:
      GST_OBJECT_LOCK (self);
      g_value_set_uint (value, self->threads);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_MAX_READ_FAILURES:
      GST_OBJECT_LOCK (self);
      g_value_set_uint (value, self->max_read_failures);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_GRID_ORDER:
      g_value_set_boolean (value, g_atomic_int_get (&self->grid_order));
      break;
    case PROP_RESAMPLE_TOLERANCE:
      GST_OBJECT_LOCK (self);
      g_value_set_double (value, self->resample_tolerance);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_READ_STATS:
      g_value_take_boxed (value, gst_patch_reader_read_stats (self));
      break;
    case PROP_READ_AHEAD:
      GST_OBJECT_LOCK (self);
      g_value_set_uint (value, self->read_ahead);
      GST_OBJECT_UNLOCK (self);
      break;
#ifdef WSI_HAVE_CURL
    case PROP_PREFETCH_REQUESTS:
    case PROP_PREFETCH_BYTES:{
      WsiHttpSettings settings;
      wsi_http_get_settings (&settings);
      g_value_set_uint (value, prop_id == PROP_PREFETCH_REQUESTS ?
          settings.prefetch_requests : settings.prefetch_mb);
      break;
    }
#endif
    case PROP_REMOTE_STATS:
      g_value_take_boxed (value, wsi_remote_stats_new ());
      break;
    case PROP_PATCHES_READ:
      g_value_set_uint64 (value, wsi_read_tally_patches (&self->tally,
              WSI_READ_TALLY_READ));
      break;
    case PROP_PATCHES_FAILED:
      g_value_set_uint64 (value, wsi_read_tally_patches (&self->tally,
              WSI_READ_TALLY_FAILED));
      break;
    case PROP_PATCHES_SKIPPED:
      g_value_set_uint64 (value, wsi_read_tally_patches (&self->tally,
              WSI_READ_TALLY_SKIPPED));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_patch_reader_finalize (GObject * object)
{
  GstPatchReader *self = GST_PATCH_READER (object);

  gst_patch_reader_stop (WSI_POOL_ELEMENT (self));
  wsi_read_properties_clear (&self->read);
  g_hash_table_unref (self->slides);
  wsi_read_tally_clear (&self->tally);
  wsi_reader_output_clear (&self->output);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_patch_reader_class_init (GstPatchReaderClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  WsiPoolElementClass *pool_class = WSI_POOL_ELEMENT_CLASS (klass);

  gobject_class->set_property = gst_patch_reader_set_property;
  gobject_class->get_property = gst_patch_reader_get_property;
  gobject_class->finalize = gst_patch_reader_finalize;

  g_object_class_install_property (gobject_class, PROP_THREADS,
      wsi_ordered_pool_param_spec_threads ("Decoding threads",
          DEFAULT_THREADS));
  wsi_read_properties_install (gobject_class, &read_property_spec);
  g_object_class_install_property (gobject_class, PROP_MAX_READ_FAILURES,
      wsi_param_spec_uint ("max-read-failures", "Max read failures",
          "Failed reads in a row after which a slide is given up for the "
          "rest of the stream (its remaining patches dropped), 1..1000000",
          1, MAX_MAX_READ_FAILURES, DEFAULT_MAX_READ_FAILURES,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_RESAMPLE_TOLERANCE,
      wsi_param_spec_double ("resample-tolerance", "Resample tolerance",
          "Relative difference between the region to read and the patch "
          "size under which the region is read at the patch size instead of "
          "being resampled (the patch's mpp then differs from the target by "
          "at most this much, and its record says so). 0 = always resample "
          "exactly. Range 0..0.1, default 0.01", 0.0, 0.1,
          DEFAULT_RESAMPLE_TOLERANCE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_GRID_ORDER,
      g_param_spec_boolean ("grid-order", "Grid order",
          "The patches come from a grid in raster order (patchsampler "
          "mode=grid, feature extraction): a tile a patch covers only in part "
          "is decoded whole and kept in the tile cache on its first request, "
          "since the next patch of the row or the next row needs the rest, so "
          "each tile of the grid is decoded once (the cache must hold about "
          "two rows of the slide's tiles: 12 MB for a 24000 px wide slide "
          "read at 1/2; rows the grid has passed and other slides' tiles "
          "are evicted as it moves on). false = a tile is kept when asked for "
          "twice (random patches). The pixels are the same either way. "
          "Default false",
          FALSE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_READ_AHEAD,
      wsi_param_spec_uint ("read-ahead", "Read-ahead",
          "Patches queued ahead of the one decoding (0..4096; 0 = automatic: "
          "4 per thread, at least 8, for local slides; for slides at URLs "
          "256, or fewer when their output buffers would pass 64 MiB). For "
          "slides at URLs the tiles of every queued patch are fetched while "
          "earlier ones decode, so this (with prefetch-requests) is how much "
          "storage latency is hidden: at least patches/s x round trip, e.g. "
          "75 for 1,500 patches/s and 50 ms. Each queued patch holds one "
          "output buffer. Takes effect at the next READY to PAUSED change",
          0, 4096, 0, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
#ifdef WSI_HAVE_CURL
  g_object_class_install_property (gobject_class, PROP_PREFETCH_REQUESTS,
      wsi_param_spec_uint ("prefetch-requests", "Prefetch requests",
          "Slides at URLs: ranged requests fetching queued patches' tiles "
          "ahead, in flight at once (requests, 0..1024, 0 = no prefetch; "
          "default 64 or WSI_HTTP_PREFETCH_REQUESTS). Process-wide, "
          "independent of threads", 0, 1024, 64,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_PREFETCH_BYTES,
      wsi_param_spec_uint ("prefetch-bytes", "Prefetch bytes",
          "Slides at URLs: bytes queued or in flight for prefetch at most, "
          "in MiB (0..65536, 0 = no prefetch; default 64 or "
          "WSI_HTTP_PREFETCH_MB). Process-wide", 0, 65536, 64,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
#endif
  g_object_class_install_property (gobject_class, PROP_REMOTE_STATS,
      g_param_spec_boxed ("remote-stats", "Remote storage statistics",
          "Slides at URLs, for this process: \"remote-stats, "
          "requests=(guint64), bytes=(guint64), retries=(guint64), "
          "failures=(guint64), cache-hits=(guint64), in-flight=(uint), "
          "latency-p50-ms=(double), latency-p95-ms=(double), "
          "slides=(GstValueArray)\" with the same fields per open slide "
          "(and its url, without credentials). Read-only",
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_READ_STATS,
      g_param_spec_boxed ("read-stats", "Read statistics",
          "Patches read per backend (a field per backend name, guint64), "
          "slides read per backend (slides, a structure of the same form), "
          "failed reads per slide (failed-slides, an array of slide, "
          "path=(string), failed-reads=(guint64), sorted by path) and the "
          "tile cache's hits and misses, since the last READY to PAUSED "
          "change", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_PATCHES_READ,
      wsi_param_spec_uint64 ("patches-read", "Patches read",
          "Patches decoded and pushed out since the last READY to PAUSED "
          "change (count)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_PATCHES_FAILED,
      wsi_param_spec_uint64 ("patches-failed", "Patches failed",
          "Patches dropped because their read failed, since the last READY "
          "to PAUSED change (count)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_PATCHES_SKIPPED,
      wsi_param_spec_uint64 ("patches-skipped", "Patches skipped",
          "Patches dropped without a read because their slide could not be "
          "opened or was given up, or their record was invalid, since the "
          "last READY to PAUSED change (count)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Whole-slide patch reader", "Decoder/Video",
      "Reads the pixels of whole-slide image patches, in parallel and in "
      "order, from their coordinates",
      "gst-wsi developers");

  pool_class->work_size = sizeof (WsiReaderPatch);
  pool_class->worker_name = "patchreader";
  pool_class->start = GST_DEBUG_FUNCPTR (gst_patch_reader_start);
  pool_class->stop = GST_DEBUG_FUNCPTR (gst_patch_reader_stop);
  pool_class->thread_state_new = reader_thread_state_new;
  pool_class->thread_state_free = reader_thread_state_free;
  pool_class->handle_buffer =
      GST_DEBUG_FUNCPTR (gst_patch_reader_handle_buffer);
  pool_class->process = reader_process;
  pool_class->finish = reader_finish;
  pool_class->work_clear = reader_work_clear;
  pool_class->set_flushing = GST_DEBUG_FUNCPTR (gst_patch_reader_set_flushing);
  pool_class->sink_event = GST_DEBUG_FUNCPTR (gst_patch_reader_sink_event);
  pool_class->sink_query = GST_DEBUG_FUNCPTR (gst_patch_reader_sink_query);

  /* numbers outside their range refuse the start (wsirefusal.h) */
  wsi_refusal_class_init (GST_ELEMENT_CLASS (klass));
}

static void
gst_patch_reader_init (GstPatchReader * self)
{
  gst_pad_use_fixed_caps (WSI_POOL_ELEMENT_SRC_PAD (self));
  /* one wake-up of a queue downstream per run of patches, not per patch */
  wsi_pool_element_set_push_lists (WSI_POOL_ELEMENT (self), TRUE);

  self->threads = DEFAULT_THREADS;
  self->max_read_failures = DEFAULT_MAX_READ_FAILURES;
  self->resample_tolerance = DEFAULT_RESAMPLE_TOLERANCE;
  self->resample_tolerance_ppm = (gint) lround (DEFAULT_RESAMPLE_TOLERANCE * 1e6);
  wsi_reader_output_init (&self->output);
  self->slides = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
      (GDestroyNotify) wsi_reader_slide_free);
  wsi_read_tally_init (&self->tally);
  wsi_read_properties_init (&self->read, &read_property_spec);
}
