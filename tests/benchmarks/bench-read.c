/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * bench-read: how close patchreader comes to the ceiling.
 *
 * Reads one list of patch coordinates (random positions, fixed seed) two
 * ways in one run, on the same slides:
 *   (a) bare: N threads looping over openslide_read_region + RGB conversion
 *       (shared handle per slide, as patchreader does): the ceiling;
 *   (b) pipeline: appsrc (coordinate buffers) ! patchreader threads=N !
 *       fakesink sync=false.
 * and prints patches/s of both, their ratio, for each N, and the peak RSS.
 * Every run opens its slides afresh, so both start with cold tile caches.
 *
 *   bench-read [--patches 800] [--size 256] [--scale 1] [--threads 1,2]
 *              [--generated] [--real] [SLIDE...]
 *
 * --scale F reads footprints of F x size (F = 2: level 1 or an area average).
 * Without slides, --generated (default) makes two 8192x6144 generic TIFFs in
 * a temporary folder; --real adds the slides of WSI_SHARED_SLIDES_DIR.
 */

#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/wsi/wsirecord.h>
#include <glib/gstdio.h>
#include <openslide.h>
#include <sys/resource.h>
#include <string.h>

#include "wsitestslide.h"

#define RECORDS_PER_BUFFER 32

typedef struct
{
  gchar *path;
  gint64 width, height;
} BenchSlide;

typedef struct
{
  guint slide;
  WsiPatchRecord record;
} BenchPatch;

/* ---- (a) the bare loop -------------------------------------------------- */

typedef struct
{
  GPtrArray *slides;
  openslide_t **handles;
  const BenchPatch *patches;
  guint n_patches;
  guint size, footprint;
  gint next;                    /* atomic */
} BareRun;

static gpointer
bare_worker (gpointer data)
{
  BareRun *run = data;
  guint32 *argb = NULL;
  guint8 *rgb = NULL;
  gsize capacity = 0;
  gint i;

  while ((i = g_atomic_int_add (&run->next, 1)) < (gint) run->n_patches) {
    const BenchPatch *p = &run->patches[i];
    openslide_t *osr = run->handles[p->slide];
    gint level = openslide_get_best_level_for_downsample (osr,
        (gdouble) run->footprint / run->size * 1.01);
    gint64 read = (gint64) (run->footprint /
        openslide_get_level_downsample (osr, level) + 0.5);
    gsize n = (gsize) read * read, k;

    if (n > capacity) {
      argb = g_renew (guint32, argb, n);
      rgb = g_renew (guint8, rgb, n * 3);
      capacity = n;
    }
    openslide_read_region (osr, argb, p->record.x, p->record.y, level, read,
        read);
    for (k = 0; k < n; k++) {
      guint32 px = argb[k], glass = 255 - (px >> 24);
      rgb[3 * k] = ((px >> 16) & 0xff) + glass;
      rgb[3 * k + 1] = ((px >> 8) & 0xff) + glass;
      rgb[3 * k + 2] = (px & 0xff) + glass;
    }
  }
  g_free (argb);
  g_free (rgb);
  return NULL;
}

static gdouble
run_bare (GPtrArray * slides, const BenchPatch * patches, guint n_patches,
    guint size, guint footprint, guint threads)
{
  BareRun run = { slides, NULL, patches, n_patches, size, footprint, 0 };
  GThread **workers = g_new (GThread *, threads);
  gint64 start;
  guint i;

  run.handles = g_new (openslide_t *, slides->len);
  for (i = 0; i < slides->len; i++)
    run.handles[i] = openslide_open (((BenchSlide *)
            g_ptr_array_index (slides, i))->path);
  start = g_get_monotonic_time ();
  for (i = 0; i < threads; i++)
    workers[i] = g_thread_new ("bare", bare_worker, &run);
  for (i = 0; i < threads; i++)
    g_thread_join (workers[i]);
  start = g_get_monotonic_time () - start;
  for (i = 0; i < slides->len; i++)
    openslide_close (run.handles[i]);
  g_free (run.handles);
  g_free (workers);
  return n_patches / (start / 1e6);
}

/* ---- (b) the pipeline --------------------------------------------------- */

static GstBuffer *
coordinate_buffer (const BenchSlide * slide, guint index,
    const WsiPatchRecord * records, guint n)
{
  GstBuffer *buf = gst_buffer_new_memdup (records, n * sizeof (*records));
  GstStructure *s = wsi_slide_meta_add (buf);

  gst_structure_set (s, "path", G_TYPE_STRING, slide->path,
      "index", G_TYPE_UINT, index, "label", G_TYPE_STRING, "",
      "width", G_TYPE_INT64, slide->width,
      "height", G_TYPE_INT64, slide->height, NULL);
  return buf;
}

static gdouble
run_pipeline (GPtrArray * slides, const BenchPatch * patches, guint n_patches,
    guint threads, guint64 * read_out)
{
  GstElement *pipeline, *src, *reader;
  GstBus *bus;
  GstMessage *msg;
  gchar *desc;
  gint64 start;
  guint i = 0;

  desc = g_strdup_printf ("appsrc name=src format=bytes max-bytes=0 "
      "caps=" WSI_PATCHES_MEDIA_TYPE " ! patchreader name=reader threads=%u "
      "! fakesink sync=false", threads);
  pipeline = gst_parse_launch (desc, NULL);
  g_free (desc);
  g_assert (pipeline != NULL);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  reader = gst_bin_get_by_name (GST_BIN (pipeline), "reader");

  /* Coordinates are queued before the clock starts: (b) times reading. */
  while (i < n_patches) {
    WsiPatchRecord records[RECORDS_PER_BUFFER];
    guint slide = patches[i].slide, n = 0;

    while (i < n_patches && n < RECORDS_PER_BUFFER
        && patches[i].slide == slide)
      records[n++] = patches[i++].record;
    gst_app_src_push_buffer (GST_APP_SRC (src), coordinate_buffer
        (g_ptr_array_index (slides, slide), slide, records, n));
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));

  bus = gst_element_get_bus (pipeline);
  start = g_get_monotonic_time ();
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  start = g_get_monotonic_time () - start;
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
    g_printerr ("pipeline error: %" GST_PTR_FORMAT "\n", msg);
  gst_message_unref (msg);
  g_object_get (reader, "patches-read", read_out, NULL);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (src);
  gst_object_unref (reader);
  gst_object_unref (pipeline);
  return n_patches / (start / 1e6);
}

/* ---- setup -------------------------------------------------------------- */

static void
add_slide (GPtrArray * slides, const gchar * path)
{
  openslide_t *osr = openslide_open (path);
  BenchSlide *slide;

  if (osr == NULL || openslide_get_error (osr) != NULL) {
    g_printerr ("skipping %s: OpenSlide cannot open it\n", path);
    if (osr)
      openslide_close (osr);
    return;
  }
  slide = g_new0 (BenchSlide, 1);
  slide->path = g_strdup (path);
  openslide_get_level_dimensions (osr, 0, &slide->width, &slide->height);
  openslide_close (osr);
  g_ptr_array_add (slides, slide);
}

static void
add_generated_slides (GPtrArray * slides, const gchar * dir)
{
  guint i;

  for (i = 0; i < 2; i++) {
    WsiTestSlideSpec spec;
    GError *error = NULL;
    gchar *name = g_strdup_printf ("bench-%u.tiff", i);
    gchar *path = g_build_filename (dir, name, NULL);

    wsi_test_slide_spec_init (&spec);
    spec.width = 8192;
    spec.height = 6144;
    spec.levels = 4;
    spec.seed = 100 + i;
    spec.tissue_blobs = 6;
    if (!wsi_test_slide_write (path, &spec, &error)) {
      g_printerr ("cannot write %s: %s\n", path, error->message);
      g_clear_error (&error);
    } else {
      add_slide (slides, path);
    }
    g_free (name);
    g_free (path);
  }
}

static void
add_real_slides (GPtrArray * slides)
{
  const gchar *dir = g_getenv ("WSI_SHARED_SLIDES_DIR");
  const gchar *names[] = { "Aperio-CMU-1-Small-Region.svs",
    "Aperio-JP2K-TCGA-CR-7395-01A-01-TS1.svs",
    "Hamamatsu-test3-DAPI-2-387.ndpi", "Hamamatsu-test3-TRITC-2-560.ndpi"
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (names); i++) {
    gchar *path = g_build_filename (dir ? dir : WSI_SHARED_SLIDES_DIR,
        names[i], NULL);
    if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
      add_slide (slides, path);
    g_free (path);
  }
}

/* Random positions, fixed seed, in runs of one slide as patchinterleave
 * would send them. */
static BenchPatch *
make_patches (GPtrArray * slides, guint n, guint size, guint footprint)
{
  BenchPatch *patches = g_new0 (BenchPatch, n);
  GRand *rand = g_rand_new_with_seed (2026);
  guint i;

  for (i = 0; i < n; i++) {
    guint slide = (i / RECORDS_PER_BUFFER) % slides->len;
    const BenchSlide *s = g_ptr_array_index (slides, slide);
    WsiPatchRecord *r = &patches[i].record;

    patches[i].slide = slide;
    r->sequence = i;
    r->x = g_rand_int_range (rand, 0, MAX (s->width - footprint, 1));
    r->y = g_rand_int_range (rand, 0, MAX (s->height - footprint, 1));
    r->slide_index = slide;
    r->footprint = footprint;
    r->out_size = size;
    r->level = WSI_LEVEL_UNSET;
  }
  g_rand_free (rand);
  return patches;
}

static glong
peak_rss_kib (void)
{
  struct rusage usage;

  getrusage (RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

int
main (int argc, char **argv)
{
  gint patches_n = 800, size = 256;
  gdouble scale = 1.0;
  gchar *threads_list = NULL;
  gboolean generated = FALSE, real = FALSE;
  gchar **paths = NULL;
  GOptionEntry entries[] = {
    {"patches", 0, 0, G_OPTION_ARG_INT, &patches_n, "Patches per run", "N"},
    {"size", 0, 0, G_OPTION_ARG_INT, &size, "Output patch side", "PX"},
    {"scale", 0, 0, G_OPTION_ARG_DOUBLE, &scale,
        "Footprint / size (1 = level 0, no resize)", "F"},
    {"threads", 0, 0, G_OPTION_ARG_STRING, &threads_list,
        "Thread counts to try, comma-separated (default 1,2)", "LIST"},
    {"generated", 0, 0, G_OPTION_ARG_NONE, &generated,
        "Benchmark two generated 8192x6144 slides", NULL},
    {"real", 0, 0, G_OPTION_ARG_NONE, &real,
        "Benchmark the slides of WSI_SHARED_SLIDES_DIR", NULL},
    {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &paths, NULL,
        "SLIDE..."},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("- patchreader vs. bare "
      "OpenSlide reads");
  GError *error = NULL;
  GPtrArray *slides = g_ptr_array_new ();
  gchar **threads_v, *tmpdir = NULL;
  BenchPatch *patches;
  guint i, footprint;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    g_printerr ("%s\n", error->message);
    return 2;
  }
  g_option_context_free (ctx);
  gst_init (NULL, NULL);
  if (gst_element_factory_find ("patchreader") == NULL)
    gst_registry_scan_path (gst_registry_get (), WSI_PLUGIN_DIR);

  for (i = 0; paths && paths[i]; i++)
    add_slide (slides, paths[i]);
  if (!paths && !real)
    generated = TRUE;
  if (generated) {
    tmpdir = g_dir_make_tmp ("bench-read-XXXXXX", NULL);
    add_generated_slides (slides, tmpdir);
  }
  if (real)
    add_real_slides (slides);
  if (slides->len == 0 || patches_n <= 0 || size <= 0 || scale < 1.0) {
    g_printerr ("nothing to read\n");
    return 2;
  }

  footprint = (guint) (size * scale + 0.5);
  patches = make_patches (slides, patches_n, size, footprint);
  g_print ("%u slides, %d patches of %dx%d from %ux%u footprints\n",
      slides->len, patches_n, size, size, footprint, footprint);
  for (i = 0; i < slides->len; i++)
    g_print ("  %s\n", ((BenchSlide *) g_ptr_array_index (slides, i))->path);

  threads_v = g_strsplit (threads_list ? threads_list : "1,2", ",", -1);
  for (i = 0; threads_v[i]; i++) {
    guint n = (guint) g_ascii_strtoull (threads_v[i], NULL, 10);
    guint64 read = 0;
    gdouble bare, piped;

    if (n == 0)
      continue;
    bare = run_bare (slides, patches, patches_n, size, footprint, n);
    piped = run_pipeline (slides, patches, patches_n, n, &read);
    g_print ("threads=%u  bare %.1f patches/s  patchreader %.1f patches/s  "
        "ratio %.2f  (%" G_GUINT64_FORMAT " read)\n", n, bare, piped,
        piped / bare, read);
  }
  g_print ("peak RSS %.1f MiB\n", peak_rss_kib () / 1024.0);

  g_strfreev (threads_v);
  g_free (patches);
  if (tmpdir) {
    for (i = 0; i < slides->len; i++) {
      const gchar *path = ((BenchSlide *) g_ptr_array_index (slides, i))->path;
      if (g_str_has_prefix (path, tmpdir))
        g_unlink (path);
    }
    g_rmdir (tmpdir);
    g_free (tmpdir);
  }
  return 0;
}
