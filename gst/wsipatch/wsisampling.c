/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wsisampling.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Rejection draws per patch before the lattice fallback. */
#define ATTEMPTS_PER_PATCH 50
/* Magnification modes: resolutions in a row that fit nowhere on the
 * slide's tissue before the slide is given fewer patches. */
#define MAX_INFEASIBLE_DRAWS 100
/* Cells of the tabulated maxavg density (inverse-CDF sampling). */
#define MAXAVG_CELLS 4096
/* Third RNG keys, so the origin and the permutations of a slide never
 * share a stream with a visit's draws (those use key 0). */
#define KEY_ORIGIN G_GUINT64_CONSTANT (0x4f524947494e)  /* "ORIGIN" */
#define KEY_PERMUTATION G_GUINT64_CONSTANT (0x5045524d)  /* "PERM" */

/* ---- tissue map -------------------------------------------------------- */

/* A slide without a mask: everything is tissue. */
void
wsi_tissue_map_init (WsiTissueMap * map, gint64 slide_width,
    gint64 slide_height)
{
  memset (map, 0, sizeof (*map));
  map->slide_width = slide_width;
  map->slide_height = slide_height;
}

/* The top bit of a mask byte says tissue (the threshold is 128). */
G_STATIC_ASSERT (WSI_TISSUE_THRESHOLD == 128);

/* Whether any of the 8 mask bytes at @p is tissue (top bit set). */
static inline gboolean
word_has_tissue (const guint8 * p)
{
  guint64 word;

  memcpy (&word, p, sizeof (word));
  return (word & G_GUINT64_CONSTANT (0x8080808080808080)) != 0;
}

/* Whether @row (@w bytes) holds a tissue pixel: the row's bytes ORed
 * together, 16 (or 8) at a time, and the top bits tested once. */
static gboolean
row_has_tissue (const guint8 * row, gint64 w)
{
  guint8 tail = 0;
  gint64 x = 0;

#if defined(__SSE2__)
  __m128i any = _mm_setzero_si128 ();

  for (; x + 16 <= w; x += 16)
    any = _mm_or_si128 (any, _mm_loadu_si128 ((const __m128i *) (row + x)));
  if (_mm_movemask_epi8 (any) != 0)
    return TRUE;
#else
  for (; x + 8 <= w; x += 8)
    if (word_has_tissue (row + x))
      return TRUE;
#endif
  for (; x < w; x++)
    tail |= row[x];
  return tail >= WSI_TISSUE_THRESHOLD;
}

/* Widens [*x0, *x1) to the tissue pixels of @row, a row known to hold
 * some (so both scans stop at a tissue pixel); 8 bytes at a time through
 * the glass on either side. */
static void
widen_to_row_tissue (const guint8 * row, gint64 w, gint64 * x0, gint64 * x1)
{
  gint64 first = 0, end = w;

  while (first + 8 <= w && !word_has_tissue (row + first))
    first += 8;
  while (row[first] < WSI_TISSUE_THRESHOLD)
    first++;
  while (end - 8 >= first && !word_has_tissue (row + end - 8))
    end -= 8;
  while (row[end - 1] < WSI_TISSUE_THRESHOLD)
    end--;
  *x0 = MIN (*x0, first);
  *x1 = MAX (*x1, end);
}

/* The tissue bounding box of the mask into @map (empty: x0 = w, x1 = 0). */
static void
find_tissue_box (WsiTissueMap * map, const guint8 * mask, gint64 w, gint64 h)
{
  gint64 x0 = w, y0 = h, x1 = 0, y1 = 0, y;

  for (y = 0; y < h; y++) {
    const guint8 *row = mask + y * w;

    if (row_has_tissue (row, w)) {
      widen_to_row_tissue (row, w, &x0, &x1);
      y0 = MIN (y0, y);
      y1 = y + 1;
    }
  }
  map->tissue_x0 = x0;
  map->tissue_y0 = y0;
  map->tissue_x1 = x1;
  map->tissue_y1 = y1;
}

#if defined(__SSE2__)
/* integral_row's first (w / 16) × 16 pixels, 16 at a time: the tissue
 * bits' prefix sums within the 16 bytes (log-step shifts; at most 16, so
 * bytes hold them), widened to 32 bits and added to the carry and to the
 * row above. Returns the pixels done; *@row_sum gets their tissue count. */
static gint64
integral_row_sse2 (const guint8 * restrict row,
    const guint32 * restrict above, guint32 * restrict out, gint64 w,
    guint32 * row_sum)
{
  const __m128i ones = _mm_set1_epi8 (1), zero = _mm_setzero_si128 ();
  __m128i carry = _mm_setzero_si128 ();
  gint64 x;

  for (x = 0; x + 16 <= w; x += 16) {
    __m128i v = _mm_loadu_si128 ((const __m128i *) (row + x));
    __m128i lo, hi, part[4];
    gint k;

    /* the top bit of each byte (srli by 7 in 16-bit lanes leaves it as
     * bit 0 of its own byte; the other bits are masked away) */
    v = _mm_and_si128 (_mm_srli_epi16 (v, 7), ones);
    v = _mm_add_epi8 (v, _mm_slli_si128 (v, 1));
    v = _mm_add_epi8 (v, _mm_slli_si128 (v, 2));
    v = _mm_add_epi8 (v, _mm_slli_si128 (v, 4));
    v = _mm_add_epi8 (v, _mm_slli_si128 (v, 8));
    lo = _mm_unpacklo_epi8 (v, zero);
    hi = _mm_unpackhi_epi8 (v, zero);
    part[0] = _mm_unpacklo_epi16 (lo, zero);
    part[1] = _mm_unpackhi_epi16 (lo, zero);
    part[2] = _mm_unpacklo_epi16 (hi, zero);
    part[3] = _mm_unpackhi_epi16 (hi, zero);
    for (k = 0; k < 4; k++) {
      __m128i a = _mm_loadu_si128 ((const __m128i *) (above + x + 1 + 4 * k));

      _mm_storeu_si128 ((__m128i *) (out + x + 1 + 4 * k),
          _mm_add_epi32 (_mm_add_epi32 (part[k], carry), a));
    }
    /* the 16 bytes' total (the last prefix) joins the carry */
    carry = _mm_add_epi32 (carry, _mm_shuffle_epi32 (part[3], 0xff));
  }
  *row_sum = (guint32) _mm_cvtsi128_si32 (carry);
  return x;
}
#endif

/* One integral row: @out[x + 1] = @above[x + 1] + tissue pixels of
 * @row[0..x], @out[0] = 0. On disjoint rows (restrict); vectorised
 * where SSE2 is there: this runs over every pixel of the tissue box of
 * every new slide (issue 23). */
static void
integral_row (const guint8 * restrict row, const guint32 * restrict above,
    guint32 * restrict out, gint64 w)
{
  guint32 row_sum = 0;
  gint64 x = 0;

  out[0] = 0;
#if defined(__SSE2__)
  x = integral_row_sse2 (row, above, out, w, &row_sum);
#endif
  for (; x < w; x++) {
    row_sum += row[x] >> 7;
    out[x + 1] = above[x + 1] + row_sum;
  }
}

/* Finds the tissue bounding box of @mask (@w × @h), then fills @integral
 * (room for (@w + 1) × (@h + 1) entries; (box width + 1) × (box height
 * + 1) are used, row 0 and column 0 zero) with the integral image of "mask
 * pixel is tissue" over the box only: outside it there is no tissue, so
 * the work is proportional to the box, not to the slide. */
void
wsi_tissue_map_build (WsiTissueMap * map, guint32 * integral,
    const guint8 * mask, gint64 w, gint64 h)
{
  gint64 box_w, box_h, stride, y;

  find_tissue_box (map, mask, w, h);
  box_w = MAX (map->tissue_x1 - map->tissue_x0, 0);
  box_h = MAX (map->tissue_y1 - map->tissue_y0, 0);
  stride = box_w + 1;
  memset (integral, 0, stride * sizeof (guint32));
  for (y = 0; y < box_h; y++)
    integral_row (mask + (map->tissue_y0 + y) * w + map->tissue_x0,
        integral + y * stride, integral + (y + 1) * stride, box_w);
  map->mask_width = w;
  map->mask_height = h;
  map->integral_stride = stride;
  map->integral = integral;
}

gboolean
wsi_tissue_map_is_blank (const WsiTissueMap * map)
{
  return map->integral != NULL && map->tissue_x1 <= map->tissue_x0;
}

/* Tissue pixels of the mask rectangle [mx0, mx1) × [my0, my1) (inside
 * the mask, mx0 <= mx1, my0 <= my1); its area when the map has no mask. */
guint64
wsi_tissue_map_count (const WsiTissueMap * map, gint64 mx0, gint64 my0,
    gint64 mx1, gint64 my1)
{
  const guint32 *I = map->integral;
  gint64 stride = map->integral_stride, x0, y0, x1, y1;

  if (I == NULL)
    return (guint64) ((mx1 - mx0) * (my1 - my0));
  if (wsi_tissue_map_is_blank (map))
    return 0;
  /* no tissue outside the box: clamp to it, in the integral's frame */
  x0 = CLAMP (mx0, map->tissue_x0, map->tissue_x1) - map->tissue_x0;
  x1 = CLAMP (mx1, map->tissue_x0, map->tissue_x1) - map->tissue_x0;
  y0 = CLAMP (my0, map->tissue_y0, map->tissue_y1) - map->tissue_y0;
  y1 = CLAMP (my1, map->tissue_y0, map->tissue_y1) - map->tissue_y0;
  return (guint64) ((gint64) I[y1 * stride + x1] - I[y0 * stride + x1]
      - I[y1 * stride + x0] + I[y0 * stride + x0]);
}

/* Share of the mask pixels touched by the footprint (x, y, side) that are
 * tissue. The touched rectangle is rounded outwards, so 1.0 means the
 * footprint lies wholly on tissue. */
gdouble
wsi_tissue_map_fraction (const WsiTissueMap * map, gint64 x, gint64 y,
    gint64 side)
{
  gint64 mx0, mx1, my0, my1;

  if (map->integral == NULL)
    return 1.0;

  mx0 = x * map->mask_width / map->slide_width;
  my0 = y * map->mask_height / map->slide_height;
  mx1 = ((x + side) * map->mask_width + map->slide_width - 1) /
      map->slide_width;
  my1 = ((y + side) * map->mask_height + map->slide_height - 1) /
      map->slide_height;
  mx1 = CLAMP (mx1, mx0 + 1, map->mask_width);
  my1 = CLAMP (my1, my0 + 1, map->mask_height);

  return (gdouble) wsi_tissue_map_count (map, mx0, my0, mx1, my1) /
      (gdouble) ((mx1 - mx0) * (my1 - my0));
}

/* Whether the footprint (x, y, side) may be a patch: tissue share at
 * least @min_tissue and, with a region filter, accepted by it (@label
 * gets its label, -1 without a filter). */
gboolean
wsi_tissue_map_accepts (const WsiTissueMap * map, gint64 x, gint64 y,
    gint64 side, gdouble min_tissue, gdouble * fraction, gint32 * label)
{
  *fraction = wsi_tissue_map_fraction (map, x, y, side);
  *label = -1;
  if (*fraction < min_tissue)
    return FALSE;
  if (map->region_filter == NULL)
    return TRUE;
  *label = map->region_filter (map->region_data, x, y, side);
  return *label != WSI_SAMPLE_REJECT;
}

/* Range [*lo, *hi] of left (or top) edges whose footprint can touch the
 * tissue box [t0, t1) (mask pixels) along an axis of @length level-0
 * pixels mapped onto @mask_length mask pixels. */
static void
tissue_axis_range (gint64 t0, gint64 t1, gint64 length, gint64 mask_length,
    gint64 side, gint64 * lo, gint64 * hi)
{
  gint64 first = t0 * length / mask_length - side;
  gint64 last = (t1 * length + mask_length - 1) / mask_length;

  *lo = CLAMP (first, 0, length - side);
  *hi = CLAMP (last, *lo, length - side);
}

/* The box of top-left corners worth drawing from: every position whose
 * footprint can touch tissue (uniform over those that qualify). */
static void
tissue_draw_box (const WsiTissueMap * map, gint64 side, gdouble min_tissue,
    gint64 * x_lo, gint64 * x_hi, gint64 * y_lo, gint64 * y_hi)
{
  *x_lo = *y_lo = 0;
  *x_hi = map->slide_width - side;
  *y_hi = map->slide_height - side;
  if (map->integral != NULL && min_tissue > 0.0) {
    tissue_axis_range (map->tissue_x0, map->tissue_x1, map->slide_width,
        map->mask_width, side, x_lo, x_hi);
    tissue_axis_range (map->tissue_y0, map->tissue_y1, map->slide_height,
        map->mask_height, side, y_lo, y_hi);
  }
}

/* ---- lattices ---------------------------------------------------------- */

/* Candidate top-left corners x0 + i * step, y0 + j * step. */
typedef struct
{
  gint64 x0, y0, step, nx, ny;
} WsiLattice;

static void
lattice_init (WsiLattice * lattice, const WsiTissueMap * map, gint64 side,
    gint64 step, gint64 x0, gint64 y0)
{
  lattice->x0 = x0;
  lattice->y0 = y0;
  lattice->step = step;
  lattice->nx = (map->slide_width - side - x0) / step + 1;
  lattice->ny = (map->slide_height - side - y0) / step + 1;
}

/* A lattice of @step with an origin drawn from @rng below the step, so
 * another key sees other positions. */
static void
lattice_init_random (WsiLattice * lattice, const WsiTissueMap * map,
    gint64 side, gint64 step, WsiRng * rng)
{
  gint64 x0 = wsi_rng_below (rng, MIN (step, map->slide_width - side + 1));
  gint64 y0 = wsi_rng_below (rng, MIN (step, map->slide_height - side + 1));

  lattice_init (lattice, map, side, step, x0, y0);
}

/* Number of lattice positions whose tissue share reaches @min_tissue. */
static guint64
lattice_count_tissue (const WsiLattice * lattice, const WsiTissueMap * map,
    gint64 side, gdouble min_tissue)
{
  guint64 count = 0;
  gint64 i, j;

  if ((map->integral == NULL || min_tissue <= 0.0)
      && map->region_filter == NULL)
    return (guint64) lattice->nx * lattice->ny;
  for (j = 0; j < lattice->ny; j++) {
    gint64 y = lattice->y0 + j * lattice->step;
    for (i = 0; i < lattice->nx; i++) {
      gdouble fraction;
      gint32 label;

      count += wsi_tissue_map_accepts (map, lattice->x0 + i * lattice->step,
          y, side, min_tissue, &fraction, &label);
    }
  }
  return count;
}

/* A rank among the lattice's tissue positions and where its sample goes. */
typedef struct
{
  guint64 rank;
  guint slot;
} RankSlot;

static int
compare_rank (const void *a, const void *b)
{
  const RankSlot *p = a, *q = b;

  if (p->rank != q->rank)
    return p->rank < q->rank ? -1 : 1;
  return (p->slot > q->slot) - (p->slot < q->slot);
}

/* Places samples[wanted[k].slot] at the tissue position of rank
 * wanted[k].rank, for @n ranks sorted ascending: one raster pass, no list
 * of candidates. */
static void
lattice_place (const WsiLattice * lattice, const WsiTissueMap * map,
    gint64 side, gfloat out_mpp, gdouble min_tissue, const RankSlot * wanted,
    guint n, WsiSample * samples)
{
  guint64 rank = 0;
  guint next = 0;
  gint64 i, j;

  for (j = 0; j < lattice->ny && next < n; j++) {
    gint64 y = lattice->y0 + j * lattice->step;
    for (i = 0; i < lattice->nx && next < n; i++) {
      gint64 x = lattice->x0 + i * lattice->step;
      gdouble fraction;
      gint32 label;

      if (!wsi_tissue_map_accepts (map, x, y, side, min_tissue, &fraction,
              &label))
        continue;
      while (next < n && wanted[next].rank == rank) {
        WsiSample *s = &samples[wanted[next++].slot];

        s->x = x;
        s->y = y;
        s->footprint = (guint32) side;
        s->out_mpp = out_mpp;
        s->tissue_fraction = (gfloat) fraction;
        s->label = label;
      }
      rank++;
    }
  }
}

/* ---- random mode, with replacement ------------------------------------ */

static void
samples_shuffle (WsiSample * samples, guint n, WsiRng * rng)
{
  guint i;

  for (i = n; i > 1; i--) {
    guint k = (guint) wsi_rng_below (rng, i);
    WsiSample tmp = samples[i - 1];

    samples[i - 1] = samples[k];
    samples[k] = tmp;
  }
}

/* Rejection sampling in the tissue box, at most @attempts draws. */
static guint
draw_rejection (const WsiTissueMap * map, gint64 side, gfloat out_mpp,
    gdouble min_tissue, guint attempts, WsiRng * rng, WsiSample * samples,
    guint n_wanted)
{
  gint64 x_lo, x_hi, y_lo, y_hi;
  guint n = 0, attempt;

  tissue_draw_box (map, side, min_tissue, &x_lo, &x_hi, &y_lo, &y_hi);
  for (attempt = 0; attempt < attempts && n < n_wanted; attempt++) {
    gint64 x = x_lo + (gint64) wsi_rng_below (rng, x_hi - x_lo + 1);
    gint64 y = y_lo + (gint64) wsi_rng_below (rng, y_hi - y_lo + 1);
    gdouble fraction;
    gint32 label;

    if (wsi_tissue_map_accepts (map, x, y, side, min_tissue, &fraction,
            &label)) {
      samples[n].x = x;
      samples[n].y = y;
      samples[n].footprint = (guint32) side;
      samples[n].out_mpp = out_mpp;
      samples[n].tissue_fraction = (gfloat) fraction;
      samples[n].label = label;
      n++;
    }
  }
  return n;
}

/* Random positions, repeats allowed: rejection sampling, then, when the
 * draws ran out on a slide with little tissue, the rest uniformly (with
 * repeats) from the tissue positions of a lattice of step footprint/4. */
static guint
plan_random_with_replacement (const WsiSamplingRequest * req,
    const WsiTissueMap * map, WsiRng * rng, WsiSample * samples)
{
  guint n_wanted = (guint) req->n_wanted;
  guint attempts = req->max_attempts ? req->max_attempts :
      ATTEMPTS_PER_PATCH * n_wanted;
  gint64 side = req->footprint;
  WsiLattice lattice;
  guint64 n_valid;
  RankSlot *wanted;
  guint n, k;

  n = draw_rejection (map, side, req->out_mpp, req->min_tissue, attempts, rng,
      samples, n_wanted);
  if (n == n_wanted)
    return n;

  lattice_init_random (&lattice, map, side, MAX (side / 4, 1), rng);
  n_valid = lattice_count_tissue (&lattice, map, side, req->min_tissue);
  if (n_valid == 0)
    return n;
  wanted = g_new (RankSlot, n_wanted - n);
  for (k = 0; k < n_wanted - n; k++) {
    wanted[k].rank = wsi_rng_below (rng, n_valid);
    wanted[k].slot = n + k;
  }
  qsort (wanted, n_wanted - n, sizeof (RankSlot), compare_rank);
  lattice_place (&lattice, map, side, req->out_mpp, req->min_tissue, wanted,
      n_wanted - n, samples);
  g_free (wanted);
  samples_shuffle (samples, n_wanted, rng);
  return n_wanted;
}

/* ---- lattice walks without repetition --------------------------------- */

/* Epoch @epoch's order of the @n tissue positions of a slide: a uniform
 * permutation keyed by (seed, slide, epoch) alone. */
static guint32 *
epoch_permutation (const WsiSamplingRequest * req, guint64 epoch, guint32 n)
{
  guint32 *perm = g_new (guint32, n);
  WsiRng rng;
  guint32 i;

  wsi_rng_seed_keys (&rng, req->seed, req->slide_index, epoch,
      KEY_PERMUTATION);
  for (i = 0; i < n; i++)
    perm[i] = i;
  for (i = n; i > 1; i--) {
    guint32 k = (guint32) wsi_rng_below (&rng, i);
    guint32 tmp = perm[i - 1];

    perm[i - 1] = perm[k];
    perm[k] = tmp;
  }
  return perm;
}

/* Epoch of a visit's first position: visit k takes positions
 * [k × c, (k + 1) × c) of the chain of epoch permutations, c = the chunk
 * (at most @n_positions, so a visit never repeats a position). */
guint64
wsi_sampling_epoch (guint64 n_positions, guint64 chunk, guint visit)
{
  guint64 c = MIN (chunk, n_positions);

  return n_positions ? (guint64) visit * c / n_positions : 0;
}

/* Fills @wanted (c entries, slot = k) with the ranks visit @visit takes. */
static void
chunk_ranks (const WsiSamplingRequest * req, guint32 n_valid, guint32 c,
    RankSlot * wanted)
{
  guint64 start = (guint64) req->visit * c;
  guint64 epoch = start / n_valid;
  guint32 offset = (guint32) (start % n_valid);
  guint32 *perm = epoch_permutation (req, epoch, n_valid);
  guint32 k;

  for (k = 0; k < c; k++) {
    if (offset + k == n_valid) {
      /* This epoch is exhausted: the next one is a fresh shuffle. */
      g_free (perm);
      perm = epoch_permutation (req, epoch + 1, n_valid);
    }
    wanted[k].rank = perm[(offset + k) % n_valid];
    wanted[k].slot = k;
  }
  g_free (perm);
}

/* Grid, and random without replacement: the tissue positions of a lattice
 * handed out in chunks of a chain of per-epoch permutations, so a slide's
 * visits walk every position before any repeats. Grid: step stride (or
 * the footprint), origin 0, each visit in raster order. Random: step the
 * footprint (no two patches of an epoch overlap), an origin fixed per
 * slide, shuffled order. */
static guint
plan_lattice_walk (const WsiSamplingRequest * req, const WsiTissueMap * map,
    WsiSample ** samples_out)
{
  gboolean grid = req->mode == WSI_SAMPLING_GRID;
  gint64 side = req->footprint;
  WsiLattice lattice;
  guint64 n_valid, c;
  RankSlot *wanted;
  guint k;

  if (grid) {
    lattice_init (&lattice, map, side, req->stride ? req->stride : side, 0, 0);
  } else {
    WsiRng rng;

    wsi_rng_seed_keys (&rng, req->seed, req->slide_index, 0, KEY_ORIGIN);
    lattice_init_random (&lattice, map, side, side, &rng);
  }
  n_valid = lattice_count_tissue (&lattice, map, side, req->min_tissue);
  c = req->n_wanted < 0 ? n_valid : MIN (n_valid, (guint64) req->n_wanted);
  if (c == 0 || n_valid > G_MAXUINT32 || c > G_MAXUINT32 / sizeof (WsiSample))
    return 0;

  wanted = g_new (RankSlot, c);
  if (c == n_valid && grid) {
    for (k = 0; k < c; k++) {
      wanted[k].rank = k;
      wanted[k].slot = k;
    }
  } else {
    chunk_ranks (req, (guint32) n_valid, (guint32) c, wanted);
    qsort (wanted, c, sizeof (RankSlot), compare_rank);
    if (grid)                   /* raster order: slots follow the ranks */
      for (k = 0; k < c; k++)
        wanted[k].slot = k;
  }
  *samples_out = g_new0 (WsiSample, c);
  lattice_place (&lattice, map, side, req->out_mpp, req->min_tissue, wanted,
      (guint) c, *samples_out);
  g_free (wanted);
  return (guint) c;
}

/* ---- magnification modes ----------------------------------------------- */

guint32
wsi_sampling_footprint (guint out_size, gdouble mpp, gdouble slide_mpp,
    gfloat * out_mpp)
{
  gdouble side = MAX (1.0, round (out_size * mpp / slide_mpp));

  /* Whole level-0 pixels: the record says what the rounding gives. */
  *out_mpp = (gfloat) (side * slide_mpp / out_size);
  return (guint32) MIN (side, (gdouble) G_MAXUINT32);
}

/* One position on tissue for footprint @side: rejection draws, then a
 * uniform pick among the tissue positions of a lattice of step side/4
 * (slides with little tissue). FALSE when no position qualifies. */
static gboolean
draw_one_position (const WsiTissueMap * map, gint64 side, gfloat out_mpp,
    gdouble min_tissue, guint attempts, WsiRng * rng, WsiSample * sample)
{
  WsiLattice lattice;
  guint64 n_valid;
  RankSlot wanted;

  if (side > map->slide_width || side > map->slide_height)
    return FALSE;
  if (draw_rejection (map, side, out_mpp, min_tissue, attempts, rng, sample,
          1) == 1)
    return TRUE;
  lattice_init (&lattice, map, side, MAX (side / 4, 1), 0, 0);
  n_valid = lattice_count_tissue (&lattice, map, side, min_tissue);
  if (n_valid == 0)
    return FALSE;
  wanted.rank = wsi_rng_below (rng, n_valid);
  wanted.slot = 0;
  lattice_place (&lattice, map, side, out_mpp, min_tissue, &wanted, 1, sample);
  return TRUE;
}

/* Multi- and continuous magnification: each patch draws its resolution,
 * then its position on tissue at that resolution. A resolution whose
 * footprint fits nowhere on this slide's tissue is drawn again (the
 * distribution is thus conditioned on what the slide can give). */
static guint
plan_magnification (const WsiSamplingRequest * req, const WsiTissueMap * map,
    WsiRng * rng, WsiSample * samples)
{
  guint n_wanted = (guint) req->n_wanted;
  guint attempts = req->max_attempts ?
      MAX (1, req->max_attempts / n_wanted) : ATTEMPTS_PER_PATCH;
  guint n = 0, infeasible = 0;

  while (n < n_wanted && infeasible < MAX_INFEASIBLE_DRAWS) {
    gdouble mpp = wsi_mpp_distribution_draw (req->mpps, rng);
    gfloat out_mpp;
    guint32 side = wsi_sampling_footprint (req->out_size, mpp,
        req->slide_mpp, &out_mpp);

    if (draw_one_position (map, side, out_mpp, req->min_tissue, attempts,
            rng, &samples[n])) {
      n++;
      infeasible = 0;
    } else {
      infeasible++;
    }
  }
  return n;
}

/* ---- dispatch ---------------------------------------------------------- */

typedef guint (*WsiPlanFunc) (const WsiSamplingRequest * req,
    const WsiTissueMap * map, WsiSample ** samples);

static guint
plan_random (const WsiSamplingRequest * req, const WsiTissueMap * map,
    WsiSample ** samples)
{
  WsiRng rng;

  if (!req->replacement)
    return plan_lattice_walk (req, map, samples);
  wsi_rng_seed (&rng, req->seed, req->slide_index, req->visit);
  *samples = g_new0 (WsiSample, req->n_wanted);
  return plan_random_with_replacement (req, map, &rng, *samples);
}

static guint
plan_grid (const WsiSamplingRequest * req, const WsiTissueMap * map,
    WsiSample ** samples)
{
  return plan_lattice_walk (req, map, samples);
}

static guint
plan_mpp_draws (const WsiSamplingRequest * req, const WsiTissueMap * map,
    WsiSample ** samples)
{
  WsiRng rng;

  if (req->mpps == NULL || req->slide_mpp <= 0.0)
    return 0;
  wsi_rng_seed (&rng, req->seed, req->slide_index, req->visit);
  *samples = g_new0 (WsiSample, req->n_wanted);
  return plan_magnification (req, map, &rng, *samples);
}

static const WsiPlanFunc plan_functions[WSI_SAMPLING_N_MODES] = {
  [WSI_SAMPLING_RANDOM] = plan_random,
  [WSI_SAMPLING_GRID] = plan_grid,
  [WSI_SAMPLING_MULTI_MAGNIFICATION] = plan_mpp_draws,
  [WSI_SAMPLING_CONTINUOUS_MAGNIFICATION] = plan_mpp_draws,
};

/* Plans one slide visit. Returns the samples (g_free) and their number in
 * @n_samples, or NULL when no position qualifies. n_wanted must be > 0
 * except in grid mode (-1: every cell). */
WsiSample *
wsi_sampling_plan (const WsiSamplingRequest * req, const WsiTissueMap * map,
    guint * n_samples)
{
  WsiSample *samples = NULL;
  guint n = 0;

  *n_samples = 0;
  g_return_val_if_fail (req->mode < WSI_SAMPLING_N_MODES, NULL);
  if (req->min_tissue > 0.0 && wsi_tissue_map_is_blank (map))
    return NULL;
  if (req->n_wanted == 0 || (req->n_wanted < 0 && req->mode !=
          WSI_SAMPLING_GRID))
    return NULL;
  n = plan_functions[req->mode] (req, map, &samples);
  if (n == 0) {
    g_free (samples);
    return NULL;
  }
  *n_samples = n;
  return samples;
}

/* ---- resolution distributions ------------------------------------------ */

struct _WsiMppDistribution
{
  gboolean discrete;
  WsiMppDensity density;
  gdouble lo, hi, lambda;
  guint n;                      /* values / cells */
  gdouble *values;              /* discrete: the mpps */
  gdouble *cumulative;          /* normalised CDF at the end of each entry */
};

WsiMppDistribution *
wsi_mpp_distribution_new_discrete (const gdouble * mpps,
    const gdouble * weights, guint n)
{
  WsiMppDistribution *dist;
  gdouble total = 0.0;
  guint i;

  g_return_val_if_fail (n > 0, NULL);
  dist = g_new0 (WsiMppDistribution, 1);
  dist->discrete = TRUE;
  dist->n = n;
  dist->values = g_memdup2 (mpps, n * sizeof (gdouble));
  dist->cumulative = g_new (gdouble, n);
  for (i = 0; i < n; i++) {
    total += weights ? weights[i] : 1.0;
    dist->cumulative[i] = total;
  }
  for (i = 0; i < n; i++)
    dist->cumulative[i] /= total;
  dist->lo = dist->hi = mpps[0];
  for (i = 0; i < n; i++) {
    dist->lo = MIN (dist->lo, mpps[i]);
    dist->hi = MAX (dist->hi, mpps[i]);
  }
  return dist;
}

/* K̄(x) = ∫_lo^hi (min (x, y) / max (x, y))² dy = 4x/3 - lo³/(3x²) - x²/hi:
 * how much a patch at x teaches about every other resolution of the range
 * (Moellers et al. 2026, the information kernel's transfer potential). */
gdouble
wsi_mpp_transfer_potential (gdouble x, gdouble lo, gdouble hi)
{
  return 4.0 * x / 3.0 - lo * lo * lo / (3.0 * x * x) - x * x / hi;
}

/* minmax: the distribution p maximising min_x ∫ K(x, y) p(y) dy. In
 * u = ln x the kernel is exp (-2 |u - v|), whose equalising measure on an
 * interval is density 1 in u plus an atom of 1/2 at each end; normalised,
 * each end weighs 1 / (2 (1 + ln (hi / lo))) and the rest is log-uniform.
 * (It equals the peer's LP solution on its grid to 1e-3.) */
gdouble
wsi_mpp_minmax_end_weight (gdouble lo, gdouble hi)
{
  return 1.0 / (2.0 * (1.0 + log (hi / lo)));
}

WsiMppDistribution *
wsi_mpp_distribution_new_continuous (WsiMppDensity density, gdouble lo,
    gdouble hi, gdouble lambda)
{
  WsiMppDistribution *dist;

  g_return_val_if_fail (lo > 0.0 && hi > lo, NULL);
  dist = g_new0 (WsiMppDistribution, 1);
  dist->density = density;
  dist->lo = lo;
  dist->hi = hi;
  dist->lambda = lambda;
  if (density == WSI_MPP_MAXAVG) {
    gdouble width = (hi - lo) / MAXAVG_CELLS, peak = -G_MAXDOUBLE, total = 0;
    guint i;

    /* exp (K̄ / λ) at cell midpoints, shifted by the peak for range. */
    dist->n = MAXAVG_CELLS;
    dist->cumulative = g_new (gdouble, MAXAVG_CELLS);
    for (i = 0; i < MAXAVG_CELLS; i++) {
      dist->cumulative[i] = wsi_mpp_transfer_potential (lo + (i + 0.5) *
          width, lo, hi) / lambda;
      peak = MAX (peak, dist->cumulative[i]);
    }
    for (i = 0; i < MAXAVG_CELLS; i++) {
      total += exp (dist->cumulative[i] - peak);
      dist->cumulative[i] = total;
    }
    for (i = 0; i < MAXAVG_CELLS; i++)
      dist->cumulative[i] /= total;
  }
  return dist;
}

void
wsi_mpp_distribution_free (WsiMppDistribution * dist)
{
  if (dist == NULL)
    return;
  g_free (dist->values);
  g_free (dist->cumulative);
  g_free (dist);
}

/* First entry whose cumulative weight exceeds @u. */
static guint
cumulative_search (const gdouble * cumulative, guint n, gdouble u)
{
  guint lo = 0, hi = n - 1;

  while (lo < hi) {
    guint mid = (lo + hi) / 2;

    if (cumulative[mid] > u)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* One resolution; consumes exactly one number from @rng. */
gdouble
wsi_mpp_distribution_draw (const WsiMppDistribution * dist, WsiRng * rng)
{
  gdouble u = wsi_rng_uniform (rng);

  if (dist->discrete)
    return dist->values[cumulative_search (dist->cumulative, dist->n, u)];
  switch (dist->density) {
    case WSI_MPP_MAXAVG:{
      /* Inverse CDF, linear inside a cell (density constant there). */
      guint i = cumulative_search (dist->cumulative, dist->n, u);
      gdouble before = i ? dist->cumulative[i - 1] : 0.0;
      gdouble mass = dist->cumulative[i] - before;
      gdouble t = mass > 0.0 ? (u - before) / mass : 0.5;

      return dist->lo + (i + CLAMP (t, 0.0, 1.0)) * (dist->hi - dist->lo) /
          dist->n;
    }
    case WSI_MPP_MINMAX:{
      gdouble end = wsi_mpp_minmax_end_weight (dist->lo, dist->hi);

      if (u < end)
        return dist->lo;
      if (u < 2.0 * end)
        return dist->hi;
      return dist->lo * pow (dist->hi / dist->lo, (u - 2.0 * end) /
          (1.0 - 2.0 * end));
    }
    case WSI_MPP_UNIFORM:
    default:
      return dist->lo + (dist->hi - dist->lo) * u;
  }
}

/* The finest resolution the distribution can give. */
gdouble
wsi_mpp_distribution_min (const WsiMppDistribution * dist)
{
  return dist->lo;
}

/* Parses "0.25,0.5,1,2" (commas, optional spaces) into @values (gdouble),
 * every entry a finite number > 0. On failure sets @error (g_free) to a
 * sentence naming the bad entry. */
gboolean
wsi_sampling_parse_list (const gchar * text, GArray * values, gchar ** error)
{
  gchar **items;
  guint i;

  g_array_set_size (values, 0);
  items = g_strsplit (text ? text : "", ",", -1);
  for (i = 0; items[i] != NULL; i++) {
    gchar *item = g_strstrip (items[i]);
    gchar *end = NULL;
    gdouble v = g_ascii_strtod (item, &end);

    if (*item == '\0' || end == item || *end != '\0' || !isfinite (v)
        || v <= 0.0) {
      *error = g_strdup_printf ("entry %u (\"%s\") is not a number > 0",
          i + 1, item);
      g_strfreev (items);
      return FALSE;
    }
    g_array_append_val (values, v);
  }
  g_strfreev (items);
  if (values->len == 0) {
    *error = g_strdup ("the list is empty");
    return FALSE;
  }
  return TRUE;
}

/* ---- finite runs -------------------------------------------------------- */

/* The stream's quota: max-patches (-1: none), and with rank-quota the
 * smallest rank's slides × patches per slide, the smaller winning. */
gint64
wsi_quota_decide (gint64 max_patches, gboolean rank_quota,
    guint rank_slides_min, gint patches_per_slide)
{
  gint64 share;

  if (!rank_quota)
    return max_patches;
  share = (gint64) rank_slides_min * MAX (patches_per_slide, 0);
  return max_patches < 0 ? share : MIN (max_patches, share);
}

/* Patches still allowed: the quota minus what will reach the consumer
 * (planned minus reported drops); -1 without a quota. */
gint64
wsi_quota_left (gint64 quota, guint64 planned, guint64 dropped)
{
  if (quota < 0)
    return -1;
  return MAX (quota - ((gint64) planned - (gint64) dropped), 0);
}
