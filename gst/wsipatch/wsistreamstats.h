/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistreamstats.h: what a stream has delivered so far, posted on the bus.
 *
 * Contract. The element that sees every delivered patch (patchbatch) owns
 * one WsiStreamStats, hands it each batch it pushes (add_batch) and the end
 * of the stream (post_now at EOS). Every `interval` ms (0 = never) the
 * stats post an element message named WSI_STREAM_STATS_MESSAGE (fields in
 * docs/design.md, "Stream statistics"):
 *  - what the batches carried: patches and batches delivered, tissue
 *    fraction mean, an mpp histogram (half-octave bins), patches per label
 *    and per value of every manifest column (record version 2);
 *  - what the elements upstream counted: every upstream element is visited
 *    (over pad peers, through ghost pads) and its read-only counter
 *    properties of the names in the table of wsistreamstats.c (slides-opened,
 *    patches-read, ...) are summed into the message. An element joins the
 *    statistics by exposing such a property: nothing else couples them.
 *
 * Cost. add_batch: one pass over the batch's records and labels (a hash
 * lookup per patch for labels and columns); at most WSI_STREAM_STATS_MAX_VALUES
 * distinct values per column are kept (later ones count as "(other)"), so
 * memory is bounded. Posting walks the upstream elements and reads their
 * properties: once per interval, not per patch.
 *
 * Threading. add_batch and post_now are called from the streaming thread;
 * the interval may be set from any thread (atomic). Reading upstream
 * properties takes those elements' property locks: an element must not hold
 * its property lock while it pushes (none of gst-wsi's do).
 */

#ifndef __WSI_STREAM_STATS_H__
#define __WSI_STREAM_STATS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

#define WSI_STREAM_STATS_MESSAGE "wsi-stream-stats"
#define WSI_STREAM_STATS_MAX_VALUES 256

typedef struct _WsiStreamStats WsiStreamStats;

WsiStreamStats *wsi_stream_stats_new (void);
void wsi_stream_stats_free (WsiStreamStats * stats);

/* Forgets everything counted (a new run: READY to PAUSED). */
void wsi_stream_stats_reset (WsiStreamStats * stats);

void wsi_stream_stats_set_interval (WsiStreamStats * stats, guint ms);
guint wsi_stream_stats_get_interval (WsiStreamStats * stats);

/* Counts the patches of @batch (its WsiPatchMeta) and posts a message from
 * @element when the interval has passed since the last one. */
void wsi_stream_stats_add_batch (WsiStreamStats * stats, GstElement * element,
    GstBuffer * batch);

/* Posts a message now (at EOS: the final numbers) unless the interval is 0. */
void wsi_stream_stats_post_now (WsiStreamStats * stats, GstElement * element);

/* The message's structure as it would be posted now (tests, applications). */
GstStructure *wsi_stream_stats_structure (WsiStreamStats * stats,
    GstElement * element);

G_END_DECLS

#endif /* __WSI_STREAM_STATS_H__ */
