/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* tissuemask's disk cache (mask-cache-dir, issue 23) in whole pipelines:
 * the stream is the same without it, with a cold and with a warm folder;
 * a warm run computes no mask and reads no overview; a changed slide file,
 * mask setting or thumbnail size makes a new mask; a damaged file is
 * warned about (naming it) and replaced; an unwritable folder is warned
 * about once and the stream goes on. Everything is counted, nothing
 * timed. */

#include "wsipipeline.h"
#include "wsitestslide.h"
#include "wsitestutil.h"
#include "wsitissuedetect.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>

#define N_SLIDES 3
#define PATCH 64

typedef struct
{
  WsiRun *run;
  guint64 computed;             /* tissuemask masks-computed */
  guint64 disk_hits;            /* tissuemask disk-hits */
  gint overviews;               /* slide buffers that carried an overview */
} CountedRun;

static void
counted_run_free (CountedRun * c)
{
  wsi_run_free (c->run);
  g_free (c);
}

static void
write_slides (const gchar * dir, guint n, guint32 first_seed)
{
  guint i;

  for (i = 0; i < n; i++) {
    WsiTestSlideSpec spec;
    gchar name[32];

    wsi_test_slide_spec_init (&spec);
    spec.width = 1536;
    spec.height = 1024;
    spec.tile_size = 256;
    spec.levels = 3;
    spec.level_step = 2;
    spec.mpp = 0.25;
    spec.tissue_blobs = 3;
    spec.seed = first_seed + i;
    g_snprintf (name, sizeof (name), "slide%02u.tiff", i);
    g_free (wsi_test_write_slide (dir, name, &spec));
  }
}

static GstPadProbeReturn
count_overviews (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  GstStructure *meta = wsi_slide_meta_get (GST_PAD_PROBE_INFO_BUFFER (info));
  gboolean has_overview = FALSE;

  if (meta != NULL && gst_structure_get_boolean (meta, "has-overview",
          &has_overview) && has_overview)
    g_atomic_int_inc ((gint *) data);
  return GST_PAD_PROBE_OK;
}

/* Counts the overviews tissuemask receives (before) and reads its
 * counters once the run has ended (after). */
static void
probe_mask_sink (GstElement * pipeline, gpointer data)
{
  CountedRun *c = (CountedRun *) data;
  GstElement *mask = gst_bin_get_by_name (GST_BIN (pipeline), "mask");
  GstPad *pad = gst_element_get_static_pad (mask, "sink");

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_overviews,
      &c->overviews, NULL);
  gst_object_unref (pad);
  gst_object_unref (mask);
}

static void
read_mask_counters (GstElement * pipeline, gpointer data)
{
  CountedRun *c = (CountedRun *) data;
  GstElement *mask = gst_bin_get_by_name (GST_BIN (pipeline), "mask");

  g_object_get (mask, "masks-computed", &c->computed, "disk-hits",
      &c->disk_hits, NULL);
  gst_object_unref (mask);
}

/* Runs the standard pipeline over @slides with tissuemask @mask_extra and
 * wsislidesrc @src_extra, counting what tissuemask did. */
static CountedRun *
run_counted (const gchar * slides, const gchar * src_extra,
    const gchar * mask_extra, guint threads)
{
  CountedRun *c = g_new0 (CountedRun, 1);
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=3 %s ! "
      "tissuemask name=mask %s ! queue max-size-buffers=4 ! "
      "patchsampler patch-size=%d patches-per-slide=8 ! "
      "patchinterleave pool-size=2 ! patchreader threads=%u ! "
      "queue max-size-buffers=64 max-size-bytes=0 max-size-time=0 ! "
      "patchbatch batch-size=8 ! appsink name=sink sync=false "
      "wait-on-eos=false", slides, src_extra, mask_extra, PATCH, threads);

  c->run = wsi_run_pipeline_hooked (desc, 0, probe_mask_sink,
      read_mask_counters, c);
  fail_unless (c->run->error == NULL, "%s: %s", desc, c->run->error);
  fail_unless (c->run->records->len > 0, "%s: no patch", desc);
  g_free (desc);
  return c;
}

static guint
count_mask_files (const gchar * cache)
{
  GDir *dir = g_dir_open (cache, 0, NULL);
  const gchar *name;
  guint n = 0;

  if (dir == NULL)
    return 0;
  while ((name = g_dir_read_name (dir)) != NULL)
    n += g_str_has_suffix (name, ".mask");
  g_dir_close (dir);
  return n;
}

/* The names of the .mask files in @cache, sorted. */
static GPtrArray *
mask_files (const gchar * cache)
{
  GPtrArray *files = g_ptr_array_new_with_free_func (g_free);
  GDir *dir = g_dir_open (cache, 0, NULL);
  const gchar *name;

  fail_unless (dir != NULL);
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, ".mask"))
      g_ptr_array_add (files, g_build_filename (cache, name, NULL));
  g_dir_close (dir);
  g_ptr_array_sort (files, (GCompareFunc) g_strcmp0);
  return files;
}

/* An empty cache folder @name (files of an earlier run of the test are
 * removed). */
static gchar *
fresh_cache (const gchar * name)
{
  gchar *cache = wsi_test_make_dir (WSI_TEST_TMPDIR, name);
  GPtrArray *old = mask_files (cache);
  guint i;

  for (i = 0; i < old->len; i++)
    g_unlink (g_ptr_array_index (old, i));
  g_ptr_array_unref (old);
  return cache;
}

static gchar *
cache_setting (const gchar * cache)
{
  return g_strdup_printf ("mask-cache-dir=\"%s\"", cache);
}

GST_START_TEST (test_cold_and_warm_streams_are_the_same)
{
  gchar *slides = wsi_test_make_dir (WSI_TEST_TMPDIR, "same-slides");
  gchar *cache = fresh_cache ("same-cache");
  gchar *with_cache = cache_setting (cache);
  CountedRun *none, *cold, *warm, *warm2, *cold2;
  gchar *cache2 = fresh_cache ("same-cache2");
  gchar *with_cache2 = cache_setting (cache2);

  write_slides (slides, N_SLIDES, 40);
  none = run_counted (slides, "", "", 1);
  fail_unless_equals_uint64 (none->computed, N_SLIDES);
  fail_unless_equals_uint64 (none->disk_hits, 0);

  /* Cold: every mask computed from its overview, and stored. */
  cold = run_counted (slides, "", with_cache, 1);
  fail_unless_equals_uint64 (cold->computed, N_SLIDES);
  fail_unless_equals_int (cold->overviews, N_SLIDES);
  fail_unless_equals_uint64 (cold->disk_hits, 0);
  fail_unless_equals_int (count_mask_files (cache), N_SLIDES);
  wsi_run_assert_same_stream (none->run, cold->run, "cold cache");

  /* Warm, a new pipeline (a new process would do the same): no mask
   * computed, no overview read, at 1 and 2 reader threads. */
  warm = run_counted (slides, "", with_cache, 1);
  fail_unless_equals_uint64 (warm->computed, 0);
  fail_unless_equals_int (warm->overviews, 0);
  fail_unless_equals_uint64 (warm->disk_hits, N_SLIDES);
  wsi_run_assert_same_stream (none->run, warm->run, "warm cache");
  warm2 = run_counted (slides, "", with_cache, 2);
  fail_unless_equals_uint64 (warm2->computed, 0);
  fail_unless_equals_int (warm2->overviews, 0);
  wsi_run_assert_same_stream (none->run, warm2->run, "warm cache, 2 threads");
  /* A cold cache at 2 threads too. */
  cold2 = run_counted (slides, "", with_cache2, 2);
  fail_unless_equals_uint64 (cold2->computed, N_SLIDES);
  wsi_run_assert_same_stream (none->run, cold2->run, "cold cache, 2 threads");
  fail_unless (none->run->warnings->len == 0 && warm->run->warnings->len == 0,
      "unexpected warning");

  counted_run_free (none);
  counted_run_free (cold);
  counted_run_free (warm);
  counted_run_free (warm2);
  counted_run_free (cold2);
  g_free (with_cache);
  g_free (with_cache2);
  g_free (cache);
  g_free (cache2);
  g_free (slides);
}

GST_END_TEST;

/* A touched or rewritten slide file has a new identity: its mask is made
 * again, the others still come from the folder. */
GST_START_TEST (test_changed_slide_file_recomputes)
{
  gchar *slides = wsi_test_make_dir (WSI_TEST_TMPDIR, "changed-slides");
  gchar *cache = fresh_cache ("changed-cache");
  gchar *with_cache = cache_setting (cache);
  gchar *first = g_build_filename (slides, "slide00.tiff", NULL);
  struct timespec times[2] = { {0, UTIME_OMIT}, {1234567890, 5} };
  CountedRun *c;

  write_slides (slides, N_SLIDES, 50);
  counted_run_free (run_counted (slides, "", with_cache, 1));

  /* touch: same bytes, another mtime. */
  fail_unless (utimensat (AT_FDCWD, first, times, 0) == 0);
  c = run_counted (slides, "", with_cache, 1);
  fail_unless_equals_uint64 (c->computed, 1);
  fail_unless_equals_uint64 (c->disk_hits, N_SLIDES - 1);
  fail_unless_equals_int (c->overviews, 1);
  counted_run_free (c);

  /* Rewritten with other content. */
  write_slides (slides, 1, 70);
  c = run_counted (slides, "", with_cache, 1);
  fail_unless_equals_uint64 (c->computed, 1);
  fail_unless_equals_uint64 (c->disk_hits, N_SLIDES - 1);
  counted_run_free (c);

  /* Another thumbnail size: other overviews, other masks. */
  c = run_counted (slides, "thumbnail-size=512", with_cache, 1);
  fail_unless_equals_uint64 (c->computed, N_SLIDES);
  fail_unless_equals_uint64 (c->disk_hits, 0);
  counted_run_free (c);

  g_free (first);
  g_free (with_cache);
  g_free (cache);
  g_free (slides);
}

GST_END_TEST;

/* A value of @pspec other than its default, valid for tissuemask (odd
 * kernels), as a gst-launch setting. */
static gchar *
other_value (GParamSpec * pspec)
{
  if (G_IS_PARAM_SPEC_UINT (pspec)) {
    GParamSpecUInt *p = G_PARAM_SPEC_UINT (pspec);
    guint v = p->default_value + 2 <= p->maximum ? p->default_value + 2 :
        p->default_value - 2;

    return g_strdup_printf ("%s=%u", pspec->name, v);
  }
  if (G_IS_PARAM_SPEC_INT (pspec)) {
    GParamSpecInt *p = G_PARAM_SPEC_INT (pspec);
    gint v = p->default_value + 2 <= p->maximum ? p->default_value + 2 :
        p->default_value - 2;

    return g_strdup_printf ("%s=%d", pspec->name, v);
  }
  if (G_IS_PARAM_SPEC_DOUBLE (pspec)) {
    GParamSpecDouble *p = G_PARAM_SPEC_DOUBLE (pspec);
    gchar number[G_ASCII_DTOSTR_BUF_SIZE];
    gdouble v = p->default_value + 0.001 <= p->maximum ?
        p->default_value + 0.001 : p->default_value - 0.001;

    return g_strdup_printf ("%s=%s", pspec->name,
        g_ascii_dtostr (number, sizeof (number), v));
  }
  if (G_IS_PARAM_SPEC_ENUM (pspec)) {
    GParamSpecEnum *p = G_PARAM_SPEC_ENUM (pspec);
    guint i;

    for (i = 0; i < p->enum_class->n_values; i++)
      if (p->enum_class->values[i].value != p->default_value)
        return g_strdup_printf ("%s=%s", pspec->name,
            p->enum_class->values[i].value_nick);
  }
  fail ("no other value for tissuemask property %s (%s): extend this test",
      pspec->name, g_type_name (pspec->value_type));
  return NULL;
}

/* Every writable tissuemask property but those that cannot change a mask
 * is in the key: changing any one of them alone gets new masks. A
 * mask-shaping property missed by the key would be served the old masks
 * here and fail. */
GST_START_TEST (test_every_mask_setting_is_in_the_key)
{
  static const gchar *const not_mask_shaping[] = {
    "min-tissue-fraction", "mask-cache-size", "mask-cache-dir", NULL
  };
  gchar *slides = wsi_test_make_dir (WSI_TEST_TMPDIR, "settings-slides");
  gchar *cache = fresh_cache ("settings-cache");
  gchar *with_cache = cache_setting (cache);
  GstElement *element = gst_element_factory_make ("tissuemask", NULL);
  GParamSpec **pspecs;
  CountedRun *c;
  guint n, i, checked = 0;

  write_slides (slides, 1, 60);
  counted_run_free (run_counted (slides, "", with_cache, 1));
  c = run_counted (slides, "", with_cache, 1);
  fail_unless_equals_uint64 (c->computed, 0);
  counted_run_free (c);

  pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (element), &n);
  for (i = 0; i < n; i++) {
    gchar *setting, *extra;

    if (pspecs[i]->owner_type != G_OBJECT_TYPE (element)
        || (pspecs[i]->flags & G_PARAM_READWRITE) != G_PARAM_READWRITE
        || g_strv_contains (not_mask_shaping, pspecs[i]->name))
      continue;
    setting = other_value (pspecs[i]);
    extra = g_strdup_printf ("%s %s", with_cache, setting);
    c = run_counted (slides, "", extra, 1);
    fail_unless (c->computed == 1, "%s: the stored mask was used "
        "(masks-computed %" G_GUINT64_FORMAT ")", setting, c->computed);
    fail_unless_equals_uint64 (c->disk_hits, 0);
    counted_run_free (c);
    g_free (extra);
    g_free (setting);
    checked++;
  }
  /* method, the thresholds, kernels, areas, hue, otsu-*: 17 today. */
  fail_unless (checked >= 17, "only %u properties checked", checked);

  /* The excluded ones really do not need a new mask. */
  {
    gchar *extra = g_strdup_printf ("%s min-tissue-fraction=0.02 "
        "mask-cache-size=3", with_cache);

    c = run_counted (slides, "", extra, 1);
    fail_unless_equals_uint64 (c->computed, 0);
    counted_run_free (c);
    g_free (extra);
  }

  g_free (pspecs);
  gst_object_unref (element);
  g_free (with_cache);
  g_free (cache);
  g_free (slides);
}

GST_END_TEST;

/* A truncated file and one with a flipped byte are warned about, naming
 * them; their masks are computed again, the stream is unchanged, and the
 * files are replaced (the next run computes nothing). */
GST_START_TEST (test_damaged_file_warns_and_recomputes)
{
  gchar *slides = wsi_test_make_dir (WSI_TEST_TMPDIR, "damaged-slides");
  gchar *cache = fresh_cache ("damaged-cache");
  gchar *with_cache = cache_setting (cache);
  CountedRun *cold, *damaged, *again;
  GPtrArray *files;
  gchar *contents;
  gsize size;

  write_slides (slides, N_SLIDES, 80);
  cold = run_counted (slides, "", with_cache, 1);
  files = mask_files (cache);
  fail_unless_equals_int (files->len, N_SLIDES);

  fail_unless (g_file_get_contents (g_ptr_array_index (files, 0), &contents,
          &size, NULL));
  fail_unless (g_file_set_contents (g_ptr_array_index (files, 0), contents,
          size / 2, NULL));
  g_free (contents);
  fail_unless (g_file_get_contents (g_ptr_array_index (files, 1), &contents,
          &size, NULL));
  contents[size / 2] ^= 0x01;
  fail_unless (g_file_set_contents (g_ptr_array_index (files, 1), contents,
          size, NULL));
  g_free (contents);

  damaged = run_counted (slides, "", with_cache, 1);
  fail_unless_equals_uint64 (damaged->computed, 2);
  fail_unless_equals_uint64 (damaged->disk_hits, N_SLIDES - 2);
  fail_unless (wsi_run_has_warning (damaged->run,
          (const gchar *) g_ptr_array_index (files, 0), "truncated", NULL));
  fail_unless (wsi_run_has_warning (damaged->run,
          (const gchar *) g_ptr_array_index (files, 1), "corrupt", NULL));
  fail_unless_equals_int (damaged->run->warnings->len, 2);
  wsi_run_assert_same_stream (cold->run, damaged->run, "damaged cache files");

  again = run_counted (slides, "", with_cache, 1);
  fail_unless_equals_uint64 (again->computed, 0);
  fail_unless_equals_int (again->run->warnings->len, 0);
  wsi_run_assert_same_stream (cold->run, again->run, "replaced cache files");

  counted_run_free (cold);
  counted_run_free (damaged);
  counted_run_free (again);
  g_ptr_array_unref (files);
  g_free (with_cache);
  g_free (cache);
  g_free (slides);
}

GST_END_TEST;

/* A folder that cannot be made (its parent is a file: refused even to
 * root) is warned about once, naming it, and the stream is the one
 * without a cache. */
GST_START_TEST (test_unwritable_folder_warns_once)
{
  gchar *slides = wsi_test_make_dir (WSI_TEST_TMPDIR, "unwritable-slides");
  gchar *file = g_build_filename (WSI_TEST_TMPDIR, "not-a-folder", NULL);
  gchar *cache = g_build_filename (file, "masks", NULL);
  gchar *with_cache = cache_setting (cache);
  CountedRun *none, *c;

  fail_unless (g_file_set_contents (file, "x", 1, NULL));
  write_slides (slides, N_SLIDES, 90);
  none = run_counted (slides, "", "", 1);
  c = run_counted (slides, "", with_cache, 1);
  fail_unless_equals_uint64 (c->computed, N_SLIDES);
  fail_unless_equals_int (c->run->warnings->len, 1);
  fail_unless (wsi_run_has_warning (c->run, cache, "mask-cache-dir", NULL),
      "%s", (const gchar *) g_ptr_array_index (c->run->warnings, 0));
  wsi_run_assert_same_stream (none->run, c->run, "unwritable cache folder");

  counted_run_free (none);
  counted_run_free (c);
  g_free (with_cache);
  g_free (cache);
  g_free (file);
  g_free (slides);
}

GST_END_TEST;

/* Issue 23: a memory cache smaller than the slides cycled, masks on disk.
 * A mask loaded for a visit planned ahead must still be in memory when
 * that visit streams (loaded once a visit, not again on the way), and no
 * mask is computed. */
GST_START_TEST (test_small_memory_cache_loads_once_a_visit)
{
  gchar *slides = wsi_test_make_dir (WSI_TEST_TMPDIR, "small-memory-slides");
  gchar *cache = fresh_cache ("small-memory-cache");
  gchar *with_cache = cache_setting (cache);
  gchar *small = g_strdup_printf ("%s mask-cache-size=4", with_cache);
  const guint n = 6, passes = 3;
  gchar *cycle = g_strdup_printf ("cycle=true num-buffers=%u", n * passes);
  CountedRun *cold, *warm;

  write_slides (slides, n, 60);
  cold = run_counted (slides, "", with_cache, 1);
  fail_unless_equals_uint64 (cold->computed, n);

  warm = run_counted (slides, cycle, small, 1);
  fail_unless_equals_uint64 (warm->computed, 0);
  fail_unless_equals_int (warm->overviews, 0);
  /* At most once a visit, plus the 2 visits (pool-size=2: prepare-ahead
   * 2) planned past num-buffers, which are asked about too. A preloaded
   * mask put last in line was evicted by the next preload and loaded again
   * when its visit streamed: 33 loads. */
  fail_unless (warm->disk_hits >= n && warm->disk_hits <= n * passes + 2,
      "%" G_GUINT64_FORMAT " masks loaded for %u visits", warm->disk_hits,
      n * passes);

  counted_run_free (cold);
  counted_run_free (warm);
  g_free (cycle);
  g_free (small);
  g_free (with_cache);
  g_free (cache);
  g_free (slides);
}

GST_END_TEST;

/* The masks of the slides below, every method, at an overview copied from
 * a level (1024) and at an averaged one (300), at WSI_TISSUE_MASK_REVISION:
 * SHA-256 over each mask's size and bytes, in order. */
#define RECORDED_MASK_REVISION 1
#define RECORDED_MASK_DIGEST \
  "fff1ad4a2ba013050ca0f98de992140d9ad347bdb0faf00efcaaeb65c55a77be"

typedef struct
{
  GChecksum *sum;
  guint masks;
} MaskDigest;

static GstPadProbeReturn
digest_mask (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  MaskDigest *digest = (MaskDigest *) data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstStructure *meta = wsi_slide_meta_get (buf);
  gint w = 0, h = 0;
  gsize size = gst_buffer_get_size (buf);
  guint8 *mask;
  gint32 dims[2];

  fail_unless (meta != NULL && gst_structure_get_int (meta,
          "overview-width", &w) && gst_structure_get_int (meta,
          "overview-height", &h) && w > 0 && h > 0);
  fail_unless ((gsize) w * h <= size);
  /* the mask is the buffer's last width x height bytes (design.md) */
  mask = (guint8 *) g_malloc ((gsize) w * h);
  fail_unless_equals_uint64 (gst_buffer_extract (buf, size - (gsize) w * h,
          mask, (gsize) w * h), (gsize) w * h);
  dims[0] = GINT32_TO_LE (w);
  dims[1] = GINT32_TO_LE (h);
  g_checksum_update (digest->sum, (const guchar *) dims, sizeof (dims));
  g_checksum_update (digest->sum, mask, (gsize) w * h);
  g_free (mask);
  digest->masks++;
  return GST_PAD_PROBE_OK;
}

static void
digest_masks_of (MaskDigest * digest, const gchar * slides,
    const gchar * method, gint thumbnail)
{
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" "
      "thumbnail-size=%d ! tissuemask name=mask method=%s "
      "mask-cache-size=0 ! fakesink sync=false", slides, thumbnail, method);
  GstElement *pipeline = gst_parse_launch (desc, NULL), *mask;
  GstMessage *msg;
  GstPad *pad;

  fail_unless (pipeline != NULL, "cannot parse %s", desc);
  mask = gst_bin_get_by_name (GST_BIN (pipeline), "mask");
  pad = gst_element_get_static_pad (mask, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, digest_mask, digest,
      NULL);
  gst_object_unref (pad);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipeline),
      GST_CLOCK_TIME_NONE, (GstMessageType) (GST_MESSAGE_EOS |
          GST_MESSAGE_ERROR));
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS,
      "%s did not end with EOS", desc);
  gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (mask);
  gst_object_unref (pipeline);
  g_free (desc);
}

/* Masks on disk are keyed by WSI_TISSUE_MASK_REVISION, not by the code
 * that made them: a change that alters any mask without raising the
 * revision would let later runs reuse masks of the old code. This test
 * ties the two: the digest of a fixed set of masks is recorded with the
 * revision it was made at. */
GST_START_TEST (test_mask_revision_matches_the_masks)
{
  gchar *slides = wsi_test_make_dir (WSI_TEST_TMPDIR, "revision-slides");
  static const gint thumbnails[] = { 1024, 300 };
  GEnumClass *methods;
  MaskDigest digest = { g_checksum_new (G_CHECKSUM_SHA256), 0 };
  GstElement *probe = gst_element_factory_make ("tissuemask", NULL);
  guint m, t;

  write_slides (slides, 2, 90);
  fail_unless (probe != NULL);
  methods = G_PARAM_SPEC_ENUM (g_object_class_find_property
      (G_OBJECT_GET_CLASS (probe), "method"))->enum_class;
  for (m = 0; m < methods->n_values; m++)
    for (t = 0; t < G_N_ELEMENTS (thumbnails); t++)
      digest_masks_of (&digest, slides, methods->values[m].value_nick,
          thumbnails[t]);
  fail_unless_equals_int (digest.masks,
      2 * methods->n_values * G_N_ELEMENTS (thumbnails));

  fail_unless (WSI_TISSUE_MASK_REVISION == RECORDED_MASK_REVISION,
      "WSI_TISSUE_MASK_REVISION is %d: record its digest here, "
      "RECORDED_MASK_REVISION %d and RECORDED_MASK_DIGEST \"%s\"",
      WSI_TISSUE_MASK_REVISION, WSI_TISSUE_MASK_REVISION,
      g_checksum_get_string (digest.sum));
  fail_unless (g_str_equal (g_checksum_get_string (digest.sum),
          RECORDED_MASK_DIGEST),
      "the masks changed (digest %s, recorded %s at revision %d): raise "
      "WSI_TISSUE_MASK_REVISION (ext/opencv/wsitissuedetect.h) so that "
      "masks stored on disk by the old code are not reused, and record the "
      "new digest here", g_checksum_get_string (digest.sum),
      RECORDED_MASK_DIGEST, RECORDED_MASK_REVISION);

  gst_object_unref (probe);
  g_checksum_free (digest.sum);
  g_free (slides);
}

GST_END_TEST;

static Suite *
maskstore_suite (void)
{
  Suite *s = suite_create ("maskstore");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_cold_and_warm_streams_are_the_same);
  tcase_add_test (tc, test_changed_slide_file_recomputes);
  tcase_add_test (tc, test_every_mask_setting_is_in_the_key);
  tcase_add_test (tc, test_damaged_file_warns_and_recomputes);
  tcase_add_test (tc, test_unwritable_folder_warns_once);
  tcase_add_test (tc, test_small_memory_cache_loads_once_a_visit);
  tcase_add_test (tc, test_mask_revision_matches_the_masks);
  return s;
}

GST_CHECK_MAIN (maskstore);
