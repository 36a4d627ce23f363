/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-patchinterleave
 * @title: patchinterleave
 *
 * patchinterleave mixes the coordinate plans of several slides so that
 * consecutive patches do not all come from the same slide, which is what a
 * training loop wants from a shuffled data set.
 *
 * Every input buffer is one slide's whole plan: packed #WsiPatchRecord
 * structures (`application/x-wsi-patches`, as made by patchsampler) with the
 * slide's `WsiSlideMeta`. The element keeps a pool of
 * #GstPatchInterleave:pool-size slides. Once the pool is full it visits the
 * pooled slides round-robin and pushes, for each visit, one buffer holding
 * the next #GstPatchInterleave:patches-per-visit records of that slide, with
 * a copy of the slide's `WsiSlideMeta`. A slide whose records run out leaves
 * the pool; its slot in the rotation is taken by the next plan from upstream
 * (the chain function returns to fetch it), so visits continue with the
 * slide after the exhausted one. At EOS the remaining slides are drained
 * round-robin, then EOS is forwarded. Empty plans (e.g. slides rejected by
 * tissuemask) are skipped; a plan that is not a whole number of 64-byte
 * records is a stream error.
 *
 * The `sequence` field of every record is numbered here, its one writer,
 * in output order (0, 1, 2, ...; patchsampler leaves it 0); it restarts after a flush and after going back to READY.
 * `GST_BUFFER_OFFSET` is the sequence of the buffer's first record and
 * `GST_BUFFER_OFFSET_END` the sequence after its last one. Buffers carry no
 * timestamps.
 *
 * To resume a job, #GstPatchInterleave:skip-patches drops every record whose
 * sequence number is below it, after the numbering (the output order
 * depends on the pool, so only here is the sequence known). The numbering
 * itself is unchanged, so the resumed stream is identical to the tail of
 * the uninterrupted one. Upstream replays the planning of the skipped part
 * (cheap coordinate work on the tissue masks), but no pixel of a skipped
 * patch is ever read, since patchreader never sees its record. To resume at
 * batch k of batch size B, set skip-patches to k × B.
 *
 * Serialized events other than EOS and the planner's delivery check
 * (CAPS, SEGMENT, tags, other custom events) are forwarded at once, even while slides wait in the pool, so they may
 * overtake records of earlier plans: coordinate buffers are not
 * media with a timeline, and holding events back until the pool drains
 * would delay them by an unbounded number of slides. A flush or a return
 * to READY discards the pool.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/slides ! tissuemask ! queue ! \
 *     patchsampler ! patchinterleave pool-size=16 patches-per-visit=8 ! \
 *     patchreader ! queue ! patchbatch batch-size=64 ! fakesink sync=false
 * ]| Mixes patches from 16 slides at a time, 8 consecutive patches per slide.
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/slides seed=7 ! tissuemask ! \
 *     queue ! patchsampler ! patchinterleave skip-patches=6400 ! \
 *     patchreader ! queue ! patchbatch batch-size=64 ! fakesink sync=false
 * ]| Resumes the same stream at batch 100 of 64 patches.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/wsi/wsiannotation.h>
#include <gst/wsi/wsierrorrelay.h>
#include <gst/wsi/wsievent.h>
#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsirefusal.h>

#include "gstpatchinterleave.h"
#include "gstwsipatchelements.h"

GST_DEBUG_CATEGORY_STATIC (gst_patch_interleave_debug);
#define GST_CAT_DEFAULT gst_patch_interleave_debug

#define DEFAULT_POOL_SIZE 8
#define MAX_POOL_SIZE 1024
#define DEFAULT_PATCHES_PER_VISIT 4
#define MAX_PATCHES_PER_VISIT 65536
#define DEFAULT_SKIP_PATCHES 0

enum
{
  PROP_0,
  PROP_POOL_SIZE,
  PROP_PATCHES_PER_VISIT,
  PROP_SLIDES_IN_POOL,
  PROP_SKIP_PATCHES,
};

/* One slide waiting in the pool: its plan stays mapped until it leaves. */
typedef struct
{
  GstBuffer *plan;
  GstMapInfo map;
  const WsiPatchRecord *records;
  guint n_records;
  guint next;                   /* first record not yet pushed */
} WsiPooledSlide;

struct _GstPatchInterleave
{
  GstElement parent;

  GstPad *sinkpad;
  GstPad *srcpad;

  /* properties, under the object lock */
  guint pool_size;
  guint patches_per_visit;
  guint64 skip_patches;

  /* streaming state, touched only with the sink pad's stream lock held
   * (chain, serialized events, and state changes once pads are inactive) */
  GPtrArray *slots;             /* WsiPooledSlide*, NULL = free slot */
  guint cursor;                 /* slot to visit next */
  guint64 next_sequence;
  gint n_pooled;                /* atomic: read by the slides-in-pool getter */
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (WSI_PATCHES_MEDIA_TYPE));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (WSI_PATCHES_MEDIA_TYPE));

#define gst_patch_interleave_parent_class parent_class
G_DEFINE_TYPE (GstPatchInterleave, gst_patch_interleave, GST_TYPE_ELEMENT);

static void
do_element_init (GstPlugin * plugin)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_patch_interleave_debug, "patchinterleave", 0,
        "Round-robin interleaving of slide coordinate plans");
    wsipatch_element_init (plugin);
    g_once_init_leave (&done, 1);
  }
}

GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (patchinterleave, "patchinterleave",
    GST_RANK_NONE, GST_TYPE_PATCH_INTERLEAVE, do_element_init (plugin));

/* ---- the pool ---------------------------------------------------------- */

static void
wsi_pooled_slide_free (WsiPooledSlide * slide)
{
  gst_buffer_unmap (slide->plan, &slide->map);
  gst_buffer_unref (slide->plan);
  g_free (slide);
}

static const gchar *
plan_slide_path (GstBuffer * plan)
{
  GstStructure *meta = wsi_slide_meta_get (plan);
  const gchar *path = meta ? gst_structure_get_string (meta, "path") : NULL;

  return path ? path : "(unnamed slide)";
}

/* Takes @plan. Returns NULL (after posting an error) when it is not a
 * whole number of records. */
static WsiPooledSlide *
wsi_pooled_slide_new (GstPatchInterleave * self, GstBuffer * plan)
{
  WsiPooledSlide *slide = g_new0 (WsiPooledSlide, 1);

  slide->plan = plan;
  if (!gst_buffer_map (plan, &slide->map, GST_MAP_READ)) {
    GST_ELEMENT_ERROR (self, RESOURCE, READ,
        ("Could not read the coordinate plan of slide %s.",
            plan_slide_path (plan)), ("gst_buffer_map failed"));
    gst_buffer_unref (plan);
    g_free (slide);
    return NULL;
  }
  if (slide->map.size % sizeof (WsiPatchRecord) != 0) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("The coordinate plan of slide %s is %" G_GSIZE_FORMAT " bytes, "
            "not a whole number of %u-byte patch records.",
            plan_slide_path (plan), slide->map.size,
            (guint) sizeof (WsiPatchRecord)), (NULL));
    wsi_pooled_slide_free (slide);
    return NULL;
  }
  slide->records = (const WsiPatchRecord *) slide->map.data;
  slide->n_records = slide->map.size / sizeof (WsiPatchRecord);
  return slide;
}

static void
pool_add (GstPatchInterleave * self, WsiPooledSlide * slide)
{
  guint i;

  /* The new slide takes the slot of the one that ran out, so it keeps that
   * slide's place in the rotation. */
  for (i = 0; i < self->slots->len; i++) {
    if (g_ptr_array_index (self->slots, i) == NULL) {
      g_ptr_array_index (self->slots, i) = slide;
      goto added;
    }
  }
  g_ptr_array_add (self->slots, slide);

added:
  g_atomic_int_inc (&self->n_pooled);
  GST_DEBUG_OBJECT (self, "slide %s joins the pool with %u records (%d pooled)",
      plan_slide_path (slide->plan), slide->n_records,
      g_atomic_int_get (&self->n_pooled));
}

static void
pool_remove (GstPatchInterleave * self, guint slot)
{
  WsiPooledSlide *slide = g_ptr_array_index (self->slots, slot);

  GST_DEBUG_OBJECT (self, "slide %s leaves the pool",
      plan_slide_path (slide->plan));
  wsi_pooled_slide_free (slide);
  g_ptr_array_index (self->slots, slot) = NULL;
  g_atomic_int_add (&self->n_pooled, -1);
}

static void
pool_discard (GstPatchInterleave * self)
{
  guint i;

  for (i = 0; i < self->slots->len; i++) {
    if (g_ptr_array_index (self->slots, i) != NULL)
      pool_remove (self, i);
  }
  g_ptr_array_set_size (self->slots, 0);
  self->cursor = 0;
}

static void
reset_stream (GstPatchInterleave * self)
{
  pool_discard (self);
  self->next_sequence = 0;
}

/* Index of the first occupied slot at or after the cursor; the pool must
 * not be empty. */
static guint
pool_next_occupied (GstPatchInterleave * self)
{
  guint len = self->slots->len;
  guint i;

  for (i = 0; i < len; i++) {
    guint slot = (self->cursor + i) % len;

    if (g_ptr_array_index (self->slots, slot) != NULL)
      return slot;
  }
  g_assert_not_reached ();
  return 0;
}

/* ---- visits ------------------------------------------------------------ */

/* Annotated plans carry one class per record (wsiannotation.h): keeps
 * those of the records [@first, @first + @n) that @out holds. */
static void
slice_patch_classes (GstBuffer * out, guint first, guint n)
{
  GstStructure *meta = wsi_slide_meta_get (out);
  const GValue *value = meta ? gst_structure_get_value (meta,
      WSI_PATCH_CLASSES_FIELD) : NULL;
  GBytes *all, *part;

  if (value == NULL || !G_VALUE_HOLDS (value, G_TYPE_BYTES))
    return;
  all = g_value_get_boxed (value);
  if (all == NULL || g_bytes_get_size (all) < (first + n) * sizeof (gint32))
    return;
  part = g_bytes_new_from_bytes (all, first * sizeof (gint32),
      n * sizeof (gint32));
  gst_structure_set (meta, WSI_PATCH_CLASSES_FIELD, G_TYPE_BYTES, part, NULL);
  g_bytes_unref (part);
}

/* Takes the next up-to-@per_visit records of @slide and numbers them in
 * output order. Returns a new buffer with those whose sequence is at least
 * @skip, or NULL when all of them are skipped (a resumed run replays the
 * numbering of the skipped part, but nothing downstream sees it). */
static GstBuffer *
make_visit_buffer (GstPatchInterleave * self, WsiPooledSlide * slide,
    guint per_visit, guint64 skip)
{
  guint n = MIN (per_visit, slide->n_records - slide->next);
  guint64 first = self->next_sequence;
  guint n_skipped = skip > first ? (guint) MIN (skip - first, n) : 0;
  guint n_kept = n - n_skipped;
  WsiPatchRecord *records;
  GstBuffer *out = NULL;
  guint i;

  if (n_kept > 0) {
    records = g_new (WsiPatchRecord, n_kept);
    memcpy (records, slide->records + slide->next + n_skipped,
        n_kept * sizeof (WsiPatchRecord));
    for (i = 0; i < n_kept; i++)
      records[i].sequence = first + n_skipped + i;

    out = gst_buffer_new_wrapped (records, n_kept * sizeof (WsiPatchRecord));
    GST_BUFFER_OFFSET (out) = first + n_skipped;
    GST_BUFFER_OFFSET_END (out) = first + n;
    wsi_slide_meta_copy (out, slide->plan);
    slice_patch_classes (out, slide->next + n_skipped, n_kept);
  }

  slide->next += n;
  self->next_sequence += n;
  return out;
}

static GstFlowReturn
push_one_visit (GstPatchInterleave * self, guint per_visit, guint64 skip)
{
  guint slot = pool_next_occupied (self);
  WsiPooledSlide *slide = g_ptr_array_index (self->slots, slot);
  GstBuffer *out = make_visit_buffer (self, slide, per_visit, skip);

  self->cursor = (slot + 1) % self->slots->len;
  if (slide->next == slide->n_records)
    pool_remove (self, slot);

  if (out == NULL)
    return GST_FLOW_OK;
  GST_LOG_OBJECT (self, "visit of slot %u: records %" G_GUINT64_FORMAT
      "..%" G_GUINT64_FORMAT, slot, GST_BUFFER_OFFSET (out),
      GST_BUFFER_OFFSET_END (out));
  return gst_pad_push (self->srcpad, out);
}

/* Pushes visits while at least @min_pooled slides are pooled. */
static GstFlowReturn
push_visits (GstPatchInterleave * self, guint min_pooled, guint per_visit,
    guint64 skip)
{
  GstFlowReturn ret = GST_FLOW_OK;

  while (ret == GST_FLOW_OK && self->n_pooled > 0
      && (guint) self->n_pooled >= min_pooled)
    ret = push_one_visit (self, per_visit, skip);
  return ret;
}

/* ---- pads -------------------------------------------------------------- */

static void
read_settings (GstPatchInterleave * self, guint * pool_size, guint * per_visit,
    guint64 * skip)
{
  GST_OBJECT_LOCK (self);
  *pool_size = self->pool_size;
  *per_visit = self->patches_per_visit;
  *skip = self->skip_patches;
  GST_OBJECT_UNLOCK (self);
}

/* Answers wsislidesrc's pool-size query (its prepare-ahead follows our
 * pool); everything else as any pad does. */
static gboolean
gst_patch_interleave_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  GstPatchInterleave *self = GST_PATCH_INTERLEAVE (parent);
  guint pool_size, per_visit;
  guint64 skip;

  if (!wsi_query_parse_pool_size (query, NULL))
    return gst_pad_query_default (pad, parent, query);
  read_settings (self, &pool_size, &per_visit, &skip);
  wsi_query_set_pool_size (query, pool_size);
  return TRUE;
}

static GstFlowReturn
gst_patch_interleave_chain (GstPad * pad, GstObject * parent, GstBuffer * plan)
{
  GstPatchInterleave *self = GST_PATCH_INTERLEAVE (parent);
  WsiPooledSlide *slide;
  guint pool_size, per_visit;
  guint64 skip;

  read_settings (self, &pool_size, &per_visit, &skip);

  slide = wsi_pooled_slide_new (self, plan);
  if (slide == NULL)
    return GST_FLOW_ERROR;
  if (slide->n_records == 0) {
    /* e.g. a slide rejected by tissuemask: nothing to visit */
    GST_DEBUG_OBJECT (self, "slide %s has no patches, skipped",
        plan_slide_path (slide->plan));
    wsi_pooled_slide_free (slide);
    return GST_FLOW_OK;
  }

  pool_add (self, slide);
  /* Returning as soon as one slide runs out lets upstream replace it. */
  return push_visits (self, pool_size, per_visit, skip);
}

static void
drain_pool (GstPatchInterleave * self)
{
  guint pool_size, per_visit;
  guint64 skip;
  GstFlowReturn ret;

  read_settings (self, &pool_size, &per_visit, &skip);
  ret = push_visits (self, 1, per_visit, skip);
  if (ret == GST_FLOW_NOT_LINKED || ret < GST_FLOW_EOS) {
    /* Nobody upstream sees a flow return from an event: report it here. */
    GST_ELEMENT_FLOW_ERROR (self, ret);
  }
  if (ret != GST_FLOW_OK)
    pool_discard (self);
}

/* At EOS: a resume point past the stream's end would otherwise deliver
 * nothing and end as if the job were done. */
static void
check_skip_within_stream (GstPatchInterleave * self)
{
  guint pool_size, per_visit;
  guint64 skip;

  read_settings (self, &pool_size, &per_visit, &skip);
  if (skip > 0 && skip > self->next_sequence)
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("skip-patches=%" G_GUINT64_FORMAT " is past the end of the stream, "
            "which holds %" G_GUINT64_FORMAT " patches: nothing was "
            "delivered.", skip, self->next_sequence),
        ("resuming at batch k of batch size B needs k x B <= the stream's "
            "patches"));
}

static gboolean
gst_patch_interleave_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstPatchInterleave *self = GST_PATCH_INTERLEAVE (parent);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_EOS:
      drain_pool (self);
      check_skip_within_stream (self);
      break;
    case GST_EVENT_CUSTOM_DOWNSTREAM:
      /* The planner asks whether everything it planned was delivered:
       * what the pool holds must go first. */
      if (wsi_event_parse_delivery_check (event, NULL))
        drain_pool (self);
      break;
    case GST_EVENT_FLUSH_STOP:
      reset_stream (self);
      break;
    default:
      break;
  }
  return gst_pad_event_default (pad, parent, event);
}

/* ---- GObject / GstElement ---------------------------------------------- */

static void
gst_patch_interleave_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstPatchInterleave *self = GST_PATCH_INTERLEAVE (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_POOL_SIZE:
      self->pool_size = g_value_get_uint (value);
      break;
    case PROP_PATCHES_PER_VISIT:
      self->patches_per_visit = g_value_get_uint (value);
      break;
    case PROP_SKIP_PATCHES:
      self->skip_patches = g_value_get_uint64 (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_interleave_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstPatchInterleave *self = GST_PATCH_INTERLEAVE (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_POOL_SIZE:
      g_value_set_uint (value, self->pool_size);
      break;
    case PROP_PATCHES_PER_VISIT:
      g_value_set_uint (value, self->patches_per_visit);
      break;
    case PROP_SLIDES_IN_POOL:
      g_value_set_uint (value, g_atomic_int_get (&self->n_pooled));
      break;
    case PROP_SKIP_PATCHES:
      g_value_set_uint64 (value, self->skip_patches);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static GstStateChangeReturn
gst_patch_interleave_change_state (GstElement * element,
    GstStateChange transition)
{
  GstPatchInterleave *self = GST_PATCH_INTERLEAVE (element);
  GstStateChangeReturn ret;

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  if (ret == GST_STATE_CHANGE_FAILURE)
    return ret;

  switch (transition) {
    case GST_STATE_CHANGE_PAUSED_TO_READY:
    case GST_STATE_CHANGE_READY_TO_NULL:
      /* pads are inactive now: no chain function can be running */
      reset_stream (self);
      break;
    default:
      break;
  }
  return ret;
}

static void
gst_patch_interleave_finalize (GObject * object)
{
  GstPatchInterleave *self = GST_PATCH_INTERLEAVE (object);

  pool_discard (self);
  g_ptr_array_unref (self->slots);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_patch_interleave_class_init (GstPatchInterleaveClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  /* every error of ours must end the application's main loop, however
   * early it comes (wsierrorrelay.h) */
  wsi_error_relay_class_init (element_class);
  gobject_class->set_property = gst_patch_interleave_set_property;
  gobject_class->get_property = gst_patch_interleave_get_property;
  gobject_class->finalize = gst_patch_interleave_finalize;

  g_object_class_install_property (gobject_class, PROP_POOL_SIZE,
      wsi_param_spec_uint ("pool-size", "Pool size",
          "Number of slides visited round-robin (slides, 1 to 1024, "
          "default 8). Visits start once this many slides are pooled; "
          "a change takes effect with the next input plan",
          1, MAX_POOL_SIZE, DEFAULT_POOL_SIZE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));

  g_object_class_install_property (gobject_class, PROP_PATCHES_PER_VISIT,
      wsi_param_spec_uint ("patches-per-visit", "Patches per visit",
          "Records taken from one slide before moving on to the next "
          "(patches, 1 to 65536, default 4); one output buffer per visit",
          1, MAX_PATCHES_PER_VISIT, DEFAULT_PATCHES_PER_VISIT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));

  g_object_class_install_property (gobject_class, PROP_SKIP_PATCHES,
      wsi_param_spec_uint64 ("skip-patches", "Skip patches",
          "Resume: records whose sequence number (in output order) is below "
          "this are dropped instead of pushed; numbering is unchanged, so "
          "the stream is the tail of the uninterrupted one. To resume at "
          "batch k of size B set k * B (patches, 0 to 2^64-1, default 0)",
          0, G_MAXUINT64, DEFAULT_SKIP_PATCHES,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  g_object_class_install_property (gobject_class, PROP_SLIDES_IN_POOL,
      wsi_param_spec_uint ("slides-in-pool", "Slides in pool",
          "Slides currently held in the pool (read-only, 0 to 1024)",
          0, MAX_POOL_SIZE, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Patch plan interleaver", "Filter/Converter",
      "Mixes the coordinate plans of a pool of slides round-robin, "
      "a few patches per slide visit, and numbers the patches in order",
      "gst-wsi developers");

  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_patch_interleave_change_state);

  /* numbers outside their range refuse the start (wsirefusal.h) */
  wsi_refusal_class_init (GST_ELEMENT_CLASS (klass));
}

static void
gst_patch_interleave_init (GstPatchInterleave * self)
{
  self->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_patch_interleave_chain));
  gst_pad_set_event_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_patch_interleave_sink_event));
  gst_pad_set_query_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_patch_interleave_sink_query));
  GST_PAD_SET_PROXY_CAPS (self->sinkpad);
  GST_PAD_SET_PROXY_ALLOCATION (self->sinkpad);
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);

  self->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  GST_PAD_SET_PROXY_CAPS (self->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  self->pool_size = DEFAULT_POOL_SIZE;
  self->patches_per_visit = DEFAULT_PATCHES_PER_VISIT;
  self->skip_patches = DEFAULT_SKIP_PATCHES;
  self->slots = g_ptr_array_new ();
}
