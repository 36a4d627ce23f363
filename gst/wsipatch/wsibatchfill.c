/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsibatchfill.c: see wsibatchfill.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <gst/wsi/wsirecord.h>

#include "wsibatchalloc.h"
#include "wsibatchcopy.h"
#include "wsibatchdelivery.h"
#include "wsibatchfill.h"

#define GST_CAT_DEFAULT gst_patch_batch_debug

/* ---- the batch in progress --------------------------------------------- */

G_DEFINE_QUARK (wsi-batch-huge-pages, batch_huge_pages);

/* A batch is large (12 MiB for 64 RGB patches of 256 px) and lives in the
 * pool for the whole stream, but its first fill takes a page fault per
 * 4 KiB page written (3,072 a batch, several microseconds each in a VM)
 * unless the kernel backs it with transparent huge pages: where THP is
 * "madvise" (as on Ubuntu and on many VMs) it does so only when asked.
 * Asked once per memory, before anything is written; a no-op where THP is
 * "always" or off, and pages already touched are left as they are. */
static void
advise_huge_pages (GstMemory * mem, const GstMapInfo * map)
{
#ifdef MADV_HUGEPAGE
  const guintptr huge = 2u << 20;
  guintptr start = ((guintptr) map->data + huge - 1) & ~(huge - 1);
  guintptr end = ((guintptr) map->data + map->size) & ~(huge - 1);

  if (gst_mini_object_get_qdata (GST_MINI_OBJECT (mem),
          batch_huge_pages_quark ()) != NULL)
    return;
  gst_mini_object_set_qdata (GST_MINI_OBJECT (mem), batch_huge_pages_quark (),
      GINT_TO_POINTER (1), NULL);
  if (end > start && madvise ((void *) start, end - start, MADV_HUGEPAGE) != 0)
    GST_DEBUG ("no huge pages for batches: %s", g_strerror (errno));
#endif
}

/* Maps the batch for writing: the whole buffer for video batches, each
 * plane's memory for the others. */
static gboolean
map_batch (GstPatchBatch * self)
{
  guint i;

  if (wsi_batch_layout_video_output (&self->layout)) {
    if (!gst_buffer_map (self->batch, &self->maps[0], GST_MAP_WRITE))
      return FALSE;
    if (gst_buffer_n_memory (self->batch) == 1)
      advise_huge_pages (gst_buffer_peek_memory (self->batch, 0),
          &self->maps[0]);
    return TRUE;
  }
  if (gst_buffer_n_memory (self->batch) != self->layout.n_planes)
    return FALSE;
  for (i = 0; i < self->layout.n_planes; i++) {
    GstMemory *mem = gst_buffer_peek_memory (self->batch, i);

    if (mem->size < self->capacity * self->layout.out_bytes[i]
        || !gst_memory_map (mem, &self->maps[i], GST_MAP_WRITE)) {
      while (i-- > 0)
        gst_memory_unmap (gst_buffer_peek_memory (self->batch, i),
            &self->maps[i]);
      return FALSE;
    }
    advise_huge_pages (mem, &self->maps[i]);
  }
  return TRUE;
}

static void
unmap_batch (GstPatchBatch * self)
{
  guint i;

  if (wsi_batch_layout_video_output (&self->layout)) {
    gst_buffer_unmap (self->batch, &self->maps[0]);
    return;
  }
  for (i = 0; i < self->layout.n_planes; i++)
    gst_memory_unmap (gst_buffer_peek_memory (self->batch, i),
        &self->maps[i]);
}

static GstFlowReturn
start_batch (GstPatchBatch * self)
{
  GstFlowReturn ret;
  gsize bytes;
  gboolean reconfigure;

  GST_OBJECT_LOCK (self);
  self->capacity = self->batch_size;
  GST_OBJECT_UNLOCK (self);
  wsi_batch_meta_start (&self->meta, self->capacity);
  bytes = wsi_batch_layout_bytes (&self->layout, self->capacity);
  self->stream_copy = wsi_batch_copy_should_stream (bytes);

  if (!patch_batch_push_src_caps (self, wsi_batch_layout_caps (&self->layout,
              self->capacity)))
    return GST_FLOW_NOT_NEGOTIATED;

  /* always test (and so clear) the flag, which is set at link time */
  reconfigure = gst_pad_check_reconfigure (self->srcpad);
  if (reconfigure || self->pool == NULL
      || self->pool_capacity != self->capacity
      || !gst_caps_is_equal (self->src_caps, self->pool_caps)) {
    if (!patch_batch_decide_allocation (self, self->src_caps, bytes)) {
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
          ("Could not set up a buffer pool for batches of %u patches "
              "(%" G_GSIZE_FORMAT " bytes).", self->capacity, bytes), (NULL));
      return GST_FLOW_ERROR;
    }
  }

  ret = gst_buffer_pool_acquire_buffer (self->pool, &self->batch, NULL);
  if (ret != GST_FLOW_OK)
    return ret;
  if (gst_buffer_get_size (self->batch) < bytes || !map_batch (self)) {
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
        ("Could not write into a batch buffer of %" G_GSIZE_FORMAT " bytes.",
            bytes), (NULL));
    gst_clear_buffer (&self->batch);
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

void
patch_batch_discard_batch (GstPatchBatch * self)
{
  if (self->batch == NULL)
    return;
  GST_DEBUG_OBJECT (self, "discarding a batch of %u patches", self->meta.n);
  unmap_batch (self);
  gst_clear_buffer (&self->batch);
  self->meta.n = 0;
}

/* Hands the batch in progress downstream; a video batch shorter than the
 * capacity gets caps of its own first. */
GstFlowReturn
patch_batch_push_batch (GstPatchBatch * self)
{
  GstBuffer *buf = self->batch;
  guint n = self->meta.n;
  GstFlowReturn ret;

  unmap_batch (self);
  self->batch = NULL;

  if (wsi_batch_layout_video_output (&self->layout))
    wsi_batch_layout_set_video_meta (&self->layout, buf, n);
  else if (n < self->capacity)
    buf = wsi_batch_layout_cut_planar (&self->layout, buf, n);
  wsi_batch_meta_attach (&self->meta, buf);
  self->meta.n = 0;
  GST_BUFFER_OFFSET (buf) = self->batch_number;
  GST_BUFFER_OFFSET_END (buf) = self->batch_number + n;
  self->batch_number++;

  if (n < self->capacity
      && !patch_batch_push_src_caps (self, wsi_batch_layout_caps (&self->layout, n))) {
    GST_ELEMENT_WARNING (self, CORE, NEGOTIATION,
        ("Downstream refused the caps of a short batch (%u patches "
            "instead of %u): these patches are dropped.", n, self->capacity),
        ("use drop-remainder=true to drop short batches on purpose"));
    gst_buffer_unref (buf);
    return GST_FLOW_OK;
  }

  GST_LOG_OBJECT (self, "pushing batch %" G_GUINT64_FORMAT " of %u patches",
      GST_BUFFER_OFFSET (buf), n);
  wsi_stream_stats_add_batch (self->stats, GST_ELEMENT_CAST (self), buf);
  ret = gst_pad_push (self->srcpad, buf);
  if (ret == GST_FLOW_OK)
    g_atomic_int_inc (&self->batches_pushed);
  return ret;
}

/* ---- one location ------------------------------------------------------ */

/* Finds where the rows of a video @patch are; FALSE when it is too small. */
static gboolean
patch_layout (GstPatchBatch * self, GstBuffer * patch, gsize size,
    gsize * offset, gsize * stride)
{
  GstVideoMeta *vmeta = gst_buffer_get_video_meta (patch);
  guint height = GST_VIDEO_INFO_HEIGHT (&self->layout.in_info);

  if (vmeta) {
    *offset = vmeta->offset[0];
    *stride = vmeta->stride[0];
  } else if (size < GST_VIDEO_INFO_SIZE (&self->layout.in_info)
      && size == self->layout.patch_bytes) {
    /* tight RGB rows without a meta: take them as they are */
    *offset = 0;
    *stride = self->layout.row_bytes;
  } else {
    *offset = GST_VIDEO_INFO_PLANE_OFFSET (&self->layout.in_info, 0);
    *stride = GST_VIDEO_INFO_PLANE_STRIDE (&self->layout.in_info, 0);
  }
  return *stride >= self->layout.row_bytes
      && size >= *offset + (height - 1) * *stride + self->layout.row_bytes;
}

/* Writes one image (rows @stride bytes apart) into slot meta.n of plane
 * @plane: copied, or normalised into floats. */
static void
put_image (GstPatchBatch * self, guint plane, const guint8 * src,
    gsize stride)
{
  guint8 *dest = self->maps[plane].data + self->meta.n *
      self->layout.out_bytes[plane];
  gsize row_bytes =
      (gsize) self->layout.width[plane] * self->layout.pixel_bytes;
  guint row;

  if (self->layout.normalizing) {
    wsi_normalize_image (&self->layout.norm, src, stride,
        self->layout.width[plane], self->layout.height[plane],
        (gfloat *) dest);
  } else if (stride == row_bytes) {
    wsi_batch_copy (dest, src, self->layout.out_bytes[plane],
        self->stream_copy);
  } else {
    for (row = 0; row < self->layout.height[plane]; row++)
      memcpy (dest + row * row_bytes, src + row * stride, row_bytes);
  }
}

static gboolean
put_video_patch (GstPatchBatch * self, GstBuffer * patch)
{
  gsize offset, stride;
  GstMapInfo map;
  gboolean ok;

  if (!gst_buffer_map (patch, &map, GST_MAP_READ))
    return FALSE;
  ok = patch_layout (self, patch, map.size, &offset, &stride);
  if (ok)
    put_image (self, 0, map.data + offset, stride);
  gst_buffer_unmap (patch, &map);
  return ok;
}

static const gchar *
meta_path (GstStructure * meta)
{
  const gchar *path = meta ? wsi_patch_meta_string (meta, "paths", 0) : NULL;

  return path ? path : "(unknown)";
}

/* Locations in a multi-view buffer: the meta's count (1 without one). */
static guint
view_locations (GstStructure * meta)
{
  guint count = 1;

  if (meta)
    gst_structure_get_uint (meta, "count", &count);
  return count;
}

/* Learns the views' sizes from the first multi-view buffer of a stream:
 * memory sizes and the first location's view records must agree. */
static gboolean
learn_view_sizes (GstPatchBatch * self, GstBuffer * buf, GstStructure * meta,
    guint count, gchar ** error)
{
  guint n_records, v;
  const WsiViewRecord *views = meta ? wsi_patch_meta_views (meta, &n_records)
      : NULL;

  if (views == NULL || n_records < self->layout.n_planes) {
    *error = g_strdup ("a multi-view buffer has no view records, so the "
        "sizes of its views are unknown");
    return FALSE;
  }
  for (v = 0; v < self->layout.n_planes; v++) {
    gsize bytes = (gsize) views[v].out_width * views[v].out_height *
        self->layout.pixel_bytes;

    if (bytes == 0 || gst_buffer_peek_memory (buf, v)->size != count * bytes) {
      *error = g_strdup_printf ("view %u is %" G_GSIZE_FORMAT " bytes for %u "
          "locations, but its record says %ux%u at %u bytes a pixel", v,
          gst_buffer_peek_memory (buf, v)->size, count, views[v].out_width,
          views[v].out_height, self->layout.pixel_bytes);
      return FALSE;
    }
    self->layout.width[v] = views[v].out_width;
    self->layout.height[v] = views[v].out_height;
    self->layout.in_bytes[v] = bytes;
    self->layout.out_bytes[v] = self->layout.normalizing ?
        (gsize) self->layout.norm.n_channels * views[v].out_width *
        views[v].out_height * sizeof (gfloat) : bytes;
  }
  return TRUE;
}

/* Checks that @buf has n-views memories of @count images of the stream's
 * view sizes. */
static gboolean
check_views (GstPatchBatch * self, GstBuffer * buf, GstStructure * meta,
    guint count, gchar ** error)
{
  guint v;

  if (gst_buffer_n_memory (buf) != self->layout.n_planes) {
    *error = g_strdup_printf ("a multi-view buffer has %u memories for %u "
        "views", gst_buffer_n_memory (buf), self->layout.n_planes);
    return FALSE;
  }
  if (self->layout.in_bytes[0] == 0)
    return learn_view_sizes (self, buf, meta, count, error);
  for (v = 0; v < self->layout.n_planes; v++) {
    if (gst_buffer_peek_memory (buf, v)->size !=
        count * self->layout.in_bytes[v]) {
      *error = g_strdup_printf ("view %u is %" G_GSIZE_FORMAT " bytes for %u "
          "locations, %" G_GSIZE_FORMAT " expected: every location of a "
          "stream must have the same view sizes", v,
          gst_buffer_peek_memory (buf, v)->size, count,
          count * self->layout.in_bytes[v]);
      return FALSE;
    }
  }
  return TRUE;
}

/* Adds location @i of @patch (pixels mapped in @in_maps for views) and its
 * metadata to the batch, starting one if needed and pushing it when full. */
GstFlowReturn
patch_batch_add_location (GstPatchBatch * self, GstBuffer * patch, GstStructure * meta,
    GstMapInfo * in_maps, guint i)
{
  gchar *error = NULL;
  GstFlowReturn ret;
  guint v;

  if (self->batch == NULL && (ret = start_batch (self)) != GST_FLOW_OK)
    return ret;
  if (!self->layout.views_input && !put_video_patch (self, patch)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("A %dx%d %s patch of slide %s is only %" G_GSIZE_FORMAT " bytes, "
            "too small for its caps.",
            GST_VIDEO_INFO_WIDTH (&self->layout.in_info),
            GST_VIDEO_INFO_HEIGHT (&self->layout.in_info),
            GST_VIDEO_INFO_NAME (&self->layout.in_info), meta_path (meta),
            gst_buffer_get_size (patch)), (NULL));
    return GST_FLOW_ERROR;
  }
  for (v = 0; self->layout.views_input && v < self->layout.n_planes; v++)
    put_image (self, v, in_maps[v].data + i * self->layout.in_bytes[v],
        (gsize) self->layout.width[v] * self->layout.pixel_bytes);

  if (!wsi_batch_meta_append (&self->meta, meta, i,
          GST_BUFFER_OFFSET (patch) + i, self->layout.views_input, &error)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Bad metadata on a buffer of slide %s: %s.", meta_path (meta),
            error), (NULL));
    g_free (error);
    return GST_FLOW_ERROR;
  }
  if (self->meta.n == self->capacity)
    return patch_batch_push_batch (self);
  return GST_FLOW_OK;
}

GstFlowReturn
patch_batch_chain_views (GstPatchBatch * self, GstBuffer * buf, GstStructure * meta)
{
  GstMapInfo maps[MAX_VIEWS];
  guint count = view_locations (meta), v, i, mapped = 0;
  GstFlowReturn ret = GST_FLOW_OK;
  gchar *error = NULL;

  if (!check_views (self, buf, meta, count, &error)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Bad multi-view buffer of slide %s: %s.", meta_path (meta), error),
        (NULL));
    g_free (error);
    return GST_FLOW_ERROR;
  }
  for (v = 0; v < self->layout.n_planes; v++, mapped++)
    if (!gst_memory_map (gst_buffer_peek_memory (buf, v), &maps[v],
            GST_MAP_READ))
      break;
  if (mapped < self->layout.n_planes) {
    GST_ELEMENT_ERROR (self, RESOURCE, READ,
        ("Could not read view %u of a buffer of slide %s.", mapped,
            meta_path (meta)), (NULL));
    ret = GST_FLOW_ERROR;
  }
  for (i = 0; ret == GST_FLOW_OK && i < count; i++)
    ret = patch_batch_add_location (self, buf, meta, maps, i);
  for (v = 0; v < mapped; v++)
    gst_memory_unmap (gst_buffer_peek_memory (buf, v), &maps[v]);
  return ret;
}
