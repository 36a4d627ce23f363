/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsislide.c: backend-neutral part of the slide interface (see wsislide.h). */

#include "wsislide.h"

#include <math.h>
#include <string.h>

/* Extensions of the formats OpenSlide 3.4.1 reads. */
static const gchar *const known_extensions[] = {
  ".svs", ".tif", ".tiff", ".ndpi", ".vms", ".vmu", ".scn", ".mrxs",
  ".svslide", ".bif", NULL
};

/* Plausible microns per pixel for a slide scan (from 100x oil down to an
 * overview-only scan); anything outside is a writer's placeholder. */
#define MIN_PLAUSIBLE_MPP 0.05
#define MAX_PLAUSIBLE_MPP 20.0

G_DEFINE_QUARK (wsi-slide-error-quark, wsi_slide_error);

const WsiSlideBackend *const *
wsi_slide_backends (void)
{
  static const WsiSlideBackend *const backends[] = {
    &wsi_slide_backend_openslide,
    NULL
  };
  return backends;
}

WsiSlide *
wsi_slide_open (const gchar * path, GError ** error)
{
  const WsiSlideBackend *const *backend;
  WsiSlide *slide;

  for (backend = wsi_slide_backends (); *backend != NULL; backend++) {
    if (!(*backend)->detect (path))
      continue;
    slide = g_new0 (WsiSlide, 1);
    slide->backend = *backend;
    slide->path = g_strdup (path);
    slide->mpp_source = WSI_MPP_SOURCE_UNKNOWN;
    if (!(*backend)->open (slide, error)) {
      g_free (slide->path);
      g_free (slide);
      return NULL;
    }
    if (slide->level_count < 1 || slide->level_width[0] < 1
        || slide->level_height[0] < 1) {
      g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_EMPTY,
          "%s: the slide has no pixels", path);
      wsi_slide_close (slide);
      return NULL;
    }
    return slide;
  }

  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_UNSUPPORTED,
        "%s: no such file", path);
  else
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_UNSUPPORTED,
        "%s: not a slide format any backend reads", path);
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
  g_free (slide->vendor);
  g_free (slide->level_width);
  g_free (slide->level_height);
  g_free (slide->level_downsample);
  g_free (slide);
}

gboolean
wsi_slide_read_region (WsiSlide * slide, guint32 * argb, gint64 x, gint64 y,
    gint level, gint64 w, gint64 h, GError ** error)
{
  g_return_val_if_fail (level >= 0 && level < slide->level_count, FALSE);
  return slide->backend->read_region (slide, argb, x, y, level, w, h, error);
}

gint
wsi_slide_best_level (const WsiSlide * slide, gdouble downsample)
{
  gint level, best = 0;

  for (level = 0; level < slide->level_count; level++) {
    if (slide->level_downsample[level] <= downsample * 1.01)
      best = level;
  }
  return best;
}

gboolean
wsi_slide_has_known_extension (const gchar * path)
{
  gchar *lower = g_ascii_strdown (path, -1);
  gboolean known = FALSE;
  const gchar *const *ext;

  for (ext = known_extensions; *ext != NULL && !known; ext++)
    known = g_str_has_suffix (lower, *ext);
  g_free (lower);
  return known;
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

void
wsi_argb_to_rgb_on_white (const guint32 * argb, guint8 * rgb, gsize n)
{
  gsize i;

  /* Premultiplied: composited on white, c' = c + (255 - alpha). */
  for (i = 0; i < n; i++) {
    guint32 p = argb[i];
    guint32 glass = 255 - (p >> 24);
    rgb[3 * i + 0] = ((p >> 16) & 0xff) + glass;
    rgb[3 * i + 1] = ((p >> 8) & 0xff) + glass;
    rgb[3 * i + 2] = (p & 0xff) + glass;
  }
}
