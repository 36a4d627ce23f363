/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * bench-decode-floor: the decode limit of a patch grid. Decodes each JPEG
 * tile that a list of patches touches exactly once, whole, with
 * libjpeg-turbo at the DCT scale given (benchjpeglimit.h), in T threads,
 * and nothing else: no crop, no resize, no copy out, no I/O while the clock
 * runs (every tile's compressed bytes are read into memory first). It is
 * the bound that bench-extract compares wsi-extract's grid reading with: a
 * reader that decodes every tissue tile of the grid once cannot be faster.
 *
 *   bench-decode-floor [--threads 2] PLAN.json
 *
 * PLAN.json (bench-extract writes it from the coordinates and the batch
 * records of the run it measures):
 *   {"slides": [{"path": "a.svs", "level": 0, "scale": 2,
 *                "footprint": 507, "coords": [[x, y], ...]}, ...]}
 * level: the pyramid level the reader used (the slide layer's numbering,
 * tiff backend); scale: the DCT denominator (1, 2, 4, 8); footprint: the
 * patch's side in level-0 pixels; coords: level-0 top-left corners. The
 * tiles of a patch are those its level region [x / d, (x + footprint - 1)
 * / d] covers, d the level's downsample.
 *
 * Prints one JSON line: tiles, compressed bytes, seconds (from the release
 * of the threads to the last one's end), CPU seconds of the process over
 * that span, tiles/s. Threads claim tiles in raster order per slide, 16 at
 * a time, from one atomic counter.
 */

#include "benchjpeglimit.h"

#include <json-glib/json-glib.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#define CLAIM 16

typedef struct
{
  const BenchJpegLevel *level;
  const guint8 *data;
  gsize size;
  guint scale;
} Job;

typedef struct
{
  Job *jobs;
  guint n_jobs;
  gint next;                    /* atomic: the next unclaimed job */
  guint max_tile_w, max_tile_h;
  GMutex lock;
  GCond cond;
  guint ready;
  gboolean go;
  gint failed;                  /* atomic */
} Floor;

typedef struct
{
  Floor *floor;
  GThread *thread;
  gint64 end;
  gchar *error;
} Worker;

static gpointer
worker_main (gpointer data)
{
  Worker *w = data;
  Floor *f = w->floor;
  BenchJpegDecoder dec;

  bench_jpeg_decoder_init (&dec, f->max_tile_w, f->max_tile_h);
  g_mutex_lock (&f->lock);
  f->ready++;
  g_cond_broadcast (&f->cond);
  while (!f->go)
    g_cond_wait (&f->cond, &f->lock);
  g_mutex_unlock (&f->lock);

  while (!g_atomic_int_get (&f->failed)) {
    guint first = (guint) g_atomic_int_add (&f->next, CLAIM), i;

    if (first >= f->n_jobs)
      break;
    for (i = first; i < MIN (first + CLAIM, f->n_jobs); i++) {
      const Job *j = &f->jobs[i];

      if (!bench_jpeg_decode (&dec, j->level, j->data, j->size, j->scale)) {
        w->error = g_strdup (dec.message);
        g_atomic_int_set (&f->failed, 1);
        break;
      }
    }
  }
  w->end = g_get_monotonic_time ();
  bench_jpeg_decoder_clear (&dec);
  return NULL;
}

/* What one slide of the plan needs kept until the end. */
typedef struct
{
  WsiSlide *info;
  BenchJpegLevel *levels;
  guint8 *bytes;                /* the compressed tiles, back to back */
} Slide;

/* Adds the tiles of one plan entry to @jobs (their bytes read into
 * slide->bytes); FALSE with a message. */
static gboolean
add_slide (JsonObject * o, Slide * slide, GArray * jobs, Floor * f,
    GError ** error)
{
  const gchar *path = json_object_get_string_member (o, "path");
  gint level = json_object_get_int_member (o, "level");
  guint scale = json_object_get_int_member (o, "scale");
  gdouble footprint = json_object_get_double_member (o, "footprint");
  JsonArray *coords = json_object_get_array_member (o, "coords");
  const BenchJpegLevel *lv;
  guint8 *touched;
  gsize n_tiles, k, total = 0, at = 0;
  gdouble ds;
  gchar *why = NULL;
  guint i;
  int fd;

  slide->info = wsi_slide_open (path, WSI_BACKEND_TIFF, error);
  if (slide->info == NULL)
    return FALSE;
  if (level < 0 || level >= slide->info->level_count || scale < 1
      || scale > 8 || footprint <= 0) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
        "%s: level %d, scale %u or footprint %g out of range", path, level,
        scale, footprint);
    return FALSE;
  }
  slide->levels = bench_jpeg_levels_read (path, slide->info, &why);
  if (slide->levels == NULL) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: %s", path,
        why);
    g_free (why);
    return FALSE;
  }
  lv = &slide->levels[level];
  ds = slide->info->level_downsample[level];
  n_tiles = (gsize) lv->across * lv->down;
  touched = g_new0 (guint8, n_tiles);
  for (i = 0; i < json_array_get_length (coords); i++) {
    JsonArray *xy = json_array_get_array_element (coords, i);
    gdouble x = json_array_get_double_element (xy, 0);
    gdouble y = json_array_get_double_element (xy, 1);
    gint64 c0 = (gint64) (x / ds) / lv->tile_w;
    gint64 r0 = (gint64) (y / ds) / lv->tile_h;
    gint64 c1 = MIN ((gint64) ((x + footprint - 1) / ds) / lv->tile_w,
        (gint64) lv->across - 1);
    gint64 r1 = MIN ((gint64) ((y + footprint - 1) / ds) / lv->tile_h,
        (gint64) lv->down - 1);
    gint64 r, c;

    for (r = MAX (r0, 0); r <= r1; r++)
      for (c = MAX (c0, 0); c <= c1; c++)
        touched[r * lv->across + c] = 1;
  }
  for (k = 0; k < n_tiles; k++)
    if (touched[k])
      total += lv->counts[k];
  slide->bytes = g_malloc (MAX (total, 1));
  fd = open (path, O_RDONLY);
  if (fd < 0) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: cannot open it",
        path);
    g_free (touched);
    return FALSE;
  }
  for (k = 0; k < n_tiles; k++) {
    Job j;

    if (!touched[k] || lv->counts[k] == 0)
      continue;                 /* missing tiles: nothing to decode */
    if (pread (fd, slide->bytes + at, lv->counts[k], lv->offsets[k])
        != (gssize) lv->counts[k]) {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: short read of "
          "tile %" G_GSIZE_FORMAT, path, k);
      close (fd);
      g_free (touched);
      return FALSE;
    }
    j.level = lv;
    j.data = slide->bytes + at;
    j.size = lv->counts[k];
    j.scale = scale;
    g_array_append_val (jobs, j);
    at += lv->counts[k];
  }
  close (fd);
  g_free (touched);
  f->max_tile_w = MAX (f->max_tile_w, lv->tile_w);
  f->max_tile_h = MAX (f->max_tile_h, lv->tile_h);
  return TRUE;
}

int
main (int argc, char **argv)
{
  gint threads = 2;
  GOptionEntry entries[] = {
    {"threads", 0, 0, G_OPTION_ARG_INT, &threads, "decoding threads (2)",
        "T"},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("PLAN.json");
  GError *error = NULL;
  JsonParser *parser;
  JsonArray *plan;
  Slide *slides;
  GArray *jobs = g_array_new (FALSE, FALSE, sizeof (Job));
  Floor f = { 0, };
  Worker *workers;
  guint n_slides, i;
  gsize bytes = 0;
  gint64 start, end = 0;
  gdouble cpu0, cpu;
  gchar *failure = NULL;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_summary (ctx, "Decodes each JPEG tile that a patch "
      "grid touches once (libjpeg-turbo, DCT-scaled, in memory): the decode "
      "limit of that grid.");
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc != 2
      || threads < 1) {
    g_printerr ("bench-decode-floor: %s\n", error ? error->message :
        "usage: bench-decode-floor [--threads T] PLAN.json");
    return 2;
  }
  g_option_context_free (ctx);

  parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, argv[1], &error)) {
    g_printerr ("bench-decode-floor: %s: %s\n", argv[1], error->message);
    return 1;
  }
  plan = json_object_get_array_member (json_node_get_object
      (json_parser_get_root (parser)), "slides");
  n_slides = json_array_get_length (plan);
  slides = g_new0 (Slide, n_slides);
  for (i = 0; i < n_slides; i++) {
    if (!add_slide (json_array_get_object_element (plan, i), &slides[i], jobs,
            &f, &error)) {
      g_printerr ("bench-decode-floor: %s\n", error->message);
      return 1;
    }
  }
  for (i = 0; i < jobs->len; i++)
    bytes += g_array_index (jobs, Job, i).size;
  f.jobs = (Job *) jobs->data;
  f.n_jobs = jobs->len;
  g_mutex_init (&f.lock);
  g_cond_init (&f.cond);

  workers = g_new0 (Worker, threads);
  for (i = 0; i < (guint) threads; i++) {
    workers[i].floor = &f;
    workers[i].thread = g_thread_new ("floor", worker_main, &workers[i]);
  }
  g_mutex_lock (&f.lock);
  while (f.ready < (guint) threads)
    g_cond_wait (&f.cond, &f.lock);
  cpu0 = bench_cpu_seconds ();
  start = g_get_monotonic_time ();
  f.go = TRUE;
  g_cond_broadcast (&f.cond);
  g_mutex_unlock (&f.lock);
  for (i = 0; i < (guint) threads; i++) {
    g_thread_join (workers[i].thread);
    end = MAX (end, workers[i].end);
    if (workers[i].error && failure == NULL)
      failure = workers[i].error;
  }
  cpu = bench_cpu_seconds () - cpu0;
  if (failure) {
    g_printerr ("bench-decode-floor: a tile did not decode: %s\n", failure);
    return 1;
  }
  g_print ("{\"tiles\": %u, \"bytes\": %" G_GSIZE_FORMAT ", \"threads\": %d, "
      "\"seconds\": %.4f, \"cpu_seconds\": %.4f, \"tiles_per_s\": %.1f}\n",
      f.n_jobs, bytes, threads, (end - start) / 1e6, cpu,
      f.n_jobs / MAX ((end - start) / 1e6, 1e-9));

  for (i = 0; i < n_slides; i++) {
    if (slides[i].info) {
      bench_jpeg_levels_free (slides[i].levels, slides[i].info->level_count);
      wsi_slide_close (slides[i].info);
    }
    g_free (slides[i].bytes);
  }
  for (i = 0; i < (guint) threads; i++)
    g_free (workers[i].error);
  g_free (workers);
  g_free (slides);
  g_array_free (jobs, TRUE);
  g_object_unref (parser);
  return 0;
}
