/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsirecord.h: the data that travels between gst-wsi elements.
 *
 * This header is the whole contract; there is no shared library behind it.
 * Every plugin (and every C application reading appsink buffers) includes it
 * and gets the same record layout, caps names and GstCustomMeta names.
 * docs/data-formats.md explains the same things in prose, for Python users.
 *
 *  - Slides travel as one buffer per slide, caps "application/x-wsi-slide",
 *    with a "WsiSlideMeta" custom meta describing the slide (see below).
 *    Memory: the overview as tightly packed RGB (width*3 bytes per row)
 *    when has-overview is TRUE, followed by the tissue mask (one byte per
 *    overview pixel, 0 = background, 255 = tissue) when has-mask is TRUE.
 *  - Coordinates travel as buffers of packed WsiPatchRecord, caps
 *    "application/x-wsi-patches"; every record of one buffer belongs to the
 *    slide named by the buffer's "WsiSlideMeta".
 *  - Pixels travel as video/x-raw with a "WsiPatchMeta" custom meta holding
 *    the records of the patches in the buffer (1 for a patch, N for a batch).
 */

#ifndef __WSI_RECORD_H__
#define __WSI_RECORD_H__

#include <gst/gst.h>
#include <string.h>

G_BEGIN_DECLS

#define WSI_SLIDE_MEDIA_TYPE   "application/x-wsi-slide"
#define WSI_PATCHES_MEDIA_TYPE "application/x-wsi-patches"

#define WSI_SLIDE_META_NAME "WsiSlideMeta"
#define WSI_PATCH_META_NAME "WsiPatchMeta"

/* Value of WsiPatchRecord.level before patchreader has chosen a level. */
#define WSI_LEVEL_UNSET G_MAXUINT32

/* The custom events and queries between elements (patch dropped, slide
 * given up or rejected, delivery check and acknowledgement, mask cache) are
 * in wsievent.h, each with its new/parse pair. */

/**
 * WsiPatchRecord:
 * @sequence: position of the patch in the stream (0-based), set by
 *   patchinterleave; identical for any number of reader threads
 * @x: left edge of the patch footprint, level-0 pixels
 * @y: top edge of the patch footprint, level-0 pixels
 * @created_ns: monotonic time (gst_util_get_timestamp(), ns) at which the
 *   coordinates were made; "now - created_ns" is the patch age
 * @slide_index: index of the slide in the sorted slide collection, before
 *   the rank partition, so it names the same slide on every rank
 * @cycle: how many times the source had cycled when the slide was visited
 * @footprint: side of the square region in level-0 pixels
 * @out_size: side of the output patch in pixels
 * @level: pyramid level read, set by patchreader (WSI_LEVEL_UNSET before)
 * @read_size: side of the region read at @level, set by patchreader
 * @out_mpp: microns per output pixel (0 when the slide's mpp is unknown)
 * @tissue_fraction: share of the footprint that the mask calls tissue (0..1)
 *
 * One patch, 64 bytes, native byte order, no padding. The layout is fixed:
 * Python reads it with numpy (see docs/data-formats.md).
 *
 * Writers (each field has one owner; later elements only copy it):
 *   - patchsampler: x, y, created_ns, slide_index, cycle, footprint,
 *     out_size, out_mpp, tissue_fraction; it writes sequence = 0.
 *   - patchinterleave: sequence (it decides the stream order; skip-patches
 *     compares against it).
 *   - patchreader: level, read_size. It also corrects x, y (DCT-scaled
 *     reads moved onto the scaled grid) and footprint, out_mpp (a region
 *     within resample-tolerance of the patch size read 1:1) to what it
 *     really read: the sampler's plan, then the reader's fact.
 * cycle is the slide's visit (wsislidesrc's cycle); with patchsampler
 * replacement=false a slide starts a fresh shuffle of its positions at
 * visit floor (k × patches-per-slide / positions), so the cycle tells the
 * epoch of every patch.
 */
typedef struct
{
  guint64 sequence;
  gint64 x;
  gint64 y;
  gint64 created_ns;
  guint32 slide_index;
  guint32 cycle;
  guint32 footprint;
  guint32 out_size;
  guint32 level;
  guint32 read_size;
  gfloat out_mpp;
  gfloat tissue_fraction;
} WsiPatchRecord;

G_STATIC_ASSERT (sizeof (WsiPatchRecord) == 64);

/* Registers a custom meta once per process, whichever plugin comes first. */
static inline const GstMetaInfo *
wsi_custom_meta_info (const gchar * name)
{
  static const gchar *no_tags[] = { NULL };
  static GMutex lock;
  const GstMetaInfo *info;

  /* Registered already (the usual case, per patch): no lock of ours. */
  info = gst_meta_get_info (name);
  if (info != NULL)
    return info;
  g_mutex_lock (&lock);
  info = gst_meta_get_info (name);
  if (info == NULL)
    info = gst_meta_register_custom (name, no_tags, NULL, NULL, NULL);
  g_mutex_unlock (&lock);
  return info;
}

/* Call from every plugin_init that produces or reads these metas. */
static inline void
wsi_record_register_metas (void)
{
  wsi_custom_meta_info (WSI_SLIDE_META_NAME);
  wsi_custom_meta_info (WSI_PATCH_META_NAME);
}

/* ---- WsiSlideMeta -------------------------------------------------------
 * Structure fields (all always present once wsislidesrc has pushed it):
 *   path (string), index (uint), cycle (uint), seed (uint64),
 *   label (string, "" when none), vendor (string),
 *   width, height (int64: level-0 size),
 *   level-count (int), and one entry per level, level 0 first, each a
 *     GstValueArray (GST_TYPE_ARRAY; read an entry with
 *     wsi_structure_array_get()): level-downsamples (double),
 *     level-widths, level-heights (int64: the level's size in its own
 *     pixels), level-tile-widths, level-tile-heights (int64: tile size,
 *     0 when the level is not tiled),
 *   backend (string: the read backend that opened the slide),
 *   uri (string: the file as the read layer opens it: a file:// URI of
 *     the file name's exact bytes, or the URL as shown for remote slides),
 *   mpp-x, mpp-y (double, 0 = unknown), mpp-source (string:
 *     "openslide", "tiff-resolution", "default-mpp" or "unknown"),
 *   objective-power (double: the scan's objective, 0 = unknown; DICOM's
 *     ObjectiveLensPower, Aperio's AppMag, OpenSlide's
 *     openslide.objective-power), icc-profile-size (uint64: bytes of the slide's
 *     ICC profile, 0 = none), icc-profile-sha256 (string: its SHA-256 in
 *     lower-case hex, "" when none or not hashed; DICOM only so far),
 *   overview-width, overview-height (int),
 *   has-overview, has-mask (boolean),
 *   tissue-fraction (double, -1 until tissuemask ran),
 *   tissue-rejected (boolean: too little tissue, sample nothing),
 *   rank, world-size (uint), rank-slides (uint: slides this rank holds),
 *   rank-slides-min (uint: floor (total / world-size), the smallest rank's
 *     slide count, the same on every rank; patchsampler's rank-quota)
 */

static inline GstStructure *
wsi_slide_meta_get (GstBuffer * buffer)
{
  GstCustomMeta *meta = gst_buffer_get_custom_meta (buffer,
      WSI_SLIDE_META_NAME);
  return meta ? gst_custom_meta_get_structure (meta) : NULL;
}

static inline GstStructure *
wsi_slide_meta_add (GstBuffer * buffer)
{
  GstCustomMeta *meta;

  wsi_custom_meta_info (WSI_SLIDE_META_NAME);
  meta = gst_buffer_add_custom_meta (buffer, WSI_SLIDE_META_NAME);
  return gst_custom_meta_get_structure (meta);
}

static inline gboolean
wsi_structure_copy_field (GQuark field, const GValue * value, gpointer dest)
{
  gst_structure_id_set_value ((GstStructure *) dest, field, value);
  return TRUE;
}

/* Copies the slide description of @src onto @dest (e.g. from a slide
 * buffer onto a coordinate buffer). */
static inline void
wsi_slide_meta_copy (GstBuffer * dest, GstBuffer * src)
{
  GstStructure *from = wsi_slide_meta_get (src);
  GstStructure *to;

  if (from == NULL)
    return;
  to = wsi_slide_meta_get (dest);
  if (to == NULL)
    to = wsi_slide_meta_add (dest);
  gst_structure_foreach (from, wsi_structure_copy_field, to);
}

/* The WsiPatchMeta field names as quarks, made once per file that
 * includes this header. A field looked up or set by name costs
 * g_quark_from_string(): a process-wide lock and a hash lookup, several
 * times per patch on every streaming thread; the per-patch paths (store
 * serving, batching) go by quark. */
typedef struct
{
  GQuark count, records, paths, labels, uris, mpps, column_names,
      column_values, views;
} WsiMetaQuarks;

static inline const WsiMetaQuarks *
wsi_meta_quarks (void)
{
  static WsiMetaQuarks q;
  static gsize made = 0;

  if (g_once_init_enter (&made)) {
    q.count = g_quark_from_static_string ("count");
    q.records = g_quark_from_static_string ("records");
    q.paths = g_quark_from_static_string ("paths");
    q.labels = g_quark_from_static_string ("labels");
    q.uris = g_quark_from_static_string ("uris");
    q.mpps = g_quark_from_static_string ("mpps");
    q.column_names = g_quark_from_static_string ("column-names");
    q.column_values = g_quark_from_static_string ("column-values");
    q.views = g_quark_from_static_string ("views");
    g_once_init_leave (&made, 1);
  }
  return &q;
}

/* Sets field @field of @s to a GstValueArray of the @n numbers at
 * @values, of @type: G_TYPE_DOUBLE (gdouble) or G_TYPE_INT64 (gint64). */
static inline void
wsi_structure_id_set_number_array (GstStructure * s, GQuark field,
    GType type, gconstpointer values, guint n)
{
  GValue array = G_VALUE_INIT, item = G_VALUE_INIT;
  guint i;

  g_value_init (&array, GST_TYPE_ARRAY);
  g_value_init (&item, type);
  for (i = 0; i < n; i++) {
    if (type == G_TYPE_DOUBLE)
      g_value_set_double (&item, ((const gdouble *) values)[i]);
    else
      g_value_set_int64 (&item, ((const gint64 *) values)[i]);
    gst_value_array_append_value (&array, &item);
  }
  gst_structure_id_take_value (s, field, &array);
  g_value_unset (&item);
}

/* Sets field @field of @s to a GstValueArray of @n doubles. */
static inline void
wsi_structure_id_set_double_array (GstStructure * s, GQuark field,
    const gdouble * values, guint n)
{
  wsi_structure_id_set_number_array (s, field, G_TYPE_DOUBLE, values, n);
}

/* Sets field @field of @s to a GstValueArray of @n gint64. */
static inline void
wsi_structure_id_set_int64_array (GstStructure * s, GQuark field,
    const gint64 * values, guint n)
{
  wsi_structure_id_set_number_array (s, field, G_TYPE_INT64, values, n);
}

/* Sets @field of @s to a GstValueArray of @n doubles (GStreamer's own
 * type for an ordered list of values in a structure, as audio caps'
 * channel positions use: typed numbers, no formatting or parsing). The
 * by-name form of wsi_structure_id_set_double_array(). */
static inline void
wsi_structure_set_double_array (GstStructure * s, const gchar * field,
    const gdouble * values, guint n)
{
  wsi_structure_id_set_double_array (s, g_quark_from_string (field), values,
      n);
}

/* Sets @field of @s to a GstValueArray of @n gint64: the by-name form of
 * wsi_structure_id_set_int64_array(). */
static inline void
wsi_structure_set_int64_array (GstStructure * s, const gchar * field,
    const gint64 * values, guint n)
{
  wsi_structure_id_set_int64_array (s, g_quark_from_string (field), values,
      n);
}

/* Entry @i of the GstValueArray field @field of @s (doubles or gint64, e.g.
 * the slide meta's "level-downsamples" or "level-tile-widths") as a
 * double; @fallback when the field is absent, not an array, shorter than
 * @i + 1 or holds another type. No allocation, no parsing. */
static inline gdouble
wsi_structure_array_id_get (const GstStructure * s, GQuark field, guint i,
    gdouble fallback)
{
  const GValue *array = gst_structure_id_get_value (s, field);
  const GValue *item;

  if (array == NULL || !GST_VALUE_HOLDS_ARRAY (array)
      || i >= gst_value_array_get_size (array))
    return fallback;
  item = gst_value_array_get_value (array, i);
  if (G_VALUE_HOLDS_DOUBLE (item))
    return g_value_get_double (item);
  if (G_VALUE_HOLDS_INT64 (item))
    return (gdouble) g_value_get_int64 (item);
  return fallback;
}

static inline gdouble
wsi_structure_array_get (const GstStructure * s, const gchar * field,
    guint i, gdouble fallback)
{
  return wsi_structure_array_id_get (s, g_quark_from_string (field), i,
      fallback);
}

/* ---- WsiPatchMeta -------------------------------------------------------
 * Structure fields:
 *   count (uint): patches in the buffer,
 *   records (GBytes): count packed WsiPatchRecord, in buffer order,
 *   paths (GStrv): slide path of each patch,
 *   labels (GStrv): slide label of each patch ("" when none),
 *   uris (GStrv), mpps (GstValueArray of double): each patch's slide uri
 *     and level-0 mpp, from patchreader on (see wsi_patch_meta_set_slides).
 */

static inline GstStructure *
wsi_patch_meta_get (GstBuffer * buffer)
{
  GstCustomMeta *meta = gst_buffer_get_custom_meta (buffer,
      WSI_PATCH_META_NAME);
  return meta ? gst_custom_meta_get_structure (meta) : NULL;
}

/* Attaches a WsiPatchMeta holding @n_records records and their slides'
 * paths and labels. */
static inline GstStructure *
wsi_patch_meta_add (GstBuffer * buffer, const WsiPatchRecord * records,
    guint n_records, const gchar * const *paths, const gchar * const *labels)
{
  const WsiMetaQuarks *q = wsi_meta_quarks ();
  GstCustomMeta *meta;
  GstStructure *s;
  GBytes *bytes;

  wsi_custom_meta_info (WSI_PATCH_META_NAME);
  meta = gst_buffer_add_custom_meta (buffer, WSI_PATCH_META_NAME);
  s = gst_custom_meta_get_structure (meta);
  bytes = g_bytes_new (records, n_records * sizeof (WsiPatchRecord));
  gst_structure_id_set (s, q->count, G_TYPE_UINT, n_records,
      q->records, G_TYPE_BYTES, bytes,
      q->paths, G_TYPE_STRV, paths, q->labels, G_TYPE_STRV, labels, NULL);
  g_bytes_unref (bytes);
  return s;
}

/* Each patch's slide as wsislidesrc names it for opening (`uris`, GStrv:
 * the slide meta's `uri`) and its level-0 resolution (`mpps`,
 * GstValueArray of double: the slide meta's `mpp-x`, 0 = unknown). Set by
 * patchreader on single patches and gathered by patchbatch into batches,
 * so that later stages (patchviews, Python) open the same file and know
 * its resolution without reconstructing either. */
static inline void
wsi_patch_meta_set_slides (GstStructure * s, const gchar * const *uris,
    const gdouble * mpps, guint n)
{
  const WsiMetaQuarks *q = wsi_meta_quarks ();

  gst_structure_id_set (s, q->uris, G_TYPE_STRV, uris, NULL);
  wsi_structure_id_set_double_array (s, q->mpps, mpps, n);
}

/* Level-0 mpp of patch @i (`mpps`), 0 when unknown or absent. */
static inline gdouble
wsi_patch_meta_mpp (const GstStructure * s, guint i)
{
  return wsi_structure_array_id_get (s, wsi_meta_quarks ()->mpps, i, 0.0);
}

/* Returns the records of a WsiPatchMeta structure (owned by it) and their
 * number in @n_records. */
static inline const WsiPatchRecord *
wsi_patch_meta_records (const GstStructure * s, guint * n_records)
{
  const GValue *value = gst_structure_id_get_value (s,
      wsi_meta_quarks ()->records);
  GBytes *bytes;
  gsize size = 0;
  const WsiPatchRecord *records = NULL;

  *n_records = 0;
  if (value == NULL || !G_VALUE_HOLDS (value, G_TYPE_BYTES))
    return NULL;
  bytes = (GBytes *) g_value_get_boxed (value);
  if (bytes != NULL)
    records = (const WsiPatchRecord *) g_bytes_get_data (bytes, &size);
  *n_records = size / sizeof (WsiPatchRecord);
  return records;
}

/* Returns entry @i of the "paths" or "labels" field, or NULL. */
static inline const gchar *
wsi_patch_meta_string (const GstStructure * s, const gchar * field, guint i)
{
  const GValue *value = gst_structure_get_value (s, field);
  const gchar *const *strv;

  if (value == NULL || !G_VALUE_HOLDS (value, G_TYPE_STRV))
    return NULL;
  strv = (const gchar * const *) g_value_get_boxed (value);
  if (strv == NULL)
    return NULL;
  /* Walk to @i only, not to the end: callers loop over a batch. */
  for (; i > 0 && *strv != NULL; i--)
    strv++;
  return *strv;
}

/* ---- record version 2: views and columns --------------------------------
 * WsiPatchMeta field "record-version" (uint) is 1 when absent. Version 2
 * adds two optional extensions; a reader that knows only version 1 still
 * finds count/records/paths/labels unchanged (one record per location).
 *
 * Views (patchviews and after). Caps "application/x-wsi-views", fields
 * format (string, as video/x-raw: RGB, RGBA, RGBx, GRAY8) and n-views
 * (int, 1..16: a GstBuffer holds at most 16 memories; patchviews also
 * writes BGRx when its input is BGRx). A buffer holds count locations ×
 * n-views views: one GstMemory per view, memory v packing the count
 * images of view v back to back (each out_height × out_width × channels
 * bytes, rows tightly packed), so every view is one NHWC array aligned
 * on the same locations.
 * WsiPatchMeta fields:
 *   view-names (GStrv, n-views names, e.g. "global_0", "local_3"),
 *   views (GBytes: count × n-views WsiViewRecord, location-major: the
 *     record of location i, view v is entry i * n-views + v).
 *
 * Columns (wsislidesrc manifest / tcga). Every slide carries string
 * columns: WsiSlideMeta fields column-names and column-values (GStrv of
 * equal length, values "" when empty). WsiPatchMeta fields
 *   column-names (GStrv, n-columns names),
 *   column-values (GStrv: count × n-columns values, location-major).
 */

/* Returns the GStrv field @field of @s (owned by it), or NULL. */
static inline const gchar *const *
wsi_structure_get_strv (const GstStructure * s, const gchar * field)
{
  const GValue *value = gst_structure_get_value (s, field);

  if (value == NULL || !G_VALUE_HOLDS (value, G_TYPE_STRV))
    return NULL;
  return (const gchar * const *) g_value_get_boxed (value);
}

/* Sets the columns of a slide (WsiSlideMeta) or of one location
 * (WsiPatchMeta with count 1): column-names and column-values, GStrv of
 * equal length (NULL = none: empty lists). */
static inline void
wsi_meta_set_columns (GstStructure * s, const gchar * const *names,
    const gchar * const *values)
{
  static const gchar *const none[] = { NULL };

  const WsiMetaQuarks *q = wsi_meta_quarks ();

  gst_structure_id_set (s, q->column_names, G_TYPE_STRV, names ? names :
      none, q->column_values, G_TYPE_STRV, values ? values : none, NULL);
}

/* Value of column @name for location @i of a WsiPatchMeta (i = 0 for a
 * WsiSlideMeta), or NULL when there is no such column or location. */
static inline const gchar *
wsi_meta_column (const GstStructure * s, const gchar * name, guint i)
{
  const gchar *const *names = wsi_structure_get_strv (s, "column-names");
  const gchar *const *values = wsi_structure_get_strv (s, "column-values");
  guint n, column, k;

  if (names == NULL || values == NULL)
    return NULL;
  for (column = 0; names[column] != NULL; column++)
    if (strcmp (names[column], name) == 0)
      break;
  if (names[column] == NULL)
    return NULL;
  n = g_strv_length ((gchar **) names);
  /* Walk to the entry only: callers loop over a batch. */
  for (k = 0; k < i * n + column; k++)
    if (values[k] == NULL)
      return NULL;
  return values[k];
}

#define WSI_VIEWS_MEDIA_TYPE "application/x-wsi-views"
/* Normalised float batches (patchbatch normalize=true). Caps fields dtype
 * ("float32"), layout ("NCHW"), channels (int: 3, RGB order, or 1),
 * n-views (int), and width, height (int) for batches of single-view
 * patches. One GstMemory per view, memory v a float32 (count, channels,
 * height, width) array, native byte order; multi-view sizes are in the
 * view records. Batches of x-wsi-views stay x-wsi-views (count in the
 * meta): memory v = the count images of view v. docs/data-formats.md. */
#define WSI_TENSOR_MEDIA_TYPE "application/x-wsi-tensor"
#define WSI_RECORD_VERSION 2

/* WsiViewRecord.flags. patchaugment flips first (horizontal, then
 * vertical), then turns: view pixel (x, y) of a square view of side S
 * came from (S - 1 - y, x) before one turn (np.rot90). */
#define WSI_VIEW_FLAG_CONTEXT  (1u << 0)        /* re-read from the slide */
#define WSI_VIEW_FLAG_FLIP_H   (1u << 1)        /* set by patchaugment */
#define WSI_VIEW_FLAG_FLIP_V   (1u << 2)
#define WSI_VIEW_FLAG_ROT_MASK (3u << 3)        /* quarter turns (0..3) ccw */
#define WSI_VIEW_FLAG_ROT_SHIFT 3

/**
 * WsiViewRecord:
 * @x: left edge of the view's footprint, level-0 pixels (fractional for
 *   crops)
 * @y: top edge of the view's footprint, level-0 pixels
 * @width0: footprint width, level-0 pixels
 * @height0: footprint height, level-0 pixels
 * @mpp: microns per output pixel of the view (0 when unknown)
 * @view_index: index into the meta's view-names
 * @out_width: view width in pixels
 * @out_height: view height in pixels
 * @flags: WSI_VIEW_FLAG_*
 * @reserved: 0
 *
 * One view of one location, 48 bytes, native byte order, no padding.
 * Writer: patchviews (all fields); patchaugment ORs flip/rotation flags.
 */
typedef struct
{
  gdouble x;
  gdouble y;
  gfloat width0;
  gfloat height0;
  gfloat mpp;
  guint32 view_index;
  guint32 out_width;
  guint32 out_height;
  guint32 flags;
  guint32 reserved;
} WsiViewRecord;

G_STATIC_ASSERT (sizeof (WsiViewRecord) == 48);

/* Returns the view records of a WsiPatchMeta structure (owned by it), and
 * their number in @n_views_total (count × n-views), or NULL. */
static inline const WsiViewRecord *
wsi_patch_meta_views (const GstStructure * s, guint * n_views_total)
{
  const GValue *value = gst_structure_id_get_value (s,
      wsi_meta_quarks ()->views);
  gsize size = 0;
  const WsiViewRecord *views = NULL;

  *n_views_total = 0;
  if (value == NULL || !G_VALUE_HOLDS (value, G_TYPE_BYTES))
    return NULL;
  if (g_value_get_boxed (value) != NULL)
    views = (const WsiViewRecord *)
        g_bytes_get_data ((GBytes *) g_value_get_boxed (value), &size);
  *n_views_total = size / sizeof (WsiViewRecord);
  return views;
}

G_END_DECLS

#endif /* __WSI_RECORD_H__ */
