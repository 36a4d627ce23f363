/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsiindexcache.c: remote slide indexes on local disk (see
 * wsiindexcache.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <sys/stat.h>
#include <utime.h>
#include <glib/gstdio.h>

#include "wsiindexcache.h"
#include "wsilocalfile.h"

#define DEFAULT_MAX_MB 256
/* An entry file: the format's name and version with the byte order (the
 * payload's numbers are native), the entry's key, the payload. */
#define ENTRY_TYPE "(ssay)"
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
#define ENTRY_MAGIC "gst-wsi-index/1 le"
#else
#define ENTRY_MAGIC "gst-wsi-index/1 be"
#endif
#define ENTRY_SUFFIX ".idx"

gchar *
wsi_index_cache_dir (void)
{
  const gchar *dir = g_getenv ("WSI_INDEX_CACHE_DIR");

  if (dir != NULL)
    return *dir == '\0' || g_ascii_strcasecmp (dir, "none") == 0 ? NULL :
        g_strdup (dir);
  return g_build_filename (g_get_user_cache_dir (), "gst-wsi", "index", NULL);
}

static guint64
max_bytes (void)
{
  const gchar *mb = g_getenv ("WSI_INDEX_CACHE_MB");
  guint64 v = DEFAULT_MAX_MB;

  if (mb != NULL && *mb != '\0')
    v = g_ascii_strtoull (mb, NULL, 10);
  return v << 20;
}

/* What identifies an entry: the kind and the object as pinned at open. */
static gchar *
entry_key (const gchar * kind, WsiByteSource * source)
{
  const gchar *identity = wsi_byte_source_get_identity (source);

  if (wsi_byte_source_is_local (source) || identity == NULL
      || strcmp (identity, "unpinned") == 0)
    return NULL;
  return g_strdup_printf ("%s\n%s\n%" G_GUINT64_FORMAT "\n%s", kind,
      wsi_byte_source_get_display_uri (source),
      wsi_byte_source_get_size (source), identity);
}

static gchar *
entry_path_for_key (const gchar * key)
{
  gchar *dir = wsi_index_cache_dir ();
  gchar *hash, *name, *path;

  if (dir == NULL)
    return NULL;
  hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256, key, -1);
  name = g_strconcat (hash, ENTRY_SUFFIX, NULL);
  path = g_build_filename (dir, name, NULL);
  g_free (name);
  g_free (hash);
  g_free (dir);
  return path;
}

gchar *
wsi_index_cache_path (const gchar * kind, WsiByteSource * source)
{
  gchar *key = entry_key (kind, source);
  gchar *path = key ? entry_path_for_key (key) : NULL;

  g_free (key);
  return path;
}

/* The payload of the entry file @contents when it holds exactly @key. */
static GBytes *
entry_payload (GBytes * contents, const gchar * key, const gchar * path)
{
  GVariant *entry = g_variant_new_from_bytes (G_VARIANT_TYPE (ENTRY_TYPE),
      contents, FALSE);
  GBytes *payload = NULL;
  const gchar *magic = NULL, *stored_key = NULL;
  GVariant *data;

  g_variant_ref_sink (entry);
  /* GVariant reads untrusted data safely, but a file not in normal form
   * was not written by us */
  if (!g_variant_is_normal_form (entry)) {
    g_debug ("index cache: %s is not an index file: ignored", path);
    g_variant_unref (entry);
    return NULL;
  }
  g_variant_get (entry, "(&s&s@ay)", &magic, &stored_key, &data);
  if (strcmp (magic, ENTRY_MAGIC) != 0)
    g_debug ("index cache: %s is of another format (%s): ignored", path,
        magic);
  else if (strcmp (stored_key, key) != 0)
    g_debug ("index cache: %s holds another object's index: ignored", path);
  else
    payload = g_variant_get_data_as_bytes (data);
  g_variant_unref (data);
  g_variant_unref (entry);
  return payload;
}

GBytes *
wsi_index_cache_lookup (const gchar * kind, WsiByteSource * source)
{
  gchar *key = entry_key (kind, source);
  gchar *path = key ? entry_path_for_key (key) : NULL;
  gchar *contents = NULL;
  gsize length = 0;
  GBytes *payload = NULL;
  GStatBuf st;

  if (path == NULL) {
    g_free (key);
    return NULL;
  }
  if (g_stat (path, &st) != 0 || !S_ISREG (st.st_mode)) {
    g_debug ("index cache: no entry for %s",
        wsi_byte_source_get_display_uri (source));
  } else if ((guint64) st.st_size > max_bytes ()) {
    g_debug ("index cache: %s is larger than the cache bound: ignored",
        path);
  } else if (wsi_local_file_read (path, max_bytes (), &contents, &length,
          NULL)) {
    GBytes *bytes = g_bytes_new_take (contents, length);
    payload = entry_payload (bytes, key, path);
    g_bytes_unref (bytes);
    if (payload != NULL)
      g_utime (path, NULL);     /* recently used: evicted last */
  }
  g_free (path);
  g_free (key);
  return payload;
}

typedef struct
{
  gchar *path;
  gint64 mtime;
  guint64 size;
} EntryFile;

static gint
older_first (gconstpointer a, gconstpointer b)
{
  const EntryFile *x = a, *y = b;

  return x->mtime < y->mtime ? -1 : (x->mtime > y->mtime ? 1 : 0);
}

/* Removes the least recently used entries until the folder's entries fit
 * the bound. */
static void
trim_folder (const gchar * dir)
{
  GArray *files = g_array_new (FALSE, FALSE, sizeof (EntryFile));
  GDir *d = g_dir_open (dir, 0, NULL);
  guint64 total = 0, bound = max_bytes ();
  const gchar *name;
  guint i;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL) {
    EntryFile f;
    GStatBuf st;

    if (!g_str_has_suffix (name, ENTRY_SUFFIX))
      continue;
    f.path = g_build_filename (dir, name, NULL);
    if (g_stat (f.path, &st) != 0) {
      g_free (f.path);
      continue;
    }
    f.mtime = (gint64) st.st_mtime;
    f.size = (guint64) st.st_size;
    total += f.size;
    g_array_append_val (files, f);
  }
  if (d != NULL)
    g_dir_close (d);
  g_array_sort (files, older_first);
  for (i = 0; i < files->len; i++) {
    EntryFile *f = &g_array_index (files, EntryFile, i);
    if (total > bound && g_unlink (f->path) == 0) {
      g_debug ("index cache: removed %s (bound %" G_GUINT64_FORMAT " MiB)",
          f->path, bound >> 20);
      total -= f->size;
    }
    g_free (f->path);
  }
  g_array_free (files, TRUE);
}

void
wsi_index_cache_store (const gchar * kind, WsiByteSource * source,
    GBytes * payload)
{
  gchar *key = entry_key (kind, source);
  gchar *path = key ? entry_path_for_key (key) : NULL;
  gchar *dir;
  GVariant *entry;
  GError *error = NULL;

  if (path == NULL) {
    g_free (key);
    return;
  }
  dir = g_path_get_dirname (path);
  entry = g_variant_ref_sink (g_variant_new ("(ss@ay)", ENTRY_MAGIC, key,
          g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, payload,
              TRUE)));
  if (g_mkdir_with_parents (dir, 0700) != 0
      || !g_file_set_contents_full (path, g_variant_get_data (entry),
          g_variant_get_size (entry), G_FILE_SET_CONTENTS_CONSISTENT, 0600,
          &error))
    g_debug ("index cache: cannot write %s: %s", path,
        error ? error->message : "cannot create the folder");
  else
    trim_folder (dir);
  g_clear_error (&error);
  g_variant_unref (entry);
  g_free (dir);
  g_free (path);
  g_free (key);
}
