/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsistain.c: see wsistain.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wsistain.h"
#include "wsinumberlist.h"

/* torchstain's HERef (columns H, E) and maxCRef. */
const WsiStainMatrix wsi_stain_macenko_default = {
  {{0.5626, 0.7201, 0.4062}, {0.2159, 0.8012, 0.5581}},
  {1.9705, 1.0308},
};

/* Ruderman et al.'s RGB -> LMS, as Reinhard et al. 2001 print it. */
static const gdouble rgb_to_lms[9] = {
  0.3811, 0.5783, 0.0402,
  0.1967, 0.7244, 0.0782,
  0.0241, 0.1288, 0.8444,
};

/* AVX-512 and AVX2 clones of the row loops where GCC's target_clones
 * work (ELF, x86-64): 16 or 8 floats a step instead of 4 (AVX-512 doubles
 * Reinhard's rate on cores with 512-bit units); -ffp-contract=off keeps
 * the bytes those of the SSE2 code (no FMA, the same operations in the
 * same order, each rounded alike). WSI_STAIN_NO_CLONES builds one path. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
    && defined(__ELF__) && !defined(__SANITIZE_ADDRESS__) \
    && !defined(WSI_STAIN_NO_CLONES)
#define WSI_STAIN_CLONES \
  __attribute__ ((target_clones ("avx512f", "avx2", "default")))
#else
#define WSI_STAIN_CLONES
#endif

#define LOG2_10 3.32192809488736234787
#define LOG2_E 1.44269504088896340736

/* Macenko's apply in fixed point: OD sums in units of 1/LUT_SCALE, three
 * 21-bit fields to a 64-bit word, one table of output bytes. */
#define LUT_SCALE 2048
#define LUT_BIAS 262144         /* per channel term: keeps every field >= 0 */
#define LUT_LOW 128             /* table index 0 is OD -128/2048 (255.5) */
#define LUT_SIZE (LUT_LOW + 11 * LUT_SCALE / 2)        /* up to OD 5.5 (0.98) */
#define LUT_FIELD 0x1fffff

struct _WsiStainScratch
{
  guint width;
  gfloat *planes;               /* 3 rows of width floats */

  /* the fixed-point tables of the last Macenko plan */
  gboolean lut_valid;
  gfloat lut_m[9], lut_c[3];
  guint64 lut[3][256];
  gint32 lut_k[3];
};

/* ---- small linear algebra (double) ------------------------------------- */

static void
mat3_mul (const gdouble * a, const gdouble * b, gdouble * out)
{
  gdouble t[9];
  guint i, j, k;

  for (i = 0; i < 3; i++)
    for (j = 0; j < 3; j++) {
      t[i * 3 + j] = 0.0;
      for (k = 0; k < 3; k++)
        t[i * 3 + j] += a[i * 3 + k] * b[k * 3 + j];
    }
  memcpy (out, t, sizeof (t));
}

static gboolean
mat3_inverse (const gdouble * m, gdouble * out)
{
  gdouble det, inv[9];
  guint i;

  inv[0] = m[4] * m[8] - m[5] * m[7];
  inv[1] = m[2] * m[7] - m[1] * m[8];
  inv[2] = m[1] * m[5] - m[2] * m[4];
  inv[3] = m[5] * m[6] - m[3] * m[8];
  inv[4] = m[0] * m[8] - m[2] * m[6];
  inv[5] = m[2] * m[3] - m[0] * m[5];
  inv[6] = m[3] * m[7] - m[4] * m[6];
  inv[7] = m[1] * m[6] - m[0] * m[7];
  inv[8] = m[0] * m[4] - m[1] * m[3];
  det = m[0] * inv[0] + m[1] * inv[3] + m[2] * inv[6];
  if (!isfinite (det) || fabs (det) < 1e-12)
    return FALSE;
  for (i = 0; i < 9; i++)
    out[i] = inv[i] / det;
  return TRUE;
}

/* The lab matrix Q: diag (1/sqrt3, 1/sqrt6, 1/sqrt2) [1 1 1; 1 1 -2; 1 -1 0]. */
static void
lab_matrix (gdouble * q)
{
  const gdouble a = 1.0 / sqrt (3.0), b = 1.0 / sqrt (6.0),
      c = 1.0 / sqrt (2.0);
  const gdouble m[9] = { a, a, a, b, b, -2.0 * b, c, -c, 0.0 };

  memcpy (q, m, sizeof (m));
}

/* Eigen-decomposition of a symmetric 3 x 3 matrix by cyclic Jacobi
 * rotations: eigenvalues ascending in @w, vectors as the columns of @v. */
static gboolean
sym3_eigen (const gdouble * a_in, gdouble * w, gdouble * v)
{
  gdouble a[9];
  guint sweep, p, q, i, j;

  memcpy (a, a_in, sizeof (a));
  for (i = 0; i < 9; i++)
    v[i] = (i % 4 == 0) ? 1.0 : 0.0;
  for (sweep = 0; sweep < 64; sweep++) {
    gdouble off = fabs (a[1]) + fabs (a[2]) + fabs (a[5]);

    if (off == 0.0 || off < 1e-300)
      break;
    for (p = 0; p < 2; p++)
      for (q = p + 1; q < 3; q++) {
        gdouble apq = a[p * 3 + q], app, aqq, theta, t, c, s;
        guint k;

        if (apq == 0.0)
          continue;
        app = a[p * 3 + p];
        aqq = a[q * 3 + q];
        theta = (aqq - app) / (2.0 * apq);
        t = (theta >= 0 ? 1.0 : -1.0) / (fabs (theta) + sqrt (theta * theta +
                1.0));
        c = 1.0 / sqrt (t * t + 1.0);
        s = t * c;
        for (k = 0; k < 3; k++) {
          gdouble akp = a[k * 3 + p], akq = a[k * 3 + q];
          a[k * 3 + p] = c * akp - s * akq;
          a[k * 3 + q] = s * akp + c * akq;
        }
        for (k = 0; k < 3; k++) {
          gdouble apk = a[p * 3 + k], aqk = a[q * 3 + k];
          a[p * 3 + k] = c * apk - s * aqk;
          a[q * 3 + k] = s * apk + c * aqk;
        }
        for (k = 0; k < 3; k++) {
          gdouble vkp = v[k * 3 + p], vkq = v[k * 3 + q];
          v[k * 3 + p] = c * vkp - s * vkq;
          v[k * 3 + q] = s * vkp + c * vkq;
        }
      }
  }
  for (i = 0; i < 3; i++)
    w[i] = a[i * 4];
  /* sort ascending, columns with them */
  for (i = 0; i < 3; i++)
    for (j = i + 1; j < 3; j++)
      if (w[j] < w[i]) {
        gdouble t = w[i];
        guint k;

        w[i] = w[j];
        w[j] = t;
        for (k = 0; k < 3; k++) {
          t = v[k * 3 + i];
          v[k * 3 + i] = v[k * 3 + j];
          v[k * 3 + j] = t;
        }
      }
  for (i = 0; i < 9; i++)
    if (!isfinite (v[i]))
      return FALSE;
  return isfinite (w[0]) && isfinite (w[1]) && isfinite (w[2]);
}

/* ---- percentiles --------------------------------------------------------- */

static void
swap_d (gdouble * a, gsize i, gsize j)
{
  gdouble t = a[i];
  a[i] = a[j];
  a[j] = t;
}

/* Moves the k-th smallest of a[0..n) to a[k], smaller ones before it
 * (Hoare's selection, median-of-three pivots: deterministic). */
static void
select_kth (gdouble * a, gsize n, gsize k)
{
  gsize lo = 0, hi = n - 1;

  while (hi > lo) {
    gsize mid = lo + (hi - lo) / 2, i, j;
    gdouble pivot;

    if (a[mid] < a[lo])
      swap_d (a, mid, lo);
    if (a[hi] < a[lo])
      swap_d (a, hi, lo);
    if (a[hi] < a[mid])
      swap_d (a, hi, mid);
    pivot = a[mid];
    i = lo;
    j = hi;
    while (i <= j) {
      while (a[i] < pivot)
        i++;
      while (a[j] > pivot)
        j--;
      if (i <= j) {
        swap_d (a, i, j);
        i++;
        if (j == 0)
          break;
        j--;
      }
    }
    if (k <= j)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      return;
  }
}

/* numpy.percentile (a, q), linear interpolation; reorders @a. */
static gdouble
percentile (gdouble * a, gsize n, gdouble q)
{
  gdouble pos = q / 100.0 * (gdouble) (n - 1), frac, lo_v, hi_v;
  gsize lo = (gsize) floor (pos), i;

  frac = pos - (gdouble) lo;
  select_kth (a, n, lo);
  lo_v = a[lo];
  if (lo + 1 >= n || frac == 0.0)
    return lo_v;
  hi_v = a[lo + 1];
  for (i = lo + 2; i < n; i++)
    if (a[i] < hi_v)
      hi_v = a[i];
  /* numpy's _lerp */
  return frac < 0.5 ? lo_v + (hi_v - lo_v) * frac :
      hi_v - (hi_v - lo_v) * (1.0 - frac);
}

/* ---- estimates ----------------------------------------------------------- */

static inline gboolean
selected (const WsiStainPixels * px, guint x, guint y)
{
  return px->mask == NULL || px->mask[y * px->mask_stride + x] != 0;
}

static inline const guint8 *
pixel_at (const WsiStainImage * im, guint x, guint y)
{
  return im->data + y * im->stride + (gsize) x * im->pixel_bytes;
}

static void
pixel_lab (const WsiStainImage * im, const guint8 * p, const gdouble * q,
    gdouble * lab)
{
  gdouble rgb[3] = { p[im->r], p[im->g], p[im->b] }, l[3];
  guint i;

  for (i = 0; i < 3; i++) {
    gdouble lms = rgb_to_lms[i * 3] * rgb[0] + rgb_to_lms[i * 3 + 1] * rgb[1]
        + rgb_to_lms[i * 3 + 2] * rgb[2];
    l[i] = log10 (lms > 1.0 ? lms : 1.0);
  }
  for (i = 0; i < 3; i++)
    lab[i] = q[i * 3] * l[0] + q[i * 3 + 1] * l[1] + q[i * 3 + 2] * l[2];
}

gboolean
wsi_stain_estimate_lab (const WsiStainPixels * px, WsiStainLab * out)
{
  const WsiStainImage *im = px->image;
  gdouble q[9], sum[3] = { 0 }, sq[3] = { 0 }, lab[3];
  guint64 n = 0;
  guint x, y, i;

  lab_matrix (q);
  for (y = 0; y < im->height; y++)
    for (x = 0; x < im->width; x++)
      if (selected (px, x, y)) {
        pixel_lab (im, pixel_at (im, x, y), q, lab);
        for (i = 0; i < 3; i++)
          sum[i] += lab[i];
        n++;
      }
  if (n == 0)
    return FALSE;
  for (i = 0; i < 3; i++)
    out->mean[i] = sum[i] / (gdouble) n;
  /* second pass: the deviations, not sums of squares, keep precision */
  for (y = 0; y < im->height; y++)
    for (x = 0; x < im->width; x++)
      if (selected (px, x, y)) {
        pixel_lab (im, pixel_at (im, x, y), q, lab);
        for (i = 0; i < 3; i++)
          sq[i] += (lab[i] - out->mean[i]) * (lab[i] - out->mean[i]);
      }
  for (i = 0; i < 3; i++) {
    out->std[i] = sqrt (sq[i] / (gdouble) n);
    if (!isfinite (out->std[i]) || out->std[i] <= 1e-6
        || !isfinite (out->mean[i]))
      return FALSE;
  }
  return TRUE;
}

/* -ln ((v + 1) / Io) for each byte value. */
static const gdouble *
od_table (void)
{
  static gdouble table[256];
  static gsize made = 0;

  if (g_once_init_enter (&made)) {
    guint v;

    for (v = 0; v < 256; v++)
      table[v] = -log ((v + 1.0) / WSI_STAIN_IO);
    g_once_init_leave (&made, 1);
  }
  return table;
}

static inline gboolean
is_tissue (const gdouble * od)
{
  return od[0] >= WSI_STAIN_BETA && od[1] >= WSI_STAIN_BETA
      && od[2] >= WSI_STAIN_BETA;
}

gdouble
wsi_stain_tissue_share (const WsiStainImage * im)
{
  const gdouble *t = od_table ();
  guint64 n = 0;
  guint x, y;

  if (im->width == 0 || im->height == 0)
    return 0.0;
  for (y = 0; y < im->height; y++)
    for (x = 0; x < im->width; x++) {
      const guint8 *p = pixel_at (im, x, y);
      gdouble od[3] = { t[p[im->r]], t[p[im->g]], t[p[im->b]] };
      n += is_tissue (od);
    }
  return (gdouble) n / ((gdouble) im->width * im->height);
}

/* Flips @v (3) so its components sum to a positive number (the first
 * non-zero component positive when they sum to 0). */
static void
fix_sign (gdouble * v)
{
  gdouble s = v[0] + v[1] + v[2];
  guint i;

  if (s == 0.0)
    s = v[0] != 0.0 ? v[0] : (v[1] != 0.0 ? v[1] : v[2]);
  if (s < 0.0)
    for (i = 0; i < 3; i++)
      v[i] = -v[i];
}

/* The 2 x 3 least-squares solver P = (S^T S)^-1 S^T of stains @s. */
static gboolean
stain_solver (const gdouble s[2][3], gdouble * p)
{
  gdouble a = 0, b = 0, d = 0, det;
  guint i;

  for (i = 0; i < 3; i++) {
    a += s[0][i] * s[0][i];
    b += s[0][i] * s[1][i];
    d += s[1][i] * s[1][i];
  }
  det = a * d - b * b;
  /* stains that cannot be told apart: |cos| above 0.9999 */
  if (!isfinite (det) || det <= 1e-4 * a * d || a <= 0 || d <= 0)
    return FALSE;
  for (i = 0; i < 3; i++) {
    p[i] = (d * s[0][i] - b * s[1][i]) / det;
    p[3 + i] = (a * s[1][i] - b * s[0][i]) / det;
  }
  return TRUE;
}

/* The 99th percentiles of the least-squares concentrations of every
 * selected pixel on @out's stains, into @out->max_c; FALSE when they give
 * none (stains that cannot be told apart, no positive percentile). */
static gboolean
max_concentrations (const WsiStainPixels * px, WsiStainMatrix * out)
{
  const WsiStainImage *im = px->image;
  const gdouble *t = od_table ();
  gdouble p[6], *ch, *ce;
  guint64 n_all = 0, k = 0;
  guint x, y, i;
  gboolean ok;

  if (!stain_solver (out->stains, p))
    return FALSE;
  for (y = 0; y < im->height; y++)
    for (x = 0; x < im->width; x++)
      n_all += selected (px, x, y);
  if (n_all == 0)
    return FALSE;
  ch = g_new (gdouble, n_all);
  ce = g_new (gdouble, n_all);
  for (y = 0; y < im->height; y++)
    for (x = 0; x < im->width; x++)
      if (selected (px, x, y)) {
        const guint8 *q = pixel_at (im, x, y);
        gdouble od[3] = { t[q[im->r]], t[q[im->g]], t[q[im->b]] };

        ch[k] = p[0] * od[0] + p[1] * od[1] + p[2] * od[2];
        ce[k] = p[3] * od[0] + p[4] * od[1] + p[5] * od[2];
        k++;
      }
  out->max_c[0] = percentile (ch, n_all, 99.0);
  out->max_c[1] = percentile (ce, n_all, 99.0);
  g_free (ch);
  g_free (ce);
  ok = isfinite (out->max_c[0]) && isfinite (out->max_c[1])
      && out->max_c[0] > 1e-6 && out->max_c[1] > 1e-6;
  for (i = 0; i < 3; i++)
    ok = ok && isfinite (out->stains[0][i]) && isfinite (out->stains[1][i]);
  return ok;
}

gboolean
wsi_stain_estimate_macenko (const WsiStainPixels * px, WsiStainMatrix * out,
    guint64 * n_tissue)
{
  const WsiStainImage *im = px->image;
  const gdouble *t = od_table ();
  gdouble mean[3] = { 0 }, cov[9] = { 0 }, w[3], v[9], e_mid[3], e_big[3];
  gdouble *phi = NULL;
  gdouble min_phi, max_phi, vmin[3], vmax[3];
  guint64 n = 0, k;
  guint x, y, i, j;
  gboolean ok = FALSE;

  if (n_tissue)
    *n_tissue = 0;
  for (y = 0; y < im->height; y++)
    for (x = 0; x < im->width; x++)
      if (selected (px, x, y)) {
        const guint8 *q = pixel_at (im, x, y);
        gdouble od[3] = { t[q[im->r]], t[q[im->g]], t[q[im->b]] };

        if (!is_tissue (od))
          continue;
        for (i = 0; i < 3; i++)
          mean[i] += od[i];
        n++;
      }
  if (n_tissue)
    *n_tissue = n;
  if (n < WSI_STAIN_MIN_PIXELS)
    return FALSE;
  for (i = 0; i < 3; i++)
    mean[i] /= (gdouble) n;
  for (y = 0; y < im->height; y++)
    for (x = 0; x < im->width; x++)
      if (selected (px, x, y)) {
        const guint8 *q = pixel_at (im, x, y);
        gdouble od[3] = { t[q[im->r]], t[q[im->g]], t[q[im->b]] };

        if (!is_tissue (od))
          continue;
        for (i = 0; i < 3; i++)
          for (j = i; j < 3; j++)
            cov[i * 3 + j] += (od[i] - mean[i]) * (od[j] - mean[j]);
      }
  for (i = 0; i < 3; i++)
    for (j = i; j < 3; j++) {
      cov[i * 3 + j] /= (gdouble) (n - 1);
      cov[j * 3 + i] = cov[i * 3 + j];
    }
  if (!sym3_eigen (cov, w, v) || w[2] <= 1e-12)
    return FALSE;
  for (i = 0; i < 3; i++) {
    e_mid[i] = v[i * 3 + 1];
    e_big[i] = v[i * 3 + 2];
  }
  fix_sign (e_mid);
  fix_sign (e_big);

  phi = g_new (gdouble, n);
  k = 0;
  for (y = 0; y < im->height; y++)
    for (x = 0; x < im->width; x++)
      if (selected (px, x, y)) {
        const guint8 *q = pixel_at (im, x, y);
        gdouble od[3] = { t[q[im->r]], t[q[im->g]], t[q[im->b]] };
        gdouble t0, t1;

        if (!is_tissue (od))
          continue;
        t0 = od[0] * e_mid[0] + od[1] * e_mid[1] + od[2] * e_mid[2];
        t1 = od[0] * e_big[0] + od[1] * e_big[1] + od[2] * e_big[2];
        phi[k++] = atan2 (t1, t0);
      }
  min_phi = percentile (phi, n, WSI_STAIN_ALPHA);
  max_phi = percentile (phi, n, 100.0 - WSI_STAIN_ALPHA);
  for (i = 0; i < 3; i++) {
    vmin[i] = e_mid[i] * cos (min_phi) + e_big[i] * sin (min_phi);
    vmax[i] = e_mid[i] * cos (max_phi) + e_big[i] * sin (max_phi);
  }
  for (i = 0; i < 3; i++) {
    /* haematoxylin: the larger red OD */
    out->stains[0][i] = vmin[0] > vmax[0] ? vmin[i] : vmax[i];
    out->stains[1][i] = vmin[0] > vmax[0] ? vmax[i] : vmin[i];
  }
  ok = max_concentrations (px, out);
  g_free (phi);
  return ok;
}

/* One pixel's non-negative lasso on two atoms @d (columns, unit or not):
 * argmin 0.5 |x - D a|^2 + lambda (a_0 + a_1), a >= 0, exactly: the
 * interior solution when both are positive, else the better single atom. */
static void
lasso2 (const gdouble * x, const gdouble d[2][3], const gdouble * gram,
    gdouble lambda, gdouble * a)
{
  gdouble b0 = d[0][0] * x[0] + d[0][1] * x[1] + d[0][2] * x[2] - lambda;
  gdouble b1 = d[1][0] * x[0] + d[1][1] * x[1] + d[1][2] * x[2] - lambda;
  gdouble det = gram[0] * gram[2] - gram[1] * gram[1];
  gdouble s0, s1, f0, f1;

  if (det > 1e-12) {
    a[0] = (gram[2] * b0 - gram[1] * b1) / det;
    a[1] = (gram[0] * b1 - gram[1] * b0) / det;
    if (a[0] >= 0.0 && a[1] >= 0.0)
      return;
  }
  /* one atom: a_k = max (0, b_k / |d_k|^2); keep the lower objective */
  s0 = gram[0] > 0 && b0 > 0 ? b0 / gram[0] : 0.0;
  s1 = gram[2] > 0 && b1 > 0 ? b1 / gram[2] : 0.0;
  /* objective minus 0.5 |x|^2: 0.5 s^2 |d|^2 - s (d.x - lambda) */
  f0 = 0.5 * s0 * s0 * gram[0] - s0 * b0;
  f1 = 0.5 * s1 * s1 * gram[2] - s1 * b1;
  a[0] = f0 <= f1 ? s0 : 0.0;
  a[1] = f0 <= f1 ? 0.0 : s1;
}

gboolean
wsi_stain_estimate_vahadane (const WsiStainPixels * px, WsiStainMatrix * out,
    guint64 * n_tissue)
{
  const WsiStainImage *im = px->image;
  const gdouble *t = od_table ();
  WsiStainMatrix init;
  gdouble *od, d[2][3], *a;
  guint64 n = 0, m, k, i;
  guint x, y, j, c, iter;
  gboolean ok;

  /* count the tissue pixels */
  for (y = 0; y < im->height; y++)
    for (x = 0; x < im->width; x++)
      if (selected (px, x, y)) {
        const guint8 *q = pixel_at (im, x, y);
        gdouble v[3] = { t[q[im->r]], t[q[im->g]], t[q[im->b]] };

        n += is_tissue (v);
      }
  if (n_tissue)
    *n_tissue = n;
  if (n < WSI_STAIN_MIN_PIXELS)
    return FALSE;
  m = MIN (n, (guint64) WSI_STAIN_VAHADANE_PIXELS);
  od = g_new (gdouble, m * 3);
  a = g_new (gdouble, m * 2);
  /* every (n / m)-th tissue pixel: the same pixels on every run */
  k = 0;
  i = 0;
  for (y = 0; y < im->height && i < m; y++)
    for (x = 0; x < im->width && i < m; x++)
      if (selected (px, x, y)) {
        const guint8 *q = pixel_at (im, x, y);
        gdouble v[3] = { t[q[im->r]], t[q[im->g]], t[q[im->b]] };

        if (!is_tissue (v))
          continue;
        if (k++ * m / n == i) {
          memcpy (od + 3 * i, v, sizeof (v));
          i++;
        }
      }
  m = i;
  /* a deterministic start (spams draws one at random): the mean OD
   * direction plus and minus a third of the direction of most spread
   * across it, inside the stains' cone; the factorisation moves them out
   * to the stains */
  {
    gdouble mean[3] = { 0 }, cov[9] = { 0 }, w[3], vec[9], norm;

    for (i = 0; i < m; i++)
      for (c = 0; c < 3; c++)
        mean[c] += od[3 * i + c] / (gdouble) m;
    for (i = 0; i < m; i++)
      for (c = 0; c < 3; c++)
        for (j = 0; j < 3; j++)
          cov[c * 3 + j] += (od[3 * i + c] - mean[c]) * (od[3 * i + j] -
              mean[j]);
    if (!sym3_eigen (cov, w, vec))
      goto fail;
    norm = sqrt (mean[0] * mean[0] + mean[1] * mean[1] + mean[2] * mean[2]);
    if (!(norm > 1e-12))
      goto fail;
    for (j = 0; j < 2; j++) {
      gdouble len = 0.0;

      for (c = 0; c < 3; c++) {
        init.stains[j][c] = mean[c] / norm + (j ? -1.0 : 1.0) / 3.0 *
            vec[c * 3 + 2];
        init.stains[j][c] = MAX (init.stains[j][c], 0.0);
        len += init.stains[j][c] * init.stains[j][c];
      }
      if (!(len > 1e-12))
        goto fail;
      for (c = 0; c < 3; c++)
        init.stains[j][c] /= sqrt (len);
    }
  }
  memcpy (d, init.stains, sizeof (d));
  for (iter = 0; iter < WSI_STAIN_VAHADANE_ITERATIONS; iter++) {
    gdouble gram[3], b[2][3] = { {0} }, cc[3] = { 0 };

    gram[0] = d[0][0] * d[0][0] + d[0][1] * d[0][1] + d[0][2] * d[0][2];
    gram[1] = d[0][0] * d[1][0] + d[0][1] * d[1][1] + d[0][2] * d[1][2];
    gram[2] = d[1][0] * d[1][0] + d[1][1] * d[1][1] + d[1][2] * d[1][2];
    for (i = 0; i < m; i++) {
      lasso2 (od + 3 * i, d, gram, WSI_STAIN_VAHADANE_LAMBDA, a + 2 * i);
      for (c = 0; c < 3; c++) {
        b[0][c] += od[3 * i + c] * a[2 * i];
        b[1][c] += od[3 * i + c] * a[2 * i + 1];
      }
      cc[0] += a[2 * i] * a[2 * i];
      cc[1] += a[2 * i] * a[2 * i + 1];
      cc[2] += a[2 * i + 1] * a[2 * i + 1];
    }
    /* the dictionary by block coordinate descent (spams' trainDL): each
     * atom its least-squares update, made non-negative, of unit norm */
    for (j = 0; j < 2; j++) {
      gdouble cjj = j == 0 ? cc[0] : cc[2], norm = 0.0, v[3];

      if (cjj <= 1e-12)
        continue;
      for (c = 0; c < 3; c++) {
        v[c] = (b[j][c] - d[1 - j][c] * cc[1]) / cjj;
        v[c] = v[c] > 0.0 ? v[c] : 0.0;
        norm += v[c] * v[c];
      }
      if (norm <= 1e-24)
        continue;
      norm = sqrt (norm);
      for (c = 0; c < 3; c++)
        d[j][c] = v[c] / norm;
    }
  }
  g_free (od);
  g_free (a);
  /* haematoxylin first: the larger red OD, as StainTools orders them */
  j = d[0][0] >= d[1][0] ? 0 : 1;
  for (c = 0; c < 3; c++) {
    out->stains[0][c] = d[j][c];
    out->stains[1][c] = d[1 - j][c];
  }
  ok = max_concentrations (px, out);
  return ok;

fail:
  g_free (od);
  g_free (a);
  return FALSE;
}
/* ---- plans --------------------------------------------------------------- */

static gboolean
plan_finite (const WsiStainPlan * plan)
{
  guint i;

  for (i = 0; i < 9; i++)
    if (!isfinite (plan->m[i]))
      return FALSE;
  for (i = 0; i < 3; i++)
    if (!isfinite (plan->c[i]))
      return FALSE;
  return TRUE;
}

gboolean
wsi_stain_plan_reinhard (WsiStainPlan * plan, const WsiStainLab * src,
    const WsiStainLab * dst)
{
  gdouble q[9], qi[9], d[9] = { 0 }, b[9], t[3];
  guint i;

  lab_matrix (q);
  if (!mat3_inverse (q, qi))
    return FALSE;
  for (i = 0; i < 3; i++) {
    if (!(src->std[i] > 1e-6))
      return FALSE;
    d[i * 4] = dst->std[i] / src->std[i];
    t[i] = dst->mean[i] - d[i * 4] * src->mean[i];
  }
  /* log LMS out = Q^-1 (D Q log LMS + t); log2 keeps the same matrix */
  mat3_mul (d, q, b);
  mat3_mul (qi, b, b);
  plan->method = WSI_STAIN_REINHARD;
  for (i = 0; i < 9; i++)
    plan->m[i] = (gfloat) b[i];
  for (i = 0; i < 3; i++)
    plan->c[i] = (gfloat) ((qi[i * 3] * t[0] + qi[i * 3 + 1] * t[1] +
            qi[i * 3 + 2] * t[2]) * LOG2_10);
  return plan_finite (plan);
}

gboolean
wsi_stain_plan_macenko_jitter (WsiStainPlan * plan,
    const WsiStainMatrix * src, const WsiStainMatrix * dst,
    const gdouble alpha[2], const gdouble beta[2])
{
  gdouble p[6], k[2];
  guint i, j;

  if (!stain_solver (src->stains, p))
    return FALSE;
  for (j = 0; j < 2; j++) {
    if (!(src->max_c[j] > 1e-6))
      return FALSE;
    k[j] = alpha[j] * dst->max_c[j] / src->max_c[j];
  }
  /* OD out = S_t (diag (alpha k) P OD in + beta); exp (-x) = exp2
   * (-x log2 e) */
  plan->method = WSI_STAIN_MACENKO;
  for (i = 0; i < 3; i++) {
    for (j = 0; j < 3; j++)
      plan->m[i * 3 + j] = (gfloat) (-LOG2_E *
          (dst->stains[0][i] * k[0] * p[j] + dst->stains[1][i] * k[1] *
              p[3 + j]));
    plan->c[i] = (gfloat) (-LOG2_E * (dst->stains[0][i] * beta[0] +
            dst->stains[1][i] * beta[1]));
  }
  return plan_finite (plan);
}

gboolean
wsi_stain_plan_macenko (WsiStainPlan * plan, const WsiStainMatrix * src,
    const WsiStainMatrix * dst)
{
  static const gdouble one[2] = { 1.0, 1.0 }, zero[2] = { 0.0, 0.0 };

  return wsi_stain_plan_macenko_jitter (plan, src, dst, one, zero);
}

/* ---- apply --------------------------------------------------------------- */

WsiStainScratch *
wsi_stain_scratch_new (void)
{
  return g_new0 (WsiStainScratch, 1);
}

void
wsi_stain_scratch_free (WsiStainScratch * scratch)
{
  if (scratch == NULL)
    return;
  g_free (scratch->planes);
  g_free (scratch);
}

/* 240 exp (-OD) truncated to a byte, OD = (i - LUT_LOW) / LUT_SCALE. */
static const guint8 *
exp_table (void)
{
  static guint8 table[LUT_SIZE];
  static gsize made = 0;

  if (g_once_init_enter (&made)) {
    guint i;

    for (i = 0; i < LUT_SIZE; i++) {
      gdouble v = WSI_STAIN_IO * exp (-((gdouble) i - LUT_LOW) / LUT_SCALE);
      table[i] = (guint8) (v >= 255.0 ? 255 : (gint) v);
    }
    g_once_init_leave (&made, 1);
  }
  return table;
}

/* The per-channel tables of @plan (Macenko): entry v of channel c packs
 * round (A[i][c] od(v) LUT_SCALE) + LUT_BIAS for the three outputs i, with
 * A = -m / log2 e the OD map; lut_k[i] turns a field's sum into a table
 * index. FALSE when an OD sum could leave its field (no such plan from
 * distinct stains: |A| would have to exceed 22). */
static gboolean
build_lut (WsiStainScratch * s, const WsiStainPlan * plan)
{
  const gdouble *od = od_table ();
  guint c, v, i;

  if (s->lut_valid && memcmp (s->lut_m, plan->m, sizeof (s->lut_m)) == 0
      && memcmp (s->lut_c, plan->c, sizeof (s->lut_c)) == 0)
    return TRUE;
  s->lut_valid = FALSE;
  for (i = 0; i < 9; i++)
    if (fabs (plan->m[i] / LOG2_E) * 5.6 * LUT_SCALE >= LUT_BIAS)
      return FALSE;
  for (c = 0; c < 3; c++)
    for (v = 0; v < 256; v++) {
      guint64 word = 0;

      for (i = 0; i < 3; i++) {
        gdouble a = -(gdouble) plan->m[i * 3 + c] / LOG2_E;
        gint64 term = (gint64) floor (a * od[v] * LUT_SCALE + 0.5) +
            LUT_BIAS;

        word |= (guint64) term << (21 * i);
      }
      s->lut[c][v] = word;
    }
  for (i = 0; i < 3; i++)
    s->lut_k[i] = (gint32) floor (-(gdouble) plan->c[i] / LOG2_E *
        LUT_SCALE + 0.5) + LUT_LOW - 3 * LUT_BIAS;
  memcpy (s->lut_m, plan->m, sizeof (s->lut_m));
  memcpy (s->lut_c, plan->c, sizeof (s->lut_c));
  s->lut_valid = TRUE;
  return TRUE;
}

static inline guint
lut_index (guint64 word, guint i, gint32 k)
{
  gint32 idx = (gint32) ((word >> (21 * i)) & LUT_FIELD) + k;

  idx = idx < 0 ? 0 : idx;
  return (guint) (idx >= LUT_SIZE ? LUT_SIZE - 1 : idx);
}

/* Macenko's apply on one image with the tables: three 64-bit loads and two
 * adds give a pixel's three OD sums. */
static void
apply_macenko_lut (const WsiStainScratch * s, const WsiStainImage * im)
{
  const guint8 *e = exp_table ();
  const guint64 *tr = s->lut[0], *tg = s->lut[1], *tb = s->lut[2];
  const gint32 k0 = s->lut_k[0], k1 = s->lut_k[1], k2 = s->lut_k[2];
  const guint pb = im->pixel_bytes, ro = im->r, go = im->g, bo = im->b;
  guint x, y;

  for (y = 0; y < im->height; y++) {
    guint8 *p = im->data + y * im->stride;

    for (x = 0; x < im->width; x++, p += pb) {
      guint64 w = tr[p[ro]] + tg[p[go]] + tb[p[bo]];

      p[ro] = e[lut_index (w, 0, k0)];
      p[go] = e[lut_index (w, 1, k1)];
      p[bo] = e[lut_index (w, 2, k2)];
    }
  }
}

static gfloat *
scratch_planes (WsiStainScratch * s, guint width)
{
  if (s->width < width) {
    g_free (s->planes);
    s->planes = g_new (gfloat, (gsize) width * 3);
    s->width = width;
  }
  return s->planes;
}

static inline gint32
float_bits (gfloat f)
{
  gint32 i;
  memcpy (&i, &f, 4);
  return i;
}

static inline gfloat
bits_float (gint32 i)
{
  gfloat f;
  memcpy (&f, &i, 4);
  return f;
}

/* 2^y for y in [-100, 100] (clamped), relative error below 1e-7: the
 * exponent from the bits, 2^f for |f| <= 0.5 by its Taylor series to f^7. */
static inline gfloat
fast_exp2 (gfloat y)
{
  gfloat t, f, p;
  gint32 i;

  y = y < -100.0f ? -100.0f : (y > 100.0f ? 100.0f : y);
  t = y + 128.5f;
  i = (gint32) t;               /* t > 0: truncation is floor */
  f = y - (gfloat) (i - 128);
  p = 1.5252734e-5f;
  p = p * f + 1.5403530e-4f;
  p = p * f + 1.3333558e-3f;
  p = p * f + 9.6181291e-3f;
  p = p * f + 5.5504109e-2f;
  p = p * f + 2.4022651e-1f;
  p = p * f + 6.9314718e-1f;
  p = p * f + 1.0f;
  return p * bits_float ((i - 128 + 127) << 23);
}

/* Reinhard's log2 and exp2, cheaper than the above: Reinhard's output is
 * rounded to a byte, so an error of 3e-5 in log2 and 4e-6 relative in
 * exp2 moves it by less than 0.02 of a level, and neither needs a division
 * (the atanh series does), the costliest vector operation here.
 * log2 (x) for x >= 1: the bits split x into 2^e m with m in
 * [sqrt 0.5, sqrt 2), log2 m = t P(t) with t = m - 1 and P of degree 4
 * (least squares on Chebyshev nodes, abs error 2.6e-5). */
static inline gfloat
rh_log2 (gfloat x)
{
  gint32 bits = float_bits (x) - 0x3f3504f3;    /* bits of sqrt 0.5 */
  gfloat e = (gfloat) (bits >> 23);
  gfloat t = bits_float ((bits & 0x7fffff) + 0x3f3504f3) - 1.0f, p;

  p = 0.25566962f;
  p = p * t - 0.39112714f;
  p = p * t + 0.48521446f;
  p = p * t - 0.72054101f;
  p = p * t + 1.44264756f;
  return e + t * p;
}

/* 2^y for y in [-100, 100] (clamped): y = n + f with n the nearest
 * integer (the 1.5 2^23 trick: adding it leaves n in the low mantissa
 * bits), 2^f for |f| <= 0.5 by a degree 4 polynomial (relative error
 * 3.6e-6), 2^n added to the exponent bits. */
static inline gfloat
rh_exp2 (gfloat y)
{
  const gfloat magic = 12582912.0f;
  gfloat t, f, p;

  y = y < -100.0f ? -100.0f : (y > 100.0f ? 100.0f : y);
  t = y + magic;
  f = y - (t - magic);
  p = 0.0096760468f;
  p = p * f + 0.055922119f;
  p = p * f + 0.24022107f;
  p = p * f + 0.69312102f;
  p = p * f + 1.0000001f;
  return bits_float ((gint32) ((guint32) float_bits (p) +
          ((guint32) float_bits (t) << 23)));
}

/* Bytes -> planes (through @table when not NULL), one channel at a time
 * with the pixel stride a constant (3 or 4): GCC then vectorises the
 * strided bytes with shuffles; with a run-time stride it gathers them one
 * by one, which cost as much as Reinhard's arithmetic. Restrict pointers:
 * byte stores may alias anything, and without them GCC reloads every
 * operand per pixel and vectorises nothing. */
#define WSI_STAIN_GATHER(PB)                                             \
  static inline void                                                      \
  gather_channel_##PB (const guint8 * restrict p, guint w,                \
      const gfloat * restrict table, gfloat * restrict out)               \
  {                                                                       \
    guint x;                                                              \
    if (table != NULL)                                                    \
      for (x = 0; x < w; x++)                                             \
        out[x] = table[p[(gsize) x * PB]];                                \
    else                                                                  \
      for (x = 0; x < w; x++)                                             \
        out[x] = p[(gsize) x * PB];                                       \
  }                                                                       \
  static inline void                                                      \
  scatter_channel_##PB (guint8 * restrict p, guint w,                     \
      const gfloat * restrict in)                                         \
  {                                                                       \
    guint x;                                                              \
    for (x = 0; x < w; x++)                                               \
      p[(gsize) x * PB] = (guint8) (gint32) in[x];                        \
  }
WSI_STAIN_GATHER (3)
WSI_STAIN_GATHER (4)

WSI_STAIN_CLONES static void
gather_row (const guint8 * restrict row, guint w, guint pb, guint ro,
    guint go, guint bo, const gfloat * restrict table, gfloat * restrict r,
    gfloat * restrict g, gfloat * restrict b)
{
  if (pb == 3) {
    gather_channel_3 (row + ro, w, table, r);
    gather_channel_3 (row + go, w, table, g);
    gather_channel_3 (row + bo, w, table, b);
  } else {
    gather_channel_4 (row + ro, w, table, r);
    gather_channel_4 (row + go, w, table, g);
    gather_channel_4 (row + bo, w, table, b);
  }
}

/* Planes (0..255, already rounded or to truncate) -> bytes; the bytes
 * between channels (alpha, x) are left as they are. */
WSI_STAIN_CLONES static void
scatter_row (guint8 * restrict row, guint w, guint pb, guint ro, guint go,
    guint bo, const gfloat * restrict r, const gfloat * restrict g,
    const gfloat * restrict b)
{
  if (pb == 3) {
    scatter_channel_3 (row + ro, w, r);
    scatter_channel_3 (row + go, w, g);
    scatter_channel_3 (row + bo, w, b);
  } else {
    scatter_channel_4 (row + ro, w, r);
    scatter_channel_4 (row + go, w, g);
    scatter_channel_4 (row + bo, w, b);
  }
}

static inline gfloat
clamp_f (gfloat v, gfloat lo, gfloat hi)
{
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

/* OD planes in, output planes (0..255, to truncate) out, in place. */
WSI_STAIN_CLONES static void
macenko_planes (guint w, const gfloat * restrict m, const gfloat * restrict c,
    gfloat * restrict r, gfloat * restrict g, gfloat * restrict b)
{
  const gfloat c0 = c[0], c1 = c[1], c2 = c[2];
  const gfloat m0 = m[0], m1 = m[1], m2 = m[2], m3 = m[3], m4 = m[4],
      m5 = m[5], m6 = m[6], m7 = m[7], m8 = m[8];
  const gfloat io = (gfloat) WSI_STAIN_IO;
  guint x;

  for (x = 0; x < w; x++) {
    gfloat y0 = m0 * r[x] + m1 * g[x] + m2 * b[x] + c0;
    gfloat y1 = m3 * r[x] + m4 * g[x] + m5 * b[x] + c1;
    gfloat y2 = m6 * r[x] + m7 * g[x] + m8 * b[x] + c2;

    r[x] = clamp_f (io * fast_exp2 (y0), 0.0f, 255.0f);
    g[x] = clamp_f (io * fast_exp2 (y1), 0.0f, 255.0f);
    b[x] = clamp_f (io * fast_exp2 (y2), 0.0f, 255.0f);
  }
}

/* RGB planes in, output planes (0..255 + 0.5, to truncate) out. */
WSI_STAIN_CLONES static void
reinhard_planes (guint w, const gfloat * restrict m, const gfloat * restrict c,
    const gfloat * restrict fwd, const gfloat * restrict back,
    gfloat * restrict r, gfloat * restrict g, gfloat * restrict b)
{
  const gfloat m0 = m[0], m1 = m[1], m2 = m[2], m3 = m[3], m4 = m[4],
      m5 = m[5], m6 = m[6], m7 = m[7], m8 = m[8];
  const gfloat c0 = c[0], c1 = c[1], c2 = c[2];
  const gfloat f0 = fwd[0], f1 = fwd[1], f2 = fwd[2], f3 = fwd[3],
      f4 = fwd[4], f5 = fwd[5], f6 = fwd[6], f7 = fwd[7], f8 = fwd[8];
  const gfloat k0 = back[0], k1 = back[1], k2 = back[2], k3 = back[3],
      k4 = back[4], k5 = back[5], k6 = back[6], k7 = back[7], k8 = back[8];
  guint x;

  for (x = 0; x < w; x++) {
    gfloat l0 = f0 * r[x] + f1 * g[x] + f2 * b[x];
    gfloat l1 = f3 * r[x] + f4 * g[x] + f5 * b[x];
    gfloat l2 = f6 * r[x] + f7 * g[x] + f8 * b[x];
    gfloat a0 = rh_log2 (l0 > 1.0f ? l0 : 1.0f);
    gfloat a1 = rh_log2 (l1 > 1.0f ? l1 : 1.0f);
    gfloat a2 = rh_log2 (l2 > 1.0f ? l2 : 1.0f);
    gfloat y0 = rh_exp2 (m0 * a0 + m1 * a1 + m2 * a2 + c0);
    gfloat y1 = rh_exp2 (m3 * a0 + m4 * a1 + m5 * a2 + c1);
    gfloat y2 = rh_exp2 (m6 * a0 + m7 * a1 + m8 * a2 + c2);

    /* rounded: + 0.5 here, truncated by the scatter */
    r[x] = clamp_f (k0 * y0 + k1 * y1 + k2 * y2 + 0.5f, 0.0f, 255.0f);
    g[x] = clamp_f (k3 * y0 + k4 * y1 + k5 * y2 + 0.5f, 0.0f, 255.0f);
    b[x] = clamp_f (k6 * y0 + k7 * y1 + k8 * y2 + 0.5f, 0.0f, 255.0f);
  }
}

static const gfloat *
od_table_f (void)
{
  static gfloat table[256];
  static gsize made = 0;

  if (g_once_init_enter (&made)) {
    const gdouble *t = od_table ();
    guint v;

    for (v = 0; v < 256; v++)
      table[v] = (gfloat) t[v];
    g_once_init_leave (&made, 1);
  }
  return table;
}

void
wsi_stain_apply (const WsiStainPlan * plan, const WsiStainImage * im,
    WsiStainScratch * scratch)
{
  const guint w = im->width, pb = im->pixel_bytes;
  const gfloat *table = NULL;
  gfloat *r, *g, *b, m[9], c[3], fwd[9], back[9];
  guint y, i;

  if (im->width == 0 || im->height == 0)
    return;
  if (plan->method == WSI_STAIN_MACENKO && build_lut (scratch, plan)) {
    apply_macenko_lut (scratch, im);
    return;
  }
  r = scratch_planes (scratch, w);
  g = r + w;
  b = g + w;
  memcpy (m, plan->m, sizeof (m));
  memcpy (c, plan->c, sizeof (c));
  if (plan->method == WSI_STAIN_REINHARD) {
    gdouble inv[9];

    if (!mat3_inverse (rgb_to_lms, inv))
      return;
    for (i = 0; i < 9; i++) {
      fwd[i] = (gfloat) rgb_to_lms[i];
      back[i] = (gfloat) inv[i];
    }
  } else
    table = od_table_f ();
  for (y = 0; y < im->height; y++) {
    guint8 *row = im->data + y * im->stride;

    gather_row (row, w, pb, im->r, im->g, im->b, table, r, g, b);
    if (plan->method == WSI_STAIN_MACENKO)
      macenko_planes (w, m, c, r, g, b);
    else
      reinhard_planes (w, m, c, fwd, back, r, g, b);
    scatter_row (row, w, pb, im->r, im->g, im->b, r, g, b);
  }
}

/* ---- text ---------------------------------------------------------------- */

/* %.17g: every double reads back exactly (wsi_stain_parse_numbers) */
gchar *
wsi_stain_format_numbers (const gdouble * values, guint n)
{
  return wsi_number_list_format (values, n, ' ', "%.17g");
}

gboolean
wsi_stain_parse_numbers (const gchar * text, gdouble * values, guint n)
{
  const gchar *p = text;
  guint i;

  if (text == NULL)
    return FALSE;
  for (i = 0; i < n; i++) {
    gchar *end;

    values[i] = g_ascii_strtod (p, &end);
    if (end == p || !isfinite (values[i]))
      return FALSE;
    p = end;
  }
  while (*p == ' ')
    p++;
  return *p == '\0';
}
