/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsi-make-test-slides: writes a collection of synthetic whole-slide images
 * (and optionally broken files) into a folder, for the README demo and the
 * benchmarks.
 */

#include "wsitestslide.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <stdlib.h>
#include <errno.h>

typedef enum
{
  LAYOUT_CHOICE_GENERIC,
  LAYOUT_CHOICE_APERIO,
  LAYOUT_CHOICE_MIXED,
} LayoutChoice;

typedef struct
{
  gint count;
  gint width, height;
  gint levels;
  gint step;                    /* 0: per layout (generic 2, aperio 4) */
  gint tile;
  gint blobs;
  gint quality;
  gint jobs;
  gchar *layout;
  gdouble mpp;
  gint64 seed;
  gboolean broken;
} Options;

/* One file to write, and what happened. */
typedef struct
{
  gchar *path;
  WsiTestSlideSpec spec;
  const gchar *kind;            /* "slide", "garbage", "truncated", "empty" */
  gboolean ok;
  GError *error;
  gdouble seconds;
} SlideJob;

static gboolean
parse_layout (const gchar * name, LayoutChoice * choice)
{
  if (g_strcmp0 (name, "generic") == 0)
    *choice = LAYOUT_CHOICE_GENERIC;
  else if (g_strcmp0 (name, "aperio") == 0)
    *choice = LAYOUT_CHOICE_APERIO;
  else if (g_strcmp0 (name, "mixed") == 0)
    *choice = LAYOUT_CHOICE_MIXED;
  else
    return FALSE;
  return TRUE;
}

static gboolean
check_options (const Options * o, GError ** error)
{
  const gchar *problem = NULL;

  if (o->count < 0)
    problem = "--count must be 0 or more";
  else if (o->width < 1 || o->height < 1)
    problem = "--width and --height must be at least 1";
  else if (o->levels < 1 || o->levels > 32)
    problem = "--levels must be between 1 and 32";
  else if (o->step != 0 && o->step < 2)
    problem = "--step must be at least 2";
  else if (o->tile < 16 || o->tile % 16 != 0 || o->tile > 4096)
    problem = "--tile must be a multiple of 16 between 16 and 4096";
  else if (o->blobs < 0)
    problem = "--blobs must be 0 or more";
  else if (o->quality < 1 || o->quality > 100)
    problem = "--quality must be between 1 and 100";
  else if (o->mpp < 0)
    problem = "--mpp must be 0 (none) or positive";
  else if (o->jobs < 1)
    problem = "--jobs must be at least 1";
  else if (o->seed < 0 || o->seed > G_MAXUINT32)
    problem = "--seed must be between 0 and 4294967295";

  if (problem) {
    g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        problem);
    return FALSE;
  }
  return TRUE;
}

static SlideJob *
slide_job_new (const gchar * outdir, const gchar * name, const gchar * kind,
    const WsiTestSlideSpec * spec)
{
  SlideJob *job = g_new0 (SlideJob, 1);

  job->path = g_build_filename (outdir, name, NULL);
  job->kind = kind;
  job->spec = *spec;
  return job;
}

static void
slide_job_free (SlideJob * job)
{
  g_free (job->path);
  g_clear_error (&job->error);
  g_free (job);
}

static void
slide_job_run (gpointer data, gpointer user_data)
{
  SlideJob *job = data;
  gint64 start = g_get_monotonic_time ();

  if (strcmp (job->kind, "slide") == 0)
    job->ok = wsi_test_slide_write (job->path, &job->spec, &job->error);
  else if (strcmp (job->kind, "truncated") == 0)
    job->ok = wsi_test_slide_write_truncated (job->path, &job->spec, 0.5,
        &job->error);
  else if (strcmp (job->kind, "garbage") == 0)
    job->ok = wsi_test_slide_write_garbage (job->path, 64 * 1024,
        job->spec.seed, &job->error);
  else
    job->ok = wsi_test_slide_write_empty (job->path, &job->error);
  job->seconds = (g_get_monotonic_time () - start) / 1e6;
}

/* The collection: slide-NN.{tiff,svs}, then the broken files. */
static GPtrArray *
plan_jobs (const Options * o, LayoutChoice layout_choice, const gchar * outdir)
{
  GPtrArray *jobs = g_ptr_array_new_with_free_func ((GDestroyNotify)
      slide_job_free);
  WsiTestSlideSpec spec;
  gint i;

  for (i = 0; i < o->count; i++) {
    gboolean aperio = layout_choice == LAYOUT_CHOICE_APERIO ||
        (layout_choice == LAYOUT_CHOICE_MIXED && i % 2 == 1);
    gchar *name;

    wsi_test_slide_spec_init (&spec);
    spec.layout = aperio ? WSI_TEST_LAYOUT_APERIO : WSI_TEST_LAYOUT_GENERIC;
    spec.width = o->width;
    spec.height = o->height;
    spec.levels = o->levels;
    spec.level_step = o->step ? o->step : (aperio ? 4 : 2);
    spec.tile_size = o->tile;
    spec.tissue_blobs = o->blobs;
    spec.jpeg_quality = o->quality;
    spec.mpp = o->mpp;
    spec.seed = (guint32) o->seed + i;

    name = g_strdup_printf ("slide-%02d.%s", i, aperio ? "svs" : "tiff");
    g_ptr_array_add (jobs, slide_job_new (outdir, name, "slide", &spec));
    g_free (name);
  }

  if (o->broken) {
    /* A small valid slide is enough to cut in half. */
    wsi_test_slide_spec_init (&spec);
    spec.seed = (guint32) o->seed + 1000;
    spec.mpp = o->mpp;
    g_ptr_array_add (jobs, slide_job_new (outdir, "broken-garbage.svs",
            "garbage", &spec));
    g_ptr_array_add (jobs, slide_job_new (outdir, "broken-truncated.tiff",
            "truncated", &spec));
    g_ptr_array_add (jobs, slide_job_new (outdir, "broken-empty.svs",
            "empty", &spec));
  }
  return jobs;
}

static void
print_job (const SlideJob * job)
{
  const WsiTestSlideSpec *s = &job->spec;
  GStatBuf st;
  gdouble mib = g_stat (job->path, &st) == 0 ? st.st_size / 1048576.0 : 0;

  if (!job->ok) {
    g_printerr ("FAILED %s: %s\n", job->path, job->error ?
        job->error->message : "unknown error");
    return;
  }
  if (strcmp (job->kind, "slide") != 0) {
    g_print ("%-40s %-7s (broken: %s) %8.2f MiB %6.2f s\n", job->path,
        "broken", job->kind, mib, job->seconds);
    return;
  }
  g_print ("%-40s %-7s %ux%u, %u levels step %u, tile %u, mpp %g, "
      "tissue %.1f %% %8.2f MiB %6.2f s\n", job->path,
      s->layout == WSI_TEST_LAYOUT_APERIO ? "aperio" : "generic",
      s->width, s->height, s->levels, s->level_step, s->tile_size, s->mpp,
      100.0 * wsi_test_slide_tissue_fraction (s), mib, job->seconds);
}

int
main (int argc, char **argv)
{
  Options o = { 6, 16384, 12288, 4, 0, 256, 3, 85, 1, NULL, 0.25, 1, FALSE };
  GOptionEntry entries[] = {
    {"count", 'n', 0, G_OPTION_ARG_INT, &o.count,
        "Number of valid slides (default 6)", "N"},
    {"width", 'W', 0, G_OPTION_ARG_INT, &o.width,
        "Level-0 width in pixels (default 16384)", "W"},
    {"height", 'H', 0, G_OPTION_ARG_INT, &o.height,
        "Level-0 height in pixels (default 12288)", "H"},
    {"levels", 'l', 0, G_OPTION_ARG_INT, &o.levels,
        "Pyramid levels, 1..32 (default 4)", "L"},
    {"step", 's', 0, G_OPTION_ARG_INT, &o.step,
        "Downsample between levels, >= 2 (default: 2 for generic, "
          "4 for aperio)", "S"},
    {"tile", 't', 0, G_OPTION_ARG_INT, &o.tile,
        "Tile side, multiple of 16 (default 256)", "T"},
    {"blobs", 'b', 0, G_OPTION_ARG_INT, &o.blobs,
        "Tissue regions per slide (default 3)", "B"},
    {"quality", 'q', 0, G_OPTION_ARG_INT, &o.quality,
        "JPEG quality, 1..100 (default 85)", "Q"},
    {"layout", 0, 0, G_OPTION_ARG_STRING, &o.layout,
        "generic (.tiff), aperio (.svs) or mixed: alternating (default)",
          "LAYOUT"},
    {"mpp", 'm', 0, G_OPTION_ARG_DOUBLE, &o.mpp,
        "Microns per level-0 pixel, 0 = write none (default 0.25)", "M"},
    {"seed", 0, 0, G_OPTION_ARG_INT64, &o.seed,
        "Seed of the first slide; slide i uses seed + i (default 1)", "S"},
    {"broken", 0, 0, G_OPTION_ARG_NONE, &o.broken,
        "Also write a garbage, a truncated and an empty file", NULL},
    {"jobs", 'j', 0, G_OPTION_ARG_INT, &o.jobs,
        "Slides written at once (default 1)", "J"},
    {NULL}
  };
  GOptionContext *ctx;
  GError *error = NULL;
  LayoutChoice layout_choice = LAYOUT_CHOICE_MIXED;
  GThreadPool *pool;
  GPtrArray *jobs;
  gint64 start;
  guint i, failed = 0;
  gchar *outdir;

  ctx = g_option_context_new ("OUTDIR - write synthetic whole-slide images");
  g_option_context_set_summary (ctx,
      "Writes pyramidal JPEG-tiled TIFF slides with H&E-like tissue regions "
      "on a\nglass-white background into OUTDIR (created if missing): "
      "slide-NN.tiff in the\ngeneric tiled-TIFF layout (mpp as TIFF "
      "resolution) and slide-NN.svs in the\nAperio layout (MPP in the "
      "ImageDescription, stripped thumbnail, label, macro).\n"
      "The same options and seed always give the same files.");
  g_option_context_set_description (ctx,
      "Examples:\n"
      "  wsi-make-test-slides /tmp/slides\n"
      "  wsi-make-test-slides --count 2 --width 4096 --height 3072 "
      "--layout aperio --step 3 /tmp/small\n"
      "  wsi-make-test-slides --broken --count 0 /tmp/broken\n");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    g_printerr ("wsi-make-test-slides: %s\n", error->message);
    return 2;
  }
  if (argc != 2) {
    g_printerr ("wsi-make-test-slides: exactly one OUTDIR expected "
        "(see --help)\n");
    return 2;
  }
  if ((o.layout && !parse_layout (o.layout, &layout_choice))) {
    g_printerr ("wsi-make-test-slides: unknown --layout '%s' (generic, "
        "aperio or mixed)\n", o.layout);
    return 2;
  }
  if (!check_options (&o, &error)) {
    g_printerr ("wsi-make-test-slides: %s\n", error->message);
    return 2;
  }
  outdir = argv[1];
  if (g_mkdir_with_parents (outdir, 0755) != 0) {
    g_printerr ("wsi-make-test-slides: cannot create %s: %s\n", outdir,
        g_strerror (errno));
    return 1;
  }

  start = g_get_monotonic_time ();
  jobs = plan_jobs (&o, layout_choice, outdir);
  pool = g_thread_pool_new (slide_job_run, NULL, o.jobs, TRUE, NULL);
  for (i = 0; i < jobs->len; i++)
    g_thread_pool_push (pool, g_ptr_array_index (jobs, i), NULL);
  g_thread_pool_free (pool, FALSE, TRUE);

  for (i = 0; i < jobs->len; i++) {
    SlideJob *job = g_ptr_array_index (jobs, i);
    print_job (job);
    failed += job->ok ? 0 : 1;
  }
  g_print ("%u files in %s, %.1f s\n", jobs->len - failed, outdir,
      (g_get_monotonic_time () - start) / 1e6);

  g_ptr_array_unref (jobs);
  g_option_context_free (ctx);
  g_free (o.layout);
  return failed ? 1 : 0;
}
