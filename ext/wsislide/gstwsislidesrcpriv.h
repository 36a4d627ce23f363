/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * gstwsislidesrcpriv.h: wsislidesrc's instance and what its parts share:
 * the element (gstwsislidesrc.c: pad, properties, state changes, events,
 * the loop that hands out one buffer per visit), the visit plan
 * (wsislidesrcplan.c: rank split, order per cycle), a visit prepared ahead
 * of need (wsislidesrcvisit.c: open, description, overview, the buffer and
 * its slide meta), the annotations of a slide (wsislidesrcannotations.c)
 * and the reports (wsislidesrcreports.c: warnings once per slide, the
 * counters behind the read-only properties). Nothing outside wsislidesrc
 * includes it.
 *
 * Threading: the fields say which lock or thread guards them; "streaming"
 * fields are set up in start() and then touched only by the streaming
 * thread (the state change before it runs), except what a prepared visit's
 * worker reads (WsiSlideSrcSettings, fixed while streaming).
 */

#ifndef __GST_WSI_SLIDE_SRC_PRIV_H__
#define __GST_WSI_SLIDE_SRC_PRIV_H__

#include <gst/gst.h>
#include <gst/base/gstpushsrc.h>

#include "wsislidesrcsettings.h"
#include "wsicollection.h"
#include "wsiprepqueue.h"

G_BEGIN_DECLS

/* the same typedef as gstwsislidesrc.h's G_DECLARE_FINAL_TYPE (C11 allows
 * it twice), so the parts need no header of the element */
typedef struct _GstWsiSlideSrc GstWsiSlideSrc;

GST_DEBUG_CATEGORY_EXTERN (gst_wsi_slide_src_debug);

/* -1: as many as the pool downstream holds (patchinterleave answers the
 * wsi-pool-size query): the slides it holds at once are the ones a new
 * slide must be ready to replace; 8, its default pool, when nobody
 * answers. */
#define DEFAULT_PREPARE_AHEAD -1
#define FALLBACK_PREPARE_AHEAD 8
#define MAX_PREPARE_AHEAD 256

#define MPP_SOURCE_DEFAULT "default-mpp"

/* Settings copied from the properties when the source starts, so that the
 * streaming thread reads them without the lock. */
typedef struct
{
  gchar *location;
  gchar *display;               /* location for messages: no credentials */
  gint rank;
  gint world_size;
  gboolean cycle;
  GstWsiSlideOrder order;
  guint64 seed;
  gint thumbnail_size;
  gdouble default_mpp;
  gboolean tcga;
  gchar *annotations;
  guint prepare_ahead;
} WsiSlideSrcSettings;

struct _GstWsiSlideSrc
{
  GstPushSrc parent;

  /* Protects the property fields and the counters. */
  GMutex lock;
  gchar *location;
  gint rank;
  gint world_size;
  gboolean cycle;
  GstWsiSlideOrder order;
  guint64 seed;
  gint thumbnail_size;
  gdouble default_mpp;
  gboolean tcga;
  gchar *annotations;           /* folder of annotation files, or NULL */
  gint prepare_ahead;           /* -1: the pool downstream */
  guint slides_total;
  guint slides_failed;
  guint slides_damaged;         /* opened, but damaged (WsiSlide.damaged) */
  GPtrArray *damaged_names;     /* their display names, in the order found */
  gchar **slide_paths;          /* the rank's slides as opened, from start */
  guint slides_opened;
  /* Slide index -> GINT_TO_POINTER (blank): slides tissuemask rejected
   * (WSI_SLIDE_REJECTED_EVENT), each counted once. */
  GHashTable *rejected;
  guint slides_blank;
  guint cycles_completed;
  guint rank_slides_min;
  gboolean started;
  gboolean http_held;           /* wsi_http_hold() from start to stop */
  /* Slides a reader downstream gave up (WSI_SLIDE_GIVEN_UP_EVENT), for the
   * streaming thread to skip from now on: GstStructure copies. */
  GPtrArray *given_up;

  /* Streaming state, set up in start() and used by the streaming thread. */
  WsiSlideSrcSettings run;
  GPtrArray *entries;           /* WsiSlideEntry of this rank, sorted */
  gchar **column_names;         /* the collection's, for every slide */
  guint collection_size;        /* slides before the rank split */
  guint smallest_rank_slides;   /* floor(collection_size / world_size) */
  /* Visits are planned ahead of the stream (the slides to prepare): the
   * plan's cycle and order; the stream's cycle is cycle_number. */
  guint *visit_order;           /* indices into entries for plan_cycle */
  guint position;               /* next position in visit_order */
  guint plan_cycle;
  WsiPrepQueue *prep;           /* slides being prepared, visit order */
  gpointer inline_prep;         /* SlidePrep of prepare-ahead=0, or NULL */
  GstBuffer *first_buffer;      /* made in start(), handed out by create() */
  guint cycle_number;
  guint failed_count;
  guint64 visits;               /* buffers pushed: GST_BUFFER_OFFSET */
  /* path -> GstStructure, per slide; in a one-pass stream the value is
   * dropped (NULL) after the visit: a slide seen once is not described
   * again, and its description (about 3 KiB, more with annotation
   * regions) is not held for the rest of the run */
  GHashTable *descriptions;
  gint flushing;                /* atomic: unlock() was called */
};

G_END_DECLS

#endif /* __GST_WSI_SLIDE_SRC_PRIV_H__ */
