/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Stream identity: fixed-seed pipelines on a real slide
 * (../shared/slides/Aperio-CMU-1-Small-Region.svs), one per sampling mode and
 * per stage, must give the same bytes as the code that wrote
 * identity.golden. A refactoring that moves code must not change the stream;
 * a change that means to change it regenerates the file and says why in its
 * commit.
 *
 * What is hashed (SHA-256, per pipeline): every patch record with
 * created_ns zeroed (a clock reading), every view record, the label and the
 * slide file's base name of every patch, the caps of the last batch and the
 * bytes of every memory of every batch. The slide's directory is left out so
 * the golden file holds on any checkout.
 *
 * Regenerate (after a deliberate stream change):
 *   WSI_IDENTITY_WRITE=1 meson test -C build pipelines_identity
 * rewrites tests/check/pipelines/identity.golden in the source tree.
 *
 * The slide is not generated (the synthetic-slide generator may change); when
 * it is absent the test fails under CI=true and is skipped (exit 77, with the
 * reason) otherwise. */

#include "wsipipeline.h"
#include "wsitestutil.h"

#include <stdio.h>
#include <string.h>

#define CMU "Aperio-CMU-1-Small-Region.svs"
#define GOLDEN_NAME "identity.golden"

typedef struct
{
  const gchar *name;            /* key in the golden file */
  const gchar *src;             /* wsislidesrc properties */
  const gchar *sampler;         /* patchsampler properties */
  const gchar *reader;          /* patchreader properties */
  const gchar *stages;          /* elements between patchreader and queue */
  const gchar *batch;           /* patchbatch properties */
} IdentityCase;

static const IdentityCase identity_cases[] = {
  {"random-tiff", "", "patch-size=128 patches-per-slide=16",
      "backend=tiff", NULL, ""},
  {"random-openslide", "", "patch-size=128 patches-per-slide=16",
      "backend=openslide", NULL, ""},
  {"tile-aligned", "", "patch-size=120 patches-per-slide=16 align=tile",
      "", NULL, ""},
  {"grid", "", "mode=grid patch-size=128 stride=160 patches-per-slide=24",
      "", NULL, ""},
  {"multi-magnification", "", "mode=multi-magnification patch-size=96 "
        "target-mpps=0.5,1.0,2.0 mpp-weights=1,2,1 patches-per-slide=24",
      "", NULL, ""},
  {"multi-magnification-exact", "", "mode=multi-magnification patch-size=96 "
        "target-mpps=0.5,1.0,2.0 patches-per-slide=16",
      "dct-scaling=false", NULL, ""},
  {"continuous-magnification", "", "mode=continuous-magnification "
        "patch-size=64 mpp-min=0.5 mpp-max=2.0 mpp-distribution=minmax "
        "patches-per-slide=24", "", NULL, ""},
  {"no-replacement", "cycle=true", "patch-size=128 patches-per-slide=16 "
        "replacement=false max-patches=48", "", NULL, ""},
  {"target-mpp", "", "patch-size=128 target-mpp=0.7 patches-per-slide=16",
      "resample-tolerance=0", NULL, ""},
  {"patchfilter", "", "patch-size=128 patches-per-slide=24", "",
      "patchfilter threads=2 saturation-min=60 min-pixel-fraction=0.5", ""},
  {"patchaugment", "", "patch-size=128 patches-per-slide=16", "",
        "patchaugment seed=3 threads=2 hed-probability=0.5 "
        "blur-probability=0.5 solarize-probability=0.2", ""},
  {"patchviews-dinov2", "", "patch-size=256 patches-per-slide=8", "",
        "patchviews preset=dinov2 seed=5 threads=2 ! "
        "patchaugment seed=3 threads=2", ""},
  {"patchviews-context", "", "patch-size=128 patches-per-slide=8", "",
      "patchviews preset=target-context threads=2", ""},
  {"normalize", "", "patch-size=64 patches-per-slide=16", "", NULL,
      "normalize=true"},
};

static gchar *
identity_slide_path (void)
{
  return g_build_filename (wsi_test_shared_slides_root (), CMU, NULL);
}

static gchar *
identity_golden_path (void)
{
  return g_build_filename (WSI_TEST_SRCDIR, "pipelines", GOLDEN_NAME, NULL);
}

static void
hash_batch (GChecksum * sum, GstBuffer * batch)
{
  guint m;

  for (m = 0; m < gst_buffer_n_memory (batch); m++) {
    GstMemory *mem = gst_buffer_peek_memory (batch, m);
    GstMapInfo map;

    fail_unless (gst_memory_map (mem, &map, GST_MAP_READ));
    g_checksum_update (sum, map.data, map.size);
    gst_memory_unmap (mem, &map);
  }
}

static void
hash_views (GChecksum * sum, GstBuffer * batch)
{
  GstStructure *meta = wsi_patch_meta_get (batch);
  const WsiViewRecord *views;
  guint n = 0;

  views = meta ? wsi_patch_meta_views (meta, &n) : NULL;
  if (views != NULL)
    g_checksum_update (sum, (const guchar *) views,
        n * sizeof (WsiViewRecord));
}

/* The digest of one run's stream; see the top of the file for what counts. */
static gchar *
stream_digest (const WsiRun * r)
{
  GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
  gchar *caps = r->last_caps ? gst_caps_to_string (r->last_caps) : NULL;
  gchar *digest;
  guint i;

  for (i = 0; i < r->records->len; i++) {
    WsiPatchRecord rec = *WSI_RECORD (r, i);
    gchar *base = g_path_get_basename (g_ptr_array_index (r->paths, i));
    const gchar *label = g_ptr_array_index (r->labels, i);

    rec.created_ns = 0;
    g_checksum_update (sum, (const guchar *) &rec, sizeof rec);
    g_checksum_update (sum, (const guchar *) base, strlen (base) + 1);
    g_checksum_update (sum, (const guchar *) (label ? label : ""),
        strlen (label ? label : "") + 1);
    g_free (base);
  }
  for (i = 0; i < r->batches->len; i++) {
    hash_views (sum, g_ptr_array_index (r->batches, i));
    hash_batch (sum, g_ptr_array_index (r->batches, i));
  }
  if (caps)
    g_checksum_update (sum, (const guchar *) caps, strlen (caps));
  digest = g_strdup_printf ("%s %u", g_checksum_get_string (sum),
      r->records->len);
  g_checksum_free (sum);
  g_free (caps);
  return digest;
}

static gchar *
run_case (const IdentityCase * c, const gchar * slide)
{
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=7 %s ! "
      "tissuemask ! queue ! patchsampler %s ! patchinterleave ! "
      "patchreader threads=2 %s ! %s%s queue max-size-buffers=64 "
      "max-size-bytes=0 max-size-time=0 ! patchbatch batch-size=8 %s ! "
      "appsink name=sink sync=false", slide, c->src, c->sampler, c->reader,
      c->stages ? c->stages : "", c->stages ? " !" : "", c->batch);
  WsiRun *r = wsi_run_pipeline (desc, 0);
  gchar *digest;

  fail_unless (r->error == NULL, "%s: %s", c->name, r->error);
  fail_unless (r->records->len > 0, "%s: no patch", c->name);
  digest = stream_digest (r);
  wsi_run_free (r);
  g_free (desc);
  return digest;
}

/* Golden file: "# comment" lines, then "NAME SHA256 PATCHES" per case. */
static GHashTable *
read_golden (const gchar * path)
{
  GHashTable *golden = g_hash_table_new_full (g_str_hash, g_str_equal,
      g_free, g_free);
  gchar *text = NULL, **lines;
  guint i;

  fail_unless (g_file_get_contents (path, &text, NULL, NULL),
      "cannot read %s (regenerate: WSI_IDENTITY_WRITE=1)", path);
  lines = g_strsplit (text, "\n", -1);
  for (i = 0; lines[i] != NULL; i++) {
    gchar *space = strchr (lines[i], ' ');

    if (lines[i][0] == '#' || space == NULL)
      continue;
    g_hash_table_insert (golden, g_strndup (lines[i], space - lines[i]),
        g_strdup (space + 1));
  }
  g_strfreev (lines);
  g_free (text);
  return golden;
}

static void
write_golden (const gchar * path, GPtrArray * digests)
{
  GString *out = g_string_new (
      "# Stream identity of fixed-seed pipelines on Aperio-CMU-1-Small-Region.svs\n"
      "# (tests/check/pipelines/identity.c): NAME SHA256 PATCHES.\n"
      "# Regenerate only for a deliberate stream change, and say why:\n"
      "#   WSI_IDENTITY_WRITE=1 meson test -C build pipelines_identity\n");
  guint i;

  for (i = 0; i < digests->len; i++)
    g_string_append_printf (out, "%s %s\n", identity_cases[i].name,
        (const gchar *) g_ptr_array_index (digests, i));
  fail_unless (g_file_set_contents (path, out->str, -1, NULL),
      "cannot write %s", path);
  g_print ("wrote %s\n", path);
  g_string_free (out, TRUE);
}

GST_START_TEST (test_stream_identity)
{
  gchar *slide = identity_slide_path ();
  gchar *golden_path = identity_golden_path ();
  GPtrArray *digests = g_ptr_array_new_with_free_func (g_free);
  GHashTable *golden = NULL;
  guint i, mismatches = 0;

  if (!g_getenv ("WSI_IDENTITY_WRITE"))
    golden = read_golden (golden_path);
  for (i = 0; i < G_N_ELEMENTS (identity_cases); i++) {
    const IdentityCase *c = &identity_cases[i];
    gchar *digest = run_case (c, slide);
    const gchar *expect = golden ? g_hash_table_lookup (golden, c->name)
        : NULL;

    g_ptr_array_add (digests, digest);
    if (golden == NULL)
      continue;
    if (expect == NULL || strcmp (expect, digest) != 0) {
      g_printerr ("stream changed: %s: expected %s, got %s\n", c->name,
          expect ? expect : "(no entry)", digest);
      mismatches++;
    }
  }
  if (golden == NULL)
    write_golden (golden_path, digests);
  fail_unless_equals_int (mismatches, 0);

  if (golden)
    g_hash_table_unref (golden);
  g_ptr_array_unref (digests);
  g_free (golden_path);
  g_free (slide);
}

GST_END_TEST;

static Suite *
identity_suite (void)
{
  Suite *s = suite_create ("identity");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_stream_identity);
  return s;
}

int
main (int argc, char **argv)
{
  gchar *slide = identity_slide_path ();
  gboolean present = g_file_test (slide, G_FILE_TEST_IS_REGULAR);

  /* The whole check needs the slide: say why it did not run and give meson
   * its skip code, except in CI, which must provide ../shared/slides. */
  if (!present && wsi_test_in_ci ()) {
    g_printerr ("FAIL: test_stream_identity: CI=true but the real slide %s "
        "is absent: CI must provide ../shared/slides (or WSI_SHARED_SLIDES_DIR)\n", slide);
    g_free (slide);
    return 1;
  }
  if (!present) {
    wsi_test_skip ("test_stream_identity", "real slide %s is absent", slide);
    g_free (slide);
    return 77;
  }
  g_free (slide);
  gst_check_init (&argc, &argv);
  return gst_check_run_suite (identity_suite (), "identity", __FILE__);
}
