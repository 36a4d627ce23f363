/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsireadsources.c: see wsireadsources.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsireadsources.h"
#ifdef WSI_HAVE_CURL
#include "wsihttpsource.h"
#include "wsiobjectstore.h"
#endif

void
wsi_read_sources_init (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
#ifdef WSI_HAVE_CURL
    wsi_http_source_register ();
    wsi_object_store_register ();
#endif
    g_once_init_leave (&done, 1);
  }
}
