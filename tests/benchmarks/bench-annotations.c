/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * bench-annotations: what sampling inside annotation regions costs per
 * patch, next to what reading the patch costs.
 *
 * Sampling runs on the geometry of a 40x-sized slide (98304x73728 level-0
 * px, no pixels needed) holding --polygons annotation regions (default
 * 10^4: 12-gons of radius 60..600 px on a jittered grid, so neighbours
 * touch or overlap a little, every tenth with a smaller region of another
 * class nested in it, 5 % with a hole; classes Tumor, Stroma, Necrosis and
 * an excluded Ignore). Reading runs on a generated 8192x6144 JPEG TIFF at
 * random positions (a read's cost does not depend on the slide's size).
 * One thread, alternated rounds:
 *   parse    reading the GeoJSON (once per slide in a stream)
 *   sample   one slide visit as patchsampler plans it: the slide's
 *            geometry built (wsi_regions_new) and --patches positions
 *            planned (wsi_class_plan_slide), per patch, for the centre
 *            rule and for coverage 0.5, without and with class balance
 *   read     wsi_slide_read of each planned patch (--size px at level 0,
 *            direct TIFF backend, no tile cache), per patch
 * and prints the medians and sample / read in percent.
 *
 *   bench-annotations [--polygons 10000] [--patches 256] [--size 224]
 *                     [--rounds 5]
 */

#include <math.h>
#include <string.h>
#include <glib/gstdio.h>

#include "wsiannotations.h"
#include "wsiclassplan.h"
#include "wsislide.h"
#include "wsitestslide.h"

#define SLIDE_W 98304            /* the geometry's slide */
#define SLIDE_H 73728
#define READ_W 8192             /* the slide read */
#define READ_H 6144

static gint n_polygons = 10000;
static gint n_patches = 256;
static gint patch_size = 224;
static gint rounds = 5;

static GOptionEntry entries[] = {
  {"polygons", 0, 0, G_OPTION_ARG_INT, &n_polygons, "Regions (10000)", "N"},
  {"patches", 0, 0, G_OPTION_ARG_INT, &n_patches, "Patches per visit (256)",
      "N"},
  {"size", 0, 0, G_OPTION_ARG_INT, &patch_size, "Patch side (224)", "PX"},
  {"rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "Rounds (5)", "N"},
  {NULL}
};

static const gchar *const class_names[] = { "Tumor", "Stroma", "Necrosis",
  "Ignore"
};

static void
append_ring (GString * s, gdouble cx, gdouble cy, gdouble r)
{
  gint k;

  g_string_append_c (s, '[');
  for (k = 0; k <= 12; k++) {
    gdouble a = 2 * G_PI * (k % 12) / 12.0;

    g_string_append_printf (s, "%s[%.1f,%.1f]", k ? "," : "",
        cx + r * cos (a), cy + r * sin (a));
  }
  g_string_append_c (s, ']');
}

static gchar *
make_geojson (GRand * rand)
{
  GString *s = g_string_new ("{\"type\":\"FeatureCollection\","
      "\"features\":[");
  gint columns = (gint) ceil (sqrt (n_polygons * (gdouble) SLIDE_W /
          SLIDE_H));
  gdouble cell = (gdouble) SLIDE_W / columns;
  gint i;

  for (i = 0; i < n_polygons; i++) {
    gboolean nested = i % 10 == 9;
    gint c = (nested ? i - 1 : i) % columns, row = (nested ? i - 1 : i) /
        columns;
    gdouble r = nested ? g_rand_double_range (rand, 60, 150) :
        g_rand_double_range (rand, 0.2, 0.55) * cell;
    gdouble cx = (c + 0.5) * cell + g_rand_double_range (rand, -0.1, 0.1) *
        cell;
    gdouble cy = (row + 0.5) * cell + g_rand_double_range (rand, -0.1, 0.1) *
        cell;

    g_string_append_printf (s, "%s{\"type\":\"Feature\",\"geometry\":"
        "{\"type\":\"Polygon\",\"coordinates\":[", i ? "," : "");
    append_ring (s, cx, cy, r);
    if (g_rand_int_range (rand, 0, 20) == 0) {
      g_string_append_c (s, ',');
      append_ring (s, cx, cy, r / 3);
    }
    g_string_append_printf (s, "]},\"properties\":{\"classification\":"
        "{\"name\":\"%s\"}}}", class_names[i % 4]);
  }
  g_string_append (s, "]}");
  return g_string_free (s, FALSE);
}

static gint
compare_double (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return (x > y) - (x < y);
}

static gdouble
median (GArray * values)
{
  g_array_sort (values, compare_double);
  return g_array_index (values, gdouble, values->len / 2);
}

/* One visit: geometry built and n_patches planned; seconds, and the part
 * spent building the geometry in *@build. */
static gdouble
time_visit (const WsiAnnotations * a, WsiClassPlan * plan, guint visit,
    WsiSample ** samples, guint * n, gdouble * build)
{
  gchar **names = g_new0 (gchar *, a->classes->len + 1);
  WsiClassCounts counts = { {0}, 0 };
  WsiSamplingRequest req = { 0, };
  WsiTissueMap map;
  WsiRegions *regions;
  gint32 *roles;
  guint n_roles, i;
  gint64 start;

  for (i = 0; i < a->classes->len; i++)
    names[i] = g_ptr_array_index (a->classes, i);
  req.mode = WSI_SAMPLING_RANDOM;
  req.out_size = req.footprint = patch_size;
  req.n_wanted = n_patches;
  req.replacement = TRUE;
  req.seed = 1;
  req.visit = visit;
  wsi_tissue_map_init (&map, SLIDE_W, SLIDE_H);
  start = g_get_monotonic_time ();
  roles = wsi_class_plan_roles (plan, (const gchar * const *) names, &n_roles);
  regions = wsi_regions_new (a->regions->data, a->regions->len, roles,
      n_roles, SLIDE_W, SLIDE_H, plan->overlap);
  *build = (g_get_monotonic_time () - start) / 1e6;
  *samples = wsi_class_plan_slide (plan, &counts, regions, &req, &map, n);
  wsi_regions_free (regions);
  g_free (roles);
  g_free (names);
  return (g_get_monotonic_time () - start) / 1e6;
}

static gdouble
time_reads (WsiSlide * slide, const WsiSample * samples, guint n)
{
  WsiReadContext *ctx = wsi_read_context_new ();
  guint8 *rgb = g_malloc ((gsize) patch_size * patch_size * 3);
  WsiImage out = { 0, };
  gint64 start;
  guint i;

  out.data = rgb;
  out.stride = patch_size * 3;
  out.width = out.height = patch_size;
  out.format = WSI_PIXEL_RGB;
  start = g_get_monotonic_time ();
  for (i = 0; i < n; i++) {
    WsiReadRequest request = { 0, };
    WsiReadReport report;
    GError *error = NULL;

    /* The sampled position folded onto the slide read. */
    request.x = samples[i].x % (READ_W - samples[i].footprint);
    request.y = samples[i].y % (READ_H - samples[i].footprint);
    request.width = request.height = samples[i].footprint;
    request.resample_tolerance = 0.01;
    request.native_scaling = TRUE;
    if (!wsi_slide_read (slide, ctx, &request, &out, &report, &error)) {
      g_printerr ("read failed: %s\n", error->message);
      g_clear_error (&error);
    }
  }
  g_free (rgb);
  wsi_read_context_free (ctx);
  return (g_get_monotonic_time () - start) / 1e6;
}

int
main (int argc, char **argv)
{
  GOptionContext *options = g_option_context_new ("- sampling inside "
      "annotation regions against reading");
  const struct
  {
    const gchar *name;
    gdouble coverage;
    WsiClassBalance balance;
  } variants[] = {
    {"centre rule", 0.0, WSI_CLASS_BALANCE_NONE},
    {"centre, balanced", 0.0, WSI_CLASS_BALANCE_UNIFORM},
    {"coverage 0.5", 0.5, WSI_CLASS_BALANCE_NONE},
    {"coverage 0.5, balanced", 0.5, WSI_CLASS_BALANCE_UNIFORM},
  };
  gchar *dir, *slide_path, *json;
  WsiTestSlideSpec spec;
  WsiAnnotations *a = NULL;
  GError *error = NULL;
  GRand *rand = g_rand_new_with_seed (7);
  GArray *parse = g_array_new (FALSE, FALSE, sizeof (gdouble));
  WsiSlide *slide;
  guint v;
  gint r;

  g_option_context_add_main_entries (options, entries, NULL);
  if (!g_option_context_parse (options, &argc, &argv, &error)) {
    g_printerr ("%s\n", error->message);
    return 2;
  }
  dir = g_dir_make_tmp ("bench-annotations-XXXXXX", NULL);
  slide_path = g_build_filename (dir, "slide.tiff", NULL);
  wsi_test_slide_spec_init (&spec);
  spec.width = READ_W;
  spec.height = READ_H;
  spec.levels = 3;
  if (!wsi_test_slide_write (slide_path, &spec, &error)) {
    g_printerr ("%s\n", error->message);
    return 1;
  }
  json = make_geojson (rand);
  slide = wsi_slide_open (slide_path, WSI_BACKEND_TIFF, &error);
  if (slide == NULL) {
    g_printerr ("%s\n", error->message);
    return 1;
  }

  for (r = 0; r < rounds; r++) {
    gint64 start = g_get_monotonic_time ();
    gdouble t;

    a = wsi_annotations_parse ("bench.geojson", json, strlen (json), SLIDE_W,
        SLIDE_H, NULL);
    t = (g_get_monotonic_time () - start) / 1e6;
    g_array_append_val (parse, t);
    if (r + 1 < rounds)
      wsi_annotations_free (a);
  }
  g_print ("%d polygons (%u kept, %u dropped), %.1f MB of GeoJSON: parse "
      "%.3f s (median of %d)\n", n_polygons, a->n_polygons, a->n_skipped,
      strlen (json) / 1e6, median (parse), rounds);
  g_print ("%-24s %14s %14s %10s %9s %9s\n", "variant", "sample us/patch",
      "read us/patch", "patches", "sample/read", "build ms");

  for (v = 0; v < G_N_ELEMENTS (variants); v++) {
    WsiClassPlan *plan = wsi_class_plan_new (WSI_ANNOTATION_REPLACE_TISSUE,
        "Tumor,Stroma,Necrosis", "Ignore", variants[v].coverage,
        WSI_OVERLAP_SMALLEST, variants[v].balance, "");
    GArray *sample_us = g_array_new (FALSE, FALSE, sizeof (gdouble));
    GArray *read_us = g_array_new (FALSE, FALSE, sizeof (gdouble));
    GArray *build_ms = g_array_new (FALSE, FALSE, sizeof (gdouble));
    guint n = 0;

    for (r = 0; r < rounds; r++) {
      WsiSample *samples = NULL;
      gdouble build = 0.0;
      gdouble ts = time_visit (a, plan, (guint) r, &samples, &n, &build);
      gdouble tr = n ? time_reads (slide, samples, n) : 0.0;
      gdouble s_us = n ? ts * 1e6 / n : 0.0, r_us = n ? tr * 1e6 / n : 0.0;

      g_array_append_val (sample_us, s_us);
      g_array_append_val (build_ms, build);
      g_array_append_val (read_us, r_us);
      g_free (samples);
    }
    g_print ("%-24s %14.2f %14.1f %10u %8.2f%% %9.2f\n", variants[v].name,
        median (sample_us), median (read_us), n,
        100.0 * median (sample_us) / MAX (median (read_us), 1e-9),
        median (build_ms) * 1e3);
    g_array_unref (build_ms);
    g_array_unref (sample_us);
    g_array_unref (read_us);
    wsi_class_plan_unref (plan);
  }

  wsi_slide_close (slide);
  wsi_annotations_free (a);
  g_unlink (slide_path);
  g_rmdir (dir);
  g_free (slide_path);
  g_free (dir);
  g_free (json);
  g_array_unref (parse);
  g_rand_free (rand);
  g_option_context_free (options);
  return 0;
}
