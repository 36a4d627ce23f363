/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsidicomfolder.h: the VOLUME instances of a local folder's DICOM files,
 * by series, indexed once per version of the folder, for the DICOM
 * backend's "the rest of the series is in the same folder" (wsislide-
 * dicom.c) when no collection recorded the series (wsidicomseriesmap.h).
 *
 * Contract: wsi_dicom_folder_volumes() answers from a process-wide index
 * of the folder: every file wsi_dicom_path_is_dicom() takes, its identity
 * read once (wsi_dicom_instance_read() with header_only), VOLUME instances
 * kept. The index is built on the first question about a folder and built
 * again when the folder's modification time changed (a file added,
 * removed or renamed); an index built less than 2 seconds after that time
 * is used once and not kept, since a file added within the same timestamp
 * tick would not change it. A file rewritten in place does not change its
 * folder's time: the backend parses every member again and checks its
 * identity, so a stale index can leave an instance out of a series until
 * the folder changes, never put a foreign one in. Folders are indexed by
 * the spelling of their path; at most 4096 folders and 65536 volumes are
 * kept, the oldest indexed dropped first (a single folder of more volumes
 * is kept alone: indexing it again on every open would cost far more). A
 * member that vanished or was cut short since indexing is left out by the
 * backend's full parse; a FIFO named like an instance is refused without
 * waiting (wsibytesource.h).
 *
 * Cost: the first question about a folder of N files: one directory
 * listing and N header reads of a few KiB each (N opens); then one stat()
 * of the folder and a walk over its kept volumes per question. Memory:
 * the path and two UIDs per VOLUME instance. Threading: safe from any
 * thread; questions about one folder wait for the one indexing it, other
 * folders index in parallel.
 */

#ifndef __WSI_DICOM_FOLDER_H__
#define __WSI_DICOM_FOLDER_H__

#include <glib.h>

G_BEGIN_DECLS

/* The paths (sorted by name; free with g_ptr_array_unref) of the VOLUME
 * instances of series @series_uid in the folder of the local file
 * @location (a path or a file:// URI), other than @location itself and
 * other files of SOPInstanceUID @sop_instance_uid (copies of it). Empty
 * when the folder cannot be read. */
GPtrArray *wsi_dicom_folder_volumes (const gchar * location,
    const gchar * series_uid, const gchar * sop_instance_uid);

/* The identity reads this process made to index folders, for the tests
 * and benchmarks that count the work of an open. */
guint64 wsi_dicom_folder_headers_read (void);

G_END_DECLS

#endif /* __WSI_DICOM_FOLDER_H__ */
