/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsistatsbook.c: see wsistatsbook.h. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* pthread_getname_np */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsiworkmeta.h>

#include "wsistatsbook.h"
#include "wsistatssnapshot.h"
#include "wsitimeline.h"

GST_DEBUG_CATEGORY_EXTERN (gst_wsi_stats_debug);
#define GST_CAT_DEFAULT gst_wsi_stats_debug

#define MAX_DEPTH 64            /* nested pushes tracked per thread */
#define NAMED_WORKERS 64        /* worker lanes named per pushing thread */
#define ORIGIN_SAMPLES 256      /* hooks that calibrate the timeline origin */
/* A push into an appsink (or a queue without queue's "overrun" signal)
 * taking longer than this waited for room: drawn as "blocked". Its chain
 * otherwise only enqueues, in microseconds. */
#define BLOCKED_MIN_NS (1 * GST_MSECOND)

/* ---- per-thread stack of open pushes ------------------------------------ */

typedef struct
{
  WsiElementStats *pusher;
  WsiElementStats *receiver;    /* NULL: a bin or ghost pad, transparent */
  GstClockTime start;
  guint64 nested;               /* time spent in pushes made from inside */
  gboolean is_pull;
  gboolean full;                /* the receiver said it was full */
} WsiFrame;

typedef struct
{
  WsiFrame frames[MAX_DEPTH];
  guint depth;
  guint overflow;
  WsiElementStats *last_pusher; /* depth-0 push that ended last */
  GstClockTime last_end;
  guint generation;
  gint tid;
  gboolean named;
  gconstpointer task;           /* the pad task it was named after */
  /* pool workers whose lane this (pushing) thread has named */
  gint named_workers[NAMED_WORKERS];
  guint n_named_workers;
} WsiThreadState;

static GPrivate thread_state_key = G_PRIVATE_INIT (g_free);

static WsiThreadState *thread_state (GstWsiStats * self);

/* Absolute monotonic time, the clock of WsiPatchRecord.created_ns. The hook
 * timestamps count from gst_init() instead; only differences of the same
 * kind are ever taken. */
GstClockTime
wsi_stats_now_ns (void)
{
  return gst_util_get_timestamp ();
}

/* Timeline time of an absolute gst_util_get_timestamp(). */
GstClockTime
wsi_stats_timeline_ts (GstWsiStats * self, GstClockTime abs_ns)
{
  GstClockTime origin = __atomic_load_n (&self->timeline_origin,
      __ATOMIC_RELAXED);

  return abs_ns > origin ? abs_ns - origin : 0;
}

/* Hook timestamps count from a moment in gst_init() the tracer cannot read
 * (before the registry is loaded). Each hook's now - ts is that moment plus
 * the hook's dispatch delay (longer when the thread was preempted): the
 * smallest of the first ORIGIN_SAMPLES is kept, so slices timed by the
 * pool (absolute times) line up with the hooks' to well under 1 us. */
void
wsi_stats_calibrate_origin (GstWsiStats * self, GstClockTime hook_ts)
{
  guint64 origin, seen;

  if (G_LIKELY (g_atomic_int_get (&self->origin_samples) >= ORIGIN_SAMPLES))
    return;
  g_atomic_int_inc (&self->origin_samples);
  origin = wsi_stats_now_ns () - hook_ts;
  seen = __atomic_load_n (&self->timeline_origin, __ATOMIC_RELAXED);
  while (origin < seen && !__atomic_compare_exchange_n
      (&self->timeline_origin, &seen, origin, TRUE, __ATOMIC_RELAXED,
          __ATOMIC_RELAXED));
}

/* The time a hook accounts with: GStreamer's @ts, or, while a test has
 * "use-fake-clock" on, a clock that moves only when the test advances it
 * ("advance-clock"), so shares and verdicts are exact whatever the
 * machine's load. */
static inline GstClockTime
hook_time (GstWsiStats * self, GstClockTime ts)
{
  if (G_LIKELY (!g_atomic_int_get (&self->fake_clock)))
    return ts;
  return __atomic_load_n (&self->fake_now, __ATOMIC_SEQ_CST);
}

/* ==== element lookup ====================================================== */

/* The element that owns @pad, or NULL for pads of bins and ghost/proxy pads:
 * pushes through those are transparent, the real element on the other side
 * gets its own frame. */
static GstElement *
pad_element (GstPad * pad)
{
  GstObject *parent;

  if (pad == NULL)
    return NULL;
  parent = GST_OBJECT_PARENT (pad);
  if (parent == NULL || !GST_IS_ELEMENT (parent) || GST_IS_BIN (parent))
    return NULL;
  return GST_ELEMENT_CAST (parent);
}

static gboolean
name_listed (gchar ** names, const gchar * a, const gchar * b)
{
  for (; names && *names; names++) {
    if (g_strcmp0 (*names, a) == 0 || g_strcmp0 (*names, b) == 0)
      return TRUE;
  }
  return FALSE;
}


/* queue's "overrun": emitted in its chain, on the pushing thread, when it
 * is full and about to wait; the push open on this thread is blocked. */
static void
on_overrun (GstElement * queue, GstWsiStats * self)
{
  WsiThreadState *t = thread_state (self);
  gpointer es = g_object_get_qdata (G_OBJECT (queue), self->stats_quark);
  guint i;

  for (i = t->depth; i > 0; i--) {
    if (t->frames[i - 1].receiver == es) {
      t->frames[i - 1].full = TRUE;
      return;
    }
  }
}

static WsiElementStats *
element_stats_new (GstWsiStats * self, GstElement * element)
{
  WsiElementStats *es = g_new0 (WsiElementStats, 1);
  GstElementFactory *factory = gst_element_get_factory (element);
  GObjectClass *klass = G_OBJECT_GET_CLASS (element);

  g_mutex_init (&es->lock);
  es->name = gst_object_get_name (GST_OBJECT_CAST (element));
  es->factory = g_strdup (factory ?
      gst_plugin_feature_get_name (GST_PLUGIN_FEATURE (factory)) :
      G_OBJECT_TYPE_NAME (element));
  es->loop_name = g_strdup_printf ("%s (loop)", es->name);
  es->blocked_name = g_strdup_printf ("%s full", es->name);
  g_weak_ref_init (&es->ref, element);
  es->is_sink = GST_OBJECT_FLAG_IS_SET (element, GST_ELEMENT_FLAG_SINK);
  es->is_source = GST_OBJECT_FLAG_IS_SET (element, GST_ELEMENT_FLAG_SOURCE);
  es->is_queue = g_object_class_find_property (klass, "current-level-buffers")
      && g_object_class_find_property (klass, "max-size-buffers");
  es->blocks = es->is_queue || g_str_equal (es->factory, "appsink");
  if (es->blocks && self->timeline != NULL
      && g_signal_lookup ("overrun", G_OBJECT_TYPE (element)) != 0) {
    g_signal_connect (element, "overrun", G_CALLBACK (on_overrun), self);
    es->says_full = TRUE;
  }
  es->track_transit = name_listed (self->transit_names, es->factory, es->name);
  if (es->track_transit)
    es->transit = g_new0 (WsiTransitSlot, WSI_STATS_TRANSIT_SLOTS);
  es->first_ts = es->last_ts = GST_CLOCK_TIME_NONE;
  es->last_arrival = es->last_departure = GST_CLOCK_TIME_NONE;
  return es;
}

void
wsi_element_stats_free (WsiElementStats * es)
{
  guint i;

  for (i = 0; i < es->n_pads; i++)
    g_free (es->pads[i].name);
  g_weak_ref_clear (&es->ref);
  g_mutex_clear (&es->lock);
  g_free (es->transit);
  g_free (es->name);
  g_free (es->factory);
  g_free (es->loop_name);
  g_free (es->blocked_name);
  g_free (es);
}

/* Stats of @element, made the first time it is seen (the only allocation). */
static WsiElementStats *
element_stats (GstWsiStats * self, GstElement * element)
{
  WsiElementStats *es;

  if (element == NULL)
    return NULL;
  es = g_object_get_qdata (G_OBJECT (element), self->stats_quark);
  if (G_LIKELY (es != NULL))
    return es;

  g_mutex_lock (&self->lock);
  es = g_object_get_qdata (G_OBJECT (element), self->stats_quark);
  if (es == NULL) {
    es = element_stats_new (self, element);
    g_ptr_array_add (self->elements, es);
    /* no destroy notify: the numbers outlive the element for the report */
    g_object_set_qdata (G_OBJECT (element), self->stats_quark, es);
    GST_DEBUG_OBJECT (self, "tracking %s (%s)", es->name, es->factory);
  }
  g_mutex_unlock (&self->lock);
  return es;
}

/* Called with es->lock. */
static WsiPadStats *
pad_stats (WsiElementStats * es, GstPad * pad)
{
  guint i;
  WsiPadStats *ps;

  for (i = 0; i < es->n_pads; i++) {
    if (es->pads[i].pad == pad)
      return &es->pads[i];
  }
  if (es->n_pads == WSI_STATS_MAX_PADS)
    return &es->pads[WSI_STATS_MAX_PADS - 1];
  ps = &es->pads[es->n_pads++];
  ps->pad = pad;
  ps->is_src = GST_PAD_IS_SRC (pad);
  ps->name = es->n_pads == WSI_STATS_MAX_PADS ? g_strdup ("other-pads")
      : gst_object_get_name (GST_OBJECT_CAST (pad));
  return ps;
}

/* ==== per-thread state ==================================================== */

/* The thread's full name for the timeline: the OS keeps 15 bytes, so a
 * pad task's thread ("patchreader0:src" is 16) is named after its task when
 * the OS name is the start of it. Task threads come from a pool and serve
 * other tasks later: a new task renames the lane. */
static void
name_thread (GstWsiStats * self, WsiThreadState * ts, GstPad * pad)
{
  gchar name[16] = "";
  GstTask *task = pad ? GST_PAD_TASK (pad) : NULL;

  if (ts->named && (task == NULL || task == ts->task))
    return;
  pthread_getname_np (pthread_self (), name, sizeof (name));
  if (task != NULL && name[0] != '\0'
      && g_str_has_prefix (GST_OBJECT_NAME (task), name)) {
    wsi_timeline_add_thread_name (self->timeline, ts->tid,
        GST_OBJECT_NAME (task));
  } else if (!ts->named) {
    wsi_timeline_add_thread_name (self->timeline, ts->tid, name);
  }
  ts->task = task;              /* checked again only when it changes */
  ts->named = TRUE;
}

static WsiThreadState *
thread_state_for_pad (GstWsiStats * self, GstPad * pad)
{
  WsiThreadState *ts = g_private_get (&thread_state_key);

  if (G_UNLIKELY (ts == NULL)) {
    ts = g_new0 (WsiThreadState, 1);
    ts->tid = (gint) syscall (SYS_gettid);
    ts->last_end = GST_CLOCK_TIME_NONE;
    g_private_set (&thread_state_key, ts);
  }
  if (G_UNLIKELY (self->timeline != NULL))
    name_thread (self, ts, pad);
  if (G_UNLIKELY (ts->generation != (guint) self->generation)) {
    ts->generation = self->generation;
    ts->last_pusher = NULL;
    ts->last_end = GST_CLOCK_TIME_NONE;
  }
  return ts;
}

static WsiThreadState *
thread_state (GstWsiStats * self)
{
  return thread_state_for_pad (self, NULL);
}

/* ==== what a buffer carries =============================================== */

typedef struct
{
  guint patches;
  const WsiPatchRecord *records;
  guint n_records;
  gsize bytes;
  guint64 offset;
  /* a slide buffer's preparation times (WSI_HIST_PREP_*), -1: none */
  gint64 prep_ns[4];
} WsiBufferInfo;

/* Pad qdata values of coordinates_quark. */
enum
{
  PAD_CARRIES_OTHER = 1,
  PAD_CARRIES_COORDINATES = 2
};

/* TRUE when @pad carries coordinate buffers (packed WsiPatchRecord,
 * "application/x-wsi-patches": patchsampler, patchinterleave). Their
 * patches are counted from the size since they have no WsiPatchMeta. The
 * caps are read once per pad, then kept on it. */
static gboolean
pad_carries_coordinates (GstWsiStats * self, GstPad * pad)
{
  gint kind = GPOINTER_TO_INT (g_object_get_qdata (G_OBJECT (pad),
          self->coordinates_quark));
  GstCaps *caps;

  if (kind != 0)
    return kind == PAD_CARRIES_COORDINATES;
  caps = gst_pad_get_current_caps (pad);
  if (caps == NULL)
    return FALSE;
  kind = gst_structure_has_name (gst_caps_get_structure (caps, 0),
      WSI_PATCHES_MEDIA_TYPE) ? PAD_CARRIES_COORDINATES : PAD_CARRIES_OTHER;
  gst_caps_unref (caps);
  g_object_set_qdata (G_OBJECT (pad), self->coordinates_quark,
      GINT_TO_POINTER (kind));
  return kind == PAD_CARRIES_COORDINATES;
}

/* A slide buffer's preparation times, from its WsiSlideMeta (set by
 * wsislidesrc and tissuemask). */
static void
slide_prep_info (GstWsiStats * self, GstBuffer * buffer, WsiBufferInfo * info)
{
  GstMeta *meta = self->slide_meta_api ?
      gst_buffer_get_meta (buffer, self->slide_meta_api) : NULL;
  GstStructure *s;
  guint i;

  if (meta == NULL)
    return;
  s = gst_custom_meta_get_structure ((GstCustomMeta *) meta);
  for (i = 0; i < G_N_ELEMENTS (self->prep_quarks); i++) {
    const GValue *v = gst_structure_id_get_value (s, self->prep_quarks[i]);

    if (v && G_VALUE_HOLDS_UINT64 (v))
      info->prep_ns[i] = (gint64) g_value_get_uint64 (v);
  }
}

/* Reads the patch meta by GType and quarks: the string-keyed helpers of
 * wsirecord.h take global locks (meta registry, quark table) per call.
 * @pad: the pad pushing it (its caps tell coordinates apart). */
static void
buffer_info (GstWsiStats * self, GstPad * pad, GstBuffer * buffer,
    WsiBufferInfo * info)
{
  GstMeta *meta = self->patch_meta_api ?
      gst_buffer_get_meta (buffer, self->patch_meta_api) : NULL;

  memset (info, 0, sizeof (*info));
  for (guint i = 0; i < G_N_ELEMENTS (info->prep_ns); i++)
    info->prep_ns[i] = -1;
  info->bytes = gst_buffer_get_size (buffer);
  info->offset = GST_BUFFER_OFFSET (buffer);
  if (meta != NULL) {
    GstStructure *s = gst_custom_meta_get_structure ((GstCustomMeta *) meta);
    const GValue *v = gst_structure_id_get_value (s, self->count_quark);
    const GValue *r = gst_structure_id_get_value (s, self->records_quark);

    if (v && G_VALUE_HOLDS_UINT (v))
      info->patches = g_value_get_uint (v);
    if (r && G_VALUE_HOLDS (r, G_TYPE_BYTES) && g_value_get_boxed (r)) {
      gsize size = 0;
      info->records = g_bytes_get_data (g_value_get_boxed (r), &size);
      info->n_records = size / sizeof (WsiPatchRecord);
    }
  } else if (pad != NULL && pad_carries_coordinates (self, pad)) {
    info->patches = info->bytes / sizeof (WsiPatchRecord);
  } else {
    slide_prep_info (self, buffer, info);
  }
}

/* ==== accounting (hot path) =============================================== */

static void
note_traffic (WsiElementStats * es, GstClockTime ts)
{
  if (es->first_ts == GST_CLOCK_TIME_NONE)
    es->first_ts = ts;
  es->last_ts = ts;
}

/* A slide's preparation times, each counted once, by the element that
 * spent them: the source its open, overview and wait, the filter after it
 * (tissuemask) its mask; queues pass them on. Call with es->lock held. */
static void
account_slide_prep (WsiElementStats * es, const WsiBufferInfo * info)
{
  guint i;

  if (es->is_queue)
    return;
  for (i = 0; i < 3 && es->is_source; i++) {
    if (info->prep_ns[i] >= 0)
      wsi_histogram_record (&es->hist[WSI_HIST_PREP_OPEN + i],
          (guint64) info->prep_ns[i]);
  }
  if (!es->is_source && info->prep_ns[3] >= 0)
    wsi_histogram_record (&es->hist[WSI_HIST_PREP_MASK],
        (guint64) info->prep_ns[3]);
}

static void
account_out (WsiElementStats * es, GstPad * pad, GstClockTime ts,
    const WsiBufferInfo * info)
{
  WsiPadStats *ps;

  g_mutex_lock (&es->lock);
  note_traffic (es, ts);
  es->counts[WSI_COUNT_BUFFERS_OUT]++;
  es->counts[WSI_COUNT_PATCHES_OUT] += info->patches;
  es->counts[WSI_COUNT_BYTES_OUT] += info->bytes;
  ps = pad_stats (es, pad);
  ps->counts[WSI_PAD_BUFFERS]++;
  ps->counts[WSI_PAD_PATCHES] += info->patches;
  ps->counts[WSI_PAD_BYTES] += info->bytes;
  account_slide_prep (es, info);
  if (es->transit && info->offset != GST_BUFFER_OFFSET_NONE) {
    WsiTransitSlot *slot = &es->transit[info->offset % WSI_STATS_TRANSIT_SLOTS];

    if (slot->offset == info->offset && slot->ts != GST_CLOCK_TIME_NONE) {
      wsi_histogram_record (&es->hist[WSI_HIST_TRANSIT], ts - slot->ts);
      slot->ts = GST_CLOCK_TIME_NONE;   /* count each buffer once */
    }
  }
  g_mutex_unlock (&es->lock);
}

static void
account_in (GstWsiStats * self, WsiElementStats * es, GstPad * pad,
    GstClockTime ts, const WsiBufferInfo * info)
{
  WsiPadStats *ps;
  gint64 now = info->n_records ? (gint64) wsi_stats_now_ns () : 0;
  guint i;

  g_mutex_lock (&es->lock);
  note_traffic (es, ts);
  es->counts[WSI_COUNT_BUFFERS_IN]++;
  es->counts[WSI_COUNT_PATCHES_IN] += info->patches;
  es->counts[WSI_COUNT_BYTES_IN] += info->bytes;
  ps = pad_stats (es, pad);
  ps->counts[WSI_PAD_BUFFERS]++;
  ps->counts[WSI_PAD_PATCHES] += info->patches;
  ps->counts[WSI_PAD_BYTES] += info->bytes;
  /* age of every patch: percentiles are over patches, not buffers */
  for (i = 0; i < info->n_records; i++) {
    gint64 created = info->records[i].created_ns;

    if (created > 0 && created <= now)
      wsi_histogram_record (&es->hist[WSI_HIST_AGE], now - created);
  }
  if (es->transit && info->offset != GST_BUFFER_OFFSET_NONE) {
    WsiTransitSlot *slot = &es->transit[info->offset % WSI_STATS_TRANSIT_SLOTS];
    slot->offset = info->offset;
    slot->ts = ts;
  }
  if (es->is_sink) {
    if (es->last_arrival != GST_CLOCK_TIME_NONE)
      wsi_histogram_record (&es->hist[WSI_HIST_INTERVAL], ts - es->last_arrival);
    if (es->last_departure != GST_CLOCK_TIME_NONE)
      es->counts[WSI_COUNT_WAIT_NS] += ts - es->last_departure;
    es->last_arrival = ts;
  }
  g_mutex_unlock (&es->lock);
}

/* A push made at the bottom of a thread's stack comes from a loop the
 * element drives; the gap since its previous push is its production time. */
static void
account_loop (GstWsiStats * self, WsiThreadState * t, WsiElementStats * pusher,
    GstClockTime ts)
{
  guint64 gap;

  if (t->depth != 0 || pusher == NULL || t->last_pusher != pusher ||
      t->last_end == GST_CLOCK_TIME_NONE || ts < t->last_end)
    return;
  gap = ts - t->last_end;
  g_mutex_lock (&pusher->lock);
  wsi_histogram_record (&pusher->hist[WSI_HIST_LOOP], gap);
  g_mutex_unlock (&pusher->lock);
  if (self->timeline)
    wsi_timeline_add_slice (self->timeline, t->tid, pusher->loop_name,
        "loop", t->last_end, gap);
}

static void
frame_open (WsiThreadState * t, WsiElementStats * pusher,
    WsiElementStats * receiver, GstClockTime ts, gboolean is_pull)
{
  WsiFrame *f;

  if (G_UNLIKELY (t->depth == MAX_DEPTH)) {
    t->overflow++;
    return;
  }
  f = &t->frames[t->depth++];
  f->pusher = pusher;
  f->receiver = receiver;
  f->start = ts;
  f->nested = 0;
  f->is_pull = is_pull;
  f->full = FALSE;
}

/* A queue's or appsink's chain only enqueues, unless the element is full:
 * then the pushing thread is blocked on downstream, drawn as such. */
static void
draw_chain (GstWsiStats * self, WsiThreadState * t, WsiElementStats * es,
    const WsiFrame * f, guint64 duration)
{
  gboolean blocked = f->full || (es->blocks && !es->says_full
      && duration >= BLOCKED_MIN_NS);

  if (blocked)
    wsi_timeline_add_slice (self->timeline, t->tid, es->blocked_name,
        "blocked", f->start, duration);
  else
    wsi_timeline_add_slice (self->timeline, t->tid, es->name, "element",
        f->start, duration);
}

/* Closes the innermost push: the receiver's self time is the push minus the
 * pushes it made itself; the whole push counts as nested time of the frame
 * below. */
static void
frame_close (GstWsiStats * self, WsiThreadState * t, GstClockTime ts)
{
  WsiFrame *f;
  guint64 duration;

  if (G_UNLIKELY (t->overflow > 0)) {
    t->overflow--;
    return;
  }
  if (G_UNLIKELY (t->depth == 0))
    return;                     /* push started before tracing did */
  f = &t->frames[--t->depth];
  duration = ts > f->start ? ts - f->start : 0;

  if (f->receiver) {
    WsiElementStats *es = f->receiver;
    guint64 own = duration > f->nested ? duration - f->nested : 0;

    g_mutex_lock (&es->lock);
    wsi_histogram_record (&es->hist[WSI_HIST_SELF], own);
    if (es->is_sink && !f->is_pull) {
      es->counts[WSI_COUNT_BUSY_NS] += duration;
      es->last_departure = ts;
    }
    g_mutex_unlock (&es->lock);
    if (self->timeline)
      draw_chain (self, t, es, f, duration);
  }

  if (t->depth > 0) {
    t->frames[t->depth - 1].nested += duration;
  } else if (!f->is_pull) {
    t->last_pusher = f->pusher;
    t->last_end = ts;
  }
}

/* ==== pool workers (WsiWorkMeta) ========================================= */

/* Names a worker's lane once per pushing thread (the pool's task pushes
 * all of one pool's items, so the list stays short). */
static void
name_worker (GstWsiStats * self, WsiThreadState * t, const WsiWorkMeta * m)
{
  guint i;

  for (i = 0; i < t->n_named_workers; i++) {
    if (t->named_workers[i] == m->worker_tid)
      return;
  }
  if (t->n_named_workers < NAMED_WORKERS)
    t->named_workers[t->n_named_workers++] = m->worker_tid;
  wsi_timeline_add_thread_name (self->timeline, m->worker_tid,
      m->worker_name);
}

/* The I/O waits of one item, inside its work slice on the worker's lane:
 * the time the worker was blocked on remote bytes, in its own colour. */
static void
draw_io_waits (GstWsiStats * self, const WsiWorkMeta * m)
{
  guint i;

  for (i = 0; i < m->io.n && i < WSI_WORK_IO_WAITS; i++) {
    if (m->io.end[i] <= m->io.start[i])
      continue;
    wsi_timeline_add_slice (self->timeline, m->worker_tid, "I/O wait",
        "io-wait", wsi_stats_timeline_ts (self, m->io.start[i]),
        m->io.end[i] - m->io.start[i]);
  }
}

/* The item a pool worker made: its work time and I/O waits counted for the
 * summary; with a timeline, drawn on the worker's lane, and the wait of the
 * thread that queued it for room in the pool (blocked on downstream). Only
 * from the push on the pool's own pad: downstream pushes of the same
 * buffer would count it again. */
static void
account_work (GstWsiStats * self, WsiThreadState * t, GstPad * pad,
    WsiElementStats * pusher, GstBuffer * buffer)
{
  WsiWorkMeta *m;

  if (self->work_meta_api == 0 || pusher == NULL)
    return;
  m = (WsiWorkMeta *) gst_buffer_get_meta (buffer, self->work_meta_api);
  if (m == NULL || m->pad != (gconstpointer) pad || m->worker_tid == 0)
    return;
  g_mutex_lock (&pusher->lock);
  pusher->counts[WSI_COUNT_WORK_NS] += m->end > m->start ?
      m->end - m->start : 0;
  pusher->counts[WSI_COUNT_IO_WAIT_NS] += m->io.total_ns;
  pusher->counts[WSI_COUNT_IO_WAITS] += m->io.count;
  g_mutex_unlock (&pusher->lock);
  if (self->timeline == NULL)
    return;
  name_worker (self, t, m);
  wsi_timeline_add_slice (self->timeline, m->worker_tid, pusher->name,
      "work", wsi_stats_timeline_ts (self, m->start),
      m->end > m->start ? m->end - m->start : 0);
  draw_io_waits (self, m);
  if (m->queued_tid != 0 && m->wait_end > m->wait_start)
    wsi_timeline_add_slice (self->timeline, m->queued_tid,
        pusher->blocked_name, "blocked", wsi_stats_timeline_ts (self, m->wait_start),
        m->wait_end - m->wait_start);
}

/* ==== hooks =============================================================== */

static void
push_pre (GstWsiStats * self, GstClockTime ts, GstPad * pad,
    GstBuffer * buffer)
{
  WsiThreadState *t = thread_state_for_pad (self, pad);
  GstPad *peer = GST_PAD_PEER (pad);
  WsiElementStats *pusher = element_stats (self, pad_element (pad));
  WsiElementStats *receiver = element_stats (self, pad_element (peer));
  WsiBufferInfo info;

  wsi_stats_calibrate_origin (self, ts);
  ts = hook_time (self, ts);
  account_loop (self, t, pusher, ts);
  account_work (self, t, pad, pusher, buffer);
  buffer_info (self, pad, buffer, &info);
  if (pusher)
    account_out (pusher, pad, ts, &info);
  if (receiver)
    account_in (self, receiver, peer, ts, &info);
  frame_open (t, pusher, receiver, ts, FALSE);
}

static void
push_list_pre (GstWsiStats * self, GstClockTime ts, GstPad * pad,
    GstBufferList * list)
{
  WsiThreadState *t = thread_state_for_pad (self, pad);
  GstPad *peer = GST_PAD_PEER (pad);
  WsiElementStats *pusher = element_stats (self, pad_element (pad));
  WsiElementStats *receiver = element_stats (self, pad_element (peer));
  guint i, n = gst_buffer_list_length (list);

  wsi_stats_calibrate_origin (self, ts);
  ts = hook_time (self, ts);
  account_loop (self, t, pusher, ts);
  for (i = 0; i < n; i++) {
    WsiBufferInfo info;

    account_work (self, t, pad, pusher, gst_buffer_list_get (list, i));
    buffer_info (self, pad, gst_buffer_list_get (list, i), &info);
    if (pusher)
      account_out (pusher, pad, ts, &info);
    if (receiver)
      account_in (self, receiver, peer, ts, &info);
  }
  frame_open (t, pusher, receiver, ts, FALSE);
}

static void
push_post (GstWsiStats * self, GstClockTime ts, GstPad * pad,
    GstFlowReturn res)
{
  frame_close (self, thread_state (self), hook_time (self, ts));
}

/* In pull mode the upstream element works inside the caller's pull. */
static void
pull_range_pre (GstWsiStats * self, GstClockTime ts, GstPad * pad,
    guint64 offset, guint size)
{
  WsiThreadState *t = thread_state (self);
  GstPad *peer = GST_PAD_PEER (pad);

  frame_open (t, element_stats (self, pad_element (pad)),
      element_stats (self, pad_element (peer)), hook_time (self, ts), TRUE);
}

static void
pull_range_post (GstWsiStats * self, GstClockTime ts, GstPad * pad,
    GstBuffer * buffer, GstFlowReturn res)
{
  WsiThreadState *t = thread_state (self);
  GstPad *peer = GST_PAD_PEER (pad);

  ts = hook_time (self, ts);
  if (buffer != NULL && res == GST_FLOW_OK) {
    WsiElementStats *upstream = element_stats (self, pad_element (peer));
    WsiElementStats *downstream = element_stats (self, pad_element (pad));
    WsiBufferInfo info;

    buffer_info (self, peer, buffer, &info);
    if (upstream)
      account_out (upstream, peer, ts, &info);
    if (downstream)
      account_in (self, downstream, pad, ts, &info);
  }
  frame_close (self, t, ts);
}

void
wsi_stats_forget_run_state (WsiElementStats * es)
{
  g_mutex_lock (&es->lock);
  es->last_arrival = es->last_departure = GST_CLOCK_TIME_NONE;
  if (es->transit)
    memset (es->transit, 0, WSI_STATS_TRANSIT_SLOTS * sizeof (WsiTransitSlot));
  g_mutex_unlock (&es->lock);
}


/* ==== process numbers ===================================================== */

void
wsi_stats_process_usage (guint64 * peak_rss_kb, gdouble * cpu_s)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  *peak_rss_kb = (guint64) ru.ru_maxrss;        /* KiB on Linux */
  *cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
      ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* ==== queue sampling (reporter thread) ==================================== */

static void
sample_queue (GstWsiStats * self, WsiElementStats * es, GstClockTime now)
{
  GstElement *queue = g_weak_ref_get (&es->ref);
  guint level_buffers = 0, max_buffers = 0, level_bytes = 0, max_bytes = 0;
  guint64 level_time = 0, max_time = 0;
  gdouble fill = 0;
  gboolean full;

  if (queue == NULL)
    return;
  if (GST_STATE (queue) != GST_STATE_PLAYING) {
    gst_object_unref (queue);
    return;
  }
  g_object_get (queue, "current-level-buffers", &level_buffers,
      "current-level-bytes", &level_bytes, "current-level-time", &level_time,
      "max-size-buffers", &max_buffers, "max-size-bytes", &max_bytes,
      "max-size-time", &max_time, NULL);
  gst_object_unref (queue);

  /* a queue is full when any of its limits is reached */
  if (max_buffers)
    fill = MAX (fill, (gdouble) level_buffers / max_buffers);
  if (max_bytes)
    fill = MAX (fill, (gdouble) level_bytes / max_bytes);
  if (max_time)
    fill = MAX (fill, (gdouble) level_time / max_time);
  full = fill >= 1.0;

  g_mutex_lock (&es->lock);
  es->counts[WSI_COUNT_SAMPLES]++;
  if (level_buffers == 0)
    es->counts[WSI_COUNT_EMPTY]++;
  if (full)
    es->counts[WSI_COUNT_FULL]++;
  wsi_histogram_record (&es->hist[WSI_HIST_LEVEL], level_buffers);
  wsi_histogram_record (&es->hist[WSI_HIST_FILL], (guint64) (fill * 100 + 0.5));
  g_mutex_unlock (&es->lock);

  if (self->timeline)
    wsi_timeline_add_counter (self->timeline, es->name, now, level_buffers,
        max_buffers);
}

void
wsi_stats_sample_queues (GstWsiStats * self)
{
  GstClockTime now = wsi_stats_timeline_ts (self, wsi_stats_now_ns ());
  guint i;

  g_mutex_lock (&self->lock);
  for (i = 0; i < self->elements->len; i++) {
    WsiElementStats *es = g_ptr_array_index (self->elements, i);

    if (es->is_queue)
      sample_queue (self, es, now);
  }
  g_mutex_unlock (&self->lock);
}

/* ==== reports ============================================================= */

/* Everything measured, as a typed snapshot; with @advance the window
 * restarts. Call with report_lock held. */
WsiStatsSnapshot *
wsi_stats_take_snapshot (GstWsiStats * self, WsiSnapshotType type)
{
  gboolean advance = type == WSI_SNAPSHOT_INTERVAL;
  GstClockTime now = wsi_stats_now_ns ();
  guint64 window_ns = now - self->window_start_ts;
  WsiStatsSnapshot *snap;
  gdouble cpu_s, wall_s = (now - self->start_ts) / 1e9;
  guint i;

  g_mutex_lock (&self->lock);
  snap = wsi_stats_snapshot_new (type, self->elements->len);
  wsi_stats_process_usage (&snap->peak_rss_kb, &cpu_s);
  snap->time_s = wall_s;
  snap->window_s = window_ns / 1e9;
  snap->cpu_s = cpu_s - self->cpu_start_s;
  snap->cpu_percent = wall_s > 0 ? 100.0 * snap->cpu_s / wall_s : 0.0;
  snap->window_cpu_percent = window_ns > 0 ?
      100.0 * (cpu_s - self->cpu_window_s) / (window_ns / 1e9) : 0.0;
  snap->timeline_dropped = self->timeline ?
      wsi_timeline_dropped (self->timeline) : 0;

  for (i = 0; i < self->elements->len; i++) {
    WsiElementStats *es = g_ptr_array_index (self->elements, i);
    GstElement *alive = g_weak_ref_get (&es->ref);
    gboolean empty;

    g_mutex_lock (&es->lock);
    empty = es->first_ts == GST_CLOCK_TIME_NONE
        && es->counts[WSI_COUNT_SAMPLES] == 0;
    g_mutex_unlock (&es->lock);
    if (alive)
      gst_object_unref (alive);
    if (empty && alive == NULL)
      continue;                 /* gone before it did anything since reset */
    wsi_stats_snapshot_add_element (snap, es, window_ns, advance);
  }
  g_mutex_unlock (&self->lock);
  wsi_stats_snapshot_finish (snap);

  if (advance) {
    self->window_start_ts = now;
    self->cpu_window_s = cpu_s;
  }
  return snap;
}

gint
wsi_stats_thread_tid (GstWsiStats * self)
{
  return thread_state (self)->tid;
}

void
wsi_stats_book_register_hooks (GstWsiStats * self)
{
  GstTracer *tracer = GST_TRACER (self);

  gst_tracing_register_hook (tracer, "pad-push-pre", G_CALLBACK (push_pre));
  gst_tracing_register_hook (tracer, "pad-push-post", G_CALLBACK (push_post));
  gst_tracing_register_hook (tracer, "pad-push-list-pre",
      G_CALLBACK (push_list_pre));
  gst_tracing_register_hook (tracer, "pad-push-list-post",
      G_CALLBACK (push_post));
  gst_tracing_register_hook (tracer, "pad-pull-range-pre",
      G_CALLBACK (pull_range_pre));
  gst_tracing_register_hook (tracer, "pad-pull-range-post",
      G_CALLBACK (pull_range_post));
}
