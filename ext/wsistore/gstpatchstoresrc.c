/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-patchstoresrc
 * @title: patchstoresrc
 *
 * patchstoresrc serves a patch store written by patchstoresink as the same
 * stream patchreader pushes: one square `video/x-raw` buffer per patch in
 * the store's pixel format, with a `WsiPatchMeta` holding the stored record
 * (unchanged), the slide path and file URI (`uris`, with `mpps` from the
 * record), the label and the slide's columns, so
 * patchfilter, patchaugment, patchviews and patchbatch work downstream as
 * they do behind patchreader. Two columns are added to every patch:
 * `store-epoch` (the epoch it is served in, from 0) and `store-index` (its
 * index in the store). `GST_BUFFER_OFFSET` is the position in the served
 * stream (from 0, continuing across epochs).
 *
 * From a `jpeg` store, when the element downstream asks for `image/jpeg`
 * by name before `video/x-raw` (patchviews does when decoding parts of a
 * patch can save work), the patches go out as stored: `image/jpeg`
 * buffers with `decoded-format` (the pixel format they decode to) and the
 * same meta, and the element downstream decodes only what it needs (for
 * patchviews, the regions of its crops). Put a `video/x-raw` capsfilter in
 * between to get decoded pixels instead; elements that take anything
 * (fakesink, an appsink without caps) get decoded pixels.
 *
 * A store of multi-view locations (patchviews into patchstoresink) is
 * served as patchviews pushes: `application/x-wsi-views`, one memory per
 * view, the meta's `view-names` and `views` as stored.
 *
 * The shards are memory-mapped: once the store is in the page cache an
 * epoch costs no disk read and no slide decode. A `raw` store whose rows
 * have the default stride (any 4-byte format; RGB or GRAY8 when a row is
 * a multiple of 4 bytes) is served without a copy: each buffer is
 * read-only memory of the mapping, which it keeps alive (an element that
 * writes to it gets a copy). #GstPatchStoreSrc:order
 * `sequential` serves the store in the order it was written, `shuffle` in
 * a permutation that is a pure function of (#GstPatchStoreSrc:seed, epoch):
 * every patch exactly once per epoch, a new order every epoch, the same
 * order whatever #GstPatchStoreSrc:threads. With
 * #GstPatchStoreSrc:world-size > 1 (or torchrun's RANK and WORLD_SIZE) each
 * rank serves a disjoint, equal share of every epoch: steps rank, rank +
 * world-size, … of the epoch's order (the last store-size mod world-size
 * entries of each epoch's order are left out so that the shares are
 * equal). #GstPatchStoreSrc:epochs epochs are served, then EOS (0 = for
 * ever).
 *
 * The store is checked when the element goes to PAUSED: a store without a
 * manifest (still being written or interrupted) is refused unless
 * #GstPatchStoreSrc:allow-incomplete, a store of another format version is
 * refused, and a shard that is missing, truncated or fails its checksum
 * (#GstPatchStoreSrc:verify) is left out with a warning naming it; its
 * patches are counted in #GstPatchStoreSrc:patches-skipped and the stream
 * goes on with the others.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 patchstoresrc location=store/ order=shuffle epochs=2 ! \
 *     patchbatch batch-size=64 ! fakesink
 * ]| Serves every patch of `store/` twice, in a new random order each
 * epoch, in batches of 64, and ends. patchstoresrc pushes from its own
 * thread (its decoding threads feed it), so it needs no `queue` before
 * patchbatch: one adds a thread hand-off per patch, 15-78 % more CPU per
 * raw patch in bench-store's (loaded) runs.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstpatchstoresrc.h"
#include "gstwsistoreelements.h"
#include "wsiorderedpool.h"
#include "wsistore.h"
#include "wsistorecodec.h"
#include "wsistoreorder.h"
#include "wsistorepatch.h"

#include <gst/video/video.h>
#include <gst/wsi/wsienumtype.h>
#include <gst/wsi/wsierrorrelay.h>
#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsirefusal.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (gst_patch_store_src_debug);
#define GST_CAT_DEFAULT gst_patch_store_src_debug

#define DEFAULT_THREADS 0
#define DEFAULT_EPOCHS 1
#define DEFAULT_SEED 0
#define DEFAULT_ORDER GST_PATCH_STORE_ORDER_SEQUENTIAL
#define MAX_WORLD_SIZE 65536

enum
{
  PROP_0,
  PROP_LOCATION,
  PROP_ORDER,
  PROP_SEED,
  PROP_EPOCHS,
  PROP_RANK,
  PROP_WORLD_SIZE,
  PROP_THREADS,
  PROP_ALLOW_INCOMPLETE,
  PROP_VERIFY,
  PROP_STORE_PATCHES,
  PROP_PATCHES_SERVED,
  PROP_PATCHES_SKIPPED,
  PROP_SHARDS_SKIPPED,
};

typedef enum
{
  GST_PATCH_STORE_ORDER_SEQUENTIAL,
  GST_PATCH_STORE_ORDER_SHUFFLE,
} GstPatchStoreOrder;

#define GST_TYPE_PATCH_STORE_ORDER (gst_patch_store_order_get_type ())
static GType
gst_patch_store_order_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_PATCH_STORE_ORDER_SEQUENTIAL, "The order the store was written in",
        "sequential"},
    {GST_PATCH_STORE_ORDER_SHUFFLE, "A permutation drawn from (seed, epoch)",
        "shuffle"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type, "GstPatchStoreOrder", values);
}

/* image/jpeg: a jpeg store's patches as stored, for a downstream element
 * that decodes (parts of) them itself (patchviews); decoded-format is what
 * the store's pixels decode to. */
#define JPEG_CAPS "image/jpeg, decoded-format = (string) { RGB, RGBA, " \
  "RGBx, BGRx }, width = (int) [ 1, 65536 ], height = (int) [ 1, 65536 ], " \
  "framerate = (fraction) 0/1, parsed = (boolean) true"

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw, format = (string) { RGB, RGBA, RGBx, "
        "BGRx, GRAY8 }, width = (int) [ 1, 65536 ], height = (int) [ 1, "
        "65536 ], framerate = (fraction) 0/1; " JPEG_CAPS "; "
        WSI_VIEWS_MEDIA_TYPE ", format = (string) { RGB, RGBA, RGBx, BGRx }, "
        "n-views = (int) [ 1, 16 ]"));

struct _GstPatchStoreSrc
{
  GstElement parent;

  GstPad *srcpad;

  /* properties, under the object lock */
  gchar *location;
  GstPatchStoreOrder order;
  guint64 seed;
  guint epochs;
  gint rank;
  gint world_size;
  guint threads;
  gboolean allow_incomplete;
  gboolean verify;

  /* counters, under the object lock */
  guint64 store_patches;
  guint64 patches_served;
  guint64 patches_skipped;
  guint shards_skipped;

  WsiOrderedPool *pool;
  GstTask *feeder;              /* queues the work, in stream order */
  GRecMutex feeder_lock;

  /* stream state: READY to PAUSED until PAUSED to READY */
  WsiStore *store;
  WsiStoreOrder *store_order;
  guint stream_epochs;
  WsiStorePixels pixels;

  /* feeder task only */
  gboolean sent_start;
  guint epoch;
  guint64 step;
  guint64 position;
  GstVideoInfo vinfo;
  gboolean have_caps;
  gboolean compressed;          /* image/jpeg negotiated at the first caps */
  guint caps_views;             /* n-views of the caps sent (views stores) */
};

#define gst_patch_store_src_parent_class parent_class
G_DEFINE_TYPE (GstPatchStoreSrc, gst_patch_store_src, GST_TYPE_ELEMENT);

GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (patchstoresrc, "patchstoresrc",
    GST_RANK_NONE, GST_TYPE_PATCH_STORE_SRC,
    wsistore_element_init (plugin);
    GST_DEBUG_CATEGORY_INIT (gst_patch_store_src_debug, "patchstoresrc", 0,
        "patch store source"));

/* ---- decoding (worker threads, no lock held; wsistorepatch.h) ---------- */

/* One libjpeg decompressor per worker, made once. */
static gpointer
store_thread_state_new (gpointer user_data)
{
  return wsi_store_codec_new ();
}

static void
store_thread_state_free (gpointer state, gpointer user_data)
{
  wsi_store_codec_free (state);
}

static GstBuffer *
store_process (gpointer data, gpointer state, gpointer user_data)
{
  GstPatchStoreSrc *self = user_data;

  return wsi_store_patch_make (data, &self->pixels, state);
}

/* In stream order: counts the patch, or warns about one that did not
 * decode (a damaged payload that passed the checks: verify=false). */
static GstBuffer *
store_finish (gpointer data, GstBuffer * result, gpointer user_data)
{
  GstPatchStoreSrc *self = user_data;
  WsiStorePatch *work = data;

  if (result == NULL && work->error != NULL)
    GST_ELEMENT_WARNING (self, STREAM, DECODE, ("Could not decode patch %u "
            "of shard \"%s\"; it is skipped.", work->local,
            work->shard->path), ("%s", work->error->message));
  GST_OBJECT_LOCK (self);
  if (result != NULL)
    self->patches_served++;
  else
    self->patches_skipped++;
  GST_OBJECT_UNLOCK (self);
  return result;
}

static void
store_work_clear (gpointer data, gpointer user_data)
{
  wsi_store_patch_clear (data);
}

static const WsiOrderedPoolFuncs store_pool_funcs = {
  .thread_state_new = store_thread_state_new,
  .thread_state_free = store_thread_state_free,
  .process = store_process,
  .finish = store_finish,
  .work_clear = store_work_clear,
};

/* ---- the feeder task: what to serve next -------------------------------- */

static GstFlowReturn
queue_stream_start (GstPatchStoreSrc * self)
{
  gchar *id = gst_pad_create_stream_id (self->srcpad, GST_ELEMENT (self),
      NULL);
  GstFlowReturn ret = wsi_ordered_pool_queue_event (self->pool,
      gst_event_new_stream_start (id));

  g_free (id);
  self->sent_start = TRUE;
  return ret;
}

/* Whether @peer (caps in order of preference) prefers image/jpeg: its
 * first structure that is JPEG we can send or raw video decides. */
static gboolean
peer_prefers_jpeg (GstCaps * peer, GstCaps * jpeg)
{
  guint i;

  for (i = 0; i < gst_caps_get_size (peer); i++) {
    GstCaps *one = gst_caps_copy_nth (peer, i);
    gboolean is_jpeg = gst_caps_can_intersect (one, jpeg);
    gboolean is_raw = gst_structure_has_name (gst_caps_get_structure (one, 0),
        "video/x-raw");

    gst_caps_unref (one);
    if (is_jpeg || is_raw)
      return is_jpeg;
  }
  return FALSE;
}

/* Whether downstream decodes the stored JPEGs itself: a jpeg store, and
 * a peer that asks for image/jpeg by name before raw video (patchviews
 * does when decoding can skip work, an image/jpeg capsfilter always; one
 * that takes anything, such as fakesink or an appsink without caps, gets
 * pixels). */
static gboolean
downstream_takes_jpeg (GstPatchStoreSrc * self)
{
  GstCaps *jpeg, *peer;
  gboolean takes;

  if (self->store->encoding != WSI_STORE_ENCODING_JPEG || self->store->views
      || self->pixels.channels == 1)
    return FALSE;
  jpeg = gst_caps_from_string (JPEG_CAPS);
  peer = gst_pad_peer_query_caps (self->srcpad, NULL);
  takes = !gst_caps_is_any (peer) && peer_prefers_jpeg (peer, jpeg);
  gst_caps_unref (peer);
  gst_caps_unref (jpeg);
  return takes;
}

static GstCaps *
make_caps (GstPatchStoreSrc * self, const WsiStoreEntry * entry)
{
  GstCaps *caps;

  if (self->store->views)
    return gst_caps_new_simple (WSI_VIEWS_MEDIA_TYPE, "format",
        G_TYPE_STRING, self->store->video_format, "n-views", G_TYPE_INT,
        (gint) entry->n_views, NULL);
  if (self->compressed)
    return gst_caps_new_simple ("image/jpeg", "decoded-format",
        G_TYPE_STRING, self->store->video_format, "width", G_TYPE_INT,
        GST_VIDEO_INFO_WIDTH (&self->vinfo), "height", G_TYPE_INT,
        GST_VIDEO_INFO_HEIGHT (&self->vinfo), "framerate", GST_TYPE_FRACTION,
        0, 1, "parsed", G_TYPE_BOOLEAN, TRUE, NULL);
  caps = gst_video_info_to_caps (&self->vinfo);
  gst_caps_set_simple (caps, "framerate", GST_TYPE_FRACTION, 0, 1,
      "pixel-aspect-ratio", GST_TYPE_FRACTION, 1, 1, NULL);
  return caps;
}

/* Caps (and the segment after the first caps) for patches like @entry;
 * the first caps also choose pixels or image/jpeg for the stream. */
static GstFlowReturn
queue_caps (GstPatchStoreSrc * self, const WsiStoreEntry * entry)
{
  GstVideoFormat format = gst_video_format_from_string
      (self->store->video_format);
  GstFlowReturn ret;
  GstCaps *caps;

  gst_video_info_set_format (&self->vinfo, format, entry->width,
      entry->height);
  if (!self->have_caps)
    self->compressed = downstream_takes_jpeg (self);
  caps = make_caps (self, entry);
  self->caps_views = entry->n_views;
  GST_INFO_OBJECT (self, "caps %" GST_PTR_FORMAT, caps);
  ret = wsi_ordered_pool_queue_event (self->pool, gst_event_new_caps (caps));
  gst_caps_unref (caps);
  if (ret == GST_FLOW_OK && !self->have_caps) {
    GstSegment segment;

    gst_segment_init (&segment, GST_FORMAT_TIME);
    ret = wsi_ordered_pool_queue_event (self->pool,
        gst_event_new_segment (&segment));
  }
  self->have_caps = TRUE;
  return ret;
}

static GstFlowReturn
queue_patch (GstPatchStoreSrc * self)
{
  WsiStorePatch work = { 0, };
  guint64 index = wsi_store_order_get (self->store_order, self->epoch,
      self->step);
  const WsiStoreEntry *entry;
  GstFlowReturn ret;

  work.shard = wsi_store_locate (self->store, index, &work.local);
  entry = &work.shard->entries[work.local];
  if (!self->have_caps || entry->width != (guint) GST_VIDEO_INFO_WIDTH (&self->vinfo)
      || entry->height != (guint) GST_VIDEO_INFO_HEIGHT (&self->vinfo)
      || entry->n_views != self->caps_views) {
    ret = queue_caps (self, entry);
    if (ret != GST_FLOW_OK)
      return ret;
  }
  work.stride = GST_VIDEO_INFO_PLANE_STRIDE (&self->vinfo, 0);
  /* raw rows need no decode: served from the mapping when tight rows are
   * what the caps say (3-byte pixels in rows not a multiple of 4 are not) */
  work.as_stored = self->compressed || (self->store->encoding ==
      WSI_STORE_ENCODING_RAW && !self->store->views && entry->size ==
      GST_VIDEO_INFO_SIZE (&self->vinfo) && entry->width *
      self->pixels.channels == work.stride);
  if (!work.as_stored && !self->store->views)
    work.buffer = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE
        (&self->vinfo), NULL);
  work.epoch = self->epoch;
  work.index = index;
  work.position = self->position;
  /* wrapping stored bytes costs less than waking a worker: done here */
  if (work.as_stored)
    ret = wsi_ordered_pool_queue_done (self->pool, &work,
        store_process (&work, NULL, self));
  else
    ret = wsi_ordered_pool_queue_work (self->pool, &work);
  if (ret == GST_FLOW_OK) {
    self->step++;
    self->position++;
  }
  return ret;
}

/* What the feeder does when downstream stopped the flow (as GstBaseSrc). */
static void
feeder_stop_on_flow (GstPatchStoreSrc * self, GstFlowReturn ret)
{
  GST_DEBUG_OBJECT (self, "feeder pausing: %s", gst_flow_get_name (ret));
  gst_task_pause (self->feeder);
  if (ret == GST_FLOW_FLUSHING)
    return;
  if (ret == GST_FLOW_NOT_LINKED || ret < GST_FLOW_EOS)
    GST_ELEMENT_FLOW_ERROR (self, ret);
  gst_pad_push_event (self->srcpad, gst_event_new_eos ());
}

static void
feeder_loop (gpointer data)
{
  GstPatchStoreSrc *self = data;
  guint64 per_epoch = wsi_store_order_count (self->store_order);
  GstFlowReturn ret = GST_FLOW_OK;

  if (!self->sent_start)
    ret = queue_stream_start (self);
  if (ret == GST_FLOW_OK && self->step >= per_epoch) {
    self->epoch++;
    self->step = 0;
  }
  if (ret == GST_FLOW_OK && (per_epoch == 0 || (self->stream_epochs > 0
              && self->epoch >= self->stream_epochs))) {
    GST_DEBUG_OBJECT (self, "served %u epochs: EOS", self->epoch);
    if (!self->have_caps && per_epoch == 0)
      GST_ELEMENT_WARNING (self, STREAM, FAILED, ("The patch store \"%s\" "
              "has fewer patches than ranks; this rank serves none.",
              self->store->dir), (NULL));
    wsi_ordered_pool_queue_event (self->pool, gst_event_new_eos ());
    gst_task_pause (self->feeder);
    return;
  }
  if (ret == GST_FLOW_OK)
    ret = queue_patch (self);
  if (ret != GST_FLOW_OK)
    feeder_stop_on_flow (self, ret);
}

/* ---- opening the store -------------------------------------------------- */

/* rank and world size: the properties, else torchrun's environment. */
static gboolean
resolve_rank (GstPatchStoreSrc * self, gint rank, gint world, guint * rank_out,
    guint * world_out)
{
  const gchar *env;

  if (world < 0) {
    env = g_getenv ("WORLD_SIZE");
    world = env ? (gint) g_ascii_strtoll (env, NULL, 10) : 1;
  }
  if (rank < 0) {
    env = g_getenv ("RANK");
    rank = env ? (gint) g_ascii_strtoll (env, NULL, 10) : 0;
  }
  if (world < 1 || world > MAX_WORLD_SIZE || rank < 0 || rank >= world) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("Rank %d of world size %d "
            "is not a valid split (0 <= rank < world-size).", rank, world),
        (NULL));
    return FALSE;
  }
  *rank_out = rank;
  *world_out = world;
  return TRUE;
}

static gboolean
gst_patch_store_src_open (GstPatchStoreSrc * self)
{
  gchar *location;
  gboolean allow_incomplete, verify, shuffle;
  guint64 seed;
  gint rank, world;
  guint rank_used, world_used, i;
  GError *error = NULL;

  GST_OBJECT_LOCK (self);
  location = g_strdup (self->location);
  allow_incomplete = self->allow_incomplete;
  verify = self->verify;
  shuffle = self->order == GST_PATCH_STORE_ORDER_SHUFFLE;
  seed = self->seed;
  rank = self->rank;
  world = self->world_size;
  self->stream_epochs = self->epochs;
  GST_OBJECT_UNLOCK (self);

  if (location == NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("No patch store given "
            "(set location)."), (NULL));
    return FALSE;
  }
  if (!resolve_rank (self, rank, world, &rank_used, &world_used)) {
    g_free (location);
    return FALSE;
  }
  self->store = wsi_store_open (location, allow_incomplete, verify, &error);
  g_free (location);
  if (self->store == NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, ("%s", error->message),
        (NULL));
    g_error_free (error);
    return FALSE;
  }
  if (shuffle && self->store->n_patches > G_MAXUINT32) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("The patch store \"%s\" "
            "holds more than 2^32 patches: too many to shuffle.",
            self->store->dir), (NULL));
    return FALSE;
  }
  if (!wsi_store_pixels_from_format (self->store->video_format,
          &self->pixels)) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, ("The patch store \"%s\" "
            "holds %s pixels, which this version does not serve.",
            self->store->dir, self->store->video_format), (NULL));
    return FALSE;
  }
  for (i = 0; i < self->store->warnings->len; i++)
    GST_ELEMENT_WARNING (self, RESOURCE, READ, ("%s",
            (gchar *) g_ptr_array_index (self->store->warnings, i)), (NULL));
  self->store_order = wsi_store_order_new (self->store->n_patches, shuffle,
      seed, rank_used, world_used);
  GST_OBJECT_LOCK (self);
  self->store_patches = self->store->n_patches;
  self->patches_skipped = self->store->patches_skipped;
  self->shards_skipped = self->store->shards_skipped;
  self->patches_served = 0;
  GST_OBJECT_UNLOCK (self);
  GST_INFO_OBJECT (self, "store %s: %" G_GUINT64_FORMAT " patches in %u "
      "shards, rank %u of %u serves %" G_GUINT64_FORMAT " per epoch",
      self->store->dir, self->store->n_patches, self->store->shards->len,
      rank_used, world_used, wsi_store_order_count (self->store_order));
  return TRUE;
}

static void
gst_patch_store_src_close (GstPatchStoreSrc * self)
{
  g_clear_pointer (&self->store_order, wsi_store_order_free);
  g_clear_pointer (&self->store, wsi_store_free);
}

/* ---- activation, events, state ------------------------------------------ */

static void
reset_feeder_state (GstPatchStoreSrc * self)
{
  self->sent_start = FALSE;
  self->have_caps = FALSE;
  self->compressed = FALSE;
  self->epoch = 0;
  self->step = 0;
  self->position = 0;
}

static gboolean
gst_patch_store_src_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active)
{
  GstPatchStoreSrc *self = GST_PATCH_STORE_SRC (parent);

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (active) {
    wsi_ordered_pool_reset (self->pool);
    reset_feeder_state (self);
    if (!wsi_ordered_pool_start_task (self->pool))
      return FALSE;
    return gst_task_start (self->feeder);
  }
  /* Unblocks the feeder waiting for room, then stops it between two
   * iterations (it holds its lock while it runs one), so that a pause it
   * makes cannot undo the stop; then joins both tasks. */
  wsi_ordered_pool_set_flushing (self->pool);
  g_rec_mutex_lock (&self->feeder_lock);
  gst_task_stop (self->feeder);
  g_rec_mutex_unlock (&self->feeder_lock);
  gst_task_join (self->feeder);
  wsi_ordered_pool_stop_task (self->pool);
  wsi_ordered_pool_reset (self->pool);
  return TRUE;
}

static gboolean
gst_patch_store_src_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_SEEK:
      /* a stream of patches has no timeline to seek in */
      gst_event_unref (event);
      return FALSE;
    default:
      return gst_pad_event_default (pad, parent, event);
  }
}

static GstStateChangeReturn
gst_patch_store_src_change_state (GstElement * element,
    GstStateChange transition)
{
  GstPatchStoreSrc *self = GST_PATCH_STORE_SRC (element);
  GstStateChangeReturn ret;
  guint threads;

  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
    if (!gst_patch_store_src_open (self)) {
      gst_patch_store_src_close (self);
      return GST_STATE_CHANGE_FAILURE;
    }
    GST_OBJECT_LOCK (self);
    threads = self->threads ? self->threads :
        wsi_ordered_pool_auto_threads (WSI_ORDERED_POOL_MAX_THREADS);
    GST_OBJECT_UNLOCK (self);
    wsi_ordered_pool_start_workers (self->pool, threads, "patchstoresrc");
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);

  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY
      || (transition == GST_STATE_CHANGE_READY_TO_PAUSED
          && ret == GST_STATE_CHANGE_FAILURE)) {
    wsi_ordered_pool_stop_workers (self->pool);
    gst_patch_store_src_close (self);
  }
  return ret;
}

/* ---- properties --------------------------------------------------------- */

static void
gst_patch_store_src_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstPatchStoreSrc *self = GST_PATCH_STORE_SRC (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_LOCATION:
      g_free (self->location);
      self->location = g_value_dup_string (value);
      break;
    case PROP_ORDER:
      self->order = g_value_get_enum (value);
      break;
    case PROP_SEED:
      self->seed = g_value_get_uint64 (value);
      break;
    case PROP_EPOCHS:
      self->epochs = g_value_get_uint (value);
      break;
    case PROP_RANK:
      self->rank = g_value_get_int (value);
      break;
    case PROP_WORLD_SIZE:
      self->world_size = g_value_get_int (value);
      break;
    case PROP_THREADS:
      self->threads = g_value_get_uint (value);
      break;
    case PROP_ALLOW_INCOMPLETE:
      self->allow_incomplete = g_value_get_boolean (value);
      break;
    case PROP_VERIFY:
      self->verify = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_store_src_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstPatchStoreSrc *self = GST_PATCH_STORE_SRC (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_LOCATION:
      g_value_set_string (value, self->location);
      break;
    case PROP_ORDER:
      g_value_set_enum (value, self->order);
      break;
    case PROP_SEED:
      g_value_set_uint64 (value, self->seed);
      break;
    case PROP_EPOCHS:
      g_value_set_uint (value, self->epochs);
      break;
    case PROP_RANK:
      g_value_set_int (value, self->rank);
      break;
    case PROP_WORLD_SIZE:
      g_value_set_int (value, self->world_size);
      break;
    case PROP_THREADS:
      g_value_set_uint (value, self->threads);
      break;
    case PROP_ALLOW_INCOMPLETE:
      g_value_set_boolean (value, self->allow_incomplete);
      break;
    case PROP_VERIFY:
      g_value_set_boolean (value, self->verify);
      break;
    case PROP_STORE_PATCHES:
      g_value_set_uint64 (value, self->store_patches);
      break;
    case PROP_PATCHES_SERVED:
      g_value_set_uint64 (value, self->patches_served);
      break;
    case PROP_PATCHES_SKIPPED:
      g_value_set_uint64 (value, self->patches_skipped);
      break;
    case PROP_SHARDS_SKIPPED:
      g_value_set_uint (value, self->shards_skipped);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_store_src_finalize (GObject * object)
{
  GstPatchStoreSrc *self = GST_PATCH_STORE_SRC (object);

  wsi_ordered_pool_stop_workers (self->pool);
  wsi_ordered_pool_free (self->pool);
  gst_patch_store_src_close (self);
  gst_object_unref (self->feeder);
  g_rec_mutex_clear (&self->feeder_lock);
  g_free (self->location);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
install_properties (GObjectClass * gobject_class)
{
  const GParamFlags rw_ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;
  const GParamFlags counter = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  g_object_class_install_property (gobject_class, PROP_LOCATION,
      g_param_spec_string ("location", "Location",
          "The patch store directory (written by patchstoresink)", NULL,
          rw_ready));
  g_object_class_install_property (gobject_class, PROP_ORDER,
      g_param_spec_enum ("order", "Order",
          "sequential = the order the store was written in; shuffle = a "
          "permutation that is a pure function of (seed, epoch)",
          GST_TYPE_PATCH_STORE_ORDER, DEFAULT_ORDER, rw_ready));
  g_object_class_install_property (gobject_class, PROP_SEED,
      wsi_param_spec_uint64 ("seed", "Seed",
          "Seed of the shuffle (0..2^64-1)", 0, G_MAXUINT64, DEFAULT_SEED,
          rw_ready));
  g_object_class_install_property (gobject_class, PROP_EPOCHS,
      wsi_param_spec_uint ("epochs", "Epochs",
          "Epochs to serve before EOS, 0 = serve for ever (each epoch "
          "serves every patch of this rank's share once)", 0, G_MAXUINT,
          DEFAULT_EPOCHS, rw_ready));
  g_object_class_install_property (gobject_class, PROP_RANK,
      wsi_param_spec_int ("rank", "Rank",
          "This process's rank, 0..world-size-1; -1 = the RANK environment "
          "variable (torchrun), else 0", -1, MAX_WORLD_SIZE - 1, -1,
          rw_ready));
  g_object_class_install_property (gobject_class, PROP_WORLD_SIZE,
      wsi_param_spec_int ("world-size", "World size",
          "Processes that share the store, 1..65536; -1 = the WORLD_SIZE "
          "environment variable (torchrun), else 1", -1, MAX_WORLD_SIZE, -1,
          rw_ready));
  g_object_class_install_property (gobject_class, PROP_THREADS,
      wsi_ordered_pool_param_spec_threads ("Decoding threads",
          DEFAULT_THREADS));
  g_object_class_install_property (gobject_class, PROP_ALLOW_INCOMPLETE,
      g_param_spec_boolean ("allow-incomplete", "Allow incomplete",
          "Serve the complete shards of a store that has no manifest yet "
          "(still being written, or interrupted); false = refuse it", FALSE,
          rw_ready));
  g_object_class_install_property (gobject_class, PROP_VERIFY,
      g_param_spec_boolean ("verify", "Verify",
          "Check every shard's crc32 when the store is opened (reads the "
          "whole store once, at about 1 GB/s, and warms the page cache); "
          "false = check only the shards' structure", TRUE, rw_ready));
  g_object_class_install_property (gobject_class, PROP_STORE_PATCHES,
      wsi_param_spec_uint64 ("store-patches", "Store patches",
          "Usable patches in the store, all ranks (count, set at PAUSED)", 0,
          G_MAXUINT64, 0, counter));
  g_object_class_install_property (gobject_class, PROP_PATCHES_SERVED,
      wsi_param_spec_uint64 ("patches-served", "Patches served",
          "Patches pushed since the last READY to PAUSED change (count)", 0,
          G_MAXUINT64, 0, counter));
  g_object_class_install_property (gobject_class, PROP_PATCHES_SKIPPED,
      wsi_param_spec_uint64 ("patches-skipped", "Patches skipped",
          "Patches not served: those of shards left out because they are "
          "missing, truncated or damaged (per the manifest), and patches "
          "that did not decode (count)", 0, G_MAXUINT64, 0, counter));
  g_object_class_install_property (gobject_class, PROP_SHARDS_SKIPPED,
      wsi_param_spec_uint ("shards-skipped", "Shards skipped",
          "Shards left out because they are missing, truncated or damaged "
          "(count)", 0, G_MAXUINT, 0, counter));
}

static void
gst_patch_store_src_class_init (GstPatchStoreSrcClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  /* every error of ours must end the application's main loop, however
   * early it comes (wsierrorrelay.h) */
  wsi_error_relay_class_init (element_class);
  gobject_class->set_property = gst_patch_store_src_set_property;
  gobject_class->get_property = gst_patch_store_src_get_property;
  gobject_class->finalize = gst_patch_store_src_finalize;
  install_properties (gobject_class);

  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Patch store source", "Source/File",
      "Serves the patches of an on-disk patch store, in order or shuffled "
      "per epoch, split across ranks",
      "gst-wsi developers");
  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_patch_store_src_change_state);

  /* numbers outside their range refuse the start (wsirefusal.h) */
  wsi_refusal_class_init (GST_ELEMENT_CLASS (klass));
}

static void
gst_patch_store_src_init (GstPatchStoreSrc * self)
{
  self->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  gst_pad_set_activatemode_function (self->srcpad,
      GST_DEBUG_FUNCPTR (gst_patch_store_src_activate_mode));
  gst_pad_set_event_function (self->srcpad,
      GST_DEBUG_FUNCPTR (gst_patch_store_src_event));
  gst_pad_use_fixed_caps (self->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  self->order = DEFAULT_ORDER;
  self->seed = DEFAULT_SEED;
  self->epochs = DEFAULT_EPOCHS;
  self->rank = -1;
  self->world_size = -1;
  self->threads = DEFAULT_THREADS;
  self->verify = TRUE;
  self->pool = wsi_ordered_pool_new (self->srcpad, sizeof (WsiStorePatch),
      &store_pool_funcs, self);
  g_rec_mutex_init (&self->feeder_lock);
  self->feeder = gst_task_new (feeder_loop, self, NULL);
  gst_task_set_lock (self->feeder, &self->feeder_lock);
}
