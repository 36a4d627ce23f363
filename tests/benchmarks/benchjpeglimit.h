/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * benchjpeglimit: the decoding limit of a JPEG-tiled TIFF slide, shared by
 * the benchmarks that compare a reader with it (bench-backends,
 * bench-decode-floor).
 *
 * Contract: bench_jpeg_levels_read() matches every level of an opened slide
 * to a tiled 8-bit 3-sample JPEG directory of the same size and copies its
 * tile offsets, byte counts and JPEGTables out (libtiff, once, before any
 * clock starts). A BenchJpegDecoder then decodes one whole tile with
 * libjpeg-turbo at DCT scale 1/s (s = 1, 2, 4, 8) into its own BGRA buffer
 * and does nothing else: no crop, no compositing, no resampling, no copy
 * out. That is the work any whole-tile JPEG reader must do, so a reader's
 * speed over it says how much of the decoding budget the reader's own work
 * costs.
 *
 * Cost: one jpeg_decompress_struct and one tile-sized buffer per decoder;
 * the tables of a level are parsed again only when the level changes.
 * Threading: levels are read-only once read and may be shared; a decoder
 * belongs to one thread.
 */

#ifndef __BENCH_JPEG_LIMIT_H__
#define __BENCH_JPEG_LIMIT_H__

#include <glib.h>
#include <stdio.h>
#include <jpeglib.h>
#include <setjmp.h>

#include "wsislide.h"

G_BEGIN_DECLS

/* One pyramid level as the limit loop sees it. */
typedef struct
{
  guint32 width, height, tile_w, tile_h, across, down;
  guint64 *offsets, *counts;    /* across * down entries; count 0: missing */
  guint8 *tables;               /* JPEGTables, or NULL */
  gsize tables_size;
  gboolean rgb;                 /* PHOTOMETRIC_RGB: no YCbCr conversion */
} BenchJpegLevel;

typedef struct
{
  struct jpeg_decompress_struct cinfo;
  struct jpeg_error_mgr pub;
  jmp_buf jmp;
  gchar message[JMSG_LENGTH_MAX];       /* the last error */
  const guint8 *tables_loaded;
  guint8 *data;                 /* compressed tile (pread path) */
  gsize data_cap;
  guint8 *pixels;               /* decoded tile, BGRA */
  gsize pixels_cap;
  JSAMPROW *rows;
  guint rows_cap;
} BenchJpegDecoder;

/* info->level_count levels, or NULL with *why set (free with g_free). */
BenchJpegLevel *bench_jpeg_levels_read (const gchar * path,
    const WsiSlide * info, gchar ** why);
void bench_jpeg_levels_free (BenchJpegLevel * levels, gint n);

/* Buffers sized for tiles up to max_tile_w x max_tile_h (they grow if a
 * bigger one comes). */
void bench_jpeg_decoder_init (BenchJpegDecoder * dec, guint max_tile_w,
    guint max_tile_h);
void bench_jpeg_decoder_clear (BenchJpegDecoder * dec);

/* Decodes the tile @data (@n bytes, of level @lv) whole at 1/@scale into
 * dec->pixels; FALSE with dec->message on a decoding error. */
gboolean bench_jpeg_decode (BenchJpegDecoder * dec, const BenchJpegLevel * lv,
    const guint8 * data, gsize n, guint scale);

/* pread()s tile @k of @lv from @fd, then bench_jpeg_decode(); a missing
 * tile (byte count 0) is nothing to do. */
gboolean bench_jpeg_decode_tile (BenchJpegDecoder * dec, int fd,
    const BenchJpegLevel * lv, gsize k, guint scale);

/* User + system CPU seconds of the process so far (the limit loops' CPU
 * figure, steadier than wall time on a shared machine). */
gdouble bench_cpu_seconds (void);

G_END_DECLS

#endif /* __BENCH_JPEG_LIMIT_H__ */
