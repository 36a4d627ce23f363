/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Slides over HTTP from a real nginx on loopback, directly and through the
 * project's delaying/faulting proxy: the stream from the URL is
 * byte-identical to the stream from the same file on disk, whatever the
 * latency, the faults retried and `threads`; faults that persist, a
 * replaced object and formats that need a local file end in errors naming
 * the URL (never its credentials), never in wrong pixels. A DICOM instance
 * at a URL streams as on disk; so does an OME-Zarr store under an s3://
 * prefix (s3rver).
 *
 * Needs nginx (Debian nginx-light; CI installs it): without it the test
 * prints why and exits 77 (skipped), or fails when CI=true. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsipipeline.h"
#include "wsiservers.h"
#include "wsitestutil.h"
#include "wsitestslide.h"
#include "wsitestdicom.h"
#include "wsislide.h"
#include "wsibytesource.h"
#include "wsihttpsource.h"
#include "wsisigv4.h"
#include "wsireadsources.h"
#include "wsiindexcache.h"
#include "wsitiffdir.h"
#include "wsitiffindex.h"

#include <string.h>
#include <curl/curl.h>

#define TILE 256
#define PATCHES 48

static gchar *tmpdir;
static gchar *www;              /* nginx's root */
static WsiNginx nginx;
static gchar *local_slide;      /* www/slide.tiff */

static void
write_slide_sized (const gchar * path, guint seed, guint width, guint height)
{
  WsiTestSlideSpec spec;
  GError *err = NULL;

  wsi_test_slide_spec_init (&spec);
  spec.width = width;
  spec.height = height;
  spec.tile_size = TILE;
  spec.levels = 3;
  spec.level_step = 2;
  spec.mpp = 0.25;
  spec.tissue_blobs = 3;
  spec.seed = seed;
  fail_unless (wsi_test_slide_write (path, &spec, &err), "%s",
      err ? err->message : "");
}

static void
write_slide (const gchar * path, guint seed)
{
  write_slide_sized (path, seed, 2048, 1536);
}

static gchar *
url_of (guint port, const gchar * name)
{
  return g_strdup_printf ("http://127.0.0.1:%u/%s", port, name);
}

/* The stream of @location, read-ahead automatic: for URLs that is the deep
 * look-ahead (patchreader queues up to 256 patches whose tiles are
 * prefetched), so the prefetch path (and its failures, forgotten and read
 * again) is in every comparison. */
static gchar *
stream_description (const gchar * location, guint threads,
    const gchar * sink)
{
  return g_strdup_printf ("wsislidesrc location=\"%s\" seed=11 ! "
      "tissuemask method=none ! queue ! patchsampler patch-size=64 "
      "patches-per-slide=%u min-tissue=0 ! patchinterleave ! "
      "patchreader name=reader threads=%u ! queue ! "
      "patchbatch batch-size=4 ! %s", location, PATCHES, threads, sink);
}

static WsiRun *
run_stream (const gchar * location, guint threads)
{
  gchar *desc = stream_description (location, threads,
      "appsink name=sink sync=false");
  WsiRun *run = wsi_run_pipeline (desc, 0);

  g_free (desc);
  return run;
}

static WsiRun *reference;

static const WsiRun *
local_reference (void)
{
  if (!g_file_test (local_slide, G_FILE_TEST_EXISTS))
    write_slide (local_slide, 7);
  if (reference == NULL)
    reference = run_stream (local_slide, 1);
  return reference;
}

/* Through the proxy with @args; returns how often it injected @fault. */
static guint
run_through_proxy (const gchar * const *args, const gchar * fault,
    guint threads, WsiRun ** run)
{
  WsiProxy proxy;
  gchar *why = NULL, *url;
  gchar *report = g_build_filename (tmpdir, "proxy-report.txt", NULL);
  guint injected;

  local_reference ();           /* the slide exists, the proxy counts only ours */
  g_unlink (report);
  fail_unless (wsi_proxy_start (&proxy, nginx.port, report, args, &why),
      "%s", why);
  url = url_of (proxy.port, "slide.tiff");
  *run = run_stream (url, threads);
  injected = wsi_proxy_stop (&proxy, fault);
  g_free (url);
  g_free (report);
  return injected;
}

GST_START_TEST (test_url_stream_identical_to_local)
{
  static const guint threads[] = { 1, 2, 4 };
  gchar *url = url_of (nginx.port, "slide.tiff");
  guint i;

  local_reference ();
  for (i = 0; i < G_N_ELEMENTS (threads); i++) {
    WsiRun *run = run_stream (url, threads[i]);
    gchar *what = g_strdup_printf ("nginx, threads=%u", threads[i]);
    wsi_run_assert_same_stream (local_reference (), run, what);
    g_free (what);
    wsi_run_free (run);
  }
  g_free (url);
}

GST_END_TEST;

GST_START_TEST (test_latency_stream_identical)
{
  static const gchar *const delays[] = { "0", "10", "50" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (delays); i++) {
    const gchar *args[] = { "--delay-ms", delays[i], NULL };
    WsiRun *run;
    guint requests = run_through_proxy (args, "requests", 2, &run);
    gchar *what = g_strdup_printf ("%s ms added", delays[i]);

    wsi_run_assert_same_stream (local_reference (), run, what);
    fail_unless (requests > 0, "%s: the proxy saw no request", what);
    g_free (what);
    wsi_run_free (run);
  }
}

GST_END_TEST;

/* Transient faults are retried: the stream is still the local one. */
GST_START_TEST (test_transient_faults_retried)
{
  static const struct
  {
    const gchar *fault;
    const gchar *spec;
  } cases[] = {
    {"reset", "reset:3"},
    {"truncate", "truncate:4"},
    {"503", "503:2-5"},
    {"wrong-range", "wrong-range:5"},
    /* longer than the 1 s timeout set below: the request times out */
    {"stall", "stall:6:2"},
  };
  static const guint threads[] = { 1, 4 };
  guint i, t;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    for (t = 0; t < G_N_ELEMENTS (threads); t++) {
      const gchar *args[] = { "--fault", cases[i].spec, NULL };
      WsiRun *run;
      guint injected;
      gchar *what = g_strdup_printf ("%s, threads=%u", cases[i].spec,
          threads[t]);

      WsiHttpSettings settings, saved;

      g_setenv ("WSI_HTTP_BACKOFF_MS", "1", TRUE);
      wsi_http_get_settings (&saved);
      settings = saved;
      settings.timeout_ms = 1000;
      wsi_http_set_settings (&settings);
      injected = run_through_proxy (args, cases[i].fault, threads[t], &run);
      wsi_http_set_settings (&saved);
      fail_unless (injected > 0, "%s: no fault was injected", what);
      wsi_run_assert_same_stream (local_reference (), run, what);
      g_free (what);
      wsi_run_free (run);
    }
  }
}

GST_END_TEST;

/* A fault that never passes: an error naming the URL and the reason, no
 * patch at all. */
/* The open's response with a wrong object size in its Content-Range
 * (then right ones), or a malformed Content-Range (no total, "*",
 * "bytes *\/N", another unit): the size is confirmed before it is pinned
 * and the malformed response retried, so the stream equals the local one
 * (before, the wrong size was pinned and every later read refused as "not
 * the range asked", and a malformed one failed the open). */
GST_START_TEST (test_open_content_range_faults)
{
  static const struct
  {
    const gchar *fault;
    const gchar *spec;
  } cases[] = {
    {"wrong-total", "wrong-total:1"},
    {"bad-range", "bad-range:no-total:1"},
    {"bad-range", "bad-range:star:1"},
    {"bad-range", "bad-range:unsatisfied:1"},
    {"bad-range", "bad-range:unit:1"},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    const gchar *args[] = { "--fault", cases[i].spec, NULL };
    WsiRun *run;
    guint injected;

    g_setenv ("WSI_HTTP_BACKOFF_MS", "1", TRUE);
    injected = run_through_proxy (args, cases[i].fault, 2, &run);
    fail_unless_equals_int (injected, 1);
    wsi_run_assert_same_stream (local_reference (), run, cases[i].spec);
    wsi_run_free (run);
  }
}

GST_END_TEST;

GST_START_TEST (test_persistent_fault_is_an_error)
{
  const gchar *args[] = { "--fault", "wrong-range", NULL };
  WsiRun *run;

  run_through_proxy (args, "wrong-range", 2, &run);
  fail_unless (run->error != NULL, "a slide always answered with a wrong "
      "Content-Range was streamed");
  fail_unless (strstr (run->error, "http://127.0.0.1:") != NULL
      && strstr (run->error, "slide.tiff") != NULL, "error does not name the "
      "URL: %s", run->error);
  fail_unless (strstr (run->error, "Content-Range") != NULL, "error does not "
      "say why: %s", run->error);
  fail_unless_equals_int (run->records->len, 0);
  wsi_run_free (run);
}

GST_END_TEST;

GST_START_TEST (test_missing_and_credentials)
{
  gchar *url = g_strdup_printf ("http://someone:hunter2@127.0.0.1:%u/"
      "missing.tiff?X-Amz-Signature=topsecret", nginx.port);
  WsiRun *run = run_stream (url, 1);

  fail_unless (run->error != NULL);
  fail_unless (strstr (run->error, "404") != NULL, "no status: %s",
      run->error);
  fail_unless (strstr (run->error, "/missing.tiff") != NULL, "no URL: %s",
      run->error);
  fail_unless (strstr (run->error, "hunter2") == NULL
      && strstr (run->error, "topsecret") == NULL
      && strstr (run->error, "someone") == NULL, "credentials leaked: %s",
      run->error);
  wsi_run_free (run);
  g_free (url);
}

GST_END_TEST;

/* The credentials travel to the server, not into metadata. */
GST_START_TEST (test_credentials_stay_out_of_metadata)
{
  gchar *url = g_strdup_printf ("http://someone:hunter2@127.0.0.1:%u/"
      "slide.tiff?token=topsecret", nginx.port);
  WsiRun *run;
  guint i;

  local_reference ();
  run = run_stream (url, 2);
  wsi_run_assert_same_stream (local_reference (), run, "credentials in the URL");
  for (i = 0; i < run->paths->len; i++) {
    const gchar *path = g_ptr_array_index (run->paths, i);
    fail_unless (strstr (path, "hunter2") == NULL
        && strstr (path, "topsecret") == NULL, "patch path %s", path);
  }
  wsi_run_free (run);
  g_free (url);
}

GST_END_TEST;

GST_START_TEST (test_openslide_format_needs_local_file)
{
  gchar *path = g_build_filename (www, "slide.ndpi", NULL);
  gchar *url = url_of (nginx.port, "slide.ndpi");
  WsiRun *run;

  fail_unless (g_file_set_contents (path, "not really an NDPI", -1, NULL));
  run = run_stream (url, 1);
  fail_unless (run->error != NULL);
  fail_unless (strstr (run->error, "needs a local file") != NULL, "%s",
      run->error);
  wsi_run_free (run);
  g_free (url);
  g_free (path);
}

GST_END_TEST;

/* The object is replaced after open: reads of it fail as CHANGED, naming
 * the URL; never bytes of the new object. */
GST_START_TEST (test_replaced_object_is_given_up)
{
  gchar *path = g_build_filename (www, "replaced.tiff", NULL);
  gchar *next = g_build_filename (www, "replaced.tiff.next", NULL);
  gchar *url = url_of (nginx.port, "replaced.tiff");
  GError *err = NULL;
  WsiByteSource *source;
  guint8 *bytes;
  guint64 size;

  write_slide (path, 1);
  write_slide (next, 2);
  source = wsi_byte_source_open (url, &err);
  fail_unless (source != NULL, "%s", err ? err->message : "");
  size = wsi_byte_source_get_size (source);
  bytes = g_malloc (size);
  /* the tail: past the bytes fetched at open */
  fail_unless (wsi_byte_source_read (source, size - 1000, 1000, bytes,
          &err), "%s", err ? err->message : "");
  g_usleep (1100 * 1000);       /* a new mtime, so a new ETag */
  fail_unless (g_rename (next, path) == 0);
  /* bytes nothing fetched yet: past the open's, before the tail's */
  fail_unless (size > WSI_HTTP_OPEN_BYTES + 20000 + 1000,
      "the test slide is too small: %" G_GUINT64_FORMAT " bytes", size);
  fail_if (wsi_byte_source_read (source, WSI_HTTP_OPEN_BYTES, 20000, bytes,
          &err), "read bytes of a replaced object");
  fail_unless (g_error_matches (err, WSI_BYTE_SOURCE_ERROR,
          WSI_BYTE_SOURCE_ERROR_CHANGED), "%s", err->message);
  fail_unless (strstr (err->message, "/replaced.tiff") != NULL, "%s",
      err->message);
  g_clear_error (&err);
  wsi_byte_source_unref (source);
  g_free (bytes);
  g_free (url);
  g_free (next);
  g_free (path);
}

GST_END_TEST;

static guint64
stats_u64 (const GstStructure * s, const gchar * field)
{
  guint64 v = 0;

  fail_unless (gst_structure_get_uint64 (s, field, &v), "no %s", field);
  return v;
}

/* patchreader's remote-stats count what the proxy saw: requests, bytes,
 * retries of the faults it injected, latencies above the delay it added;
 * read-stats carries the same for the tracer. */
/* A second open of an object whose head the first left in the range cache
 * (wsislidesrc, then patchreader) asks 4 KiB, not the 256 KiB head again,
 * and reads its bytes from the cache; once the object is replaced, the
 * same short open gets the new identity and reads the new bytes. */
GST_START_TEST (test_reopen_asks_the_head_once)
{
  gchar *path = g_build_filename (www, "reopen.tiff", NULL);
  gchar *next = g_build_filename (www, "reopen.tiff.next", NULL);
  gchar *url = url_of (nginx.port, "reopen.tiff");
  WsiByteSource *first, *again, *replaced;
  const WsiFetchStats *stats;
  gchar *on_disk, *bytes;
  gsize size, n = 100000;
  GError *err = NULL;

  write_slide (path, 5);
  write_slide (next, 6);
  fail_unless (g_file_get_contents (path, &on_disk, &size, NULL));
  fail_unless (size > WSI_HTTP_OPEN_BYTES, "test slide too small");
  first = wsi_byte_source_open (url, &err);
  fail_unless (first != NULL, "%s", err ? err->message : "");
  stats = wsi_http_source_stats (first);
  /* the head, and the last byte that confirms the object's size */
  fail_unless_equals_int (stats->requests, 2);
  fail_unless_equals_int (stats->bytes, WSI_HTTP_OPEN_BYTES + 1);

  again = wsi_byte_source_open (url, &err);
  fail_unless (again != NULL, "%s", err ? err->message : "");
  stats = wsi_http_source_stats (again);
  fail_unless_equals_int (stats->requests, 1);
  fail_unless_equals_int (stats->bytes, WSI_HTTP_REOPEN_BYTES);
  bytes = g_malloc (n);
  fail_unless (wsi_byte_source_read (again, 0, n, (guint8 *) bytes, &err),
      "%s", err ? err->message : "");
  fail_unless (memcmp (bytes, on_disk, n) == 0);
  fail_unless_equals_int (stats->requests, 1);  /* from the cache */
  g_free (on_disk);

  g_usleep (1100 * 1000);       /* a new mtime, so a new ETag */
  fail_unless (g_rename (next, path) == 0);
  fail_unless (g_file_get_contents (path, &on_disk, &size, NULL));
  replaced = wsi_byte_source_open (url, &err);
  fail_unless (replaced != NULL, "%s", err ? err->message : "");
  fail_unless (wsi_byte_source_read (replaced, 0, n, (guint8 *) bytes,
          &err), "%s", err ? err->message : "");
  fail_unless (memcmp (bytes, on_disk, n) == 0,
      "the reopened, replaced object read the old bytes");

  wsi_byte_source_unref (replaced);
  wsi_byte_source_unref (again);
  wsi_byte_source_unref (first);
  g_free (bytes);
  g_free (on_disk);
  g_free (url);
  g_free (next);
  g_free (path);
}

GST_END_TEST;

/* An object whose server sends neither ETag nor Last-Modified cannot be
 * pinned: each open keeps its bytes to itself and drops them at close. Its
 * range-cache key is the open itself, never a string interned for it (an
 * interned string lives as long as the process: one per open, opened again
 * and again by a cycling stream, grew without bound). The witness: the
 * name the key had ("%p" of the source) is not in GLib's string table
 * after any of the opens, and every open still reads the right bytes. */
GST_START_TEST (test_unpinned_opens_intern_no_key)
{
  const gchar *args[] = { "--unpinned", NULL };
  gchar *path = g_build_filename (www, "unpinned.tiff", NULL);
  gchar *report = g_build_filename (tmpdir, "unpinned-report.txt", NULL);
  gchar *why = NULL, *url, *on_disk;
  guint8 bytes[4096];
  gsize size;
  WsiProxy proxy;
  guint i;

  write_slide_sized (path, 9, 512, 384);
  fail_unless (g_file_get_contents (path, &on_disk, &size, NULL));
  fail_unless (wsi_proxy_start (&proxy, nginx.port, report, args, &why),
      "%s", why);
  url = url_of (proxy.port, "unpinned.tiff");
  for (i = 0; i < 16; i++) {
    GError *err = NULL;
    WsiByteSource *source = wsi_byte_source_open (url, &err);
    gchar *name;

    fail_unless (source != NULL, "%s", err ? err->message : "");
    fail_unless_equals_string (wsi_byte_source_get_identity (source),
        "unpinned");
    fail_unless (wsi_byte_source_read (source, size - sizeof (bytes),
            sizeof (bytes), bytes, &err), "%s", err ? err->message : "");
    fail_unless (memcmp (bytes, on_disk + size - sizeof (bytes),
            sizeof (bytes)) == 0, "open %u read other bytes", i);
    name = g_strdup_printf ("%p", (gpointer) source);
    fail_unless (g_quark_try_string (name) == 0, "open %u of an unpinned "
        "object interned its cache key \"%s\"", i, name);
    wsi_byte_source_unref (source);
    fail_unless (g_quark_try_string (name) == 0);
    g_free (name);
  }
  wsi_proxy_stop (&proxy, NULL);
  g_free (url);
  g_free (on_disk);
  g_free (report);
  g_free (path);
}

GST_END_TEST;

GST_START_TEST (test_remote_stats)
{
  const gchar *args[] = { "--delay-ms", "10", "--fault", "503:3-4", NULL };
  gchar *report = g_build_filename (tmpdir, "proxy-report.txt", NULL);
  GstStructure *before, *after, *read_stats;
  const GstStructure *remote;
  GstElement *pipeline, *reader;
  WsiProxy proxy;
  gchar *why = NULL, *url, *desc;
  gdouble p50 = 0;
  guint injected;

  local_reference ();
  fail_unless (wsi_proxy_start (&proxy, nginx.port, report, args, &why),
      "%s", why);
  url = url_of (proxy.port, "slide.tiff");
  desc = stream_description (url, 2, "fakesink sync=false");
  pipeline = gst_parse_launch (desc, NULL);
  reader = gst_bin_get_by_name (GST_BIN (pipeline), "reader");
  g_object_get (reader, "remote-stats", &before, NULL);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  {
    GstBus *bus = gst_element_get_bus (pipeline);
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 120 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
    gst_message_unref (msg);
    gst_object_unref (bus);
  }
  g_object_get (reader, "remote-stats", &after, "read-stats", &read_stats,
      NULL);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  injected = wsi_proxy_stop (&proxy, "503");

  fail_unless_equals_int (injected, 2);
  fail_unless (stats_u64 (after, "requests") > stats_u64 (before,
          "requests"));
  fail_unless (stats_u64 (after, "bytes") > stats_u64 (before, "bytes"));
  fail_unless (stats_u64 (after, "retries") >= stats_u64 (before,
          "retries") + 2, "the 503s were not counted as retries");
  fail_unless (gst_structure_get_double (after, "latency-p50-ms", &p50));
  fail_unless (p50 >= 9.0, "p50 %.2f ms under the 10 ms added", p50);
  fail_unless (gst_structure_has_field_typed (after, "slides",
          GST_TYPE_ARRAY));
  fail_unless (gst_structure_get (read_stats, "remote", GST_TYPE_STRUCTURE,
          &remote, NULL), "read-stats has no remote field");
  fail_unless (stats_u64 (remote, "requests") > 0);
  gst_structure_free ((GstStructure *) remote);
  gst_structure_free (before);
  gst_structure_free (after);
  gst_structure_free (read_stats);
  gst_object_unref (reader);
  gst_object_unref (pipeline);
  g_free (desc);
  g_free (url);
  g_free (report);
}

GST_END_TEST;

/* A list file at a URL naming slides relative to it. */
GST_START_TEST (test_list_at_url)
{
  gchar *list = g_build_filename (www, "train.lst", NULL);
  gchar *url = url_of (nginx.port, "train.lst");
  WsiRun *run;

  fail_unless (g_file_set_contents (list, "# remote list\nslide.tiff\n", -1,
          NULL));
  local_reference ();
  run = run_stream (url, 2);
  wsi_run_assert_same_stream (local_reference (), run, "list at a URL");
  wsi_run_free (run);
  g_free (url);
  g_free (list);
}

GST_END_TEST;

/* s3:// (signed: nginx ignores the signature; the request must still be
 * one curl signs and sends) and gs:// against an endpoint override. */
GST_START_TEST (test_s3_and_gs_locations)
{
  gchar *bucket = g_build_filename (www, "bucket", NULL);
  gchar *copy = g_build_filename (bucket, "slide.tiff", NULL);
  gchar *endpoint = url_of (nginx.port, "");
  gchar *contents;
  gsize length;
  static const gchar *const locations[] = {
    "s3://bucket/slide.tiff", "gs://bucket/slide.tiff"
  };
  guint i;

  local_reference ();
  g_mkdir_with_parents (bucket, 0755);
  fail_unless (g_file_get_contents (local_slide, &contents, &length, NULL));
  fail_unless (g_file_set_contents (copy, contents, length, NULL));
  g_free (contents);
  g_setenv ("AWS_ENDPOINT_URL", endpoint, TRUE);
  g_setenv ("WSI_GCS_ENDPOINT", endpoint, TRUE);
  g_setenv ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", TRUE);
  g_setenv ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
      TRUE);
  for (i = 0; i < G_N_ELEMENTS (locations); i++) {
    WsiRun *run = run_stream (locations[i], 2);
    wsi_run_assert_same_stream (local_reference (), run, locations[i]);
    wsi_run_free (run);
  }
  {
    /* a missing object: the s3:// URL and the status, not the secret */
    WsiRun *run = run_stream ("s3://bucket/missing.tiff", 1);
    fail_unless (run->error != NULL);
    fail_unless (strstr (run->error, "s3://bucket/missing.tiff") != NULL
        && strstr (run->error, "404") != NULL, "%s", run->error);
    fail_unless (strstr (run->error, "EXAMPLEKEY") == NULL, "%s", run->error);
    wsi_run_free (run);
  }
  g_unsetenv ("AWS_ACCESS_KEY_ID");
  g_unsetenv ("AWS_SECRET_ACCESS_KEY");
  g_unsetenv ("AWS_ENDPOINT_URL");
  g_unsetenv ("WSI_GCS_ENDPOINT");
  g_free (endpoint);
  g_free (copy);
  g_free (bucket);
}

GST_END_TEST;

/* A DICOM instance at a URL (a one-instance series: a URL prefix cannot be
 * listed) streams as the same file on disk does, directly and with 10 ms
 * added to every request. */
GST_START_TEST (test_dicom_at_url)
{
  gchar *dir = g_build_filename (www, "dicom", NULL);
  gchar *tiff = g_build_filename (tmpdir, "one-level.tiff", NULL);
  gchar *url = url_of (nginx.port, "dicom/one-level0.dcm");
  const gchar *args[] = { "--delay-ms", "10", NULL };
  WsiTestSlideSpec spec;
  WsiTestDicomSpec dspec;
  gchar **paths = NULL;
  GError *err = NULL;
  WsiRun *local, *remote, *delayed;
  WsiProxy proxy;
  gchar *why = NULL, *proxied;
  gchar *report = g_build_filename (tmpdir, "proxy-report.txt", NULL);

  wsi_test_slide_spec_init (&spec);
  spec.width = 1536;
  spec.height = 1024;
  spec.levels = 1;
  spec.mpp = 0.25;
  spec.seed = 5;
  fail_unless (wsi_test_slide_write (tiff, &spec, &err), "%s",
      err ? err->message : "");
  wsi_test_dicom_spec_init (&dspec);
  dspec.mpp = 0.25;
  dspec.table = WSI_TEST_DICOM_TABLE_NONE;
  fail_unless (wsi_test_dicom_from_tiff (tiff, dir, "one", &dspec, &paths,
          &err), "%s", err ? err->message : "");
  local = run_stream (paths[0], 1);
  remote = run_stream (url, 2);
  wsi_run_assert_same_stream (local, remote, "DICOM at a URL");

  g_unlink (report);
  fail_unless (wsi_proxy_start (&proxy, nginx.port, report, args, &why),
      "%s", why);
  proxied = g_strdup_printf ("http://127.0.0.1:%u/dicom/one-level0.dcm",
      proxy.port);
  delayed = run_stream (proxied, 2);
  fail_unless (wsi_proxy_stop (&proxy, "requests") > 0);
  wsi_run_assert_same_stream (local, delayed, "DICOM at a URL, 10 ms added");

  wsi_run_free (local);
  wsi_run_free (remote);
  wsi_run_free (delayed);
  g_strfreev (paths);
  g_free (proxied);
  g_free (report);
  g_free (url);
  g_free (tiff);
  g_free (dir);
}

GST_END_TEST;

/* ---- the on-disk index cache ------------------------------------------ */

/* Forgets every fetched byte (the range cache) so that the next open pays
 * for what it does not find on disk. */
static void
drop_fetched_bytes (void)
{
  WsiHttpSettings settings;
  guint cache_mb;

  wsi_http_get_settings (&settings);
  cache_mb = settings.cache_mb;
  settings.cache_mb = 0;
  wsi_http_set_settings (&settings);
  settings.cache_mb = cache_mb;
  wsi_http_set_settings (&settings);
}

static guint64
total_requests (void)
{
  WsiFetchSummary summary;

  wsi_fetch_stats_summarize (wsi_fetch_stats_total (), &summary);
  return summary.requests;
}

/* Requests that opening @url with nothing fetched in memory costs; its
 * level-0 width in *@width. */
static guint64
open_requests (const gchar * url, gint64 * width)
{
  guint64 before;
  GError *err = NULL;
  WsiSlide *slide;

  drop_fetched_bytes ();
  before = total_requests ();
  slide = wsi_slide_open (url, "tiff", &err);
  fail_unless (slide != NULL, "%s", err ? err->message : "");
  if (width != NULL)
    *width = slide->level_width[0];
  wsi_slide_close (slide);
  return total_requests () - before;
}

/* The index cache entry file of @url. */
static gchar *
index_entry_path (const gchar * url)
{
  WsiByteSource *source = wsi_byte_source_open (url, NULL);
  gchar *path;

  fail_unless (source != NULL);
  path = wsi_index_cache_path (WSI_TIFF_INDEX_KIND, source);
  wsi_byte_source_unref (source);
  return path;
}

/* An entry for @url under its true key whose pyramid has one tile past the
 * end of the object: a file that is not trusted for bounds. */
static void
store_forged_entry (const gchar * url)
{
  WsiByteSource *source = wsi_byte_source_open (url, NULL);
  WsiTiffPyramid pyramid;
  GBytes *bytes;

  fail_unless (source != NULL);
  fail_unless (wsi_tiff_pyramid_read (&pyramid, source, NULL));
  pyramid.levels[0].tile_offsets[0] = wsi_byte_source_get_size (source) - 1;
  bytes = wsi_tiff_index_to_bytes (&pyramid);
  wsi_index_cache_store (WSI_TIFF_INDEX_KIND, source, bytes);
  g_bytes_unref (bytes);
  wsi_tiff_pyramid_clear (&pyramid);
  wsi_byte_source_unref (source);
}

/* A re-open of a slide at a URL reads its index from disk: one request
 * (the open's, which pins the identity), where walking the TIFF costs
 * more; the stream is the local one. A corrupt or forged entry is ignored
 * (the TIFF is walked again); a replaced object is not served its old
 * index. */
GST_START_TEST (test_index_cache)
{
  gchar *cache = g_build_filename (tmpdir, "index-cache-test", NULL);
  gchar *url = url_of (nginx.port, "slide.tiff");
  gchar *changing = g_build_filename (www, "changing.tiff", NULL);
  gchar *changing_url = url_of (nginx.port, "changing.tiff");
  gchar *entry;
  guint64 walk, cached;
  gchar *saved_dir = g_strdup (g_getenv ("WSI_INDEX_CACHE_DIR"));
  gint64 width = 0;
  WsiRun *run;

  local_reference ();
  g_setenv ("WSI_INDEX_CACHE_DIR", cache, TRUE);
  entry = index_entry_path (url);
  g_unlink (entry);

  walk = open_requests (url, NULL);
  fail_unless (g_file_test (entry, G_FILE_TEST_IS_REGULAR), "no entry %s",
      entry);
  cached = open_requests (url, NULL);
  fail_unless_equals_int (cached, 1);
  fail_unless (walk > cached, "walking the TIFF cost %" G_GUINT64_FORMAT
      " requests, no more than the cached open", walk);
  g_print ("index cache: an open costs %" G_GUINT64_FORMAT " requests "
      "walking the TIFF, %" G_GUINT64_FORMAT " with the index on disk\n",
      walk, cached);
  /* the cache turned off: the walk's cost again */
  g_setenv ("WSI_INDEX_CACHE_DIR", "", TRUE);
  fail_unless_equals_int (open_requests (url, NULL), walk);
  g_setenv ("WSI_INDEX_CACHE_DIR", cache, TRUE);

  drop_fetched_bytes ();
  run = run_stream (url, 2);
  wsi_run_assert_same_stream (local_reference (), run, "index from the disk cache");
  wsi_run_free (run);

  /* corrupt: ignored, walked, written anew */
  fail_unless (g_file_set_contents (entry, "not an index at all", -1, NULL));
  fail_unless_equals_int (open_requests (url, NULL), walk);
  fail_unless_equals_int (open_requests (url, NULL), 1);
  /* forged (a tile past the end): not trusted */
  store_forged_entry (url);
  fail_unless_equals_int (open_requests (url, NULL), walk);
  drop_fetched_bytes ();
  run = run_stream (url, 2);
  wsi_run_assert_same_stream (local_reference (), run, "after a forged entry");
  wsi_run_free (run);

  /* replaced (a new ETag): the new object's geometry, not the cached one */
  write_slide_sized (changing, 3, 2048, 1536);
  /* a first open in this process: one more request confirms the size
   * (slide.tiff's was confirmed by index_entry_path's open) */
  fail_unless_equals_int (open_requests (changing_url, &width), walk + 1);
  fail_unless_equals_int (width, 2048);
  fail_unless_equals_int (open_requests (changing_url, &width), 1);
  g_usleep (1100 * 1000);       /* a new mtime, so a new ETag */
  write_slide_sized (changing, 4, 1536, 1024);
  open_requests (changing_url, &width);
  fail_unless_equals_int (width, 1536);

  /* bounded: at 0 MiB no entry stays, and opens still work */
  g_setenv ("WSI_INDEX_CACHE_MB", "0", TRUE);
  fail_unless_equals_int (open_requests (url, NULL), walk);
  {
    GDir *dir = g_dir_open (cache, 0, NULL);
    const gchar *name;
    fail_unless (dir != NULL);
    while ((name = g_dir_read_name (dir)) != NULL)
      fail_if (g_str_has_suffix (name, ".idx"), "%s stayed", name);
    g_dir_close (dir);
  }
  g_unsetenv ("WSI_INDEX_CACHE_MB");
  if (saved_dir != NULL)
    g_setenv ("WSI_INDEX_CACHE_DIR", saved_dir, TRUE);
  else
    g_unsetenv ("WSI_INDEX_CACHE_DIR");
  g_free (saved_dir);
  g_free (entry);
  g_free (changing_url);
  g_free (changing);
  g_free (url);
  g_free (cache);
}

GST_END_TEST;

/* The s3rver command (npm; scripts/install-deps.sh puts it under
 * tests/s3/node_modules), or NULL. */
static gchar *
s3rver_find (void)
{
  const gchar *env = g_getenv ("WSI_S3RVER");
  gchar *path = env ? g_strdup (env) : g_build_filename (WSI_TEST_SRCDIR,
      "..", "s3", "node_modules", ".bin", "s3rver", NULL);

  gchar *node = g_find_program_in_path ("node");

  if (node != NULL && g_file_test (path, G_FILE_TEST_IS_EXECUTABLE)) {
    g_free (node);
    return path;
  }
  g_free (node);
  g_free (path);
  return NULL;
}

/* PUTs @path as s3://bucket/@key, signed as S3RVER (s3rver's account),
 * on @curl (kept between PUTs: one connection for many keys). */
static gboolean
s3_put_on (CURL * curl, guint port, const gchar * key, const gchar * path)
{
  gchar *url = g_strdup_printf ("http://127.0.0.1:%u/bucket/%s", port, key);
  struct curl_slist *headers = curl_slist_append (NULL,
      "x-amz-content-sha256: UNSIGNED-PAYLOAD");
  FILE *f = fopen (path, "rb");
  long status = 0;
  CURLcode code;

  curl_easy_setopt (curl, CURLOPT_URL, url);
  curl_easy_setopt (curl, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt (curl, CURLOPT_READDATA, f);
  curl_easy_setopt (curl, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
  curl_easy_setopt (curl, CURLOPT_USERPWD, "S3RVER:S3RVER");
  curl_easy_setopt (curl, CURLOPT_HTTPHEADER, headers);
  code = curl_easy_perform (curl);
  curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_setopt (curl, CURLOPT_HTTPHEADER, NULL);
  curl_slist_free_all (headers);
  fclose (f);
  g_free (url);
  return code == CURLE_OK && status == 200;
}

static gboolean
s3_put (guint port, const gchar * key, const gchar * path)
{
  CURL *curl = curl_easy_init ();
  gboolean ok = s3_put_on (curl, port, key, path);

  curl_easy_cleanup (curl);
  return ok;
}

typedef struct
{
  GPid pid;
  guint port;
  gchar *data;
} S3rver;

/* Starts s3rver with an empty "bucket"; FALSE when it is not installed
 * (the test is then skipped, or fails under CI=true: see the callers). */
static gboolean
s3rver_start (S3rver * s, const gchar * name)
{
  gchar *s3rver = s3rver_find ();
  gchar *port_text, **envp;
  const gchar *argv[11];
  GError *err = NULL;
  guint i;

  memset (s, 0, sizeof (*s));
  if (s3rver == NULL)
    return FALSE;
  s->data = g_build_filename (tmpdir, name, NULL);
  g_mkdir_with_parents (s->data, 0755);
  s->port = wsi_free_port ();
  port_text = g_strdup_printf ("%u", s->port);
  argv[0] = s3rver;
  argv[1] = "-d";
  argv[2] = s->data;
  argv[3] = "-p";
  argv[4] = port_text;
  argv[5] = "--configure-bucket";
  argv[6] = "bucket";
  argv[7] = "--silent";
  /* Its default address is "localhost", which resolves to ::1 first where
   * /etc/hosts says so (Debian's default): the tests reach 127.0.0.1. */
  argv[8] = "--address";
  argv[9] = "127.0.0.1";
  argv[10] = NULL;
  /* s3rver 3.7.1 makes its continuation tokens with DES, which the OpenSSL
   * 3 of Node >= 17 refuses unless its legacy provider is on: without it
   * every listing of more than 1,000 keys is an HTTP 500. */
  envp = g_environ_setenv (g_get_environ (), "NODE_OPTIONS",
      "--openssl-legacy-provider", TRUE);
  fail_unless (g_spawn_async (NULL, (gchar **) argv, envp,
          G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
          wsi_die_with_parent, NULL, &s->pid, &err), "%s",
      err ? err->message : "");
  for (i = 0; i < 200 && !wsi_port_accepts (s->port); i++)
    g_usleep (50000);
  fail_unless (i < 200, "s3rver did not listen on %u", s->port);
  g_strfreev (envp);
  g_free (port_text);
  g_free (s3rver);
  return TRUE;
}

static void
s3rver_stop (S3rver * s)
{
  kill (s->pid, SIGTERM);
  waitpid (s->pid, NULL, 0);
  g_spawn_close_pid (s->pid);
  g_free (s->data);
  memset (s, 0, sizeof (*s));
}

/* Skips (or fails under CI=true) a test that needs s3rver. */
#define S3RVER_OR_SKIP(s, name) G_STMT_START {                              \
  if (!s3rver_start (s, name)) {                                            \
    if (g_strcmp0 (g_getenv ("CI"), "true") == 0)                           \
      fail ("s3rver is not installed (scripts/install-deps.sh installs it " \
          "under CI=true)");                                                \
    WSI_TEST_SKIP ("s3rver (npm) is not installed: run "                    \
        "WSI_INSTALL_S3RVER=1 scripts/install-deps.sh or set WSI_S3RVER");  \
    return;                                                                 \
  }                                                                         \
} G_STMT_END

static void
s3_credentials (const gchar * endpoint, const gchar * key_id,
    const gchar * secret)
{
  g_setenv ("AWS_ENDPOINT_URL", endpoint, TRUE);
  g_setenv ("AWS_ACCESS_KEY_ID", key_id, TRUE);
  g_setenv ("AWS_SECRET_ACCESS_KEY", secret, TRUE);
}

static void
s3_credentials_clear (void)
{
  g_unsetenv ("AWS_ENDPOINT_URL");
  g_unsetenv ("AWS_ACCESS_KEY_ID");
  g_unsetenv ("AWS_SECRET_ACCESS_KEY");
  g_unsetenv ("WSI_GCS_ENDPOINT");
}

/* The error of a run that only builds the collection of @location: the
 * rank past its last slide says how many it holds. */
static gchar *
collection_error (const gchar * location, guint expected)
{
  gchar *desc = g_strdup_printf ("wsislidesrc location=%s rank=%u "
      "world-size=%u ! appsink name=sink sync=false", location, expected,
      expected + 1);
  WsiRun *run = wsi_run_pipeline (desc, 0);
  gchar *error = g_strdup (run->error);

  wsi_run_free (run);
  g_free (desc);
  return error;
}

/* DICOM series under an s3:// prefix (s3rver, signed): the prefix lists
 * two series' .dcm objects (levels, a thumbnail) and a .txt; they group
 * into one slide per series, named by its level-0 object, and stream as
 * the same series from a local folder. */
GST_START_TEST (test_s3rver_dicom_prefix)
{
  gchar *dir, *tiff, *notes;
  WsiTestSlideSpec spec;
  WsiTestDicomSpec dspec;
  gchar **a = NULL, **b = NULL;
  GError *err = NULL;
  gchar *endpoint, *error;
  WsiRun *local, *remote;
  S3rver s3;
  guint i;

  /* (allocations after the skip: a skipped test leaks nothing) */
  S3RVER_OR_SKIP (&s3, "s3rver-dicom");
  dir = g_build_filename (tmpdir, "dicom-prefix", NULL);
  tiff = g_build_filename (tmpdir, "dicom-prefix.tiff", NULL);
  notes = g_build_filename (tmpdir, "notes.txt", NULL);
  wsi_test_slide_spec_init (&spec);
  spec.width = 1536;
  spec.height = 1024;
  spec.levels = 2;
  spec.mpp = 0.25;
  spec.seed = 9;
  fail_unless (wsi_test_slide_write (tiff, &spec, &err), "%s",
      err ? err->message : "");
  wsi_test_dicom_spec_init (&dspec);
  dspec.mpp = 0.25;
  dspec.thumbnail = TRUE;
  dspec.seed = 3;
  fail_unless (wsi_test_dicom_from_tiff (tiff, dir, "a", &dspec, &a, &err));
  dspec.seed = 4;
  dspec.sparse = TRUE;
  fail_unless (wsi_test_dicom_from_tiff (tiff, dir, "b", &dspec, &b, &err));
  for (i = 0; a[i] != NULL; i++) {
    gchar *key = g_strdup_printf ("series/a/%s", strrchr (a[i], '/') + 1);
    fail_unless (s3_put (s3.port, key, a[i]), "upload of %s failed", key);
    g_free (key);
  }
  for (i = 0; b[i] != NULL; i++) {
    gchar *key = g_strdup_printf ("series/%s", strrchr (b[i], '/') + 1);
    fail_unless (s3_put (s3.port, key, b[i]), "upload of %s failed", key);
    g_free (key);
  }
  fail_unless (g_file_set_contents (notes, "not a slide", -1, NULL));
  fail_unless (s3_put (s3.port, "series/notes.txt", notes));

  endpoint = g_strdup_printf ("http://127.0.0.1:%u", s3.port);
  s3_credentials (endpoint, "S3RVER", "S3RVER");
  error = collection_error ("s3://bucket/series/", 2);
  fail_unless (error != NULL && strstr (error, "s3://bucket/series/ holds 2 "
          "slides") != NULL, "%s", error);
  g_free (error);
  local = run_stream (dir, 2);
  remote = run_stream ("s3://bucket/series/", 2);
  wsi_run_assert_same_stream (local, remote, "DICOM series under an s3:// prefix");
  for (i = 0; i < remote->paths->len; i++) {
    const gchar *path = remote->paths->pdata[i];
    fail_unless (g_str_has_suffix (path, "series/a/a-level0.dcm")
        || g_str_has_suffix (path, "series/b-level0.dcm"), "%s", path);
  }
  wsi_run_free (local);
  wsi_run_free (remote);
  s3_credentials_clear ();
  s3rver_stop (&s3);
  g_strfreev (a);
  g_strfreev (b);
  g_free (endpoint);
  g_free (notes);
  g_free (tiff);
  g_free (dir);
}

GST_END_TEST;

/* An OME-Zarr store (NGFF 0.5, Zarr v3, raw 256 x 256 (y, x, c) chunks)
 * of @tiff's levels decoded whole, written to @store. A chunk of glass
 * (all 255 but one row) is kept; the chunk (0, 1) of level 0 is left out
 * (the fill value, as Zarr defines; the store's fill is 255). */
static void
write_zarr_store (const gchar * tiff, const gchar * store)
{
  GError *err = NULL;
  WsiSlide *slide = wsi_slide_open (tiff, WSI_BACKEND_AUTO, &err);
  WsiReadContext *ctx = wsi_read_context_new ();
  GString *datasets = g_string_new (NULL);
  gchar *path;
  gint l;

  fail_unless (slide != NULL, "%s", err ? err->message : "");
  g_mkdir_with_parents (store, 0755);
  for (l = 0; l < slide->level_count; l++) {
    gint64 w = slide->level_width[l], h = slide->level_height[l], cy, cx;
    WsiImage out = { NULL, (gsize) w * 3, w, h, WSI_PIXEL_RGB };
    WsiReadRequest request = { 0, };
    WsiReadReport report;
    gchar *level_dir = g_strdup_printf ("%s/%d", store, l), *meta;

    out.data = g_malloc (out.stride * h);
    request.width = slide->level_width[0];
    request.height = slide->level_height[0];
    request.resample_tolerance = 0.02;
    fail_unless (wsi_slide_read (slide, ctx, &request, &out, &report, &err),
        "%s", err ? err->message : "");
    fail_unless_equals_int (report.level, l);
    for (cy = 0; cy < (h + 255) / 256; cy++) {
      for (cx = 0; cx < (w + 255) / 256; cx++) {
        guint8 *chunk = g_malloc (256 * 256 * 3);
        gchar *dir = g_strdup_printf ("%s/c/%" G_GINT64_FORMAT, level_dir,
            cy);
        gchar *name = g_strdup_printf ("%s/%" G_GINT64_FORMAT "/0", dir, cx);
        gint64 y;

        memset (chunk, 255, 256 * 256 * 3);
        for (y = 0; y < 256 && cy * 256 + y < h; y++)
          memcpy (chunk + y * 256 * 3, out.data + (cy * 256 + y) * out.stride
              + cx * 256 * 3, MIN (256, w - cx * 256) * 3);
        if (!(l == 0 && cy == 0 && cx == 1)) {
          gchar *sub = g_strdup_printf ("%s/%" G_GINT64_FORMAT, dir, cx);
          g_mkdir_with_parents (sub, 0755);
          fail_unless (g_file_set_contents (name, (gchar *) chunk,
                  256 * 256 * 3, NULL));
          g_free (sub);
        }
        g_free (chunk);
        g_free (dir);
        g_free (name);
      }
    }
    meta = g_strdup_printf ("{\"zarr_format\": 3, \"node_type\": \"array\", "
        "\"shape\": [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", 3], "
        "\"data_type\": \"uint8\", \"chunk_grid\": {\"name\": \"regular\", "
        "\"configuration\": {\"chunk_shape\": [256, 256, 3]}}, "
        "\"chunk_key_encoding\": {\"name\": \"default\"}, \"fill_value\": 255, "
        "\"codecs\": [{\"name\": \"bytes\"}]}", h, w);
    path = g_build_filename (level_dir, "zarr.json", NULL);
    fail_unless (g_file_set_contents (path, meta, -1, NULL));
    g_string_append_printf (datasets, "%s{\"path\": \"%d\", "
        "\"coordinateTransformations\": [{\"type\": \"scale\", "
        "\"scale\": [%g, %g, 1]}]}", l ? ", " : "", l,
        0.25 * slide->level_downsample[l], 0.25 * slide->level_downsample[l]);
    g_free (path);
    g_free (meta);
    g_free (level_dir);
    g_free (out.data);
  }
  path = g_build_filename (store, "zarr.json", NULL);
  {
    gchar *group = g_strdup_printf ("{\"zarr_format\": 3, \"node_type\": "
        "\"group\", \"attributes\": {\"ome\": {\"version\": \"0.5\", "
        "\"multiscales\": [{\"axes\": [{\"name\": \"y\", \"type\": \"space\", "
        "\"unit\": \"micrometer\"}, {\"name\": \"x\", \"type\": \"space\", "
        "\"unit\": \"micrometer\"}, {\"name\": \"c\", \"type\": \"channel\"}], "
        "\"datasets\": [%s]}]}}}", datasets->str);
    fail_unless (g_file_set_contents (path, group, -1, NULL));
    g_free (group);
  }
  g_free (path);
  g_string_free (datasets, TRUE);
  wsi_read_context_free (ctx);
  wsi_slide_close (slide);
}

/* PUTs every file below @dir as s3://bucket/@prefix/<relative path>. */
static void
s3_put_tree (guint port, const gchar * dir, const gchar * prefix)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const gchar *name;

  fail_unless (d != NULL);
  while ((name = g_dir_read_name (d)) != NULL) {
    gchar *path = g_build_filename (dir, name, NULL);
    gchar *key = g_strdup_printf ("%s/%s", prefix, name);
    if (g_file_test (path, G_FILE_TEST_IS_DIR))
      s3_put_tree (port, path, key);
    else
      fail_unless (s3_put (port, key, path), "upload of %s failed", key);
    g_free (path);
    g_free (key);
  }
  g_dir_close (d);
}

/* The same OME-Zarr store (Zarr v3, a chunk never written) streams the
 * same bytes from s3:// (s3rver, signed requests; each object fetched by
 * its key, an absent chunk a 404 read as the fill value) as from disk, at
 * 1 and 4 reader threads. */
GST_START_TEST (test_s3rver_zarr_store)
{
  gchar *tiff, *store, *endpoint;
  WsiRun *local, *remote;
  S3rver s3;
  guint t;

  S3RVER_OR_SKIP (&s3, "s3rver-zarr");
  tiff = g_build_filename (tmpdir, "zarr-source.tiff", NULL);
  store = g_build_filename (tmpdir, "zarr-s3", "slide.zarr", NULL);
  write_slide_sized (tiff, 21, 1536, 1024);
  write_zarr_store (tiff, store);
  s3_put_tree (s3.port, store, "stores/slide.zarr");
  endpoint = g_strdup_printf ("http://127.0.0.1:%u", s3.port);
  s3_credentials (endpoint, "S3RVER", "S3RVER");
  local = run_stream (store, 1);
  for (t = 1; t <= 4; t *= 4) {
    gchar *what = g_strdup_printf ("OME-Zarr at s3:// at %u threads", t);
    remote = run_stream ("s3://bucket/stores/slide.zarr", t);
    wsi_run_assert_same_stream (local, remote, what);
    wsi_run_free (remote);
    g_free (what);
  }
  wsi_run_free (local);
  s3_credentials_clear ();
  s3rver_stop (&s3);
  g_free (endpoint);
  g_free (store);
  g_free (tiff);
}

GST_END_TEST;

/* A real S3-protocol server (s3rver): signed requests stream the slide as
 * on disk; an unknown key is a 403 naming the s3:// URL, never the key; a
 * prefix is listed recursively by extension. */
GST_START_TEST (test_s3rver_signed)
{
  S3rver s3;
  gchar *endpoint;
  WsiRun *run;

  S3RVER_OR_SKIP (&s3, "s3rver");
  local_reference ();
  fail_unless (s3_put (s3.port, "slide.tiff", local_slide), "upload failed");

  endpoint = g_strdup_printf ("http://127.0.0.1:%u", s3.port);
  s3_credentials (endpoint, "S3RVER", "S3RVER");
  run = run_stream ("s3://bucket/slide.tiff", 2);
  wsi_run_assert_same_stream (local_reference (), run, "s3rver, signed");
  wsi_run_free (run);

  s3_credentials (endpoint, "AKIANOSUCHKEY", "NoSuchSecretEXAMPLE");
  run = run_stream ("s3://bucket/slide.tiff", 1);
  fail_unless (run->error != NULL, "an unknown key was let in");
  fail_unless (strstr (run->error, "s3://bucket/slide.tiff") != NULL
      && strstr (run->error, "403") != NULL, "%s", run->error);
  fail_unless (strstr (run->error, "AKIANOSUCHKEY") == NULL
      && strstr (run->error, "NoSuchSecret") == NULL, "%s", run->error);
  wsi_run_free (run);

  /* A prefix listed (ListObjectsV2, signed): recursive, by extension. No
   * slide is opened. */
  s3_credentials (endpoint, "S3RVER", "S3RVER");
  {
    gchar *tiny = g_build_filename (tmpdir, "tiny.tiff", NULL);
    gchar *error;
    fail_unless (g_file_set_contents (tiny, "II*", -1, NULL));
    fail_unless (s3_put (s3.port, "some/a.tiff", tiny));
    fail_unless (s3_put (s3.port, "some/b.svs", tiny));
    fail_unless (s3_put (s3.port, "some/sub/deep.svs", tiny));
    fail_unless (s3_put (s3.port, "some/notes.txt", tiny));
    fail_unless (s3_put (s3.port, "other/c.tiff", tiny));
    error = collection_error ("s3://bucket/some/", 3);
    fail_unless (error != NULL);
    fail_unless (strstr (error, "s3://bucket/some/ holds 3 slides")
        != NULL, "%s", error);
    g_free (error);
    g_free (tiny);
  }
  s3_credentials_clear ();
  s3rver_stop (&s3);
  g_free (endpoint);
}

GST_END_TEST;

/* A valid key id with a wrong secret: S3 answers 403 SignatureDoesNotMatch.
 * s3rver checks only the key id, so the project's proxy checks the
 * signature in front of it (--sigv4-secret, the same SigV4 computation S3
 * makes). The right secret passes it (curl's signature is valid) and
 * streams the slide as on disk; the wrong one is a 403 naming the s3:// URL
 * and the status, never the key id or the secret. */
GST_START_TEST (test_wrong_secret_is_403)
{
  const gchar *args[] = { "--sigv4-secret", "S3RVER", NULL };
  gchar *report;
  gchar *why = NULL, *endpoint, *error;
  WsiProxy proxy;
  S3rver s3;
  WsiRun *run;

  S3RVER_OR_SKIP (&s3, "s3rver-secret");
  report = g_build_filename (tmpdir, "proxy-report.txt", NULL);
  local_reference ();
  fail_unless (s3_put (s3.port, "slide.tiff", local_slide), "upload failed");
  g_unlink (report);
  fail_unless (wsi_proxy_start (&proxy, s3.port, report, args, &why), "%s",
      why);
  endpoint = g_strdup_printf ("http://127.0.0.1:%u", proxy.port);

  s3_credentials (endpoint, "S3RVER", "S3RVER");
  run = run_stream ("s3://bucket/slide.tiff", 2);
  wsi_run_assert_same_stream (local_reference (), run, "s3rver behind a SigV4 check");
  wsi_run_free (run);

  s3_credentials (endpoint, "S3RVER", "WrongSecretEXAMPLE");
  run = run_stream ("s3://bucket/slide.tiff", 1);
  fail_unless (run->error != NULL, "a wrong secret was let in");
  fail_unless (strstr (run->error, "s3://bucket/slide.tiff") != NULL
      && strstr (run->error, "403") != NULL, "%s", run->error);
  fail_unless (strstr (run->error, "S3RVER") == NULL
      && strstr (run->error, "WrongSecret") == NULL, "%s", run->error);
  fail_unless_equals_int (run->records->len, 0);
  wsi_run_free (run);
  /* a refused listing names the status, not a byte range (its request
   * asks the whole document) */
  error = collection_error ("s3://bucket/", 1);
  fail_unless (error != NULL && strstr (error, "s3://bucket/") != NULL
      && strstr (error, "403") != NULL, "%s", error);
  fail_unless (strstr (error, "bytes") == NULL, "%s", error);
  g_free (error);
  /* no credentials anywhere: the 403 says the request went out unsigned */
  s3_credentials_clear ();
  g_setenv ("AWS_ENDPOINT_URL", endpoint, TRUE);
  g_setenv ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", TRUE);
  run = run_stream ("s3://bucket/slide.tiff", 1);
  fail_unless (run->error != NULL && strstr (run->error, "403") != NULL
      && strstr (run->error, "went out unsigned: no AWS credentials were "
          "found") != NULL, "%s", run->error);
  wsi_run_free (run);
  error = collection_error ("s3://bucket/", 1);
  fail_unless (error != NULL && strstr (error, "went out unsigned") != NULL,
      "%s", error);
  g_free (error);
  g_unsetenv ("AWS_SHARED_CREDENTIALS_FILE");
  s3_credentials_clear ();
  /* the wrong secret's requests, and only those, were refused */
  fail_unless (wsi_proxy_stop (&proxy, "signature-rejected") > 0);
  s3rver_stop (&s3);
  g_free (endpoint);
  g_free (report);
}

GST_END_TEST;

#define MANY_KEYS 1003

/* Whether /usr/bin/python3 has botocore (python3-botocore), with which
 * the proxy checks signatures too. */
static gboolean
botocore_present (void)
{
  const gchar *argv[] = { "/usr/bin/python3", "-c", "import botocore", NULL };
  gint status = -1;

  return g_spawn_sync (NULL, (gchar **) argv, NULL,
      G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
      NULL, NULL, &status, NULL) && status == 0;
}

/* A prefix of more than 1,000 keys: ListObjectsV2 answers 1,000 a page, so
 * the listing follows NextContinuationToken. Signed through the SigV4 check
 * (the page-2 request carries the token: its signature must be valid too);
 * the proxy hands out tokens holding '+', '/' and '=' as S3's do
 * (--odd-tokens; s3rver's own are random base64), checks each signature
 * with its own SigV4 and botocore's, and maps the token back: two pages,
 * no refused request. gs:// lists through the GCS XML API's same request;
 * here s3rver stands in for GCS (a real ListObjectsV2 server, not GCS
 * itself). */
GST_START_TEST (test_listing_continuation)
{
  const gchar *args[] = { "--sigv4-secret", "S3RVER", "--odd-tokens", NULL };
  gchar *report, *tiny;
  gchar *why = NULL, *endpoint, *error;
  WsiProxy proxy;
  S3rver s3;
  CURL *curl;
  guint i;

  S3RVER_OR_SKIP (&s3, "s3rver-many");
  report = g_build_filename (tmpdir, "proxy-report.txt", NULL);
  tiny = g_build_filename (tmpdir, "tiny.tiff", NULL);
  fail_unless (g_file_set_contents (tiny, "II*", -1, NULL));
  curl = curl_easy_init ();
  for (i = 0; i < MANY_KEYS; i++) {
    gchar *key = g_strdup_printf ("many/k%05u.tiff", i);
    fail_unless (s3_put_on (curl, s3.port, key, tiny), "PUT %s", key);
    g_free (key);
  }
  fail_unless (s3_put_on (curl, s3.port, "many/zz-notes.txt", tiny));
  fail_unless (s3_put_on (curl, s3.port, "more/k0.tiff", tiny));
  curl_easy_cleanup (curl);

  g_unlink (report);
  fail_unless (wsi_proxy_start (&proxy, s3.port, report, args, &why), "%s",
      why);
  endpoint = g_strdup_printf ("http://127.0.0.1:%u", proxy.port);
  s3_credentials (endpoint, "S3RVER", "S3RVER");
  error = collection_error ("s3://bucket/many/", MANY_KEYS);
  fail_unless (error != NULL && strstr (error,
          "s3://bucket/many/ holds 1003 slides") != NULL, "%s", error);
  g_free (error);
  s3_credentials_clear ();
  fail_unless_equals_int (wsi_proxy_stop (&proxy, "requests"), 2);
  fail_unless_equals_int (wsi_proxy_report_count (report,
          "signature-rejected"), 0);
  fail_unless_equals_int (wsi_proxy_report_count (report, "odd-tokens"), 1);
  fail_unless_equals_int (wsi_proxy_report_count (report, "unknown-token"),
      0);
  if (botocore_present ()) {
    fail_unless_equals_int (wsi_proxy_report_count (report,
            "sigv4-botocore"), 2);
  } else if (g_strcmp0 (g_getenv ("CI"), "true") == 0) {
    fail ("python3-botocore is not installed (scripts/install-deps.sh "
        "installs it)");
  } else {
    g_print ("SKIP: signatures not checked with botocore: python3-botocore "
        "is not installed\n");
  }

  /* gs://: unsigned, path-style at the endpoint */
  g_free (endpoint);
  endpoint = g_strdup_printf ("http://127.0.0.1:%u", s3.port);
  g_setenv ("WSI_GCS_ENDPOINT", endpoint, TRUE);
  error = collection_error ("gs://bucket/many/", MANY_KEYS);
  fail_unless (error != NULL && strstr (error,
          "gs://bucket/many/ holds 1003 slides") != NULL, "%s", error);
  g_free (error);
  s3_credentials_clear ();

  s3rver_stop (&s3);
  g_free (endpoint);
  g_free (tiny);
  g_free (report);
}

GST_END_TEST;

/* The AWS Signature V4 of wsisigv4.c against the examples AWS publishes
 * for S3 (Amazon S3 API Reference, "Signature Calculations for the
 * Authorization Header: Transferring Payload in a Single Chunk (AWS
 * Signature Version 4)", examples GET Object, GET Bucket Lifecycle and Get
 * Bucket (List Objects); key AKIAIOSFODNN7EXAMPLE, secret
 * wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, 2013-05-24 00:00:00 UTC,
 * us-east-1). The query is canonicalised whatever its order and encoding. */
static gchar *
sigv4_example (const gchar * url, const gchar * const *extra)
{
  WsiSigV4Key key = { "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", NULL, "us-east-1", "s3"
  };
  GDateTime *when = g_date_time_new_utc (2013, 5, 24, 0, 0, 0);
  gchar **lines = wsi_sigv4_sign ("GET", url, extra, &key, when);
  gchar *authorization;

  g_date_time_unref (when);
  fail_unless (lines != NULL && lines[0] != NULL);
  fail_unless_equals_string (lines[1], "x-amz-date: 20130524T000000Z");
  fail_unless_equals_string (lines[2], "x-amz-content-sha256: "
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  authorization = g_strdup (lines[0]);
  g_strfreev (lines);
  return authorization;
}

GST_START_TEST (test_sigv4_aws_examples)
{
  const gchar *range[] = { "Range: bytes=0-9", NULL };
  const gchar *list_signature = "SignedHeaders=host;x-amz-content-sha256;"
      "x-amz-date, Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670"
      "ed5711ef69dc6f7";
  gchar *a;

  a = sigv4_example ("https://examplebucket.s3.amazonaws.com/test.txt",
      range);
  fail_unless_equals_string (a, "Authorization: AWS4-HMAC-SHA256 "
      "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
      "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
      "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  g_free (a);
  a = sigv4_example ("https://examplebucket.s3.amazonaws.com/?lifecycle",
      NULL);
  fail_unless (g_str_has_suffix (a, "Signature=fea454ca298b7da1c68078a5d1bd"
          "bfbbe0d65c699e0f91ac7a200a0136783543"), "%s", a);
  g_free (a);
  /* the example's query, as given, reordered, and with J encoded */
  a = sigv4_example ("https://examplebucket.s3.amazonaws.com/?max-keys=2&"
      "prefix=J", NULL);
  fail_unless (g_str_has_suffix (a, list_signature), "%s", a);
  g_free (a);
  a = sigv4_example ("https://examplebucket.s3.amazonaws.com/?prefix=J&"
      "max-keys=2", NULL);
  fail_unless (g_str_has_suffix (a, list_signature), "%s", a);
  g_free (a);
  a = sigv4_example ("https://examplebucket.s3.amazonaws.com/?prefix=%4a&"
      "max-keys=2", NULL);
  fail_unless (g_str_has_suffix (a, list_signature), "%s", a);
  g_free (a);
  /* AWS's encoding: '+', '/', '=' and ' ' as %XX, '~' kept */
  a = wsi_sigv4_encode ("a+b/c=d e~f", FALSE);
  fail_unless_equals_string (a, "a%2Bb%2Fc%3Dd%20e~f");
  g_free (a);
  a = wsi_sigv4_encode ("dir/a b", TRUE);
  fail_unless_equals_string (a, "dir/a%20b");
  g_free (a);
}

GST_END_TEST;

/* What this process holds open: fds, of which sockets, and threads. */
typedef struct
{
  guint fds, sockets, threads;
} Held;

static Held
held_now (void)
{
  Held h = { 0, 0, 0 };
  GDir *dir = g_dir_open ("/proc/self/fd", 0, NULL);
  const gchar *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL) {
    gchar *path = g_build_filename ("/proc/self/fd", name, NULL);
    gchar *target = g_file_read_link (path, NULL);
    h.fds++;
    if (target != NULL && g_str_has_prefix (target, "socket:"))
      h.sockets++;
    g_free (target);
    g_free (path);
  }
  if (dir != NULL)
    g_dir_close (dir);
  dir = g_dir_open ("/proc/self/task", 0, NULL);
  while (dir != NULL && g_dir_read_name (dir) != NULL)
    h.threads++;
  if (dir != NULL)
    g_dir_close (dir);
  return h;
}

/* Threads that end by themselves a little after their work (GLib's
 * unused pool threads, curl's resolver) are given time to: the counts
 * once they stayed the same for a second (at most 10 s). */
static Held
held_settled (void)
{
  Held h = held_now (), last = h;
  guint i, same = 0;

  for (i = 0; i < 100 && same < 10; i++) {
    g_usleep (100 * 1000);
    h = held_now ();
    same = h.fds == last.fds && h.threads == last.threads ? same + 1 : 0;
    last = h;
  }
  return h;
}

/* An HTTP pipeline taken PLAYING -> NULL again and again (through the
 * prefetching patchreader, 4 threads): after each NULL the process holds
 * no more fds, sockets or threads than before the first run. */
GST_START_TEST (test_null_closes_connections)
{
  gchar *url = url_of (nginx.port, "slide.tiff");
  Held baseline, after;
  WsiRun *run;
  guint cycle;

  local_reference ();
  /* the first run's one-time costs (GStreamer's registry, plugins) are
   * not the pipeline's: a local run first */
  wsi_run_free (run_stream (local_slide, 4));
  baseline = held_settled ();
  for (cycle = 0; cycle < 3; cycle++) {
    run = run_stream (url, 4);
    wsi_run_assert_same_stream (local_reference (), run, "state cycle");
    wsi_run_free (run);
    after = held_settled ();
    g_print ("after NULL %u: %u fds (%u sockets), %u threads; before the "
        "first run %u fds (%u sockets), %u threads\n", cycle + 1, after.fds,
        after.sockets, after.threads, baseline.fds, baseline.sockets,
        baseline.threads);
    fail_unless (after.sockets <= baseline.sockets, "cycle %u: %u sockets "
        "stay open (%u before)", cycle + 1, after.sockets, baseline.sockets);
    fail_unless (after.fds <= baseline.fds, "cycle %u: %u fds stay open "
        "(%u before)", cycle + 1, after.fds, baseline.fds);
    fail_unless (after.threads <= baseline.threads, "cycle %u: %u threads "
        "stay (%u before)", cycle + 1, after.threads, baseline.threads);
  }
  g_free (url);
}

GST_END_TEST;

static Suite *
remote_suite (void)
{
  Suite *s = suite_create ("remote");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_sigv4_aws_examples);
  tcase_add_test (tc, test_null_closes_connections);
  tcase_add_test (tc, test_url_stream_identical_to_local);
  tcase_add_test (tc, test_latency_stream_identical);
  tcase_add_test (tc, test_transient_faults_retried);
  tcase_add_test (tc, test_open_content_range_faults);
  tcase_add_test (tc, test_persistent_fault_is_an_error);
  tcase_add_test (tc, test_missing_and_credentials);
  tcase_add_test (tc, test_credentials_stay_out_of_metadata);
  tcase_add_test (tc, test_openslide_format_needs_local_file);
  tcase_add_test (tc, test_replaced_object_is_given_up);
  tcase_add_test (tc, test_list_at_url);
  tcase_add_test (tc, test_dicom_at_url);
  tcase_add_test (tc, test_s3rver_dicom_prefix);
  tcase_add_test (tc, test_remote_stats);
  tcase_add_test (tc, test_reopen_asks_the_head_once);
  tcase_add_test (tc, test_unpinned_opens_intern_no_key);
  tcase_add_test (tc, test_s3_and_gs_locations);
  tcase_add_test (tc, test_index_cache);
  tcase_add_test (tc, test_s3rver_signed);
  tcase_add_test (tc, test_s3rver_zarr_store);
  tcase_add_test (tc, test_wrong_secret_is_403);
  tcase_add_test (tc, test_listing_continuation);
  return s;
}

int
main (int argc, char **argv)
{
  gchar *why = NULL, *workdir;
  gint failed;
  Suite *s;

  tmpdir = g_strdup (WSI_TEST_TMPDIR);
  g_mkdir_with_parents (tmpdir, 0755);
  www = g_build_filename (tmpdir, "www", NULL);
  g_mkdir_with_parents (www, 0755);
  workdir = g_build_filename (tmpdir, "nginx", NULL);
  if (!wsi_nginx_start (&nginx, www, workdir, &why)) {
    /* CI installs nginx (scripts/install-deps.sh): there, its absence is a
     * failure; elsewhere the whole test is skipped, saying why. */
    gboolean ci = g_strcmp0 (g_getenv ("CI"), "true") == 0;
    g_print ("%s: remote: %s\n", ci ? "FAIL" : "SKIP", why);
    g_free (why);
    return ci ? 1 : 77;
  }
  /* Faults are retried quickly here; the default backoff is for servers. */
  g_setenv ("WSI_HTTP_BACKOFF_MS", "1", TRUE);
  gst_check_init (&argc, &argv);
  /* this test opens byte sources by URL itself, before any slide */
  wsi_read_sources_init ();
  local_slide = g_build_filename (www, "slide.tiff", NULL);

  s = remote_suite ();
  failed = gst_check_run_suite (s, "remote", __FILE__);
  if (reference != NULL)
    wsi_run_free (reference);
  wsi_nginx_stop (&nginx);
  g_free (workdir);
  return failed;
}
