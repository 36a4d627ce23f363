/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsizarr.c: OME-Zarr (NGFF 0.4 on Zarr v2, NGFF 0.5 on Zarr v3) metadata
 * and chunks (see wsizarr.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsizarr.h"
#include "wsitiffcodec.h"
#include "wsibytesource.h"
#include "wsislide.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#ifdef WSI_HAVE_BLOSC
#include <blosc.h>
#endif

/* Largest metadata object read (a .zattrs with many datasets is a few kB). */
#define MAX_METADATA_BYTES (4 << 20)
/* Largest decoded chunk accepted (3 x 4096 x 4096 is 48 MB). */
#define MAX_CHUNK_BYTES ((gsize) 256 << 20)

static gboolean
refuse (GError ** error, const gchar * display, const gchar * format, ...)
G_GNUC_PRINTF (3, 4);

static gboolean
refuse (GError ** error, const gchar * display, const gchar * format, ...)
{
  va_list args;
  gchar *reason;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_REFUSED,
      "%s: OME-Zarr not read: %s", display, reason);
  g_free (reason);
  return FALSE;
}

/* ---- locations ---------------------------------------------------------- */

static gchar *
join (const gchar * base, const gchar * name)
{
  if (wsi_location_is_remote (base))
    return g_str_has_suffix (base, "/") ? g_strconcat (base, name, NULL)
        : g_strconcat (base, "/", name, NULL);
  return g_build_filename (base, name, NULL);
}

gboolean
wsi_zarr_is_store (const gchar * location)
{
  gchar *a, *b;
  gboolean yes;

  if (wsi_location_is_remote (location)) {
    gsize n = strcspn (location, "?#");
    gchar *lower = g_ascii_strdown (location, n);
    yes = g_str_has_suffix (lower, ".zarr") || g_str_has_suffix (lower,
        ".zarr/");
    g_free (lower);
    return yes;
  }
  if (!g_file_test (location, G_FILE_TEST_IS_DIR))
    return FALSE;
  a = join (location, ".zattrs");
  b = join (location, "zarr.json");
  yes = g_file_test (a, G_FILE_TEST_IS_REGULAR)
      || g_file_test (b, G_FILE_TEST_IS_REGULAR);
  g_free (a);
  g_free (b);
  return yes;
}

/* The whole object at @location; NULL with @error (NOT_FOUND kept in the
 * byte source's domain so callers can tell an absent object). */
static guint8 *
read_object (const gchar * location, gsize limit, gsize * size,
    GError ** error)
{
  WsiByteSource *source = wsi_byte_source_open (location, error);
  guint64 n;
  guint8 *data;

  if (source == NULL)
    return NULL;
  n = wsi_byte_source_get_size (source);
  if (n > limit) {
    g_set_error (error, WSI_BYTE_SOURCE_ERROR, WSI_BYTE_SOURCE_ERROR_IO,
        "%s: %" G_GUINT64_FORMAT " bytes is implausible (at most %"
        G_GSIZE_FORMAT ")", wsi_byte_source_get_display_uri (source), n,
        limit);
    wsi_byte_source_unref (source);
    return NULL;
  }
  data = g_try_malloc (MAX (n, 1) + 1);
  if (data == NULL || (n > 0 && !wsi_byte_source_read (source, 0, n, data,
              error))) {
    if (data == NULL)
      g_set_error (error, WSI_BYTE_SOURCE_ERROR, WSI_BYTE_SOURCE_ERROR_IO,
          "out of memory");
    g_free (data);
    wsi_byte_source_unref (source);
    return NULL;
  }
  data[n] = 0;
  *size = n;
  wsi_byte_source_unref (source);
  return data;
}

/* ---- .zattrs ------------------------------------------------------------ */

static JsonNode *
parse_json (const gchar * text, gsize size, const gchar * display,
    const gchar * what, GError ** error)
{
  JsonParser *parser = json_parser_new ();
  GError *local = NULL;
  JsonNode *root = NULL;

  if (json_parser_load_from_data (parser, text, size, &local)) {
    root = json_parser_steal_root (parser);
    /* json-glib accepts an empty (or all-blank) document: no root */
    if (root == NULL)
      refuse (error, display, "%s is empty", what);
  } else {
    refuse (error, display, "%s is not valid JSON (%s)", what,
        local->message);
    g_error_free (local);
  }
  g_object_unref (parser);
  if (root != NULL && !JSON_NODE_HOLDS_OBJECT (root)) {
    refuse (error, display, "%s is not a JSON object", what);
    json_node_unref (root);
    root = NULL;
  }
  return root;
}

static JsonArray *
member_array (JsonObject * o, const gchar * name)
{
  JsonNode *n = o ? json_object_get_member (o, name) : NULL;
  return n && JSON_NODE_HOLDS_ARRAY (n) ? json_node_get_array (n) : NULL;
}

static const gchar *
member_string (JsonObject * o, const gchar * name)
{
  JsonNode *n = o ? json_object_get_member (o, name) : NULL;
  return n && JSON_NODE_HOLDS_VALUE (n)
      && json_node_get_value_type (n) == G_TYPE_STRING
      ? json_node_get_string (n) : NULL;
}

static gboolean
is_number (JsonNode * n)
{
  GType t;

  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n))
    return FALSE;
  t = json_node_get_value_type (n);
  return t == G_TYPE_INT64 || t == G_TYPE_DOUBLE;
}

/* Micrometres in one NGFF unit (0: none or unknown). */
static gdouble
unit_um (const gchar * unit)
{
  if (unit == NULL)
    return 0.0;
  if (strcmp (unit, "micrometer") == 0)
    return 1.0;
  if (strcmp (unit, "nanometer") == 0)
    return 1e-3;
  if (strcmp (unit, "millimeter") == 0)
    return 1e3;
  if (strcmp (unit, "centimeter") == 0)
    return 1e4;
  if (strcmp (unit, "meter") == 0)
    return 1e6;
  return 0.0;
}

/* The first scale transformation's value for axis @axis, 0 when none. */
static gdouble
dataset_scale (JsonObject * dataset, gint axis)
{
  JsonArray *transforms = member_array (dataset, "coordinateTransformations");
  guint i;

  for (i = 0; transforms && i < json_array_get_length (transforms); i++) {
    JsonNode *tn = json_array_get_element (transforms, i);
    JsonObject *t = JSON_NODE_HOLDS_OBJECT (tn) ? json_node_get_object (tn)
        : NULL;
    JsonArray *scale = member_array (t, "scale");
    if (g_strcmp0 (member_string (t, "type"), "scale") != 0 || scale == NULL
        || axis < 0 || (guint) axis >= json_array_get_length (scale)
        || !is_number (json_array_get_element (scale, axis)))
      continue;
    return json_array_get_double_element (scale, axis);
  }
  return 0.0;
}

static JsonObject *
member_object (JsonObject * o, const gchar * name)
{
  JsonNode *n = o ? json_object_get_member (o, name) : NULL;
  return n && JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
}

/* zarr_format's value, 0 when absent or not an integer. */
static gint64
zarr_format (JsonObject * o)
{
  JsonNode *n = json_object_get_member (o, "zarr_format");
  return n && is_number (n) && json_node_get_value_type (n) == G_TYPE_INT64
      ? json_node_get_int (n) : 0;
}

gboolean
wsi_zarr_image_parse (WsiZarrImage * image, const gchar * display,
    const gchar * zattrs, gsize zattrs_size, GError ** error)
{
  /* a name for messages before the JSON is parsed: v2's .zattrs never
   * says zarr_format, v3's zarr.json always does */
  const gchar *what = g_strstr_len (zattrs, zattrs_size, "zarr_format")
      ? "zarr.json" : ".zattrs";
  JsonNode *root = parse_json (zattrs, zattrs_size, display, what, error);
  JsonObject *ms = NULL, *holder;
  JsonArray *multiscales, *axes, *datasets;
  gdouble ux = 0.0, uy = 0.0;
  guint i, n;
  gboolean ok = FALSE;

  memset (image, 0, sizeof (*image));
  image->axis_c = image->axis_y = image->axis_x = -1;
  if (root == NULL)
    return FALSE;
  holder = json_node_get_object (root);
  image->zarr_format = 2;
  if (zarr_format (holder) == 3) {
    /* NGFF 0.5: attributes.ome.multiscales (attributes.multiscales in
     * stores written before 0.5 was final) */
    JsonObject *attributes = member_object (holder, "attributes");
    image->zarr_format = 3;
    if (g_strcmp0 (member_string (holder, "node_type"), "group") != 0) {
      refuse (error, display, "zarr.json is not a group's");
      goto out;
    }
    holder = member_object (attributes, "ome");
    if (member_array (holder, "multiscales") == NULL)
      holder = attributes;
  } else if (json_object_has_member (holder, "zarr_format")) {
    refuse (error, display, "%s: zarr_format is neither 2 nor 3", what);
    goto out;
  }
  multiscales = member_array (holder, "multiscales");
  if (multiscales == NULL || json_array_get_length (multiscales) == 0
      || !JSON_NODE_HOLDS_OBJECT (json_array_get_element (multiscales, 0))) {
    refuse (error, display, "%s has no multiscales", what);
    goto out;
  }
  ms = json_array_get_object_element (multiscales, 0);
  axes = member_array (ms, "axes");
  datasets = member_array (ms, "datasets");
  if (datasets == NULL || json_array_get_length (datasets) == 0) {
    refuse (error, display, "multiscales has no datasets");
    goto out;
  }
  if (axes == NULL) {
    /* NGFF 0.1-0.3: always (t, c, z, y, x) */
    image->axis_c = 1;
    image->axis_y = 3;
    image->axis_x = 4;
  } else {
    if (json_array_get_length (axes) > WSI_ZARR_MAX_DIMS) {
      refuse (error, display, "%u axes", json_array_get_length (axes));
      goto out;
    }
    for (i = 0; i < json_array_get_length (axes); i++) {
      JsonNode *an = json_array_get_element (axes, i);
      JsonObject *a = JSON_NODE_HOLDS_OBJECT (an) ? json_node_get_object (an)
          : NULL;
      const gchar *name = a ? member_string (a, "name")
          : JSON_NODE_HOLDS_VALUE (an)
          && json_node_get_value_type (an) == G_TYPE_STRING
          ? json_node_get_string (an) : NULL;
      if (name == NULL) {
        refuse (error, display, "axis %u has no name", i);
        goto out;
      }
      if (strcmp (name, "c") == 0)
        image->axis_c = i;
      else if (strcmp (name, "y") == 0) {
        image->axis_y = i;
        uy = unit_um (member_string (a, "unit"));
      } else if (strcmp (name, "x") == 0) {
        image->axis_x = i;
        ux = unit_um (member_string (a, "unit"));
      } else if (strcmp (name, "t") != 0 && strcmp (name, "z") != 0) {
        refuse (error, display, "axis '%s' is not one of t, c, z, y, x",
            name);
        goto out;
      }
    }
  }
  if (image->axis_c < 0 || image->axis_y < 0 || image->axis_x < 0) {
    refuse (error, display, "the axes lack %s (RGB needs c, y and x)",
        image->axis_c < 0 ? "c" : image->axis_y < 0 ? "y" : "x");
    goto out;
  }
  n = json_array_get_length (datasets);
  if (n > 64) {
    refuse (error, display, "%u datasets", n);
    goto out;
  }
  image->levels = g_new0 (WsiZarrLevel, n);
  image->n_levels = n;
  for (i = 0; i < n; i++) {
    JsonNode *dn = json_array_get_element (datasets, i);
    JsonObject *d = JSON_NODE_HOLDS_OBJECT (dn) ? json_node_get_object (dn)
        : NULL;
    const gchar *path = member_string (d, "path");
    if (path == NULL || path[0] == '\0' || strstr (path, "..") != NULL
        || path[0] == '/') {
      refuse (error, display, "dataset %u has no usable path", i);
      goto out;
    }
    image->levels[i].dataset = g_strdup (path);
    if (i == 0) {
      gdouble sx = dataset_scale (d, image->axis_x);
      gdouble sy = dataset_scale (d, image->axis_y);
      if (isfinite (sx) && isfinite (sy) && sx > 0 && sy > 0 && ux > 0
          && uy > 0) {
        image->mpp_x = sx * ux;
        image->mpp_y = sy * uy;
      }
    }
  }
  ok = TRUE;
out:
  json_node_unref (root);
  if (!ok)
    wsi_zarr_image_clear (image);
  return ok;
}

/* ---- .zarray ------------------------------------------------------------ */

static gboolean
int_list (JsonArray * a, gint64 * out, guint * n)
{
  guint i;

  if (a == NULL || json_array_get_length (a) == 0
      || json_array_get_length (a) > WSI_ZARR_MAX_DIMS)
    return FALSE;
  *n = json_array_get_length (a);
  for (i = 0; i < *n; i++) {
    JsonNode *e = json_array_get_element (a, i);
    if (!is_number (e) || json_node_get_value_type (e) != G_TYPE_INT64)
      return FALSE;
    out[i] = json_node_get_int (e);
    if (out[i] <= 0 || out[i] > G_MAXINT32)
      return FALSE;
  }
  return TRUE;
}

static gboolean
parse_compressor (WsiZarrLevel * level, JsonObject * o, const gchar * display,
    guint index, GError ** error)
{
  JsonNode *cn = json_object_get_member (o, "compressor");
  JsonObject *c;
  const gchar *id;

  if (cn == NULL || JSON_NODE_HOLDS_NULL (cn)) {
    level->codec = WSI_ZARR_RAW;
    return TRUE;
  }
  c = JSON_NODE_HOLDS_OBJECT (cn) ? json_node_get_object (cn) : NULL;
  id = member_string (c, "id");
  if (id == NULL)
    return refuse (error, display, "level %u: compressor without id", index);
  if (strcmp (id, "zlib") == 0)
    level->codec = WSI_ZARR_ZLIB;
  else if (strcmp (id, "gzip") == 0)
    level->codec = WSI_ZARR_GZIP;
  else if (strcmp (id, "zstd") == 0) {
#ifndef WSI_HAVE_ZSTD
    return refuse (error, display, "level %u: zstd chunks, and this build "
        "has no libzstd", index);
#endif
    level->codec = WSI_ZARR_ZSTD;
  } else if (strcmp (id, "blosc") == 0) {
#ifndef WSI_HAVE_BLOSC
    return refuse (error, display, "level %u: blosc chunks, and this build "
        "has no libblosc", index);
#endif
    level->codec = WSI_ZARR_BLOSC;
  } else
    return refuse (error, display, "level %u: compressor '%s' is not read "
        "(raw, zlib, gzip, zstd and blosc are)", index, id);
  return TRUE;
}

/* Zarr v2's .zarray: shape, chunks, dtype, order, filters, compressor. */
static gboolean
parse_v2 (WsiZarrLevel * level, JsonObject * o, const gchar * display,
    guint index, const gchar * what, guint * perm, GError ** error)
{
  JsonNode *fill, *filters;
  const gchar *dtype, *order, *sep;
  guint nshape = 0, nchunks = 0, d;

  if (!int_list (member_array (o, "shape"), level->shape, &nshape)
      || !int_list (member_array (o, "chunks"), level->chunks, &nchunks)
      || nshape != nchunks)
    return refuse (error, display, "%s: shape or chunks missing or invalid",
        what);
  level->ndim = nshape;
  dtype = member_string (o, "dtype");
  if (dtype == NULL || (strcmp (dtype, "|u1") != 0
          && strcmp (dtype, "<u1") != 0 && strcmp (dtype, ">u1") != 0))
    return refuse (error, display, "%s: dtype %s (only uint8, |u1, is read)",
        what, dtype ? dtype : "missing");
  order = member_string (o, "order");
  if (order != NULL && strcmp (order, "C") != 0 && strcmp (order, "F") != 0)
    return refuse (error, display, "%s: order %s (C and F are read)", what,
        order);
  /* F order: the chunk's bytes are its C-order transpose */
  for (d = 0; d < nshape; d++)
    perm[d] = order != NULL && order[0] == 'F' ? nshape - 1 - d : d;
  filters = json_object_get_member (o, "filters");
  if (filters != NULL && !JSON_NODE_HOLDS_NULL (filters)
      && !(JSON_NODE_HOLDS_ARRAY (filters)
          && json_array_get_length (json_node_get_array (filters)) == 0))
    return refuse (error, display, "%s: filters are not read", what);
  sep = member_string (o, "dimension_separator");
  level->separator = sep != NULL && strcmp (sep, "/") == 0 ? '/' : '.';
  level->key_c = FALSE;
  fill = json_object_get_member (o, "fill_value");
  level->fill = fill && is_number (fill) ? (guint8) CLAMP (json_node_get_int
      (fill), 0, 255) : 0;
  return parse_compressor (level, o, display, index, error);
}

/* A Zarr v3 codec's name (an object's "name", or a bare string). */
static const gchar *
codec_name (JsonNode * n, JsonObject ** configuration)
{
  JsonObject *c = JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n)
      : NULL;

  *configuration = member_object (c, "configuration");
  if (c != NULL)
    return member_string (c, "name");
  return JSON_NODE_HOLDS_VALUE (n)
      && json_node_get_value_type (n) == G_TYPE_STRING
      ? json_node_get_string (n) : NULL;
}

/* Zarr v3 `transpose`: composes its order into @perm (the original
 * dimension of each stored one). */
static gboolean
compose_transpose (JsonObject * configuration, guint ndim, guint * perm)
{
  JsonNode *on = configuration ? json_object_get_member (configuration,
      "order") : NULL;
  guint order[WSI_ZARR_MAX_DIMS], next[WSI_ZARR_MAX_DIMS], d;
  gboolean seen[WSI_ZARR_MAX_DIMS] = { FALSE, };

  if (on == NULL)
    return FALSE;
  if (JSON_NODE_HOLDS_VALUE (on)
      && json_node_get_value_type (on) == G_TYPE_STRING) {
    /* the drafts' "C" and "F" */
    const gchar *o = json_node_get_string (on);
    if (strcmp (o, "C") != 0 && strcmp (o, "F") != 0)
      return FALSE;
    for (d = 0; d < ndim; d++)
      order[d] = o[0] == 'F' ? ndim - 1 - d : d;
  } else if (JSON_NODE_HOLDS_ARRAY (on)
      && json_array_get_length (json_node_get_array (on)) == ndim) {
    JsonArray *a = json_node_get_array (on);
    for (d = 0; d < ndim; d++) {
      JsonNode *e = json_array_get_element (a, d);
      gint64 v;
      if (!is_number (e) || json_node_get_value_type (e) != G_TYPE_INT64)
        return FALSE;
      v = json_node_get_int (e);
      if (v < 0 || v >= ndim || seen[v])
        return FALSE;
      seen[v] = TRUE;
      order[d] = v;
    }
  } else
    return FALSE;
  for (d = 0; d < ndim; d++)
    next[d] = perm[order[d]];
  memcpy (perm, next, sizeof (next[0]) * ndim);
  return TRUE;
}

static gboolean parse_v3_codecs (WsiZarrLevel * level, JsonArray * codecs,
    guint nshape, const gchar * display, guint index, const gchar * what,
    guint * perm, gboolean outer, GError ** error);

/* `sharding_indexed`: inner chunk shape (dividing the shard's), inner
 * codecs, index_codecs `bytes` (little endian) and an optional `crc32c`,
 * index_location start or end. */
static gboolean
parse_sharding (WsiZarrLevel * level, JsonObject * configuration,
    guint nshape, const gchar * display, guint index, const gchar * what,
    guint * perm, GError ** error)
{
  gint64 inner[WSI_ZARR_MAX_DIMS];
  JsonArray *codecs, *index_codecs;
  JsonObject *c;
  const gchar *name, *location, *endian;
  guint ninner = 0, d, i;
  gint64 n = 1;

  if (!int_list (member_array (configuration, "chunk_shape"), inner,
          &ninner) || ninner != nshape)
    return refuse (error, display, "%s: sharding without a valid inner "
        "chunk_shape", what);
  for (d = 0; d < nshape; d++) {
    if (level->chunks[d] % inner[d] != 0)
      return refuse (error, display, "%s: the shard's dimension %u (%"
          G_GINT64_FORMAT ") is not a multiple of its inner chunks' (%"
          G_GINT64_FORMAT ")", what, d, level->chunks[d], inner[d]);
    level->shard_chunks[d] = level->chunks[d] / inner[d];
    n *= level->shard_chunks[d];
    level->chunks[d] = inner[d];
  }
  /* the index is 16 bytes per inner chunk, read at once */
  if (n > (1 << 20))
    return refuse (error, display, "%s: %" G_GINT64_FORMAT " inner chunks "
        "per shard", what, n);
  level->shard_n = n;
  location = member_string (configuration, "index_location");
  if (location != NULL && strcmp (location, "end") != 0
      && strcmp (location, "start") != 0)
    return refuse (error, display, "%s: shard index_location %s", what,
        location);
  level->index_at_start = location != NULL && location[0] == 's';
  index_codecs = member_array (configuration, "index_codecs");
  for (i = 0; index_codecs && i < json_array_get_length (index_codecs); i++) {
    name = codec_name (json_array_get_element (index_codecs, i), &c);
    endian = member_string (c, "endian");
    if (i == 0 && g_strcmp0 (name, "bytes") == 0
        && (endian == NULL || strcmp (endian, "little") == 0))
      continue;
    if (i == 1 && g_strcmp0 (name, "crc32c") == 0) {
      level->index_crc32c = TRUE;
      continue;
    }
    return refuse (error, display, "%s: shard index codec %u ('%s') is not "
        "read (bytes little endian, then an optional crc32c, are)", what, i,
        name ? name : "unnamed");
  }
  if (index_codecs == NULL || json_array_get_length (index_codecs) == 0)
    return refuse (error, display, "%s: sharding without index_codecs",
        what);
  codecs = member_array (configuration, "codecs");
  if (codecs == NULL)
    return refuse (error, display, "%s: sharding without inner codecs",
        what);
  level->sharded = TRUE;
  return parse_v3_codecs (level, codecs, nshape, display, index, what, perm,
      FALSE, error);
}

/* A Zarr v3 codec chain (transpose*, bytes, at most one of gzip / zstd /
 * blosc), or (@outer) a lone `sharding_indexed` whose inner chunks have
 * such a chain: then level->chunks become the inner chunks. */
static gboolean
parse_v3_codecs (WsiZarrLevel * level, JsonArray * codecs, guint nshape,
    const gchar * display, guint index, const gchar * what, guint * perm,
    gboolean outer, GError ** error)
{
  JsonObject *configuration;
  const gchar *name;
  guint i, stage = 0;

  /* stage 0: array to array; 1: after bytes; 2: after a compressor */
  for (i = 0; i < json_array_get_length (codecs); i++) {
    name = codec_name (json_array_get_element (codecs, i), &configuration);
    if (name == NULL)
      return refuse (error, display, "%s: codec %u has no name", what, i);
    if (strcmp (name, "transpose") == 0 && stage == 0) {
      if (!compose_transpose (configuration, nshape, perm))
        return refuse (error, display, "%s: transpose without a valid "
            "order", what);
    } else if (strcmp (name, "bytes") == 0 && stage == 0) {
      stage = 1;
    } else if (strcmp (name, "sharding_indexed") == 0) {
      if (!outer || i != 0 || json_array_get_length (codecs) != 1)
        return refuse (error, display, "%s: sharding_indexed %s is not read "
            "(a lone sharding_indexed is)", what, outer ? "beside other "
            "codecs" : "inside a shard");
      return parse_sharding (level, configuration, nshape, display, index,
          what, perm, error);
    } else if (stage == 1 && (strcmp (name, "gzip") == 0
            || strcmp (name, "zstd") == 0 || strcmp (name, "blosc") == 0)) {
      if (name[0] == 'g')
        level->codec = WSI_ZARR_GZIP;
      else if (name[0] == 'z') {
#ifndef WSI_HAVE_ZSTD
        return refuse (error, display, "level %u: zstd chunks, and this "
            "build has no libzstd", index);
#endif
        level->codec = WSI_ZARR_ZSTD;
      } else {
#ifndef WSI_HAVE_BLOSC
        return refuse (error, display, "level %u: blosc chunks, and this "
            "build has no libblosc", index);
#endif
        level->codec = WSI_ZARR_BLOSC;
      }
      stage = 2;
    } else
      return refuse (error, display, "%s: codec '%s' %s is not read "
          "(transpose, bytes, then one of gzip, zstd, blosc are)", what,
          name, stage == 0 ? "before bytes" : "after bytes");
  }
  if (stage == 0)
    return refuse (error, display, "%s: no bytes codec", what);
  return TRUE;
}

/* Zarr v3's array zarr.json: shape, chunk grid, data type, chunk keys,
 * codecs (transpose*, bytes, at most one of gzip/zstd/blosc). */
static gboolean
parse_v3 (WsiZarrLevel * level, JsonObject * o, const gchar * display,
    guint index, const gchar * what, guint * perm, GError ** error)
{
  JsonObject *grid, *keys;
  JsonArray *codecs, *transformers;
  JsonNode *fill;
  const gchar *name, *dtype, *sep;
  guint nshape = 0, nchunks = 0, d;

  if (g_strcmp0 (member_string (o, "node_type"), "array") != 0)
    return refuse (error, display, "%s is not an array's", what);
  grid = member_object (o, "chunk_grid");
  name = member_string (grid, "name");
  if (g_strcmp0 (name, "regular") != 0)
    return refuse (error, display, "%s: chunk grid %s (only regular is "
        "read)", what, name ? name : "missing");
  if (!int_list (member_array (o, "shape"), level->shape, &nshape)
      || !int_list (member_array (member_object (grid, "configuration"),
              "chunk_shape"), level->chunks, &nchunks) || nshape != nchunks)
    return refuse (error, display, "%s: shape or chunk_shape missing or "
        "invalid", what);
  level->ndim = nshape;
  dtype = member_string (o, "data_type");
  if (g_strcmp0 (dtype, "uint8") != 0)
    return refuse (error, display, "%s: data_type %s (only uint8 is read)",
        what, dtype ? dtype : "missing");
  transformers = member_array (o, "storage_transformers");
  if (transformers != NULL && json_array_get_length (transformers) > 0)
    return refuse (error, display, "%s: storage transformers are not read",
        what);
  keys = member_object (o, "chunk_key_encoding");
  name = member_string (keys, "name");
  sep = member_string (member_object (keys, "configuration"), "separator");
  if (g_strcmp0 (name, "default") == 0) {
    level->key_c = TRUE;
    level->separator = sep != NULL && strcmp (sep, ".") == 0 ? '.' : '/';
  } else if (g_strcmp0 (name, "v2") == 0) {
    level->key_c = FALSE;
    level->separator = sep != NULL && strcmp (sep, "/") == 0 ? '/' : '.';
  } else
    return refuse (error, display, "%s: chunk key encoding %s (default and "
        "v2 are read)", what, name ? name : "missing");
  if (sep != NULL && strcmp (sep, ".") != 0 && strcmp (sep, "/") != 0)
    return refuse (error, display, "%s: chunk key separator '%s'", what, sep);
  fill = json_object_get_member (o, "fill_value");
  level->fill = fill && is_number (fill) ? (guint8) CLAMP (json_node_get_int
      (fill), 0, 255) : 0;
  for (d = 0; d < nshape; d++)
    perm[d] = d;
  level->codec = WSI_ZARR_RAW;
  codecs = member_array (o, "codecs");
  if (codecs == NULL)
    return refuse (error, display, "%s: no codecs", what);
  return parse_v3_codecs (level, codecs, nshape, display, index, what, perm,
      TRUE, error);
}

gboolean
wsi_zarr_level_parse (WsiZarrLevel * level, const WsiZarrImage * image,
    const gchar * display, guint index, const gchar * zarray,
    gsize zarray_size, GError ** error)
{
  gchar what[64];
  JsonNode *root;
  JsonObject *o;
  guint d, perm[WSI_ZARR_MAX_DIMS];
  gsize stride = 1, strides[WSI_ZARR_MAX_DIMS];
  gint64 format;
  gboolean ok = FALSE;

  g_snprintf (what, sizeof (what), "level %u's %s", index,
      image->zarr_format == 3 ? "zarr.json" : ".zarray");
  root = parse_json (zarray, zarray_size, display, what, error);
  if (root == NULL)
    return FALSE;
  o = json_node_get_object (root);
  format = zarr_format (o);
  if (format != image->zarr_format) {
    refuse (error, display, "%s: zarr_format is not %u", what,
        image->zarr_format);
    goto out;
  }
  if (!(format == 3 ? parse_v3 : parse_v2) (level, o, display, index, what,
          perm, error))
    goto out;
  if ((guint) MAX (image->axis_c, MAX (image->axis_y, image->axis_x))
      >= level->ndim) {
    refuse (error, display, "%s: %u dimensions for the image's axes", what,
        level->ndim);
    goto out;
  }
  for (d = 0; d < level->ndim; d++) {
    level->n_chunks[d] = (level->shape[d] + level->chunks[d] - 1)
        / level->chunks[d];
    if ((gint) d != image->axis_c && (gint) d != image->axis_y
        && (gint) d != image->axis_x && level->shape[d] != 1) {
      refuse (error, display, "%s: dimension %u has size %" G_GINT64_FORMAT
          " (t and z must be 1)", what, d, level->shape[d]);
      goto out;
    }
  }
  if (level->shape[image->axis_c] != 3) {
    refuse (error, display, "%s: %" G_GINT64_FORMAT " channels; only "
        "3-channel RGB is read (no fluorescence or multiplex channels)",
        what, level->shape[image->axis_c]);
    goto out;
  }
  if (level->chunks[image->axis_c] < 3) {
    refuse (error, display, "%s: the channels are split across chunks",
        what);
    goto out;
  }
  /* strides of the stored (C order, after any transpose) chunk: the last
   * stored dimension varies fastest */
  for (d = level->ndim; d-- > 0;) {
    guint orig = perm[d];
    strides[orig] = stride;
    if (level->chunks[orig] > (gint64) (MAX_CHUNK_BYTES / stride)) {
      refuse (error, display, "%s: chunks larger than %" G_GSIZE_FORMAT
          " bytes", what, MAX_CHUNK_BYTES);
      goto out;
    }
    stride *= level->chunks[orig];
  }
  level->stride_c = strides[image->axis_c];
  level->stride_y = strides[image->axis_y];
  level->stride_x = strides[image->axis_x];
  level->chunk_bytes = stride;
  level->width = level->shape[image->axis_x];
  level->height = level->shape[image->axis_y];
  level->chunk_width = level->chunks[image->axis_x];
  level->chunk_height = level->chunks[image->axis_y];
  ok = TRUE;
out:
  json_node_unref (root);
  return ok;
}

/* ---- the store ---------------------------------------------------------- */

static gchar *
read_text (const gchar * location, gsize * size, GError ** error)
{
  return (gchar *) read_object (location, MAX_METADATA_BYTES, size, error);
}

gboolean
wsi_zarr_image_read (WsiZarrImage * image, const gchar * location,
    const gchar * display, GError ** error)
{
  gchar *base = g_strdup (location), *name, *text;
  const gchar *group_name = ".zattrs";
  GError *local = NULL;
  gsize size = 0;
  guint i;

  /* bioformats2raw's layout: the image is the group "0" below the root. */
  for (i = 0; i < 2; i++) {
    name = join (base, group_name);
    text = read_text (name, &size, &local);
    g_free (name);
    if (text == NULL && i == 0 && g_error_matches (local,
            WSI_BYTE_SOURCE_ERROR, WSI_BYTE_SOURCE_ERROR_NOT_FOUND)) {
      /* no .zattrs: a Zarr v3 store (NGFF 0.5) keeps it in zarr.json */
      g_clear_error (&local);
      group_name = "zarr.json";
      name = join (base, group_name);
      text = read_text (name, &size, &local);
      g_free (name);
    }
    if (text == NULL) {
      refuse (error, display, "%s: %s", group_name, local->message);
      g_error_free (local);
      g_free (base);
      return FALSE;
    }
    if (i == 0 && strstr (text, "\"multiscales\"") == NULL
        && strstr (text, "bioformats2raw.layout") != NULL) {
      gchar *sub = join (base, "0");
      g_free (base);
      base = sub;
      g_free (text);
      continue;
    }
    break;
  }
  if (!wsi_zarr_image_parse (image, display, text, size, error)) {
    g_free (text);
    g_free (base);
    return FALSE;
  }
  g_free (text);
  for (i = 0; i < image->n_levels; i++) {
    WsiZarrLevel *level = &image->levels[i];
    gboolean ok;

    level->path = join (base, level->dataset);
    name = join (level->path, image->zarr_format == 3 ? "zarr.json"
        : ".zarray");
    text = read_text (name, &size, &local);
    g_free (name);
    if (text == NULL) {
      refuse (error, display, "level %u ('%s') is missing: %s", i,
          level->dataset, local->message);
      g_clear_error (&local);
      goto fail;
    }
    ok = wsi_zarr_level_parse (level, image, display, i, text, size, error);
    g_free (text);
    if (!ok)
      goto fail;
    if (i > 0 && (level->width >= image->levels[i - 1].width
            || level->height > image->levels[i - 1].height)) {
      refuse (error, display, "level %u (%" G_GINT64_FORMAT "x%"
          G_GINT64_FORMAT ") is not smaller than level %u", i, level->width,
          level->height, i - 1);
      goto fail;
    }
  }
  g_free (base);
  return TRUE;
fail:
  g_free (base);
  wsi_zarr_image_clear (image);
  return FALSE;
}

void
wsi_zarr_image_clear (WsiZarrImage * image)
{
  guint i;

  for (i = 0; i < image->n_levels; i++) {
    g_free (image->levels[i].dataset);
    g_free (image->levels[i].path);
  }
  g_free (image->levels);
  memset (image, 0, sizeof (*image));
  image->axis_c = image->axis_y = image->axis_x = -1;
}

/* ---- chunks ------------------------------------------------------------- */

gboolean
wsi_zarr_chunk_decode (const WsiZarrLevel * level, const guint8 * src,
    gsize size, guint8 * dst, GError ** error)
{
  switch (level->codec) {
    case WSI_ZARR_RAW:
      if (size != level->chunk_bytes) {
        g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
            "%" G_GSIZE_FORMAT " bytes for a raw chunk of %" G_GSIZE_FORMAT,
            size, level->chunk_bytes);
        return FALSE;
      }
      memcpy (dst, src, size);
      return TRUE;
    case WSI_ZARR_ZLIB:
      return wsi_codec_inflate (src, size, dst, level->chunk_bytes, FALSE,
          error);
    case WSI_ZARR_GZIP:
      return wsi_codec_inflate (src, size, dst, level->chunk_bytes, TRUE,
          error);
    case WSI_ZARR_ZSTD:
      return wsi_codec_zstd (src, size, dst, level->chunk_bytes, error);
    case WSI_ZARR_BLOSC:
#ifdef WSI_HAVE_BLOSC
    {
      size_t nbytes = 0, cbytes = 0, blocksize = 0;
      int got;
      if (size < 16) {
        g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
            "blosc chunk of %" G_GSIZE_FORMAT " bytes is cut short", size);
        return FALSE;
      }
      blosc_cbuffer_sizes (src, &nbytes, &cbytes, &blocksize);
      if (nbytes != level->chunk_bytes || cbytes > size) {
        g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
            "blosc chunk says %" G_GSIZE_FORMAT " bytes from %"
            G_GSIZE_FORMAT " (want %" G_GSIZE_FORMAT " from %" G_GSIZE_FORMAT
            ")", (gsize) nbytes, (gsize) cbytes, level->chunk_bytes, size);
        return FALSE;
      }
      got = blosc_decompress_ctx (src, dst, level->chunk_bytes, 1);
      if (got < 0 || (gsize) got != level->chunk_bytes) {
        g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
            "blosc data is damaged (%d)", got);
        return FALSE;
      }
      return TRUE;
    }
#endif
    default:
      g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
          "this build cannot decode the chunk's codec");
      return FALSE;
  }
}

guint8 *
wsi_zarr_object_read (const gchar * location, gsize limit, gsize * size,
    GError ** error)
{
  return read_object (location, limit, size, error);
}

/* The chunk's key ("c/0/1/2", "0.1.2") in @key. */
static void
chunk_key (GString * key, const WsiZarrLevel * level, gint64 cy, gint64 cx,
    const WsiZarrImage * image)
{
  guint d;

  g_string_truncate (key, 0);
  if (level->key_c)
    g_string_append_c (key, 'c');
  for (d = 0; d < level->ndim; d++) {
    gint64 index = (gint) d == image->axis_y ? cy
        : (gint) d == image->axis_x ? cx : 0;
    if (level->sharded)
      index /= level->shard_chunks[d];
    if (d > 0 || level->key_c)
      g_string_append_c (key, level->separator);
    g_string_append_printf (key, "%" G_GINT64_FORMAT, index);
  }
}

gchar *
wsi_zarr_chunk_location (const WsiZarrLevel * level, gint64 cy, gint64 cx,
    const WsiZarrImage * image)
{
  GString *key = g_string_new (NULL);
  gchar *location;

  chunk_key (key, level, cy, cx, image);
  location = join (level->path, key->str);
  g_string_free (key, TRUE);
  return location;
}

gsize
wsi_zarr_chunk_limit (const WsiZarrLevel * level)
{
  /* a compressed chunk larger than twice its samples is not a chunk */
  return level->chunk_bytes * 2 + (1 << 20);
}

/* Castagnoli CRC-32 (Zarr v3's crc32c codec), bitwise: a shard index is
 * 16 bytes per inner chunk, so a table buys nothing. */
static guint32
crc32c (const guint8 * p, gsize n)
{
  guint32 crc = 0xffffffffu;
  gsize i;
  gint k;

  for (i = 0; i < n; i++) {
    crc ^= p[i];
    for (k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
  }
  return ~crc;
}

static guint64
le64 (const guint8 * p)
{
  guint64 v = 0;
  gint k;

  for (k = 7; k >= 0; k--)
    v = (v << 8) | p[k];
  return v;
}

/* Inner chunk (@cy, @cx) of a shard object: the shard's index (one ranged
 * read), then the inner chunk's range (a second one); an absent shard or an
 * empty entry (both 2^64-1) is the fill value. */
static gboolean
shard_chunk_read (const WsiZarrLevel * level, gint64 cy, gint64 cx,
    const WsiZarrImage * image, const gchar * key, guint8 * dst,
    GError ** error)
{
  gchar *location = join (level->path, key);
  GError *local = NULL;
  WsiByteSource *source = wsi_byte_source_open (location, &local);
  gsize index_bytes = level->shard_n * 16 + (level->index_crc32c ? 4 : 0);
  guint8 *index = NULL, *bytes = NULL;
  guint64 size, offset, nbytes, entry = 0;
  gboolean ok = FALSE;
  guint d;

  g_free (location);
  if (source == NULL) {
    if (g_error_matches (local, WSI_BYTE_SOURCE_ERROR,
            WSI_BYTE_SOURCE_ERROR_NOT_FOUND)) {
      /* Zarr: a shard never written holds the fill value. */
      memset (dst, level->fill, level->chunk_bytes);
      g_error_free (local);
      return TRUE;
    }
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ, "shard %s: %s",
        key, local->message);
    g_error_free (local);
    return FALSE;
  }
  size = wsi_byte_source_get_size (source);
  if (size < index_bytes) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ, "shard %s: "
        "%" G_GUINT64_FORMAT " bytes, shorter than its index (%"
        G_GSIZE_FORMAT " bytes): truncated", key, size, index_bytes);
    goto out;
  }
  index = g_malloc (index_bytes);
  if (!wsi_byte_source_read (source, level->index_at_start ? 0
          : size - index_bytes, index_bytes, index, &local)) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ, "shard %s: "
        "index: %s", key, local->message);
    g_error_free (local);
    goto out;
  }
  if (level->index_crc32c) {
    const guint8 *c = index + level->shard_n * 16;
    guint32 want = c[0] | c[1] << 8 | c[2] << 16 | (guint32) c[3] << 24;
    if (crc32c (index, level->shard_n * 16) != want) {
      g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ, "shard %s: "
          "the index's crc32c does not match: damaged", key);
      goto out;
    }
  }
  /* the inner chunk's entry: C order over the shard's inner grid */
  for (d = 0; d < level->ndim; d++) {
    gint64 i = (gint) d == image->axis_y ? cy
        : (gint) d == image->axis_x ? cx : 0;
    entry = entry * level->shard_chunks[d] + i % level->shard_chunks[d];
  }
  offset = le64 (index + entry * 16);
  nbytes = le64 (index + entry * 16 + 8);
  if (offset == G_MAXUINT64 && nbytes == G_MAXUINT64) {
    memset (dst, level->fill, level->chunk_bytes);
    ok = TRUE;
    goto out;
  }
  if (offset > size || nbytes > size - offset
      || nbytes > wsi_zarr_chunk_limit (level)) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ, "shard %s: "
        "inner chunk %" G_GUINT64_FORMAT " at offset %" G_GUINT64_FORMAT
        ", %" G_GUINT64_FORMAT " bytes, lies past the end of the shard's %"
        G_GUINT64_FORMAT " bytes", key, entry, offset, nbytes, size);
    goto out;
  }
  bytes = g_try_malloc (MAX (nbytes, 1));
  if (bytes == NULL || !wsi_byte_source_read (source, offset, nbytes, bytes,
          &local)) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ, "shard %s: "
        "inner chunk %" G_GUINT64_FORMAT ": %s", key, entry,
        local ? local->message : "out of memory");
    g_clear_error (&local);
    goto out;
  }
  ok = wsi_zarr_chunk_decode (level, bytes, nbytes, dst, error);
  if (!ok)
    g_prefix_error (error, "shard %s: inner chunk %" G_GUINT64_FORMAT ": ",
        key, entry);
out:
  g_free (bytes);
  g_free (index);
  wsi_byte_source_unref (source);
  return ok;
}

gboolean
wsi_zarr_chunk_read (const WsiZarrLevel * level, gint64 cy, gint64 cx,
    const WsiZarrImage * image, WsiZarrFetch * fetch, guint8 * dst,
    GError ** error)
{
  GString *key = g_string_new (NULL);
  GError *local = NULL;
  gchar *location;
  guint8 *bytes;
  gsize size = 0;
  gboolean ok;

  chunk_key (key, level, cy, cx, image);
  if (level->sharded) {
    /* inner chunks are ranges of a shard: read through the byte source's
     * ranged reads, not the whole-object fetch-ahead */
    ok = shard_chunk_read (level, cy, cx, image, key->str, dst, error);
    g_string_free (key, TRUE);
    return ok;
  }
  location = join (level->path, key->str);
  bytes = fetch != NULL ? wsi_zarr_fetch_get (fetch, location,
      wsi_zarr_chunk_limit (level), &size, &local)
      : read_object (location, wsi_zarr_chunk_limit (level), &size, &local);
  if (bytes == NULL) {
    if (g_error_matches (local, WSI_BYTE_SOURCE_ERROR,
            WSI_BYTE_SOURCE_ERROR_NOT_FOUND)) {
      /* Zarr: a chunk never written holds the fill value. */
      memset (dst, level->fill, level->chunk_bytes);
      ok = TRUE;
    } else {
      g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
          "chunk %s: %s", key->str, local->message);
      ok = FALSE;
    }
    g_clear_error (&local);
  } else {
    ok = wsi_zarr_chunk_decode (level, bytes, size, dst, error);
    if (!ok)
      g_prefix_error (error, "chunk %s: ", key->str);
  }
  g_free (bytes);
  g_free (location);
  g_string_free (key, TRUE);
  return ok;
}
