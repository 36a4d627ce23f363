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
 * byte source) and closes it, keeping the source and per-level tile tables. A read decodes only the
 * tile rectangles the region covers (rows skipped above, an early stop
 * below, columns cropped where libjpeg-turbo crops exactly); with native
 * scaling (whole and near-whole downscales, see pick_scale()) the DCT does
 * 1/2, 1/4 or 1/8 of the work per axis; with a tile cache whole tiles are
 * decoded once and shared between threads and reads. No allocation on the
 * hot path beyond the cache's tiles: tile bytes and the region live in the
 * read context's scratch slots.
 *
 * Threading: any number of threads may read one slide at once, each with
 * its own WsiReadContext (its JPEG decoder is the context's backend state);
 * the slide itself is immutable after open, and byte-source reads may run
 * from any number of threads.
 */

#include "wsislide.h"
#include "wsitilecache.h"
#include "wsitiffdir.h"
#include "wsijpegdecode.h"

#include "wsibytesource.h"

#include <math.h>
#include <string.h>

/* The read context's scratch slots this backend uses. */
#define SCRATCH_TILE_BYTES 0
#define SCRATCH_REGION 1

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
  WsiTiffPyramid pyramid;
  WsiByteSource *source;
  guint64 file_size;
} TiffSlide;

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

/* Levels as OpenSlide computes them: downsample (h0/h + w0/w) / 2. */
static void
tiff_slide_describe (WsiSlide * slide, const TiffSlide * ts)
{
  const WsiTiffPyramid *pyramid = &ts->pyramid;
  gdouble w0 = pyramid->levels[0].width, h0 = pyramid->levels[0].height;
  guint i;

  wsi_slide_alloc_levels (slide, pyramid->n_levels);
  slide->level_count = pyramid->n_levels;
  for (i = 0; i < pyramid->n_levels; i++) {
    const WsiTiffLevel *level = &pyramid->levels[i];
    slide->level_width[i] = level->width;
    slide->level_height[i] = level->height;
    slide->level_downsample[i] = i == 0 ? 1.0 :
        (h0 / (gdouble) level->height + w0 / (gdouble) level->width) / 2.0;
    slide->level_tile_width[i] = level->tile_width;
    slide->level_tile_height[i] = level->tile_height;
  }
  slide->vendor = g_strdup (pyramid->vendor);
  slide->mpp_x = pyramid->mpp_x;
  slide->mpp_y = pyramid->mpp_y;
  slide->mpp_source = pyramid->mpp_source;
}

static gboolean
tiff_open (WsiSlide * slide, GError ** error)
{
  TiffSlide *ts = g_new0 (TiffSlide, 1);

  if (!tiff_slide_open_source (ts, slide->path, error)
      || !wsi_tiff_pyramid_read (&ts->pyramid, ts->source, error)) {
    tiff_slide_free (ts);
    return FALSE;
  }
  /* wsitiffdir.c checked the levels: nothing below can fail. */
  tiff_slide_describe (slide, ts);
  slide->handle = ts;
  return TRUE;
}

static void
tiff_close (WsiSlide * slide)
{
  tiff_slide_free (slide->handle);
  slide->handle = NULL;
}

static gpointer
tiff_thread_state_new (void)
{
  return wsi_jpeg_decoder_new ();
}

static void
tiff_thread_state_free (gpointer state)
{
  wsi_jpeg_decoder_free (state);
}

/* ---- one read of one level at one DCT scale ---------------------------- */

typedef struct
{
  WsiSlide *slide;
  const TiffSlide *ts;
  const WsiTiffLevel *level;
  gint level_index;
  guint scale;                  /* 1, 2, 4, 8 */
  guint tile_w, tile_h;         /* a tile at that scale */
  /* The level at that scale: scaled pixel i is in when i * scale < size. */
  gint64 width, height;
  WsiReadContext *ctx;
  WsiJpegDecoder *decoder;      /* this thread's */
  WsiTileCache *cache;          /* NULL: decode only what a region needs */
  guint tiles_decoded, tiles_from_cache;
} LevelReader;

static gboolean
level_reader_init (LevelReader * lr, WsiSlide * slide, WsiReadContext * ctx,
    gint level, guint scale, WsiTileCache * cache, GError ** error)
{
  const TiffSlide *ts = slide->handle;

  memset (lr, 0, sizeof (*lr));
  lr->slide = slide;
  lr->ts = ts;
  lr->level = &ts->pyramid.levels[level];
  lr->level_index = level;
  lr->scale = scale;
  /* Tile sides are multiples of 8 (wsitiffdir.c): exact at every scale. */
  lr->tile_w = lr->level->tile_width / scale;
  lr->tile_h = lr->level->tile_height / scale;
  lr->width = (lr->level->width + scale - 1) / scale;
  lr->height = (lr->level->height + scale - 1) / scale;
  lr->ctx = ctx;
  if (cache != NULL && wsi_tile_cache_get_max_bytes (cache) > 0)
    lr->cache = cache;
  lr->decoder = wsi_read_context_backend_state (ctx, &wsi_slide_backend_tiff);
  if (lr->decoder == NULL) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "%s: out of memory for a JPEG decoder", slide->display);
    return FALSE;
  }
  return TRUE;
}

static gboolean
tile_fail (const LevelReader * lr, gint64 col, gint64 row, GError ** error,
    const gchar * format, ...)
G_GNUC_PRINTF (5, 6);

/* WSI_SLIDE_ERROR_READ: "<path>: level L tile (col, row): <reason>". */
static gboolean
tile_fail (const LevelReader * lr, gint64 col, gint64 row, GError ** error,
    const gchar * format, ...)
{
  va_list args;
  gchar *reason;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
      "%s: level %d tile (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "): %s",
      lr->slide->display, lr->level_index, col, row, reason);
  g_free (reason);
  return FALSE;
}

/* The tile's compressed bytes, in the context's scratch, after checking
 * what the file says against the file itself. */
static const guint8 *
tile_load_bytes (LevelReader * lr, gint64 col, gint64 row, gsize * size,
    GError ** error)
{
  const WsiTiffLevel *level = lr->level;
  gsize index = (gsize) row * level->tiles_across + (gsize) col;
  guint64 offset = level->tile_offsets[index];
  guint64 count = level->tile_byte_counts[index];
  guint64 limit = (guint64) level->tile_width * level->tile_height * 3 * 8
      + TILE_BYTES_SLACK;
  guint8 *bytes;
  GError *local = NULL;

  if (count == 0) {
    tile_fail (lr, col, row, error, "missing (zero byte count)");
    return NULL;
  }
  if (count > limit) {
    tile_fail (lr, col, row, error, "byte count %" G_GUINT64_FORMAT
        " is implausible", count);
    return NULL;
  }
  if (offset > lr->ts->file_size || count > lr->ts->file_size - offset) {
    tile_fail (lr, col, row, error, "bytes %" G_GUINT64_FORMAT " + %"
        G_GUINT64_FORMAT " lie past the end of the file (%" G_GUINT64_FORMAT
        " bytes)", offset, count, lr->ts->file_size);
    return NULL;
  }
  bytes = wsi_read_context_scratch (lr->ctx, SCRATCH_TILE_BYTES, count);
  if (bytes == NULL) {
    tile_fail (lr, col, row, error, "out of memory for %" G_GUINT64_FORMAT
        " bytes", count);
    return NULL;
  }
  if (!wsi_byte_source_read (lr->ts->source, offset, count, bytes, &local)) {
    /* The source's message names it (credential-free) and the reason. */
    tile_fail (lr, col, row, error, "reading %" G_GUINT64_FORMAT " bytes at %"
        G_GUINT64_FORMAT " failed: %s", count, offset, local->message);
    g_error_free (local);
    return NULL;
  }
  *size = count;
  return bytes;
}

/* Where a fill writes: premultiplied ARGB words for the shared kernels, or
 * the caller's output image in its own pixel format (no intermediate). */
typedef struct
{
  guint8 *data;                 /* the region's top-left */
  gsize stride;                 /* bytes a row */
  gint layout;                  /* WSI_JPEG_OUT_ARGB or a WsiPixelFormat */
  guint bpp;                    /* bytes a pixel */
} Target;

static Target
argb_target (guint32 * argb, gsize stride_words)
{
  Target t = { (guint8 *) argb, stride_words * sizeof (guint32),
    WSI_JPEG_OUT_ARGB, sizeof (guint32)
  };
  return t;
}

static guint8 *
target_at (const Target * t, gint64 x, gint64 y)
{
  return t->data + (gsize) y * t->stride + (gsize) x * t->bpp;
}

/* Decodes [x, x + w) x [y, y + h) of the scaled tile (col, row) at @dst,
 * laid out as @t says. */
static gboolean
tile_decode (LevelReader * lr, gint64 col, gint64 row, guint x, guint y,
    guint w, guint h, guint8 * dst, const Target * t, GError ** error)
{
  const WsiTiffLevel *level = lr->level;
  WsiJpegTile tile;

  tile.data = tile_load_bytes (lr, col, row, &tile.size, error);
  if (tile.data == NULL)
    return FALSE;
  tile.tables = level->jpeg_tables;
  tile.tables_size = level->jpeg_tables_size;
  tile.rgb = level->rgb;
  tile.width = level->tile_width;
  tile.height = level->tile_height;
  if (!wsi_jpeg_decoder_decode (lr->decoder, &tile, lr->scale, x, y, w, h,
          dst, t->stride, t->layout, error)) {
    g_prefix_error (error, "%s: level %d tile (%" G_GINT64_FORMAT ", %"
        G_GINT64_FORMAT "): ", lr->slide->display, lr->level_index, col, row);
    return FALSE;
  }
  lr->tiles_decoded++;
  return TRUE;
}

/* Tile (col, row) decoded whole (its part inside the level) and cached. */
static WsiTile *
tile_decode_cached (LevelReader * lr, const WsiTileKey * key, gint64 col,
    gint64 row, GError ** error)
{
  guint w, h;
  guint32 *argb;
  Target whole;

  w = MIN (lr->tile_w, lr->width - col * lr->tile_w);
  h = MIN (lr->tile_h, lr->height - row * lr->tile_h);
  argb = g_try_malloc ((gsize) w * h * sizeof (guint32));
  if (argb == NULL) {
    tile_fail (lr, col, row, error, "out of memory for a %ux%u tile", w, h);
    return NULL;
  }
  whole = argb_target (argb, w);
  if (!tile_decode (lr, col, row, 0, 0, w, h, whole.data, &whole, error)) {
    g_free (argb);
    return NULL;
  }
  return wsi_tile_cache_insert (lr->cache, key, argb, w, h);
}

/* Copies [x, x + w) x [y, y + h) of a cached ARGB tile to @dst, converted
 * to the target's format (composited on white) when it is not ARGB. */
static gboolean
tile_copy (LevelReader * lr, const WsiTile * tile, guint x, guint y, guint w,
    guint h, guint8 * dst, const Target * t)
{
  const guint32 *src = tile->argb + (gsize) y * tile->width + x;
  WsiImage image = { dst, t->stride, w, h, (WsiPixelFormat) t->layout };
  guint i;

  if (t->layout != WSI_JPEG_OUT_ARGB)
    return wsi_resample_argb (wsi_read_context_resampler (lr->ctx), src, w, h,
        tile->width, 0.0, 0.0, w, h, &image);
  for (i = 0; i < h; i++)
    memcpy (dst + i * t->stride, src + (gsize) i * tile->width,
        (gsize) w * sizeof (guint32));
  return TRUE;
}

/* Writes the part [x, x + w) x [y, y + h) of scaled tile (col, row) at
 * @dst: straight from the decoder, or copied out of the cached tile. */
static gboolean
tile_paint (LevelReader * lr, gint64 col, gint64 row, guint x, guint y,
    guint w, guint h, guint8 * dst, const Target * t, GError ** error)
{
  WsiTile *tile;
  gboolean ok;

  WsiTileKey key = {
    .slide_uid = lr->slide->uid,
    .level = lr->level_index,
    .scale = lr->scale,
    .column = col,
    .row = row,
  };
  gboolean admit;

  if (lr->cache == NULL)
    return tile_decode (lr, col, row, x, y, w, h, dst, t, error);

  /* Only tiles asked for twice are decoded whole and kept; a first miss
   * decodes just the part needed (see wsi_tile_cache_lookup_or_admit). */
  tile = wsi_tile_cache_lookup_or_admit (lr->cache, &key, &admit);
  if (tile != NULL)
    lr->tiles_from_cache++;
  else if (!admit)
    return tile_decode (lr, col, row, x, y, w, h, dst, t, error);
  else
    tile = tile_decode_cached (lr, &key, col, row, error);
  if (tile == NULL)
    return FALSE;
  if (x + w > tile->width || y + h > tile->height) {
    wsi_tile_unref (tile);
    return tile_fail (lr, col, row, error, "the cached tile is only %ux%u",
        tile->width, tile->height);
  }
  ok = tile_copy (lr, tile, x, y, w, h, dst, t);
  wsi_tile_unref (tile);
  if (!ok)
    return tile_fail (lr, col, row, error, "out of memory converting it");
  return TRUE;
}

/* Outside the level: transparent ARGB (0), or glass white in a patch
 * format (every byte 0xFF: white, opaque alpha, 0xFF padding). */
static void
region_clear (const Target * t, gint64 w, gint64 h)
{
  gint64 i;

  for (i = 0; i < h; i++)
    memset (t->data + i * t->stride, t->layout == WSI_JPEG_OUT_ARGB ? 0 : 0xFF,
        (gsize) w * t->bpp);
}

/* Fills the w x h region of @t with the scaled level pixels whose top-left
 * is (x, y): every tile the region touches paints its part; outside the
 * level is transparent (white in patch formats), as OpenSlide clips edge
 * tiles. */
static gboolean
level_reader_fill (LevelReader * lr, const Target * t, gint64 x, gint64 y,
    gint64 w, gint64 h, GError ** error)
{
  gint64 x0 = MAX (x, 0), y0 = MAX (y, 0);
  gint64 x1 = MIN (x + w, lr->width), y1 = MIN (y + h, lr->height);
  gint64 tw = lr->tile_w, th = lr->tile_h, col, row;

  if (x0 != x || y0 != y || x1 != x + w || y1 != y + h)
    region_clear (t, w, h);
  if (x0 >= x1 || y0 >= y1)
    return TRUE;

  for (row = y0 / th; row * th < y1; row++) {
    gint64 ty0 = MAX (y0, row * th), ty1 = MIN (y1, (row + 1) * th);
    for (col = x0 / tw; col * tw < x1; col++) {
      gint64 tx0 = MAX (x0, col * tw), tx1 = MIN (x1, (col + 1) * tw);
      guint8 *dst = target_at (t, tx0 - x, ty0 - y);

      if (!tile_paint (lr, col, row, tx0 - col * tw, ty0 - row * th,
              tx1 - tx0, ty1 - ty0, dst, t, error))
        return FALSE;
    }
  }
  return TRUE;
}

static void
report_fill (WsiReadReport * report, const LevelReader * lr, gint level,
    gint64 read_width, gint64 read_height)
{
  if (report == NULL)
    return;
  report->backend = wsi_slide_backend_tiff.name;
  report->level = level;
  report->read_width = read_width;
  report->read_height = read_height;
  report->native_scale = MAX (lr->scale, 1);
  report->tiles_decoded = lr->tiles_decoded;
  report->tiles_from_cache = lr->tiles_from_cache;
  report->sticky = FALSE;
}

/* ---- prefetch: the tiles a read covers --------------------------------- */

/* Tiles hinted for one patch at most (wider reads are fetched as read). */
#define MAX_PREFETCH_TILES 64
/* Tiles hinted for one level-region read (an overview) at most. */
#define MAX_PREFETCH_REGION_TILES 16384

/* Hints the tiles of level @li under level pixels [x0, x1] x [y0, y1]
 * (clipped), at most @max_tiles of them. No-op for local files. */
static void
prefetch_level_region (const TiffSlide * ts, gint li, gint64 x0, gint64 y0,
    gint64 x1, gint64 y1, guint max_tiles)
{
  const WsiTiffLevel *level;
  WsiByteRange *ranges;
  gint64 col, row;
  guint n = 0;

  if (ts == NULL || wsi_byte_source_is_local (ts->source) || li < 0
      || (guint) li >= ts->pyramid.n_levels)
    return;
  level = &ts->pyramid.levels[li];
  x0 = MAX (x0, 0);
  y0 = MAX (y0, 0);
  x1 = MIN (x1, (gint64) level->width - 1);
  y1 = MIN (y1, (gint64) level->height - 1);
  if (x1 < x0 || y1 < y0)
    return;
  ranges = g_new (WsiByteRange, max_tiles);
  for (row = y0 / level->tile_height; row <= y1 / level->tile_height; row++) {
    for (col = x0 / level->tile_width; col <= x1 / level->tile_width
        && n < max_tiles; col++) {
      gsize index = (gsize) row * level->tiles_across + (gsize) col;
      if (level->tile_byte_counts[index] == 0)
        continue;
      ranges[n].offset = level->tile_offsets[index];
      ranges[n].length = level->tile_byte_counts[index];
      n++;
    }
  }
  wsi_byte_source_prefetch (ts->source, ranges, n);
  g_free (ranges);
}

static void
tiff_prefetch (WsiSlide * slide, const WsiReadPlan * plan)
{
  gdouble ds = slide->level_downsample[plan->level];

  /* One level pixel of margin: a window moved onto a DCT grid stays in. */
  prefetch_level_region (slide->handle, plan->level,
      (gint64) floor (plan->x / ds) - 1, (gint64) floor (plan->y / ds) - 1,
      (gint64) ceil (plan->x / ds) + plan->read_width,
      (gint64) ceil (plan->y / ds) + plan->read_height, MAX_PREFETCH_TILES);
}

/* ---- read_argb: a level region at 1:1 ----------------------------------- */

static gboolean
tiff_read_argb (WsiSlide * slide, WsiReadContext * ctx, guint32 * argb,
    gint64 x, gint64 y, gint level, gint64 w, gint64 h,
    WsiReadReport * report, GError ** error)
{
  WsiReadContext *own_ctx = NULL;
  gdouble ds = slide->level_downsample[level];
  LevelReader lr;
  Target target = argb_target (argb, (gsize) w);
  gboolean ok;

  if (ctx == NULL)
    ctx = own_ctx = wsi_read_context_new ();
  /* A remote slide's tiles for the whole region come at once (coalesced),
   * not one round trip per tile as the fill reaches them. */
  prefetch_level_region (slide->handle, level, (gint64) floor (x / ds),
      (gint64) floor (y / ds), (gint64) floor (x / ds) + w,
      (gint64) floor (y / ds) + h, MAX_PREFETCH_REGION_TILES);
  /* Whole level pixels: the top-left level pixel under (x, y). */
  ok = level_reader_init (&lr, slide, ctx, level, 1, NULL, error)
      && level_reader_fill (&lr, &target, (gint64) floor (x / ds),
      (gint64) floor (y / ds), w, h, error);
  report_fill (report, &lr, level, w, h);
  if (own_ctx != NULL)
    wsi_read_context_free (own_ctx);
  return ok;
}

/* ---- read_argb_scaled: a level region at a DCT scale (overviews) -------- */

static gboolean scale_fits_tiles (const WsiTiffLevel * level, guint scale);

static guint
tiff_native_scale (const WsiSlide * slide, gint level, guint wanted)
{
  const TiffSlide *ts = slide->handle;
  guint scale;

  for (scale = 8; scale > 1; scale /= 2) {
    if (scale <= wanted && scale_fits_tiles (&ts->pyramid.levels[level],
            scale))
      return scale;
  }
  return 1;
}

static gboolean
tiff_read_argb_scaled (WsiSlide * slide, WsiReadContext * ctx,
    guint32 * argb, gint level, guint scale, gint64 x, gint64 y, gint64 w,
    gint64 h, GError ** error)
{
  WsiReadContext *own_ctx = NULL;
  Target target = argb_target (argb, (gsize) w);
  LevelReader lr;
  gboolean ok;

  if (ctx == NULL)
    ctx = own_ctx = wsi_read_context_new ();
  prefetch_level_region (slide->handle, level, x * scale, y * scale,
      (x + w) * scale, (y + h) * scale, MAX_PREFETCH_REGION_TILES);
  ok = level_reader_init (&lr, slide, ctx, level, scale, NULL, error)
      && level_reader_fill (&lr, &target, x, y, w, h, error);
  if (own_ctx != NULL)
    wsi_read_context_free (own_ctx);
  return ok;
}

/* ---- read: the whole contract ------------------------------------------- */

/* TRUE when @v (level pixels) lies on the grid of scale @scale. */
static gboolean
on_scaled_grid (gdouble v, guint scale)
{
  gdouble q = v / scale;
  return fabs (q - round (q)) < 1e-3;
}

/* The DCT scale chosen for a read, and how it relates to the output. */
typedef struct
{
  guint scale;                  /* 1, 2, 4, 8 */
  /* TRUE: the read is a whole multiple of scale x output (the window is
   * moved onto the scaled grid); FALSE: a near-whole downscale, finished
   * by the fractional resample at the requested position. */
  gboolean whole;
} ScaleChoice;

/* Tiles stay at least 8 pixels at @scale. */
static gboolean
scale_fits_tiles (const WsiTiffLevel * level, guint scale)
{
  return scale <= level->tile_width / 8 && scale <= level->tile_height / 8;
}

/* TRUE when the region decoded at 1/@scale is still at least @rest times
 * the output on both axes. */
static gboolean
scale_leaves (const WsiReadPlan * plan, const WsiImage * out, guint scale,
    gdouble rest)
{
  return (gdouble) plan->read_width / scale >= out->width * rest
      && (gdouble) plan->read_height / scale >= out->height * rest;
}

/* The largest near-whole scale, 1 when none: the largest leaving at least
 * WSI_NATIVE_SCALE_MIN_REST for the area average, else the largest that keeps
 * the output's resolution within WSI_NATIVE_SCALE_MARGIN. */
static guint
pick_near_whole_scale (const WsiTiffLevel * level, const WsiReadPlan * plan,
    const WsiImage * out)
{
  const gdouble rests[] = {
    WSI_NATIVE_SCALE_MIN_REST, 1.0 - WSI_NATIVE_SCALE_MARGIN
  };
  guint scale, i;

  for (i = 0; i < G_N_ELEMENTS (rests); i++) {
    for (scale = 8; scale > 1; scale /= 2) {
      if (scale_fits_tiles (level, scale)
          && scale_leaves (plan, out, scale, rests[i]))
        return scale;
    }
  }
  return 1;
}

/* The DCT scale: 8, 4 or 2 when the request allows it, else 1. DCT scaling
 * is a virtual pyramid level. Whole multiples first: its pixels match the
 * area average of the full decode when every output pixel covers whole
 * scaled pixels: the read size a whole multiple of scale x the output
 * size, the window starting on the scaled grid (worst PSNR 41.8 dB against
 * the full decode over random patches of synthetic and real slides). Off
 * that grid the scaled pixels' phase would blur the output (worst 22-32 dB
 * measured, as reading a pyramid level at a fractional offset does), so
 * window_compute() moves the window onto the grid, by less than one output
 * pixel, and the report says where the patch really starts.
 * Otherwise (near-whole factors: 1.979 = 0.5 um/px from a 0.2527 um/px
 * scan is 1/2 then 0.99; 3.957 = 1.0 um/px is 1/2 then 1.98; 3 is 1/2
 * then 1.5) pick_near_whole_scale() decodes at the scale that keeps the
 * output's resolution (within WSI_NATIVE_SCALE_MARGIN) and image quality,
 * the remaining factor left to the area resample at the requested
 * position: a quarter of the IDCT and colour work of a full decode, or
 * less. Tiles stay at least 8 pixels. */
static ScaleChoice
pick_scale (const WsiSlide * slide, const WsiReadRequest * request,
    const WsiReadPlan * plan, const WsiImage * out)
{
  const TiffSlide *ts = slide->handle;
  const WsiTiffLevel *level = &ts->pyramid.levels[plan->level];
  ScaleChoice choice = { 1, TRUE };
  guint scale;

  if (!request->native_scaling || out->width == 0 || out->height == 0)
    return choice;
  for (scale = 8; scale > 1; scale /= 2) {
    if (scale_fits_tiles (level, scale)
        && plan->read_width % ((gint64) scale * out->width) == 0
        && plan->read_height % ((gint64) scale * out->height) == 0) {
      choice.scale = scale;
      return choice;
    }
  }
  choice.scale = pick_near_whole_scale (level, plan, out);
  choice.whole = choice.scale == 1;
  return choice;
}

/* The plan's level window in scaled level pixels, and the whole pixels
 * under it. */
typedef struct
{
  gdouble x0, y0, span_w, span_h;
  gint64 x, y, w, h;
} Window;

static gboolean
window_compute (Window * win, const WsiSlide * slide,
    const WsiReadPlan * plan, ScaleChoice choice)
{
  gdouble ds = slide->level_downsample[plan->level];
  guint scale = choice.scale;
  gboolean snap = scale > 1 && choice.whole;

  /* Dividing by a power of two is exact: same as x / (ds * scale). Scaled
   * windows of whole multiples start on the scaled grid (see pick_scale());
   * near-whole ones keep the requested position. */
  win->x0 = plan->x / ds / scale;
  win->y0 = plan->y / ds / scale;
  if (snap && !on_scaled_grid (plan->x / ds, scale))
    win->x0 = floor (win->x0);
  if (snap && !on_scaled_grid (plan->y / ds, scale))
    win->y0 = floor (win->y0);
  win->span_w = (gdouble) plan->read_width / scale;
  win->span_h = (gdouble) plan->read_height / scale;
  win->x = (gint64) floor (win->x0);
  win->y = (gint64) floor (win->y0);
  win->w = (gint64) ceil (win->x0 + win->span_w) - win->x;
  win->h = (gint64) ceil (win->y0 + win->span_h) - win->y;
  /* Bounded so that w x h words fit in memory arithmetic. */
  return win->w > 0 && win->h > 0 && win->w <= G_MAXINT && win->h <= G_MAXINT
      && (guint64) win->w * (guint64) win->h <= G_MAXSIZE / 8;
}

/* TRUE when the window is the output pixel for pixel (1:1 after any DCT
 * scaling, whole-pixel origin): tiles then decode straight into the
 * output's memory in its format, with no ARGB intermediate. */
static gboolean
window_is_output (const Window * win, const WsiImage * out)
{
  return win->x0 == win->x && win->y0 == win->y
      && win->span_w == out->width && win->span_h == out->height;
}

/* Decodes the window into ARGB scratch and resamples it into @out. */
static gboolean
read_resampled (LevelReader * lr, WsiReadContext * ctx, const Window * win,
    const WsiImage * out, GError ** error)
{
  guint32 *buf = wsi_read_context_scratch (ctx, SCRATCH_REGION,
      (gsize) win->w * win->h * sizeof (guint32));
  Target target;

  if (buf == NULL) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "%s: out of memory for a %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
        " region", lr->slide->display, win->w, win->h);
    return FALSE;
  }
  target = argb_target (buf, (gsize) win->w);
  if (!level_reader_fill (lr, &target, win->x, win->y, win->w, win->h, error))
    return FALSE;
  if (!wsi_resample_argb (wsi_read_context_resampler (ctx), buf,
          (guint) win->w, (guint) win->h, (gsize) win->w, win->x0 - win->x,
          win->y0 - win->y, win->span_w, win->span_h, out)) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "%s: out of memory resampling a region", lr->slide->display);
    return FALSE;
  }
  return TRUE;
}

static gboolean
tiff_read (WsiSlide * slide, WsiReadContext * ctx,
    const WsiReadRequest * request, const WsiReadPlan * plan,
    const WsiImage * out, WsiReadReport * report, GError ** error)
{
  ScaleChoice choice = pick_scale (slide, request, plan, out);
  guint scale = choice.scale;
  gboolean moved = scale > 1 && choice.whole;
  LevelReader lr;
  Window win = { 0, };
  gboolean ok;

  /* A patch's tiles are fetched together (a no-op when patchreader hinted
   * them already, or for local files). */
  tiff_prefetch (slide, plan);
  ok = level_reader_init (&lr, slide, ctx, plan->level, scale,
      request->tile_cache, error);
  if (ok && !window_compute (&win, slide, plan, choice)) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "%s: a %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " region at level %d "
        "is too large", slide->display, plan->read_width, plan->read_height,
        plan->level);
    ok = FALSE;
  }
  if (ok && window_is_output (&win, out)) {
    Target direct = { out->data, out->stride, out->format,
      wsi_pixel_format_bytes (out->format)
    };
    ok = level_reader_fill (&lr, &direct, win.x, win.y, win.w, win.h, error);
  } else if (ok) {
    ok = read_resampled (&lr, ctx, &win, out, error);
  }

  report_fill (report, &lr, plan->level, plan->read_width, plan->read_height);
  if (report != NULL) {
    report->footprint_width = plan->footprint_width;
    report->footprint_height = plan->footprint_height;
    /* Where the (possibly moved) window starts, in level-0 pixels. */
    report->x = moved && ok ? llround (win.x0 * scale *
        slide->level_downsample[plan->level]) : plan->x;
    report->y = moved && ok ? llround (win.y0 * scale *
        slide->level_downsample[plan->level]) : plan->y;
  }
  return ok;
}

const WsiSlideBackend wsi_slide_backend_tiff = {
  .name = WSI_BACKEND_TIFF,
  .detect = tiff_detect,
  .open = tiff_open,
  .read_argb = tiff_read_argb,
  .read = tiff_read,
  .thread_state_new = tiff_thread_state_new,
  .thread_state_free = tiff_thread_state_free,
  .close = tiff_close,
  .prefetch = tiff_prefetch,
  .native_scale = tiff_native_scale,
  .read_argb_scaled = tiff_read_argb_scaled,
};
