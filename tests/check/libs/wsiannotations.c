/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit tests for the annotation layer, GStreamer-free parts compiled in:
 * the file readers (ext/wsislide/collection/wsiannotations.c: QuPath
 * GeoJSON in every shape it comes in, ASAP XML, bad files), the geometry
 * (gst/wsipatch/wsiregions.c: holes, exact coverage against areas worked
 * out by hand, the overlap rules, exclusion) and the class plan
 * (gst/wsipatch/wsiclassplan.c: every centre inside its class, balance).
 * Files are written as strings here; nothing is read from disk except a
 * 10^5-polygon file written to the test's folder. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>

#include "wsiannotations.h"
#include "wsiclassplan.h"
#include "wsiregions.h"

#define SLIDE_W 4000
#define SLIDE_H 3000

/* Tumor: a square 100..900 with a hole 400..600; Stroma: 1000..1900 x
 * 200..1400; the same shapes in each format below. */
static const gchar geojson_collection[] =
    "{\"type\":\"FeatureCollection\",\"features\":["
    "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\",\"coordinates\":"
    "[[[100,100],[900,100],[900,900],[100,900],[100,100]],"
    "[[400,400],[600,400],[600,600],[400,600],[400,400]]]},"
    "\"properties\":{\"classification\":{\"name\":\"Tumor\"}}},"
    "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\",\"coordinates\":"
    "[[[1000,200],[1900,200],[1900,1400],[1000,1400]]]},"
    "\"properties\":{\"classification\":{\"name\":\"Stroma\"}}}]}";

static const gchar geojson_array_multipolygon[] =
    "[{\"type\":\"Feature\",\"geometry\":{\"type\":\"MultiPolygon\","
    "\"coordinates\":[[[[100,100],[900,100],[900,900],[100,900]],"
    "[[400,400],[600,400],[600,600],[400,600]]]]},"
    "\"properties\":{\"name\":\"Tumor\"}},"
    "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\",\"coordinates\":"
    "[[[1000,200],[1900,200],[1900,1400],[1000,1400]]]},"
    "\"properties\":{\"classification\":\"Stroma\"}}]";

static WsiAnnotations *
parse (const gchar * name, const gchar * text, GError ** error)
{
  return wsi_annotations_parse (name, text, strlen (text), SLIDE_W, SLIDE_H,
      error);
}

static WsiRegions *
regions_for (const WsiAnnotations * a, const gchar * classes,
    const gchar * exclude, WsiOverlapRule rule)
{
  WsiClassPlan *plan = wsi_class_plan_new (WSI_ANNOTATION_REPLACE_TISSUE,
      classes, exclude, 0.0, rule, WSI_CLASS_BALANCE_NONE, "");
  gchar **names = g_new0 (gchar *, a->classes->len + 1);
  WsiRegions *r;
  gint32 *roles;
  guint n, i;

  for (i = 0; i < a->classes->len; i++)
    names[i] = g_ptr_array_index (a->classes, i);
  roles = wsi_class_plan_roles (plan, (const gchar * const *) names, &n);
  r = wsi_regions_new (a->regions->data, a->regions->len, roles, n, SLIDE_W,
      SLIDE_H, rule);
  g_free (roles);
  g_free (names);
  wsi_class_plan_unref (plan);
  return r;
}

GST_START_TEST (test_geojson_shapes)
{
  GError *error = NULL;
  WsiAnnotations *a = parse ("a.geojson", geojson_collection, &error);
  WsiAnnotations *b = parse ("b.json", geojson_array_multipolygon, &error);
  WsiAnnotations *c = parse ("c.geojson",
      "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\","
      "\"coordinates\":[[[0,0],[50,0],[50,50],[0,50]]]},\"properties\":{}}",
      &error);

  fail_unless (a != NULL && b != NULL && c != NULL);
  fail_unless_equals_int (a->n_polygons, 2);
  fail_unless_equals_int (a->n_skipped, 0);
  fail_unless_equals_string (g_ptr_array_index (a->classes, 0), "Tumor");
  fail_unless_equals_string (g_ptr_array_index (a->classes, 1), "Stroma");
  /* Closing points dropped: the bytes of both spellings are identical. */
  fail_unless_equals_int (a->regions->len, b->regions->len);
  fail_unless (memcmp (a->regions->data, b->regions->data,
          a->regions->len) == 0);
  fail_unless_equals_string (g_ptr_array_index (b->classes, 1), "Stroma");
  /* A bare feature without a class. */
  fail_unless_equals_int (c->n_polygons, 1);
  fail_unless_equals_string (g_ptr_array_index (c->classes, 0), "");
  wsi_annotations_free (a);
  wsi_annotations_free (b);
  wsi_annotations_free (c);
}

GST_END_TEST;

GST_START_TEST (test_asap_same_shapes)
{
  const gchar *xml =
      "<?xml version=\"1.0\"?><ASAP_Annotations><Annotations>"
      "<Annotation Name=\"a\" Type=\"Polygon\" PartOfGroup=\"Stroma\">"
      "<Coordinates><Coordinate Order=\"0\" X=\"1000\" Y=\"200\"/>"
      "<Coordinate Order=\"1\" X=\"1900\" Y=\"200\"/>"
      "<Coordinate Order=\"2\" X=\"1900\" Y=\"1400\"/>"
      "<Coordinate Order=\"3\" X=\"1000\" Y=\"1400\"/></Coordinates>"
      "</Annotation>"
      "<Annotation Name=\"b\" Type=\"Rectangle\" PartOfGroup=\"None\">"
      "<Coordinates><Coordinate Order=\"0\" X=\"0\" Y=\"0\"/>"
      "<Coordinate Order=\"1\" X=\"50,5\" Y=\"0\"/>"
      "<Coordinate Order=\"2\" X=\"50.5\" Y=\"50\"/>"
      "<Coordinate Order=\"3\" X=\"0\" Y=\"50\"/></Coordinates>"
      "</Annotation></Annotations><AnnotationGroups/></ASAP_Annotations>";
  const gchar *json = "{\"type\":\"FeatureCollection\",\"features\":["
      "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\","
      "\"coordinates\":[[[1000,200],[1900,200],[1900,1400],[1000,1400]]]},"
      "\"properties\":{\"classification\":{\"name\":\"Stroma\"}}},"
      "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\","
      "\"coordinates\":[[[0,0],[50.5,0],[50.5,50],[0,50]]]}}]}";
  GError *error = NULL;
  WsiAnnotations *x = parse ("s.xml", xml, &error);
  WsiAnnotations *j = parse ("s.geojson", json, &error);

  fail_unless (x != NULL && j != NULL, "%s", error ? error->message : "");
  fail_unless_equals_int (x->n_polygons, 2);
  fail_unless_equals_string (g_ptr_array_index (x->classes, 0), "Stroma");
  fail_unless_equals_string (g_ptr_array_index (x->classes, 1), "");
  fail_unless_equals_int (x->regions->len, j->regions->len);
  fail_unless (memcmp (x->regions->data, j->regions->data,
          x->regions->len) == 0);
  wsi_annotations_free (x);
  wsi_annotations_free (j);
}

GST_END_TEST;

GST_START_TEST (test_bad_files)
{
  const struct
  {
    const gchar *name, *text, *expect;
  } cases[] = {
    {"broken.geojson", "{\"type\":\"FeatureCollection\",\"features\":[",
        "broken.geojson: not valid JSON"},
    {"other.geojson", "{\"type\":\"Topology\"}", "other.geojson: GeoJSON of "
          "type \"Topology\""},
    {"nofeatures.geojson", "{\"type\":\"FeatureCollection\"}",
        "without a \"features\" array"},
    {"broken.xml", "<ASAP_Annotations><Annotations><Annotation>",
        "broken.xml: not well-formed XML"},
    {"empty.xml", "<ASAP_Annotations/>", "no ASAP Annotation element"},
    {"what.txt", "hello", "neither GeoJSON nor ASAP XML"},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    GError *error = NULL;
    WsiAnnotations *a = parse (cases[i].name, cases[i].text, &error);

    fail_unless (a == NULL, "%s parsed", cases[i].name);
    fail_unless (error != NULL && strstr (error->message,
            cases[i].expect) != NULL, "%s: %s", cases[i].name,
        error ? error->message : "no error");
    g_clear_error (&error);
  }
}

GST_END_TEST;

GST_START_TEST (test_bad_shapes_skipped)
{
  const gchar *json = "{\"type\":\"FeatureCollection\",\"features\":["
      /* bow tie: crossing edges */
      "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\","
      "\"coordinates\":[[[0,0],[100,100],[100,0],[0,50]]]}},"
      /* two points */
      "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\","
      "\"coordinates\":[[[0,0],[100,100],[0,0]]]}},"
      /* collinear: no area */
      "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\","
      "\"coordinates\":[[[0,0],[50,50],[100,100]]]}},"
      /* wholly outside the slide */
      "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\","
      "\"coordinates\":[[[5000,0],[6000,0],[6000,100]]]}},"
      /* not numbers */
      "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\","
      "\"coordinates\":[[[\"a\",0],[1,1],[0,1]]]}},"
      /* a point is not an area */
      "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\","
      "\"coordinates\":[1,1]}},"
      /* a hole outside its outline */
      "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\","
      "\"coordinates\":[[[0,0],[10,0],[10,10],[0,10]],"
      "[[20,20],[30,20],[30,30]]]}},"
      /* one good one */
      "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\","
      "\"coordinates\":[[[0,0],[100,0],[100,100],[0,100]]]}}]}";
  GError *error = NULL;
  WsiAnnotations *a = parse ("bad.geojson", json, &error);

  fail_unless (a != NULL);
  fail_unless_equals_int (a->n_polygons, 1);
  fail_unless_equals_int (a->n_skipped, 7);
  fail_unless (strstr (a->first_problem, "feature 1") != NULL
      && strstr (a->first_problem, "self-intersecting") != NULL, "%s",
      a->first_problem);
  wsi_annotations_free (a);
}

GST_END_TEST;

GST_START_TEST (test_regions_geometry)
{
  GError *error = NULL;
  WsiAnnotations *a = parse ("a.geojson", geojson_collection, &error);
  WsiRegions *r = regions_for (a, "Tumor,Stroma", "", WSI_OVERLAP_SMALLEST);
  guint region;

  fail_unless (r != NULL);
  fail_unless_equals_int (wsi_regions_n_sampled (r), 2);
  /* Centre rule: in the square, in its hole, in Stroma, outside. */
  fail_unless_equals_int (wsi_regions_classify (r, 150, 150, 100, 0, NULL),
      0);
  fail_unless_equals_int (wsi_regions_classify (r, 450, 450, 100, 0, NULL),
      WSI_CLASS_NONE);
  fail_unless_equals_int (wsi_regions_classify (r, 1400, 700, 64, 0, NULL),
      1);
  fail_unless_equals_int (wsi_regions_classify (r, 3000, 2500, 64, 0, NULL),
      WSI_CLASS_NONE);
  /* Areas: 800² - 200², 900 x 1200. */
  fail_unless (fabs (wsi_regions_class_area (r, 0) - 600000.0) < 1e-6);
  fail_unless (fabs (wsi_regions_class_area (r, 1) - 1080000.0) < 1e-6);

  /* Exact coverage: half over the left edge of Stroma; a quarter of the
   * square over the hole's corner; wholly inside. */
  fail_unless_equals_int (wsi_regions_classify (r, 950, 500, 100, 0.5,
          &region), 1);
  fail_unless (fabs (wsi_regions_coverage (r, region, 950, 500, 100) - 0.5)
      < 1e-12);
  fail_unless_equals_int (wsi_regions_classify (r, 950, 500, 100, 0.51,
          NULL), WSI_CLASS_NONE);
  fail_unless_equals_int (wsi_regions_classify (r, 300, 300, 200, 0.75,
          &region), 0);
  fail_unless (fabs (wsi_regions_coverage (r, region, 300, 300, 200) - 0.75)
      < 1e-12);
  fail_unless_equals_int (wsi_regions_classify (r, 300, 300, 200, 0.76,
          NULL), WSI_CLASS_NONE);
  fail_unless (fabs (wsi_regions_coverage (r, region, 150, 150, 100) - 1.0)
      < 1e-12);
  wsi_regions_free (r);

  /* Stroma excluded: no patch may touch it; Tumor unaffected. */
  r = regions_for (a, "Tumor", "Stroma", WSI_OVERLAP_SMALLEST);
  fail_unless_equals_int (wsi_regions_n_sampled (r), 1);
  fail_unless_equals_int (wsi_regions_classify (r, 1400, 700, 64, 0, NULL),
      WSI_CLASS_NONE);
  fail_unless_equals_int (wsi_regions_classify (r, 150, 150, 100, 0, NULL),
      0);
  wsi_regions_free (r);
  wsi_annotations_free (a);
}

GST_END_TEST;

/* Outline Tissue (0..2000 x 0..2000) holding a Tumor square (500..700):
 * the overlap rule decides the label inside the square. */
GST_START_TEST (test_overlap_rules)
{
  const gchar *json = "[{\"type\":\"Feature\",\"geometry\":{\"type\":"
      "\"Polygon\",\"coordinates\":[[[0,0],[2000,0],[2000,2000],[0,2000]]]},"
      "\"properties\":{\"name\":\"Tissue\"}},"
      "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\","
      "\"coordinates\":[[[500,500],[700,500],[700,700],[500,700]]]},"
      "\"properties\":{\"name\":\"Tumor\"}}]";
  const struct
  {
    WsiOverlapRule rule;
    gint32 inside;
  } cases[] = {
    {WSI_OVERLAP_SMALLEST, 1}, {WSI_OVERLAP_LARGEST, 0},
    {WSI_OVERLAP_FIRST, 0}, {WSI_OVERLAP_LAST, 1},
  };
  GError *error = NULL;
  WsiAnnotations *a = parse ("o.geojson", json, &error);
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    WsiRegions *r = regions_for (a, "Tissue,Tumor", "", cases[i].rule);

    fail_unless_equals_int (wsi_regions_classify (r, 560, 560, 80, 0, NULL),
        cases[i].inside);
    fail_unless_equals_int (wsi_regions_classify (r, 560, 560, 80, 1.0,
            NULL), cases[i].inside);
    fail_unless_equals_int (wsi_regions_classify (r, 1500, 1500, 80, 0,
            NULL), 0);
    wsi_regions_free (r);
  }
  wsi_annotations_free (a);
}

GST_END_TEST;

static WsiSamplingRequest
random_request (gint64 n, guint visit)
{
  WsiSamplingRequest req = { 0, };

  req.mode = WSI_SAMPLING_RANDOM;
  req.out_size = 64;
  req.footprint = 64;
  req.n_wanted = n;
  req.replacement = TRUE;
  req.seed = 11;
  req.slide_index = 3;
  req.visit = visit;
  return req;
}

/* Random draws: every centre in a region of its label, never in the hole;
 * class balance near the requested shares on a 1:20 area imbalance. */
GST_START_TEST (test_plan_inside_and_balanced)
{
  const gchar *json = "[{\"type\":\"Feature\",\"geometry\":{\"type\":"
      "\"Polygon\",\"coordinates\":[[[100,100],[3900,100],[3900,2900],"
      "[100,2900]],[[1000,1000],[1500,1000],[1500,1500],[1000,1500]]]},"
      "\"properties\":{\"name\":\"Stroma\"}},"
      "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\","
      "\"coordinates\":[[[2000,2000],[2700,2000],[2700,2700],[2000,2700]]]},"
      "\"properties\":{\"name\":\"Tumor\"}}]";
  GError *error = NULL;
  WsiAnnotations *a = parse ("p.geojson", json, &error);
  WsiClassPlan *plan;
  WsiClassCounts counts = { {0}, 0 };
  WsiSamplingRequest req = random_request (2000, 0);
  WsiTissueMap map;
  WsiRegions *r;
  WsiSample *s;
  guint n, i, per_class[2] = { 0, 0 };

  wsi_tissue_map_init (&map, SLIDE_W, SLIDE_H);
  plan = wsi_class_plan_new (WSI_ANNOTATION_REPLACE_TISSUE, "Tumor,Stroma",
      "", 0.0, WSI_OVERLAP_SMALLEST, WSI_CLASS_BALANCE_NONE, "");
  r = regions_for (a, "Tumor,Stroma", "", WSI_OVERLAP_SMALLEST);
  s = wsi_class_plan_slide (plan, &counts, r, &req, &map, &n);
  fail_unless_equals_int (n, 2000);
  for (i = 0; i < n; i++) {
    gdouble cx = s[i].x + 32.0, cy = s[i].y + 32.0;
    gboolean in_hole = cx >= 1000 && cx <= 1500 && cy >= 1000 && cy <= 1500;
    gboolean in_tumor = cx >= 2000 && cx <= 2700 && cy >= 2000 && cy <= 2700;

    fail_if (in_hole, "centre %g,%g in the hole", cx, cy);
    fail_unless_equals_int (s[i].label, in_tumor ? 0 : 1);
    per_class[s[i].label]++;
  }
  /* Without balance, classes come in proportion to area: 0.49 / 10.84. */
  fail_unless (per_class[0] < 200, "%u tumour patches", per_class[0]);
  g_free (s);
  wsi_class_plan_unref (plan);

  plan = wsi_class_plan_new (WSI_ANNOTATION_REPLACE_TISSUE, "Tumor,Stroma",
      "", 0.0, WSI_OVERLAP_SMALLEST, WSI_CLASS_BALANCE_WEIGHTS, "1,3");
  per_class[0] = per_class[1] = 0;
  for (i = 0; i < 5; i++) {
    guint k;

    req = random_request (2000, i);
    s = wsi_class_plan_slide (plan, &counts, r, &req, &map, &n);
    fail_unless_equals_int (n, 2000);
    for (k = 0; k < n; k++)
      per_class[s[k].label]++;
    wsi_class_counts_add (&counts, s, n);
    g_free (s);
  }
  fail_unless (fabs (per_class[0] / 10000.0 - 0.25) < 0.03, "%u of 10000",
      per_class[0]);
  wsi_class_plan_unref (plan);
  wsi_regions_free (r);
  wsi_annotations_free (a);
}

GST_END_TEST;

/* The same request gives the same plan; another visit another one. */
GST_START_TEST (test_plan_deterministic)
{
  GError *error = NULL;
  WsiAnnotations *a = parse ("a.geojson", geojson_collection, &error);
  WsiClassPlan *plan = wsi_class_plan_new (WSI_ANNOTATION_REPLACE_TISSUE,
      "Tumor,Stroma", "", 0.0, WSI_OVERLAP_SMALLEST, WSI_CLASS_BALANCE_UNIFORM,
      "");
  WsiClassCounts counts = { {0}, 0 };
  WsiRegions *r = regions_for (a, "Tumor,Stroma", "", WSI_OVERLAP_SMALLEST);
  WsiSamplingRequest req = random_request (300, 0);
  WsiTissueMap map;
  WsiSample *s1, *s2, *s3;
  guint n1, n2, n3;

  wsi_tissue_map_init (&map, SLIDE_W, SLIDE_H);
  s1 = wsi_class_plan_slide (plan, &counts, r, &req, &map, &n1);
  s2 = wsi_class_plan_slide (plan, &counts, r, &req, &map, &n2);
  req.visit = 1;
  s3 = wsi_class_plan_slide (plan, &counts, r, &req, &map, &n3);
  fail_unless (n1 == 300 && n2 == 300 && n3 == 300);
  fail_unless (memcmp (s1, s2, n1 * sizeof (WsiSample)) == 0);
  fail_unless (memcmp (s1, s3, n1 * sizeof (WsiSample)) != 0);
  g_free (s1);
  g_free (s2);
  g_free (s3);
  wsi_regions_free (r);
  wsi_class_plan_unref (plan);
  wsi_annotations_free (a);
}

GST_END_TEST;

/* Grid inside regions: every cell kept has its centre in its class. */
GST_START_TEST (test_grid_inside)
{
  GError *error = NULL;
  WsiAnnotations *a = parse ("a.geojson", geojson_collection, &error);
  WsiClassPlan *plan = wsi_class_plan_new (WSI_ANNOTATION_REPLACE_TISSUE,
      "Tumor,Stroma", "", 0.0, WSI_OVERLAP_SMALLEST, WSI_CLASS_BALANCE_NONE,
      "");
  WsiClassCounts counts = { {0}, 0 };
  WsiRegions *r = regions_for (a, "Tumor,Stroma", "", WSI_OVERLAP_SMALLEST);
  WsiSamplingRequest req = random_request (-1, 0);
  WsiTissueMap map;
  WsiSample *s;
  guint n, i, expected = 0;
  gint64 x, y;

  req.mode = WSI_SAMPLING_GRID;
  wsi_tissue_map_init (&map, SLIDE_W, SLIDE_H);
  s = wsi_class_plan_slide (plan, &counts, r, &req, &map, &n);
  for (y = 0; y + 64 <= SLIDE_H; y += 64)
    for (x = 0; x + 64 <= SLIDE_W; x += 64)
      expected += wsi_regions_classify (r, x, y, 64, 0, NULL) >= 0;
  fail_unless (expected > 100);
  fail_unless_equals_int (n, expected);
  for (i = 0; i < n; i++)
    fail_unless_equals_int (s[i].label, wsi_regions_classify (r, s[i].x,
            s[i].y, 64, 0, NULL));
  g_free (s);
  wsi_regions_free (r);
  wsi_class_plan_unref (plan);
  wsi_annotations_free (a);
}

GST_END_TEST;

/* 10^5 triangles parse, index and answer; the time is printed, not
 * asserted (benchmarks measure speed). */
GST_START_TEST (test_many_polygons)
{
  GString *json = g_string_new ("{\"type\":\"FeatureCollection\","
      "\"features\":[");
  gchar *path = g_build_filename (WSI_TEST_TMPDIR, "many.geojson", NULL);
  GError *error = NULL;
  WsiAnnotations *a;
  WsiRegions *r;
  gint64 start;
  guint i, hits = 0;

  for (i = 0; i < 100000; i++) {
    guint x = (i % 400) * 10, y = (i / 400) * 10;

    g_string_append_printf (json, "%s{\"type\":\"Feature\",\"geometry\":"
        "{\"type\":\"Polygon\",\"coordinates\":[[[%u,%u],[%u,%u],[%u,%u]]]},"
        "\"properties\":{\"classification\":{\"name\":\"C%u\"}}}",
        i ? "," : "", x, y, x + 8, y, x, y + 8, i % 3);
  }
  g_string_append (json, "]}");
  g_mkdir_with_parents (WSI_TEST_TMPDIR, 0755);
  fail_unless (g_file_set_contents (path, json->str, json->len, NULL));
  start = g_get_monotonic_time ();
  a = wsi_annotations_load (path, SLIDE_W, SLIDE_H * 2, &error);
  fail_unless (a != NULL);
  fail_unless_equals_int (a->n_polygons, 100000);
  r = regions_for (a, "C0,C1,C2", "", WSI_OVERLAP_SMALLEST);
  for (i = 0; i < 10000; i++)
    hits += wsi_regions_classify (r, (i % 400) * 10 - 30, (i / 400) * 10 - 30,
        64, 0, NULL) >= 0;
  g_print ("10^5 polygons: parsed, indexed and 10^4 lookups in %.2f s\n",
      (g_get_monotonic_time () - start) / 1e6);
  fail_unless (hits > 0);
  wsi_regions_free (r);
  wsi_annotations_free (a);
  g_unlink (path);
  g_free (path);
  g_string_free (json, TRUE);
}

GST_END_TEST;

/* Which file belongs to a slide: next to it, in a folder, by a manifest
 * value; a slide at a URL only in the folder (or by an absolute name). */
GST_START_TEST (test_find_file)
{
  gchar *root = g_build_filename (WSI_TEST_TMPDIR, "find", NULL);
  gchar *notes = g_build_filename (root, "notes", NULL);
  gchar *slide = g_build_filename (root, "case-1.svs", NULL);
  gchar *next_to = g_build_filename (root, "case-1.geojson", NULL);
  gchar *in_folder = g_build_filename (notes, "case-1.xml", NULL);
  gchar *named = g_build_filename (notes, "other.json", NULL);
  gchar *found;

  g_mkdir_with_parents (notes, 0755);
  fail_unless (g_file_set_contents (next_to, "{}", -1, NULL));
  fail_unless (g_file_set_contents (in_folder, "<a/>", -1, NULL));
  found = wsi_annotations_find (slide, NULL, NULL);
  fail_unless_equals_string (found, next_to);
  g_free (found);
  found = wsi_annotations_find (slide, notes, NULL);
  fail_unless_equals_string (found, in_folder);
  g_free (found);
  found = wsi_annotations_find (slide, notes, "other.json");
  fail_unless_equals_string (found, named);
  g_free (found);
  found = wsi_annotations_find (slide, NULL, "notes/other.json");
  fail_unless_equals_string (found, named);
  g_free (found);
  /* No file of that name anywhere. */
  found = wsi_annotations_find ("/nowhere/case-9.svs", NULL, NULL);
  fail_unless (found == NULL);
  /* Remote: never a path built from the URL (it may hold credentials). */
  fail_unless (wsi_annotations_find ("https://user:secret@host/case-1.svs",
          NULL, NULL) == NULL);
  fail_unless (wsi_annotations_find ("https://user:secret@host/case-1.svs",
          NULL, "case-1.geojson") == NULL);
  found = wsi_annotations_find ("https://host/x/case-1.svs?sig=abc", notes,
      NULL);
  fail_unless_equals_string (found, in_folder);
  g_free (found);
  found = wsi_annotations_find ("https://host/case-1.svs", NULL, next_to);
  fail_unless_equals_string (found, next_to);
  g_free (found);
  g_unlink (next_to);
  g_unlink (in_folder);
  g_free (root);
  g_free (notes);
  g_free (slide);
  g_free (next_to);
  g_free (in_folder);
  g_free (named);
}

GST_END_TEST;

static Suite *
wsiannotations_suite (void)
{
  Suite *s = suite_create ("wsiannotations");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_geojson_shapes);
  tcase_add_test (tc, test_asap_same_shapes);
  tcase_add_test (tc, test_bad_files);
  tcase_add_test (tc, test_bad_shapes_skipped);
  tcase_add_test (tc, test_regions_geometry);
  tcase_add_test (tc, test_overlap_rules);
  tcase_add_test (tc, test_plan_inside_and_balanced);
  tcase_add_test (tc, test_plan_deterministic);
  tcase_add_test (tc, test_grid_inside);
  tcase_add_test (tc, test_many_polygons);
  tcase_add_test (tc, test_find_file);
  return s;
}

GST_CHECK_MAIN (wsiannotations);
