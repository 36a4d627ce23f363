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

#include "wsistore.h"
#include "wsilocalfile.h"

#include <gio/gio.h>
#include <string.h>

void
wsi_store_free (WsiStore * store)
{
  if (store == NULL)
    return;
  g_ptr_array_unref (store->shards);
  g_ptr_array_unref (store->warnings);
  wsi_store_manifest_free (store->manifest);
  g_free (store->first);
  g_free (store->video_format);
  g_free (store->dir);
  g_free (store);
}

/* Shard names of an incomplete store: shard-N.wsis from 0 while present. */
static GArray *
found_shards (const gchar * dir)
{
  GArray *list = g_array_new (FALSE, TRUE, sizeof (WsiShardSummary));
  guint i;

  g_array_set_clear_func (list, (GDestroyNotify) wsi_shard_summary_clear);
  for (i = 0;; i++) {
    WsiShardSummary s = { 0, };
    gchar *path;

    s.name = wsi_shard_file_name (i);
    path = g_build_filename (dir, s.name, NULL);
    if (!g_file_test (path, G_FILE_TEST_EXISTS)) {
      g_free (path);
      g_free (s.name);
      break;
    }
    g_free (path);
    g_array_append_val (list, s);
  }
  return list;
}

static void
leave_out (WsiStore * store, const WsiShardSummary * listed, gchar * reason)
{
  store->shards_skipped++;
  store->patches_skipped += listed->n_patches;
  /* What came from a file (names, header fields) as valid UTF-8. */
  g_ptr_array_add (store->warnings, wsi_text_escape (reason, -1));
  g_free (reason);
}

/* Opens one listed shard and keeps it when it fits the store. */
static gboolean
add_shard (WsiStore * store, const WsiShardSummary * listed, gboolean verify,
    GError ** error)
{
  gchar *path = g_build_filename (store->dir, listed->name, NULL);
  GError *shard_error = NULL;
  WsiShard *shard = wsi_shard_open (path, verify, &shard_error);

  g_free (path);
  if (shard == NULL) {
    if (g_error_matches (shard_error, WSI_SHARD_ERROR,
            WSI_SHARD_ERROR_VERSION)) {
      g_propagate_error (error, shard_error);   /* another version */
      return FALSE;
    }
    leave_out (store, listed, g_strdup_printf ("%s; its patches are skipped",
            shard_error->message));
    g_error_free (shard_error);
    return TRUE;
  }
  if (store->manifest != NULL && (shard->crc32 != listed->crc32
          || shard->n_patches != listed->n_patches)) {
    leave_out (store, listed, g_strdup_printf ("Shard \"%s\" does not match "
            "the store manifest (crc32 %08x, %u patches; the manifest says "
            "%08x, %u); its patches are skipped", shard->path, shard->crc32,
            shard->n_patches, listed->crc32, listed->n_patches));
    wsi_shard_free (shard);
    return TRUE;
  }
  if (store->video_format == NULL) {
    store->encoding = shard->encoding;
    store->video_format = g_strdup (shard->video_format);
    store->views = shard->views;
  } else if (shard->encoding != store->encoding
      || strcmp (shard->video_format, store->video_format) != 0
      || shard->views != store->views) {
    leave_out (store, listed, g_strdup_printf ("Shard \"%s\" holds %s %s "
            "%s, the store %s %s %s; its patches are skipped", shard->path,
            wsi_store_encoding_name (shard->encoding), shard->video_format,
            shard->views ? "views" : "patches",
            wsi_store_encoding_name (store->encoding), store->video_format,
            store->views ? "views" : "patches"));
    wsi_shard_free (shard);
    return TRUE;
  }
  g_ptr_array_add (store->shards, shard);
  return TRUE;
}

static void
index_shards (WsiStore * store)
{
  guint i;

  store->first = g_new0 (guint64, store->shards->len + 1);
  for (i = 0; i < store->shards->len; i++) {
    const WsiShard *shard = g_ptr_array_index (store->shards, i);

    store->first[i + 1] = store->first[i] + shard->n_patches;
  }
  store->n_patches = store->first[store->shards->len];
}

WsiStore *
wsi_store_open (const gchar * dir, gboolean allow_incomplete,
    gboolean verify, GError ** error)
{
  WsiStore *store = g_new0 (WsiStore, 1);
  GError *manifest_error = NULL;
  GArray *listed;
  guint i;

  store->dir = g_strdup (dir);
  store->shards = g_ptr_array_new_with_free_func ((GDestroyNotify)
      wsi_shard_free);
  store->warnings = g_ptr_array_new_with_free_func (g_free);
  if (!g_file_test (dir, G_FILE_TEST_IS_DIR)) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
        "\"%s\" is not a directory", dir);
    goto fail;
  }
  store->manifest = wsi_store_manifest_read (dir, &manifest_error);
  if (store->manifest == NULL) {
    if (!allow_incomplete || !g_error_matches (manifest_error, G_IO_ERROR,
            G_IO_ERROR_NOT_FOUND)) {
      g_propagate_error (error, manifest_error);
      goto fail;
    }
    g_clear_error (&manifest_error);
    listed = found_shards (dir);
  } else {
    listed = g_array_ref (store->manifest->shards);
  }
  for (i = 0; i < listed->len; i++)
    if (!add_shard (store, &g_array_index (listed, WsiShardSummary, i),
            verify, error)) {
      g_array_unref (listed);
      goto fail;
    }
  g_array_unref (listed);
  index_shards (store);
  if (store->n_patches == 0) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
        "The patch store \"%s\" holds no usable patch (%u shards left out)",
        dir, store->shards_skipped);
    goto fail;
  }
  return store;

fail:
  wsi_store_free (store);
  return NULL;
}

const WsiShard *
wsi_store_locate (const WsiStore * store, guint64 index, guint * local)
{
  guint lo = 0, hi = store->shards->len;

  /* the last shard whose first index is <= index */
  while (hi - lo > 1) {
    guint mid = (lo + hi) / 2;

    if (store->first[mid] <= index)
      lo = mid;
    else
      hi = mid;
  }
  *local = (guint) (index - store->first[lo]);
  return g_ptr_array_index (store->shards, lo);
}
