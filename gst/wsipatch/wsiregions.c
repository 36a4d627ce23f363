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
#include <string.h>

#include "wsiregions.h"

/* Index size: about this many cells per region, at most MAX_CELLS, and
 * coarsened until the cell lists hold at most MAX_ITEMS_PER_REGION items
 * per region (or MIN_ITEM_BUDGET), so huge overlapping regions stay cheap
 * to index. */
#define CELLS_PER_REGION 4.0
#define MAX_CELLS_PER_AXIS 1024
#define MAX_ITEMS_PER_REGION 16
#define MIN_ITEM_BUDGET (1u << 22)
/* Uniform points tried in a region's box before another region is drawn. */
#define POINT_TRIES 64
#define REGION_TRIES 16

typedef struct
{
  guint32 first_point;
  guint32 n_points;
} Ring;

typedef struct
{
  guint32 first_ring;
  guint32 n_rings;
  gint32 role;                  /* class id, WSI_REGION_EXCLUDED */
  guint32 order;                /* position in the file */
  gdouble area;                 /* outline minus holes */
  gdouble x0, y0, x1, y1;       /* box of the outline */
} Region;

/* The regions of one role, for draws ∝ area. */
typedef struct
{
  guint32 *members;
  gdouble *cumulative;          /* running sum of areas */
  guint n;
} Pool;

struct _WsiRegions
{
  Region *regions;
  guint n_regions;
  Ring *rings;
  WsiRegionPoint *points;
  WsiOverlapRule rule;
  gint64 width, height;
  /* uniform grid index: cell (i, j) lists the regions whose box meets it */
  guint gx, gy;
  gdouble cell_w, cell_h;
  guint32 *cell_start;          /* gx * gy + 1 */
  guint32 *items;
  /* pools[c] for class id c, any = every sampled region */
  Pool *pools;
  guint n_pools;
  Pool any;
  guint n_sampled;
};

/* ---- building ----------------------------------------------------------- */

static gdouble
ring_area (const WsiRegionPoint * p, guint n)
{
  gdouble twice = 0.0;
  guint i;

  for (i = 0; i < n; i++) {
    const WsiRegionPoint *a = &p[i], *b = &p[(i + 1) % n];

    twice += a->x * b->y - b->x * a->y;
  }
  return fabs (twice) / 2.0;
}

/* Counts what the bytes hold, so everything is allocated once. */
static gboolean
count_polygons (const guint8 * data, gsize size, guint * n_regions,
    guint * n_rings, gsize * n_points)
{
  gsize offset = 0;

  *n_regions = *n_rings = 0;
  *n_points = 0;
  while (offset < size) {
    const WsiRegionHeader *header = NULL;
    const guint8 *ring = NULL;
    guint32 r;

    if (!wsi_region_next (data, size, &offset, &header, &ring))
      return FALSE;
    (*n_regions)++;
    *n_rings += header->n_rings;
    for (r = 0; r < header->n_rings; r++) {
      guint32 n = ((const WsiRegionRing *) ring)->n_points;

      *n_points += n;
      ring += sizeof (WsiRegionRing) + n * sizeof (WsiRegionPoint);
    }
  }
  return TRUE;
}

static void
region_add (WsiRegions * r, const WsiRegionHeader * header,
    const guint8 * ring_data, gint32 role, guint32 order, guint * ring_at,
    gsize * point_at)
{
  Region *region = &r->regions[r->n_regions++];
  guint32 k;

  region->first_ring = *ring_at;
  region->n_rings = header->n_rings;
  region->role = role;
  region->order = order;
  region->area = 0.0;
  for (k = 0; k < header->n_rings; k++) {
    const WsiRegionRing *ring = (const WsiRegionRing *) ring_data;
    const WsiRegionPoint *p = (const WsiRegionPoint *) (ring + 1);
    gdouble area = ring_area (p, ring->n_points);
    guint32 i;

    r->rings[*ring_at].first_point = (guint32) * point_at;
    r->rings[*ring_at].n_points = ring->n_points;
    (*ring_at)++;
    memcpy (r->points + *point_at, p, ring->n_points * sizeof (*p));
    *point_at += ring->n_points;
    region->area += k == 0 ? area : -area;
    if (k == 0) {
      region->x0 = region->x1 = p[0].x;
      region->y0 = region->y1 = p[0].y;
      for (i = 1; i < ring->n_points; i++) {
        region->x0 = MIN (region->x0, p[i].x);
        region->y0 = MIN (region->y0, p[i].y);
        region->x1 = MAX (region->x1, p[i].x);
        region->y1 = MAX (region->y1, p[i].y);
      }
    }
    ring_data += sizeof (WsiRegionRing) + ring->n_points * sizeof (*p);
  }
  region->area = MAX (region->area, 0.0);
}

/* Cell range [*i0, *i1] × [*j0, *j1] met by the box. */
static void
index_cells (const WsiRegions * r, gdouble x0, gdouble y0, gdouble x1,
    gdouble y1, guint * i0, guint * j0, guint * i1, guint * j1)
{
  *i0 = (guint) CLAMP (floor (x0 / r->cell_w), 0, r->gx - 1);
  *i1 = (guint) CLAMP (floor (x1 / r->cell_w), 0, r->gx - 1);
  *j0 = (guint) CLAMP (floor (y0 / r->cell_h), 0, r->gy - 1);
  *j1 = (guint) CLAMP (floor (y1 / r->cell_h), 0, r->gy - 1);
}

static guint64
index_count_items (WsiRegions * r)
{
  guint64 total = 0;
  guint k, i0, j0, i1, j1;

  for (k = 0; k < r->n_regions; k++) {
    const Region *g = &r->regions[k];

    index_cells (r, g->x0, g->y0, g->x1, g->y1, &i0, &j0, &i1, &j1);
    total += (guint64) (i1 - i0 + 1) * (j1 - j0 + 1);
  }
  return total;
}

static void
index_build (WsiRegions * r)
{
  gdouble side = sqrt ((gdouble) r->width * r->height /
      MAX (1.0, CELLS_PER_REGION * r->n_regions));
  guint64 budget = MAX ((guint64) MAX_ITEMS_PER_REGION * r->n_regions,
      MIN_ITEM_BUDGET), total;
  guint k, i, j, i0, j0, i1, j1, *fill;

  r->gx = (guint) CLAMP (ceil (r->width / MAX (side, 1.0)), 1,
      MAX_CELLS_PER_AXIS);
  r->gy = (guint) CLAMP (ceil (r->height / MAX (side, 1.0)), 1,
      MAX_CELLS_PER_AXIS);
  for (;;) {
    r->cell_w = (gdouble) r->width / r->gx;
    r->cell_h = (gdouble) r->height / r->gy;
    total = index_count_items (r);
    if (total <= budget || (r->gx == 1 && r->gy == 1))
      break;
    r->gx = MAX (1, r->gx / 2);
    r->gy = MAX (1, r->gy / 2);
  }

  r->cell_start = g_new0 (guint32, (gsize) r->gx * r->gy + 1);
  r->items = g_new (guint32, MAX (total, 1));
  for (k = 0; k < r->n_regions; k++) {
    const Region *g = &r->regions[k];

    index_cells (r, g->x0, g->y0, g->x1, g->y1, &i0, &j0, &i1, &j1);
    for (j = j0; j <= j1; j++)
      for (i = i0; i <= i1; i++)
        r->cell_start[j * r->gx + i + 1]++;
  }
  for (k = 0; k < r->gx * r->gy; k++)
    r->cell_start[k + 1] += r->cell_start[k];
  fill = g_new0 (guint, (gsize) r->gx * r->gy);
  for (k = 0; k < r->n_regions; k++) {
    const Region *g = &r->regions[k];

    index_cells (r, g->x0, g->y0, g->x1, g->y1, &i0, &j0, &i1, &j1);
    for (j = j0; j <= j1; j++)
      for (i = i0; i <= i1; i++) {
        guint cell = j * r->gx + i;

        r->items[r->cell_start[cell] + fill[cell]++] = k;
      }
  }
  g_free (fill);
}

/* Regions smaller than @min_area (level-0 px²) are left out of the draws:
 * under the coverage rule they can never cover enough of a footprint. */
static void
pool_build (Pool * pool, const WsiRegions * r, gint32 role, gboolean any,
    gdouble min_area)
{
  gdouble total = 0.0;
  guint k;

  pool->members = g_new (guint32, MAX (r->n_regions, 1));
  pool->cumulative = g_new (gdouble, MAX (r->n_regions, 1));
  pool->n = 0;
  for (k = 0; k < r->n_regions; k++) {
    const Region *g = &r->regions[k];

    if (g->area <= 0.0 || g->area < min_area
        || (any ? g->role < 0 : g->role != role))
      continue;
    total += g->area;
    pool->members[pool->n] = k;
    pool->cumulative[pool->n++] = total;
  }
}

static void
pools_clear (WsiRegions * r)
{
  guint k;

  for (k = 0; k < r->n_pools; k++) {
    g_free (r->pools[k].members);
    g_free (r->pools[k].cumulative);
  }
  g_free (r->any.members);
  g_free (r->any.cumulative);
}

static void
pools_build (WsiRegions * r, gdouble min_area)
{
  guint k;

  for (k = 0; k < r->n_pools; k++)
    pool_build (&r->pools[k], r, (gint32) k, FALSE, min_area);
  pool_build (&r->any, r, 0, TRUE, min_area);
}

/* Draws (wsi_regions_draw_point) skip regions whose area is below
 * @min_area; their class areas count only the others. */
void
wsi_regions_set_min_draw_area (WsiRegions * r, gdouble min_area)
{
  pools_clear (r);
  pools_build (r, min_area);
}

WsiRegions *
wsi_regions_new (const guint8 * data, gsize size, const gint32 * roles,
    guint n_roles, gint64 slide_width, gint64 slide_height,
    WsiOverlapRule rule)
{
  WsiRegions *r;
  guint n_regions, n_rings, ring_at = 0, order = 0, k;
  gsize n_points, point_at = 0, offset = 0;
  gint32 max_class = -1;

  if (!count_polygons (data, size, &n_regions, &n_rings, &n_points)
      || slide_width <= 0 || slide_height <= 0)
    return NULL;
  r = g_new0 (WsiRegions, 1);
  r->regions = g_new (Region, MAX (n_regions, 1));
  r->rings = g_new (Ring, MAX (n_rings, 1));
  r->points = g_new (WsiRegionPoint, MAX (n_points, 1));
  r->rule = rule;
  r->width = slide_width;
  r->height = slide_height;
  while (offset < size) {
    const WsiRegionHeader *header = NULL;
    const guint8 *ring = NULL;
    gint32 role;

    wsi_region_next (data, size, &offset, &header, &ring);
    role = header->class_index < n_roles ? roles[header->class_index] :
        WSI_REGION_IGNORED;
    if (role != WSI_REGION_IGNORED)
      region_add (r, header, ring, role, order, &ring_at, &point_at);
    order++;
  }
  index_build (r);

  for (k = 0; k < r->n_regions; k++) {
    max_class = MAX (max_class, r->regions[k].role);
    r->n_sampled += r->regions[k].role >= 0;
  }
  r->n_pools = (guint) (max_class + 1);
  r->pools = g_new0 (Pool, MAX (r->n_pools, 1));
  pools_build (r, 0.0);
  return r;
}

void
wsi_regions_free (WsiRegions * r)
{
  if (r == NULL)
    return;
  pools_clear (r);
  g_free (r->pools);
  g_free (r->cell_start);
  g_free (r->items);
  g_free (r->regions);
  g_free (r->rings);
  g_free (r->points);
  g_free (r);
}

guint
wsi_regions_n_sampled (const WsiRegions * r)
{
  return r->n_sampled;
}

gdouble
wsi_regions_class_area (const WsiRegions * r, gint32 class_id)
{
  const Pool *pool;

  if (class_id < 0 || (guint) class_id >= r->n_pools)
    return 0.0;
  pool = &r->pools[class_id];
  return pool->n ? pool->cumulative[pool->n - 1] : 0.0;
}

/* ---- geometry ----------------------------------------------------------- */

/* Even-odd over every ring: inside the outline and outside its holes. */
static gboolean
region_contains (const WsiRegions * r, const Region * g, gdouble x, gdouble y)
{
  gboolean inside = FALSE;
  guint k, i, j;

  if (x < g->x0 || x > g->x1 || y < g->y0 || y > g->y1)
    return FALSE;
  for (k = 0; k < g->n_rings; k++) {
    const Ring *ring = &r->rings[g->first_ring + k];
    const WsiRegionPoint *p = r->points + ring->first_point;
    guint n = ring->n_points;

    for (i = 0, j = n - 1; i < n; j = i++) {
      if ((p[i].y > y) != (p[j].y > y) &&
          x < (p[j].x - p[i].x) * (y - p[i].y) / (p[j].y - p[i].y) + p[i].x)
        inside = !inside;
    }
  }
  return inside;
}

/* Growable scratch of points for clipping. */
typedef struct
{
  WsiRegionPoint *p;
  guint n, capacity;
} PointBuffer;

static void
buffer_push (PointBuffer * b, gdouble x, gdouble y)
{
  if (b->n == b->capacity) {
    b->capacity = MAX (16, b->capacity * 2);
    b->p = g_renew (WsiRegionPoint, b->p, b->capacity);
  }
  b->p[b->n].x = x;
  b->p[b->n].y = y;
  b->n++;
}

/* Distance of @p inside the clip edge (>= 0 is inside): edge 0 x >= v,
 * 1 x <= v, 2 y >= v, 3 y <= v. */
static gdouble
edge_inside (const WsiRegionPoint * p, guint edge, gdouble v)
{
  switch (edge) {
    case 0:
      return p->x - v;
    case 1:
      return v - p->x;
    case 2:
      return p->y - v;
    default:
      return v - p->y;
  }
}

/* One Sutherland-Hodgman pass (a half-plane: exact for any simple ring;
 * the result may hold zero-width slivers, which add no area). */
static void
clip_pass (const PointBuffer * in, PointBuffer * out, guint edge, gdouble v)
{
  guint i;

  out->n = 0;
  for (i = 0; i < in->n; i++) {
    const WsiRegionPoint *a = &in->p[i], *b = &in->p[(i + 1) % in->n];
    gdouble da = edge_inside (a, edge, v), db = edge_inside (b, edge, v);

    if (da >= 0)
      buffer_push (out, a->x, a->y);
    if ((da >= 0) != (db >= 0)) {
      gdouble t = da / (da - db);

      buffer_push (out, a->x + t * (b->x - a->x), a->y + t * (b->y - a->y));
    }
  }
}

static gdouble
ring_clipped_area (const WsiRegionPoint * p, guint n, gdouble x0, gdouble y0,
    gdouble x1, gdouble y1, PointBuffer * a, PointBuffer * b)
{
  const gdouble bounds[4] = { x0, x1, y0, y1 };
  guint edge;

  a->n = 0;
  for (edge = 0; edge < n; edge++)
    buffer_push (a, p[edge].x, p[edge].y);
  for (edge = 0; edge < 4 && a->n > 0; edge++) {
    PointBuffer tmp;

    clip_pass (a, b, edge, bounds[edge]);
    tmp = *a;
    *a = *b;
    *b = tmp;
  }
  return a->n >= 3 ? ring_area (a->p, a->n) : 0.0;
}

gdouble
wsi_regions_coverage (const WsiRegions * r, guint region, gdouble x,
    gdouble y, gdouble side)
{
  const Region *g = &r->regions[region];
  PointBuffer a = { NULL, 0, 0 }, b = { NULL, 0, 0 };
  gdouble area = 0.0;
  guint k;

  if (g->x1 <= x || g->x0 >= x + side || g->y1 <= y || g->y0 >= y + side)
    return 0.0;
  if (g->x0 >= x && g->x1 <= x + side && g->y0 >= y && g->y1 <= y + side)
    return g->area / (side * side);
  for (k = 0; k < g->n_rings; k++) {
    const Ring *ring = &r->rings[g->first_ring + k];
    gdouble part = ring_clipped_area (r->points + ring->first_point,
        ring->n_points, x, y, x + side, y + side, &a, &b);

    area += k == 0 ? part : -part;
  }
  g_free (a.p);
  g_free (b.p);
  return CLAMP (area / (side * side), 0.0, 1.0);
}

/* TRUE when region @a labels a patch rather than @b under the rule. */
static gboolean
region_wins (const WsiRegions * r, guint a, guint b)
{
  const Region *ga = &r->regions[a], *gb = &r->regions[b];

  switch (r->rule) {
    case WSI_OVERLAP_SMALLEST:
      if (ga->area != gb->area)
        return ga->area < gb->area;
      break;
    case WSI_OVERLAP_LARGEST:
      if (ga->area != gb->area)
        return ga->area > gb->area;
      break;
    case WSI_OVERLAP_LAST:
      return ga->order > gb->order;
    case WSI_OVERLAP_FIRST:
    default:
      break;
  }
  return ga->order < gb->order;
}

static gint32
classify_centre (const WsiRegions * r, gdouble cx, gdouble cy, guint * out)
{
  guint i0, j0, i1, j1, k, best = G_MAXUINT;

  index_cells (r, cx, cy, cx, cy, &i0, &j0, &i1, &j1);
  for (k = r->cell_start[j0 * r->gx + i0];
      k < r->cell_start[j0 * r->gx + i0 + 1]; k++) {
    guint id = r->items[k];

    if (!region_contains (r, &r->regions[id], cx, cy))
      continue;
    if (r->regions[id].role == WSI_REGION_EXCLUDED)
      return WSI_CLASS_NONE;
    if (best == G_MAXUINT || region_wins (r, id, best))
      best = id;
  }
  if (best == G_MAXUINT)
    return WSI_CLASS_NONE;
  *out = best;
  return r->regions[best].role;
}

static gint32
classify_coverage (const WsiRegions * r, gdouble x, gdouble y, gdouble side,
    gdouble min_coverage, guint * out)
{
  guint i0, j0, i1, j1, i, j, k, best = G_MAXUINT;

  index_cells (r, x, y, x + side, y + side, &i0, &j0, &i1, &j1);
  for (j = j0; j <= j1; j++)
    for (i = i0; i <= i1; i++) {
      guint cell = j * r->gx + i;

      for (k = r->cell_start[cell]; k < r->cell_start[cell + 1]; k++) {
        guint id = r->items[k], ri0, rj0, ri1, rj1;
        const Region *g = &r->regions[id];
        gdouble coverage;

        /* Visit each region once: in the first cell it shares with the
         * footprint. */
        index_cells (r, g->x0, g->y0, g->x1, g->y1, &ri0, &rj0, &ri1, &rj1);
        if (MAX (ri0, i0) != i || MAX (rj0, j0) != j)
          continue;
        coverage = wsi_regions_coverage (r, id, x, y, side);
        if (g->role == WSI_REGION_EXCLUDED) {
          if (coverage > 0.0)
            return WSI_CLASS_NONE;
          continue;
        }
        if (coverage >= min_coverage && coverage > 0.0
            && (best == G_MAXUINT || region_wins (r, id, best)))
          best = id;
      }
    }
  if (best == G_MAXUINT)
    return WSI_CLASS_NONE;
  *out = best;
  return r->regions[best].role;
}

gint32
wsi_regions_classify (const WsiRegions * r, gint64 x, gint64 y, gint64 side,
    gdouble min_coverage, guint * region)
{
  guint unused;

  if (region == NULL)
    region = &unused;
  if (min_coverage <= 0.0)
    return classify_centre (r, x + side / 2.0, y + side / 2.0, region);
  return classify_coverage (r, (gdouble) x, (gdouble) y, (gdouble) side,
      min_coverage, region);
}

/* ---- draws -------------------------------------------------------------- */

static guint
pool_pick (const Pool * pool, WsiRng * rng)
{
  gdouble u = wsi_rng_uniform (rng) * pool->cumulative[pool->n - 1];
  guint lo = 0, hi = pool->n - 1;

  while (lo < hi) {
    guint mid = (lo + hi) / 2;

    if (pool->cumulative[mid] > u)
      hi = mid;
    else
      lo = mid + 1;
  }
  return pool->members[lo];
}

gboolean
wsi_regions_draw_point (const WsiRegions * r, gint32 class_id, WsiRng * rng,
    gdouble * x, gdouble * y, guint * region)
{
  const Pool *pool = class_id < 0 ? &r->any :
      (guint) class_id < r->n_pools ? &r->pools[class_id] : NULL;
  guint tries, point;

  if (pool == NULL || pool->n == 0)
    return FALSE;
  for (tries = 0; tries < REGION_TRIES; tries++) {
    guint id = pool_pick (pool, rng);
    const Region *g = &r->regions[id];

    for (point = 0; point < POINT_TRIES; point++) {
      gdouble px = wsi_rng_range (rng, g->x0, g->x1);
      gdouble py = wsi_rng_range (rng, g->y0, g->y1);

      if (region_contains (r, g, px, py)) {
        *x = px;
        *y = py;
        *region = id;
        return TRUE;
      }
    }
  }
  return FALSE;
}

/* ---- sampling ----------------------------------------------------------- */

/* Draws per patch before the patch is given up (a class whose regions are
 * all smaller than the coverage asks, or off tissue). */
#define ATTEMPTS_PER_PATCH 200
/* Third RNG key: region draws never share a stream with the other plans. */
#define KEY_REGIONS G_GUINT64_CONSTANT (0x524547494f4e)  /* "REGION" */

gint32
wsi_regions_filter (gpointer data, gint64 x, gint64 y, gint64 side)
{
  const WsiRegionTest *test = data;
  gint32 label = wsi_regions_classify (test->regions, x, y, side,
      test->min_coverage, NULL);

  return label == WSI_CLASS_NONE ? WSI_SAMPLE_REJECT : label;
}

static gint32
draw_class (const gdouble * shares, guint n, WsiRng * rng)
{
  gdouble u = wsi_rng_uniform (rng), sum = 0.0;
  guint c;

  if (shares == NULL)
    return -1;
  for (c = 0; c + 1 < n; c++) {
    sum += shares[c];
    if (u < sum)
      return (gint32) c;
  }
  return (gint32) n - 1;
}

/* One patch of class @class_id (-1: any) centred on a uniform point of
 * its regions; FALSE when the draw is refused. */
static gboolean
try_patch (const WsiRegionTest * test, const WsiTissueMap * map,
    const WsiSamplingRequest * req, gint32 class_id, WsiRng * rng,
    WsiSample * sample)
{
  const WsiRegions *r = test->regions;
  gint64 side = req->footprint, x, y;
  gdouble px, py, fraction;
  guint drawn, labelling = G_MAXUINT;
  gint32 label;

  if (!wsi_regions_draw_point (r, class_id, rng, &px, &py, &drawn))
    return FALSE;
  x = CLAMP ((gint64) floor (px - side / 2.0), 0, r->width - side);
  y = CLAMP ((gint64) floor (py - side / 2.0), 0, r->height - side);
  label = wsi_regions_classify (r, x, y, side, test->min_coverage,
      &labelling);
  /* Kept only where the drawn region labels the patch, so a point in an
   * overlap is not drawn twice as often. */
  if (label == WSI_CLASS_NONE || labelling != drawn)
    return FALSE;
  fraction = wsi_tissue_map_fraction (map, x, y, side);
  if (fraction < req->min_tissue)
    return FALSE;
  sample->x = x;
  sample->y = y;
  sample->footprint = (guint32) side;
  sample->out_mpp = req->out_mpp;
  sample->tissue_fraction = (gfloat) fraction;
  sample->label = label;
  return TRUE;
}

guint
wsi_regions_plan_random (const WsiRegionTest * test,
    const WsiSamplingRequest * req, const WsiTissueMap * map,
    const gdouble * class_shares, guint n_classes, WsiSample * samples)
{
  guint64 budget = req->max_attempts ? req->max_attempts :
      (guint64) ATTEMPTS_PER_PATCH * MAX (req->n_wanted, 1);
  guint64 spent = 0;
  guint n = 0, k;
  WsiRng rng;

  if (req->footprint > test->regions->width
      || req->footprint > test->regions->height)
    return 0;
  /* Coverage rule: a region smaller than the share asked of a footprint
   * can never label one; drawing in it would only waste attempts. */
  if (test->min_coverage > 0.0)
    wsi_regions_set_min_draw_area ((WsiRegions *) test->regions,
        test->min_coverage * (gdouble) req->footprint * req->footprint);
  wsi_rng_seed_keys (&rng, req->seed, req->slide_index, req->visit,
      KEY_REGIONS);
  for (k = 0; k < (guint) req->n_wanted && spent < budget; k++) {
    gint32 class_id = draw_class (class_shares, n_classes, &rng);
    guint tries;

    /* Each patch keeps its class until placed, so a hard class still gets
     * its share; a patch that cannot be placed is given up. */
    for (tries = 0; tries < ATTEMPTS_PER_PATCH && spent < budget; tries++) {
      spent++;
      if (try_patch (test, map, req, class_id, &rng, &samples[n])) {
        n++;
        break;
      }
    }
  }
  return n;
}
