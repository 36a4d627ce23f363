/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsioverview: the overview's ARGB -> RGB conversion (SSSE3 where the CPU
 * has it, issue 23) gives the bytes of the read layer's scalar
 * wsi_argb_to_rgb_on_white() for every pixel count, alpha below 255 and
 * malformed premultiplied pixels (a colour above its alpha) included, and
 * writes nothing past its 3 * n bytes. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/check/gstcheck.h>

#include "wsioverview.h"

#define MAX_PIXELS 75
#define GUARD 32
#define GUARD_BYTE 0xA5

GST_START_TEST (test_argb_to_rgb_as_scalar)
{
  GRand *rand = g_rand_new_with_seed (23);
  guint32 argb[MAX_PIXELS];
  guint8 expected[3 * MAX_PIXELS], got[3 * MAX_PIXELS + GUARD];
  gsize n, i;

  for (i = 0; i < MAX_PIXELS; i++) {
    guint32 alpha = i % 3 == 0 ? 255 : g_rand_int_range (rand, 0, 256);

    /* colour bytes at random: some above their alpha (malformed) */
    argb[i] = (alpha << 24) | (g_rand_int (rand) & 0xffffff);
  }
  for (n = 0; n <= MAX_PIXELS; n++) {
    memset (got, GUARD_BYTE, sizeof (got));
    wsi_argb_to_rgb_on_white (argb, expected, n);
    wsi_overview_argb_to_rgb (argb, got, n);
    fail_unless (memcmp (got, expected, 3 * n) == 0, "n = %"
        G_GSIZE_FORMAT ": other bytes", n);
    for (i = 3 * n; i < sizeof (got); i++)
      fail_unless (got[i] == GUARD_BYTE, "n = %" G_GSIZE_FORMAT ": byte %"
          G_GSIZE_FORMAT " written past the end", n, i);
  }
  g_rand_free (rand);
}

GST_END_TEST;

static Suite *
wsioverview_suite (void)
{
  Suite *s = suite_create ("wsioverview");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_argb_to_rgb_as_scalar);
  return s;
}

GST_CHECK_MAIN (wsioverview);
