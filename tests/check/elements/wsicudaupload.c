/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit tests for wsicudaupload and the tensor helper. As in gst-plugins-bad
 * tests/check/elements/cudafilter.c, the cases that need a GPU are only
 * added when a CUDA device is usable (and CK_FORK=no, since CUDA does not
 * survive fork()); elsewhere they are skipped and the run says so. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#ifndef GST_USE_UNSTABLE_API
#define GST_USE_UNSTABLE_API
#endif
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/cuda-gst.h>
#include <gst/wsi/wsirecord.h>

#include "wsicudatensor.h"
#include "wsitestutil.h"

#define PATCH 8
#define BATCH 4
#define BATCH_CAPS "video/x-raw,format=RGBx,width=8,height=32,framerate=0/1"

static guint8
pixel_value (guint n, guint y, guint x, guint c)
{
  return (guint8) (n * 61 + y * 17 + x * 5 + c);
}

/* A batch of BATCH square RGBx patches with rows padded to @stride bytes
 * (described by a GstVideoMeta when padded) and a WsiPatchMeta. */
static GstBuffer *
make_batch (guint stride, guint64 first_sequence)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, stride * PATCH * BATCH, NULL);
  WsiPatchRecord records[BATCH] = { {0}, };
  const gchar *paths[BATCH + 1] = { "a.svs", "b.svs", "c.svs", "d.svs", NULL };
  const gchar *labels[BATCH + 1] = { "", "", "", "", NULL };
  GstMapInfo map;
  guint n, y, x, c;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  memset (map.data, 0xEE, map.size);
  for (n = 0; n < BATCH; n++)
    for (y = 0; y < PATCH; y++)
      for (x = 0; x < PATCH; x++)
        for (c = 0; c < 4; c++)
          map.data[(n * PATCH + y) * stride + x * 4 + c] =
              pixel_value (n, y, x, c);
  gst_buffer_unmap (buf, &map);

  if (stride != PATCH * 4) {
    gsize offsets[GST_VIDEO_MAX_PLANES] = { 0, };
    gint strides[GST_VIDEO_MAX_PLANES] = { (gint) stride, };
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_FORMAT_RGBx, PATCH, PATCH * BATCH, 1, offsets, strides);
  }
  for (n = 0; n < BATCH; n++) {
    records[n].sequence = first_sequence + n;
    records[n].x = 1000 + n;
    records[n].out_size = PATCH;
  }
  wsi_patch_meta_add (buf, records, BATCH, paths, labels);
  GST_BUFFER_OFFSET (buf) = first_sequence / BATCH;
  return buf;
}

/* ---- without a GPU --------------------------------------------------- */

/* Set before the suite runs: the GPU checks skip (and say so) without a
 * device. */
static gboolean have_gpu;

#define SKIP_WITHOUT_GPU() G_STMT_START {                                \
  if (!have_gpu) {                                                       \
    WSI_TEST_SKIP ("no CUDA device");                                    \
    return;                                                              \
  }                                                                      \
} G_STMT_END

GST_START_TEST (test_pad_templates)
{
  GstElementFactory *factory = gst_element_factory_find ("wsicudaupload");
  const GList *l;
  gboolean cuda_src = FALSE, sysmem_sink = FALSE;

  fail_unless (factory != NULL, "wsicudaupload is not registered");
  for (l = gst_element_factory_get_static_pad_templates (factory); l;
      l = l->next) {
    GstStaticPadTemplate *templ = l->data;
    GstCaps *caps = gst_static_pad_template_get_caps (templ);
    GstCapsFeatures *features = gst_caps_get_features (caps, 0);

    if (templ->direction == GST_PAD_SRC)
      cuda_src = gst_caps_features_contains (features,
          GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
    else
      sysmem_sink = gst_caps_features_is_equal (features,
          GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY);
    gst_caps_unref (caps);
  }
  fail_unless (cuda_src, "src pad does not produce CUDA memory");
  fail_unless (sysmem_sink, "sink pad does not take system memory");
  gst_object_unref (factory);
}

GST_END_TEST;

/* No driver or no device: NULL→READY fails with an error that says why. */
GST_START_TEST (test_no_device_fails_cleanly)
{
  GstElement *upload = gst_element_factory_make ("wsicudaupload", NULL);
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err = NULL;
  gint i;

  gst_element_set_bus (upload, bus);
  /* twice: a failed open must leave the element reusable */
  for (i = 0; i < 2; i++) {
    fail_unless_equals_int (gst_element_set_state (upload, GST_STATE_READY),
        GST_STATE_CHANGE_FAILURE);
    msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
    fail_unless (msg != NULL, "no error message posted");
    gst_message_parse_error (msg, &err, NULL);
    fail_unless (err->domain == GST_RESOURCE_ERROR);
    fail_unless (strstr (err->message, "CUDA") != NULL, "%s", err->message);
    g_clear_error (&err);
    gst_message_unref (msg);
    gst_element_set_state (upload, GST_STATE_NULL);
  }
  gst_element_set_bus (upload, NULL);
  gst_object_unref (bus);
  gst_object_unref (upload);
}

GST_END_TEST;

/* The tensor helper on system memory: shape, padded strides, values read
 * through the strides, and the buffer kept alive by the view. */
GST_START_TEST (test_tensor_system_memory)
{
  GstCaps *caps = gst_caps_from_string (BATCH_CAPS);
  const guint stride = PATCH * 4 + 12;
  GstBuffer *buf = make_batch (stride, 0);
  const gchar *error = "unset";
  WsiTensor *t = wsi_tensor_new (buf, caps, 0, &error);
  guint n, y, x, c;

  fail_unless (t != NULL, "%s", error);
  fail_unless (error == NULL);
  fail_unless_equals_int (t->is_cuda, 0);
  fail_unless_equals_int (t->device_id, -1);
  fail_unless_equals_int64 (t->shape[0], BATCH);
  fail_unless_equals_int64 (t->shape[1], PATCH);
  fail_unless_equals_int64 (t->shape[2], PATCH);
  fail_unless_equals_int64 (t->shape[3], 4);
  fail_unless_equals_int64 (t->strides[0], (gint64) stride * PATCH);
  fail_unless_equals_int64 (t->strides[1], stride);
  fail_unless_equals_int64 (t->strides[2], 4);
  fail_unless_equals_int64 (t->strides[3], 1);

  /* the caller may drop its ref: the view keeps the batch */
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (buf), 2);
  gst_buffer_unref (buf);
  for (n = 0; n < BATCH; n++)
    for (y = 0; y < PATCH; y++)
      for (x = 0; x < PATCH; x++)
        for (c = 0; c < 4; c++) {
          const guint8 *p = (const guint8 *) (guintptr) t->data
              + n * t->strides[0] + y * t->strides[1] + x * t->strides[2]
              + c * t->strides[3];
          fail_unless_equals_int (*p, pixel_value (n, y, x, c));
        }
  wsi_tensor_free (t);

  /* non-square patches: 8 rows of 4 */
  buf = make_batch (PATCH * 4, 0);
  t = wsi_tensor_new (buf, caps, 4, &error);
  fail_unless (t != NULL, "%s", error);
  fail_unless_equals_int64 (t->shape[0], 8);
  fail_unless_equals_int64 (t->strides[0], PATCH * 4 * 4);
  wsi_tensor_free (t);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (buf), 1);
  gst_buffer_unref (buf);
  gst_caps_unref (caps);
}

GST_END_TEST;

GST_START_TEST (test_tensor_refuses_what_needs_a_copy)
{
  GstCaps *caps = gst_caps_from_string (BATCH_CAPS);
  GstCaps *i420 = gst_caps_from_string ("video/x-raw,format=I420,width=8,"
      "height=32,framerate=0/1");
  GstBuffer *buf = make_batch (PATCH * 4, 0);
  const gchar *error = NULL;

  /* 32 rows are not a whole number of 5-row patches */
  fail_unless (wsi_tensor_new (buf, caps, 5, &error) == NULL);
  fail_unless (error != NULL && strstr (error, "patches"));
  /* planar YUV is no NHWC tensor */
  fail_unless (wsi_tensor_new (buf, i420, 0, &error) == NULL);
  /* two memories would have to be merged, i.e. copied */
  gst_buffer_append_memory (buf, gst_allocator_alloc (NULL, 16, NULL));
  fail_unless (wsi_tensor_new (buf, caps, 0, &error) == NULL);
  fail_unless (strstr (error, "memories") != NULL);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (buf), 1);

  gst_buffer_unref (buf);
  gst_caps_unref (i420);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* ---- with a GPU ------------------------------------------------------ */

static GstHarness *
upload_harness (gboolean overlap)
{
  GstHarness *h = gst_harness_new ("wsicudaupload");

  g_object_set (h->element, "overlap", overlap, NULL);
  gst_harness_set_caps_str (h, BATCH_CAPS, "video/x-raw(memory:CUDAMemory),"
      "format=RGBx,width=8,height=32,framerate=0/1");
  return h;
}

static void
check_uploaded (GstBuffer * out, guint64 first_sequence)
{
  GstMemory *mem = gst_buffer_peek_memory (out, 0);
  GstStructure *meta = wsi_patch_meta_get (out);
  const WsiPatchRecord *records;
  GstMapInfo map;
  guint n_records, n, y, x, c;
  gint pitch;

  fail_unless (gst_is_cuda_memory (mem), "output is not CUDA memory");
  fail_unless (meta != NULL, "WsiPatchMeta lost in the upload");
  records = wsi_patch_meta_records (meta, &n_records);
  fail_unless_equals_int (n_records, BATCH);
  for (n = 0; n < BATCH; n++) {
    fail_unless_equals_uint64 (records[n].sequence, first_sequence + n);
    fail_unless_equals_int64 (records[n].x, 1000 + n);
  }
  fail_unless_equals_string (wsi_patch_meta_string (meta, "paths", 2),
      "c.svs");

  /* a CPU map downloads: the pixels are the ones we sent */
  pitch = GST_VIDEO_INFO_PLANE_STRIDE (&GST_CUDA_MEMORY_CAST (mem)->info, 0);
  fail_unless (gst_memory_map (mem, &map, GST_MAP_READ));
  for (n = 0; n < BATCH; n++)
    for (y = 0; y < PATCH; y++)
      for (x = 0; x < PATCH; x++)
        for (c = 0; c < 4; c++)
          fail_unless_equals_int (map.data[(n * PATCH + y) * pitch + x * 4 + c],
              pixel_value (n, y, x, c));
  gst_memory_unmap (mem, &map);
}

GST_START_TEST (test_upload_keeps_pixels_and_meta)
{
  GstHarness *h;
  GstBuffer *out;

  SKIP_WITHOUT_GPU ();
  h = upload_harness (FALSE);
  /* padded input rows: the copy must follow the GstVideoMeta */
  out = gst_harness_push_and_pull (h, make_batch (PATCH * 4 + 12, 0));
  fail_unless (out != NULL);
  check_uploaded (out, 0);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (out), 0);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* overlap holds one batch back until the next arrives or EOS */
GST_START_TEST (test_overlap_holds_one_batch)
{
  GstHarness *h;
  GstBuffer *out;
  guint i;

  SKIP_WITHOUT_GPU ();
  h = upload_harness (TRUE);
  fail_unless_equals_int (gst_harness_push (h, make_batch (PATCH * 4, 0)),
      GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_buffers_received (h), 0);
  for (i = 1; i < 3; i++)
    fail_unless_equals_int (gst_harness_push (h, make_batch (PATCH * 4,
                i * BATCH)), GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_buffers_received (h), 2);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_received (h), 3);
  for (i = 0; i < 3; i++) {
    out = gst_harness_pull (h);
    check_uploaded (out, i * BATCH);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

/* upstream is offered a pool of pinned memory */
GST_START_TEST (test_offers_pinned_pool)
{
  GstHarness *h;
  GstCaps *caps;
  GstQuery *query;
  GstBufferPool *pool = NULL;
  GstBuffer *buf = NULL;

  SKIP_WITHOUT_GPU ();
  h = upload_harness (TRUE);
  caps = gst_caps_from_string (BATCH_CAPS);
  query = gst_query_new_allocation (caps, TRUE);
  fail_unless (gst_pad_peer_query (h->srcpad, query));
  fail_unless (gst_query_get_n_allocation_pools (query) > 0);
  gst_query_parse_nth_allocation_pool (query, 0, &pool, NULL, NULL, NULL);
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &buf, NULL),
      GST_FLOW_OK);
  fail_unless (gst_memory_is_type (gst_buffer_peek_memory (buf, 0),
          "WsiCudaHostMemory"), "offered memory is not pinned");
  gst_buffer_unref (buf);
  gst_buffer_pool_set_active (pool, FALSE);
  gst_object_unref (pool);
  gst_query_unref (query);
  gst_caps_unref (caps);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_tensor_cuda_memory)
{
  GstHarness *h;
  GstCaps *caps;
  GstBuffer *out;
  const gchar *error = NULL;
  WsiTensor *t;

  SKIP_WITHOUT_GPU ();
  h = upload_harness (FALSE);
  caps = gst_caps_from_string (BATCH_CAPS);
  out = gst_harness_push_and_pull (h, make_batch (PATCH * 4, 0));
  t = wsi_tensor_new (out, caps, 0, &error);
  fail_unless (t != NULL, "%s", error);
  fail_unless_equals_int (t->is_cuda, 1);
  fail_unless (t->device_id >= 0);
  fail_unless_equals_int64 (t->shape[0], BATCH);
  fail_unless (t->strides[1] >= PATCH * 4);
  fail_unless_equals_int64 (t->strides[0], t->strides[1] * PATCH);
  wsi_tensor_free (t);
  gst_buffer_unref (out);
  gst_caps_unref (caps);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* ---- the whole pipeline into the GPU ---------------------------------- */

#define PIPE_PATCH 64
#define PIPE_BATCH 8
#define PIPE_BATCHES 6

/* One batch as it reached the appsink: its pixels with tight rows (copied
 * back from the GPU for CUDA memory) and its patches' sequence numbers and
 * positions, to compare a GPU run with a CPU run of the same seed. */
typedef struct
{
  GByteArray *pixels;
  GArray *records;              /* WsiPatchRecord */
} PulledBatch;

static void
pulled_batch_free (gpointer data)
{
  PulledBatch *b = data;

  g_byte_array_unref (b->pixels);
  g_array_unref (b->records);
  g_free (b);
}

static const gchar *
pipeline_slide_dir (void)
{
  static gchar *dir;

  if (dir == NULL) {
    WsiTestSlideSpec spec;

    dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "slides");
    wsi_test_slide_spec_init (&spec);
    spec.width = 2048;
    spec.height = 1536;
    spec.tile_size = 256;
    spec.levels = 3;
    spec.level_step = 2;
    spec.mpp = 0.25;
    spec.tissue_blobs = 3;
    spec.seed = 11;
    g_free (wsi_test_write_slide (dir, "slide00.tiff", &spec));
  }
  return dir;
}

/* Copies the frame of a CUDA memory back with cuMemcpy2D from the device
 * pointer that GST_MAP_CUDA gives, so the bytes compared are the ones in
 * device memory (a plain CPU map could serve a host-side staging copy). */
static void
download_cuda_frame (GstMemory * mem, guint8 * dst, gsize row_bytes,
    guint rows)
{
  GstCudaMemory *cmem = GST_CUDA_MEMORY_CAST (mem);
  CUDA_MEMCPY2D copy = { 0, };
  GstMapInfo map;
  CUresult res;

  fail_unless (gst_memory_map (mem, &map, GST_MAP_READ | GST_MAP_CUDA),
      "cannot map the batch's CUDA memory");
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = (CUdeviceptr) (guintptr) map.data;
  copy.srcPitch = GST_VIDEO_INFO_PLANE_STRIDE (&cmem->info, 0);
  copy.dstMemoryType = CU_MEMORYTYPE_HOST;
  copy.dstHost = dst;
  copy.dstPitch = row_bytes;
  copy.WidthInBytes = row_bytes;
  copy.Height = rows;
  fail_unless (gst_cuda_context_push (cmem->context));
  res = CuMemcpy2D (&copy);
  gst_cuda_context_pop (NULL);
  gst_memory_unmap (mem, &map);
  fail_unless_equals_int (res, CUDA_SUCCESS);
}

static PulledBatch *
pulled_batch_new (GstSample * sample, gboolean expect_cuda)
{
  GstBuffer *buf = gst_sample_get_buffer (sample);
  GstMemory *mem = gst_buffer_peek_memory (buf, 0);
  GstStructure *meta = wsi_patch_meta_get (buf);
  PulledBatch *b = g_new0 (PulledBatch, 1);
  const WsiPatchRecord *records;
  GstVideoInfo info;
  gsize row_bytes;
  guint n_records, rows, y;

  fail_unless (gst_video_info_from_caps (&info, gst_sample_get_caps (sample)));
  row_bytes = (gsize) GST_VIDEO_INFO_WIDTH (&info) *
      GST_VIDEO_INFO_COMP_PSTRIDE (&info, 0);
  rows = GST_VIDEO_INFO_HEIGHT (&info);
  b->pixels = g_byte_array_sized_new (row_bytes * rows);
  g_byte_array_set_size (b->pixels, row_bytes * rows);
  fail_unless_equals_int (gst_buffer_n_memory (buf), 1);
  fail_unless_equals_int (gst_is_cuda_memory (mem), expect_cuda);
  if (expect_cuda) {
    download_cuda_frame (mem, b->pixels->data, row_bytes, rows);
  } else {
    GstVideoFrame frame;

    fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_READ));
    for (y = 0; y < rows; y++)
      memcpy (b->pixels->data + y * row_bytes,
          (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame, 0)
          + y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0), row_bytes);
    gst_video_frame_unmap (&frame);
  }
  fail_unless (meta != NULL, "WsiPatchMeta lost on the way to the sink");
  records = wsi_patch_meta_records (meta, &n_records);
  b->records = g_array_sized_new (FALSE, FALSE, sizeof (WsiPatchRecord),
      n_records);
  g_array_append_vals (b->records, records, n_records);
  return b;
}

/* Runs the pipeline with @upload ("" for none) before the appsink and
 * returns its batches (PulledBatch). */
static GPtrArray *
pull_pipeline_batches (const gchar * upload, gboolean expect_cuda)
{
  GPtrArray *batches = g_ptr_array_new_with_free_func (pulled_batch_free);
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=7 ! "
      "tissuemask ! queue max-size-buffers=4 ! "
      "patchsampler patch-size=%d target-mpp=0.5 patches-per-slide=%d ! "
      "patchinterleave ! patchreader threads=2 ! "
      "queue max-size-buffers=64 max-size-bytes=0 max-size-time=0 ! "
      "patchbatch batch-size=%d ! %s appsink name=sink sync=false",
      pipeline_slide_dir (), PIPE_PATCH, PIPE_BATCH * PIPE_BATCHES,
      PIPE_BATCH, upload);
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &err);
  GstElement *sink;
  GstBus *bus;
  GstSample *sample;
  guint idle_s = 0;

  fail_unless (pipeline != NULL, "%s: %s", desc, err ? err->message : "?");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  bus = gst_element_get_bus (pipeline);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_PLAYING),
      GST_STATE_CHANGE_ASYNC);
  /* CK_FORK=no has no test timeout: an error must end the test, not a hang */
  while (!gst_app_sink_is_eos (GST_APP_SINK (sink))) {
    gchar *error = wsi_test_pop_message_text (bus, GST_MESSAGE_ERROR);

    fail_unless (error == NULL, "%s: %s", upload, error);
    sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), GST_SECOND);
    if (sample == NULL) {
      fail_unless (++idle_s < 60, "%s: no batch and no EOS within 60 s",
          upload);
      continue;
    }
    idle_s = 0;
    g_ptr_array_add (batches, pulled_batch_new (sample, expect_cuda));
    gst_sample_unref (sample);
  }
  gst_object_unref (bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (desc);
  return batches;
}

static void
check_same_batches (GPtrArray * gpu, GPtrArray * cpu, const gchar * upload)
{
  guint i, r;

  fail_unless_equals_int (cpu->len, PIPE_BATCHES);
  fail_unless_equals_int (gpu->len, cpu->len);
  for (i = 0; i < cpu->len; i++) {
    PulledBatch *g = g_ptr_array_index (gpu, i);
    PulledBatch *c = g_ptr_array_index (cpu, i);

    fail_unless_equals_int (g->records->len, c->records->len);
    for (r = 0; r < c->records->len; r++) {
      WsiPatchRecord *gr = &g_array_index (g->records, WsiPatchRecord, r);
      WsiPatchRecord *cr = &g_array_index (c->records, WsiPatchRecord, r);

      fail_unless_equals_uint64 (gr->sequence, cr->sequence);
      fail_unless_equals_int64 (gr->x, cr->x);
      fail_unless_equals_int64 (gr->y, cr->y);
    }
    fail_unless_equals_int (g->pixels->len, c->pixels->len);
    fail_unless (memcmp (g->pixels->data, c->pixels->data,
            c->pixels->len) == 0, "%s: batch %u differs from the CPU batch",
        upload, i);
  }
}

/* The README pipeline into the GPU: every batch arrives in CUDA memory and
 * the device bytes equal the CPU run's batch for the same seed, patch
 * records included, through wsicudaupload (both overlap modes). */
GST_START_TEST (test_pipeline_wsicudaupload_equals_cpu)
{
  GPtrArray *cpu, *gpu;

  SKIP_WITHOUT_GPU ();
  cpu = pull_pipeline_batches ("", FALSE);
  gpu = pull_pipeline_batches ("queue max-size-buffers=2 max-size-bytes=0 "
      "max-size-time=0 ! wsicudaupload !", TRUE);
  check_same_batches (gpu, cpu, "wsicudaupload");
  g_ptr_array_unref (gpu);
  gpu = pull_pipeline_batches ("wsicudaupload overlap=false !", TRUE);
  check_same_batches (gpu, cpu, "wsicudaupload overlap=false");
  g_ptr_array_unref (gpu);
  g_ptr_array_unref (cpu);
}

GST_END_TEST;

/* The same through the stock cudaupload of gst-plugins-bad (nvcodec). */
GST_START_TEST (test_pipeline_stock_cudaupload_equals_cpu)
{
  GstElementFactory *stock;
  GPtrArray *cpu, *gpu;

  SKIP_WITHOUT_GPU ();
  stock = gst_element_factory_find ("cudaupload");
  if (stock == NULL) {
    WSI_TEST_SKIP ("no cudaupload (gst-plugins-bad nvcodec not installed)");
    return;
  }
  gst_object_unref (stock);
  cpu = pull_pipeline_batches ("", FALSE);
  gpu = pull_pipeline_batches ("queue max-size-buffers=2 max-size-bytes=0 "
      "max-size-time=0 ! cudaupload ! video/x-raw(memory:CUDAMemory) !", TRUE);
  check_same_batches (gpu, cpu, "cudaupload");
  g_ptr_array_unref (gpu);
  g_ptr_array_unref (cpu);
}

GST_END_TEST;

static gboolean
cuda_device_available (void)
{
  int count = 0;

  return gst_cuda_load_library () && CuInit (0) == CUDA_SUCCESS
      && CuDeviceGetCount (&count) == CUDA_SUCCESS && count > 0;
}

static Suite *
wsicudaupload_suite (void)
{
  Suite *s = suite_create ("wsicudaupload");
  TCase *tc = tcase_create ("general");

  have_gpu = cuda_device_available ();
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_pad_templates);
  tcase_add_test (tc, test_tensor_system_memory);
  tcase_add_test (tc, test_tensor_refuses_what_needs_a_copy);
  if (!have_gpu)
    tcase_add_test (tc, test_no_device_fails_cleanly);
  tcase_add_test (tc, test_upload_keeps_pixels_and_meta);
  tcase_add_test (tc, test_overlap_holds_one_batch);
  tcase_add_test (tc, test_offers_pinned_pool);
  tcase_add_test (tc, test_tensor_cuda_memory);
  tcase_add_test (tc, test_pipeline_wsicudaupload_equals_cpu);
  tcase_add_test (tc, test_pipeline_stock_cudaupload_equals_cpu);
  return s;
}

int
main (int argc, char **argv)
{
  Suite *s;

  /* CUDA contexts do not survive fork(): run the cases in this process */
  g_setenv ("CK_FORK", "no", TRUE);
  gst_check_init (&argc, &argv);
  s = wsicudaupload_suite ();
  return gst_check_run_suite (s, "wsicudaupload", __FILE__);
}
