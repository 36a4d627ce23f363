/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsibatchdelivery.h: patchbatch's end of delivery accounting — the last
 * element to see patches answers the planner's (patchsampler's, see
 * wsidelivery.h) questions about what was delivered.
 *
 * Contract: wsi_batch_delivery_answer_query() answers the
 * delivery-accounting query (wsievent.h) with TRUE — "checks will be
 * acknowledged here" — and returns FALSE for any other query, which the
 * caller then handles. wsi_batch_delivery_acknowledge() takes a
 * delivery-check event that reached patchbatch (every patch planned before
 * it has been batched, or was reported dropped upstream), keeps it from
 * going further downstream and sends the matching acknowledgement upstream
 * through @sinkpad; it returns what pushing the acknowledgement returned.
 * The stream statistics patchbatch posts are wsistreamstats.h.
 *
 * Cost: one upstream event per check; a check is rare (the planner sends
 * one when a quota seems met, or at EOS).
 *
 * Threading: called from @sinkpad's streaming thread, in order with the
 * patches, which is what makes the acknowledgement true.
 */

#ifndef __WSI_BATCH_DELIVERY_H__
#define __WSI_BATCH_DELIVERY_H__

#include <gst/gst.h>

G_BEGIN_DECLS

gboolean wsi_batch_delivery_answer_query (GstQuery * query);

gboolean wsi_batch_delivery_acknowledge (GstElement * element,
    GstPad * sinkpad, GstEvent * check);

G_END_DECLS

#endif /* __WSI_BATCH_DELIVERY_H__ */
