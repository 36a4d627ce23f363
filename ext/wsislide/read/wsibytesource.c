/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsibytesource.c: the byte-source base and the local file source
 * (pread on one descriptor; the kernel's page cache is its block cache).
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wsibytesource.h"
#include "wsilocalfile.h"

G_DEFINE_QUARK (wsi-byte-source-error-quark, wsi_byte_source_error);

void
wsi_byte_source_init (WsiByteSource * source,
    const WsiByteSourceClass * klass, const gchar * location,
    const gchar * display_uri, guint64 size, const gchar * identity,
    gboolean is_local)
{
  source->klass = klass;
  source->ref_count = 1;
  source->location = g_strdup (location);
  source->display_uri = g_strdup (display_uri);
  source->size = size;
  source->identity = g_strdup (identity);
  source->is_local = is_local;
}

WsiByteSource *
wsi_byte_source_ref (WsiByteSource * source)
{
  g_atomic_int_inc (&source->ref_count);
  return source;
}

void
wsi_byte_source_unref (WsiByteSource * source)
{
  if (source == NULL || !g_atomic_int_dec_and_test (&source->ref_count))
    return;
  if (source->klass->finalize)
    source->klass->finalize (source);
  g_free (source->location);
  g_free (source->display_uri);
  g_free (source->identity);
  g_free (source);
}

gboolean
wsi_byte_source_read (WsiByteSource * source, guint64 offset, gsize length,
    guint8 * dest, GError ** error)
{
  if (offset > source->size || length > source->size - offset) {
    g_set_error (error, WSI_BYTE_SOURCE_ERROR, WSI_BYTE_SOURCE_ERROR_SHORT,
        "%s: bytes %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT
        " lie past its end (%" G_GUINT64_FORMAT " bytes)",
        source->display_uri, offset, offset + length, source->size);
    return FALSE;
  }
  if (length == 0)
    return TRUE;
  return source->klass->read (source, offset, length, dest, error);
}

void
wsi_byte_source_prefetch (WsiByteSource * source,
    const WsiByteRange * ranges, guint n_ranges)
{
  if (source->klass->prefetch && n_ranges > 0)
    source->klass->prefetch (source, ranges, n_ranges);
}

guint64
wsi_byte_source_get_size (const WsiByteSource * source)
{
  return source->size;
}

const gchar *
wsi_byte_source_get_display_uri (const WsiByteSource * source)
{
  return source->display_uri;
}

const gchar *
wsi_byte_source_get_identity (const WsiByteSource * source)
{
  return source->identity;
}

gboolean
wsi_byte_source_is_local (const WsiByteSource * source)
{
  return source->is_local;
}

/* ---- local files ---- */

typedef struct
{
  WsiByteSource parent;
  int fd;
} WsiFileSource;

static gboolean
file_source_read (WsiByteSource * source, guint64 offset, gsize length,
    guint8 * dest, GError ** error)
{
  WsiFileSource *fs = (WsiFileSource *) source;

  while (length > 0) {
    ssize_t n = pread (fs->fd, dest, length, (off_t) offset);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int saved = errno;
      g_set_error (error, WSI_BYTE_SOURCE_ERROR,
          n == 0 ? WSI_BYTE_SOURCE_ERROR_SHORT : WSI_BYTE_SOURCE_ERROR_IO,
          "%s: %s at byte %" G_GUINT64_FORMAT, source->display_uri,
          n == 0 ? "unexpected end of file" : g_strerror (saved), offset);
      return FALSE;
    }
    dest += n;
    offset += (guint64) n;
    length -= (gsize) n;
  }
  return TRUE;
}

static void
file_source_finalize (WsiByteSource * source)
{
  WsiFileSource *fs = (WsiFileSource *) source;

  if (fs->fd >= 0)
    close (fs->fd);
}

static const WsiByteSourceClass file_source_class = {
  "file", file_source_read, NULL, file_source_finalize
};

static WsiByteSource *
file_source_open (const gchar * path, GError ** error)
{
  WsiFileSource *fs;
  struct stat st;
  gchar *display = wsi_display_text (path);
  gchar *identity;
  GError *local = NULL;
  /* Never blocks (a FIFO named like a slide, e.g. while a folder is
   * indexed) and refuses what is not a regular file, with its reason. */
  int fd = wsi_local_file_open (path, NULL, &local);

  if (fd < 0 || fstat (fd, &st) != 0) {
    g_set_error_literal (error, WSI_BYTE_SOURCE_ERROR,
        local == NULL ? WSI_BYTE_SOURCE_ERROR_IO :
        local->code == G_FILE_ERROR_NOENT ? WSI_BYTE_SOURCE_ERROR_NOT_FOUND :
        local->code == G_FILE_ERROR_ACCES || local->code == G_FILE_ERROR_PERM
        ? WSI_BYTE_SOURCE_ERROR_DENIED : WSI_BYTE_SOURCE_ERROR_IO,
        local != NULL ? local->message : display);
    g_clear_error (&local);
    if (fd >= 0)
      close (fd);
    g_free (display);
    return NULL;
  }
  fs = g_new0 (WsiFileSource, 1);
  fs->fd = fd;
  identity = g_strdup_printf ("%" G_GUINT64_FORMAT ":%" G_GINT64_FORMAT,
      (guint64) st.st_size, (gint64) st.st_mtime);
  wsi_byte_source_init (&fs->parent, &file_source_class, path, display,
      (guint64) st.st_size, identity, TRUE);
  g_free (identity);
  g_free (display);
  return &fs->parent;
}

/* ---- the scheme table ---- */

static GMutex schemes_lock;
static GHashTable *schemes;     /* lower-case scheme -> WsiByteSourceOpenFunc */

void
wsi_byte_source_register_scheme (const gchar * scheme,
    WsiByteSourceOpenFunc open)
{
  g_return_if_fail (scheme != NULL && open != NULL);

  g_mutex_lock (&schemes_lock);
  if (schemes == NULL)
    schemes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_replace (schemes, g_ascii_strdown (scheme, -1), open);
  g_mutex_unlock (&schemes_lock);
}

/* The open function registered for @location's scheme, or NULL. */
static WsiByteSourceOpenFunc
scheme_lookup (const gchar * location)
{
  gchar *scheme = wsi_location_scheme (location);
  WsiByteSourceOpenFunc open = NULL;

  if (scheme == NULL)
    return NULL;
  g_mutex_lock (&schemes_lock);
  if (schemes != NULL)
    open = g_hash_table_lookup (schemes, scheme);
  g_mutex_unlock (&schemes_lock);
  g_free (scheme);
  return open;
}

WsiByteSource *
wsi_byte_source_open (const gchar * location, GError ** error)
{
  WsiByteSourceOpenFunc open;

  g_return_val_if_fail (location != NULL, NULL);

  if (g_ascii_strncasecmp (location, "file://", 7) == 0) {
    gchar *path = g_filename_from_uri (location, NULL, NULL);
    WsiByteSource *source;
    if (path == NULL) {
      gchar *display = wsi_display_text (location);
      g_set_error (error, WSI_BYTE_SOURCE_ERROR,
          WSI_BYTE_SOURCE_ERROR_NOT_FOUND, "%s: not a valid file URI",
          display);
      g_free (display);
      return NULL;
    }
    source = file_source_open (path, error);
    g_free (path);
    return source;
  }
  open = scheme_lookup (location);
  if (open != NULL)
    return open (location, error);
  if (wsi_location_is_remote (location)) {
    /* Remote sources register their schemes (wsireadsources.c) where the
     * build has them; until then, say so by scheme, never echoing the whole
     * URL (it may carry a signature or token in its query). */
    g_set_error (error, WSI_BYTE_SOURCE_ERROR,
        WSI_BYTE_SOURCE_ERROR_UNSUPPORTED,
        "%.*s URLs are not supported by this build", (int) (strchr (location,
                ':') - location), location);
    return NULL;
  }
  return file_source_open (location, error);
}

/* ---- I/O waits ----------------------------------------------------------- */

static WsiByteSourceWaitFunc wait_func;

void
wsi_byte_source_set_wait_func (WsiByteSourceWaitFunc func)
{
  g_atomic_pointer_set (&wait_func, func);
}

void
wsi_byte_source_note_wait (gint64 start_us)
{
  WsiByteSourceWaitFunc func = g_atomic_pointer_get (&wait_func);

  if (func != NULL)
    func ((guint64) start_us * 1000, (guint64) g_get_monotonic_time () * 1000);
}
