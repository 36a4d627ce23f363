/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsirng.h: the one random number generator of gst-wsi (header only).
 *
 * Contract: xoshiro256** seeded through splitmix64 from a seed and up to
 * three keys (e.g. slide index and visit, or patch sequence and view
 * index). The numbers depend only on the seed and the keys: the same on
 * every platform, compiler and GLib version (GRand makes no such promise),
 * and, because every consumer seeds from its own keys instead of sharing
 * one generator, independent of thread timing. A stream of draws is
 * therefore a pure function of (seed, keys).
 *
 * Cost: seeding is 7 splitmix64 steps (a few ns); a draw is a handful of
 * shifts and xors. Threading: a WsiRng is plain data; give each thread or
 * each work item its own.
 */

#ifndef __WSI_RNG_H__
#define __WSI_RNG_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  guint64 s[4];
} WsiRng;

static inline guint64
wsi_splitmix64 (guint64 * state)
{
  guint64 z = (*state += G_GUINT64_CONSTANT (0x9E3779B97F4A7C15));

  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Seeds from @seed and three keys. wsi_rng_seed (rng, seed, a, b, 0)
 * gives the sequence the sampler has always drawn for slide a, cycle b
 * (the third key is mixed in only when non-zero, so it stays so). */
static inline void
wsi_rng_seed_keys (WsiRng * rng, guint64 seed, guint64 key_a, guint64 key_b,
    guint64 key_c)
{
  guint64 state = seed;
  guint i;

  state = wsi_splitmix64 (&state) ^ key_a;
  state = wsi_splitmix64 (&state) ^ (key_b << 32);
  if (key_c != 0)
    state = wsi_splitmix64 (&state) ^ key_c;
  for (i = 0; i < 4; i++)
    rng->s[i] = wsi_splitmix64 (&state);
}

/* Seeds from the source's seed, the slide and the visit, so a revisit
 * draws new positions and two slides never share a sequence. */
static inline void
wsi_rng_seed (WsiRng * rng, guint64 seed, guint slide_index, guint cycle)
{
  wsi_rng_seed_keys (rng, seed, slide_index, cycle, 0);
}

static inline guint64
wsi_rng_rotl64 (guint64 x, int k)
{
  return (x << k) | (x >> (64 - k));
}

static inline guint64
wsi_rng_next (WsiRng * rng)
{
  guint64 *s = rng->s;
  guint64 result = wsi_rng_rotl64 (s[1] * 5, 7) * 9;
  guint64 t = s[1] << 17;

  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = wsi_rng_rotl64 (s[3], 45);
  return result;
}

/* Uniform in [0, bound), bound > 0, without modulo bias. */
static inline guint64
wsi_rng_below (WsiRng * rng, guint64 bound)
{
  guint64 threshold = (0 - bound) % bound;
  guint64 r;

  do {
    r = wsi_rng_next (rng);
  } while (r < threshold);
  return r % bound;
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline gdouble
wsi_rng_uniform (WsiRng * rng)
{
  return (wsi_rng_next (rng) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform double in [lo, hi). */
static inline gdouble
wsi_rng_range (WsiRng * rng, gdouble lo, gdouble hi)
{
  return lo + (hi - lo) * wsi_rng_uniform (rng);
}

G_END_DECLS

#endif /* __WSI_RNG_H__ */
