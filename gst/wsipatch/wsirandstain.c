/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsirandstain.c: see wsirandstain.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>
#include <gst/wsi/wsirng.h>

#include "wsirandstain.h"

/* "randstain" in ASCII: these draws never coincide with another stage's
 * (nor with stainnorm's HED jitter, keyed "stain") */
#define RAND_STAIN_RNG_KEY G_GUINT64_CONSTANT (0x72616e647374)

/* "stain" in ASCII: mixed into wsi_rng_seed_keys() after the sequence, so
 * these draws never coincide with another stage's */
#define STAIN_RNG_KEY G_GUINT64_CONSTANT (0x737461696e)

gboolean
wsi_stain_jitter_draw (const WsiStainJitter * j, guint64 sequence,
    guint view, gdouble * alpha, gdouble * beta)
{
  WsiRng rng;
  gdouble bias = j->bias < 0.0 ? j->sigma : j->bias, a[2], b[2];
  gboolean on;
  guint i;

  wsi_rng_seed_keys (&rng, j->seed, sequence, view, STAIN_RNG_KEY);
  on = wsi_rng_uniform (&rng) < j->probability;
  for (i = 0; i < 2; i++)
    a[i] = wsi_rng_range (&rng, 1.0 - j->sigma, 1.0 + j->sigma);
  for (i = 0; i < 2; i++)
    b[i] = wsi_rng_range (&rng, -bias, bias);
  if (!on)
    return FALSE;
  for (i = 0; i < 2; i++) {
    alpha[i] = a[i];
    beta[i] = b[i];
  }
  return TRUE;
}

void
wsi_rand_stain_init (WsiRandStain * rs)
{
  memset (rs, 0, sizeof (*rs));
  rs->seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

void
wsi_rand_stain_clear (WsiRandStain * rs)
{
  if (rs->seen)
    g_hash_table_destroy (rs->seen);
  memset (rs, 0, sizeof (*rs));
}

gboolean
wsi_rand_stain_add (WsiRandStain * rs, const gchar * key,
    const WsiStainLab * lab)
{
  gdouble x[6];
  guint i;

  if (g_hash_table_contains (rs->seen, key))
    return FALSE;
  g_hash_table_add (rs->seen, g_strdup (key));
  for (i = 0; i < 3; i++) {
    x[i] = lab->mean[i];
    x[3 + i] = lab->std[i];
  }
  /* Welford: no sums of squares to lose precision in */
  rs->n++;
  for (i = 0; i < 6; i++) {
    gdouble d = x[i] - rs->mean[i];

    rs->mean[i] += d / rs->n;
    rs->m2[i] += d * (x[i] - rs->mean[i]);
  }
  return TRUE;
}

gboolean
wsi_rand_stain_distribution (const WsiRandStain * rs, gdouble spread,
    WsiRandStainDist * dist)
{
  guint i;

  if (rs->n == 0)
    return FALSE;
  for (i = 0; i < 6; i++) {
    gdouble var = rs->m2[i] / rs->n;

    dist->mu[i] = rs->mean[i];
    dist->sigma[i] = spread * sqrt (var > 0.0 ? var : 0.0);
  }
  dist->n_slides = rs->n;
  return TRUE;
}

gboolean
wsi_rand_stain_draw (const WsiRandStainDist * dist, guint64 seed,
    guint64 sequence, guint view, gdouble probability, WsiStainLab * target)
{
  WsiRng rng;
  gdouble z[6];
  gboolean on;
  guint i;

  wsi_rng_seed_keys (&rng, seed, sequence, view, RAND_STAIN_RNG_KEY);
  on = wsi_rng_uniform (&rng) < probability;
  for (i = 0; i < 6; i += 2) {
    /* 1 - u is in (0, 1]: its log is finite */
    gdouble r = sqrt (-2.0 * log (1.0 - wsi_rng_uniform (&rng)));
    gdouble t = 2.0 * G_PI * wsi_rng_uniform (&rng);

    z[i] = r * cos (t);
    z[i + 1] = r * sin (t);
  }
  if (!on)
    return FALSE;
  for (i = 0; i < 3; i++) {
    gdouble s = dist->mu[3 + i] + dist->sigma[3 + i] * z[3 + i];
    gdouble floor_s = 0.1 * dist->mu[3 + i];

    target->mean[i] = dist->mu[i] + dist->sigma[i] * z[i];
    target->std[i] = s > floor_s ? s : floor_s;
  }
  return TRUE;
}
