/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsicollection.c: slides from a file, a folder, a list or a manifest
 * (see wsicollection.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsicollection.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

#include "wsilocalfile.h"

#include "wsislide.h"
#include "wsibytesource.h"
#include "wsidicomseries.h"
#ifdef WSI_HAVE_CURL
#include "wsiobjectstore.h"
#endif
#include "wsimanifest.h"
#include "wsitcga.h"

/* Directory scans do not follow links deeper than this (symlink loops). */
#define MAX_SCAN_DEPTH 32

#define LABEL_COLUMN "label"

/* A list or manifest at a URL is read whole: larger ones are refused. */
#define MAX_REMOTE_LIST_BYTES (256 << 20)
/* A local one, too, but it may be larger. */
#define MAX_LOCAL_LIST_BYTES ((gsize) G_MAXSSIZE)

/* Takes @values. */
static WsiSlideEntry *
slide_entry_new (const gchar * path, const gchar * label, gchar ** values)
{
  WsiSlideEntry *entry = g_new0 (WsiSlideEntry, 1);

  entry->path = g_strdup (path);
  entry->display = wsi_location_display (path);
  /* Downstream elements get the display form: let it open the full URL. */
  wsi_location_remember (path);
  entry->label = g_strdup (label ? label : "");
  entry->values = values ? values : g_new0 (gchar *, 1);
  return entry;
}

static void
slide_entry_free (WsiSlideEntry * entry)
{
  if (entry == NULL)
    return;
  g_free (entry->path);
  g_free (entry->display);
  g_free (entry->label);
  g_free (entry->failure);
  g_strfreev (entry->values);
  g_free (entry);
}

static gint
slide_entry_compare (gconstpointer a, gconstpointer b)
{
  const WsiSlideEntry *ea = *(const WsiSlideEntry * const *) a;
  const WsiSlideEntry *eb = *(const WsiSlideEntry * const *) b;
  gint order = strcmp (ea->path, eb->path);

  return order != 0 ? order : strcmp (ea->label, eb->label);
}

static gint
path_compare (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

/* A folder's DICOM files become one slide per series (wsidicomseries.h). */
static void
add_dicom_series (GPtrArray * dicom_paths, GPtrArray * entries)
{
  GPtrArray *picked;
  guint i;

  if (dicom_paths->len == 0)
    return;
  g_ptr_array_sort (dicom_paths, path_compare);
  picked = wsi_dicom_series_pick (dicom_paths);
  for (i = 0; i < picked->len; i++)
    g_ptr_array_add (entries, slide_entry_new (picked->pdata[i], NULL, NULL));
  g_ptr_array_unref (picked);
}

/* A folder seen once per walk, by identity: a link back up the tree
 * (DIR/loop -> ., DIR/sub/up -> ..) would otherwise be walked again at
 * every depth, 2^32 times for two such links. */
static gboolean
first_visit (GHashTable * visited, const GStatBuf * st)
{
  gchar *key = g_strdup_printf ("%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT,
      (guint64) st->st_dev, (guint64) st->st_ino);

  if (g_hash_table_contains (visited, key)) {
    g_free (key);
    return FALSE;
  }
  g_hash_table_add (visited, key);
  return TRUE;
}

static void
warn_skipped (GPtrArray * warnings, const gchar * path, const gchar * what,
    int errno_value)
{
  gchar *display = wsi_display_text (path);

  g_ptr_array_add (warnings, g_strdup_printf ("%s %s cannot be read (%s): "
          "the slides in it are skipped", what, display,
          wsi_local_file_reason (errno_value)));
  g_free (display);
}

static void
scan_directory (const gchar * dir_path, guint depth, GHashTable * visited,
    GPtrArray * entries, GPtrArray * warnings)
{
  GPtrArray *dicom_paths;
  GDir *dir;
  const gchar *name;
  GError *error = NULL;

  if (depth > MAX_SCAN_DEPTH)
    return;
  dir = g_dir_open (dir_path, 0, &error);
  if (dir == NULL) {
    warn_skipped (warnings, dir_path, "The folder",
        g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_ACCES) ? EACCES :
        g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_LOOP) ? ELOOP :
        EIO);
    g_clear_error (&error);
    return;
  }
  dicom_paths = g_ptr_array_new_with_free_func (g_free);
  while ((name = g_dir_read_name (dir)) != NULL) {
    gchar *child = g_build_filename (dir_path, name, NULL);
    GStatBuf st;

    if (g_stat (child, &st) != 0) {
      /* A dangling link is no slide; a loop or a denied stat may hide
       * one. */
      if (errno == EACCES || errno == ELOOP)
        warn_skipped (warnings, child, "The entry", errno);
    } else if (S_ISDIR (st.st_mode)
        && wsi_slide_has_known_extension (child)) {
      /* an OME-Zarr store (x.zarr/): one slide, not a folder to scan */
      g_ptr_array_add (entries, slide_entry_new (child, NULL, NULL));
    } else if (S_ISDIR (st.st_mode)) {
      if (first_visit (visited, &st))
        scan_directory (child, depth + 1, visited, entries, warnings);
    } else if (!S_ISREG (st.st_mode))
      ;
    else if (wsi_dicom_series_is_dicom_file (child)) {
      /* .dcm, or no slide extension and DICOM bytes (one small read). */
      g_ptr_array_add (dicom_paths, child);
      continue;
    } else if (wsi_slide_has_known_extension (child))
      g_ptr_array_add (entries, slide_entry_new (child, NULL, NULL));
    g_free (child);
  }
  g_dir_close (dir);
  add_dicom_series (dicom_paths, entries);
  g_ptr_array_unref (dicom_paths);
}

static void
scan_tree (const gchar * root, WsiCollection * collection)
{
  GHashTable *visited = g_hash_table_new_full (g_str_hash, g_str_equal,
      g_free, NULL);
  GStatBuf st;

  if (g_stat (root, &st) == 0)
    first_visit (visited, &st);
  scan_directory (root, 0, visited, collection->entries,
      collection->warnings);
  g_hash_table_unref (visited);
}

static gchar *
resolve_path (const gchar * list_dir, const gchar * path)
{
  if (g_path_is_absolute (path) || wsi_location_is_remote (path))
    return g_strdup (path);
  /* A list at a URL names its neighbours relative to its own folder. */
  if (wsi_location_is_remote (list_dir))
    return g_strconcat (list_dir, "/", path, NULL);
  return g_build_filename (list_dir, path, NULL);
}

/* Adds the slide named by one line of a list file, if the line names one. */
static void
parse_list_line (gchar * line, const gchar * list_dir, GPtrArray * entries)
{
  gchar *tab = strchr (line, '\t');
  const gchar *label = "";
  gchar *path;

  if (tab != NULL) {
    *tab = '\0';
    label = g_strstrip (tab + 1);
  }
  g_strstrip (line);
  if (line[0] == '\0' || line[0] == '#')
    return;

  path = resolve_path (list_dir, line);
  g_ptr_array_add (entries, slide_entry_new (path, label, NULL));
  g_free (path);
}

static void
parse_list (const gchar * contents, const gchar * list_dir,
    GPtrArray * entries)
{
  gchar **lines = g_strsplit (contents, "\n", -1);

  for (gchar ** line = lines; *line != NULL; line++)
    parse_list_line (*line, list_dir, entries);
  g_strfreev (lines);
}

/* One entry per manifest row; the collection's columns are the
 * manifest's. */
static gboolean
parse_manifest (const gchar * list_path, const gchar * contents,
    gsize length, WsiManifestFormat format, const gchar * list_dir,
    WsiCollection * collection, GError ** error)
{
  WsiManifest *manifest = wsi_manifest_parse (list_path, contents, length,
      format, error);
  gint label_column = -1;

  if (manifest == NULL)
    return FALSE;
  for (guint i = 0; manifest->names[i] != NULL; i++)
    if (strcmp (manifest->names[i], LABEL_COLUMN) == 0)
      label_column = i;

  for (guint i = 0; i < manifest->rows->len; i++) {
    WsiManifestRow *row = g_ptr_array_index (manifest->rows, i);
    gchar *path = resolve_path (list_dir, row->path);

    g_ptr_array_add (collection->entries, slide_entry_new (path,
            label_column >= 0 ? row->values[label_column] : NULL,
            g_strdupv (row->values)));
    g_free (path);
  }
  g_strfreev (collection->column_names);
  collection->column_names = g_strdupv (manifest->names);
  wsi_manifest_free (manifest);
  return TRUE;
}

/* Appends @extra to the NULL-terminated @strv (taking the strings). */
static gchar **
strv_append (gchar ** strv, gchar ** extra, guint n_extra)
{
  guint n = g_strv_length (strv);

  strv = g_renew (gchar *, strv, n + n_extra + 1);
  memcpy (strv + n, extra, n_extra * sizeof (gchar *));
  strv[n + n_extra] = NULL;
  return strv;
}

/* The TCGA columns the collection lacks, filled from every file name. */
static void
add_tcga_columns (WsiCollection * collection)
{
  gboolean take[WSI_TCGA_N_COLUMNS];
  gchar *names[WSI_TCGA_N_COLUMNS];
  guint n_new = 0, i, c;

  for (c = 0; c < WSI_TCGA_N_COLUMNS; c++) {
    take[c] = !g_strv_contains ((const gchar * const *)
        collection->column_names, wsi_tcga_column_names[c]);
    if (take[c])
      names[n_new++] = g_strdup (wsi_tcga_column_names[c]);
  }
  collection->column_names = strv_append (collection->column_names, names,
      n_new);

  for (i = 0; i < collection->entries->len; i++) {
    WsiSlideEntry *entry = g_ptr_array_index (collection->entries, i);
    gchar *values[WSI_TCGA_N_COLUMNS];
    guint k = 0;

    entry->tcga_unparsed = !wsi_tcga_parse (entry->display, values);
    for (c = 0; c < WSI_TCGA_N_COLUMNS; c++) {
      if (take[c])
        values[k++] = values[c];
      else
        g_free (values[c]);
    }
    entry->values = strv_append (entry->values, values, k);
  }
}

/* @error's message without the "PATH: " wsilocalfile.h puts first: the
 * caller names the collection itself. */
static void
drop_path_prefix (GError * error, const gchar * path)
{
  gchar *display = wsi_display_text (path);
  gsize n = strlen (display);

  if (error != NULL && strncmp (error->message, display, n) == 0
      && strncmp (error->message + n, ": ", 2) == 0)
    memmove (error->message, error->message + n + 2,
        strlen (error->message + n + 2) + 1);
  g_free (display);
}

/* The whole list file, local or at a URL (through its byte source). */
static gboolean
read_list (const gchar * location, gchar ** contents, gsize * length,
    GError ** error)
{
  WsiByteSource *source;
  guint64 size;
  gboolean ok;

  if (!wsi_location_is_remote (location)) {
    GError *local = NULL;

    if (wsi_local_file_read (location, MAX_LOCAL_LIST_BYTES, contents,
            length, &local))
      return TRUE;
    drop_path_prefix (local, location);
    g_propagate_error (error, local);
    return FALSE;
  }
  source = wsi_byte_source_open (location, error);
  if (source == NULL)
    return FALSE;
  size = wsi_byte_source_get_size (source);
  if (size > MAX_REMOTE_LIST_BYTES) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOMEM,
        "%s: a list of %" G_GUINT64_FORMAT " bytes is too large (at most %d)",
        wsi_byte_source_get_display_uri (source), size, MAX_REMOTE_LIST_BYTES);
    wsi_byte_source_unref (source);
    return FALSE;
  }
  *contents = g_malloc (size + 1);
  ok = wsi_byte_source_read (source, 0, size, (guint8 *) * contents, error);
  (*contents)[size] = '\0';
  *length = size;
  if (!ok)
    g_clear_pointer (contents, g_free);
  wsi_byte_source_unref (source);
  return ok;
}

/* The DICOM instances a list or manifest names become one entry per
 * series: the entry (label, columns) of the series' level-0 instance
 * stays, the others go; the backend opens the whole series from it
 * (wsidicomseriesmap.h). Costs one header read per DICOM entry. */
static void
group_dicom_entries (GPtrArray * entries)
{
  GPtrArray *paths = g_ptr_array_new ();
  GHashTable *kept;
  GPtrArray *picked;
  guint i;

  for (i = 0; i < entries->len; i++) {
    WsiSlideEntry *entry = g_ptr_array_index (entries, i);
    if (wsi_dicom_series_is_dicom_file (entry->path))
      g_ptr_array_add (paths, entry->path);
  }
  if (paths->len < 2) {
    g_ptr_array_unref (paths);
    return;
  }
  picked = wsi_dicom_series_pick (paths);
  kept = g_hash_table_new (g_str_hash, g_str_equal);
  for (i = 0; i < picked->len; i++)
    g_hash_table_add (kept, picked->pdata[i]);
  for (i = entries->len; i-- > 0;) {
    WsiSlideEntry *entry = g_ptr_array_index (entries, i);
    if (!g_hash_table_contains (kept, entry->path)
        && wsi_dicom_series_is_dicom_file (entry->path))
      g_ptr_array_remove_index (entries, i);
  }
  g_hash_table_unref (kept);
  g_ptr_array_unref (picked);
  g_ptr_array_unref (paths);
}

/* A list or a manifest, told apart by wsi_manifest_sniff(). */
static gboolean
parse_list_file (const gchar * list_path, WsiCollection * collection,
    GError ** error)
{
  gchar *contents, *list_dir;
  gsize length;
  WsiManifestFormat format;
  gboolean ok = TRUE;

  if (!read_list (list_path, &contents, &length, error))
    return FALSE;
  /* A NUL byte in the first lines: an image, not a list (a .dcm file, say) */
  if (memchr (contents, '\0', MIN (length, 4096)) != NULL) {
    gchar *known = wsi_slide_known_extensions_text ();

    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
        "it is neither a slide format this build reads (extensions %s) nor "
        "a text list of slides", known);
    g_free (known);
    g_free (contents);
    return FALSE;
  }
  list_dir = g_path_get_dirname (list_path);
  format = wsi_manifest_sniff (list_path, contents);
  if (format == WSI_MANIFEST_NONE)
    parse_list (contents, list_dir, collection->entries);
  else
    ok = parse_manifest (list_path, contents, length, format, list_dir,
        collection, error);
  if (ok)
    group_dicom_entries (collection->entries);
  g_free (list_dir);
  g_free (contents);
  return ok;
}

/* s3://BUCKET/PREFIX/ or gs://BUCKET/PREFIX/: every object below with a
 * slide extension, as a folder is scanned. */
static gboolean
list_prefix (const gchar * location, WsiCollection * collection,
    GError ** error)
{
#ifdef WSI_HAVE_CURL
  GPtrArray *urls = wsi_object_store_list (location, error);
  guint i;

  if (urls == NULL)
    return FALSE;
  GPtrArray *dicom_urls = g_ptr_array_new_with_free_func (g_free);

  for (i = 0; i < urls->len; i++) {
    const gchar *url = g_ptr_array_index (urls, i);
    /* .dcm objects: one slide per series, as in a folder. */
    if (wsi_dicom_series_is_dicom_file (url))
      g_ptr_array_add (dicom_urls, g_strdup (url));
    else if (wsi_slide_has_known_extension (url))
      g_ptr_array_add (collection->entries, slide_entry_new (url, NULL,
              NULL));
  }
  add_dicom_series (dicom_urls, collection->entries);
  g_ptr_array_unref (dicom_urls);
  g_ptr_array_unref (urls);
  return TRUE;
#else
  gchar *display = wsi_location_display (location);
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOSYS,
      "%s: this build reads no URLs (libcurl was not found)", display);
  g_free (display);
  return FALSE;
#endif
}

/* A URL: one slide, or a list or manifest (its type from its name, as
 * for files: a slide extension is a slide). */
static gboolean
load_remote (const gchar * location, WsiCollection * collection,
    GError ** error)
{
  gchar *trimmed = g_strdup (location);

  /* a prefix ending in .zarr/ is one OME-Zarr store, not a listing */
  while (g_str_has_suffix (trimmed, "/") && strlen (trimmed) > 1)
    trimmed[strlen (trimmed) - 1] = '\0';
  if (wsi_slide_has_known_extension (trimmed)) {
    g_ptr_array_add (collection->entries, slide_entry_new (trimmed, NULL,
            NULL));
    g_free (trimmed);
    return TRUE;
  }
  g_free (trimmed);
  if (g_str_has_suffix (location, "/"))
    return list_prefix (location, collection, error);
  if (wsi_slide_has_known_extension (location)) {
    g_ptr_array_add (collection->entries, slide_entry_new (location, NULL,
            NULL));
    return TRUE;
  }
  return parse_list_file (location, collection, error);
}

WsiCollection *
wsi_collection_load (const gchar * location, gboolean tcga, GError ** error)
{
  WsiCollection *collection = g_new0 (WsiCollection, 1);
  GError *unreadable = NULL;

  collection->entries =
      g_ptr_array_new_with_free_func ((GDestroyNotify) slide_entry_free);
  collection->column_names = g_new0 (gchar *, 1);
  collection->warnings = g_ptr_array_new_with_free_func (g_free);

  if (wsi_location_is_remote (location)) {
    if (!load_remote (location, collection, error))
      goto failed;
  } else if (g_file_test (location, G_FILE_TEST_IS_DIR)
      && wsi_slide_has_known_extension (location)) {
    /* an OME-Zarr store named itself: one slide */
    g_ptr_array_add (collection->entries, slide_entry_new (location, NULL,
            NULL));
  } else if (g_file_test (location, G_FILE_TEST_IS_DIR)) {
    scan_tree (location, collection);
  } else if (!wsi_local_file_check (location, &unreadable)) {
    /* Missing, denied, a loop, a FIFO or a device: its own reason. */
    drop_path_prefix (unreadable, location);
    g_propagate_error (error, unreadable);
    goto failed;
  } else if (wsi_slide_has_known_extension (location)
      || wsi_dicom_series_is_dicom_file (location)) {
    /* A slide; an extensionless DICOM file, too, not a list. */
    g_ptr_array_add (collection->entries, slide_entry_new (location, NULL,
            NULL));
  } else if (!parse_list_file (location, collection, error)) {
    goto failed;
  }

  if (tcga)
    add_tcga_columns (collection);
  g_ptr_array_sort (collection->entries, slide_entry_compare);
  for (guint i = 0; i < collection->entries->len; i++)
    ((WsiSlideEntry *) g_ptr_array_index (collection->entries, i))->index = i;
  return collection;

failed:
  wsi_collection_free (collection);
  return NULL;
}

GPtrArray *
wsi_collection_take_rank (WsiCollection * collection, gint rank,
    gint world_size)
{
  GPtrArray *mine =
      g_ptr_array_new_with_free_func ((GDestroyNotify) slide_entry_free);

  /* Ownership moves to @mine; the NULL left behind is skipped when the
   * collection is freed. */
  for (guint i = rank; i < collection->entries->len; i += world_size) {
    g_ptr_array_add (mine, g_ptr_array_index (collection->entries, i));
    g_ptr_array_index (collection->entries, i) = NULL;
  }
  return mine;
}

void
wsi_collection_free (WsiCollection * collection)
{
  if (collection == NULL)
    return;
  g_ptr_array_unref (collection->entries);
  g_strfreev (collection->column_names);
  g_ptr_array_unref (collection->warnings);
  g_free (collection);
}
