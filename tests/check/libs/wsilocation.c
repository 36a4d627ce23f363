/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit test of the bottom of the read layer: location classification and
 * display (ext/wsislide/read/wsilocation.c) and the byte-source scheme
 * table (wsibytesource.c) that remote sources register into. */

#include <gst/check/gstcheck.h>
#include <glib/gstdio.h>

#include "wsilocation.h"
#include "wsibytesource.h"

GST_START_TEST (test_scheme_and_remote)
{
  static const struct
  {
    const gchar *location;
    const gchar *scheme;
    gboolean remote;
  } cases[] = {
    {"/data/slide.svs", NULL, FALSE},
    {"slides/a:b.svs", NULL, FALSE},
    {"C:/slides/x.svs", NULL, FALSE},
    {"file:///data/slide.svs", "file", FALSE},
    {"HTTPS://host/a.tiff", "https", TRUE},
    {"http://host/a.tiff", "http", TRUE},
    {"s3://bucket/key.svs", "s3", TRUE},
    {"gs://bucket/key.svs", "gs", TRUE},
    {"ftp://host/a.tiff", "ftp", FALSE},
    {"3d://x", NULL, FALSE},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *scheme = wsi_location_scheme (cases[i].location);

    fail_unless_equals_string (scheme, cases[i].scheme);
    fail_unless_equals_int (wsi_location_is_remote (cases[i].location),
        cases[i].remote);
    g_free (scheme);
  }
}

GST_END_TEST;

GST_START_TEST (test_display_without_secrets)
{
  gchar *display =
      wsi_location_display
      ("https://user:secret@host:8443/dir/slide.tiff?X-Amz-Signature=abc#f");
  gchar *path = wsi_location_display ("/data/caf\xe9.svs");
  gchar *resolved;

  fail_unless_equals_string (display, "https://host:8443/dir/slide.tiff");
  /* not UTF-8 (Latin-1 e-acute): shown escaped, never as invalid text */
  fail_unless_equals_string (path, "/data/caf\\xE9.svs");

  /* a location with credentials is found again from its display form */
  resolved = wsi_location_resolve (display);
  fail_unless_equals_string (resolved, display);
  g_free (resolved);
  wsi_location_remember
      ("https://user:secret@host:8443/dir/slide.tiff?X-Amz-Signature=abc#f");
  resolved = wsi_location_resolve (display);
  fail_unless_equals_string (resolved,
      "https://user:secret@host:8443/dir/slide.tiff?X-Amz-Signature=abc#f");
  g_free (resolved);
  g_free (display);
  g_free (path);
}

GST_END_TEST;

static gchar *opened;

static WsiByteSource *
fake_open (const gchar * location, GError ** error)
{
  g_free (opened);
  opened = g_strdup (location);
  g_set_error (error, WSI_BYTE_SOURCE_ERROR, WSI_BYTE_SOURCE_ERROR_NOT_FOUND,
      "fake source");
  return NULL;
}

GST_START_TEST (test_scheme_table)
{
  GError *error = NULL;
  gchar *dir = g_dir_make_tmp ("wsilocation-XXXXXX", NULL);
  gchar *file = g_build_filename (dir, "bytes", NULL);
  WsiByteSource *source;

  /* nothing registered for s3 in this program: refused by scheme, the
   * URL's secret not echoed */
  fail_unless (wsi_byte_source_open ("s3://bucket/key?token=secret",
          &error) == NULL);
  fail_unless (g_error_matches (error, WSI_BYTE_SOURCE_ERROR,
          WSI_BYTE_SOURCE_ERROR_UNSUPPORTED), "%s", error->message);
  fail_unless (strstr (error->message, "secret") == NULL, "%s",
      error->message);
  g_clear_error (&error);

  /* a registered scheme is handed to its source, whatever its case */
  wsi_byte_source_register_scheme ("S3", fake_open);
  fail_unless (wsi_byte_source_open ("s3://bucket/key", &error) == NULL);
  fail_unless_equals_string (opened, "s3://bucket/key");
  fail_unless_equals_string (error->message, "fake source");
  g_clear_error (&error);

  /* local paths and file:// never go through the table */
  fail_unless (g_file_set_contents (file, "0123456789", 10, NULL));
  source = wsi_byte_source_open (file, &error);
  fail_unless (source != NULL, "%s", error ? error->message : "");
  fail_unless (wsi_byte_source_is_local (source));
  fail_unless_equals_uint64 (wsi_byte_source_get_size (source), 10);
  wsi_byte_source_unref (source);
  fail_unless_equals_string (opened, "s3://bucket/key");

  g_unlink (file);
  g_rmdir (dir);
  g_free (file);
  g_free (dir);
  g_clear_pointer (&opened, g_free);
}

GST_END_TEST;

static Suite *
wsilocation_suite (void)
{
  Suite *s = suite_create ("wsilocation");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_scheme_and_remote);
  tcase_add_test (tc, test_display_without_secrets);
  tcase_add_test (tc, test_scheme_table);
  return s;
}

GST_CHECK_MAIN (wsilocation);
