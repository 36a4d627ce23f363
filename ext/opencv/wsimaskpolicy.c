/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsimaskpolicy.c: see wsimaskpolicy.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>
#include <gst/wsi/wsilockedstr.h>

#include "wsimaskcache.h"
#include "wsimaskpolicy.h"
#include "wsimaskstore.h"

GST_DEBUG_CATEGORY_STATIC (wsi_mask_policy_debug);
#define GST_CAT_DEFAULT wsi_mask_policy_debug

struct _WsiMaskPolicy
{
  GstElement *element;          /* not referenced: it owns us */
  gchar **not_mask_shaping;
  gint mask_revision;
  gchar *opencv_version;

  /* Guards every field below. */
  GMutex lock;
  /* The masks kept in memory. */
  WsiMaskCache *cache;
  /* Bumped whenever the mask settings change: a mask made with older
   * settings is neither kept nor saved. */
  guint generation;
  guint64 computed;
  guint64 memory_hits;
  guint64 disk_hits;
  /* Masks kept across runs: the folder (NULL = off), whether it failed
   * this run (warned once, then unused), the files warned about as
   * unusable (not warned again until we replace them), and the settings
   * part of the key with the generation it describes. */
  gchar *dir;
  gboolean disk_failed;
  GHashTable *refused;
  gchar *settings;
  guint settings_generation;
};

WsiMaskPolicy *
wsi_mask_policy_new (GstElement * element,
    const gchar * const *not_mask_shaping, gint mask_revision,
    const gchar * opencv_version, guint max_masks, gsize max_bytes)
{
  WsiMaskPolicy *policy = g_new0 (WsiMaskPolicy, 1);

  GST_DEBUG_CATEGORY_INIT (wsi_mask_policy_debug, "wsimaskpolicy", 0,
      "tissuemask's mask caches: memory, then mask-cache-dir");
  policy->element = element;
  policy->not_mask_shaping = g_strdupv ((gchar **) not_mask_shaping);
  policy->mask_revision = mask_revision;
  policy->opencv_version = g_strdup (opencv_version);
  g_mutex_init (&policy->lock);
  policy->cache = wsi_mask_cache_new (max_masks, max_bytes);
  policy->refused = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      NULL);
  return policy;
}

void
wsi_mask_policy_free (WsiMaskPolicy * policy)
{
  wsi_mask_cache_free (policy->cache);
  g_hash_table_unref (policy->refused);
  g_strfreev (policy->not_mask_shaping);
  g_free (policy->opencv_version);
  g_free (policy->dir);
  g_free (policy->settings);
  g_mutex_clear (&policy->lock);
  g_free (policy);
}

void
wsi_mask_policy_start (WsiMaskPolicy * policy)
{
  g_mutex_lock (&policy->lock);
  policy->computed = 0;
  policy->memory_hits = 0;
  policy->disk_hits = 0;
  policy->disk_failed = FALSE;
  g_hash_table_remove_all (policy->refused);
  g_mutex_unlock (&policy->lock);
}

void
wsi_mask_policy_stop (WsiMaskPolicy * policy)
{
  g_mutex_lock (&policy->lock);
  wsi_mask_cache_clear (policy->cache);
  g_mutex_unlock (&policy->lock);
}

void
wsi_mask_policy_settings_changed (WsiMaskPolicy * policy)
{
  g_mutex_lock (&policy->lock);
  policy->generation++;
  wsi_mask_cache_clear (policy->cache);
  g_mutex_unlock (&policy->lock);
}

void
wsi_mask_policy_set_max_masks (WsiMaskPolicy * policy, guint max_masks)
{
  g_mutex_lock (&policy->lock);
  wsi_mask_cache_set_max_masks (policy->cache, max_masks);
  g_mutex_unlock (&policy->lock);
}

void
wsi_mask_policy_set_dir (WsiMaskPolicy * policy, const gchar * dir)
{
  g_mutex_lock (&policy->lock);
  g_free (policy->dir);
  policy->dir = g_strdup (dir);
  policy->disk_failed = FALSE;
  g_mutex_unlock (&policy->lock);
}

gchar *
wsi_mask_policy_dup_dir (WsiMaskPolicy * policy)
{
  return wsi_locked_str_dup (&policy->lock, &policy->dir);
}

void
wsi_mask_policy_get_state (WsiMaskPolicy * policy, WsiMaskPolicyState * state)
{
  g_mutex_lock (&policy->lock);
  state->generation = policy->generation;
  state->max_masks = wsi_mask_cache_get_max_masks (policy->cache);
  state->bytes = wsi_mask_cache_get_bytes (policy->cache);
  state->computed = policy->computed;
  state->memory_hits = policy->memory_hits;
  state->disk_hits = policy->disk_hits;
  g_mutex_unlock (&policy->lock);
}

/* ---- the disk key -------------------------------------------------------- */

static gint
compare_pspec_names (gconstpointer a, gconstpointer b)
{
  return strcmp ((*(GParamSpec * const *) a)->name,
      (*(GParamSpec * const *) b)->name);
}

/* "name=value" lines of every mask-shaping property, sorted by name (a
 * double in full precision). Reads the element's properties: call
 * without the lock. */
static gchar *
describe_mask_settings (WsiMaskPolicy * policy)
{
  GObject *object = G_OBJECT (policy->element);
  guint n, i;
  GParamSpec **pspecs =
      g_object_class_list_properties (G_OBJECT_GET_CLASS (object), &n);
  GString *out = g_string_new (NULL);

  qsort (pspecs, n, sizeof (GParamSpec *), compare_pspec_names);
  for (i = 0; i < n; i++) {
    GParamSpec *pspec = pspecs[i];
    GValue value = G_VALUE_INIT;
    gchar number[G_ASCII_DTOSTR_BUF_SIZE], *text;

    if (pspec->owner_type != G_OBJECT_TYPE (object)
        || (pspec->flags & G_PARAM_READWRITE) != G_PARAM_READWRITE
        || g_strv_contains ((const gchar * const *) policy->not_mask_shaping,
            pspec->name))
      continue;
    g_value_init (&value, pspec->value_type);
    g_object_get_property (object, pspec->name, &value);
    if (G_VALUE_HOLDS_DOUBLE (&value))
      text = g_strdup (g_ascii_dtostr (number, sizeof (number),
              g_value_get_double (&value)));
    else
      text = g_strdup_value_contents (&value);
    wsi_mask_store_key_add (out, pspec->name, text);
    g_free (text);
    g_value_unset (&value);
  }
  g_free (pspecs);
  return g_string_free (out, FALSE);
}

/* The settings part of the disk key and the settings generation it
 * describes (kept until the settings change). */
static gchar *
mask_settings_key (WsiMaskPolicy * policy, guint * generation)
{
  for (;;) {
    gchar *described;
    guint now;

    g_mutex_lock (&policy->lock);
    now = policy->generation;
    if (policy->settings != NULL && policy->settings_generation == now) {
      described = g_strdup (policy->settings);
      g_mutex_unlock (&policy->lock);
      *generation = now;
      return described;
    }
    g_mutex_unlock (&policy->lock);

    described = describe_mask_settings (policy);
    g_mutex_lock (&policy->lock);
    if (now == policy->generation) {
      g_free (policy->settings);
      policy->settings = g_strdup (described);
      policy->settings_generation = now;
      g_mutex_unlock (&policy->lock);
      *generation = now;
      return described;
    }
    g_mutex_unlock (&policy->lock);
    g_free (described);         /* changed while described: again */
  }
}

/* The disk key of @path's mask and the folder (@dir, a new string); NULL
 * when the disk cache is off or failed, or when the slide file's identity
 * is unknown (a remote slide, see wsi_query_set_mask_source). */
static gchar *
disk_key (WsiMaskPolicy * policy, const gchar * path, const gchar * identity,
    gint thumbnail_size, gchar ** dir, guint * generation)
{
  GString *key;
  gchar *text;

  g_mutex_lock (&policy->lock);
  *dir = policy->disk_failed || policy->dir == NULL
      || policy->dir[0] == '\0' ? NULL : g_strdup (policy->dir);
  g_mutex_unlock (&policy->lock);
  if (*dir == NULL || identity == NULL || identity[0] == '\0') {
    g_clear_pointer (dir, g_free);
    return NULL;
  }

  key = g_string_new (NULL);
  text = g_strdup_printf ("gst-wsi tissue mask %d", WSI_MASK_STORE_VERSION);
  wsi_mask_store_key_add (key, "format", text);
  g_free (text);
  wsi_mask_store_key_add (key, "gst-wsi", VERSION);
  /* the code that makes masks, and the OpenCV that runs it */
  text = g_strdup_printf ("%d", policy->mask_revision);
  wsi_mask_store_key_add (key, "mask-revision", text);
  g_free (text);
  wsi_mask_store_key_add (key, "opencv", policy->opencv_version);
  wsi_mask_store_key_add (key, "path", path);
  wsi_mask_store_key_add (key, "source-identity", identity);
  text = g_strdup_printf ("%d", thumbnail_size);
  wsi_mask_store_key_add (key, "thumbnail-size", text);
  g_free (text);
  text = mask_settings_key (policy, generation);
  g_string_append (key, text);
  g_free (text);
  return g_string_free (key, FALSE);
}

/* ---- the disk cache (mask-cache-dir) ------------------------------------- */

/* Warns (once per file) that a stored mask cannot be used. */
static void
warn_unusable_file (WsiMaskPolicy * policy, const gchar * file,
    const gchar * path, const GError * error)
{
  gboolean first;

  g_mutex_lock (&policy->lock);
  first = g_hash_table_add (policy->refused, g_strdup (file));
  g_mutex_unlock (&policy->lock);
  if (first)
    GST_ELEMENT_WARNING (policy->element, RESOURCE, READ,
        ("The tissue mask of slide \"%s\" is computed again: %s", path,
            error->message), (NULL));
}

/* The folder cannot be read or written: warned about once, then unused
 * for the rest of the run (the stream goes on without it). */
static void
disable_disk_cache (WsiMaskPolicy * policy, const gchar * dir,
    const GError * error)
{
  gboolean first;

  g_mutex_lock (&policy->lock);
  first = !policy->disk_failed;
  policy->disk_failed = TRUE;
  g_mutex_unlock (&policy->lock);
  if (first)
    GST_ELEMENT_WARNING (policy->element, RESOURCE, OPEN_READ_WRITE,
        ("Tissue masks are not kept in mask-cache-dir \"%s\" for the rest "
            "of this run: %s", dir, error->message), (NULL));
}

/* @path's mask from the disk cache, or NULL: a miss, or a file that
 * cannot be used (warned about, and replaced when the mask is computed).
 * @width x @height: the size expected (0 x 0: any; set to the mask's).
 * @generation: the settings it was made with. */
static GstMemory *
disk_cache_load (WsiMaskPolicy * policy, const gchar * path,
    const gchar * identity, gint thumbnail_size, gint * width, gint * height,
    gdouble * fraction, guint * generation)
{
  gchar *dir, *key = disk_key (policy, path, identity, thumbnail_size, &dir,
      generation), *file;
  WsiStoredMask stored;
  GError *error = NULL;
  GstMemory *memory = NULL;
  gboolean refused;

  if (key == NULL)
    return NULL;
  file = wsi_mask_store_file (dir, key);
  g_mutex_lock (&policy->lock);
  refused = g_hash_table_contains (policy->refused, file);
  g_mutex_unlock (&policy->lock);

  if (refused) {
    /* Warned already: it is replaced once the mask is computed. */
  } else if (!wsi_mask_store_load (dir, key, &stored, &error)) {
    if (g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_INVAL))
      warn_unusable_file (policy, file, path, error);
    else if (error != NULL)
      disable_disk_cache (policy, dir, error);
  } else if (*width != 0 && ((gint) stored.width != *width
          || (gint) stored.height != *height)) {
    GST_DEBUG_OBJECT (policy->element, "%s: stored mask is %ux%u, the "
        "overview %dx%d", file, stored.width, stored.height, *width, *height);
    wsi_mask_stored_clear (&stored);
  } else {
    gsize n;
    gpointer data = g_bytes_unref_to_data (g_steal_pointer (&stored.mask),
        &n);

    memory = gst_memory_new_wrapped ((GstMemoryFlags) 0, data, n, 0, n,
        data, g_free);
    *fraction = stored.fraction;
    *width = (gint) stored.width;
    *height = (gint) stored.height;
    GST_LOG_OBJECT (policy->element, "mask of %s loaded from %s", path, file);
  }
  g_clear_error (&error);
  g_free (file);
  g_free (key);
  g_free (dir);
  return memory;
}

/* Keeps a mask loaded from disk in memory too, unless the settings
 * changed since it was looked up, and counts it as a disk hit when it
 * reaches its slide: @used (handed to the slide buffer) or kept for the
 * buffer to come. A mask preloaded but not kept (mask-cache-size=0) is
 * loaded again by that buffer, which counts it then: one hit a visit. */
static void
remember_loaded_mask (WsiMaskPolicy * policy, const gchar * path, gint width,
    gint height, GstMemory * mask, gdouble fraction, guint generation,
    gboolean used)
{
  gboolean kept = FALSE;

  g_mutex_lock (&policy->lock);
  if (generation == policy->generation)
    kept = wsi_mask_cache_insert (policy->cache, path, width, height, mask,
        fraction, used);
  if (used || kept)
    policy->disk_hits++;
  g_mutex_unlock (&policy->lock);
}

/* Stores a computed mask under the key of @meta's slide; a folder that
 * cannot be written is warned about once and not used again this run. */
static void
disk_cache_save (WsiMaskPolicy * policy, const GstStructure * meta,
    const gchar * path, GstMemory * mask, gint width, gint height,
    gdouble fraction, guint generation)
{
  gint thumbnail_size = 0;
  guint key_generation;
  gchar *dir, *key, *file;
  GError *error = NULL;
  GstMapInfo map;
  gboolean saved;

  gst_structure_get_int (meta, "thumbnail-size", &thumbnail_size);
  key = disk_key (policy, path, gst_structure_get_string (meta,
          "source-identity"), thumbnail_size, &dir, &key_generation);
  if (key == NULL)
    return;
  if (key_generation != generation) {   /* settings changed meanwhile */
    g_free (key);
    g_free (dir);
    return;
  }
  gst_memory_map (mask, &map, GST_MAP_READ);
  saved = wsi_mask_store_save (dir, key, map.data, (guint) width,
      (guint) height, fraction, &error);
  gst_memory_unmap (mask, &map);

  file = wsi_mask_store_file (dir, key);
  if (saved) {
    g_mutex_lock (&policy->lock);
    g_hash_table_remove (policy->refused, file);
    g_mutex_unlock (&policy->lock);
  } else {
    disable_disk_cache (policy, dir, error);
  }
  g_clear_error (&error);
  g_free (file);
  g_free (key);
  g_free (dir);
}

/* ---- the policy ---------------------------------------------------------- */

GstMemory *
wsi_mask_policy_find (WsiMaskPolicy * policy, const GstStructure * meta,
    const gchar * path, gint width, gint height, gdouble * fraction)
{
  gint thumbnail_size = 0;
  guint generation;
  GstMemory *mask;

  g_mutex_lock (&policy->lock);
  mask = wsi_mask_cache_get (policy->cache, path, width, height, fraction);
  if (mask != NULL)
    policy->memory_hits++;
  g_mutex_unlock (&policy->lock);
  if (mask != NULL || (gsize) MAX (width, 0) * MAX (height, 0) == 0)
    return mask;

  gst_structure_get_int (meta, "thumbnail-size", &thumbnail_size);
  mask = disk_cache_load (policy, path, gst_structure_get_string (meta,
          "source-identity"), thumbnail_size, &width, &height, fraction,
      &generation);
  if (mask != NULL)
    remember_loaded_mask (policy, path, width, height, mask, *fraction,
        generation, TRUE);
  return mask;
}

void
wsi_mask_policy_computed (WsiMaskPolicy * policy, const GstStructure * meta,
    const gchar * path, GstMemory * mask, gint width, gint height,
    gdouble fraction, guint generation)
{
  g_mutex_lock (&policy->lock);
  policy->computed++;
  if (generation == policy->generation)
    wsi_mask_cache_insert (policy->cache, path, width, height, mask,
        fraction, TRUE);
  g_mutex_unlock (&policy->lock);
  disk_cache_save (policy, meta, path, mask, width, height, fraction,
      generation);
}

gboolean
wsi_mask_policy_holds (WsiMaskPolicy * policy, const gchar * path,
    const gchar * identity, gint thumbnail_size)
{
  gint width = 0, height = 0;
  gdouble fraction;
  guint generation;
  gboolean held;
  GstMemory *mask;

  g_mutex_lock (&policy->lock);
  held = wsi_mask_cache_touch (policy->cache, path);
  g_mutex_unlock (&policy->lock);
  if (held || identity == NULL)
    return held;

  /* Put in memory for the slide buffer that follows (without overview);
   * without a memory cache the buffer loads it again. */
  mask = disk_cache_load (policy, path, identity, thumbnail_size, &width,
      &height, &fraction, &generation);
  if (mask == NULL)
    return FALSE;
  remember_loaded_mask (policy, path, width, height, mask, fraction,
      generation, FALSE);
  gst_memory_unref (mask);
  return TRUE;
}
