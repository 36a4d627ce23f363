/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsisamplercycle.c: see wsisamplercycle.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>
#include <gst/wsi/wsilevel.h>
#include <gst/wsi/wsirecord.h>

#include "wsisamplercycle.h"

#define GST_CAT_DEFAULT gst_patch_sampler_debug

/* TRUE the first time a problem with slide @index is reported in this
 * stream, so a revisited broken slide does not warn on every cycle. */
gboolean
patch_sampler_first_warning (GstPatchSampler * self, guint index)
{
  return g_hash_table_add (self->warned_slides, GUINT_TO_POINTER (index + 1));
}

/* Counts a slide that yields no patch; @reason (taken) names why, for the
 * error posted when a whole cycle yields nothing. */
void
patch_sampler_skip (GstPatchSampler * self, const WsiSlideVisit * visit,
    gchar * reason)
{
  GST_DEBUG_OBJECT (self, "slide %u (%s) cycle %u: no patch: %s",
      visit->index, visit->path, visit->cycle, reason);
  g_free (self->cycle_last_skip);
  self->cycle_last_skip = reason;
  GST_OBJECT_LOCK (self);
  self->slides_skipped++;
  GST_OBJECT_UNLOCK (self);
}

/* Every patch planned in @cycle was dropped downstream (unreadable slides,
 * given up): cycling on would plan and drop forever. */
void
patch_sampler_cycle_lost (GstPatchSampler * self, guint cycle)
{
  gchar *why = wsi_delivery_describe_loss (self->delivery, cycle);

  if (!g_atomic_int_compare_and_exchange (&self->delivery_failed, 0, 1)) {
    g_free (why);
    return;
  }
  GST_ELEMENT_ERROR (self, STREAM, FAILED,
      ("A whole pass over the slides delivered no patch: %s.", why),
      ("cycle %u: stopping instead of cycling forever", cycle));
  g_free (why);
}

/* A patch of @cycle was dropped after WSI_DELIVERY_KEPT_CYCLES later
 * cycles began (wsidelivery.h): the check that stops a stream whose
 * every pass is lost cannot look that far back. Said once per stream. */
void
patch_sampler_warn_forgotten (GstPatchSampler * self, guint cycle)
{
  GST_ELEMENT_WARNING (self, STREAM, FAILED,
      ("Patches are dropped more than %d passes over the slides after they "
          "were planned, so a pass that delivers nothing can no longer be "
          "detected. Keep fewer patches in flight (patchreader read-ahead, "
          "patchinterleave pool-size, queues before patchfilter) or give "
          "each rank more slides.", WSI_DELIVERY_KEPT_CYCLES),
      ("a drop arrived for cycle %u, whose tally was forgotten", cycle));
}

/* Called for every slide before planning: when the slide opens a new
 * cycle, checks that the previous one produced something. */
gboolean
patch_sampler_check_cycle (GstPatchSampler * self, const WsiSlideVisit * visit)
{
  if (self->cycle_started && visit->cycle > self->cycle
      && wsi_delivery_close_cycle (self->delivery, self->cycle)) {
    patch_sampler_cycle_lost (self, self->cycle);
    return FALSE;
  }
  if (g_atomic_int_get (&self->delivery_failed))
    return FALSE;
  if (self->cycle_started && visit->cycle > self->cycle) {
    if (self->cycle_patches == 0) {
      GST_ELEMENT_ERROR (self, STREAM, FAILED,
          ("A whole pass over the slides yielded no patch: none of the %u "
              "slides of cycle %u gave a patch (last: %s).", self->cycle_slides,
              self->cycle, GST_STR_NULL (self->cycle_last_skip)),
          ("cycle %u ended with 0 patches; stopping instead of cycling "
              "forever", self->cycle));
      return FALSE;
    }
  }
  if (!self->cycle_started || visit->cycle > self->cycle) {
    self->cycle_started = TRUE;
    self->cycle = visit->cycle;
    self->cycle_slides = 0;
    self->cycle_patches = 0;
  }
  self->cycle_slides++;
  return TRUE;
}

/* At EOS: a stream that planned no patch at all is an error, saying
 * whether any slide arrived (a rank's shortfall is reported by the quota
 * check instead). */
void
patch_sampler_check_stream_end (GstPatchSampler * self)
{
  guint64 planned, sampled, skipped;

  GST_OBJECT_LOCK (self);
  planned = self->patches_planned;
  sampled = self->slides_sampled;
  skipped = self->slides_skipped;
  GST_OBJECT_UNLOCK (self);
  if (self->stream_quota.from_rank)
    ;                           /* a shortfall was reported already */
  else if (planned == 0 && sampled + skipped == 0)
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("The stream ended without a single patch: no slide arrived."),
        (NULL));
  else if (planned == 0)
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("The stream ended without a single patch: none of the %"
            G_GUINT64_FORMAT " slide visits gave one (last: %s).",
            skipped, GST_STR_NULL (self->cycle_last_skip)), (NULL));
}
