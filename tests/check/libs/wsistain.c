/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* The stain kernels (wsistain.h): glass, black, one colour and pen give no
 * estimate and never NaN; the Macenko apply, by its tables and by its
 * float path (plans too large for the tables' fields), is within one grey
 * level of the formula in double, 240 exp (-A od) truncated. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <math.h>

#include "wsistain.h"

#define SIDE 64

static void
fill (guint8 * px, guint8 r, guint8 g, guint8 b)
{
  guint i;

  for (i = 0; i < SIDE * SIDE; i++) {
    px[3 * i] = r;
    px[3 * i + 1] = g;
    px[3 * i + 2] = b;
  }
}

GST_START_TEST (test_no_estimate_without_stains)
{
  guint8 px[SIDE * SIDE * 3];
  WsiStainImage image = { px, SIDE, SIDE, SIDE * 3, 3, 0, 1, 2 };
  WsiStainPixels all = { &image, NULL, 0 };
  WsiStainMatrix m;
  WsiStainLab lab;
  const guint8 colours[][3] = { {245, 245, 245}, {0, 0, 0}, {150, 80, 160} };
  guint c, i;

  for (c = 0; c < G_N_ELEMENTS (colours); c++) {
    fill (px, colours[c][0], colours[c][1], colours[c][2]);
    fail_if (wsi_stain_estimate_macenko (&all, &m, NULL), "colour %u", c);
    fail_if (wsi_stain_estimate_vahadane (&all, &m, NULL), "colour %u", c);
    /* one colour: no deviation */
    fail_if (wsi_stain_estimate_lab (&all, &lab), "colour %u", c);
  }
  /* pen on glass: two inks; whatever the estimate, nothing is NaN */
  fill (px, 245, 245, 245);
  for (i = 0; i < SIDE * SIDE / 3; i++) {
    px[3 * i] = 40;
    px[3 * i + 1] = 90;
    px[3 * i + 2] = 200;
  }
  for (i = SIDE * SIDE / 2; i < SIDE * SIDE / 2 + SIDE * 4; i++) {
    px[3 * i] = 30;
    px[3 * i + 1] = 140;
    px[3 * i + 2] = 60;
  }
  if (wsi_stain_estimate_macenko (&all, &m, NULL))
    for (i = 0; i < 3; i++)
      fail_unless (isfinite (m.stains[0][i]) && isfinite (m.stains[1][i]));
  if (wsi_stain_estimate_lab (&all, &lab))
    for (i = 0; i < 3; i++)
      fail_unless (isfinite (lab.mean[i]) && isfinite (lab.std[i]));
}

GST_END_TEST;

/* Applies @plan to every colour of a coarse RGB grid; compares with the
 * formula in double; returns the largest difference. */
static gint
max_difference (const WsiStainPlan * plan)
{
  const guint n = 32 * 32 * 32;
  guint8 *px = g_malloc (n * 3), *orig = g_malloc (n * 3);
  WsiStainImage image = { px, 32 * 32, 32, 32 * 32 * 3, 3, 0, 1, 2 };
  WsiStainScratch *scratch = wsi_stain_scratch_new ();
  gint worst = 0;
  guint i, k;

  for (i = 0; i < n; i++) {
    orig[3 * i] = (guint8) ((i >> 10) * 8 + 3);
    orig[3 * i + 1] = (guint8) (((i >> 5) & 31) * 8 + 3);
    orig[3 * i + 2] = (guint8) ((i & 31) * 8 + 3);
  }
  memcpy (px, orig, n * 3);
  wsi_stain_apply (plan, &image, scratch);
  for (i = 0; i < n; i++)
    for (k = 0; k < 3; k++) {
      gdouble z = plan->c[k] / -M_LOG2E, v;
      guint c;
      gint want;

      for (c = 0; c < 3; c++)
        z += plan->m[k * 3 + c] / -M_LOG2E *
            -log ((orig[3 * i + c] + 1.0) / 240.0);
      v = 240.0 * exp (-z);
      want = v >= 255.0 ? 255 : (gint) v;
      worst = MAX (worst, ABS (want - (gint) px[3 * i + k]));
    }
  wsi_stain_scratch_free (scratch);
  g_free (px);
  g_free (orig);
  return worst;
}

GST_START_TEST (test_macenko_apply_tables_and_float)
{
  WsiStainMatrix src = wsi_stain_macenko_default;
  WsiStainPlan plan;
  gdouble largest = 0;
  guint i;

  /* ordinary stains: the tables */
  src.stains[0][0] = 0.65;
  src.stains[0][1] = 0.70;
  src.stains[0][2] = 0.29;
  src.max_c[0] = 1.5;
  fail_unless (wsi_stain_plan_macenko (&plan, &src,
          &wsi_stain_macenko_default));
  fail_unless (max_difference (&plan) <= 1);

  /* nearly the same two stains: a large inverse, the float path */
  src = wsi_stain_macenko_default;
  src.stains[1][0] = src.stains[0][0] + 0.010;
  src.stains[1][1] = src.stains[0][1] - 0.005;
  src.stains[1][2] = src.stains[0][2];
  fail_unless (wsi_stain_plan_macenko (&plan, &src,
          &wsi_stain_macenko_default));
  for (i = 0; i < 9; i++)
    largest = MAX (largest, fabs (plan.m[i] / M_LOG2E));
  fail_unless (largest > 22.0, "the plan must exceed the tables (%g)",
      largest);
  fail_unless (max_difference (&plan) <= 1);
}

GST_END_TEST;

static Suite *
wsistain_suite (void)
{
  Suite *s = suite_create ("wsistain");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_no_estimate_without_stains);
  tcase_add_test (tc, test_macenko_apply_tables_and_float);
  return s;
}

GST_CHECK_MAIN (wsistain);
