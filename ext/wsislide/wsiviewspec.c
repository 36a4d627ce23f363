/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsiviewspec.c: the view list grammar and the crop draws (see the
 * header). */

#include "wsiviewspec.h"
#include "wsirng.h"

#include <math.h>
#include <string.h>

/* Keeps patchviews' draws apart from other consumers of the same seed
 * and (sequence, view) keys, such as patchaugment's. */
#define CROP_RNG_DOMAIN G_GUINT64_CONSTANT (0x7669657773)   /* "views" */
#define CROP_ATTEMPTS 10

static gboolean
parse_double (const gchar * text, gdouble * value)
{
  gchar *end = NULL;

  if (text == NULL || *text == '\0')
    return FALSE;
  *value = g_ascii_strtod (text, &end);
  return end != text && *end == '\0' && isfinite (*value);
}

static gboolean
parse_uint (const gchar * text, guint max, guint * value)
{
  guint64 v;

  if (!g_ascii_string_to_unsigned (text, 10, 0, max, &v, NULL))
    return FALSE;
  *value = (guint) v;
  return TRUE;
}

static gboolean
valid_name (const gchar * name)
{
  const gchar *c;

  if (!g_ascii_isalpha (*name))
    return FALSE;
  for (c = name; *c; c++)
    if (!g_ascii_isalnum (*c) && *c != '_' && *c != '-')
      return FALSE;
  return TRUE;
}

/* Appends a view named @name to @set, refusing a duplicate or a 17th. */
static WsiViewSpec *
add_view (WsiViewSet * set, const gchar * name, const gchar * group,
    GError ** error)
{
  WsiViewSpec *spec;
  guint i;

  if (set->n_views == WSI_VIEWS_MAX) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "\"%s\": more than %d views in all (one GstBuffer memory each)",
        group, WSI_VIEWS_MAX);
    return NULL;
  }
  for (i = 0; i < set->n_views; i++) {
    if (strcmp (set->views[i].name, name) == 0) {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
          "\"%s\": a view named \"%s\" exists already", group, name);
      return NULL;
    }
  }
  spec = &set->views[set->n_views++];
  memset (spec, 0, sizeof (*spec));
  spec->name = g_strdup (name);
  return spec;
}

static gboolean
parse_context (WsiViewSet * set, gchar ** f, guint n, const gchar * group,
    GError ** error)
{
  WsiViewSpec *spec;
  guint size;
  gdouble mpp;
  gsize len;
  gboolean relative;

  if (n != 4 || !parse_uint (f[2], WSI_VIEW_SIZE_MAX, &size)) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "\"%s\": a context view is NAME:context:SIZE:MPP with SIZE 0..%d "
        "(0 = the patch's size) and MPP in um/px or as a factor such as "
        "4x", group, WSI_VIEW_SIZE_MAX);
    return FALSE;
  }
  len = strlen (f[3]);
  relative = len > 1 && (f[3][len - 1] == 'x' || f[3][len - 1] == 'X');
  if (relative)
    f[3][len - 1] = '\0';
  if (!parse_double (f[3], &mpp) || mpp <= 0.0 || mpp > 1e4) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "\"%s\": the context mpp must be a number > 0 and <= 10000 (um/px), "
        "or a factor such as 4x", group);
    return FALSE;
  }
  spec = add_view (set, f[0], group, error);
  if (spec == NULL)
    return FALSE;
  spec->kind = WSI_VIEW_KIND_CONTEXT;
  spec->size = size;
  if (relative)
    spec->mpp_factor = mpp;
  else
    spec->mpp = mpp;
  set->has_context = TRUE;
  return TRUE;
}

static gboolean
parse_crops (WsiViewSet * set, gchar ** f, guint n, const gchar * group,
    GError ** error)
{
  guint count, size, i;
  gdouble smin, smax, rmin = 3.0 / 4.0, rmax = 4.0 / 3.0;

  if ((n != 5 && n != 7) || !parse_uint (f[1], WSI_VIEWS_MAX, &count)
      || count == 0 || !parse_uint (f[2], WSI_VIEW_SIZE_MAX, &size)
      || size == 0 || !parse_double (f[3], &smin)
      || !parse_double (f[4], &smax) || (n == 7 && (!parse_double (f[5],
                  &rmin) || !parse_double (f[6], &rmax)))) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "\"%s\": crops are NAME:COUNT:SIZE:SCALE_MIN:SCALE_MAX"
        "[:RATIO_MIN:RATIO_MAX] with COUNT 1..%d, SIZE 1..%d and numbers "
        "for the ranges (or NAME:patch, or NAME:context:SIZE:MPP)", group,
        WSI_VIEWS_MAX, WSI_VIEW_SIZE_MAX);
    return FALSE;
  }
  if (!(smin > 0.0 && smin <= smax && smax <= 1.0)) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "\"%s\": the scale range must satisfy 0 < SCALE_MIN <= SCALE_MAX "
        "<= 1 (fractions of the patch area)", group);
    return FALSE;
  }
  if (!(rmin > 0.0 && rmin <= rmax && rmax <= 100.0)) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "\"%s\": the aspect ratio range must satisfy 0 < RATIO_MIN <= "
        "RATIO_MAX <= 100 (width / height)", group);
    return FALSE;
  }
  for (i = 0; i < count; i++) {
    gchar *name = g_strdup_printf ("%s_%u", f[0], i);
    WsiViewSpec *spec = add_view (set, name, group, error);

    g_free (name);
    if (spec == NULL)
      return FALSE;
    spec->kind = WSI_VIEW_KIND_CROP;
    spec->size = size;
    spec->scale_min = smin;
    spec->scale_max = smax;
    spec->log_ratio_min = log (rmin);
    spec->log_ratio_max = log (rmax);
  }
  return TRUE;
}

static gboolean
parse_group (WsiViewSet * set, const gchar * group, GError ** error)
{
  gchar **f = g_strsplit (group, ":", -1);
  guint n = g_strv_length (f), i;
  gboolean ok;

  for (i = 0; i < n; i++)
    g_strstrip (f[i]);
  if (n < 2 || !valid_name (f[0])) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "\"%s\": a group starts with a name (a letter, then letters, "
        "digits, _ or -) and a colon", group);
    ok = FALSE;
  } else if (strcmp (f[1], "patch") == 0) {
    ok = n == 2 && add_view (set, f[0], group, error) != NULL;
    if (ok)
      set->views[set->n_views - 1].kind = WSI_VIEW_KIND_PATCH;
    else if (n != 2)
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
          "\"%s\": the patch view takes no other field (NAME:patch)", group);
  } else if (strcmp (f[1], "context") == 0) {
    ok = parse_context (set, f, n, group, error);
  } else {
    ok = parse_crops (set, f, n, group, error);
  }
  g_strfreev (f);
  return ok;
}

WsiViewSet *
wsi_view_set_parse (const gchar * text, GError ** error)
{
  WsiViewSet *set = g_new0 (WsiViewSet, 1);
  gchar **groups = g_strsplit (text ? text : "", ",", -1);
  gchar **g;
  gboolean ok = TRUE;

  for (g = groups; ok && *g; g++) {
    g_strstrip (*g);
    ok = parse_group (set, *g, error);
  }
  g_strfreev (groups);
  if (ok && set->n_views == 0) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "no view given");
    ok = FALSE;
  }
  if (!ok) {
    wsi_view_set_free (set);
    return NULL;
  }
  return set;
}

void
wsi_view_set_free (WsiViewSet * set)
{
  guint i;

  if (set == NULL)
    return;
  for (i = 0; i < set->n_views; i++)
    g_free (set->views[i].name);
  g_free (set);
}

gchar **
wsi_view_set_names (const WsiViewSet * set)
{
  gchar **names = g_new0 (gchar *, set->n_views + 1);
  guint i;

  for (i = 0; i < set->n_views; i++)
    names[i] = g_strdup (set->views[i].name);
  return names;
}

/* torchvision's RandomResizedCrop, with fractional boxes so that the area
 * fraction follows the requested range exactly (no rounding to pixels):
 * up to 10 attempts at a box inside the patch, then a centred box of the
 * closest allowed aspect ratio. */
void
wsi_view_draw_crop (const WsiViewSpec * spec, guint64 seed,
    guint64 sequence, guint view_index, gdouble patch_side, WsiCropBox * box)
{
  gdouble area = patch_side * patch_side;
  gdouble ratio_min = exp (spec->log_ratio_min);
  gdouble ratio_max = exp (spec->log_ratio_max);
  WsiRng rng;
  guint attempt;

  wsi_rng_seed_keys (&rng, seed, sequence, view_index, CROP_RNG_DOMAIN);
  for (attempt = 0; attempt < CROP_ATTEMPTS; attempt++) {
    gdouble target = area * wsi_rng_range (&rng, spec->scale_min,
        spec->scale_max);
    gdouble ratio = exp (wsi_rng_range (&rng, spec->log_ratio_min,
            spec->log_ratio_max));
    gdouble w = sqrt (target * ratio), h = sqrt (target / ratio);

    if (w <= patch_side && h <= patch_side) {
      box->width = w;
      box->height = h;
      box->x = wsi_rng_range (&rng, 0.0, patch_side - w);
      box->y = wsi_rng_range (&rng, 0.0, patch_side - h);
      return;
    }
  }
  /* The patch is square (ratio 1). */
  box->width = box->height = patch_side;
  if (ratio_min > 1.0)
    box->height = patch_side / ratio_min;
  else if (ratio_max < 1.0)
    box->width = patch_side * ratio_max;
  box->x = (patch_side - box->width) / 2.0;
  box->y = (patch_side - box->height) / 2.0;
}
