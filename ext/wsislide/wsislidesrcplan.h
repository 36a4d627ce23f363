/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsislidesrcplan.h: wsislidesrc's visit plan — which slide comes next.
 *
 * Contract: the rank and world size come from the properties, else from
 * torchrun's RANK and WORLD_SIZE (a value that does not parse is an error
 * naming the variable). The rank's slides (wsi_collection_take_rank()) are
 * visited in sorted order, or with slide-order=random in a Fisher-Yates
 * shuffle drawn from wsirng.h keyed by (seed, rank, cycle), so the order is
 * a pure function of the settings on every GLib version. The plan runs
 * ahead of the stream (slides are prepared before they are needed):
 * slide_src_plan_next_visit() gives the next visit and its cycle, skipping
 * slides that failed, starting the next cycle (cycle=true) or ending;
 * slide_src_enter_cycle() moves the stream's own cycle (cycles-completed)
 * when the visit handed out belongs to a new one.
 *
 * Cost: O(slides) per cycle for the order; O(1) per visit (more only past
 * failed slides).
 *
 * Threading: the streaming thread (and start(), before it runs);
 * cycles-completed is written under the element's lock.
 */

#ifndef __WSI_SLIDE_SRC_PLAN_H__
#define __WSI_SLIDE_SRC_PLAN_H__

#include "gstwsislidesrcpriv.h"

G_BEGIN_DECLS

gboolean slide_src_resolve_rank_setting (GstWsiSlideSrc * self,
    gint property, const gchar * env_name, gint minimum, gint fallback,
    gint * value);
void slide_src_arrange_visit_order (GstWsiSlideSrc * self);
void slide_src_enter_cycle (GstWsiSlideSrc * self, guint cycle);
gboolean slide_src_plan_next_visit (GstWsiSlideSrc * self,
    WsiSlideEntry ** entry, guint * cycle);

G_END_DECLS

#endif /* __WSI_SLIDE_SRC_PLAN_H__ */
