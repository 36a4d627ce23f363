/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsislide-openslide.c: the OpenSlide backend of the slide layer: every
 * format OpenSlide 3.4.1 reads. OpenSlide decodes into premultiplied ARGB
 * itself, so this backend only has read_argb; the layer resamples. One
 * openslide_t is shared by all threads (OpenSlide locks inside); its errors
 * are sticky, so a failed read asks the caller to reopen the slide. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsislide.h"
#ifdef WSI_HAVE_TIFF
#include "wsitiffdir.h"
#endif

#include <openslide.h>
#include <stdlib.h>
#include <string.h>

static gboolean
openslide_backend_detect (const gchar * path)
{
  return openslide_detect_vendor (path) != NULL;
}

static gdouble
property_as_double (openslide_t * osr, const gchar * name)
{
  const gchar *value = openslide_get_property_value (osr, name);
  return value ? g_ascii_strtod (value, NULL) : 0.0;
}

/* OpenSlide 3.4.1 exposes the TIFF resolution tags as properties but does
 * not turn them into openslide.mpp-* for generic TIFF: do it here. */
static gint
tiff_resolution_unit (openslide_t * osr)
{
  const gchar *unit = openslide_get_property_value (osr, "tiff.ResolutionUnit");

  if (unit == NULL)
    return 0;
  if (g_ascii_strcasecmp (unit, "inch") == 0 || strcmp (unit, "2") == 0)
    return 2;
  if (g_ascii_strcasecmp (unit, "centimeter") == 0 || strcmp (unit, "3") == 0)
    return 3;
  return 0;
}

static void
read_mpp (WsiSlide * slide, openslide_t * osr)
{
  gint unit;

  slide->objective_power = MAX (0.0, property_as_double (osr,
          OPENSLIDE_PROPERTY_NAME_OBJECTIVE_POWER));
  slide->mpp_x = property_as_double (osr, OPENSLIDE_PROPERTY_NAME_MPP_X);
  slide->mpp_y = property_as_double (osr, OPENSLIDE_PROPERTY_NAME_MPP_Y);
  if (slide->mpp_x > 0.0 && slide->mpp_y > 0.0) {
    slide->mpp_source = WSI_MPP_SOURCE_BACKEND;
    return;
  }

  unit = tiff_resolution_unit (osr);
  slide->mpp_x = wsi_mpp_from_tiff_resolution (property_as_double (osr,
          "tiff.XResolution"), unit);
  slide->mpp_y = wsi_mpp_from_tiff_resolution (property_as_double (osr,
          "tiff.YResolution"), unit);
  if (slide->mpp_x > 0.0 && slide->mpp_y > 0.0) {
    slide->mpp_source = WSI_MPP_SOURCE_TIFF;
  } else {
    slide->mpp_x = slide->mpp_y = 0.0;
    slide->mpp_source = WSI_MPP_SOURCE_UNKNOWN;
  }
}

/* openslide.level[N].tile-width/-height, 0 when the format has none. */
static gint64
level_tile_size (openslide_t * osr, gint level, const gchar * axis)
{
  gchar name[64];

  g_snprintf (name, sizeof (name), "openslide.level[%d].tile-%s", level, axis);
  return (gint64) property_as_double (osr, name);
}

static gboolean
openslide_backend_open (WsiSlide * slide, GError ** error)
{
  openslide_t *osr;

#ifdef WSI_HAVE_TIFF
  /* OpenSlide 3.4.1 divides by tile sizes and allocates what the tile byte
   * counts say: refuse such files before they crash the process (found by
   * tests/fuzz). */
  if (!wsi_tiff_check_tiles (slide->path, error))
    return FALSE;
#endif
  osr = openslide_open (slide->path);
  const gchar *reason;
  gint level;

  if (osr == NULL) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_UNSUPPORTED,
        "%s: OpenSlide does not recognise the format", slide->path);
    return FALSE;
  }
  reason = openslide_get_error (osr);
  if (reason != NULL) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_OPEN,
        "%s: OpenSlide cannot open it: %s", slide->path, reason);
    openslide_close (osr);
    return FALSE;
  }

  slide->handle = osr;
  slide->vendor = g_strdup (openslide_get_property_value (osr,
          OPENSLIDE_PROPERTY_NAME_VENDOR));
  wsi_slide_alloc_levels (slide, openslide_get_level_count (osr));
  for (level = 0; level < slide->level_count; level++) {
    openslide_get_level_dimensions (osr, level, &slide->level_width[level],
        &slide->level_height[level]);
    slide->level_downsample[level] =
        openslide_get_level_downsample (osr, level);
    slide->level_tile_width[level] = level_tile_size (osr, level, "width");
    slide->level_tile_height[level] = level_tile_size (osr, level, "height");
  }
  read_mpp (slide, osr);
  return TRUE;
}

static gboolean
openslide_backend_read_argb (WsiSlide * slide, WsiReadContext * ctx,
    guint32 * argb, gint64 x, gint64 y, gint level, gint64 w, gint64 h,
    WsiReadReport * report, GError ** error)
{
  openslide_t *osr = slide->handle;
  const gchar *reason;

  openslide_read_region (osr, argb, x, y, level, w, h);
  /* OpenSlide errors are sticky: once set, the handle is useless and the
   * caller must reopen the slide. */
  reason = openslide_get_error (osr);
  if (reason != NULL) {
    report->sticky = TRUE;
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "%s: reading %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " at (%"
        G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") level %d failed: %s",
        slide->path, w, h, x, y, level, reason);
    return FALSE;
  }
  return TRUE;
}

static void
openslide_backend_close (WsiSlide * slide)
{
  openslide_close (slide->handle);
  slide->handle = NULL;
}

const WsiSlideBackend wsi_slide_backend_openslide = {
  .name = WSI_BACKEND_OPENSLIDE,
  .detect = openslide_backend_detect,
  .open = openslide_backend_open,
  .read_argb = openslide_backend_read_argb,
  .read = NULL,                 /* the layer resamples read_argb's pixels */
  .thread_state_new = NULL,
  .thread_state_free = NULL,
  .close = openslide_backend_close,
};
