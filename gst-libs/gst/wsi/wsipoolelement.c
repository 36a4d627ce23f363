/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsipoolelement.c: see wsipoolelement.h for the contract. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsipoolelement.h"
#include "wsierrorrelay.h"
#include "wsievent.h"

GST_DEBUG_CATEGORY_STATIC (wsi_pool_element_debug);
#define GST_CAT_DEFAULT wsi_pool_element_debug

static GstElementClass *parent_class = NULL;

/* ---- the pool's callbacks: the subclass's virtual methods ---------------- */

static gpointer
pool_thread_state_new (gpointer user_data)
{
  WsiPoolElement *self = user_data;
  WsiPoolElementClass *klass = WSI_POOL_ELEMENT_GET_CLASS (self);

  return klass->thread_state_new ? klass->thread_state_new (self) : NULL;
}

static void
pool_thread_state_free (gpointer state, gpointer user_data)
{
  WsiPoolElement *self = user_data;
  WsiPoolElementClass *klass = WSI_POOL_ELEMENT_GET_CLASS (self);

  if (klass->thread_state_free)
    klass->thread_state_free (self, state);
}

static GstBuffer *
pool_process (gpointer work, gpointer state, gpointer user_data)
{
  WsiPoolElement *self = user_data;

  return WSI_POOL_ELEMENT_GET_CLASS (self)->process (self, work, state);
}

static GstBuffer *
pool_finish (gpointer work, GstBuffer * result, gpointer user_data)
{
  WsiPoolElement *self = user_data;
  WsiPoolElementClass *klass = WSI_POOL_ELEMENT_GET_CLASS (self);

  return klass->finish ? klass->finish (self, work, result) : result;
}

static void
pool_work_clear (gpointer work, gpointer user_data)
{
  WsiPoolElement *self = user_data;
  WsiPoolElementClass *klass = WSI_POOL_ELEMENT_GET_CLASS (self);

  if (klass->work_clear)
    klass->work_clear (self, work);
}

static const WsiOrderedPoolFuncs pool_funcs = {
  .thread_state_new = pool_thread_state_new,
  .thread_state_free = pool_thread_state_free,
  .process = pool_process,
  .finish = pool_finish,
  .work_clear = pool_work_clear,
};

/* ---- flushing ------------------------------------------------------------ */

static void
set_flushing (WsiPoolElement * self)
{
  WsiPoolElementClass *klass = WSI_POOL_ELEMENT_GET_CLASS (self);

  wsi_ordered_pool_set_flushing (self->pool);
  if (klass->set_flushing)
    klass->set_flushing (self, TRUE);
}

/* Discards everything in flight, once the workers are out of it. */
static void
reset_flushing (WsiPoolElement * self)
{
  WsiPoolElementClass *klass = WSI_POOL_ELEMENT_GET_CLASS (self);

  wsi_ordered_pool_reset (self->pool);
  if (klass->set_flushing)
    klass->set_flushing (self, FALSE);
}

/* ---- pads ----------------------------------------------------------------- */

static GstFlowReturn
sink_chain (GstPad * pad, GstObject * parent, GstBuffer * buffer)
{
  WsiPoolElement *self = WSI_POOL_ELEMENT (parent);

  return WSI_POOL_ELEMENT_GET_CLASS (self)->handle_buffer (self, buffer);
}

/* Buffers in flight were made for the old caps: they go out first. */
static gboolean
handle_caps (WsiPoolElement * self, GstEvent * event)
{
  WsiPoolElementClass *klass = WSI_POOL_ELEMENT_GET_CLASS (self);
  GstCaps *caps, *out;

  if (wsi_ordered_pool_drain (self->pool) != GST_FLOW_OK) {
    gst_event_unref (event);
    return FALSE;
  }
  gst_event_parse_caps (event, &caps);
  out = klass->set_caps ? klass->set_caps (self, caps) : gst_caps_ref (caps);
  if (out == NULL) {
    gst_event_unref (event);
    return FALSE;
  }
  if (out != caps) {
    gst_event_unref (event);
    event = gst_event_new_caps (out);
  }
  gst_caps_unref (out);
  return wsi_ordered_pool_queue_event (self->pool, event) == GST_FLOW_OK;
}

static gboolean
default_sink_event (WsiPoolElement * self, GstEvent * event)
{
  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_START:
      set_flushing (self);
      gst_pad_push_event (self->srcpad, event);
      wsi_ordered_pool_pause_task (self->pool);
      return TRUE;
    case GST_EVENT_FLUSH_STOP:
      reset_flushing (self);
      gst_pad_push_event (self->srcpad, event);
      return wsi_ordered_pool_start_task (self->pool);
    case GST_EVENT_CAPS:
      return handle_caps (self, event);
    default:
      break;
  }
  if (!GST_EVENT_IS_SERIALIZED (event))
    return gst_pad_event_default (self->sinkpad, GST_OBJECT_CAST (self),
        event);
  return wsi_ordered_pool_queue_event (self->pool, event) == GST_FLOW_OK;
}

static gboolean
sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  WsiPoolElement *self = WSI_POOL_ELEMENT (parent);

  return WSI_POOL_ELEMENT_GET_CLASS (self)->sink_event (self, event);
}

static gboolean
default_sink_query (WsiPoolElement * self, GstQuery * query)
{
  return gst_pad_query_default (self->sinkpad, GST_OBJECT_CAST (self), query);
}

static gboolean
sink_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  WsiPoolElement *self = WSI_POOL_ELEMENT (parent);

  return WSI_POOL_ELEMENT_GET_CLASS (self)->sink_query (self, query);
}

static gboolean
sink_activate_mode (GstPad * pad, GstObject * parent, GstPadMode mode,
    gboolean active)
{
  WsiPoolElement *self = WSI_POOL_ELEMENT (parent);

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (active)
    reset_flushing (self);
  else                          /* unblocks a chain waiting for room */
    set_flushing (self);
  return TRUE;
}

static gboolean
src_activate_mode (GstPad * pad, GstObject * parent, GstPadMode mode,
    gboolean active)
{
  WsiPoolElement *self = WSI_POOL_ELEMENT (parent);

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (active) {
    reset_flushing (self);
    return wsi_ordered_pool_start_task (self->pool);
  }
  set_flushing (self);
  return wsi_ordered_pool_stop_task (self->pool);
}

void
wsi_pool_element_set_min_queued (WsiPoolElement * self, guint n_items)
{
  wsi_ordered_pool_set_min_items (self->pool, n_items);
}

void
wsi_pool_element_set_queue_limit (WsiPoolElement * self, guint n_items)
{
  wsi_ordered_pool_set_limit (self->pool, n_items);
}

void
wsi_pool_element_set_push_lists (WsiPoolElement * self, gboolean push_lists)
{
  wsi_ordered_pool_set_push_lists (self->pool, push_lists);
}

/* ---- state ---------------------------------------------------------------- */

static gboolean
start_workers (WsiPoolElement * self)
{
  WsiPoolElementClass *klass = WSI_POOL_ELEMENT_GET_CLASS (self);
  guint n_threads = 0;

  if (klass->start && !klass->start (self, &n_threads))
    return FALSE;
  if (n_threads == 0)
    n_threads = wsi_ordered_pool_auto_threads (WSI_POOL_ELEMENT_MAX_THREADS);
  GST_DEBUG_OBJECT (self, "starting %u worker threads", n_threads);
  wsi_ordered_pool_start_workers (self->pool, n_threads, klass->worker_name);
  return TRUE;
}

static void
stop_workers (WsiPoolElement * self)
{
  WsiPoolElementClass *klass = WSI_POOL_ELEMENT_GET_CLASS (self);

  wsi_ordered_pool_stop_workers (self->pool);
  wsi_ordered_pool_reset_flow (self->pool);
  if (klass->stop)
    klass->stop (self);
}

static GstStateChangeReturn
change_state (GstElement * element, GstStateChange transition)
{
  WsiPoolElement *self = WSI_POOL_ELEMENT (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED && !start_workers (self))
    return GST_STATE_CHANGE_FAILURE;

  ret = parent_class->change_state (element, transition);

  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY
      || (transition == GST_STATE_CHANGE_READY_TO_PAUSED
          && ret == GST_STATE_CHANGE_FAILURE))
    stop_workers (self);
  return ret;
}

/* ---- public --------------------------------------------------------------- */

GstFlowReturn
wsi_pool_element_queue_work (WsiPoolElement * self, gconstpointer work)
{
  return wsi_ordered_pool_queue_work (self->pool, work);
}

GstFlowReturn
wsi_pool_element_queue_event (WsiPoolElement * self, GstEvent * event)
{
  return wsi_ordered_pool_queue_event (self->pool, event);
}

GstFlowReturn
wsi_pool_element_drain (WsiPoolElement * self)
{
  return wsi_ordered_pool_drain (self->pool);
}

void
wsi_pool_element_report_dropped (WsiPoolElement * self,
    const WsiPatchRecord * record, const gchar * path, const gchar * reason)
{
  gst_pad_push_event (self->sinkpad,
      wsi_event_new_patch_dropped (record->slide_index, record->cycle,
          record->sequence, path, reason));
}

/* ---- type ----------------------------------------------------------------- */

static void
finalize (GObject * object)
{
  WsiPoolElement *self = WSI_POOL_ELEMENT (object);

  wsi_ordered_pool_stop_workers (self->pool);
  wsi_ordered_pool_free (self->pool);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
wsi_pool_element_class_init (gpointer g_class, gpointer class_data)
{
  WsiPoolElementClass *klass = g_class;
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  parent_class = g_type_class_peek_parent (klass);
  GST_DEBUG_CATEGORY_INIT (wsi_pool_element_debug, "wsipoolelement", 0,
      "pool-backed patch element base class");
  gobject_class->finalize = finalize;
  element_class->change_state = GST_DEBUG_FUNCPTR (change_state);
  /* every error of ours must end the application's main loop, however
   * early it comes (wsierrorrelay.h) */
  wsi_error_relay_class_init (element_class);
  klass->sink_event = default_sink_event;
  klass->sink_query = default_sink_query;
}

/* The class is the subclass's: its templates and work size make the pads
 * and the pool (as GstVideoDecoder's init does). */
static void
wsi_pool_element_init (GTypeInstance * instance, gpointer g_class)
{
  WsiPoolElement *self = (WsiPoolElement *) instance;
  WsiPoolElementClass *klass = g_class;
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstPadTemplate *templ;

  templ = gst_element_class_get_pad_template (element_class, "sink");
  g_return_if_fail (templ != NULL);
  self->sinkpad = gst_pad_new_from_template (templ, "sink");
  gst_pad_set_chain_function (self->sinkpad, GST_DEBUG_FUNCPTR (sink_chain));
  gst_pad_set_event_function (self->sinkpad, GST_DEBUG_FUNCPTR (sink_event));
  gst_pad_set_query_function (self->sinkpad, GST_DEBUG_FUNCPTR (sink_query));
  gst_pad_set_activatemode_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (sink_activate_mode));
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);

  templ = gst_element_class_get_pad_template (element_class, "src");
  g_return_if_fail (templ != NULL);
  self->srcpad = gst_pad_new_from_template (templ, "src");
  gst_pad_set_activatemode_function (self->srcpad,
      GST_DEBUG_FUNCPTR (src_activate_mode));
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  g_return_if_fail (klass->work_size > 0);
  self->pool = wsi_ordered_pool_new (self->srcpad, klass->work_size,
      &pool_funcs, self);
}

GType
wsi_pool_element_get_type (void)
{
  static gsize type = 0;

  if (g_once_init_enter (&type)) {
    static const GTypeInfo info = {
      sizeof (WsiPoolElementClass),
      NULL, NULL,
      wsi_pool_element_class_init,
      NULL, NULL,
      sizeof (WsiPoolElement),
      0,
      wsi_pool_element_init,
    };
    /* This static library is linked into two plugins (wsislide, wsipatch):
     * the copy loaded second finds the type the first one registered (the
     * same code; plugins are loaded one at a time under GStreamer's plugin
     * loading lock). */
    GType t = g_type_from_name ("WsiPoolElement");

    if (t == 0)
      t = g_type_register_static (GST_TYPE_ELEMENT, "WsiPoolElement", &info,
          G_TYPE_FLAG_ABSTRACT);

    g_once_init_leave (&type, t);
  }
  return type;
}
