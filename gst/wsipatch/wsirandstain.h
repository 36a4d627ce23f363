/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsirandstain.h: stainnorm's augmentation draws. The HED jitter's on the
 * slide's stains (wsi_stain_jitter_draw: Tellez et al.'s alpha and beta per
 * stain, uniform, a pure function of (seed, sequence, view)), and
 * RandStainNA-style stain augmentation (Shen et al. 2022):
 * each drawn patch is normalised (Reinhard's transfer) onto target
 * statistics drawn at random from the distribution of the slides' own
 * statistics, instead of onto one fixed template.
 *
 * Contract. The colour space is Ruderman's l-alpha-beta, Reinhard's (the
 * statistics stainestimate already writes for every slide: three channel
 * means and three standard deviations); RandStainNA's paper offers CIE
 * LAB, HSV and HED, l-alpha-beta is its LAB's log-LMS cousin and needs no
 * second apply kernel. The distribution is a normal one per number (six
 * independent normals, as RandStainNA's "normal" choice), its mean and
 * standard deviation (population, ddof 0) those of the distinct slides'
 * numbers seen so far in stream order, the deviation times @spread
 * (RandStainNA's std_hyper is spread - 1). A slide counts once, when its
 * first patch arrives: so the distribution is a pure function of the
 * stream's order, hence of (seed, rank, world size, settings), and the
 * first slide's patches are drawn around that slide itself (deviation 0:
 * unchanged) until a second slide arrives. A drawn standard deviation is
 * floored at a tenth of the distribution's mean one (a normal can draw
 * zero or less). The draw of a patch is a pure function of (seed, the
 * patch's sequence, its view index, the distribution): probability first, then six
 * standard normals (Box-Muller on wsirng's uniforms), all drawn whatever
 * the probability.
 *
 * Cost: a hash lookup per patch and, per new slide, a Welford update of
 * six numbers; the draw is 7 uniforms, 3 logs, 3 square roots, 6 sines or
 * cosines. Threading: a WsiRandStain belongs to the thread that feeds the
 * element in order (the streaming thread); the draw is a pure function.
 */

#ifndef __WSI_RAND_STAIN_H__
#define __WSI_RAND_STAIN_H__

#include <glib.h>
#include "wsistain.h"

G_BEGIN_DECLS

/* The HED jitter's settings: alpha from [1 - sigma, 1 + sigma], beta from
 * [-bias, bias] (bias < 0: sigma), with probability @probability. */
typedef struct
{
  guint64 seed;
  gdouble probability;
  gdouble sigma;
  gdouble bias;
} WsiStainJitter;

/* The jitter of patch @sequence, view @view (0 for a single patch); all
 * four numbers are drawn whatever the probability, so changing it changes
 * no other patch's values. TRUE (@alpha, @beta set) when it applies. */
gboolean wsi_stain_jitter_draw (const WsiStainJitter * j, guint64 sequence,
    guint view, gdouble * alpha, gdouble * beta);

typedef struct
{
  GHashTable *seen;             /* slide key -> itself */
  guint n;
  gdouble mean[6], m2[6];       /* lab mean[3], std[3], over slides */
} WsiRandStain;

/* The distribution of the slides' statistics: mu and sigma of the lab
 * means (0..2) and standard deviations (3..5). */
typedef struct
{
  gdouble mu[6];
  gdouble sigma[6];
  guint n_slides;
} WsiRandStainDist;

void wsi_rand_stain_init (WsiRandStain * rs);
void wsi_rand_stain_clear (WsiRandStain * rs);

/* Counts slide @key's statistics @lab once; TRUE when the slide is new. */
gboolean wsi_rand_stain_add (WsiRandStain * rs, const gchar * key,
    const WsiStainLab * lab);

/* The distribution now, its deviations times @spread; FALSE before any
 * slide. */
gboolean wsi_rand_stain_distribution (const WsiRandStain * rs,
    gdouble spread, WsiRandStainDist * dist);

/* The draw of patch @sequence, view @view (0 for a single patch): TRUE
 * (and @target set) when it is augmented, with probability @probability. */
gboolean wsi_rand_stain_draw (const WsiRandStainDist * dist, guint64 seed,
    guint64 sequence, guint view, gdouble probability, WsiStainLab * target);

G_END_DECLS

#endif /* __WSI_RAND_STAIN_H__ */
