/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* plugin.c: registers the CUDA elements, nothing else. Registration needs
 * no GPU: the driver is only loaded when an element starts. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>
#include <gst/wsi/wsirecord.h>

#include "gstwsicudaupload.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  wsi_record_register_metas ();
  return GST_ELEMENT_REGISTER (wsicudaupload, plugin);
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, wsicuda,
    "Pinned-memory CUDA upload for whole-slide patch batches",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
