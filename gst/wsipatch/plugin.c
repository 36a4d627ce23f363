/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* plugin.c: registers the patch planning and batching elements. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "gstpatchsampler.h"
#include "gstpatchinterleave.h"
#include "gstpatchbatch.h"
#include "gstpatchfilter.h"
#include "gstpatchaugment.h"
#include "gststainestimate.h"
#include "gststainnorm.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  ret |= GST_ELEMENT_REGISTER (patchsampler, plugin);
  ret |= GST_ELEMENT_REGISTER (patchinterleave, plugin);
  ret |= GST_ELEMENT_REGISTER (patchbatch, plugin);
  ret |= GST_ELEMENT_REGISTER (patchfilter, plugin);
  ret |= GST_ELEMENT_REGISTER (patchaugment, plugin);
  ret |= GST_ELEMENT_REGISTER (stainestimate, plugin);
  ret |= GST_ELEMENT_REGISTER (stainnorm, plugin);
  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, wsipatch,
    "Patch sampling, slide interleaving and batching for whole-slide images",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
