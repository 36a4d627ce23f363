/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsicpu.c: see wsicpu.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsicpu.h"

/* The probe's answer, with a bit above every feature so that 0 means
 * "not probed yet" even on a CPU that has none of them. */
#define PROBED (1 << 30)

static guint
probe (void)
{
  guint found = PROBED;

#if (defined (__x86_64__) || defined (__i386__)) && defined (__GNUC__)
  __builtin_cpu_init ();
  if (__builtin_cpu_supports ("ssse3"))
    found |= WSI_CPU_SSSE3;
  if (__builtin_cpu_supports ("avx"))
    found |= WSI_CPU_AVX;
  if (__builtin_cpu_supports ("avx2"))
    found |= WSI_CPU_AVX2;
#endif
  return found;
}

gboolean
wsi_cpu_has (WsiCpuFeatures features)
{
  static guint known = 0;
  guint found = g_atomic_int_get (&known);

  if (found == 0) {
    found = probe ();
    g_atomic_int_set (&known, found);
  }
  return (found & (guint) features) == (guint) features;
}
