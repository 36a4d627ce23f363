/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* The planner's delivery tally (gst/wsipatch/wsidelivery.h) over long
 * cycling streams: its memory stays bounded (it used to keep one tally per
 * cycle for the stream's life, the soak's residual growth), while the
 * stream's drop count and the report of a lost cycle work as before. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <gst/wsi/wsievent.h>

#include "wsidelivery.h"

/* Many more cycles than the tally keeps. */
#define LONG_RUN_CYCLES (3 * WSI_DELIVERY_KEPT_CYCLES + 17)

/* Reports one dropped patch of @cycle, as patchreader does; returns the
 * cycle + 1 whose loss this drop completed, else 0. */
static guint
drop_one (WsiDelivery * delivery, guint slide, guint cycle,
    const gchar * reason)
{
  GstEvent *event = wsi_event_new_patch_dropped (slide, cycle, 0,
      "/slides/broken.svs", reason);
  guint lost_cycle = 0;

  fail_unless (wsi_delivery_handle_event (delivery, event, &lost_cycle));
  gst_event_unref (event);
  return lost_cycle;
}

/* Cycles that each plan 4 patches and drop 1 (so each made a table of
 * reasons): what is held stays bounded, the stream's count is exact. */
static void
run_healthy_cycles (WsiDelivery * delivery, guint first, guint n)
{
  guint cycle;

  for (cycle = first; cycle < first + n; cycle++) {
    wsi_delivery_planned (delivery, cycle, 4);
    fail_unless_equals_int (drop_one (delivery, 0, cycle, "a bad tile"), 0);
    fail_if (wsi_delivery_close_cycle (delivery, cycle));
  }
}

GST_START_TEST (test_long_stream_holds_bounded_tallies)
{
  WsiDelivery *delivery = wsi_delivery_new ();
  guint kept, with_reasons, forgotten = G_MAXUINT;

  run_healthy_cycles (delivery, 0, LONG_RUN_CYCLES);
  kept = wsi_delivery_tallies_kept (delivery, &with_reasons);
  fail_unless (kept <= WSI_DELIVERY_KEPT_CYCLES, "%u tallies after %u "
      "cycles", kept, LONG_RUN_CYCLES);
  fail_unless (with_reasons <= WSI_DELIVERY_KEPT_CYCLES, "%u tables of "
      "reasons after %u cycles", with_reasons, LONG_RUN_CYCLES);
  /* Forgetting tallies does not change the stream's count. */
  fail_unless_equals_uint64 (wsi_delivery_dropped (delivery),
      LONG_RUN_CYCLES);
  /* A late drop for a forgotten cycle counts, and makes no tally; it is
   * told once (patchsampler warns that such a loss goes unchecked). */
  fail_if (wsi_delivery_take_forgotten (delivery, NULL));
  fail_unless_equals_int (drop_one (delivery, 0, 3, "late"), 0);
  fail_unless_equals_uint64 (wsi_delivery_dropped (delivery),
      LONG_RUN_CYCLES + 1);
  fail_unless_equals_int (wsi_delivery_tallies_kept (delivery, NULL), kept);
  fail_unless (wsi_delivery_take_forgotten (delivery, &forgotten));
  fail_unless_equals_int (forgotten, 3);
  fail_unless_equals_int (drop_one (delivery, 0, 4, "late"), 0);
  fail_if (wsi_delivery_take_forgotten (delivery, NULL));

  wsi_delivery_reset (delivery);
  fail_unless_equals_int (wsi_delivery_tallies_kept (delivery, &with_reasons),
      0);
  fail_unless_equals_int (with_reasons, 0);
  fail_unless_equals_uint64 (wsi_delivery_dropped (delivery), 0);
  /* A new stream tells again. */
  run_healthy_cycles (delivery, 0, WSI_DELIVERY_KEPT_CYCLES + 1);
  fail_unless_equals_int (drop_one (delivery, 0, 0, "late"), 0);
  fail_unless (wsi_delivery_take_forgotten (delivery, &forgotten));
  fail_unless_equals_int (forgotten, 0);
  wsi_delivery_free (delivery);
}

GST_END_TEST;

/* After thousands of forgotten cycles, a pass whose every patch is dropped
 * is still reported, with the slides and reasons: whether its last drop
 * arrives before the cycle closes or long after (patches in flight). */
GST_START_TEST (test_loss_reported_after_forgetting)
{
  WsiDelivery *delivery = wsi_delivery_new ();
  const guint lost = LONG_RUN_CYCLES;
  const guint late = LONG_RUN_CYCLES + 1;
  guint cycle, i;
  gchar *why;

  run_healthy_cycles (delivery, 0, LONG_RUN_CYCLES);

  /* Every drop in before the close: the close reports it. */
  wsi_delivery_planned (delivery, lost, 3);
  for (i = 0; i < 3; i++)
    fail_unless_equals_int (drop_one (delivery, 7, lost, "Not a JPEG file"),
        0);
  fail_unless (wsi_delivery_close_cycle (delivery, lost));
  why = wsi_delivery_describe_loss (delivery, lost);
  fail_unless (strstr (why, "all 3 patches planned in cycle") != NULL, "%s",
      why);
  fail_unless (strstr (why, "/slides/broken.svs (Not a JPEG file)") != NULL,
      "%s", why);
  g_free (why);

  /* The drops arrive after the cycle closed, many cycles later but within
   * what is kept: the last one reports the loss, once. */
  wsi_delivery_planned (delivery, late, 2);
  fail_if (wsi_delivery_close_cycle (delivery, late));
  run_healthy_cycles (delivery, late + 1, WSI_DELIVERY_KEPT_CYCLES - 2);
  fail_unless_equals_int (drop_one (delivery, 5, late, "given up"), 0);
  fail_unless_equals_int (drop_one (delivery, 5, late, "given up"), late + 1);
  fail_unless_equals_int (drop_one (delivery, 5, late, "given up"), 0);
  why = wsi_delivery_describe_loss (delivery, late);
  fail_unless (strstr (why, "all 2 patches planned in cycle") != NULL, "%s",
      why);
  fail_unless (strstr (why, "(given up)") != NULL, "%s", why);
  g_free (why);

  /* A cycle that delivered something is not lost, however late. */
  cycle = late + WSI_DELIVERY_KEPT_CYCLES - 1;
  wsi_delivery_planned (delivery, cycle, 2);
  fail_if (wsi_delivery_close_cycle (delivery, cycle));
  fail_unless_equals_int (drop_one (delivery, 1, cycle, "a bad tile"), 0);
  fail_unless (wsi_delivery_tallies_kept (delivery, NULL)
      <= WSI_DELIVERY_KEPT_CYCLES);
  /* Every drop came within what is kept: nothing to tell. */
  fail_if (wsi_delivery_take_forgotten (delivery, NULL));
  wsi_delivery_free (delivery);
}

GST_END_TEST;

static Suite *
wsidelivery_suite (void)
{
  Suite *s = suite_create ("wsidelivery");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_long_stream_holds_bounded_tallies);
  tcase_add_test (tc, test_loss_reported_after_forgetting);
  return s;
}

GST_CHECK_MAIN (wsidelivery);
