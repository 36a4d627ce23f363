/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsisamplerannotation.c: see wsisamplerannotation.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <gst/wsi/wsienumtype.h>
#include <gst/wsi/wsirefusal.h>

#include "wsisamplerannotation.h"

static GType
annotation_mode_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {WSI_ANNOTATION_OFF, "Annotations are not used", "off"},
    {WSI_ANNOTATION_AND_TISSUE, "Inside the selected classes' regions and "
          "on tissue (min-tissue)", "and-tissue"},
    {WSI_ANNOTATION_REPLACE_TISSUE, "Inside the selected classes' regions, "
          "whatever the tissue mask says", "replace-tissue"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type, "GstPatchSamplerAnnotationMode", values);
}

static GType
annotation_overlap_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {WSI_OVERLAP_SMALLEST, "The smallest region (by area) labels the patch",
        "smallest"},
    {WSI_OVERLAP_LARGEST, "The largest region labels the patch", "largest"},
    {WSI_OVERLAP_FIRST, "The region first in the file labels the patch",
        "first"},
    {WSI_OVERLAP_LAST, "The region last in the file labels the patch",
        "last"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type, "GstPatchSamplerAnnotationOverlap",
      values);
}

static GType
class_balance_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {WSI_CLASS_BALANCE_NONE, "Positions uniform over the selected regions "
          "(classes in proportion to their area)", "none"},
    {WSI_CLASS_BALANCE_UNIFORM, "Each patch draws its class first, all "
          "classes equally likely", "uniform"},
    {WSI_CLASS_BALANCE_WEIGHTS, "Each patch draws its class first, with "
          "the shares of class-weights", "weights"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type, "GstPatchSamplerClassBalance", values);
}

void
patch_sampler_annotation_mark_api (void)
{
  gst_type_mark_as_plugin_api (annotation_mode_get_type (), 0);
  gst_type_mark_as_plugin_api (annotation_overlap_get_type (), 0);
  gst_type_mark_as_plugin_api (class_balance_get_type (), 0);
}

void
patch_sampler_annotation_install (GObjectClass * gobject_class,
    guint first_id, GParamFlags rw)
{
  g_object_class_install_property (gobject_class,
      first_id + WSI_SAMPLER_ANNOTATION_MODE,
      g_param_spec_enum ("annotation-mode", "Annotation mode",
          "Whether patches must lie inside the annotation regions that "
          "wsislidesrc read for each slide: off (default, annotations "
          "unused); and-tissue = inside a region of annotation-classes and "
          "on tissue (min-tissue); replace-tissue = inside a region, the "
          "tissue mask ignored. Each patch is labelled with its region's "
          "class; slides without such regions are skipped",
          annotation_mode_get_type (), DEFAULT_ANNOTATION_MODE, rw));
  g_object_class_install_property (gobject_class,
      first_id + WSI_SAMPLER_ANNOTATION_CLASSES,
      g_param_spec_string ("annotation-classes", "Annotation classes",
          "The region classes to sample, comma-separated, as the annotation "
          "files name them (case-sensitive, at most 256); their order gives "
          "the class ids 0, 1, 2... of the whole stream (every rank). "
          "Needed when annotation-mode is not off (default \"\")", "", rw));
  g_object_class_install_property (gobject_class,
      first_id + WSI_SAMPLER_ANNOTATION_EXCLUDE,
      g_param_spec_string ("annotation-exclude", "Excluded classes",
          "Region classes no patch may touch, comma-separated (e.g. "
          "\"Ignore,Pen\"): with the centre rule the centre must lie outside "
          "them, with min-annotation-coverage > 0 the whole footprint "
          "(default \"\")", "", rw));
  g_object_class_install_property (gobject_class,
      first_id + WSI_SAMPLER_ANNOTATION_MIN_COVERAGE, wsi_param_spec_double
      ("min-annotation-coverage", "Minimum region coverage",
          "Share of the patch footprint that one region of its class must "
          "cover, computed exactly on the polygons (0..1; default 0 = the "
          "centre rule: the patch centre lies in the region)", 0.0, 1.0,
          DEFAULT_MIN_ANNOTATION_COVERAGE, rw));
  g_object_class_install_property (gobject_class,
      first_id + WSI_SAMPLER_ANNOTATION_OVERLAP,
      g_param_spec_enum ("annotation-overlap", "Overlap rule",
          "Which region labels a patch that lies in several: smallest "
          "(default: by area, e.g. a tumour outline inside a tissue "
          "outline), largest, first or last in the file",
          annotation_overlap_get_type (), DEFAULT_ANNOTATION_OVERLAP, rw));
  g_object_class_install_property (gobject_class,
      first_id + WSI_SAMPLER_ANNOTATION_CLASS_BALANCE,
      g_param_spec_enum ("class-balance", "Class balance",
          "mode=random with replacement: none (default) = positions uniform "
          "over the selected regions; uniform = each patch draws its class "
          "first, all equally likely; weights = with the shares of "
          "class-weights. The shares hold across the stream: a slide "
          "lacking a class is made up for by later slides",
          class_balance_get_type (), DEFAULT_CLASS_BALANCE, rw));
  g_object_class_install_property (gobject_class,
      first_id + WSI_SAMPLER_ANNOTATION_CLASS_WEIGHTS,
      g_param_spec_string ("class-weights", "Class weights",
          "class-balance=weights: relative share of each of "
          "annotation-classes, comma-separated numbers > 0, one per class "
          "(default \"\")", "", rw));
}

void
patch_sampler_annotation_init (GstPatchSamplerAnnotationProps * props)
{
  props->mode = DEFAULT_ANNOTATION_MODE;
  props->classes = g_strdup ("");
  props->exclude = g_strdup ("");
  props->min_coverage = DEFAULT_MIN_ANNOTATION_COVERAGE;
  props->overlap = DEFAULT_ANNOTATION_OVERLAP;
  props->balance = DEFAULT_CLASS_BALANCE;
  props->weights = g_strdup ("");
}

void
patch_sampler_annotation_clear (GstPatchSamplerAnnotationProps * props)
{
  g_clear_pointer (&props->classes, g_free);
  g_clear_pointer (&props->exclude, g_free);
  g_clear_pointer (&props->weights, g_free);
}

void
patch_sampler_annotation_set (GstPatchSamplerAnnotationProps * props,
    WsiSamplerAnnotationProp prop, const GValue * value)
{
  switch (prop) {
    case WSI_SAMPLER_ANNOTATION_MODE:
      props->mode = g_value_get_enum (value);
      break;
    case WSI_SAMPLER_ANNOTATION_CLASSES:
      g_free (props->classes);
      props->classes = g_value_dup_string (value);
      break;
    case WSI_SAMPLER_ANNOTATION_EXCLUDE:
      g_free (props->exclude);
      props->exclude = g_value_dup_string (value);
      break;
    case WSI_SAMPLER_ANNOTATION_MIN_COVERAGE:{
      gdouble coverage = g_value_get_double (value);

      if (isnan (coverage))
        g_warning ("patchsampler: min-annotation-coverage must be a number "
            "in 0..1; keeping %g", props->min_coverage);
      else
        props->min_coverage = coverage;
      break;
    }
    case WSI_SAMPLER_ANNOTATION_OVERLAP:
      props->overlap = g_value_get_enum (value);
      break;
    case WSI_SAMPLER_ANNOTATION_CLASS_BALANCE:
      props->balance = g_value_get_enum (value);
      break;
    case WSI_SAMPLER_ANNOTATION_CLASS_WEIGHTS:
      g_free (props->weights);
      props->weights = g_value_dup_string (value);
      break;
    default:
      g_assert_not_reached ();
  }
}

void
patch_sampler_annotation_get (const GstPatchSamplerAnnotationProps * props,
    WsiSamplerAnnotationProp prop, GValue * value)
{
  switch (prop) {
    case WSI_SAMPLER_ANNOTATION_MODE:
      g_value_set_enum (value, props->mode);
      break;
    case WSI_SAMPLER_ANNOTATION_CLASSES:
      g_value_set_string (value, props->classes);
      break;
    case WSI_SAMPLER_ANNOTATION_EXCLUDE:
      g_value_set_string (value, props->exclude);
      break;
    case WSI_SAMPLER_ANNOTATION_MIN_COVERAGE:
      g_value_set_double (value, props->min_coverage);
      break;
    case WSI_SAMPLER_ANNOTATION_OVERLAP:
      g_value_set_enum (value, props->overlap);
      break;
    case WSI_SAMPLER_ANNOTATION_CLASS_BALANCE:
      g_value_set_enum (value, props->balance);
      break;
    case WSI_SAMPLER_ANNOTATION_CLASS_WEIGHTS:
      g_value_set_string (value, props->weights);
      break;
    default:
      g_assert_not_reached ();
  }
}

WsiClassPlan *
patch_sampler_annotation_plan (const GstPatchSamplerAnnotationProps * props)
{
  return wsi_class_plan_new (props->mode, props->classes, props->exclude,
      props->min_coverage, props->overlap, props->balance, props->weights);
}
