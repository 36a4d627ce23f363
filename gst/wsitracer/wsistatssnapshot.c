/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsistatssnapshot.c: the typed copy of wsistats' numbers (see
 * wsistatssnapshot.h). */

#include <string.h>

#include "wsistatssnapshot.h"

/* Verdict thresholds: the share of sink time that decides. */
#define VERDICT_SHARE 0.6

const gchar *const wsi_hist_names[WSI_N_HISTS] = {
  "self", "loop", "age", "transit", "interval", "level", "fill",
  "prep-open", "prep-overview", "prep-wait", "prep-mask"
};

/* One element's counters, copied under its lock so the numbers agree. */
typedef struct
{
  guint64 counts[WSI_N_COUNTS];
  WsiHistogram hist[WSI_N_HISTS];
  GstClockTime first_ts, last_ts;
  WsiPadStats pads[WSI_STATS_MAX_PADS];
  guint n_pads;
} WsiElementCopy;

WsiStatsSnapshot *
wsi_stats_snapshot_new (WsiSnapshotType type, guint max_elements)
{
  WsiStatsSnapshot *s = g_new0 (WsiStatsSnapshot, 1);

  s->type = type;
  s->elements = g_new0 (WsiElementSnapshot, MAX (max_elements, 1));
  return s;
}

void
wsi_stats_snapshot_free (WsiStatsSnapshot * s)
{
  guint i;

  if (s == NULL)
    return;
  for (i = 0; i < s->n_elements; i++) {
    if (s->elements[i].read_stats)
      gst_structure_free (s->elements[i].read_stats);
    if (s->elements[i].slide_counts)
      gst_structure_free (s->elements[i].slide_counts);
  }
  g_free (s->elements);
  g_free (s);
}

const gchar *
wsi_snapshot_type_name (WsiSnapshotType type)
{
  switch (type) {
    case WSI_SNAPSHOT_FINAL:
      return "final";
    case WSI_SNAPSHOT_INTERVAL:
      return "interval";
    default:
      return "report";
  }
}

static gdouble
per_second (guint64 count, guint64 span_ns)
{
  return span_ns > 0 ? count * 1e9 / span_ns : 0.0;
}

static void
rates (WsiRates * r, guint64 buffers, guint64 patches, guint64 bytes,
    guint64 span_ns)
{
  r->buffers = per_second (buffers, span_ns);
  r->patches = per_second (patches, span_ns);
  r->bytes = per_second (bytes, span_ns);
}

/* What the element is, from its flags and pads (read while it lives). */
static const gchar *
element_shape (WsiElementStats * es, GstElement * element)
{
  if (element) {
    es->sink_pads = element->numsinkpads;
    es->src_pads = element->numsrcpads;
  }
  if (es->is_queue)
    return "queue";
  if (es->is_sink)
    return "sink";
  if (es->is_source || es->sink_pads == 0)
    return "source";
  if (es->sink_pads > 1)
    return "aggregator";
  if (es->src_pads > 1)
    return "demuxer";
  return "filter";
}

static void
verdict_of (WsiVerdict * v, guint64 busy, guint64 wait)
{
  guint64 total = busy + wait;

  v->trainer_bound = total ? (gdouble) busy / total : 0.0;
  v->loader_bound = total ? (gdouble) wait / total : 0.0;
  if (total == 0)
    v->verdict = "unknown";
  else if (v->trainer_bound >= VERDICT_SHARE)
    v->verdict = "trainer-bound";
  else if (v->loader_bound >= VERDICT_SHARE)
    v->verdict = "loader-bound";
  else
    v->verdict = "balanced";
}

/* Readers that say which backend decoded how much (patchreader's
 * `read-stats`: patches per backend, tile cache hits and misses). */
static GstStructure *
read_stats_of (GstElement * element)
{
  GParamSpec *spec = g_object_class_find_property (G_OBJECT_GET_CLASS
      (element), "read-stats");
  GstStructure *stats = NULL;

  if (spec == NULL || spec->value_type != GST_TYPE_STRUCTURE)
    return NULL;
  g_object_get (element, "read-stats", &stats, NULL);
  return stats;
}

/* A read-only guint property of @element named @name, or FALSE when it
 * has none (a setting of that name is not a counter). */
static gboolean
uint_counter (GstElement * element, const gchar * name, guint * value)
{
  GParamSpec *spec = g_object_class_find_property (G_OBJECT_GET_CLASS
      (element), name);

  if (spec == NULL || spec->value_type != G_TYPE_UINT
      || (spec->flags & G_PARAM_WRITABLE))
    return FALSE;
  g_object_get (element, name, value, NULL);
  return TRUE;
}

/* Slide sources (wsislidesrc: `slides-damaged` and `damaged-slides` beside
 * `slides-opened` and `slides-failed`): the slides opened, failed and found
 * damaged, with the damaged ones' names, so the summary tells a user of
 * them without querying the element. NULL for other elements. */
static GstStructure *
slide_counts_of (GstElement * element)
{
  GParamSpec *names_spec = g_object_class_find_property (G_OBJECT_GET_CLASS
      (element), "damaged-slides");
  guint opened = 0, failed = 0, damaged = 0;
  GValue array = G_VALUE_INIT;
  GstStructure *counts;
  gchar **names = NULL;
  guint i;

  if (!uint_counter (element, "slides-damaged", &damaged))
    return NULL;
  uint_counter (element, "slides-opened", &opened);
  uint_counter (element, "slides-failed", &failed);
  if (names_spec != NULL && names_spec->value_type == G_TYPE_STRV)
    g_object_get (element, "damaged-slides", &names, NULL);
  gst_value_array_init (&array, names ? g_strv_length (names) : 0);
  for (i = 0; names != NULL && names[i] != NULL; i++) {
    GValue name = G_VALUE_INIT;

    g_value_init (&name, G_TYPE_STRING);
    g_value_set_string (&name, names[i]);
    gst_value_array_append_and_take_value (&array, &name);
  }
  g_strfreev (names);
  counts = gst_structure_new ("slides", "opened", G_TYPE_UINT, opened,
      "failed", G_TYPE_UINT, failed, "damaged", G_TYPE_UINT, damaged, NULL);
  gst_structure_take_value (counts, "damaged-slides", &array);
  return counts;
}

static void
copy_counters (WsiElementStats * es, WsiElementCopy * c)
{
  g_mutex_lock (&es->lock);
  memcpy (c->counts, es->counts, sizeof (c->counts));
  memcpy (c->hist, es->hist, sizeof (c->hist));
  memcpy (c->pads, es->pads, sizeof (c->pads));
  c->n_pads = es->n_pads;
  c->first_ts = es->first_ts;
  c->last_ts = es->last_ts;
  g_mutex_unlock (&es->lock);
}

/* The window restarts at the copied numbers. */
static void
advance_window (WsiElementStats * es, const WsiElementCopy * c)
{
  guint i;

  memcpy (es->base_counts, c->counts, sizeof (es->base_counts));
  memcpy (es->base_hist, c->hist, sizeof (es->base_hist));
  g_mutex_lock (&es->lock);
  for (i = 0; i < c->n_pads; i++)
    memcpy (es->pads[i].base, c->pads[i].counts, sizeof (es->pads[i].base));
  g_mutex_unlock (&es->lock);
}

static void
snapshot_histograms (WsiElementSnapshot * e, WsiElementStats * es,
    const WsiElementCopy * c)
{
  WsiHistogram *window = g_new (WsiHistogram, 1);
  guint i;

  for (i = 0; i < WSI_N_HISTS; i++) {
    /* self and loop always (zero counts say which shape applies); the
     * others only where they were measured */
    e->hist[i].present = i <= WSI_HIST_LOOP || c->hist[i].count > 0;
    if (!e->hist[i].present)
      continue;
    wsi_histogram_subtract (window, &c->hist[i], &es->base_hist[i]);
    wsi_histogram_summarize (&c->hist[i], &e->hist[i].total);
    wsi_histogram_summarize (window, &e->hist[i].window);
  }
  g_free (window);
}

static void
snapshot_pads (WsiElementSnapshot * e, const WsiElementCopy * c,
    guint64 span_ns, guint64 window_ns)
{
  guint i;

  e->n_pads = c->n_pads;
  for (i = 0; i < c->n_pads; i++) {
    const WsiPadStats *ps = &c->pads[i];
    WsiPadSnapshot *p = &e->pads[i];

    p->name = ps->name;
    p->is_src = ps->is_src;
    p->buffers = ps->counts[WSI_PAD_BUFFERS];
    p->patches = ps->counts[WSI_PAD_PATCHES];
    p->bytes = ps->counts[WSI_PAD_BYTES];
    rates (&p->rate, p->buffers, p->patches, p->bytes, span_ns);
    rates (&p->window_rate, p->buffers - ps->base[WSI_PAD_BUFFERS],
        p->patches - ps->base[WSI_PAD_PATCHES],
        p->bytes - ps->base[WSI_PAD_BYTES], window_ns);
  }
}

void
wsi_stats_snapshot_add_element (WsiStatsSnapshot * s, WsiElementStats * es,
    guint64 window_ns, gboolean advance)
{
  WsiElementSnapshot *e = &s->elements[s->n_elements++];
  WsiElementCopy *c = g_new (WsiElementCopy, 1);
  GstElement *alive = g_weak_ref_get (&es->ref);
  guint64 win[WSI_N_COUNTS], span = 0;
  gboolean outputs;
  guint i;

  copy_counters (es, c);
  for (i = 0; i < WSI_N_COUNTS; i++)
    win[i] = c->counts[i] - es->base_counts[i];
  if (c->first_ts != GST_CLOCK_TIME_NONE && c->last_ts > c->first_ts)
    span = c->last_ts - c->first_ts;
  /* rates of what leaves; of what arrives for sinks */
  outputs = c->counts[WSI_COUNT_BUFFERS_OUT] > 0;

  e->name = es->name;
  e->factory = es->factory;
  e->shape = element_shape (es, alive);
  e->alive = alive != NULL;
  e->buffers_in = c->counts[WSI_COUNT_BUFFERS_IN];
  e->buffers_out = c->counts[WSI_COUNT_BUFFERS_OUT];
  e->patches_in = c->counts[WSI_COUNT_PATCHES_IN];
  e->patches_out = c->counts[WSI_COUNT_PATCHES_OUT];
  e->bytes_in = c->counts[WSI_COUNT_BYTES_IN];
  e->bytes_out = c->counts[WSI_COUNT_BYTES_OUT];
  e->span_s = span / 1e9;
  if (outputs) {
    rates (&e->rate, e->buffers_out, e->patches_out, e->bytes_out, span);
    rates (&e->window_rate, win[WSI_COUNT_BUFFERS_OUT],
        win[WSI_COUNT_PATCHES_OUT], win[WSI_COUNT_BYTES_OUT], window_ns);
  } else {
    rates (&e->rate, e->buffers_in, e->patches_in, e->bytes_in, span);
    rates (&e->window_rate, win[WSI_COUNT_BUFFERS_IN],
        win[WSI_COUNT_PATCHES_IN], win[WSI_COUNT_BYTES_IN], window_ns);
  }
  if (alive) {
    e->read_stats = read_stats_of (alive);
    e->slide_counts = slide_counts_of (alive);
    gst_object_unref (alive);
  }
  snapshot_histograms (e, es, c);

  e->work_s = c->counts[WSI_COUNT_WORK_NS] / 1e9;
  e->io_wait_s = c->counts[WSI_COUNT_IO_WAIT_NS] / 1e9;
  e->io_waits = c->counts[WSI_COUNT_IO_WAITS];

  e->is_sink = es->is_sink;
  if (es->is_sink) {
    e->busy_s = c->counts[WSI_COUNT_BUSY_NS] / 1e9;
    e->wait_s = c->counts[WSI_COUNT_WAIT_NS] / 1e9;
    verdict_of (&e->verdict, c->counts[WSI_COUNT_BUSY_NS],
        c->counts[WSI_COUNT_WAIT_NS]);
    verdict_of (&e->verdict_window, win[WSI_COUNT_BUSY_NS],
        win[WSI_COUNT_WAIT_NS]);
  }
  e->is_queue = es->is_queue;
  if (es->is_queue) {
    guint64 n = c->counts[WSI_COUNT_SAMPLES], wn = win[WSI_COUNT_SAMPLES];

    e->samples = n;
    e->empty_share = n ? (gdouble) c->counts[WSI_COUNT_EMPTY] / n : 0.0;
    e->full_share = n ? (gdouble) c->counts[WSI_COUNT_FULL] / n : 0.0;
    e->empty_share_window = wn ? (gdouble) win[WSI_COUNT_EMPTY] / wn : 0.0;
    e->full_share_window = wn ? (gdouble) win[WSI_COUNT_FULL] / wn : 0.0;
  }
  snapshot_pads (e, c, span, window_ns);

  if (advance)
    advance_window (es, c);
  g_free (c);
}

/* The sink that saw the most buffers speaks for the pipeline (the first
 * of equals). */
void
wsi_stats_snapshot_finish (WsiStatsSnapshot * s)
{
  guint i;

  s->main_sink = NULL;
  s->buffers_in = 0;
  for (i = 0; i < s->n_elements; i++) {
    const WsiElementSnapshot *e = &s->elements[i];

    s->buffers_in += e->buffers_in;
    if (e->is_sink && (s->main_sink == NULL
            || e->buffers_in > s->main_sink->buffers_in))
      s->main_sink = e;
  }
}
