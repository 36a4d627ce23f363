/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * bench-store: training from slides against training from a patch store
 * (issue 21), on the same patches, in one run.
 *
 * The standard pipeline extracts --patches patches of --patch-size px once
 * (seeded) into a raw, a yuv420 and a jpeg store (a tee: the same
 * patches). Then, for each thread count of --threads, --repeats rounds
 * alternate:
 *   slides   the same seeded pipeline, patchreader threads=T, into
 *            patchbatch batch-size=B ! fakesink (READY to EOS: slide
 *            opening, masks and preroll included);
 *   jpeg, yuv420, raw  patchstoresrc threads=T verify=false epochs=E on
 *            each store straight into the same batches (page cache warm:
 *            every shard was read before); patchstoresrc pushes from its
 *            own thread, so the documented pipeline has no queue;
 *   raw + queue  the raw row with a queue before patchbatch, as the
 *            slides pipeline has: what the extra thread hop costs;
 *   bare     T threads decoding every JPEG of the jpeg store with
 *            libjpeg-turbo straight from the mapped shards, nothing else
 *            (same output colour space, same integer DCT);
 *   multicrop  patchviews preset=dinov2 threads=T after patchreader
 *            (slides; patchviews tile-cache-size=0), after patchstoresrc
 *            on the jpeg store as negotiated by default (patchstoresrc
 *            decodes: DINOv2's crops gain nothing from patchviews
 *            decoding), and the same with an image/jpeg capsfilter
 *            (patchviews decodes), batched.
 * Printed: medians (min..max) of patches/s (wall clock) and of patches per
 * CPU-second (user + system time of the process: what one core does,
 * whatever else runs on the machine), the store sizes per patch, the
 * ratios against issue 21's goals and slipstream's published figures.
 * The defaults take about 2-3 minutes on 2 idle cores:
 *
 *   meson devenv -C build ./tests/benchmarks/bench-store
 *       [--location SLIDES (default ../shared/slides/Aperio-CMU-1-Small-
 *       Region.svs beside the source tree)] [--patches 1024]
 *       [--patch-size 256] [--batch-size 64] [--threads 1,2] [--repeats 3]
 *       [--quality 90] [--epochs 4] [--out DIR] [--reader-extra P=V]
 *       [--multicrop-only]
 *
 * --multicrop-only measures the three multi-crop rows alone and prints
 * their ratio against issue 21's goal (multi-crop from a jpeg store >= 2x
 * from slides, per CPU-second and wall, same run): about a minute.
 */

#include <gst/gst.h>
#include <glib/gstdio.h>
#include <jpeglib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "wsistoreformat.h"

typedef struct
{
  gchar *location;
  gchar *out;
  gint patches, patch_size, batch_size, repeats, quality, epochs;
  gchar *threads;
  gchar *reader_extra;
  gboolean multicrop_only;
} BenchOptions;

static gchar *
source_description (const BenchOptions * o, guint threads)
{
  return g_strdup_printf ("wsislidesrc location=\"%s\" seed=7 cycle=true ! "
      "tissuemask ! queue ! patchsampler patch-size=%d max-patches=%d ! "
      "patchinterleave ! patchreader threads=%u %s", o->location,
      o->patch_size, o->patches, threads, o->reader_extra ? o->reader_extra :
      "");
}

/* User + system seconds of the whole process so far. */
static gdouble
cpu_seconds (void)
{
  struct rusage usage;

  getrusage (RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6
      + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

/* Runs @description from READY to EOS; returns the seconds. */
static gdouble
run_timed (const gchar * description)
{
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (description, &err);
  GstBus *bus;
  GstMessage *msg;
  gint64 start;
  gdouble seconds = -1;

  if (pipeline == NULL) {
    g_printerr ("cannot parse %s: %s\n", description, err->message);
    exit (1);
  }
  bus = gst_element_get_bus (pipeline);
  /* From READY: prerolling already decodes hundreds of patches into the
   * queues, so the clock must run through it. */
  gst_element_set_state (pipeline, GST_STATE_READY);
  start = g_get_monotonic_time ();
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS) {
    seconds = (g_get_monotonic_time () - start) / 1e6;
  } else {
    gst_message_parse_error (msg, &err, NULL);
    g_printerr ("error in %s: %s\n", description, err->message);
    exit (1);
  }
  gst_message_unref (msg);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  return seconds;
}

static void
remove_dir (const gchar * dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const gchar *name;

  while (d && (name = g_dir_read_name (d)) != NULL) {
    gchar *path = g_build_filename (dir, name, NULL);

    g_unlink (path);
    g_free (path);
  }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
}

static guint64
dir_bytes (const gchar * dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const gchar *name;
  guint64 total = 0;

  while (d && (name = g_dir_read_name (d)) != NULL) {
    gchar *path = g_build_filename (dir, name, NULL);
    GStatBuf st;

    if (g_stat (path, &st) == 0)
      total += st.st_size;
    g_free (path);
  }
  if (d)
    g_dir_close (d);
  return total;
}

/* ---- the bare libjpeg-turbo loop ----------------------------------------- */

typedef struct
{
  const guint8 *data;
  gsize size;
} Jpeg;

typedef struct
{
  GPtrArray *jpegs;             /* Jpeg*, all of the store */
  guint first, step;            /* this thread's share */
  guint8 *out;
  gint size;
} BareShare;

static gpointer
bare_decode (gpointer data)
{
  BareShare *share = data;
  struct jpeg_decompress_struct d;
  struct jpeg_error_mgr err;
  JSAMPROW rows[4096];
  guint i;
  gint y;

  d.err = jpeg_std_error (&err);
  jpeg_create_decompress (&d);
  for (y = 0; y < share->size; y++)
    rows[y] = share->out + (gsize) y * share->size * 3;
  for (i = share->first; i < share->jpegs->len; i += share->step) {
    const Jpeg *j = g_ptr_array_index (share->jpegs, i);

    jpeg_mem_src (&d, j->data, j->size);
    jpeg_read_header (&d, TRUE);
    d.out_color_space = JCS_RGB;
    d.dct_method = JDCT_ISLOW;
    jpeg_start_decompress (&d);
    while (d.output_scanline < d.output_height)
      jpeg_read_scanlines (&d, rows + d.output_scanline,
          d.output_height - d.output_scanline);
    jpeg_finish_decompress (&d);
  }
  jpeg_destroy_decompress (&d);
  return NULL;
}

/* Every JPEG payload of the store, from its mapped shards. */
static GPtrArray *
load_jpegs (const gchar * dir, GPtrArray * maps)
{
  GPtrArray *jpegs = g_ptr_array_new_with_free_func (g_free);
  guint s;

  for (s = 0;; s++) {
    gchar *name = wsi_shard_file_name (s);
    gchar *path = g_build_filename (dir, name, NULL);
    GMappedFile *map = g_mapped_file_new (path, FALSE, NULL);
    const guint8 *data;
    const WsiShardFooter *footer;
    const WsiStoreEntry *entries;
    guint i;

    g_free (name);
    g_free (path);
    if (map == NULL)
      break;
    g_ptr_array_add (maps, map);
    data = (const guint8 *) g_mapped_file_get_contents (map);
    footer = (const WsiShardFooter *) (data + g_mapped_file_get_length (map)
        - sizeof (WsiShardFooter));
    entries = (const WsiStoreEntry *) (data + footer->entries_offset);
    for (i = 0; i < footer->n_patches; i++) {
      Jpeg *j = g_new (Jpeg, 1);

      j->data = data + entries[i].offset;
      j->size = entries[i].size;
      g_ptr_array_add (jpegs, j);
    }
  }
  return jpegs;
}

static gdouble
run_bare (GPtrArray * jpegs, guint threads, gint size)
{
  GThread *workers[64];
  BareShare shares[64];
  gint64 start = g_get_monotonic_time ();
  guint t;

  for (t = 0; t < threads; t++) {
    shares[t].jpegs = jpegs;
    shares[t].first = t;
    shares[t].step = threads;
    shares[t].size = size;
    shares[t].out = g_malloc ((gsize) size * size * 3);
    workers[t] = g_thread_new ("bare", bare_decode, &shares[t]);
  }
  for (t = 0; t < threads; t++) {
    g_thread_join (workers[t]);
    g_free (shares[t].out);
  }
  return (g_get_monotonic_time () - start) / 1e6;
}

/* ---- measurements ---------------------------------------------------------- */

enum
{
  SLIDES, JPEG, YUV420, RAW, RAW_QUEUE, BARE, MULTICROP_SLIDES,
  MULTICROP_JPEG, MULTICROP_JPEG_IN_VIEWS, N_KINDS
};

static const gchar *const kind_names[N_KINDS] = {
  "slides (patchreader)", "jpeg store", "yuv420 store", "raw store",
  "raw store, queue before patchbatch",
  "bare libjpeg-turbo loop, same JPEGs", "multi-crop dinov2, slides",
  "multi-crop dinov2, jpeg store (default: patchstoresrc decodes)",
  "multi-crop dinov2, jpeg store (image/jpeg: patchviews decodes)"
};

/* The three stores and the JPEGs of the jpeg one. */
typedef struct
{
  gchar *raw, *yuv420, *jpeg;
  GPtrArray *jpegs;
} Stores;

/* One run: patches per wall-clock second and per CPU-second. */
typedef struct
{
  gdouble wall, cpu;
} Rate;

/* Epochs a row serves: the plain store rows and the bare loop run
 * --epochs times over the store, the others once. */
static gint
served_epochs (const BenchOptions * o, gint kind)
{
  return kind == JPEG || kind == YUV420 || kind == RAW || kind == RAW_QUEUE
      || kind == BARE ?
      MAX (o->epochs, 1) : 1;
}

static gchar *
store_description (const BenchOptions * o, gint kind, guint threads,
    const Stores * stores)
{
  const gchar *store = kind == RAW || kind == RAW_QUEUE ? stores->raw :
      kind == YUV420 ?
      stores->yuv420 : stores->jpeg;
  gchar *views = g_strdup_printf ("%spatchviews preset=dinov2 seed=1 "
      "threads=%u !", kind == MULTICROP_JPEG_IN_VIEWS ? "image/jpeg ! " : "",
      threads);
  gchar *desc = g_strdup_printf ("patchstoresrc location=\"%s\" threads=%u "
      "verify=false epochs=%d ! %s %s patchbatch batch-size=%d ! "
      "fakesink sync=false", store, threads, served_epochs (o, kind),
      kind >= MULTICROP_JPEG ? views : "", kind >= MULTICROP_JPEG
      || kind == RAW_QUEUE ? "queue !" : "", o->batch_size);

  g_free (views);
  return desc;
}

static Rate
measure (const BenchOptions * o, gint kind, guint threads,
    const Stores * stores)
{
  gchar *desc = NULL, *src, *views;
  gdouble seconds, cpu = cpu_seconds ();
  Rate rate;

  switch (kind) {
    case SLIDES:
    case MULTICROP_SLIDES:
      src = source_description (o, threads);
      /* tile-cache-size=0: DINOv2's crops read no slide, and patchviews'
       * default would raise the tile cache it shares with patchreader
       * (wsireadcaches.h: the largest any member asks) over the reader's
       * --reader-extra setting. */
      views = g_strdup_printf ("patchviews preset=dinov2 seed=1 threads=%u "
          "tile-cache-size=0 !", threads);
      desc = g_strdup_printf ("%s ! %s queue ! patchbatch batch-size=%d ! "
          "fakesink sync=false", src, kind == SLIDES ? "" : views,
          o->batch_size);
      g_free (views);
      g_free (src);
      break;
    case BARE:
      break;
    default:
      desc = store_description (o, kind, threads, stores);
      break;
  }
  if (desc != NULL) {
    seconds = run_timed (desc);
  } else {
    gint e;

    for (seconds = 0, e = 0; e < served_epochs (o, kind); e++)
      seconds += run_bare (stores->jpegs, threads, o->patch_size);
  }
  cpu = cpu_seconds () - cpu;
  g_free (desc);
  rate.wall = (gdouble) o->patches * served_epochs (o, kind) / seconds;
  rate.cpu = (gdouble) o->patches * served_epochs (o, kind) / MAX (cpu, 1e-6);
  return rate;
}

/* The first row measured: the multi-crop ones alone with
 * --multicrop-only. */
static gint
first_kind (const BenchOptions * o)
{
  return o->multicrop_only ? MULTICROP_SLIDES : SLIDES;
}

static gint
compare_doubles (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return x < y ? -1 : x > y;
}

static gdouble
median (const gdouble * values, gint n, gdouble * lo, gdouble * hi)
{
  gdouble sorted[16];

  memcpy (sorted, values, n * sizeof (gdouble));
  qsort (sorted, n, sizeof (gdouble), compare_doubles);
  if (lo)
    *lo = sorted[0];
  if (hi)
    *hi = sorted[n - 1];
  return sorted[n / 2];
}

/* The median over rounds of kind @a's rate over kind @b's, each round's
 * pair measured next to each other. */
static gdouble
median_ratio (Rate rates[N_KINDS][16], gint a, gint b, gint n, gboolean cpu)
{
  gdouble ratios[16];
  gint r;

  for (r = 0; r < n; r++)
    ratios[r] = cpu ? rates[a][r].cpu / rates[b][r].cpu :
        rates[a][r].wall / rates[b][r].wall;
  return median (ratios, n, NULL, NULL);
}

static void
print_goals (Rate rates[N_KINDS][16], gint n, guint threads,
    gboolean multicrop_only)
{
  gdouble values[16], raw_cpu, ratio;
  gint r;

  if (!multicrop_only) {
    for (r = 0; r < n; r++)
      values[r] = rates[RAW][r].cpu;
    raw_cpu = median (values, n, NULL, NULL);
    g_print ("- threads=%u: raw store %.0f patches per CPU-second = %.2fx the "
        "goal of 20,000 per core\n", threads, raw_cpu, raw_cpu / 20000.0);
    for (r = 0; r < n; r++)
      values[r] = rates[RAW_QUEUE][r].cpu;
    raw_cpu = median (values, n, NULL, NULL);
    g_print ("- threads=%u: raw store with a queue before patchbatch %.0f "
        "patches per CPU-second = %.2fx the goal\n", threads, raw_cpu,
        raw_cpu / 20000.0);
    ratio = median_ratio (rates, JPEG, BARE, n, FALSE);
    g_print ("- threads=%u: jpeg store / bare loop = %.2f (wall), %.2f (per "
        "CPU-second); goal >= 0.90\n", threads, ratio, median_ratio (rates,
            JPEG, BARE, n, TRUE));
  }
  ratio = median_ratio (rates, MULTICROP_JPEG, MULTICROP_SLIDES, n, FALSE);
  g_print ("- threads=%u: multi-crop jpeg store / slides = %.2f (wall), %.2f "
      "(per CPU-second); goal >= 2. Decoded by patchviews (image/jpeg) / "
      "by patchstoresrc (the default for DINOv2): %.2f (wall), %.2f (per "
      "CPU-second)\n", threads, ratio, median_ratio (rates, MULTICROP_JPEG,
          MULTICROP_SLIDES, n, TRUE), median_ratio (rates,
          MULTICROP_JPEG_IN_VIEWS, MULTICROP_JPEG, n, FALSE),
      median_ratio (rates, MULTICROP_JPEG_IN_VIEWS, MULTICROP_JPEG, n, TRUE));
}

static void
print_slipstream (void)
{
  g_print ("\nslipstream's published figures (issue 21; NOT this machine: a "
      "23-thread AMD EPYC, ImageNet-sized images of about 400x350 px, "
      "random-resized crops to 224 px, not whole patches into batches):\n"
      "- raw I/O from its memory-mapped cache: ~480,000 samples/s\n"
      "- JPEG decode + random-resized crop, CPU, thread-local TurboJPEG, "
      "DCT-space crops: 16,700/s (~730/s per thread); its notebook ~5,700/s\n"
      "- YUV420 + random-resized crop: 45,000/s (~1,960/s per thread)\n"
      "- GPU decode + crop: ~10,000/s\n");
}

/* Extracts the three stores through a tee: the same patches. */
static void
extract_stores (const BenchOptions * o, const Stores * stores)
{
  gchar *src = source_description (o, 2);
  gchar *desc = g_strdup_printf ("%s ! tee name=t ! queue ! patchstoresink "
      "location=\"%s\" t. ! queue ! patchstoresink location=\"%s\" "
      "encoding=yuv420 t. ! queue ! patchstoresink location=\"%s\" "
      "encoding=jpeg quality=%d", src, stores->raw, stores->yuv420,
      stores->jpeg, o->quality);

  g_print ("extracting %d patches of %d px: %.1f s\n", o->patches,
      o->patch_size, run_timed (desc));
  g_free (desc);
  g_free (src);
}

int
main (int argc, char **argv)
{
  BenchOptions o = { NULL, NULL, 1024, 256, 64, 3, 90, 4, NULL, NULL };
  GOptionEntry entries[] = {
    {"location", 0, 0, G_OPTION_ARG_FILENAME, &o.location, "Slides (default: "
          "../shared/slides/Aperio-CMU-1-Small-Region.svs beside the source "
          "tree)", "DIR"},
    {"out", 0, 0, G_OPTION_ARG_FILENAME, &o.out, "Where the stores go "
          "(default: a temporary folder, removed at the end)", "DIR"},
    {"patches", 0, 0, G_OPTION_ARG_INT, &o.patches, "Patches (1024)", "N"},
    {"patch-size", 0, 0, G_OPTION_ARG_INT, &o.patch_size, "px (256)", "P"},
    {"batch-size", 0, 0, G_OPTION_ARG_INT, &o.batch_size, "(64)", "B"},
    {"threads", 0, 0, G_OPTION_ARG_STRING, &o.threads, "List (1,2)", "T,.."},
    {"repeats", 0, 0, G_OPTION_ARG_INT, &o.repeats, "Rounds (3)", "R"},
    {"quality", 0, 0, G_OPTION_ARG_INT, &o.quality, "JPEG quality (90)", "Q"},
    {"epochs", 0, 0, G_OPTION_ARG_INT, &o.epochs, "Epochs each store row "
          "serves, and rounds of the bare loop (4): a raw epoch of 1024 "
          "patches takes tens of ms, start-up would weigh", "E"},
    {"multicrop-only", 0, 0, G_OPTION_ARG_NONE, &o.multicrop_only, "Only "
          "the DINOv2 multi-crop rows and their ratio against the 2x goal "
          "(about a minute on 2 idle cores)", NULL},
    {"reader-extra", 0, 0, G_OPTION_ARG_STRING, &o.reader_extra, "More "
          "patchreader properties for the slides rows (default "
          "tile-cache-size=0: a training set of many slides does not fit "
          "the tile cache, one small slide would; \"\" for none)", "P=V"},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("- slides vs patch store");
  GError *err = NULL;
  gchar **threads;
  gboolean own_out;
  Stores stores;
  GPtrArray *maps = g_ptr_array_new_with_free_func ((GDestroyNotify)
      g_mapped_file_unref);
  guint t;
  gint kind, r, n;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    g_printerr ("%s\n", err->message);
    return 2;
  }
  if (o.reader_extra == NULL)
    o.reader_extra = g_strdup ("tile-cache-size=0");
  if (o.location == NULL)
    o.location = g_build_filename (WSI_SOURCE_ROOT, "..", "shared", "slides",
        "Aperio-CMU-1-Small-Region.svs", NULL);
  if (!g_file_test (o.location, G_FILE_TEST_EXISTS)) {
    g_printerr ("no slides at %s: give --location\n", o.location);
    return 2;
  }
  n = CLAMP (o.repeats, 1, 16);
  own_out = o.out == NULL;
  if (own_out)
    o.out = g_dir_make_tmp ("bench-store-XXXXXX", NULL);
  stores.raw = g_build_filename (o.out, "raw", NULL);
  stores.yuv420 = g_build_filename (o.out, "yuv420", NULL);
  stores.jpeg = g_build_filename (o.out, "jpeg", NULL);
  remove_dir (stores.raw);
  remove_dir (stores.yuv420);
  remove_dir (stores.jpeg);

  g_print ("slides: %s (patchreader %s)\n", o.location, o.reader_extra);
  extract_stores (&o, &stores);
  stores.jpegs = load_jpegs (stores.jpeg, maps);
  g_print ("store size per patch: raw %.0f bytes, yuv420 %.0f, jpeg q%d "
      "%.0f (%.1fx smaller than raw); %u JPEGs\n",
      (gdouble) dir_bytes (stores.raw) / o.patches,
      (gdouble) dir_bytes (stores.yuv420) / o.patches, o.quality,
      (gdouble) dir_bytes (stores.jpeg) / o.patches,
      (gdouble) dir_bytes (stores.raw) / dir_bytes (stores.jpeg),
      stores.jpegs->len);

  threads = g_strsplit (o.threads ? o.threads : "1,2", ",", -1);
  for (t = 0; threads[t] != NULL; t++) {
    guint nt = (guint) g_ascii_strtoull (threads[t], NULL, 10);
    Rate rates[N_KINDS][16];

    g_print ("\n%d patches of %d px, batches of %d, threads=%u, %d rounds:"
        "\n\n| source | threads | patches/s median (min..max) | patches per "
        "CPU-second median (min..max) |\n|---|---|---|---|\n", o.patches,
        o.patch_size, o.batch_size, nt, n);
    /* a warm-up of the stores (page cache, allocator); the slide was just
     * read by the extraction */
    for (kind = first_kind (&o); kind <= BARE; kind++)
      measure (&o, kind, nt, &stores);
    for (r = 0; r < n; r++)
      for (kind = first_kind (&o); kind < N_KINDS; kind++)
        rates[kind][r] = measure (&o, kind, nt, &stores);
    for (kind = first_kind (&o); kind < N_KINDS; kind++) {
      gdouble wall[16], cpu[16], wlo, whi, clo, chi, wm, cm;

      for (r = 0; r < n; r++) {
        wall[r] = rates[kind][r].wall;
        cpu[r] = rates[kind][r].cpu;
      }
      wm = median (wall, n, &wlo, &whi);
      cm = median (cpu, n, &clo, &chi);
      g_print ("| %s | %u | %.0f (%.0f..%.0f) | %.0f (%.0f..%.0f) |\n",
          kind_names[kind], nt, wm, wlo, whi, cm, clo, chi);
    }
    g_print ("\nGoals (issue 21), medians of per-round ratios:\n");
    print_goals (rates, n, nt, o.multicrop_only);
  }
  print_slipstream ();
  g_strfreev (threads);
  g_ptr_array_unref (stores.jpegs);
  g_ptr_array_unref (maps);
  if (own_out) {
    remove_dir (stores.raw);
    remove_dir (stores.yuv420);
    remove_dir (stores.jpeg);
    g_rmdir (o.out);
  }
  g_free (stores.raw);
  g_free (stores.yuv420);
  g_free (stores.jpeg);
  return 0;
}
