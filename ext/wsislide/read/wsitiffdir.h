/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitiffdir.h: what a JPEG-tiled TIFF pyramid holds, read once with
 * libtiff, for the direct TIFF backend (wsislide-tiff.c).
 *
 * Contract: wsi_tiff_pyramid_read() walks every directory of a byte source
 * and either describes the pyramid exactly as OpenSlide 3.4.1 would see it
 * (same levels in the same order, same vendor, the Aperio MPP) or declines
 * it with WSI_SLIDE_ERROR_UNSUPPORTED and a short reason: another vendor's
 * layout that OpenSlide reads its own way, a level that is not plain 8-bit
 * 3-sample JPEG (OpenSlide would decode it through libtiff's RGBA path, which
 * this backend does not reproduce), implausible geometry.
 *
 * Pyramids OpenSlide does not read as pyramids are taken on their own
 * terms: an OME-TIFF (OME-XML ImageDescription; vendor "ome-tiff", mpp from
 * the first Pixels element's PhysicalSizeX/Y and their units) or any TIFF
 * whose first image has SubIFDs. Their levels are the first image, its
 * SubIFDs, and the reduced-resolution images that follow it in the main
 * chain; their tiles may also be LZW, deflate, PackBits, zstd or
 * uncompressed 8-bit RGB (wsitiffcodec.h). Pixel data this backend cannot
 * deliver as RGB (separate planes, more or fewer than 3 samples, other than
 * 8 bits, a codec it lacks) is refused (WSI_SLIDE_ERROR_REFUSED, naming the
 * file, directory and reason); a SubIFD list that points back at a
 * directory already read is refused as a loop. Everything a read
 * needs afterwards (tile offsets and byte counts, JPEGTables, photometric)
 * is copied out, so the libtiff handle is closed before the function
 * returns: reads never touch libtiff (a TIFF handle is not thread-safe).
 *
 * Cost: one pass over the directories; the tile tables are 16 bytes per
 * tile (2.4 MB for a 100k x 100k level of 256-pixel tiles). Threading: the
 * result is immutable and may be shared by any number of readers.
 */

#ifndef __WSI_TIFF_DIR_H__
#define __WSI_TIFF_DIR_H__

#include <glib.h>
#include "wsibytesource.h"

G_BEGIN_DECLS

/* Largest tile side accepted: 8192^2 ARGB is 256 MB, beyond any scanner. */
#define WSI_TIFF_MAX_TILE_SIDE 8192
/* Level sides stay below 2^31 so that every pixel coordinate fits a gint. */
#define WSI_TIFF_MAX_IMAGE_SIDE G_MAXINT32
/* Directories walked at most (libtiff itself stops IFD loops). */
#define WSI_TIFF_MAX_DIRECTORIES 1024

/* One pyramid level: a tiled TIFF directory. */
typedef struct
{
  guint directory;              /* TIFF directory index */
  guint32 width, height;        /* pixels */
  guint32 tile_width, tile_height;
  guint32 tiles_across, tiles_down;
  guint64 *tile_offsets;        /* tiles_across * tiles_down, row-major */
  guint64 *tile_byte_counts;
  guint8 *jpeg_tables;          /* abbreviated tables stream, or NULL */
  gsize jpeg_tables_size;
  gboolean rgb;                 /* photometric RGB (else YCbCr) */
  /* WSI_TIFF_COMPRESSION_* (wsitiffcodec.h): JPEG, or a lossless codec of
   * an OME-TIFF or SubIFD pyramid; predictor 1 or 2 (lossless only). */
  guint16 compression;
  guint16 predictor;
} WsiTiffLevel;

typedef struct
{
  WsiTiffLevel *levels;         /* widest first */
  guint n_levels;
  /* "aperio", "generic-tiff" or "ome-tiff" (static) */
  const gchar *vendor;
  gdouble mpp_x, mpp_y;         /* 0 = unknown */
  const gchar *mpp_source;      /* WSI_MPP_SOURCE_* */
  gdouble objective_power;      /* Aperio's AppMag, 0 = unknown */
} WsiTiffPyramid;

/* Reads the pyramid of the TIFF in @source (libtiff reads through it;
 * errors name its display URI). A failed source read fails the whole walk
 * (never a pyramid with levels missing). On failure @pyramid is left empty. */
gboolean wsi_tiff_pyramid_read (WsiTiffPyramid * pyramid,
    WsiByteSource * source, GError ** error);

void wsi_tiff_pyramid_clear (WsiTiffPyramid * pyramid);

/* For readers that trust a TIFF's tile grid blindly (OpenSlide 3.4.1 divides
 * by tile sizes and allocates what TileByteCounts says: a hostile file
 * crashes the process): FALSE with an error when a tiled directory has tile
 * sides that are not non-zero multiples of 16 or tiles that claim absurd
 * sizes or lie past the end of the file. TRUE for files that are not TIFF. */
gboolean wsi_tiff_check_tiles (const gchar * path, GError ** error);

G_END_DECLS

#endif /* __WSI_TIFF_DIR_H__ */
