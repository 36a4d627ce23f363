/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsitiffindex.c: a TIFF pyramid as bytes and back (see wsitiffindex.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "wsitiffindex.h"
#include "wsislide.h"
#include "wsitiffcodec.h"

/* vendor, mpp source, mpp x, mpp y, levels: directory, width, height, tile
 * width, tile height, tile offsets, tile byte counts, JPEGTables, RGB */
#define PYRAMID_TYPE "(ssdda(uuuuuatataybqq))"
#define LEVEL_TYPE "(uuuuuatataybqq)"
/* A JPEGTables stream holds at most 4 quantization and 8 Huffman tables:
 * a few KiB. */
#define MAX_JPEG_TABLES (64 << 10)

static GVariant *
level_to_variant (const WsiTiffLevel * level)
{
  gsize n = (gsize) level->tiles_across * level->tiles_down;

  return g_variant_new ("(uuuuu@at@at@aybqq)", level->directory, level->width,
      level->height, level->tile_width, level->tile_height,
      g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64, level->tile_offsets,
          n, sizeof (guint64)),
      g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64,
          level->tile_byte_counts, n, sizeof (guint64)),
      g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, level->jpeg_tables,
          level->jpeg_tables_size, 1), level->rgb, level->compression,
      level->predictor);
}

GBytes *
wsi_tiff_index_to_bytes (const WsiTiffPyramid * pyramid)
{
  GVariantBuilder levels;
  GVariant *v;
  GBytes *bytes;
  guint i;

  g_variant_builder_init (&levels, G_VARIANT_TYPE ("a" LEVEL_TYPE));
  for (i = 0; i < pyramid->n_levels; i++)
    g_variant_builder_add_value (&levels,
        level_to_variant (&pyramid->levels[i]));
  v = g_variant_ref_sink (g_variant_new (PYRAMID_TYPE, pyramid->vendor,
          pyramid->mpp_source, pyramid->mpp_x, pyramid->mpp_y, &levels));
  bytes = g_variant_get_data_as_bytes (v);
  g_variant_unref (v);
  return bytes;
}

/* The static string equal to @s among @known, or NULL. */
static const gchar *
known_string (const gchar * s, const gchar * const *known)
{
  for (; *known != NULL; known++)
    if (strcmp (s, *known) == 0)
      return *known;
  return NULL;
}

/* A copy of an "at" of exactly @n elements, or NULL. */
static guint64 *
u64_array (GVariant * v, gsize n)
{
  gsize got = 0;
  const guint64 *data = g_variant_get_fixed_array (v, &got, sizeof (guint64));

  return got == n ? g_memdup2 (data, n * sizeof (guint64)) : NULL;
}

/* The walk's checks (wsitiffdir.c level_check_geometry and the reads'
 * tile bounds) on one level read from the cache. */
static gboolean
level_from_variant (GVariant * v, guint64 object_size, gboolean aperio,
    WsiTiffLevel * level, gchar ** why)
{
  GVariant *offsets, *counts, *tables;
  guint64 limit, i, n;
  gsize tables_size = 0;
  const guint8 *tables_data;

  memset (level, 0, sizeof (*level));
  g_variant_get (v, "(uuuuu@at@at@aybqq)", &level->directory, &level->width,
      &level->height, &level->tile_width, &level->tile_height, &offsets,
      &counts, &tables, &level->rgb, &level->compression, &level->predictor);
  tables_data = g_variant_get_fixed_array (tables, &tables_size, 1);
  if (level->directory >= WSI_TIFF_MAX_DIRECTORIES || level->width == 0
      || level->height == 0 || level->width > WSI_TIFF_MAX_IMAGE_SIDE
      || level->height > WSI_TIFF_MAX_IMAGE_SIDE || level->tile_width == 0
      || level->tile_height == 0 || level->tile_width % 8 != 0
      || level->tile_height % 8 != 0
      || level->tile_width > WSI_TIFF_MAX_TILE_SIDE
      || level->tile_height > WSI_TIFF_MAX_TILE_SIDE
      || tables_size > MAX_JPEG_TABLES
      || (level->compression != WSI_TIFF_COMPRESSION_JPEG
          && !wsi_tiff_codec_supported (level->compression))
      || (level->predictor != 1 && level->predictor != 2)) {
    *why = g_strdup_printf ("directory %u: geometry out of bounds",
        level->directory);
    goto fail;
  }
  level->tiles_across = level->width / level->tile_width
      + (level->width % level->tile_width != 0);
  level->tiles_down = level->height / level->tile_height
      + (level->height % level->tile_height != 0);
  n = (guint64) level->tiles_across * level->tiles_down;
  level->tile_offsets = u64_array (offsets, n);
  level->tile_byte_counts = u64_array (counts, n);
  if (level->tile_offsets == NULL || level->tile_byte_counts == NULL) {
    *why = g_strdup_printf ("directory %u: tile tables are not %"
        G_GUINT64_FORMAT " long", level->directory, n);
    goto fail;
  }
  limit = (guint64) level->tile_width * level->tile_height * 4 * 8 + (1 << 20);
  for (i = 0; i < n; i++) {
    guint64 offset = level->tile_offsets[i], count =
        level->tile_byte_counts[i];
    if (offset > object_size || count > object_size - offset || count > limit
        || (aperio && count == 0)) {
      *why = g_strdup_printf ("directory %u tile %" G_GUINT64_FORMAT ": %"
          G_GUINT64_FORMAT " bytes at %" G_GUINT64_FORMAT " in a %"
          G_GUINT64_FORMAT "-byte object", level->directory, i, count,
          offset, object_size);
      goto fail;
    }
  }
  if (tables_size > 0) {
    level->jpeg_tables = g_memdup2 (tables_data, tables_size);
    level->jpeg_tables_size = tables_size;
  }
  g_variant_unref (offsets);
  g_variant_unref (counts);
  g_variant_unref (tables);
  return TRUE;

fail:
  g_free (level->tile_offsets);
  g_free (level->tile_byte_counts);
  memset (level, 0, sizeof (*level));
  g_variant_unref (offsets);
  g_variant_unref (counts);
  g_variant_unref (tables);
  return FALSE;
}

static gboolean
levels_from_variant (GVariant * levels, guint64 object_size,
    WsiTiffPyramid * pyramid, gchar ** why)
{
  gsize i, n = g_variant_n_children (levels);
  gboolean aperio = strcmp (pyramid->vendor, "aperio") == 0;

  if (n == 0 || n > WSI_TIFF_MAX_DIRECTORIES) {
    *why = g_strdup_printf ("%" G_GSIZE_FORMAT " levels", n);
    return FALSE;
  }
  pyramid->levels = g_new0 (WsiTiffLevel, n);
  for (i = 0; i < n; i++) {
    GVariant *level = g_variant_get_child_value (levels, i);
    gboolean ok = level_from_variant (level, object_size, aperio,
        &pyramid->levels[i], why);
    g_variant_unref (level);
    if (!ok)
      return FALSE;
    pyramid->n_levels = i + 1;
    if (i > 0 && (pyramid->levels[i].width >= pyramid->levels[i - 1].width
            || pyramid->levels[i].height > pyramid->levels[i - 1].height)) {
      *why = g_strdup_printf ("level %" G_GSIZE_FORMAT " is not smaller than "
          "the one before", i);
      return FALSE;
    }
  }
  return TRUE;
}

gboolean
wsi_tiff_index_from_bytes (GBytes * bytes, guint64 object_size,
    WsiTiffPyramid * pyramid, gchar ** why)
{
  static const gchar *const vendors[] = { "aperio", "generic-tiff", "ome-tiff",
    NULL
  };
  static const gchar *const mpp_sources[] = {
    WSI_MPP_SOURCE_BACKEND, WSI_MPP_SOURCE_APERIO, WSI_MPP_SOURCE_TIFF,
    WSI_MPP_SOURCE_DICOM, WSI_MPP_SOURCE_OME, WSI_MPP_SOURCE_UNKNOWN, NULL
  };
  GVariant *v = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE
          (PYRAMID_TYPE), bytes, FALSE));
  const gchar *vendor = NULL, *mpp_source = NULL;
  GVariant *levels = NULL;
  gboolean ok = FALSE;

  memset (pyramid, 0, sizeof (*pyramid));
  if (!g_variant_is_normal_form (v)) {
    *why = g_strdup ("not a pyramid index");
    g_variant_unref (v);
    return FALSE;
  }
  g_variant_get (v, "(&s&sdd@a" LEVEL_TYPE ")", &vendor, &mpp_source,
      &pyramid->mpp_x, &pyramid->mpp_y, &levels);
  pyramid->vendor = known_string (vendor, vendors);
  pyramid->mpp_source = known_string (mpp_source, mpp_sources);
  if (pyramid->vendor == NULL || pyramid->mpp_source == NULL)
    *why = g_strdup ("unknown vendor or mpp source");
  else if (!isfinite (pyramid->mpp_x) || !isfinite (pyramid->mpp_y)
      || pyramid->mpp_x < 0 || pyramid->mpp_y < 0)
    *why = g_strdup ("mpp out of range");
  else
    ok = levels_from_variant (levels, object_size, pyramid, why);
  g_variant_unref (levels);
  g_variant_unref (v);
  if (!ok)
    wsi_tiff_pyramid_clear (pyramid);
  return ok;
}
