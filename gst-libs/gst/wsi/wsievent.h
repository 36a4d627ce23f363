/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsievent.h: the custom events and queries our elements exchange, one
 * new/parse pair each, as gst-libs/gst/video/video-event.h does for video.
 *
 * Contract: the structure names and field names of these events and
 * queries are written in wsievent.c and nowhere else; an element builds
 * them with wsi_*_new_*() and reads them with wsi_*_parse_*(), which returns
 * FALSE when the event or query is another one (so a parse doubles as the
 * test of kind) and accepts NULL for any output it does not need. Strings
 * returned by a parse belong to the event or query.
 *
 * Who sends what (docs/design.md, "Delivered-patch accounting"):
 *   - patch-dropped (upstream): a patch planned upstream will not be
 *     delivered (patchreader, patchviews, patchfilter); the planner
 *     (patchsampler) counts it.
 *   - slide-given-up (upstream): patchreader gave a slide up for the rest
 *     of the stream; wsislidesrc skips it and counts it in slides-failed.
 *   - slide-rejected (upstream): tissuemask marks a slide tissue-rejected;
 *     wsislidesrc counts it in slides-rejected and slides-blank.
 *   - delivery-check (downstream, serialized) and delivery-ack (upstream):
 *     "has everything planned before this check been delivered or reported
 *     dropped?"; patchbatch answers; patchinterleave pushes what its pool
 *     holds first.
 *   - delivery-accounting query (downstream): answered by the element that
 *     acknowledges checks (patchbatch); without one, planning counts planned
 *     patches.
 *   - mask-cached query (downstream) and mask-chained event (upstream):
 *     wsislidesrc asks tissuemask whether it holds a slide's mask, so the
 *     overview need not be decoded; chained tissuemasks consult each other
 *     (docs/tissue.md).
 *
 * Cost: a GstStructure per event, a few per slide or per dropped patch;
 * none on the per-patch path of a healthy stream. Threading: plain
 * functions, callable from any thread.
 */

#ifndef __WSI_EVENT_H__
#define __WSI_EVENT_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* Structure names, for tracers and applications that watch for them. */
#define WSI_PATCH_DROPPED_EVENT "wsi-patch-dropped"
#define WSI_SLIDE_GIVEN_UP_EVENT "wsi-slide-given-up"
#define WSI_SLIDE_REJECTED_EVENT "wsi-slide-rejected"
#define WSI_DELIVERY_CHECK_EVENT "wsi-delivery-check"
#define WSI_DELIVERY_ACK_EVENT "wsi-delivery-ack"
#define WSI_MASK_CHAINED_EVENT "wsi-mask-chained"
#define WSI_DELIVERY_QUERY "wsi-delivery-accounting"
#define WSI_MASK_CACHED_QUERY "wsi-mask-cached"
#define WSI_POOL_SIZE_QUERY "wsi-pool-size"

/* ---- events ------------------------------------------------------------- */

GstEvent *wsi_event_new_patch_dropped (guint slide_index, guint cycle,
    guint64 sequence, const gchar * path, const gchar * reason);
gboolean wsi_event_parse_patch_dropped (GstEvent * event, guint * slide_index,
    guint * cycle, guint64 * sequence, const gchar ** path,
    const gchar ** reason);

GstEvent *wsi_event_new_slide_given_up (guint slide_index,
    const gchar * path, const gchar * reason);
gboolean wsi_event_parse_slide_given_up (GstEvent * event,
    guint * slide_index, const gchar ** path, const gchar ** reason);

/* @blank: the mask holds no tissue at all. */
GstEvent *wsi_event_new_slide_rejected (guint slide_index,
    const gchar * path, gdouble tissue_fraction, gboolean blank);
gboolean wsi_event_parse_slide_rejected (GstEvent * event,
    guint * slide_index, const gchar ** path, gdouble * tissue_fraction,
    gboolean * blank);

GstEvent *wsi_event_new_delivery_check (guint round);
gboolean wsi_event_parse_delivery_check (GstEvent * event, guint * round);

GstEvent *wsi_event_new_delivery_ack (guint round);
gboolean wsi_event_parse_delivery_ack (GstEvent * event, guint * round);

GstEvent *wsi_event_new_mask_chained (void);
gboolean wsi_event_parse_mask_chained (GstEvent * event);

/* ---- queries ------------------------------------------------------------ */

GstQuery *wsi_query_new_delivery_accounting (void);
/* @answered: whether an element downstream acknowledges delivery checks. */
gboolean wsi_query_parse_delivery_accounting (GstQuery * query,
    gboolean * answered);
void wsi_query_set_delivery_accounting (GstQuery * query, gboolean answered);

GstQuery *wsi_query_new_mask_cached (const gchar * path);
/* @cached: a tissuemask holds the mask and nobody after it needs the
 * overview; @overview_needed: a tissuemask on the way lacks the mask. */
gboolean wsi_query_parse_mask_cached (GstQuery * query, const gchar ** path,
    gboolean * cached, gboolean * overview_needed);
/* TRUE: answer "cached"; FALSE: withdraw any "cached" and say that the
 * overview is needed, so an earlier tissuemask does not answer for us. */
void wsi_query_set_mask_cached (GstQuery * query, gboolean cached);
/* What a mask kept across runs (tissuemask's mask-cache-dir) is keyed on
 * besides the path: the slide file's @identity (size and mtime of a local
 * file; NULL or "" when unknown: no disk lookup) and the source's
 * @thumbnail_size (the overview's longest side). wsislidesrc sets them on
 * the query and puts the same values in the slide meta (fields
 * "source-identity" and "thumbnail-size"). */
void wsi_query_set_mask_source (GstQuery * query, const gchar * identity,
    gint thumbnail_size);
gboolean wsi_query_parse_mask_source (GstQuery * query,
    const gchar ** identity, gint * thumbnail_size);

/* wsislidesrc asks how many slides the pool downstream (patchinterleave)
 * holds at once; @pool_size: 0 when nobody answered. */
GstQuery *wsi_query_new_pool_size (void);
gboolean wsi_query_parse_pool_size (GstQuery * query, guint * pool_size);
void wsi_query_set_pool_size (GstQuery * query, guint pool_size);

G_END_DECLS

#endif /* __WSI_EVENT_H__ */
