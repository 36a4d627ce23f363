/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsidicomfolder.c: the per-folder index of VOLUME instances of
 * wsidicomfolder.h.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <sys/stat.h>

#include "wsidicomfolder.h"
#include "wsibytesource.h"
#include "wsidicom.h"

/* An index built sooner than this after its folder's modification time is
 * not kept: a file added in the same timestamp tick leaves the time as it
 * was (coarse kernel clocks tick every few ms; FAT keeps 2 s). */
#define REUSE_AFTER_US (2 * G_USEC_PER_SEC)
#define MAX_FOLDERS 4096
#define MAX_VOLUMES 65536

typedef struct
{
  gchar *path;
  gchar *series_uid;
  gchar *sop_instance_uid;
} FolderVolume;

/* Reference-counted by hand rather than with g_atomic_rc_box: the table
 * lives until exit, and leak checkers (valgrind) report a block known
 * only by an interior pointer (the rc box's) as possibly lost. */
typedef struct
{
  gint refcount;                /* atomic */
  gchar *dir;
  GMutex lock;                  /* held while indexing and answering */
  gboolean indexed;             /* volumes describe the folder at mtime_ns */
  gint64 mtime_ns;
  GPtrArray *volumes;           /* FolderVolume, sorted by path */
  /* Under folders_lock: */
  guint n_counted;              /* volumes counted in n_volumes */
  gboolean dropped;             /* out of the table */
} FolderIndex;

static GMutex folders_lock;
static GHashTable *folders;     /* dir -> FolderIndex (a reference) */
static GQueue folder_order = G_QUEUE_INIT;      /* FolderIndex, oldest first */
static guint n_volumes;
static guint64 headers_read;

static void
folder_volume_free (FolderVolume * volume)
{
  g_free (volume->path);
  g_free (volume->series_uid);
  g_free (volume->sop_instance_uid);
  g_free (volume);
}

static void
folder_index_unref (FolderIndex * index)
{
  if (!g_atomic_int_dec_and_test (&index->refcount))
    return;
  g_free (index->dir);
  g_mutex_clear (&index->lock);
  if (index->volumes != NULL)
    g_ptr_array_unref (index->volumes);
  g_free (index);
}

/* The folder's modification time in ns; FALSE when it cannot be stat'ed. */
static gboolean
folder_mtime (const gchar * dir, gint64 * mtime_ns)
{
  struct stat st;

  if (stat (dir, &st) != 0 || !S_ISDIR (st.st_mode))
    return FALSE;
  *mtime_ns = (gint64) st.st_mtim.tv_sec * G_GINT64_CONSTANT (1000000000)
      + st.st_mtim.tv_nsec;
  return TRUE;
}

/* The index of @dir, made when absent; a new reference. */
static FolderIndex *
folder_index_get (const gchar * dir)
{
  FolderIndex *index;

  g_mutex_lock (&folders_lock);
  if (folders == NULL)
    folders = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
        (GDestroyNotify) folder_index_unref);
  index = g_hash_table_lookup (folders, dir);
  if (index == NULL) {
    index = g_new0 (FolderIndex, 1);
    index->refcount = 1;        /* the table's */
    index->dir = g_strdup (dir);
    g_mutex_init (&index->lock);
    g_hash_table_insert (folders, index->dir, index);
    g_queue_push_tail (&folder_order, index);
  }
  g_atomic_int_inc (&index->refcount);
  g_mutex_unlock (&folders_lock);
  return index;
}

/* Drops the oldest indexes while more than the bounds are kept (never
 * @keep, the one just indexed). Under folders_lock. */
static void
folders_trim (FolderIndex * keep)
{
  while ((g_hash_table_size (folders) > MAX_FOLDERS
          || n_volumes > MAX_VOLUMES) && folder_order.length > 1) {
    FolderIndex *oldest = g_queue_pop_head (&folder_order);

    if (oldest == keep) {
      g_queue_push_tail (&folder_order, oldest);
      continue;
    }
    n_volumes -= oldest->n_counted;
    oldest->n_counted = 0;
    oldest->dropped = TRUE;
    g_hash_table_remove (folders, oldest->dir);
  }
}

/* Counts @index's @kept volumes (after indexing it) and the @probed
 * header reads made; trims. Under index->lock, so that two builds of one
 * folder are counted in the order they were made (the lock order is
 * index->lock, then folders_lock; folders_trim() takes no index lock). */
static void
folders_account (FolderIndex * index, guint kept, guint probed)
{
  g_mutex_lock (&folders_lock);
  headers_read += probed;
  if (!index->dropped) {
    n_volumes = n_volumes - index->n_counted + kept;
    index->n_counted = kept;
    folders_trim (index);
  }
  g_mutex_unlock (&folders_lock);
}

/* @child's identity when it is a VOLUME instance of some series. */
static FolderVolume *
volume_probe (const gchar * child)
{
  WsiByteSource *source = wsi_byte_source_open (child, NULL);
  WsiDicomInstance inst;
  FolderVolume *volume = NULL;

  if (source == NULL)
    return NULL;
  if (wsi_dicom_instance_read (&inst, source, TRUE, NULL)) {
    if (inst.flavor == WSI_DICOM_FLAVOR_VOLUME && inst.series_uid != NULL) {
      volume = g_new0 (FolderVolume, 1);
      volume->path = g_strdup (child);
      volume->series_uid = g_strdup (inst.series_uid);
      volume->sop_instance_uid = g_strdup (inst.sop_instance_uid);
    }
    wsi_dicom_instance_clear (&inst);
  }
  wsi_byte_source_unref (source);
  return volume;
}

static gint
volume_compare (gconstpointer a, gconstpointer b)
{
  const FolderVolume *va = *(FolderVolume * const *) a;
  const FolderVolume *vb = *(FolderVolume * const *) b;

  return strcmp (va->path, vb->path);
}

/* Lists @index's folder and reads the identity of each DICOM file; keeps
 * the result when the folder held still. Returns the header reads made.
 * Under index->lock. */
static guint
folder_index_build (FolderIndex * index, gint64 mtime_ns)
{
  gint64 started = g_get_real_time (), mtime_after = 0;
  GDir *dir = g_dir_open (index->dir, 0, NULL);
  gboolean listed = dir != NULL;
  const gchar *name;
  guint probed = 0;

  if (index->volumes != NULL)
    g_ptr_array_unref (index->volumes);
  index->volumes = g_ptr_array_new_with_free_func ((GDestroyNotify)
      folder_volume_free);
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL) {
    gchar *child = g_build_filename (index->dir, name, NULL);
    if (wsi_dicom_path_is_dicom (child)) {
      FolderVolume *volume = volume_probe (child);
      probed++;
      if (volume != NULL)
        g_ptr_array_add (index->volumes, volume);
    }
    g_free (child);
  }
  if (dir != NULL)
    g_dir_close (dir);
  g_ptr_array_sort (index->volumes, volume_compare);
  index->mtime_ns = mtime_ns;
  index->indexed = listed
      && started - mtime_ns / 1000 >= REUSE_AFTER_US
      && folder_mtime (index->dir, &mtime_after) && mtime_after == mtime_ns;
  return probed;
}

/* @location as a local path: a file:// URI names a local file too
 * (wsi_byte_source_open() takes both). NULL for a URI that is not one. */
static gchar *
local_path (const gchar * location)
{
  if (g_ascii_strncasecmp (location, "file://", 7) == 0)
    return g_filename_from_uri (location, NULL, NULL);
  return g_strdup (location);
}

GPtrArray *
wsi_dicom_folder_volumes (const gchar * location, const gchar * series_uid,
    const gchar * sop_instance_uid)
{
  GPtrArray *members = g_ptr_array_new_with_free_func (g_free);
  gchar *path = local_path (location);
  gchar *dir = path ? g_path_get_dirname (path) : NULL;
  FolderIndex *index;
  gint64 mtime_ns;
  gboolean built = FALSE;
  guint i, probed = 0;

  if (dir == NULL || series_uid == NULL || !folder_mtime (dir, &mtime_ns)) {
    g_free (dir);
    g_free (path);
    return members;
  }
  index = folder_index_get (dir);
  g_mutex_lock (&index->lock);
  if (!index->indexed || index->mtime_ns != mtime_ns) {
    probed = folder_index_build (index, mtime_ns);
    built = TRUE;
  }
  for (i = 0; i < index->volumes->len; i++) {
    const FolderVolume *volume = index->volumes->pdata[i];
    if (strcmp (volume->series_uid, series_uid) == 0
        && strcmp (volume->path, path) != 0
        && g_strcmp0 (volume->sop_instance_uid, sop_instance_uid) != 0)
      g_ptr_array_add (members, g_strdup (volume->path));
  }
  if (!index->indexed)
    g_ptr_array_set_size (index->volumes, 0);
  if (built)
    folders_account (index, index->volumes->len, probed);
  g_mutex_unlock (&index->lock);
  folder_index_unref (index);
  g_free (dir);
  g_free (path);
  return members;
}

guint64
wsi_dicom_folder_headers_read (void)
{
  guint64 n;

  g_mutex_lock (&folders_lock);
  n = headers_read;
  g_mutex_unlock (&folders_lock);
  return n;
}
