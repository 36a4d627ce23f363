/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitiffindex.h: a TIFF pyramid (wsitiffdir.h) as bytes and back, for the
 * on-disk index cache of remote slides (wsiindexcache.h).
 *
 * Contract: wsi_tiff_index_to_bytes() writes every field a read needs
 * (levels, tile tables, JPEGTables, photometric, vendor, mpp);
 * wsi_tiff_index_from_bytes() gives back the same pyramid, or FALSE with a
 * reason when the bytes are not one this version wrote or describe a
 * pyramid that the TIFF walk would not have accepted: geometry out of the
 * walk's bounds, tile tables of the wrong length, a tile past the end of the
 * object (@object_size), levels not strictly narrower. The bytes are read
 * as untrusted (GVariant in normal form).
 *
 * Cost: 16 bytes per tile plus the JPEGTables, one copy each way.
 * Threading: pure functions.
 */

#ifndef __WSI_TIFF_INDEX_H__
#define __WSI_TIFF_INDEX_H__

#include <glib.h>
#include "wsitiffdir.h"

G_BEGIN_DECLS

/* The index cache kind of these bytes (names their version). */
#define WSI_TIFF_INDEX_KIND "tiff-pyramid/2"

GBytes *wsi_tiff_index_to_bytes (const WsiTiffPyramid * pyramid);

/* Fills @pyramid from @bytes; on FALSE @pyramid is left empty and *@why
 * says what was wrong. */
gboolean wsi_tiff_index_from_bytes (GBytes * bytes, guint64 object_size,
    WsiTiffPyramid * pyramid, gchar ** why);

G_END_DECLS

#endif /* __WSI_TIFF_INDEX_H__ */
