/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* gstwsislideelements.c: see gstwsislideelements.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwsislideelements.h"

#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsiworkmeta.h>
#include "wsibytesource.h"
#include "wsireadsources.h"
#ifdef WSI_HAVE_CURL
#include "wsihttpsource.h"
#endif

void
wsislide_element_init (GstPlugin * plugin)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    wsi_record_register_metas ();
    /* a pool worker's waits on remote bytes go on its item's WsiWorkMeta,
     * for the wsistats timeline and summary */
    wsi_byte_source_set_wait_func (wsi_work_io_wait_note);
    /* remote schemes for the collections, which open list files and
     * DICOM series before any slide */
    wsi_read_sources_init ();
#ifdef WSI_HAVE_CURL
    {
      /* libcurl (and the OpenSSL it initialises, whose exit handler frees
       * per-thread state) set up once here, on the thread that loads the
       * plugin, as curl asks: never lazily on a streaming or pool thread
       * that may still be exiting when the process ends (a double free
       * seen at exit when a property getter made the first call). */
      WsiHttpSettings unused;
      wsi_http_get_settings (&unused);
    }
#endif
    g_once_init_leave (&done, 1);
  }
}
