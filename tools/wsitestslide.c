/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitestslide.c: synthetic whole-slide images written with libtiff.
 *
 * Level 0 is painted one tile at a time, so memory stays bounded whatever
 * the slide size; every other level is derived from it as scanners do:
 * pixel (px, py) of a level @ds times smaller is the mean of level-0 pixels
 * [px * ds, (px + 1) * ds) x [py * ds, (py + 1) * ds), painted again row by
 * row for each tile (paint_derived_tile), so each level costs one level-0
 * area of painting and a read at level k's mpp from level 0 matches level k
 * (tests/check/libs/wsislide.c). A pixel's centre lies at level-0 position
 * ((px + 0.5) * ds, (py + 0.5) * ds), where wsi_test_slide_is_tissue() says
 * whether it is mostly tissue (away from blob edges). The thumbnail and the
 * macro are still painted at their own pixel scale (texture and all).
 *
 * Painting is two memcpy per row span: the background (glass) and the
 * tissue colours come from precomputed periodic textures drawn at the
 * slide's mpp (physical sizes), so the per-pixel cost is close to that of
 * the JPEG encoder.
 */

#include "wsitestslide.h"

#include <glib/gstdio.h>
#include <tiffio.h>
#include <math.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

/* Side of the periodic texture tables, in level-0 pixels (a power of two):
 * 256 um at 0.25 um/px, so the period does not show at the upper levels. */
#define TEXTURE_SIZE 1024
#define TEXTURE_MASK (TEXTURE_SIZE - 1)
/* Physical sizes of the tissue texture, converted to level-0 pixels with
 * the slide's mpp (0.25 when it has none): nuclei of 2-4 um radius covering
 * about a quarter of the stroma, fibres every 8 um. The upper levels are
 * area averages of level 0 (as a scanner makes them), so a patch read at
 * 1 um/px shows nuclei at a quarter of their 0.25 um/px size. */
#define NUCLEUS_RADIUS_MIN_UM 2.0
#define NUCLEUS_RADIUS_MAX_UM 4.0
#define NUCLEI_PER_UM2 0.008
#define FIBRE_PERIOD_UM 8.0
#define DEFAULT_TEXTURE_MPP 0.25
/* The optics' blur: box passes of this radius, each way. */
#define OPTICAL_BLUR_UM 0.4
#define OPTICAL_BLUR_PASSES 1
/* Tissue colour variants; blob i uses variant i % TISSUE_VARIANTS. */
#define TISSUE_VARIANTS 4
/* Largest side of the Aperio thumbnail directory. */
#define THUMBNAIL_MAX_SIDE 768
/* Rows per strip of the stripped (associated) images: a multiple of the
 * 16-row JPEG MCU that YCbCr 4:2:0 needs. */
#define STRIP_ROWS 16
/* Same version string as recent scanners write (with the trailing space).
 * Like real files, pyramid levels end the first line with "\r\n", the
 * thumbnail and associated images with "\n" alone: OpenSlide 3.4.1 reads
 * the name of an associated image ("label", "macro") as the first word of
 * the second line of a split on either character, so "\r\n" would hide it. */
#define APERIO_HEADER "Aperio Image Library v12.0.0 \r\n"
#define APERIO_HEADER_ASSOCIATED "Aperio Image Library v12.0.0 \n"
/* NewSubfileType of an Aperio macro: reduced image (1) | bit 3 (8). */
#define APERIO_SUBFILE_MACRO 9
/* Above this many raw level-0 bytes, write BigTIFF (classic TIFF stops at
 * 4 GiB of file; JPEG keeps the file far below the raw size). */
#define BIGTIFF_RAW_BYTES (G_GUINT64_CONSTANT (4) << 30)

/* ------------------------------------------------------------------------ */
/* Deterministic random numbers (splitmix64): the same seed gives the same
 * slide on every platform and glib version. */

typedef struct
{
  guint64 state;
} SlideRandom;

static void
slide_random_init (SlideRandom * rnd, guint64 seed)
{
  rnd->state = seed * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15) + 0x2545F491;
}

static guint64
slide_random_next (SlideRandom * rnd)
{
  guint64 z = (rnd->state += G_GUINT64_CONSTANT (0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static gdouble
slide_random_unit (SlideRandom * rnd)
{
  return (slide_random_next (rnd) >> 11) * (1.0 / 9007199254740992.0);
}

static gdouble
slide_random_range (SlideRandom * rnd, gdouble lo, gdouble hi)
{
  return lo + (hi - lo) * slide_random_unit (rnd);
}

/* ------------------------------------------------------------------------ */
/* Spec defaults and checks */

void
wsi_test_slide_spec_init (WsiTestSlideSpec * spec)
{
  g_return_if_fail (spec != NULL);

  memset (spec, 0, sizeof (*spec));
  spec->layout = WSI_TEST_LAYOUT_GENERIC;
  spec->width = 2048;
  spec->height = 1536;
  spec->tile_size = 256;
  spec->levels = 3;
  spec->level_step = 2;
  spec->mpp = 0.25;
  spec->resolution_placeholder = FALSE;
  spec->tissue_blobs = 3;
  spec->seed = 1;
  spec->jpeg_quality = 85;
}

static gboolean
spec_check (const WsiTestSlideSpec * spec, GError ** error)
{
  const gchar *problem = NULL;

  if (spec->width == 0 || spec->height == 0)
    problem = "width and height must be at least 1";
  else if (spec->tile_size < 16 || spec->tile_size % 16 != 0
      || spec->tile_size > 4096)
    problem = "tile_size must be a multiple of 16 between 16 and 4096";
  else if (spec->levels < 1 || spec->levels > 32)
    problem = "levels must be between 1 and 32";
  else if (spec->levels > 1 && spec->level_step < 2)
    problem = "level_step must be at least 2";
  else if (spec->jpeg_quality < 1 || spec->jpeg_quality > 100)
    problem = "jpeg_quality must be between 1 and 100";
  else if (!(spec->mpp >= 0.0) || !isfinite (spec->mpp))
    problem = "mpp must be 0 (unknown) or a positive number";
  else if (spec->layout != WSI_TEST_LAYOUT_GENERIC
      && spec->layout != WSI_TEST_LAYOUT_APERIO)
    problem = "unknown layout";

  if (problem) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
        "Invalid test slide spec: %s", problem);
    return FALSE;
  }
  return TRUE;
}

/* Downsample of pyramid level @level: level_step^level. */
static guint64
level_divisor (const WsiTestSlideSpec * spec, guint level)
{
  guint64 divisor = 1;
  guint i;

  for (i = 0; i < level && divisor <= G_MAXUINT32; i++)
    divisor *= MAX (spec->level_step, 2);
  return divisor;
}

/* The downsample a level is averaged over: its divisor, but no more than
 * the slide's side (a level of one pixel averages the whole slide, not the
 * glass past it), so the work stays within one level-0 area per level. */
static guint
derived_downsample (const WsiTestSlideSpec * spec, guint level)
{
  return (guint) MIN (level_divisor (spec, level),
      (guint64) MAX (spec->width, spec->height));
}

/* Size of pyramid level @level: level 0 divided by level_step^level,
 * rounded down like scanners do, never below 1 pixel. */
static void
level_size (const WsiTestSlideSpec * spec, guint level, guint * lw, guint * lh)
{
  guint64 divisor = level_divisor (spec, level);

  *lw = MAX (1, spec->width / divisor);
  *lh = MAX (1, spec->height / divisor);
}

/* ------------------------------------------------------------------------ */
/* Tissue geometry: rotated ellipses */

typedef struct
{
  gdouble cx, cy;               /* centre, level-0 pixels */
  gdouble half_w, half_h;       /* half extent of the bounding box */
  /* Inside when A dx^2 + B(dy) dx + C(dy) <= 0, dx = x - cx, dy = y - cy */
  gdouble qa, qb_per_dy, qc_per_dy2;
} TissueBlob;

static TissueBlob *
tissue_blobs_new (const WsiTestSlideSpec * spec)
{
  TissueBlob *blobs = g_new0 (TissueBlob, MAX (spec->tissue_blobs, 1));
  gdouble min_side = MIN (spec->width, spec->height);
  SlideRandom rnd;
  guint i;

  slide_random_init (&rnd, spec->seed);
  for (i = 0; i < spec->tissue_blobs; i++) {
    TissueBlob *b = &blobs[i];
    gdouble a = min_side * slide_random_range (&rnd, 0.12, 0.26);
    gdouble r = a * slide_random_range (&rnd, 0.55, 1.0);
    gdouble theta = slide_random_range (&rnd, 0.0, G_PI);
    gdouble c = cos (theta), s = sin (theta);
    gdouble ux = slide_random_unit (&rnd), uy = slide_random_unit (&rnd);

    b->half_w = sqrt (a * a * c * c + r * r * s * s);
    b->half_h = sqrt (a * a * s * s + r * r * c * c);
    /* Keep the whole blob on the slide when it fits. */
    b->cx = spec->width > 2 * b->half_w ?
        b->half_w + ux * (spec->width - 2 * b->half_w) : spec->width / 2.0;
    b->cy = spec->height > 2 * b->half_h ?
        b->half_h + uy * (spec->height - 2 * b->half_h) : spec->height / 2.0;

    b->qa = c * c / (a * a) + s * s / (r * r);
    b->qb_per_dy = 2.0 * c * s * (1.0 / (a * a) - 1.0 / (r * r));
    b->qc_per_dy2 = s * s / (a * a) + c * c / (r * r);
  }
  return blobs;
}

/* The blobs of the last spec asked about, per thread: tests ask
 * wsi_test_slide_is_tissue() about every pixel of an overview (millions of
 * calls), and drawing the blobs again each time (a malloc and the trig of
 * every blob) was most of such a test's time, and far more under ASan's
 * full-stack unwinding of each allocation. */
typedef struct
{
  guint width, height, tissue_blobs;
  guint32 seed;
  TissueBlob *blobs;            /* NULL until the first call */
} TissueBlobCache;

static void
tissue_blob_cache_free (gpointer data)
{
  TissueBlobCache *cache = data;

  g_free (cache->blobs);
  g_free (cache);
}

static GPrivate tissue_blob_cache = G_PRIVATE_INIT (tissue_blob_cache_free);

/* @spec's blobs, drawn once per thread while the spec's geometry stays. */
static const TissueBlob *
tissue_blobs_cached (const WsiTestSlideSpec * spec)
{
  TissueBlobCache *cache = g_private_get (&tissue_blob_cache);

  if (cache == NULL) {
    cache = g_new0 (TissueBlobCache, 1);
    g_private_set (&tissue_blob_cache, cache);
  }
  if (cache->blobs == NULL || cache->width != spec->width
      || cache->height != spec->height
      || cache->tissue_blobs != spec->tissue_blobs
      || cache->seed != spec->seed) {
    g_free (cache->blobs);
    cache->blobs = tissue_blobs_new (spec);
    cache->width = spec->width;
    cache->height = spec->height;
    cache->tissue_blobs = spec->tissue_blobs;
    cache->seed = spec->seed;
  }
  return cache->blobs;
}

/* The level-0 x interval [*lo, *hi] of @blob on the row at level-0 @y.
 * The one formula both the painter and wsi_test_slide_is_tissue() use. */
static gboolean
tissue_blob_row_span (const TissueBlob * blob, gdouble y, gdouble * lo,
    gdouble * hi)
{
  gdouble dy = y - blob->cy;
  gdouble b, c, disc, root;

  if (fabs (dy) > blob->half_h)
    return FALSE;
  b = blob->qb_per_dy * dy;
  c = blob->qc_per_dy2 * dy * dy - 1.0;
  disc = b * b - 4.0 * blob->qa * c;
  if (disc < 0.0)
    return FALSE;
  root = sqrt (disc);
  *lo = blob->cx + (-b - root) / (2.0 * blob->qa);
  *hi = blob->cx + (-b + root) / (2.0 * blob->qa);
  return TRUE;
}

gboolean
wsi_test_slide_is_tissue (const WsiTestSlideSpec * spec, gdouble x, gdouble y)
{
  const TissueBlob *blobs;
  gboolean inside = FALSE;
  guint i;

  g_return_val_if_fail (spec != NULL, FALSE);

  if (spec->tissue_blobs == 0 || spec->width == 0 || spec->height == 0)
    return FALSE;
  if (x < 0 || y < 0 || x > spec->width || y > spec->height)
    return FALSE;

  blobs = tissue_blobs_cached (spec);
  for (i = 0; i < spec->tissue_blobs && !inside; i++) {
    gdouble lo, hi;

    /* (the span lies within the blob's bounding box: skip the root) */
    if (fabs (x - blobs[i].cx) > blobs[i].half_w + 1.0)
      continue;
    if (tissue_blob_row_span (&blobs[i], y, &lo, &hi))
      inside = (x >= lo && x <= hi);
  }
  return inside;
}

typedef struct
{
  gdouble lo, hi;
} Span;

static gint
span_compare (gconstpointer a, gconstpointer b)
{
  gdouble d = ((const Span *) a)->lo - ((const Span *) b)->lo;
  return d < 0 ? -1 : (d > 0 ? 1 : 0);
}

/* Exact along x (union of the blob spans), sampled at up to 2048 rows. */
gdouble
wsi_test_slide_tissue_fraction (const WsiTestSlideSpec * spec)
{
  TissueBlob *blobs;
  Span *spans;
  guint rows, r, i;
  gdouble covered = 0.0;

  g_return_val_if_fail (spec != NULL, 0.0);
  if (spec->tissue_blobs == 0 || spec->width == 0 || spec->height == 0)
    return 0.0;

  blobs = tissue_blobs_new (spec);
  spans = g_new (Span, spec->tissue_blobs);
  rows = MIN (spec->height, 2048);

  for (r = 0; r < rows; r++) {
    gdouble y = (r + 0.5) * spec->height / rows;
    gdouble end = 0.0;
    guint n = 0;

    for (i = 0; i < spec->tissue_blobs; i++) {
      gdouble lo, hi;
      if (!tissue_blob_row_span (&blobs[i], y, &lo, &hi))
        continue;
      spans[n].lo = CLAMP (lo, 0.0, spec->width);
      spans[n].hi = CLAMP (hi, 0.0, spec->width);
      n++;
    }
    qsort (spans, n, sizeof (Span), span_compare);
    for (i = 0; i < n; i++) {
      gdouble start = MAX (spans[i].lo, end);
      if (spans[i].hi > start) {
        covered += spans[i].hi - start;
        end = spans[i].hi;
      }
    }
  }

  g_free (spans);
  g_free (blobs);
  return covered / ((gdouble) rows * spec->width);
}

/* ------------------------------------------------------------------------ */
/* Painting */

/* Periodic RGB textures, TEXTURE_SIZE rows of `stride` texels: the first
 * TEXTURE_SIZE texels repeat to the right, so a run of up to `tile_size`
 * texels starting anywhere in the period is one memcpy. */
typedef struct
{
  const WsiTestSlideSpec *spec;
  TissueBlob *blobs;
  guint stride;                 /* texels per texture row */
  guint8 *glass;
  guint8 *tissue[TISSUE_VARIANTS];
} SlidePainter;

static guint8
clamp_u8 (gint v)
{
  return (guint8) CLAMP (v, 0, 255);
}

static void
texture_extend_period (guint8 * tex, guint stride)
{
  guint y, x;

  for (y = 0; y < TEXTURE_SIZE; y++) {
    guint8 *row = tex + (gsize) y * stride * 3;
    for (x = TEXTURE_SIZE; x < stride; x++)
      memcpy (row + x * 3, row + (x & TEXTURE_MASK) * 3, 3);
  }
}

/* One pass of a box blur of radius @r over the TEXTURE_SIZE period of
 * @tex, along rows (@along_rows) or columns, wrapping around so the texture
 * stays seamless; running sums, so the cost does not grow with @r. */
static void
texture_box_pass (guint8 * tex, guint stride, guint r, gboolean along_rows)
{
  gsize step = along_rows ? 3 : (gsize) stride * 3;
  gsize lane_step = along_rows ? (gsize) stride * 3 : 3;
  guint8 *line = g_malloc ((gsize) TEXTURE_SIZE * 3);
  guint lane, i, c, width = 2 * r + 1;

  for (lane = 0; lane < TEXTURE_SIZE; lane++) {
    guint8 *base = tex + lane * lane_step;

    for (i = 0; i < TEXTURE_SIZE; i++)
      memcpy (line + i * 3, base + i * step, 3);
    for (c = 0; c < 3; c++) {
      guint sum = 0;
      gint k;

      for (k = -(gint) r; k <= (gint) r; k++)
        sum += line[((k + TEXTURE_SIZE) & TEXTURE_MASK) * 3 + c];
      for (i = 0; i < TEXTURE_SIZE; i++) {
        base[i * step + c] = (guint8) ((sum + width / 2) / width);
        sum += line[((i + r + 1) & TEXTURE_MASK) * 3 + c];
        sum -= line[((i + TEXTURE_SIZE - r) & TEXTURE_MASK) * 3 + c];
      }
    }
  }
  g_free (line);
}

/* The scanner's optics: nothing in focus is sharper than about half a
 * micron (a box each way: a soft edge of about 1 um). */
static void
texture_optical_blur (guint8 * tex, guint stride, gdouble mpp)
{
  guint r = (guint) MAX (1.0, floor (OPTICAL_BLUR_UM / mpp + 0.5));
  guint pass;

  for (pass = 0; pass < OPTICAL_BLUR_PASSES; pass++) {
    texture_box_pass (tex, stride, r, TRUE);
    texture_box_pass (tex, stride, r, FALSE);
  }
}

/* Glass: (242,242,242) with +-3 grey noise and a faint per-channel tint. */
static guint8 *
glass_texture_new (SlideRandom * rnd, guint stride)
{
  guint8 *tex = g_malloc ((gsize) TEXTURE_SIZE * stride * 3);
  guint x, y;

  for (y = 0; y < TEXTURE_SIZE; y++) {
    for (x = 0; x < TEXTURE_SIZE; x++) {
      guint8 *px = tex + ((gsize) y * stride + x) * 3;
      gint grey = 242 + (gint) (slide_random_next (rnd) % 7) - 3;
      px[0] = clamp_u8 (grey + (gint) (slide_random_next (rnd) % 3) - 1);
      px[1] = clamp_u8 (grey + (gint) (slide_random_next (rnd) % 3) - 1);
      px[2] = clamp_u8 (grey + 1);
    }
  }
  texture_extend_period (tex, stride);
  return tex;
}

/* H&E-like tissue: eosin-pink stroma with noise and darker streaks, and
 * haematoxylin-purple nuclei. Every texel stays clearly saturated (HSV
 * saturation >= ~0.2, glass is ~0.02) so Otsu on saturation separates. */
static guint8 *
tissue_texture_new (SlideRandom * rnd, guint stride, guint variant,
    gdouble mpp)
{
  static const gint stroma[TISSUE_VARIANTS][3] = {
    {232, 160, 200}, {222, 150, 196}, {236, 172, 206}, {214, 140, 190},
  };
  guint8 *tex = g_malloc ((gsize) TEXTURE_SIZE * stride * 3);
  gdouble phase = slide_random_range (rnd, 0, 2 * G_PI);
  gdouble side_um = TEXTURE_SIZE * mpp;
  gdouble fibre_period = TEXTURE_SIZE / MAX (1.0, floor (side_um /
          FIBRE_PERIOD_UM + 0.5));
  guint x, y, n, nuclei;

  for (y = 0; y < TEXTURE_SIZE; y++) {
    for (x = 0; x < TEXTURE_SIZE; x++) {
      guint8 *px = tex + ((gsize) y * stride + x) * 3;
      /* Fibres: a slanted periodic darkening. The period divides the
       * texture side so the texture stays seamless. */
      gdouble fibre = sin ((x + 0.6 * y) * (2 * G_PI / fibre_period) + phase);
      gint shade = (gint) (fibre * 10.0) + (gint) (slide_random_next (rnd) % 17)
          - 8;
      px[0] = clamp_u8 (stroma[variant][0] + shade / 2);
      px[1] = clamp_u8 (stroma[variant][1] + shade);
      px[2] = clamp_u8 (stroma[variant][2] + shade / 2);
    }
  }

  nuclei = (guint) (NUCLEI_PER_UM2 * side_um * side_um * (1.0 + 0.12 *
          variant));
  for (n = 0; n < nuclei; n++) {
    gdouble ncx = slide_random_range (rnd, 0, TEXTURE_SIZE);
    gdouble ncy = slide_random_range (rnd, 0, TEXTURE_SIZE);
    gdouble radius = slide_random_range (rnd, NUCLEUS_RADIUS_MIN_UM,
        NUCLEUS_RADIUS_MAX_UM) / mpp;
    gint dark = (gint) (slide_random_next (rnd) % 40);
    gint r = (gint) ceil (radius), dx, dy;

    for (dy = -r; dy <= r; dy++) {
      for (dx = -r; dx <= r; dx++) {
        guint8 *px;
        if (dx * dx + dy * dy > radius * radius)
          continue;
        /* Wrap around so the texture stays seamless. */
        px = tex + ((gsize) (((gint) ncy + dy) & TEXTURE_MASK) * stride
            + (((gint) ncx + dx) & TEXTURE_MASK)) * 3;
        px[0] = clamp_u8 (120 - dark);
        px[1] = clamp_u8 (62 - dark / 2);
        px[2] = clamp_u8 (158 - dark / 2);
      }
    }
  }
  texture_optical_blur (tex, stride, mpp);
  texture_extend_period (tex, stride);
  return tex;
}

static void
slide_painter_init (SlidePainter * painter, const WsiTestSlideSpec * spec,
    guint max_run)
{
  SlideRandom rnd;
  guint v;

  painter->spec = spec;
  painter->blobs = tissue_blobs_new (spec);
  painter->stride = TEXTURE_SIZE + max_run;
  /* Textures get their own stream so they do not shift blob placement. */
  slide_random_init (&rnd, (guint64) spec->seed ^ G_GUINT64_CONSTANT
      (0x5EED7E57));
  painter->glass = glass_texture_new (&rnd, painter->stride);
  for (v = 0; v < TISSUE_VARIANTS; v++)
    painter->tissue[v] = tissue_texture_new (&rnd, painter->stride, v,
        spec->mpp > 0 ? spec->mpp : DEFAULT_TEXTURE_MPP);
}

static void
slide_painter_clear (SlidePainter * painter)
{
  guint v;

  g_free (painter->blobs);
  g_free (painter->glass);
  for (v = 0; v < TISSUE_VARIANTS; v++)
    g_free (painter->tissue[v]);
  memset (painter, 0, sizeof (*painter));
}

/* Copies texels [x, x + n) of texture row @y into @dst. */
static inline void
texture_copy_run (const SlidePainter * painter, const guint8 * tex, guint x,
    guint y, guint n, guint8 * dst)
{
  const guint8 *src = tex + ((gsize) (y & TEXTURE_MASK) * painter->stride +
      (x & TEXTURE_MASK)) * 3;
  memcpy (dst, src, (gsize) n * 3);
}

/* Paints a w x h block at (x0, y0) of a level of size lw x lh, RGB with
 * @dst_stride bytes per row. Pixels past the level's edge (padding of the
 * last tiles) are glass. w must be <= the painter's max_run. */
static void
slide_painter_paint (const SlidePainter * painter, guint lw, guint lh,
    guint x0, guint y0, guint w, guint h, guint8 * dst, gsize dst_stride)
{
  const WsiTestSlideSpec *spec = painter->spec;
  gdouble ds_x = (gdouble) spec->width / lw;
  gdouble ds_y = (gdouble) spec->height / lh;
  gint64 last_col = MIN ((gint64) x0 + w, (gint64) lw) - 1;
  guint row, i;

  for (row = 0; row < h; row++) {
    guint py = y0 + row;
    guint8 *out = dst + row * dst_stride;
    gdouble y_level0 = (py + 0.5) * ds_y;

    texture_copy_run (painter, painter->glass, x0, py, w, out);
    if (py >= lh)
      continue;

    /* Later blobs paint over earlier ones: tissue is their union. */
    for (i = 0; i < spec->tissue_blobs; i++) {
      gdouble lo, hi;
      gint64 first, last;

      if (!tissue_blob_row_span (&painter->blobs[i], y_level0, &lo, &hi))
        continue;
      /* Level pixels whose centre (px + 0.5) * ds_x lies in [lo, hi]. */
      first = (gint64) ceil (lo / ds_x - 0.5);
      last = (gint64) floor (hi / ds_x - 0.5);
      first = MAX (first, (gint64) x0);
      last = MIN (last, last_col);
      if (first > last)
        continue;
      texture_copy_run (painter, painter->tissue[i % TISSUE_VARIANTS],
          (guint) first, py, (guint) (last - first + 1),
          out + (first - x0) * 3);
    }
  }
}

/* ------------------------------------------------------------------------ */
/* libtiff plumbing: errors of one TIFF handle go to its own GError instead
 * of the process-wide handler (tests run several writers at once). */

typedef struct
{
  TIFF *tif;
  gchar *path;
  gchar *tiff_error;            /* first libtiff error message */
} SlideFile;

static int
slide_file_on_tiff_error (TIFF * tif, void *user_data, const char *module,
    const char *fmt, va_list ap)
{
  SlideFile *file = user_data;

  if (file->tiff_error == NULL)
    file->tiff_error = g_strdup_vprintf (fmt, ap);
  return 1;                     /* handled: do not print */
}

static int
slide_file_on_tiff_warning (TIFF * tif, void *user_data, const char *module,
    const char *fmt, va_list ap)
{
  return 1;                     /* silence */
}

static gboolean
slide_file_open (SlideFile * file, const gchar * path, gboolean bigtiff,
    GError ** error)
{
  TIFFOpenOptions *opts = TIFFOpenOptionsAlloc ();

  memset (file, 0, sizeof (*file));
  file->path = g_strdup (path);
  TIFFOpenOptionsSetErrorHandlerExtR (opts, slide_file_on_tiff_error, file);
  TIFFOpenOptionsSetWarningHandlerExtR (opts, slide_file_on_tiff_warning,
      file);
  file->tif = TIFFOpenExt (path, bigtiff ? "w8" : "w", opts);
  TIFFOpenOptionsFree (opts);

  if (file->tif == NULL) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
        "Could not create test slide %s: %s", path,
        file->tiff_error ? file->tiff_error : "libtiff could not open it");
    g_free (file->tiff_error);
    g_free (file->path);
    return FALSE;
  }
  return TRUE;
}

static gboolean
slide_file_fail (SlideFile * file, const gchar * what, GError ** error)
{
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
      "Could not write test slide %s: %s failed (%s)", file->path, what,
      file->tiff_error ? file->tiff_error : "no libtiff message");
  return FALSE;
}

/* Closes; on failure also removes the partial file. */
static gboolean
slide_file_close (SlideFile * file, gboolean ok)
{
  if (file->tif) {
    TIFFClose (file->tif);
    file->tif = NULL;
  }
  if (ok && file->tiff_error)
    ok = FALSE;
  if (!ok)
    g_unlink (file->path);
  g_free (file->tiff_error);
  g_free (file->path);
  return ok;
}

typedef enum
{
  DIR_JPEG_TILED,
  DIR_JPEG_STRIPPED,
  DIR_LZW_STRIPPED,
} DirKind;

static void
set_rgb_fields (TIFF * tif, guint w, guint h, DirKind kind, gint quality)
{
  TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, (uint32_t) w);
  TIFFSetField (tif, TIFFTAG_IMAGELENGTH, (uint32_t) h);
  TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 8);
  TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 3);
  TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField (tif, TIFFTAG_SOFTWARE, "gst-wsi wsitestslide");
  if (kind == DIR_LZW_STRIPPED) {
    TIFFSetField (tif, TIFFTAG_COMPRESSION, COMPRESSION_LZW);
    TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
    return;
  }
  /* YCbCr 4:2:0 like most scanners; libtiff converts our RGB on the way
   * in (JPEGCOLORMODE_RGB), OpenSlide and libtiff readers convert back. */
  TIFFSetField (tif, TIFFTAG_COMPRESSION, COMPRESSION_JPEG);
  TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_YCBCR);
  TIFFSetField (tif, TIFFTAG_YCBCRSUBSAMPLING, 2, 2);
  TIFFSetField (tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
  TIFFSetField (tif, TIFFTAG_JPEGQUALITY, quality);
}

/* Generic layout: the mpp as TIFF resolution, scaled to the level. */
static void
set_resolution_fields (TIFF * tif, const WsiTestSlideSpec * spec,
    gdouble ds_x, gdouble ds_y)
{
  if (spec->layout != WSI_TEST_LAYOUT_GENERIC)
    return;
  if (spec->resolution_placeholder) {
    TIFFSetField (tif, TIFFTAG_XRESOLUTION, 72.0);
    TIFFSetField (tif, TIFFTAG_YRESOLUTION, 72.0);
    TIFFSetField (tif, TIFFTAG_RESOLUTIONUNIT, RESUNIT_INCH);
  } else if (spec->mpp > 0) {
    /* pixels per centimetre = 10000 um / mpp */
    TIFFSetField (tif, TIFFTAG_XRESOLUTION, 10000.0 / (spec->mpp * ds_x));
    TIFFSetField (tif, TIFFTAG_YRESOLUTION, 10000.0 / (spec->mpp * ds_y));
    TIFFSetField (tif, TIFFTAG_RESOLUTIONUNIT, RESUNIT_CENTIMETER);
  }
}

/* Damaged JPEG data: starts with no SOI marker, so every decoder refuses
 * the tile outright (corrupt data after a valid header would only give a
 * libjpeg warning and a grey tile). */
static gboolean
write_damaged_tile (SlideFile * file, guint tile_index, SlideRandom * rnd,
    guint8 * scratch, gsize size)
{
  gsize i;

  for (i = 0; i < size; i++)
    scratch[i] = (guint8) slide_random_next (rnd);
  scratch[0] = 0x00;
  scratch[1] = 0x42;
  return TIFFWriteRawTile (file->tif, tile_index, scratch, (tmsize_t) size) ==
      (tmsize_t) size;
}

/* Paints the tile at (tx, ty) of a level @ds times smaller than level 0,
 * of size lw x lh, into @buf (tile x tile RGB): each pixel is the mean of
 * the ds x ds level-0 pixels it covers, as scanners derive their pyramid;
 * padding past the level's edge is glass. Level 0 is painted one row of the
 * footprint at a time, in runs of at most a tile (the painter's limit),
 * into @row (tile * ds pixels), and summed into @sums (tile * 3). */
static void
paint_derived_tile (const SlidePainter * painter, guint ds, guint lw,
    guint lh, guint tx, guint ty, guint8 * buf, guint8 * row, guint64 * sums)
{
  const WsiTestSlideSpec *spec = painter->spec;
  guint tile = spec->tile_size;
  guint64 area = (guint64) ds * ds;
  guint inside = tx < lw ? MIN (tile, lw - tx) : 0;
  guint r, k, x, j;

  for (r = 0; r < tile; r++) {
    guint8 *out = buf + (gsize) r * tile * 3;

    /* glass first: the padding keeps it */
    texture_copy_run (painter, painter->glass, tx, ty + r, tile, out);
    if (ty + r >= lh || inside == 0)
      continue;
    memset (sums, 0, (gsize) inside * 3 * sizeof (guint64));
    for (k = 0; k < ds; k++) {
      for (x = 0; x < inside * ds; x += tile)
        slide_painter_paint (painter, spec->width, spec->height,
            tx * ds + x, (ty + r) * ds + k, MIN (tile, inside * ds - x), 1,
            row + (gsize) x * 3, (gsize) inside * ds * 3);
      for (x = 0; x < inside; x++) {
        const guint8 *in = row + (gsize) x * ds * 3;
        guint64 *sum = sums + x * 3;

        for (j = 0; j < ds; j++, in += 3) {
          sum[0] += in[0];
          sum[1] += in[1];
          sum[2] += in[2];
        }
      }
    }
    for (x = 0; x < inside * 3; x++)
      out[x] = (guint8) ((sums[x] + area / 2) / area);
  }
}

/* One tiled JPEG directory for a whole level, painted tile by tile; level
 * @ds > 1 is derived from level 0 (paint_derived_tile). */
static gboolean
write_tiled_level (SlideFile * file, const SlidePainter * painter,
    guint ds, guint lw, guint lh, const gchar * description,
    gboolean reduced, guint damage_every, GError ** error)
{
  const WsiTestSlideSpec *spec = painter->spec;
  guint tile = spec->tile_size;
  gsize tile_bytes = (gsize) tile * tile * 3;
  guint8 *buf = g_malloc (tile_bytes);
  guint8 *row = ds > 1 ? g_malloc (tile_bytes * ds / tile) : NULL;
  guint64 *sums = ds > 1 ? g_new (guint64, tile * 3) : NULL;
  guint tx, ty;
  gboolean ok = TRUE;
  SlideRandom rnd;

  slide_random_init (&rnd, (guint64) spec->seed + 0xDA3A6Eu);
  set_rgb_fields (file->tif, lw, lh, DIR_JPEG_TILED, spec->jpeg_quality);
  TIFFSetField (file->tif, TIFFTAG_TILEWIDTH, (uint32_t) tile);
  TIFFSetField (file->tif, TIFFTAG_TILELENGTH, (uint32_t) tile);
  TIFFSetField (file->tif, TIFFTAG_SUBFILETYPE,
      reduced ? FILETYPE_REDUCEDIMAGE : 0);
  if (description)
    TIFFSetField (file->tif, TIFFTAG_IMAGEDESCRIPTION, description);
  set_resolution_fields (file->tif, spec, (gdouble) spec->width / lw,
      (gdouble) spec->height / lh);

  for (ty = 0; ok && ty < lh; ty += tile) {
    for (tx = 0; ok && tx < lw; tx += tile) {
      guint index = TIFFComputeTile (file->tif, tx, ty, 0, 0);

      if (damage_every > 0 && index % damage_every == 0) {
        ok = write_damaged_tile (file, index, &rnd, buf, 1024 + tile * 4);
      } else {
        if (ds > 1)
          paint_derived_tile (painter, ds, lw, lh, tx, ty, buf, row, sums);
        else
          slide_painter_paint (painter, lw, lh, tx, ty, tile, tile, buf,
              (gsize) tile * 3);
        ok = TIFFWriteEncodedTile (file->tif, index, buf,
            (tmsize_t) tile_bytes) >= 0;
      }
    }
  }
  g_free (buf);
  g_free (row);
  g_free (sums);

  if (!ok)
    return slide_file_fail (file, "writing a tile", error);
  if (!TIFFWriteDirectory (file->tif))
    return slide_file_fail (file, "writing a level directory", error);
  return TRUE;
}

typedef void (*PaintRowsFunc) (gconstpointer data, guint w, guint h,
    guint y0, guint rows, guint8 * dst);

/* One stripped directory (Aperio thumbnail, label, macro). */
static gboolean
write_stripped_image (SlideFile * file, guint w, guint h, DirKind kind,
    gint quality, guint32 subfile_type, const gchar * description,
    PaintRowsFunc paint,
    gconstpointer paint_data, GError ** error)
{
  gsize row_bytes = (gsize) w * 3;
  guint8 *buf = g_malloc (row_bytes * STRIP_ROWS);
  guint y;
  gboolean ok = TRUE;

  set_rgb_fields (file->tif, w, h, kind, quality);
  TIFFSetField (file->tif, TIFFTAG_ROWSPERSTRIP, (uint32_t) STRIP_ROWS);
  TIFFSetField (file->tif, TIFFTAG_SUBFILETYPE, subfile_type);
  if (description)
    TIFFSetField (file->tif, TIFFTAG_IMAGEDESCRIPTION, description);

  for (y = 0; ok && y < h; y += STRIP_ROWS) {
    guint rows = MIN (STRIP_ROWS, h - y);
    paint (paint_data, w, h, y, rows, buf);
    ok = TIFFWriteEncodedStrip (file->tif, y / STRIP_ROWS, buf,
        (tmsize_t) (row_bytes * rows)) >= 0;
  }
  g_free (buf);

  if (!ok)
    return slide_file_fail (file, "writing a strip", error);
  if (!TIFFWriteDirectory (file->tif))
    return slide_file_fail (file, "writing an image directory", error);
  return TRUE;
}

/* The whole slide scaled to w x h (thumbnail, macro). */
static void
paint_overview_rows (gconstpointer data, guint w, guint h, guint y0,
    guint rows, guint8 * dst)
{
  const SlidePainter *painter = data;
  guint x;

  /* The painter copies at most tile_size texels per run. */
  for (x = 0; x < w; x += painter->spec->tile_size) {
    guint run = MIN (painter->spec->tile_size, w - x);
    slide_painter_paint (painter, w, h, x, y0, run, rows, dst + x * 3,
        (gsize) w * 3);
  }
}

/* A white label with dark bars, like a printed barcode. */
static void
paint_label_rows (gconstpointer data, guint w, guint h, guint y0, guint rows,
    guint8 * dst)
{
  guint32 seed = GPOINTER_TO_UINT (data);
  guint x, y;

  for (y = 0; y < rows; y++) {
    guint py = y0 + y;
    gboolean in_code = py > h / 8 && py < h / 2;
    for (x = 0; x < w; x++) {
      guint bar = (x * 7 / MAX (w / 48, 1) + seed) * 2654435761u;
      guint8 v = (in_code && x > w / 10 && x < w * 9 / 10 && (bar >> 29) > 3)
          ? 20 : 250;
      memset (dst + ((gsize) y * w + x) * 3, v, 3);
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Layouts */

static gchar *
format_mpp (gdouble mpp)
{
  gchar buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup (g_ascii_formatd (buf, sizeof (buf), "%.4f", mpp));
}

/* "|AppMag = 40|MPP = 0.2500": AppMag from mpp (10 um / mpp), 20 when the
 * mpp is unknown, MPP left out then. */
static gchar *
aperio_properties (const WsiTestSlideSpec * spec)
{
  guint app_mag = spec->mpp > 0 ? (guint) MAX (1, floor (10.0 / spec->mpp
          + 0.5)) : 20;
  gchar *mpp, *props;

  if (spec->mpp <= 0)
    return g_strdup_printf ("|AppMag = %u|Filename = wsi-test-%u", app_mag,
        spec->seed);
  mpp = format_mpp (spec->mpp);
  props = g_strdup_printf ("|AppMag = %u|Filename = wsi-test-%u|MPP = %s",
      app_mag, spec->seed, mpp);
  g_free (mpp);
  return props;
}

static void
thumbnail_size (const WsiTestSlideSpec * spec, guint * tw, guint * th)
{
  gdouble scale = MIN (1.0, (gdouble) THUMBNAIL_MAX_SIDE /
      MAX (spec->width, spec->height));
  *tw = MAX (1, (guint) (spec->width * scale));
  *th = MAX (1, (guint) (spec->height * scale));
}

static gboolean
write_aperio (SlideFile * file, const SlidePainter * painter,
    guint damage_every, GError ** error)
{
  const WsiTestSlideSpec *spec = painter->spec;
  gchar *props = aperio_properties (spec);
  gchar *desc;
  guint lw, lh, tw, th, level;
  gboolean ok;

  /* Directory 0: level 0, tiled. */
  desc = g_strdup_printf (APERIO_HEADER "%ux%u (%ux%u) JPEG/YCC Q=%d%s",
      spec->width, spec->height, spec->tile_size, spec->tile_size,
      spec->jpeg_quality, props);
  ok = write_tiled_level (file, painter, 1, spec->width, spec->height, desc,
      FALSE, damage_every, error);
  g_free (desc);

  /* Directory 1: the stripped thumbnail OpenSlide expects here. */
  if (ok) {
    thumbnail_size (spec, &tw, &th);
    desc = g_strdup_printf (APERIO_HEADER_ASSOCIATED "%ux%u -> %ux%u - %s",
        spec->width, spec->height, tw, th, props);
    ok = write_stripped_image (file, tw, th, DIR_JPEG_STRIPPED,
        spec->jpeg_quality, 0, desc, paint_overview_rows, painter, error);
    g_free (desc);
  }

  for (level = 1; ok && level < spec->levels; level++) {
    level_size (spec, level, &lw, &lh);
    desc = g_strdup_printf (APERIO_HEADER "%ux%u (%ux%u) -> %ux%u "
        "JPEG/YCC Q=%d%s", spec->width, spec->height, spec->tile_size,
        spec->tile_size, lw, lh, spec->jpeg_quality, props);
    /* Real SVS files mark no level as reduced. */
    ok = write_tiled_level (file, painter, derived_downsample (spec, level),
        lw, lh, desc, FALSE, 0, error);
    g_free (desc);
  }

  /* Associated images, told apart by the word after the header. */
  if (ok) {
    desc = g_strdup_printf (APERIO_HEADER_ASSOCIATED "label %ux%u", 240u, 200u);
    ok = write_stripped_image (file, 240, 200, DIR_LZW_STRIPPED, 0,
        FILETYPE_REDUCEDIMAGE, desc,
        paint_label_rows, GUINT_TO_POINTER (spec->seed), error);
    g_free (desc);
  }
  if (ok) {
    gdouble scale = 640.0 / MAX (spec->width, spec->height);
    guint mw = MAX (1, (guint) (spec->width * scale));
    guint mh = MAX (1, (guint) (spec->height * scale));
    desc = g_strdup_printf (APERIO_HEADER_ASSOCIATED "macro %ux%u", mw, mh);
    ok = write_stripped_image (file, mw, mh, DIR_JPEG_STRIPPED,
        spec->jpeg_quality, APERIO_SUBFILE_MACRO, desc, paint_overview_rows,
        painter, error);
    g_free (desc);
  }

  g_free (props);
  return ok;
}

static gboolean
write_generic (SlideFile * file, const SlidePainter * painter,
    guint damage_every, GError ** error)
{
  const WsiTestSlideSpec *spec = painter->spec;
  guint level, lw, lh;
  gboolean ok = TRUE;

  for (level = 0; ok && level < spec->levels; level++) {
    gchar *desc = NULL;

    level_size (spec, level, &lw, &lh);
    if (level == 0)
      desc = g_strdup_printf ("gst-wsi test slide: seed %u, %u tissue blobs",
          spec->seed, spec->tissue_blobs);
    ok = write_tiled_level (file, painter, derived_downsample (spec, level),
        lw, lh, desc, level > 0, level == 0 ? damage_every : 0, error);
    g_free (desc);
  }
  return ok;
}

static gboolean
write_slide (const gchar * path, const WsiTestSlideSpec * spec,
    guint damage_every, GError ** error)
{
  SlidePainter painter;
  SlideFile file;
  gboolean bigtiff, ok;

  if (!spec_check (spec, error))
    return FALSE;

  bigtiff = (guint64) spec->width * spec->height * 3 > BIGTIFF_RAW_BYTES;
  if (!slide_file_open (&file, path, bigtiff, error))
    return FALSE;

  /* Runs never exceed a tile, or the thumbnail/macro width painted in
   * tile-sized chunks. */
  slide_painter_init (&painter, spec, spec->tile_size);
  if (spec->layout == WSI_TEST_LAYOUT_APERIO)
    ok = write_aperio (&file, &painter, damage_every, error);
  else
    ok = write_generic (&file, &painter, damage_every, error);
  slide_painter_clear (&painter);

  if (!slide_file_close (&file, ok) && ok) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
        "Could not finish test slide %s (disk full?)", path);
    ok = FALSE;
  }
  return ok;
}

gboolean
wsi_test_slide_write (const gchar * path, const WsiTestSlideSpec * spec,
    GError ** error)
{
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (spec != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return write_slide (path, spec, 0, error);
}

gboolean
wsi_test_slide_write_damaged_tiles (const gchar * path,
    const WsiTestSlideSpec * spec, GError ** error)
{
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (spec != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return write_slide (path, spec, 1, error);
}

gboolean
wsi_test_slide_write_partly_damaged (const gchar * path,
    const WsiTestSlideSpec * spec, guint every, GError ** error)
{
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (spec != NULL, FALSE);
  g_return_val_if_fail (every > 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return write_slide (path, spec, every, error);
}

/* ------------------------------------------------------------------------ */
/* Broken files */

gboolean
wsi_test_slide_write_truncated (const gchar * path,
    const WsiTestSlideSpec * spec, gdouble keep_fraction, GError ** error)
{
  GStatBuf st;
  goffset keep;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (spec != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!(keep_fraction >= 0.0 && keep_fraction < 1.0)) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
        "Invalid keep_fraction %g for truncated slide %s: must be in [0, 1)",
        keep_fraction, path);
    return FALSE;
  }
  if (!write_slide (path, spec, FALSE, error))
    return FALSE;

  if (g_stat (path, &st) != 0 ||
      truncate (path, keep = (goffset) (st.st_size * keep_fraction)) != 0) {
    int saved = errno;
    g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
        "Could not truncate test slide %s: %s", path, g_strerror (saved));
    g_unlink (path);
    return FALSE;
  }
  return TRUE;
}

gboolean
wsi_test_slide_write_garbage (const gchar * path, gsize size, guint32 seed,
    GError ** error)
{
  SlideRandom rnd;
  guint8 *bytes;
  gsize i;
  gboolean ok;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  slide_random_init (&rnd, seed);
  bytes = g_malloc (MAX (size, 1));
  for (i = 0; i < size; i++)
    bytes[i] = (guint8) slide_random_next (&rnd);
  /* Never a TIFF ("II", "MM") or JPEG (0xFF 0xD8) signature by chance. */
  if (size > 0)
    bytes[0] = 0x00;
  ok = g_file_set_contents (path, (const gchar *) bytes, (gssize) size, error);
  g_free (bytes);
  return ok;
}

gboolean
wsi_test_slide_write_empty (const gchar * path, GError ** error)
{
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return g_file_set_contents (path, "", 0, error);
}
