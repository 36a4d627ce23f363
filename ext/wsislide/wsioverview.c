/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsioverview.c: the slide overview, area-averaged strip by strip (see
 * wsioverview.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "wsioverview.h"

#include <gst/wsi/wsicpu.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined (__x86_64__) && defined (__GNUC__)
#include <tmmintrin.h>
/* An SSSE3 variant of the ARGB -> RGB row conversion, picked at run time
 * (byte shuffles: x86-64's baseline SSE2 has none). */
#define HAVE_SSSE3_VARIANT 1
#endif

/* Rows of the overview's source level decoded at a time, and the widest
 * block: bounds memory to a few MB whatever the slide size. */
#define STRIP_ROWS 256
#define BLOCK_COLS 4096

/* Source-oriented area average: each decoded strip is added into the
 * output rows it overlaps, so a level never has to be held whole (the taps,
 * wsi_box_taps_new(), live with the patch kernels in wsiresample.h, which
 * says why there are two forms). */

/* The coarsest level still at least as large as the overview. */
gint
wsi_overview_level (const WsiSlide * slide, gint ow, gint oh)
{
  gint level, best = 0;

  for (level = 1; level < slide->level_count; level++) {
    if (slide->level_width[level] >= ow && slide->level_height[level] >= oh)
      best = level;
  }
  return best;
}

/* The largest native (DCT) scale of @level whose scaled level is still at
 * least ow x oh: a JPEG level then decodes at 1/2, 1/4 or 1/8 of the IDCT
 * and colour work, and the area average sums 4 to 64 times fewer pixels
 * (issue 23: this was most of a new slide's cost). */
static guint
overview_scale (const WsiSlide * slide, gint level, gint ow, gint oh)
{
  guint scale;

  for (scale = 8; scale > 1; scale /= 2) {
    if (slide->level_width[level] / scale >= ow
        && slide->level_height[level] / scale >= oh)
      break;
  }
  return wsi_slide_native_scale (slide, level, scale);
}

/* Adds one source row (@cols RGB pixels) times @weight into accumulator
 * row @dst (ow * 3 floats). Scalar on purpose: a 4-lane form (one pixel's
 * three channels a step, issue 23) ran 30 % fewer instructions but took
 * about 1.6x the time, its overlapping 16-byte loads and stores of
 * neighbouring output pixels stalling on store forwarding. */
static void
accumulate_row (gfloat * dst, const guint8 * src, const WsiBoxTap * col_taps,
    gint64 cols, gfloat weight)
{
  gint64 c;

  for (c = 0; c < cols; c++, src += 3) {
    /* read once: the float stores below may alias the bytes (exact:
     * every byte is a float) */
    const WsiBoxTap tap = col_taps[c];
    const gfloat red = src[0], green = src[1], blue = src[2];
    gfloat *d = dst + 3 * tap.first;
    gfloat w0 = tap.share0 * weight;

    d[0] += red * w0;
    d[1] += green * w0;
    d[2] += blue * w0;
    if (tap.share1 > 0.0f) {
      gfloat w1 = tap.share1 * weight;

      d[3] += red * w1;
      d[4] += green * w1;
      d[5] += blue * w1;
    }
  }
}

#ifdef HAVE_SSSE3_VARIANT
/* wsi_argb_to_rgb_on_white() four pixels at a time: the same wrapping
 * byte sums c + (255 - a), then the 16 bytes packed to 12. Returns the
 * pixels done: all but the last 2-5, since each 16-byte store writes 4
 * bytes beyond its 12 and must stay inside @rgb (3 * @n bytes). */
__attribute__ ((target ("ssse3")))
static gsize
argb_to_rgb_ssse3 (const guint32 * argb, guint8 * rgb, gsize n)
{
  const __m128i alpha_bytes = _mm_setr_epi8 (3, 3, 3, 3, 7, 7, 7, 7,
      11, 11, 11, 11, 15, 15, 15, 15);
  const __m128i to_rgb = _mm_setr_epi8 (2, 1, 0, 6, 5, 4, 10, 9, 8,
      14, 13, 12, -1, -1, -1, -1);
  const __m128i ones = _mm_set1_epi8 (-1);
  gsize i;

  for (i = 0; i + 6 <= n; i += 4) {
    __m128i p = _mm_loadu_si128 ((const __m128i *) (argb + i));
    __m128i glass = _mm_xor_si128 (_mm_shuffle_epi8 (p, alpha_bytes), ones);

    _mm_storeu_si128 ((__m128i *) (rgb + 3 * i),
        _mm_shuffle_epi8 (_mm_add_epi8 (p, glass), to_rgb));
  }
  return i;
}
#endif

/* Through SSSE3 where the CPU has it: the scalar form was 15 % of the
 * instructions of a new slide's preparation (issue 23). */
void
wsi_overview_argb_to_rgb (const guint32 * argb, guint8 * rgb, gsize n)
{
  gsize done = 0;

#ifdef HAVE_SSSE3_VARIANT
  if (wsi_cpu_has (WSI_CPU_SSSE3))
    done = argb_to_rgb_ssse3 (argb, rgb, n);
#endif
  wsi_argb_to_rgb_on_white (argb + done, rgb + 3 * done, n - done);
}

/* State of one overview read. */
typedef struct
{
  WsiSlide *slide;
  WsiReadContext *ctx;          /* decoder state kept across strips */
  gint level;
  guint scale;                  /* native downscale of the level read */
  gint64 level_width, level_height;     /* of the level at that scale */
  gint ow, oh;
  WsiBoxTap *col_taps, *row_taps;
  guint32 *argb;                /* one block of the source level */
  guint8 *rgb;                  /* the block as RGB on white (averaging) */
  gboolean rgb_direct;          /* the decoders write rgb themselves */
  gfloat *acc;                  /* rows_per_group output rows being summed */
  gint rows_per_group;
  gint64 strip_rows;            /* rows decoded at a time: whole tile rows */
  const gint *cancel;           /* atomic: stop when non-zero */
} WsiOverviewReader;

/* Adds a decoded block at (x, y) of the level into the output rows
 * [group_first, group_first + group_rows). */
static void
accumulate_block (WsiOverviewReader * r, gint group_first, gint group_rows,
    gint64 x, gint64 y, gint64 cols, gint64 rows)
{
  gint64 i;

  for (i = 0; i < rows; i++) {
    const WsiBoxTap *row_tap = &r->row_taps[y + i];
    const guint8 *src = r->rgb + i * cols * 3;
    gint target = row_tap->first - group_first;

    /* A boundary row is read by two groups; each keeps its own share. */
    if (target >= 0 && target < group_rows)
      accumulate_row (r->acc + (gsize) target * r->ow * 3, src,
          r->col_taps + x, cols, row_tap->share0);
    target++;
    if (row_tap->share1 > 0.0f && target >= 0 && target < group_rows)
      accumulate_row (r->acc + (gsize) target * r->ow * 3, src,
          r->col_taps + x, cols, row_tap->share1);
  }
}

/* Rounds the sums to bytes: (gint) (v + 0.5f) clamped to 0..255; with
 * SSE2 16 at a time (truncating conversions, then saturating packs: the
 * same clamp for every int), the rest one by one. */
static void
store_rows (const gfloat * acc, gsize n_values, guint8 * out)
{
  gsize i = 0;

#if defined(__SSE2__)
  const __m128 half = _mm_set1_ps (0.5f);

  for (; i + 16 <= n_values; i += 16) {
    __m128i q[4];
    gint k;

    for (k = 0; k < 4; k++)
      q[k] = _mm_cvttps_epi32 (_mm_add_ps (_mm_loadu_ps (acc + i + 4 * k),
              half));
    _mm_storeu_si128 ((__m128i *) (out + i),
        _mm_packus_epi16 (_mm_packs_epi32 (q[0], q[1]),
            _mm_packs_epi32 (q[2], q[3])));
  }
#endif
  for (; i < n_values; i++)
    out[i] = (guint8) CLAMP ((gint) (acc[i] + 0.5f), 0, 255);
}

/* Called with each decoded block, @cols x @rows pixels from (x, y) of the
 * scaled level: RGB on white at r->rgb when the reader has that buffer
 * (the averaging path), else ARGB at r->argb. */
typedef void (*WsiOverviewBlockFunc) (WsiOverviewReader * r, gint64 x,
    gint64 y, gint64 cols, gint64 rows, gpointer data);

/* Rows per strip: whole rows of the level's tiles at its DCT scale, as
 * many as fit in STRIP_ROWS. A strip that ends inside a tile row has that
 * row's tiles decoded again by the next strip: with 240 px tiles read at
 * 1/2 (120 rows) and strips of 256, 81 tile decodes per 1024 px overview
 * instead of 63 (issue 23). Tiles taller than 4 strips, or not tiled: plain
 * STRIP_ROWS, so that memory stays bounded. */
static gint64
strip_rows_of (const WsiSlide * slide, gint level, guint scale)
{
  gint64 tile_rows = slide->level_tile_height[level] / scale;

  if (tile_rows <= 0 || tile_rows > 4 * STRIP_ROWS)
    return STRIP_ROWS;
  return MAX (tile_rows, STRIP_ROWS / tile_rows * tile_rows);
}

/* Decodes the block at (x, y) of the scaled level as WsiOverviewBlockFunc
 * says: into r->rgb when the reader has it, straight from the decoders
 * where the backend writes RGB (r->rgb_direct: no ARGB pass, issue 23),
 * else through r->argb and the conversion; into r->argb otherwise. */
static gboolean
read_block (WsiOverviewReader * r, gint64 x, gint64 y, gint64 cols,
    gint64 rows, GError ** error)
{
  if (r->rgb != NULL && r->rgb_direct)
    return wsi_slide_read_region_scaled_rgb (r->slide, r->ctx, r->rgb,
        (gsize) cols * 3, r->level, r->scale, x, y, cols, rows, error);
  if (!wsi_slide_read_region_scaled (r->slide, r->ctx, r->argb, r->level,
          r->scale, x, y, cols, rows, error))
    return FALSE;
  if (r->rgb != NULL)
    wsi_overview_argb_to_rgb (r->argb, r->rgb, cols * rows);
  return TRUE;
}

/* Decodes source rows [y_begin, y_end) of the scaled level block by block
 * (strip_rows x BLOCK_COLS at most, left to right, then down) and hands
 * each block to @func. From y_begin = 0 (the whole level copied) strips
 * end on tile rows; a row group's strips start where its rows do, as
 * before, since JPEG 2000 region reads differ by a few levels near a
 * region's edge and moving the edges would change those slides' masks.
 * Fails without an error when cancelled: the caller sees its cancel
 * flag. */
static gboolean
for_each_block (WsiOverviewReader * r, gint64 y_begin, gint64 y_end,
    WsiOverviewBlockFunc func, gpointer data, GError ** error)
{
  gint64 block_cols = MIN (r->level_width, BLOCK_COLS);
  gint64 x, y;

  for (y = y_begin; y < y_end; y += r->strip_rows) {
    gint64 rows = MIN (r->strip_rows, y_end - y);

    for (x = 0; x < r->level_width; x += block_cols) {
      gint64 cols = MIN (block_cols, r->level_width - x);

      if (g_atomic_int_get (r->cancel))
        return FALSE;
      if (!read_block (r, x, y, cols, rows, error))
        return FALSE;
      func (r, x, y, cols, rows, data);
    }
  }
  return TRUE;
}

/* The output rows a row group sums: [first, first + n_rows). */
typedef struct
{
  gint first, n_rows;
} WsiOverviewRowGroup;

static void
accumulate_decoded (WsiOverviewReader * r, gint64 x, gint64 y, gint64 cols,
    gint64 rows, gpointer data)
{
  const WsiOverviewRowGroup *group = data;

  accumulate_block (r, group->first, group->n_rows, x, y, cols, rows);
}

/* Sums the source rows covering output rows [first, first + n_rows). */
static gboolean
read_row_group (WsiOverviewReader * r, gint first,
    gint n_rows, guint8 * out, GError ** error)
{
  gdouble rows_per_out = (gdouble) r->level_height / r->oh;
  gint64 y_begin = (gint64) floor (first * rows_per_out);
  gint64 y_end = MIN (r->level_height,
      (gint64) ceil ((first + n_rows) * rows_per_out));
  WsiOverviewRowGroup group = { first, n_rows };

  memset (r->acc, 0, sizeof (gfloat) * n_rows * r->ow * 3);
  if (!for_each_block (r, y_begin, y_end, accumulate_decoded, &group, error))
    return FALSE;
  store_rows (r->acc, (gsize) n_rows * r->ow * 3, out);
  return TRUE;
}

/* Puts a decoded block in place in the overview @data. */
static void
copy_decoded (WsiOverviewReader * r, gint64 x, gint64 y, gint64 cols,
    gint64 rows, gpointer data)
{
  guint8 *out = data;
  gint64 i;

  for (i = 0; i < rows; i++)
    wsi_overview_argb_to_rgb (r->argb + i * cols,
        out + ((y + i) * r->ow + x) * 3, cols);
}

/* The scaled level is exactly the overview's size (a 2048x1536 level read
 * at 1/2 for a 1024x768 overview): every tap is one whole source pixel, so
 * the area average is the identity and the decoded pixels go straight to
 * @out. Byte for byte what read_row_group() gives (shares of exactly 1.0,
 * rounded back to the same byte), without its per-pixel float sums, which
 * were as much CPU as the decode itself (issue 23). */
static gboolean
read_identity (WsiOverviewReader * r, guint8 * out, GError ** error)
{
  return for_each_block (r, 0, r->level_height, copy_decoded, out, error);
}

/* read_identity() with the decoders writing RGB on white straight into
 * @out (backends that can: wsi_slide_has_rgb_scaled()): the same bytes
 * without the ARGB block and its conversion pass (issue 23), strip by
 * strip as for_each_block() so that a cancel is seen as soon. */
static gboolean
read_identity_rgb (WsiOverviewReader * r, guint8 * out, GError ** error)
{
  gsize stride = (gsize) r->ow * 3;
  gint64 y;

  for (y = 0; y < r->level_height; y += r->strip_rows) {
    gint64 rows = MIN (r->strip_rows, r->level_height - y);

    if (g_atomic_int_get (r->cancel))
      return FALSE;
    if (!wsi_slide_read_region_scaled_rgb (r->slide, r->ctx,
            out + (gsize) y * stride, stride, r->level, r->scale, 0, y,
            r->level_width, rows, error))
      return FALSE;
  }
  return TRUE;
}

/* The decode block of the calling thread, kept from one overview to the
 * next: freed and allocated again for every new slide, its megabyte was
 * handed back to the kernel and faulted in again each time (issue 23). At
 * most BLOCK_COLS x STRIP_ROWS ARGB pixels (4 MiB) per thread that ever
 * read an overview. */
static GPrivate block_scratch = G_PRIVATE_INIT (g_free);

static guint32 *
thread_block (gsize pixels)
{
  gsize *held = (gsize *) g_private_get (&block_scratch);

  if (held == NULL || held[0] < pixels) {
    held = (gsize *) g_malloc (sizeof (gsize) * 2 + pixels * sizeof (guint32));
    held[0] = pixels;
    g_private_replace (&block_scratch, held);
  }
  return (guint32 *) (held + 2);
}

/* Reads the closest larger level in strips so that memory stays bounded. */
gboolean
wsi_overview_read (WsiSlide * slide, gint ow, gint oh, const gint * cancel,
    guint8 * out, GError ** error)
{
  WsiOverviewReader r = { 0, };
  gint64 block_pixels;
  gint first;
  gboolean ok = TRUE;

  r.slide = slide;
  r.cancel = cancel;
  r.ctx = wsi_read_context_new ();
  r.ow = ow;
  r.oh = oh;
  r.level = wsi_overview_level (slide, ow, oh);
  r.scale = overview_scale (slide, r.level, ow, oh);
  /* Whole scaled pixels only: a partial one at the right or bottom edge
   * would mix in the tile's padding. */
  r.level_width = slide->level_width[r.level] / r.scale;
  r.level_height = slide->level_height[r.level] / r.scale;
  /* A remote slide's tiles for the whole level come at once (one round
   * trip), not strip by strip as the reads below reach them. */
  wsi_slide_prefetch_level (slide, r.level, 0, 0, r.level_width,
      r.level_height);
  r.strip_rows = strip_rows_of (slide, r.level, r.scale);
  if (r.level_width == ow && r.level_height == oh
      && wsi_slide_has_rgb_scaled (slide, r.level, r.scale)) {
    ok = read_identity_rgb (&r, out, error);
    wsi_read_context_free (r.ctx);
    return ok;
  }
  block_pixels = MIN (r.level_width, BLOCK_COLS) * MIN (r.level_height,
      r.strip_rows);
  r.argb = thread_block (block_pixels);
  if (r.level_width == ow && r.level_height == oh) {
    ok = read_identity (&r, out, error);
    wsi_read_context_free (r.ctx);
    return ok;
  }
  r.col_taps = wsi_box_taps_new (r.level_width, ow);
  r.row_taps = wsi_box_taps_new (r.level_height, oh);
  r.rows_per_group = CLAMP ((gint) (STRIP_ROWS * (gdouble) oh /
          r.level_height), 1, oh);
  r.rgb = g_new (guint8, block_pixels * 3);
  r.rgb_direct = wsi_slide_has_rgb_scaled (slide, r.level, r.scale);
  r.acc = g_new (gfloat, (gsize) r.rows_per_group * ow * 3);

  for (first = 0; ok && first < oh; first += r.rows_per_group) {
    gint n_rows = MIN (r.rows_per_group, oh - first);

    ok = read_row_group (&r, first, n_rows, out + (gsize) first * ow * 3,
        error);
  }

  wsi_read_context_free (r.ctx);
  g_free (r.col_taps);
  g_free (r.row_taps);
  g_free (r.rgb);
  g_free (r.acc);
  return ok;
}
