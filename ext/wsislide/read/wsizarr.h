/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsizarr.h: what an OME-Zarr image (NGFF 0.4 multiscales on Zarr v2, NGFF
 * 0.5 on Zarr v3) holds, and its chunks decoded, for the zarr backend
 * (wsislide-zarr.c).
 *
 * Contract: wsi_zarr_image_read() reads the store's `.zattrs` (Zarr v2) or
 * `zarr.json` (Zarr v3: `attributes.ome.multiscales`) (the image's own, or
 * bioformats2raw's layout group "0/") and each level's `.zarray` or
 * `zarr.json` through byte sources (a folder, or an http(s)://, s3://, gs:// prefix:
 * each object opened by its own name), and either describes an RGB pyramid
 * or fails with WSI_SLIDE_ERROR_REFUSED naming the store and the reason:
 * bad JSON, a level missing, a dtype other than uint8, not three channels
 * (fluorescence and multiplex stores), channels split across chunks, an
 * axis other than c, y, x of a size other than 1, filters, a compressor
 * this build lacks; in Zarr v3 also a data_type other than uint8, more
 * than one bytes-to-bytes codec, storage transformers, sharding beside
 * other codecs or nested, a shard index codec other than bytes (little
 * endian) and crc32c. Zarr v3 `sharding_indexed` alone is read: the
 * level's chunks are the inner chunks. Layouts: any order of (c, y, x) with t and
 * z of size 1 (so (c, y, x), (y, x, c) and (t, c, z, y, x)); chunks in C
 * order, Zarr v2's F order, or any Zarr v3 `transpose` of them. Chunk keys:
 * Zarr v2's ("0.0.0" or "0/0/0") and Zarr v3's `default` ("c/0/0/0", or
 * with '.') and `v2` encodings.
 * wsi_zarr_chunk_read() fetches one chunk (a whole object; coalescing
 * nothing) and decodes it (raw, zlib, gzip, zstd, blosc with lz4 / zstd /
 * blosclz / zlib; Zarr v3's `bytes` + `gzip` / `zstd` / `blosc`) into the
 * caller's memory; a chunk that does not exist is
 * the array's fill value, as Zarr defines; a damaged one fails with the
 * reason. An inner chunk of a shard is two ranged reads of the shard
 * object (its index, verified by crc32c when the store has one, then the
 * chunk's range), never the whole shard nor the fetch-ahead; an absent
 * shard or empty index entry is the fill value, an entry past the shard's
 * end or an index longer than the shard fails naming the shard.
 *
 * Cost: open reads 1 + levels small objects; a chunk read is one object
 * fetch and one decode (sharded: an open and two ranged reads). Threading: a WsiZarrImage is immutable after open;
 * chunk reads may run from any number of threads.
 */

#ifndef __WSI_ZARR_H__
#define __WSI_ZARR_H__

#include <glib.h>

#include "wsizarrfetch.h"

G_BEGIN_DECLS

#define WSI_ZARR_MAX_DIMS 5

typedef enum
{
  WSI_ZARR_RAW,
  WSI_ZARR_ZLIB,
  WSI_ZARR_GZIP,
  WSI_ZARR_ZSTD,
  WSI_ZARR_BLOSC,
} WsiZarrCodec;

typedef struct
{
  gchar *dataset;               /* the dataset's path in the image group */
  gchar *path;                  /* the level's location (store + dataset) */
  guint ndim;
  gint64 shape[WSI_ZARR_MAX_DIMS];
  gint64 chunks[WSI_ZARR_MAX_DIMS];
  gint64 n_chunks[WSI_ZARR_MAX_DIMS];
  gchar separator;              /* '.' or '/' between chunk indices */
  gboolean key_c;               /* Zarr v3 default keys: "c" first */
  WsiZarrCodec codec;
  guint8 fill;                  /* the fill value of absent chunks */
  gsize chunk_bytes;            /* decoded chunk size */
  /* strides (bytes) of the channel, y and x axes in a decoded chunk */
  gsize stride_c, stride_y, stride_x;
  gint64 width, height, chunk_width, chunk_height;
  /* Zarr v3 sharding_indexed: chunks are the inner chunks, shard_chunks
   * of them per shard along each dimension (shard_n in all) */
  gboolean sharded, index_at_start, index_crc32c;
  gint64 shard_chunks[WSI_ZARR_MAX_DIMS];
  gint64 shard_n;
} WsiZarrLevel;

typedef struct
{
  WsiZarrLevel *levels;         /* widest first */
  guint n_levels;
  gint axis_c, axis_y, axis_x;  /* their index among the dimensions */
  guint zarr_format;            /* 2 or 3 */
  gdouble mpp_x, mpp_y;         /* 0: unknown */
} WsiZarrImage;

/* TRUE when @location names an OME-Zarr store: a local folder holding
 * `.zattrs` (or `zarr.json`), or a URL whose name ends in `.zarr`. */
gboolean wsi_zarr_is_store (const gchar * location);

/* @display names the store in messages. */
gboolean wsi_zarr_image_read (WsiZarrImage * image, const gchar * location,
    const gchar * display, GError ** error);
void wsi_zarr_image_clear (WsiZarrImage * image);

/* Parses @zattrs (a Zarr v2 `.zattrs` or a Zarr v3 group's `zarr.json`)
 * into @image, and a level's @zarray (`.zarray` or an array's `zarr.json`,
 * of the same format as the image's) into @level: the part of the open that
 * needs no I/O (the fuzz target's entry). */
gboolean wsi_zarr_image_parse (WsiZarrImage * image, const gchar * display,
    const gchar * zattrs, gsize zattrs_size, GError ** error);
gboolean wsi_zarr_level_parse (WsiZarrLevel * level, const WsiZarrImage *
    image, const gchar * display, guint index, const gchar * zarray,
    gsize zarray_size, GError ** error);

/* Decodes chunk bytes @src of @level into @dst (level->chunk_bytes). */
gboolean wsi_zarr_chunk_decode (const WsiZarrLevel * level,
    const guint8 * src, gsize size, guint8 * dst, GError ** error);

/* Fetches and decodes chunk (@cy, @cx) of @level (other axes 0) into @dst
 * (level->chunk_bytes): the bytes @fetch holds or has in flight when it
 * was hinted (NULL: none), else one whole-object read. */
gboolean wsi_zarr_chunk_read (const WsiZarrLevel * level, gint64 cy,
    gint64 cx, const WsiZarrImage * image, WsiZarrFetch * fetch,
    guint8 * dst, GError ** error);

/* The location of chunk (@cy, @cx) of @level (for wsi_zarr_fetch_hint),
 * and the largest object accepted as one of its chunks. */
gchar *wsi_zarr_chunk_location (const WsiZarrLevel * level, gint64 cy,
    gint64 cx, const WsiZarrImage * image);
gsize wsi_zarr_chunk_limit (const WsiZarrLevel * level);

/* One whole object of the store (a WsiZarrObjectReadFunc). */
guint8 *wsi_zarr_object_read (const gchar * location, gsize limit,
    gsize * size, GError ** error);

G_END_DECLS

#endif /* __WSI_ZARR_H__ */
