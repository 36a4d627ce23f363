/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitarwriter.h: writes one POSIX ustar archive (a webdataset shard).
 *
 * Contract: the archive is written to "<path>.tmp" and renamed to @path by
 * wsi_tar_writer_finish() once the end-of-archive blocks are written and
 * the file synced, so a shard under its final name is always whole (as the
 * store's own shards, wsishardwriter.h). Members are regular files, mode
 * 0644, mtime 0 (the archive is a pure function of its contents), names up
 * to 99 bytes. Failures come back as GErrors naming the file; the caller
 * then abandons the archive, which removes the temporary file.
 *
 * Cost: one write(2) per member through stdio's buffer. Threading: one
 * thread at a time.
 */

#ifndef __WSI_TAR_WRITER_H__
#define __WSI_TAR_WRITER_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct _WsiTarWriter WsiTarWriter;

WsiTarWriter *wsi_tar_writer_new (const gchar * path, GError ** error);
gboolean wsi_tar_writer_add (WsiTarWriter * writer, const gchar * name,
    const guint8 * data, gsize size, GError ** error);
gboolean wsi_tar_writer_finish (WsiTarWriter * writer, GError ** error);
void wsi_tar_writer_abandon (WsiTarWriter * writer);

G_END_DECLS

#endif /* __WSI_TAR_WRITER_H__ */
