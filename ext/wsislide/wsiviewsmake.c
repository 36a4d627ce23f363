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

#include <math.h>
#include <string.h>

#include "wsiviewsmake.h"

/* Output side of @spec for a patch of side @patch_side. */
static guint
view_side (const WsiViewSpec * spec, guint patch_side)
{
  if (spec->kind == WSI_VIEW_KIND_PATCH || spec->size == 0)
    return patch_side;
  return spec->size;
}

/* The patch's pixels as the views read them: a mapped frame, or (a JPEG
 * patch) the crop decoder's image of the patch at 1 / scale, of which
 * only the part a view reads may be valid. */
typedef struct
{
  const guint8 *data;
  gsize stride;
  guint side;                   /* of the patch, before scaling */
  guint bpp;
  guint scale;                  /* 1, or the DCT scale decoded at */
} PatchPixels;

static void
patch_pixels_from_frame (PatchPixels * pixels, const GstVideoFrame * frame)
{
  pixels->data = GST_VIDEO_FRAME_PLANE_DATA (frame, 0);
  pixels->stride = GST_VIDEO_FRAME_PLANE_STRIDE (frame, 0);
  pixels->side = GST_VIDEO_FRAME_WIDTH (frame);
  pixels->bpp = GST_VIDEO_FRAME_COMP_PSTRIDE (frame, 0);
  pixels->scale = 1;
}

static void
patch_pixels_from_decoded (PatchPixels * pixels, guint side,
    const WsiDecodedPatch * decoded)
{
  pixels->data = decoded->data;
  pixels->stride = decoded->stride;
  pixels->side = side;
  pixels->bpp = decoded->bpp;
  pixels->scale = decoded->scale;
}

/* The patch as it is, rows packed tight. */
static void
copy_patch (const PatchPixels * pixels, guint8 * dst)
{
  gsize row = (gsize) pixels->side * pixels->bpp;
  guint y;

  for (y = 0; y < pixels->side; y++)
    memcpy (dst + y * row, pixels->data + y * pixels->stride, row);
}

/* Crop @box (patch pixels) of @pixels, resampled into @dst. At a DCT
 * scale the window is the box divided by it, in the scaled image. */
static gboolean
make_crop (const WsiViewsSources * src, WsiViewsThread * thread,
    const WsiViewsWork * work,
    const PatchPixels * pixels, const WsiCropBox * box, guint v, guint8 * dst,
    WsiViewRecord * vr)
{
  const WsiViewSpec *spec = &src->config->set->views[v];
  const WsiPatchRecord *rec = &work->record;
  guint side = pixels->side, scale = pixels->scale;
  guint scaled = (side + scale - 1) / scale;
  gdouble to_level0 = (gdouble) rec->footprint / side;

  if (!wsi_window_resize (thread->resizer, src->config->method,
          pixels->data, scaled, scaled, pixels->stride, pixels->bpp,
          box->x / scale, box->y / scale, box->width / scale,
          box->height / scale, dst, spec->size, spec->size,
          (gsize) spec->size * pixels->bpp))
    return FALSE;
  vr->x = rec->x + box->x * to_level0;
  vr->y = rec->y + box->y * to_level0;
  vr->width0 = (gfloat) (box->width * to_level0);
  vr->height0 = (gfloat) (box->height * to_level0);
  /* One number for both axes: the geometric mean of their mpps. */
  vr->mpp = (gfloat) (rec->out_mpp * sqrt (box->width * box->height)
      / spec->size);
  return TRUE;
}

/* The slide's level-0 mpp as the patch meta carries it (`mpps`: the slide
 * meta's mpp-x, default-mpp included), else as the opened slide reports it
 * (inputs that carry no `mpps`). Never worked back from the record: its
 * out_mpp is a rounded float of the read's scale, not the slide's. */
static gdouble
slide_mpp (GstBuffer * in, const WsiSlide * slide)
{
  gdouble mpp = wsi_patch_meta_mpp (wsi_patch_meta_get (in), 0);

  return mpp > 0.0 ? mpp : slide->mpp_x;
}

/* Level-0 side of the context view @spec of @rec, or 0 (with @reason)
 * when the mpp it asks for cannot be met. @mpp0 gets microns per level-0
 * pixel (0 when unknown). */
static gdouble
context_footprint (const WsiViewSpec * spec, const WsiPatchRecord * rec,
    gdouble slide_mpp, guint patch_side, gdouble * mpp0, gchar ** reason)
{
  guint side = view_side (spec, patch_side);

  *mpp0 = slide_mpp;
  if (spec->mpp_factor > 0.0)
    return rec->footprint * spec->mpp_factor * side / patch_side;
  if (*mpp0 > 0.0)
    return side * spec->mpp / *mpp0;
  *reason = g_strdup_printf ("context view \"%s\" asks for %g um/px but the "
      "slide has no mpp (give the context mpp as a factor such as 4x)",
      spec->name, spec->mpp);
  return 0.0;
}

/* The open slide of the patch in @in: by the file its patch meta names
 * (`uris`, set by patchreader), else by its display path; *@file is the
 * name it opened by. */
static WsiSlideHandle *
acquire_slide (const WsiViewsSources * src, GstBuffer * in, const gchar * path,
    gchar ** file, GError ** error)
{
  const gchar *uri = wsi_patch_meta_string (wsi_patch_meta_get (in), "uris",
      0);

  *file = wsi_slide_cache_file_name (uri, path);
  return wsi_slide_cache_acquire (src->slide_cache, *file, error);
}

static gboolean
make_context (const WsiViewsSources * src, WsiViewsThread * thread,
    WsiViewsWork * work,
    const gchar * path, guint v, guint8 * dst, WsiViewRecord * vr)
{
  const WsiViewSpec *spec = &src->config->set->views[v];
  const WsiPatchRecord *rec = &work->record;
  guint patch_side = GST_VIDEO_INFO_WIDTH (&work->info);
  guint side = view_side (spec, patch_side);
  WsiSlideHandle *handle;
  WsiReadRequest request = { 0, };
  WsiReadReport report = { 0, };
  WsiImage image;
  GError *error = NULL;
  gchar *file = NULL;
  gdouble footprint, mpp0, cx, cy;
  gboolean ok;
  gint64 f0;

  handle = acquire_slide (src, work->in, path, &file, &error);
  if (handle == NULL) {
    work->reason = g_strdup_printf ("context view \"%s\": %s", spec->name,
        error->message);
    g_error_free (error);
    g_free (file);
    return FALSE;
  }
  footprint = context_footprint (spec, rec, slide_mpp (work->in,
          handle->slide), patch_side, &mpp0, &work->reason);
  if (footprint <= 0.0) {
    wsi_slide_cache_release (src->slide_cache, handle);
    g_free (file);
    return FALSE;
  }

  /* Whole level-0 pixels around the patch's centre. */
  cx = rec->x + rec->footprint / 2.0;
  cy = rec->y + rec->footprint / 2.0;
  f0 = MAX ((gint64) llround (footprint), 1);
  request.x = (gint64) llround (cx - f0 / 2.0);
  request.y = (gint64) llround (cy - f0 / 2.0);
  request.width = request.height = f0;
  request.native_scaling = wsi_read_properties_dct_scaling (src->read);
  request.tile_cache = src->tile_cache;
  image.data = dst;
  image.stride = (gsize) side * GST_VIDEO_INFO_COMP_PSTRIDE (&work->info, 0);
  image.width = image.height = side;
  image.format = work->format;

  ok = wsi_slide_cache_read_isolated (src->slide_cache, file, handle,
      thread->rctx, &request, &image,
      &report, &error);
  g_free (file);
  if (!ok) {
    work->reason = g_strdup_printf ("context view \"%s\" at (%"
        G_GINT64_FORMAT ", %" G_GINT64_FORMAT "), %" G_GINT64_FORMAT
        " px: %s", spec->name, request.x, request.y, f0,
        error ? error->message : "read failed");
    g_clear_error (&error);
    return FALSE;
  }
  vr->x = report.x;
  vr->y = report.y;
  vr->width0 = (gfloat) report.footprint_width;
  vr->height0 = (gfloat) report.footprint_height;
  vr->mpp = (gfloat) (mpp0 * report.footprint_width / side);
  vr->flags |= WSI_VIEW_FLAG_CONTEXT;
  return TRUE;
}

/* The output meta: the input's fields, then the views. */
static void
add_views_meta (const WsiViewsSources * src, GstBuffer * out, GstBuffer * in,
    const WsiViewRecord * records, guint n_views)
{
  GstStructure *from = wsi_patch_meta_get (in);
  GstStructure *to;
  GBytes *bytes;

  to = gst_custom_meta_get_structure (gst_buffer_add_custom_meta (out,
          WSI_PATCH_META_NAME));
  gst_structure_foreach (from, wsi_structure_copy_field, to);
  bytes = g_bytes_new (records, n_views * sizeof (WsiViewRecord));
  gst_structure_set (to, "record-version", G_TYPE_UINT, WSI_RECORD_VERSION,
      "view-names", G_TYPE_STRV, src->config->names,
      "views", G_TYPE_BYTES, bytes, NULL);
  g_bytes_unref (bytes);
}

/* The crops of one location, drawn before anything is decoded, and (a
 * JPEG patch) how to decode for them. */
typedef struct
{
  WsiCropBox boxes[WSI_VIEWS_MAX];
  guint scales[WSI_VIEWS_MAX];  /* DCT scale of each crop's own decode */
  WsiCropPlan plan;
} LocationCrops;

/* The DCT scales crops of JPEG patches may be decoded at. Only 1/2, and
 * only for area crops: there a DCT-scaled decode stays >= 45 dB PSNR from
 * a full decode then a crop (pipelines_patchstore measures it), where 1/4
 * and 1/8 came out at 37 dB; bilinear crops sample two pixels without
 * antialiasing, which a DCT-scaled (low-passed) decode does not mimic
 * (31-37 dB), so they are decoded at full size: exactly as from pixels. */
guint
wsi_views_crop_max_dct_scale (const WsiViewsSources * src)
{
  if (!wsi_read_properties_dct_scaling (src->read)
      || src->config->method != WSI_RESIZE_AREA)
    return 1;
  return 2;
}

/* Draws every crop of @work's location; for a JPEG patch also picks the
 * decode (wsicropdecode.h): the largest DCT scale each crop allows
 * (wsi_views_crop_max_dct_scale()), one decode in all or one per crop. */
static void
plan_location (const WsiViewsSources * src, const WsiViewsWork * work,
    guint side,
    LocationCrops * crops)
{
  const WsiViewSet *set = src->config->set;
  guint max_scale = wsi_views_crop_max_dct_scale (src);
  WsiCropBox boxes[WSI_VIEWS_MAX];
  guint scales[WSI_VIEWS_MAX];
  gboolean need_whole = FALSE;
  guint v, n = 0;

  for (v = 0; v < set->n_views; v++) {
    const WsiViewSpec *spec = &set->views[v];

    crops->scales[v] = 1;
    if (spec->kind == WSI_VIEW_KIND_PATCH)
      need_whole = TRUE;
    if (spec->kind != WSI_VIEW_KIND_CROP)
      continue;
    wsi_view_draw_crop (spec, src->config->seed, work->record.sequence, v,
        side, &crops->boxes[v]);
    crops->scales[v] = wsi_crop_dct_scale (&crops->boxes[v], spec->size,
        max_scale);
    boxes[n] = crops->boxes[v];
    scales[n++] = crops->scales[v];
  }
  wsi_crop_plan (side, side, boxes, scales, n, need_whole, &crops->plan);
}

/* Decodes @work's JPEG at 1 / @scale, whole (@region NULL) or the part
 * crop @region reads, into @pixels (the thread's scratch). */
static gboolean
decode_patch (WsiViewsThread * thread, WsiViewsWork * work, guint scale,
    const WsiCropBox * region, PatchPixels * pixels)
{
  guint side = GST_VIDEO_INFO_WIDTH (&work->info);
  WsiCompressedPatch patch;
  WsiDecodedPatch decoded;
  GstMapInfo map;
  GError *error = NULL;
  gboolean ok;

  if (thread->crops == NULL) {
    work->reason = g_strdup ("out of memory for a JPEG decoder");
    return FALSE;
  }
  if (!gst_buffer_map (work->in, &map, GST_MAP_READ)) {
    work->reason = g_strdup ("could not map the compressed patch");
    return FALSE;
  }
  patch.data = map.data;
  patch.size = map.size;
  patch.width = patch.height = side;
  patch.format = work->format;
  ok = wsi_crop_decoder_decode (thread->crops, &patch, scale, region,
      &decoded, &error);
  gst_buffer_unmap (work->in, &map);
  if (!ok) {
    work->reason = g_strdup_printf ("the stored JPEG does not decode: %s",
        error->message);
    g_error_free (error);
    return FALSE;
  }
  work->decoded += decoded.decoded;
  patch_pixels_from_decoded (pixels, side, &decoded);
  return TRUE;
}

/* View @v of @work's location into @dst, its record into @vr; FALSE (with
 * work->reason) when it cannot be made. @pixels is the patch, NULL when
 * each crop decodes its own region (plan per_crop). */
static gboolean
make_view (const WsiViewsSources * src, WsiViewsThread * thread,
    WsiViewsWork * work,
    const PatchPixels * pixels, const LocationCrops * crops,
    const gchar * path, guint v, guint8 * dst, WsiViewRecord * vr)
{
  const WsiViewSpec *spec = &src->config->set->views[v];
  guint patch_side = GST_VIDEO_INFO_WIDTH (&work->info);
  PatchPixels own;

  vr->view_index = v;
  vr->out_width = vr->out_height = view_side (spec, patch_side);
  switch (spec->kind) {
    case WSI_VIEW_KIND_PATCH:
      copy_patch (pixels, dst);
      vr->x = work->record.x;
      vr->y = work->record.y;
      vr->width0 = vr->height0 = work->record.footprint;
      vr->mpp = work->record.out_mpp;
      return TRUE;
    case WSI_VIEW_KIND_CROP:
      if (pixels == NULL) {
        if (!decode_patch (thread, work, crops->scales[v], &crops->boxes[v],
                &own))
          return FALSE;
        pixels = &own;
      }
      if (make_crop (src, thread, work, pixels, &crops->boxes[v], v, dst,
              vr))
        return TRUE;
      work->reason = g_strdup ("out of memory resampling a crop");
      return FALSE;
    case WSI_VIEW_KIND_CONTEXT:
      return make_context (src, thread, work, path, v, dst, vr);
  }
  g_assert_not_reached ();
  return FALSE;
}

/* The output buffer: memory @mem cut into one shared memory per view
 * (@offsets: n_views + 1 boundaries), the location's meta. */
static GstBuffer *
wrap_views (const WsiViewsSources * src, WsiViewsWork * work, GstMemory * mem,
    const gsize * offsets, const WsiViewRecord * records, guint n_views)
{
  GstBuffer *out = gst_buffer_new ();
  guint v;

  for (v = 0; v < n_views; v++)
    gst_buffer_append_memory (out, gst_memory_share (mem, offsets[v],
            offsets[v + 1] - offsets[v]));
  GST_BUFFER_OFFSET (out) = work->record.sequence;
  add_views_meta (src, out, work->in, records, n_views);
  return out;
}

/* Every view of @work's location into @map's memory (at @offsets). */
static gboolean
make_all_views (const WsiViewsSources * src, WsiViewsThread * thread,
    WsiViewsWork * work,
    const gchar * path, guint8 * data, const gsize * offsets,
    WsiViewRecord * records)
{
  const WsiViewSet *set = src->config->set;
  guint side = GST_VIDEO_INFO_WIDTH (&work->info);
  LocationCrops crops;
  PatchPixels pixels, *patch = &pixels;
  GstVideoFrame frame;
  gboolean mapped = FALSE, ok = TRUE;
  guint v;

  plan_location (src, work, side, &crops);
  if (!work->compressed) {
    mapped = gst_video_frame_map (&frame, &work->info, work->in,
        GST_MAP_READ);
    if (!mapped) {
      work->reason = g_strdup ("could not map the patch");
      return FALSE;
    }
    patch_pixels_from_frame (&pixels, &frame);
  } else if (crops.plan.per_crop) {
    patch = NULL;
  } else {
    ok = decode_patch (thread, work, crops.plan.whole_scale, NULL, &pixels);
  }

  for (v = 0; v < set->n_views && ok; v++)
    ok = make_view (src, thread, work, patch, &crops, path, v,
        data + offsets[v], &records[v]);
  if (mapped)
    gst_video_frame_unmap (&frame);
  return ok;
}

/* Every view of @work's location into one allocation, one shared memory
 * per view; NULL (with work->reason) when a view could not be made. */
GstBuffer *
wsi_views_make (const WsiViewsSources * src, WsiViewsThread * thread,
    WsiViewsWork * work)
{
  const WsiViewSet *set = src->config->set;
  guint patch_side = GST_VIDEO_INFO_WIDTH (&work->info);
  guint bpp = GST_VIDEO_INFO_COMP_PSTRIDE (&work->info, 0);
  WsiViewRecord records[WSI_VIEWS_MAX];
  gsize offsets[WSI_VIEWS_MAX + 1];
  const gchar *path = NULL;
  GstMemory *mem;
  GstMapInfo map;
  GstBuffer *out = NULL;
  gboolean ok;
  guint v;

  offsets[0] = 0;
  for (v = 0; v < set->n_views; v++) {
    guint side = view_side (&set->views[v], patch_side);
    offsets[v + 1] = offsets[v] + (gsize) side * side * bpp;
  }
  if (set->has_context)
    path = wsi_patch_meta_string (wsi_patch_meta_get (work->in), "paths", 0);
  if (set->has_context && path == NULL) {
    work->reason = g_strdup ("the patch meta names no slide path");
    return NULL;
  }
  mem = gst_allocator_alloc (NULL, offsets[set->n_views], NULL);
  if (mem == NULL || !gst_memory_map (mem, &map, GST_MAP_WRITE)) {
    work->reason = g_strdup ("out of memory for the views");
    if (mem)
      gst_memory_unref (mem);
    return NULL;
  }
  memset (records, 0, sizeof (records));
  ok = make_all_views (src, thread, work, path, map.data, offsets, records);
  gst_memory_unmap (mem, &map);

  if (ok)
    out = wrap_views (src, work, mem, offsets, records, set->n_views);
  gst_memory_unref (mem);
  return out;
}

WsiViewsThread *
wsi_views_thread_new (void)
{
  WsiViewsThread *thread = g_new0 (WsiViewsThread, 1);

  thread->rctx = wsi_read_context_new ();
  thread->resizer = wsi_window_resizer_new ();
  thread->crops = wsi_crop_decoder_new ();
  return thread;
}

void
wsi_views_thread_free (WsiViewsThread * thread)
{
  wsi_read_context_free (thread->rctx);
  wsi_window_resizer_free (thread->resizer);
  wsi_crop_decoder_free (thread->crops);
  g_free (thread);
}
