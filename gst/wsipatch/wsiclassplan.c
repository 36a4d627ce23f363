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

#include "wsiclassplan.h"

/* "Tumor, Stroma" -> {"Tumor", "Stroma"}: trimmed, empty entries dropped. */
static gchar **
split_names (const gchar * text)
{
  gchar **items = g_strsplit (text ? text : "", ",", -1);
  GPtrArray *names = g_ptr_array_new ();
  guint i;

  for (i = 0; items[i] != NULL; i++) {
    gchar *name = g_strstrip (items[i]);

    if (*name != '\0')
      g_ptr_array_add (names, g_strdup (name));
  }
  g_strfreev (items);
  g_ptr_array_add (names, NULL);
  return (gchar **) g_ptr_array_free (names, FALSE);
}

static gboolean
plan_set_shares (WsiClassPlan * plan, const gchar * weights)
{
  GArray *values = g_array_new (FALSE, FALSE, sizeof (gdouble));
  gchar *error = NULL;
  gdouble total = 0.0;
  guint c;

  plan->shares = g_new (gdouble, MAX (plan->n_classes, 1));
  for (c = 0; c < plan->n_classes; c++)
    plan->shares[c] = 1.0;
  if (plan->balance == WSI_CLASS_BALANCE_WEIGHTS) {
    if (!wsi_sampling_parse_list (weights, values, &error)) {
      plan->problem = g_strdup_printf ("class-weights=\"%s\": %s",
          weights ? weights : "", error);
    } else if (values->len != plan->n_classes) {
      plan->problem = g_strdup_printf ("class-weights has %u entries but "
          "annotation-classes has %u: give one weight per class",
          values->len, plan->n_classes);
    } else {
      memcpy (plan->shares, values->data, values->len * sizeof (gdouble));
    }
  }
  g_free (error);
  g_array_unref (values);
  for (c = 0; c < plan->n_classes; c++)
    total += plan->shares[c];
  for (c = 0; c < plan->n_classes; c++)
    plan->shares[c] /= total;
  return plan->problem == NULL;
}

WsiClassPlan *
wsi_class_plan_new (WsiAnnotationMode mode, const gchar * classes,
    const gchar * exclude, gdouble min_coverage, WsiOverlapRule overlap,
    WsiClassBalance balance, const gchar * weights)
{
  WsiClassPlan *plan = g_atomic_rc_box_new0 (WsiClassPlan);
  guint i, j;

  plan->mode = mode;
  plan->classes = split_names (classes);
  plan->n_classes = g_strv_length (plan->classes);
  plan->exclude = split_names (exclude);
  plan->min_coverage = min_coverage;
  plan->overlap = overlap;
  plan->balance = balance;
  if (mode != WSI_ANNOTATION_OFF && plan->n_classes == 0)
    plan->problem = g_strdup ("annotation-mode needs annotation-classes, "
        "the classes to sample (their order gives the class ids)");
  else if (plan->n_classes > WSI_MAX_CLASSES)
    plan->problem = g_strdup_printf ("annotation-classes names %u classes, "
        "at most %d are allowed", plan->n_classes, WSI_MAX_CLASSES);
  for (i = 0; plan->problem == NULL && i < plan->n_classes; i++) {
    for (j = 0; j < i; j++)
      if (strcmp (plan->classes[i], plan->classes[j]) == 0)
        plan->problem = g_strdup_printf ("annotation-classes names \"%s\" "
            "twice", plan->classes[i]);
    if (g_strv_contains ((const gchar * const *) plan->exclude,
            plan->classes[i]))
      plan->problem = g_strdup_printf ("\"%s\" is in both annotation-classes "
          "and annotation-exclude", plan->classes[i]);
  }
  if (plan->problem == NULL)
    plan_set_shares (plan, weights);
  return plan;
}

static void
plan_clear (WsiClassPlan * plan)
{
  g_strfreev (plan->classes);
  g_strfreev (plan->exclude);
  g_free (plan->shares);
  g_free (plan->problem);
}

WsiClassPlan *
wsi_class_plan_ref (WsiClassPlan * plan)
{
  return g_atomic_rc_box_acquire (plan);
}

void
wsi_class_plan_unref (WsiClassPlan * plan)
{
  if (plan != NULL)
    g_atomic_rc_box_release_full (plan, (GDestroyNotify) plan_clear);
}

gint32 *
wsi_class_plan_roles (const WsiClassPlan * plan,
    const gchar * const *file_classes, guint * n_roles)
{
  guint n = file_classes ? g_strv_length ((gchar **) file_classes) : 0;
  gint32 *roles = g_new (gint32, MAX (n, 1));
  guint i, c;

  for (i = 0; i < n; i++) {
    roles[i] = WSI_REGION_IGNORED;
    if (g_strv_contains ((const gchar * const *) plan->exclude,
            file_classes[i])) {
      roles[i] = WSI_REGION_EXCLUDED;
      continue;
    }
    for (c = 0; c < plan->n_classes; c++)
      if (strcmp (plan->classes[c], file_classes[i]) == 0)
        roles[i] = (gint32) c;
  }
  *n_roles = n;
  return roles;
}

/* Balance: each class's deficit against its requested share of what the
 * stream will have planned after this slide, among the classes the slide
 * has; when every present class is ahead, their requested shares. */
gboolean
wsi_class_plan_shares (const WsiClassPlan * plan,
    const WsiClassCounts * counts, const WsiRegions * regions,
    guint n_wanted, gdouble * shares)
{
  gdouble total = 0.0, fallback = 0.0;
  guint c;

  for (c = 0; c < plan->n_classes; c++) {
    gboolean present = wsi_regions_class_area (regions, (gint32) c) > 0.0;
    gdouble want = plan->shares[c] * (gdouble) (counts->total + n_wanted)
        - (gdouble) counts->per_class[c];

    shares[c] = present ? MAX (want, 0.0) : 0.0;
    total += shares[c];
    fallback += present ? plan->shares[c] : 0.0;
  }
  if (fallback <= 0.0)
    return FALSE;
  for (c = 0; c < plan->n_classes; c++) {
    gboolean present = wsi_regions_class_area (regions, (gint32) c) > 0.0;

    if (total > 0.0)
      shares[c] /= total;
    else
      shares[c] = present ? plan->shares[c] / fallback : 0.0;
  }
  return TRUE;
}

WsiSample *
wsi_class_plan_slide (const WsiClassPlan * plan,
    const WsiClassCounts * counts, const WsiRegions * regions,
    const WsiSamplingRequest * req, WsiTissueMap * map, guint * n_samples)
{
  WsiRegionTest test = { regions, plan->min_coverage };
  gdouble shares[WSI_MAX_CLASSES];
  WsiSample *samples;
  guint n;

  *n_samples = 0;
  if (req->mode == WSI_SAMPLING_RANDOM && req->replacement) {
    if (req->n_wanted <= 0)
      return NULL;
    /* Before the shares: a class whose regions are all too small for the
     * coverage asked is absent from this slide. */
    wsi_regions_set_min_draw_area ((WsiRegions *) regions,
        plan->min_coverage * (gdouble) req->footprint * req->footprint);
    if (plan->balance != WSI_CLASS_BALANCE_NONE &&
        !wsi_class_plan_shares (plan, counts, regions, (guint) req->n_wanted,
            shares))
      return NULL;
    samples = g_new0 (WsiSample, req->n_wanted);
    n = wsi_regions_plan_random (&test, req, map,
        plan->balance != WSI_CLASS_BALANCE_NONE ? shares : NULL,
        plan->n_classes, samples);
    if (n == 0) {
      g_free (samples);
      return NULL;
    }
    *n_samples = n;
    return samples;
  }
  /* Lattice modes (and the magnification modes' draws): every candidate
   * position is also asked of the regions. */
  map->region_filter = wsi_regions_filter;
  map->region_data = &test;
  samples = wsi_sampling_plan (req, map, n_samples);
  map->region_filter = NULL;
  map->region_data = NULL;
  return samples;
}

void
wsi_class_counts_add (WsiClassCounts * counts, const WsiSample * samples,
    guint n)
{
  guint i;

  for (i = 0; i < n; i++) {
    if (samples[i].label >= 0 && samples[i].label < WSI_MAX_CLASSES)
      counts->per_class[samples[i].label]++;
    counts->total++;
  }
}
