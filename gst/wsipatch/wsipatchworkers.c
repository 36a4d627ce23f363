/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsipatchworkers.c: see wsipatchworkers.h for the contract. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsipatchworkers.h"

#define MAX_AUTO_THREADS 64

struct _WsiPatchWorkers
{
  GstElement *element;          /* not owned: it owns us */
  GstPad *sinkpad;
  GstPad *srcpad;
  WsiOrderedPool *pool;
  WsiPatchWorkersSetCaps set_caps;
};

static WsiPatchWorkers *
workers_of (GstPad * pad)
{
  return GST_PAD_ELEMENT_PRIVATE (pad);
}

static gboolean
sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  WsiPatchWorkers *w = workers_of (pad);
  GstFlowReturn ret;

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_START:
      wsi_ordered_pool_set_flushing (w->pool);
      gst_pad_push_event (w->srcpad, event);
      wsi_ordered_pool_pause_task (w->pool);
      return TRUE;
    case GST_EVENT_FLUSH_STOP:
      wsi_ordered_pool_reset (w->pool);
      gst_pad_push_event (w->srcpad, event);
      return wsi_ordered_pool_start_task (w->pool);
    case GST_EVENT_CAPS:{
      GstCaps *caps;

      /* Buffers in flight were made for the old caps: let them out. */
      ret = wsi_ordered_pool_drain (w->pool);
      gst_event_parse_caps (event, &caps);
      if (ret != GST_FLOW_OK || !w->set_caps (w->element, caps)) {
        gst_event_unref (event);
        return FALSE;
      }
      break;
    }
    default:
      if (!GST_EVENT_IS_SERIALIZED (event))
        return gst_pad_event_default (pad, parent, event);
      break;
  }
  ret = wsi_ordered_pool_queue_event (w->pool, event);
  return ret == GST_FLOW_OK;
}

static gboolean
sink_activate_mode (GstPad * pad, GstObject * parent, GstPadMode mode,
    gboolean active)
{
  WsiPatchWorkers *w = workers_of (pad);

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (active)
    wsi_ordered_pool_reset (w->pool);
  else                          /* unblocks a chain waiting for room */
    wsi_ordered_pool_set_flushing (w->pool);
  return TRUE;
}

static gboolean
src_activate_mode (GstPad * pad, GstObject * parent, GstPadMode mode,
    gboolean active)
{
  WsiPatchWorkers *w = workers_of (pad);

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (active) {
    wsi_ordered_pool_reset (w->pool);
    return wsi_ordered_pool_start_task (w->pool);
  }
  wsi_ordered_pool_set_flushing (w->pool);
  return wsi_ordered_pool_stop_task (w->pool);
}

WsiPatchWorkers *
wsi_patch_workers_new (GstElement * element,
    GstStaticPadTemplate * sink_template, GstStaticPadTemplate * src_template,
    GstPadChainFunction chain, gsize work_size,
    const WsiOrderedPoolFuncs * funcs, WsiPatchWorkersSetCaps set_caps)
{
  WsiPatchWorkers *w = g_new0 (WsiPatchWorkers, 1);

  w->element = element;
  w->set_caps = set_caps;

  w->sinkpad = gst_pad_new_from_static_template (sink_template, "sink");
  GST_PAD_ELEMENT_PRIVATE (w->sinkpad) = w;
  gst_pad_set_chain_function (w->sinkpad, chain);
  gst_pad_set_event_function (w->sinkpad, GST_DEBUG_FUNCPTR (sink_event));
  gst_pad_set_activatemode_function (w->sinkpad,
      GST_DEBUG_FUNCPTR (sink_activate_mode));
  /* Caps and buffers pass unchanged: let the peers negotiate through us. */
  GST_PAD_SET_PROXY_CAPS (w->sinkpad);
  GST_PAD_SET_PROXY_ALLOCATION (w->sinkpad);
  gst_element_add_pad (element, w->sinkpad);

  w->srcpad = gst_pad_new_from_static_template (src_template, "src");
  GST_PAD_ELEMENT_PRIVATE (w->srcpad) = w;
  gst_pad_set_activatemode_function (w->srcpad,
      GST_DEBUG_FUNCPTR (src_activate_mode));
  GST_PAD_SET_PROXY_CAPS (w->srcpad);
  GST_PAD_SET_PROXY_ALLOCATION (w->srcpad);
  gst_element_add_pad (element, w->srcpad);

  w->pool = wsi_ordered_pool_new (w->srcpad, work_size, funcs, element);
  return w;
}

void
wsi_patch_workers_free (WsiPatchWorkers * w)
{
  wsi_ordered_pool_stop_workers (w->pool);
  wsi_ordered_pool_free (w->pool);
  g_free (w);
}

GstPad *
wsi_patch_workers_sink_pad (WsiPatchWorkers * w)
{
  return w->sinkpad;
}

GstPad *
wsi_patch_workers_src_pad (WsiPatchWorkers * w)
{
  return w->srcpad;
}

void
wsi_patch_workers_start (WsiPatchWorkers * w, guint n_threads,
    const gchar * thread_name_prefix)
{
  wsi_ordered_pool_start_workers (w->pool,
      n_threads ? n_threads : wsi_ordered_pool_auto_threads (MAX_AUTO_THREADS),
      thread_name_prefix);
}

void
wsi_patch_workers_stop (WsiPatchWorkers * w)
{
  wsi_ordered_pool_stop_workers (w->pool);
  wsi_ordered_pool_reset_flow (w->pool);
}

GstFlowReturn
wsi_patch_workers_queue (WsiPatchWorkers * w, gconstpointer work)
{
  return wsi_ordered_pool_queue_work (w->pool, work);
}
