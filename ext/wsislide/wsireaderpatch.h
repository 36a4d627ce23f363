/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsireaderpatch.h: patchreader's work on one patch — the item its ordered
 * pool carries (record, slide, output buffer) and the read that a worker
 * thread makes of it.
 *
 * Contract: wsi_reader_patch_decode() reads @work's record from its slide
 * into @work->buffer (mapped with @how->output's video info and pixel
 * format) through @how's slide cache (the isolated retry read of
 * wsislidecache.h) and tile cache, and leaves the outcome in @work: READ
 * (the record then says what was really read: position, level, read size,
 * and footprint and out_mpp when the read layer moved them; backend names
 * the reader), FAILED or OPEN_FAILED (with @work->error), or SKIPPED
 * (the slide was given up before the read: no open, no decode). It judges
 * nothing: the element counts the outcome, applies the give-up rule and
 * passes or drops the patch in stream order. wsi_reader_patch_request()
 * is the read-layer request for a record under @how (the decode's, and
 * the remote prefetch's from the streaming thread). wsi_reader_patch_clear()
 * drops what a work item still holds (its buffer, its error).
 *
 * Cost: one slide-cache acquire and one region read per patch (the tile
 * decodes the read needs, minus those in the tile cache).
 *
 * Threading: decode runs on a pool worker with its own WsiReadContext and
 * no element lock held; @how is the element's settings as the worker took
 * the patch (atomics read once), the caches are thread-safe, and the slide
 * is only read (given_up is atomic). Logs go to patchreader's category,
 * on @element.
 */

#ifndef __WSI_READER_PATCH_H__
#define __WSI_READER_PATCH_H__

#include <gst/gst.h>
#include <gst/wsi/wsirecord.h>

#include "wsireaderoutput.h"
#include "wsireaderslide.h"
#include "wsislide.h"
#include "wsislidecache.h"
#include "wsitilecache.h"

G_BEGIN_DECLS

/* What the worker found; judged in stream order by the element. */
typedef enum
{
  WSI_READER_PATCH_READ,
  WSI_READER_PATCH_FAILED,      /* the read failed */
  WSI_READER_PATCH_OPEN_FAILED, /* the slide could not be opened */
  WSI_READER_PATCH_SKIPPED,     /* no read: the slide was given up */
} WsiReaderPatchOutcome;

/* A patch in the ordered pool: its record, its slide, the output buffer it
 * is decoded into, and what the worker found. */
typedef struct
{
  GstBuffer *buffer;
  WsiPatchRecord record;
  WsiReaderSlide *slide;
  WsiReaderPatchOutcome outcome;
  GError *error;
  const gchar *backend;         /* static name of the backend that read it */
  const gchar *class_name;      /* interned region class, NULL = none */
  gint32 class_id;
} WsiReaderPatch;

/* How patches are read now: the caches (valid from start to stop), the
 * negotiated output, and the settings a worker reads once per patch. */
typedef struct
{
  WsiSlideCache *slide_cache;
  WsiTileCache *tile_cache;
  const WsiReaderOutput *output;
  gdouble resample_tolerance;
  gboolean native_scaling;      /* dct-scaling */
  gboolean grid_order;
} WsiReaderPatchRead;

void wsi_reader_patch_request (const WsiReaderPatchRead * how,
    const WsiPatchRecord * record, WsiReadRequest * request);

void wsi_reader_patch_decode (WsiReaderPatch * work,
    const WsiReaderPatchRead * how, WsiReadContext * rctx,
    GstElement * element);

void wsi_reader_patch_clear (WsiReaderPatch * work);

G_END_DECLS

#endif /* __WSI_READER_PATCH_H__ */
