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

#include "wsishardreader.h"
#include "wsilocalfile.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static void
slide_free (WsiStoreSlide * slide)
{
  g_free (slide->path);
  g_free (slide->uri);
  g_free (slide->label);
  g_strfreev (slide->column_names);
  g_strfreev (slide->column_values);
  g_free (slide);
}

void
wsi_shard_free (WsiShard * shard)
{
  if (shard == NULL)
    return;
  if (shard->map)
    g_mapped_file_unref (shard->map);
  if (shard->slides)
    g_ptr_array_unref (shard->slides);
  g_free (shard->name);
  g_free (shard->path);
  g_free (shard);
}

static gboolean
invalid (GError ** error, const gchar * path, const gchar * reason)
{
  gchar *text = g_strdup_printf ("Shard \"%s\" is damaged or not a patch "
      "store shard: %s", path, reason);
  /* Messages reach Python as str: a path or a header's bytes must not make
   * them invalid UTF-8. */
  gchar *display = wsi_text_escape (text, -1);

  g_set_error_literal (error, WSI_SHARD_ERROR, WSI_SHARD_ERROR_DAMAGED,
      display);
  g_free (display);
  g_free (text);
  return FALSE;
}

/* A pixel format name as the writer puts it (GStreamer's: "RGB", "GRAY8",
 * "I420_10LE"): anything else is a damaged header. */
static gboolean
is_format_name (const gchar * name)
{
  if (*name == '\0')
    return FALSE;
  for (; *name != '\0'; name++)
    if (!g_ascii_isalnum (*name) && *name != '_')
      return FALSE;
  return TRUE;
}

/* Header and footer: magic, version, offsets inside the file. The footer
 * ends the file, whose size need not be a multiple of 8: it is copied into
 * @footer_copy, not read in place (a misaligned access, UBSan). */
static gboolean
check_frame (WsiShard * shard, WsiShardFooter * footer_copy, GError ** error)
{
  const WsiShardHeader *header = (const WsiShardHeader *) shard->data;
  const WsiShardFooter *footer = footer_copy;

  if (shard->size < sizeof (WsiShardHeader) + sizeof (WsiShardFooter))
    return invalid (error, shard->path, "too short (truncated?)");
  memcpy (footer_copy, shard->data + shard->size - sizeof (WsiShardFooter),
      sizeof (WsiShardFooter));
  if (memcmp (header->magic, WSI_SHARD_MAGIC, 8) != 0)
    return invalid (error, shard->path, "no shard header");
  if (memcmp (footer->magic, WSI_SHARD_FOOTER_MAGIC, 8) != 0)
    return invalid (error, shard->path, "no footer (truncated?)");
  if (header->version < WSI_STORE_VERSION
      || header->version > WSI_STORE_VERSION_MAX
      || footer->version != header->version) {
    g_set_error (error, WSI_SHARD_ERROR, WSI_SHARD_ERROR_VERSION, "Shard \"%s\" is store "
        "format version %u; this gst-wsi reads versions %u to %u", shard->path,
        header->version, WSI_STORE_VERSION, WSI_STORE_VERSION_MAX);
    return FALSE;
  }
  shard->views = header->version == WSI_STORE_VERSION_VIEWS;
  if (header->encoding > WSI_STORE_ENCODING_JPEG)
    return invalid (error, shard->path, "unknown encoding");
  if (footer->entries_offset % WSI_SHARD_ALIGN != 0
      || footer->entries_offset > shard->size
      || (shard->size - footer->entries_offset) / sizeof (WsiStoreEntry)
      < footer->n_patches
      || footer->slides_offset != footer->entries_offset +
      (guint64) footer->n_patches * sizeof (WsiStoreEntry)
      || footer->slides_offset + footer->slides_size + sizeof (*footer)
      != shard->size)
    return invalid (error, shard->path, "inconsistent footer");
  shard->encoding = header->encoding;
  memcpy (shard->video_format, header->video_format,
      sizeof (shard->video_format));
  shard->video_format[sizeof (shard->video_format) - 1] = '\0';
  if (!is_format_name (shard->video_format)) {
    gchar *shown = wsi_text_escape (shard->video_format, -1);
    gchar *reason = g_strdup_printf ("an unreadable pixel format \"%s\"",
        shown);

    invalid (error, shard->path, reason);
    g_free (reason);
    g_free (shown);
    return FALSE;
  }
  return TRUE;
}

static gboolean
parse_slides (WsiShard * shard, const WsiShardFooter * footer,
    GError ** error)
{
  GBytes *bytes = g_bytes_new_static (shard->data + footer->slides_offset,
      footer->slides_size);
  GVariant *table = g_variant_new_from_bytes (G_VARIANT_TYPE
      (WSI_STORE_SLIDES_TYPE), bytes, FALSE);
  GVariantIter iter;
  WsiStoreSlide slide;

  g_bytes_unref (bytes);
  g_variant_ref_sink (table);
  /* Untrusted bytes: GVariant substitutes defaults for malformed parts. */
  shard->slides = g_ptr_array_new_with_free_func ((GDestroyNotify) slide_free);
  g_variant_iter_init (&iter, table);
  while (g_variant_iter_next (&iter, "(sss^as^as)", &slide.path, &slide.uri,
          &slide.label, &slide.column_names, &slide.column_values))
    g_ptr_array_add (shard->slides, g_memdup2 (&slide, sizeof (slide)));
  g_variant_unref (table);
  if (shard->slides->len == 0 && footer->n_patches > 0)
    return invalid (error, shard->path, "empty slide table");
  return TRUE;
}

/* A multi-view payload: its header and view table inside it, each view's
 * payload inside it, each view of a sane size (raw: exactly its pixels). */
static gboolean
views_are_valid (const WsiShard * shard, const WsiStoreEntry * e)
{
  const WsiStoreViewsHeader *header = (const WsiStoreViewsHeader *)
      wsi_shard_payload (shard, e - shard->entries);
  const WsiStoreView *views = (const WsiStoreView *) (header + 1);
  guint v;

  if (e->n_views == 0 || e->n_views > 16 || e->size < sizeof (*header)
      + (guint64) e->n_views * sizeof (WsiStoreView)
      || header->n_views != e->n_views)
    return FALSE;
  for (v = 0; v < e->n_views; v++) {
    const WsiViewRecord *r = &views[v].record;

    if (views[v].offset > e->size || views[v].size > e->size - views[v].offset
        || r->out_width == 0 || r->out_height == 0 || r->out_width > 65536
        || r->out_height > 65536)
      return FALSE;
    if (shard->encoding == WSI_STORE_ENCODING_RAW && views[v].size !=
        (guint64) r->out_width * r->out_height * e->channels)
      return FALSE;
  }
  return TRUE;
}

static gboolean
check_entries (WsiShard * shard, const WsiShardFooter * footer,
    GError ** error)
{
  guint i;

  for (i = 0; i < shard->n_patches; i++) {
    const WsiStoreEntry *e = &shard->entries[i];

    if (e->offset < sizeof (WsiShardHeader)
        || e->offset > footer->entries_offset
        || e->size > footer->entries_offset - e->offset)
      return invalid (error, shard->path, "a patch lies outside the shard");
    /* the writer aligns every payload (a view table is read in place:
     * a misaligned one is undefined behaviour, UBSan) */
    if (e->offset % WSI_SHARD_ALIGN != 0)
      return invalid (error, shard->path, "a patch is not 64-byte aligned");
    if (e->slide >= shard->slides->len)
      return invalid (error, shard->path, "a patch names no slide");
    if (e->width == 0 || e->height == 0 || e->width > 65536
        || e->height > 65536 || (e->channels != 1 && e->channels != 3
            && e->channels != 4))
      return invalid (error, shard->path, "a patch has a bad size");
    if (shard->views != (e->n_views > 0))
      return invalid (error, shard->path, shard->views ? "a location of a "
          "views shard has no views" : "a patch shard holds views");
    if (shard->views && !views_are_valid (shard, e))
      return invalid (error, shard->path, "a location's view table is "
          "damaged");
    if (!shard->views && shard->encoding == WSI_STORE_ENCODING_RAW
        && e->size != (guint64) e->width * e->height * e->channels)
      return invalid (error, shard->path, "a raw patch has the wrong size");
  }
  return TRUE;
}

WsiShard *
wsi_shard_open (const gchar * path, gboolean verify, GError ** error)
{
  WsiShard *shard = g_new0 (WsiShard, 1);
  WsiShardFooter footer_copy;
  const WsiShardFooter *footer = &footer_copy;
  GError *map_error = NULL;

  shard->path = g_strdup (path);
  shard->name = g_path_get_basename (path);
  /* Never blocks (a FIFO named like a shard), refuses non-files. */
  shard->map = wsi_local_file_map (path, &map_error);
  if (shard->map == NULL) {
    g_set_error (error, WSI_SHARD_ERROR, WSI_SHARD_ERROR_OPEN, "Could not "
        "open shard %s", map_error->message);
    g_error_free (map_error);
    wsi_shard_free (shard);
    return NULL;
  }
  shard->data = (const guint8 *) g_mapped_file_get_contents (shard->map);
  shard->size = g_mapped_file_get_length (shard->map);
  if (!check_frame (shard, &footer_copy, error))
    goto fail;
  shard->crc32 = footer->crc32;
  if (verify && crc32 (crc32 (0, NULL, 0), shard->data,
          shard->size - sizeof (*footer)) != footer->crc32) {
    invalid (error, path, "checksum mismatch");
    goto fail;
  }
  shard->entries = (const WsiStoreEntry *) (shard->data +
      footer->entries_offset);
  shard->n_patches = footer->n_patches;
  if (!parse_slides (shard, footer, error) || !check_entries (shard, footer,
          error))
    goto fail;
  return shard;

fail:
  wsi_shard_free (shard);
  return NULL;
}
