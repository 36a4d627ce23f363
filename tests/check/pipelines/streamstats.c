/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* patchbatch stats-interval: the "wsi-stream-stats" bus message against
 * what the appsink received (patches, tissue fraction mean, mpp histogram,
 * per-label counts) and against the upstream elements' counters, on slides
 * generated at test time (good, blank and garbage files, a labelled list). */

#include "wsitestslide.h"
#include "wsitestutil.h"

#include <gst/app/gstappsink.h>
#include <gst/wsi/wsirecord.h>
#include <math.h>
#include <string.h>

#define PATCH 32
#define BATCH 4
#define PER_SLIDE 8
#define N_GOOD 4

static const gchar *labels[N_GOOD] = { "tumor", "normal", "tumor", "" };

static gchar *
make_collection (void)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "streamstats");
  GString *list = g_string_new (NULL);
  WsiTestSlideSpec spec;
  gchar *path, *list_path;
  guint i;

  wsi_test_slide_spec_init (&spec);
  spec.width = 1536;
  spec.height = 1024;
  spec.mpp = 0.25;
  for (i = 0; i < N_GOOD; i++) {
    gchar name[32];

    spec.seed = 10 + i;
    g_snprintf (name, sizeof (name), "good%u.tiff", i);
    path = wsi_test_write_slide (dir, name, &spec);
    g_string_append_printf (list, "%s%s%s\n", name, *labels[i] ? "\t" : "",
        labels[i]);
    g_free (path);
  }
  spec.tissue_blobs = 0;        /* glass only: rejected, blank */
  g_free (wsi_test_write_slide (dir, "blank.tiff", &spec));
  g_string_append (list, "blank.tiff\tnormal\n");
  g_free (wsi_test_write_garbage (dir, "broken.tiff", 4096, 3));
  g_string_append (list, "broken.tiff\ttumor\n");

  list_path = g_build_filename (dir, "slides.txt", NULL);
  fail_unless (g_file_set_contents (list_path, list->str, -1, NULL));
  g_string_free (list, TRUE);
  g_free (dir);
  return list_path;
}

/* A CSV manifest of the good slides with two columns. */
static gchar *
make_manifest (void)
{
  gchar *list = make_collection ();     /* writes the slides */
  gchar *dir = g_path_get_dirname (list);
  gchar *path = g_build_filename (dir, "manifest.csv", NULL);
  GString *csv = g_string_new ("path,patient,site\n");
  guint i;

  for (i = 0; i < N_GOOD; i++)
    g_string_append_printf (csv, "good%u.tiff,P%u,%s\n", i, i / 2,
        i == 3 ? "" : "TCGA-A");
  fail_unless (g_file_set_contents (path, csv->str, -1, NULL));
  g_string_free (csv, TRUE);
  g_free (dir);
  g_free (list);
  return path;
}

static GstElement *
make_pipeline (const gchar * list, gboolean cycle, guint interval,
    gboolean queues)
{
  const gchar *q = queues ?
      "queue max-size-buffers=64 max-size-bytes=0 max-size-time=0 ! " : "";
  gchar *desc = g_strdup_printf ("wsislidesrc name=src location=\"%s\" "
      "cycle=%s ! tissuemask ! %spatchsampler patch-size=%d target-mpp=0.5 "
      "patches-per-slide=%d ! patchinterleave pool-size=2 ! "
      "patchreader name=reader threads=2 ! %spatchbatch name=batch "
      "batch-size=%d stats-interval=%u ! appsink name=sink sync=false "
      "max-buffers=4", list, cycle ? "true" : "false", q, PATCH, PER_SLIDE,
      q, BATCH, interval);
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &err);

  fail_unless (pipeline != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "");
  g_free (desc);
  return pipeline;
}

/* What the appsink received. */
typedef struct
{
  guint64 patches, batches;
  gdouble tissue_sum;
  GHashTable *labels;           /* label -> count (GUINT_TO_POINTER) */
  gfloat mpp_min, mpp_max;
} Delivered;

static void
delivered_init (Delivered * d)
{
  memset (d, 0, sizeof (*d));
  d->labels = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  d->mpp_min = G_MAXFLOAT;
}

static void
count_sample (Delivered * d, GstSample * sample)
{
  GstStructure *meta = wsi_patch_meta_get (gst_sample_get_buffer (sample));
  const WsiPatchRecord *records;
  guint n, i;

  fail_unless (meta != NULL);
  records = wsi_patch_meta_records (meta, &n);
  for (i = 0; i < n; i++) {
    const gchar *label = wsi_patch_meta_string (meta, "labels", i);
    const gchar *key = label && *label ? label : "(none)";

    d->tissue_sum += records[i].tissue_fraction;
    d->mpp_min = MIN (d->mpp_min, records[i].out_mpp);
    d->mpp_max = MAX (d->mpp_max, records[i].out_mpp);
    g_hash_table_insert (d->labels, g_strdup (key),
        GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (d->labels,
                    key)) + 1));
  }
  d->patches += n;
  d->batches++;
}

/* Pops every queued wsi-stream-stats message; returns the last (or NULL)
 * and their number in @count. */
static GstStructure *
last_stats (GstBus * bus, guint * count)
{
  GstStructure *last = NULL;
  GstMessage *msg;

  *count = 0;
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT)) != NULL) {
    const GstStructure *s = gst_message_get_structure (msg);

    if (s && gst_structure_has_name (s, "wsi-stream-stats")) {
      if (last)
        gst_structure_free (last);
      last = gst_structure_copy (s);
      (*count)++;
    }
    gst_message_unref (msg);
  }
  return last;
}

static guint64
u64 (const GstStructure * s, const gchar * field)
{
  guint64 v = 0;

  fail_unless (gst_structure_get_uint64 (s, field, &v), "no %s in %"
      GST_PTR_FORMAT, field, s);
  return v;
}

static guint64
array_u64 (const GstStructure * s, const gchar * field, guint i)
{
  const GValue *array = gst_structure_get_value (s, field);

  fail_unless (array != NULL && i < gst_value_array_get_size (array));
  return g_value_get_uint64 (gst_value_array_get_value (array, i));
}

static gdouble
array_double (const GstStructure * s, const gchar * field, guint i)
{
  const GValue *array = gst_structure_get_value (s, field);

  fail_unless (array != NULL && i < gst_value_array_get_size (array));
  return g_value_get_double (gst_value_array_get_value (array, i));
}

/* Plays @pipeline to EOS, counting what the sink receives. */
static void
play_to_eos (GstElement * pipeline, Delivered * d)
{
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstSample *sample;

  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
              60 * GST_SECOND)) != NULL) {
    count_sample (d, sample);
    gst_sample_unref (sample);
  }
  fail_unless (gst_app_sink_is_eos (GST_APP_SINK (sink)), "no EOS in 60 s");
  gst_object_unref (sink);
}

static void
check_histogram (const GstStructure * s, const Delivered * d)
{
  const GValue *edges = gst_structure_get_value (s, "mpp-bin-edges");
  guint n_bins = gst_value_array_get_size (gst_structure_get_value (s,
          "mpp-counts"));
  guint64 total = 0;
  guint i;

  fail_unless_equals_int (gst_value_array_get_size (edges), n_bins + 1);
  fail_unless (d->mpp_min > 0.45f && d->mpp_max < 0.55f);
  for (i = 0; i < n_bins; i++) {
    guint64 c = array_u64 (s, "mpp-counts", i);
    gboolean holds_half = array_double (s, "mpp-bin-edges", i) <= 0.5 &&
        0.5 < array_double (s, "mpp-bin-edges", i + 1);

    fail_unless (array_double (s, "mpp-bin-edges", i) <
        array_double (s, "mpp-bin-edges", i + 1));
    /* every patch was read at 0.5 um/px: one bin holds them all */
    fail_unless_equals_uint64 (c, holds_half ? d->patches : 0);
    total += c;
  }
  fail_unless_equals_uint64 (total + u64 (s, "mpp-unknown"), d->patches);
}

static void
check_labels (const GstStructure * s, const Delivered * d)
{
  const GValue *names = gst_structure_get_value (s, "label-names");
  guint i;

  fail_unless (names != NULL && GST_VALUE_HOLDS_ARRAY (names));
  fail_unless_equals_int (gst_value_array_get_size (names),
      g_hash_table_size (d->labels));
  for (i = 0; i < gst_value_array_get_size (names); i++) {
    const gchar *name =
        g_value_get_string (gst_value_array_get_value (names, i));

    fail_unless_equals_uint64 (array_u64 (s, "label-counts", i),
        GPOINTER_TO_UINT (g_hash_table_lookup (d->labels, name)));
  }
  fail_unless (g_hash_table_contains (d->labels, "tumor"));
  fail_unless (g_hash_table_contains (d->labels, "(none)"));
}

/* The message's upstream counters equal the elements' own properties. */
static void
check_counters (const GstStructure * s, GstElement * pipeline)
{
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  GstElement *reader = gst_bin_get_by_name (GST_BIN (pipeline), "reader");
  const gchar *src_counters[] = { "slides-opened", "slides-rejected",
    "slides-blank"
  };
  guint failed, damaged, i;

  g_object_get (src, "slides-failed", &failed, NULL);
  fail_unless_equals_int (failed, 1);   /* broken.tiff */
  fail_unless_equals_uint64 (u64 (s, "slides-failed"), failed);
  fail_unless_equals_uint64 (u64 (s, "patches-read"),
      wsi_test_get_u64 (reader, "patches-read"));
  fail_unless_equals_uint64 (u64 (s, "patches-dropped"),
      wsi_test_get_u64 (reader, "patches-failed") +
      wsi_test_get_u64 (reader, "patches-skipped"));
  fail_unless_equals_uint64 (u64 (s, "patches-dropped"), 0);
  fail_unless (u64 (s, "patches-planned") >= u64 (s, "patches-read"));
  fail_if (gst_structure_has_field (s, "patches-rejected"));    /* no filter */
  /* every slide here is intact or unreadable, none damaged: still told */
  g_object_get (src, "slides-damaged", &damaged, NULL);
  fail_unless_equals_uint64 (u64 (s, "slides-damaged"), damaged);
  fail_unless_equals_uint64 (u64 (s, "slides-damaged"), 0);
  /* wsislidesrc's visit counters, when this wsislidesrc has them */
  for (i = 0; i < G_N_ELEMENTS (src_counters); i++) {
    guint v;

    if (!g_object_class_find_property (G_OBJECT_GET_CLASS (src),
            src_counters[i]))
      continue;
    g_object_get (src, src_counters[i], &v, NULL);
    fail_unless_equals_uint64 (u64 (s, src_counters[i]), v);
    fail_unless (v >= 1, "%s is 0", src_counters[i]);  /* blank.tiff */
  }
  gst_object_unref (src);
  gst_object_unref (reader);
}

GST_START_TEST (test_final_stats_match_delivery)
{
  gchar *list = make_collection ();
  GstElement *pipeline = make_pipeline (list, FALSE, 3600 * 1000, TRUE);
  GstBus *bus = gst_element_get_bus (pipeline);
  guint64 first_patches = 0;
  guint run;

  /* twice: NULL -> PLAYING again starts counting again */
  for (run = 0; run < 2; run++) {
    Delivered d;
    GstStructure *s;
    guint n_messages;

    delivered_init (&d);
    play_to_eos (pipeline, &d);
    s = last_stats (bus, &n_messages);
    fail_unless (s != NULL, "no wsi-stream-stats message at EOS");
    fail_unless_equals_int (n_messages, 1);     /* interval 1 h: EOS only */
    fail_unless (d.patches > 0 && d.patches % BATCH == 0);
    fail_unless_equals_uint64 (u64 (s, "patches"), d.patches);
    fail_unless_equals_uint64 (u64 (s, "batches"), d.batches);
    {
      gdouble mean = 0;

      fail_unless (gst_structure_get_double (s, "tissue-fraction-mean",
              &mean));
      fail_unless (fabs (mean - d.tissue_sum / d.patches) < 1e-6,
          "mean %f vs %f", mean, d.tissue_sum / d.patches);
      fail_unless (mean > 0.0 && mean <= 1.0);
    }
    check_histogram (s, &d);
    check_labels (s, &d);
    check_counters (s, pipeline);
    if (run == 0)
      first_patches = d.patches;
    else
      fail_unless_equals_uint64 (d.patches, first_patches);
    gst_structure_free (s);
    g_hash_table_unref (d.labels);
    fail_unless (gst_element_set_state (pipeline, GST_STATE_NULL) ==
        GST_STATE_CHANGE_SUCCESS);
  }
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  g_free (list);
}

GST_END_TEST;

/* Per-column counts equal the column values the batches carried. */
GST_START_TEST (test_column_counts)
{
  gchar *manifest = make_manifest ();
  GstElement *pipeline = make_pipeline (manifest, FALSE, 3600 * 1000, TRUE);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstBus *bus = gst_element_get_bus (pipeline);
  GHashTable *seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      NULL);
  const GValue *columns;
  GstStructure *s;
  GstSample *sample;
  guint64 patches = 0;
  guint n, c, checked = 0;

  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
              60 * GST_SECOND)) != NULL) {
    GstStructure *meta = wsi_patch_meta_get (gst_sample_get_buffer (sample));
    guint i, count = 0;

    wsi_patch_meta_records (meta, &count);
    for (i = 0; i < count; i++) {
      const gchar *names[] = { "patient", "site" };
      guint k;

      for (k = 0; k < 2; k++) {
        const gchar *v = wsi_meta_column (meta, names[k], i);
        gchar *key;

        fail_unless (v != NULL, "patch %u has no %s column", i, names[k]);
        key = g_strdup_printf ("%s=%s", names[k], v);
        g_hash_table_insert (seen, key, GUINT_TO_POINTER
            (GPOINTER_TO_UINT (g_hash_table_lookup (seen, key)) + 1));
      }
    }
    patches += count;
    gst_sample_unref (sample);
  }
  fail_unless (patches > 0);
  s = last_stats (bus, &n);
  fail_unless (s != NULL);
  columns = gst_structure_get_value (s, "columns");
  fail_unless_equals_int (gst_value_array_get_size (columns), 2);
  for (c = 0; c < 2; c++) {
    const GstStructure *column =
        gst_value_get_structure (gst_value_array_get_value (columns, c));
    const GValue *values = gst_structure_get_value (column, "values");
    const gchar *name = gst_structure_get_string (column, "name");
    guint i;

    fail_unless_equals_string (name, c == 0 ? "patient" : "site");
    for (i = 0; i < gst_value_array_get_size (values); i++) {
      gchar *key = g_strdup_printf ("%s=%s", name,
          g_value_get_string (gst_value_array_get_value (values, i)));

      fail_unless_equals_uint64 (array_u64 (column, "counts", i),
          GPOINTER_TO_UINT (g_hash_table_lookup (seen, key)));
      g_free (key);
      checked++;
    }
  }
  /* patient P0, P1; site TCGA-A and "" (slide 3) */
  fail_unless_equals_int (checked, g_hash_table_size (seen));
  fail_unless_equals_int (checked, 4);
  gst_structure_free (s);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  g_hash_table_unref (seen);
  gst_object_unref (sink);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  g_free (manifest);
}

GST_END_TEST;

GST_START_TEST (test_periodic_messages)
{
  gchar *list = make_collection ();
  GstElement *pipeline = make_pipeline (list, TRUE, 20, TRUE);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstBus *bus = gst_element_get_bus (pipeline);
  guint64 delivered = 0, last_patches = 0;
  guint messages = 0, i;

  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  for (i = 0; i < 30; i++) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        60 * GST_SECOND);
    GstStructure *s;
    guint n;

    fail_unless (sample != NULL);
    delivered += BATCH;
    gst_sample_unref (sample);
    g_usleep (10000);           /* 30 x 10 ms: more than 20 ms intervals */
    s = last_stats (bus, &n);
    if (s == NULL)
      continue;
    messages += n;
    /* counted when pushed: at most the batches the sink holds ahead */
    fail_unless (u64 (s, "patches") >= last_patches);
    fail_unless (u64 (s, "patches") <= delivered + 8 * BATCH);
    last_patches = u64 (s, "patches");
    gst_structure_free (s);
  }
  fail_unless (messages >= 3, "%u messages in 300 ms at 20 ms", messages);
  fail_unless (last_patches > 0);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  g_free (list);
}

GST_END_TEST;

GST_START_TEST (test_off_by_default)
{
  gchar *list = make_collection ();
  GstElement *pipeline = make_pipeline (list, FALSE, 0, TRUE);
  GstElement *batch = gst_bin_get_by_name (GST_BIN (pipeline), "batch");
  GstBus *bus = gst_element_get_bus (pipeline);
  GstElement *fresh = gst_element_factory_make ("patchbatch", NULL);
  Delivered d;
  guint n, interval = 1;

  g_object_get (fresh, "stats-interval", &interval, NULL);
  fail_unless_equals_int (interval, 0);
  gst_object_unref (fresh);
  delivered_init (&d);
  play_to_eos (pipeline, &d);
  fail_unless (d.patches > 0);
  fail_unless (last_stats (bus, &n) == NULL && n == 0);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  g_hash_table_unref (d.labels);
  gst_object_unref (batch);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  g_free (list);
}

GST_END_TEST;

/* Without queues the reader's thread pushes into patchbatch, which then
 * reads the reader's counters from that thread: it must not deadlock. */
GST_START_TEST (test_no_queues_no_deadlock)
{
  gchar *list = make_collection ();
  GstElement *pipeline = make_pipeline (list, FALSE, 1, FALSE);
  GstBus *bus = gst_element_get_bus (pipeline);
  GstStructure *s;
  Delivered d;
  guint n;

  delivered_init (&d);
  play_to_eos (pipeline, &d);
  s = last_stats (bus, &n);
  fail_unless (s != NULL && n >= 1);
  fail_unless_equals_uint64 (u64 (s, "patches"), d.patches);
  gst_structure_free (s);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  g_hash_table_unref (d.labels);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  g_free (list);
}

GST_END_TEST;

static Suite *
streamstats_suite (void)
{
  Suite *s = suite_create ("pipelines_streamstats");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_final_stats_match_delivery);
  tcase_add_test (tc, test_column_counts);
  tcase_add_test (tc, test_periodic_messages);
  tcase_add_test (tc, test_off_by_default);
  tcase_add_test (tc, test_no_queues_no_deadlock);
  return s;
}

GST_CHECK_MAIN (streamstats);
