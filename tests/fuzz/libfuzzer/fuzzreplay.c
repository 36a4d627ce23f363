/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzzreplay.c: the main() a libFuzzer target gets in a build without
 * libFuzzer (any compiler, -Dfuzzing=false): every file named on the
 * command line, or found (non-recursively) in a folder named there, is
 * handed once to LLVMFuzzerTestOneInput(). It runs the seed corpora and the
 * saved crashers of every target in the ordinary test suite, so a fix stays
 * fixed on gcc builds too; it does not mutate anything.
 *
 * Exit status: 0 when every input ran, 1 when a file could not be read or
 * no input was found (a corpus folder that went missing must not pass).
 */

#include <glib.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv) __attribute__((weak));

static gboolean
run_file (const gchar * path, guint * n_run)
{
  g_autoptr (GError) error = NULL;
  gchar *data = NULL;
  gsize size = 0;

  if (!g_file_get_contents (path, &data, &size, &error)) {
    g_printerr ("fuzzreplay: %s\n", error->message);
    return FALSE;
  }
  LLVMFuzzerTestOneInput ((const uint8_t *) data, size);
  g_free (data);
  (*n_run)++;
  return TRUE;
}

static gboolean
run_dir (const gchar * path, guint * n_run)
{
  g_autoptr (GError) error = NULL;
  GDir *dir = g_dir_open (path, 0, &error);
  const gchar *name;
  gboolean ok = TRUE;

  if (dir == NULL) {
    g_printerr ("fuzzreplay: %s\n", error->message);
    return FALSE;
  }
  while ((name = g_dir_read_name (dir)) != NULL) {
    gchar *child = g_build_filename (path, name, NULL);
    if (g_file_test (child, G_FILE_TEST_IS_REGULAR)
        && !g_str_has_suffix (name, ".md"))
      ok = run_file (child, n_run) && ok;
    g_free (child);
  }
  g_dir_close (dir);
  return ok;
}

int
main (int argc, char **argv)
{
  guint n_run = 0;
  gboolean ok = TRUE;
  int i;

  if (LLVMFuzzerInitialize != NULL)
    LLVMFuzzerInitialize (&argc, &argv);
  for (i = 1; i < argc; i++) {
    if (g_file_test (argv[i], G_FILE_TEST_IS_DIR))
      ok = run_dir (argv[i], &n_run) && ok;
    else
      ok = run_file (argv[i], &n_run) && ok;
  }
  g_print ("fuzzreplay: %u inputs run\n", n_run);
  if (n_run == 0) {
    g_printerr ("fuzzreplay: no input found\n");
    return 1;
  }
  return ok ? 0 : 1;
}
