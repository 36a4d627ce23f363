/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsidicomseriesmap.h: which instance files make the DICOM series that a
 * slide location (its level-0 instance) names, when that is not "the DICOM
 * files of its folder": the instances of a list file or manifest, or the
 * objects of an object-storage prefix, grouped by series where the
 * collection loaded them (collection/wsidicomseries.c). The DICOM backend
 * (wsislide-dicom.c) asks here first and lists the folder only when the
 * location is unknown here.
 *
 * Contract: a process-wide map from a location to the locations of its
 * series' instances (itself included), as the collection saw them; a later
 * set for the same location replaces the earlier. The backend still reads
 * every member's header and keeps only VOLUME instances of the same
 * SeriesInstanceUID, so a stale or wrong entry cannot mix series.
 *
 * Cost: one hash lookup under a mutex per slide open; the map holds the
 * location strings of the collections loaded (never freed: one entry per
 * series, overwritten on reload). Threading: safe from any thread.
 */

#ifndef __WSI_DICOM_SERIES_MAP_H__
#define __WSI_DICOM_SERIES_MAP_H__

#include <glib.h>

G_BEGIN_DECLS

/* Records that @level0's series is the @n locations @members. */
void wsi_dicom_series_map_set (const gchar * level0,
    const gchar * const *members, guint n);

/* The members recorded for @level0 (free with g_strfreev), or NULL. */
gchar **wsi_dicom_series_map_get (const gchar * level0);

G_END_DECLS

#endif /* __WSI_DICOM_SERIES_MAP_H__ */
