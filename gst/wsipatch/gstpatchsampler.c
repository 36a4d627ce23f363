/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-patchsampler
 * @title: patchsampler
 * @see_also: tissuemask, patchinterleave, patchreader
 *
 * patchsampler turns each slide into patch coordinates; it reads no pixels.
 * For every `application/x-wsi-slide` buffer (one slide visit, with its
 * `WsiSlideMeta` and, from tissuemask, a tissue mask) it pushes one
 * `application/x-wsi-patches` buffer holding all the patches planned on
 * that slide as packed `WsiPatchRecord`s, with the slide's `WsiSlideMeta`
 * copied onto it. A slide that yields no patch (rejected by tissuemask, too
 * small, unknown resolution, no tissue found) produces no buffer.
 *
 * The side of a patch on the slide (its footprint, in level-0 pixels) is
 * `patch-size` when `target-mpp` is 0 and `level` is -1;
 * `round (patch-size × target-mpp / mpp-x)` when `target-mpp` > 0; and
 * `round (patch-size × downsample (level))` when `level` >= 0. Every
 * patch lies wholly inside the slide, and the share of its footprint that
 * the mask calls tissue is at least `min-tissue`. The mask is compared at
 * its own resolution: every mask pixel the footprint touches counts, so
 * `min-tissue=1` keeps only patches wholly on tissue. A slide without a
 * mask counts as all tissue.
 *
 * `mode=random` draws positions uniformly on tissue (rejection sampling,
 * at most `max-attempts` draws per slide, then the rest from the tissue
 * positions of a lattice of step footprint/4, so a slide with little
 * tissue still gives `patches-per-slide` patches); with
 * `replacement=false` it draws distinct positions of that lattice.
 * `mode=grid` walks a regular grid of step `stride` in raster order.
 * Random draws come from a small self-contained generator seeded by the
 * slide meta's `seed`, `index` and `cycle`: one `seed` on wsislidesrc fixes
 * the whole stream, on every platform, and a revisit of a slide (a higher
 * cycle) draws new positions.
 *
 * Records carry `sequence` = a running count over the stream (0-based;
 * patchinterleave renumbers them), and the output buffer carries
 * `GST_BUFFER_OFFSET` = the offset of the slide buffer it came from.
 *
 * When a whole pass over the slides (one cycle) yields no patch at all,
 * the element posts an error instead of cycling forever; at EOS with no
 * patch planned in total it posts a warning.
 *
 * ## Finite runs and DDP
 *
 * #GstPatchSampler:max-patches plans at most that many patches over the
 * whole stream: the plan of the last slide is cut short, EOS is pushed
 * downstream and GST_FLOW_EOS returned upstream, so the source stops.
 *
 * With #GstPatchSampler:rank-quota every rank of a distributed job stops
 * after exactly the same number of patches, decided locally: the quota is
 * `rank-slides-min × patches-per-slide`, with `rank-slides-min` (the slide
 * count of the smallest rank, from the first slide's `WsiSlideMeta`) the
 * same on every rank (if max-patches is set too, the smaller wins; the
 * #GstPatchSampler:quota property tells the result). Use it with
 * wsislidesrc `cycle=true`: patches lost to bad, blank or tissue-poor slides
 * are then made up by revisiting the rank's slides with fresh positions
 * (the next `cycle`, which every record carries), and the stream ends
 * exactly at the quota. If upstream ends first (`cycle=false` and a
 * shortfall) the element posts an error naming the rank and the numbers.
 * A rank whose slides all fail still ends with the errors above (every
 * slide failed, or a whole pass yielded no patch), never a hang.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/slides seed=7 ! \
 *     tissuemask ! queue ! \
 *     patchsampler patch-size=224 target-mpp=0.5 patches-per-slide=200 ! \
 *     fakesink sync=false
 * ]| Plans 200 random 224×224 patches at 0.5 µm/px on the tissue of every
 * slide.
 * |[
 * gst-launch-1.0 wsislidesrc location=train.lst rank=1 world-size=4 cycle=true ! \
 *     tissuemask ! queue ! patchsampler patches-per-slide=100 rank-quota=true ! \
 *     fakesink sync=false
 * ]| Plans exactly 100 × floor(slides / 4) patches on rank 1, refilling
 * from the rank's slides when some give fewer, then ends the stream.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsirng.h>

#include "gstpatchsampler.h"
#include "wsidelivery.h"

GST_DEBUG_CATEGORY_STATIC (gst_patch_sampler_debug);
#define GST_CAT_DEFAULT gst_patch_sampler_debug

#define DEFAULT_MODE GST_PATCH_SAMPLER_MODE_RANDOM
#define DEFAULT_ALIGN GST_PATCH_SAMPLER_ALIGN_NONE
#define DEFAULT_PATCH_SIZE 256
#define MIN_PATCH_SIZE 8
#define MAX_PATCH_SIZE 8192
#define DEFAULT_TARGET_MPP 0.0
#define MAX_TARGET_MPP 1000.0
#define DEFAULT_LEVEL -1
#define MAX_LEVEL 64
#define DEFAULT_PATCHES_PER_SLIDE 100
#define MAX_PATCHES_PER_SLIDE 1000000
#define DEFAULT_MIN_TISSUE 0.5
#define DEFAULT_REPLACEMENT TRUE
#define DEFAULT_STRIDE 0
#define DEFAULT_MAX_ATTEMPTS 0
#define ATTEMPTS_PER_PATCH 50
#define DEFAULT_MAX_PATCHES -1
#define DEFAULT_RANK_QUOTA FALSE
#define NO_QUOTA -1
#define QUOTA_INTERRUPTED (-2)
/* Mask bytes at or above this are tissue (tissuemask writes 0 or 255). */
#define TISSUE_THRESHOLD 128

enum
{
  PROP_0,
  PROP_MODE,
  PROP_PATCH_SIZE,
  PROP_TARGET_MPP,
  PROP_LEVEL,
  PROP_PATCHES_PER_SLIDE,
  PROP_MIN_TISSUE,
  PROP_REPLACEMENT,
  PROP_STRIDE,
  PROP_MAX_ATTEMPTS,
  PROP_ALIGN,
  PROP_SLIDES_SAMPLED,
  PROP_SLIDES_SKIPPED,
  PROP_PATCHES_PLANNED,
  PROP_MAX_PATCHES,
  PROP_RANK_QUOTA,
  PROP_QUOTA,
};

/* The property values one slide is planned with (a snapshot taken under
 * the object lock, so a property change never splits a slide). */
typedef struct
{
  GstPatchSamplerMode mode;
  guint patch_size;
  gdouble target_mpp;
  gint level;
  gint patches_per_slide;
  gdouble min_tissue;
  gboolean replacement;
  guint stride;
  guint max_attempts;
  GstPatchSamplerAlign align;
} GstPatchSamplerSettings;


/* One slide visit, as read from its WsiSlideMeta. */
typedef struct
{
  const gchar *path;
  guint index;
  guint cycle;
  guint64 seed;
  gint64 width;
  gint64 height;
  gdouble mpp_x;
  gint level_count;
  gint overview_width;
  gint overview_height;
  gboolean has_overview;
  gboolean has_mask;
  gboolean tissue_rejected;
} WsiSlideVisit;

/* Tissue lookup for one slide: an integral image over the mask, so the
 * tissue share of any footprint costs four reads. */
typedef struct
{
  const guint32 *integral;      /* NULL: the whole slide is tissue */
  gint64 mask_width;
  gint64 mask_height;
  gint64 slide_width;
  gint64 slide_height;
  /* bounding box of the tissue, mask pixels, end exclusive (empty when
   * the mask has no tissue) */
  gint64 tissue_x0, tissue_y0, tissue_x1, tissue_y1;
} WsiTissueMap;

/* Lattice of candidate top-left corners: x0 + i * step, y0 + j * step. */
typedef struct
{
  gint64 x0;
  gint64 y0;
  gint64 step;
  gint64 nx;
  gint64 ny;
} WsiLattice;

/* What every record of one slide shares. */
typedef struct
{
  guint slide_index;
  guint cycle;
  guint footprint;
  guint out_size;
  gfloat out_mpp;
} WsiRecordTemplate;

struct _GstPatchSampler
{
  GstElement parent;

  GstPad *sinkpad;
  GstPad *srcpad;

  /* properties and counters, under the object lock */
  GstPatchSamplerSettings settings;
  guint64 slides_sampled;
  guint64 slides_skipped;
  guint64 patches_planned;
  guint64 stream_planned;       /* since the last flush: what the quota counts */
  gint64 max_patches;
  gboolean rank_quota;
  gint64 quota;                 /* NO_QUOTA, or decided at the first slide */

  /* streaming thread only */
  guint64 next_sequence;
  gboolean cycle_started;
  guint cycle;
  guint cycle_slides;
  guint64 cycle_patches;
  gchar *cycle_last_skip;       /* why the last slide of the cycle gave none */
  GHashTable *warned_slides;    /* slide indices already warned about */
  gboolean warned_unlimited;
  gboolean quota_decided;
  gboolean quota_from_rank;     /* rank-quota took part: shortfall = error */
  guint quota_rank;             /* from the first slide's meta, for errors */
  gboolean quota_reached;       /* EOS sent downstream */

  /* planned vs delivered: drops reported from downstream threads */
  WsiDelivery *delivery;
  gint delivery_failed;         /* atomic: a whole cycle was lost */

  /* integral image scratch, kept between slides to avoid reallocating */
  guint32 *integral;
  gsize integral_len;
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (WSI_SLIDE_MEDIA_TYPE));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (WSI_PATCHES_MEDIA_TYPE));

#define gst_patch_sampler_parent_class parent_class
G_DEFINE_TYPE (GstPatchSampler, gst_patch_sampler, GST_TYPE_ELEMENT);

static void patch_sampler_element_init (void);
GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (patchsampler, "patchsampler",
    GST_RANK_NONE, GST_TYPE_PATCH_SAMPLER, patch_sampler_element_init ());

GType
gst_patch_sampler_mode_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_PATCH_SAMPLER_MODE_RANDOM,
        "Uniformly random positions on tissue", "random"},
    {GST_PATCH_SAMPLER_MODE_GRID,
        "Regular grid of positions on tissue, raster order", "grid"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstPatchSamplerMode", values);
    g_once_init_leave (&type, t);
  }
  return (GType) type;
}

GType
gst_patch_sampler_align_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_PATCH_SAMPLER_ALIGN_NONE, "Positions as drawn", "none"},
    {GST_PATCH_SAMPLER_ALIGN_TILE, "Snapped to the tile grid of the level "
          "read", "tile"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstPatchSamplerAlign", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

/* ---- tissue map -------------------------------------------------------- */

/* Fills the (w + 1) × (h + 1) integral image of "mask pixel is tissue"
 * (row 0 and column 0 are zero) and the tissue bounding box of @map. */
static void
tissue_map_build (WsiTissueMap * map, guint32 * integral,
    const guint8 * mask)
{
  gint64 w = map->mask_width, h = map->mask_height, stride = w + 1;
  gint64 x, y;

  map->tissue_x0 = w;
  map->tissue_y0 = h;
  map->tissue_x1 = map->tissue_y1 = 0;
  memset (integral, 0, stride * sizeof (guint32));
  for (y = 0; y < h; y++) {
    const guint8 *row = mask + y * w;
    guint32 *above = integral + y * stride;
    guint32 *out = above + stride;
    guint32 row_sum = 0;

    out[0] = 0;
    for (x = 0; x < w; x++) {
      gboolean tissue = row[x] >= TISSUE_THRESHOLD;

      row_sum += tissue;
      out[x + 1] = above[x + 1] + row_sum;
      if (tissue) {
        map->tissue_x0 = MIN (map->tissue_x0, x);
        map->tissue_x1 = MAX (map->tissue_x1, x + 1);
      }
    }
    if (row_sum > 0) {
      map->tissue_y0 = MIN (map->tissue_y0, y);
      map->tissue_y1 = y + 1;
    }
  }
  map->integral = integral;
}

static gboolean
tissue_map_is_blank (const WsiTissueMap * map)
{
  return map->integral != NULL && map->tissue_x1 <= map->tissue_x0;
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

/* Share of the mask pixels touched by the footprint (x, y, side) that are
 * tissue. The touched rectangle is rounded outwards, so 1.0 means the
 * footprint lies wholly on tissue. */
static inline gdouble
tissue_map_fraction (const WsiTissueMap * map, gint64 x, gint64 y,
    gint64 side)
{
  gint64 mx0, mx1, my0, my1, stride, count;
  const guint32 *I = map->integral;

  if (I == NULL)
    return 1.0;

  mx0 = x * map->mask_width / map->slide_width;
  my0 = y * map->mask_height / map->slide_height;
  mx1 = ((x + side) * map->mask_width + map->slide_width - 1) /
      map->slide_width;
  my1 = ((y + side) * map->mask_height + map->slide_height - 1) /
      map->slide_height;
  mx1 = CLAMP (mx1, mx0 + 1, map->mask_width);
  my1 = CLAMP (my1, my0 + 1, map->mask_height);

  stride = map->mask_width + 1;
  count = (gint64) I[my1 * stride + mx1] - I[my0 * stride + mx1]
      - I[my1 * stride + mx0] + I[my0 * stride + mx0];
  return (gdouble) count / (gdouble) ((mx1 - mx0) * (my1 - my0));
}

/* ---- records ----------------------------------------------------------- */

static inline void
record_fill (WsiPatchRecord * record, const WsiRecordTemplate * tmpl,
    gint64 x, gint64 y, gdouble tissue_fraction)
{
  record->sequence = 0;         /* numbered when the buffer is pushed */
  record->x = x;
  record->y = y;
  record->created_ns = (gint64) gst_util_get_timestamp ();
  record->slide_index = tmpl->slide_index;
  record->cycle = tmpl->cycle;
  record->footprint = tmpl->footprint;
  record->out_size = tmpl->out_size;
  record->level = WSI_LEVEL_UNSET;
  record->read_size = 0;
  record->out_mpp = tmpl->out_mpp;
  record->tissue_fraction = (gfloat) tissue_fraction;
}

/* Random positions, repeats allowed: rejection sampling, bounded by
 * @max_attempts draws. Draws stay within reach of the tissue bounding box
 * (still uniform over the positions that qualify). Returns the records
 * written. */
static guint
plan_random_with_replacement (const WsiTissueMap * map,
    const WsiRecordTemplate * tmpl, gdouble min_tissue, guint max_attempts,
    WsiRng * rng, WsiPatchRecord * records, guint n_wanted)
{
  gint64 side = tmpl->footprint;
  gint64 x_lo = 0, x_hi = map->slide_width - side;
  gint64 y_lo = 0, y_hi = map->slide_height - side;
  guint n = 0, attempt;

  if (map->integral != NULL && min_tissue > 0.0) {
    tissue_axis_range (map->tissue_x0, map->tissue_x1, map->slide_width,
        map->mask_width, side, &x_lo, &x_hi);
    tissue_axis_range (map->tissue_y0, map->tissue_y1, map->slide_height,
        map->mask_height, side, &y_lo, &y_hi);
  }

  for (attempt = 0; attempt < max_attempts && n < n_wanted; attempt++) {
    gint64 x = x_lo + (gint64) wsi_rng_below (rng, x_hi - x_lo + 1);
    gint64 y = y_lo + (gint64) wsi_rng_below (rng, y_hi - y_lo + 1);
    gdouble fraction = tissue_map_fraction (map, x, y, side);

    if (fraction >= min_tissue)
      record_fill (&records[n++], tmpl, x, y, fraction);
  }
  return n;
}

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

/* The lattice random mode draws from: step footprint/4 and a random
 * origin, so a revisit sees new positions. */
static void
lattice_init_random (WsiLattice * lattice, const WsiTissueMap * map,
    gint64 side, WsiRng * rng)
{
  gint64 step = MAX (side / 4, 1);
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

  if (map->integral == NULL || min_tissue <= 0.0)
    return (guint64) lattice->nx * lattice->ny;

  for (j = 0; j < lattice->ny; j++) {
    gint64 y = lattice->y0 + j * lattice->step;
    for (i = 0; i < lattice->nx; i++) {
      gint64 x = lattice->x0 + i * lattice->step;
      count += tissue_map_fraction (map, x, y, side) >= min_tissue;
    }
  }
  return count;
}

/* Picks @n_take of the @n_valid tissue positions of the lattice, each
 * subset equally likely (Knuth's selection sampling: one pass, no list of
 * candidates), in raster order. With @rng NULL, @n_take must be @n_valid. */
static guint
lattice_select (const WsiLattice * lattice, const WsiTissueMap * map,
    const WsiRecordTemplate * tmpl, gdouble min_tissue, guint64 n_valid,
    guint64 n_take, WsiRng * rng, WsiPatchRecord * records)
{
  guint64 seen = 0, taken = 0;
  gint64 i, j;

  for (j = 0; j < lattice->ny && taken < n_take; j++) {
    gint64 y = lattice->y0 + j * lattice->step;
    for (i = 0; i < lattice->nx && taken < n_take; i++) {
      gint64 x = lattice->x0 + i * lattice->step;
      gdouble fraction = tissue_map_fraction (map, x, y, tmpl->footprint);

      if (fraction < min_tissue)
        continue;
      if (rng == NULL || wsi_rng_below (rng, n_valid - seen) < n_take - taken)
        record_fill (&records[taken++], tmpl, x, y, fraction);
      seen++;
    }
  }
  return (guint) taken;
}

static int
compare_record_x (gconstpointer a, gconstpointer b)
{
  gint64 x = ((const WsiPatchRecord *) a)->x;
  gint64 y = ((const WsiPatchRecord *) b)->x;

  return (x > y) - (x < y);
}

/* Fills records[0..n) with lattice tissue positions drawn uniformly with
 * repeats (for slides where rejection sampling ran out of attempts). The
 * drawn ranks are parked in the records' x field and sorted, so one raster
 * pass places them all, with no scratch allocation. */
static void
lattice_draw_with_replacement (const WsiLattice * lattice,
    const WsiTissueMap * map, const WsiRecordTemplate * tmpl,
    gdouble min_tissue, guint64 n_valid, WsiRng * rng,
    WsiPatchRecord * records, guint n)
{
  guint64 rank = 0;
  guint next = 0, k;
  gint64 i, j;

  for (k = 0; k < n; k++)
    records[k].x = (gint64) wsi_rng_below (rng, n_valid);
  qsort (records, n, sizeof (WsiPatchRecord), compare_record_x);

  for (j = 0; j < lattice->ny && next < n; j++) {
    gint64 y = lattice->y0 + j * lattice->step;
    for (i = 0; i < lattice->nx && next < n; i++) {
      gint64 x = lattice->x0 + i * lattice->step;
      gdouble fraction = tissue_map_fraction (map, x, y, tmpl->footprint);

      if (fraction < min_tissue)
        continue;
      while (next < n && (guint64) records[next].x == rank)
        record_fill (&records[next++], tmpl, x, y, fraction);
      rank++;
    }
  }
}

static void
records_shuffle (WsiPatchRecord * records, guint n, WsiRng * rng)
{
  guint i;

  for (i = n; i > 1; i--) {
    guint k = (guint) wsi_rng_below (rng, i);
    WsiPatchRecord tmp = records[i - 1];

    records[i - 1] = records[k];
    records[k] = tmp;
  }
}

/* ---- slide description ------------------------------------------------- */

static gboolean
slide_visit_read (WsiSlideVisit * visit, const GstStructure * meta)
{
  memset (visit, 0, sizeof (*visit));
  visit->path = gst_structure_get_string (meta, "path");
  if (visit->path == NULL)
    visit->path = "(unnamed slide)";
  if (!gst_structure_get_int64 (meta, "width", &visit->width) ||
      !gst_structure_get_int64 (meta, "height", &visit->height))
    return FALSE;
  gst_structure_get_uint (meta, "index", &visit->index);
  gst_structure_get_uint (meta, "cycle", &visit->cycle);
  gst_structure_get_uint64 (meta, "seed", &visit->seed);
  gst_structure_get_double (meta, "mpp-x", &visit->mpp_x);
  if (!gst_structure_get_int (meta, "level-count", &visit->level_count))
    visit->level_count = 1;
  gst_structure_get_int (meta, "overview-width", &visit->overview_width);
  gst_structure_get_int (meta, "overview-height", &visit->overview_height);
  gst_structure_get_boolean (meta, "has-overview", &visit->has_overview);
  gst_structure_get_boolean (meta, "has-mask", &visit->has_mask);
  gst_structure_get_boolean (meta, "tissue-rejected", &visit->tissue_rejected);
  return TRUE;
}

/* ---- the element ------------------------------------------------------- */

static void
patch_sampler_reset_stream (GstPatchSampler * self)
{
  self->next_sequence = 0;
  self->cycle_started = FALSE;
  self->cycle = 0;
  self->cycle_slides = 0;
  self->cycle_patches = 0;
  g_clear_pointer (&self->cycle_last_skip, g_free);
  g_hash_table_remove_all (self->warned_slides);
  self->warned_unlimited = FALSE;
  self->quota_decided = FALSE;
  self->quota_from_rank = FALSE;
  self->quota_rank = 0;
  self->quota_reached = FALSE;
  wsi_delivery_reset (self->delivery);
  g_atomic_int_set (&self->delivery_failed, 0);
  GST_OBJECT_LOCK (self);
  self->quota = NO_QUOTA;
  self->stream_planned = 0;
  GST_OBJECT_UNLOCK (self);
}

/* TRUE the first time a problem with slide @index is reported in this
 * stream, so a revisited broken slide does not warn on every cycle. */
static gboolean
patch_sampler_first_warning (GstPatchSampler * self, guint index)
{
  return g_hash_table_add (self->warned_slides, GUINT_TO_POINTER (index + 1));
}

/* Counts a slide that yields no patch; @reason (taken) names why, for the
 * error posted when a whole cycle yields nothing. */
static void
patch_sampler_skip (GstPatchSampler * self, const WsiSlideVisit * visit,
    gchar * reason)
{
  GST_DEBUG_OBJECT (self, "slide %u (%s) cycle %u: no patch: %s",
      visit->index, visit->path, visit->cycle, reason);
  g_free (self->cycle_last_skip);
  self->cycle_last_skip = reason;
  GST_OBJECT_LOCK (self);
  self->slides_skipped++;
  GST_OBJECT_UNLOCK (self);
}

/* Every patch planned in @cycle was dropped downstream (unreadable slides,
 * given up): cycling on would plan and drop forever. */
static void
patch_sampler_cycle_lost (GstPatchSampler * self, guint cycle)
{
  gchar *why = wsi_delivery_describe_loss (self->delivery, cycle);

  if (!g_atomic_int_compare_and_exchange (&self->delivery_failed, 0, 1)) {
    g_free (why);
    return;
  }
  GST_ELEMENT_ERROR (self, STREAM, FAILED,
      ("A whole pass over the slides delivered no patch: %s.", why),
      ("cycle %u: stopping instead of cycling forever", cycle));
  g_free (why);
}

/* Called for every slide before planning: when the slide opens a new
 * cycle, checks that the previous one produced something. */
static gboolean
patch_sampler_check_cycle (GstPatchSampler * self, const WsiSlideVisit * visit)
{
  if (self->cycle_started && visit->cycle > self->cycle
      && wsi_delivery_close_cycle (self->delivery, self->cycle)) {
    patch_sampler_cycle_lost (self, self->cycle);
    return FALSE;
  }
  if (g_atomic_int_get (&self->delivery_failed))
    return FALSE;
  if (self->cycle_started && visit->cycle > self->cycle) {
    if (self->cycle_patches == 0) {
      GST_ELEMENT_ERROR (self, STREAM, FAILED,
          ("A whole pass over the slides yielded no patch: none of the %u "
              "slides of cycle %u gave a patch (last: %s).", self->cycle_slides,
              self->cycle, GST_STR_NULL (self->cycle_last_skip)),
          ("cycle %u ended with 0 patches; stopping instead of cycling "
              "forever", self->cycle));
      return FALSE;
    }
  }
  if (!self->cycle_started || visit->cycle > self->cycle) {
    self->cycle_started = TRUE;
    self->cycle = visit->cycle;
    self->cycle_slides = 0;
    self->cycle_patches = 0;
  }
  self->cycle_slides++;
  return TRUE;
}

/* Computes the footprint (level-0 pixels) and output resolution of the
 * patches of @visit. Returns FALSE (with a warning once per slide) when
 * the settings cannot be honoured on this slide. */
static gboolean
patch_sampler_footprint (GstPatchSampler * self,
    const GstPatchSamplerSettings * settings, const WsiSlideVisit * visit,
    const GstStructure * meta, WsiRecordTemplate * tmpl, gchar ** reason)
{
  gdouble footprint;

  tmpl->out_size = settings->patch_size;
  if (settings->target_mpp > 0.0) {
    if (visit->mpp_x <= 0.0) {
      *reason = g_strdup_printf ("%s: resolution (mpp) unknown", visit->path);
      if (patch_sampler_first_warning (self, visit->index))
        GST_ELEMENT_WARNING (self, STREAM, FORMAT,
            ("Slide \"%s\" does not say its resolution (microns per pixel), "
                "so target-mpp=%g cannot be honoured; skipping it. Set "
                "wsislidesrc's default-mpp property to the scanner's "
                "resolution, or use target-mpp=0.", visit->path,
                settings->target_mpp), (NULL));
      return FALSE;
    }
    footprint = settings->patch_size * settings->target_mpp / visit->mpp_x;
    tmpl->out_mpp = (gfloat) settings->target_mpp;
  } else if (settings->level >= 0) {
    gdouble downsample;

    if (settings->level >= visit->level_count) {
      *reason = g_strdup_printf ("%s: no level %d", visit->path,
          settings->level);
      if (patch_sampler_first_warning (self, visit->index))
        GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
            ("Slide \"%s\" has %d levels, so level=%d does not exist on it; "
                "skipping it.", visit->path, visit->level_count,
                settings->level), (NULL));
      return FALSE;
    }
    downsample = wsi_slide_meta_list_get (meta, "level-downsamples",
        settings->level, settings->level == 0 ? 1.0 : 0.0);
    if (downsample <= 0.0) {
      *reason = g_strdup_printf ("%s: no downsample for level %d",
          visit->path, settings->level);
      if (patch_sampler_first_warning (self, visit->index))
        GST_ELEMENT_WARNING (self, STREAM, FORMAT,
            ("Slide \"%s\" does not give the downsample of level %d; "
                "skipping it.", visit->path, settings->level), (NULL));
      return FALSE;
    }
    footprint = settings->patch_size * downsample;
    tmpl->out_mpp = (gfloat) (visit->mpp_x * downsample);
  } else {
    footprint = settings->patch_size;
    tmpl->out_mpp = (gfloat) MAX (visit->mpp_x, 0.0);
  }

  /* Finer than the scan: patches would be blown-up level-0 pixels. */
  if (settings->target_mpp > 0.0 && footprint < settings->patch_size / 2.0
      && patch_sampler_first_warning (self, visit->index))
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("target-mpp=%g is %.1f times finer than the resolution of slide "
            "\"%s\" (%g um/px): its %u px patches are upsampled from %.0f "
            "level-0 pixels.", settings->target_mpp,
            visit->mpp_x / settings->target_mpp, visit->path, visit->mpp_x,
            settings->patch_size, MAX (1.0, round (footprint))), (NULL));
  footprint = MAX (1.0, round (footprint));
  /* The footprint is whole level-0 pixels: report the resolution that the
   * rounding really gives (0.499 um/px slide, 0.5 target, 128 px patch:
   * 128 px read, 0.499 um/px out), not the requested one. */
  if (settings->target_mpp > 0.0)
    tmpl->out_mpp = (gfloat) (footprint * visit->mpp_x / settings->patch_size);
  if (footprint > visit->width || footprint > visit->height) {
    *reason = g_strdup_printf ("%s: smaller than one patch", visit->path);
    if (patch_sampler_first_warning (self, visit->index))
      GST_ELEMENT_WARNING (self, STREAM, FORMAT,
          ("Slide \"%s\" (%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " pixels) "
              "is smaller than one patch (%.0f level-0 pixels square); "
              "skipping it.", visit->path, visit->width, visit->height,
              footprint), (NULL));
    return FALSE;
  }
  tmpl->footprint = (guint) footprint;
  tmpl->slide_index = visit->index;
  tmpl->cycle = visit->cycle;
  return TRUE;
}

/* Points @map at the mask of @data (overview RGB, then mask), building the
 * integral image in the element's scratch. */
static gboolean
patch_sampler_tissue_map (GstPatchSampler * self, const WsiSlideVisit * visit,
    const guint8 * data, gsize size, WsiTissueMap * map)
{
  gint64 mw = visit->overview_width, mh = visit->overview_height;
  gsize overview_bytes, needed, integral_len;

  map->integral = NULL;
  map->slide_width = visit->width;
  map->slide_height = visit->height;
  map->mask_width = mw;
  map->mask_height = mh;
  map->tissue_x0 = map->tissue_y0 = map->tissue_x1 = map->tissue_y1 = 0;
  if (!visit->has_mask)
    return TRUE;

  if (mw <= 0 || mh <= 0 || (guint64) mw * mh > G_MAXUINT32) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("The tissue mask of slide \"%s\" has an impossible size "
            "(%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT ").", visit->path,
            mw, mh), (NULL));
    return FALSE;
  }
  overview_bytes = visit->has_overview ? (gsize) (mw * mh * 3) : 0;
  needed = overview_bytes + (gsize) (mw * mh);
  if (size < needed) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("The buffer of slide \"%s\" holds %" G_GSIZE_FORMAT " bytes, but "
            "its %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " overview and mask "
            "need %" G_GSIZE_FORMAT ".", visit->path, size, mw, mh, needed),
        (NULL));
    return FALSE;
  }

  integral_len = (gsize) ((mw + 1) * (mh + 1));
  if (integral_len > self->integral_len) {
    g_free (self->integral);
    self->integral = g_new (guint32, integral_len);
    self->integral_len = integral_len;
  }
  tissue_map_build (map, self->integral, data + overview_bytes);
  return TRUE;
}

/* Random mode with replacement: rejection sampling, then, if the draws
 * ran out on a slide with little tissue, the rest from the tissue
 * positions of a fine lattice, so the count is met whenever any position
 * qualifies. Returns the records written. */
static guint
plan_random (GstPatchSampler * self, const GstPatchSamplerSettings * settings,
    const WsiTissueMap * map, const WsiRecordTemplate * tmpl, WsiRng * rng,
    WsiPatchRecord * records, guint n_wanted)
{
  guint attempts = settings->max_attempts ? settings->max_attempts :
      ATTEMPTS_PER_PATCH * n_wanted;
  WsiLattice lattice;
  guint64 n_valid;
  guint n;

  n = plan_random_with_replacement (map, tmpl, settings->min_tissue,
      attempts, rng, records, n_wanted);
  if (n == n_wanted)
    return n;

  lattice_init_random (&lattice, map, tmpl->footprint, rng);
  n_valid = lattice_count_tissue (&lattice, map, tmpl->footprint,
      settings->min_tissue);
  GST_DEBUG_OBJECT (self, "%u of %u patches in %u draws; %" G_GUINT64_FORMAT
      " lattice positions for the rest", n, n_wanted, attempts, n_valid);
  if (n_valid == 0)
    return n;
  lattice_draw_with_replacement (&lattice, map, tmpl, settings->min_tissue,
      n_valid, rng, records + n, n_wanted - n);
  records_shuffle (records, n_wanted, rng);
  return n_wanted;
}

/* Random mode without replacement (@random) or grid mode: distinct
 * lattice positions. Returns a new buffer, or NULL when none qualifies. */
static GstBuffer *
plan_lattice (const GstPatchSamplerSettings * settings,
    const WsiTissueMap * map, const WsiRecordTemplate * tmpl, WsiRng * rng,
    gboolean random)
{
  gint64 side = tmpl->footprint;
  WsiLattice lattice;
  guint64 n_valid, n_take;
  GstBuffer *out;
  GstMapInfo info;
  guint n;

  if (random)
    lattice_init_random (&lattice, map, side, rng);
  else
    lattice_init (&lattice, map, side, settings->stride ? settings->stride :
        side, 0, 0);
  n_valid = lattice_count_tissue (&lattice, map, side, settings->min_tissue);
  n_take = settings->patches_per_slide < 0 ? n_valid :
      MIN (n_valid, (guint64) settings->patches_per_slide);
  if (n_take == 0 || n_take > G_MAXUINT32 / sizeof (WsiPatchRecord))
    return NULL;

  out = gst_buffer_new_allocate (NULL, n_take * sizeof (WsiPatchRecord), NULL);
  gst_buffer_map (out, &info, GST_MAP_WRITE);
  n = lattice_select (&lattice, map, tmpl, settings->min_tissue, n_valid,
      n_take, n_take < n_valid ? rng : NULL, (WsiPatchRecord *) info.data);
  if (random)
    records_shuffle ((WsiPatchRecord *) info.data, n, rng);
  gst_buffer_unmap (out, &info);
  return out;
}

/* The level patchreader reads for @tmpl's patches: the coarsest whose
 * downsample does not exceed footprint / out_size (wsi_slide_best_level()'s
 * rule, 1 % tolerance). */
static gint
read_level (const GstStructure * meta, const WsiRecordTemplate * tmpl)
{
  gdouble want = (gdouble) tmpl->footprint / tmpl->out_size;
  gint level, levels = 1, best = 0;

  gst_structure_get_int (meta, "level-count", &levels);
  for (level = 0; level < levels; level++) {
    gdouble ds = wsi_slide_meta_list_get (meta, "level-downsamples", level,
        0.0);

    if (ds > 0.0 && ds <= want * 1.01)
      best = level;
  }
  return best;
}

/* align=tile: snaps every position down to the tile grid of the level that
 * will be read, in level-0 pixels (a tile edge at level pixel c * tw lies at
 * level-0 c * tw * downsample). Snapping down keeps patches on the slide. */
static void
align_to_tiles (GstBuffer * out, const GstStructure * meta,
    const WsiRecordTemplate * tmpl)
{
  gint level = read_level (meta, tmpl);
  gdouble ds = wsi_slide_meta_list_get (meta, "level-downsamples", level,
      1.0);
  gdouble tw = wsi_slide_meta_list_get (meta, "level-tile-widths", level, 0.0);
  gdouble th = wsi_slide_meta_list_get (meta, "level-tile-heights", level,
      0.0);
  GstMapInfo info;
  WsiPatchRecord *records;
  gsize i, n;

  if (tw < 1.0 || th < 1.0)
    return;                     /* untiled format: positions as drawn */
  gst_buffer_map (out, &info, GST_MAP_READWRITE);
  records = (WsiPatchRecord *) info.data;
  n = info.size / sizeof (WsiPatchRecord);
  for (i = 0; i < n; i++) {
    gint64 column = (gint64) floor (records[i].x / (tw * ds));
    gint64 row = (gint64) floor (records[i].y / (th * ds));

    records[i].x = (gint64) floor (column * tw * ds);
    records[i].y = (gint64) floor (row * th * ds);
  }
  gst_buffer_unmap (out, &info);
}

/* Writes the records of one slide into a new buffer; returns NULL (and
 * sets @reason) when none was found. */
static GstBuffer *
patch_sampler_plan (GstPatchSampler * self,
    const GstPatchSamplerSettings * settings, const WsiSlideVisit * visit,
    const GstStructure * meta, const WsiTissueMap * map,
    const WsiRecordTemplate * tmpl, gchar ** reason)
{
  GstBuffer *out = NULL;
  WsiRng rng;

  wsi_rng_seed (&rng, visit->seed, visit->index, visit->cycle);

  if (settings->min_tissue > 0.0 && tissue_map_is_blank (map)) {
    out = NULL;
  } else if (settings->mode == GST_PATCH_SAMPLER_MODE_RANDOM &&
      settings->replacement) {
    guint n_wanted = settings->patches_per_slide;
    GstMapInfo info;
    guint n;

    out = gst_buffer_new_allocate (NULL, n_wanted * sizeof (WsiPatchRecord),
        NULL);
    gst_buffer_map (out, &info, GST_MAP_WRITE);
    n = plan_random (self, settings, map, tmpl, &rng,
        (WsiPatchRecord *) info.data, n_wanted);
    gst_buffer_unmap (out, &info);
    if (n == 0)
      gst_clear_buffer (&out);
    else
      gst_buffer_set_size (out, n * sizeof (WsiPatchRecord));
  } else {
    out = plan_lattice (settings, map, tmpl, &rng,
        settings->mode == GST_PATCH_SAMPLER_MODE_RANDOM);
  }
  if (out != NULL && settings->align == GST_PATCH_SAMPLER_ALIGN_TILE)
    align_to_tiles (out, meta, tmpl);

  if (out == NULL)
    *reason = g_strdup_printf ("%s: no position with tissue share >= %g",
        visit->path, settings->min_tissue);
  return out;
}

/* Numbers the records of @out with the stream's running sequence. */
static void
patch_sampler_number (GstPatchSampler * self, GstBuffer * out)
{
  GstMapInfo info;
  WsiPatchRecord *records;
  gsize i, n;

  gst_buffer_map (out, &info, GST_MAP_READWRITE);
  records = (WsiPatchRecord *) info.data;
  n = info.size / sizeof (WsiPatchRecord);
  for (i = 0; i < n; i++)
    records[i].sequence = self->next_sequence++;
  gst_buffer_unmap (out, &info);
}

static void
patch_sampler_settings_snapshot (GstPatchSampler * self,
    GstPatchSamplerSettings * settings)
{
  GST_OBJECT_LOCK (self);
  *settings = self->settings;
  GST_OBJECT_UNLOCK (self);

  if (settings->mode == GST_PATCH_SAMPLER_MODE_RANDOM &&
      settings->patches_per_slide < 0) {
    if (!self->warned_unlimited) {
      self->warned_unlimited = TRUE;
      GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
          ("patches-per-slide=-1 (all positions) only applies to mode=grid; "
              "mode=random plans %d patches per slide instead.",
              DEFAULT_PATCHES_PER_SLIDE), (NULL));
    }
    settings->patches_per_slide = DEFAULT_PATCHES_PER_SLIDE;
  }
}

/* ---- finite runs: the quota ------------------------------------------- */

/* Decides the stream's quota from the properties and the first slide's
 * meta: max-patches, and with rank-quota rank-slides-min ×
 * patches-per-slide, the smaller winning. Every rank sees the same
 * rank-slides-min, so every rank gets the same quota without talking to
 * the others. Returns FALSE after posting an error. */
static gboolean
patch_sampler_decide_quota (GstPatchSampler * self,
    const GstPatchSamplerSettings * settings, const GstStructure * meta)
{
  gint64 max_patches, quota;
  gboolean rank_quota;
  guint min_slides = 0;

  GST_OBJECT_LOCK (self);
  max_patches = self->max_patches;
  rank_quota = self->rank_quota;
  GST_OBJECT_UNLOCK (self);

  quota = max_patches;
  if (rank_quota) {
    gint64 rank_share;

    gst_structure_get_uint (meta, "rank", &self->quota_rank);
    if (!gst_structure_get_uint (meta, "rank-slides-min", &min_slides)) {
      GST_ELEMENT_ERROR (self, STREAM, FORMAT,
          ("rank-quota=true needs the rank-slides-min field of the slide "
              "meta, which slide \"%s\" lacks; is patchsampler fed by "
              "wsislidesrc?", GST_STR_NULL (gst_structure_get_string (meta,
                      "path"))), (NULL));
      return FALSE;
    }
    if (settings->patches_per_slide < 0) {
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
          ("rank-quota=true needs a fixed patches-per-slide; -1 (all grid "
              "positions) differs from slide to slide, so ranks would not "
              "agree on a quota."), (NULL));
      return FALSE;
    }
    rank_share = (gint64) min_slides * settings->patches_per_slide;
    if (rank_share == 0)
      GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
          ("rank-quota=true gives a quota of 0 patches: the smallest rank "
              "holds no slide (fewer slides than ranks), so every rank ends "
              "at once."), (NULL));
    quota = quota < 0 ? rank_share : MIN (quota, rank_share);
    self->quota_from_rank = TRUE;
  }

  self->quota_decided = TRUE;
  GST_OBJECT_LOCK (self);
  self->quota = quota;
  GST_OBJECT_UNLOCK (self);
  /* A finite quota counts delivered patches when downstream can tell. */
  if (quota >= 0)
    wsi_delivery_probe (self->delivery, self->srcpad);
  if (quota >= 0)
    GST_INFO_OBJECT (self, "quota: %" G_GINT64_FORMAT " patches (max-patches "
        "%" G_GINT64_FORMAT ", rank-quota %d, rank-slides-min %u)", quota,
        max_patches, rank_quota, min_slides);
  return TRUE;
}

/* Patches still allowed before the quota, or -1 when there is none. */
static gint64
patch_sampler_quota_left (GstPatchSampler * self)
{
  gint64 quota, left;

  guint64 dropped = wsi_delivery_dropped (self->delivery);

  /* Patches that will reach the consumer: planned minus reported drops. */
  GST_OBJECT_LOCK (self);
  quota = self->quota;
  left = quota < 0 ? -1 : MAX (quota - ((gint64) self->stream_planned -
          (gint64) dropped), 0);
  GST_OBJECT_UNLOCK (self);
  return left;
}

/* The quota left, in delivered patches. When planning has apparently met
 * it, waits until every planned patch was delivered or reported dropped
 * (a drained pipeline): dropped ones are then planned again from the
 * rank's next slides. QUOTA_INTERRUPTED when flushing. */
static gint64
patch_sampler_quota_left_checked (GstPatchSampler * self)
{
  gint64 left = patch_sampler_quota_left (self);

  if (left != 0 || !wsi_delivery_active (self->delivery))
    return left;
  if (!wsi_delivery_check (self->delivery, self->srcpad))
    return QUOTA_INTERRUPTED;
  left = patch_sampler_quota_left (self);
  if (left > 0)
    GST_DEBUG_OBJECT (self, "%" G_GINT64_FORMAT " planned patches were "
        "dropped downstream: planning them again", left);
  return left;
}

/* The quota is met: ends the stream downstream and tells upstream to stop
 * (GST_FLOW_EOS stops the source's task). */
static GstFlowReturn
patch_sampler_finish_quota (GstPatchSampler * self)
{
  GST_DEBUG_OBJECT (self, "quota of %" G_GINT64_FORMAT " patches reached: "
      "EOS", self->quota);
  self->quota_reached = TRUE;
  gst_pad_push_event (self->srcpad, gst_event_new_eos ());
  return GST_FLOW_EOS;
}

/* Keeps the first @n records of @out. */
static void
truncate_plan (GstBuffer * out, gint64 n)
{
  if ((gint64) (gst_buffer_get_size (out) / sizeof (WsiPatchRecord)) > n)
    gst_buffer_set_size (out, n * sizeof (WsiPatchRecord));
}

/* At EOS from upstream: with rank-quota the rank must have met its quota,
 * or the ranks of a DDP job would emit different numbers of patches. */
static void
patch_sampler_check_quota_met (GstPatchSampler * self)
{
  gint64 quota;
  guint64 planned;

  if (!self->quota_from_rank)
    return;
  /* Count what was delivered: wait for the last drops to be reported. */
  wsi_delivery_check (self->delivery, self->srcpad);
  GST_OBJECT_LOCK (self);
  quota = self->quota;
  planned = self->stream_planned - wsi_delivery_dropped (self->delivery);
  GST_OBJECT_UNLOCK (self);

  if (quota < 0 || planned >= (guint64) quota)
    return;
  GST_ELEMENT_ERROR (self, STREAM, FAILED,
      ("rank %u delivered only %" G_GUINT64_FORMAT " of its quota of %"
          G_GINT64_FORMAT " patches: set cycle=true on wsislidesrc so "
          "shortfalls are refilled", self->quota_rank, planned, quota),
      ("the slides of this rank ended (EOS) before the quota; the ranks "
          "would emit different numbers of patches"));
}

static GstFlowReturn
gst_patch_sampler_chain (GstPad * pad, GstObject * parent, GstBuffer * slide)
{
  GstPatchSampler *self = GST_PATCH_SAMPLER (parent);
  GstPatchSamplerSettings settings;
  GstStructure *meta = wsi_slide_meta_get (slide);
  WsiSlideVisit visit;
  WsiRecordTemplate tmpl;
  WsiTissueMap map;
  GstMapInfo info;
  GstBuffer *out = NULL;
  gchar *reason = NULL;
  gboolean map_ok;
  gint64 quota_left;
  GstFlowReturn ret;

  if (self->quota_reached) {
    /* Slides already on their way when the quota was met. */
    gst_buffer_unref (slide);
    return GST_FLOW_EOS;
  }
  if (meta == NULL || !slide_visit_read (&visit, meta)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Received a slide buffer without a usable WsiSlideMeta (path, "
            "width and height are needed); is patchsampler fed by "
            "wsislidesrc or tissuemask?"), (NULL));
    gst_buffer_unref (slide);
    return GST_FLOW_ERROR;
  }
  if (!patch_sampler_check_cycle (self, &visit)) {
    gst_buffer_unref (slide);
    return GST_FLOW_ERROR;
  }
  patch_sampler_settings_snapshot (self, &settings);
  if (!self->quota_decided
      && !patch_sampler_decide_quota (self, &settings, meta)) {
    gst_buffer_unref (slide);
    return GST_FLOW_ERROR;
  }
  quota_left = patch_sampler_quota_left_checked (self);
  if (quota_left == QUOTA_INTERRUPTED) {
    gst_buffer_unref (slide);
    return GST_FLOW_FLUSHING;
  }
  if (quota_left == 0) {
    gst_buffer_unref (slide);
    return patch_sampler_finish_quota (self);
  }

  if (visit.tissue_rejected) {
    patch_sampler_skip (self, &visit,
        g_strdup_printf ("%s: rejected by tissuemask", visit.path));
    gst_buffer_unref (slide);
    return GST_FLOW_OK;
  }
  if (!patch_sampler_footprint (self, &settings, &visit, meta, &tmpl,
          &reason)) {
    patch_sampler_skip (self, &visit, reason);
    gst_buffer_unref (slide);
    return GST_FLOW_OK;
  }

  if (!gst_buffer_map (slide, &info, GST_MAP_READ)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Could not read the buffer of slide \"%s\".", visit.path), (NULL));
    gst_buffer_unref (slide);
    return GST_FLOW_ERROR;
  }
  map_ok = patch_sampler_tissue_map (self, &visit, info.data, info.size, &map);
  if (map_ok)
    out = patch_sampler_plan (self, &settings, &visit, meta, &map, &tmpl,
        &reason);
  gst_buffer_unmap (slide, &info);
  if (!map_ok) {
    gst_buffer_unref (slide);
    return GST_FLOW_ERROR;
  }

  if (out == NULL) {
    patch_sampler_skip (self, &visit, reason);
    gst_buffer_unref (slide);
    return GST_FLOW_OK;
  }

  if (quota_left > 0)
    truncate_plan (out, quota_left);
  patch_sampler_number (self, out);
  GST_BUFFER_OFFSET (out) = GST_BUFFER_OFFSET (slide);
  wsi_slide_meta_copy (out, slide);
  gst_buffer_unref (slide);

  self->cycle_patches += gst_buffer_get_size (out) / sizeof (WsiPatchRecord);
  wsi_delivery_planned (self->delivery, visit.cycle,
      gst_buffer_get_size (out) / sizeof (WsiPatchRecord));
  GST_OBJECT_LOCK (self);
  self->slides_sampled++;
  self->patches_planned += gst_buffer_get_size (out) / sizeof (WsiPatchRecord);
  self->stream_planned += gst_buffer_get_size (out) / sizeof (WsiPatchRecord);
  GST_OBJECT_UNLOCK (self);
  GST_LOG_OBJECT (self, "slide %u (%s) cycle %u: %" G_GSIZE_FORMAT
      " patches, footprint %u", visit.index, visit.path, visit.cycle,
      gst_buffer_get_size (out) / sizeof (WsiPatchRecord), tmpl.footprint);

  ret = gst_pad_push (self->srcpad, out);
  if (ret == GST_FLOW_OK) {
    quota_left = patch_sampler_quota_left_checked (self);
    if (quota_left == QUOTA_INTERRUPTED)
      ret = GST_FLOW_FLUSHING;
    else if (quota_left == 0)
      ret = patch_sampler_finish_quota (self);
  }
  return ret;
}

/* Delivery reports from downstream (dropped patches, acknowledged checks)
 * stop here; they arrive from downstream threads. */
static gboolean
gst_patch_sampler_src_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstPatchSampler *self = GST_PATCH_SAMPLER (parent);
  guint lost_cycle = 0;

  if (!wsi_delivery_handle_event (self->delivery, event, &lost_cycle))
    return gst_pad_event_default (pad, parent, event);
  gst_event_unref (event);
  if (lost_cycle > 0)
    patch_sampler_cycle_lost (self, lost_cycle - 1);
  return TRUE;
}

static gboolean
gst_patch_sampler_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstPatchSampler *self = GST_PATCH_SAMPLER (parent);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:{
      /* Slides in, coordinates out: our caps never depend on theirs. */
      GstCaps *caps = gst_pad_get_pad_template_caps (self->srcpad);

      gst_event_unref (event);
      event = gst_event_new_caps (caps);
      gst_caps_unref (caps);
      return gst_pad_push_event (self->srcpad, event);
    }
    case GST_EVENT_FLUSH_START:
      wsi_delivery_set_flushing (self->delivery, TRUE);
      break;
    case GST_EVENT_FLUSH_STOP:
      patch_sampler_reset_stream (self);
      wsi_delivery_set_flushing (self->delivery, FALSE);
      break;
    case GST_EVENT_EOS:{
      guint64 planned, sampled, skipped;

      if (self->quota_reached) {
        /* EOS already went downstream when the quota was met. */
        gst_event_unref (event);
        return TRUE;
      }
      patch_sampler_check_quota_met (self);
      GST_OBJECT_LOCK (self);
      planned = self->patches_planned;
      sampled = self->slides_sampled;
      skipped = self->slides_skipped;
      GST_OBJECT_UNLOCK (self);
      if (self->quota_from_rank)
        ;                       /* a shortfall was reported just above */
      else if (planned == 0 && sampled + skipped == 0)
        GST_ELEMENT_ERROR (self, STREAM, FAILED,
            ("The stream ended without a single patch: no slide arrived."),
            (NULL));
      else if (planned == 0)
        GST_ELEMENT_ERROR (self, STREAM, FAILED,
            ("The stream ended without a single patch: none of the %"
                G_GUINT64_FORMAT " slide visits gave one (last: %s).",
                skipped, GST_STR_NULL (self->cycle_last_skip)), (NULL));
      break;
    }
    default:
      break;
  }
  return gst_pad_event_default (pad, parent, event);
}

static GstStateChangeReturn
gst_patch_sampler_change_state (GstElement * element,
    GstStateChange transition)
{
  GstPatchSampler *self = GST_PATCH_SAMPLER (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    wsi_delivery_set_flushing (self->delivery, TRUE);
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
    wsi_delivery_set_flushing (self->delivery, FALSE);
    patch_sampler_reset_stream (self);
    GST_OBJECT_LOCK (self);
    self->slides_sampled = 0;
    self->slides_skipped = 0;
    self->patches_planned = 0;
    GST_OBJECT_UNLOCK (self);
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  if (ret == GST_STATE_CHANGE_FAILURE)
    return ret;

  switch (transition) {
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      patch_sampler_reset_stream (self);
      break;
    case GST_STATE_CHANGE_READY_TO_NULL:
      g_clear_pointer (&self->integral, g_free);
      self->integral_len = 0;
      break;
    default:
      break;
  }
  return ret;
}

static void
gst_patch_sampler_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstPatchSampler *self = GST_PATCH_SAMPLER (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODE:
      self->settings.mode = g_value_get_enum (value);
      break;
    case PROP_PATCH_SIZE:
      self->settings.patch_size = g_value_get_uint (value);
      break;
    case PROP_TARGET_MPP:{
      gdouble mpp = g_value_get_double (value);

      /* The range check lets NaN through. */
      if (isnan (mpp))
        g_warning ("patchsampler: target-mpp must be a number >= 0 (µm/px); "
            "keeping %g", self->settings.target_mpp);
      else
        self->settings.target_mpp = mpp;
      break;
    }
    case PROP_LEVEL:
      self->settings.level = g_value_get_int (value);
      break;
    case PROP_PATCHES_PER_SLIDE:{
      gint n = g_value_get_int (value);

      if (n == 0)
        g_warning ("patchsampler: patches-per-slide=0 would plan nothing; "
            "use a positive count or -1 (grid: all positions); keeping %d",
            self->settings.patches_per_slide);
      else
        self->settings.patches_per_slide = n;
      break;
    }
    case PROP_MIN_TISSUE:{
      gdouble fraction = g_value_get_double (value);

      if (isnan (fraction))
        g_warning ("patchsampler: min-tissue must be a number in 0..1; "
            "keeping %g", self->settings.min_tissue);
      else
        self->settings.min_tissue = fraction;
      break;
    }
    case PROP_REPLACEMENT:
      self->settings.replacement = g_value_get_boolean (value);
      break;
    case PROP_STRIDE:
      self->settings.stride = g_value_get_uint (value);
      break;
    case PROP_MAX_ATTEMPTS:
      self->settings.max_attempts = g_value_get_uint (value);
      break;
    case PROP_ALIGN:
      self->settings.align = g_value_get_enum (value);
      break;
    case PROP_MAX_PATCHES:
      self->max_patches = g_value_get_int64 (value);
      break;
    case PROP_RANK_QUOTA:
      self->rank_quota = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_sampler_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstPatchSampler *self = GST_PATCH_SAMPLER (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODE:
      g_value_set_enum (value, self->settings.mode);
      break;
    case PROP_PATCH_SIZE:
      g_value_set_uint (value, self->settings.patch_size);
      break;
    case PROP_TARGET_MPP:
      g_value_set_double (value, self->settings.target_mpp);
      break;
    case PROP_LEVEL:
      g_value_set_int (value, self->settings.level);
      break;
    case PROP_PATCHES_PER_SLIDE:
      g_value_set_int (value, self->settings.patches_per_slide);
      break;
    case PROP_MIN_TISSUE:
      g_value_set_double (value, self->settings.min_tissue);
      break;
    case PROP_REPLACEMENT:
      g_value_set_boolean (value, self->settings.replacement);
      break;
    case PROP_STRIDE:
      g_value_set_uint (value, self->settings.stride);
      break;
    case PROP_ALIGN:
      g_value_set_enum (value, self->settings.align);
      break;
    case PROP_MAX_ATTEMPTS:
      g_value_set_uint (value, self->settings.max_attempts);
      break;
    case PROP_SLIDES_SAMPLED:
      g_value_set_uint64 (value, self->slides_sampled);
      break;
    case PROP_SLIDES_SKIPPED:
      g_value_set_uint64 (value, self->slides_skipped);
      break;
    case PROP_PATCHES_PLANNED:
      g_value_set_uint64 (value, self->patches_planned);
      break;
    case PROP_MAX_PATCHES:
      g_value_set_int64 (value, self->max_patches);
      break;
    case PROP_RANK_QUOTA:
      g_value_set_boolean (value, self->rank_quota);
      break;
    case PROP_QUOTA:
      g_value_set_int64 (value, self->quota);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_sampler_finalize (GObject * object)
{
  GstPatchSampler *self = GST_PATCH_SAMPLER (object);

  g_free (self->cycle_last_skip);
  g_free (self->integral);
  g_hash_table_unref (self->warned_slides);
  wsi_delivery_free (self->delivery);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_patch_sampler_class_init (GstPatchSamplerClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_PLAYING;
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;
  const GParamFlags rw_ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;

  gobject_class->set_property = gst_patch_sampler_set_property;
  gobject_class->get_property = gst_patch_sampler_get_property;
  gobject_class->finalize = gst_patch_sampler_finalize;

  g_object_class_install_property (gobject_class, PROP_MODE,
      g_param_spec_enum ("mode", "Mode",
          "Where patches go: random = uniformly random positions on tissue; "
          "grid = a regular grid (step: stride) in raster order",
          GST_TYPE_PATCH_SAMPLER_MODE, DEFAULT_MODE, rw));
  g_object_class_install_property (gobject_class, PROP_PATCH_SIZE,
      g_param_spec_uint ("patch-size", "Patch size",
          "Side of the output patch, in output pixels (8..8192, default 256)",
          MIN_PATCH_SIZE, MAX_PATCH_SIZE, DEFAULT_PATCH_SIZE, rw));
  g_object_class_install_property (gobject_class, PROP_TARGET_MPP,
      g_param_spec_double ("target-mpp", "Target resolution",
          "Resolution of the output patches in microns per pixel "
          "(0..1000, default 0 = the slide's level 0). > 0 needs the slide's "
          "mpp (footprint = round (patch-size * target-mpp / mpp-x)) and "
          "takes precedence over level",
          0.0, MAX_TARGET_MPP, DEFAULT_TARGET_MPP, rw));
  g_object_class_install_property (gobject_class, PROP_LEVEL,
      g_param_spec_int ("level", "Level",
          "Pyramid level whose scale the patches have, when target-mpp is 0 "
          "(footprint = round (patch-size * downsample (level))); -1..64, "
          "default -1 = unused. Slides without that level are skipped",
          -1, MAX_LEVEL, DEFAULT_LEVEL, rw));
  g_object_class_install_property (gobject_class, PROP_PATCHES_PER_SLIDE,
      g_param_spec_int ("patches-per-slide", "Patches per slide",
          "Patches planned per slide visit (1..1000000, default 100); "
          "-1 = all positions (grid mode only). Random mode plans fewer only "
          "when no lattice position has enough tissue; grid mode picks an unbiased random "
          "subset of the tissue positions, kept in raster order",
          -1, MAX_PATCHES_PER_SLIDE, DEFAULT_PATCHES_PER_SLIDE, rw));
  g_object_class_install_property (gobject_class, PROP_MIN_TISSUE,
      g_param_spec_double ("min-tissue", "Minimum tissue share",
          "Share of a patch footprint's mask pixels that must be tissue for "
          "the patch to be kept (0..1, default 0.5; 0 = anywhere on the "
          "slide, 1 = wholly on tissue)",
          0.0, 1.0, DEFAULT_MIN_TISSUE, rw));
  g_object_class_install_property (gobject_class, PROP_REPLACEMENT,
      g_param_spec_boolean ("replacement", "With replacement",
          "Random mode: TRUE (default) draws positions independently, so a "
          "position may repeat; FALSE never repeats a position within a "
          "slide visit (draws from a lattice of step footprint/4)",
          DEFAULT_REPLACEMENT, rw));
  g_object_class_install_property (gobject_class, PROP_STRIDE,
      g_param_spec_uint ("stride", "Grid stride",
          "Grid mode: distance between grid positions in level-0 pixels "
          "(0..2147483647, default 0 = the footprint, non-overlapping)",
          0, G_MAXINT, DEFAULT_STRIDE, rw));
  g_object_class_install_property (gobject_class, PROP_ALIGN,
      g_param_spec_enum ("align", "Align",
          "none: positions as drawn; tile: snap every position down to the "
          "tile grid of the pyramid level patchreader will read (from the "
          "slide meta's level-tile-widths/-heights), so that a patch the "
          "size of a tile costs one tile decode. Slides whose format has no "
          "tiles keep their positions",
          GST_TYPE_PATCH_SAMPLER_ALIGN, DEFAULT_ALIGN, rw));
  g_object_class_install_property (gobject_class, PROP_MAX_ATTEMPTS,
      g_param_spec_uint ("max-attempts", "Maximum attempts",
          "Random mode with replacement: most uniformly random positions "
          "drawn per slide visit; on a slide with so little tissue that they "
          "run out, the remaining patches are drawn from the tissue positions "
          "of a lattice of step footprint/4 (0..4294967295, default 0 = "
          "50 * patches-per-slide)",
          0, G_MAXUINT, DEFAULT_MAX_ATTEMPTS, rw));
  g_object_class_install_property (gobject_class, PROP_SLIDES_SAMPLED,
      g_param_spec_uint64 ("slides-sampled", "Slides sampled",
          "Slide visits that gave at least one patch since the element "
          "last started (read-only)", 0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_SLIDES_SKIPPED,
      g_param_spec_uint64 ("slides-skipped", "Slides skipped",
          "Slide visits that gave no patch (rejected, too small, unknown "
          "mpp, missing level, no tissue found) since the element last "
          "started (read-only)", 0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_PATCHES_PLANNED,
      g_param_spec_uint64 ("patches-planned", "Patches planned",
          "Patch records pushed since the element last started (read-only)",
          0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_MAX_PATCHES,
      g_param_spec_int64 ("max-patches", "Maximum patches",
          "Most patches planned over the whole stream (the last slide's plan "
          "is cut short); then EOS goes downstream and upstream is told to "
          "stop. Patches, -1 to 2^63-1, default -1 = unlimited",
          -1, G_MAXINT64, DEFAULT_MAX_PATCHES, rw_ready));
  g_object_class_install_property (gobject_class, PROP_RANK_QUOTA,
      g_param_spec_boolean ("rank-quota", "Per-rank quota",
          "Finite DDP runs: end the stream after exactly rank-slides-min x "
          "patches-per-slide patches (rank-slides-min from the first slide's "
          "meta, the same on every rank; with max-patches too the smaller "
          "wins). Use with wsislidesrc cycle=true so shortfalls are refilled; "
          "an upstream EOS before the quota is an error. Default: false",
          DEFAULT_RANK_QUOTA, rw_ready));
  g_object_class_install_property (gobject_class, PROP_QUOTA,
      g_param_spec_int64 ("quota", "Quota",
          "Patches this stream ends after, decided at the first slide from "
          "max-patches and rank-quota (read-only; patches, -1 = none or not "
          "yet known)", -1, G_MAXINT64, NO_QUOTA, ro));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Whole-slide patch sampler", "Filter/Analyzer",
      "Plans patch coordinates (random or grid, on tissue, at a target "
      "resolution) for each whole-slide image",
      "gst-wsi developers <https://example.invalid/gst-wsi>");

  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_patch_sampler_change_state);

  gst_type_mark_as_plugin_api (GST_TYPE_PATCH_SAMPLER_MODE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_PATCH_SAMPLER_ALIGN, 0);
}

static void
gst_patch_sampler_init (GstPatchSampler * self)
{
  self->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_patch_sampler_chain));
  gst_pad_set_event_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_patch_sampler_sink_event));
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);

  self->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  gst_pad_set_event_function (self->srcpad,
      GST_DEBUG_FUNCPTR (gst_patch_sampler_src_event));
  gst_pad_use_fixed_caps (self->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  self->settings.mode = DEFAULT_MODE;
  self->settings.align = DEFAULT_ALIGN;
  self->settings.patch_size = DEFAULT_PATCH_SIZE;
  self->settings.target_mpp = DEFAULT_TARGET_MPP;
  self->settings.level = DEFAULT_LEVEL;
  self->settings.patches_per_slide = DEFAULT_PATCHES_PER_SLIDE;
  self->settings.min_tissue = DEFAULT_MIN_TISSUE;
  self->settings.replacement = DEFAULT_REPLACEMENT;
  self->settings.stride = DEFAULT_STRIDE;
  self->settings.max_attempts = DEFAULT_MAX_ATTEMPTS;
  self->max_patches = DEFAULT_MAX_PATCHES;
  self->rank_quota = DEFAULT_RANK_QUOTA;
  self->quota = NO_QUOTA;
  self->warned_slides = g_hash_table_new (g_direct_hash, g_direct_equal);
  self->delivery = wsi_delivery_new ();
}

/* One-time setup, whichever registration comes first. */
static void
patch_sampler_element_init (void)
{
  static gsize init = 0;

  if (g_once_init_enter (&init)) {
    GST_DEBUG_CATEGORY_INIT (gst_patch_sampler_debug, "patchsampler", 0,
        "whole-slide patch sampler");
    wsi_record_register_metas ();
    g_once_init_leave (&init, 1);
  }
}
