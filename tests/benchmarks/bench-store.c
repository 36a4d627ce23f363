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
 * (seeded) into a raw store and a jpeg store (a tee: the same patches).
 * Then, for each thread count of --threads, --repeats rounds alternate:
 *   slides   the same seeded pipeline, patchreader threads=T, into
 *            patchbatch batch-size=B ! fakesink (READY to EOS: slide
 *            opening, masks and preroll included);
 *   jpeg     patchstoresrc threads=T verify=false on the jpeg store, same
 *            batches (page cache warm: every shard was read before);
 *   raw      the same on the raw store;
 *   bare     T threads decoding every JPEG of the jpeg store with
 *            libjpeg-turbo straight from the mapped shards, nothing else
 *            (same output colour space, same integer DCT);
 *   multicrop  patchviews preset=dinov2 after patchreader (slides) and
 *            after patchstoresrc (jpeg store), batched.
 * Medians (min..max) of patches/s, per core (/T), the jpeg/bare ratio and
 * the bytes per patch of each store are printed.
 *
 *   bench-store --location DIR [--patches 2048] [--patch-size 256]
 *               [--batch-size 64] [--threads 1,2] [--repeats 3]
 *               [--quality 90] [--out DIR] [--reader-extra P=V]
 */

#include <gst/gst.h>
#include <glib/gstdio.h>
#include <jpeglib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsistoreformat.h"

typedef struct
{
  gchar *location;
  gchar *out;
  gint patches, patch_size, batch_size, repeats, quality;
  gchar *threads;
  gchar *reader_extra;
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
{ SLIDES, JPEG, RAW, BARE, MULTICROP_SLIDES, MULTICROP_JPEG, N_KINDS };

static const gchar *const kind_names[N_KINDS] = {
  "slides (patchreader)", "jpeg store", "raw store",
  "bare libjpeg-turbo loop", "multi-crop dinov2, slides",
  "multi-crop dinov2, jpeg store"
};

static gdouble
measure (const BenchOptions * o, gint kind, guint threads, const gchar * raw,
    const gchar * jpeg, GPtrArray * jpegs)
{
  gchar *desc = NULL, *src;
  gdouble seconds;

  switch (kind) {
    case SLIDES:
    case MULTICROP_SLIDES:
      src = source_description (o, threads);
      desc = g_strdup_printf ("%s ! %s queue ! patchbatch batch-size=%d ! "
          "fakesink sync=false", src, kind == SLIDES ? "" :
          "patchviews preset=dinov2 seed=1 threads=1 !", o->batch_size);
      g_free (src);
      break;
    case JPEG:
    case RAW:
    case MULTICROP_JPEG:
      desc = g_strdup_printf ("patchstoresrc location=\"%s\" threads=%u "
          "verify=false ! %s queue ! patchbatch batch-size=%d ! fakesink "
          "sync=false", kind == RAW ? raw : jpeg, threads,
          kind == MULTICROP_JPEG ? "patchviews preset=dinov2 seed=1 "
          "threads=1 !" : "", o->batch_size);
      break;
    case BARE:
      return o->patches / run_bare (jpegs, threads, o->patch_size);
  }
  seconds = run_timed (desc);
  g_free (desc);
  return o->patches / seconds;
}

static gint
compare_doubles (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
  BenchOptions o = { NULL, NULL, 2048, 256, 64, 3, 90, NULL, NULL };
  GOptionEntry entries[] = {
    {"location", 0, 0, G_OPTION_ARG_FILENAME, &o.location, "Slides", "DIR"},
    {"out", 0, 0, G_OPTION_ARG_FILENAME, &o.out, "Where the stores go "
          "(default: a temporary folder)", "DIR"},
    {"patches", 0, 0, G_OPTION_ARG_INT, &o.patches, "Patches (2048)", "N"},
    {"patch-size", 0, 0, G_OPTION_ARG_INT, &o.patch_size, "px (256)", "P"},
    {"batch-size", 0, 0, G_OPTION_ARG_INT, &o.batch_size, "(64)", "B"},
    {"threads", 0, 0, G_OPTION_ARG_STRING, &o.threads, "List (1,2)", "T,.."},
    {"repeats", 0, 0, G_OPTION_ARG_INT, &o.repeats, "Rounds (3)", "R"},
    {"quality", 0, 0, G_OPTION_ARG_INT, &o.quality, "JPEG quality (90)", "Q"},
    {"reader-extra", 0, 0, G_OPTION_ARG_STRING, &o.reader_extra, "More "
          "patchreader properties for the slides rows, e.g. "
          "tile-cache-size=0 (a slide set larger than the tile cache)", "P=V"},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("- slides vs patch store");
  GError *err = NULL;
  gchar *raw, *jpeg, *desc, *src, **threads;
  GPtrArray *maps = g_ptr_array_new_with_free_func ((GDestroyNotify)
      g_mapped_file_unref), *jpegs;
  guint t;
  gint kind, r;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err) || !o.location) {
    g_printerr ("%s\n", err ? err->message : "--location is required");
    return 2;
  }
  if (o.out == NULL)
    o.out = g_dir_make_tmp ("bench-store-XXXXXX", NULL);
  raw = g_build_filename (o.out, "raw", NULL);
  jpeg = g_build_filename (o.out, "jpeg", NULL);
  remove_dir (raw);
  remove_dir (jpeg);

  src = source_description (&o, 2);
  desc = g_strdup_printf ("%s ! tee name=t ! queue ! patchstoresink "
      "location=\"%s\" t. ! queue ! patchstoresink location=\"%s\" "
      "encoding=jpeg quality=%d", src, raw, jpeg, o.quality);
  g_print ("extracting %d patches of %d px: %.1f s\n", o.patches,
      o.patch_size, run_timed (desc));
  g_free (desc);
  g_free (src);
  jpegs = load_jpegs (jpeg, maps);
  g_print ("store size per patch: raw %.0f bytes, jpeg q%d %.0f bytes "
      "(%.1fx smaller); %u JPEGs\n", (gdouble) dir_bytes (raw) / o.patches,
      o.quality, (gdouble) dir_bytes (jpeg) / o.patches,
      (gdouble) dir_bytes (raw) / dir_bytes (jpeg), jpegs->len);

  threads = g_strsplit (o.threads ? o.threads : "1,2", ",", -1);
  g_print ("\n| source | threads | patches/s median (min..max) | per core |\n"
      "|---|---|---|---|\n");
  for (t = 0; threads[t] != NULL; t++) {
    guint n = (guint) g_ascii_strtoull (threads[t], NULL, 10);
    gdouble rates[N_KINDS][16];

    /* a warm-up round: page cache, registry, allocator */
    for (kind = 0; kind < N_KINDS; kind++)
      measure (&o, kind, n, raw, jpeg, jpegs);
    for (r = 0; r < MIN (o.repeats, 16); r++)
      for (kind = 0; kind < N_KINDS; kind++)
        rates[kind][r] = measure (&o, kind, n, raw, jpeg, jpegs);
    for (kind = 0; kind < N_KINDS; kind++) {
      gdouble median;

      qsort (rates[kind], MIN (o.repeats, 16), sizeof (gdouble),
          compare_doubles);
      median = rates[kind][MIN (o.repeats, 16) / 2];
      g_print ("| %s | %u | %.0f (%.0f..%.0f) | %.0f |\n", kind_names[kind],
          n, median, rates[kind][0], rates[kind][MIN (o.repeats, 16) - 1],
          median / n);
    }
  }
  g_strfreev (threads);
  g_ptr_array_unref (jpegs);
  g_ptr_array_unref (maps);
  g_free (raw);
  g_free (jpeg);
  return 0;
}
