/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsicollection.h: the slides wsislidesrc streams, and their columns.
 *
 * Contract: wsi_collection_load() turns a location into slides sorted by
 * path (then label), each with its index in that order:
 *  - a slide file (known extension): that slide (a .dcm file: its series,
 *    with the other instances of that series in its folder);
 *  - a directory: every slide file below it (links followed, each folder
 *    walked once however many links lead to it, 32 deep at most); a
 *    folder or entry that cannot be read adds a line to warnings; the
 *    .dcm files of a folder count once per DICOM series, named by the path
 *    of the series' level-0 instance (wsidicomseries.h);
 *  - a manifest (wsimanifest.h: .csv, .tsv, or a first line starting with
 *    a "path" field): one slide per row, paths relative to the manifest's
 *    folder, every other column kept (a "label" column also fills label);
 *  - any other file: a list, one path per line with an optional TAB and
 *    label, '#' comments and blank lines ignored, relative paths as above.
 * With @tcga, the columns of wsitcga.h are appended (a column the manifest
 * already has keeps the manifest's value) and slides whose names hold no
 * barcode are flagged (tcga_unparsed). Every slide has the same column
 * names. Errors (missing location, unreadable or malformed list or
 * manifest) come back as a GError naming the file (and line).
 *
 * Cost: one directory walk or one read of the list; sorting. Threading: no
 * shared state.
 */

#ifndef __WSI_COLLECTION_H__
#define __WSI_COLLECTION_H__

#include <glib.h>

G_BEGIN_DECLS

/* One slide of the collection. */
typedef struct
{
  gchar *path;                  /* the file name's bytes, to open it */
  gchar *display;               /* UTF-8 form for messages and metadata */
  gchar *label;                 /* "" when none */
  gchar **values;               /* one per collection column */
  guint index;                  /* position in the sorted collection */
  gboolean failed;              /* unreadable: skipped on later cycles */
  gchar *failure;               /* why it failed (NULL while readable) */
  gboolean opened;              /* opened at least once */
  gboolean tcga_unparsed;       /* tcga: no barcode in the name */
  gboolean tcga_warned;
} WsiSlideEntry;

typedef struct
{
  GPtrArray *entries;           /* WsiSlideEntry, sorted, indices set */
  gchar **column_names;         /* never NULL; may be empty */
  GPtrArray *warnings;          /* gchar *: what a folder walk skipped */
} WsiCollection;

WsiCollection *wsi_collection_load (const gchar * location, gboolean tcga,
    GError ** error);

/* Moves entries rank, rank + world_size, ... of @collection into a new
 * array (freeing them with the array). */
GPtrArray *wsi_collection_take_rank (WsiCollection * collection, gint rank,
    gint world_size);

void wsi_collection_free (WsiCollection * collection);

G_END_DECLS

#endif /* __WSI_COLLECTION_H__ */
