/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsistoreresume.h"
#include "wsishardreader.h"
#include "wsistoreformat.h"
#include "wsistoresettings.h"

#include <errno.h>
#include <glib/gstdio.h>

/* patchstoresink's category: these logs belong to the element. */
GST_DEBUG_CATEGORY_EXTERN (gst_patch_store_sink_debug);
#define GST_CAT_DEFAULT gst_patch_store_sink_debug

/* Removes "*.tmp" leftovers of an interrupted writer. */
static void
remove_temporary_files (GstElement * element, const gchar * dir)
{
  GDir *listing = g_dir_open (dir, 0, NULL);
  const gchar *name;

  while (listing && (name = g_dir_read_name (listing)) != NULL) {
    if (g_str_has_suffix (name, WSI_STORE_TMP_SUFFIX)) {
      gchar *path = g_build_filename (dir, name, NULL);

      GST_INFO_OBJECT (element, "removing the leftover %s", path);
      g_unlink (path);
      g_free (path);
    }
  }
  if (listing)
    g_dir_close (listing);
}

/* Removes shard @index and every later one (a damaged shard of an
 * interrupted store and what follows it are written again). */
static void
remove_shards_from (const gchar * dir, guint index)
{
  for (;; index++) {
    gchar *name = wsi_shard_file_name (index);
    gchar *path = g_build_filename (dir, name, NULL);
    gboolean exists = g_file_test (path, G_FILE_TEST_EXISTS);

    if (exists)
      g_unlink (path);
    g_free (path);
    g_free (name);
    if (!exists)
      break;
  }
}

/* Keeps the complete shards of an interrupted store; returns FALSE (with
 * an element error) when they were written with other settings. */
static gboolean
adopt_complete_shards (GstElement * element, const gchar * dir,
    WsiStoreManifest * manifest, guint64 * skip)
{
  guint index;

  for (index = 0;; index++) {
    gchar *name = wsi_shard_file_name (index);
    gchar *path = g_build_filename (dir, name, NULL);
    GError *error = NULL;
    WsiShard *shard = NULL;
    WsiShardSummary summary = { 0, };

    if (g_file_test (path, G_FILE_TEST_EXISTS))
      shard = wsi_shard_open (path, TRUE, &error);
    g_free (name);
    if (shard == NULL) {
      if (error != NULL) {
        GST_ELEMENT_WARNING (element, RESOURCE, READ, ("%s; it is written "
                "again.", error->message), (NULL));
        g_error_free (error);
        remove_shards_from (dir, index);
      }
      g_free (path);
      break;
    }
    g_free (path);
    if (shard->encoding == manifest->encoding
        && shard->n_patches < manifest->patches_per_shard) {
      /* the short last shard of a finished store: written again, longer */
      remove_shards_from (dir, index);
      wsi_shard_free (shard);
      break;
    }
    if (shard->encoding != manifest->encoding
        || shard->n_patches != manifest->patches_per_shard) {
      GST_ELEMENT_ERROR (element, RESOURCE, SETTINGS,
          ("Cannot resume the patch store \"%s\": its shard \"%s\" holds %u "
              "%s patches, this writer makes shards of %u %s patches.",
              dir, shard->name, shard->n_patches,
              wsi_store_encoding_name (shard->encoding),
              manifest->patches_per_shard,
              wsi_store_encoding_name (manifest->encoding)), (NULL));
      wsi_shard_free (shard);
      return FALSE;
    }
    if (manifest->video_format == NULL)
      manifest->video_format = g_strdup (shard->video_format);
    summary.name = g_strdup (shard->name);
    summary.n_patches = shard->n_patches;
    summary.bytes = shard->size;
    summary.crc32 = shard->crc32;
    g_array_append_val (manifest->shards, summary);
    *skip += shard->n_patches;
    wsi_shard_free (shard);
  }
  GST_INFO_OBJECT (element, "resuming %s after %u complete shards (%"
      G_GUINT64_FORMAT " patches)", dir, manifest->shards->len,
      *skip);
  return TRUE;
}

static gboolean
holds_a_store (const gchar * dir, gboolean * complete)
{
  gchar *manifest = g_build_filename (dir, WSI_STORE_MANIFEST, NULL);
  gchar *name = wsi_shard_file_name (0);
  gchar *first = g_build_filename (dir, name, NULL);
  gchar *first_tmp = g_strconcat (first, WSI_STORE_TMP_SUFFIX, NULL);
  gboolean found;

  *complete = g_file_test (manifest, G_FILE_TEST_EXISTS);
  found = *complete || g_file_test (first, G_FILE_TEST_EXISTS)
      || g_file_test (first_tmp, G_FILE_TEST_EXISTS);
  g_free (first_tmp);
  g_free (first);
  g_free (name);
  g_free (manifest);
  return found;
}

/* The settings of a new store, kept from its first shard on (a store cut
 * short has no manifest): what resume=true compares with. */
static gboolean
record_settings (GstElement * element, const gchar * dir,
    JsonNode * pipeline)
{
  GError *error = NULL;

  if (pipeline == NULL
      || wsi_store_settings_record (dir, pipeline,
          &error))
    return TRUE;
  GST_ELEMENT_ERROR (element, RESOURCE, OPEN_WRITE,
      ("Could not write the settings of the patch store \"%s\": %s",
          dir, error->message), (NULL));
  g_error_free (error);
  return FALSE;
}

/* resume=true continues the stream the store holds: any setting that
 * changes that stream (seed, patch size, ...) is refused, naming it. */
static gboolean
check_same_stream (GstElement * element, const gchar * dir,
    JsonNode * pipeline)
{
  GError *error = NULL;
  JsonNode *recorded = wsi_store_settings_recorded (dir, &error);
  gchar *difference;

  if (recorded == NULL) {
    GST_ELEMENT_WARNING (element, RESOURCE, READ,
        ("The patch store \"%s\" holds no readable record of the settings "
            "it was written with%s%s; resuming without checking them.",
            dir, error ? ": " : " (written by an older gst-wsi)",
            error ? error->message : ""), (NULL));
    g_clear_error (&error);
    return record_settings (element, dir, pipeline);
  }
  difference = wsi_store_settings_difference (recorded,
      pipeline);
  json_node_unref (recorded);
  if (difference != NULL) {
    GST_ELEMENT_ERROR (element, RESOURCE, SETTINGS,
        ("Cannot resume the patch store \"%s\": its stream was made with "
            "other settings (%s). resume=true continues the same stream; "
            "write other settings to a new store.", dir, difference),
        (NULL));
    g_free (difference);
    return FALSE;
  }
  return TRUE;
}

/* Makes the directory, refuses to mix with another store unless resuming. */
gboolean
wsi_store_resume_prepare (GstElement * element, const gchar * dir,
    WsiStoreManifest * manifest, gboolean resume, guint64 * skip)
{
  JsonNode *pipeline = manifest->pipeline;
  gboolean complete;

  *skip = 0;
  if (g_mkdir_with_parents (dir, 0755) != 0) {
    GST_ELEMENT_ERROR (element, RESOURCE, OPEN_WRITE,
        ("Could not create the patch store directory \"%s\": %s", dir,
            g_strerror (errno)), (NULL));
    return FALSE;
  }
  if (!holds_a_store (dir, &complete))
    return record_settings (element, dir, pipeline);
  if (!resume) {
    GST_ELEMENT_ERROR (element, RESOURCE, OPEN_WRITE,
        ("\"%s\" already holds a%s patch store; remove it, choose another "
            "location, or set resume=true to continue it.", dir,
            complete ? "" : "n incomplete"), (NULL));
    return FALSE;
  }
  if (!check_same_stream (element, dir, pipeline))
    return FALSE;
  if (complete) {
    /* appending: the store is incomplete again until the new manifest */
    gchar *path = g_build_filename (dir, WSI_STORE_MANIFEST, NULL);

    g_unlink (path);
    g_free (path);
  }
  remove_temporary_files (element, dir);
  return adopt_complete_shards (element, dir, manifest, skip);
}
