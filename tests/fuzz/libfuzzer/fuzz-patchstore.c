/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzz-patchstore.c: libFuzzer target for the JSON a patch store keeps
 * beside its shards (ext/wsistore): `settings.json` (the settings an
 * interrupted store was begun with, read by patchstoresink resume=true)
 * and `manifest.json` (what a complete store holds, read by patchstoresrc
 * and by resume). Built twice: FUZZ_STORE_FILE picks the file the input
 * becomes.
 *
 * Each input is written under that name into a private temporary folder
 * (the readers take a store folder, not bytes) and read as the elements
 * read it: the manifest with wsi_store_manifest_read(), then the recorded
 * settings with wsi_store_settings_recorded() (from the manifest's
 * "pipeline" when there is a manifest, else from settings.json), then the
 * resume check wsi_store_settings_difference() of the recorded settings
 * against themselves and against a fixed pipeline, both ways.
 *
 * Invariants beyond ASan's: a refusal sets an error with a message naming
 * the file, an acceptance sets none; a store compared with itself makes
 * the same stream (no difference); a difference is valid UTF-8 (it goes
 * into an element error). GLib criticals and warnings are fatal (json-glib
 * getters warn on members of another type: a damaged file must be refused
 * with its reason, not warned about).
 *
 * Cost: one small file written and read per input. Single-threaded; the
 * folder is made once and removed at exit.
 */

#include "wsistoremanifest.h"
#include "wsistoresettings.h"

#include <glib/gstdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef FUZZ_STORE_FILE
#define FUZZ_STORE_FILE WSI_STORE_SETTINGS
#endif

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

static gchar *store_dir;
static gchar *store_file;

/* What patchstoresink records for a typical stream (wsipipelinesettings.h). */
static const gchar current_json[] =
    "[{\"name\":\"wsislidesrc0\",\"element\":\"wsislidesrc\","
    "\"properties\":{\"location\":\"/slides\",\"seed\":\"3\","
    "\"threads\":\"4\"}},"
    "{\"name\":\"patchsampler0\",\"element\":\"patchsampler\","
    "\"properties\":{\"patch-size\":\"224\",\"target-mpp\":\"0.5\"}},"
    "{\"name\":\"queue0\",\"element\":\"queue\",\"properties\":{}},"
    "{\"name\":\"patchstoresink0\",\"element\":\"patchstoresink\","
    "\"properties\":{\"location\":\"/out\",\"resume\":\"true\"}}]";
static JsonNode *current;

static void
remove_store (void)
{
  gchar *other = g_build_filename (store_dir, WSI_STORE_MANIFEST, NULL);

  g_unlink (store_file);
  g_unlink (other);
  g_free (other);
  g_rmdir (store_dir);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  GError *error = NULL;

  (void) argc;
  (void) argv;
  g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  store_dir = g_dir_make_tmp ("fuzz-patchstore-XXXXXX", &error);
  if (store_dir == NULL)
    g_error ("fuzz-patchstore: %s", error->message);
  store_file = g_build_filename (store_dir, FUZZ_STORE_FILE, NULL);
  current = json_from_string (current_json, &error);
  g_assert_no_error (error);
  atexit (remove_store);
  return 0;
}

static void
check_difference (JsonNode * a, JsonNode * b)
{
  gchar *difference = wsi_store_settings_difference (a, b);

  if (difference != NULL)
    g_assert (g_utf8_validate (difference, -1, NULL) && *difference != '\0');
  g_free (difference);
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  GError *error = NULL;
  JsonNode *recorded;
  gchar *self;

  /* no sync: the file lives for one input */
  if (!g_file_set_contents_full (store_file, (const gchar *) data, size,
          G_FILE_SET_CONTENTS_NONE, 0600, &error))
    g_error ("fuzz-patchstore: %s", error->message);

  if (strcmp (FUZZ_STORE_FILE, WSI_STORE_MANIFEST) == 0) {
    WsiStoreManifest *m = wsi_store_manifest_read (store_dir, &error);

    if (m == NULL) {
      g_assert (error != NULL && strstr (error->message, store_dir) != NULL);
      g_clear_error (&error);
    } else {
      g_assert (error == NULL);
      g_assert (m->version >= WSI_STORE_VERSION
          && m->version <= WSI_STORE_VERSION_MAX);
      g_assert (m->video_format != NULL && m->subsampling != NULL);
      for (guint i = 0; i < m->shards->len; i++)
        g_assert (g_array_index (m->shards, WsiShardSummary, i).name != NULL);
      wsi_store_manifest_free (m);
    }
  }

  recorded = wsi_store_settings_recorded (store_dir, &error);
  if (recorded == NULL) {
    /* nothing recorded is said without an error only by a manifest that
     * has no "pipeline" (a store of an older gst-wsi) */
    if (error != NULL)
      g_assert (strstr (error->message, store_dir) != NULL);
    else
      g_assert (strcmp (FUZZ_STORE_FILE, WSI_STORE_MANIFEST) == 0);
    g_clear_error (&error);
  } else {
    g_assert (error == NULL);
  }
  self = wsi_store_settings_difference (recorded, recorded);
  g_assert (self == NULL);
  check_difference (recorded, current);
  check_difference (current, recorded);
  if (recorded != NULL)
    json_node_unref (recorded);
  return 0;
}
