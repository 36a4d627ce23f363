/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistainref.h: a stain reference image (stainnorm's reference=) decoded
 * with GStreamer's own decoders and turned into target statistics.
 *
 * Contract: PNG, JPEG and whatever decodebin decodes to RGB; a TIFF (or
 * BigTIFF, told by its first four bytes) goes to gst-plugins-good's
 * gdk-pixbuf decoder (libtiff underneath: its first image), which decodebin
 * never picks (rank none); JPEGs are decoded with the exact integer
 * inverse DCT (libjpeg's default, what PIL and OpenCV use; jpegdec's own
 * default is the fast one). All the image's pixels give the statistics.
 *
 * Cost: one decode of the file (a pipeline run to EOS, up to 60 s) and one
 * estimate; once per start of the element. Threading: the calling thread.
 */

#ifndef __WSI_STAIN_REF_H__
#define __WSI_STAIN_REF_H__

#include <gst/gst.h>
#include "wsistain.h"

G_BEGIN_DECLS

/* The target of @method from the image file @path: @matrix (Macenko,
 * Vahadane) or @lab (Reinhard). FALSE with the reason in @error (a
 * sentence without the path) when it cannot be decoded or gives no
 * estimate. */
gboolean wsi_stain_reference_load (const gchar * path, WsiStainMethod method,
    WsiStainMatrix * matrix, WsiStainLab * lab, gchar ** error);

G_END_DECLS

#endif /* __WSI_STAIN_REF_H__ */
