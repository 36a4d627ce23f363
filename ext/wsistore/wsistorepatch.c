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

#include "wsistorepatch.h"

#include <gio/gio.h>
#include <gst/wsi/wsirecord.h>

/* The slide's columns and the two the store adds, as WsiPatchMeta wants. */
static void
add_patch_meta (GstBuffer * buffer, const WsiStoreEntry * entry,
    const WsiStoreSlide * slide, guint epoch, guint64 index)
{
  const gchar *paths[2] = { slide->path, NULL };
  const gchar *labels[2] = { slide->label, NULL };
  guint n = slide->column_names ? g_strv_length (slide->column_names) : 0;
  guint m = slide->column_values ? g_strv_length (slide->column_values) : 0;
  const gchar **names = g_newa (const gchar *, n + 3);
  const gchar **values = g_newa (const gchar *, n + 3);
  gchar epoch_text[16], index_text[24];
  GstStructure *meta;
  guint i;

  for (i = 0; i < n; i++) {
    names[i] = slide->column_names[i];
    values[i] = i < m ? slide->column_values[i] : "";
  }
  g_snprintf (epoch_text, sizeof (epoch_text), "%u", epoch);
  g_snprintf (index_text, sizeof (index_text), "%" G_GUINT64_FORMAT, index);
  names[n] = "store-epoch";
  values[n] = epoch_text;
  names[n + 1] = "store-index";
  values[n + 1] = index_text;
  names[n + 2] = values[n + 2] = NULL;
  meta = wsi_patch_meta_add (buffer, &entry->record, 1, paths, labels);
  wsi_meta_set_columns (meta, names, values);
  if (slide->uri != NULL && *slide->uri != '\0') {
    const gchar *uris[2] = { slide->uri, NULL };

    /* the slide's mpp as the writer got it (0 = unknown, or an older
     * store): never worked back from the record */
    wsi_patch_meta_set_slides (meta, uris, &entry->slide_mpp, 1);
  }
}

/* The payload as it is stored, without a copy: read-only memory in the
 * shard's mapping, which it keeps alive (a buffer may outlive the store,
 * closed at READY). An element that maps it for writing gets a copy. */
static GstBuffer *
store_wrap_payload (WsiStorePatch * work)
{
  const WsiShard *shard = work->shard;
  const WsiStoreEntry *entry = &shard->entries[work->local];
  GstBuffer *buffer = gst_buffer_new ();

  gst_buffer_append_memory (buffer, gst_memory_new_wrapped
      (GST_MEMORY_FLAG_READONLY, (gpointer) shard->data, shard->size,
          entry->offset, entry->size, g_mapped_file_ref (shard->map),
          (GDestroyNotify) g_mapped_file_unref));
  return buffer;
}

/* The record-version 2 fields patchviews adds: view-names and views. */
static void
add_views_meta (GstBuffer * buffer, const WsiStoreView * views, guint n)
{
  GstStructure *meta = wsi_patch_meta_get (buffer);
  WsiViewRecord records[16];
  const gchar *names[17];
  GBytes *bytes;
  guint v;

  for (v = 0; v < n; v++) {
    records[v] = views[v].record;
    names[v] = views[v].name;
  }
  names[n] = NULL;
  bytes = g_bytes_new (records, n * sizeof (WsiViewRecord));
  gst_structure_set (meta, "record-version", G_TYPE_UINT, WSI_RECORD_VERSION,
      "view-names", G_TYPE_STRV, names, "views", G_TYPE_BYTES, bytes, NULL);
  g_bytes_unref (bytes);
}

/* A multi-view location: every view decoded into one allocation, one
 * memory per view (tight rows), as patchviews pushes it; NULL
 * (work->error) when a view does not decode. */
static GstBuffer *
store_decode_views (const WsiStorePixels * pixels, WsiStorePatch * work,
    WsiStoreCodec * codec)
{
  const WsiShard *shard = work->shard;
  const WsiStoreEntry *entry = &shard->entries[work->local];
  const WsiStoreView *views = wsi_shard_views (shard, work->local);
  const guint8 *payload = wsi_shard_payload (shard, work->local);
  guint bpp = pixels->channels, v;
  gsize offsets[17], row;
  GstBuffer *buffer;
  GstMemory *mem;
  GstMapInfo map;
  gboolean ok = TRUE;

  offsets[0] = 0;
  for (v = 0; v < entry->n_views; v++)
    offsets[v + 1] = offsets[v] + (gsize) views[v].record.out_width *
        views[v].record.out_height * bpp;
  mem = gst_allocator_alloc (NULL, offsets[entry->n_views], NULL);
  if (mem == NULL || !gst_memory_map (mem, &map, GST_MAP_WRITE)) {
    g_set_error (&work->error, G_IO_ERROR, G_IO_ERROR_NO_SPACE,
        "out of memory for the views");
    if (mem)
      gst_memory_unref (mem);
    return NULL;
  }
  for (v = 0; v < entry->n_views && ok; v++) {
    row = (gsize) views[v].record.out_width * bpp;
    ok = wsi_store_decode (codec, shard->encoding, pixels,
        payload + views[v].offset, views[v].size, views[v].record.out_width,
        views[v].record.out_height, map.data + offsets[v], row,
        &work->error);
  }
  gst_memory_unmap (mem, &map);
  if (!ok) {
    gst_memory_unref (mem);
    return NULL;
  }
  buffer = gst_buffer_new ();
  for (v = 0; v < entry->n_views; v++)
    gst_buffer_append_memory (buffer, gst_memory_share (mem, offsets[v],
            offsets[v + 1] - offsets[v]));
  gst_memory_unref (mem);
  return buffer;
}

/* The patch decoded into its preallocated buffer, or NULL (work->error). */
static GstBuffer *
store_decode_pixels (const WsiStorePixels * pixels, WsiStorePatch * work,
    WsiStoreCodec * codec)
{
  const WsiShard *shard = work->shard;
  const WsiStoreEntry *entry = &shard->entries[work->local];
  GstBuffer *buffer = g_steal_pointer (&work->buffer);
  GstMapInfo map;
  gboolean ok;

  if (!gst_buffer_map (buffer, &map, GST_MAP_WRITE)) {
    gst_buffer_unref (buffer);
    return NULL;
  }
  ok = wsi_store_decode (codec, shard->encoding, pixels,
      wsi_shard_payload (shard, work->local), entry->size, entry->width,
      entry->height, map.data, work->stride, &work->error);
  gst_buffer_unmap (buffer, &map);
  if (!ok)
    g_clear_pointer (&buffer, gst_buffer_unref);
  return buffer;
}

GstBuffer *
wsi_store_patch_make (WsiStorePatch * work, const WsiStorePixels * pixels,
    WsiStoreCodec * codec)
{
  const WsiShard *shard = work->shard;
  GstBuffer *buffer = work->as_stored ? store_wrap_payload (work) :
      shard->views ? store_decode_views (pixels, work, codec) :
      store_decode_pixels (pixels, work, codec);

  if (buffer == NULL)
    return NULL;
  add_patch_meta (buffer, &shard->entries[work->local],
      wsi_shard_slide (shard, work->local), work->epoch, work->index);
  if (shard->views)
    add_views_meta (buffer, wsi_shard_views (shard, work->local),
        shard->entries[work->local].n_views);
  GST_BUFFER_OFFSET (buffer) = work->position;
  GST_BUFFER_OFFSET_END (buffer) = GST_BUFFER_OFFSET_NONE;
  return buffer;
}

void
wsi_store_patch_clear (WsiStorePatch * work)
{
  gst_clear_buffer (&work->buffer);
  g_clear_error (&work->error);
}
