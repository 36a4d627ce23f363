/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsidelivery.h: a planner's tally of what reached the consumer.
 *
 * patchsampler plans patches; patchreader (and any later stage that drops
 * patches) reports each planned patch it drops upstream, and patchbatch
 * acknowledges delivery checks (the protocol is described in
 * gst/wsi/wsirecord.h). This tally turns that into the numbers the
 * planner's decisions need: patches delivered = planned - dropped, per
 * stream (finite quotas) and per cycle (a whole pass that delivered
 * nothing is an error, not a silent spin).
 *
 * Contract: wsi_delivery_check() pushes a check downstream and waits for
 * its acknowledgement: afterwards every patch planned before it has been
 * delivered or counted as dropped. It waits only when downstream answered
 * the delivery query (wsi_delivery_probe()); otherwise planned counts as
 * delivered, as before accounting existed.
 *
 * Memory: fixed. The tallies of the last WSI_DELIVERY_KEPT_CYCLES cycles
 * live in a ring made with the tally (about 40 bytes a cycle); a cycle's
 * tally is forgotten when the cycle WSI_DELIVERY_KEPT_CYCLES later starts,
 * so a stream that cycles for a week holds what one that cycled once
 * holds. A drop for a forgotten cycle still counts in
 * wsi_delivery_dropped(); it can no longer complete that cycle's loss.
 * Only a cycle that dropped something holds a table of reasons.
 *
 * Cost: a check drains the pipeline behind the planner (everything in
 * flight reaches patchbatch): done only when a finite quota looks met.
 * Counting is a mutex and a slot of the ring per planned buffer or dropped
 * patch. Threading: planning calls come from the planner's streaming
 * thread, events from whichever thread pushes them upstream; everything
 * is under one mutex, and the wait is interrupted by set_flushing().
 */

#ifndef __WSI_DELIVERY_H__
#define __WSI_DELIVERY_H__

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct _WsiDelivery WsiDelivery;

/* Cycles whose tallies are kept. A closed cycle's late drops come from its
 * patches still in flight between the planner and the last element that
 * drops (patchreader, patchviews, patchfilter): patchinterleave's pool
 * (pool-size plans, at most 1024: 1024 cycles when a rank has one slide),
 * the patches each of those elements queues ahead (patchreader's
 * read-ahead, up to 4096) and any queue placed between them. A cycle in
 * flight holds at least one patch, so several slides per rank or plans of
 * many patches keep this far below 2048 cycles; one slide per rank with
 * plans of one or a few patches, a read-ahead in the thousands or a long
 * queue before patchfilter can pass it. A drop for a forgotten cycle still
 * counts, and wsi_delivery_take_forgotten() says so (patchsampler warns),
 * but that cycle's loss can no longer be reported. Not raised instead:
 * only an acknowledged check bounds what is in flight, and most streams
 * (no finite quota) make none. */
#define WSI_DELIVERY_KEPT_CYCLES 2048

WsiDelivery *wsi_delivery_new (void);
void wsi_delivery_free (WsiDelivery * delivery);

/* Forgets everything (new stream, flush). */
void wsi_delivery_reset (WsiDelivery * delivery);

/* Asks downstream (through @srcpad) whether delivery checks are answered;
 * remembers the answer for the stream and returns it. */
gboolean wsi_delivery_probe (WsiDelivery * delivery, GstPad * srcpad);
gboolean wsi_delivery_active (WsiDelivery * delivery);

/* @n patches of @cycle (slide @slide_index) were planned. */
void wsi_delivery_planned (WsiDelivery * delivery, guint cycle, guint64 n);

/* Patches reported dropped in this stream. */
guint64 wsi_delivery_dropped (WsiDelivery * delivery);

/* Consumes the delivery events (dropped patches, acknowledgements) that
 * reach the planner's source pad; FALSE for any other event. When the
 * event completes the loss of a closed cycle, *@lost_cycle is set to that
 * cycle + 1 (else left alone). */
gboolean wsi_delivery_handle_event (WsiDelivery * delivery, GstEvent * event,
    guint * lost_cycle);

/* Marks @cycle as complete (a later one started). Returns TRUE when every
 * patch planned in it was already reported dropped (and there were some). */
gboolean wsi_delivery_close_cycle (WsiDelivery * delivery, guint cycle);

/* TRUE once per stream (until reset), at the first drop reported for a
 * cycle already forgotten (see WSI_DELIVERY_KEPT_CYCLES); *@cycle
 * (nullable) is that cycle. */
gboolean wsi_delivery_take_forgotten (WsiDelivery * delivery, guint * cycle);

/* Cycle tallies held now, and in *@with_reasons (nullable) how many of
 * them hold a table of drop reasons: at most WSI_DELIVERY_KEPT_CYCLES
 * whatever the stream's length. For tests and debugging. */
guint wsi_delivery_tallies_kept (WsiDelivery * delivery,
    guint * with_reasons);

/* Why the patches of @cycle were lost: the slides and their reasons, as
 * one sentence (newly allocated). */
gchar *wsi_delivery_describe_loss (WsiDelivery * delivery, guint cycle);

/* See the top of this file. FALSE when flushing or downstream refused the
 * check. */
gboolean wsi_delivery_check (WsiDelivery * delivery, GstPad * srcpad);

/* Interrupts (TRUE) or allows (FALSE) waiting in wsi_delivery_check(). */
void wsi_delivery_set_flushing (WsiDelivery * delivery, gboolean flushing);

G_END_DECLS

#endif /* __WSI_DELIVERY_H__ */
