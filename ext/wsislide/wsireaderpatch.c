/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsireaderpatch.h"

#include <gst/video/video.h>
#include <string.h>

/* patchreader's category: these logs belong to the element. */
GST_DEBUG_CATEGORY_EXTERN (gst_patch_reader_debug);
#define GST_CAT_DEFAULT gst_patch_reader_debug

void
wsi_reader_patch_request (const WsiReaderPatchRead * how,
    const WsiPatchRecord * record, WsiReadRequest * request)
{
  memset (request, 0, sizeof (*request));
  request->x = record->x;
  request->y = record->y;
  request->width = request->height = record->footprint;
  request->resample_tolerance = how->resample_tolerance;
  request->native_scaling = how->native_scaling;
  request->tile_cache = how->tile_cache;
  request->grid_order = how->grid_order;
}

/* The record says what was really read. */
static void
record_report (WsiPatchRecord * record, const WsiReadReport * report)
{
  if (report->footprint_width != record->footprint) {
    record->out_mpp *= (gfloat) ((gdouble) report->footprint_width /
        record->footprint);
    record->footprint = (guint32) report->footprint_width;
  }
  record->x = report->x;
  record->y = report->y;
  record->level = report->level;
  record->read_size = (guint32) report->read_width;
}

/* Decodes @work's patch into its buffer; the outcome stays in @work. */
void
wsi_reader_patch_decode (WsiReaderPatch * work,
    const WsiReaderPatchRead * how, WsiReadContext * rctx,
    GstElement * element)
{
  WsiReaderSlide *ctx = work->slide;
  WsiPatchRecord *record = &work->record;
  WsiSlideHandle *handle;
  WsiReadRequest request;
  WsiReadReport report = { 0, };
  GstVideoFrame frame;
  WsiImage image;
  gboolean ok;

  /* Only a shortcut: the element drops given-up slides' patches too. */
  work->outcome = WSI_READER_PATCH_SKIPPED;
  if (g_atomic_int_get (&ctx->given_up))
    return;

  handle = wsi_slide_cache_acquire (how->slide_cache, ctx->file,
      &work->error);
  if (handle == NULL) {
    work->outcome = WSI_READER_PATCH_OPEN_FAILED;
    return;
  }
  work->outcome = WSI_READER_PATCH_FAILED;
  if (!gst_video_frame_map (&frame, &how->output->vinfo, work->buffer,
          GST_MAP_WRITE)) {
    wsi_slide_cache_release (how->slide_cache, handle);
    g_set_error (&work->error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "%s: could not map an output buffer", ctx->path);
    return;
  }
  image.data = GST_VIDEO_FRAME_PLANE_DATA (&frame, 0);
  image.stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);
  image.width = image.height = record->out_size;
  image.format = how->output->format;

  wsi_reader_patch_request (how, record, &request);
  ok = wsi_slide_cache_read_isolated (how->slide_cache, ctx->file, handle,
      rctx, &request, &image, &report,
      &work->error);
  gst_video_frame_unmap (&frame);
  record->level = report.level;
  if (!ok)
    return;

  record_report (record, &report);
  GST_LOG_OBJECT (element, "patch %" G_GUINT64_FORMAT " of %s: %s level %d, %"
      G_GINT64_FORMAT " px read, native 1/%u, %u tiles decoded, %u cached",
      record->sequence, ctx->path, report.backend, report.level,
      report.read_width, report.native_scale, report.tiles_decoded,
      report.tiles_from_cache);
  work->outcome = WSI_READER_PATCH_READ;
  work->backend = report.backend;
}

void
wsi_reader_patch_clear (WsiReaderPatch * work)
{
  gst_clear_buffer (&work->buffer);
  g_clear_error (&work->error);
}
