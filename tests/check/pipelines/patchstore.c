/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* The patch store end to end, on slides generated at test time:
 * wsislidesrc ! tissuemask ! queue ! patchsampler ! patchinterleave !
 * patchreader ! patchstoresink, then patchstoresrc ! appsink.
 * Round trip (raw: byte-identical patches and records), shuffle and
 * epochs, rank split, damaged / incomplete / other-version stores, a full
 * disk, and kill -9 then resume. */

#include "wsipipeline.h"
#include "wsitestslide.h"
#include "wsitestutil.h"

#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <errno.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* 62 px RGB rows are 186 bytes, padded to 188 in a buffer: the store
 * packs them and must unpack them to the same buffer. */
#define PATCH 62
#define STRIDE GST_ROUND_UP_4 (PATCH * 3)
#define PATCHES_PER_SLIDE 23
#define N_SLIDES 2
#define N_PATCHES (PATCHES_PER_SLIDE * N_SLIDES)
#define PER_SHARD 10

static gchar *
make_slides (const gchar * name)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, name);
  guint i;

  for (i = 0; i < N_SLIDES; i++) {
    WsiTestSlideSpec spec;
    gchar file[32];

    wsi_test_slide_spec_init (&spec);
    spec.width = 1024;
    spec.height = 768;
    spec.tile_size = 256;
    spec.levels = 2;
    spec.level_step = 2;
    spec.mpp = 0.25;
    spec.tissue_blobs = 3;
    spec.seed = 40 + i;
    g_snprintf (file, sizeof (file), "slide%u.tiff", i);
    g_free (wsi_test_write_slide (dir, file, &spec));
  }
  return dir;
}

/* Removes @dir's files (a store is flat) and @dir. */
static void
remove_store (const gchar * dir)
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

static gchar *
extract_pipeline (const gchar * slides, const gchar * store,
    const gchar * before_sink, const gchar * sink_extra)
{
  return g_strdup_printf ("wsislidesrc location=\"%s\" seed=3 ! tissuemask ! "
      "queue ! patchsampler patch-size=%d patches-per-slide=%d ! "
      "patchinterleave ! patchreader threads=2 ! %s patchstoresink "
      "location=\"%s\" patches-per-shard=%d %s", slides, PATCH,
      PATCHES_PER_SLIDE, before_sink, store, PER_SHARD, sink_extra);
}

/* Runs @description (no appsink) to EOS; returns the error or NULL. */
static gchar *
run_to_end (const gchar * description)
{
  return wsi_test_run_to_end (description, 120 * GST_SECOND);
}

static GstFlowReturn
collect_sample (GstAppSink * sink, gpointer run)
{
  GstSample *sample = gst_app_sink_pull_sample (sink);

  wsi_run_collect (run, sample);
  gst_sample_unref (sample);
  return GST_FLOW_OK;
}

/* Runs @description to the pipeline's EOS (every sink's, unlike
 * wsi_run_pipeline(), which stops at the appsink's) and keeps what the
 * appsink "sink" got. */
static WsiRun *
run_collecting (const gchar * description)
{
  WsiRun *run = g_new0 (WsiRun, 1);
  GstAppSinkCallbacks callbacks = { NULL, NULL, collect_sample, };
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (description, &err);
  GstElement *sink;
  GstBus *bus;

  fail_unless (pipeline != NULL, "cannot parse '%s'", description);
  run->batches = g_ptr_array_new_with_free_func (
      (GDestroyNotify) gst_buffer_unref);
  run->records = g_array_new (FALSE, FALSE, sizeof (WsiPatchRecord));
  run->paths = g_ptr_array_new_with_free_func (g_free);
  run->labels = g_ptr_array_new_with_free_func (g_free);
  run->warnings = g_ptr_array_new_with_free_func (g_free);
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  gst_app_sink_set_callbacks (GST_APP_SINK (sink), &callbacks, run, NULL);
  bus = gst_element_get_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  wsi_test_wait_eos (pipeline, 120 * GST_SECOND);
  wsi_run_poll_bus (run, bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return run;
}

static void
extract (const gchar * slides, const gchar * store)
{
  gchar *desc = extract_pipeline (slides, store, "", "");
  gchar *error = run_to_end (desc);

  fail_unless (error == NULL, "extraction failed: %s", error);
  g_free (desc);
}

static WsiRun *
serve (const gchar * store, const gchar * extra)
{
  gchar *desc = g_strdup_printf ("patchstoresrc name=src location=\"%s\" %s ! "
      "appsink name=sink sync=false max-buffers=64", store, extra);
  WsiRun *r = wsi_run_pipeline (desc, 0);

  g_free (desc);
  return r;
}

/* Column @name of patch @i of @run (each batch is one patch here). */
static const gchar *
column (WsiRun * run, guint i, const gchar * name)
{
  GstBuffer *buffer = g_ptr_array_index (run->batches, i);

  return wsi_meta_column (wsi_patch_meta_get (buffer), name, 0);
}

static guint64
store_index (WsiRun * run, guint i)
{
  const gchar *text = column (run, i, "store-index");

  fail_unless (text != NULL, "patch %u has no store-index column", i);
  return g_ascii_strtoull (text, NULL, 10);
}

static guint
store_epoch (WsiRun * run, guint i)
{
  const gchar *text = column (run, i, "store-epoch");

  fail_unless (text != NULL, "patch %u has no store-epoch column", i);
  return (guint) g_ascii_strtoull (text, NULL, 10);
}

/* Patch @i of @a and patch @j of @b: same pixels, record, path, label;
 * created_ns compared only when @with_time. */
static void
assert_same_patch (WsiRun * a, guint i, WsiRun * b, guint j,
    gboolean with_time)
{
  GstBuffer *x = g_ptr_array_index (a->batches, i);
  GstBuffer *y = g_ptr_array_index (b->batches, j);
  WsiPatchRecord ra = *WSI_RECORD (a, i), rb = *WSI_RECORD (b, j);
  GstMapInfo mx, my;
  guint k;

  if (!with_time)
    ra.created_ns = rb.created_ns = 0;
  fail_unless (memcmp (&ra, &rb, sizeof (ra)) == 0,
      "records of patch %u and %u differ", i, j);
  fail_unless_equals_string (g_ptr_array_index (a->paths, i),
      g_ptr_array_index (b->paths, j));
  fail_unless_equals_string (g_ptr_array_index (a->labels, i),
      g_ptr_array_index (b->labels, j));
  fail_unless (gst_buffer_map (x, &mx, GST_MAP_READ));
  fail_unless (gst_buffer_map (y, &my, GST_MAP_READ));
  fail_unless_equals_uint64 (mx.size, my.size);
  fail_unless_equals_uint64 (mx.size, PATCH * STRIDE);
  for (k = 0; k < PATCH; k++)
    fail_unless (memcmp (mx.data + k * STRIDE, my.data + k * STRIDE,
            PATCH * 3) == 0, "pixels of patch %u and %u differ", i, j);
  gst_buffer_unmap (x, &mx);
  gst_buffer_unmap (y, &my);
}

/* PSNR (dB) of patch @j of @b against patch @i of @a, pixels only. */
static gdouble
patch_psnr (WsiRun * a, guint i, WsiRun * b, guint j)
{
  GstMapInfo mx, my;
  gdouble se = 0;
  guint k, x;

  fail_unless (gst_buffer_map (g_ptr_array_index (a->batches, i), &mx,
          GST_MAP_READ));
  fail_unless (gst_buffer_map (g_ptr_array_index (b->batches, j), &my,
          GST_MAP_READ));
  for (k = 0; k < PATCH; k++)
    for (x = 0; x < PATCH * 3; x++) {
      gdouble d = (gdouble) mx.data[k * STRIDE + x] - my.data[k * STRIDE + x];

      se += d * d;
    }
  gst_buffer_unmap (g_ptr_array_index (a->batches, i), &mx);
  gst_buffer_unmap (g_ptr_array_index (b->batches, j), &my);
  se /= PATCH * PATCH * 3;
  return se == 0 ? 99.0 : 10 * log10 (255.0 * 255.0 / se);
}

GST_START_TEST (test_raw_round_trip)
{
  gchar *slides = make_slides ("rt-slides");
  gchar *store = g_build_filename (WSI_TEST_TMPDIR, "rt-store", NULL);
  gchar *desc;
  WsiRun *written, *served;
  guint i, t;

  remove_store (store);
  /* the stream that writes the store is also kept, through a tee */
  desc = extract_pipeline (slides, store, "tee name=t ! queue !",
      "t. ! queue ! appsink name=sink sync=false");
  written = run_collecting (desc);
  fail_unless (written->error == NULL, "%s", written->error);
  fail_unless_equals_int (written->records->len, N_PATCHES);

  for (t = 1; t <= 4; t *= 2) {
    gchar *threads = g_strdup_printf ("threads=%u", t);

    served = serve (store, threads);
    fail_unless (served->error == NULL, "%s", served->error);
    fail_unless_equals_int (served->records->len, N_PATCHES);
    {
      GstStructure *s = gst_caps_get_structure (served->last_caps, 0);
      gint w = 0;

      fail_unless_equals_string (gst_structure_get_string (s, "format"),
          "RGB");
      fail_unless (gst_structure_get_int (s, "width", &w));
      fail_unless_equals_int (w, PATCH);
    }
    for (i = 0; i < N_PATCHES; i++) {
      /* byte-identical, created_ns included */
      assert_same_patch (written, i, served, i, TRUE);
      fail_unless_equals_uint64 (store_index (served, i), i);
      fail_unless_equals_int (store_epoch (served, i), 0);
      fail_unless_equals_uint64 (GST_BUFFER_OFFSET (g_ptr_array_index
              (served->batches, i)), i);
      /* the slide's file URI, for patchviews' context views */
      fail_unless (g_str_has_prefix (wsi_patch_meta_string (wsi_patch_meta_get
                  (g_ptr_array_index (served->batches, i)), "uris", 0),
              "file://"));
      fail_unless_equals_string (wsi_patch_meta_string (wsi_patch_meta_get
              (g_ptr_array_index (served->batches, i)), "uris", 0),
          wsi_patch_meta_string (wsi_patch_meta_get (g_ptr_array_index
                  (written->batches, i)), "uris", 0));
    }
    wsi_run_free (served);
    g_free (threads);
  }
  {
    gchar *manifest = g_build_filename (store, "manifest.json", NULL);
    gchar *text = NULL;

    fail_unless (g_file_get_contents (manifest, &text, NULL, NULL));
    fail_unless (strstr (text, "\"patches\" : 46") != NULL, "%s", text);
    fail_unless (strstr (text, "\"seed\" : \"3\"") != NULL, "%s", text);
    fail_unless (strstr (text, "\"element\" : \"patchsampler\"") != NULL);
    g_free (text);
    g_free (manifest);
  }
  wsi_run_free (written);
  g_free (desc);
  remove_store (store);
  g_free (store);
  g_free (slides);
}

GST_END_TEST;

/* Bytes of the shards of @store. */
static guint64
store_bytes (const gchar * store)
{
  GDir *d = g_dir_open (store, 0, NULL);
  const gchar *name;
  guint64 total = 0;

  while (d && (name = g_dir_read_name (d)) != NULL) {
    gchar *path = g_build_filename (store, name, NULL);
    GStatBuf st;

    if (g_str_has_suffix (name, ".wsis") && g_stat (path, &st) == 0)
      total += st.st_size;
    g_free (path);
  }
  if (d)
    g_dir_close (d);
  return total;
}

/* Writes @encoding through a tee, serves it at 1 and 3 threads: records
 * exact, the same bytes whatever threads, every patch at least @min_db;
 * returns the store's shard bytes. */
static guint64
check_lossy (const gchar * slides, const gchar * name, const gchar * encoding,
    gdouble min_db)
{
  gchar *store = g_build_filename (WSI_TEST_TMPDIR, name, NULL);
  gchar *desc;
  WsiRun *written, *one, *three;
  gdouble worst = 99;
  guint64 bytes;
  guint i;

  gchar *sink_extra = g_strdup_printf ("%s t. ! queue ! appsink name=sink "
      "sync=false", encoding);

  remove_store (store);
  desc = extract_pipeline (slides, store, "tee name=t ! queue !", sink_extra);
  g_free (sink_extra);
  written = run_collecting (desc);
  fail_unless (written->error == NULL, "%s", written->error);
  one = serve (store, "threads=1");
  three = serve (store, "threads=3");
  fail_unless (one->error == NULL && three->error == NULL);
  fail_unless_equals_int (one->records->len, N_PATCHES);
  fail_unless_equals_int (three->records->len, N_PATCHES);
  for (i = 0; i < N_PATCHES; i++) {
    gdouble db = patch_psnr (written, i, one, i);
    WsiPatchRecord ra = *WSI_RECORD (written, i), rb = *WSI_RECORD (one, i);

    fail_unless (memcmp (&ra, &rb, sizeof (ra)) == 0);
    assert_same_patch (one, i, three, i, TRUE);
    fail_unless (db >= min_db, "%s: patch %u at %.1f dB < %.1f", encoding, i,
        db, min_db);
    worst = MIN (worst, db);
  }
  bytes = store_bytes (store);
  g_print ("patchstore: %s: worst patch %.1f dB, %" G_GUINT64_FORMAT
      " shard bytes for %d patches of %d px\n", encoding, worst, bytes,
      N_PATCHES, PATCH);
  wsi_run_free (written);
  wsi_run_free (one);
  wsi_run_free (three);
  g_free (desc);
  remove_store (store);
  g_free (store);
  return bytes;
}

GST_START_TEST (test_jpeg_and_yuv420)
{
  gchar *slides = make_slides ("lossy-slides");
  gchar *raw = g_build_filename (WSI_TEST_TMPDIR, "lossy-raw", NULL);
  guint64 raw_bytes, jpeg_bytes, yuv_bytes;

  remove_store (raw);
  extract (slides, raw);
  raw_bytes = store_bytes (raw);
  jpeg_bytes = check_lossy (slides, "lossy-jpeg444",
      "encoding=jpeg quality=95 chroma-subsampling=444", 40.0);
  fail_unless (jpeg_bytes < raw_bytes);
  check_lossy (slides, "lossy-jpeg420",
      "encoding=jpeg quality=95 chroma-subsampling=420", 30.0);
  yuv_bytes = check_lossy (slides, "lossy-yuv420", "encoding=yuv420", 30.0);
  /* half of RGB's pixel bytes, plus the same index */
  fail_unless (yuv_bytes < raw_bytes * 0.6, "%" G_GUINT64_FORMAT " vs %"
      G_GUINT64_FORMAT, yuv_bytes, raw_bytes);
  remove_store (raw);
  g_free (raw);
  g_free (slides);
}

GST_END_TEST;

/* The store indices of every patch of @run, epoch by epoch. */
static void
assert_epochs_are_permutations (WsiRun * run, guint epochs, guint per_epoch,
    guint64 n)
{
  guint e, k;

  fail_unless_equals_int (run->records->len, epochs * per_epoch);
  for (e = 0; e < epochs; e++) {
    gboolean *seen = g_new0 (gboolean, n);

    for (k = 0; k < per_epoch; k++) {
      guint64 index = store_index (run, e * per_epoch + k);

      fail_unless_equals_int (store_epoch (run, e * per_epoch + k), e);
      fail_unless (index < n);
      fail_unless (!seen[index], "patch %" G_GUINT64_FORMAT " twice in "
          "epoch %u", index, e);
      seen[index] = TRUE;
    }
    g_free (seen);
  }
}

static gboolean
same_order (WsiRun * a, guint first_a, WsiRun * b, guint first_b, guint n)
{
  guint k;

  for (k = 0; k < n; k++)
    if (store_index (a, first_a + k) != store_index (b, first_b + k))
      return FALSE;
  return TRUE;
}

GST_START_TEST (test_shuffle_epochs_threads)
{
  gchar *slides = make_slides ("shuffle-slides");
  gchar *store = g_build_filename (WSI_TEST_TMPDIR, "shuffle-store", NULL);
  WsiRun *runs[3], *other_seed, *sequential;
  guint t;

  remove_store (store);
  extract (slides, store);
  for (t = 0; t < 3; t++) {
    gchar *extra = g_strdup_printf ("order=shuffle seed=11 epochs=3 "
        "threads=%u", 1u << t);

    runs[t] = serve (store, extra);
    fail_unless (runs[t]->error == NULL, "%s", runs[t]->error);
    /* every patch exactly once per epoch */
    assert_epochs_are_permutations (runs[t], 3, N_PATCHES, N_PATCHES);
    g_free (extra);
  }
  /* a new order every epoch, not the store order */
  fail_if (same_order (runs[0], 0, runs[0], N_PATCHES, N_PATCHES));
  fail_if (same_order (runs[0], N_PATCHES, runs[0], 2 * N_PATCHES,
          N_PATCHES));
  sequential = serve (store, "");
  fail_if (same_order (runs[0], 0, sequential, 0, N_PATCHES));
  /* the same (seed, epoch), the same order and bytes, whatever threads */
  for (t = 1; t < 3; t++) {
    guint i;

    for (i = 0; i < 3 * N_PATCHES; i++)
      assert_same_patch (runs[0], i, runs[t], i, TRUE);
  }
  /* the served patch is the stored patch */
  for (t = 0; t < N_PATCHES; t++)
    assert_same_patch (runs[0], t, sequential, store_index (runs[0], t),
        TRUE);
  other_seed = serve (store, "order=shuffle seed=12 epochs=1");
  fail_if (same_order (runs[0], 0, other_seed, 0, N_PATCHES));

  for (t = 0; t < 3; t++)
    wsi_run_free (runs[t]);
  wsi_run_free (other_seed);
  wsi_run_free (sequential);
  remove_store (store);
  g_free (store);
  g_free (slides);
}

GST_END_TEST;

/* Rank r of @world: disjoint, equal shares; together every patch of the
 * epoch but the last N mod world of its order. */
static void
check_ranks (const gchar * store, const gchar * order, guint world,
    gboolean from_env)
{
  guint per_rank = N_PATCHES / world, r, k, total = 0;
  gboolean *seen = g_new0 (gboolean, N_PATCHES);

  for (r = 0; r < world; r++) {
    gchar *extra;
    WsiRun *run;

    if (from_env) {
      gchar value[16];

      g_snprintf (value, sizeof (value), "%u", r);
      g_setenv ("RANK", value, TRUE);
      g_snprintf (value, sizeof (value), "%u", world);
      g_setenv ("WORLD_SIZE", value, TRUE);
      extra = g_strdup_printf ("%s seed=5 epochs=2", order);
    } else {
      extra = g_strdup_printf ("%s seed=5 epochs=2 rank=%u world-size=%u",
          order, r, world);
    }
    run = serve (store, extra);
    fail_unless (run->error == NULL, "%s", run->error);
    fail_unless_equals_int (run->records->len, 2 * per_rank);
    for (k = 0; k < per_rank; k++) {
      guint64 index = store_index (run, k);

      fail_unless (!seen[index], "patch %" G_GUINT64_FORMAT " on two ranks",
          index);
      seen[index] = TRUE;
      total++;
    }
    wsi_run_free (run);
    g_free (extra);
  }
  g_unsetenv ("RANK");
  g_unsetenv ("WORLD_SIZE");
  fail_unless_equals_int (total, per_rank * world);
  g_free (seen);
}

GST_START_TEST (test_ranks_disjoint_equal)
{
  gchar *slides = make_slides ("rank-slides");
  gchar *store = g_build_filename (WSI_TEST_TMPDIR, "rank-store", NULL);

  remove_store (store);
  extract (slides, store);
  check_ranks (store, "order=sequential", 3, FALSE);
  check_ranks (store, "order=shuffle", 3, FALSE);
  check_ranks (store, "order=shuffle", 2, FALSE);
  check_ranks (store, "order=shuffle", 4, TRUE);
  remove_store (store);
  g_free (store);
  g_free (slides);
}

GST_END_TEST;

static gchar *
shard_path (const gchar * store, guint index)
{
  gchar name[32];

  g_snprintf (name, sizeof (name), "shard-%05u.wsis", index);
  return g_build_filename (store, name, NULL);
}

GST_START_TEST (test_damaged_shards_skipped)
{
  gchar *slides = make_slides ("damage-slides");
  gchar *store = g_build_filename (WSI_TEST_TMPDIR, "damage-store", NULL);
  gchar *corrupt = NULL, *truncated = NULL, *data = NULL;
  gsize size = 0;
  WsiRun *run, *before;
  guint i;

  remove_store (store);
  extract (slides, store);
  before = serve (store, "");
  fail_unless_equals_int (before->records->len, N_PATCHES);
  /* shard 1: one payload byte flipped; shard 3: cut short */
  corrupt = shard_path (store, 1);
  fail_unless (g_file_get_contents (corrupt, &data, &size, NULL));
  data[size / 2] ^= 0x5a;
  fail_unless (g_file_set_contents (corrupt, data, size, NULL));
  g_free (data);
  truncated = shard_path (store, 3);
  fail_unless (g_file_get_contents (truncated, &data, &size, NULL));
  fail_unless (g_file_set_contents (truncated, data, size - 100, NULL));
  g_free (data);

  run = serve (store, "");
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (run->records->len, N_PATCHES - 2 * PER_SHARD);
  fail_unless (wsi_run_has_warning (run, "shard-00001.wsis", "checksum",
          NULL));
  fail_unless (wsi_run_has_warning (run, "shard-00003.wsis", NULL));
  /* what is served is the other shards' patches: 0-9, 20-29, 40-45 */
  for (i = 0; i < run->records->len; i++) {
    guint before_index = i < PER_SHARD ? i : i < 2 * PER_SHARD ?
        i + PER_SHARD : i + 2 * PER_SHARD;

    assert_same_patch (before, before_index, run, i, TRUE);
  }
  {
    GstElement *src = gst_element_factory_make ("patchstoresrc", NULL);

    g_object_set (src, "location", store, NULL);
    fail_unless (gst_element_set_state (src, GST_STATE_PAUSED) !=
        GST_STATE_CHANGE_FAILURE);
    fail_unless_equals_uint64 (wsi_test_get_u64 (src, "patches-skipped"),
        2 * PER_SHARD);
    fail_unless_equals_uint64 (wsi_test_get_u64 (src, "store-patches"),
        N_PATCHES - 2 * PER_SHARD);
    gst_element_set_state (src, GST_STATE_NULL);
    gst_object_unref (src);
  }
  wsi_run_free (before);
  wsi_run_free (run);
  remove_store (store);
  g_free (corrupt);
  g_free (truncated);
  g_free (store);
  g_free (slides);
}

GST_END_TEST;

/* Going to PAUSED fails with an error containing @expect. */
static void
assert_refused (const gchar * store, const gchar * extra, const gchar * expect)
{
  gchar *desc = g_strdup_printf ("patchstoresrc location=\"%s\" %s ! "
      "fakesink", store, extra);
  gchar *error = run_to_end (desc);

  fail_unless (error != NULL, "%s was not refused", desc);
  fail_unless (strstr (error, expect) != NULL, "error \"%s\" lacks \"%s\"",
      error, expect);
  g_free (error);
  g_free (desc);
}

GST_START_TEST (test_incomplete_and_version)
{
  gchar *slides = make_slides ("refuse-slides");
  gchar *store = g_build_filename (WSI_TEST_TMPDIR, "refuse-store", NULL);
  gchar *manifest = g_build_filename (store, "manifest.json", NULL);
  gchar *text = NULL, **parts;
  WsiRun *run;

  remove_store (store);
  extract (slides, store);
  fail_unless (g_file_get_contents (manifest, &text, NULL, NULL));

  /* another version */
  parts = g_strsplit (text, "\"version\" : 1", 2);
  fail_unless (g_strv_length (parts) == 2);
  {
    gchar *v2 = g_strjoin ("\"version\" : 3", parts[0], parts[1], NULL);

    fail_unless (g_file_set_contents (manifest, v2, -1, NULL));
    g_free (v2);
  }
  assert_refused (store, "", "version 3");
  g_strfreev (parts);

  /* no manifest: refused, unless allow-incomplete */
  g_unlink (manifest);
  assert_refused (store, "", "incomplete");
  run = serve (store, "allow-incomplete=true");
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (run->records->len, N_PATCHES);
  wsi_run_free (run);

  /* the writer refuses to mix with an existing store unless resuming */
  {
    gchar *desc = extract_pipeline (slides, store, "", "");
    gchar *error = run_to_end (desc);

    fail_unless (error != NULL && strstr (error, "resume=true") != NULL,
        "%s", error);
    g_free (error);
    g_free (desc);
  }
  g_free (text);
  g_free (manifest);
  remove_store (store);
  g_free (store);
  g_free (slides);
}

GST_END_TEST;

/* Every patch of @a and @b, created_ns aside, and their shards' sizes. */
static void
assert_same_store (const gchar * a, const gchar * b)
{
  WsiRun *ra = serve (a, "");
  WsiRun *rb = serve (b, "");
  guint i;

  fail_unless (ra->error == NULL && rb->error == NULL);
  fail_unless_equals_int (ra->records->len, N_PATCHES);
  fail_unless_equals_int (rb->records->len, N_PATCHES);
  for (i = 0; i < N_PATCHES; i++)
    assert_same_patch (ra, i, rb, i, FALSE);
  for (i = 0; i <= N_PATCHES / PER_SHARD; i++) {
    gchar *pa = shard_path (a, i), *pb = shard_path (b, i);
    GStatBuf sa, sb;

    fail_unless (g_stat (pa, &sa) == 0 && g_stat (pb, &sb) == 0, "%s", pb);
    fail_unless_equals_uint64 (sa.st_size, sb.st_size);
    g_free (pa);
    g_free (pb);
  }
  wsi_run_free (ra);
  wsi_run_free (rb);
}

/* A full disk: a 256 KiB tmpfs holds two shards of ~118 KiB and not the
 * third. Without the right to mount one, a file-size limit makes every
 * shard's write fail as a full disk would (EFBIG instead of ENOSPC), so
 * only the "no shard was complete" case is checked. */
static gboolean
mount_small_disk (const gchar * dir, gchar ** why)
{
  g_mkdir_with_parents (dir, 0755);
  /* a disk an earlier, failed run left mounted */
  umount2 (dir, MNT_DETACH);
  if (mount ("tmpfs", dir, "tmpfs", 0, "size=256k") == 0)
    return TRUE;
  *why = g_strdup (g_strerror (errno));
  return FALSE;
}

GST_START_TEST (test_disk_full_then_resume)
{
  gchar *slides = make_slides ("full-slides");
  gchar *store = g_build_filename (WSI_TEST_TMPDIR, "full-store", NULL);
  gchar *reference = g_build_filename (WSI_TEST_TMPDIR, "full-ref", NULL);
  gchar *desc, *error, *manifest, *why = NULL;
  struct rlimit limit, saved;
  gboolean small_disk;
  WsiRun *run;

  remove_store (store);
  remove_store (reference);
  extract (slides, reference);

  small_disk = mount_small_disk (store, &why);
  if (!small_disk) {
    g_print ("patchstore: cannot mount a small tmpfs (%s): the full disk is "
        "a file-size limit, no shard completes before it\n", why);
    fail_unless (getrlimit (RLIMIT_FSIZE, &saved) == 0);
    limit = saved;
    limit.rlim_cur = 50000;
    signal (SIGXFSZ, SIG_IGN);
    fail_unless (setrlimit (RLIMIT_FSIZE, &limit) == 0);
  }
  desc = extract_pipeline (slides, store, "", "");
  error = run_to_end (desc);
  if (!small_disk)
    fail_unless (setrlimit (RLIMIT_FSIZE, &saved) == 0);
  fail_unless (error != NULL, "no error with a full disk");
  fail_unless (strstr (error, store) != NULL
      && strstr (error, "shard-0000") != NULL, "error does not name the "
      "file: %s", error);
  manifest = g_build_filename (store, "manifest.json", NULL);
  fail_if (g_file_test (manifest, G_FILE_TEST_EXISTS));
  if (small_disk) {
    /* the complete shards are kept and whole */
    run = serve (store, "allow-incomplete=true");
    fail_unless (run->error == NULL, "%s", run->error);
    fail_unless_equals_int (run->records->len, 2 * PER_SHARD);
    wsi_run_free (run);
    fail_unless (mount ("tmpfs", store, "tmpfs", MS_REMOUNT, "size=4m") == 0,
        "%s", g_strerror (errno));
  }
  g_free (error);
  g_free (desc);

  /* room again: resume completes the same store */
  desc = extract_pipeline (slides, store, "", "resume=true");
  error = run_to_end (desc);
  fail_unless (error == NULL, "%s", error);
  fail_unless (g_file_test (manifest, G_FILE_TEST_EXISTS));
  assert_same_store (reference, store);

  if (small_disk)
    fail_unless (umount (store) == 0, "%s", g_strerror (errno));
  g_free (why);
  g_free (manifest);
  g_free (desc);
  remove_store (store);
  remove_store (reference);
  g_free (store);
  g_free (reference);
  g_free (slides);
}

GST_END_TEST;

GST_START_TEST (test_kill_then_resume)
{
  gchar *slides = make_slides ("kill-slides");
  gchar *store = g_build_filename (WSI_TEST_TMPDIR, "kill-store", NULL);
  gchar *reference = g_build_filename (WSI_TEST_TMPDIR, "kill-ref", NULL);
  gchar *launch = g_find_program_in_path ("gst-launch-1.0");
  gchar *desc, *error, *second = NULL, *third = NULL, *tmp = NULL;
  gchar **argv = NULL;
  GError *err = NULL;
  GPid pid;
  gint i, status = 0;
  gboolean mid_shard = FALSE, writer_ended = FALSE;

  fail_unless (launch != NULL, "gst-launch-1.0 not found");
  remove_store (store);
  remove_store (reference);
  extract (slides, reference);

  /* slowed down (20 ms a patch) so that the kill lands mid-shard */
  desc = extract_pipeline (slides, store, "identity sleep-time=20000 !", "");
  fail_unless (g_shell_parse_argv (desc, NULL, &argv, &err));
  {
    GPtrArray *args = g_ptr_array_new ();

    g_ptr_array_add (args, launch);
    g_ptr_array_add (args, (gpointer) "-q");
    for (i = 0; argv[i] != NULL; i++)
      g_ptr_array_add (args, argv[i]);
    g_ptr_array_add (args, NULL);
    fail_unless (g_spawn_async (NULL, (gchar **) args->pdata, NULL,
            G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
            NULL, &pid, &err), "%s", err ? err->message : "");
    g_ptr_array_unref (args);
  }
  second = shard_path (store, 1);
  third = shard_path (store, 2);
  tmp = g_strconcat (third, ".tmp", NULL);
  /* no deadline: however slow the writer (a sanitizer build on a loaded
   * machine), it either gets to the third shard or ends by itself */
  while (!mid_shard && !writer_ended) {
    mid_shard = g_file_test (second, G_FILE_TEST_EXISTS)
        && g_file_test (tmp, G_FILE_TEST_EXISTS);
    writer_ended = !mid_shard && waitpid (pid, &status, WNOHANG) == pid;
    if (!mid_shard && !writer_ended)
      g_usleep (5000);
  }
  if (!writer_ended) {
    kill (pid, SIGKILL);
    fail_unless (waitpid (pid, &status, 0) == pid);
  }
  g_spawn_close_pid (pid);
  fail_unless (mid_shard, "the writer ended (wait status %d) before the "
      "third shard", status);
  fail_unless (WIFSIGNALED (status), "the writer ended before the kill");

  g_free (desc);
  desc = extract_pipeline (slides, store, "", "resume=true");
  error = run_to_end (desc);
  fail_unless (error == NULL, "%s", error);
  fail_if (g_file_test (tmp, G_FILE_TEST_EXISTS));
  assert_same_store (reference, store);

  g_strfreev (argv);
  g_free (launch);
  g_free (desc);
  g_free (second);
  g_free (third);
  g_free (tmp);
  remove_store (store);
  remove_store (reference);
  g_free (store);
  g_free (reference);
  g_free (slides);
}

GST_END_TEST;

/* The writer, NULL to PLAYING twice on one pipeline: resume=true adopts the
 * store it finished the first time (every patch skipped as already stored)
 * and writes the same manifest again. */
GST_START_TEST (test_sink_restarts)
{
  gchar *slides = make_slides ("restart-slides");
  gchar *store = g_build_filename (WSI_TEST_TMPDIR, "restart-store", NULL);
  gchar *desc, *manifest, *first = NULL, *second = NULL;
  GstElement *pipeline, *sink;
  guint round;

  remove_store (store);
  desc = extract_pipeline (slides, store, "", "name=store resume=true");
  pipeline = gst_parse_launch (desc, NULL);
  fail_unless (pipeline != NULL);
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "store");
  manifest = g_build_filename (store, "manifest.json", NULL);
  for (round = 0; round < 2; round++) {
    gchar **text = round == 0 ? &first : &second;

    gst_element_set_state (pipeline, GST_STATE_PLAYING);
    wsi_test_wait_eos (pipeline, 120 * GST_SECOND);
    fail_unless_equals_uint64 (wsi_test_get_u64 (sink, "patches-written"),
        round == 0 ? N_PATCHES : N_PATCHES % PER_SHARD);
    fail_unless_equals_uint64 (wsi_test_get_u64 (sink, "patches-resumed"),
        round == 0 ? 0 : N_PATCHES - N_PATCHES % PER_SHARD);
    fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    fail_unless (g_file_get_contents (manifest, text, NULL, NULL));
  }
  /* the short last shard is written again, the same: the same manifest
   * apart from nothing (no time in it) */
  fail_unless_equals_string (first, second);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (first);
  g_free (second);
  g_free (manifest);
  g_free (desc);
  remove_store (store);
  g_free (store);
  g_free (slides);
}

GST_END_TEST;

GST_START_TEST (test_state_changes_repeat)
{
  gchar *slides = make_slides ("state-slides");
  gchar *store = g_build_filename (WSI_TEST_TMPDIR, "state-store", NULL);
  gchar *desc;
  GstElement *pipeline;
  guint i;

  remove_store (store);
  extract (slides, store);
  desc = g_strdup_printf ("patchstoresrc location=\"%s\" epochs=0 ! "
      "fakesink sync=false", store);
  pipeline = gst_parse_launch (desc, NULL);
  fail_unless (pipeline != NULL);
  /* serving for ever: stopped from PLAYING, several times */
  for (i = 0; i < 3; i++) {
    fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
        GST_STATE_CHANGE_FAILURE);
    fail_unless_equals_int (gst_element_get_state (pipeline, NULL, NULL,
            10 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
    g_usleep (50000);
    fail_unless_equals_int (gst_element_set_state (pipeline,
            GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  }
  gst_object_unref (pipeline);
  g_free (desc);
  remove_store (store);
  g_free (store);
  g_free (slides);
}

GST_END_TEST;


/* ---- raw patches served from the mapping, without a copy ---------------- */

static GstPadProbeReturn
keep_buffers (GstPad * pad, GstPadProbeInfo * info, gpointer kept)
{
  g_ptr_array_add (kept, gst_buffer_ref (GST_PAD_PROBE_INFO_BUFFER (info)));
  return GST_PAD_PROBE_OK;
}

/* 64 px RGB rows are 192 bytes, the default stride: patchstoresrc pushes
 * read-only memory of the shard's mapping, the same bytes as written, and
 * the buffers stay readable after the store is closed. */
GST_START_TEST (test_raw_served_from_mapping)
{
  gchar *slides = make_slides ("map-slides");
  gchar *store = g_build_filename (WSI_TEST_TMPDIR, "map-store", NULL);
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=3 ! "
      "tissuemask ! queue ! patchsampler patch-size=64 patches-per-slide=7 ! "
      "patchinterleave ! patchreader threads=2 ! tee name=t ! queue ! "
      "patchstoresink location=\"%s\" patches-per-shard=4 t. ! queue ! "
      "appsink name=sink sync=false", slides, store);
  GPtrArray *kept = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  WsiRun *written;
  GstElement *pipeline, *src;
  GstPad *pad;
  guint i;

  remove_store (store);
  written = run_collecting (desc);
  fail_unless (written->error == NULL, "%s", written->error);
  fail_unless_equals_int (written->batches->len, 14);
  g_free (desc);
  desc = g_strdup_printf ("patchstoresrc name=src location=\"%s\" threads=2 "
      "! fakesink sync=false", store);
  pipeline = gst_parse_launch (desc, NULL);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  pad = gst_element_get_static_pad (src, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, keep_buffers, kept,
      NULL);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  wsi_test_wait_eos (pipeline, 60 * GST_SECOND);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pad);
  gst_object_unref (src);
  gst_object_unref (pipeline);
  /* the store is closed and its shards deleted: the buffers still hold
   * their mappings */
  remove_store (store);
  fail_unless_equals_int (kept->len, 14);
  for (i = 0; i < kept->len; i++) {
    GstBuffer *x = g_ptr_array_index (written->batches, i);
    GstBuffer *y = g_ptr_array_index (kept, i);
    GstMapInfo mx, my;

    fail_unless (GST_MEMORY_IS_READONLY (gst_buffer_peek_memory (y, 0)));
    fail_unless (gst_buffer_map (x, &mx, GST_MAP_READ));
    fail_unless (gst_buffer_map (y, &my, GST_MAP_READ));
    fail_unless_equals_uint64 (mx.size, my.size);
    fail_unless (memcmp (mx.data, my.data, mx.size) == 0,
        "patch %u differs", i);
    gst_buffer_unmap (x, &mx);
    gst_buffer_unmap (y, &my);
  }
  g_ptr_array_unref (kept);
  wsi_run_free (written);
  g_free (desc);
  g_free (store);
  g_free (slides);
}

GST_END_TEST;

/* A raw store served from its mapping into batches big enough (700 x 64
 * px RGB = 8.6 MB) that patchbatch copies with streaming stores
 * (wsibatchcopy.h): every slot of the batch is the stored patch, at 1, 2
 * and 4 threads (patches served from the mapping are queued already made:
 * wsi_ordered_pool_queue_done). */
GST_START_TEST (test_raw_into_big_batches)
{
  gchar *slides = make_slides ("big-slides");
  gchar *store = g_build_filename (WSI_TEST_TMPDIR, "big-store", NULL);
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=3 ! "
      "tissuemask ! queue ! patchsampler patch-size=64 patches-per-slide=7 ! "
      "patchinterleave ! patchreader threads=2 ! tee name=t ! queue ! "
      "patchstoresink location=\"%s\" patches-per-shard=4 t. ! queue ! "
      "appsink name=sink sync=false", slides, store);
  const gsize patch_bytes = 64 * 64 * 3;
  WsiRun *written, *served;
  guint i, t;

  remove_store (store);
  written = run_collecting (desc);
  fail_unless (written->error == NULL, "%s", written->error);
  fail_unless_equals_int (written->batches->len, 14);
  g_free (desc);
  for (t = 1; t <= 4; t *= 2) {
    GstBuffer *batch;
    GstMapInfo mb;

    desc = g_strdup_printf ("patchstoresrc location=\"%s\" threads=%u ! "
        "queue ! patchbatch batch-size=700 ! appsink name=sink sync=false",
        store, t);
    served = wsi_run_pipeline (desc, 0);
    fail_unless (served->error == NULL, "%s", served->error);
    fail_unless_equals_int (served->batches->len, 1);
    fail_unless_equals_int (served->records->len, 14);
    batch = g_ptr_array_index (served->batches, 0);
    fail_unless (gst_buffer_map (batch, &mb, GST_MAP_READ));
    fail_unless (mb.size >= 14 * patch_bytes);
    for (i = 0; i < 14; i++) {
      GstBuffer *x = g_ptr_array_index (written->batches, i);
      GstMapInfo mx;

      fail_unless (gst_buffer_map (x, &mx, GST_MAP_READ));
      fail_unless_equals_uint64 (mx.size, patch_bytes);
      fail_unless (memcmp (mb.data + i * patch_bytes, mx.data,
              patch_bytes) == 0, "threads=%u: slot %u differs", t, i);
      gst_buffer_unmap (x, &mx);
    }
    gst_buffer_unmap (batch, &mb);
    wsi_run_free (served);
    g_free (desc);
  }
  wsi_run_free (written);
  remove_store (store);
  g_free (store);
  g_free (slides);
}

GST_END_TEST;

/* ---- crops from a jpeg store: patchviews decodes only what they need ---- */

#define VIEWS_PATCH 256

/* Runs @description (an appsink "sink", a patchviews "views") to EOS;
 * *@decoded gets the views' jpeg-pixels-decoded and *@caps_name the media
 * type patchviews' sink pad negotiated. */
static WsiRun *
run_views (const gchar * description, guint64 * decoded, gchar ** caps_name)
{
  WsiRun *run = g_new0 (WsiRun, 1);
  GstAppSinkCallbacks callbacks = { NULL, NULL, collect_sample, };
  GstElement *pipeline = gst_parse_launch (description, NULL);
  GstElement *sink, *views;
  GstPad *pad;
  GstCaps *caps;
  GstBus *bus;

  fail_unless (pipeline != NULL, "cannot parse '%s'", description);
  run->batches = g_ptr_array_new_with_free_func (
      (GDestroyNotify) gst_buffer_unref);
  run->records = g_array_new (FALSE, FALSE, sizeof (WsiPatchRecord));
  run->paths = g_ptr_array_new_with_free_func (g_free);
  run->labels = g_ptr_array_new_with_free_func (g_free);
  run->warnings = g_ptr_array_new_with_free_func (g_free);
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  views = gst_bin_get_by_name (GST_BIN (pipeline), "views");
  gst_app_sink_set_callbacks (GST_APP_SINK (sink), &callbacks, run, NULL);
  bus = gst_element_get_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  wsi_test_wait_eos (pipeline, 120 * GST_SECOND);
  wsi_run_poll_bus (run, bus);
  g_object_get (views, "jpeg-pixels-decoded", decoded, NULL);
  pad = gst_element_get_static_pad (views, "sink");
  caps = gst_pad_get_current_caps (pad);
  fail_unless (caps != NULL);
  *caps_name = g_strdup (gst_structure_get_name (gst_caps_get_structure
          (caps, 0)));
  gst_caps_unref (caps);
  gst_object_unref (pad);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (views);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return run;
}

/* PSNR (dB) of view @v of location @i, @b against @a (tight rows). */
static gdouble
view_psnr (WsiRun * a, WsiRun * b, guint i, guint v)
{
  GstMemory *x = gst_buffer_peek_memory (g_ptr_array_index (a->batches, i),
      v);
  GstMemory *y = gst_buffer_peek_memory (g_ptr_array_index (b->batches, i),
      v);
  GstMapInfo mx, my;
  gdouble se = 0;
  gsize k;

  fail_unless (gst_memory_map (x, &mx, GST_MAP_READ));
  fail_unless (gst_memory_map (y, &my, GST_MAP_READ));
  fail_unless_equals_uint64 (mx.size, my.size);
  for (k = 0; k < mx.size; k++) {
    gdouble d = (gdouble) mx.data[k] - my.data[k];

    se += d * d;
  }
  se /= mx.size;
  gst_memory_unmap (x, &mx);
  gst_memory_unmap (y, &my);
  return se == 0 ? 99.0 : 10 * log10 (255.0 * 255.0 / se);
}

/* Views @views of @store made from its JPEGs by patchviews (partial, DCT
 * scaled decodes; a capsfilter asks for image/jpeg, which patchviews
 * prefers only where it can save work) and from patchstoresrc's decoded
 * pixels (a capsfilter asks for video/x-raw): every view identical when
 * @exact, else at least 40 dB; returns the ratio of pixels decoded to
 * whole patches. */
static gdouble
compare_view_paths (const gchar * store, const gchar * views,
    gboolean exact)
{
  gchar *from_jpeg = g_strdup_printf ("patchstoresrc location=\"%s\" "
      "threads=2 ! image/jpeg ! patchviews name=views threads=2 seed=5 %s ! "
      "appsink name=sink sync=false", store, views);
  gchar *from_pixels = g_strdup_printf ("patchstoresrc location=\"%s\" "
      "threads=2 ! video/x-raw ! patchviews name=views threads=2 seed=5 %s ! "
      "appsink name=sink sync=false", store, views);
  guint64 decoded_jpeg, decoded_pixels;
  gchar *caps_jpeg, *caps_pixels;
  WsiRun *a = run_views (from_pixels, &decoded_pixels, &caps_pixels);
  WsiRun *b = run_views (from_jpeg, &decoded_jpeg, &caps_jpeg);
  gdouble worst = 99.0;
  guint i, v, n_views;

  fail_unless (a->error == NULL && b->error == NULL, "%s / %s",
      GST_STR_NULL (a->error), GST_STR_NULL (b->error));
  fail_unless_equals_string (caps_pixels, "video/x-raw");
  fail_unless_equals_string (caps_jpeg, "image/jpeg");
  fail_unless_equals_uint64 (decoded_pixels, 0);
  fail_unless (decoded_jpeg > 0);
  fail_unless (a->batches->len > 0);
  fail_unless_equals_int (a->batches->len, b->batches->len);
  for (i = 0; i < a->batches->len; i++) {
    WsiPatchRecord ra = *WSI_RECORD (a, i), rb = *WSI_RECORD (b, i);

    fail_unless (memcmp (&ra, &rb, sizeof (ra)) == 0);
    n_views = gst_buffer_n_memory (g_ptr_array_index (a->batches, i));
    fail_unless_equals_int (n_views,
        gst_buffer_n_memory (g_ptr_array_index (b->batches, i)));
    for (v = 0; v < n_views; v++) {
      gdouble db = view_psnr (a, b, i, v);

      if (exact)
        fail_unless (db == 99.0, "%s: view %u of location %u differs "
            "(%.1f dB)", views, v, i, db);
      fail_unless (db >= 40.0, "%s: view %u of location %u at %.1f dB",
          views, v, i, db);
      worst = MIN (worst, db);
    }
  }
  g_print ("patchstore: views %s from JPEG: worst view %.1f dB, %.2f whole "
      "patches decoded per location\n", views, worst, (gdouble) decoded_jpeg
      / (VIEWS_PATCH * VIEWS_PATCH) / a->batches->len);
  decoded_pixels = decoded_jpeg / a->batches->len;
  wsi_run_free (a);
  wsi_run_free (b);
  g_free (caps_jpeg);
  g_free (caps_pixels);
  g_free (from_jpeg);
  g_free (from_pixels);
  return (gdouble) decoded_pixels / (VIEWS_PATCH * VIEWS_PATCH);
}

GST_START_TEST (test_views_from_jpeg_store)
{
  gchar *slides = make_slides ("views-slides");
  const gchar *sampling[] = { "444", "420" };
  guint k;

  for (k = 0; k < G_N_ELEMENTS (sampling); k++) {
    gchar *store = g_strdup_printf ("%s/views-jpeg%s", WSI_TEST_TMPDIR,
        sampling[k]);
    gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=3 ! "
        "tissuemask ! queue ! patchsampler patch-size=%d patches-per-slide=5 "
        "! patchinterleave ! patchreader threads=2 ! patchstoresink "
        "location=\"%s\" encoding=jpeg quality=95 chroma-subsampling=%s",
        slides, VIEWS_PATCH, store, sampling[k]);
    gchar *error;

    remove_store (store);
    error = run_to_end (desc);
    fail_unless (error == NULL, "%s", error);
    /* small crops at full scale: each decodes its region only, and the
     * views are those of a whole decode then a crop, byte for byte */
    fail_unless (compare_view_paths (store, "views=small:3:40:0.02:0.06 "
            "dct-scaling=false", TRUE) < 0.9);
    /* the patch itself among the views: one whole decode, same bytes */
    fail_unless (compare_view_paths (store, "views=target:patch,"
            "crop:2:64:0.3:1.0 dct-scaling=false", TRUE) >= 1.0);
    /* bilinear crops reduced >= 2x: still at full scale, exact */
    compare_view_paths (store, "views=big:2:48:0.5:1.0,small:4:24:0.04:0.1",
        TRUE);
    /* area crops reduced >= 2x: decoded at 1/2 scale (a quarter of the
     * pixels), close to a whole decode then a crop */
    fail_unless (compare_view_paths (store, "views=big:2:48:0.5:1.0 "
            "interpolation=area", FALSE) <= 0.5);
    /* DINOv2's crops: whole decodes at full scale, same bytes */
    fail_unless (compare_view_paths (store, "preset=dinov2", TRUE) >= 1.0);
    remove_store (store);
    g_free (store);
    g_free (desc);
  }
  g_free (slides);
}

GST_END_TEST;

/* Views @views of @store, as negotiated by default, byte-identical with
 * 1 and with 4 threads in patchstoresrc and patchviews. */
static void
assert_views_same_at_threads (const gchar * store, const gchar * views)
{
  gchar *one = g_strdup_printf ("patchstoresrc location=\"%s\" threads=1 ! "
      "patchviews name=views threads=1 seed=5 %s ! appsink name=sink "
      "sync=false", store, views);
  gchar *four = g_strdup_printf ("patchstoresrc location=\"%s\" threads=4 ! "
      "queue ! patchviews name=views threads=4 seed=5 %s ! appsink name=sink "
      "sync=false", store, views);
  guint64 decoded_one, decoded_four;
  gchar *caps_one, *caps_four;
  WsiRun *a = run_views (one, &decoded_one, &caps_one);
  WsiRun *b = run_views (four, &decoded_four, &caps_four);
  guint i, v;

  fail_unless (a->error == NULL && b->error == NULL);
  fail_unless_equals_string (caps_one, caps_four);
  fail_unless (a->batches->len > 0);
  fail_unless_equals_int (a->batches->len, b->batches->len);
  for (i = 0; i < a->batches->len; i++) {
    guint n = gst_buffer_n_memory (g_ptr_array_index (a->batches, i));

    fail_unless_equals_int (n,
        gst_buffer_n_memory (g_ptr_array_index (b->batches, i)));
    for (v = 0; v < n; v++)
      fail_unless (view_psnr (a, b, i, v) == 99.0, "%s: view %u of location "
          "%u differs between 1 and 4 threads", views, v, i);
  }
  wsi_run_free (a);
  wsi_run_free (b);
  g_free (caps_one);
  g_free (caps_four);
  g_free (one);
  g_free (four);
}

/* Who decodes by default: patchviews takes the JPEGs (image/jpeg) where
 * decoding them beside the crops can save work (small crops, region
 * decodes; area crops, DCT scaling), and pixels decoded by patchstoresrc
 * on its own threads where every location would be one whole decode at
 * full scale anyway (DINOv2's crops; the patch itself among the views). */
GST_START_TEST (test_views_default_decoder)
{
  gchar *slides = make_slides ("default-slides");
  gchar *store = g_strdup_printf ("%s/default-jpeg", WSI_TEST_TMPDIR);
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=3 ! "
      "tissuemask ! queue ! patchsampler patch-size=%d patches-per-slide=3 "
      "! patchinterleave ! patchreader threads=2 ! patchstoresink "
      "location=\"%s\" encoding=jpeg quality=90", slides, VIEWS_PATCH, store);
  static const struct
  {
    const gchar *views;
    const gchar *caps;
  } cases[] = {
    {"preset=dinov2", "video/x-raw"},
    {"views=target:patch,crop:2:64:0.3:1.0", "video/x-raw"},
    {"views=big:2:48:0.5:1.0,small:4:24:0.04:0.1", "video/x-raw"},
    {"views=small:3:40:0.02:0.06", "image/jpeg"},
    {"views=big:2:48:0.5:1.0 interpolation=area", "image/jpeg"},
  };
  gchar *error;
  guint k;

  remove_store (store);
  error = run_to_end (desc);
  fail_unless (error == NULL, "%s", error);
  for (k = 0; k < G_N_ELEMENTS (cases); k++) {
    gchar *views = g_strdup_printf ("patchstoresrc location=\"%s\" "
        "threads=2 ! queue ! patchviews name=views threads=2 seed=5 %s ! "
        "appsink name=sink sync=false", store, cases[k].views);
    guint64 decoded;
    gchar *caps;
    WsiRun *run = run_views (views, &decoded, &caps);

    fail_unless (run->error == NULL, "%s", GST_STR_NULL (run->error));
    fail_unless (run->batches->len > 0);
    fail_unless_equals_string (caps, cases[k].caps);
    if (g_str_equal (cases[k].caps, "video/x-raw")) {
      fail_unless_equals_uint64 (decoded, 0);
    } else {
      fail_unless (decoded > 0, "%s", cases[k].views);
    }
    wsi_run_free (run);
    g_free (caps);
    g_free (views);
  }
  assert_views_same_at_threads (store, "preset=dinov2");
  remove_store (store);
  g_free (store);
  g_free (desc);
  g_free (slides);
}

GST_END_TEST;

/* ---- multi-view locations (patchviews) stored and served back ---------- */

/* Location @i of @a and @b: same record, view names, view records and (when
 * @exact) view bytes; else every view at least @min_db. */
static void
assert_same_location (WsiRun * a, WsiRun * b, guint i, gboolean exact,
    gdouble min_db)
{
  GstBuffer *x = g_ptr_array_index (a->batches, i);
  GstBuffer *y = g_ptr_array_index (b->batches, i);
  GstStructure *mx = wsi_patch_meta_get (x), *my = wsi_patch_meta_get (y);
  WsiPatchRecord ra = *WSI_RECORD (a, i), rb = *WSI_RECORD (b, i);
  const gchar *const *nx = wsi_structure_get_strv (mx, "view-names");
  const gchar *const *ny = wsi_structure_get_strv (my, "view-names");
  GBytes *vx = g_value_get_boxed (gst_structure_get_value (mx, "views"));
  GBytes *vy = g_value_get_boxed (gst_structure_get_value (my, "views"));
  guint v, n = gst_buffer_n_memory (x);

  fail_unless (memcmp (&ra, &rb, sizeof (ra)) == 0, "record %u", i);
  fail_unless (nx != NULL && ny != NULL);
  fail_unless (g_strv_equal ((const gchar **) nx, (const gchar **) ny));
  fail_unless (g_bytes_equal (vx, vy), "view records of location %u", i);
  fail_unless_equals_int (n, gst_buffer_n_memory (y));
  fail_unless_equals_int (n, g_strv_length ((gchar **) nx));
  for (v = 0; v < n; v++) {
    gdouble db = view_psnr (a, b, i, v);

    if (exact)
      fail_unless (db == 99.0, "view %u of location %u differs", v, i);
    fail_unless (db >= min_db, "view %u of location %u at %.1f dB", v, i,
        db);
  }
}

GST_START_TEST (test_views_round_trip)
{
  gchar *slides = make_slides ("mv-slides");
  const gchar *encodings[] = { "encoding=raw", "encoding=jpeg quality=95" };
  guint k, i;

  for (k = 0; k < G_N_ELEMENTS (encodings); k++) {
    gchar *store = g_strdup_printf ("%s/mv-store%u", WSI_TEST_TMPDIR, k);
    gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=3 ! "
        "tissuemask ! queue ! patchsampler patch-size=%d patches-per-slide=%d "
        "! patchinterleave ! patchreader threads=2 ! patchviews seed=4 "
        "threads=2 views=target:patch,crop:2:24:0.3:1.0 ! tee name=t ! queue "
        "! patchstoresink location=\"%s\" patches-per-shard=%d %s t. ! queue "
        "! appsink name=sink sync=false", slides, PATCH, PATCHES_PER_SLIDE,
        store, PER_SHARD, encodings[k]);
    gchar *served_desc = g_strdup_printf ("patchstoresrc location=\"%s\" "
        "threads=3 ! appsink name=sink sync=false", store);
    gchar *batched = g_strdup_printf ("patchstoresrc location=\"%s\" ! "
        "patchbatch batch-size=4 ! fakesink sync=false", store);
    WsiRun *written, *served;
    gchar *error;
    GstStructure *caps;
    gint n_views = 0;

    remove_store (store);
    written = run_collecting (desc);
    fail_unless (written->error == NULL, "%s", written->error);
    fail_unless_equals_int (written->batches->len, N_PATCHES);
    served = run_collecting (served_desc);
    fail_unless (served->error == NULL, "%s", served->error);
    fail_unless_equals_int (served->batches->len, N_PATCHES);
    caps = gst_caps_get_structure (served->last_caps, 0);
    fail_unless (gst_structure_has_name (caps, WSI_VIEWS_MEDIA_TYPE));
    fail_unless (gst_structure_get_int (caps, "n-views", &n_views));
    fail_unless_equals_int (n_views, 3);
    for (i = 0; i < N_PATCHES; i++)
      assert_same_location (written, served, i, k == 0, 30.0);
    /* patchbatch takes them as it takes patchviews' */
    error = run_to_end (batched);
    fail_unless (error == NULL, "%s", error);
    wsi_run_free (written);
    wsi_run_free (served);
    remove_store (store);
    g_free (store);
    g_free (desc);
    g_free (served_desc);
    g_free (batched);
  }
  g_free (slides);
}

GST_END_TEST;

/* The slide's level-0 mpp travels through the store (WsiStoreEntry
 * slide_mpp) exactly as the patch meta gave it, not worked back from the
 * record: at target-mpp=0.3 on 0.25 um/px slides the footprint is rounded
 * (74 level-0 px for 62 px) and out_mpp is a float, so
 * out_mpp x out_size / footprint misses 0.25. */
GST_START_TEST (test_slide_mpp_round_trip)
{
  gchar *slides = make_slides ("mpp-slides");
  gchar *store = g_build_filename (WSI_TEST_TMPDIR, "mpp-store", NULL);
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=3 ! "
      "tissuemask ! queue ! patchsampler patch-size=%d patches-per-slide=4 "
      "target-mpp=0.3 ! patchinterleave ! patchreader threads=2 ! "
      "patchstoresink location=\"%s\"", slides, PATCH, store);
  gchar *error;
  WsiRun *served;
  guint i, worked_back_differs = 0;

  remove_store (store);
  error = run_to_end (desc);
  fail_unless (error == NULL, "%s", error);
  served = serve (store, "");
  fail_unless (served->error == NULL, "%s", served->error);
  fail_unless_equals_int (served->records->len, 4 * N_SLIDES);
  for (i = 0; i < served->records->len; i++) {
    const WsiPatchRecord *r = &g_array_index (served->records,
        WsiPatchRecord, i);
    GstStructure *meta = wsi_patch_meta_get (g_ptr_array_index
        (served->batches, i));

    gdouble mpp = wsi_patch_meta_mpp (meta, 0);

    /* exactly: fail_unless_equals_float would let a float rounding pass */
    fail_unless (mpp == 0.25, "patch %u: mpp %.17g, not 0.25", i, mpp);
    worked_back_differs += r->out_mpp * (gdouble) r->out_size / r->footprint
        != 0.25;
  }
  fail_unless (worked_back_differs > 0, "the case does not tell the two "
      "apart");
  wsi_run_free (served);
  remove_store (store);
  g_free (store);
  g_free (desc);
  g_free (slides);
}

GST_END_TEST;

static Suite *
patchstore_suite (void)
{
  Suite *s = suite_create ("patchstore");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_raw_round_trip);
  tcase_add_test (tc, test_jpeg_and_yuv420);
  tcase_add_test (tc, test_shuffle_epochs_threads);
  tcase_add_test (tc, test_ranks_disjoint_equal);
  tcase_add_test (tc, test_damaged_shards_skipped);
  tcase_add_test (tc, test_incomplete_and_version);
  tcase_add_test (tc, test_disk_full_then_resume);
  tcase_add_test (tc, test_kill_then_resume);
  tcase_add_test (tc, test_state_changes_repeat);
  tcase_add_test (tc, test_sink_restarts);
  tcase_add_test (tc, test_views_from_jpeg_store);
  tcase_add_test (tc, test_views_default_decoder);
  tcase_add_test (tc, test_raw_served_from_mapping);
  tcase_add_test (tc, test_raw_into_big_batches);
  tcase_add_test (tc, test_views_round_trip);
  tcase_add_test (tc, test_slide_mpp_round_trip);
  return s;
}

GST_CHECK_MAIN (patchstore);
