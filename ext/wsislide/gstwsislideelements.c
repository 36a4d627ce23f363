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

void
wsislide_element_init (GstPlugin * plugin)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    wsi_record_register_metas ();
    g_once_init_leave (&done, 1);
  }
}
