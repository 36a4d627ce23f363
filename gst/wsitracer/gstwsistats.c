/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:tracer-wsistats
 * @short_description: can the pipeline keep the GPU fed, and if not, why
 *
 * wsistats measures, per element and pad, buffers/s, patches/s (patches
 * counted from the `WsiPatchMeta` of each buffer, so a batch of 256 counts
 * 256, and one per record on coordinate pads) and bytes/s; processing time per element as percentiles; patch age
 * (now minus `WsiPatchRecord.created_ns`) at each element; queue occupancy;
 * the interval between batches at the sink; slide preparation per slide
 * (wsislidesrc's open, overview read and wait for a prepared slide,
 * tissuemask's mask: the `prep-*-ns` fields of the slide meta, histograms
 * `prep-open`, `prep-overview`, `prep-wait`, `prep-mask`), so slide churn
 * shows; and a verdict: *loader-bound*
 * (the sink waited for data) or *trainer-bound* (the pipeline waited for the
 * sink), with the fractions. Percentiles (p50/p90/p95/p99/max and count) come
 * from fixed-memory log-scale histograms allocated once per element: no
 * allocation and no log line per buffer.
 *
 * What "processing time" means depends on the element's shape:
 *
 * - `self`: time inside the element's chain function minus the time spent in
 *   the downstream pushes it made from that chain (a per-thread stack of open
 *   pushes). Filters, sinks, the input side of queues, aggregators and
 *   thread-pool elements get it.
 * - `loop`: on a thread the element drives (GstPushSrc, queue, aggregator or
 *   worker threads), the time between two consecutive pushes minus the push
 *   itself: time spent producing (for `queue`, time waiting for data).
 * - `transit`: for elements named in `transit=` (default `patchreader`),
 *   which keep GST_BUFFER_OFFSET from input to output, the time from a buffer
 *   entering to the buffer with the same offset leaving.
 *
 * Parameters (`GST_TRACERS="wsistats(interval=1000,file=/tmp/s.jsonl)"`):
 * `interval` (ms between window reports, 0 = none, default 1000),
 * `sample-interval` (ms between queue samples, default 10),
 * `file` (JSON Lines output, one object per interval plus a final one),
 * `timeline` (Chrome trace-event file for Perfetto),
 * `timeline-capacity` (events buffered between flushes, default 262144),
 * `transit` (comma-separated factory or element names, default patchreader),
 * `summary` (print the summary table on stderr, default true).
 *
 * Action signals: `get-stats` returns a #GstStructure with everything above,
 * `reset` starts counting again, `write-report` writes a report line to
 * `file`, flushes the timeline and prints the summary, `timeline-slice`
 * adds an application's slice (a training step) to the timeline. Find the
 * tracer with gst_tracing_get_active_tracers().
 *
 * The timeline has a lane per streaming thread (named in full, not the
 * OS's 15 bytes), a lane per worker of every ordered pool with a slice per
 * item (from the WsiWorkMeta the pool puts on its buffers), pushes into a
 * full queue, appsink or pool drawn as "blocked", queue levels as
 * counters, and the lanes applications add (gstwsi: appsink pulls,
 * training steps). tools/wsi-timeline-png draws it.
 *
 * Files: this one holds the hooks, the per-thread push stacks, the queue
 * sampler and reporter thread; wsistatscounters.h the live counters;
 * wsistatssnapshot.c the typed snapshot every output is made from;
 * wsistatsreport.c the GstStructure (get-stats, `file=`);
 * wsistatsformat.c the summary table and tracer records.
 *
 * ## Example launch line
 * |[
 * GST_TRACERS="wsistats(interval=1000,file=/tmp/stats.jsonl,timeline=/tmp/trace.json)" \
 *   gst-launch-1.0 fakesrc num-buffers=100 ! identity sleep-time=20000 ! fakesink
 * ]|
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* pthread_getname_np */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsiworkmeta.h>

#include "gstwsistats.h"
#include "wsihistogram.h"
#include "wsijson.h"
#include "wsistatscounters.h"
#include "wsistatsformat.h"
#include "wsistatsreport.h"
#include "wsistatssnapshot.h"
#include "wsitimeline.h"

GST_DEBUG_CATEGORY_STATIC (gst_wsi_stats_debug);
#define GST_CAT_DEFAULT gst_wsi_stats_debug

#define DEFAULT_INTERVAL_MS 1000
#define DEFAULT_SAMPLE_INTERVAL_MS 10
#define DEFAULT_TIMELINE_CAPACITY 262144
#define DEFAULT_TRANSIT "patchreader"

#define MAX_DEPTH 64            /* nested pushes tracked per thread */
#define NAMED_WORKERS 64        /* worker lanes named per pushing thread */
#define MAX_LANES 16            /* lanes made by the timeline-slice signal */
#define ORIGIN_SAMPLES 256      /* hooks that calibrate the timeline origin */
/* Lane ids for timeline-slice lanes: above any kernel thread id. */
#define LANE_TID_BASE 0x40000000
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

/* ---- the tracer ---------------------------------------------------------- */

struct _GstWsiStats
{
  GstTracer parent;

  /* parameters, fixed after construction */
  guint interval_ms;
  guint sample_interval_ms;
  gchar *file_path;
  gchar *timeline_path;
  guint timeline_capacity;
  gchar **transit_names;
  gboolean print_summary;
  gboolean active;              /* FALSE for a second instance */

  GQuark stats_quark;
  GQuark count_quark, records_quark;
  GQuark coordinates_quark;     /* pad qdata: its caps' kind, once known */
  GType patch_meta_api;
  GType slide_meta_api;
  GQuark prep_quarks[4];        /* prep-open-ns ... prep-mask-ns */
  GType work_meta_api;          /* 0 until a pool registered it */
  gint origin_samples;          /* hooks that calibrated the origin */
  gint fake_clock;              /* "use-fake-clock" is on (tests) */
  guint64 fake_now;             /* the hooks' time then, atomic */
  volatile gint generation;

  GMutex lock;                  /* elements list */
  GPtrArray *elements;

  GMutex report_lock;           /* outputs, baselines, reporter state */
  FILE *file;
  WsiTimeline *timeline;
  GstClockTime start_ts, window_start_ts;
  GstClockTime timeline_origin; /* the hook timestamps' origin (calibrated) */
  gdouble cpu_start_s, cpu_window_s;
  guint64 buffers_at_final;
  gboolean final_written;

  GMutex thread_lock;           /* reporter thread */
  GCond thread_cond;
  GThread *thread;
  gboolean stopping;
  gint thread_pid;

  /* lanes of the timeline-slice signal, guarded by lock */
  const gchar *lane_names[MAX_LANES];
  guint n_lanes;
};

enum
{
  SIGNAL_GET_STATS,
  SIGNAL_RESET,
  SIGNAL_WRITE_REPORT,
  SIGNAL_TIMELINE_SLICE,
  SIGNAL_USE_FAKE_CLOCK,
  SIGNAL_ADVANCE_CLOCK,
  LAST_SIGNAL
};

static guint signals[LAST_SIGNAL];

G_LOCK_DEFINE_STATIC (instances);
static GList *instances;
static gboolean atexit_registered;

#define gst_wsi_stats_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstWsiStats, gst_wsi_stats, GST_TYPE_TRACER,
    GST_DEBUG_CATEGORY_INIT (gst_wsi_stats_debug, "wsistats", 0,
        "wsistats tracer"));

static void write_final_report (GstWsiStats * self, const gchar * why);

/* Absolute monotonic time, the clock of WsiPatchRecord.created_ns. The hook
 * timestamps count from gst_init() instead; only differences of the same
 * kind are ever taken. */
static GstClockTime
now_ns (void)
{
  return gst_util_get_timestamp ();
}

/* Timeline time of an absolute gst_util_get_timestamp(). */
static GstClockTime
timeline_ts (GstWsiStats * self, GstClockTime abs_ns)
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
static inline void
calibrate_origin (GstWsiStats * self, GstClockTime hook_ts)
{
  guint64 origin, seen;

  if (G_LIKELY (g_atomic_int_get (&self->origin_samples) >= ORIGIN_SAMPLES))
    return;
  g_atomic_int_inc (&self->origin_samples);
  origin = now_ns () - hook_ts;
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

static WsiThreadState *thread_state (GstWsiStats * self);

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

static void
element_stats_free (WsiElementStats * es)
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
  gint64 now = info->n_records ? (gint64) now_ns () : 0;
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
        "io-wait", timeline_ts (self, m->io.start[i]),
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
      "work", timeline_ts (self, m->start),
      m->end > m->start ? m->end - m->start : 0);
  draw_io_waits (self, m);
  if (m->queued_tid != 0 && m->wait_end > m->wait_start)
    wsi_timeline_add_slice (self->timeline, m->queued_tid,
        pusher->blocked_name, "blocked", timeline_ts (self, m->wait_start),
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

  calibrate_origin (self, ts);
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

  calibrate_origin (self, ts);
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

static void ensure_reporter (GstWsiStats * self);

static void
forget_run_state (WsiElementStats * es)
{
  g_mutex_lock (&es->lock);
  es->last_arrival = es->last_departure = GST_CLOCK_TIME_NONE;
  if (es->transit)
    memset (es->transit, 0, WSI_STATS_TRANSIT_SLOTS * sizeof (WsiTransitSlot));
  g_mutex_unlock (&es->lock);
}

static void
change_state_post (GstWsiStats * self, GstClockTime ts, GstElement * element,
    GstStateChange transition, GstStateChangeReturn result)
{
  gboolean top_pipeline = GST_IS_PIPELINE (element) &&
      GST_OBJECT_PARENT (element) == NULL;

  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
    WsiElementStats *es = g_object_get_qdata (G_OBJECT (element),
        self->stats_quark);

    /* pools register the meta when their element is made, before this */
    if (self->work_meta_api == 0) {
      const GstMetaInfo *info = gst_meta_get_info (WSI_WORK_META_NAME);
      if (info != NULL)
        self->work_meta_api = info->api;
    }

    /* a new run: gaps since the last run are not waits or intervals */
    if (es)
      forget_run_state (es);
    if (top_pipeline)
      ensure_reporter (self);
  } else if (transition == GST_STATE_CHANGE_PAUSED_TO_READY && top_pipeline) {
    gchar *why = g_strdup_printf ("%s stopped", GST_OBJECT_NAME (element));

    write_final_report (self, why);
    g_free (why);
  }
}

/* ==== process numbers ===================================================== */

static void
process_usage (guint64 * peak_rss_kb, gdouble * cpu_s)
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

static void
sample_queues (GstWsiStats * self)
{
  GstClockTime now = timeline_ts (self, now_ns ());
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
static WsiStatsSnapshot *
take_snapshot (GstWsiStats * self, WsiSnapshotType type)
{
  gboolean advance = type == WSI_SNAPSHOT_INTERVAL;
  GstClockTime now = now_ns ();
  guint64 window_ns = now - self->window_start_ts;
  WsiStatsSnapshot *snap;
  gdouble cpu_s, wall_s = (now - self->start_ts) / 1e9;
  guint i;

  g_mutex_lock (&self->lock);
  snap = wsi_stats_snapshot_new (type, self->elements->len);
  process_usage (&snap->peak_rss_kb, &cpu_s);
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

/* ---- outputs ---- */

static void
write_json_line (GstWsiStats * self, const WsiStatsSnapshot * snap)
{
  GstStructure *report;
  GString *line;

  if (self->file_path == NULL)
    return;
  if (self->file == NULL) {
    self->file = fopen (self->file_path, "w");
    if (self->file == NULL) {
      g_warning ("wsistats: cannot write the stats file \"%s\": %s; "
          "JSON output is off", self->file_path, g_strerror (errno));
      g_clear_pointer (&self->file_path, g_free);
      return;
    }
  }
  report = wsi_stats_report_structure (snap);
  line = g_string_sized_new (4096);
  wsi_json_append_structure (line, report);
  g_string_append_c (line, '\n');
  fwrite (line->str, 1, line->len, self->file);
  fflush (self->file);
  g_string_free (line, TRUE);
  gst_structure_free (report);
}

static void
print_summary (GstWsiStats * self, const WsiStatsSnapshot * snap,
    const gchar * why)
{
  gchar *text;
  guint i;

  if (!self->print_summary)
    return;
  /* nothing flowed (the pipeline failed to start): the error says it all */
  for (i = 0; i < snap->n_elements; i++)
    if (snap->elements[i].buffers_in + snap->elements[i].buffers_out > 0)
      break;
  if (i == snap->n_elements)
    return;
  text = wsi_stats_format_summary (snap, why);
  fputs (text, stderr);
  g_free (text);
}

static void
write_final_report (GstWsiStats * self, const gchar * why)
{
  WsiStatsSnapshot *snap;

  if (!self->active)
    return;
  g_mutex_lock (&self->report_lock);
  snap = take_snapshot (self, WSI_SNAPSHOT_FINAL);
  /* nothing new since the last final report: don't repeat it */
  if (self->final_written && snap->buffers_in == self->buffers_at_final) {
    g_mutex_unlock (&self->report_lock);
    wsi_stats_snapshot_free (snap);
    return;
  }
  self->final_written = TRUE;
  self->buffers_at_final = snap->buffers_in;
  write_json_line (self, snap);
  wsi_stats_format_log_records (snap, FALSE);
  if (self->timeline)
    wsi_timeline_flush (self->timeline);
  print_summary (self, snap, why);
  g_mutex_unlock (&self->report_lock);
  wsi_stats_snapshot_free (snap);
}

static void
write_interval_report (GstWsiStats * self)
{
  WsiStatsSnapshot *snap;

  g_mutex_lock (&self->report_lock);
  snap = take_snapshot (self, WSI_SNAPSHOT_INTERVAL);
  if (snap->buffers_in != self->buffers_at_final)
    self->final_written = FALSE;
  /* idle tracer (no pipeline running): stay quiet */
  if (snap->n_elements > 0) {
    write_json_line (self, snap);
    wsi_stats_format_log_records (snap, TRUE);
  }
  g_mutex_unlock (&self->report_lock);
  wsi_stats_snapshot_free (snap);
}

/* ==== reporter thread ===================================================== */

static gpointer
reporter_main (gpointer data)
{
  GstWsiStats *self = data;
  gint64 next_report = g_get_monotonic_time () +
      self->interval_ms * G_TIME_SPAN_MILLISECOND;

  g_mutex_lock (&self->thread_lock);
  while (!self->stopping) {
    gint64 wake = g_get_monotonic_time () +
        self->sample_interval_ms * G_TIME_SPAN_MILLISECOND;

    g_cond_wait_until (&self->thread_cond, &self->thread_lock, wake);
    if (self->stopping)
      break;
    g_mutex_unlock (&self->thread_lock);

    sample_queues (self);
    if (self->timeline) {
      g_mutex_lock (&self->report_lock);
      wsi_timeline_flush (self->timeline);
      g_mutex_unlock (&self->report_lock);
    }
    if (self->interval_ms > 0 && g_get_monotonic_time () >= next_report) {
      write_interval_report (self);
      next_report += self->interval_ms * G_TIME_SPAN_MILLISECOND;
      if (next_report < g_get_monotonic_time ())
        next_report = g_get_monotonic_time () +
            self->interval_ms * G_TIME_SPAN_MILLISECOND;
    }
    g_mutex_lock (&self->thread_lock);
  }
  g_mutex_unlock (&self->thread_lock);
  return NULL;
}

/* Started when the first pipeline starts, not at gst_init(): a forked child
 * (gst-check forks per test) has no copy of its parent's threads. */
static void
ensure_reporter (GstWsiStats * self)
{
  g_mutex_lock (&self->thread_lock);
  if (self->thread == NULL || self->thread_pid != getpid ()) {
    self->stopping = FALSE;
    self->thread_pid = getpid ();
    self->thread = g_thread_new ("wsistats", reporter_main, self);
  }
  g_mutex_unlock (&self->thread_lock);
}

static void
stop_reporter (GstWsiStats * self)
{
  GThread *thread;

  g_mutex_lock (&self->thread_lock);
  thread = self->thread_pid == getpid ()? self->thread : NULL;
  self->thread = NULL;
  self->stopping = TRUE;
  g_cond_broadcast (&self->thread_cond);
  g_mutex_unlock (&self->thread_lock);
  if (thread)
    g_thread_join (thread);
}

/* Applications rarely call gst_deinit(): report at exit too. */
static void
report_at_exit (void)
{
  GList *l;

  G_LOCK (instances);
  for (l = instances; l; l = l->next) {
    GstWsiStats *self = l->data;

    stop_reporter (self);
    write_final_report (self, "process exit");
  }
  G_UNLOCK (instances);
}

/* ==== action signals ====================================================== */

static GstStructure *
gst_wsi_stats_get_stats (GstWsiStats * self)
{
  WsiStatsSnapshot *snap;
  GstStructure *report;

  g_mutex_lock (&self->report_lock);
  snap = take_snapshot (self, WSI_SNAPSHOT_REPORT);
  g_mutex_unlock (&self->report_lock);
  report = wsi_stats_report_structure (snap);
  wsi_stats_snapshot_free (snap);
  return report;
}

static void
gst_wsi_stats_reset (GstWsiStats * self)
{
  guint i;
  gdouble cpu_s;
  guint64 rss;

  g_mutex_lock (&self->report_lock);
  g_mutex_lock (&self->lock);
  for (i = 0; i < self->elements->len; i++) {
    WsiElementStats *es = g_ptr_array_index (self->elements, i);
    guint p;

    g_mutex_lock (&es->lock);
    memset (es->counts, 0, sizeof (es->counts));
    memset (es->hist, 0, sizeof (es->hist));
    memset (es->base_counts, 0, sizeof (es->base_counts));
    memset (es->base_hist, 0, sizeof (es->base_hist));
    for (p = 0; p < es->n_pads; p++) {
      memset (es->pads[p].counts, 0, sizeof (es->pads[p].counts));
      memset (es->pads[p].base, 0, sizeof (es->pads[p].base));
    }
    es->first_ts = es->last_ts = GST_CLOCK_TIME_NONE;
    es->last_arrival = es->last_departure = GST_CLOCK_TIME_NONE;
    g_mutex_unlock (&es->lock);
  }
  g_mutex_unlock (&self->lock);
  g_atomic_int_inc (&self->generation);
  process_usage (&rss, &cpu_s);
  self->start_ts = self->window_start_ts = now_ns ();
  self->cpu_start_s = self->cpu_window_s = cpu_s;
  self->final_written = FALSE;
  self->buffers_at_final = 0;
  g_mutex_unlock (&self->report_lock);
}

static void
gst_wsi_stats_write_report (GstWsiStats * self)
{
  WsiStatsSnapshot *snap;

  g_mutex_lock (&self->report_lock);
  snap = take_snapshot (self, WSI_SNAPSHOT_REPORT);
  write_json_line (self, snap);
  if (self->timeline)
    wsi_timeline_flush (self->timeline);
  print_summary (self, snap, "report");
  g_mutex_unlock (&self->report_lock);
  wsi_stats_snapshot_free (snap);
}

/* The lane id of @lane, made (and named) the first time; lanes beyond
 * MAX_LANES share the last one. */
static gint
lane_tid (GstWsiStats * self, const gchar * lane)
{
  const gchar *name = g_intern_string (lane);
  guint i;

  g_mutex_lock (&self->lock);
  for (i = 0; i < self->n_lanes; i++) {
    if (self->lane_names[i] == name)
      break;
  }
  if (i == self->n_lanes && self->n_lanes < MAX_LANES) {
    self->lane_names[self->n_lanes++] = name;
    wsi_timeline_add_thread_name (self->timeline, LANE_TID_BASE + i, name);
  }
  g_mutex_unlock (&self->lock);
  return LANE_TID_BASE + MIN (i, MAX_LANES - 1);
}

/* An application's own slice (a training step, a wait for data). */
static void
gst_wsi_stats_timeline_slice (GstWsiStats * self, const gchar * lane,
    const gchar * name, const gchar * category, guint64 start_ns,
    guint64 end_ns)
{
  gint tid;

  if (!self->active || self->timeline == NULL || name == NULL
      || end_ns < start_ns)
    return;
  if (lane != NULL && lane[0] != '\0')
    tid = lane_tid (self, lane);
  else
    tid = thread_state (self)->tid;
  /* interned: the ring keeps pointers; applications use a few names */
  wsi_timeline_add_slice (self->timeline, tid, g_intern_string (name),
      g_intern_string (category ? category : "app"),
      timeline_ts (self, start_ns), end_ns - start_ns);
}

/* Tests: the hooks' time is a clock that only advance-clock moves. */
static void
gst_wsi_stats_use_fake_clock (GstWsiStats * self, gboolean on)
{
  g_atomic_int_set (&self->fake_clock, on);
}

static void
gst_wsi_stats_advance_clock (GstWsiStats * self, guint64 ns)
{
  __atomic_add_fetch (&self->fake_now, ns, __ATOMIC_SEQ_CST);
}

/* ==== parameters ========================================================== */

static guint
param_uint (const GstStructure * s, const gchar * name, guint fallback,
    guint min, guint max)
{
  const GValue *v = gst_structure_get_value (s, name);
  gint64 value;

  if (v == NULL)
    return fallback;
  if (G_VALUE_HOLDS_INT (v))
    value = g_value_get_int (v);
  else if (G_VALUE_HOLDS_UINT (v))
    value = g_value_get_uint (v);
  else if (G_VALUE_HOLDS_STRING (v))
    value = g_ascii_strtoll (g_value_get_string (v), NULL, 10);
  else
    value = -1;
  if (value < min || value > max) {
    g_warning ("wsistats: %s must be a whole number from %u to %u; using %u",
        name, min, max, fallback);
    return fallback;
  }
  return (guint) value;
}

static const gchar *known_params[] = { "interval", "sample-interval", "file",
  "timeline", "timeline-capacity", "transit", "summary", NULL
};

static gboolean
warn_unknown_param (GQuark field, const GValue * value, gpointer user_data)
{
  if (!g_strv_contains (known_params, g_quark_to_string (field)))
    g_warning ("wsistats: unknown parameter \"%s\" ignored (known: interval, "
        "sample-interval, file, timeline, timeline-capacity, transit, "
        "summary)", g_quark_to_string (field));
  return TRUE;
}

static void
parse_params (GstWsiStats * self)
{
  gchar *params = NULL, *text;
  GstStructure *s;
  const gchar *transit = DEFAULT_TRANSIT;
  gboolean summary;

  g_object_get (self, "params", &params, NULL);
  text = g_strdup_printf ("wsistats,%s", params ? params : "");
  s = gst_structure_from_string (text, NULL);
  if (s == NULL && params) {
    g_warning ("wsistats: cannot parse parameters \"%s\" (expected e.g. "
        "interval=1000,file=/tmp/stats.jsonl); using defaults", params);
  }
  g_free (text);
  g_free (params);
  if (s == NULL)
    s = gst_structure_new_empty ("wsistats");

  gst_structure_foreach (s, warn_unknown_param, NULL);
  self->interval_ms = param_uint (s, "interval", DEFAULT_INTERVAL_MS, 0,
      3600 * 1000);
  self->sample_interval_ms = param_uint (s, "sample-interval",
      DEFAULT_SAMPLE_INTERVAL_MS, 1, 60 * 1000);
  self->timeline_capacity = param_uint (s, "timeline-capacity",
      DEFAULT_TIMELINE_CAPACITY, 1024, 64 * 1024 * 1024);
  self->file_path = g_strdup (gst_structure_get_string (s, "file"));
  self->timeline_path = g_strdup (gst_structure_get_string (s, "timeline"));
  if (gst_structure_get_string (s, "transit"))
    transit = gst_structure_get_string (s, "transit");
  self->transit_names = g_strsplit (transit, ",", -1);
  self->print_summary = TRUE;
  if (gst_structure_get_boolean (s, "summary", &summary))
    self->print_summary = summary;
  gst_structure_free (s);
}

/* ==== GObject ============================================================= */

static void
gst_wsi_stats_constructed (GObject * object)
{
  GstWsiStats *self = GST_WSI_STATS (object);
  GstTracer *tracer = GST_TRACER (object);
  gdouble cpu_s;
  guint64 rss;

  G_OBJECT_CLASS (parent_class)->constructed (object);
  parse_params (self);

  G_LOCK (instances);
  /* one instance: the per-thread push stacks are process-wide */
  self->active = instances == NULL;
  if (self->active)
    instances = g_list_prepend (instances, self);
  if (!atexit_registered) {
    atexit (report_at_exit);
    atexit_registered = TRUE;
  }
  G_UNLOCK (instances);
  if (!self->active) {
    g_warning ("wsistats: only one wsistats tracer per process; ignoring "
        "the second one");
    return;
  }

  self->stats_quark = g_quark_from_static_string ("wsistats-element");
  self->count_quark = g_quark_from_static_string ("count");
  self->records_quark = g_quark_from_static_string ("records");
  self->coordinates_quark = g_quark_from_static_string ("wsistats-coords");
  self->patch_meta_api = wsi_custom_meta_info (WSI_PATCH_META_NAME)->api;
  self->slide_meta_api = wsi_custom_meta_info (WSI_SLIDE_META_NAME)->api;
  self->prep_quarks[0] = g_quark_from_static_string ("prep-open-ns");
  self->prep_quarks[1] = g_quark_from_static_string ("prep-overview-ns");
  self->prep_quarks[2] = g_quark_from_static_string ("prep-wait-ns");
  self->prep_quarks[3] = g_quark_from_static_string ("prep-mask-ns");
  process_usage (&rss, &cpu_s);
  self->start_ts = self->window_start_ts = now_ns ();
  /* after the hooks' clock started: an upper bound calibrate_origin()
   * brings down to it */
  self->timeline_origin = self->start_ts;
  self->cpu_start_s = self->cpu_window_s = cpu_s;
  if (self->timeline_path)
    self->timeline = wsi_timeline_new (self->timeline_path,
        self->timeline_capacity);
  if (self->file_path) {
    /* truncate now so a stale file from an earlier run never passes */
    self->file = fopen (self->file_path, "w");
    if (self->file == NULL)
      g_warning ("wsistats: cannot write the stats file \"%s\": %s",
          self->file_path, g_strerror (errno));
  }

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
  gst_tracing_register_hook (tracer, "element-change-state-post",
      G_CALLBACK (change_state_post));
}

static void
gst_wsi_stats_finalize (GObject * object)
{
  GstWsiStats *self = GST_WSI_STATS (object);

  if (self->active) {
    G_LOCK (instances);
    instances = g_list_remove (instances, self);
    G_UNLOCK (instances);
    stop_reporter (self);
    write_final_report (self, "gst_deinit");
  }
  wsi_timeline_free (self->timeline);
  if (self->file)
    fclose (self->file);
  if (self->elements)
    g_ptr_array_free (self->elements, TRUE);
  g_free (self->file_path);
  g_free (self->timeline_path);
  g_strfreev (self->transit_names);
  g_mutex_clear (&self->lock);
  g_mutex_clear (&self->report_lock);
  g_mutex_clear (&self->thread_lock);
  g_cond_clear (&self->thread_cond);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_wsi_stats_init (GstWsiStats * self)
{
  g_mutex_init (&self->lock);
  g_mutex_init (&self->report_lock);
  g_mutex_init (&self->thread_lock);
  g_cond_init (&self->thread_cond);
  self->elements = g_ptr_array_new_with_free_func ((GDestroyNotify)
      element_stats_free);
}

static void
gst_wsi_stats_class_init (GstWsiStatsClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);

  gobject_class->constructed = gst_wsi_stats_constructed;
  gobject_class->finalize = gst_wsi_stats_finalize;

  wsi_stats_format_init ();

  /**
   * GstWsiStats::get-stats:
   * @tracer: the wsistats tracer
   *
   * Returns everything measured so far: cumulative numbers and the window
   * since the last interval report. See docs/tracer.md for the fields.
   *
   * Returns: (transfer full): a new #GstStructure named "wsistats"
   */
  signals[SIGNAL_GET_STATS] = g_signal_new_class_handler ("get-stats",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_wsi_stats_get_stats), NULL, NULL, NULL,
      GST_TYPE_STRUCTURE, 0, G_TYPE_NONE);

  /**
   * GstWsiStats::reset:
   * @tracer: the wsistats tracer
   *
   * Forgets every count, histogram and window: numbers start again now
   * (e.g. after a warm-up).
   */
  signals[SIGNAL_RESET] = g_signal_new_class_handler ("reset",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_wsi_stats_reset), NULL, NULL, NULL, G_TYPE_NONE, 0,
      G_TYPE_NONE);

  /**
   * GstWsiStats::write-report:
   * @tracer: the wsistats tracer
   *
   * Appends a report object (type "report") to the `file=` JSON Lines file,
   * flushes the `timeline=` file and prints the summary table on stderr.
   */
  signals[SIGNAL_WRITE_REPORT] = g_signal_new_class_handler ("write-report",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_wsi_stats_write_report), NULL, NULL, NULL, G_TYPE_NONE,
      0, G_TYPE_NONE);

  /**
   * GstWsiStats::timeline-slice:
   * @tracer: the wsistats tracer
   * @lane: the timeline lane (a row of its own, e.g. "consumer: training
   *   steps"); NULL or "" for the calling thread's lane
   * @name: the slice's name (e.g. "compute"); names are kept for the
   *   process' life, so use a few fixed ones
   * @category: the slice's "cat" (consumer-wait, consumer-compute, ...)
   * @start_ns: start, CLOCK_MONOTONIC ns (gst_util_get_timestamp(),
   *   Python's time.monotonic_ns())
   * @end_ns: end, same clock
   *
   * Adds an application's slice to the `timeline=` trace, beside the
   * pipeline's threads (gstwsi's BatchStream draws its appsink pulls and
   * Monitor.mark_step its steps this way). Does nothing without `timeline=`.
   */
  signals[SIGNAL_TIMELINE_SLICE] = g_signal_new_class_handler
      ("timeline-slice", G_TYPE_FROM_CLASS (klass),
      G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_wsi_stats_timeline_slice), NULL, NULL, NULL,
      G_TYPE_NONE, 5, G_TYPE_STRING, G_TYPE_STRING, G_TYPE_STRING,
      G_TYPE_UINT64, G_TYPE_UINT64);

  /**
   * GstWsiStats::use-fake-clock:
   * @tracer: the wsistats tracer
   * @on: TRUE: account with the fake clock; FALSE: with GStreamer's again
   *
   * For tests. While on, the time the tracer accounts pushes and pulls
   * with (GStreamer's hook timestamps) is a clock that stands still except
   * when "advance-clock" moves it: a test that advances it where its
   * pipeline "works" (a handoff instead of a sleep) gets exact busy and
   * wait shares and verdicts whatever the machine's load. The timeline's
   * pipeline slices follow that clock too; queue sampling and CPU time
   * stay on real time. Turn it on before the pipeline starts and off
   * after it stopped (the two clocks' times do not mix).
   */
  signals[SIGNAL_USE_FAKE_CLOCK] = g_signal_new_class_handler
      ("use-fake-clock", G_TYPE_FROM_CLASS (klass),
      G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_wsi_stats_use_fake_clock), NULL, NULL, NULL,
      G_TYPE_NONE, 1, G_TYPE_BOOLEAN);

  /**
   * GstWsiStats::advance-clock:
   * @tracer: the wsistats tracer
   * @ns: nanoseconds to move the fake clock forward
   *
   * For tests: moves the clock of "use-fake-clock".
   */
  signals[SIGNAL_ADVANCE_CLOCK] = g_signal_new_class_handler
      ("advance-clock", G_TYPE_FROM_CLASS (klass),
      G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_wsi_stats_advance_clock), NULL, NULL, NULL,
      G_TYPE_NONE, 1, G_TYPE_UINT64);
}
