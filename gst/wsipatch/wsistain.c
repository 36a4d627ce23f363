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

/* AVX2 clones of the row loops where GCC's target_clones work (ELF,
 * x86-64): 8 floats a step instead of 4; -ffp-contract=off keeps the
 * bytes those of the SSE2 code. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
    && defined(__ELF__) && !defined(__SANITIZE_ADDRESS__)
#define WSI_STAIN_CLONES __attribute__ ((target_clones ("avx2", "default")))
#else
#define WSI_STAIN_CLONES
#endif

#define LOG2_10 3.32192809488736234787
#define LOG2_E 1.44269504088896340736

struct _WsiStainScratch
{
  guint width;
  gfloat *planes;               /* 6 rows of width floats */
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

gboolean
wsi_stain_estimate_macenko (const WsiStainPixels * px, WsiStainMatrix * out,
    guint64 * n_tissue)
{
  const WsiStainImage *im = px->image;
  const gdouble *t = od_table ();
  gdouble mean[3] = { 0 }, cov[9] = { 0 }, w[3], v[9], e_mid[3], e_big[3];
  gdouble *phi = NULL, *ch = NULL, *ce = NULL, p[6];
  gdouble min_phi, max_phi, vmin[3], vmax[3];
  guint64 n = 0, n_all = 0, k;
  guint x, y, i, j;
  gboolean ok = FALSE;

  if (n_tissue)
    *n_tissue = 0;
  for (y = 0; y < im->height; y++)
    for (x = 0; x < im->width; x++)
      if (selected (px, x, y)) {
        const guint8 *q = pixel_at (im, x, y);
        gdouble od[3] = { t[q[im->r]], t[q[im->g]], t[q[im->b]] };

        n_all++;
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
  if (!stain_solver (out->stains, p))
    goto done;

  ch = g_new (gdouble, n_all);
  ce = g_new (gdouble, n_all);
  k = 0;
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
  ok = isfinite (out->max_c[0]) && isfinite (out->max_c[1])
      && out->max_c[0] > 1e-6 && out->max_c[1] > 1e-6;
  for (i = 0; i < 3; i++)
    ok = ok && isfinite (out->stains[0][i]) && isfinite (out->stains[1][i]);

done:
  g_free (phi);
  g_free (ch);
  g_free (ce);
  return ok;
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
wsi_stain_plan_macenko (WsiStainPlan * plan, const WsiStainMatrix * src,
    const WsiStainMatrix * dst)
{
  gdouble p[6], k[2];
  guint i, j;

  if (!stain_solver (src->stains, p))
    return FALSE;
  for (j = 0; j < 2; j++) {
    if (!(src->max_c[j] > 1e-6))
      return FALSE;
    k[j] = dst->max_c[j] / src->max_c[j];
  }
  /* OD out = S_t diag (k) P OD in; exp (-x) = exp2 (-x log2 e) */
  plan->method = WSI_STAIN_MACENKO;
  for (i = 0; i < 3; i++)
    for (j = 0; j < 3; j++)
      plan->m[i * 3 + j] = (gfloat) (-LOG2_E *
          (dst->stains[0][i] * k[0] * p[j] + dst->stains[1][i] * k[1] *
              p[3 + j]));
  plan->c[0] = plan->c[1] = plan->c[2] = 0.0f;
  return plan_finite (plan);
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

static gfloat *
scratch_planes (WsiStainScratch * s, guint width)
{
  if (s->width < width) {
    g_free (s->planes);
    s->planes = g_new (gfloat, (gsize) width * 6);
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

/* log2 (x) for x >= 1 (callers clamp): the exponent from the bits, the
 * mantissa's by the atanh series in s = (m - 1) / (m + 1), |s| <= 1/3. */
static inline gfloat
fast_log2 (gfloat x)
{
  gint32 bits = float_bits (x);
  gfloat e = (gfloat) ((bits >> 23) - 127);
  gfloat m = bits_float ((bits & 0x7fffff) | 0x3f800000);
  gfloat s = (m - 1.0f) / (m + 1.0f), s2 = s * s, p;

  p = 1.0f / 11.0f;
  p = p * s2 + 1.0f / 9.0f;
  p = p * s2 + 1.0f / 7.0f;
  p = p * s2 + 1.0f / 5.0f;
  p = p * s2 + 1.0f / 3.0f;
  p = p * s2 + 1.0f;
  return e + (gfloat) (2.0 * LOG2_E) * s * p;
}

/* Bytes -> planes (through @table when not NULL). Locals and restrict
 * pointers: byte stores may alias anything, and without them GCC reloads
 * every operand per pixel and vectorises nothing. */
WSI_STAIN_CLONES static void
gather_row (const guint8 * restrict row, guint w, guint pb, guint ro,
    guint go, guint bo, const gfloat * restrict table, gfloat * restrict r,
    gfloat * restrict g, gfloat * restrict b)
{
  guint x;

  if (table != NULL) {
    for (x = 0; x < w; x++) {
      r[x] = table[row[(gsize) x * pb + ro]];
      g[x] = table[row[(gsize) x * pb + go]];
      b[x] = table[row[(gsize) x * pb + bo]];
    }
  } else {
    for (x = 0; x < w; x++) {
      r[x] = row[(gsize) x * pb + ro];
      g[x] = row[(gsize) x * pb + go];
      b[x] = row[(gsize) x * pb + bo];
    }
  }
}

/* Planes (0..255, already rounded or to truncate) -> bytes. */
WSI_STAIN_CLONES static void
scatter_row (guint8 * restrict row, guint w, guint pb, guint ro, guint go,
    guint bo, const gfloat * restrict r, const gfloat * restrict g,
    const gfloat * restrict b)
{
  guint x;

  if (pb == 3 && ro == 0 && go == 1 && bo == 2) {
    for (x = 0; x < w; x++) {
      row[3 * x] = (guint8) (gint32) r[x];
      row[3 * x + 1] = (guint8) (gint32) g[x];
      row[3 * x + 2] = (guint8) (gint32) b[x];
    }
    return;
  }
  for (x = 0; x < w; x++) {
    row[(gsize) x * pb + ro] = (guint8) (gint32) r[x];
    row[(gsize) x * pb + go] = (guint8) (gint32) g[x];
    row[(gsize) x * pb + bo] = (guint8) (gint32) b[x];
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
macenko_planes (guint w, const gfloat * restrict m, gfloat * restrict r,
    gfloat * restrict g, gfloat * restrict b)
{
  const gfloat m0 = m[0], m1 = m[1], m2 = m[2], m3 = m[3], m4 = m[4],
      m5 = m[5], m6 = m[6], m7 = m[7], m8 = m[8];
  const gfloat io = (gfloat) WSI_STAIN_IO;
  guint x;

  for (x = 0; x < w; x++) {
    gfloat y0 = m0 * r[x] + m1 * g[x] + m2 * b[x];
    gfloat y1 = m3 * r[x] + m4 * g[x] + m5 * b[x];
    gfloat y2 = m6 * r[x] + m7 * g[x] + m8 * b[x];

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
    gfloat a0 = fast_log2 (l0 > 1.0f ? l0 : 1.0f);
    gfloat a1 = fast_log2 (l1 > 1.0f ? l1 : 1.0f);
    gfloat a2 = fast_log2 (l2 > 1.0f ? l2 : 1.0f);
    gfloat y0 = fast_exp2 (m0 * a0 + m1 * a1 + m2 * a2 + c0);
    gfloat y1 = fast_exp2 (m3 * a0 + m4 * a1 + m5 * a2 + c1);
    gfloat y2 = fast_exp2 (m6 * a0 + m7 * a1 + m8 * a2 + c2);

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
      macenko_planes (w, m, r, g, b);
    else
      reinhard_planes (w, m, c, fwd, back, r, g, b);
    scatter_row (row, w, pb, im->r, im->g, im->b, r, g, b);
  }
}

/* ---- text ---------------------------------------------------------------- */

gchar *
wsi_stain_format_numbers (const gdouble * values, guint n)
{
  GString *s = g_string_new (NULL);
  gchar buf[G_ASCII_DTOSTR_BUF_SIZE];
  guint i;

  for (i = 0; i < n; i++) {
    if (i > 0)
      g_string_append_c (s, ' ');
    g_string_append (s, g_ascii_formatd (buf, sizeof (buf), "%.17g",
            values[i]));
  }
  return g_string_free (s, FALSE);
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
