/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsireadtally.h: patchreader's accounting of its reads — the counters
 * behind patches-read, patches-failed and patches-skipped, and the
 * read-stats structure (patches and slides per backend, failed reads per
 * slide) that the wsistats tracer prints.
 *
 * Contract: wsi_read_tally_read() counts a patch read and, on the slide's
 * first read (*@slide_counted still FALSE), the slide for its backend;
 * wsi_read_tally_failed() counts a failed read of a slide and keeps the
 * first failure ("slide \"PATH\": reason") for the error of a stream in
 * which nothing could be read; wsi_read_tally_dropped() counts a patch
 * dropped after a failed read or without one (slide not opened or given
 * up, invalid record); wsi_read_tally_unread() keeps the reason a patch
 * was not read at all as the first failure when no read failed before it
 * (so a stream whose slide could not be opened names why). wsi_read_tally_stats() builds the structure:
 * "read-stats, BACKEND=(guint64)N, ..., slides=(structure)..., failed-slides
 * =< slide, path=..., failed-reads=N >", failed slides sorted by path so the
 * text is the same on every run. Backend names are static strings (the
 * read layer's), not copied.
 *
 * Cost: a mutex and a hash lookup per patch; the structure is built on
 * request.
 *
 * Threading: every function takes the tally's own lock; called from the
 * pool's source task (stream order), the streaming thread and
 * get_property.
 */

#ifndef __WSI_READ_TALLY_H__
#define __WSI_READ_TALLY_H__

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct
{
  GMutex lock;
  guint64 patches_read;
  guint64 patches_failed;
  guint64 patches_skipped;
  GHashTable *read_by_backend;  /* backend name (static) -> guint64 count */
  GHashTable *slides_by_backend;        /* backend (static) -> guint64 slides */
  GHashTable *failed_by_slide;  /* slide path (owned) -> guint64 failed reads */
  gchar *first_failure;         /* "slide: reason" of the first failed read */
} WsiReadTally;

void wsi_read_tally_init (WsiReadTally * tally);
void wsi_read_tally_clear (WsiReadTally * tally);
/* Every count back to zero (a new stream). */
void wsi_read_tally_reset (WsiReadTally * tally);

void wsi_read_tally_read (WsiReadTally * tally, const gchar * backend,
    gboolean * slide_counted);
void wsi_read_tally_failed (WsiReadTally * tally, const gchar * path,
    const gchar * reason);
void wsi_read_tally_unread (WsiReadTally * tally, const gchar * path,
    const gchar * reason);
/* A patch dropped: after a failed read (@failed) or without a read. */
void wsi_read_tally_dropped (WsiReadTally * tally, gboolean failed);

typedef enum
{
  WSI_READ_TALLY_READ,
  WSI_READ_TALLY_FAILED,
  WSI_READ_TALLY_SKIPPED,
} WsiReadTallyCount;

/* patches-read, patches-failed or patches-skipped. */
guint64 wsi_read_tally_patches (WsiReadTally * tally,
    WsiReadTallyCount which);

/* The counters, and (when @slides_failed / @first_failure are not NULL)
 * the number of slides with a failed read and a copy of the first
 * failure (NULL when none). */
void wsi_read_tally_get (WsiReadTally * tally, guint64 * read,
    guint64 * failed, guint64 * skipped, guint * slides_failed,
    gchar ** first_failure);

GstStructure *wsi_read_tally_stats (WsiReadTally * tally);

G_END_DECLS

#endif /* __WSI_READ_TALLY_H__ */
