/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * bench-pipeline: the whole pipeline against the OpenSlide ceiling.
 *
 * Default mode, on the same slides and the SAME regions in one run:
 *   plan  the standard pipeline runs once (cycle=false, fixed seed) into an
 *         appsink; the WsiPatchMeta of each batch gives every patch's slide,
 *         x, y, level and read_size, exactly as patchreader read them;
 *   (a)   bare: N threads looping over openslide_read_region (ARGB only) on
 *         those regions, handles opened before the clock starts: the ceiling
 *         of any OpenSlide-based loader;
 *   (b)   pipeline: the same seeded pipeline again, ending in fakesink,
 *         timed from PLAYING to EOS (slide opening and masks included).
 * (a) and (b) alternate, --repeats times, for each N of --threads; medians
 * and min..max are printed.
 *
 * --steady: one cycling pipeline (cycle=true, masks cached after the first
 * pass) into an appsink pulled as fast as possible; after --warmup batches
 * it measures --batches batches: patches/s, batch time p50/p95/max (time
 * between two pulls) and the process peak RSS. With --first-pass-batches K
 * the measured batches are also split at batch K of the stream (warm-up
 * included): a line for the batches up to K ("first pass": with few patches
 * per slide, every slide seen for the first time) and one for those after
 * ("later passes": slides revisited, masks cached), each with its slide
 * visits, overviews read and masks computed over the same window, so that
 * a cold and a warm rate come from one run.
 *
 *   bench-pipeline --location DIR [--target-mpp 0] [--threads 1,2]
 *                  [--repeats 3] [--seed 7] [--patches-per-slide 100]
 *   bench-pipeline --steady --location DIR [--pool-size 8] [--threads 2]
 *                  [--batch-size 64] [--queue-batches 4] [--read-ahead N]
 *                  [--first-pass-batches K]
 */

#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/wsi/wsirecord.h>
#include <openslide.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
  gchar *location;
  gdouble target_mpp, default_mpp;
  gint patch_size, patches_per_slide, pool_size, patches_per_visit;
  gint batch_size, queue_batches, repeats, warmup, batches;
  gint prepare_ahead;           /* wsislidesrc prepare-ahead, -1: default */
  gint tile_cache_mb;           /* patchreader tile-cache-size, -1: default */
  gint read_ahead;              /* patchreader read-ahead, -1: default */
  gint thumbnail_size;          /* wsislidesrc thumbnail-size, -1: default */
  gint first_pass_batches;      /* --steady: phase split, 0: none */
  gint64 seed;
  gchar *threads;
  gboolean steady;
  gchar *mask_cache_dir;        /* tissuemask mask-cache-dir, NULL: off */
} BenchOptions;

/* One region of the plan, as patchreader read it. */
typedef struct
{
  guint slide;                  /* index into BenchPlan.paths */
  gint64 x, y;
  guint level, read_size;
} BenchRegion;

typedef struct
{
  GPtrArray *paths;             /* unique slide paths, owned */
  GArray *regions;              /* BenchRegion */
} BenchPlan;

/* ---- the pipeline ------------------------------------------------------- */

/* The standard pipeline of the README, with the knobs of this benchmark. */
static gchar *
pipeline_description (const BenchOptions * o, guint threads, gboolean cycle,
    const gchar * sink)
{
  gchar mpp[G_ASCII_DTOSTR_BUF_SIZE], dmpp[G_ASCII_DTOSTR_BUF_SIZE];
  gchar ahead[32] = "", reader_props[80] = "", thumb[40] = "";
  gchar *mask_props = g_strdup (""), *desc;

  g_ascii_dtostr (mpp, sizeof (mpp), o->target_mpp);
  g_ascii_dtostr (dmpp, sizeof (dmpp), o->default_mpp);
  if (o->prepare_ahead >= 0)
    g_snprintf (ahead, sizeof (ahead), " prepare-ahead=%d", o->prepare_ahead);
  if (o->tile_cache_mb >= 0)
    g_snprintf (reader_props, sizeof (reader_props), " tile-cache-size=%d",
        o->tile_cache_mb);
  if (o->read_ahead >= 0)
    g_snprintf (reader_props + strlen (reader_props),
        sizeof (reader_props) - strlen (reader_props),
        " read-ahead=%d", o->read_ahead);
  if (o->thumbnail_size > 0)
    g_snprintf (thumb, sizeof (thumb), " thumbnail-size=%d", o->thumbnail_size);
  if (o->mask_cache_dir != NULL) {
    g_free (mask_props);
    mask_props = g_strdup_printf (" mask-cache-dir=\"%s\"", o->mask_cache_dir);
  }
  desc = g_strdup_printf ("wsislidesrc name=src location=\"%s\" cycle=%s "
      "seed=%" G_GINT64_FORMAT " default-mpp=%s%s%s ! tissuemask name=mask%s "
      "! queue "
      "max-size-buffers=4 max-size-bytes=0 max-size-time=0 "
      "! patchsampler patch-size=%d target-mpp=%s patches-per-slide=%d "
      "! patchinterleave pool-size=%d patches-per-visit=%d "
      "! patchreader name=reader threads=%u%s ! queue max-size-buffers=%d "
      "max-size-bytes=0 max-size-time=0 ! patchbatch batch-size=%d ! %s",
      o->location, cycle ? "true" : "false", o->seed, dmpp, ahead, thumb,
      mask_props, o->patch_size,
      mpp, o->patches_per_slide, o->pool_size, o->patches_per_visit, threads,
      reader_props,
      o->queue_batches * o->batch_size, o->batch_size, sink);
  g_free (mask_props);
  return desc;
}

static GstElement *
make_pipeline (const gchar * desc)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &error);

  if (pipeline == NULL || error != NULL) {
    g_printerr ("cannot build the pipeline: %s\n  %s\n",
        error ? error->message : "unknown error", desc);
    exit (2);
  }
  return pipeline;
}

/* Fails loudly on a pipeline error: a benchmark of a broken run lies. */
static void
check_bus (GstElement * pipeline)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);

  if (msg != NULL) {
    GError *err = NULL;
    gst_message_parse_error (msg, &err, NULL);
    g_printerr ("pipeline error: %s\n", err->message);
    exit (1);
  }
  gst_object_unref (bus);
}

static guint
plan_slide (BenchPlan * plan, GHashTable * index, const gchar * path)
{
  gpointer value;

  if (g_hash_table_lookup_extended (index, path, NULL, &value))
    return GPOINTER_TO_UINT (value);
  g_ptr_array_add (plan->paths, g_strdup (path));
  g_hash_table_insert (index, g_ptr_array_index (plan->paths,
          plan->paths->len - 1), GUINT_TO_POINTER (plan->paths->len - 1));
  return plan->paths->len - 1;
}

/* Runs the seeded pipeline once and keeps every region it read. */
static BenchPlan
make_plan (const BenchOptions * o)
{
  BenchPlan plan = { g_ptr_array_new_with_free_func (g_free),
    g_array_new (FALSE, FALSE, sizeof (BenchRegion))
  };
  GHashTable *index = g_hash_table_new (g_str_hash, g_str_equal);
  gchar *desc = pipeline_description (o, 2, FALSE,
      "appsink name=sink sync=false max-buffers=4");
  GstElement *pipeline = make_pipeline (desc);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstSample *sample;

  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  while ((sample = gst_app_sink_pull_sample (GST_APP_SINK (sink)))) {
    GstStructure *meta = wsi_patch_meta_get (gst_sample_get_buffer (sample));
    const WsiPatchRecord *records;
    guint n = 0, i;

    records = meta ? wsi_patch_meta_records (meta, &n) : NULL;
    for (i = 0; i < n; i++) {
      BenchRegion r;

      r.slide = plan_slide (&plan, index,
          wsi_patch_meta_string (meta, "paths", i));
      r.x = records[i].x;
      r.y = records[i].y;
      r.level = records[i].level;
      r.read_size = records[i].read_size;
      g_array_append_val (plan.regions, r);
    }
    gst_sample_unref (sample);
  }
  check_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_hash_table_unref (index);
  g_free (desc);
  return plan;
}

/* Arrival times of batches at the sink of (b), from a pad probe. */
typedef struct
{
  gint64 first_us;              /* when the first batch arrived */
  gint64 last_us;               /* when the last batch arrived */
  guint64 first_patches;        /* patches in the first batch */
  guint64 patches;              /* all patches */
} BatchArrivals;

static GstPadProbeReturn
count_batch (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  BatchArrivals *arrivals = user_data;
  GstStructure *meta = wsi_patch_meta_get (GST_PAD_PROBE_INFO_BUFFER (info));
  guint n = 0;

  if (meta != NULL)
    gst_structure_get_uint (meta, "count", &n);
  arrivals->last_us = g_get_monotonic_time ();
  if (arrivals->patches == 0) {
    arrivals->first_us = arrivals->last_us;
    arrivals->first_patches = n;
  }
  arrivals->patches += n;
  return GST_PAD_PROBE_OK;
}

/* (b): the same seeded pipeline, timed from PLAYING to EOS (slide opening,
 * overviews and masks included) and from its first batch on (every slide of
 * the pool is open by then: the steady part). Returns the first rate and
 * stores the second in @after_first. */
static gdouble
run_pipeline (const BenchOptions * o, guint threads, guint expected,
    gdouble * after_first)
{
  gchar *desc = pipeline_description (o, threads, FALSE,
      "fakesink name=sink sync=false");
  GstElement *pipeline = make_pipeline (desc);
  GstElement *reader = gst_bin_get_by_name (GST_BIN (pipeline), "reader");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstPad *sinkpad = gst_element_get_static_pad (sink, "sink");
  GstBus *bus = gst_element_get_bus (pipeline);
  BatchArrivals arrivals = { 0, 0, 0, 0 };
  GstMessage *msg;
  guint64 read = 0;
  gint64 start;

  gst_pad_add_probe (sinkpad, GST_PAD_PROBE_TYPE_BUFFER, count_batch,
      &arrivals, NULL);
  start = g_get_monotonic_time ();
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  start = g_get_monotonic_time () - start;
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    g_printerr ("pipeline error: %" GST_PTR_FORMAT "\n", msg);
    exit (1);
  }
  gst_message_unref (msg);
  g_object_get (reader, "patches-read", &read, NULL);
  if (read != expected)
    g_printerr ("warning: the pipeline read %" G_GUINT64_FORMAT " patches, "
        "the plan has %u: the plan is not deterministic\n", read, expected);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  *after_first = arrivals.last_us > arrivals.first_us ?
      (arrivals.patches - arrivals.first_patches) /
      ((arrivals.last_us - arrivals.first_us) / 1e6) : 0.0;
  gst_object_unref (bus);
  gst_object_unref (sinkpad);
  gst_object_unref (sink);
  gst_object_unref (reader);
  gst_object_unref (pipeline);
  g_free (desc);
  return read / (start / 1e6);
}

/* ---- (a) the bare loop -------------------------------------------------- */

typedef struct
{
  const BenchPlan *plan;
  openslide_t **handles;
  gint next;                    /* atomic: next region to read */
} BareRun;

static gpointer
bare_worker (gpointer data)
{
  BareRun *run = data;
  guint32 *argb = NULL;
  gsize capacity = 0;
  gint i;

  while ((i = g_atomic_int_add (&run->next, 1)) < (gint) run->plan->regions->len) {
    const BenchRegion *r = &g_array_index (run->plan->regions, BenchRegion, i);
    gsize n = (gsize) r->read_size * r->read_size;

    if (n > capacity) {
      argb = g_renew (guint32, argb, n);
      capacity = n;
    }
    openslide_read_region (run->handles[r->slide], argb, r->x, r->y,
        r->level, r->read_size, r->read_size);
  }
  g_free (argb);
  return NULL;
}

/* Fresh handles every run (cold tile caches, as a fresh pipeline has),
 * opened before the clock starts. */
static gdouble
run_bare (const BenchPlan * plan, guint threads)
{
  BareRun run = { plan, g_new (openslide_t *, plan->paths->len), 0 };
  GThread **workers = g_new (GThread *, threads);
  gint64 start;
  guint i;

  for (i = 0; i < plan->paths->len; i++)
    run.handles[i] = openslide_open (g_ptr_array_index (plan->paths, i));
  start = g_get_monotonic_time ();
  for (i = 0; i < threads; i++)
    workers[i] = g_thread_new ("bare", bare_worker, &run);
  for (i = 0; i < threads; i++)
    g_thread_join (workers[i]);
  start = g_get_monotonic_time () - start;
  for (i = 0; i < plan->paths->len; i++)
    openslide_close (run.handles[i]);
  g_free (run.handles);
  g_free (workers);
  return plan->regions->len / (start / 1e6);
}

/* ---- statistics --------------------------------------------------------- */

static gint
compare_doubles (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;
  return (x > y) - (x < y);
}

/* Nearest-rank percentile of @values (sorted in place). */
static gdouble
percentile (gdouble * values, guint n, gdouble p)
{
  guint rank;

  qsort (values, n, sizeof (gdouble), compare_doubles);
  rank = (guint) (p / 100.0 * n + 0.999999);
  return values[CLAMP (rank, 1, n) - 1];
}

/* User + system CPU time of the whole process, in µs: unlike wall time it
 * barely moves when other work shares the cores. */
static gint64
cpu_time_us (void)
{
  struct rusage usage;

  getrusage (RUSAGE_SELF, &usage);
  return (gint64) (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000
      + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
}

static glong
peak_rss_kib (void)
{
  struct rusage usage;

  getrusage (RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

/* ---- the two modes ------------------------------------------------------ */

static void
print_plan (const BenchOptions * o, const BenchPlan * plan)
{
  GHashTable *levels = g_hash_table_new (g_str_hash, g_str_equal);
  guint i;

  g_print ("%u slides, %u patches of %dx%d (target-mpp %g, seed %"
      G_GINT64_FORMAT ")\n", plan->paths->len, plan->regions->len,
      o->patch_size, o->patch_size, o->target_mpp, o->seed);
  for (i = 0; i < plan->regions->len; i++) {
    const BenchRegion *r = &g_array_index (plan->regions, BenchRegion, i);
    gchar *key = g_strdup_printf ("level %u, %u px read", r->level,
        r->read_size);
    gpointer n = g_hash_table_lookup (levels, key);

    g_hash_table_replace (levels, key, GUINT_TO_POINTER (GPOINTER_TO_UINT (n)
            + 1));
  }
  {
    GHashTableIter iter;
    gpointer key, value;

    g_hash_table_iter_init (&iter, levels);
    while (g_hash_table_iter_next (&iter, &key, &value))
      g_print ("  %5u patches at %s\n", GPOINTER_TO_UINT (value),
          (gchar *) key);
  }
  g_hash_table_destroy (levels);
}

static int
compare_mode (const BenchOptions * o)
{
  BenchPlan plan = make_plan (o);
  gchar **threads_v = g_strsplit (o->threads, ",", -1);
  guint n_threads = g_strv_length (threads_v), t, rep;
  gdouble *bare = g_new0 (gdouble, n_threads * o->repeats);
  gdouble *piped = g_new0 (gdouble, n_threads * o->repeats);
  gdouble *steady = g_new0 (gdouble, n_threads * o->repeats);

  if (plan.regions->len == 0) {
    g_printerr ("the pipeline produced no patches on %s\n", o->location);
    return 1;
  }
  print_plan (o, &plan);

  /* Alternate (a) and (b) so that load from elsewhere hits both alike. */
  for (rep = 0; rep < (guint) o->repeats; rep++)
    for (t = 0; t < n_threads; t++) {
      guint n = (guint) g_ascii_strtoull (threads_v[t], NULL, 10);
      guint k = t * o->repeats + rep;

      bare[k] = run_bare (&plan, MAX (n, 1));
      piped[k] = run_pipeline (o, MAX (n, 1), plan.regions->len,
          &steady[k]);
      g_print ("  run %u threads=%s: bare %.1f, pipeline %.1f patches/s "
          "(%.1f after its first batch)\n", rep + 1, threads_v[t], bare[k],
          piped[k], steady[k]);
    }

  g_print ("threads  bare p/s (min..max)        pipeline p/s (min..max)     "
      "ratio   after 1st batch (min..max)  ratio\n");
  for (t = 0; t < n_threads; t++) {
    gdouble *b = bare + t * o->repeats, *p = piped + t * o->repeats;
    gdouble *f = steady + t * o->repeats;
    gdouble bm = percentile (b, o->repeats, 50);
    gdouble pm = percentile (p, o->repeats, 50);
    gdouble fm = percentile (f, o->repeats, 50);

    g_print ("%7s  %7.1f (%6.1f..%6.1f)     %7.1f (%6.1f..%6.1f)    %.2f    "
        "%7.1f (%6.1f..%6.1f)    %.2f\n", threads_v[t], bm, b[0],
        b[o->repeats - 1], pm, p[0], p[o->repeats - 1], pm / bm, fm, f[0],
        f[o->repeats - 1], fm / bm);
  }
  g_print ("peak RSS %.1f MiB\n", peak_rss_kib () / 1024.0);

  g_free (bare);
  g_free (piped);
  g_free (steady);
  g_strfreev (threads_v);
  g_ptr_array_unref (plan.paths);
  g_array_unref (plan.regions);
  return 0;
}

/* Slide visits the source pushed and how many carried an overview (the
 * rest had their mask cached downstream), counted at its source pad. */
typedef struct
{
  gint visits;                  /* atomic */
  gint overviews;               /* atomic */
} SlideCounts;

static GstPadProbeReturn
count_slide (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  SlideCounts *counts = user_data;
  GstStructure *meta = wsi_slide_meta_get (GST_PAD_PROBE_INFO_BUFFER (info));
  gboolean has_overview = FALSE;

  if (meta == NULL)
    return GST_PAD_PROBE_OK;
  gst_structure_get_boolean (meta, "has-overview", &has_overview);
  g_atomic_int_inc (&counts->visits);
  if (has_overview)
    g_atomic_int_inc (&counts->overviews);
  return GST_PAD_PROBE_OK;
}

/* Where the stream stood when a batch arrived at the sink. */
typedef struct
{
  gint batch;                   /* batches pulled, this one included */
  gint64 wall_us, cpu_us;
  guint64 patches;              /* measured patches up to this batch */
  gint visits, overviews;
  guint64 masks;                /* tissuemask masks-computed */
} StreamMark;

static StreamMark
mark_stream (GstElement * mask, const SlideCounts * counts, gint batch,
    gint64 now, guint64 patches)
{
  StreamMark m = { batch, now, cpu_time_us (), patches,
    g_atomic_int_get (&counts->visits), g_atomic_int_get (&counts->overviews),
    0
  };

  g_object_get (mask, "masks-computed", &m.masks, NULL);
  return m;
}

/* One line for the batches between two marks (@intervals: the time before
 * each measured batch, in ms; the batch after @from is intervals[0] when
 * @from is the warm-up's end). The source runs ahead of the sink, so the
 * slide counts are those of the visits the source pushed meanwhile. */
static void
print_phase (const gchar * name, const StreamMark * from,
    const StreamMark * to, const gdouble * intervals, gint warmup)
{
  guint n = (guint) (to->batch - from->batch);
  gdouble *window = g_memdup2 (intervals + (from->batch - warmup - 1),
      n * sizeof (gdouble));
  gdouble p50 = percentile (window, n, 50), p95 = percentile (window, n, 95);
  guint64 patches = to->patches - from->patches;

  g_print ("%s: %u batches (%d to %d): %.1f patches/s, batch time p50 %.1f "
      "ms, p95 %.1f ms (p95/p50 %.2f), CPU %.0f us/patch; %d slide visits, "
      "%d overviews read, %" G_GUINT64_FORMAT " masks computed\n", name, n,
      from->batch + 1, to->batch,
      patches / ((to->wall_us - from->wall_us) / 1e6), p50, p95, p95 / p50,
      (to->cpu_us - from->cpu_us) / (gdouble) MAX (patches, 1),
      to->visits - from->visits, to->overviews - from->overviews,
      to->masks - from->masks);
  g_free (window);
}

/* What tissuemask's mask cache held at the end, and what it served. */
static void
print_mask_cache (GstElement * mask)
{
  guint64 bytes = 0, computed = 0, hits = 0;

  if (g_object_class_find_property (G_OBJECT_GET_CLASS (mask),
          "mask-cache-bytes") == NULL)
    return;
  g_object_get (mask, "mask-cache-bytes", &bytes, "masks-computed",
      &computed, "cache-hits", &hits, NULL);
  g_print ("mask cache: %.2f MiB of run-length coded masks held at the end; "
      "%" G_GUINT64_FORMAT " masks computed, %" G_GUINT64_FORMAT " served "
      "from the cache in the whole run\n", bytes / 1048576.0, computed, hits);
  if (g_object_class_find_property (G_OBJECT_GET_CLASS (mask),
          "disk-hits") != NULL) {
    g_object_get (mask, "disk-hits", &hits, NULL);
    g_print ("mask disk cache: %" G_GUINT64_FORMAT " masks loaded from "
        "mask-cache-dir in the whole run\n", hits);
  }
}

static int
steady_mode (const BenchOptions * o)
{
  guint threads = (guint) g_ascii_strtoull (o->threads, NULL, 10);
  gchar *desc = pipeline_description (o, MAX (threads, 1), TRUE,
      "appsink name=sink sync=false max-buffers=2");
  GstElement *pipeline = make_pipeline (desc);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  GstElement *mask = gst_bin_get_by_name (GST_BIN (pipeline), "mask");
  GstPad *srcpad = gst_element_get_static_pad (src, "src");
  gdouble *intervals = g_new (gdouble, o->batches);
  SlideCounts counts = { 0, 0 };
  StreamMark start_mark = { 0 }, split_mark = { 0 }, end_mark;
  gint split = o->first_pass_batches;
  guint64 patches = 0;
  gint64 last = 0;
  gint i;

  gst_pad_add_probe (srcpad, GST_PAD_PROBE_TYPE_BUFFER, count_slide,
      &counts, NULL);
  g_print ("steady state: %s\n", desc);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  for (i = 0; i < o->warmup + o->batches; i++) {
    GstSample *sample = gst_app_sink_pull_sample (GST_APP_SINK (sink));
    gint64 now = g_get_monotonic_time ();

    if (sample == NULL) {
      check_bus (pipeline);
      g_printerr ("the stream ended after %d batches\n", i);
      return 1;
    }
    if (i > o->warmup) {
      GstStructure *meta =
          wsi_patch_meta_get (gst_sample_get_buffer (sample));
      guint count = 0;

      if (meta)
        gst_structure_get_uint (meta, "count", &count);
      patches += count;
      intervals[i - o->warmup - 1] = (now - last) / 1000.0;
    }
    if (i == o->warmup)
      start_mark = mark_stream (mask, &counts, i + 1, now, 0);
    if (i + 1 == split)
      split_mark = mark_stream (mask, &counts, i + 1, now, patches);
    last = now;
    gst_sample_unref (sample);
  }
  end_mark = mark_stream (mask, &counts, i, last, patches);
  {
    guint n = o->batches - 1;
    gdouble *sorted = g_memdup2 (intervals, n * sizeof (gdouble));
    gdouble p50 = percentile (sorted, n, 50);
    gdouble p95 = percentile (sorted, n, 95);
    gdouble cpu_per_patch = (end_mark.cpu_us - start_mark.cpu_us) /
        (gdouble) patches;

    g_print ("%d batches after %d warm-up: %.1f patches/s, batch time p50 "
        "%.1f ms, p95 %.1f ms (p95/p50 %.2f), max %.1f ms, CPU %.0f us/patch, "
        "peak RSS %.1f MiB\n", n, o->warmup,
        patches / ((last - start_mark.wall_us) / 1e6), p50, p95, p95 / p50,
        sorted[n - 1], cpu_per_patch, peak_rss_kib () / 1024.0);
    g_free (sorted);
  }
  if (split > 0) {
    print_phase ("first pass", &start_mark, &split_mark, intervals,
        o->warmup);
    print_phase ("later passes", &split_mark, &end_mark, intervals,
        o->warmup);
  }
  print_mask_cache (mask);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (srcpad);
  gst_object_unref (src);
  gst_object_unref (mask);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (intervals);
  g_free (desc);
  return 0;
}

int
main (int argc, char **argv)
{
  BenchOptions o = { NULL, 0.0, 0.0, 256, 100, 8, 4, 64, 4, 3, 30, 100, -1, -1,
    -1, -1, 0, 7, NULL, FALSE
  };
  GOptionEntry entries[] = {
    {"location", 0, 0, G_OPTION_ARG_FILENAME, &o.location,
        "Slides: folder, file or list (wsislidesrc location)", "PATH"},
    {"target-mpp", 0, 0, G_OPTION_ARG_DOUBLE, &o.target_mpp,
        "patchsampler target-mpp (default 0: level-0 pixels)", "MPP"},
    {"default-mpp", 0, 0, G_OPTION_ARG_DOUBLE, &o.default_mpp,
        "wsislidesrc default-mpp for slides without one (default 0)", "MPP"},
    {"patch-size", 0, 0, G_OPTION_ARG_INT, &o.patch_size,
        "Patch side (default 256)", "PX"},
    {"patches-per-slide", 0, 0, G_OPTION_ARG_INT, &o.patches_per_slide,
        "patchsampler patches-per-slide (default 100)", "N"},
    {"pool-size", 0, 0, G_OPTION_ARG_INT, &o.pool_size,
        "patchinterleave pool-size (default 8)", "N"},
    {"patches-per-visit", 0, 0, G_OPTION_ARG_INT, &o.patches_per_visit,
        "patchinterleave patches-per-visit (default 4)", "N"},
    {"batch-size", 0, 0, G_OPTION_ARG_INT, &o.batch_size,
        "patchbatch batch-size (default 64)", "N"},
    {"queue-batches", 0, 0, G_OPTION_ARG_INT, &o.queue_batches,
        "Batches of patches the queue after patchreader holds (default 4)",
        "N"},
    {"threads", 0, 0, G_OPTION_ARG_STRING, &o.threads,
        "Reader threads, comma list (default 1,2; --steady: 2)", "LIST"},
    {"repeats", 0, 0, G_OPTION_ARG_INT, &o.repeats,
        "Alternated (a)/(b) runs per thread count (default 3)", "N"},
    {"prepare-ahead", 0, 0, G_OPTION_ARG_INT, &o.prepare_ahead,
        "wsislidesrc prepare-ahead (default: the element's)", "N"},
    {"tile-cache-mb", 0, 0, G_OPTION_ARG_INT, &o.tile_cache_mb,
          "patchreader tile-cache-size in MiB, 0 = no tile cache (default: "
          "the element's)", "MB"},
    {"read-ahead", 0, 0, G_OPTION_ARG_INT, &o.read_ahead,
          "patchreader read-ahead in patches, 0 = automatic (default: the "
          "element's)", "N"},
    {"thumbnail-size", 0, 0, G_OPTION_ARG_INT, &o.thumbnail_size,
        "wsislidesrc thumbnail-size (default: the element's)", "PX"},
    {"mask-cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &o.mask_cache_dir,
          "tissuemask mask-cache-dir: masks kept on disk across runs "
          "(default: off)", "DIR"},
    {"seed", 0, 0, G_OPTION_ARG_INT64, &o.seed, "wsislidesrc seed (default 7)",
        "S"},
    {"steady", 0, 0, G_OPTION_ARG_NONE, &o.steady,
        "Measure a cycling pipeline instead", NULL},
    {"warmup", 0, 0, G_OPTION_ARG_INT, &o.warmup,
        "--steady: batches before measuring (default 30)", "N"},
    {"batches", 0, 0, G_OPTION_ARG_INT, &o.batches,
        "--steady: batches measured (default 100)", "N"},
    {"first-pass-batches", 0, 0, G_OPTION_ARG_INT, &o.first_pass_batches,
          "--steady: also measure the batches up to batch K of the stream "
          "(warm-up included) and those after it apart, with the slide "
          "visits, overviews read and masks computed of each (default 0: "
          "no split)", "K"},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("- the whole pipeline against "
      "bare OpenSlide reads of the same regions");
  GError *error = NULL;
  int ret;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    g_printerr ("%s\n", error->message);
    return 2;
  }
  g_option_context_free (ctx);
  if (o.location == NULL || o.repeats < 1 || o.batches < 2 || o.warmup < 0
      || o.batch_size < 1 || o.queue_batches < 1
      || (o.first_pass_batches != 0 && (o.first_pass_batches < o.warmup + 2
              || o.first_pass_batches > o.warmup + o.batches - 2))) {
    g_printerr ("usage: bench-pipeline --location PATH [options] (--help)\n");
    return 2;
  }
  if (o.threads == NULL)
    o.threads = g_strdup (o.steady ? "2" : "1,2");
  gst_init (NULL, NULL);
  if (gst_element_factory_find ("patchreader") == NULL)
    for (const gchar * const *dir = (const gchar *[]) { WSI_PLUGIN_DIRS,
        NULL}; *dir; dir++)
      gst_registry_scan_path (gst_registry_get (), *dir);

  ret = o.steady ? steady_mode (&o) : compare_mode (&o);
  g_free (o.location);
  g_free (o.threads);
  return ret;
}
