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

#include "wsishardwriter.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define WRITE_BUFFER_SIZE (4 << 20)

struct _WsiShardWriter
{
  gchar *name;                  /* final file name */
  gchar *path;                  /* final path */
  gchar *tmp_path;
  guint32 version;              /* format version of the shard */
  int fd;
  guint8 *buffer;               /* bytes not yet written */
  gsize buffered;
  guint64 written;              /* bytes in the file so far, buffer included */
  guint32 crc;
  GArray *entries;              /* WsiStoreEntry */
  GHashTable *slide_index;      /* path -> index + 1 */
  GVariantBuilder slides;
  guint n_slides;
};

void
wsi_shard_summary_clear (WsiShardSummary * summary)
{
  g_clear_pointer (&summary->name, g_free);
  summary->n_patches = 0;
  summary->bytes = 0;
  summary->crc32 = 0;
}

static gboolean
fail_errno (WsiShardWriter * writer, int saved_errno, const gchar * what,
    GError ** error)
{
  /* a file-size limit is a full disk for the writer: no more room */
  g_set_error (error, G_IO_ERROR, saved_errno == EFBIG ? G_IO_ERROR_NO_SPACE
      : g_io_error_from_errno (saved_errno), "Could not %s \"%s\": %s", what, writer->tmp_path,
      g_strerror (saved_errno));
  return FALSE;
}

static gboolean
flush_buffer (WsiShardWriter * writer, GError ** error)
{
  const guint8 *p = writer->buffer;
  gsize left = writer->buffered;

  while (left > 0) {
    ssize_t n = write (writer->fd, p, left);

    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return fail_errno (writer, n < 0 ? errno : ENOSPC, "write", error);
    p += n;
    left -= n;
  }
  writer->buffered = 0;
  return TRUE;
}

/* Appends @size bytes (NULL: zeros) to the file. */
static gboolean
append (WsiShardWriter * writer, const void *data, gsize size,
    GError ** error)
{
  static const guint8 zeros[WSI_SHARD_ALIGN];
  const guint8 *p = data;

  while (size > 0) {
    gsize room = WRITE_BUFFER_SIZE - writer->buffered;
    gsize n = MIN (room, size);
    guint8 *dest = writer->buffer + writer->buffered;

    if (data != NULL) {
      memcpy (dest, p, n);
      p += n;
    } else {
      g_assert (size <= sizeof (zeros));
      memcpy (dest, zeros, n);
    }
    writer->crc = crc32 (writer->crc, dest, n);
    writer->buffered += n;
    writer->written += n;
    size -= n;
    if (writer->buffered == WRITE_BUFFER_SIZE && !flush_buffer (writer, error))
      return FALSE;
  }
  return TRUE;
}

static gboolean
pad_to_alignment (WsiShardWriter * writer, GError ** error)
{
  gsize pad = (WSI_SHARD_ALIGN - writer->written % WSI_SHARD_ALIGN)
      % WSI_SHARD_ALIGN;

  return pad == 0 || append (writer, NULL, pad, error);
}

static void
writer_free (WsiShardWriter * writer)
{
  if (writer->fd >= 0)
    close (writer->fd);
  g_free (writer->buffer);
  g_array_unref (writer->entries);
  g_hash_table_unref (writer->slide_index);
  g_variant_builder_clear (&writer->slides);
  g_free (writer->name);
  g_free (writer->path);
  g_free (writer->tmp_path);
  g_free (writer);
}

WsiShardWriter *
wsi_shard_writer_new (const gchar * dir, guint index,
    WsiStoreEncoding encoding, const gchar * video_format, gboolean views,
    GError ** error)
{
  WsiShardWriter *writer = g_new0 (WsiShardWriter, 1);
  WsiShardHeader header;

  writer->name = wsi_shard_file_name (index);
  writer->path = g_build_filename (dir, writer->name, NULL);
  writer->tmp_path = g_strconcat (writer->path, WSI_STORE_TMP_SUFFIX, NULL);
  writer->buffer = g_malloc (WRITE_BUFFER_SIZE);
  writer->entries = g_array_new (FALSE, FALSE, sizeof (WsiStoreEntry));
  writer->slide_index = g_hash_table_new_full (g_str_hash, g_str_equal,
      g_free, NULL);
  g_variant_builder_init (&writer->slides,
      G_VARIANT_TYPE (WSI_STORE_SLIDES_TYPE));
  writer->crc = crc32 (0, NULL, 0);
  writer->fd = g_open (writer->tmp_path, O_WRONLY | O_CREAT | O_TRUNC |
      O_CLOEXEC, 0644);
  if (writer->fd < 0) {
    fail_errno (writer, errno, "create", error);
    writer_free (writer);
    return NULL;
  }

  memset (&header, 0, sizeof (header));
  memcpy (header.magic, WSI_SHARD_MAGIC, sizeof (header.magic));
  header.version = views ? WSI_STORE_VERSION_VIEWS : WSI_STORE_VERSION;
  writer->version = header.version;
  header.encoding = encoding;
  g_strlcpy (header.video_format, video_format, sizeof (header.video_format));
  if (!append (writer, &header, sizeof (header), error)) {
    wsi_shard_writer_abandon (writer);
    return NULL;
  }
  return writer;
}

static guint32
slide_number (WsiShardWriter * writer, const WsiStoreSlideRef * slide)
{
  static const gchar *const none[] = { NULL };
  const gchar *path = slide->path ? slide->path : "";
  gpointer found = g_hash_table_lookup (writer->slide_index, path);

  if (found != NULL)
    return GPOINTER_TO_UINT (found) - 1;
  g_variant_builder_add (&writer->slides, "(sss^as^as)", path,
      slide->uri ? slide->uri : "", slide->label ? slide->label : "",
      slide->column_names ? slide->column_names : none,
      slide->column_values ? slide->column_values : none);
  g_hash_table_insert (writer->slide_index, g_strdup (path),
      GUINT_TO_POINTER (writer->n_slides + 1));
  return writer->n_slides++;
}

gboolean
wsi_shard_writer_add (WsiShardWriter * writer, const WsiPatchRecord * record,
    guint width, guint height, guint channels, guint n_views,
    const guint8 * payload, gsize size, const WsiStoreSlideRef * slide,
    GError ** error)
{
  WsiStoreEntry entry;

  if (!pad_to_alignment (writer, error))
    return FALSE;
  memset (&entry, 0, sizeof (entry));
  entry.offset = writer->written;
  entry.size = size;
  entry.record = *record;
  entry.slide = slide_number (writer, slide);
  entry.width = width;
  entry.height = height;
  entry.channels = channels;
  entry.n_views = n_views;
  entry.slide_mpp = slide->mpp;
  if (!append (writer, payload, size, error))
    return FALSE;
  g_array_append_val (writer->entries, entry);
  return TRUE;
}

guint
wsi_shard_writer_count (const WsiShardWriter * writer)
{
  return writer->entries->len;
}

/* Entries, slide table and footer; the file is then complete. */
static gboolean
write_tail (WsiShardWriter * writer, WsiShardFooter * footer, GError ** error)
{
  GVariant *slides = g_variant_ref_sink (g_variant_builder_end
      (&writer->slides));
  gboolean ok;

  g_variant_builder_init (&writer->slides,
      G_VARIANT_TYPE (WSI_STORE_SLIDES_TYPE));
  memset (footer, 0, sizeof (*footer));
  memcpy (footer->magic, WSI_SHARD_FOOTER_MAGIC, sizeof (footer->magic));
  footer->version = writer->version;
  footer->n_patches = writer->entries->len;
  ok = pad_to_alignment (writer, error);
  footer->entries_offset = writer->written;
  ok = ok && append (writer, writer->entries->data,
      writer->entries->len * sizeof (WsiStoreEntry), error);
  footer->slides_offset = writer->written;
  footer->slides_size = g_variant_get_size (slides);
  ok = ok && append (writer, g_variant_get_data (slides),
      footer->slides_size, error);
  g_variant_unref (slides);
  footer->crc32 = writer->crc;
  ok = ok && append (writer, footer, sizeof (*footer), error);
  return ok && flush_buffer (writer, error);
}

gboolean
wsi_shard_writer_finish (WsiShardWriter * writer, WsiShardSummary * summary,
    GError ** error)
{
  WsiShardFooter footer;

  if (!write_tail (writer, &footer, error)) {
    wsi_shard_writer_abandon (writer);
    return FALSE;
  }
  /* Durable before it gets the name that says "complete". */
  if (fsync (writer->fd) != 0 || close (writer->fd) != 0) {
    writer->fd = -1;
    fail_errno (writer, errno, "sync", error);
    wsi_shard_writer_abandon (writer);
    return FALSE;
  }
  writer->fd = -1;
  if (g_rename (writer->tmp_path, writer->path) != 0) {
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno),
        "Could not rename \"%s\" to \"%s\": %s", writer->tmp_path,
        writer->path, g_strerror (errno));
    wsi_shard_writer_abandon (writer);
    return FALSE;
  }
  summary->name = g_steal_pointer (&writer->name);
  summary->n_patches = footer.n_patches;
  summary->bytes = writer->written;
  summary->crc32 = footer.crc32;
  writer_free (writer);
  return TRUE;
}

void
wsi_shard_writer_abandon (WsiShardWriter * writer)
{
  if (writer->fd >= 0) {
    close (writer->fd);
    writer->fd = -1;
  }
  g_unlink (writer->tmp_path);
  writer_free (writer);
}
