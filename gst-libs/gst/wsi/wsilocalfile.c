/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsilocalfile.c: non-blocking, regular-file-checked local opens and
 * UTF-8-safe text from files (see wsilocalfile.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsilocalfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

gchar *
wsi_text_escape (const gchar * text, gssize length)
{
  GString *out;
  const gchar *end, *stop;

  if (text == NULL)
    return NULL;
  if (length < 0)
    length = strlen (text);
  if (g_utf8_validate (text, length, NULL))
    return g_strndup (text, length);
  out = g_string_sized_new (length + 16);
  stop = text + length;
  while (text < stop) {
    if (g_utf8_validate (text, stop - text, &end)) {
      g_string_append_len (out, text, stop - text);
      break;
    }
    g_string_append_len (out, text, end - text);
    /* A NUL inside @length is a byte like any other: escaped too. */
    g_string_append_printf (out, "\\x%02X", (guint) (guint8) * end);
    text = end + 1;
  }
  return g_string_free (out, FALSE);
}

const gchar *
wsi_local_file_reason (int errno_value)
{
  switch (errno_value) {
    case ENOENT:
      return "no such file";
    case EACCES:
    case EPERM:
      return "permission denied";
    case ELOOP:
      return "symbolic link loop";
    case ENOTDIR:
      return "a folder on its path is not a folder";
    case ENAMETOOLONG:
      return "the name is too long";
    default:
      return g_strerror (errno_value);
  }
}

static const gchar *
kind_of (mode_t mode)
{
  if (S_ISDIR (mode))
    return "not a regular file (a directory)";
  if (S_ISFIFO (mode))
    return "not a regular file (a FIFO)";
  if (S_ISCHR (mode) || S_ISBLK (mode))
    return "not a regular file (a device)";
  if (S_ISSOCK (mode))
    return "not a regular file (a socket)";
  return "not a regular file";
}

static void
set_error (GError ** error, const gchar * path, gint code,
    const gchar * reason)
{
  gchar *display = wsi_text_escape (path, -1);

  g_set_error (error, G_FILE_ERROR, code, "%s: %s", display, reason);
  g_free (display);
}

int
wsi_local_file_open (const gchar * path, guint64 * size, GError ** error)
{
  struct stat st;
  int fd, flags;

  /* O_NONBLOCK: a FIFO (or a tty) returns at once instead of waiting for a
   * writer; fstat() then refuses it. */
  do
    fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int saved = errno;
    set_error (error, path, g_file_error_from_errno (saved),
        wsi_local_file_reason (saved));
    return -1;
  }
  if (fstat (fd, &st) != 0) {
    int saved = errno;
    close (fd);
    set_error (error, path, g_file_error_from_errno (saved),
        wsi_local_file_reason (saved));
    return -1;
  }
  if (!S_ISREG (st.st_mode)) {
    close (fd);
    set_error (error, path, S_ISDIR (st.st_mode) ? G_FILE_ERROR_ISDIR :
        G_FILE_ERROR_INVAL, kind_of (st.st_mode));
    return -1;
  }
  /* Blocking again for the reads (a regular file ignores it anyway; a
   * descriptor handed to a library should look ordinary). */
  flags = fcntl (fd, F_GETFL);
  if (flags >= 0)
    fcntl (fd, F_SETFL, flags & ~O_NONBLOCK);
  if (size != NULL)
    *size = (guint64) st.st_size;
  return fd;
}

gboolean
wsi_local_file_check (const gchar * path, GError ** error)
{
  int fd = wsi_local_file_open (path, NULL, error);

  if (fd < 0)
    return FALSE;
  close (fd);
  return TRUE;
}

gboolean
wsi_local_file_read (const gchar * path, gsize max_bytes, gchar ** contents,
    gsize * length, GError ** error)
{
  guint64 size;
  GString *out;
  gchar buffer[65536];
  int fd = wsi_local_file_open (path, &size, error);

  if (fd < 0)
    return FALSE;
  if (size > max_bytes) {
    gchar *reason = g_strdup_printf ("%" G_GUINT64_FORMAT " bytes is too "
        "large (at most %" G_GSIZE_FORMAT ")", size, max_bytes);
    close (fd);
    set_error (error, path, G_FILE_ERROR_NOMEM, reason);
    g_free (reason);
    return FALSE;
  }
  out = g_string_sized_new ((gsize) size);
  for (;;) {
    ssize_t n = read (fd, buffer, sizeof (buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int saved = errno;
      close (fd);
      g_string_free (out, TRUE);
      set_error (error, path, g_file_error_from_errno (saved),
          wsi_local_file_reason (saved));
      return FALSE;
    }
    if (n == 0)
      break;
    if (out->len + (gsize) n > max_bytes) {
      close (fd);
      g_string_free (out, TRUE);
      set_error (error, path, G_FILE_ERROR_NOMEM, "it grew while read");
      return FALSE;
    }
    g_string_append_len (out, buffer, n);
  }
  close (fd);
  if (length != NULL)
    *length = out->len;
  *contents = g_string_free (out, FALSE);
  return TRUE;
}

GMappedFile *
wsi_local_file_map (const gchar * path, GError ** error)
{
  GMappedFile *map;
  GError *local = NULL;
  int fd = wsi_local_file_open (path, NULL, error);

  if (fd < 0)
    return NULL;
  map = g_mapped_file_new_from_fd (fd, FALSE, &local);
  close (fd);
  if (map == NULL) {
    set_error (error, path, local->code, local->message);
    g_error_free (local);
  }
  return map;
}
