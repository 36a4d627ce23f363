/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsislidesrcvisit.h: one wsislidesrc visit, prepared ahead of need — the
 * slide opened, described and its overview read on a worker, handed out
 * in visit order, made into the buffer with its slide meta.
 *
 * Contract: slide_src_next_prepared() keeps up to prepare-ahead visits of
 * the plan (wsislidesrcplan.h) being prepared on the workers of
 * wsiprepqueue.h (prepare-ahead=0: one, on the calling thread) and returns
 * the oldest once it has run; slide_src_pop_prepared() takes it out. A
 * slide's description (geometry, levels, mpp with default-mpp, overview
 * size: what is true of the slide whatever the visit) is made on its first
 * open and kept by path; the overview is read only when no element
 * downstream answers the `wsi-mask-cached` query for the slide, asked when
 * the visit is planned and again when it is handed out (a mask may have
 * left that cache since). slide_src_make_slide_buffer() turns a prepared
 * visit into the stream's buffer: the overview (or an empty buffer) and
 * the `WsiSlideMeta` (description, entry, rank split, cycle, seed,
 * columns, the prep-*-ns timings, source-identity), or NULL with the
 * error of a slide that cannot be read, or NULL without one when a flush
 * interrupted it (prepared again after the flush). The stream is thereby
 * the same whatever the look-ahead, thread count or timing.
 *
 * Cost: per visit one open and one overview decode (wsioverview.h) on a
 * worker, none when the description is known and the mask is cached
 * downstream; one overview of memory per visit prepared ahead.
 *
 * Threading: slide_prep_run() runs on a worker and touches only its
 * SlidePrep and the settings fixed while streaming (self->run); the rest
 * runs on the streaming thread (or the state change before it).
 */

#ifndef __WSI_SLIDE_SRC_VISIT_H__
#define __WSI_SLIDE_SRC_VISIT_H__

#include "gstwsislidesrcpriv.h"

G_BEGIN_DECLS

/* One visit being prepared: what it needs is decided on the streaming
 * thread when it is planned, the work (open, description, overview) runs
 * on a worker of self->prep, and the streaming thread takes the results in
 * visit order (wsiprepqueue.h), so the stream does not depend on timing. */
typedef struct
{
  GstWsiSlideSrc *self;
  WsiSlideEntry *entry;         /* read-only on the worker */
  guint cycle;
  gboolean describe;            /* no description was known when planned */
  gboolean overview;            /* no mask was cached downstream then */
  gchar *identity;              /* entry_identity(), or NULL */
  gint ow, oh;                  /* overview size, when already described */
  /* results */
  GstStructure *description;
  gchar *declined;              /* auto fell back: why (wsislide.h) */
  gchar *damaged;               /* opened, but damaged: why (wsislide.h) */
  GstBuffer *buffer;            /* the overview, or NULL */
  GError *error;
  gboolean cancelled;           /* a flush stopped it: run it again */
  /* for the tracer (WsiSlideMeta prep-*-ns): worker time opening and
   * reading the overview, streaming-thread time waiting for it */
  guint64 open_ns, overview_ns, wait_ns;
} SlidePrep;

void slide_prep_free (SlidePrep * prep);
void slide_prep_run (gpointer data, gpointer user_data);
SlidePrep *slide_src_next_prepared (GstWsiSlideSrc * self);
SlidePrep *slide_src_pop_prepared (GstWsiSlideSrc * self);
GstBuffer *slide_src_make_slide_buffer (GstWsiSlideSrc * self,
    SlidePrep * prep, GError ** error);
guint slide_src_downstream_pool_size (GstWsiSlideSrc * self);
/* A value of self->descriptions: NULL once dropped (one-pass streams). */
void slide_src_description_free (gpointer description);

G_END_DECLS

#endif /* __WSI_SLIDE_SRC_VISIT_H__ */
