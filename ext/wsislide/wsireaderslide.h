/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsireaderslide.h: patchreader's slides — what the stream knows about
 * each slide path (from its slide meta, kept until the element stops), the
 * rule that gives a slide up, and what the slide gives each of its
 * patches' metas.
 *
 * Contract: wsi_reader_slide_lookup() finds or makes the slide of a
 * coordinate buffer's `WsiSlideMeta` in the stream's table (path -> slide,
 * keyed by the file name's exact bytes: the meta's uri, else its path;
 * NULL when the meta names no path). wsi_reader_slide_label() stamps a
 * read patch: offset = sequence, no timestamps, the `WsiPatchMeta` with
 * the record, path and label (the region class for a patch sampled in an
 * annotation region), uri and level-0 mpp, and the slide's columns (plus
 * "class" and "class-id" for an annotated plan). The per-record classes of
 * an annotated plan are read with wsi_reader_patch_classes() and named
 * with wsi_reader_class_label() (interned, so they outlive the buffer).
 *
 * Cost: one hash lookup per coordinate buffer; one meta per patch.
 *
 * Threading: the table and the fields marked so belong to the streaming
 * thread or the source task (stream order); workers only read a slide;
 * given_up is atomic.
 */

#ifndef __WSI_READER_SLIDE_H__
#define __WSI_READER_SLIDE_H__

#include <gst/gst.h>
#include <gst/wsi/wsipoolelement.h>
#include <gst/wsi/wsirecord.h>

G_BEGIN_DECLS

/* What the stream knows about one slide path; lives until the element
 * stops, shared read-only by the workers (counters are atomic). */
typedef struct
{
  gchar *file;                  /* the file name's bytes, to open it */
  gchar *path;                  /* UTF-8 form, for messages and metadata */
  gchar *label;
  gchar **column_names;         /* the slide's columns (wsirecord.h v2) */
  gchar **column_values;
  gint consecutive_failures;    /* source task only (stream order) */
  gint given_up;                /* atomic flag, set by the source task */
  gchar *give_up_reason;        /* why, once given up (source task) */
  gboolean remote;              /* a URL: prefetch its tiles ahead */
  gboolean warned_failure;      /* its first failed read was shown */
  gboolean counted_backend;     /* its backend is in slides_by_backend */
  gchar *uri;                   /* the slide meta's, for the patch meta */
  gdouble mpp;                  /* level-0 mpp-x, 0 = unknown */
} WsiReaderSlide;

WsiReaderSlide *wsi_reader_slide_new (const gchar * file, const gchar * path,
    const gchar * label);
void wsi_reader_slide_free (WsiReaderSlide * ctx);

WsiReaderSlide *wsi_reader_slide_lookup (GHashTable * slides,
    const GstStructure * slide_meta);

void wsi_reader_slide_label (GstBuffer * buffer, WsiReaderSlide * ctx,
    const WsiPatchRecord * record, const gchar * class_name,
    gint32 class_id);

/* The give-up rule, on the source task in stream order (the same patches
 * fail and the same slide is given up at the same patch whatever the
 * thread timing): a failed read is warned about once per slide (later ones
 * go to the debug log); @max_failures in a row give the slide up, an open
 * that fails gives it up at once; a slide given up is warned about and
 * reported upstream (`wsi-slide-given-up`, wsislidesrc skips it from then
 * on), and its later patches are dropped without a read. */
void wsi_reader_slide_read_failed (WsiReaderSlide * ctx,
    WsiPoolElement * element, const WsiPatchRecord * record, gint level,
    const GError * error, guint max_failures);
void wsi_reader_slide_open_failed (WsiReaderSlide * ctx,
    WsiPoolElement * element, const WsiPatchRecord * record,
    const GError * error);

const gint32 *wsi_reader_patch_classes (const GstStructure * meta, gsize * n,
    const gchar * const **names);
const gchar *wsi_reader_class_label (const gchar * const *names, gint32 id,
    gint32 * class_id);

G_END_DECLS

#endif /* __WSI_READER_SLIDE_H__ */
