/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsimaskstore: masks kept on disk round-trip exactly; a file for another
 * key, truncated at any length or with any byte flipped is refused with a
 * reason, never trusted; a missing file is a plain miss; a folder that
 * cannot be made is an error naming it. The run core both mask codings
 * share (wsimaskruns.h) writes the LEB128 bytes of the format and refuses
 * varints that run past the end, exceed 5 bytes or 32 bits. */

#include <gst/check/gstcheck.h>
#include <glib/gstdio.h>
#include <string.h>

#include "wsimaskruns.h"
#include "wsimaskstore.h"

#define W 37
#define H 23

static gchar *
test_dir (const gchar * name)
{
  gchar *dir = g_build_filename (WSI_TEST_TMPDIR, name, NULL);

  fail_unless (g_mkdir_with_parents (dir, 0755) == 0);
  return dir;
}

/* A mask with long runs, single pixels and a byte other than 0 and 255. */
static guint8 *
test_mask (void)
{
  guint8 *mask = g_malloc (W * H);
  guint i;

  for (i = 0; i < W * H; i++)
    mask[i] = (i / 50) % 2 ? 255 : 0;
  mask[3] = 255;
  mask[W * H - 1] = 7;
  return mask;
}

static gchar *
test_key (const gchar * path)
{
  GString *key = g_string_new (NULL);

  wsi_mask_store_key_add (key, "path", path);
  wsi_mask_store_key_add (key, "method", "otsu");
  return g_string_free (key, FALSE);
}

GST_START_TEST (test_round_trip)
{
  gchar *dir = test_dir ("round-trip"), *key = test_key ("/a.svs");
  guint8 *mask = test_mask ();
  WsiStoredMask stored;
  GError *error = NULL;

  fail_unless (wsi_mask_store_save (dir, key, mask, W, H, 0.25, &error));
  fail_unless (wsi_mask_store_load (dir, key, &stored, &error));
  fail_unless (error == NULL);
  fail_unless_equals_int (stored.width, W);
  fail_unless_equals_int (stored.height, H);
  fail_unless (stored.fraction == 0.25);
  fail_unless_equals_int (g_bytes_get_size (stored.mask), W * H);
  fail_unless (memcmp (g_bytes_get_data (stored.mask, NULL), mask,
          W * H) == 0);
  wsi_mask_stored_clear (&stored);
  g_free (mask);
  g_free (key);
  g_free (dir);
}

GST_END_TEST;

/* Run lengths of every varint size (1 to 4 bytes here) and one-pixel
 * runs round-trip. */
GST_START_TEST (test_run_lengths_round_trip)
{
  static const guint lengths[] = { 1, 1, 127, 128, 16383, 16384, 200000, 3 };
  gchar *dir = test_dir ("lengths"), *key = test_key ("/long.svs");
  guint8 *mask = g_malloc (500 * 500);
  gsize at = 0, i;
  WsiStoredMask stored;

  for (i = 0; i < G_N_ELEMENTS (lengths); i++) {
    memset (mask + at, i % 2 ? 255 : 0, lengths[i]);
    at += lengths[i];
  }
  memset (mask + at, 255, 500 * 500 - at);
  fail_unless (wsi_mask_store_save (dir, key, mask, 500, 500, 1.0, NULL));
  fail_unless (wsi_mask_store_load (dir, key, &stored, NULL));
  fail_unless (memcmp (g_bytes_get_data (stored.mask, NULL), mask,
          500 * 500) == 0);
  fail_unless (stored.fraction == 1.0);
  wsi_mask_stored_clear (&stored);
  g_free (mask);
  g_free (key);
  g_free (dir);
}

GST_END_TEST;

GST_START_TEST (test_run_core_bytes_and_bounds)
{
  /* The exact bytes of the versioned format: LEB128, low bits first. */
  static const struct
  {
    guint32 length;
    guint8 bytes[5];
    guint size;
  } known[] = {
    {1, {0x01}, 1}, {127, {0x7f}, 1}, {128, {0x80, 0x01}, 2},
    {300, {0xac, 0x02}, 2}, {16384, {0x80, 0x80, 0x01}, 3},
    {G_MAXUINT32, {0xff, 0xff, 0xff, 0xff, 0x0f}, 5},
  };
  static const guint8 six_bytes[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
  static const guint8 over_32_bits[] = { 0xff, 0xff, 0xff, 0xff, 0x1f };
  static const guint8 truncated[] = { 0x80, 0x80 };
  guint8 mask[70];
  guint i;

  for (i = 0; i < G_N_ELEMENTS (known); i++) {
    GByteArray *out = g_byte_array_new ();
    guint32 length = 0;
    gsize at = 0;

    wsi_mask_runs_put_length (out, known[i].length);
    fail_unless_equals_int (out->len, known[i].size);
    fail_unless (memcmp (out->data, known[i].bytes, known[i].size) == 0);
    fail_unless (wsi_mask_runs_take_length (out->data, out->len, &at,
            &length));
    fail_unless_equals_uint64 (length, known[i].length);
    fail_unless_equals_uint64 (at, known[i].size);
    g_byte_array_unref (out);
  }

  {
    guint32 length = 7;
    gsize at = 0;

    fail_if (wsi_mask_runs_take_length (six_bytes, sizeof (six_bytes), &at,
            &length));
    at = 0;
    fail_if (wsi_mask_runs_take_length (over_32_bits, sizeof (over_32_bits),
            &at, &length));
    at = 0;
    fail_if (wsi_mask_runs_take_length (truncated, sizeof (truncated), &at,
            &length));
    fail_unless_equals_uint64 (at, sizeof (truncated));
    fail_unless_equals_int (length, 7);       /* untouched on refusal */
  }

  /* Run lengths across the 8-byte steps agree with a byte-by-byte count. */
  for (i = 0; i < sizeof (mask); i++)
    mask[i] = (i < 3 || (i >= 20 && i < 29) || i == 40) ? 255 : 0;
  for (i = 0; i < sizeof (mask); i++) {
    gsize expected = 1;

    while (i + expected < sizeof (mask) && mask[i + expected] == mask[i])
      expected++;
    fail_unless_equals_uint64 (wsi_mask_runs_length_at (mask, sizeof (mask),
            i), expected);
  }
}

GST_END_TEST;

GST_START_TEST (test_key_escapes_and_names)
{
  GString *a = g_string_new (NULL), *b = g_string_new (NULL);
  gchar *file;

  /* A value holding "\n" and "name=" cannot pass for two lines. */
  wsi_mask_store_key_add (a, "path", "x\nmethod=hsv");
  wsi_mask_store_key_add (b, "path", "x");
  wsi_mask_store_key_add (b, "method", "hsv");
  fail_if (g_str_equal (a->str, b->str));
  /* The file is named by a hash: no part of the path or URL in it. */
  file = wsi_mask_store_file ("/cache", "path=https://user:secret@host/s\n");
  fail_unless (strstr (file, "secret") == NULL && strstr (file, "host") ==
      NULL);
  fail_unless (g_str_has_suffix (file, ".mask"));
  g_free (file);
  g_string_free (a, TRUE);
  g_string_free (b, TRUE);
}

GST_END_TEST;

/* The file's bytes for @key. */
static GBytes *
stored_bytes (const gchar * dir, const gchar * key)
{
  guint8 *mask = test_mask ();
  gchar *file = wsi_mask_store_file (dir, key), *contents;
  gsize size;

  fail_unless (wsi_mask_store_save (dir, key, mask, W, H, 0.5, NULL));
  fail_unless (g_file_get_contents (file, &contents, &size, NULL));
  g_free (file);
  g_free (mask);
  return g_bytes_new_take (contents, size);
}

GST_START_TEST (test_damaged_bytes_are_refused)
{
  gchar *dir = test_dir ("damaged"), *key = test_key ("/b.svs");
  GBytes *bytes = stored_bytes (dir, key);
  gsize size, i;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  guint8 *copy = g_memdup2 (data, size);
  WsiStoredMask stored;
  GError *error = NULL;

  fail_unless (wsi_mask_store_parse (data, size, key, &stored, NULL));
  wsi_mask_stored_clear (&stored);
  for (i = 0; i < size; i++) {
    fail_if (wsi_mask_store_parse (data, i, key, &stored, &error),
        "truncated at %" G_GSIZE_FORMAT " accepted", i);
    fail_unless (error != NULL && stored.mask == NULL);
    g_clear_error (&error);
  }
  for (i = 0; i < size; i++) {
    copy[i] ^= 0x20;
    fail_if (wsi_mask_store_parse (copy, size, key, &stored, &error),
        "byte %" G_GSIZE_FORMAT " flipped accepted", i);
    fail_unless (error != NULL && stored.mask == NULL);
    g_clear_error (&error);
    copy[i] ^= 0x20;
  }
  /* Another key (another slide, file identity or setting). */
  fail_if (wsi_mask_store_parse (data, size, "path=/c.svs\n", &stored,
          &error));
  fail_unless (strstr (error->message, "another") != NULL);
  g_clear_error (&error);

  g_free (copy);
  g_bytes_unref (bytes);
  g_free (key);
  g_free (dir);
}

GST_END_TEST;

GST_START_TEST (test_missing_file_and_bad_folder)
{
  gchar *dir = test_dir ("missing"), *key = test_key ("/never.svs");
  gchar *file = g_build_filename (dir, "plain-file", NULL);
  gchar *below = g_build_filename (file, "masks", NULL);
  guint8 *mask = test_mask ();
  WsiStoredMask stored;
  GError *error = NULL;

  {
    gchar *left = wsi_mask_store_file (dir, key);      /* an earlier run's */

    g_unlink (left);
    g_free (left);
  }
  fail_if (wsi_mask_store_load (dir, key, &stored, &error));
  fail_unless (error == NULL, "a missing file is a plain miss");

  fail_unless (g_file_set_contents (file, "x", 1, NULL));
  fail_if (wsi_mask_store_save (below, key, mask, W, H, 0.5, &error));
  fail_unless (error != NULL && strstr (error->message, below) != NULL,
      "%s", error ? error->message : "no error");
  g_clear_error (&error);

  /* A file for another key under this key's name is named when refused. */
  {
    gchar *other = test_key ("/other.svs");
    gchar *mine = wsi_mask_store_file (dir, key);
    gchar *theirs = wsi_mask_store_file (dir, other);

    fail_unless (wsi_mask_store_save (dir, other, mask, W, H, 0.5, NULL));
    fail_unless (g_rename (theirs, mine) == 0);
    fail_if (wsi_mask_store_load (dir, key, &stored, &error));
    fail_unless (error != NULL && strstr (error->message, mine) != NULL);
    g_clear_error (&error);
    g_free (mine);
    g_free (theirs);
    g_free (other);
  }
  g_free (mask);
  g_free (below);
  g_free (file);
  g_free (key);
  g_free (dir);
}

GST_END_TEST;

typedef struct
{
  const gchar *dir;
  const gchar *key;
  const guint8 *mask;
  gint errors;
} SharedFolder;

static gpointer
keep_saving (gpointer data)
{
  SharedFolder *f = data;
  gint i;

  for (i = 0; i < 40; i++)
    if (!wsi_mask_store_save (f->dir, f->key, f->mask, W, H, 0.25, NULL))
      g_atomic_int_inc (&f->errors);
  return NULL;
}

/* Writers of the same key (ranks sharing a folder) while a reader loads:
 * the reader sees a whole file or none, never a torn one. */
GST_START_TEST (test_concurrent_writers_never_tear)
{
  gchar *dir = test_dir ("concurrent"), *key = test_key ("/shared.svs");
  gchar *file = wsi_mask_store_file (dir, key);
  guint8 *mask = test_mask ();
  SharedFolder f = { dir, key, mask, 0 };
  GThread *writers[3];
  guint i;

  g_unlink (file);
  for (i = 0; i < G_N_ELEMENTS (writers); i++)
    writers[i] = g_thread_new ("writer", keep_saving, &f);
  for (i = 0; i < 400; i++) {
    WsiStoredMask stored;
    GError *error = NULL;

    if (wsi_mask_store_load (dir, key, &stored, &error)) {
      fail_unless (memcmp (g_bytes_get_data (stored.mask, NULL), mask,
              W * H) == 0);
      wsi_mask_stored_clear (&stored);
    } else {
      fail_unless (error == NULL, "torn read: %s", error->message);
    }
  }
  for (i = 0; i < G_N_ELEMENTS (writers); i++)
    g_thread_join (writers[i]);
  fail_unless_equals_int (g_atomic_int_get (&f.errors), 0);
  g_free (mask);
  g_free (file);
  g_free (key);
  g_free (dir);
}

GST_END_TEST;

static Suite *
wsimaskstore_suite (void)
{
  Suite *s = suite_create ("wsimaskstore");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_round_trip);
  tcase_add_test (tc, test_run_lengths_round_trip);
  tcase_add_test (tc, test_run_core_bytes_and_bounds);
  tcase_add_test (tc, test_key_escapes_and_names);
  tcase_add_test (tc, test_damaged_bytes_are_refused);
  tcase_add_test (tc, test_missing_file_and_bad_folder);
  tcase_add_test (tc, test_concurrent_writers_never_tear);
  return s;
}

GST_CHECK_MAIN (wsimaskstore);
