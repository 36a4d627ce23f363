/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsidicomseries.h: the DICOM files of one folder grouped into slides, one
 * per series, for the collection's folder scans, prefix listings, lists
 * and manifests (wsicollection.c).
 *
 * Contract: wsi_dicom_series_pick() reads the identity of each file
 * (wsidicom.h, header_only: the attributes up to (0048,0007)) and returns
 * one path per
 * SeriesInstanceUID of VL Whole Slide Microscopy instances: the series'
 * widest VOLUME instance (its level 0; ties by name). That path names the
 * slide, and opening it opens the whole series: the members of each
 * series (every parsed instance with its SeriesInstanceUID) are recorded
 * with wsi_dicom_series_map_set() for the DICOM backend, so the paths may
 * be one folder's files, a list's lines or a prefix's URLs. Series with no
 * VOLUME instance (only a label, an overview, a thumbnail) and other SOP
 * classes give no slide; a file that cannot be parsed is returned as it
 * is, so that opening it reports why.
 *
 * Cost: one identity read per file, a few KiB (ranged reads for a URL). Threading:
 * the series map is locked; nothing else is shared.
 */

#ifndef __WSI_DICOM_SERIES_H__
#define __WSI_DICOM_SERIES_H__

#include <glib.h>

G_BEGIN_DECLS

/* @paths: DICOM files of one folder. Returns new paths (free with
 * g_ptr_array_unref), in the order of @paths. */
GPtrArray *wsi_dicom_series_pick (GPtrArray * paths);

/* TRUE when the local file @path joins a folder's DICOM files: a .dcm name
 * this build reads, or (with the DICOM backend) a name without a slide
 * extension whose bytes sniff as DICOM (one 132-byte read, only for such
 * names; see wsi_dicom_path_is_dicom()). */
gboolean wsi_dicom_series_is_dicom_file (const gchar * path);

G_END_DECLS

#endif /* __WSI_DICOM_SERIES_H__ */
