/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsisamplerquota.c: patchsampler's finite runs (see wsisamplerquota.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/wsi/wsirecord.h>

#include "wsisamplerquota.h"
#include "wsisampling.h"

/* patchsampler's category: these logs belong to the element. */
GST_DEBUG_CATEGORY_EXTERN (gst_patch_sampler_debug);
#define GST_CAT_DEFAULT gst_patch_sampler_debug

/* A new stream (start, or a flush): no quota decided yet. */
void
wsi_sampler_quota_reset (WsiSamplerQuota * q, GstElement * element)
{
  q->decided = FALSE;
  q->from_rank = FALSE;
  q->rank = 0;
  q->reached = FALSE;
  GST_OBJECT_LOCK (element);
  q->quota = WSI_SAMPLER_NO_QUOTA;
  q->planned = 0;
  GST_OBJECT_UNLOCK (element);
}

gboolean
wsi_sampler_quota_decide (WsiSamplerQuota * q, GstElement * element,
    gint64 max_patches, gboolean rank_quota, gint patches_per_slide,
    const GstStructure * meta)
{
  gint64 quota;
  guint min_slides = 0;

  quota = max_patches;
  if (rank_quota) {
    gint64 rank_share;

    gst_structure_get_uint (meta, "rank", &q->rank);
    if (!gst_structure_get_uint (meta, "rank-slides-min", &min_slides)) {
      GST_ELEMENT_ERROR (element, STREAM, FORMAT,
          ("rank-quota=true needs the rank-slides-min field of the slide "
              "meta, which slide \"%s\" lacks; is patchsampler fed by "
              "wsislidesrc?", GST_STR_NULL (gst_structure_get_string (meta,
                      "path"))), (NULL));
      return FALSE;
    }
    if (patches_per_slide < 0) {
      GST_ELEMENT_ERROR (element, RESOURCE, SETTINGS,
          ("rank-quota=true needs a fixed patches-per-slide; -1 (all grid "
              "positions) differs from slide to slide, so ranks would not "
              "agree on a quota."), (NULL));
      return FALSE;
    }
    rank_share = wsi_quota_decide (-1, TRUE, min_slides, patches_per_slide);
    if (rank_share == 0)
      GST_ELEMENT_WARNING (element, RESOURCE, SETTINGS,
          ("rank-quota=true gives a quota of 0 patches: the smallest rank "
              "holds no slide (fewer slides than ranks), so every rank ends "
              "at once."), (NULL));
    quota = wsi_quota_decide (max_patches, TRUE, min_slides,
        patches_per_slide);
    q->from_rank = TRUE;
  }

  q->decided = TRUE;
  GST_OBJECT_LOCK (element);
  q->quota = quota;
  GST_OBJECT_UNLOCK (element);
  if (quota >= 0)
    GST_INFO_OBJECT (element, "quota: %" G_GINT64_FORMAT " patches "
        "(max-patches %" G_GINT64_FORMAT ", rank-quota %d, rank-slides-min "
        "%u)", quota, max_patches, rank_quota, min_slides);
  return TRUE;
}

/* Patches still allowed before the quota, or -1 when there is none. */
static gint64
quota_left (WsiSamplerQuota * q, GstElement * element, WsiDelivery * delivery)
{
  gint64 left;
  guint64 dropped = wsi_delivery_dropped (delivery);

  /* Patches that will reach the consumer: planned minus reported drops. */
  GST_OBJECT_LOCK (element);
  left = wsi_quota_left (q->quota, q->planned, dropped);
  GST_OBJECT_UNLOCK (element);
  return left;
}

/* The quota left, in delivered patches. When planning has apparently met
 * it, waits until every planned patch was delivered or reported dropped
 * (a drained pipeline): dropped ones are then planned again from the
 * rank's next slides. WSI_SAMPLER_QUOTA_INTERRUPTED when flushing. */
gint64
wsi_sampler_quota_left_checked (WsiSamplerQuota * q, GstElement * element,
    WsiDelivery * delivery, GstPad * srcpad)
{
  gint64 left = quota_left (q, element, delivery);

  if (left != 0 || !wsi_delivery_active (delivery))
    return left;
  if (!wsi_delivery_check (delivery, srcpad))
    return WSI_SAMPLER_QUOTA_INTERRUPTED;
  left = quota_left (q, element, delivery);
  if (left > 0)
    GST_DEBUG_OBJECT (element, "%" G_GINT64_FORMAT " planned patches were "
        "dropped downstream: planning them again", left);
  return left;
}

/* The quota is met: ends the stream downstream and tells upstream to stop
 * (GST_FLOW_EOS stops the source's task). */
GstFlowReturn
wsi_sampler_quota_finish (WsiSamplerQuota * q, GstElement * element,
    GstPad * srcpad)
{
  GST_DEBUG_OBJECT (element, "quota of %" G_GINT64_FORMAT " patches "
      "reached: EOS", q->quota);
  q->reached = TRUE;
  gst_pad_push_event (srcpad, gst_event_new_eos ());
  return GST_FLOW_EOS;
}

/* Keeps the first @n records of @out. */
void
wsi_sampler_quota_truncate_plan (GstBuffer * out, gint64 n)
{
  if ((gint64) (gst_buffer_get_size (out) / sizeof (WsiPatchRecord)) > n)
    gst_buffer_set_size (out, n * sizeof (WsiPatchRecord));
}

/* At EOS from upstream: with rank-quota the rank must have met its quota,
 * or the ranks of a DDP job would emit different numbers of patches. */
void
wsi_sampler_quota_check_met (WsiSamplerQuota * q, GstElement * element,
    WsiDelivery * delivery, GstPad * srcpad)
{
  gint64 quota;
  guint64 planned;

  if (!q->from_rank)
    return;
  /* Count what was delivered: wait for the last drops to be reported. */
  wsi_delivery_check (delivery, srcpad);
  GST_OBJECT_LOCK (element);
  quota = q->quota;
  planned = q->planned - wsi_delivery_dropped (delivery);
  GST_OBJECT_UNLOCK (element);

  if (quota < 0 || planned >= (guint64) quota)
    return;
  GST_ELEMENT_ERROR (element, STREAM, FAILED,
      ("rank %u delivered only %" G_GUINT64_FORMAT " of its quota of %"
          G_GINT64_FORMAT " patches: set cycle=true on wsislidesrc so "
          "shortfalls are refilled", q->rank, planned, quota),
      ("the slides of this rank ended (EOS) before the quota; the ranks "
          "would emit different numbers of patches"));
}
