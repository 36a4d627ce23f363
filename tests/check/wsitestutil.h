/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsitestutil.h: small helpers that several check tests need, kept in one
 * place instead of a private copy per test file: test directories and
 * slides on disk (written with tools/wsitestslide.h), messages on a bus,
 * 64-bit counter properties, checks that skip, and the Python oracles that
 * write test files with other software. Header only: every helper is static
 * inline, so a test that includes it and uses a few of them compiles no
 * unused code and gets no -Wunused-function warning. The helpers fail the
 * running test (fail_unless) rather than return errors.
 *
 * Include it as "wsitestutil.h": tests/check is on every check test's
 * include path. */

#ifndef __WSI_TEST_UTIL_H__
#define __WSI_TEST_UTIL_H__

#include <errno.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <string.h>

#include "wsitestslide.h"

/* ---- directories and slides on disk ------------------------------------ */

/* Creates @root/@name and its parents when missing; returns the path
 * (g_free it). */
static inline gchar *
wsi_test_make_dir (const gchar * root, const gchar * name)
{
  gchar *dir = g_build_filename (root, name, NULL);

  fail_unless (g_mkdir_with_parents (dir, 0755) == 0, "cannot create %s: %s",
      dir, g_strerror (errno));
  return dir;
}

/* Writes the slide @spec describes to @dir/@name (the name may hold
 * subdirectories: they are created); returns its path (g_free it). */
static inline gchar *
wsi_test_write_slide (const gchar * dir, const gchar * name,
    const WsiTestSlideSpec * spec)
{
  gchar *path = g_build_filename (dir, name, NULL);
  gchar *parent = g_path_get_dirname (path);
  GError *err = NULL;

  g_mkdir_with_parents (parent, 0755);
  g_free (parent);
  fail_unless (wsi_test_slide_write (path, spec, &err), "writing %s: %s",
      path, err ? err->message : "?");
  return path;
}

/* Writes @size bytes of seeded noise (no slide format opens it) to
 * @dir/@name; returns its path (g_free it). */
static inline gchar *
wsi_test_write_garbage (const gchar * dir, const gchar * name, gsize size,
    guint32 seed)
{
  gchar *path = g_build_filename (dir, name, NULL);
  GError *err = NULL;

  fail_unless (wsi_test_slide_write_garbage (path, size, seed, &err),
      "writing %s: %s", path, err ? err->message : "?");
  return path;
}

/* ---- bus messages ------------------------------------------------------- */

/* Pops the next message of @type (GST_MESSAGE_ERROR or GST_MESSAGE_WARNING)
 * queued on @bus and returns its text (g_free it), or NULL when there is
 * none. Does not wait. */
static inline gchar *
wsi_test_pop_message_text (GstBus * bus, GstMessageType type)
{
  GstMessage *msg = gst_bus_pop_filtered (bus, type);
  GError *err = NULL;
  gchar *text;

  if (msg == NULL)
    return NULL;
  if (type == GST_MESSAGE_ERROR)
    gst_message_parse_error (msg, &err, NULL);
  else
    gst_message_parse_warning (msg, &err, NULL);
  text = g_strdup (err->message);
  g_error_free (err);
  gst_message_unref (msg);
  return text;
}

/* Little-endian 16- and 32-bit values at any offset of a file's bytes
 * (memcpy: a TIFF's offsets need not be aligned; UBSan). */
static inline guint32
wsi_test_le32 (const gchar * at)
{
  guint32 v;

  memcpy (&v, at, 4);
  return GUINT32_FROM_LE (v);
}

static inline guint16
wsi_test_le16 (const gchar * at)
{
  guint16 v;

  memcpy (&v, at, 2);
  return GUINT16_FROM_LE (v);
}

/* Sets ImageWidth (tag 256) of directory @dir of the classic little-endian
 * TIFF at @path to @width, in place, as `tiffset -d DIR -s 256 WIDTH`
 * would (the test slide generator writes classic LE TIFF, ImageWidth as a
 * SHORT or LONG in the entry itself). */
static inline void
wsi_test_set_tiff_width (const gchar * path, guint dir, guint32 width)
{
  gchar *data = NULL;
  gsize size = 0, offset;
  guint i, d;

  fail_unless (g_file_get_contents (path, &data, &size, NULL));
  fail_unless (size > 8 && memcmp (data, "II*\0", 4) == 0, "%s", path);
  offset = wsi_test_le32 (data + 4);
  for (d = 0; d < dir; d++) {
    guint16 n = wsi_test_le16 (data + offset);
    offset = wsi_test_le32 (data + offset + 2 + 12 * n);
    fail_unless (offset != 0 && offset + 2 < size, "%s has no directory %u",
        path, dir);
  }
  for (i = 0; i < wsi_test_le16 (data + offset); i++) {
    gchar *entry = data + offset + 2 + 12 * i;
    guint16 tag = wsi_test_le16 (entry);
    guint16 type = wsi_test_le16 (entry + 2);

    if (tag != 256)
      continue;
    if (type == 3) {
      guint16 v = GUINT16_TO_LE ((guint16) width);
      memcpy (entry + 8, &v, 2);
    } else {
      guint32 v = GUINT32_TO_LE (width);
      memcpy (entry + 8, &v, 4);
    }
    fail_unless (g_file_set_contents (path, data, size, NULL));
    g_free (data);
    return;
  }
  fail ("%s: directory %u has no ImageWidth", path, dir);
}

/* @element (not in a bin) refuses to start because its own validation
 * refused a value (gst-libs/gst/wsi/wsirefusal.h): the change to @state
 * fails with one error whose text holds @expected (the property, the value
 * and "accepted:"). The element is left in NULL. */
static inline void
wsi_test_assert_refuses_start (GstElement * element, GstState state,
    const gchar * expected)
{
  GstBus *bus = gst_bus_new ();
  gchar *text;

  gst_element_set_bus (element, bus);
  fail_unless_equals_int (gst_element_set_state (element, state),
      GST_STATE_CHANGE_FAILURE);
  text = wsi_test_pop_message_text (bus, GST_MESSAGE_ERROR);
  fail_unless (text != NULL, "no error message");
  fail_unless (strstr (text, expected) != NULL, "%s", text);
  fail_unless (strstr (text, "accepted:") != NULL, "%s", text);
  g_free (text);
  gst_element_set_state (element, GST_STATE_NULL);
  gst_element_set_bus (element, NULL);
  gst_object_unref (bus);
}

/* Waits up to @timeout (GST_CLOCK_TIME_NONE: for ever) for EOS on
 * @pipeline's bus; fails the test on an error message (with its text) or
 * when none came. Leaves the pipeline's state alone. */
static inline void
wsi_test_wait_eos (GstElement * pipeline, GstClockTime timeout)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, timeout,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);

  GError *err = NULL;

  gst_object_unref (bus);
  fail_unless (msg != NULL, "no EOS within %" GST_TIME_FORMAT,
      GST_TIME_ARGS (timeout));
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
    gst_message_parse_error (msg, &err, NULL);
  fail_unless (err == NULL, "error instead of EOS: %s",
      err ? err->message : "");
  gst_message_unref (msg);
}

/* Runs @description (a pipeline that ends by itself, no appsink) from
 * PLAYING to EOS or an error, waiting up to @timeout, then sets it to
 * NULL; returns the error's text (free it) or NULL after EOS. Fails the
 * test when the description does not parse or neither message comes. */
static inline gchar *
wsi_test_run_to_end (const gchar * description, GstClockTime timeout)
{
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (description, &err);
  GstMessage *msg;
  GstBus *bus;
  gchar *error = NULL;

  fail_unless (pipeline != NULL, "cannot parse '%s': %s", description,
      err ? err->message : "?");
  bus = gst_element_get_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, timeout,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no EOS or error: %s", description);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gst_message_parse_error (msg, &err, NULL);
    error = g_strdup (err->message);
    g_clear_error (&err);
  }
  gst_message_unref (msg);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  return error;
}

/* ---- properties --------------------------------------------------------- */

/* Reads @property of @object (a GObject, e.g. a GstElement or a harness's
 * h->element) into @value after checking that the property is a @type, so
 * that g_object_get() writes a value of the size the caller gave. */
static inline void
wsi_test_get_typed (gpointer object, const gchar * property, GType type,
    gpointer value)
{
  GParamSpec *pspec;

  fail_unless (G_IS_OBJECT (object), "not a GObject");
  pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (object),
      property);
  fail_unless (pspec != NULL, "%s has no property \"%s\"",
      G_OBJECT_TYPE_NAME (object), property);
  fail_unless (pspec->value_type == type, "%s:%s is a %s, not a %s",
      G_OBJECT_TYPE_NAME (object), property,
      g_type_name (pspec->value_type), g_type_name (type));
  g_object_get (object, property, value, NULL);
}

/* The value of the guint64 property @property of @object. */
static inline guint64
wsi_test_get_u64 (gpointer object, const gchar * property)
{
  guint64 value = 0;

  wsi_test_get_typed (object, property, G_TYPE_UINT64, &value);
  return value;
}

/* The value of the gint64 property @property of @object. */
static inline gint64
wsi_test_get_i64 (gpointer object, const gchar * property)
{
  gint64 value = 0;

  wsi_test_get_typed (object, property, G_TYPE_INT64, &value);
  return value;
}

/* Asserts that @code (a g_object_set() or gst_util_set_object_arg() of a
 * value outside the property's GParamSpec range) is refused by GObject's
 * own range check, which keeps the old value and logs: with g_warning up to
 * GLib 2.82 (Debian 12: 2.74), with g_critical from GLib 2.84 (Debian 13).
 * Either message passes (gst-check's ASSERT_WARNING and ASSERT_CRITICAL
 * each accept one of them only); none fails the test. Read the property
 * back to check that the value was kept. */
#define WSI_ASSERT_SET_REFUSED(code)                                   \
G_STMT_START {                                                          \
  _gst_check_expecting_log = TRUE;                                      \
  _gst_check_raised_warning = FALSE;                                    \
  _gst_check_raised_critical = FALSE;                                   \
  code;                                                                 \
  if (!_gst_check_raised_warning && !_gst_check_raised_critical)        \
    _ck_assert_failed (__FILE__, __LINE__,                              \
        "Expected g_warning or g_critical (GObject refusing the value), " \
        "got nothing", NULL);                                           \
  _gst_check_expecting_log = FALSE;                                     \
} G_STMT_END

/* ---- checks that cannot run here ---------------------------------------- */

/* A check whose precondition is missing (no CUDA device, a real slide
 * absent) prints one line "SKIP: <check>: <reason>" on stdout and returns.
 * gst-check counts it as passed; scripts/test-summary.py reads these lines
 * from meson's log, counts each named check as skipped instead and lists
 * the reasons. Call it through WSI_TEST_SKIP so that <check> is the test
 * function's own name. */
#define WSI_TEST_SKIP(...) wsi_test_skip (__func__, __VA_ARGS__)

static inline void wsi_test_skip (const gchar * check, const gchar * format,
    ...) G_GNUC_PRINTF (2, 3);

static inline void
wsi_test_skip (const gchar * check, const gchar * format, ...)
{
  va_list args;
  gchar *reason;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  g_print ("SKIP: %s: %s\n", check, reason);
  /* forked checks leave through exit(): flush before that */
  fflush (stdout);
  g_free (reason);
}

/* The real slides beside the checkout (../shared/slides, or
 * $WSI_SHARED_SLIDES_DIR). On a developer's machine they may be absent and
 * the checks using them skip; in CI (CI=true) they must be there, so an
 * absent one fails the check instead of skipping it. */
static inline const gchar *
wsi_test_shared_slides_root (void)
{
  const gchar *dir = g_getenv ("WSI_SHARED_SLIDES_DIR");

  return dir ? dir : WSI_SHARED_SLIDES_DIR;
}

static inline gboolean
wsi_test_in_ci (void)
{
  return g_strcmp0 (g_getenv ("CI"), "true") == 0;
}

/* Path of the shared folder or of @name in it (g_free it), or NULL after a
 * SKIP line for @check when absent (a failure under CI). Call it through
 * WSI_TEST_SHARED_SLIDE / WSI_TEST_SHARED_SLIDES_DIR from the check. */
static inline gchar *
wsi_test_shared_slide (const gchar * check, const gchar * name)
{
  gchar *path = name ? g_build_filename (wsi_test_shared_slides_root (), name,
      NULL) : g_strdup (wsi_test_shared_slides_root ());

  if (g_file_test (path, name ? G_FILE_TEST_IS_REGULAR : G_FILE_TEST_IS_DIR))
    return path;
  fail_if (wsi_test_in_ci (), "CI=true but %s %s is absent: CI must provide "
      "../shared/slides (or WSI_SHARED_SLIDES_DIR)", name ? "the real slide" : "the real slides folder",
      path);
  wsi_test_skip (check, "%s %s is absent", name ? "real slide" :
      "real slides folder", path);
  g_free (path);
  return NULL;
}

#define WSI_TEST_SHARED_SLIDE(name) wsi_test_shared_slide (__func__, (name))
#define WSI_TEST_SHARED_SLIDES_DIR() wsi_test_shared_slide (__func__, NULL)

/* ---- oracles: test files written by other software ---------------------- */

#define WSI_TEST_PYTHON "/usr/bin/python3"

/* A Python script, run with Debian's python3, that writes a test's input
 * files (and what other libraries decode from them) into a folder. */
typedef struct
{
  const gchar *script;          /* its path */
  const gchar *probe;           /* Python that fails when a module it needs
                                 * is missing, e.g. "import zarr, numpy" */
  const gchar *missing;         /* the reason to skip then (which packages,
                                 * who installs them) */
  gint state;                   /* 0 not run, 1 ran, 2 cannot run here */
  gchar *why;
} WsiTestOracle;

/* Runs @oracle once per process (later calls answer from the first) with
 * @dir as its argument; a script that fails fails the test with its
 * output. FALSE, after a SKIP line for @check, when python3 or a module
 * the probe imports is missing (a failure under CI=true, where
 * install-deps.sh ran). */
static inline gboolean
wsi_test_oracle_run (WsiTestOracle * oracle, const gchar * check,
    const gchar * dir)
{
  gchar *probe[] = { (gchar *) WSI_TEST_PYTHON, (gchar *) "-c",
    (gchar *) oracle->probe, NULL
  };
  gint status = 0;

  if (oracle->state == 0) {
    if (!g_file_test (WSI_TEST_PYTHON, G_FILE_TEST_IS_EXECUTABLE)) {
      oracle->why = g_strdup (WSI_TEST_PYTHON " not found");
    } else if (!g_spawn_sync (NULL, probe, NULL, G_SPAWN_STDERR_TO_DEV_NULL,
            NULL, NULL, NULL, NULL, &status, NULL)
        || !g_spawn_check_wait_status (status, NULL)) {
      oracle->why = g_strdup (oracle->missing);
    }
    if (oracle->why == NULL) {
      gchar *argv[] = { (gchar *) WSI_TEST_PYTHON, (gchar *) oracle->script,
        (gchar *) dir, NULL
      };
      gchar *out = NULL, *err = NULL, *name;

      fail_unless (g_spawn_sync (NULL, argv, NULL, 0, NULL, NULL, &out, &err,
              &status, NULL));
      name = g_path_get_basename (oracle->script);
      fail_unless (g_spawn_check_wait_status (status, NULL), "%s: %s%s",
          name, out, err);
      g_free (name);
      g_free (out);
      g_free (err);
    }
    oracle->state = oracle->why == NULL ? 1 : 2;
  }
  if (oracle->state == 1)
    return TRUE;
  fail_if (wsi_test_in_ci (), "CI=true but %s", oracle->why);
  wsi_test_skip (check, "%s", oracle->why);
  return FALSE;
}

#endif /* __WSI_TEST_UTIL_H__ */
