/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsisamplerconfig.c: see wsisamplerconfig.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>
#include <gst/wsi/wsirefusal.h>

#include "wsisamplerconfig.h"
#include "wsisamplerfootprint.h"
#include "wsinumberlist.h"

#define GST_CAT_DEFAULT gst_patch_sampler_debug

/* Keeps the previous value of @property and records the refusal: the
 * element will refuse to start (wsirefusal.h). Running already, the run
 * cannot be refused: a warning says the value was not taken. Object lock
 * held. */
void
patch_sampler_refuse_value (GstPatchSampler * self, const gchar * property,
    const gchar * value, const gchar * accepted)
{
  wsi_refusal_record (wsi_refusal_of (self), property, value, accepted);
  if (GST_STATE (self) > GST_STATE_READY)
    g_warning ("patchsampler: %s=\"%s\" refused (accepted: %s); keeping the "
        "previous value", property, GST_STR_NULL (value), accepted);
}

/* patch_sampler_refuse_value() for a number. */
void
patch_sampler_refuse_number (GstPatchSampler * self, const gchar * property,
    gdouble value, const gchar * accepted)
{
  gchar text[G_ASCII_DTOSTR_BUF_SIZE];

  patch_sampler_refuse_value (self, property, g_ascii_dtostr (text,
          sizeof (text), value), accepted);
}

/* Parses a list property ("0.25,0.5,1,2") into @values (at most MAX_MPPS,
 * each > 0); refuses a bad list (patch_sampler_refuse_value()) and keeps the old one.
 * Object lock held. */
void
patch_sampler_set_mpp_list (GstPatchSampler * self, const gchar * name,
    const gchar * text, gdouble * values, guint * n_values,
    gboolean may_be_empty)
{
  GArray *parsed = g_array_new (FALSE, FALSE, sizeof (gdouble));
  gchar *error = NULL, *accepted;

  if (may_be_empty && (text == NULL || *text == '\0')) {
    *n_values = 0;
    wsi_refusal_forget (wsi_refusal_of (self), name);
  } else if (!wsi_sampling_parse_list (text, parsed, &error)
      || parsed->len > MAX_MPPS) {
    accepted = g_strdup_printf ("a comma-separated list of 1 to %d numbers "
        "> 0%s%s%s", MAX_MPPS, may_be_empty ? ", or empty" : "",
        error ? "; " : "", error ? error : "");
    patch_sampler_refuse_value (self, name, text, accepted);
    g_free (accepted);
  } else {
    memcpy (values, parsed->data, parsed->len * sizeof (gdouble));
    *n_values = parsed->len;
    wsi_refusal_forget (wsi_refusal_of (self), name);
  }
  g_free (error);
  g_array_unref (parsed);
}

/* The list as the user would write it back. */
gchar *
patch_sampler_format_mpp_list (const gdouble * values, guint n)
{
  return wsi_number_list_format (values, n, ',', "%g");
}

/* A double property that must be > 0 (the range check lets NaN through).
 * Object lock held. */
void
patch_sampler_set_positive (GstPatchSampler * self, const gchar * name,
    gdouble value, gdouble * field)
{
  if (isnan (value) || value <= 0.0) {
    patch_sampler_refuse_number (self, name, value, "a number > 0");
  } else {
    *field = value;
    wsi_refusal_forget (wsi_refusal_of (self), name);
  }
}

/* Settings that are valid one by one but not together; posts an error. */
static gboolean
patch_sampler_check_settings (GstPatchSampler * self,
    const GstPatchSamplerSettings * settings)
{
  if (settings->mode == GST_PATCH_SAMPLER_MODE_CONTINUOUS_MAGNIFICATION
      && settings->mpp_min >= settings->mpp_max) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("mode=continuous-magnification needs mpp-min < mpp-max, but "
            "mpp-min=%g and mpp-max=%g.", settings->mpp_min,
            settings->mpp_max), (NULL));
    return FALSE;
  }
  if (settings->mode == GST_PATCH_SAMPLER_MODE_MULTI_MAGNIFICATION
      && settings->n_weights > 0 && settings->n_weights != settings->n_mpps) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("mpp-weights has %u entries but target-mpps has %u: give one "
            "weight per resolution, or none for equal weights.",
            settings->n_weights, settings->n_mpps), (NULL));
    return FALSE;
  }
  if (settings->class_plan->mode != WSI_ANNOTATION_OFF
      && settings->class_plan->balance != WSI_CLASS_BALANCE_NONE
      && (settings->mode != GST_PATCH_SAMPLER_MODE_RANDOM
          || !settings->replacement)) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("class-balance draws each patch's class first, which only "
            "mode=random with replacement=true does; grid and "
            "replacement=false walk fixed positions (use class-balance=none "
            "there)."), (NULL));
    return FALSE;
  }
  if (patch_sampler_mode_draws_mpp (settings->mode) && !settings->replacement) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("replacement=false is available with mode=random and mode=grid; "
            "the magnification modes draw every patch independently (with "
            "replacement)."), (NULL));
    return FALSE;
  }
  return TRUE;
}

/* Copies the settings one slide is planned with; FALSE after posting an
 * error when they contradict each other. */
gboolean
patch_sampler_settings_snapshot (GstPatchSampler * self,
    GstPatchSamplerSettings * settings)
{
  GST_OBJECT_LOCK (self);
  *settings = self->settings;
  settings->class_plan = wsi_class_plan_ref (self->class_plan);
  GST_OBJECT_UNLOCK (self);

  if (settings->class_plan->problem != NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("The annotation settings cannot be used: %s.",
            settings->class_plan->problem), (NULL));
    return FALSE;
  }
  if (!patch_sampler_check_settings (self, settings))
    return FALSE;
  if (settings->mode != GST_PATCH_SAMPLER_MODE_GRID &&
      settings->patches_per_slide < 0) {
    if (!self->warned_unlimited) {
      self->warned_unlimited = TRUE;
      GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
          ("patches-per-slide=-1 (all positions) only applies to mode=grid; "
              "the other modes plan %d patches per slide instead.",
              DEFAULT_PATCHES_PER_SLIDE), (NULL));
    }
    settings->patches_per_slide = DEFAULT_PATCHES_PER_SLIDE;
  }
  /* Annotation settings without annotation-mode are silently unused: say
   * so once, since whoever set them expected patches inside regions. */
  if (settings->class_plan->mode == WSI_ANNOTATION_OFF
      && (settings->class_plan->n_classes > 0
          || (settings->class_plan->exclude != NULL
              && settings->class_plan->exclude[0] != NULL)
          || settings->class_plan->balance != WSI_CLASS_BALANCE_NONE)
      && !self->warned_unused_annotations) {
    self->warned_unused_annotations = TRUE;
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("annotation-classes, annotation-exclude and class-balance have no "
            "effect with annotation-mode=off (the default): patches are "
            "drawn on the tissue mask, unlabelled. Set annotation-mode="
            "and-tissue or replace-tissue to sample inside the regions."),
        (NULL));
  }
  return TRUE;
}
