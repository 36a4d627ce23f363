/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * bench-stages: patches a second per core of each per-patch stage alone.
 *
 * Every stage runs as "appsrc ! STAGE ! fakesink" with threads=1 on
 * synthetic tissue-like RGB patches (--size, default 256) that come from a
 * buffer pool, so a stage that writes in place does not pay for a copy and
 * no allocation is measured. Stages: patchfilter, patchaugment with each
 * operation alone at probability 1 and with all of them, patchbatch
 * (batches of 64, uint8 and normalize=true float32 NCHW), and the bare
 * "appsrc ! fakesink" for the feeding cost. Columns: wall-clock patches/s
 * and patches per CPU second of the whole process (the feeding thread
 * included), i.e. per core. --kernels also times the kernels of
 * wsiaugment.h and wsihsvfilter.h directly, without GStreamer, to tell
 * kernel cost from element overhead.
 *
 *   meson devenv -C build ./tests/benchmarks/bench-stages [--patches N]
 *       [--size PX] [--stage NAME] [--kernels]
 *
 * The goal is >= 5,000 256 px patches/s/core for every stage;
 * quote figures only from a quiet machine (docs/benchmarks.md).
 */

#include <math.h>
#include <string.h>
#include <sys/resource.h>
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include "wsiaugment.h"

#include "wsihsvfilter.h"

typedef struct
{
  const gchar *name;
  const gchar *element;         /* NULL: appsrc straight into fakesink */
} Stage;

#define NO_OPS "flip-h=0 flip-v=0 rotate90=0"

static const Stage stages[] = {
  {"feed only", NULL},
  {"patchfilter", "patchfilter threads=1"},
  {"augment: nothing", "patchaugment threads=1 " NO_OPS},
  {"augment: flip-h", "patchaugment threads=1 flip-h=1 flip-v=0 rotate90=0"},
  {"augment: flip-v", "patchaugment threads=1 flip-h=0 flip-v=1 rotate90=0"},
  {"augment: rotate90", "patchaugment threads=1 flip-h=0 flip-v=0 rotate90=1"},
  {"augment: hed", "patchaugment threads=1 " NO_OPS " hed-probability=1"},
  {"augment: jitter", "patchaugment threads=1 " NO_OPS
        " jitter-probability=1"},
  {"augment: blur", "patchaugment threads=1 " NO_OPS " blur-probability=1"},
  {"augment: grayscale", "patchaugment threads=1 " NO_OPS
        " grayscale-probability=1"},
  {"augment: solarize", "patchaugment threads=1 " NO_OPS
        " solarize-probability=1"},
  {"augment: all", "patchaugment threads=1 flip-h=1 flip-v=1 rotate90=1 "
        "hed-probability=1 jitter-probability=1 blur-probability=1 "
        "grayscale-probability=1 solarize-probability=1"},
  /* a training recipe's mix: every operation, each with its usual odds */
  {"augment: typical", "patchaugment threads=1 hed-probability=0.5 "
        "jitter-probability=0.8 blur-probability=0.5"},
  {"batch: uint8 NHWC", "patchbatch batch-size=64"},
  {"batch: float NCHW", "patchbatch batch-size=64 normalize=true"},
};

typedef struct
{
  guint patches;
  guint size;
  const gchar *only;
  gboolean kernels;
} Options;

/* Pink-and-purple noise over glass, like stained tissue. */
static void
fill_tissue (guint8 * p, gsize n_pixels, guint32 seed)
{
  gsize i;

  for (i = 0; i < n_pixels; i++, p += 3) {
    seed = seed * 1664525u + 1013904223u;
    if ((seed >> 28) < 3) {
      p[0] = p[1] = p[2] = 235 + (seed >> 8) % 20;
    } else {
      p[0] = 150 + (seed >> 24) % 100;
      p[1] = 80 + (seed >> 16) % 120;
      p[2] = 170 + (seed >> 8) % 80;
    }
  }
}

static gdouble
cpu_seconds (void)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static GstBufferPool *
make_pool (const GstVideoInfo * info)
{
  GstBufferPool *pool = gst_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  GstCaps *caps = gst_video_info_to_caps (info);
  GstBuffer *buffers[32];
  guint i;

  gst_buffer_pool_config_set_params (config, caps, info->size, 32, 32);
  gst_caps_unref (caps);
  if (!gst_buffer_pool_set_config (pool, config)
      || !gst_buffer_pool_set_active (pool, TRUE))
    g_error ("could not set up the buffer pool");
  /* Every pooled buffer holds its own patch. */
  for (i = 0; i < 32; i++) {
    GstMapInfo map;

    gst_buffer_pool_acquire_buffer (pool, &buffers[i], NULL);
    gst_buffer_map (buffers[i], &map, GST_MAP_WRITE);
    fill_tissue (map.data, map.size / 3, 17 + i);
    gst_buffer_unmap (buffers[i], &map);
  }
  for (i = 0; i < 32; i++)
    gst_buffer_unref (buffers[i]);
  return pool;
}

/* Runs one stage; returns FALSE on a pipeline error. */
static gboolean
run_stage (const Stage * stage, const Options * o, gdouble * wall,
    gdouble * cpu)
{
  gchar *launch = g_strdup_printf ("appsrc name=src format=time block=true "
      "max-buffers=16 caps=video/x-raw,format=RGB,width=%u,height=%u,"
      "framerate=0/1 ! %s%s fakesink sync=false", o->size, o->size,
      stage->element ? stage->element : "", stage->element ? " !" : "");
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (launch, &err);
  GstElement *src;
  GstBufferPool *pool;
  GstVideoInfo info;
  GstMessage *msg;
  GstBus *bus;
  gint64 t0;
  gdouble c0;
  gboolean ok;
  guint i;

  if (pipeline == NULL)
    g_error ("%s: %s", launch, err->message);
  g_free (launch);
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, o->size, o->size);
  pool = make_pool (&info);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  gst_element_set_state (pipeline, GST_STATE_PLAYING);

  t0 = g_get_monotonic_time ();
  c0 = cpu_seconds ();
  for (i = 0; i < o->patches; i++) {
    GstBuffer *buf = NULL;

    if (gst_buffer_pool_acquire_buffer (pool, &buf, NULL) != GST_FLOW_OK)
      break;
    /* Keys patchaugment's draws (no WsiPatchMeta: the offset does). */
    GST_BUFFER_OFFSET (buf) = i;
    if (gst_app_src_push_buffer (GST_APP_SRC (src), buf) != GST_FLOW_OK)
      break;
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  bus = gst_element_get_bus (pipeline);
  msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  *wall = (g_get_monotonic_time () - t0) * 1e-6;
  *cpu = cpu_seconds () - c0;
  ok = GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS && i == o->patches;
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gst_message_parse_error (msg, &err, NULL);
    g_printerr ("%s: %s\n", stage->name, err->message);
    g_clear_error (&err);
  }
  gst_message_unref (msg);
  gst_object_unref (bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (pipeline);
  gst_buffer_pool_set_active (pool, FALSE);
  gst_object_unref (pool);
  return ok;
}

/* ---- the kernels alone --------------------------------------------------- */

typedef void (*KernelFunc) (WsiAugmentImage * im, WsiAugmentScratch * s,
    guint i);

static void
k_flip_h (WsiAugmentImage * im, WsiAugmentScratch * s, guint i)
{
  wsi_augment_flip_rotate (im, TRUE, FALSE, 0, s);
}

static void
k_rotate (WsiAugmentImage * im, WsiAugmentScratch * s, guint i)
{
  wsi_augment_flip_rotate (im, FALSE, FALSE, 1 + i % 3, s);
}

static void
k_hed (WsiAugmentImage * im, WsiAugmentScratch * s, guint i)
{
  const gfloat alpha[3] = { 1.02f, 0.97f, 1.0f };
  const gfloat beta[3] = { 0.01f, -0.02f, 0.0f };

  wsi_augment_hed (im, alpha, beta, s);
}

static void
k_jitter (WsiAugmentImage * im, WsiAugmentScratch * s, guint i)
{
  wsi_augment_jitter (im, 1.1f, 0.9f, 1.1f, 0.02f, s);
}

static void
k_blur_1 (WsiAugmentImage * im, WsiAugmentScratch * s, guint i)
{
  wsi_augment_blur (im, 1.0f, 0, s);
}

static void
k_blur_2 (WsiAugmentImage * im, WsiAugmentScratch * s, guint i)
{
  wsi_augment_blur (im, 2.0f, 0, s);
}

static void
run_kernels (const Options * o)
{
  static const struct
  {
    const gchar *name;
    KernelFunc func;
  } kernels[] = {
    {"flip-h", k_flip_h}, {"rotate90", k_rotate}, {"hed", k_hed},
    {"jitter", k_jitter}, {"blur sigma 1", k_blur_1},
    {"blur sigma 2", k_blur_2},
  };
  const gsize bytes = (gsize) o->size * o->size * 3;
  guint8 *data = g_malloc (bytes);
  WsiAugmentScratch *scratch = wsi_augment_scratch_new ();
  WsiAugmentImage im = { data, o->size, o->size, o->size * 3, 3, 0, 1, 2 };
  WsiHsvRange range = { 90, 180, 8, 255, 103, 255 };
  WsiHsvLayout layout = { 3, 0, 1, 2 };
  WsiHsvFilter filter;
  guint64 counted = 0;
  guint k, i;
  gdouble c0, c;

  g_print ("\n%-22s %14s\n", "kernel alone", "patches/CPU-s");
  fill_tissue (data, bytes / 3, 5);
  wsi_hsv_filter_init (&filter, &range);
  c0 = cpu_seconds ();
  for (i = 0; i < o->patches; i++)
    counted += wsi_hsv_filter_count (&filter, data, o->size, o->size,
        o->size * 3, &layout);
  c = cpu_seconds () - c0;
  g_print ("%-22s %14.0f\n", "hsv filter count", o->patches / MAX (c, 1e-9));
  for (k = 0; k < G_N_ELEMENTS (kernels); k++) {
    fill_tissue (data, bytes / 3, 5);
    c0 = cpu_seconds ();
    for (i = 0; i < o->patches; i++)
      kernels[k].func (&im, scratch, i);
    c = cpu_seconds () - c0;
    g_print ("%-22s %14.0f\n", kernels[k].name, o->patches / MAX (c, 1e-9));
  }
  /* keeps the count alive */
  if (counted == G_MAXUINT64)
    g_print ("\n");
  wsi_augment_scratch_free (scratch);
  g_free (data);
}

int
main (int argc, char **argv)
{
  Options o = { 2000, 256, NULL, FALSE };
  GOptionEntry entries[] = {
    {"patches", 'n', 0, G_OPTION_ARG_INT, &o.patches,
        "Patches per stage (default 2000)", "N"},
    {"size", 's', 0, G_OPTION_ARG_INT, &o.size,
        "Patch side in pixels (default 256)", "PX"},
    {"stage", 0, 0, G_OPTION_ARG_STRING, &o.only,
        "Run only the stages whose name contains this", "NAME"},
    {"kernels", 'k', 0, G_OPTION_ARG_NONE, &o.kernels,
        "Also time the kernels without GStreamer", NULL},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("- per-patch stages, "
      "patches/s per core");
  GError *err = NULL;
  gboolean all_ok = TRUE;
  guint s;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    g_printerr ("%s\n", err->message);
    return 2;
  }
  g_option_context_free (ctx);
  if (o.patches < 1 || o.size < 8 || o.size > 4096) {
    g_printerr ("--patches must be >= 1 and --size 8 to 4096\n");
    return 2;
  }
#ifdef WSI_PLUGIN_DIRS
  if (g_getenv ("GST_PLUGIN_PATH") == NULL)
    for (const gchar * const *dir = (const gchar *[]) { WSI_PLUGIN_DIRS,
        NULL}; *dir; dir++)
      gst_registry_scan_path (gst_registry_get (), *dir);
#endif

  g_print ("%u patches of %u x %u RGB per stage, threads=1\n", o.patches,
      o.size, o.size);
  g_print ("%-22s %10s %12s %14s\n", "stage", "wall s", "patches/s",
      "patches/CPU-s");
  for (s = 0; s < G_N_ELEMENTS (stages); s++) {
    gdouble wall, cpu;

    if (o.only && strstr (stages[s].name, o.only) == NULL)
      continue;
    if (!run_stage (&stages[s], &o, &wall, &cpu)) {
      g_print ("%-22s %10s\n", stages[s].name, "FAILED");
      all_ok = FALSE;
      continue;
    }
    g_print ("%-22s %10.3f %12.0f %14.0f\n", stages[s].name, wall,
        o.patches / MAX (wall, 1e-9), o.patches / MAX (cpu, 1e-9));
  }
  if (o.kernels)
    run_kernels (&o);
  return all_ok ? 0 : 1;
}
