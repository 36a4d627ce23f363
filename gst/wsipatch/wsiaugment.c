/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsiaugment.c: see wsiaugment.h for the contract. */

#include <math.h>
#include <string.h>

#include "wsiaugment.h"
#include <gst/wsi/wsirng.h>

/* The vectorised loops get an AVX2 clone picked at load time where the
 * compiler and loader support it (GCC ifuncs). Both clones do the same
 * float operations in the same order (no contraction into FMA: the build
 * passes -ffp-contract=off), so the bytes do not depend on the CPU. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
    && defined(__ELF__) && !defined(__SANITIZE_ADDRESS__)
#define WSI_VECTOR_CLONES __attribute__ ((target_clones ("avx2", "default")))
#else
#define WSI_VECTOR_CLONES
#endif

/* HED and jitter both come down to "out_k = table[sum_c mix_c[x_c][k]]":
 * fixed-point sums of per-channel contributions, one output table. */
#define MIX_STRIDE 4            /* int32 entries per input value: 3 used */

/* Optical density in 1/8192 units; exp() tabulated every 1/2048 OD. */
#define OD_FRAC_BITS 13
#define EXP_STEP_BITS 11
#define EXP_SHIFT (OD_FRAC_BITS - EXP_STEP_BITS)
/* OD 0..6.5: beyond, 255 exp(-OD) < 0.4 rounds to 0. */
#define EXP_TABLE_SIZE (13 * (1 << EXP_STEP_BITS) / 2 + 1)
/* Tellez et al. / the peer: P = exp(-OD) - EPSILON, OD = -ln(P + EPSILON). */
#define HED_EPSILON 1e-6

/* Jitter sums in 1/256 of a level. */
#define JITTER_FRAC_BITS 8

/* The packed form of the mixing tables: a pixel's three sums in one
 * 64-bit add chain, three 21-bit fields, each table entry's field holding
 * its contribution + PACK_BIAS; with |contribution| < PACK_BIAS no field
 * of a sum of three entries leaves 0..2^21, so nothing carries. Used when
 * every entry fits (all realistic settings; extreme ones take the
 * unpacked path). */
#define PACK_BITS 21
#define PACK_MASK ((G_GUINT64_CONSTANT (1) << PACK_BITS) - 1)
#define PACK_BIAS (1 << 18)

struct _WsiAugmentScratch
{
  guint8 *copy;                 /* flips and turns: the image before */
  gsize copy_size;
  gfloat *floats;               /* blur: padded row, accumulator, ring */
  gsize floats_size;
  gint32 mix[3][256 * MIX_STRIDE];
  guint64 packed[3][256];
};

/* skimage.color.rgb_from_hed: rows are the H, E and DAB stain vectors
 * (optical density of each stain in R, G, B). */
static const gdouble rgb_from_hed[3][3] = {
  {0.65, 0.70, 0.29},
  {0.07, 0.99, 0.11},
  {0.27, 0.57, 0.78},
};

/* RGB -> YIQ (NTSC), rows Y, I, Q; torchvision's grey weights. */
static const gdouble rgb_to_yiq[3][3] = {
  {0.299, 0.587, 0.114},
  {0.596, -0.274, -0.322},
  {0.211, -0.523, 0.312},
};

static const gdouble grey_weights[3] = { 0.2989, 0.587, 0.114 };

static gdouble od_table[256];
static guint8 exp_table[EXP_TABLE_SIZE];
static guint8 identity_table[256];
/* The packed passes' output tables: one entry for every value a packed
 * field can hold (sum + 3 PACK_BIAS, shifted), clamping included, so no
 * compare or branch per byte. HED's is 512 KiB, of which a pass touches
 * the 13 k entries of OD 0..6.5 and the lines of the clipped extremes. */
static guint8 hed_wide_table[1 << (PACK_BITS - EXP_SHIFT)];
static guint8 jitter_wide_table[1 << (PACK_BITS - JITTER_FRAC_BITS)];
static gdouble hed_from_rgb[3][3];
static gdouble yiq_to_rgb[3][3];

static void
invert3 (const gdouble m[3][3], gdouble inv[3][3])
{
  gdouble det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
      - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
      + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  guint i, j;

  for (i = 0; i < 3; i++)
    for (j = 0; j < 3; j++) {
      /* cofactor of (j, i), cyclic indices keep the sign */
      guint r0 = (j + 1) % 3, r1 = (j + 2) % 3;
      guint c0 = (i + 1) % 3, c1 = (i + 2) % 3;

      inv[i][j] = (m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0]) / det;
    }
}

static void
multiply3 (const gdouble a[3][3], const gdouble b[3][3], gdouble out[3][3])
{
  guint i, j, k;

  for (i = 0; i < 3; i++)
    for (j = 0; j < 3; j++) {
      out[i][j] = 0.0;
      for (k = 0; k < 3; k++)
        out[i][j] += a[i][k] * b[k][j];
    }
}

static void
tables_init (void)
{
  static gsize done = 0;
  guint i;

  if (!g_once_init_enter (&done))
    return;
  for (i = 0; i < 256; i++) {
    od_table[i] = -log (i / 255.0 + HED_EPSILON);
    identity_table[i] = i;
  }
  for (i = 0; i < EXP_TABLE_SIZE; i++) {
    gdouble p = exp (-(gdouble) i / (1 << EXP_STEP_BITS)) - HED_EPSILON;

    exp_table[i] = (guint8) CLAMP (lround (p * 255.0), 0, 255);
  }
  for (i = 0; i < G_N_ELEMENTS (hed_wide_table); i++) {
    gint j = (gint) i - (3 * PACK_BIAS >> EXP_SHIFT);

    hed_wide_table[i] = j < 0 ? 255 : j >= EXP_TABLE_SIZE ? 0 : exp_table[j];
  }
  for (i = 0; i < G_N_ELEMENTS (jitter_wide_table); i++) {
    gint level = (gint) i - (3 * PACK_BIAS >> JITTER_FRAC_BITS);

    jitter_wide_table[i] = CLAMP (level, 0, 255);
  }
  invert3 (rgb_from_hed, hed_from_rgb);
  invert3 (rgb_to_yiq, yiq_to_rgb);
  g_once_init_leave (&done, 1);
}

/* ---- plans --------------------------------------------------------------- */

gboolean
wsi_augment_settings_is_identity (const WsiAugmentSettings * s)
{
  return s->flip_h_probability <= 0.0 && s->flip_v_probability <= 0.0
      && s->rotate90_probability <= 0.0 && s->hed_probability <= 0.0
      && s->jitter_probability <= 0.0 && s->blur_probability <= 0.0
      && s->grayscale_probability <= 0.0 && s->solarize_probability <= 0.0;
}

/* A jitter factor from [max (0, 1 - amount), 1 + amount]. */
static gfloat
draw_factor (WsiRng * rng, gdouble amount)
{
  return (gfloat) wsi_rng_range (rng, MAX (0.0, 1.0 - amount), 1.0 + amount);
}

void
wsi_augment_plan_draw (WsiAugmentPlan * plan, const WsiAugmentSettings * s,
    guint64 seed, guint64 sequence, guint view_index)
{
  WsiRng rng;
  gboolean rotate;
  guint turns, c;

  /* Every number is drawn whatever the probabilities: each operation's
   * draws sit at fixed places in the sequence. */
  wsi_rng_seed_keys (&rng, seed, sequence, view_index, WSI_AUGMENT_RNG_KEY);
  plan->flip_h = wsi_rng_uniform (&rng) < s->flip_h_probability;
  plan->flip_v = wsi_rng_uniform (&rng) < s->flip_v_probability;
  rotate = wsi_rng_uniform (&rng) < s->rotate90_probability;
  turns = 1 + (guint) wsi_rng_below (&rng, 3);
  plan->quarter_turns = rotate ? turns : 0;

  plan->hed = wsi_rng_uniform (&rng) < s->hed_probability;
  /* The peer's order: alpha then beta, channel by channel. */
  for (c = 0; c < 3; c++) {
    plan->hed_alpha[c] = (gfloat) wsi_rng_range (&rng, 1.0 - s->hed_sigma,
        1.0 + s->hed_sigma);
    plan->hed_beta[c] = (gfloat) wsi_rng_range (&rng, -s->hed_sigma_bias,
        s->hed_sigma_bias);
  }

  plan->jitter = wsi_rng_uniform (&rng) < s->jitter_probability;
  plan->brightness = draw_factor (&rng, s->brightness);
  plan->contrast = draw_factor (&rng, s->contrast);
  plan->saturation = draw_factor (&rng, s->saturation);
  plan->hue = (gfloat) wsi_rng_range (&rng, -s->hue, s->hue);

  plan->blur = wsi_rng_uniform (&rng) < s->blur_probability;
  plan->blur_sigma = (gfloat) wsi_rng_range (&rng, s->blur_sigma_min,
      s->blur_sigma_max);
  plan->blur_radius = s->blur_radius;

  /* added later: after every earlier draw, which they leave as they were */
  plan->grayscale = wsi_rng_uniform (&rng) < s->grayscale_probability;
  plan->solarize = wsi_rng_uniform (&rng) < s->solarize_probability;
  plan->solarize_threshold = s->solarize_threshold;
}

gboolean
wsi_augment_plan_is_identity (const WsiAugmentPlan * plan)
{
  return !plan->flip_h && !plan->flip_v && plan->quarter_turns == 0
      && !plan->hed && !plan->jitter && !plan->blur && !plan->grayscale
      && !plan->solarize;
}

WsiAugmentScratch *
wsi_augment_scratch_new (void)
{
  tables_init ();
  return g_new0 (WsiAugmentScratch, 1);
}

void
wsi_augment_scratch_free (WsiAugmentScratch * scratch)
{
  if (scratch == NULL)
    return;
  g_free (scratch->copy);
  g_free (scratch->floats);
  g_free (scratch);
}

static guint8 *
scratch_bytes (WsiAugmentScratch * scratch, gsize size)
{
  if (scratch->copy_size < size) {
    g_free (scratch->copy);
    scratch->copy = g_malloc (size);
    scratch->copy_size = size;
  }
  return scratch->copy;
}

static gfloat *
scratch_floats (WsiAugmentScratch * scratch, gsize n)
{
  if (scratch->floats_size < n) {
    g_free (scratch->floats);
    scratch->floats = g_new (gfloat, n);
    scratch->floats_size = n;
  }
  return scratch->floats;
}

/* ---- flips and quarter turns -------------------------------------------- */

/* Where destination pixel (x, y) comes from: undo the turns (np.rot90:
 * out (x, y) = in (W - 1 - y, x)), then the vertical, then the horizontal
 * flip. */
static void
source_of (gint w, gint h, gboolean flip_h, gboolean flip_v, guint turns,
    gint x, gint y, gint * sx, gint * sy)
{
  guint t;

  for (t = 0; t < turns; t++) {
    gint nx = w - 1 - y;

    y = x;
    x = nx;
  }
  if (flip_v)
    y = h - 1 - y;
  if (flip_h)
    x = w - 1 - x;
  *sx = x;
  *sy = y;
}

void
wsi_augment_flip_rotate (const WsiAugmentImage * im, gboolean flip_h,
    gboolean flip_v, guint quarter_turns, WsiAugmentScratch * scratch)
{
  const gint w = im->width, h = im->height, pb = im->pixel_bytes;
  const gsize row_bytes = (gsize) w * pb;
  guint turns = w == h ? quarter_turns % 4 : 0;
  gssize base, step_x, step_y;
  guint8 *copy;
  gint sx, sy, x, y;

  if ((!flip_h && !flip_v && turns == 0) || w == 0 || h == 0)
    return;
  copy = scratch_bytes (scratch, row_bytes * h);
  for (y = 0; y < h; y++)
    memcpy (copy + y * row_bytes, im->data + y * im->stride, row_bytes);

  /* The mapping is affine: a start and two byte steps describe it. */
  source_of (w, h, flip_h, flip_v, turns, 0, 0, &sx, &sy);
  base = sy * (gssize) row_bytes + sx * pb;
  source_of (w, h, flip_h, flip_v, turns, 1, 0, &sx, &sy);
  step_x = sy * (gssize) row_bytes + sx * pb - base;
  source_of (w, h, flip_h, flip_v, turns, 0, 1, &sx, &sy);
  step_y = sy * (gssize) row_bytes + sx * pb - base;

  for (y = 0; y < h; y++) {
    guint8 *out = im->data + y * im->stride;
    const guint8 *in = copy + base + y * step_y;

    if (pb == 4) {
      for (x = 0; x < w; x++, out += 4, in += step_x)
        memcpy (out, in, 4);
    } else {
      for (x = 0; x < w; x++, out += pb, in += step_x)
        memcpy (out, in, 3);
    }
  }
}

/* ---- per-pixel colour mixing -------------------------------------------- */

/* Every pixel: s_k = sum over channels c of mix[c][x_c][k], clamped to
 * [0, max], becomes out_table[s_k >> shift]. */
static void
mix_pixels (const WsiAugmentImage * im, gint32 mix[3][256 * MIX_STRIDE],
    gint32 max, guint shift, const guint8 * out_table)
{
  const guint pb = im->pixel_bytes, ro = im->r, go = im->g, bo = im->b;
  guint x, y;

  for (y = 0; y < im->height; y++) {
    guint8 *p = im->data + y * im->stride;

    for (x = 0; x < im->width; x++, p += pb) {
      const gint32 *tr = mix[0] + p[ro] * MIX_STRIDE;
      const gint32 *tg = mix[1] + p[go] * MIX_STRIDE;
      const gint32 *tb = mix[2] + p[bo] * MIX_STRIDE;
      gint32 s0 = tr[0] + tg[0] + tb[0];
      gint32 s1 = tr[1] + tg[1] + tb[1];
      gint32 s2 = tr[2] + tg[2] + tb[2];

      p[ro] = out_table[CLAMP (s0, 0, max) >> shift];
      p[go] = out_table[CLAMP (s1, 0, max) >> shift];
      p[bo] = out_table[CLAMP (s2, 0, max) >> shift];
    }
  }
}

/* Packs @mix into @packed; FALSE when some entry does not fit. */
static gboolean
pack_mix (gint32 mix[3][256 * MIX_STRIDE], guint64 packed[3][256])
{
  guint c, v, k;

  for (c = 0; c < 3; c++)
    for (v = 0; v < 256; v++) {
      guint64 word = 0;

      for (k = 0; k < 3; k++) {
        gint32 m = mix[c][v * MIX_STRIDE + k];

        if (m <= -PACK_BIAS || m >= PACK_BIAS)
          return FALSE;
        word |= (guint64) (m + PACK_BIAS) << (k * PACK_BITS);
      }
      packed[c][v] = word;
    }
  return TRUE;
}

/* mix_pixels() on packed tables: 3 loads and 2 adds give a pixel's three
 * sums, each field indexes @wide_table directly (see hed_wide_table).
 * Inlined per layout below so the channel offsets are constants. */
static inline void
mix_packed_layout (const WsiAugmentImage * im, guint64 packed[3][256],
    const guint8 * wide_table, const guint shift, const guint pb,
    const guint ro, const guint go, const guint bo)
{
  guint x, y;

  for (y = 0; y < im->height; y++) {
    guint8 *p = im->data + y * im->stride;

    for (x = 0; x < im->width; x++, p += pb) {
      guint64 sum = packed[0][p[ro]] + packed[1][p[go]] + packed[2][p[bo]];

      p[ro] = wide_table[(sum & PACK_MASK) >> shift];
      p[go] = wide_table[((sum >> PACK_BITS) & PACK_MASK) >> shift];
      p[bo] = wide_table[(sum >> (2 * PACK_BITS)) >> shift];
    }
  }
}

/* Runs the mixing tables on the image: packed when every entry fits, else
 * the unpacked sums clamped to [0, max] index @out_table. */
static void
mix_image (const WsiAugmentImage * im, WsiAugmentScratch * scratch,
    gint32 max, guint shift, const guint8 * out_table,
    const guint8 * wide_table)
{
  const guint pb = im->pixel_bytes;

  if (!pack_mix (scratch->mix, scratch->packed)) {
    mix_pixels (im, scratch->mix, max, shift, out_table);
  } else if (pb == 3 && im->r == 0 && im->g == 1 && im->b == 2) {
    mix_packed_layout (im, scratch->packed, wide_table, shift, 3, 0, 1, 2);
  } else if (pb == 4 && im->r == 0 && im->g == 1 && im->b == 2) {
    mix_packed_layout (im, scratch->packed, wide_table, shift, 4, 0, 1, 2);
  } else {
    mix_packed_layout (im, scratch->packed, wide_table, shift, pb, im->r,
        im->g, im->b);
  }
}

/* Fills mix[c][v][k] = round (value[v] * m[c][k] * 2^frac_bits), plus
 * @offset (rounding, constant terms) on channel 0 only. */
static void
fill_mix (gint32 mix[3][256 * MIX_STRIDE], const gdouble value[256],
    const gdouble m[3][3], guint frac_bits, const gdouble offset[3])
{
  const gdouble one = (gdouble) (1 << frac_bits);
  guint c, k, v;

  for (c = 0; c < 3; c++)
    for (v = 0; v < 256; v++) {
      for (k = 0; k < 3; k++)
        mix[c][v * MIX_STRIDE + k] = (gint32) lround (value[v] * m[c][k] *
            one + (c == 0 ? offset[k] : 0.0));
      mix[c][v * MIX_STRIDE + 3] = 0;
    }
}

void
wsi_augment_hed (const WsiAugmentImage * im, const gfloat alpha[3],
    const gfloat beta[3], WsiAugmentScratch * scratch)
{
  gdouble scaled[3][3], a[3][3], offset[3];
  guint j, k;

  tables_init ();
  /* OD' = ((OD M^-1) diag (alpha) + beta) M = OD A + beta M, with
   * A = M^-1 diag (alpha) M (row vectors, as the peer's "od @ conv"). */
  for (j = 0; j < 3; j++)
    for (k = 0; k < 3; k++)
      scaled[j][k] = alpha[j] * rgb_from_hed[j][k];
  multiply3 (hed_from_rgb, scaled, a);
  for (k = 0; k < 3; k++) {
    gdouble b = 0.0;

    for (j = 0; j < 3; j++)
      b += beta[j] * rgb_from_hed[j][k];
    /* plus half a table step, so the shift rounds to nearest */
    offset[k] = b * (1 << OD_FRAC_BITS) + (1 << (EXP_SHIFT - 1));
  }
  fill_mix (scratch->mix, od_table, a, OD_FRAC_BITS, offset);
  mix_image (im, scratch, (EXP_TABLE_SIZE - 1) << EXP_SHIFT, EXP_SHIFT,
      exp_table, hed_wide_table);
}

/* Bytes a channel-statistics sweep covers: a multiple of 3 and 4, so
 * byte j of every chunk belongs to the same channel. */
#define STAT_CHUNK 48

/* Adds, per byte position j of the 48-byte chunks of a row, the bytes
 * <= t to sum[j] and counts the others in over[j] (vectorised). */
WSI_VECTOR_CLONES static void
row_stats (const guint8 * restrict p, gint n, guint8 t,
    guint32 * restrict sum, guint32 * restrict over)
{
  gint i = 0, j;

  for (; i + STAT_CHUNK <= n; i += STAT_CHUNK)
    for (j = 0; j < STAT_CHUNK; j++) {
      guint32 x = p[i + j];

      sum[j] += x <= t ? x : 0;
      over[j] += x > t;
    }
  for (j = 0; i + j < n; j++) {
    guint32 x = p[i + j];

    sum[j] += x <= t ? x : 0;
    over[j] += x > t;
  }
}

/* Mean grey of the image after brightness @b (clamp (b x), as the jitter
 * curve): per channel, b times the sum of the bytes that do not clip plus
 * 255 for each that does, from one vectorised sweep. */
static gdouble
mean_grey_after_brightness (const WsiAugmentImage * im, gdouble b)
{
  const guint pb = im->pixel_bytes;
  guint64 sum[STAT_CHUNK] = { 0 }, over[STAT_CHUNK] = { 0 };
  gdouble channel_sum[4] = { 0 }, channel_over[4] = { 0 };
  guint t = 255, y, j;

  if (im->width == 0 || im->height == 0)
    return 0.0;
  /* t: the largest byte the curve does not clip */
  while (t > 0 && b * t > 255.0)
    t--;
  for (y = 0; y < im->height; y++) {
    guint32 row_sum[STAT_CHUNK] = { 0 }, row_over[STAT_CHUNK] = { 0 };

    /* per row in 32 bits (no overflow), then into the 64-bit totals */
    row_stats (im->data + y * im->stride, im->width * pb, t, row_sum,
        row_over);
    for (j = 0; j < STAT_CHUNK; j++) {
      sum[j] += row_sum[j];
      over[j] += row_over[j];
    }
  }
  for (j = 0; j < STAT_CHUNK; j++) {
    channel_sum[j % pb] += sum[j];
    channel_over[j % pb] += over[j];
  }
  return (grey_weights[0] * (b * channel_sum[im->r] + 255.0 *
          channel_over[im->r]) + grey_weights[1] * (b * channel_sum[im->g] +
          255.0 * channel_over[im->g]) + grey_weights[2] * (b *
          channel_sum[im->b] + 255.0 * channel_over[im->b])) /
      ((gdouble) im->width * im->height);
}

void
wsi_augment_jitter (const WsiAugmentImage * im, gfloat brightness,
    gfloat contrast, gfloat saturation, gfloat hue,
    WsiAugmentScratch * scratch)
{
  gdouble lut[256], sat[3][3], rot[3][3], tmp[3][3], hue_m[3][3];
  gdouble colour[3][3], rows[3][3];
  gdouble offset[3] = { 0.5 * (1 << JITTER_FRAC_BITS),
    0.5 * (1 << JITTER_FRAC_BITS), 0.5 * (1 << JITTER_FRAC_BITS)
  };
  gdouble angle = 2.0 * G_PI * hue;
  guint v, i, j;

  tables_init ();
  /* Brightness and contrast act on each channel alike: one curve. */
  for (v = 0; v < 256; v++)
    lut[v] = CLAMP (brightness * (gdouble) v, 0.0, 255.0);
  if (contrast != 1.0f) {
    gdouble mean = mean_grey_after_brightness (im, brightness);

    for (v = 0; v < 256; v++)
      lut[v] = CLAMP (contrast * lut[v] + (1.0 - contrast) * mean, 0.0,
          255.0);
  }

  /* Saturation then hue, as 3x3 matrices on column vectors. */
  for (i = 0; i < 3; i++)
    for (j = 0; j < 3; j++)
      sat[i][j] = (i == j ? saturation : 0.0) + (1.0 - saturation) *
          grey_weights[j];
  memset (rot, 0, sizeof (rot));
  rot[0][0] = 1.0;
  rot[1][1] = rot[2][2] = cos (angle);
  rot[1][2] = -sin (angle);
  rot[2][1] = sin (angle);
  multiply3 (rot, rgb_to_yiq, tmp);
  multiply3 (yiq_to_rgb, tmp, hue_m);
  multiply3 (hue_m, sat, colour);
  /* fill_mix wants rows per input channel: transpose. */
  for (i = 0; i < 3; i++)
    for (j = 0; j < 3; j++)
      rows[j][i] = colour[i][j];

  fill_mix (scratch->mix, lut, rows, JITTER_FRAC_BITS, offset);
  mix_image (im, scratch, (256 << JITTER_FRAC_BITS) - 1, JITTER_FRAC_BITS,
      identity_table, jitter_wide_table);
}

/* ---- greyscale and solarization ----------------------------------------- */

void
wsi_augment_grayscale (const WsiAugmentImage * im,
    WsiAugmentScratch * scratch)
{
  /* saturation 0: every channel becomes the pixel's grey */
  wsi_augment_jitter (im, 1.0f, 1.0f, 0.0f, 0.0f, scratch);
}

void
wsi_augment_solarize (const WsiAugmentImage * im, guint threshold)
{
  const guint pb = im->pixel_bytes, ro = im->r, go = im->g, bo = im->b;
  guint8 lut[256];
  guint x, y, v;

  for (v = 0; v < 256; v++)
    lut[v] = v >= threshold ? 255 - v : v;
  for (y = 0; y < im->height; y++) {
    guint8 *p = im->data + y * im->stride;

    for (x = 0; x < im->width; x++, p += pb) {
      p[ro] = lut[p[ro]];
      p[go] = lut[p[go]];
      p[bo] = lut[p[bo]];
    }
  }
}

/* ---- Gaussian blur ------------------------------------------------------- */

/* Mirror index @i into [0, n) without repeating the edge (reflect-101). */
static gint
reflect101 (gint i, gint n)
{
  if (n == 1)
    return 0;
  while (i < 0 || i >= n) {
    if (i < 0)
      i = -i;
    if (i >= n)
      i = 2 * n - 2 - i;
  }
  return i;
}

/* out[i] = w0 c[i] + sum over k of w[k] (c[i - k step] + c[i + k step]):
 * a symmetric kernel of radius @r, tap by tap over the whole row
 * (contiguous, vectorised), half the multiplies of a plain convolution. */
WSI_VECTOR_CLONES static void
convolve_symmetric (const gfloat * restrict c, gssize step, gint n, gint r,
    const gfloat * restrict half_weights, gfloat * restrict out)
{
  gint i, k = 1;

  for (i = 0; i < n; i++)
    out[i] = half_weights[0] * c[i];
  /* two taps a sweep: half the loads and stores of out */
  for (; k + 1 <= r; k += 2) {
    const gfloat w1 = half_weights[k], w2 = half_weights[k + 1];
    const gfloat *lo1 = c - k * step, *hi1 = c + k * step;
    const gfloat *lo2 = c - (k + 1) * step, *hi2 = c + (k + 1) * step;

    for (i = 0; i < n; i++)
      out[i] += w1 * (lo1[i] + hi1[i]) + w2 * (lo2[i] + hi2[i]);
  }
  for (; k <= r; k++) {
    const gfloat wk = half_weights[k];
    const gfloat *lo = c - k * step, *hi = c + k * step;

    for (i = 0; i < n; i++)
      out[i] += wk * (lo[i] + hi[i]);
  }
}

/* The same down a column of ring rows: @rows[k] is the row at distance
 * k - r; the result rounded into @dst. */
WSI_VECTOR_CLONES static void
convolve_rows (const gfloat * const *rows, gint n, gint r,
    const gfloat * restrict half_weights, gfloat * restrict acc,
    guint8 * restrict dst)
{
  const gfloat *centre = rows[r];
  gint i, k = 1;

  for (i = 0; i < n; i++)
    acc[i] = half_weights[0] * centre[i];
  for (; k + 1 <= r; k += 2) {
    const gfloat w1 = half_weights[k], w2 = half_weights[k + 1];
    const gfloat *restrict lo1 = rows[r - k], *restrict hi1 = rows[r + k];
    const gfloat *restrict lo2 = rows[r - k - 1];
    const gfloat *restrict hi2 = rows[r + k + 1];

    for (i = 0; i < n; i++)
      acc[i] += w1 * (lo1[i] + hi1[i]) + w2 * (lo2[i] + hi2[i]);
  }
  for (; k <= r; k++) {
    const gfloat wk = half_weights[k];
    const gfloat *restrict lo = rows[r - k], *restrict hi = rows[r + k];

    for (i = 0; i < n; i++)
      acc[i] += wk * (lo[i] + hi[i]);
  }
  for (i = 0; i < n; i++)
    dst[i] = (guint8) MIN (acc[i] + 0.5f, 255.0f);
}

/* Horizontal pass of one source row into @out (w * pb floats): the row in
 * float with r mirrored pixels each side in @pad, then the taps. */
static void
blur_row (const guint8 * src, gint w, gint pb, gint r,
    const gfloat * half_weights, gfloat * pad, gfloat * out)
{
  const gint row_len = w * pb;
  gfloat *mid = pad + r * pb;
  gint i, p, b;

  for (i = 0; i < row_len; i++)
    mid[i] = src[i];
  for (p = 1; p <= r; p++) {
    const gfloat *left = mid + reflect101 (-p, w) * pb;
    const gfloat *right = mid + reflect101 (w - 1 + p, w) * pb;

    for (b = 0; b < pb; b++) {
      mid[-p * pb + b] = left[b];
      mid[(w - 1 + p) * pb + b] = right[b];
    }
  }
  convolve_symmetric (mid, pb, row_len, r, half_weights, out);
}

void
wsi_augment_blur (const WsiAugmentImage * im, gfloat sigma, guint radius,
    WsiAugmentScratch * scratch)
{
  const gint w = im->width, h = im->height, pb = im->pixel_bytes;
  const gint row_len = w * pb;
  gfloat half_weights[WSI_AUGMENT_MAX_BLUR_RADIUS + 1];
  const gfloat *rows[2 * WSI_AUGMENT_MAX_BLUR_RADIUS + 1];
  gfloat *pad, *acc, *ring;
  gdouble sum = 0.0;
  gint r, n_ring, next = 0, y, k;

  if (w == 0 || h == 0 || !(sigma > 0.0f))
    return;
  r = radius ? (gint) MIN (radius, WSI_AUGMENT_MAX_BLUR_RADIUS) :
      (gint) ceilf (3.0f * sigma);
  r = CLAMP (r, 1, WSI_AUGMENT_MAX_BLUR_RADIUS);
  for (k = -r; k <= r; k++)
    sum += exp (-(gdouble) k * k / (2.0 * sigma * sigma));
  for (k = 0; k <= r; k++)
    half_weights[k] = (gfloat) (exp (-(gdouble) k * k / (2.0 * sigma *
                sigma)) / sum);

  /* A ring of 2r + 1 horizontally blurred rows: the vertical pass of row
   * y needs source rows y - r .. y + r, all hpassed before row y is
   * overwritten, so the image can be its own output. */
  n_ring = 2 * r + 1;
  pad = scratch_floats (scratch, (gsize) (w + 2 * r) * pb + row_len +
      (gsize) n_ring * row_len);
  acc = pad + (w + 2 * r) * pb;
  ring = acc + row_len;

  for (y = 0; y < h; y++) {
    for (; next <= MIN (y + r, h - 1); next++)
      blur_row (im->data + next * im->stride, w, pb, r, half_weights, pad,
          ring + (next % n_ring) * row_len);
    for (k = -r; k <= r; k++)
      rows[k + r] = ring + (reflect101 (y + k, h) % n_ring) * row_len;
    convolve_rows (rows, row_len, r, half_weights, acc,
        im->data + y * im->stride);
  }
}

/* ---- all of it ---------------------------------------------------------- */

guint
wsi_augment_apply (const WsiAugmentPlan * plan, const WsiAugmentImage * im,
    WsiAugmentScratch * scratch)
{
  guint turns = im->width == im->height ? plan->quarter_turns % 4 : 0;

  if (plan->flip_h || plan->flip_v || turns != 0)
    wsi_augment_flip_rotate (im, plan->flip_h, plan->flip_v, turns, scratch);
  if (plan->hed)
    wsi_augment_hed (im, plan->hed_alpha, plan->hed_beta, scratch);
  if (plan->jitter)
    wsi_augment_jitter (im, plan->brightness, plan->contrast,
        plan->saturation, plan->hue, scratch);
  if (plan->grayscale)
    wsi_augment_grayscale (im, scratch);
  if (plan->blur)
    wsi_augment_blur (im, plan->blur_sigma, plan->blur_radius, scratch);
  if (plan->solarize)
    wsi_augment_solarize (im, plan->solarize_threshold);
  return turns;
}
