/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzz-annotations.c: libFuzzer targets for annotation files, built twice:
 * FUZZ_ANNOTATIONS_NAME "fuzz.geojson" (target geojson, json-glib and the
 * GeoJSON walk of ext/wsislide/collection/wsiannotations.c) and "fuzz.xml"
 * (target asapxml, GMarkup and the ASAP walk). The name decides the parser,
 * as a file's extension does in wsislidesrc.
 *
 * What the file gives is then used as patchsampler uses it: every class
 * sampled, the geometry built (gst/wsipatch/wsiregions.c: rings, grid
 * index, draw pools) and a small plan drawn with the centre rule and with
 * coverage 0.5 (point-in-polygon, exact polygon-square clipping), so the
 * fuzzer reaches the geometry with every polygon the parser lets through.
 * Input: the whole file. Cost: one parse, one build, 8 patches per rule.
 * Single-threaded.
 */

#include <stdint.h>
#include <string.h>

#include "wsiannotations.h"
#include "wsiclassplan.h"
#include "wsiregions.h"

#define SLIDE_W 4096
#define SLIDE_H 3072

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

static void
plan_inside (const WsiAnnotations * a, gdouble coverage)
{
  gint32 *roles = g_new (gint32, MAX (a->classes->len, 1));
  WsiSamplingRequest req = { 0, };
  WsiClassCounts counts = { {0}, 0 };
  GString *names = g_string_new (NULL);
  WsiClassPlan *plan;
  WsiRegions *regions;
  WsiTissueMap map;
  WsiSample *samples;
  guint i, n;

  /* Every class sampled; ids in file order. Names holding commas or
   * duplicates make a plan with a problem: then nothing is planned, as
   * the element would refuse to start. */
  for (i = 0; i < a->classes->len; i++) {
    roles[i] = (gint32) i;
    g_string_append_printf (names, "%s%s", i ? "," : "",
        (const gchar *) g_ptr_array_index (a->classes, i));
  }
  regions = wsi_regions_new (a->regions->data, a->regions->len, roles,
      a->classes->len, SLIDE_W, SLIDE_H, WSI_OVERLAP_SMALLEST);
  plan = wsi_class_plan_new (WSI_ANNOTATION_REPLACE_TISSUE, names->str, "",
      coverage, WSI_OVERLAP_SMALLEST, WSI_CLASS_BALANCE_UNIFORM, "");
  if (regions != NULL && plan->problem == NULL
      && plan->n_classes == a->classes->len) {
    req.mode = WSI_SAMPLING_RANDOM;
    req.out_size = req.footprint = 64;
    req.n_wanted = 8;
    req.replacement = TRUE;
    req.max_attempts = 400;
    wsi_tissue_map_init (&map, SLIDE_W, SLIDE_H);
    samples = wsi_class_plan_slide (plan, &counts, regions, &req, &map, &n);
    for (i = 0; i < n; i++)
      g_assert (samples[i].label >= 0
          && (guint) samples[i].label < a->classes->len);
    g_free (samples);
    /* A few fixed squares through the index and the clipping. */
    for (i = 0; i < 8; i++)
      wsi_regions_classify (regions, (gint64) i * 500, (gint64) i * 350,
          256, coverage, NULL);
  }
  wsi_regions_free (regions);
  wsi_class_plan_unref (plan);
  g_string_free (names, TRUE);
  g_free (roles);
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  WsiAnnotations *a = wsi_annotations_parse (FUZZ_ANNOTATIONS_NAME,
      (const gchar *) data, size, SLIDE_W, SLIDE_H, NULL);

  if (a == NULL)
    return 0;
  g_assert (a->n_polygons == 0 || a->regions->len > 0);
  plan_inside (a, 0.0);
  plan_inside (a, 0.5);
  wsi_annotations_free (a);
  return 0;
}
