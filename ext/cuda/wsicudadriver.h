/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsicudadriver.h: the few CUDA driver calls libgstcuda 1.22 does not wrap
 * (events, the current context). Like libgstcuda's loader, they are looked
 * up in libcuda at run time, so nothing links against the driver. */

#ifndef __WSI_CUDA_DRIVER_H__
#define __WSI_CUDA_DRIVER_H__

#include <glib.h>
#include <cuda.h>

G_BEGIN_DECLS

typedef struct
{
  CUresult (CUDAAPI * EventCreate) (CUevent * event, unsigned int flags);
  CUresult (CUDAAPI * EventDestroy) (CUevent event);
  CUresult (CUDAAPI * EventRecord) (CUevent event, CUstream stream);
  CUresult (CUDAAPI * EventSynchronize) (CUevent event);
  CUresult (CUDAAPI * CtxGetCurrent) (CUcontext * ctx);
  CUresult (CUDAAPI * CtxGetDevice) (CUdevice * device);
} WsiCudaDriver;

/* NULL when libcuda cannot be loaded (no driver: the usual case in CI) */
const WsiCudaDriver *wsi_cuda_driver_get (void);

G_END_DECLS

#endif /* __WSI_CUDA_DRIVER_H__ */
