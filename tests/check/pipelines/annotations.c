/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Sampling inside annotation regions, through whole pipelines on slides
 * and annotation files generated at test time: every patch centre (or
 * whole footprint, with min-annotation-coverage=1) inside a region of its
 * label, holes and excluded classes respected, the smallest region
 * labelling overlaps; class balance within 3 points over 10,000 patches
 * on 4 slides with a 1:20 area imbalance; the same stream for any reader
 * threads (and the same patches for any pool size); QuPath GeoJSON and
 * ASAP XML of the same shapes giving the same stream; grid and
 * replacement=false inside regions; bad files warned about by name and
 * their slides skipped. */

#include "wsipipeline.h"
#include "wsitestslide.h"
#include "wsitestutil.h"

#include <string.h>

#define SLIDE_W 1024
#define SLIDE_H 768

typedef struct
{
  const gchar *name;
  gint x0, y0, x1, y1;          /* level-0 rectangle */
  gboolean hole;                /* a hole [192, 320)² in this rectangle */
} Rect;

/* Tumor with a hole, Stroma holding a smaller Necrosis, Ignore (excluded)
 * over Stroma's bottom, Other (never requested). */
static const Rect shapes[] = {
  {"Tumor", 64, 64, 448, 448, TRUE},
  {"Stroma", 512, 64, 960, 704, FALSE},
  {"Necrosis", 640, 256, 768, 384, FALSE},
  {"Ignore", 512, 512, 960, 704, FALSE},
  {"Other", 64, 512, 448, 704, FALSE},
};

static gchar *
test_dir (const gchar * name)
{
  return wsi_test_make_dir (WSI_TEST_TMPDIR, name);
}

static void
write_slides (const gchar * dir, guint n)
{
  WsiTestSlideSpec spec;
  guint i;

  for (i = 0; i < n; i++) {
    gchar *name = g_strdup_printf ("slide-%u.tiff", i);

    wsi_test_slide_spec_init (&spec);
    spec.width = SLIDE_W;
    spec.height = SLIDE_H;
    spec.tile_size = 256;
    spec.levels = 2;
    spec.seed = 10 + i;
    g_free (wsi_test_write_slide (dir, name, &spec));
    g_free (name);
  }
}

static void
append_ring (GString * s, gint x0, gint y0, gint x1, gint y1)
{
  g_string_append_printf (s, "[[%d,%d],[%d,%d],[%d,%d],[%d,%d],[%d,%d]]",
      x0, y0, x1, y0, x1, y1, x0, y1, x0, y0);
}

static gchar *
geojson_of (const Rect * rects, guint n)
{
  GString *s = g_string_new ("{\"type\":\"FeatureCollection\","
      "\"features\":[");
  guint i;

  for (i = 0; i < n; i++) {
    g_string_append_printf (s, "%s{\"type\":\"Feature\",\"geometry\":"
        "{\"type\":\"Polygon\",\"coordinates\":[", i ? "," : "");
    append_ring (s, rects[i].x0, rects[i].y0, rects[i].x1, rects[i].y1);
    if (rects[i].hole) {
      g_string_append_c (s, ',');
      append_ring (s, 192, 192, 320, 320);
    }
    g_string_append_printf (s, "]},\"properties\":{\"classification\":"
        "{\"name\":\"%s\"}}}", rects[i].name);
  }
  g_string_append (s, "]}");
  return g_string_free (s, FALSE);
}

static gchar *
asap_of (const Rect * rects, guint n)
{
  GString *s = g_string_new ("<?xml version=\"1.0\"?><ASAP_Annotations>"
      "<Annotations>");
  guint i;

  for (i = 0; i < n; i++) {
    const Rect *r = &rects[i];

    g_string_append_printf (s, "<Annotation Name=\"A%u\" Type=\"Polygon\" "
        "PartOfGroup=\"%s\"><Coordinates>"
        "<Coordinate Order=\"0\" X=\"%d\" Y=\"%d\"/>"
        "<Coordinate Order=\"1\" X=\"%d\" Y=\"%d\"/>"
        "<Coordinate Order=\"2\" X=\"%d\" Y=\"%d\"/>"
        "<Coordinate Order=\"3\" X=\"%d\" Y=\"%d\"/>"
        "</Coordinates></Annotation>", i, r->name, r->x0, r->y0, r->x1,
        r->y0, r->x1, r->y1, r->x0, r->y1);
  }
  g_string_append (s, "</Annotations></ASAP_Annotations>");
  return g_string_free (s, FALSE);
}

static void
write_text (const gchar * dir, const gchar * name, const gchar * text)
{
  gchar *path = g_build_filename (dir, name, NULL);

  fail_unless (g_file_set_contents (path, text, -1, NULL));
  g_free (path);
}

/* Slides 0..n-1 with the standard shapes next to them. */
static gchar *
annotated_dir (const gchar * name, guint n)
{
  gchar *dir = test_dir (name), *json = geojson_of (shapes,
      G_N_ELEMENTS (shapes));
  guint i;

  write_slides (dir, n);
  for (i = 0; i < n; i++) {
    gchar *file = g_strdup_printf ("slide-%u.geojson", i);

    write_text (dir, file, json);
    g_free (file);
  }
  g_free (json);
  return dir;
}

static WsiRun *
run (const gchar * location, const gchar * src_extra,
    const gchar * sampler_extra, const gchar * interleave_extra,
    guint threads)
{
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=5 %s ! "
      "tissuemask ! queue max-size-buffers=4 ! patchsampler patch-size=32 "
      "annotation-mode=replace-tissue annotation-classes=Tumor,Stroma,Necrosis "
      "annotation-exclude=Ignore %s ! patchinterleave %s ! patchreader "
      "threads=%u ! queue ! patchbatch batch-size=50 ! appsink name=sink "
      "sync=false", location, src_extra, sampler_extra, interleave_extra,
      threads);
  WsiRun *r = wsi_run_pipeline (desc, 0);

  g_free (desc);
  return r;
}

static gboolean
strictly_inside (gdouble x, gdouble y, gint x0, gint y0, gint x1, gint y1)
{
  return x > x0 && x < x1 && y > y0 && y < y1;
}

static gboolean
closed_inside (gdouble x, gdouble y, gint x0, gint y0, gint x1, gint y1)
{
  return x >= x0 && x <= x1 && y >= y0 && y <= y1;
}

static const Rect *
shape (const gchar * name)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (shapes); i++)
    if (strcmp (shapes[i].name, name) == 0)
      return &shapes[i];
  return NULL;
}

/* The centre rule: labelled by the smallest region holding the centre,
 * never in the hole or the excluded class (points on an edge may go
 * either way). */
static void
check_centres (WsiRun * r)
{
  guint i;

  fail_unless (r->records->len > 0);
  for (i = 0; i < r->records->len; i++) {
    const WsiPatchRecord *rec = WSI_RECORD (r, i);
    const gchar *label = g_ptr_array_index (r->labels, i);
    const Rect *s = shape (label);
    gdouble cx = rec->x + rec->footprint / 2.0;
    gdouble cy = rec->y + rec->footprint / 2.0;

    fail_unless (s != NULL && strcmp (label, "Ignore") != 0
        && strcmp (label, "Other") != 0, "patch %u labelled \"%s\"", i,
        label);
    fail_unless (closed_inside (cx, cy, s->x0, s->y0, s->x1, s->y1),
        "patch %u (%s) centre %g,%g outside", i, label, cx, cy);
    fail_if (strictly_inside (cx, cy, 192, 192, 320, 320), "in the hole");
    fail_if (strictly_inside (cx, cy, 512, 512, 960, 704),
        "patch %u centre %g,%g in the excluded class", i, cx, cy);
    if (strcmp (label, "Stroma") == 0)
      fail_if (strictly_inside (cx, cy, 640, 256, 768, 384),
          "Stroma label inside Necrosis (smaller region wins)");
  }
}

GST_START_TEST (test_centres_holes_exclusion_overlap)
{
  gchar *dir = annotated_dir ("centres", 2);
  WsiRun *r = run (dir, "", "patches-per-slide=300", "", 2);
  guint i, necrosis = 0;

  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 600);
  check_centres (r);
  for (i = 0; i < r->labels->len; i++)
    necrosis += strcmp (g_ptr_array_index (r->labels, i), "Necrosis") == 0;
  fail_unless (necrosis > 0, "no patch labelled by the nested region");
  /* The class id column follows the order of annotation-classes. */
  for (i = 0; i < r->batches->len; i++) {
    GstStructure *meta = wsi_patch_meta_get (g_ptr_array_index (r->batches,
            i));
    const gchar *id = wsi_meta_column (meta, "class-id", 0);
    const gchar *cls = wsi_meta_column (meta, "class", 0);

    fail_unless (id != NULL && cls != NULL);
    fail_unless_equals_string (id, strcmp (cls, "Tumor") == 0 ? "0" :
        strcmp (cls, "Stroma") == 0 ? "1" : "2");
  }
  wsi_run_free (r);
  g_free (dir);
}

GST_END_TEST;

/* Coverage 1: the whole footprint inside its region, off the hole and off
 * the excluded class; grid and replacement=false stay inside too. */
GST_START_TEST (test_coverage_grid_without_replacement)
{
  gchar *dir = annotated_dir ("coverage", 1);
  const gchar *variants[] = {
    "patches-per-slide=200 min-annotation-coverage=1",
    "mode=grid patches-per-slide=-1 min-annotation-coverage=1",
    "replacement=false patches-per-slide=50 min-annotation-coverage=1",
  };
  guint v, i;

  for (v = 0; v < G_N_ELEMENTS (variants); v++) {
    WsiRun *r = run (dir, "", variants[v], "", 2);
    GHashTable *seen = g_hash_table_new (g_int64_hash, g_int64_equal);

    fail_unless (r->error == NULL, "%s: %s", variants[v], r->error);
    fail_unless (r->records->len > 20, "%s: %u patches", variants[v],
        r->records->len);
    for (i = 0; i < r->records->len; i++) {
      const WsiPatchRecord *rec = WSI_RECORD (r, i);
      const Rect *s = shape (g_ptr_array_index (r->labels, i));
      gint64 x0 = rec->x, y0 = rec->y, x1 = x0 + rec->footprint,
          y1 = y0 + rec->footprint;
      gint64 *key = g_new (gint64, 1);

      fail_unless (x0 >= s->x0 && y0 >= s->y0 && x1 <= s->x1 && y1 <= s->y1,
          "%s: patch %u outside %s", variants[v], i, s->name);
      fail_if (x1 > 192 && x0 < 320 && y1 > 192 && y0 < 320
          && s->hole, "%s: patch %u over the hole", variants[v], i);
      fail_if (x1 > 512 && x0 < 960 && y1 > 512 && y0 < 704,
          "%s: patch %u touches the excluded class", variants[v], i);
      *key = x0 * 100000 + y0;
      if (v > 0)
        fail_if (g_hash_table_contains (seen, key), "%s: repeated position",
            variants[v]);
      g_hash_table_add (seen, key);
    }
    g_hash_table_destroy (seen);
    wsi_run_free (r);
  }
  g_free (dir);
}

GST_END_TEST;

/* 4 slides whose Tumor region is 1/20 of their Stroma region. */
static gchar *
imbalanced_dir (void)
{
  static const Rect two[] = {
    {"Tumor", 64, 64, 192, 192, FALSE},
    {"Stroma", 256, 0, 896, 512, FALSE},
  };
  gchar *dir = test_dir ("balance"), *json = geojson_of (two, 2);
  guint i;

  write_slides (dir, 4);
  for (i = 0; i < 4; i++) {
    gchar *file = g_strdup_printf ("slide-%u.geojson", i);

    write_text (dir, file, json);
    g_free (file);
  }
  g_free (json);
  return dir;
}

static gdouble
tumor_share (const gchar * dir, const gchar * balance, guint * n)
{
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=9 ! "
      "tissuemask ! queue ! patchsampler patch-size=16 patches-per-slide=2500 "
      "annotation-mode=and-tissue min-tissue=0 annotation-classes=Tumor,Stroma "
      "%s ! patchinterleave ! patchreader threads=2 ! queue ! patchbatch "
      "batch-size=500 ! appsink name=sink sync=false", dir, balance);
  WsiRun *r = wsi_run_pipeline (desc, 0);
  guint i, tumor = 0;

  fail_unless (r->error == NULL, "%s", r->error);
  *n = r->labels->len;
  for (i = 0; i < r->labels->len; i++)
    tumor += strcmp (g_ptr_array_index (r->labels, i), "Tumor") == 0;
  wsi_run_free (r);
  g_free (desc);
  return *n ? (gdouble) tumor / *n : 0.0;
}

GST_START_TEST (test_class_balance)
{
  gchar *dir = imbalanced_dir ();
  guint n;
  gdouble share;

  share = tumor_share (dir, "class-balance=none", &n);
  fail_unless_equals_int (n, 10000);
  fail_unless (share > 0.02 && share < 0.08, "unbalanced share %g", share);
  share = tumor_share (dir, "class-balance=uniform", &n);
  fail_unless_equals_int (n, 10000);
  fail_unless (fabs (share - 0.5) <= 0.03, "uniform: Tumor share %g", share);
  share = tumor_share (dir, "class-balance=weights class-weights=1,3", &n);
  fail_unless_equals_int (n, 10000);
  fail_unless (fabs (share - 0.25) <= 0.03, "1:3: Tumor share %g", share);
  g_free (dir);
}

GST_END_TEST;

/* Fails on the first line where two stream keys differ (check's messages
 * are too short for whole streams). */
static void
assert_same_stream (const gchar * got, const gchar * want, const gchar * what)
{
  gchar **a = g_strsplit (got, "\n", -1), **b = g_strsplit (want, "\n", -1);
  guint i;

  for (i = 0; a[i] != NULL && b[i] != NULL; i++)
    fail_unless (strcmp (a[i], b[i]) == 0, "%s: patch %u: \"%s\" vs \"%s\"",
        what, i, a[i], b[i]);
  fail_unless (a[i] == NULL && b[i] == NULL, "%s: %u vs more patches", what,
      i);
  g_strfreev (a);
  g_strfreev (b);
}

static gint
compare_lines (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

/* Patch identity: slide, cycle, position and label. */
static gchar *
stream_key (WsiRun * r, gboolean sorted)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);
  GString *all = g_string_new (NULL);
  guint i;

  for (i = 0; i < r->records->len; i++) {
    const WsiPatchRecord *rec = WSI_RECORD (r, i);

    g_ptr_array_add (lines, g_strdup_printf ("%u %u %" G_GINT64_FORMAT " %"
            G_GINT64_FORMAT " %s", rec->slide_index, rec->cycle, rec->x,
            rec->y, (const gchar *) g_ptr_array_index (r->labels, i)));
  }
  if (sorted)
    g_ptr_array_sort (lines, compare_lines);
  for (i = 0; i < lines->len; i++)
    g_string_append_printf (all, "%s\n", (gchar *) lines->pdata[i]);
  g_ptr_array_unref (lines);
  return g_string_free (all, FALSE);
}

GST_START_TEST (test_determinism_threads_pools)
{
  gchar *dir = annotated_dir ("determinism", 3);
  const gchar *sampler = "patches-per-slide=40 class-balance=uniform";
  gchar *reference = NULL, *reference_sorted = NULL;
  guint threads[] = { 1, 2, 4 }, i;

  for (i = 0; i < G_N_ELEMENTS (threads); i++) {
    WsiRun *r = run (dir, "", sampler, "pool-size=2", threads[i]);
    gchar *key = stream_key (r, FALSE);

    fail_unless (r->error == NULL, "%s", r->error);
    if (reference == NULL) {
      reference = key;
      reference_sorted = stream_key (r, TRUE);
    } else {
      assert_same_stream (key, reference, "threads");
      g_free (key);
    }
    wsi_run_free (r);
  }
  for (i = 1; i <= 3; i += 2) {
    gchar *pool = g_strdup_printf ("pool-size=%u patches-per-visit=3", i);
    WsiRun *r = run (dir, "", sampler, pool, 2);
    gchar *key = stream_key (r, TRUE);

    assert_same_stream (key, reference_sorted, pool);
    g_free (key);
    g_free (pool);
    wsi_run_free (r);
  }
  g_free (reference);
  g_free (reference_sorted);
  g_free (dir);
}

GST_END_TEST;

/* The same shapes as QuPath GeoJSON and as ASAP XML (no holes: ASAP has
 * none), each in its own annotations= folder: the same stream. */
GST_START_TEST (test_qupath_and_asap_agree)
{
  static const Rect plain[] = {
    {"Tumor", 64, 64, 448, 448, FALSE},
    {"Stroma", 512, 64, 960, 704, FALSE},
    {"Necrosis", 640, 256, 768, 384, FALSE},
    {"Ignore", 512, 512, 960, 704, FALSE},
  };
  gchar *dir = test_dir ("formats");
  gchar *qupath = test_dir ("formats-qupath"), *asap = test_dir
      ("formats-asap");
  gchar *json = geojson_of (plain, G_N_ELEMENTS (plain));
  gchar *xml = asap_of (plain, G_N_ELEMENTS (plain));
  gchar *src_q = g_strdup_printf ("annotations=\"%s\"", qupath);
  gchar *src_a = g_strdup_printf ("annotations=\"%s\"", asap);
  WsiRun *rq, *ra;
  gchar *kq, *ka;
  guint i;

  write_slides (dir, 2);
  for (i = 0; i < 2; i++) {
    gchar *fq = g_strdup_printf ("slide-%u.geojson", i);
    gchar *fa = g_strdup_printf ("slide-%u.xml", i);

    write_text (qupath, fq, json);
    write_text (asap, fa, xml);
    g_free (fq);
    g_free (fa);
  }
  rq = run (dir, src_q, "patches-per-slide=60 min-annotation-coverage=0.5",
      "", 2);
  ra = run (dir, src_a, "patches-per-slide=60 min-annotation-coverage=0.5",
      "", 2);
  fail_unless (rq->error == NULL && ra->error == NULL);
  fail_unless_equals_int (rq->records->len, 120);
  kq = stream_key (rq, FALSE);
  ka = stream_key (ra, FALSE);
  assert_same_stream (ka, kq, "ASAP vs QuPath");
  g_free (kq);
  g_free (ka);
  wsi_run_free (rq);
  wsi_run_free (ra);
  g_free (src_q);
  g_free (src_a);
  g_free (json);
  g_free (xml);
  g_free (qupath);
  g_free (asap);
  g_free (dir);
}

GST_END_TEST;

/* Runs patchsampler with annotation-mode and @settings; expects an error
 * message holding @expect before any slide is planned. */
static void
expect_settings_error (const gchar * dir, const gchar * settings,
    const gchar * expect)
{
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" ! tissuemask ! "
      "queue ! patchsampler annotation-mode=replace-tissue %s ! fakesink",
      dir, settings);
  GstElement *pipeline = gst_parse_launch (desc, NULL);
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg;
  GError *err = NULL;

  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
      GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR,
      "%s: no error", settings);
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, expect) != NULL, "%s: %s", settings,
      err->message);
  g_error_free (err);
  gst_message_unref (msg);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  g_free (desc);
}

/* A malformed file, a slide without one, a file matching no slide and a
 * class no file has: warnings naming them; the good slide still streams. */
GST_START_TEST (test_bad_input_warned)
{
  gchar *dir = test_dir ("bad"), *notes = test_dir ("bad-notes");
  gchar *json = geojson_of (shapes, G_N_ELEMENTS (shapes));
  gchar *src = g_strdup_printf ("annotations=\"%s\"", notes);
  gchar *desc;
  WsiRun *r;
  guint i;

  write_slides (dir, 3);
  write_text (notes, "slide-0.geojson", json);
  write_text (notes, "slide-1.geojson", "{\"type\":\"FeatureCollection\","
      "\"features\":[{\"type\":");
  write_text (notes, "slide-7.geojson", json);
  desc = g_strdup_printf ("wsislidesrc location=\"%s\" %s ! tissuemask ! "
      "queue ! patchsampler patch-size=32 patches-per-slide=20 "
      "annotation-mode=replace-tissue annotation-classes=Tumor,Tumour ! "
      "patchinterleave ! patchreader ! queue ! patchbatch batch-size=10 ! "
      "appsink name=sink sync=false", dir, src);
  r = wsi_run_pipeline (desc, 0);
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 20);
  for (i = 0; i < r->paths->len; i++)
    fail_unless (g_str_has_suffix (g_ptr_array_index (r->paths, i),
            "slide-0.tiff"));
  fail_unless (wsi_run_has_warning (r, "slide-1.geojson", "not valid JSON",
          NULL));
  fail_unless (wsi_run_has_warning (r, "slide-7.geojson", "matches no slide",
          NULL));
  fail_unless (wsi_run_has_warning (r, "slide-2.tiff", "skipping", NULL));
  fail_unless (wsi_run_has_warning (r, "slide-1.tiff", "skipping", NULL));
  fail_unless (wsi_run_has_warning (r, "\"Tumour\"", "no slide's annotation",
          NULL));
  wsi_run_free (r);
  g_free (desc);

  /* Settings that contradict each other are an error, not a guess. */
  expect_settings_error (dir, "annotation-classes=Tumor,Stroma "
      "class-balance=weights class-weights=1", "class-weights has 1 entries");
  expect_settings_error (dir, "annotation-classes=Tumor,Stroma mode=grid "
      "class-balance=uniform", "only mode=random with replacement=true");
  expect_settings_error (dir, "annotation-classes=Tumor "
      "annotation-exclude=Tumor", "in both annotation-classes and");
  g_free (src);
  g_free (json);
  g_free (notes);
  g_free (dir);
}

GST_END_TEST;

/* A manifest column names each slide's file (any name, either format);
 * the magnification modes sample inside the regions too; a requested class
 * no file has is warned about after the first pass of an endless stream;
 * the manifest's columns come before class and class-id. */
GST_START_TEST (test_manifest_column_and_magnification)
{
  gchar *dir = test_dir ("manifest"), *json = geojson_of (shapes,
      G_N_ELEMENTS (shapes));
  gchar *xml = asap_of (shapes + 1, G_N_ELEMENTS (shapes) - 1);
  gchar *csv = g_build_filename (dir, "train.csv", NULL);
  gchar *desc;
  WsiRun *r;
  guint i;

  write_slides (dir, 2);
  write_text (dir, "notes-a.geojson", json);
  write_text (dir, "notes-b.xml", xml);
  write_text (dir, "train.csv", "path,label,annotations\n"
      "slide-0.tiff,case,notes-a.geojson\nslide-1.tiff,case,notes-b.xml\n");
  desc = g_strdup_printf ("wsislidesrc location=\"%s\" cycle=true seed=2 ! "
      "tissuemask ! queue ! patchsampler mode=multi-magnification "
      "target-mpps=0.25,0.5 patch-size=32 patches-per-slide=10 max-patches=60 "
      "annotation-mode=replace-tissue "
      "annotation-classes=Tumor,Stroma,Necrosis,Missing "
      "annotation-exclude=Ignore ! patchinterleave ! patchreader ! queue ! "
      "patchbatch batch-size=10 ! appsink name=sink sync=false", csv);
  r = wsi_run_pipeline (desc, 0);
  fail_unless (r->error == NULL, "%s", r->error);
  fail_unless_equals_int (r->records->len, 60);
  check_centres (r);
  for (i = 0; i < r->records->len; i++)
    fail_unless (WSI_RECORD (r, i)->footprint == 32
        || WSI_RECORD (r, i)->footprint == 64);
  for (i = 0; i < r->batches->len; i++) {
    GstStructure *meta = wsi_patch_meta_get (g_ptr_array_index (r->batches,
            i));
    const gchar *const *names = wsi_structure_get_strv (meta,
        "column-names");

    guint n = names ? g_strv_length ((gchar **) names) : 0;

    fail_unless (n >= 3, "%u columns", n);
    fail_unless (g_strv_contains (names, "annotations"));
    fail_unless_equals_string (names[n - 2], "class");
    fail_unless_equals_string (names[n - 1], "class-id");
  }
  fail_unless (wsi_run_has_warning (r, "\"Missing\"",
          "no slide's annotation", NULL));
  wsi_run_free (r);
  g_free (desc);
  g_free (csv);
  g_free (xml);
  g_free (json);
  g_free (dir);
}

GST_END_TEST;

static Suite *
annotations_suite (void)
{
  Suite *s = suite_create ("annotations");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 600);
  tcase_add_test (tc, test_centres_holes_exclusion_overlap);
  tcase_add_test (tc, test_coverage_grid_without_replacement);
  tcase_add_test (tc, test_class_balance);
  tcase_add_test (tc, test_determinism_threads_pools);
  tcase_add_test (tc, test_qupath_and_asap_agree);
  tcase_add_test (tc, test_bad_input_warned);
  tcase_add_test (tc, test_manifest_column_and_magnification);
  return s;
}

GST_CHECK_MAIN (annotations);
