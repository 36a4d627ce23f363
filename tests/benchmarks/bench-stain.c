/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * bench-stain: the cost of stain normalisation.
 *  1. The apply alone (wsistain.h, one thread, no GStreamer): patches/s
 *     per core at --size px for each method with a slide estimate, and the
 *     copy of a patch alone (the apply runs in place on a fresh copy).
 *  2. Per-patch estimation (estimate=patch): patches/s per core of each
 *     method's estimate.
 *  3. With --location DIR: the whole pipeline (wsislidesrc ! tissuemask !
 *     ... ! patchreader ! patchbatch ! fakesink) with and without
 *     stainestimate + stainnorm (--method, default macenko; --reference),
 *     alternated --rounds times, patches/s each and the ratio.
 *
 *   bench-stain [--patches N] [--size PX] [--location DIR]
 *       [--pipeline-patches N] [--threads T] [--rounds R] [--method M]
 *       [--reference FILE]
 */

#include <math.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <gst/gst.h>

#include "wsistain.h"

static gint n_patches = 2000, size = 224, pipeline_patches = 64, threads = 1;
static gint rounds = 2;
static gchar *location = NULL, *method = NULL, *reference = NULL;

static GOptionEntry entries[] = {
  {"patches", 0, 0, G_OPTION_ARG_INT, &n_patches, "Patches per kernel run",
      "N"},
  {"size", 0, 0, G_OPTION_ARG_INT, &size, "Patch side (px)", "PX"},
  {"location", 0, 0, G_OPTION_ARG_STRING, &location,
      "Slides for the pipeline comparison", "DIR"},
  {"pipeline-patches", 0, 0, G_OPTION_ARG_INT, &pipeline_patches,
      "Patches per slide in the pipeline comparison", "N"},
  {"threads", 0, 0, G_OPTION_ARG_INT, &threads,
      "patchreader and stainnorm threads in the pipeline comparison", "T"},
  {"rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "Alternated pipeline rounds",
      "R"},
  {"method", 0, 0, G_OPTION_ARG_STRING, &method,
      "stainnorm method in the pipeline comparison (default macenko)", "M"},
  {"reference", 0, 0, G_OPTION_ARG_FILENAME, &reference,
      "stainnorm reference image in the pipeline comparison (reinhard "
        "needs one)", "FILE"},
  {NULL}
};

/* This thread's CPU time (us): the machine may be shared, and a kernel's
 * cost per core is its CPU time, not the wall clock's. */
static gint64
cpu_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* An H&E-like patch: smooth H and E concentrations on torchstain's stains,
 * a third of it glass. */
static void
make_patch (guint8 * px, gint side, guint seed)
{
  const WsiStainMatrix *m = &wsi_stain_macenko_default;
  GRand *rand = g_rand_new_with_seed (seed);
  gdouble coarse[2][8][8];
  gint x, y, k, c;

  for (k = 0; k < 2; k++)
    for (y = 0; y < 8; y++)
      for (x = 0; x < 8; x++)
        coarse[k][y][x] = g_rand_double_range (rand, 0.0, 2.0);
  for (y = 0; y < side; y++)
    for (x = 0; x < side; x++) {
      gdouble h = coarse[0][y * 8 / side][x * 8 / side];
      gdouble e = coarse[1][y * 8 / side][x * 8 / side];

      if (x < side / 3)
        h = e = 0.02;
      for (c = 0; c < 3; c++) {
        gdouble od = m->stains[0][c] * h * 1.2 + m->stains[1][c] * e * 0.8;
        gdouble v = 240.0 * exp (-od) + g_rand_double_range (rand, -2, 2);

        px[(y * side + x) * 3 + c] = (guint8) CLAMP (v, 0, 255);
      }
    }
  g_rand_free (rand);
}

static void
kernels (void)
{
  const gsize bytes = (gsize) size * size * 3;
  guint8 *source = g_malloc (bytes * 16), *work = g_malloc (bytes);
  WsiStainImage image = { work, size, size, (gsize) size * 3, 3, 0, 1, 2 };
  WsiStainImage src_image = { source, size, size * 16, (gsize) size * 3, 3,
    0, 1, 2
  };
  WsiStainPixels slide = { &src_image, NULL, 0 };
  WsiStainMatrix slide_m, target_m = wsi_stain_macenko_default, m;
  WsiStainLab slide_lab, target_lab, lab;
  WsiStainPlan plans[2];
  WsiStainScratch *scratch = wsi_stain_scratch_new ();
  const gchar *names[2] = { "reinhard", "macenko" };
  gint64 t0, t_copy;
  gint i, p;

  for (i = 0; i < 16; i++)
    make_patch (source + i * bytes, size, i + 1);
  /* the "slide": the 16 patches stacked */
  if (!wsi_stain_estimate_macenko (&slide, &slide_m, NULL)
      || !wsi_stain_estimate_lab (&slide, &slide_lab))
    g_error ("no slide estimate of the synthetic patches");
  target_lab = slide_lab;
  target_lab.mean[1] += 0.01;
  target_lab.std[0] *= 1.1;
  target_m.max_c[0] *= 1.1;
  if (!wsi_stain_plan_reinhard (&plans[0], &slide_lab, &target_lab)
      || !wsi_stain_plan_macenko (&plans[1], &slide_m, &target_m))
    g_error ("no plan");

  t0 = cpu_us ();
  for (i = 0; i < n_patches; i++)
    memcpy (work, source + (i % 16) * bytes, bytes);
  t_copy = cpu_us () - t0;
  g_print ("apply, one core (thread CPU time), %d px patches, slide estimates (%d patches):\n",
      size, n_patches);
  g_print ("  %-9s %10.0f patches/s\n", "copy", n_patches / (t_copy / 1e6));
  for (p = 0; p < 2; p++) {
    gint64 t;

    t0 = cpu_us ();
    for (i = 0; i < n_patches; i++) {
      memcpy (work, source + (i % 16) * bytes, bytes);
      wsi_stain_apply (&plans[p], &image, scratch);
    }
    t = cpu_us () - t0;
    g_print ("  %-9s %10.0f patches/s (%.1f us a patch, copy included; "
        "%.0f patches/s without it)\n", names[p], n_patches / (t / 1e6),
        (gdouble) t / n_patches, n_patches / (MAX (t - t_copy, 1) / 1e6));
  }

  g_print ("per-patch estimation, one core (thread CPU time):\n");
  for (p = 0; p < 2; p++) {
    gint n = MAX (n_patches / 10, 10), ok = 0;
    gint64 t;

    t0 = cpu_us ();
    for (i = 0; i < n; i++) {
      WsiStainImage one = { source + (i % 16) * bytes, size, size,
        (gsize) size * 3, 3, 0, 1, 2
      };
      WsiStainPixels px = { &one, NULL, 0 };

      ok += p == 0 ? wsi_stain_estimate_lab (&px, &lab)
          : wsi_stain_estimate_macenko (&px, &m, NULL);
    }
    t = cpu_us () - t0;
    g_print ("  %-9s %10.0f patches/s (%d of %d estimated)\n", names[p],
        n / (t / 1e6), ok, n);
  }
  {
    gint64 t;
    guint64 n_tissue = 0;

    t0 = cpu_us ();
    if (!wsi_stain_estimate_vahadane (&slide, &m, &n_tissue))
      g_error ("no Vahadane estimate of the synthetic slide");
    t = cpu_us () - t0;
    g_print ("Vahadane's factorisation, once per slide: %.1f ms on %d x %d "
        "pixels (%" G_GUINT64_FORMAT " tissue)\n", t / 1000.0, size,
        size * 16, n_tissue);
  }
  wsi_stain_scratch_free (scratch);
  g_free (source);
  g_free (work);
}

/* The process's CPU time (us), every thread. */
static gint64
process_cpu_us (void)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  return (gint64) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
      ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

/* Patches per second of wall time of one run of @description (to EOS);
 * patches per CPU second in @per_cpu. */
static gdouble
run_pipeline (const gchar * description, guint64 n, gdouble * per_cpu)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (description, &error);
  GstMessage *msg;
  gint64 t0, c0;
  gdouble rate;

  if (pipeline == NULL)
    g_error ("%s: %s", description, error->message);
  t0 = g_get_monotonic_time ();
  c0 = process_cpu_us ();
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipeline),
      GST_CLOCK_TIME_NONE, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gst_message_parse_error (msg, &error, NULL);
    g_error ("%s", error->message);
  }
  rate = n / ((g_get_monotonic_time () - t0) / 1e6);
  *per_cpu = n / (MAX (process_cpu_us () - c0, 1) / 1e6);
  gst_message_unref (msg);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  return rate;
}

static gchar *
describe (const gchar * estimate, const gchar * norm)
{
  return g_strdup_printf ("wsislidesrc location=\"%s\" ! tissuemask%s ! queue "
      "! patchsampler patch-size=%d patches-per-slide=%d ! patchinterleave ! "
      "patchreader threads=%d %s! patchbatch batch-size=32 ! fakesink "
      "sync=false", location, estimate, size, pipeline_patches, threads, norm);
}

static void
pipelines (void)
{
  GDir *dir = g_dir_open (location, 0, NULL);
  guint n_slides = 0, r;
  gchar *with, *without;
  gdouble sum_with = 0, sum_without = 0, cpu_with = 0, cpu_without = 0;

  if (dir == NULL)
    g_error ("cannot list %s", location);
  while (g_dir_read_name (dir))
    n_slides++;
  g_dir_close (dir);
  {
    const gchar *m = method ? method : "macenko";
    gchar *norm = g_strdup_printf ("! stainnorm threads=%d method=%s%s%s%s ",
        threads, m, reference ? " reference=\"" : "",
        reference ? reference : "", reference ? "\"" : "");
    gchar *est = g_strdup_printf (" ! stainestimate methods=%s", m);

    with = describe (est, norm);
    g_free (est);
    without = describe ("", "");
    g_free (norm);
  }
  g_print ("pipeline, %u files in %s, %d patches each, threads=%d, "
      "method %s:\n", n_slides, location, pipeline_patches, threads,
      method ? method : "macenko");
  for (r = 0; r < (guint) rounds; r++) {
    gdouble ca, cb;
    gdouble a = run_pipeline (without, (guint64) n_slides * pipeline_patches,
        &ca);
    gdouble b = run_pipeline (with, (guint64) n_slides * pipeline_patches,
        &cb);

    g_print ("  round %u: without %.0f, with stainnorm %.0f patches/s; per "
        "CPU second %.0f and %.0f\n", r, a, b, ca, cb);
    sum_without += a;
    sum_with += b;
    cpu_without += ca;
    cpu_with += cb;
  }
  g_print ("  mean: without %.0f, with %.0f patches/s: %.1f %%; per CPU "
      "second without %.0f, with %.0f: %.1f %%\n", sum_without / rounds,
      sum_with / rounds, 100.0 * sum_with / sum_without,
      cpu_without / rounds, cpu_with / rounds,
      100.0 * cpu_with / cpu_without);
  g_free (with);
  g_free (without);
}

int
main (int argc, char **argv)
{
  GOptionContext *ctx = g_option_context_new ("- stain normalisation cost");
  GError *error = NULL;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    g_error ("%s", error->message);
  g_option_context_free (ctx);
  if (size < 16 || n_patches < 1 || rounds < 1)
    g_error ("--size >= 16, --patches >= 1, --rounds >= 1");
  kernels ();
  if (location != NULL)
    pipelines ();
  return 0;
}
