/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Stream statistics: what the batches carried plus the upstream elements'
 * read-only counters, as one element message (see wsistreamstats.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>

#include <gst/wsi/wsirecord.h>

#include "wsistreamstats.h"

/* mpp histogram: half-octave bins centred on 2^(k/2) µm/px, k = -8..12
 * (0.0625 to 64), so 0.25, 0.5, 1, 2 ... and 0.499 share a bin with the
 * round value; mpps outside the range count in the first or last bin. */
#define MPP_K_MIN (-8)
#define N_MPP_BINS 21

/* Upstream read-only counters: property name -> message field. Two
 * properties may feed one field (they are summed). */
typedef struct
{
  const gchar *property;
  const gchar *field;
} WsiCounter;

static const WsiCounter counters[] = {
  {"slides-opened", "slides-opened"},
  {"slides-failed", "slides-failed"},
  {"slides-damaged", "slides-damaged"},
  {"slides-rejected", "slides-rejected"},
  {"slides-blank", "slides-blank"},
  {"slides-without-regions", "slides-without-regions"},
  {"patches-planned", "patches-planned"},
  {"patches-read", "patches-read"},
  {"patches-failed", "patches-dropped"},
  {"patches-skipped", "patches-dropped"},
  {"patches-rejected", "patches-rejected"},
};

#define N_COUNTERS G_N_ELEMENTS (counters)

struct _WsiStreamStats
{
  gint interval_ms;             /* atomic */
  GMutex lock;                  /* the accumulators below */
  GstClockTime last_post;
  guint64 patches;
  guint64 batches;
  gdouble tissue_sum;
  guint64 mpp_counts[N_MPP_BINS];
  guint64 mpp_unknown;
  GHashTable *labels;           /* label -> guint64 count */
  GHashTable *columns;          /* column name -> (value -> guint64 count) */
};

static GHashTable *
count_table_new (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

WsiStreamStats *
wsi_stream_stats_new (void)
{
  WsiStreamStats *stats = g_new0 (WsiStreamStats, 1);

  g_mutex_init (&stats->lock);
  stats->labels = count_table_new ();
  stats->columns = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      (GDestroyNotify) g_hash_table_unref);
  stats->last_post = GST_CLOCK_TIME_NONE;
  return stats;
}

void
wsi_stream_stats_free (WsiStreamStats * stats)
{
  if (stats == NULL)
    return;
  g_hash_table_unref (stats->labels);
  g_hash_table_unref (stats->columns);
  g_mutex_clear (&stats->lock);
  g_free (stats);
}

void
wsi_stream_stats_reset (WsiStreamStats * stats)
{
  g_mutex_lock (&stats->lock);
  stats->last_post = GST_CLOCK_TIME_NONE;
  stats->patches = stats->batches = stats->mpp_unknown = 0;
  stats->tissue_sum = 0.0;
  memset (stats->mpp_counts, 0, sizeof (stats->mpp_counts));
  g_hash_table_remove_all (stats->labels);
  g_hash_table_remove_all (stats->columns);
  g_mutex_unlock (&stats->lock);
}

void
wsi_stream_stats_set_interval (WsiStreamStats * stats, guint ms)
{
  g_atomic_int_set (&stats->interval_ms, (gint) MIN (ms, G_MAXINT));
}

guint
wsi_stream_stats_get_interval (WsiStreamStats * stats)
{
  return (guint) g_atomic_int_get (&stats->interval_ms);
}

/* ---- what the batches carried ------------------------------------------ */

static guint
mpp_bin (gfloat mpp)
{
  gint k = (gint) lround (2.0 * log2 (mpp));

  return (guint) (CLAMP (k, MPP_K_MIN, MPP_K_MIN + N_MPP_BINS - 1) -
      MPP_K_MIN);
}

/* Counts @value in @table; past WSI_STREAM_STATS_MAX_VALUES distinct values
 * new ones count as "(other)", so a column of patient ids stays bounded. */
static void
count_value (GHashTable * table, const gchar * value)
{
  guint64 *count = g_hash_table_lookup (table, value);

  if (count == NULL) {
    if (g_hash_table_size (table) >= WSI_STREAM_STATS_MAX_VALUES)
      value = "(other)";
    count = g_hash_table_lookup (table, value);
  }
  if (count == NULL) {
    count = g_new0 (guint64, 1);
    g_hash_table_insert (table, g_strdup (value), count);
  }
  (*count)++;
}

/* Per-column counts of record version 2's column-values (location-major). */
static void
count_columns (WsiStreamStats * stats, const GstStructure * meta, guint n)
{
  const gchar *const *names = wsi_structure_get_strv (meta, "column-names");
  const gchar *const *values = wsi_structure_get_strv (meta, "column-values");
  guint n_columns, c, i;

  if (names == NULL || values == NULL)
    return;
  n_columns = g_strv_length ((gchar **) names);
  if (n_columns == 0 || g_strv_length ((gchar **) values) < n * n_columns)
    return;
  for (c = 0; c < n_columns; c++) {
    GHashTable *table = g_hash_table_lookup (stats->columns, names[c]);

    if (table == NULL) {
      table = count_table_new ();
      g_hash_table_insert (stats->columns, g_strdup (names[c]), table);
    }
    for (i = 0; i < n; i++)
      count_value (table, values[i * n_columns + c]);
  }
}

static void
count_batch (WsiStreamStats * stats, const GstStructure * meta)
{
  guint n, i;
  const WsiPatchRecord *records = wsi_patch_meta_records (meta, &n);
  const gchar *const *labels = wsi_structure_get_strv (meta, "labels");

  for (i = 0; i < n; i++) {
    stats->tissue_sum += records[i].tissue_fraction;
    if (records[i].out_mpp > 0.0f)
      stats->mpp_counts[mpp_bin (records[i].out_mpp)]++;
    else
      stats->mpp_unknown++;
    /* labels has one entry per patch (NULL-terminated); "" = no label */
    if (labels != NULL && *labels != NULL) {
      count_value (stats->labels, **labels ? *labels : "(none)");
      labels++;
    }
  }
  count_columns (stats, meta, n);
  stats->patches += n;
  stats->batches++;
}

/* ---- what the elements upstream counted -------------------------------- */

/* The element upstream of @sinkpad (a reference), through ghost pads: into a
 * bin at its source ghost pad, out of a bin at the inside of its sink ghost
 * pad. NULL when unlinked. */
static GstElement *
upstream_element (GstPad * sinkpad)
{
  GstPad *peer = gst_pad_get_peer (sinkpad);
  GstElement *element;

  while (peer != NULL && GST_IS_GHOST_PAD (peer)) {
    GstPad *target = gst_ghost_pad_get_target (GST_GHOST_PAD (peer));

    gst_object_unref (peer);
    peer = target;
  }
  if (peer != NULL && GST_IS_PROXY_PAD (peer)) {
    GstPad *ghost = GST_PAD (gst_proxy_pad_get_internal (GST_PROXY_PAD (peer)));

    gst_object_unref (peer);
    if (ghost == NULL)
      return NULL;
    element = upstream_element (ghost);
    gst_object_unref (ghost);
    return element;
  }
  if (peer == NULL)
    return NULL;
  element = gst_pad_get_parent_element (peer);
  gst_object_unref (peer);
  return element;
}

static gpointer
ref_pad (gconstpointer pad, gpointer unused)
{
  return gst_object_ref ((gpointer) pad);
}

/* Every element upstream of @element (references), each once. */
static GPtrArray *
upstream_elements (GstElement * element)
{
  GPtrArray *found = g_ptr_array_new_with_free_func (gst_object_unref);
  guint i;

  g_ptr_array_add (found, gst_object_ref (element));
  for (i = 0; i < found->len; i++) {
    GstElement *e = g_ptr_array_index (found, i);
    GList *pads, *l;

    GST_OBJECT_LOCK (e);
    pads = g_list_copy_deep (e->sinkpads, ref_pad, NULL);
    GST_OBJECT_UNLOCK (e);
    for (l = pads; l != NULL; l = l->next) {
      GstElement *up = upstream_element (l->data);

      if (up != NULL && !g_ptr_array_find (found, up, NULL))
        g_ptr_array_add (found, up);
      else if (up != NULL)
        gst_object_unref (up);
    }
    g_list_free_full (pads, gst_object_unref);
  }
  g_ptr_array_remove_index (found, 0);  /* @element itself */
  return found;
}

/* The value of read-only integer counter @name of @element into @out. */
static gboolean
read_counter (GstElement * element, const gchar * name, guint64 * out)
{
  GParamSpec *pspec =
      g_object_class_find_property (G_OBJECT_GET_CLASS (element), name);
  GValue value = G_VALUE_INIT, as_u64 = G_VALUE_INIT;

  if (pspec == NULL || !(pspec->flags & G_PARAM_READABLE)
      || (pspec->flags & G_PARAM_WRITABLE)
      || !g_value_type_transformable (pspec->value_type, G_TYPE_UINT64))
    return FALSE;
  g_value_init (&value, pspec->value_type);
  g_value_init (&as_u64, G_TYPE_UINT64);
  g_object_get_property (G_OBJECT (element), name, &value);
  g_value_transform (&value, &as_u64);
  *out = g_value_get_uint64 (&as_u64);
  g_value_unset (&value);
  g_value_unset (&as_u64);
  return TRUE;
}

static void
set_upstream_counters (GstStructure * s, GstElement * element)
{
  GPtrArray *elements = upstream_elements (element);
  guint c, i;

  for (c = 0; c < N_COUNTERS; c++) {
    guint64 total = 0, value;
    gboolean seen = FALSE;

    /* a field fed by two properties was summed on its first entry */
    if (gst_structure_has_field (s, counters[c].field))
      continue;
    for (i = 0; i < elements->len; i++) {
      GstElement *e = g_ptr_array_index (elements, i);
      guint k;

      for (k = c; k < N_COUNTERS; k++) {
        if (g_strcmp0 (counters[k].field, counters[c].field) != 0)
          continue;
        if (read_counter (e, counters[k].property, &value)) {
          total += value;
          seen = TRUE;
        }
      }
    }
    if (seen)
      gst_structure_set (s, counters[c].field, G_TYPE_UINT64, total, NULL);
  }
  g_ptr_array_unref (elements);
}

/* ---- the message --------------------------------------------------------- */

static void
append_uint64 (GValue * array, guint64 v)
{
  GValue item = G_VALUE_INIT;

  g_value_init (&item, G_TYPE_UINT64);
  g_value_set_uint64 (&item, v);
  gst_value_array_append_and_take_value (array, &item);
}

static void
append_double (GValue * array, gdouble v)
{
  GValue item = G_VALUE_INIT;

  g_value_init (&item, G_TYPE_DOUBLE);
  g_value_set_double (&item, v);
  gst_value_array_append_and_take_value (array, &item);
}

static void
set_mpp_histogram (GstStructure * s, const WsiStreamStats * stats)
{
  GValue edges = G_VALUE_INIT, counts = G_VALUE_INIT;
  guint i;

  gst_value_array_init (&edges, N_MPP_BINS + 1);
  gst_value_array_init (&counts, N_MPP_BINS);
  for (i = 0; i <= N_MPP_BINS; i++)
    append_double (&edges, pow (2.0, (MPP_K_MIN + (gint) i - 0.5) / 2.0));
  for (i = 0; i < N_MPP_BINS; i++)
    append_uint64 (&counts, stats->mpp_counts[i]);
  gst_structure_take_value (s, "mpp-bin-edges", &edges);
  gst_structure_take_value (s, "mpp-counts", &counts);
  gst_structure_set (s, "mpp-unknown", G_TYPE_UINT64, stats->mpp_unknown,
      NULL);
}

static void
append_string (GValue * array, const gchar * v)
{
  GValue item = G_VALUE_INIT;

  g_value_init (&item, G_TYPE_STRING);
  g_value_set_string (&item, v);
  gst_value_array_append_and_take_value (array, &item);
}

/* @table's values sorted (so messages compare equal across runs) into the
 * string array @names_field and the uint64 array @counts_field of @s
 * (arrays, not GStrv: GStreamer 1.22 prints a GStrv as NULL). */
static void
set_counts (GstStructure * s, GHashTable * table, const gchar * names_field,
    const gchar * counts_field)
{
  GList *keys = g_list_sort (g_hash_table_get_keys (table),
      (GCompareFunc) g_strcmp0);
  GValue names = G_VALUE_INIT, counts = G_VALUE_INIT;
  GList *l;

  gst_value_array_init (&names, g_hash_table_size (table));
  gst_value_array_init (&counts, g_hash_table_size (table));
  for (l = keys; l != NULL; l = l->next) {
    append_string (&names, l->data);
    append_uint64 (&counts, *(guint64 *) g_hash_table_lookup (table, l->data));
  }
  gst_structure_take_value (s, names_field, &names);
  gst_structure_take_value (s, counts_field, &counts);
  g_list_free (keys);
}

static void
set_columns (GstStructure * s, const WsiStreamStats * stats)
{
  GList *names = g_list_sort (g_hash_table_get_keys (stats->columns),
      (GCompareFunc) g_strcmp0);
  GValue columns = G_VALUE_INIT;
  GList *l;

  gst_value_array_init (&columns, g_hash_table_size (stats->columns));
  for (l = names; l != NULL; l = l->next) {
    GstStructure *column = gst_structure_new ("column",
        "name", G_TYPE_STRING, l->data, NULL);
    GValue item = G_VALUE_INIT;

    set_counts (column, g_hash_table_lookup (stats->columns, l->data),
        "values", "counts");
    g_value_init (&item, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&item, column);
    gst_value_array_append_and_take_value (&columns, &item);
  }
  gst_structure_take_value (s, "columns", &columns);
  g_list_free (names);
}

GstStructure *
wsi_stream_stats_structure (WsiStreamStats * stats, GstElement * element)
{
  GstStructure *s;

  g_mutex_lock (&stats->lock);
  s = gst_structure_new (WSI_STREAM_STATS_MESSAGE,
      "patches", G_TYPE_UINT64, stats->patches,
      "batches", G_TYPE_UINT64, stats->batches,
      "tissue-fraction-mean", G_TYPE_DOUBLE,
      stats->patches ? stats->tissue_sum / stats->patches : 0.0, NULL);
  set_mpp_histogram (s, stats);
  set_counts (s, stats->labels, "label-names", "label-counts");
  set_columns (s, stats);
  g_mutex_unlock (&stats->lock);
  /* outside our lock: this takes the upstream elements' locks */
  set_upstream_counters (s, element);
  return s;
}

void
wsi_stream_stats_post_now (WsiStreamStats * stats, GstElement * element)
{
  if (wsi_stream_stats_get_interval (stats) == 0)
    return;
  g_mutex_lock (&stats->lock);
  stats->last_post = gst_util_get_timestamp ();
  g_mutex_unlock (&stats->lock);
  gst_element_post_message (element,
      gst_message_new_element (GST_OBJECT (element),
          wsi_stream_stats_structure (stats, element)));
}

void
wsi_stream_stats_add_batch (WsiStreamStats * stats, GstElement * element,
    GstBuffer * batch)
{
  GstStructure *meta = wsi_patch_meta_get (batch);
  guint interval = wsi_stream_stats_get_interval (stats);
  GstClockTime now;
  gboolean due;

  if (interval == 0 || meta == NULL)
    return;                     /* off: no cost per batch */
  now = gst_util_get_timestamp ();
  g_mutex_lock (&stats->lock);
  count_batch (stats, meta);
  if (stats->last_post == GST_CLOCK_TIME_NONE)
    stats->last_post = now;     /* the interval starts with the stream */
  due = now - stats->last_post >= interval * GST_MSECOND;
  g_mutex_unlock (&stats->lock);
  if (due)
    wsi_stream_stats_post_now (stats, element);
}
