/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistainpaths: prints a digest of wsi_stain_apply's output (Reinhard and
 * Macenko's float path, RGB and BGRx, widths that leave vector tails) on
 * seeded random images. Built twice, with the CPU clones (AVX-512 or AVX2
 * where the machine has them) and with WSI_STAIN_NO_CLONES (SSE2 only);
 * the test passes when both print the same digest: the bytes do not depend
 * on the CPU the stream is made on.
 */

#include <stdio.h>
#include <glib.h>

#include "wsistain.h"

int
main (void)
{
  GRand *rand = g_rand_new_with_seed (5);
  const guint widths[] = { 224, 301, 7 };
  WsiStainLab src = { {4.3, 0.02, -0.01}, {0.3, 0.05, 0.02} };
  WsiStainLab dst = { {4.0, 0.05, 0.01}, {0.5, 0.09, 0.01} };
  WsiStainMatrix wide = wsi_stain_macenko_default;
  WsiStainScratch *scratch = wsi_stain_scratch_new ();
  guint64 digest = 1469598103934665603ULL;
  guint k, i, pb;

  /* a target whose concentrations are 40 x the source's: too wide for the
   * tables, so the float path runs */
  wide.max_c[0] *= 40.0;
  wide.max_c[1] *= 40.0;
  for (k = 0; k < 9; k++) {
    guint w = widths[k % 3], h = 33;
    guint8 *d = g_malloc ((gsize) w * h * 4);
    WsiStainPlan plan;

    for (i = 0; i < w * h * 4; i++)
      d[i] = k % 4 == 3 ? (i % 7 == 0 ? 0 : 255) :
          (guint8) g_rand_int_range (rand, 0, 256);
    if (k >= 4) {
      dst.std[0] = 2.0;
      dst.mean[1] = -0.3;
    }
    if (k < 6) {
      if (!wsi_stain_plan_reinhard (&plan, &src, &dst))
        return 1;
    } else if (!wsi_stain_plan_macenko (&plan, &wsi_stain_macenko_default,
            &wide))
      return 1;
    for (pb = 3; pb <= 4; pb++) {
      WsiStainImage im = { d, w, h, (gsize) w * pb, pb, pb == 4 ? 2 : 0, 1,
        pb == 4 ? 0 : 2
      };
      wsi_stain_apply (&plan, &im, scratch);
    }
    for (i = 0; i < w * h * 4; i++)
      digest = (digest ^ d[i]) * 1099511628211ULL;
    g_free (d);
  }
  printf ("%016" G_GINT64_MODIFIER "x\n", digest);
  wsi_stain_scratch_free (scratch);
  g_rand_free (rand);
  return 0;
}
