/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* plugin.c: registers the OpenSlide-backed elements, nothing else. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "gstwsislidesrc.h"
#include "gstpatchreader.h"
#include "gstpatchviews.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  ret |= GST_ELEMENT_REGISTER (wsislidesrc, plugin);
  ret |= GST_ELEMENT_REGISTER (patchreader, plugin);
  ret |= GST_ELEMENT_REGISTER (patchviews, plugin);
  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, wsislide,
    "Whole-slide image sources and patch readers (direct TIFF/JPEG reader and OpenSlide)",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
