/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsilocation.h: what a slide location is — a local path, a file:// URI or
 * a remote URL (http://, https://, s3://, gs://) — and how it may be shown.
 * The bottom of the read layer: the slide abstraction, the byte sources
 * and the collections all ask it, and it asks none of them.
 *
 * Contract: wsi_location_is_remote() and wsi_location_scheme() classify by
 * syntax alone (whether this build can read the scheme is the byte-source
 * scheme table's business). wsi_location_display() and wsi_display_text()
 * return text that is valid UTF-8 and holds no credentials: a URL loses its
 * user, password, query and fragment. A location holding credentials is
 * remembered under its display form (wsi_location_remember()) so that
 * downstream elements can pass the display form around and the byte source
 * that opens it gets the full URL back (wsi_location_resolve()).
 *
 * Cost: string work only; remember/resolve take one process-wide lock and
 * a hash lookup (called per slide open, not per read).
 *
 * Threading: every function may be called from any thread.
 */

#ifndef __WSI_LOCATION_H__
#define __WSI_LOCATION_H__

#include <glib.h>

G_BEGIN_DECLS

/* Does @location name a remote object (http://, https://, s3://, gs://)? */
gboolean wsi_location_is_remote (const gchar * location);

/* The scheme of @location in lower case ("http", "s3", "file"), or NULL
 * for a plain path (no "scheme://" prefix). */
gchar *wsi_location_scheme (const gchar * location);

/* @text as valid UTF-8 for messages and metadata: bytes that are not UTF-8
 * (a Latin-1 file name) become \xNN escapes. Paths are bytes on Linux: open
 * files by the original, show this. */
gchar *wsi_display_text (const gchar * text);

/* @location as it may be shown (messages, metadata): a path as valid UTF-8
 * (wsi_display_text), a URL without user, password, query or fragment. */
gchar *wsi_location_display (const gchar * location);

/* Remembers @location (a URL holding credentials: user, password, a
 * signed query) under its display form, for this process: elements pass
 * the display form downstream (metadata never carries credentials) and
 * wsi_byte_source_open() of the display form opens the full URL. */
void wsi_location_remember (const gchar * location);

/* The full location remembered for the display form @location, or a copy
 * of @location when none was. */
gchar *wsi_location_resolve (const gchar * location);

G_END_DECLS

#endif /* __WSI_LOCATION_H__ */
