/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsislide.h: an open whole-slide image, whatever library decodes it.
 *
 * wsislidesrc and patchreader only talk to this interface. A backend fills
 * in a WsiSlideBackend; each is built only when its library is found
 * (meson options `openslide` and `tiff`; `dicom` comes with `tiff`, whose
 * JPEG decoder it shares), and wsi_slide_backends() lists the ones built,
 * in the order `auto` tries them: DICOM first (it takes only files with the
 * DICM magic, some of which are also TIFF files), the direct TIFF/JPEG
 * backend (it declines every file it cannot read exactly), then OpenSlide.
 *
 * Contract of a read (wsi_slide_read()): the caller asks for a level-0
 * region, an output size and a pixel format; the layer picks the pyramid
 * level, the backend writes the pixels in that format straight into the
 * caller's memory and reports what it did (level, region read, native
 * scaling). Transparent (unscanned or outside the image) areas come out
 * white, as glass.
 *
 * Threading: a WsiSlide may be read from many threads at once, each with
 * its own WsiReadContext (per-thread decoder state and scratch memory,
 * reused from read to read so that the hot path allocates nothing). Open
 * and close are not thread-safe with respect to reads of the same slide.
 * A backend whose library has per-handle error state (OpenSlide) reports
 * WSI_SLIDE_ERROR_READ with `sticky` set in the report: the caller must
 * reopen the slide before reading it again.
 */

#ifndef __WSI_SLIDE_H__
#define __WSI_SLIDE_H__

#include <glib.h>
#include "wsiresample.h"
#include "wsilocation.h"      /* wsi_display_text, wsi_location_display */

G_BEGIN_DECLS

typedef struct _WsiSlide WsiSlide;
typedef struct _WsiSlideBackend WsiSlideBackend;
typedef struct _WsiReadContext WsiReadContext;
typedef struct _WsiTileCache WsiTileCache;

#define WSI_SLIDE_ERROR (wsi_slide_error_quark ())
GQuark wsi_slide_error_quark (void);

typedef enum
{
  WSI_SLIDE_ERROR_UNSUPPORTED,  /* no backend recognises the file */
  WSI_SLIDE_ERROR_OPEN,         /* recognised, but opening failed */
  WSI_SLIDE_ERROR_READ,         /* a region could not be decoded */
  WSI_SLIDE_ERROR_EMPTY,        /* the slide has no pixels */
  /* The backend reads this format but cannot trust this file (damaged
   * geometry, tile table or level order): `auto` hands it to the next
   * backend and says so once (WsiSlide.declined). */
  WSI_SLIDE_ERROR_DECLINED,
  /* The backend owns this format (an OME-TIFF, an OME-Zarr store) but the
   * file holds pixels nothing here delivers as RGB (16-bit, more than three
   * channels, separate planes) or is damaged beyond reading: `auto` stops
   * here rather than let another backend read it as something else. */
  WSI_SLIDE_ERROR_REFUSED
} WsiSlideError;

/* Where WsiSlide.mpp_x/mpp_y came from. */
#define WSI_MPP_SOURCE_BACKEND "openslide"
#define WSI_MPP_SOURCE_APERIO "aperio-description"
#define WSI_MPP_SOURCE_TIFF "tiff-resolution"
#define WSI_MPP_SOURCE_DICOM "dicom-pixel-spacing"
#define WSI_MPP_SOURCE_OME "ome-xml"
#define WSI_MPP_SOURCE_NGFF "ngff-scale"
#define WSI_MPP_SOURCE_UNKNOWN "unknown"

/* Backend names, as the `backend` properties and the slide meta spell them. */
#define WSI_BACKEND_AUTO "auto"
#define WSI_BACKEND_OPENSLIDE "openslide"
#define WSI_BACKEND_TIFF "tiff"
#define WSI_BACKEND_DICOM "dicom"
#define WSI_BACKEND_ZARR "zarr"

struct _WsiSlide
{
  const WsiSlideBackend *backend;
  gpointer handle;              /* the backend's own object */
  gchar *path;                  /* as opened: a URL may hold credentials */
  gchar *display;               /* for messages: wsi_location_display () */
  gchar *vendor;                /* "aperio", "generic-tiff", ... */
  /* NULL, or why an earlier backend declined a file of its own format
   * (WSI_SLIDE_ERROR_DECLINED) before this one opened it with `auto`:
   * "the tiff backend declined it: ..." */
  gchar *declined;
  /* NULL, or why the file that opened is damaged though it opened (a DICOM
   * instance declaring frames it does not hold: cut inside Pixel Data):
   * "FILE: truncated: ...". The stream goes on; the caller says so once. */
  gchar *damaged;
  gint level_count;
  gint64 *level_width;          /* level_count entries */
  gint64 *level_height;
  gdouble *level_downsample;
  gint64 *level_tile_width;     /* 0 when the level is not tiled/unknown */
  gint64 *level_tile_height;
  gdouble mpp_x;                /* microns per level-0 pixel, 0 = unknown */
  gdouble mpp_y;
  const gchar *mpp_source;      /* one of WSI_MPP_SOURCE_* */
  gdouble objective_power;      /* the scan's objective (20, 40), 0 = unknown */
  /* The slide's ICC profile: its size in bytes (0 = none) and the SHA-256
   * of its bytes in lower-case hex (NULL when none). Noted, not applied. */
  guint64 icc_profile_size;
  gchar *icc_profile_sha256;
  guint64 uid;                  /* unique per open: tile cache keys */
};

/* How far below the output's resolution a DCT-scaled decode may lie
 * (relative): 2 % lets 40x scans at 0.2520-0.2527 um/px (factors 1.984 and
 * 1.979 to 0.5 um/px, 3.958 to 1.0) decode at 1/2 and 1/4. */
#define WSI_NATIVE_SCALE_MARGIN 0.02

/* Near-whole factors prefer a scale that leaves at least this factor to
 * the area average: with about one scaled pixel per output pixel the
 * fractional phase blends neighbours (PSNR 30.8 dB measured for 1.0 um/px
 * from 0.2527 via 1/4 then 0.99 on the CMU slide), with 1.5 or more it
 * averages them as the exact read does (41.7 dB via 1/2 then 1.98). */
#define WSI_NATIVE_SCALE_MIN_REST 1.5

/* What the caller wants from one read. */
typedef struct
{
  gint64 x, y;                  /* top-left, level-0 pixels */
  gint64 width, height;         /* footprint, level-0 pixels */
  /* A level region within this relative difference of the output size is
   * read at the output size instead of resampled (0 = always exact). */
  gdouble resample_tolerance;
  /* Let the backend scale natively (JPEG DCT scaling) by 1/2, 1/4 or 1/8.
   * When the region is downsampled by a whole multiple of that, the window
   * is moved onto the scaled pixel grid (by less than one output pixel;
   * the report says where it starts) so that no output pixel straddles two
   * scaled pixels. Otherwise the largest scale whose resolution is still
   * the output's, or at most WSI_NATIVE_SCALE_MARGIN below it, is decoded
   * and resampled for the remaining factor at the requested position
   * (e.g. 1.979 = 1/2 then 0.99). */
  gboolean native_scaling;
  WsiTileCache *tile_cache;     /* decoded tiles shared by threads, or NULL */
  /* Reads follow a grid in raster order (feature extraction): a tile the
   * region covers only in part is decoded whole and cached on its first
   * request, since the next patch of the row or of the next row needs the
   * rest; tiles it covers whole are decoded straight into the region. With
   * FALSE (random patches) a tile is kept only when asked for twice. */
  gboolean grid_order;
} WsiReadRequest;

/* What a read did. */
typedef struct
{
  const gchar *backend;         /* the backend's name */
  gint64 x, y;                  /* level-0 top-left the output starts at:
                                 * the request's, unless native scaling
                                 * moved it onto its grid (< 1 out pixel) */
  gint level;                   /* pyramid level read */
  gint64 read_width;            /* region read at @level, level pixels */
  gint64 read_height;
  gint64 footprint_width;       /* level-0 pixels the output really covers */
  gint64 footprint_height;
  guint native_scale;           /* 1, 2, 4 or 8: backend-side downscale */
  guint tiles_decoded;          /* tiles decoded for this read */
  guint tiles_from_cache;       /* tiles found in the tile cache */
  gboolean sticky;              /* on failure: the slide must be reopened */
} WsiReadReport;

/* The level and level region a request resolves to (wsi_slide_plan_read). */
typedef struct
{
  gint64 x, y;                  /* level-0 top-left */
  gint level;
  gint64 read_width, read_height;       /* at @level, level pixels */
  gint64 footprint_width, footprint_height;     /* level 0, after snapping */
} WsiReadPlan;

struct _WsiSlideBackend
{
  const gchar *name;
  /* TRUE for a format stored as a folder of objects (OME-Zarr): a local
   * folder this backend detects is opened as a slide, not refused as "not a
   * regular file" before the backends see it. */
  gboolean opens_folders;
  /* Returns TRUE when this backend can read the file (cheap check). */
  gboolean (*detect) (const gchar * path);
  /* Fills slide->handle and every descriptive field, or sets @error. */
  gboolean (*open) (WsiSlide * slide, GError ** error);
  /* Decodes a w x h region at @level whose top-left is (x, y) in level-0
   * pixels into @argb: premultiplied 0xAARRGGBB host-order words,
   * row-major, stride w; outside the level: 0 (transparent). @ctx may be
   * NULL (the backend then uses temporary state). */
  gboolean (*read_argb) (WsiSlide * slide, WsiReadContext * ctx,
      guint32 * argb, gint64 x, gint64 y, gint level, gint64 w, gint64 h,
      WsiReadReport * report, GError ** error);
  /* Optional: the whole read contract for @plan into @out (any native
   * scaling is the backend's choice under request->native_scaling). NULL:
   * the layer reads ARGB at the plan's level and resamples it. */
  gboolean (*read) (WsiSlide * slide, WsiReadContext * ctx,
      const WsiReadRequest * request, const WsiReadPlan * plan,
      const WsiImage * out, WsiReadReport * report, GError ** error);
  /* Optional per-thread state (a JPEG decompressor, ...), created on the
   * first read of a thread, freed with its WsiReadContext. */
  gpointer (*thread_state_new) (void);
  void (*thread_state_free) (gpointer state);
  /* Releases slide->handle. */
  void (*close) (WsiSlide * slide);
  /* Optional: @plan will be read soon; a backend reading a remote source
   * starts fetching its bytes (wsi_byte_source_prefetch). Never blocks. */
  void (*prefetch) (WsiSlide * slide, const WsiReadPlan * plan);
  /* Optional, with read_argb_scaled: the largest DCT scale (1, 2, 4 or 8)
   * not above @wanted that level @level decodes natively. */
  guint (*native_scale) (const WsiSlide * slide, gint level, guint wanted);
  /* Decodes a w x h region of level @level scaled down natively by @scale
   * (a value native_scale() returned), top-left (x, y) in scaled level
   * pixels, as read_argb does. */
  gboolean (*read_argb_scaled) (WsiSlide * slide, WsiReadContext * ctx,
      guint32 * argb, gint level, guint scale, gint64 x, gint64 y, gint64 w,
      gint64 h, GError ** error);
  /* Optional, with read_argb_scaled: the same region as tight RGB bytes
   * composited on white, exactly what wsi_argb_to_rgb_on_white() makes of
   * read_argb_scaled's pixels (outside the level: white), @stride bytes a
   * row; decoders that write RGB themselves skip the ARGB words. */
  gboolean (*read_rgb_scaled) (WsiSlide * slide, WsiReadContext * ctx,
      guint8 * rgb, gsize stride, gint level, guint scale, gint64 x,
      gint64 y, gint64 w, gint64 h, GError ** error);
};

/* Opens @path with the backend named @backend (WSI_BACKEND_*; NULL or
 * "auto" tries every built backend in order). The error names the file
 * and the reason. */
WsiSlide *wsi_slide_open (const gchar * path, const gchar * backend,
    GError ** error);

void wsi_slide_close (WsiSlide * slide);

/* Level-region read as premultiplied ARGB (overviews, benchmarks). */
gboolean wsi_slide_read_region (WsiSlide * slide, WsiReadContext * ctx,
    guint32 * argb, gint64 x, gint64 y, gint level, gint64 w, gint64 h,
    GError ** error);

/* The largest native (DCT) scale not above @wanted (a power of two) at
 * which the backend decodes level @level: 1 when it has none. Overviews
 * read a level scaled this way (wsioverview.c). */
guint wsi_slide_native_scale (const WsiSlide * slide, gint level,
    guint wanted);

/* Level-region read scaled down natively by @scale (from
 * wsi_slide_native_scale(); 1 is wsi_slide_read_region()): (x, y, w, h) are
 * pixels of the level at that scale. */
gboolean wsi_slide_read_region_scaled (WsiSlide * slide, WsiReadContext * ctx,
    guint32 * argb, gint level, guint scale, gint64 x, gint64 y, gint64 w,
    gint64 h, GError ** error);

/* TRUE when wsi_slide_read_region_scaled_rgb() can read level @level at
 * @scale (> 1) of @slide: its backend decodes RGB itself. */
gboolean wsi_slide_has_rgb_scaled (const WsiSlide * slide, gint level,
    guint scale);

/* wsi_slide_read_region_scaled() as RGB composited on white (the bytes
 * wsi_argb_to_rgb_on_white() makes of its pixels), @stride bytes a row,
 * decoded straight into @rgb (issue 23: the overview's conversion pass).
 * Only where wsi_slide_has_rgb_scaled(). */
gboolean wsi_slide_read_region_scaled_rgb (WsiSlide * slide,
    WsiReadContext * ctx, guint8 * rgb, gsize stride, gint level, guint scale,
    gint64 x, gint64 y, gint64 w, gint64 h, GError ** error);

/* Resolves @request to a level and level region for an @out_width x
 * @out_height output: the coarsest level whose downsample does not exceed
 * footprint / output, the region rounded to whole level pixels, snapped to
 * the output size within the resample tolerance. */
void wsi_slide_plan_read (const WsiSlide * slide,
    const WsiReadRequest * request, guint out_width, guint out_height,
    WsiReadPlan * plan);

/* The read contract (see the top of this file). @report is filled in on
 * success and on failure. */
gboolean wsi_slide_read (WsiSlide * slide, WsiReadContext * ctx,
    const WsiReadRequest * request, const WsiImage * out,
    WsiReadReport * report, GError ** error);

/* A hint that @request (for an @out_width x @out_height output) will be
 * read soon: backends with remote bytes start fetching the tiles it covers.
 * Never blocks on the network; a no-op for local files. Any thread. */
void wsi_slide_prefetch (WsiSlide * slide, const WsiReadRequest * request,
    guint out_width, guint out_height);

/* A hint that the @w x @h level pixels of @level at level-0 (@x, @y) will
 * be read soon, all of them (an overview): backends with remote bytes
 * start fetching every tile under the region at once, so a read that
 * proceeds strip by strip pays one round trip, not one per strip. Never
 * blocks; a no-op for local files. Any thread. */
void wsi_slide_prefetch_level (WsiSlide * slide, gint level, gint64 x,
    gint64 y, gint64 w, gint64 h);

/* The coarsest level whose downsample does not exceed @downsample (with a
 * small tolerance so that 2.0005 counts as 2). */
gint wsi_slide_best_level (const WsiSlide * slide, gdouble downsample);

/* TRUE when @path has an extension some backend may read (for directory
 * scans). */
gboolean wsi_slide_has_known_extension (const gchar * path);

/* The extensions wsi_slide_has_known_extension() accepts, for messages:
 * ".svs, .tif, ..." (g_free it). */
gchar *wsi_slide_known_extensions_text (void);

/* Microns per pixel from TIFF resolution tags, or 0 when the unit is not
 * centimetre/inch or the value is implausible for a slide (placeholders such
 * as 72 dpi or 10 px/cm). @unit is the TIFF ResolutionUnit (2 = inch,
 * 3 = centimetre). */
gdouble wsi_mpp_from_tiff_resolution (gdouble pixels_per_unit, gint unit);

/* Allocates the per-level arrays of @slide for @level_count levels. */
void wsi_slide_alloc_levels (WsiSlide * slide, gint level_count);

/* What a backend's open says of level @level (allocated): its size and
 * tiles, and its downsample as OpenSlide computes it for a pyramid,
 * (h0 / h + w0 / w) / 2 (exactly 1 for level 0, which is described first). */
void wsi_slide_set_level (WsiSlide * slide, gint level, gint64 width,
    gint64 height, gint64 tile_width, gint64 tile_height);

/* @slide's vendor (copied) and mpp; an mpp unknown on either axis (<= 0)
 * leaves both unknown (0, WSI_MPP_SOURCE_UNKNOWN). */
void wsi_slide_set_origin (WsiSlide * slide, const gchar * vendor,
    gdouble mpp_x, gdouble mpp_y, const gchar * mpp_source);

/* The backends built, in the order `auto` tries them. */
const WsiSlideBackend *const *wsi_slide_backends (void);

/* The built backend called @name, or NULL. */
const WsiSlideBackend *wsi_slide_backend_find (const gchar * name);

/* ---- per-thread read context ------------------------------------------ */

WsiReadContext *wsi_read_context_new (void);
void wsi_read_context_free (WsiReadContext * ctx);

/* This thread's state for @backend (created on first use), or NULL when
 * the backend keeps none. */
gpointer wsi_read_context_backend_state (WsiReadContext * ctx,
    const WsiSlideBackend * backend);

/* Scratch memory @slot (0..WSI_READ_CONTEXT_SLOTS-1) of at least @bytes,
 * grown on demand and kept for the next read; NULL when out of memory. */
#define WSI_READ_CONTEXT_SLOTS 4
gpointer wsi_read_context_scratch (WsiReadContext * ctx, guint slot,
    gsize bytes);

/* The context's resampler (see wsiresample.h). */
WsiResampler *wsi_read_context_resampler (WsiReadContext * ctx);

#ifdef WSI_HAVE_OPENSLIDE
extern const WsiSlideBackend wsi_slide_backend_openslide;
#endif
#ifdef WSI_HAVE_TIFF
extern const WsiSlideBackend wsi_slide_backend_tiff;
#endif
#ifdef WSI_HAVE_ZARR
extern const WsiSlideBackend wsi_slide_backend_zarr;
#endif
#ifdef WSI_HAVE_DICOM
extern const WsiSlideBackend wsi_slide_backend_dicom;
#endif

G_END_DECLS

#endif /* __WSI_SLIDE_H__ */
