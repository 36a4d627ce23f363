/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsislide-tiff.c: the direct TIFF backend ("tiff"): JPEG-tiled TIFF
 * pyramids (Aperio SVS, generic tiled TIFF) read through a WsiByteSource
 * (a local file, or a URL) and libjpeg-turbo, without OpenSlide.
 *
 * Contract: it opens only what it reproduces exactly. wsitiffdir.c takes
 * the levels, downsamples and mpp OpenSlide 3.4.1 would report and declines
 * (WSI_SLIDE_ERROR_UNSUPPORTED, so that `auto` moves on to OpenSlide) every
 * other layout, codec or pixel format; wsijpegdecode.c decodes tiles to the
 * same ARGB words OpenSlide does. So a region read at 1:1 at level 0 gives
 * OpenSlide's pixels; at other levels OpenSlide shifts by the fractional
 * level offset with cairo's bilinear filter and this backend area-averages
 * the same fractional window (wsi_resample_argb): within 2 of 255 (PSNR
 * >= 52 dB measured).
 * Damaged data fails the read (WSI_SLIDE_ERROR_READ naming file, level,
 * tile and reason); the backend keeps no error state, so `sticky` is never
 * set and the next read may succeed.
 *
 * Cost: open reads the TIFF directories once with libtiff (through the
 * byte source) and closes it, keeping the source and per-level tile tables;
 * a remote slide's tables come from the on-disk index cache when it holds
 * them (wsiindexcache.h: no directory reads), and go there after a walk.
 * Reads are those of wsitiledread.h (window, DCT scale, tile cache,
 * prefetch hints); this file fetches and decodes one tile rectangle (rows
 * skipped above, an early stop below, columns cropped where libjpeg-turbo
 * crops exactly), the tile bytes in the read context's scratch slot.
 *
 * Threading: any number of threads may read one slide at once, each with
 * its own WsiReadContext (its JPEG decoder is the context's backend state);
 * the slide itself is immutable after open, and byte-source reads may run
 * from any number of threads.
 */

#include "wsislide.h"
#include "wsitiffdir.h"
#include "wsitiledread.h"
#ifdef WSI_HAVE_CURL
#include "wsiindexcache.h"
#include "wsitiffindex.h"
#endif
#include "wsijpegdecode.h"
#include "wsitiffcodec.h"

#include "wsibytesource.h"

#include <string.h>

/* The read context's scratch slot of a tile's bytes (wsitiledread.h uses
 * WSI_TILED_SCRATCH_REGION). */
#define SCRATCH_TILE_BYTES 0
/* ... and of a lossless tile's decoded samples (slot 1 is the region's). */
#define SCRATCH_TILE_PIXELS 2

/* A tile's compressed size above 8 x its raw RGB size plus this is not
 * JPEG data: refuse to read it rather than allocate. */
#define TILE_BYTES_SLACK (1 << 20)

/* Formats with TIFF structure that OpenSlide reads its own way (some are
 * not TIFF at all): left to OpenSlide without looking inside. */
static const gchar *const foreign_extensions[] = {
  ".ndpi", ".scn", ".bif", ".svslide", ".vms", ".vmu", ".mrxs", NULL
};

typedef struct
{
  WsiTiledSlide head;           /* first: read by wsitiledread.c */
  WsiTiffPyramid pyramid;
  WsiTiledLevel *tiled;         /* pyramid.n_levels, head's levels */
  WsiByteSource *source;
  guint64 file_size;
} TiffSlide;

static gboolean tiff_decode_tile (WsiSlide * slide, WsiReadContext * ctx,
    gint level, gint64 column, gint64 row, guint scale, guint x, guint y,
    guint w, guint h, const WsiTiledTarget * target, GError ** error);
static gboolean tiff_tile_bytes (WsiSlide * slide, gint level, gint64 column,
    gint64 row, WsiByteSource ** source, WsiByteRange * range);

/* ---- detect, open, close ------------------------------------------------ */

static gboolean
has_foreign_extension (const gchar * path)
{
  gchar *lower = g_ascii_strdown (path, -1);
  gboolean foreign = FALSE;
  const gchar *const *ext;

  for (ext = foreign_extensions; *ext != NULL && !foreign; ext++)
    foreign = g_str_has_suffix (lower, *ext);
  g_free (lower);
  return foreign;
}

/* Classic ("II*\0", "MM\0*") or BigTIFF ("II+\0", "MM\0+") magic. */
static gboolean
is_tiff_magic (const guint8 magic[4])
{
  gboolean little = magic[0] == 'I' && magic[1] == 'I' && magic[3] == 0
      && (magic[2] == 42 || magic[2] == 43);
  gboolean big = magic[0] == 'M' && magic[1] == 'M' && magic[2] == 0
      && (magic[3] == 42 || magic[3] == 43);

  return little || big;
}

/* A local file is checked by its magic here; a URL only by its extension
 * (a request per backend tried would double the open's round trips):
 * tiff_open() checks its magic and declines what is not TIFF. */
static gboolean
tiff_detect (const gchar * path)
{
  WsiByteSource *source;
  guint8 magic[4];
  gboolean ok;

  if (has_foreign_extension (path))
    return FALSE;
  if (wsi_location_is_remote (path))
    return TRUE;
  source = wsi_byte_source_open (path, NULL);
  if (source == NULL)
    return FALSE;
  ok = wsi_byte_source_read (source, 0, sizeof (magic), magic, NULL)
      && is_tiff_magic (magic);
  wsi_byte_source_unref (source);
  return ok;
}

static void
tiff_slide_free (TiffSlide * ts)
{
  if (ts == NULL)
    return;
  wsi_tiff_pyramid_clear (&ts->pyramid);
  wsi_tiled_slide_clear (&ts->head);
  g_free (ts->tiled);
  if (ts->source != NULL)
    wsi_byte_source_unref (ts->source);
  g_free (ts);
}

/* The byte source reads use for the slide's lifetime; its size bounds
 * every tile offset. */
static gboolean
tiff_slide_open_source (TiffSlide * ts, const gchar * path, GError ** error)
{
  GError *local = NULL;
  guint8 magic[4];

  ts->source = wsi_byte_source_open (path, &local);
  if (ts->source == NULL) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_OPEN,
        "%s", local->message);
    g_error_free (local);
    return FALSE;
  }
  ts->file_size = wsi_byte_source_get_size (ts->source);
  if (!wsi_byte_source_read (ts->source, 0, sizeof (magic), magic, &local)) {
    /* A file shorter than 4 bytes is no TIFF; a failed read is an error. */
    gboolean short_file = local->code == WSI_BYTE_SOURCE_ERROR_SHORT;
    g_set_error (error, WSI_SLIDE_ERROR, short_file ?
        WSI_SLIDE_ERROR_UNSUPPORTED : WSI_SLIDE_ERROR_OPEN, "%s",
        local->message);
    g_error_free (local);
    return FALSE;
  }
  if (!is_tiff_magic (magic)) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_UNSUPPORTED,
        "%s: not a TIFF file", wsi_byte_source_get_display_uri (ts->source));
    return FALSE;
  }
  return TRUE;
}

/* The levels and mpp wsitiffdir.c found, as OpenSlide 3.4.1 reports them. */
static void
tiff_slide_describe (WsiSlide * slide, const TiffSlide * ts)
{
  const WsiTiffPyramid *pyramid = &ts->pyramid;
  guint i;

  wsi_slide_alloc_levels (slide, pyramid->n_levels);
  for (i = 0; i < pyramid->n_levels; i++) {
    const WsiTiffLevel *level = &pyramid->levels[i];
    wsi_slide_set_level (slide, i, level->width, level->height,
        level->tile_width, level->tile_height);
  }
  wsi_slide_set_origin (slide, pyramid->vendor, pyramid->mpp_x,
      pyramid->mpp_y, pyramid->mpp_source);
  slide->objective_power = pyramid->objective_power;
}

/* The levels as wsitiledread.h reads them: JPEG tiles (DCT scales up to
 * 1/8; tile sides are multiples of 8, so exact at every scale) or lossless
 * ones (no native scale), hinted to the byte source only when it is
 * remote. */
static void
tiff_slide_tile_levels (TiffSlide * ts)
{
  gboolean remote = !wsi_byte_source_is_local (ts->source);
  guint i;

  ts->tiled = g_new0 (WsiTiledLevel, ts->pyramid.n_levels);
  wsi_tiled_slide_init (&ts->head, ts->pyramid.n_levels);
  for (i = 0; i < ts->pyramid.n_levels; i++) {
    const WsiTiffLevel *level = &ts->pyramid.levels[i];
    WsiTiledLevel *tiled = &ts->tiled[i];

    tiled->width = level->width;
    tiled->height = level->height;
    tiled->tile_width = level->tile_width;
    tiled->tile_height = level->tile_height;
    tiled->max_scale = level->compression == WSI_TIFF_COMPRESSION_JPEG ? 8 : 1;
    tiled->decode = tiff_decode_tile;
    tiled->tile_bytes = remote ? tiff_tile_bytes : NULL;
    ts->head.levels[i] = tiled;
  }
}

/* The pyramid of a remote slide from the on-disk index cache (no
 * metadata round trip), validated as the walk would; FALSE: not cached. */
static gboolean
pyramid_from_index_cache (TiffSlide * ts)
{
#ifdef WSI_HAVE_CURL
  GBytes *bytes;
  gchar *why = NULL;
  gboolean ok;

  if (wsi_byte_source_is_local (ts->source))
    return FALSE;
  bytes = wsi_index_cache_lookup (WSI_TIFF_INDEX_KIND, ts->source);
  if (bytes == NULL)
    return FALSE;
  ok = wsi_tiff_index_from_bytes (bytes, ts->file_size, &ts->pyramid, &why);
  if (!ok)
    g_debug ("index cache: the entry of %s is not valid (%s): reading the "
        "TIFF directories", wsi_byte_source_get_display_uri (ts->source), why);
  g_free (why);
  g_bytes_unref (bytes);
  return ok;
#else
  return FALSE;
#endif
}

/* The pyramid: from the index cache, else walked with libtiff (and then
 * cached for the next open of a remote slide). */
static gboolean
tiff_slide_read_pyramid (TiffSlide * ts, GError ** error)
{
  if (pyramid_from_index_cache (ts))
    return TRUE;
  if (!wsi_tiff_pyramid_read (&ts->pyramid, ts->source, error))
    return FALSE;
#ifdef WSI_HAVE_CURL
  if (!wsi_byte_source_is_local (ts->source)) {
    GBytes *bytes = wsi_tiff_index_to_bytes (&ts->pyramid);
    wsi_index_cache_store (WSI_TIFF_INDEX_KIND, ts->source, bytes);
    g_bytes_unref (bytes);
  }
#endif
  return TRUE;
}

static gboolean
tiff_open (WsiSlide * slide, GError ** error)
{
  TiffSlide *ts = g_new0 (TiffSlide, 1);

  if (!tiff_slide_open_source (ts, slide->path, error)
      || !tiff_slide_read_pyramid (ts, error)) {
    tiff_slide_free (ts);
    return FALSE;
  }
  /* wsitiffdir.c checked the levels: nothing below can fail. */
  tiff_slide_describe (slide, ts);
  tiff_slide_tile_levels (ts);
  slide->handle = ts;
  return TRUE;
}

static void
tiff_close (WsiSlide * slide)
{
  tiff_slide_free (slide->handle);
  slide->handle = NULL;
}

/* ---- one tile ---------------------------------------------------------- */

/* The tile's compressed bytes, in the context's scratch, after checking
 * what the file says against the file itself. */
static const guint8 *
tile_load_bytes (WsiSlide * slide, WsiReadContext * ctx, gint li, gint64 col,
    gint64 row, gsize * size, GError ** error)
{
  const TiffSlide *ts = slide->handle;
  const WsiTiffLevel *level = &ts->pyramid.levels[li];
  gsize index = (gsize) row * level->tiles_across + (gsize) col;
  guint64 offset = level->tile_offsets[index];
  guint64 count = level->tile_byte_counts[index];
  guint64 limit = (guint64) level->tile_width * level->tile_height * 3 * 8
      + TILE_BYTES_SLACK;
  guint8 *bytes;
  GError *local = NULL;

  if (count == 0) {
    wsi_tiled_tile_fail (slide, li, col, row, error,
        "missing (zero byte count)");
    return NULL;
  }
  if (count > limit) {
    wsi_tiled_tile_fail (slide, li, col, row, error,
        "byte count %" G_GUINT64_FORMAT " is implausible", count);
    return NULL;
  }
  if (offset > ts->file_size || count > ts->file_size - offset) {
    wsi_tiled_tile_fail (slide, li, col, row, error,
        "bytes %" G_GUINT64_FORMAT " + %" G_GUINT64_FORMAT " lie past the "
        "end of the file (%" G_GUINT64_FORMAT " bytes)", offset, count,
        ts->file_size);
    return NULL;
  }
  bytes = wsi_read_context_scratch (ctx, SCRATCH_TILE_BYTES, count);
  if (bytes == NULL) {
    wsi_tiled_tile_fail (slide, li, col, row, error,
        "out of memory for %" G_GUINT64_FORMAT " bytes", count);
    return NULL;
  }
  if (!wsi_byte_source_read (ts->source, offset, count, bytes, &local)) {
    /* The source's message names it (credential-free) and the reason. */
    wsi_tiled_tile_fail (slide, li, col, row, error,
        "reading %" G_GUINT64_FORMAT " bytes at %" G_GUINT64_FORMAT
        " failed: %s", count, offset, local->message);
    g_error_free (local);
    return NULL;
  }
  *size = count;
  return bytes;
}

/* A lossless tile (OME-TIFF, SubIFD pyramids): decoded whole into the
 * context's scratch (wsitiffcodec.h; no libtiff handle, so any thread),
 * then the rectangle copied out. */
static gboolean
decode_lossless_tile (WsiSlide * slide, WsiReadContext * ctx, gint li,
    gint64 col, gint64 row, guint x, guint y, guint w, guint h,
    const WsiTiledTarget * target, GError ** error)
{
  const TiffSlide *ts = slide->handle;
  const WsiTiffLevel *level = &ts->pyramid.levels[li];
  gsize row_bytes = (gsize) level->tile_width * 3;
  gsize pixels_size = row_bytes * level->tile_height;
  const guint8 *bytes;
  guint8 *pixels;
  gsize size = 0;

  bytes = tile_load_bytes (slide, ctx, li, col, row, &size, error);
  if (bytes == NULL)
    return FALSE;
  pixels = wsi_read_context_scratch (ctx, SCRATCH_TILE_PIXELS, pixels_size);
  if (pixels == NULL)
    return wsi_tiled_tile_fail (slide, li, col, row, error,
        "out of memory for %" G_GSIZE_FORMAT " bytes", pixels_size);
  if (!wsi_tiff_codec_decode (level->compression, level->predictor, bytes,
          size, pixels, pixels_size, row_bytes, 3, error)) {
    g_prefix_error (error, "%s: level %d tile (%" G_GINT64_FORMAT ", %"
        G_GINT64_FORMAT "): ", slide->display, li, col, row);
    return FALSE;
  }
  wsi_tiled_target_put_rgb (target, pixels + (gsize) y * row_bytes
      + (gsize) x * 3, row_bytes, w, h);
  return TRUE;
}

/* WsiTileDecodeFunc: [x, x + w) x [y, y + h) of tile (col, row) at 1/@scale
 * with this thread's JPEG decoder. */
static gboolean
tiff_decode_tile (WsiSlide * slide, WsiReadContext * ctx, gint li,
    gint64 col, gint64 row, guint scale, guint x, guint y, guint w, guint h,
    const WsiTiledTarget * target, GError ** error)
{
  const TiffSlide *ts = slide->handle;
  const WsiTiffLevel *level = &ts->pyramid.levels[li];
  WsiJpegDecoder *decoder =
      wsi_read_context_backend_state (ctx, &wsi_slide_backend_tiff);
  WsiJpegTile tile;

  if (level->compression != WSI_TIFF_COMPRESSION_JPEG)
    return decode_lossless_tile (slide, ctx, li, col, row, x, y, w, h, target,
        error);
  if (decoder == NULL)
    return wsi_tiled_tile_fail (slide, li, col, row, error,
        "out of memory for a JPEG decoder");
  tile.data = tile_load_bytes (slide, ctx, li, col, row, &tile.size, error);
  if (tile.data == NULL)
    return FALSE;
  tile.tables = level->jpeg_tables;
  tile.tables_size = level->jpeg_tables_size;
  tile.rgb = level->rgb;
  tile.width = level->tile_width;
  tile.height = level->tile_height;
  if (!wsi_jpeg_decoder_decode (decoder, &tile, scale, x, y, w, h,
          target->data, target->stride, target->layout, error)) {
    g_prefix_error (error, "%s: level %d tile (%" G_GINT64_FORMAT ", %"
        G_GINT64_FORMAT "): ", slide->display, li, col, row);
    return FALSE;
  }
  return TRUE;
}

/* WsiTileBytesFunc: the tile's bytes in the slide's one source. */
static gboolean
tiff_tile_bytes (WsiSlide * slide, gint li, gint64 col, gint64 row,
    WsiByteSource ** source, WsiByteRange * range)
{
  const TiffSlide *ts = slide->handle;
  const WsiTiffLevel *level = &ts->pyramid.levels[li];
  gsize index = (gsize) row * level->tiles_across + (gsize) col;

  if (level->tile_byte_counts[index] == 0)
    return FALSE;
  *source = ts->source;
  range->offset = level->tile_offsets[index];
  range->length = level->tile_byte_counts[index];
  return TRUE;
}

const WsiSlideBackend wsi_slide_backend_tiff = {
  .name = WSI_BACKEND_TIFF,
  .detect = tiff_detect,
  .open = tiff_open,
  .read_argb = wsi_tiled_backend_read_argb,
  .read = wsi_tiled_backend_read,
  .thread_state_new = wsi_jpeg_decoder_state_new,
  .thread_state_free = wsi_jpeg_decoder_state_free,
  .close = tiff_close,
  .prefetch = wsi_tiled_backend_prefetch,
  .native_scale = wsi_tiled_backend_native_scale,
  .read_argb_scaled = wsi_tiled_backend_read_argb_scaled,
  .read_rgb_scaled = wsi_tiled_backend_read_rgb_scaled,
};
