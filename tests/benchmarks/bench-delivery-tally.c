/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * bench-delivery-tally: the memory patchsampler's delivery tally
 * (gst/wsipatch/wsidelivery.h) holds over a long cycling stream, the
 * residual of the soak (issue 26, item 5; docs/reliability.md). It drives
 * the tally as patchsampler does, cycle after cycle (--patches planned per
 * cycle, one dropped patch every --drop-every cycles, as a revisited slide
 * with a damaged tile gives), and prints glibc's bytes in use (mallinfo2
 * uordblks + hblkhd) per cycle between the end of the warm-up and the end:
 * the goal is 0 (flat), whatever the number of cycles. The tally's fixed
 * size (what one WsiDelivery holds) is printed too.
 *
 *   build/tests/benchmarks/bench-delivery-tally [--cycles 200000]
 *       [--warmup 4096] [--patches 430]
 *
 * It runs the healthy case (no drop) and --drop-every 1 (a drop in every
 * cycle) one after the other, in well under a second; no timing is taken.
 */

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include <gst/gst.h>
#include <gst/wsi/wsievent.h>

#include "wsidelivery.h"

static gsize
bytes_in_use (void)
{
  struct mallinfo2 info = mallinfo2 ();

  return info.uordblks + info.hblkhd;
}

static void
drop_one (WsiDelivery * delivery, guint cycle)
{
  GstEvent *event = wsi_event_new_patch_dropped (cycle % 6, cycle, 0,
      "/slides/slide-01.svs", "JPEG: Not a JPEG file: starts with 0xc2 0xd9");
  guint lost_cycle = 0;

  wsi_delivery_handle_event (delivery, event, &lost_cycle);
  gst_event_unref (event);
}

/* Bytes in use per cycle after @warmup cycles, @cycles in all. */
static gdouble
run (guint cycles, guint warmup, guint patches, guint drop_every)
{
  WsiDelivery *delivery = wsi_delivery_new ();
  gsize after_warmup = 0, at_end;
  guint cycle;

  for (cycle = 0; cycle < cycles; cycle++) {
    if (cycle == warmup)
      after_warmup = bytes_in_use ();
    wsi_delivery_planned (delivery, cycle, patches);
    if (drop_every > 0 && cycle % drop_every == 0)
      drop_one (delivery, cycle);
    wsi_delivery_close_cycle (delivery, cycle);
  }
  at_end = bytes_in_use ();
  wsi_delivery_free (delivery);
  return ((gdouble) at_end - (gdouble) after_warmup) / (cycles - warmup);
}

int
main (int argc, char **argv)
{
  guint cycles = 200000, warmup = 4096, patches = 430;
  gdouble healthy, damaged;
  gsize before;
  WsiDelivery *delivery;
  gint i;

  for (i = 1; i + 1 < argc; i += 2) {
    if (g_str_equal (argv[i], "--cycles"))
      cycles = atoi (argv[i + 1]);
    else if (g_str_equal (argv[i], "--warmup"))
      warmup = atoi (argv[i + 1]);
    else if (g_str_equal (argv[i], "--patches"))
      patches = atoi (argv[i + 1]);
    else
      break;
  }
  if (i < argc || warmup >= cycles) {
    g_printerr ("usage: %s [--cycles N] [--warmup N < cycles] "
        "[--patches N]\n", argv[0]);
    return 2;
  }
  gst_init (NULL, NULL);

  before = bytes_in_use ();
  delivery = wsi_delivery_new ();
  g_print ("one tally (WsiDelivery, %u cycles kept): %" G_GSIZE_FORMAT
      " bytes\n", WSI_DELIVERY_KEPT_CYCLES, bytes_in_use () - before);
  wsi_delivery_free (delivery);

  healthy = run (cycles, warmup, patches, 0);
  damaged = run (cycles, warmup, patches, 1);
  g_print ("bytes in use per cycle over cycles %u..%u (%u patches per "
      "cycle):\n", warmup, cycles, patches);
  g_print ("  no drop:          %8.2f  (%.4f per patch)\n", healthy,
      healthy / patches);
  g_print ("  a drop per cycle: %8.2f  (%.4f per patch)\n", damaged,
      damaged / patches);
  g_print ("goal: 0 (flat after warm-up); before the ring (409d2b6): "
      "68.8 and 427.6\n");
  g_print ("verdict: %s\n", healthy < 0.5 && damaged < 0.5 ? "FLAT" :
      "GROWS");
  return healthy < 0.5 && damaged < 0.5 ? 0 : 1;
}
