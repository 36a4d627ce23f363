/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-patchstoresink
 * @title: patchstoresink
 *
 * patchstoresink writes a patch stream — the patches patchreader,
 * patchfilter or patchaugment push, each with its `WsiPatchMeta` — into a
 * patch store: a directory of fixed-size shards (#GstPatchStoreSink:patches-per-shard
 * patches each) holding the pixels, the full patch record, the slide path,
 * label and manifest columns of every patch, and a `manifest.json` (counts,
 * encoding, the settings of every element of the pipeline that made it,
 * wsislidesrc's seed, a crc32 per shard). patchstoresrc serves a store as
 * the same patches and metadata, for as many epochs as training needs,
 * without decoding a slide again. The layout is in docs/data-formats.md
 * ("Patch store").
 *
 * Every shard is written under a temporary name and renamed when complete;
 * the manifest is written last. A store is therefore either complete (it
 * has a manifest) or visibly incomplete, and a write that fails (disk
 * full: the error names the file) loses nothing already complete. An
 * interrupted extraction continues with #GstPatchStoreSink:resume: the
 * complete shards are kept, the stream's patches they already hold are
 * skipped (the stream is a pure function of its settings, so the first
 * patches are the same ones), and writing goes on from the next shard.
 * Patches written with `encoding=raw` come back byte for byte.
 *
 * After patchviews the sink stores multi-view locations
 * (`application/x-wsi-views`): one entry per location with every view, its
 * view record and name (store format version 2), served back by
 * patchstoresrc as patchviews pushed them. With `format=webdataset` each
 * location is one sample: KEY.NAME.jpg (or .png) per view, KEY.json with
 * the record and the views' records, KEY.cls (docs/data-formats.md).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 wsislidesrc location=slides/ ! tissuemask ! queue ! \
 *     patchsampler patch-size=256 patches-per-slide=100 ! patchinterleave ! \
 *     patchreader ! patchstoresink location=store/
 * ]| Extracts 100 patches of 256x256 from every slide of `slides/` into
 * the store `store/` and ends when every slide was visited once.
 * |[
 * gst-launch-1.0 wsislidesrc location=slides/ ! tissuemask ! queue ! \
 *     patchsampler patch-size=256 patches-per-slide=100 ! patchinterleave ! \
 *     patchreader ! patchviews preset=dinov2 seed=1 ! \
 *     patchstoresink location=views-store/ encoding=jpeg
 * ]| Stores the ten DINOv2 crops of every location, to serve the same
 * crops every epoch.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstpatchstoresink.h"
#include "gstwsistoreelements.h"
#include "wsipipelinesettings.h"
#include "wsishardreader.h"
#include "wsishardwriter.h"
#include "wsistorecodec.h"
#include "wsistoremanifest.h"
#include "wsistoreresume.h"
#include "wsiwebdataset.h"

#include <gst/wsi/wsienumtype.h>
#include <gst/wsi/wsierrorrelay.h>
#include <gst/wsi/wsirefusal.h>

#include <errno.h>
#include <gio/gio.h>
#include <gst/video/video.h>
#include <string.h>

GST_DEBUG_CATEGORY (gst_patch_store_sink_debug);
#define GST_CAT_DEFAULT gst_patch_store_sink_debug

#define DEFAULT_PATCHES_PER_SHARD 1024
#define MAX_PATCHES_PER_SHARD (1 << 20)
#define DEFAULT_ENCODING WSI_STORE_ENCODING_RAW
#define DEFAULT_QUALITY 90
#define DEFAULT_CHROMA GST_PATCH_STORE_CHROMA_420
#define DEFAULT_FORMAT GST_PATCH_STORE_FORMAT_NATIVE

enum
{
  PROP_0,
  PROP_LOCATION,
  PROP_ENCODING,
  PROP_QUALITY,
  PROP_CHROMA,
  PROP_PATCHES_PER_SHARD,
  PROP_FORMAT,
  PROP_RESUME,
  PROP_PATCHES_WRITTEN,
  PROP_PATCHES_RESUMED,
  PROP_SHARDS_WRITTEN,
};

#define GST_TYPE_PATCH_STORE_ENCODING (gst_patch_store_encoding_get_type ())
static GType
gst_patch_store_encoding_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {WSI_STORE_ENCODING_RAW, "uint8 pixels as they came, exact (width x "
          "height x channels bytes per patch)", "raw"},
    {WSI_STORE_ENCODING_YUV420, "Planar YUV 4:2:0 (BT.601 full range): half "
          "the bytes of RGB, decoded without entropy decoding", "yuv420"},
    {WSI_STORE_ENCODING_JPEG, "Baseline JPEG (libjpeg-turbo) at quality, "
          "chroma 4:4:4 or 4:2:0", "jpeg"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type, "GstPatchStoreEncoding", values);
}

typedef enum
{
  GST_PATCH_STORE_CHROMA_444,
  GST_PATCH_STORE_CHROMA_420,
} GstPatchStoreChroma;

#define GST_TYPE_PATCH_STORE_CHROMA (gst_patch_store_chroma_get_type ())
static GType
gst_patch_store_chroma_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_PATCH_STORE_CHROMA_444, "Full-resolution colour (4:4:4)", "444"},
    {GST_PATCH_STORE_CHROMA_420, "Colour at half resolution in both "
          "directions (4:2:0): smaller, softer colour edges", "420"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type, "GstPatchStoreChroma", values);
}

typedef enum
{
  GST_PATCH_STORE_FORMAT_NATIVE,
  GST_PATCH_STORE_FORMAT_WEBDATASET,
} GstPatchStoreFormat;

#define GST_TYPE_PATCH_STORE_FORMAT (gst_patch_store_format_get_type ())
static GType
gst_patch_store_format_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_PATCH_STORE_FORMAT_NATIVE, "The patch store patchstoresrc serves "
          "(shards, index, manifest)", "native"},
    {GST_PATCH_STORE_FORMAT_WEBDATASET, "webdataset tar shards: KEY.jpg "
          "(encoding=jpeg) or KEY.png (multi-view locations: KEY.NAME.jpg "
          "per view), KEY.json (record, path, label, columns, views), "
          "KEY.cls (label)", "webdataset"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type, "GstPatchStoreFormat", values);
}

struct _GstPatchStoreSink
{
  GstBaseSink parent;

  /* properties, under the object lock */
  gchar *location;
  WsiStoreEncoding encoding;
  guint quality;
  GstPatchStoreChroma chroma;
  guint patches_per_shard;
  GstPatchStoreFormat format;
  gboolean resume;

  /* counters, under the object lock */
  guint64 patches_written;
  guint64 patches_resumed;
  guint shards_written;

  /* streaming state (start to stop) */
  gchar *dir;                   /* location as the stream started */
  guint stream_patches_per_shard;
  WsiStoreManifest *manifest;   /* shards finished so far */
  WsiShardWriter *writer;       /* the shard being written, or NULL */
  WsiWebDatasetWriter *webdataset;      /* format=webdataset instead */
  guint64 skip_remaining;       /* patches the resumed shards already hold */
  GstVideoInfo vinfo;
  gboolean have_vinfo;
  gboolean views;               /* the stream is multi-view locations */
  WsiStoreEncoding stream_encoding;     /* the settings as the stream started */
  GstPatchStoreFormat stream_format;
  guint stream_quality;
  gboolean stream_420;
  WsiStoreCodec *codec;
  WsiStorePixels pixels;
  GByteArray *scratch;          /* one patch's payload */
  gboolean failed;              /* a write failed: never write the manifest */
};

#define gst_patch_store_sink_parent_class parent_class
G_DEFINE_TYPE (GstPatchStoreSink, gst_patch_store_sink, GST_TYPE_BASE_SINK);

GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (patchstoresink, "patchstoresink",
    GST_RANK_NONE, GST_TYPE_PATCH_STORE_SINK,
    wsistore_element_init (plugin);
    GST_DEBUG_CATEGORY_INIT (gst_patch_store_sink_debug, "patchstoresink", 0,
        "patch store writer"));

#define SINK_FORMATS "{ RGB, RGBA, RGBx, BGRx, GRAY8 }"

/* patches, or patchviews' multi-view locations */
static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw, format = (string) " SINK_FORMATS
        ", width = (int) [ 1, 65536 ], height = (int) [ 1, 65536 ]; "
        WSI_VIEWS_MEDIA_TYPE ", format = (string) { RGB, RGBA, RGBx, BGRx }, "
        "n-views = (int) [ 1, 16 ]"));

/* ---- opening the store directory (wsistoreresume.h) ------------------- */

/* format=webdataset: a fresh directory of tar shards, nothing resumed. */
static gboolean
start_webdataset (GstPatchStoreSink * self, gboolean resume)
{
  gchar *first = g_build_filename (self->dir, "shard-000000.tar", NULL);
  gboolean exists = g_file_test (first, G_FILE_TEST_EXISTS);

  g_free (first);
  if (resume) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("resume=true is for the "
            "native store format; a webdataset export is written whole."),
        (NULL));
    return FALSE;
  }
  if (g_mkdir_with_parents (self->dir, 0755) != 0) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
        ("Could not create the export directory \"%s\": %s", self->dir,
            g_strerror (errno)), (NULL));
    return FALSE;
  }
  if (exists) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
        ("\"%s\" already holds webdataset shards; remove them or choose "
            "another location.", self->dir), (NULL));
    return FALSE;
  }
  self->webdataset = wsi_web_dataset_writer_new (self->dir,
      self->stream_patches_per_shard);
  return TRUE;
}

static gboolean
gst_patch_store_sink_start (GstBaseSink * sink)
{
  GstPatchStoreSink *self = GST_PATCH_STORE_SINK (sink);
  gboolean resume;

  GST_OBJECT_LOCK (self);
  self->dir = g_strdup (self->location);
  self->stream_patches_per_shard = self->patches_per_shard;
  self->stream_encoding = self->encoding;
  self->stream_quality = self->quality;
  self->stream_420 = self->chroma == GST_PATCH_STORE_CHROMA_420;
  self->stream_format = self->format;
  resume = self->resume;
  self->patches_written = self->patches_resumed = 0;
  self->shards_written = 0;
  GST_OBJECT_UNLOCK (self);

  if (self->dir == NULL || *self->dir == '\0') {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No patch store directory given (set location)."), (NULL));
    return FALSE;
  }
  self->have_vinfo = FALSE;
  self->views = FALSE;
  self->failed = FALSE;
  if (self->stream_format == GST_PATCH_STORE_FORMAT_WEBDATASET)
    return start_webdataset (self, resume);
  self->manifest = wsi_store_manifest_new ();
  self->manifest->encoding = self->stream_encoding;
  self->manifest->quality = self->stream_quality;
  self->manifest->subsampling = g_strdup (self->stream_420 ? "420" : "444");
  self->manifest->patches_per_shard = self->stream_patches_per_shard;
  /* The pipeline's settings as the stream starts, read here in the thread
   * that changes the state (the application's), not at EOS in a streaming
   * thread: reading every property runs foreign getters, and some have
   * process-wide side effects on the calling thread (patchreader's
   * prefetch-* initialise libcurl, hence OpenSSL, whose per-thread state
   * then dies with a pooled streaming thread that may exit while the
   * process exits and OpenSSL's atexit cleanup frees the same state: a
   * double free, SIGABRT). */
  self->manifest->pipeline = wsi_pipeline_settings_describe (GST_ELEMENT
      (self), &self->manifest->has_seed, &self->manifest->seed);
  return wsi_store_resume_prepare (GST_ELEMENT (self), self->dir,
      self->manifest, resume, &self->skip_remaining);
}

static gboolean
gst_patch_store_sink_stop (GstBaseSink * sink)
{
  GstPatchStoreSink *self = GST_PATCH_STORE_SINK (sink);

  /* A shard cut short is not kept: resume writes it again. */
  if (self->writer)
    wsi_shard_writer_abandon (g_steal_pointer (&self->writer));
  if (self->webdataset)
    wsi_web_dataset_writer_abandon (g_steal_pointer (&self->webdataset));
  g_clear_pointer (&self->manifest, wsi_store_manifest_free);
  g_clear_pointer (&self->dir, g_free);
  return TRUE;
}

/* ---- writing ----------------------------------------------------------- */

/* The pixel format of @caps (patches or views) and whether they are
 * views; FALSE when the caps say neither. */
static gboolean
parse_caps (GstCaps * caps, GstVideoInfo * vinfo, const gchar ** format,
    gboolean * views)
{
  GstStructure *s = gst_caps_get_structure (caps, 0);

  *views = gst_structure_has_name (s, WSI_VIEWS_MEDIA_TYPE);
  if (*views) {
    *format = gst_structure_get_string (s, "format");
    return *format != NULL;
  }
  if (!gst_video_info_from_caps (vinfo, caps))
    return FALSE;
  *format = GST_VIDEO_INFO_NAME (vinfo);
  return TRUE;
}

static gboolean
gst_patch_store_sink_set_caps (GstBaseSink * sink, GstCaps * caps)
{
  GstPatchStoreSink *self = GST_PATCH_STORE_SINK (sink);
  GstVideoInfo vinfo;
  const gchar *format;
  gboolean views;

  gst_video_info_init (&vinfo);
  if (!parse_caps (caps, &vinfo, &format, &views))
    return FALSE;
  if (self->manifest == NULL) {
    /* format=webdataset: patches, or views (one image per view) */
    self->views = views;
    self->vinfo = vinfo;
    self->have_vinfo = wsi_store_pixels_from_format (format, &self->pixels);
    return self->have_vinfo;
  }
  if (self->manifest->video_format != NULL
      && (strcmp (self->manifest->video_format, format) != 0
          || views != self->views)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("The patch store \"%s\" holds %s %s; the stream changed to %s %s "
            "(one store holds one pixel format, patches or views).",
            self->dir, self->manifest->video_format, self->views ? "views" :
            "patches", format, views ? "views" : "patches"), (NULL));
    return FALSE;
  }
  if (!wsi_store_pixels_from_format (format, &self->pixels))
    return FALSE;
  g_free (self->manifest->video_format);
  self->manifest->video_format = g_strdup (format);
  self->manifest->version = views ? WSI_STORE_VERSION_VIEWS :
      WSI_STORE_VERSION;
  self->views = views;
  self->vinfo = vinfo;
  self->have_vinfo = TRUE;
  return TRUE;
}

static GstFlowReturn
write_error (GstPatchStoreSink * self, GError * error)
{
  self->failed = TRUE;
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE))
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, ("%s. The complete "
            "shards are kept; set resume=true to continue.", error->message),
        (NULL));
  else
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE, ("%s", error->message),
        (NULL));
  g_error_free (error);
  return GST_FLOW_ERROR;
}

/* Finishes the shard being written and lists it in the manifest. */
static gboolean
finish_shard (GstPatchStoreSink * self, GError ** error)
{
  WsiShardSummary summary = { 0, };

  if (!wsi_shard_writer_finish (g_steal_pointer (&self->writer), &summary,
          error))
    return FALSE;
  GST_DEBUG_OBJECT (self, "finished %s: %u patches, %" G_GUINT64_FORMAT
      " bytes", summary.name, summary.n_patches, summary.bytes);
  g_array_append_val (self->manifest->shards, summary);
  GST_OBJECT_LOCK (self);
  self->shards_written++;
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

/* After a webdataset sample went out (or failed with @error). */
static GstFlowReturn
sample_added (GstPatchStoreSink * self, gboolean ok, GError * error)
{
  if (!ok)
    return write_error (self, error);
  GST_OBJECT_LOCK (self);
  self->patches_written++;
  self->shards_written = wsi_web_dataset_writer_shards (self->webdataset);
  GST_OBJECT_UNLOCK (self);
  return GST_FLOW_OK;
}

static gboolean encode_view (GstPatchStoreSink * self, GstBuffer * buffer,
    guint v, gboolean png, WsiStoreView * view, GError ** error);
static void slide_from_meta (const GstStructure * meta,
    WsiStoreSlideRef * slide);

/* The views of a multi-view location (patchviews' meta): @n (1 to 16)
 * view records and as many names, both owned by @meta. FALSE, with the
 * element error posted, when the meta does not hold them. */
static gboolean
location_views (GstPatchStoreSink * self, const GstStructure * meta,
    const WsiViewRecord ** records, const gchar * const **names, guint * n)
{
  const GValue *value = gst_structure_get_value (meta, "views");
  GBytes *bytes = value && G_VALUE_HOLDS (value, G_TYPE_BYTES) ?
      g_value_get_boxed (value) : NULL;
  gsize size = 0;

  *names = wsi_structure_get_strv (meta, "view-names");
  *records = bytes ? g_bytes_get_data (bytes, &size) : NULL;
  *n = size / sizeof (WsiViewRecord);
  if (*records == NULL || *n == 0 || *n > 16 || *names == NULL
      || g_strv_length ((gchar **) * names) != *n) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("A multi-view location "
            "without its views and view-names (patchviews' meta)."), (NULL));
    return FALSE;
  }
  return TRUE;
}

/* format=webdataset, a multi-view location: one sample, KEY.NAME.jpg (or
 * .png) per view, KEY.json with the record and the views' records,
 * KEY.cls. */
static GstFlowReturn
write_views_sample (GstPatchStoreSink * self, GstBuffer * buffer,
    const GstStructure * meta, const WsiPatchRecord * record)
{
  const gchar *const *names;
  gboolean jpeg = self->stream_encoding == WSI_STORE_ENCODING_JPEG;
  const WsiViewRecord *records;
  WsiWebDatasetImage images[16];
  WsiStoreView views[16];
  WsiStoreSlideRef slide = { 0, };
  GError *error = NULL;
  guint v, n;
  gboolean ok = TRUE;

  if (!location_views (self, meta, &records, &names, &n))
    return GST_FLOW_ERROR;
  /* every view encoded into self->scratch first: it may move as it grows */
  g_byte_array_set_size (self->scratch, 0);
  memset (views, 0, sizeof (views));
  for (v = 0; v < n && ok; v++) {
    views[v].record = records[v];
    ok = encode_view (self, buffer, v, !jpeg, &views[v], &error);
  }
  for (v = 0; v < n && ok; v++) {
    images[v].name = names[v];
    images[v].view = &records[v];
    images[v].data = self->scratch->data + views[v].offset;
    images[v].size = views[v].size;
  }
  slide_from_meta (meta, &slide);
  ok = ok && wsi_web_dataset_writer_add (self->webdataset, jpeg ? "jpg" :
      "png", images, n, record, &slide, &error);
  return sample_added (self, ok, error);
}

/* format=webdataset: the patch as KEY.jpg or KEY.png, KEY.json, KEY.cls. */
static GstFlowReturn
write_sample (GstPatchStoreSink * self, GstBuffer * buffer,
    const GstStructure * meta, const WsiPatchRecord * record)
{
  WsiStoreSlideRef slide = { 0, };
  gboolean jpeg = self->stream_encoding == WSI_STORE_ENCODING_JPEG;
  GstVideoFrame frame;
  GError *error = NULL;
  gboolean ok;

  if (!gst_video_frame_map (&frame, &self->vinfo, buffer, GST_MAP_READ)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not read a patch "
            "buffer."), (NULL));
    return GST_FLOW_ERROR;
  }
  slide_from_meta (meta, &slide);
  g_byte_array_set_size (self->scratch, 0);
  if (jpeg)
    ok = wsi_store_encode (self->codec, WSI_STORE_ENCODING_JPEG,
        self->stream_quality, self->stream_420, &self->pixels,
        GST_VIDEO_FRAME_PLANE_DATA (&frame, 0),
        GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0),
        GST_VIDEO_FRAME_WIDTH (&frame), GST_VIDEO_FRAME_HEIGHT (&frame),
        self->scratch, &error);
  else
    ok = wsi_store_encode_png (&self->pixels,
        GST_VIDEO_FRAME_PLANE_DATA (&frame, 0),
        GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0),
        GST_VIDEO_FRAME_WIDTH (&frame), GST_VIDEO_FRAME_HEIGHT (&frame),
        self->scratch, &error);
  gst_video_frame_unmap (&frame);
  if (ok) {
    WsiWebDatasetImage image = { NULL, NULL, self->scratch->data,
      self->scratch->len
    };

    ok = wsi_web_dataset_writer_add (self->webdataset, jpeg ? "jpg" : "png",
        &image, 1, record, &slide, &error);
  }
  return sample_added (self, ok, error);
}

/* The slide of the patch of @meta, as the shard's slide table keeps it. */
static void
slide_from_meta (const GstStructure * meta, WsiStoreSlideRef * slide)
{
  slide->path = wsi_patch_meta_string (meta, "paths", 0);
  slide->uri = wsi_patch_meta_string (meta, "uris", 0);
  slide->label = wsi_patch_meta_string (meta, "labels", 0);
  slide->column_names = wsi_structure_get_strv (meta, "column-names");
  slide->column_values = wsi_structure_get_strv (meta, "column-values");
  slide->mpp = wsi_patch_meta_mpp (meta, 0);
}

/* The shard being written, started when needed; FALSE with @error. */
static gboolean
ensure_writer (GstPatchStoreSink * self, GError ** error)
{
  if (self->writer == NULL)
    self->writer = wsi_shard_writer_new (self->dir,
        self->manifest->shards->len, self->stream_encoding,
        self->manifest->video_format, self->views, error);
  return self->writer != NULL;
}

/* After a patch or location went into the shard: the shard is finished
 * when full; the count goes up. */
static GstFlowReturn
patch_added (GstPatchStoreSink * self, gboolean ok, GError * error)
{
  if (ok && wsi_shard_writer_count (self->writer) >=
      self->stream_patches_per_shard)
    ok = finish_shard (self, &error);
  if (!ok)
    return write_error (self, error);
  GST_OBJECT_LOCK (self);
  self->patches_written++;
  GST_OBJECT_UNLOCK (self);
  return GST_FLOW_OK;
}

/* Encodes memory @v of @buffer (view @v, @record's size, tight rows) at
 * the end of self->scratch, as the store's encoding or (@png, webdataset
 * exports of raw pixels) as PNG; fills in @view's place and size. */
static gboolean
encode_view (GstPatchStoreSink * self, GstBuffer * buffer, guint v,
    gboolean png, WsiStoreView * view, GError ** error)
{
  guint width = view->record.out_width, height = view->record.out_height;
  gsize row = (gsize) width * self->pixels.channels;
  GstMapInfo map;
  gboolean ok;

  if (v >= gst_buffer_n_memory (buffer)
      || !gst_buffer_map_range (buffer, v, 1, &map, GST_MAP_READ)) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
        "view %u is missing from the buffer", v);
    return FALSE;
  }
  if (map.size < row * height) {
    gst_buffer_unmap (buffer, &map);
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
        "view %u holds %" G_GSIZE_FORMAT " bytes, not %ux%u pixels", v,
        map.size, width, height);
    return FALSE;
  }
  view->offset = self->scratch->len;
  if (png)
    ok = wsi_store_encode_png (&self->pixels, map.data, row, width, height,
        self->scratch, error);
  else
    ok = wsi_store_encode (self->codec, self->stream_encoding,
        self->stream_quality, self->stream_420, &self->pixels, map.data, row,
        width, height, self->scratch, error);
  gst_buffer_unmap (buffer, &map);
  view->size = self->scratch->len - view->offset;
  return ok;
}

/* One multi-view location: the views header, the view table and every
 * view's payload (wsistoreformat.h), as one entry. */
static GstFlowReturn
write_location (GstPatchStoreSink * self, GstBuffer * buffer,
    const GstStructure * meta, const WsiPatchRecord * record)
{
  const gchar *const *names;
  const WsiViewRecord *records;
  WsiStoreSlideRef slide = { 0, };
  WsiStoreViewsHeader header = { 0, };
  WsiStoreView views[16];
  GError *error = NULL;
  guint v, n;
  gboolean ok = TRUE;

  if (!location_views (self, meta, &records, &names, &n))
    return GST_FLOW_ERROR;
  if (!ensure_writer (self, &error))
    return write_error (self, error);
  memset (views, 0, sizeof (views));
  header.n_views = n;
  g_byte_array_set_size (self->scratch, 0);
  g_byte_array_append (self->scratch, (const guint8 *) &header,
      sizeof (header));
  g_byte_array_append (self->scratch, (const guint8 *) views,
      n * sizeof (WsiStoreView));
  for (v = 0; v < n && ok; v++) {
    views[v].record = records[v];
    g_strlcpy (views[v].name, names[v], sizeof (views[v].name));
    ok = encode_view (self, buffer, v, FALSE, &views[v], &error);
  }
  if (!ok) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not store a multi-view "
            "location."), ("%s", error->message));
    g_error_free (error);
    return GST_FLOW_ERROR;
  }
  memcpy (self->scratch->data + sizeof (header), views,
      n * sizeof (WsiStoreView));
  slide_from_meta (meta, &slide);
  ok = wsi_shard_writer_add (self->writer, record, records[0].out_width,
      records[0].out_height, self->pixels.channels, n, self->scratch->data,
      self->scratch->len, &slide, &error);
  return patch_added (self, ok, error);
}

static GstFlowReturn
write_patch (GstPatchStoreSink * self, GstBuffer * buffer,
    const GstStructure * meta, const WsiPatchRecord * record)
{
  WsiStoreSlideRef slide = { 0, };
  GstVideoFrame frame;
  GError *error = NULL;
  gboolean ok;

  if (self->webdataset != NULL)
    return self->views ? write_views_sample (self, buffer, meta, record) :
        write_sample (self, buffer, meta, record);
  if (self->views)
    return write_location (self, buffer, meta, record);
  if (!ensure_writer (self, &error))
    return write_error (self, error);
  if (!gst_video_frame_map (&frame, &self->vinfo, buffer, GST_MAP_READ)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not read a patch "
            "buffer."), (NULL));
    return GST_FLOW_ERROR;
  }
  slide_from_meta (meta, &slide);
  g_byte_array_set_size (self->scratch, 0);
  ok = wsi_store_encode (self->codec, self->stream_encoding,
      self->stream_quality, self->stream_420, &self->pixels,
      GST_VIDEO_FRAME_PLANE_DATA (&frame, 0),
      GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0),
      GST_VIDEO_FRAME_WIDTH (&frame), GST_VIDEO_FRAME_HEIGHT (&frame),
      self->scratch, &error);
  ok = ok && wsi_shard_writer_add (self->writer, record,
      GST_VIDEO_FRAME_WIDTH (&frame), GST_VIDEO_FRAME_HEIGHT (&frame),
      self->pixels.channels, 0, self->scratch->data, self->scratch->len,
      &slide, &error);
  gst_video_frame_unmap (&frame);
  return patch_added (self, ok, error);
}

static GstFlowReturn
gst_patch_store_sink_render (GstBaseSink * sink, GstBuffer * buffer)
{
  GstPatchStoreSink *self = GST_PATCH_STORE_SINK (sink);
  const GstStructure *meta = wsi_patch_meta_get (buffer);
  const WsiPatchRecord *records;
  guint n = 0;

  if (self->failed)
    return GST_FLOW_ERROR;
  if (self->skip_remaining > 0) {
    /* already in a complete shard of the store we resume */
    self->skip_remaining--;
    GST_OBJECT_LOCK (self);
    self->patches_resumed++;
    GST_OBJECT_UNLOCK (self);
    return GST_FLOW_OK;
  }
  records = meta ? wsi_patch_meta_records (meta, &n) : NULL;
  if (records == NULL || n != 1 || !self->have_vinfo) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("patchstoresink stores single patches with their WsiPatchMeta (from "
            "patchreader, patchfilter or patchaugment); this buffer has %s.",
            meta == NULL ? "no WsiPatchMeta" : n > 1 ? "a batch (put "
            "patchstoresink before patchbatch)" : "no patch record"), (NULL));
    return GST_FLOW_ERROR;
  }
  return write_patch (self, buffer, meta, records);
}

/* End of stream: the last (short) shard, then the manifest. */
static gboolean
finish_store (GstPatchStoreSink * self)
{
  GError *error = NULL;
  guint i;

  /* An EOS after a failed write (upstream ends its stream on our error)
   * must not make the store look complete. */
  if (self->failed)
    return FALSE;
  if (self->webdataset != NULL) {
    if (!wsi_web_dataset_writer_finish (g_steal_pointer (&self->webdataset),
            &error)) {
      write_error (self, error);
      return FALSE;
    }
    return TRUE;
  }
  if (self->writer != NULL && wsi_shard_writer_count (self->writer) > 0) {
    if (!finish_shard (self, &error)) {
      write_error (self, error);
      return FALSE;
    }
  } else if (self->writer != NULL) {
    wsi_shard_writer_abandon (g_steal_pointer (&self->writer));
  }
  self->manifest->n_patches = 0;
  for (i = 0; i < self->manifest->shards->len; i++)
    self->manifest->n_patches += g_array_index (self->manifest->shards,
        WsiShardSummary, i).n_patches;
  if (self->manifest->video_format == NULL)
    self->manifest->video_format = g_strdup ("RGB");
  if (!wsi_store_manifest_write (self->manifest, self->dir, &error)) {
    write_error (self, error);
    return FALSE;
  }
  GST_INFO_OBJECT (self, "store %s complete: %" G_GUINT64_FORMAT
      " patches in %u shards", self->dir, self->manifest->n_patches,
      self->manifest->shards->len);
  return TRUE;
}

static gboolean
gst_patch_store_sink_event (GstBaseSink * sink, GstEvent * event)
{
  GstPatchStoreSink *self = GST_PATCH_STORE_SINK (sink);

  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS && !finish_store (self)) {
    gst_event_unref (event);
    return FALSE;
  }
  return GST_BASE_SINK_CLASS (parent_class)->event (sink, event);
}

/* ---- properties --------------------------------------------------------- */

static void
gst_patch_store_sink_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstPatchStoreSink *self = GST_PATCH_STORE_SINK (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_LOCATION:
      g_free (self->location);
      self->location = g_value_dup_string (value);
      break;
    case PROP_ENCODING:
      self->encoding = g_value_get_enum (value);
      break;
    case PROP_QUALITY:
      self->quality = g_value_get_uint (value);
      break;
    case PROP_CHROMA:
      self->chroma = g_value_get_enum (value);
      break;
    case PROP_PATCHES_PER_SHARD:
      self->patches_per_shard = g_value_get_uint (value);
      break;
    case PROP_FORMAT:
      self->format = g_value_get_enum (value);
      break;
    case PROP_RESUME:
      self->resume = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_store_sink_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstPatchStoreSink *self = GST_PATCH_STORE_SINK (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_LOCATION:
      g_value_set_string (value, self->location);
      break;
    case PROP_ENCODING:
      g_value_set_enum (value, self->encoding);
      break;
    case PROP_QUALITY:
      g_value_set_uint (value, self->quality);
      break;
    case PROP_CHROMA:
      g_value_set_enum (value, self->chroma);
      break;
    case PROP_PATCHES_PER_SHARD:
      g_value_set_uint (value, self->patches_per_shard);
      break;
    case PROP_FORMAT:
      g_value_set_enum (value, self->format);
      break;
    case PROP_RESUME:
      g_value_set_boolean (value, self->resume);
      break;
    case PROP_PATCHES_WRITTEN:
      g_value_set_uint64 (value, self->patches_written);
      break;
    case PROP_PATCHES_RESUMED:
      g_value_set_uint64 (value, self->patches_resumed);
      break;
    case PROP_SHARDS_WRITTEN:
      g_value_set_uint (value, self->shards_written);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_store_sink_finalize (GObject * object)
{
  GstPatchStoreSink *self = GST_PATCH_STORE_SINK (object);

  g_free (self->location);
  g_byte_array_unref (self->scratch);
  wsi_store_codec_free (self->codec);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_patch_store_sink_class_init (GstPatchStoreSinkClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSinkClass *sink_class = GST_BASE_SINK_CLASS (klass);

  /* every error of ours must end the application's main loop, however
   * early it comes (wsierrorrelay.h) */
  wsi_error_relay_class_init (element_class);
  gobject_class->set_property = gst_patch_store_sink_set_property;
  gobject_class->get_property = gst_patch_store_sink_get_property;
  gobject_class->finalize = gst_patch_store_sink_finalize;

  g_object_class_install_property (gobject_class, PROP_LOCATION,
      g_param_spec_string ("location", "Location",
          "The patch store directory (created when missing)", NULL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_ENCODING,
      g_param_spec_enum ("encoding", "Encoding",
          "How pixels are stored: raw = exact uint8 pixels (width x height x "
          "channels bytes a patch); yuv420 = planar YUV 4:2:0, half the "
          "bytes of RGB, fast to decode, not exact; jpeg = JPEG at quality "
          "and chroma-subsampling (about a tenth of raw at quality 90)",
          GST_TYPE_PATCH_STORE_ENCODING, DEFAULT_ENCODING,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_QUALITY,
      wsi_param_spec_uint ("quality", "Quality",
          "JPEG quality for encoding=jpeg, 1..100 (95 keeps every patch "
          "above 40 dB PSNR on H&E)", 1, 100, DEFAULT_QUALITY,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_CHROMA,
      g_param_spec_enum ("chroma-subsampling", "Chroma subsampling",
          "JPEG chroma for encoding=jpeg: 444 = full resolution, 420 = half "
          "in both directions (smaller)", GST_TYPE_PATCH_STORE_CHROMA,
          DEFAULT_CHROMA, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_PATCHES_PER_SHARD,
      wsi_param_spec_uint ("patches-per-shard", "Patches per shard",
          "Patches in each shard file (the last may hold fewer), "
          "1..1048576. 1024 raw RGB patches of 256 px make a 192 MiB shard; "
          "a resumed store must use the value it was started with",
          1, MAX_PATCHES_PER_SHARD, DEFAULT_PATCHES_PER_SHARD,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_FORMAT,
      g_param_spec_enum ("format", "Format",
          "What to write: native = the patch store patchstoresrc serves; "
          "webdataset = tar shards (\"shard-NNNNNN.tar\", patches-per-shard "
          "samples each) of KEY.jpg (encoding=jpeg) or KEY.png (lossless), "
          "KEY.json and KEY.cls, for webdataset / litdata readers",
          GST_TYPE_PATCH_STORE_FORMAT, DEFAULT_FORMAT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_RESUME,
      g_param_spec_boolean ("resume", "Resume",
          "Continue the store already in location: keep its complete "
          "shards, skip the stream's first patches that they hold and write "
          "the rest (the same pipeline settings give the same store). false "
          "= refuse a location that already holds a store", FALSE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_PATCHES_WRITTEN,
      wsi_param_spec_uint64 ("patches-written", "Patches written",
          "Patches written since the last start (count)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_PATCHES_RESUMED,
      wsi_param_spec_uint64 ("patches-resumed", "Patches resumed",
          "Patches of the stream skipped because the resumed store's "
          "complete shards already held them (count)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_SHARDS_WRITTEN,
      wsi_param_spec_uint ("shards-written", "Shards written",
          "Shards completed since the last start (count)", 0, G_MAXUINT, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_set_static_metadata (element_class,
      "Patch store writer", "Sink/File",
      "Writes whole-slide image patches and their records into an on-disk "
      "patch store (shards, index, manifest)",
      "gst-wsi developers");

  sink_class->start = GST_DEBUG_FUNCPTR (gst_patch_store_sink_start);
  sink_class->stop = GST_DEBUG_FUNCPTR (gst_patch_store_sink_stop);
  sink_class->set_caps = GST_DEBUG_FUNCPTR (gst_patch_store_sink_set_caps);
  sink_class->render = GST_DEBUG_FUNCPTR (gst_patch_store_sink_render);
  sink_class->event = GST_DEBUG_FUNCPTR (gst_patch_store_sink_event);

  /* numbers outside their range refuse the start (wsirefusal.h) */
  wsi_refusal_class_init (GST_ELEMENT_CLASS (klass));
}

static void
gst_patch_store_sink_init (GstPatchStoreSink * self)
{
  self->encoding = DEFAULT_ENCODING;
  self->patches_per_shard = DEFAULT_PATCHES_PER_SHARD;
  self->quality = DEFAULT_QUALITY;
  self->chroma = DEFAULT_CHROMA;
  self->format = DEFAULT_FORMAT;
  self->scratch = g_byte_array_new ();
  self->codec = wsi_store_codec_new ();
  /* patches are not media with a clock */
  gst_base_sink_set_sync (GST_BASE_SINK (self), FALSE);
}
