/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsicudadriver.c: loads the driver calls libgstcuda 1.22 lacks, once. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gmodule.h>
#include "wsicudadriver.h"

static gboolean
load_symbol (GModule * module, const gchar * name, gpointer * symbol)
{
  if (g_module_symbol (module, name, symbol) && *symbol)
    return TRUE;
  g_debug ("libcuda lacks %s", name);
  return FALSE;
}

static WsiCudaDriver *
load_driver (void)
{
  static WsiCudaDriver driver;
  /* the driver's soname; libgstcuda opens the same one */
  GModule *module = g_module_open ("libcuda.so.1", G_MODULE_BIND_LAZY);

  if (module == NULL) {
    g_debug ("no CUDA driver: %s", g_module_error ());
    return NULL;
  }
  /* versioned names, as cuda.h's #defines map them for API >= 3020 */
  if (!load_symbol (module, "cuEventCreate", (gpointer *) & driver.EventCreate)
      || !load_symbol (module, "cuEventDestroy_v2",
          (gpointer *) & driver.EventDestroy)
      || !load_symbol (module, "cuEventRecord", (gpointer *) & driver.EventRecord)
      || !load_symbol (module, "cuEventSynchronize",
          (gpointer *) & driver.EventSynchronize)
      || !load_symbol (module, "cuCtxGetCurrent",
          (gpointer *) & driver.CtxGetCurrent)
      || !load_symbol (module, "cuCtxGetDevice",
          (gpointer *) & driver.CtxGetDevice)) {
    g_module_close (module);
    return NULL;
  }
  g_module_make_resident (module);
  return &driver;
}

const WsiCudaDriver *
wsi_cuda_driver_get (void)
{
  static gsize loaded = 0;
  static const WsiCudaDriver *driver = NULL;

  if (g_once_init_enter (&loaded)) {
    driver = load_driver ();
    g_once_init_leave (&loaded, 1);
  }
  return driver;
}
