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

#include "wsitarwriter.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define BLOCK 512

struct _WsiTarWriter
{
  gchar *path;
  gchar *tmp_path;
  FILE *file;
};

static gboolean
fail (WsiTarWriter * writer, const gchar * what, GError ** error)
{
  int saved = errno ? errno : EIO;

  g_set_error (error, G_IO_ERROR, saved == EFBIG ? G_IO_ERROR_NO_SPACE :
      g_io_error_from_errno (saved), "Could not %s \"%s\": %s", what,
      writer->tmp_path, g_strerror (saved));
  return FALSE;
}

static void
writer_free (WsiTarWriter * writer)
{
  if (writer->file)
    fclose (writer->file);
  g_free (writer->path);
  g_free (writer->tmp_path);
  g_free (writer);
}

WsiTarWriter *
wsi_tar_writer_new (const gchar * path, GError ** error)
{
  WsiTarWriter *writer = g_new0 (WsiTarWriter, 1);

  writer->path = g_strdup (path);
  writer->tmp_path = g_strconcat (path, ".tmp", NULL);
  writer->file = g_fopen (writer->tmp_path, "wbe");
  if (writer->file == NULL) {
    fail (writer, "create", error);
    writer_free (writer);
    return NULL;
  }
  return writer;
}

/* A ustar header: octal fields, checksum over the header with the checksum
 * field read as spaces. */
static void
make_header (guint8 * header, const gchar * name, gsize size)
{
  guint sum = 0, i;

  memset (header, 0, BLOCK);
  g_strlcpy ((gchar *) header, name, 100);
  g_snprintf ((gchar *) header + 100, 8, "%07o", 0644);
  g_snprintf ((gchar *) header + 108, 8, "%07o", 0);
  g_snprintf ((gchar *) header + 116, 8, "%07o", 0);
  g_snprintf ((gchar *) header + 124, 12, "%011llo",
      (unsigned long long) size);
  g_snprintf ((gchar *) header + 136, 12, "%011o", 0);
  memset (header + 148, ' ', 8);
  header[156] = '0';
  memcpy (header + 257, "ustar", 6);
  memcpy (header + 263, "00", 2);
  for (i = 0; i < BLOCK; i++)
    sum += header[i];
  g_snprintf ((gchar *) header + 148, 8, "%06o", sum);
  header[155] = ' ';
}

gboolean
wsi_tar_writer_add (WsiTarWriter * writer, const gchar * name,
    const guint8 * data, gsize size, GError ** error)
{
  static const guint8 zeros[BLOCK];
  guint8 header[BLOCK];
  gsize pad = (BLOCK - size % BLOCK) % BLOCK;

  g_return_val_if_fail (strlen (name) < 100, FALSE);
  make_header (header, name, size);
  errno = 0;
  if (fwrite (header, 1, BLOCK, writer->file) != BLOCK
      || (size > 0 && fwrite (data, 1, size, writer->file) != size)
      || (pad > 0 && fwrite (zeros, 1, pad, writer->file) != pad))
    return fail (writer, "write", error);
  return TRUE;
}

gboolean
wsi_tar_writer_finish (WsiTarWriter * writer, GError ** error)
{
  static const guint8 zeros[2 * BLOCK];

  errno = 0;
  if (fwrite (zeros, 1, sizeof (zeros), writer->file) != sizeof (zeros)
      || fflush (writer->file) != 0 || fsync (fileno (writer->file)) != 0) {
    fail (writer, "write", error);
    wsi_tar_writer_abandon (writer);
    return FALSE;
  }
  if (fclose (writer->file) != 0) {
    writer->file = NULL;
    fail (writer, "close", error);
    wsi_tar_writer_abandon (writer);
    return FALSE;
  }
  writer->file = NULL;
  if (g_rename (writer->tmp_path, writer->path) != 0) {
    fail (writer, "rename", error);
    wsi_tar_writer_abandon (writer);
    return FALSE;
  }
  writer_free (writer);
  return TRUE;
}

void
wsi_tar_writer_abandon (WsiTarWriter * writer)
{
  if (writer->file) {
    fclose (writer->file);
    writer->file = NULL;
  }
  g_unlink (writer->tmp_path);
  writer_free (writer);
}
