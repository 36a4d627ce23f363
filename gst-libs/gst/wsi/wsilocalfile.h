/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsilocalfile.h: the one way a local file is opened for reading (slide
 * lists, masks in mask-cache-dir, store shards and manifests, annotation
 * files, slides before a library opens them), and the one way bytes that
 * came from a file enter a message.
 *
 * Why: open() of a FIFO waits for a writer for ever, and g_file_test()
 * folds "permission denied", "a directory" and "a symbolic link loop" into
 * one "no such file". Every open here is O_NONBLOCK, then fstat() refuses
 * anything that is not a regular file, so no path can hang a run, and each
 * refusal says its own reason (from errno).
 *
 * Contract: wsi_local_file_open() returns a blocking read-only descriptor
 * of a regular file, or -1 with a G_FILE_ERROR (code from errno;
 * G_FILE_ERROR_NOENT only for a missing file) whose message is
 * "PATH: reason", PATH as UTF-8 (wsi_text_escape). The reasons:
 * "no such file", "permission denied", "symbolic link loop", "not a
 * regular file (a directory | a FIFO | a device | a socket)", otherwise
 * strerror. wsi_local_file_check() opens and closes (for a path handed to
 * a library that opens it itself); wsi_local_file_read() reads a whole file
 * of at most @max_bytes; wsi_local_file_map() maps one.
 * wsi_text_escape() returns valid UTF-8: each byte of @text that is not
 * part of valid UTF-8 becomes "\xNN" (so "R\xAD\xFF" for raw bytes).
 *
 * Cost: one open() and one fstat() per call, plus the read or the map.
 * Threading: no shared state; any thread.
 */

#ifndef __WSI_LOCAL_FILE_H__
#define __WSI_LOCAL_FILE_H__

#include <glib.h>

G_BEGIN_DECLS

int wsi_local_file_open (const gchar * path, guint64 * size,
    GError ** error);

gboolean wsi_local_file_check (const gchar * path, GError ** error);

gboolean wsi_local_file_read (const gchar * path, gsize max_bytes,
    gchar ** contents, gsize * length, GError ** error);

GMappedFile *wsi_local_file_map (const gchar * path, GError ** error);

gchar *wsi_text_escape (const gchar * text, gssize length);

/* The reason for @errno_value in the words above ("permission denied"). */
const gchar *wsi_local_file_reason (int errno_value);

G_END_DECLS

#endif /* __WSI_LOCAL_FILE_H__ */
