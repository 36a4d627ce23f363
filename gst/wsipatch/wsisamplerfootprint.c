/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsisamplerfootprint.c: see wsisamplerfootprint.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>
#include <gst/wsi/wsilevel.h>
#include <gst/wsi/wsirecord.h>

#include "wsisamplerfootprint.h"
#include "wsisamplercycle.h"

#define GST_CAT_DEFAULT gst_patch_sampler_debug

gboolean
patch_sampler_mode_draws_mpp (GstPatchSamplerMode mode)
{
  return mode == GST_PATCH_SAMPLER_MODE_MULTI_MAGNIFICATION ||
      mode == GST_PATCH_SAMPLER_MODE_CONTINUOUS_MAGNIFICATION;
}

/* The finest resolution the magnification modes may draw. */
static gdouble
settings_finest_mpp (const GstPatchSamplerSettings * settings)
{
  gdouble finest = settings->mpp_min;
  guint i;

  if (settings->mode == GST_PATCH_SAMPLER_MODE_MULTI_MAGNIFICATION)
    for (i = 0, finest = G_MAXDOUBLE; i < settings->n_mpps; i++)
      finest = MIN (finest, settings->mpps[i]);
  return finest;
}

/* Magnification modes: the footprint is per patch, so the slide needs an
 * mpp (skipped with a warning, not silently read at level 0 as the Python
 * peer does). */
static gboolean
patch_sampler_check_mpp_range (GstPatchSampler * self,
    const GstPatchSamplerSettings * settings, const WsiSlideVisit * visit,
    gchar ** reason)
{
  GEnumValue *mode = g_enum_get_value (g_type_class_peek
      (GST_TYPE_PATCH_SAMPLER_MODE), settings->mode);
  gdouble finest = settings_finest_mpp (settings);

  if (visit->mpp_x <= 0.0) {
    *reason = g_strdup_printf ("%s: resolution (mpp) unknown", visit->path);
    if (patch_sampler_first_warning (self, visit->index))
      GST_ELEMENT_WARNING (self, STREAM, FORMAT,
          ("Slide \"%s\" does not say its resolution (microns per pixel), "
              "so mode=%s cannot be honoured; skipping it. Set wsislidesrc's "
              "default-mpp property to the scanner's resolution.",
              visit->path, mode->value_nick), (NULL));
    return FALSE;
  }
  if (finest < visit->mpp_x / 2.0
      && patch_sampler_first_warning (self, visit->index))
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("mode=%s draws resolutions down to %g um/px, %.1f times finer than "
            "slide \"%s\" (%g um/px): those patches are upsampled.",
            mode->value_nick, finest, visit->mpp_x / finest, visit->path,
            visit->mpp_x), (NULL));
  return TRUE;
}

/* Computes the footprint (level-0 pixels) and output resolution of the
 * patches of @visit. Returns FALSE (with a warning once per slide) when
 * the settings cannot be honoured on this slide. */
gboolean
patch_sampler_footprint (GstPatchSampler * self,
    const GstPatchSamplerSettings * settings, const WsiSlideVisit * visit,
    const GstStructure * meta, WsiRecordTemplate * tmpl, gchar ** reason)
{
  gdouble footprint;

  tmpl->out_size = settings->patch_size;
  tmpl->slide_index = visit->index;
  tmpl->cycle = visit->cycle;
  if (patch_sampler_mode_draws_mpp (settings->mode))
    return patch_sampler_check_mpp_range (self, settings, visit, reason);
  if (settings->target_mpp > 0.0) {
    if (visit->mpp_x <= 0.0) {
      *reason = g_strdup_printf ("%s: resolution (mpp) unknown", visit->path);
      if (patch_sampler_first_warning (self, visit->index))
        GST_ELEMENT_WARNING (self, STREAM, FORMAT,
            ("Slide \"%s\" does not say its resolution (microns per pixel), "
                "so target-mpp=%g cannot be honoured; skipping it. Set "
                "wsislidesrc's default-mpp property to the scanner's "
                "resolution, or use target-mpp=0.", visit->path,
                settings->target_mpp), (NULL));
      return FALSE;
    }
    footprint = settings->patch_size * settings->target_mpp / visit->mpp_x;
    tmpl->out_mpp = (gfloat) settings->target_mpp;
  } else if (settings->level >= 0) {
    gdouble downsample;

    if (settings->level >= visit->level_count) {
      *reason = g_strdup_printf ("%s: no level %d", visit->path,
          settings->level);
      if (patch_sampler_first_warning (self, visit->index))
        GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
            ("Slide \"%s\" has %d levels, so level=%d does not exist on it; "
                "skipping it.", visit->path, visit->level_count,
                settings->level), (NULL));
      return FALSE;
    }
    downsample = wsi_structure_array_get (meta, "level-downsamples",
        settings->level, settings->level == 0 ? 1.0 : 0.0);
    if (downsample <= 0.0) {
      *reason = g_strdup_printf ("%s: no downsample for level %d",
          visit->path, settings->level);
      if (patch_sampler_first_warning (self, visit->index))
        GST_ELEMENT_WARNING (self, STREAM, FORMAT,
            ("Slide \"%s\" does not give the downsample of level %d; "
                "skipping it.", visit->path, settings->level), (NULL));
      return FALSE;
    }
    footprint = settings->patch_size * downsample;
    tmpl->out_mpp = (gfloat) (visit->mpp_x * downsample);
  } else {
    footprint = settings->patch_size;
    tmpl->out_mpp = (gfloat) MAX (visit->mpp_x, 0.0);
  }

  /* Finer than the scan: patches would be blown-up level-0 pixels. */
  if (settings->target_mpp > 0.0 && footprint < settings->patch_size / 2.0
      && patch_sampler_first_warning (self, visit->index))
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("target-mpp=%g is %.1f times finer than the resolution of slide "
            "\"%s\" (%g um/px): its %u px patches are upsampled from %.0f "
            "level-0 pixels.", settings->target_mpp,
            visit->mpp_x / settings->target_mpp, visit->path, visit->mpp_x,
            settings->patch_size, MAX (1.0, round (footprint))), (NULL));
  footprint = MAX (1.0, round (footprint));
  /* The footprint is whole level-0 pixels: report the resolution that the
   * rounding really gives (0.499 um/px slide, 0.5 target, 128 px patch:
   * 128 px read, 0.499 um/px out), not the requested one. */
  if (settings->target_mpp > 0.0)
    tmpl->out_mpp = (gfloat) (footprint * visit->mpp_x / settings->patch_size);
  if (footprint > visit->width || footprint > visit->height) {
    *reason = g_strdup_printf ("%s: smaller than one patch", visit->path);
    if (patch_sampler_first_warning (self, visit->index))
      GST_ELEMENT_WARNING (self, STREAM, FORMAT,
          ("Slide \"%s\" (%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " pixels) "
              "is smaller than one patch (%.0f level-0 pixels square); "
              "skipping it.", visit->path, visit->width, visit->height,
              footprint), (NULL));
    return FALSE;
  }
  tmpl->footprint = (guint) footprint;
  return TRUE;
}
