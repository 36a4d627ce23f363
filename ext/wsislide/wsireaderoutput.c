/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/video/gstvideopool.h>

#include "wsireaderoutput.h"
#include "wsivideoformat.h"

GST_DEBUG_CATEGORY_EXTERN (gst_patch_reader_debug);
#define GST_CAT_DEFAULT gst_patch_reader_debug

void
wsi_reader_output_init (WsiReaderOutput * out)
{
  memset (out, 0, sizeof (*out));
  g_mutex_init (&out->lock);
}

void
wsi_reader_output_clear (WsiReaderOutput * out)
{
  wsi_reader_output_stop (out);
  g_mutex_clear (&out->lock);
}

/* RGB when downstream takes it, else what downstream prefers. */
static GstCaps *
choose_caps (GstPad * srcpad, guint size)
{
  GstCaps *ours, *theirs, *rgb;

  ours = gst_caps_from_string ("video/x-raw, format = (string) "
      WSI_READER_OUTPUT_FORMATS ", framerate = (fraction) 0/1, "
      "pixel-aspect-ratio = (fraction) 1/1");
  gst_caps_set_simple (ours, "width", G_TYPE_INT, (gint) size,
      "height", G_TYPE_INT, (gint) size, NULL);
  theirs = gst_pad_peer_query_caps (srcpad, ours);
  gst_caps_unref (ours);
  if (gst_caps_is_empty (theirs)) {
    gst_caps_unref (theirs);
    return NULL;
  }

  rgb = gst_caps_from_string ("video/x-raw, format = (string) RGB");
  if (gst_caps_can_intersect (theirs, rgb)) {
    GstCaps *both = gst_caps_intersect (theirs, rgb);
    gst_caps_unref (theirs);
    theirs = both;
  }
  gst_caps_unref (rgb);
  return gst_caps_fixate (theirs);
}

static GstBufferPool *
make_pool (WsiReaderOutput * out, GstQuery * query, GstCaps * caps)
{
  GstBufferPool *pool = NULL;
  GstAllocator *allocator = NULL;
  GstAllocationParams params;
  GstStructure *config;
  guint size = out->vinfo.size, min = 0, max = 0;

  gst_allocation_params_init (&params);
  if (gst_query_get_n_allocation_params (query) > 0)
    gst_query_parse_nth_allocation_param (query, 0, &allocator, &params);
  if (gst_query_get_n_allocation_pools (query) > 0) {
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
    size = MAX (size, (guint) out->vinfo.size);
  }
  if (pool == NULL)
    pool = gst_video_buffer_pool_new ();

  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, size, min, max);
  gst_buffer_pool_config_set_allocator (config, allocator, &params);
  if (gst_query_find_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL))
    gst_buffer_pool_config_add_option (config,
        GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config (pool, config)) {
    config = gst_buffer_pool_get_config (pool);
    if (!gst_buffer_pool_config_validate_params (config, caps, size, min,
            max)) {
      /* Downstream's pool wants something else: use our own. */
      gst_structure_free (config);
      gst_object_unref (pool);
      pool = gst_video_buffer_pool_new ();
      config = gst_buffer_pool_get_config (pool);
      gst_buffer_pool_config_set_params (config, caps, out->vinfo.size, 0,
          0);
    }
    if (!gst_buffer_pool_set_config (pool, config)) {
      gst_object_unref (pool);
      pool = NULL;
    }
  }
  if (allocator)
    gst_object_unref (allocator);
  if (pool && !gst_buffer_pool_set_active (pool, TRUE))
    gst_clear_object (&pool);
  return pool;
}

/* Asks downstream for buffers (memory it may offer) for @caps. */
static gboolean
decide_allocation (WsiReaderOutput * out, GstElement * element,
    GstPad * srcpad, GstCaps * caps)
{
  GstQuery *query = gst_query_new_allocation (caps, TRUE);
  GstBufferPool *pool, *old;

  if (!gst_pad_peer_query (srcpad, query))
    GST_DEBUG_OBJECT (element,
        "downstream did not answer the allocation query");
  pool = make_pool (out, query, caps);
  gst_query_unref (query);
  if (pool == NULL)
    return FALSE;

  g_mutex_lock (&out->lock);
  old = out->pool;
  out->pool = pool;
  g_mutex_unlock (&out->lock);
  if (old) {
    gst_buffer_pool_set_active (old, FALSE);
    gst_object_unref (old);
  }
  return TRUE;
}

GstFlowReturn
wsi_reader_output_set_size (WsiReaderOutput * out, GstElement * element,
    GstPad * srcpad, guint size)
{
  GstCaps *caps;
  GstVideoInfo vinfo;
  WsiPixelFormat pixel_format;

  caps = choose_caps (srcpad, size);
  if (caps == NULL || !gst_video_info_from_caps (&vinfo, caps)
      || !wsi_pixel_format_for_video (GST_VIDEO_INFO_FORMAT (&vinfo),
          &pixel_format)) {
    GST_ELEMENT_ERROR (element, CORE, NEGOTIATION,
        ("Downstream accepts none of RGB, RGBA, RGBx or BGRx at %ux%u "
            "for the patches.", size, size), ("caps: %" GST_PTR_FORMAT, caps));
    gst_clear_caps (&caps);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  GST_INFO_OBJECT (element, "output caps %" GST_PTR_FORMAT, caps);

  out->vinfo = vinfo;
  out->format = pixel_format;
  out->size = size;
  gst_pad_push_event (srcpad, gst_event_new_caps (caps));
  if (!decide_allocation (out, element, srcpad, caps)) {
    GST_ELEMENT_ERROR (element, RESOURCE, NO_SPACE_LEFT,
        ("Could not set up output buffers for %ux%u patches.", size, size),
        ("caps: %" GST_PTR_FORMAT, caps));
    gst_caps_unref (caps);
    out->size = 0;
    return GST_FLOW_ERROR;
  }
  gst_caps_unref (caps);
  return GST_FLOW_OK;
}

GstBufferPool *
wsi_reader_output_ref_pool (WsiReaderOutput * out)
{
  GstBufferPool *pool;

  g_mutex_lock (&out->lock);
  pool = out->pool ? gst_object_ref (out->pool) : NULL;
  g_mutex_unlock (&out->lock);
  return pool;
}

void
wsi_reader_output_set_flushing (WsiReaderOutput * out, gboolean flushing)
{
  GstBufferPool *pool = wsi_reader_output_ref_pool (out);

  if (pool) {
    gst_buffer_pool_set_flushing (pool, flushing);
    gst_object_unref (pool);
  }
}

void
wsi_reader_output_stop (WsiReaderOutput * out)
{
  GstBufferPool *pool;

  g_mutex_lock (&out->lock);
  pool = out->pool;
  out->pool = NULL;
  g_mutex_unlock (&out->lock);
  if (pool) {
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
  }
  out->size = 0;
}
