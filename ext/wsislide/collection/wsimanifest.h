/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsimanifest.h: slide manifests, CSV or TSV tables with a header row.
 *
 * Contract: a manifest names one slide per row in its `path` column (the
 * header name, case-insensitive, surrounding spaces ignored); every other
 * column is kept, in header order, as strings. CSV follows RFC 4180:
 * fields separated by commas, a field in double quotes may hold commas,
 * line breaks and doubled quotes (""); TSV separates by TABs and takes
 * quotes the same way. CRLF or LF line ends, a UTF-8 byte order mark and
 * blank lines are accepted; values are kept as written (no trimming).
 * Anything else is refused with a GError whose message starts with
 * "FILE:LINE:" (1-based, the line where the bad row starts): a missing,
 * empty or duplicated column name, a row whose field count differs from
 * the header's, an empty path, a quote left open, text after a closing
 * quote.
 *
 * wsi_manifest_sniff() tells a manifest from a plain list: by extension
 * (.csv, .tsv) or, for any other name, by a first line whose first field is
 * `path` followed by a comma or a TAB.
 *
 * Cost: one pass over the text, allocation per field. Threading: no
 * shared state.
 */

#ifndef __WSI_MANIFEST_H__
#define __WSI_MANIFEST_H__

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  WSI_MANIFEST_NONE,            /* not a manifest: a plain list */
  WSI_MANIFEST_CSV,
  WSI_MANIFEST_TSV,
} WsiManifestFormat;

typedef struct
{
  gchar *path;                  /* as written, relative or absolute */
  gchar **values;               /* one per column name */
  guint line;                   /* where the row starts, 1-based */
} WsiManifestRow;

typedef struct
{
  gchar **names;                /* columns other than path */
  GPtrArray *rows;              /* WsiManifestRow, file order */
} WsiManifest;

WsiManifestFormat wsi_manifest_sniff (const gchar * file_name,
    const gchar * contents);

/* Parses @contents (@length bytes) of the manifest @file_name (used in
 * messages only); NULL with @error set when it is malformed. */
WsiManifest *wsi_manifest_parse (const gchar * file_name,
    const gchar * contents, gsize length, WsiManifestFormat format,
    GError ** error);

void wsi_manifest_free (WsiManifest * manifest);

G_END_DECLS

#endif /* __WSI_MANIFEST_H__ */
