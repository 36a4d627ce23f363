/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsizarr.c: OME-Zarr (NGFF 0.4, Zarr v2) metadata and chunks (see
 * wsizarr.h). */

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

  if (json_parser_load_from_data (parser, text, size, &local))
    root = json_parser_steal_root (parser);
  else {
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

gboolean
wsi_zarr_image_parse (WsiZarrImage * image, const gchar * display,
    const gchar * zattrs, gsize zattrs_size, GError ** error)
{
  JsonNode *root = parse_json (zattrs, zattrs_size, display, ".zattrs",
      error);
  JsonObject *ms = NULL;
  JsonArray *multiscales, *axes, *datasets;
  gdouble ux = 0.0, uy = 0.0;
  guint i, n;
  gboolean ok = FALSE;

  memset (image, 0, sizeof (*image));
  image->axis_c = image->axis_y = image->axis_x = -1;
  if (root == NULL)
    return FALSE;
  multiscales = member_array (json_node_get_object (root), "multiscales");
  if (multiscales == NULL || json_array_get_length (multiscales) == 0
      || !JSON_NODE_HOLDS_OBJECT (json_array_get_element (multiscales, 0))) {
    refuse (error, display, ".zattrs has no multiscales");
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

gboolean
wsi_zarr_level_parse (WsiZarrLevel * level, const WsiZarrImage * image,
    const gchar * display, guint index, const gchar * zarray,
    gsize zarray_size, GError ** error)
{
  gchar what[64];
  JsonNode *root, *fill, *filters;
  JsonObject *o;
  const gchar *dtype, *order, *sep;
  guint nshape = 0, nchunks = 0, d;
  gsize stride = 1;
  gboolean ok = FALSE;

  g_snprintf (what, sizeof (what), "level %u's .zarray", index);
  root = parse_json (zarray, zarray_size, display, what, error);
  if (root == NULL)
    return FALSE;
  o = json_node_get_object (root);
  if (!json_object_has_member (o, "zarr_format")
      || json_object_get_int_member (o, "zarr_format") != 2) {
    refuse (error, display, "%s: zarr_format is not 2", what);
    goto out;
  }
  if (!int_list (member_array (o, "shape"), level->shape, &nshape)
      || !int_list (member_array (o, "chunks"), level->chunks, &nchunks)
      || nshape != nchunks) {
    refuse (error, display, "%s: shape or chunks missing or invalid", what);
    goto out;
  }
  level->ndim = nshape;
  if ((guint) MAX (image->axis_c, MAX (image->axis_y, image->axis_x))
      >= nshape) {
    refuse (error, display, "%s: %u dimensions for the image's axes", what,
        nshape);
    goto out;
  }
  dtype = member_string (o, "dtype");
  if (dtype == NULL || (strcmp (dtype, "|u1") != 0
          && strcmp (dtype, "<u1") != 0 && strcmp (dtype, ">u1") != 0)) {
    refuse (error, display, "%s: dtype %s (only uint8, |u1, is read)", what,
        dtype ? dtype : "missing");
    goto out;
  }
  order = member_string (o, "order");
  if (order != NULL && strcmp (order, "C") != 0) {
    refuse (error, display, "%s: order %s (only C is read)", what, order);
    goto out;
  }
  filters = json_object_get_member (o, "filters");
  if (filters != NULL && !JSON_NODE_HOLDS_NULL (filters)
      && !(JSON_NODE_HOLDS_ARRAY (filters)
          && json_array_get_length (json_node_get_array (filters)) == 0)) {
    refuse (error, display, "%s: filters are not read", what);
    goto out;
  }
  sep = member_string (o, "dimension_separator");
  level->separator = sep != NULL && strcmp (sep, "/") == 0 ? '/' : '.';
  fill = json_object_get_member (o, "fill_value");
  level->fill = fill && is_number (fill) ? (guint8) CLAMP (json_node_get_int
      (fill), 0, 255) : 0;
  if (!parse_compressor (level, o, display, index, error))
    goto out;
  for (d = 0; d < nshape; d++) {
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
  for (d = nshape; d-- > 0;) {
    if ((gint) d == image->axis_c)
      level->stride_c = stride;
    if ((gint) d == image->axis_y)
      level->stride_y = stride;
    if ((gint) d == image->axis_x)
      level->stride_x = stride;
    if (level->chunks[d] > (gint64) (MAX_CHUNK_BYTES / stride)) {
      refuse (error, display, "%s: chunks larger than %" G_GSIZE_FORMAT
          " bytes", what, MAX_CHUNK_BYTES);
      goto out;
    }
    stride *= level->chunks[d];
  }
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
  GError *local = NULL;
  gsize size = 0;
  guint i;

  /* bioformats2raw's layout: the image is the group "0" below the root. */
  for (i = 0; i < 2; i++) {
    name = join (base, ".zattrs");
    text = read_text (name, &size, &local);
    g_free (name);
    if (text == NULL) {
      refuse (error, display, ".zattrs: %s", local->message);
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
    name = join (level->path, ".zarray");
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

gboolean
wsi_zarr_chunk_read (const WsiZarrLevel * level, gint64 cy, gint64 cx,
    const WsiZarrImage * image, guint8 * dst, GError ** error)
{
  GString *key = g_string_new (NULL);
  GError *local = NULL;
  gchar *location;
  guint8 *bytes;
  gsize size = 0;
  guint d;
  gboolean ok;

  for (d = 0; d < level->ndim; d++) {
    gint64 index = (gint) d == image->axis_y ? cy
        : (gint) d == image->axis_x ? cx : 0;
    if (d > 0)
      g_string_append_c (key, level->separator);
    g_string_append_printf (key, "%" G_GINT64_FORMAT, index);
  }
  location = join (level->path, key->str);
  bytes = read_object (location, level->chunk_bytes * 2 + (1 << 20), &size,
      &local);
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
