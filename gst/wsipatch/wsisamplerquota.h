/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsisamplerquota.h: patchsampler's finite runs — the stream's patch quota
 * (`max-patches`, `rank-quota`), decided at the first slide, counted in
 * delivered patches, and the EOS that ends the stream when it is met.
 *
 * Contract: wsi_sampler_quota_decide() fixes the quota once per stream
 * from the properties and the first slide's meta (max-patches, and with
 * rank-quota rank-slides-min × patches-per-slide, the smaller winning:
 * every rank sees the same rank-slides-min, so every rank gets the same
 * quota without talking to the others); it posts an element error and
 * returns FALSE on a meta or a setting that cannot give one. The quota
 * left is the quota minus the patches planned since the last flush plus
 * those downstream reported dropped (wsidelivery.h), so dropped patches
 * are planned again. wsi_sampler_quota_check_met() posts the error of a
 * rank-quota rank whose slides ended short. The arithmetic itself is
 * wsi_quota_decide() and wsi_quota_left() (wsisampling.h).
 *
 * Cost: constant time, except wsi_sampler_quota_left_checked() and
 * wsi_sampler_quota_check_met(), which may wait for the pipeline to drain
 * (wsi_delivery_check()) when planning has apparently met the quota.
 *
 * Threading: the streaming thread owns the struct; @quota and @planned
 * are also read by property getters, so they change under @element's
 * object lock. Errors, warnings and logs are posted on @element.
 */

#ifndef __WSI_SAMPLER_QUOTA_H__
#define __WSI_SAMPLER_QUOTA_H__

#include <gst/gst.h>

#include "wsidelivery.h"

G_BEGIN_DECLS

#define WSI_SAMPLER_NO_QUOTA (-1)
#define WSI_SAMPLER_QUOTA_INTERRUPTED (-2)

typedef struct
{
  gint64 quota;                 /* NO_QUOTA, or decided at the first slide */
  guint64 planned;              /* since the last flush: what the quota counts */
  gboolean decided;
  gboolean from_rank;           /* rank-quota took part: shortfall = error */
  guint rank;                   /* from the first slide's meta, for errors */
  gboolean reached;             /* EOS sent downstream */
} WsiSamplerQuota;

void wsi_sampler_quota_reset (WsiSamplerQuota * q, GstElement * element);

gboolean wsi_sampler_quota_decide (WsiSamplerQuota * q, GstElement * element,
    gint64 max_patches, gboolean rank_quota, gint patches_per_slide,
    const GstStructure * meta);

gint64 wsi_sampler_quota_left_checked (WsiSamplerQuota * q,
    GstElement * element, WsiDelivery * delivery, GstPad * srcpad);

GstFlowReturn wsi_sampler_quota_finish (WsiSamplerQuota * q,
    GstElement * element, GstPad * srcpad);

void wsi_sampler_quota_truncate_plan (GstBuffer * out, gint64 n);

void wsi_sampler_quota_check_met (WsiSamplerQuota * q, GstElement * element,
    WsiDelivery * delivery, GstPad * srcpad);

G_END_DECLS

#endif /* __WSI_SAMPLER_QUOTA_H__ */
