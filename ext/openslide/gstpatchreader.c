/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-patchreader
 * @title: patchreader
 *
 * patchreader turns patch coordinates into pixels. Its sink pad takes
 * buffers of packed #WsiPatchRecord (`application/x-wsi-patches`, all
 * records of a buffer from the slide named by its `WsiSlideMeta`), its source
 * pad pushes one square `video/x-raw` buffer per patch, side
 * `out_size` of the record, with a `WsiPatchMeta` that carries the record
 * (with the pyramid `level` and `read_size` filled in), the slide path and
 * the slide label. `GST_BUFFER_OFFSET` is the record's `sequence`; buffers
 * have no timestamps: patches are not media with a clock, use `sync=false`.
 *
 * For each patch the reader picks the coarsest pyramid level whose
 * downsample does not exceed footprint / out_size, reads the footprint
 * there and, when the region read is larger than the patch, area-averages
 * it down (a box filter with fractional edge weights, like OpenCV's
 * INTER_AREA). A region within #GstPatchReader:resample-tolerance of the
 * patch size (e.g. 257 px for 256 because the slide is 0.499 um/px and the
 * target 0.5) is read at the patch size instead: no resampling blur for a
 * rounding-level mismatch, and the record's footprint, read_size and out_mpp
 * say what was really read. Transparent, unscanned areas come out white, as
 * glass.
 *
 * A pool of #GstPatchReader:threads worker threads decodes in parallel;
 * patches and serialized events leave in the order they came in, and the
 * bytes do not depend on the number of threads. Open slides are kept in a
 * small cache (#GstPatchReader:max-open-slides). A patch that cannot be
 * read is dropped with a warning; a slide that cannot be opened, or that
 * failed #GstPatchReader:max-read-failures reads in a row, is given up for
 * the rest of the stream.
 *
 * The output is RGB unless downstream only accepts RGBA, RGBx or BGRx
 * (alpha is then 255).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 wsislidesrc location=slides/ ! tissuemask ! queue ! \
 *     patchsampler patch-size=256 ! patchinterleave ! \
 *     patchreader threads=4 ! fakesink sync=false
 * ]| Reads 256x256 RGB patches from every slide of `slides/` with four
 * decoding threads.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstpatchreader.h"
#include "wsiconvert.h"
#include "wsislide.h"

#include <gst/video/video.h>
#include <gst/wsi/wsirecord.h>
#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (gst_patch_reader_debug);
#define GST_CAT_DEFAULT gst_patch_reader_debug

#define DEFAULT_THREADS 0
#define MAX_THREADS 64
#define DEFAULT_MAX_OPEN_SLIDES 8
#define MAX_MAX_OPEN_SLIDES 1024
#define DEFAULT_MAX_READ_FAILURES 3
#define DEFAULT_RESAMPLE_TOLERANCE 0.01
/* Whole-number downscales up to this factor sum in 32 bits (255 * 256^2
 * fits easily); larger ones take the general area path. */
#define MAX_BOX_FACTOR 256
#define MAX_MAX_READ_FAILURES 1000000

/* In-flight items per worker: enough to keep every worker busy while the
 * source task waits for the oldest one. */
#define RING_ITEMS_PER_WORKER 4
#define RING_MIN_ITEMS 8

enum
{
  PROP_0,
  PROP_THREADS,
  PROP_MAX_OPEN_SLIDES,
  PROP_MAX_READ_FAILURES,
  PROP_RESAMPLE_TOLERANCE,
  PROP_PATCHES_READ,
  PROP_PATCHES_FAILED,
  PROP_PATCHES_SKIPPED,
};

#define OUTPUT_FORMATS "{ RGB, RGBA, RGBx, BGRx }"

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (WSI_PATCHES_MEDIA_TYPE));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw, format = (string) " OUTPUT_FORMATS
        ", width = (int) [ 1, max ], height = (int) [ 1, max ], "
        "framerate = (fraction) 0/1"));

/* ---- per-slide stream state ------------------------------------------- */

/* What the stream knows about one slide path; lives until the element
 * stops, shared read-only by the workers (counters are atomic). */
typedef struct
{
  gchar *path;
  gchar *label;
  gint consecutive_failures;    /* atomic */
  gint given_up;                /* atomic flag: drop every later record */
} SlideContext;

static SlideContext *
slide_context_new (const gchar * path, const gchar * label)
{
  SlideContext *ctx = g_new0 (SlideContext, 1);

  ctx->path = g_strdup (path);
  ctx->label = g_strdup (label ? label : "");
  return ctx;
}

static void
slide_context_free (SlideContext * ctx)
{
  g_free (ctx->path);
  g_free (ctx->label);
  g_free (ctx);
}

/* ---- open slide cache -------------------------------------------------- */

/* An open slide shared by the workers; closed when it has left the cache
 * and its last user released it. */
typedef struct
{
  gchar *path;
  WsiSlide *slide;
  guint users;                  /* under SlideCache.lock */
  gboolean cached;              /* still findable by path */
  GList lru_link;               /* in SlideCache.lru while cached */
} SlideHandle;

typedef struct
{
  GMutex lock;
  GHashTable *by_path;          /* path -> SlideHandle (key owned by it) */
  GQueue lru;                   /* head = most recently used */
  guint max_open;
} SlideCache;

static void
slide_handle_free (SlideHandle * handle)
{
  wsi_slide_close (handle->slide);
  g_free (handle->path);
  g_free (handle);
}

static void
slide_cache_init (SlideCache * cache)
{
  g_mutex_init (&cache->lock);
  cache->by_path = g_hash_table_new (g_str_hash, g_str_equal);
  g_queue_init (&cache->lru);
  cache->max_open = DEFAULT_MAX_OPEN_SLIDES;
}

static void
slide_cache_forget_locked (SlideCache * cache, SlideHandle * handle)
{
  g_hash_table_remove (cache->by_path, handle->path);
  g_queue_unlink (&cache->lru, &handle->lru_link);
  handle->cached = FALSE;
}

/* Takes the least recently used idle handles out of an over-full cache;
 * returns them for closing outside the lock (closing can take a while). */
static GSList *
slide_cache_trim_locked (SlideCache * cache)
{
  GSList *to_close = NULL;
  GList *link = cache->lru.tail;

  while (link != NULL && g_queue_get_length (&cache->lru) > cache->max_open) {
    SlideHandle *handle = link->data;
    GList *prev = link->prev;

    if (handle->users == 0) {
      slide_cache_forget_locked (cache, handle);
      to_close = g_slist_prepend (to_close, handle);
    }
    link = prev;
  }
  return to_close;
}

static void
slide_cache_close_all_of (GSList * handles)
{
  g_slist_free_full (handles, (GDestroyNotify) slide_handle_free);
}

static SlideHandle *
slide_cache_lookup_locked (SlideCache * cache, const gchar * path)
{
  SlideHandle *handle = g_hash_table_lookup (cache->by_path, path);

  if (handle != NULL) {
    handle->users++;
    g_queue_unlink (&cache->lru, &handle->lru_link);
    g_queue_push_head_link (&cache->lru, &handle->lru_link);
  }
  return handle;
}

/* Returns the open slide for @path, opening it when needed (outside the
 * lock, so that other workers keep reading meanwhile). */
static SlideHandle *
slide_cache_acquire (SlideCache * cache, const gchar * path, GError ** error)
{
  SlideHandle *handle;
  WsiSlide *slide;
  GSList *to_close;

  g_mutex_lock (&cache->lock);
  handle = slide_cache_lookup_locked (cache, path);
  g_mutex_unlock (&cache->lock);
  if (handle != NULL)
    return handle;

  slide = wsi_slide_open (path, error);
  if (slide == NULL)
    return NULL;

  g_mutex_lock (&cache->lock);
  handle = slide_cache_lookup_locked (cache, path);
  if (handle != NULL) {
    /* Another worker opened it first. */
    g_mutex_unlock (&cache->lock);
    wsi_slide_close (slide);
    return handle;
  }
  handle = g_new0 (SlideHandle, 1);
  handle->path = g_strdup (path);
  handle->slide = slide;
  handle->users = 1;
  handle->cached = TRUE;
  handle->lru_link.data = handle;
  g_hash_table_insert (cache->by_path, handle->path, handle);
  g_queue_push_head_link (&cache->lru, &handle->lru_link);
  to_close = slide_cache_trim_locked (cache);
  g_mutex_unlock (&cache->lock);

  slide_cache_close_all_of (to_close);
  return handle;
}

static void
slide_cache_release (SlideCache * cache, SlideHandle * handle)
{
  GSList *to_close = NULL;

  g_mutex_lock (&cache->lock);
  handle->users--;
  if (!handle->cached && handle->users == 0)
    to_close = g_slist_prepend (to_close, handle);
  else
    to_close = slide_cache_trim_locked (cache);
  g_mutex_unlock (&cache->lock);

  slide_cache_close_all_of (to_close);
}

/* OpenSlide errors stick to a handle: make the next read open a new one. */
static void
slide_cache_evict (SlideCache * cache, SlideHandle * handle)
{
  g_mutex_lock (&cache->lock);
  if (handle->cached)
    slide_cache_forget_locked (cache, handle);
  g_mutex_unlock (&cache->lock);
}

static void
slide_cache_set_max_open (SlideCache * cache, guint max_open)
{
  GSList *to_close;

  g_mutex_lock (&cache->lock);
  cache->max_open = max_open;
  to_close = slide_cache_trim_locked (cache);
  g_mutex_unlock (&cache->lock);
  slide_cache_close_all_of (to_close);
}

/* Closes every slide; only called when no worker runs. */
static void
slide_cache_clear (SlideCache * cache)
{
  GSList *to_close = NULL;
  GList *link;

  g_mutex_lock (&cache->lock);
  while ((link = cache->lru.head) != NULL) {
    SlideHandle *handle = link->data;

    slide_cache_forget_locked (cache, handle);
    to_close = g_slist_prepend (to_close, handle);
  }
  g_mutex_unlock (&cache->lock);
  slide_cache_close_all_of (to_close);
}

static void
slide_cache_finalize (SlideCache * cache)
{
  slide_cache_clear (cache);
  g_hash_table_unref (cache->by_path);
  g_mutex_clear (&cache->lock);
}

/* ---- pixels ------------------------------------------------------------ */

/* A whole-frame ORC kernel (wsiconvert.orc): premultiplied ARGB composited
 * on white, size x size pixels, with the destination and source strides. */
typedef void (*OnWhiteKernel) (guint8 * dst, int dst_stride,
    const guint32 * argb, int argb_stride, int width, int height);

/* The kernels write host-order words: the byte layouts they name hold on
 * little-endian hosts only; elsewhere every format takes the C loop. */
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
#define ON_WHITE_RGBX wsi_orc_argb_on_white_rgbx
#define ON_WHITE_BGRX wsi_orc_argb_on_white_bgrx
#else
#define ON_WHITE_RGBX NULL
#define ON_WHITE_BGRX NULL
#endif

/* Where R, G, B (and alpha, when the format has a 4th byte) go in a pixel. */
typedef struct
{
  guint pixel_stride;
  guint r, g, b;
  gint a;                       /* -1 for 3-byte RGB */
  OnWhiteKernel on_white;       /* NULL: write_row_on_white() */
} PixelLayout;

static gboolean
pixel_layout_for_format (GstVideoFormat format, PixelLayout * layout)
{
  switch (format) {
    case GST_VIDEO_FORMAT_RGB:
      /* no ORC kernel: 3-byte pixels have no ORC element type */
      *layout = (PixelLayout) { 3, 0, 1, 2, -1, NULL };
      return TRUE;
    case GST_VIDEO_FORMAT_RGBA:
    case GST_VIDEO_FORMAT_RGBx:
      *layout = (PixelLayout) { 4, 0, 1, 2, 3, ON_WHITE_RGBX };
      return TRUE;
    case GST_VIDEO_FORMAT_BGRx:
      *layout = (PixelLayout) { 4, 2, 1, 0, 3, ON_WHITE_BGRX };
      return TRUE;
    default:
      return FALSE;
  }
}

/* Premultiplied ARGB composited on white: c + (255 - alpha), the same
 * arithmetic as wsi_argb_to_rgb_on_white(), into any output layout. */
static void
write_row_on_white (const guint32 * argb, guint8 * dst, guint n,
    const PixelLayout * layout)
{
  guint i;

  if (layout->a < 0) {
    wsi_argb_to_rgb_on_white (argb, dst, n);
    return;
  }
  for (i = 0; i < n; i++, dst += 4) {
    guint32 p = argb[i];
    guint32 glass = 255 - (p >> 24);

    dst[layout->r] = ((p >> 16) & 0xff) + glass;
    dst[layout->g] = ((p >> 8) & 0xff) + glass;
    dst[layout->b] = (p & 0xff) + glass;
    dst[layout->a] = 255;
  }
}

/* Box-filter taps of one axis: output i averages source pixels
 * first[i] .. first[i] + count[i] - 1 with weights summing to 1. */
typedef struct
{
  guint in_size, out_size, max_taps;
  guint *first;
  guint *count;
  gfloat *weight;               /* out_size * max_taps */
} AxisTaps;

static void
axis_taps_clear (AxisTaps * taps)
{
  g_free (taps->first);
  g_free (taps->count);
  g_free (taps->weight);
  memset (taps, 0, sizeof (*taps));
}

/* Output pixel i covers [i * s, (i + 1) * s) of the source, s = in / out;
 * edge source pixels count for the part of them inside that interval, as
 * cv::INTER_AREA does. Recomputed only when the sizes change. */
static void
axis_taps_prepare (AxisTaps * taps, guint in_size, guint out_size)
{
  gdouble scale = (gdouble) in_size / out_size;
  guint i;

  if (taps->in_size == in_size && taps->out_size == out_size)
    return;
  axis_taps_clear (taps);
  taps->in_size = in_size;
  taps->out_size = out_size;
  taps->max_taps = (guint) ceil (scale) + 1;
  taps->first = g_new (guint, out_size);
  taps->count = g_new (guint, out_size);
  taps->weight = g_new0 (gfloat, (gsize) out_size * taps->max_taps);

  for (i = 0; i < out_size; i++) {
    gdouble start = i * scale;
    gdouble end = MIN ((i + 1) * scale, (gdouble) in_size);
    guint k0 = (guint) floor (start);
    guint k1 = MIN ((guint) ceil (end), in_size);
    gfloat *w = taps->weight + (gsize) i * taps->max_taps;
    gdouble total = 0.0;
    guint k;

    if (k1 <= k0)
      k1 = k0 + 1;
    taps->first[i] = k0;
    taps->count[i] = MIN (k1 - k0, taps->max_taps);
    for (k = 0; k < taps->count[i]; k++) {
      gdouble lo = MAX (start, (gdouble) (k0 + k));
      gdouble hi = MIN (end, (gdouble) (k0 + k + 1));
      w[k] = (gfloat) MAX (hi - lo, 0.0);
      total += w[k];
    }
    for (k = 0; k < taps->count[i]; k++)
      w[k] = total > 0.0 ? (gfloat) (w[k] / total) : 1.0f / taps->count[i];
  }
}

static inline guint8
clamp_to_byte (gfloat v)
{
  v += 0.5f;
  return v >= 255.0f ? 255 : (v <= 0.0f ? 0 : (guint8) v);
}

/* ---- the ring of in-flight items ---------------------------------------- */

typedef enum
{
  ITEM_EMPTY,
  ITEM_PATCH,
  ITEM_EVENT,
} ItemKind;

typedef enum
{
  ITEM_WAITING,                 /* a patch no worker has taken yet */
  ITEM_DECODING,
  ITEM_DONE,                    /* ready for the source task */
} ItemState;

typedef enum
{
  OUTCOME_READ,
  OUTCOME_FAILED,               /* the read failed */
  OUTCOME_SKIPPED,              /* no read: the slide is unusable */
} ItemOutcome;

typedef struct
{
  ItemKind kind;
  ItemState state;
  GstEvent *event;
  GstBuffer *buffer;            /* output; NULL once the patch is dropped */
  WsiPatchRecord record;
  SlideContext *slide;
} ReaderItem;

static void
reader_item_clear (ReaderItem * item)
{
  gst_clear_event (&item->event);
  gst_clear_buffer (&item->buffer);
  memset (item, 0, sizeof (*item));
}

/* A decoding thread and its scratch memory, reused from patch to patch. */
typedef struct
{
  GstPatchReader *reader;
  GThread *thread;
  guint32 *argb;
  gsize argb_pixels;
  gfloat *rows;                 /* read_size rows of out_size RGB floats */
  gsize rows_floats;
  guint32 *sums;                /* out_size ARGB channel sums (4 each) */
  gsize sums_len;
  AxisTaps taps;
} ReaderWorker;

struct _GstPatchReader
{
  GstElement parent;

  GstPad *sinkpad;
  GstPad *srcpad;

  /* properties, under the object lock */
  guint threads;
  guint max_read_failures;
  gdouble resample_tolerance;
  gint resample_tolerance_ppm;  /* atomic copy for the workers, in 1e-6 */

  /* the ring, the workers and the counters, under lock */
  GMutex lock;
  GCond item_added;             /* workers wait here for patches */
  GCond item_done;              /* the source task and flushes wait here */
  GCond space_freed;            /* the chain waits here for room/drain */
  ReaderItem *ring;
  guint capacity;
  guint64 n_queued;             /* items ever put in the ring */
  guint64 n_taken;              /* items the source task took out */
  guint64 n_dispatched;         /* items workers looked at */
  guint n_decoding;
  gboolean flushing;
  gboolean workers_quit;
  gboolean eos_queued;
  gboolean src_pushing;         /* the source task pushes an item it took */
  GstFlowReturn src_flow;       /* last downstream flow, back to upstream */
  guint64 patches_read;
  guint64 patches_failed;
  guint64 patches_skipped;
  ReaderWorker *workers;
  guint n_workers;
  GstBufferPool *pool;

  /* streaming thread state; vinfo/layout change only with an empty ring */
  GHashTable *slides;           /* path -> SlideContext */
  guint out_size;
  GstVideoInfo vinfo;
  PixelLayout layout;
  GstEvent *pending_segment;    /* held until the first caps are out */
  gboolean warned_no_meta;
  gboolean warned_bad_record;

  SlideCache cache;
};

#define gst_patch_reader_parent_class parent_class
G_DEFINE_TYPE (GstPatchReader, gst_patch_reader, GST_TYPE_ELEMENT);

GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (patchreader, "patchreader",
    GST_RANK_NONE, GST_TYPE_PATCH_READER,
    wsi_record_register_metas ();
    GST_DEBUG_CATEGORY_INIT (gst_patch_reader_debug, "patchreader", 0,
        "whole-slide patch reader"));

static inline ReaderItem *
ring_slot (GstPatchReader * self, guint64 position)
{
  return &self->ring[position % self->capacity];
}

static inline gboolean
ring_full (GstPatchReader * self)
{
  return self->n_queued - self->n_taken >= self->capacity;
}

static gboolean
ring_head_ready (GstPatchReader * self)
{
  return self->n_taken < self->n_queued
      && ring_slot (self, self->n_taken)->state == ITEM_DONE;
}

/* Empties the ring; callers make sure no worker decodes. */
static void
ring_clear (GstPatchReader * self)
{
  while (self->n_taken < self->n_queued) {
    reader_item_clear (ring_slot (self, self->n_taken));
    self->n_taken++;
  }
  self->n_queued = self->n_taken = self->n_dispatched = 0;
}

/* ---- decoding (worker threads, no lock held) ---------------------------- */

static gboolean
worker_reserve (ReaderWorker * worker, guint read_size, guint out_size)
{
  gsize pixels = (gsize) read_size * read_size;
  gsize floats = (gsize) read_size * out_size * 3;

  /* Grow only: after the first patches the hot path allocates nothing. */
  if (pixels > worker->argb_pixels) {
    g_free (worker->argb);
    worker->argb = g_try_malloc (pixels * sizeof (guint32));
    worker->argb_pixels = worker->argb ? pixels : 0;
  }
  if (read_size != out_size && floats > worker->rows_floats) {
    g_free (worker->rows);
    worker->rows = g_try_malloc (floats * sizeof (gfloat));
    worker->rows_floats = worker->rows ? floats : 0;
  }
  if (read_size != out_size && (gsize) out_size * 4 > worker->sums_len) {
    g_free (worker->sums);
    worker->sums = g_try_malloc ((gsize) out_size * 4 * sizeof (guint32));
    worker->sums_len = worker->sums ? (gsize) out_size * 4 : 0;
  }
  return worker->argb != NULL && (read_size == out_size
      || (worker->rows != NULL && worker->sums != NULL));
}

static void
convert_native (ReaderWorker * worker, GstVideoFrame * frame, guint size,
    const PixelLayout * layout)
{
  guint8 *dst = GST_VIDEO_FRAME_PLANE_DATA (frame, 0);
  gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (frame, 0);
  guint y;

  if (layout->on_white) {
    layout->on_white (dst, stride, worker->argb, size * sizeof (guint32),
        size, size);
    return;
  }
  for (y = 0; y < size; y++)
    write_row_on_white (worker->argb + (gsize) y * size, dst + y * stride,
        size, layout);
}

/* Area average for a whole-number factor k = read_size / out_size (the
 * common 2x and 4x targets): each output pixel is the mean of a k x k block,
 * summed in integers. Compositing on white is linear, so it is applied to
 * the sums: mean (c + 255 - a) = (sum c + 255 k^2 - sum a) / k^2. About
 * three times cheaper than the general fractional-weight path. */
static void
convert_box_integer (ReaderWorker * worker, GstVideoFrame * frame,
    guint read_size, guint out_size, const PixelLayout * layout)
{
  guint k = read_size / out_size;
  guint32 block = k * k;
  gfloat inverse = 1.0f / block;
  guint8 *dst = GST_VIDEO_FRAME_PLANE_DATA (frame, 0);
  gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (frame, 0);
  guint32 *sums = worker->sums;
  guint x, y, dx, dy;

  for (y = 0; y < out_size; y++) {
    guint8 *out = dst + y * stride;

    memset (sums, 0, (gsize) out_size * 4 * sizeof (guint32));
    for (dy = 0; dy < k; dy++) {
      const guint32 *src = worker->argb + (gsize) (y * k + dy) * read_size;

      for (x = 0; x < out_size; x++, src += k) {
        guint32 *sum = sums + 4 * x;

        for (dx = 0; dx < k; dx++) {
          guint32 p = src[dx];

          sum[0] += p >> 24;
          sum[1] += (p >> 16) & 0xff;
          sum[2] += (p >> 8) & 0xff;
          sum[3] += p & 0xff;
        }
      }
    }
    for (x = 0; x < out_size; x++, out += layout->pixel_stride) {
      const guint32 *sum = sums + 4 * x;
      guint32 glass = 255 * block - sum[0];

      out[layout->r] = (guint8) ((sum[1] + glass) * inverse + 0.5f);
      out[layout->g] = (guint8) ((sum[2] + glass) * inverse + 0.5f);
      out[layout->b] = (guint8) ((sum[3] + glass) * inverse + 0.5f);
      if (layout->a >= 0)
        out[layout->a] = 255;
    }
  }
}

/* Area average, separable: rows first (composited on white, as floats),
 * then columns, straight into the output frame. wsislidesrc averages its
 * overviews with a source-oriented form instead, because it must consume
 * a level strip by strip; used here (the whole region is in memory) that
 * form measured 5 % slower per patch, so the two stay separate. */
static void
convert_area_average (ReaderWorker * worker, GstVideoFrame * frame,
    guint read_size, guint out_size, const PixelLayout * layout)
{
  AxisTaps *taps = &worker->taps;
  guint8 *dst = GST_VIDEO_FRAME_PLANE_DATA (frame, 0);
  gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (frame, 0);
  guint x, y, k;

  axis_taps_prepare (taps, read_size, out_size);

  for (y = 0; y < read_size; y++) {
    const guint32 *src = worker->argb + (gsize) y * read_size;
    gfloat *row = worker->rows + (gsize) y * out_size * 3;

    for (x = 0; x < out_size; x++) {
      const gfloat *w = taps->weight + (gsize) x * taps->max_taps;
      const guint32 *p = src + taps->first[x];
      gfloat r = 0.0f, g = 0.0f, b = 0.0f;

      for (k = 0; k < taps->count[x]; k++) {
        guint32 glass = 255 - (p[k] >> 24);

        r += w[k] * (((p[k] >> 16) & 0xff) + glass);
        g += w[k] * (((p[k] >> 8) & 0xff) + glass);
        b += w[k] * ((p[k] & 0xff) + glass);
      }
      row[3 * x + 0] = r;
      row[3 * x + 1] = g;
      row[3 * x + 2] = b;
    }
  }

  for (y = 0; y < out_size; y++) {
    const gfloat *w = taps->weight + (gsize) y * taps->max_taps;
    const gfloat *rows = worker->rows + (gsize) taps->first[y] * out_size * 3;
    guint8 *out = dst + y * stride;

    for (x = 0; x < out_size; x++, out += layout->pixel_stride) {
      gfloat r = 0.0f, g = 0.0f, b = 0.0f;

      for (k = 0; k < taps->count[y]; k++) {
        const gfloat *px = rows + ((gsize) k * out_size + x) * 3;

        r += w[k] * px[0];
        g += w[k] * px[1];
        b += w[k] * px[2];
      }
      out[layout->r] = clamp_to_byte (r);
      out[layout->g] = clamp_to_byte (g);
      out[layout->b] = clamp_to_byte (b);
      if (layout->a >= 0)
        out[layout->a] = 255;
    }
  }
}

/* Reads within resample-tolerance of the output size are taken at the
 * output size; the record then describes the region actually read. */
static guint
snap_read_size (GstPatchReader * self, WsiPatchRecord * record,
    guint read_size, gdouble level_downsample)
{
  /* Read once per patch by every worker: atomic, not the object lock. */
  gdouble tolerance = g_atomic_int_get (&self->resample_tolerance_ppm) / 1e6;
  gdouble footprint;

  if (read_size == record->out_size
      || fabs ((gdouble) read_size / record->out_size - 1.0) > tolerance)
    return read_size;
  footprint = record->out_size * level_downsample;
  record->out_mpp *= (gfloat) (footprint / record->footprint);
  record->footprint = (guint32) lround (footprint);
  return record->out_size;
}

/* Counts a failed read and gives the slide up after too many in a row. */
static void
note_read_failure (GstPatchReader * self, SlideContext * ctx,
    const WsiPatchRecord * record, gint level, const GError * error)
{
  guint max_failures;
  gint failures;

  GST_OBJECT_LOCK (self);
  max_failures = self->max_read_failures;
  GST_OBJECT_UNLOCK (self);

  failures = g_atomic_int_add (&ctx->consecutive_failures, 1) + 1;
  if ((guint) failures <= max_failures) {
    GST_ELEMENT_WARNING (self, RESOURCE, READ,
        ("Could not read the patch at (%" G_GINT64_FORMAT ", %"
            G_GINT64_FORMAT ") level %d of slide \"%s\"; the patch is "
            "dropped.", record->x, record->y, level, ctx->path),
        ("patch %" G_GUINT64_FORMAT ": %s", record->sequence,
            error ? error->message : "unknown error"));
  }
  if ((guint) failures >= max_failures
      && g_atomic_int_compare_and_exchange (&ctx->given_up, 0, 1)) {
    GST_ELEMENT_WARNING (self, RESOURCE, READ,
        ("Giving up on slide \"%s\" after %d failed reads in a row; its "
            "remaining patches are dropped.", ctx->path, failures), (NULL));
  }
}

static ItemOutcome
decode_patch (GstPatchReader * self, ReaderWorker * worker, ReaderItem * item)
{
  SlideContext *ctx = item->slide;
  WsiPatchRecord *record = &item->record;
  SlideHandle *handle;
  WsiSlide *slide;
  GError *error = NULL;
  GstVideoFrame frame;
  const gchar *paths[2] = { ctx->path, NULL };
  const gchar *labels[2] = { ctx->label, NULL };
  guint read_size;
  gint level;

  if (g_atomic_int_get (&ctx->given_up))
    return OUTCOME_SKIPPED;

  handle = slide_cache_acquire (&self->cache, ctx->path, &error);
  if (handle == NULL) {
    if (g_atomic_int_compare_and_exchange (&ctx->given_up, 0, 1))
      GST_ELEMENT_WARNING (self, RESOURCE, OPEN_READ,
          ("Could not open slide \"%s\"; its patches are dropped.",
              ctx->path), ("%s", error->message));
    g_clear_error (&error);
    return OUTCOME_SKIPPED;
  }
  slide = handle->slide;

  level = wsi_slide_best_level (slide,
      (gdouble) record->footprint / record->out_size);
  read_size = MAX ((guint) lround (record->footprint /
          slide->level_downsample[level]), 1);
  read_size = snap_read_size (self, record, read_size,
      slide->level_downsample[level]);

  if (!worker_reserve (worker, read_size, record->out_size)) {
    GST_ELEMENT_WARNING (self, RESOURCE, NO_SPACE_LEFT,
        ("Not enough memory to read a %ux%u region of slide \"%s\".",
            read_size, read_size, ctx->path), (NULL));
    slide_cache_release (&self->cache, handle);
    return OUTCOME_FAILED;
  }

  if (!wsi_slide_read_region (slide, worker->argb, record->x, record->y,
          level, read_size, read_size, &error)) {
    slide_cache_evict (&self->cache, handle);
    slide_cache_release (&self->cache, handle);
    note_read_failure (self, ctx, record, level, error);
    g_clear_error (&error);
    return OUTCOME_FAILED;
  }
  slide_cache_release (&self->cache, handle);
  g_atomic_int_set (&ctx->consecutive_failures, 0);

  if (!gst_video_frame_map (&frame, &self->vinfo, item->buffer,
          GST_MAP_WRITE)) {
    GST_ELEMENT_WARNING (self, RESOURCE, WRITE,
        ("Could not map an output buffer for a patch of \"%s\".", ctx->path),
        (NULL));
    return OUTCOME_FAILED;
  }
  if (read_size == record->out_size)
    convert_native (worker, &frame, read_size, &self->layout);
  else if (read_size % record->out_size == 0
      && read_size / record->out_size <= MAX_BOX_FACTOR)
    convert_box_integer (worker, &frame, read_size, record->out_size,
        &self->layout);
  else
    convert_area_average (worker, &frame, read_size, record->out_size,
        &self->layout);
  gst_video_frame_unmap (&frame);

  record->level = level;
  record->read_size = read_size;
  GST_BUFFER_OFFSET (item->buffer) = record->sequence;
  GST_BUFFER_OFFSET_END (item->buffer) = GST_BUFFER_OFFSET_NONE;
  GST_BUFFER_PTS (item->buffer) = GST_CLOCK_TIME_NONE;
  GST_BUFFER_DTS (item->buffer) = GST_CLOCK_TIME_NONE;
  GST_BUFFER_DURATION (item->buffer) = GST_CLOCK_TIME_NONE;
  wsi_patch_meta_add (item->buffer, record, 1, paths, labels);
  return OUTCOME_READ;
}

/* The oldest patch no worker has taken, or NULL. */
static ReaderItem *
take_next_patch_locked (GstPatchReader * self)
{
  if (self->flushing)
    return NULL;
  /* Events leave without a worker: skip what the source task took. */
  self->n_dispatched = MAX (self->n_dispatched, self->n_taken);
  while (self->n_dispatched < self->n_queued) {
    ReaderItem *item = ring_slot (self, self->n_dispatched++);

    if (item->kind == ITEM_PATCH && item->state == ITEM_WAITING)
      return item;
  }
  return NULL;
}

static gpointer
worker_main (gpointer data)
{
  ReaderWorker *worker = data;
  GstPatchReader *self = worker->reader;
  ReaderItem *item;
  ItemOutcome outcome;

  g_mutex_lock (&self->lock);
  while (!self->workers_quit) {
    item = take_next_patch_locked (self);
    if (item == NULL) {
      g_cond_wait (&self->item_added, &self->lock);
      continue;
    }
    item->state = ITEM_DECODING;
    self->n_decoding++;
    g_mutex_unlock (&self->lock);

    outcome = decode_patch (self, worker, item);

    g_mutex_lock (&self->lock);
    if (outcome != OUTCOME_READ)
      gst_clear_buffer (&item->buffer);
    if (outcome == OUTCOME_READ)
      self->patches_read++;
    else if (outcome == OUTCOME_FAILED)
      self->patches_failed++;
    else
      self->patches_skipped++;
    item->state = ITEM_DONE;
    self->n_decoding--;
    g_cond_broadcast (&self->item_done);
  }
  g_mutex_unlock (&self->lock);
  return NULL;
}

static guint
auto_thread_count (void)
{
  guint cores = g_get_num_processors ();
  const gchar *world = g_getenv ("LOCAL_WORLD_SIZE");
  guint64 ranks = world ? g_ascii_strtoull (world, NULL, 10) : 0;

  /* torchrun starts one process per GPU: share the cores among them. */
  if (ranks > 1)
    cores /= ranks;
  return CLAMP (cores, 1, MAX_THREADS);
}

static void
gst_patch_reader_start_workers (GstPatchReader * self)
{
  guint i, n;

  GST_OBJECT_LOCK (self);
  n = self->threads ? self->threads : auto_thread_count ();
  GST_OBJECT_UNLOCK (self);

  g_mutex_lock (&self->lock);
  self->n_workers = n;
  self->capacity = MAX (RING_ITEMS_PER_WORKER * n, RING_MIN_ITEMS);
  self->ring = g_new0 (ReaderItem, self->capacity);
  self->n_queued = self->n_taken = self->n_dispatched = 0;
  self->workers_quit = FALSE;
  self->patches_read = self->patches_failed = self->patches_skipped = 0;
  self->workers = g_new0 (ReaderWorker, n);
  g_mutex_unlock (&self->lock);

  GST_DEBUG_OBJECT (self, "starting %u decoding threads", n);
  for (i = 0; i < n; i++) {
    gchar *name = g_strdup_printf ("patchreader%u", i);

    self->workers[i].reader = self;
    self->workers[i].thread = g_thread_new (name, worker_main,
        &self->workers[i]);
    g_free (name);
  }
}

static void
gst_patch_reader_stop_workers (GstPatchReader * self)
{
  guint i;

  if (self->workers == NULL)
    return;
  g_mutex_lock (&self->lock);
  self->workers_quit = TRUE;
  g_cond_broadcast (&self->item_added);
  g_mutex_unlock (&self->lock);

  for (i = 0; i < self->n_workers; i++) {
    ReaderWorker *worker = &self->workers[i];

    g_thread_join (worker->thread);
    g_free (worker->argb);
    g_free (worker->rows);
    g_free (worker->sums);
    axis_taps_clear (&worker->taps);
  }

  g_mutex_lock (&self->lock);
  ring_clear (self);
  g_clear_pointer (&self->ring, g_free);
  g_clear_pointer (&self->workers, g_free);
  self->n_workers = 0;
  self->capacity = 0;
  g_mutex_unlock (&self->lock);
}

/* ---- source task -------------------------------------------------------- */

static void
gst_patch_reader_src_loop (GstPad * pad)
{
  GstPatchReader *self = GST_PATCH_READER (GST_PAD_PARENT (pad));
  ReaderItem item;
  GstFlowReturn ret;
  gboolean eos_queued;

  g_mutex_lock (&self->lock);
  while (!self->flushing && !ring_head_ready (self))
    g_cond_wait (&self->item_done, &self->lock);
  if (self->flushing) {
    g_mutex_unlock (&self->lock);
    gst_pad_pause_task (pad);
    return;
  }
  item = *ring_slot (self, self->n_taken);
  memset (ring_slot (self, self->n_taken), 0, sizeof (ReaderItem));
  self->n_taken++;
  self->src_pushing = TRUE;
  g_cond_broadcast (&self->space_freed);
  g_mutex_unlock (&self->lock);

  ret = GST_FLOW_OK;
  if (item.kind == ITEM_EVENT) {
    GST_LOG_OBJECT (self, "pushing %" GST_PTR_FORMAT, item.event);
    gst_pad_push_event (pad, item.event);
  } else if (item.buffer != NULL) {     /* else a dropped patch */
    ret = gst_pad_push (pad, item.buffer);
  }

  /* drain() waits for this: new caps must not overtake the last push. */
  g_mutex_lock (&self->lock);
  self->src_pushing = FALSE;
  if (ret != GST_FLOW_OK && (!self->flushing || ret != GST_FLOW_FLUSHING))
    self->src_flow = ret;
  eos_queued = self->eos_queued;
  g_cond_broadcast (&self->space_freed);
  g_mutex_unlock (&self->lock);
  if (ret == GST_FLOW_OK)
    return;

  GST_DEBUG_OBJECT (self, "pausing: %s", gst_flow_get_name (ret));
  gst_pad_pause_task (pad);
  if (ret == GST_FLOW_FLUSHING)
    return;
  /* Upstream hears of the flow through the chain, unless it is done: then
   * it is ours to report the error and finish the stream. */
  if (eos_queued) {
    if (ret == GST_FLOW_NOT_LINKED || ret < GST_FLOW_EOS)
      GST_ELEMENT_FLOW_ERROR (self, ret);
    gst_pad_push_event (pad, gst_event_new_eos ());
  }
}

/* ---- queueing from the streaming thread --------------------------------- */

/* Waits for room in the ring and appends @item (ownership taken). */
static GstFlowReturn
gst_patch_reader_enqueue (GstPatchReader * self, ReaderItem * item)
{
  GstFlowReturn ret = GST_FLOW_OK;

  g_mutex_lock (&self->lock);
  while (!self->flushing && self->src_flow == GST_FLOW_OK && ring_full (self))
    g_cond_wait (&self->space_freed, &self->lock);
  if (self->flushing)
    ret = GST_FLOW_FLUSHING;
  else if (self->src_flow != GST_FLOW_OK)
    ret = self->src_flow;
  if (ret != GST_FLOW_OK) {
    g_mutex_unlock (&self->lock);
    reader_item_clear (item);
    return ret;
  }
  *ring_slot (self, self->n_queued) = *item;
  self->n_queued++;
  if (item->kind == ITEM_PATCH)
    g_cond_signal (&self->item_added);
  else
    g_cond_broadcast (&self->item_done);
  g_mutex_unlock (&self->lock);
  return GST_FLOW_OK;
}

static GstFlowReturn
gst_patch_reader_enqueue_event (GstPatchReader * self, GstEvent * event)
{
  ReaderItem item = { 0, };

  item.kind = ITEM_EVENT;
  item.state = ITEM_DONE;
  item.event = event;
  return gst_patch_reader_enqueue (self, &item);
}

/* Waits until the source task has pushed everything queued, the last
 * item included (taken out of the ring is not yet pushed). */
static GstFlowReturn
gst_patch_reader_drain (GstPatchReader * self)
{
  GstFlowReturn ret;

  g_mutex_lock (&self->lock);
  while (!self->flushing && self->src_flow == GST_FLOW_OK
      && (self->n_taken < self->n_queued || self->src_pushing))
    g_cond_wait (&self->space_freed, &self->lock);
  ret = self->flushing ? GST_FLOW_FLUSHING : self->src_flow;
  g_mutex_unlock (&self->lock);
  return ret;
}

/* RGB when downstream takes it, else what downstream prefers. */
static GstCaps *
gst_patch_reader_choose_caps (GstPatchReader * self, guint size)
{
  GstCaps *ours, *theirs, *rgb;

  ours = gst_caps_from_string ("video/x-raw, format = (string) "
      OUTPUT_FORMATS ", framerate = (fraction) 0/1, "
      "pixel-aspect-ratio = (fraction) 1/1");
  gst_caps_set_simple (ours, "width", G_TYPE_INT, (gint) size,
      "height", G_TYPE_INT, (gint) size, NULL);
  theirs = gst_pad_peer_query_caps (self->srcpad, ours);
  gst_caps_unref (ours);
  if (gst_caps_is_empty (theirs)) {
    gst_caps_unref (theirs);
    return NULL;
  }

  rgb = gst_caps_from_string ("video/x-raw, format = (string) RGB");
  if (gst_caps_can_intersect (theirs, rgb)) {
    GstCaps *both = gst_caps_intersect (theirs, rgb);
    gst_caps_unref (theirs);
    theirs = both;
  }
  gst_caps_unref (rgb);
  return gst_caps_fixate (theirs);
}

static GstBufferPool *
gst_patch_reader_make_pool (GstPatchReader * self, GstQuery * query,
    GstCaps * caps)
{
  GstBufferPool *pool = NULL;
  GstAllocator *allocator = NULL;
  GstAllocationParams params;
  GstStructure *config;
  guint size = self->vinfo.size, min = 0, max = 0;

  gst_allocation_params_init (&params);
  if (gst_query_get_n_allocation_params (query) > 0)
    gst_query_parse_nth_allocation_param (query, 0, &allocator, &params);
  if (gst_query_get_n_allocation_pools (query) > 0) {
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
    size = MAX (size, (guint) self->vinfo.size);
  }
  if (pool == NULL)
    pool = gst_video_buffer_pool_new ();

  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, size, min, max);
  gst_buffer_pool_config_set_allocator (config, allocator, &params);
  if (gst_query_find_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL))
    gst_buffer_pool_config_add_option (config,
        GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config (pool, config)) {
    config = gst_buffer_pool_get_config (pool);
    if (!gst_buffer_pool_config_validate_params (config, caps, size, min,
            max)) {
      /* Downstream's pool wants something else: use our own. */
      gst_structure_free (config);
      gst_object_unref (pool);
      pool = gst_video_buffer_pool_new ();
      config = gst_buffer_pool_get_config (pool);
      gst_buffer_pool_config_set_params (config, caps, self->vinfo.size, 0,
          0);
    }
    if (!gst_buffer_pool_set_config (pool, config)) {
      gst_object_unref (pool);
      pool = NULL;
    }
  }
  if (allocator)
    gst_object_unref (allocator);
  if (pool && !gst_buffer_pool_set_active (pool, TRUE))
    gst_clear_object (&pool);
  return pool;
}

/* Asks downstream for buffers (memory it may offer) for @caps. */
static gboolean
gst_patch_reader_decide_allocation (GstPatchReader * self, GstCaps * caps)
{
  GstQuery *query = gst_query_new_allocation (caps, TRUE);
  GstBufferPool *pool, *old;

  if (!gst_pad_peer_query (self->srcpad, query))
    GST_DEBUG_OBJECT (self, "downstream did not answer the allocation query");
  pool = gst_patch_reader_make_pool (self, query, caps);
  gst_query_unref (query);
  if (pool == NULL)
    return FALSE;

  g_mutex_lock (&self->lock);
  old = self->pool;
  self->pool = pool;
  g_mutex_unlock (&self->lock);
  if (old) {
    gst_buffer_pool_set_active (old, FALSE);
    gst_object_unref (old);
  }
  return TRUE;
}

/* (Re)negotiates for patches of @size: only with an empty ring, so that
 * every earlier patch leaves with the caps it was made for. */
static GstFlowReturn
gst_patch_reader_negotiate (GstPatchReader * self, guint size)
{
  GstFlowReturn ret = gst_patch_reader_drain (self);
  GstCaps *caps;
  GstVideoInfo vinfo;
  PixelLayout layout;

  if (ret != GST_FLOW_OK)
    return ret;

  caps = gst_patch_reader_choose_caps (self, size);
  if (caps == NULL || !gst_video_info_from_caps (&vinfo, caps)
      || !pixel_layout_for_format (GST_VIDEO_INFO_FORMAT (&vinfo), &layout)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Downstream accepts none of RGB, RGBA, RGBx or BGRx at %ux%u "
            "for the patches.", size, size), ("caps: %" GST_PTR_FORMAT, caps));
    gst_clear_caps (&caps);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  GST_INFO_OBJECT (self, "output caps %" GST_PTR_FORMAT, caps);

  self->vinfo = vinfo;
  self->layout = layout;
  self->out_size = size;
  gst_pad_push_event (self->srcpad, gst_event_new_caps (caps));
  if (!gst_patch_reader_decide_allocation (self, caps)) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Could not set up output buffers for %ux%u patches.", size, size),
        ("caps: %" GST_PTR_FORMAT, caps));
    gst_caps_unref (caps);
    self->out_size = 0;
    return GST_FLOW_ERROR;
  }
  gst_caps_unref (caps);

  if (self->pending_segment) {
    ret = gst_patch_reader_enqueue_event (self, self->pending_segment);
    self->pending_segment = NULL;
  }
  return ret;
}

static SlideContext *
gst_patch_reader_slide_context (GstPatchReader * self, const GstStructure * s)
{
  const gchar *path = gst_structure_get_string (s, "path");
  SlideContext *ctx;

  if (path == NULL)
    return NULL;
  ctx = g_hash_table_lookup (self->slides, path);
  if (ctx == NULL) {
    ctx = slide_context_new (path, gst_structure_get_string (s, "label"));
    g_hash_table_insert (self->slides, ctx->path, ctx);
  }
  return ctx;
}

static void
gst_patch_reader_count_skipped (GstPatchReader * self)
{
  g_mutex_lock (&self->lock);
  self->patches_skipped++;
  g_mutex_unlock (&self->lock);
}

static GstFlowReturn
gst_patch_reader_queue_patch (GstPatchReader * self, SlideContext * ctx,
    const WsiPatchRecord * record)
{
  ReaderItem item = { 0, };
  GstBufferPool *pool;
  GstFlowReturn ret;

  if (record->out_size == 0 || record->footprint == 0) {
    if (!self->warned_bad_record)
      GST_ELEMENT_WARNING (self, STREAM, FORMAT,
          ("Dropping patch records of \"%s\" with a zero footprint or "
              "output size.", ctx->path), (NULL));
    self->warned_bad_record = TRUE;
    gst_patch_reader_count_skipped (self);
    return GST_FLOW_OK;
  }
  if (g_atomic_int_get (&ctx->given_up)) {
    gst_patch_reader_count_skipped (self);
    return GST_FLOW_OK;
  }
  if (record->out_size != self->out_size
      || gst_pad_check_reconfigure (self->srcpad)) {
    ret = gst_patch_reader_negotiate (self, record->out_size);
    if (ret != GST_FLOW_OK)
      return ret;
  }

  g_mutex_lock (&self->lock);
  pool = self->pool ? gst_object_ref (self->pool) : NULL;
  g_mutex_unlock (&self->lock);
  if (pool == NULL)
    return GST_FLOW_FLUSHING;
  ret = gst_buffer_pool_acquire_buffer (pool, &item.buffer, NULL);
  gst_object_unref (pool);
  if (ret != GST_FLOW_OK)
    return ret;

  item.kind = ITEM_PATCH;
  item.state = ITEM_WAITING;
  item.record = *record;
  item.slide = ctx;
  return gst_patch_reader_enqueue (self, &item);
}

static GstFlowReturn
gst_patch_reader_chain (GstPad * pad, GstObject * parent, GstBuffer * buffer)
{
  GstPatchReader *self = GST_PATCH_READER (parent);
  const GstStructure *slide_meta = wsi_slide_meta_get (buffer);
  SlideContext *ctx = NULL;
  GstFlowReturn ret = GST_FLOW_OK;
  GstMapInfo map;
  gsize i, n;

  if (slide_meta)
    ctx = gst_patch_reader_slide_context (self, slide_meta);
  if (ctx == NULL) {
    if (!self->warned_no_meta)
      GST_ELEMENT_WARNING (self, STREAM, FORMAT,
          ("Dropping coordinate buffers without a WsiSlideMeta naming the "
              "slide path."), (NULL));
    self->warned_no_meta = TRUE;
    gst_buffer_unref (buffer);
    return GST_FLOW_OK;
  }

  if (!gst_buffer_map (buffer, &map, GST_MAP_READ)) {
    gst_buffer_unref (buffer);
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Could not read a coordinate buffer of \"%s\".", ctx->path), (NULL));
    return GST_FLOW_ERROR;
  }
  n = map.size / sizeof (WsiPatchRecord);
  if (map.size % sizeof (WsiPatchRecord) != 0)
    GST_WARNING_OBJECT (self, "ignoring %" G_GSIZE_FORMAT " trailing bytes",
        map.size % sizeof (WsiPatchRecord));

  for (i = 0; i < n && ret == GST_FLOW_OK; i++) {
    WsiPatchRecord record;

    /* Copy: the buffer memory need not be aligned for the record. */
    memcpy (&record, map.data + i * sizeof (record), sizeof (record));
    ret = gst_patch_reader_queue_patch (self, ctx, &record);
  }
  gst_buffer_unmap (buffer, &map);
  gst_buffer_unref (buffer);
  if (ret != GST_FLOW_OK)
    GST_DEBUG_OBJECT (self, "chain returns %s", gst_flow_get_name (ret));
  return ret;
}

/* ---- flushing ----------------------------------------------------------- */

static void
gst_patch_reader_set_flushing (GstPatchReader * self)
{
  GstBufferPool *pool;

  g_mutex_lock (&self->lock);
  self->flushing = TRUE;
  pool = self->pool ? gst_object_ref (self->pool) : NULL;
  g_cond_broadcast (&self->item_added);
  g_cond_broadcast (&self->item_done);
  g_cond_broadcast (&self->space_freed);
  g_mutex_unlock (&self->lock);

  /* The chain may wait for a free output buffer. */
  if (pool) {
    gst_buffer_pool_set_flushing (pool, TRUE);
    gst_object_unref (pool);
  }
}

/* Discards everything in flight, once the workers are out of it. */
static void
gst_patch_reader_reset_flushing (GstPatchReader * self)
{
  GstBufferPool *pool;

  g_mutex_lock (&self->lock);
  while (self->n_decoding > 0)
    g_cond_wait (&self->item_done, &self->lock);
  ring_clear (self);
  self->flushing = FALSE;
  self->eos_queued = FALSE;
  self->src_flow = GST_FLOW_OK;
  pool = self->pool ? gst_object_ref (self->pool) : NULL;
  g_mutex_unlock (&self->lock);

  if (pool) {
    gst_buffer_pool_set_flushing (pool, FALSE);
    gst_object_unref (pool);
  }
}

static gboolean
gst_patch_reader_start_task (GstPatchReader * self)
{
  return gst_pad_start_task (self->srcpad,
      (GstTaskFunction) gst_patch_reader_src_loop, self->srcpad, NULL);
}

/* ---- events and queries ------------------------------------------------- */

static GstEvent *
segment_in_time (GstEvent * event)
{
  const GstSegment *segment;
  GstSegment time_segment;
  GstEvent *time_event;

  gst_event_parse_segment (event, &segment);
  if (segment->format == GST_FORMAT_TIME)
    return event;
  /* Patches carry no timestamps; video downstream wants a time segment. */
  gst_segment_init (&time_segment, GST_FORMAT_TIME);
  time_event = gst_event_new_segment (&time_segment);
  gst_event_set_seqnum (time_event, gst_event_get_seqnum (event));
  gst_event_unref (event);
  return time_event;
}

static gboolean
gst_patch_reader_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstPatchReader *self = GST_PATCH_READER (parent);
  GstFlowReturn ret;

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_START:
      gst_patch_reader_set_flushing (self);
      gst_pad_push_event (self->srcpad, event);
      gst_pad_pause_task (self->srcpad);
      return TRUE;
    case GST_EVENT_FLUSH_STOP:
      gst_patch_reader_reset_flushing (self);
      gst_pad_push_event (self->srcpad, event);
      return gst_patch_reader_start_task (self);
    case GST_EVENT_CAPS:
      /* Output caps follow the records' out_size, not the input caps. */
      gst_event_unref (event);
      return TRUE;
    case GST_EVENT_SEGMENT:
      event = segment_in_time (event);
      if (self->out_size == 0) {
        /* Caps must go out before the first segment. */
        gst_event_replace (&self->pending_segment, event);
        gst_event_unref (event);
        return TRUE;
      }
      break;
    case GST_EVENT_STREAM_START:
      g_mutex_lock (&self->lock);
      self->eos_queued = FALSE;
      g_mutex_unlock (&self->lock);
      break;
    case GST_EVENT_EOS:
      if (self->pending_segment) {
        gst_patch_reader_enqueue_event (self, self->pending_segment);
        self->pending_segment = NULL;
      }
      ret = gst_patch_reader_enqueue_event (self, event);
      if (ret == GST_FLOW_OK) {
        g_mutex_lock (&self->lock);
        self->eos_queued = TRUE;
        g_mutex_unlock (&self->lock);
      }
      return ret == GST_FLOW_OK;
    default:
      break;
  }

  if (!GST_EVENT_IS_SERIALIZED (event))
    return gst_pad_event_default (pad, parent, event);
  ret = gst_patch_reader_enqueue_event (self, event);
  return ret == GST_FLOW_OK;
}

static gboolean
gst_patch_reader_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_ALLOCATION:
      /* Coordinates and pixels have nothing in common to allocate. */
      return FALSE;
    default:
      return gst_pad_query_default (pad, parent, query);
  }
}

static gboolean
gst_patch_reader_sink_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active)
{
  GstPatchReader *self = GST_PATCH_READER (parent);

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (active) {
    gst_patch_reader_reset_flushing (self);
  } else {
    /* Unblock a chain waiting for room; the pad then waits for it. */
    gst_patch_reader_set_flushing (self);
  }
  return TRUE;
}

static gboolean
gst_patch_reader_src_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active)
{
  GstPatchReader *self = GST_PATCH_READER (parent);

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (active) {
    gst_patch_reader_reset_flushing (self);
    return gst_patch_reader_start_task (self);
  }
  gst_patch_reader_set_flushing (self);
  return gst_pad_stop_task (pad);
}

/* ---- state and properties ----------------------------------------------- */

static void
gst_patch_reader_reset_stream (GstPatchReader * self)
{
  GstBufferPool *pool;

  g_mutex_lock (&self->lock);
  pool = self->pool;
  self->pool = NULL;
  g_mutex_unlock (&self->lock);
  if (pool) {
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
  }
  slide_cache_clear (&self->cache);
  g_hash_table_remove_all (self->slides);
  gst_clear_event (&self->pending_segment);
  self->out_size = 0;
  self->warned_no_meta = FALSE;
  self->warned_bad_record = FALSE;
  self->src_flow = GST_FLOW_OK;
  self->eos_queued = FALSE;
}

static GstStateChangeReturn
gst_patch_reader_change_state (GstElement * element, GstStateChange transition)
{
  GstPatchReader *self = GST_PATCH_READER (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED)
    gst_patch_reader_start_workers (self);

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);

  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY
      || (transition == GST_STATE_CHANGE_READY_TO_PAUSED
          && ret == GST_STATE_CHANGE_FAILURE)) {
    gst_patch_reader_stop_workers (self);
    gst_patch_reader_reset_stream (self);
  }
  return ret;
}

static void
gst_patch_reader_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstPatchReader *self = GST_PATCH_READER (object);

  switch (prop_id) {
    case PROP_THREADS:
      GST_OBJECT_LOCK (self);
      self->threads = g_value_get_uint (value);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_MAX_OPEN_SLIDES:
      slide_cache_set_max_open (&self->cache, g_value_get_uint (value));
      break;
    case PROP_MAX_READ_FAILURES:
      GST_OBJECT_LOCK (self);
      self->max_read_failures = g_value_get_uint (value);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_RESAMPLE_TOLERANCE:
      GST_OBJECT_LOCK (self);
      self->resample_tolerance = g_value_get_double (value);
      g_atomic_int_set (&self->resample_tolerance_ppm,
          (gint) lround (self->resample_tolerance * 1e6));
      GST_OBJECT_UNLOCK (self);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_patch_reader_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstPatchReader *self = GST_PATCH_READER (object);

  switch (prop_id) {
    case PROP_THREADS:
      GST_OBJECT_LOCK (self);
      g_value_set_uint (value, self->threads);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_MAX_OPEN_SLIDES:
      g_mutex_lock (&self->cache.lock);
      g_value_set_uint (value, self->cache.max_open);
      g_mutex_unlock (&self->cache.lock);
      break;
    case PROP_MAX_READ_FAILURES:
      GST_OBJECT_LOCK (self);
      g_value_set_uint (value, self->max_read_failures);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_RESAMPLE_TOLERANCE:
      GST_OBJECT_LOCK (self);
      g_value_set_double (value, self->resample_tolerance);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_PATCHES_READ:
      g_mutex_lock (&self->lock);
      g_value_set_uint64 (value, self->patches_read);
      g_mutex_unlock (&self->lock);
      break;
    case PROP_PATCHES_FAILED:
      g_mutex_lock (&self->lock);
      g_value_set_uint64 (value, self->patches_failed);
      g_mutex_unlock (&self->lock);
      break;
    case PROP_PATCHES_SKIPPED:
      g_mutex_lock (&self->lock);
      g_value_set_uint64 (value, self->patches_skipped);
      g_mutex_unlock (&self->lock);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_patch_reader_finalize (GObject * object)
{
  GstPatchReader *self = GST_PATCH_READER (object);

  gst_patch_reader_stop_workers (self);
  gst_patch_reader_reset_stream (self);
  slide_cache_finalize (&self->cache);
  g_hash_table_unref (self->slides);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->item_added);
  g_cond_clear (&self->item_done);
  g_cond_clear (&self->space_freed);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_patch_reader_class_init (GstPatchReaderClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->set_property = gst_patch_reader_set_property;
  gobject_class->get_property = gst_patch_reader_get_property;
  gobject_class->finalize = gst_patch_reader_finalize;

  g_object_class_install_property (gobject_class, PROP_THREADS,
      g_param_spec_uint ("threads", "Threads",
          "Decoding threads, 0..64; 0 = automatic: the number of CPU cores, "
          "divided by LOCAL_WORLD_SIZE when torchrun sets it. Takes effect "
          "at the next READY to PAUSED change",
          0, MAX_THREADS, DEFAULT_THREADS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_MAX_OPEN_SLIDES,
      g_param_spec_uint ("max-open-slides", "Max open slides",
          "Slides kept open at once, least recently used closed first "
          "(1..1024; OpenSlide keeps up to 32 MB of tile cache per open "
          "slide)", 1, MAX_MAX_OPEN_SLIDES, DEFAULT_MAX_OPEN_SLIDES,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_MAX_READ_FAILURES,
      g_param_spec_uint ("max-read-failures", "Max read failures",
          "Failed reads in a row after which a slide is given up for the "
          "rest of the stream (its remaining patches dropped), 1..1000000",
          1, MAX_MAX_READ_FAILURES, DEFAULT_MAX_READ_FAILURES,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_RESAMPLE_TOLERANCE,
      g_param_spec_double ("resample-tolerance", "Resample tolerance",
          "Relative difference between the region to read and the patch "
          "size under which the region is read at the patch size instead of "
          "being resampled (the patch's mpp then differs from the target by "
          "at most this much, and its record says so). 0 = always resample "
          "exactly. Range 0..0.1, default 0.01", 0.0, 0.1,
          DEFAULT_RESAMPLE_TOLERANCE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_PATCHES_READ,
      g_param_spec_uint64 ("patches-read", "Patches read",
          "Patches decoded and pushed out since the last READY to PAUSED "
          "change (count)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_PATCHES_FAILED,
      g_param_spec_uint64 ("patches-failed", "Patches failed",
          "Patches dropped because their read failed, since the last READY "
          "to PAUSED change (count)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_PATCHES_SKIPPED,
      g_param_spec_uint64 ("patches-skipped", "Patches skipped",
          "Patches dropped without a read because their slide could not be "
          "opened or was given up, or their record was invalid, since the "
          "last READY to PAUSED change (count)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Whole-slide patch reader", "Decoder/Video",
      "Reads the pixels of whole-slide image patches, in parallel and in "
      "order, from their coordinates",
      "gst-wsi developers <gst-wsi@example.invalid>");

  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_patch_reader_change_state);
}

static void
gst_patch_reader_init (GstPatchReader * self)
{
  self->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_patch_reader_chain));
  gst_pad_set_event_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_patch_reader_sink_event));
  gst_pad_set_query_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_patch_reader_sink_query));
  gst_pad_set_activatemode_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_patch_reader_sink_activate_mode));
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);

  self->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  gst_pad_set_activatemode_function (self->srcpad,
      GST_DEBUG_FUNCPTR (gst_patch_reader_src_activate_mode));
  gst_pad_use_fixed_caps (self->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  self->threads = DEFAULT_THREADS;
  self->max_read_failures = DEFAULT_MAX_READ_FAILURES;
  self->resample_tolerance = DEFAULT_RESAMPLE_TOLERANCE;
  self->resample_tolerance_ppm = (gint) lround (DEFAULT_RESAMPLE_TOLERANCE * 1e6);
  self->src_flow = GST_FLOW_OK;
  g_mutex_init (&self->lock);
  g_cond_init (&self->item_added);
  g_cond_init (&self->item_done);
  g_cond_init (&self->space_freed);
  self->slides = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
      (GDestroyNotify) slide_context_free);
  slide_cache_init (&self->cache);
}
