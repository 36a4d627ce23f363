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
 * Files: this one holds the parameters, the action signals, the state
 * changes and the reporter thread; wsistatsbook.c the per-stage
 * bookkeeping (the hooks, the per-thread push stacks, the queue sampler);
 * wsistatscounters.h the live counters;
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
#include "wsistatsbook.h"
#include "wsistatssnapshot.h"
#include "wsitimeline.h"

GST_DEBUG_CATEGORY (gst_wsi_stats_debug);
#define GST_CAT_DEFAULT gst_wsi_stats_debug

#define DEFAULT_INTERVAL_MS 1000
#define DEFAULT_SAMPLE_INTERVAL_MS 10
#define DEFAULT_TIMELINE_CAPACITY 262144
#define DEFAULT_TRANSIT "patchreader"

/* Lane ids for timeline-slice lanes: above any kernel thread id. */
#define LANE_TID_BASE 0x40000000

/* ---- the tracer ---------------------------------------------------------- */


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


/* ---- state changes ---- */

static void ensure_reporter (GstWsiStats * self);

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
      wsi_stats_forget_run_state (es);
    if (top_pipeline)
      ensure_reporter (self);
  } else if (transition == GST_STATE_CHANGE_PAUSED_TO_READY && top_pipeline) {
    gchar *why = g_strdup_printf ("%s stopped", GST_OBJECT_NAME (element));

    write_final_report (self, why);
    g_free (why);
  }
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
  snap = wsi_stats_take_snapshot (self, WSI_SNAPSHOT_FINAL);
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
  snap = wsi_stats_take_snapshot (self, WSI_SNAPSHOT_INTERVAL);
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

    wsi_stats_sample_queues (self);
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
  snap = wsi_stats_take_snapshot (self, WSI_SNAPSHOT_REPORT);
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
  wsi_stats_process_usage (&rss, &cpu_s);
  self->start_ts = self->window_start_ts = wsi_stats_now_ns ();
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
  snap = wsi_stats_take_snapshot (self, WSI_SNAPSHOT_REPORT);
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
    tid = wsi_stats_thread_tid (self);
  /* interned: the ring keeps pointers; applications use a few names */
  wsi_timeline_add_slice (self->timeline, tid, g_intern_string (name),
      g_intern_string (category ? category : "app"),
      wsi_stats_timeline_ts (self, start_ns), end_ns - start_ns);
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
  wsi_stats_process_usage (&rss, &cpu_s);
  self->start_ts = self->window_start_ts = wsi_stats_now_ns ();
  /* after the hooks' clock started: an upper bound wsi_stats_calibrate_origin()
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

  wsi_stats_book_register_hooks (self);
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
      wsi_element_stats_free);
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
