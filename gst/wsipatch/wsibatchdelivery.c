/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsibatchdelivery.c: patchbatch's end of delivery accounting (see
 * wsibatchdelivery.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/wsi/wsievent.h>

#include "wsibatchdelivery.h"

/* patchbatch's category: these logs belong to the element. */
GST_DEBUG_CATEGORY_EXTERN (gst_patch_batch_debug);
#define GST_CAT_DEFAULT gst_patch_batch_debug

/* We answer delivery checks (we are the last to see patches). */
gboolean
wsi_batch_delivery_answer_query (GstQuery * query)
{
  if (!wsi_query_parse_delivery_accounting (query, NULL))
    return FALSE;
  wsi_query_set_delivery_accounting (query, TRUE);
  return TRUE;
}

/* Every patch planned before @check reached us (or was reported dropped
 * upstream): say so to the planner and keep the check to ourselves. */
gboolean
wsi_batch_delivery_acknowledge (GstElement * element, GstPad * sinkpad,
    GstEvent * check)
{
  guint round = 0;

  wsi_event_parse_delivery_check (check, &round);
  gst_event_unref (check);
  GST_LOG_OBJECT (element, "delivery check %u: acknowledged", round);
  return gst_pad_push_event (sinkpad, wsi_event_new_delivery_ack (round));
}
