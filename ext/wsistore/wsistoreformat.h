/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistoreformat.h: the on-disk layout of a patch store, version 1 (header
 * only; docs/data-formats.md "Patch store" says the same in prose).
 *
 * Contract: a store is a directory holding shards named
 * "shard-NNNNN.wsis" (5+ digits, from 0, no gaps) and, once the writer
 * finished, "manifest.json" (wsistoremanifest.h). A shard is
 * self-describing, so a store without a manifest (still being written, or
 * interrupted) can be resumed or, on request, served:
 *
 *   WsiShardHeader (64 bytes)
 *   payloads, each starting on a 64-byte boundary (zero padding between)
 *   WsiStoreEntry × n_patches (64-byte aligned)
 *   the slide table: a serialized GVariant "a(sssasas)" (path, uri, label,
 *     column-names, column-values), entries refer to it by index
 *   WsiShardFooter (64 bytes, the last bytes of the file)
 *
 * The footer's crc32 (zlib) covers every byte before the footer; the
 * manifest repeats it. Integers are native byte order (little-endian on
 * every machine we build for); a reader refuses other versions.
 *
 * Cost: nothing (types and constants). Threading: plain data.
 */

#ifndef __WSI_STORE_FORMAT_H__
#define __WSI_STORE_FORMAT_H__

#include <gst/wsi/wsirecord.h>

G_BEGIN_DECLS

/* Version 1: every entry is one patch. Version 2: entries are multi-view
 * locations (patchviews' buffers; WsiStoreEntry.n_views > 0). A reader of
 * version 1 refuses version 2 instead of serving view payloads as pixels;
 * patch stores are still written as version 1. */
#define WSI_STORE_VERSION 1
#define WSI_STORE_VERSION_VIEWS 2
#define WSI_STORE_VERSION_MAX WSI_STORE_VERSION_VIEWS
#define WSI_SHARD_MAGIC "WSISHARD"
#define WSI_SHARD_FOOTER_MAGIC "WSISHEND"
#define WSI_SHARD_ALIGN 64
#define WSI_SHARD_SUFFIX ".wsis"
#define WSI_STORE_MANIFEST "manifest.json"
#define WSI_STORE_TMP_SUFFIX ".tmp"
#define WSI_STORE_SLIDES_TYPE "a(sssasas)"

/* How a patch's pixels are stored. */
typedef enum
{
  WSI_STORE_ENCODING_RAW = 0,   /* uint8 rows, tightly packed, exact */
  WSI_STORE_ENCODING_YUV420 = 1,        /* planar I420 (BT.601 full range) */
  WSI_STORE_ENCODING_JPEG = 2,  /* one baseline JPEG (libjpeg-turbo) */
} WsiStoreEncoding;

/**
 * WsiShardHeader:
 * @magic: "WSISHARD"
 * @version: WSI_STORE_VERSION, or WSI_STORE_VERSION_VIEWS for views
 * @encoding: a #WsiStoreEncoding
 * @video_format: the pixels' video/x-raw format name ("RGB", "RGBA",
 *   "RGBx", "BGRx" or "GRAY8"), NUL-padded
 */
typedef struct
{
  gchar magic[8];
  guint32 version;
  guint32 encoding;
  gchar video_format[16];
  guint32 reserved[8];
} WsiShardHeader;

G_STATIC_ASSERT (sizeof (WsiShardHeader) == 64);

/**
 * WsiStoreEntry:
 * @offset: first byte of the payload in the shard
 * @size: payload bytes
 * @record: the patch record as it reached the writer (unchanged)
 * @slide: index of the patch's slide in the shard's slide table
 * @width: patch width, pixels
 * @height: patch height, pixels
 * @channels: bytes per pixel once decoded (3 for RGB, 4, 1 for GRAY8)
 * @n_views: 0 for a patch; for a multi-view location (version 2) its
 *   number of views: the payload is a #WsiStoreViewsHeader, n_views
 *   #WsiStoreView and each view's payload (encoded like a patch, at the
 *   view's size); @width and @height are then those of view 0
 * @slide_mpp: the level-0 um/px of the patch's slide as the patch meta
 *   carried it (`mpps`, from the slide meta's mpp-x), so a reader hands it
 *   on instead of working it back from the record; 0 when unknown, and in
 *   stores written before the field existed (it was reserved, hence 0)
 *
 * One patch (or location) of a shard, 128 bytes.
 */
typedef struct
{
  guint64 offset;
  guint64 size;
  WsiPatchRecord record;
  guint32 slide;
  guint32 width;
  guint32 height;
  guint32 channels;
  guint32 n_views;
  guint32 reserved0;
  gdouble slide_mpp;
  guint32 reserved[4];
} WsiStoreEntry;

G_STATIC_ASSERT (sizeof (WsiStoreEntry) == 128);
G_STATIC_ASSERT (G_STRUCT_OFFSET (WsiStoreEntry, slide_mpp) == 104);

/* First bytes of a multi-view payload. */
typedef struct
{
  guint32 n_views;              /* = the entry's n_views */
  guint32 reserved[15];
} WsiStoreViewsHeader;

G_STATIC_ASSERT (sizeof (WsiStoreViewsHeader) == 64);

#define WSI_STORE_VIEW_NAME_SIZE 64

/**
 * WsiStoreView:
 * @record: the view's #WsiViewRecord as patchviews made it (out_width x
 *   out_height pixels)
 * @offset: first byte of the view's payload, from the start of the
 *   location's payload
 * @size: bytes of the view's payload
 * @name: the view's name (view-names), NUL-padded
 *
 * One view of a multi-view location, 128 bytes.
 */
typedef struct
{
  WsiViewRecord record;
  guint64 offset;
  guint64 size;
  gchar name[WSI_STORE_VIEW_NAME_SIZE];
} WsiStoreView;

G_STATIC_ASSERT (sizeof (WsiViewRecord) == 48);
G_STATIC_ASSERT (sizeof (WsiStoreView) == 128);

/**
 * WsiShardFooter:
 * @magic: "WSISHEND"
 * @version: WSI_STORE_VERSION
 * @n_patches: entries in the shard
 * @entries_offset: first byte of the entries
 * @slides_offset: first byte of the slide table
 * @slides_size: bytes of the slide table
 * @crc32: zlib crc32 of every byte before the footer
 */
typedef struct
{
  gchar magic[8];
  guint32 version;
  guint32 n_patches;
  guint64 entries_offset;
  guint64 slides_offset;
  guint64 slides_size;
  guint32 crc32;
  guint32 reserved[5];
} WsiShardFooter;

G_STATIC_ASSERT (sizeof (WsiShardFooter) == 64);

/* "shard-00042.wsis" (g_free it). */
static inline gchar *
wsi_shard_file_name (guint index)
{
  return g_strdup_printf ("shard-%05u" WSI_SHARD_SUFFIX, index);
}

static inline const gchar *
wsi_store_encoding_name (WsiStoreEncoding encoding)
{
  switch (encoding) {
    case WSI_STORE_ENCODING_RAW:
      return "raw";
    case WSI_STORE_ENCODING_YUV420:
      return "yuv420";
    case WSI_STORE_ENCODING_JPEG:
      return "jpeg";
  }
  return "unknown";
}

G_END_DECLS

#endif /* __WSI_STORE_FORMAT_H__ */
