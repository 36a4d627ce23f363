/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsibatchmeta.h: gathers the WsiPatchMeta of a batch, location by
 * location, and writes it onto the batch buffer.
 *
 * Contract (field names in wsirecord.h): a batch of n locations gets
 * count = n, records, paths and labels (one each per location); uris and
 * mpps (one each per location: the slide's uri, "" when a location has
 * none, and its level-0 mpp, 0 when unknown) when any location has them;
 * and, when
 * its first location has them, the record version 2 extensions: view-names
 * (once) with views (n × n-views WsiViewRecord, location-major), and
 * column-names (once) with column-values (n × n-columns, location-major).
 * A batch takes the view names and column names of its first location;
 * later locations must have the same view names (else append fails) and
 * have their columns matched by name ("" where one is missing).
 * Cost: per location a 64-byte record copy, n-views 48-byte view copies
 * and a string intern per path, label, uri and column value (a pointer compare
 * when it repeats the previous location's, the usual case); the arrays grow
 * to the largest batch once and are reused. Threading: none (the
 * streaming thread owns it). */

#ifndef __WSI_BATCH_META_H__
#define __WSI_BATCH_META_H__

#include <gst/gst.h>
#include <gst/wsi/wsirecord.h>

G_BEGIN_DECLS

typedef struct
{
  guint capacity;               /* locations the arrays hold */
  guint n;                      /* locations appended */

  WsiPatchRecord *records;
  const gchar **paths;          /* interned strings, room for a NULL */
  const gchar **labels;
  const gchar *last_path;       /* the previous location's, for interning */
  const gchar *last_label;

  gboolean has_slides;          /* some location brought uris and mpps */
  const gchar **uris;           /* interned, room for a NULL */
  gdouble *mpps;
  const gchar *last_uri;

  guint n_views;                /* 0 when the batch has no view records */
  gchar **view_names;
  WsiViewRecord *views;         /* capacity × n_views */

  guint n_columns;              /* 0 when the batch has no columns */
  gchar **column_names;
  const gchar **column_values;  /* capacity × n_columns, room for a NULL */
  const gchar **last_values;    /* the previous location's, for interning */
} WsiBatchMeta;

void wsi_batch_meta_init (WsiBatchMeta * m);
void wsi_batch_meta_clear (WsiBatchMeta * m);

/* Empties @m for a batch of up to @capacity locations. */
void wsi_batch_meta_start (WsiBatchMeta * m, guint capacity);

/* Appends location @i of the WsiPatchMeta @in (NULL when the buffer has
 * none: zero record with @sequence, empty path and label). With
 * @expect_views, the location must bring view records of names equal to
 * the batch's. Returns FALSE with a message in @error (free it) on a
 * mismatch or missing data. */
gboolean wsi_batch_meta_append (WsiBatchMeta * m, const GstStructure * in,
    guint i, guint64 sequence, gboolean expect_views, gchar ** error);

/* Attaches a WsiPatchMeta with what was appended to @buf. */
void wsi_batch_meta_attach (WsiBatchMeta * m, GstBuffer * buf);

/* The entries of a GStrv field of @s and their number, or NULL. */
const gchar *const *wsi_batch_meta_strv (const GstStructure * s,
    const gchar * field, guint * n);

G_END_DECLS

#endif /* __WSI_BATCH_META_H__ */
