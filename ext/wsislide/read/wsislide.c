/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsislide.c: backend-neutral part of the slide layer (see wsislide.h):
 * backend choice, level planning and the default read path (ARGB from the
 * backend, then the shared kernels of wsiresample.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsislide.h"
#include "wsilocalfile.h"

#include <gst/wsi/wsilevel.h>
#include "wsibytesource.h"
#include "wsireadsources.h"


#include <math.h>
#include <string.h>

/* Extensions of the formats OpenSlide 3.4.1 reads, and DICOM. */
static const gchar *const known_extensions[] = {
  ".svs", ".tif", ".tiff", ".ndpi", ".vms", ".vmu", ".scn", ".mrxs",
  ".svslide", ".bif", ".dcm", ".zarr", NULL
};

/* Plausible microns per pixel for a slide scan (from 100x oil down to an
 * overview-only scan); anything outside is a writer's placeholder. */
#define MIN_PLAUSIBLE_MPP 0.05
#define MAX_PLAUSIBLE_MPP 20.0

G_DEFINE_QUARK (wsi-slide-error-quark, wsi_slide_error);

const WsiSlideBackend *const *
wsi_slide_backends (void)
{
  /* The direct reader first: it declines whatever it cannot read exactly. */
  static const WsiSlideBackend *const backends[] = {
#ifdef WSI_HAVE_DICOM
    /* DICM after the preamble; dual-personality files are TIFF too. */
    &wsi_slide_backend_dicom,
#endif
#ifdef WSI_HAVE_ZARR
    /* OME-Zarr stores: folders (or URLs ending in .zarr), never a file. */
    &wsi_slide_backend_zarr,
#endif
#ifdef WSI_HAVE_TIFF
    &wsi_slide_backend_tiff,
#endif
#ifdef WSI_HAVE_OPENSLIDE
    &wsi_slide_backend_openslide,
#endif
    NULL
  };
  return backends;
}

const WsiSlideBackend *
wsi_slide_backend_find (const gchar * name)
{
  const WsiSlideBackend *const *backend;

  for (backend = wsi_slide_backends (); *backend != NULL; backend++) {
    if (g_strcmp0 ((*backend)->name, name) == 0)
      return *backend;
  }
  return NULL;
}

void
wsi_slide_alloc_levels (WsiSlide * slide, gint level_count)
{
  gint n = MAX (level_count, 1);

  slide->level_count = MAX (level_count, 0);
  slide->level_width = g_new0 (gint64, n);
  slide->level_height = g_new0 (gint64, n);
  slide->level_downsample = g_new0 (gdouble, n);
  slide->level_tile_width = g_new0 (gint64, n);
  slide->level_tile_height = g_new0 (gint64, n);
}

void
wsi_slide_set_level (WsiSlide * slide, gint level, gint64 width,
    gint64 height, gint64 tile_width, gint64 tile_height)
{
  gdouble w0 = level == 0 ? width : slide->level_width[0];
  gdouble h0 = level == 0 ? height : slide->level_height[0];

  slide->level_width[level] = width;
  slide->level_height[level] = height;
  slide->level_downsample[level] = level == 0 ? 1.0 :
      (h0 / (gdouble) height + w0 / (gdouble) width) / 2.0;
  slide->level_tile_width[level] = tile_width;
  slide->level_tile_height[level] = tile_height;
}

void
wsi_slide_set_origin (WsiSlide * slide, const gchar * vendor, gdouble mpp_x,
    gdouble mpp_y, const gchar * mpp_source)
{
  gboolean known = mpp_x > 0.0 && mpp_y > 0.0;

  g_free (slide->vendor);
  slide->vendor = g_strdup (vendor);
  slide->mpp_x = known ? mpp_x : 0.0;
  slide->mpp_y = known ? mpp_y : 0.0;
  slide->mpp_source = known ? mpp_source : WSI_MPP_SOURCE_UNKNOWN;
}

static WsiSlide *
open_with (const WsiSlideBackend * backend, const gchar * path,
    GError ** error)
{
  static guint64 next_uid = 1;  /* atomic */
  WsiSlide *slide = g_new0 (WsiSlide, 1);

  slide->backend = backend;
  slide->path = g_strdup (path);
  slide->display = wsi_location_display (path);
  slide->mpp_source = WSI_MPP_SOURCE_UNKNOWN;
  slide->uid = __atomic_fetch_add (&next_uid, 1, __ATOMIC_RELAXED);
  if (!backend->open (slide, error)) {
    slide->handle = NULL;
    wsi_slide_close (slide);
    return NULL;
  }
  if (slide->level_count < 1 || slide->level_width[0] < 1
      || slide->level_height[0] < 1) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_EMPTY,
        "%s: the slide has no pixels", slide->display);
    wsi_slide_close (slide);
    return NULL;
  }
  return slide;
}

static void
set_unsupported_error (const gchar * path, const gchar * backend,
    GError ** error)
{
  if (wsi_location_is_remote (path)) {
    gchar *display = wsi_location_display (path);
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_UNSUPPORTED,
        "%s: this format needs a local file (only JPEG-tiled TIFF pyramids "
        "are read from URLs)", display);
    g_free (display);
  } else if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_UNSUPPORTED,
        "%s: no such file", path);
  else if (backend != NULL)
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_UNSUPPORTED,
        "%s: not a slide format the %s backend reads", path, backend);
  else
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_UNSUPPORTED,
        "%s: not a slide format any backend reads", path);
}

/* Error texts go into GStreamer messages and Python strings: UTF-8 only. */
static void
make_error_displayable (GError * error)
{
  gchar *text;

  if (error == NULL || g_utf8_validate (error->message, -1, NULL))
    return;
  text = wsi_display_text (error->message);
  g_free (error->message);
  error->message = text;
}

/* TRUE when @path is a folder that a folder-format backend (the one named,
 * or any under auto) detects. */
static gboolean
folder_backend_detects (const gchar * path, const gchar * backend_name)
{
  const WsiSlideBackend *const *backend;
  gboolean any = backend_name == NULL
      || strcmp (backend_name, WSI_BACKEND_AUTO) == 0;

  if (!g_file_test (path, G_FILE_TEST_IS_DIR))
    return FALSE;
  for (backend = wsi_slide_backends (); *backend != NULL; backend++)
    if ((*backend)->opens_folders
        && (any || strcmp ((*backend)->name, backend_name) == 0)
        && (*backend)->detect (path))
      return TRUE;
  return FALSE;
}

static WsiSlide *
open_checked (const gchar * path, const gchar * backend_name,
    GError ** error);

WsiSlide *
wsi_slide_open (const gchar * path, const gchar * backend_name,
    GError ** error)
{
  GError *local = NULL;
  WsiSlide *slide;

  /* the entry point of the read layer: remote schemes known from here on */
  wsi_read_sources_init ();
  slide = open_checked (path, backend_name, &local);

  make_error_displayable (local);
  if (local != NULL)
    g_propagate_error (error, local);
  return slide;
}

/* Records on @slide why an earlier backend declined a file of its own
 * format (@declined_by_previous: the last decline, or NULL); a foreign
 * format (WSI_SLIDE_ERROR_UNSUPPORTED) is not worth a word. */
static void
note_declined (WsiSlide * slide, const GError * declined_by_previous)
{
  if (declined_by_previous == NULL
      || !g_error_matches (declined_by_previous, WSI_SLIDE_ERROR,
          WSI_SLIDE_ERROR_DECLINED))
    return;
  slide->declined = g_strdup (declined_by_previous->message);
}

static WsiSlide *
open_checked (const gchar * path, const gchar * backend_name,
    GError ** error)
{
  const WsiSlideBackend *const *backend;
  const WsiSlideBackend *only = NULL;
  GError *declined = NULL;
  WsiSlide *slide;

  /* Before any library opens it: a FIFO would block OpenSlide's fopen() for
   * ever, and a folder, a device, a loop or a file without permission each
   * get their own reason instead of "not a slide format". */
  if (!wsi_location_is_remote (path)) {
    gchar *local = g_ascii_strncasecmp (path, "file://", 7) == 0 ?
        g_filename_from_uri (path, NULL, NULL) : g_strdup (path);
    GError *unreadable = NULL;

    /* A folder is a slide only for a backend whose format is a folder
     * (an OME-Zarr store); every other local slide is one file. */
    if (local != NULL && !folder_backend_detects (local, backend_name)
        && !wsi_local_file_check (local, &unreadable)) {
      /* UNSUPPORTED, as before for a missing file: no backend reads it */
      g_set_error_literal (error, WSI_SLIDE_ERROR,
          WSI_SLIDE_ERROR_UNSUPPORTED, unreadable->message);
      g_error_free (unreadable);
      g_free (local);
      return NULL;
    }
    g_free (local);
  }

  if (backend_name != NULL && strcmp (backend_name, WSI_BACKEND_AUTO) != 0) {
    only = wsi_slide_backend_find (backend_name);
    if (only == NULL) {
      gchar *display = wsi_location_display (path);
      g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_UNSUPPORTED,
          "%s: the %s backend is not built in", display, backend_name);
      g_free (display);
      return NULL;
    }
    if (!only->detect (path)) {
      set_unsupported_error (path, only->name, error);
      return NULL;
    }
    return open_with (only, path, error);
  }

  for (backend = wsi_slide_backends (); *backend != NULL; backend++) {
    if (!(*backend)->detect (path))
      continue;
    GError *this_one = NULL;

    slide = open_with (*backend, path, &this_one);
    if (slide != NULL) {
      note_declined (slide, declined);
      g_clear_error (&declined);
      return slide;
    }
    g_clear_error (&declined);
    if (g_error_matches (this_one, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_REFUSED)) {
      /* Its own format, refused for a reason no other backend fixes. */
      g_propagate_error (error, this_one);
      return NULL;
    }
    declined = this_one;
    /* A backend that cannot trust the file hands it to the next one. */
    g_debug ("%s backend declined it: %s", (*backend)->name,
        declined->message);
  }
  if (declined != NULL && wsi_location_is_remote (path)
      && declined->code == WSI_SLIDE_ERROR_UNSUPPORTED) {
    /* OpenSlide reads local files only: say so, with the direct reader's
     * reason. */
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_UNSUPPORTED,
        "this format needs a local file: %s", declined->message);
    g_clear_error (&declined);
  } else if (declined != NULL) {
    g_propagate_error (error, declined);
  } else {
    set_unsupported_error (path, NULL, error);
  }
  return NULL;
}

void
wsi_slide_close (WsiSlide * slide)
{
  if (slide == NULL)
    return;
  if (slide->handle != NULL)
    slide->backend->close (slide);
  g_free (slide->path);
  g_free (slide->display);
  g_free (slide->vendor);
  g_free (slide->icc_profile_sha256);
  g_free (slide->declined);
  g_free (slide->damaged);
  g_free (slide->level_width);
  g_free (slide->level_height);
  g_free (slide->level_downsample);
  g_free (slide->level_tile_width);
  g_free (slide->level_tile_height);
  g_free (slide);
}

gboolean
wsi_slide_read_region (WsiSlide * slide, WsiReadContext * ctx,
    guint32 * argb, gint64 x, gint64 y, gint level, gint64 w, gint64 h,
    GError ** error)
{
  WsiReadReport report = { 0, };

  gboolean ok;

  g_return_val_if_fail (level >= 0 && level < slide->level_count, FALSE);
  ok = slide->backend->read_argb (slide, ctx, argb, x, y, level, w, h,
      &report, error);
  if (!ok && error != NULL)
    make_error_displayable (*error);
  return ok;
}

guint
wsi_slide_native_scale (const WsiSlide * slide, gint level, guint wanted)
{
  g_return_val_if_fail (level >= 0 && level < slide->level_count, 1);
  if (wanted <= 1 || slide->backend->native_scale == NULL
      || slide->backend->read_argb_scaled == NULL)
    return 1;
  return slide->backend->native_scale (slide, level, wanted);
}

gboolean
wsi_slide_read_region_scaled (WsiSlide * slide, WsiReadContext * ctx,
    guint32 * argb, gint level, guint scale, gint64 x, gint64 y, gint64 w,
    gint64 h, GError ** error)
{
  gdouble ds;
  gboolean ok;

  g_return_val_if_fail (level >= 0 && level < slide->level_count, FALSE);
  if (scale <= 1) {
    ds = slide->level_downsample[level];
    return wsi_slide_read_region (slide, ctx, argb, llround (x * ds),
        llround (y * ds), level, w, h, error);
  }
  g_return_val_if_fail (slide->backend->read_argb_scaled != NULL, FALSE);
  ok = slide->backend->read_argb_scaled (slide, ctx, argb, level, scale, x, y,
      w, h, error);
  if (!ok && error != NULL)
    make_error_displayable (*error);
  return ok;
}

gboolean
wsi_slide_has_rgb_scaled (const WsiSlide * slide, gint level, guint scale)
{
  g_return_val_if_fail (level >= 0 && level < slide->level_count, FALSE);
  return scale > 1 && slide->backend->read_rgb_scaled != NULL;
}

gboolean
wsi_slide_read_region_scaled_rgb (WsiSlide * slide, WsiReadContext * ctx,
    guint8 * rgb, gsize stride, gint level, guint scale, gint64 x, gint64 y,
    gint64 w, gint64 h, GError ** error)
{
  gboolean ok;

  g_return_val_if_fail (wsi_slide_has_rgb_scaled (slide, level, scale),
      FALSE);
  ok = slide->backend->read_rgb_scaled (slide, ctx, rgb, stride, level,
      scale, x, y, w, h, error);
  if (!ok && error != NULL)
    make_error_displayable (*error);
  return ok;
}

void
wsi_slide_plan_read (const WsiSlide * slide, const WsiReadRequest * request,
    guint out_width, guint out_height, WsiReadPlan * plan)
{
  gdouble downsample, tolerance = request->resample_tolerance;
  gint64 read_w, read_h;

  plan->x = request->x;
  plan->y = request->y;
  plan->level = wsi_slide_best_level (slide,
      MIN ((gdouble) request->width / out_width,
          (gdouble) request->height / out_height));
  downsample = slide->level_downsample[plan->level];
  read_w = MAX (llround (request->width / downsample), 1);
  read_h = MAX (llround (request->height / downsample), 1);

  /* A rounding-level mismatch (257 px for 256 on a 0.499 um/px slide) is
   * read at the output size: no resampling blur, and the plan says what
   * the output really covers. */
  if (fabs ((gdouble) read_w / out_width - 1.0) <= tolerance
      && fabs ((gdouble) read_h / out_height - 1.0) <= tolerance) {
    read_w = out_width;
    read_h = out_height;
    plan->footprint_width = llround (out_width * downsample);
    plan->footprint_height = llround (out_height * downsample);
  } else {
    plan->footprint_width = request->width;
    plan->footprint_height = request->height;
  }
  plan->read_width = read_w;
  plan->read_height = read_h;
}

/* Whole reads through read_argb and the shared kernels. */
static gboolean
read_via_argb (WsiSlide * slide, WsiReadContext * ctx,
    const WsiReadPlan * plan, const WsiImage * out, WsiReadReport * report,
    GError ** error)
{
  gsize pixels = (gsize) plan->read_width * plan->read_height;
  guint32 *argb = wsi_read_context_scratch (ctx, 0,
      pixels * sizeof (guint32));

  if (argb == NULL || plan->read_width > G_MAXUINT
      || plan->read_height > G_MAXUINT) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "%s: not enough memory to read a %" G_GINT64_FORMAT "x%"
        G_GINT64_FORMAT " region", slide->display, plan->read_width,
        plan->read_height);
    return FALSE;
  }
  if (!slide->backend->read_argb (slide, ctx, argb, plan->x, plan->y,
          plan->level, plan->read_width, plan->read_height, report, error))
    return FALSE;
  if (!wsi_resample_argb (wsi_read_context_resampler (ctx), argb,
          plan->read_width, plan->read_height, plan->read_width, 0.0, 0.0,
          plan->read_width, plan->read_height, out)) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "%s: not enough memory to resample a region", slide->display);
    return FALSE;
  }
  report->native_scale = 1;
  return TRUE;
}

gboolean
wsi_slide_read (WsiSlide * slide, WsiReadContext * ctx,
    const WsiReadRequest * request, const WsiImage * out,
    WsiReadReport * report, GError ** error)
{
  WsiReadPlan plan;
  gboolean ok;

  g_return_val_if_fail (out->width > 0 && out->height > 0, FALSE);
  g_return_val_if_fail (request->width > 0 && request->height > 0, FALSE);

  wsi_slide_plan_read (slide, request, out->width, out->height, &plan);
  memset (report, 0, sizeof (*report));
  report->backend = slide->backend->name;
  report->x = plan.x;
  report->y = plan.y;
  report->level = plan.level;
  report->read_width = plan.read_width;
  report->read_height = plan.read_height;
  report->footprint_width = plan.footprint_width;
  report->footprint_height = plan.footprint_height;
  report->native_scale = 1;
  if (slide->backend->read != NULL)
    ok = slide->backend->read (slide, ctx, request, &plan, out, report,
        error);
  else
    ok = read_via_argb (slide, ctx, &plan, out, report, error);
  if (!ok && error != NULL)
    make_error_displayable (*error);
  return ok;
}

gint
wsi_slide_best_level (const WsiSlide * slide, gdouble downsample)
{
  return wsi_level_for_downsample (slide->level_downsample,
      slide->level_count, downsample);
}

void
wsi_slide_prefetch (WsiSlide * slide, const WsiReadRequest * request,
    guint out_width, guint out_height)
{
  WsiReadPlan plan;

  if (slide->backend->prefetch == NULL || out_width == 0 || out_height == 0)
    return;
  wsi_slide_plan_read (slide, request, out_width, out_height, &plan);
  slide->backend->prefetch (slide, &plan);
}

void
wsi_slide_prefetch_level (WsiSlide * slide, gint level, gint64 x, gint64 y,
    gint64 w, gint64 h)
{
  WsiReadPlan plan = { x, y, level, w, h, 0, 0 };

  if (slide->backend->prefetch == NULL || level < 0
      || level >= slide->level_count || w <= 0 || h <= 0)
    return;
  plan.footprint_width = llround (w * slide->level_downsample[level]);
  plan.footprint_height = llround (h * slide->level_downsample[level]);
  slide->backend->prefetch (slide, &plan);
}

gboolean
wsi_slide_has_known_extension (const gchar * path)
{
  /* A URL's name ends before its query (a signed URL's signature). */
  gsize name_length = wsi_location_is_remote (path) ? strcspn (path, "?#")
      : strlen (path);
  gchar *lower = g_ascii_strdown (path, name_length);
  gboolean known = FALSE;
  const gchar *const *ext;

  for (ext = known_extensions; *ext != NULL && !known; ext++)
    known = g_str_has_suffix (lower, *ext);
  g_free (lower);
  return known;
}

gchar *
wsi_slide_known_extensions_text (void)
{
  return g_strjoinv (", ", (gchar **) known_extensions);
}

gdouble
wsi_mpp_from_tiff_resolution (gdouble pixels_per_unit, gint unit)
{
  gdouble microns_per_unit, mpp;

  if (unit == 2)
    microns_per_unit = 25400.0;
  else if (unit == 3)
    microns_per_unit = 10000.0;
  else
    return 0.0;
  if (!(pixels_per_unit > 0.0) || !isfinite (pixels_per_unit))
    return 0.0;
  mpp = microns_per_unit / pixels_per_unit;
  if (mpp < MIN_PLAUSIBLE_MPP || mpp > MAX_PLAUSIBLE_MPP)
    return 0.0;
  return mpp;
}
