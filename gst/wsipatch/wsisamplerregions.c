/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsisamplerregions.c: see wsisamplerregions.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>
#include <gst/wsi/wsilevel.h>
#include <gst/wsi/wsirecord.h>

#include "wsisamplerregions.h"
#include "wsisamplercycle.h"
#include "wsisamplerplan.h"

#define GST_CAT_DEFAULT gst_patch_sampler_debug

/* ---- annotation regions ------------------------------------------------ */

/* The slide's regions with this stream's roles, or NULL (and @reason)
 * when it has none to sample: counted, and warned about once per slide. */
static WsiRegions *
patch_sampler_slide_regions (GstPatchSampler * self,
    const WsiClassPlan * plan, const WsiSlideVisit * visit,
    const GstStructure * meta, gchar ** reason)
{
  const gchar *file = gst_structure_get_string (meta,
      WSI_ANNOTATION_FILE_FIELD);
  const gchar *const *classes = wsi_structure_get_strv (meta,
      WSI_ANNOTATION_CLASSES_FIELD);
  const GValue *value = gst_structure_get_value (meta,
      WSI_ANNOTATION_REGIONS_FIELD);
  GBytes *bytes = value && G_VALUE_HOLDS (value, G_TYPE_BYTES) ?
      g_value_get_boxed (value) : NULL;
  WsiRegions *regions = NULL;
  gint32 *roles;
  guint n_roles, i;

  roles = wsi_class_plan_roles (plan, classes, &n_roles);
  for (i = 0; i < n_roles; i++)
    if (roles[i] >= 0)
      self->class_seen[roles[i]] = TRUE;
  if (bytes != NULL && g_bytes_get_size (bytes) > 0)
    regions = wsi_regions_new (g_bytes_get_data (bytes, NULL),
        g_bytes_get_size (bytes), roles, n_roles, visit->width,
        visit->height, plan->overlap);
  g_free (roles);
  if (regions != NULL && wsi_regions_n_sampled (regions) > 0)
    return regions;
  wsi_regions_free (regions);

  if (file == NULL || *file == '\0')
    *reason = g_strdup_printf ("%s: no annotation file", visit->path);
  else
    *reason = g_strdup_printf ("%s: no usable region of the selected "
        "classes in %s", visit->path, file);
  GST_OBJECT_LOCK (self);
  self->slides_without_regions++;
  GST_OBJECT_UNLOCK (self);
  if (patch_sampler_first_warning (self, visit->index))
    GST_ELEMENT_WARNING (self, STREAM, FORMAT,
        ("Slide \"%s\" has no annotation region of the classes in "
            "annotation-classes (%s); skipping it.", visit->path,
            file && *file ? file : "no annotation file was found for it"),
        (NULL));
  return NULL;
}

/* Plans one slide visit inside its annotation regions: *@labels gets the
 * class of each record. NULL (with @reason) when none was found. */
GstBuffer *
patch_sampler_plan_regions (GstPatchSampler * self,
    const GstPatchSamplerSettings * settings, const WsiSlideVisit * visit,
    const GstStructure * meta, WsiTissueMap * map,
    const WsiRecordTemplate * tmpl, const WsiMppDistribution * mpps,
    gint32 ** labels, gchar ** reason)
{
  const WsiClassPlan *plan = settings->class_plan;
  WsiRegions *regions;
  WsiSamplingRequest req;
  WsiSample *samples;
  guint n;

  regions = patch_sampler_slide_regions (self, plan, visit, meta, reason);
  if (regions == NULL)
    return NULL;
  patch_sampler_sampling_request_init (&req, settings, visit, tmpl, mpps);
  if (plan->mode == WSI_ANNOTATION_REPLACE_TISSUE) {
    wsi_tissue_map_init (map, visit->width, visit->height);
    req.min_tissue = 0.0;
  }
  samples = wsi_class_plan_slide (plan, &self->class_counts, regions, &req,
      map, &n);
  wsi_regions_free (regions);
  if (samples == NULL) {
    *reason = g_strdup_printf ("%s: no position inside the annotation "
        "regions (min-annotation-coverage %g%s)", visit->path,
        plan->min_coverage, plan->mode == WSI_ANNOTATION_AND_TISSUE ?
        ", on tissue" : "");
    return NULL;
  }
  return patch_sampler_records (settings, meta, samples, n, tmpl, TRUE,
      labels);
}

/* Writes the classes of the records kept (@n of them) onto @out's slide
 * meta, with the stream's class names, and counts them for balance. */
void
patch_sampler_attach_classes (GstPatchSampler * self,
    const WsiClassPlan * plan, GstBuffer * out, const gint32 * labels,
    guint n)
{
  GstStructure *meta = wsi_slide_meta_get (out);
  GBytes *bytes = g_bytes_new (labels, n * sizeof (gint32));
  guint i;

  gst_structure_set (meta, WSI_PATCH_CLASSES_FIELD, G_TYPE_BYTES, bytes,
      WSI_CLASS_NAMES_FIELD, G_TYPE_STRV, plan->classes, NULL);
  g_bytes_unref (bytes);
  for (i = 0; i < n; i++) {
    if (labels[i] >= 0 && labels[i] < WSI_MAX_CLASSES)
      self->class_counts.per_class[labels[i]]++;
    self->class_counts.total++;
  }
}

/* After a whole pass over the slides (or at the end of the stream):
 * requested classes no annotation file had, once per stream. */
void
patch_sampler_warn_unseen_classes (GstPatchSampler * self,
    const WsiClassPlan * plan)
{
  GString *unseen = g_string_new (NULL);
  guint c;

  if (plan == NULL || plan->mode == WSI_ANNOTATION_OFF || self->warned_unseen)
    goto done;
  self->warned_unseen = TRUE;
  for (c = 0; c < plan->n_classes; c++)
    if (!self->class_seen[c])
      g_string_append_printf (unseen, "%s\"%s\"", unseen->len ? ", " : "",
          plan->classes[c]);
  if (unseen->len > 0 && self->slides_sampled + self->slides_skipped > 0)
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("annotation-classes names %s, which no slide's annotation file of "
            "this stream has (check the spelling and case).", unseen->str),
        (NULL));
done:
  g_string_free (unseen, TRUE);
}
