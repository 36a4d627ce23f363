/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsivideoformat.h: the raw video formats the read layer writes directly
 * (header only). Contract: maps a GstVideoFormat to the WsiPixelFormat
 * that wsi_slide_read() fills, FALSE for formats it cannot write. Shared
 * by patchreader and patchviews so both accept the same formats. No cost,
 * any thread.
 */

#ifndef __WSI_VIDEO_FORMAT_H__
#define __WSI_VIDEO_FORMAT_H__

#include <gst/video/video.h>
#include "wsislide.h"

static inline gboolean
wsi_pixel_format_for_video (GstVideoFormat format,
    WsiPixelFormat * pixel_format)
{
  switch (format) {
    case GST_VIDEO_FORMAT_RGB:
      *pixel_format = WSI_PIXEL_RGB;
      return TRUE;
    case GST_VIDEO_FORMAT_RGBA:
      *pixel_format = WSI_PIXEL_RGBA;
      return TRUE;
    case GST_VIDEO_FORMAT_RGBx:
      *pixel_format = WSI_PIXEL_RGBX;
      return TRUE;
    case GST_VIDEO_FORMAT_BGRx:
      *pixel_format = WSI_PIXEL_BGRX;
      return TRUE;
    default:
      return FALSE;
  }
}

#endif /* __WSI_VIDEO_FORMAT_H__ */
