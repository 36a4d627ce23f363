/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* bench-cuda: host-to-device bandwidth of batch uploads, side by side in
 * one process (issue 25). Three ways to move the same batches (64 RGB
 * patches of 256x256 by default, 12.6 MB each) onto the GPU:
 *
 *   pinned        a bare cuMemcpyHtoDAsync loop from page-locked memory on
 *                 one stream, synchronised once per round: the device's
 *                 ceiling for this copy size
 *   wsicudaupload our element, fed from the pool it offers upstream (the
 *                 pinned pool patchbatch writes into), overlap on
 *   cudaupload    the stock element of gst-plugins-bad (nvcodec), fed from
 *                 whatever pool it offers (none in 1.22: pageable memory)
 *
 * The elements run in a GstHarness: push a batch, pull what came out; the
 * figure is bytes pushed over the wall time from the first push to the
 * last output (EOS drained). Each way runs --rounds times, alternated, and
 * the median is printed with the ratio to the bare loop (goal: >= 80%).
 *
 * Needs an NVIDIA GPU and driver; without one it says so and exits 77.
 *   bench-cuda [--batches 200] [--rounds 5] [--batch-size 64] [--patch 256]
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#ifndef GST_USE_UNSTABLE_API
#define GST_USE_UNSTABLE_API
#endif
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <gst/gst.h>
#include <gst/check/gstharness.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/cuda-gst.h>

static gint n_batches = 200;
static gint n_rounds = 5;
static gint batch_size = 64;
static gint patch = 256;

typedef CUresult (CUDAAPI * MemcpyHtoDAsyncFunc) (CUdeviceptr dst,
    const void *src, size_t bytes, CUstream stream);

static gsize
batch_bytes (void)
{
  return (gsize) patch * 3 * patch * batch_size;
}

static void
fill_random (guint8 * data, gsize size, guint32 seed)
{
  GRand *rand = g_rand_new_with_seed (seed);
  gsize i;

  for (i = 0; i + 4 <= size; i += 4) {
    guint32 v = g_rand_int (rand);
    memcpy (data + i, &v, 4);
  }
  g_rand_free (rand);
}

#define CHECK_CU(call) G_STMT_START {                                    \
  CUresult _r = (call);                                                  \
  if (_r != CUDA_SUCCESS) {                                              \
    g_printerr ("%s failed: %d\n", #call, (gint) _r);                    \
    exit (1);                                                            \
  }                                                                      \
} G_STMT_END

/* ---- the bare loop ------------------------------------------------------ */

#define N_HOST 4

/* GB/s of cuMemcpyHtoDAsync from pinned memory, N_HOST host batches
 * rotated into as many device batches, one sync at the end. */
static gdouble
run_pinned (GstCudaContext * ctx, MemcpyHtoDAsyncFunc memcpy_htod_async)
{
  gsize size = batch_bytes ();
  void *host[N_HOST];
  CUdeviceptr dev[N_HOST];
  CUstream stream;
  gint64 start, end;
  gint i;

  if (!gst_cuda_context_push (ctx)) {
    g_printerr ("cannot push the CUDA context\n");
    exit (1);
  }
  CHECK_CU (CuStreamCreate (&stream, CU_STREAM_NON_BLOCKING));
  for (i = 0; i < N_HOST; i++) {
    CHECK_CU (CuMemAllocHost (&host[i], size));
    CHECK_CU (CuMemAlloc (&dev[i], size));
    fill_random (host[i], size, i + 1);
  }
  /* warm-up */
  for (i = 0; i < 8; i++)
    CHECK_CU (memcpy_htod_async (dev[i % N_HOST], host[i % N_HOST], size,
            stream));
  CHECK_CU (CuStreamSynchronize (stream));
  start = g_get_monotonic_time ();
  for (i = 0; i < n_batches; i++)
    CHECK_CU (memcpy_htod_async (dev[i % N_HOST], host[i % N_HOST], size,
            stream));
  CHECK_CU (CuStreamSynchronize (stream));
  end = g_get_monotonic_time ();
  for (i = 0; i < N_HOST; i++) {
    CHECK_CU (CuMemFreeHost (host[i]));
    CHECK_CU (CuMemFree (dev[i]));
  }
  CHECK_CU (CuStreamDestroy (stream));
  gst_cuda_context_pop (NULL);
  return (gdouble) size * n_batches / ((end - start) / 1e6) / 1e9;
}

/* ---- the elements --------------------------------------------------------- */

/* Batches to push: from the pool the element offers upstream when it offers
 * one (so wsicudaupload gets its pinned memory, as behind patchbatch), else
 * plain system memory. Sets @pool_memory to the memory type used. */
static GstBuffer **
make_input_batches (GstHarness * h, const gchar * caps_str,
    const gchar ** pool_memory, GstBufferPool ** pool_out)
{
  GstCaps *caps = gst_caps_from_string (caps_str);
  GstQuery *query = gst_query_new_allocation (caps, TRUE);
  GstBufferPool *pool = NULL;
  GstBuffer **bufs = g_new0 (GstBuffer *, N_HOST);
  gint i;

  if (gst_pad_peer_query (h->srcpad, query)
      && gst_query_get_n_allocation_pools (query) > 0)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, NULL, NULL, NULL);
  if (pool != NULL) {
    GstStructure *config = gst_buffer_pool_get_config (pool);
    guint min = 0, max = 0;

    gst_buffer_pool_config_get_params (config, NULL, NULL, &min, &max);
    if (max != 0 && max < N_HOST + 2)
      gst_buffer_pool_config_set_params (config, caps, batch_bytes (),
          min, N_HOST + 2);
    gst_buffer_pool_set_config (pool, config);
    if (!gst_buffer_pool_set_active (pool, TRUE)) {
      g_printerr ("cannot activate the offered pool\n");
      exit (1);
    }
  }
  for (i = 0; i < N_HOST; i++) {
    GstMapInfo map;

    if (pool != NULL) {
      if (gst_buffer_pool_acquire_buffer (pool, &bufs[i], NULL) != GST_FLOW_OK) {
        g_printerr ("cannot acquire a buffer from the offered pool\n");
        exit (1);
      }
    } else {
      bufs[i] = gst_buffer_new_allocate (NULL, batch_bytes (), NULL);
    }
    gst_buffer_map (bufs[i], &map, GST_MAP_WRITE);
    fill_random (map.data, map.size, 100 + i);
    gst_buffer_unmap (bufs[i], &map);
  }
  *pool_memory = gst_buffer_peek_memory (bufs[0], 0)->allocator ?
      gst_buffer_peek_memory (bufs[0], 0)->allocator->mem_type : "?";
  *pool_out = pool;
  gst_query_unref (query);
  gst_caps_unref (caps);
  return bufs;
}

/* Pulls and drops every batch the element has pushed so far; each must be
 * in CUDA memory. */
static guint
drain (GstHarness * h)
{
  GstBuffer *out;
  guint n = 0;

  while ((out = gst_harness_try_pull (h))) {
    if (!gst_is_cuda_memory (gst_buffer_peek_memory (out, 0))) {
      g_printerr ("output batch is not in CUDA memory\n");
      exit (1);
    }
    gst_buffer_unref (out);
    n++;
  }
  return n;
}

/* GB/s of @factory moving n_batches batches through a harness. */
static gdouble
run_element (const gchar * factory, const gchar ** pool_memory)
{
  gchar *in_caps = g_strdup_printf ("video/x-raw,format=RGB,width=%d,"
      "height=%d,framerate=0/1", patch, patch * batch_size);
  gchar *out_caps = g_strdup_printf ("video/x-raw(memory:CUDAMemory),"
      "format=RGB,width=%d,height=%d,framerate=0/1", patch,
      patch * batch_size);
  GstHarness *h = gst_harness_new (factory);
  GstBufferPool *pool = NULL;
  GstBuffer **bufs;
  gint64 start, end;
  guint pulled = 0;
  gint i;

  gst_harness_set_caps_str (h, in_caps, out_caps);
  bufs = make_input_batches (h, in_caps, pool_memory, &pool);
  /* warm-up: allocations of the output pool, first copies */
  for (i = 0; i < 8; i++) {
    gst_harness_push (h, gst_buffer_ref (bufs[i % N_HOST]));
    drain (h);
  }
  start = g_get_monotonic_time ();
  for (i = 0; i < n_batches; i++) {
    if (gst_harness_push (h, gst_buffer_ref (bufs[i % N_HOST])) != GST_FLOW_OK) {
      g_printerr ("%s: push failed\n", factory);
      exit (1);
    }
    pulled += drain (h);
  }
  /* EOS makes an overlapping upload push the batch it holds back */
  gst_harness_push_event (h, gst_event_new_eos ());
  pulled += drain (h);
  end = g_get_monotonic_time ();
  if (pulled < (guint) n_batches - 1) {
    g_printerr ("%s: %u of %d batches came out\n", factory, pulled,
        n_batches);
    exit (1);
  }
  for (i = 0; i < N_HOST; i++)
    gst_buffer_unref (bufs[i]);
  g_free (bufs);
  gst_harness_teardown (h);
  if (pool != NULL) {
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
  }
  g_free (in_caps);
  g_free (out_caps);
  return (gdouble) batch_bytes () * n_batches / ((end - start) / 1e6) / 1e9;
}

static gint
compare_doubles (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return (x > y) - (x < y);
}

static gdouble
median (gdouble * v, gint n)
{
  qsort (v, n, sizeof (gdouble), compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int
main (int argc, char **argv)
{
  GOptionEntry entries[] = {
    {"batches", 0, 0, G_OPTION_ARG_INT, &n_batches, "Batches per run", "N"},
    {"rounds", 0, 0, G_OPTION_ARG_INT, &n_rounds, "Alternated rounds", "N"},
    {"batch-size", 0, 0, G_OPTION_ARG_INT, &batch_size, "Patches per batch",
        "N"},
    {"patch", 0, 0, G_OPTION_ARG_INT, &patch, "Patch side in pixels", "P"},
    {NULL}
  };
  GOptionContext *opts = g_option_context_new ("- batch upload bandwidth");
  GError *err = NULL;
  GstCudaContext *ctx;
  void *libcuda;
  MemcpyHtoDAsyncFunc memcpy_htod_async;
  gboolean have_stock;
  gdouble *pinned, *ours, *stock;
  const gchar *ours_mem = "?", *stock_mem = "?";
  gchar name[256] = "";
  CUdevice dev;
  gint r, count = 0, driver = 0;

  g_option_context_add_main_entries (opts, entries, NULL);
  g_option_context_add_group (opts, gst_init_get_option_group ());
  if (!g_option_context_parse (opts, &argc, &argv, &err)) {
    g_printerr ("%s\n", err->message);
    return 2;
  }
  g_option_context_free (opts);
  if (n_batches < 1 || n_rounds < 1 || batch_size < 1 || patch < 1) {
    g_printerr ("--batches, --rounds, --batch-size and --patch must be >= 1\n");
    return 2;
  }
  if (!gst_cuda_load_library () || CuInit (0) != CUDA_SUCCESS
      || CuDeviceGetCount (&count) != CUDA_SUCCESS || count < 1) {
    g_print ("SKIP: no CUDA device\n");
    return 77;
  }
  libcuda = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  memcpy_htod_async = libcuda ? (MemcpyHtoDAsyncFunc) dlsym (libcuda,
      "cuMemcpyHtoDAsync_v2") : NULL;
  if (memcpy_htod_async == NULL) {
    g_printerr ("cuMemcpyHtoDAsync_v2 not found in libcuda.so.1\n");
    return 1;
  }
  CuDeviceGet (&dev, 0);
  CuDeviceGetName (name, sizeof (name), dev);
  CuDriverGetVersion (&driver);
  ctx = gst_cuda_context_new (0);
  have_stock = gst_registry_check_feature_version (gst_registry_get (),
      "cudaupload", 1, 0, 0);

  g_print ("device: %s, CUDA driver API %d.%d\n", name, driver / 1000,
      (driver % 1000) / 10);
  g_print ("batch: %d RGB patches of %dx%d = %.1f MB; %d batches per run, "
      "%d alternated rounds\n", batch_size, patch, patch, batch_bytes () / 1e6,
      n_batches, n_rounds);
  pinned = g_new0 (gdouble, n_rounds);
  ours = g_new0 (gdouble, n_rounds);
  stock = g_new0 (gdouble, n_rounds);
  for (r = 0; r < n_rounds; r++) {
    pinned[r] = run_pinned (ctx, memcpy_htod_async);
    ours[r] = run_element ("wsicudaupload", &ours_mem);
    if (have_stock)
      stock[r] = run_element ("cudaupload", &stock_mem);
    g_print ("round %d: pinned %.2f GB/s, wsicudaupload %.2f, cudaupload "
        "%s%.2f\n", r + 1, pinned[r], ours[r], have_stock ? "" : "n/a ",
        stock[r]);
  }
  {
    gdouble p = median (pinned, n_rounds), o = median (ours, n_rounds);
    gdouble s = median (stock, n_rounds);

    g_print ("\nhost-to-device, median of %d rounds (GB/s = 10^9 bytes/s)\n",
        n_rounds);
    g_print ("%-40s %8s %10s\n", "way", "GB/s", "of pinned");
    g_print ("%-40s %8.2f %9.0f%%\n", "bare cuMemcpyHtoDAsync, pinned", p,
        100.0);
    g_print ("%-40s %8.2f %9.0f%%  (input memory: %s)\n",
        "wsicudaupload (its pinned pool)", o, 100 * o / p, ours_mem);
    if (have_stock)
      g_print ("%-40s %8.2f %9.0f%%  (input memory: %s)\n",
          "cudaupload (stock, gst-plugins-bad)", s, 100 * s / p, stock_mem);
    else
      g_print ("%-40s      n/a  (no cudaupload element: nvcodec missing)\n",
          "cudaupload (stock, gst-plugins-bad)");
    g_print ("goal: wsicudaupload >= 80%% of pinned: %s (%.0f%%)\n",
        o >= 0.8 * p ? "met" : "NOT met", 100 * o / p);
  }
  g_free (pinned);
  g_free (ours);
  g_free (stock);
  gst_object_unref (ctx);
  return 0;
}
