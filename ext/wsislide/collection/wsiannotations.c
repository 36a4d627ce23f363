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
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "wsiannotations.h"
#include "wsilocalfile.h"

#define MAX_COORDINATE 2147483648.0

/* Rings are cleaned and checked here, then appended to the packed bytes;
 * the class table maps names to indices in order of first appearance. */
typedef struct
{
  const gchar *file;
  gdouble slide_width, slide_height;
  WsiAnnotations *out;
  GHashTable *class_index;      /* name -> index + 1 */
} Builder;

static void
builder_init (Builder * b, const gchar * file, gdouble w, gdouble h)
{
  b->file = file;
  b->slide_width = w;
  b->slide_height = h;
  b->out = g_new0 (WsiAnnotations, 1);
  b->out->classes = g_ptr_array_new_with_free_func (g_free);
  b->out->regions = g_byte_array_new ();
  b->class_index = g_hash_table_new (g_str_hash, g_str_equal);
}

static WsiAnnotations *
builder_finish (Builder * b)
{
  g_hash_table_unref (b->class_index);
  return b->out;
}

static void
builder_abandon (Builder * b)
{
  g_hash_table_unref (b->class_index);
  wsi_annotations_free (b->out);
  b->out = NULL;
}

/* Counts a dropped shape; the first reason is kept for the warning. */
static void
builder_skip (Builder * b, const gchar * what, guint number,
    const gchar * reason)
{
  b->out->n_skipped++;
  if (b->out->first_problem == NULL)
    b->out->first_problem = g_strdup_printf ("%s %u: %s", what, number,
        reason);
}

static guint32
builder_class (Builder * b, const gchar * name)
{
  gpointer found = g_hash_table_lookup (b->class_index, name);
  gchar *copy;

  if (found != NULL)
    return GPOINTER_TO_UINT (found) - 1;
  copy = g_strdup (name);
  g_ptr_array_add (b->out->classes, copy);
  g_hash_table_insert (b->class_index, copy,
      GUINT_TO_POINTER (b->out->classes->len));
  return b->out->classes->len - 1;
}

/* ---- ring checks -------------------------------------------------------- */

static gdouble
ring_signed_area (const WsiRegionPoint * p, guint n)
{
  gdouble twice = 0.0;
  guint i;

  for (i = 0; i < n; i++) {
    const WsiRegionPoint *a = &p[i], *c = &p[(i + 1) % n];

    twice += a->x * c->y - c->x * a->y;
  }
  return twice / 2.0;
}

static gdouble
cross (const WsiRegionPoint * o, const WsiRegionPoint * a,
    const WsiRegionPoint * b)
{
  return (a->x - o->x) * (b->y - o->y) - (a->y - o->y) * (b->x - o->x);
}

/* Proper crossing of segments ab and cd (touching at a point is allowed:
 * QuPath writes rings that touch themselves at a vertex). */
static gboolean
segments_cross (const WsiRegionPoint * a, const WsiRegionPoint * b,
    const WsiRegionPoint * c, const WsiRegionPoint * d)
{
  gdouble d1 = cross (c, d, a), d2 = cross (c, d, b);
  gdouble d3 = cross (a, b, c), d4 = cross (a, b, d);

  return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) &&
      ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0));
}

static gboolean
ring_self_intersects (const WsiRegionPoint * p, guint n)
{
  guint i, j;

  if (n > WSI_ANNOTATIONS_MAX_CHECKED_POINTS)
    return FALSE;
  for (i = 0; i < n; i++)
    for (j = i + 2; j < n; j++) {
      if (i == 0 && j == n - 1)
        continue;               /* adjacent through the closing edge */
      if (segments_cross (&p[i], &p[(i + 1) % n], &p[j], &p[(j + 1) % n]))
        return TRUE;
    }
  return FALSE;
}

/* Removes the closing point and repeated points in place; returns the
 * reason the ring cannot be an area, or NULL. */
static const gchar *
ring_clean (GArray * ring)
{
  WsiRegionPoint *p = (WsiRegionPoint *) ring->data;
  guint i, n = 0;

  for (i = 0; i < ring->len; i++) {
    if (!isfinite (p[i].x) || !isfinite (p[i].y))
      return "a coordinate is not a finite number";
    /* No slide is 2^31 pixels wide: such a number is a broken file (and
     * would overflow the areas and boxes computed from it). */
    if (fabs (p[i].x) > MAX_COORDINATE || fabs (p[i].y) > MAX_COORDINATE)
      return "a coordinate is beyond 2^31 pixels";
    if (n > 0 && p[i].x == p[n - 1].x && p[i].y == p[n - 1].y)
      continue;
    p[n++] = p[i];
  }
  while (n > 1 && p[n - 1].x == p[0].x && p[n - 1].y == p[0].y)
    n--;
  g_array_set_size (ring, n);
  if (n < 3)
    return "fewer than three distinct points (degenerate)";
  if (fabs (ring_signed_area (p, n)) < 0.5)
    return "its area is below half a pixel (degenerate)";
  if (ring_self_intersects (p, n))
    return "its edges cross (self-intersecting)";
  return NULL;
}

static void
ring_box (const GArray * ring, gdouble box[4])
{
  const WsiRegionPoint *p = (const WsiRegionPoint *) ring->data;
  guint i;

  box[0] = box[2] = p[0].x;
  box[1] = box[3] = p[0].y;
  for (i = 1; i < ring->len; i++) {
    box[0] = MIN (box[0], p[i].x);
    box[1] = MIN (box[1], p[i].y);
    box[2] = MAX (box[2], p[i].x);
    box[3] = MAX (box[3], p[i].y);
  }
}

/* Checks and appends one polygon (@rings: GArray of WsiRegionPoint, the
 * outline first). @what/@number name it in messages. */
static void
builder_add_polygon (Builder * b, const gchar * class_name, GPtrArray * rings,
    const gchar * what, guint number)
{
  const WsiRegionPoint **points;
  guint32 *counts;
  gdouble outer[4];
  guint r;

  for (r = 0; r < rings->len; r++) {
    const gchar *problem = ring_clean (g_ptr_array_index (rings, r));

    if (problem != NULL) {
      gchar *reason = r == 0 ? g_strdup (problem) :
          g_strdup_printf ("hole %u: %s", r, problem);

      builder_skip (b, what, number, reason);
      g_free (reason);
      return;
    }
  }
  ring_box (g_ptr_array_index (rings, 0), outer);
  for (r = 1; r < rings->len; r++) {
    gdouble hole[4];

    ring_box (g_ptr_array_index (rings, r), hole);
    if (hole[0] < outer[0] || hole[1] < outer[1] || hole[2] > outer[2]
        || hole[3] > outer[3]) {
      builder_skip (b, what, number, "a hole lies outside its outline");
      return;
    }
  }
  if (b->slide_width > 0 && b->slide_height > 0 && (outer[2] <= 0
          || outer[3] <= 0 || outer[0] >= b->slide_width
          || outer[1] >= b->slide_height)) {
    builder_skip (b, what, number, "it lies wholly outside the slide");
    return;
  }

  points = g_new (const WsiRegionPoint *, rings->len);
  counts = g_new (guint32, rings->len);
  for (r = 0; r < rings->len; r++) {
    GArray *ring = g_ptr_array_index (rings, r);

    points[r] = (const WsiRegionPoint *) ring->data;
    counts[r] = ring->len;
  }
  wsi_region_append (b->out->regions, builder_class (b, class_name), points,
      counts, rings->len);
  b->out->n_polygons++;
  g_free (points);
  g_free (counts);
}

/* ---- GeoJSON ------------------------------------------------------------ */

static GPtrArray *
rings_new (void)
{
  return g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
}

static gboolean
json_is_number (JsonNode * node)
{
  GType type = JSON_NODE_HOLDS_VALUE (node) ?
      json_node_get_value_type (node) : G_TYPE_INVALID;

  return type == G_TYPE_DOUBLE || type == G_TYPE_INT64;
}

/* [[x, y], ...] into a new GArray, or NULL when a point is not two
 * numbers. */
static GArray *
json_ring (JsonNode * node)
{
  JsonArray *array;
  GArray *ring;
  guint i, n;

  if (!JSON_NODE_HOLDS_ARRAY (node))
    return NULL;
  array = json_node_get_array (node);
  n = json_array_get_length (array);
  ring = g_array_sized_new (FALSE, FALSE, sizeof (WsiRegionPoint), n);
  for (i = 0; i < n; i++) {
    JsonNode *pn = json_array_get_element (array, i);
    JsonArray *pa;
    WsiRegionPoint p;

    if (!JSON_NODE_HOLDS_ARRAY (pn))
      goto bad;
    pa = json_node_get_array (pn);
    if (json_array_get_length (pa) < 2
        || !json_is_number (json_array_get_element (pa, 0))
        || !json_is_number (json_array_get_element (pa, 1)))
      goto bad;
    p.x = json_array_get_double_element (pa, 0);
    p.y = json_array_get_double_element (pa, 1);
    g_array_append_val (ring, p);
  }
  return ring;

bad:
  g_array_unref (ring);
  return NULL;
}

/* One Polygon's coordinates ([ring][point][2]). */
static void
json_add_polygon (Builder * b, JsonNode * coordinates, const gchar * cls,
    guint number)
{
  GPtrArray *rings = rings_new ();
  JsonArray *array;
  guint i;

  if (coordinates == NULL || !JSON_NODE_HOLDS_ARRAY (coordinates)
      || json_array_get_length (json_node_get_array (coordinates)) == 0) {
    builder_skip (b, "feature", number, "a Polygon without rings");
    g_ptr_array_unref (rings);
    return;
  }
  array = json_node_get_array (coordinates);
  for (i = 0; i < json_array_get_length (array); i++) {
    GArray *ring = json_ring (json_array_get_element (array, i));

    if (ring == NULL) {
      builder_skip (b, "feature", number,
          "a point is not a pair of numbers");
      g_ptr_array_unref (rings);
      return;
    }
    g_ptr_array_add (rings, ring);
  }
  builder_add_polygon (b, cls, rings, "feature", number);
  g_ptr_array_unref (rings);
}

static const gchar *
json_member_string (JsonObject * object, const gchar * name)
{
  JsonNode *node;

  if (object == NULL || !json_object_has_member (object, name))
    return NULL;
  node = json_object_get_member (object, name);
  if (json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

/* QuPath: properties.classification.name (older exports: a string), else
 * properties.name, else no class. */
static const gchar *
json_feature_class (JsonObject * feature)
{
  JsonObject *properties = NULL;
  JsonNode *node;
  const gchar *name;

  if (json_object_has_member (feature, "properties")) {
    node = json_object_get_member (feature, "properties");
    if (JSON_NODE_HOLDS_OBJECT (node))
      properties = json_node_get_object (node);
  }
  if (properties == NULL)
    return "";
  if (json_object_has_member (properties, "classification")) {
    node = json_object_get_member (properties, "classification");
    if (JSON_NODE_HOLDS_OBJECT (node)
        && (name = json_member_string (json_node_get_object (node), "name")))
      return name;
    if ((name = json_member_string (properties, "classification")))
      return name;
  }
  name = json_member_string (properties, "name");
  return name ? name : "";
}

static void
json_add_geometry (Builder * b, JsonObject * geometry, const gchar * cls,
    guint number)
{
  const gchar *type = json_member_string (geometry, "type");
  JsonNode *coordinates = json_object_has_member (geometry, "coordinates") ?
      json_object_get_member (geometry, "coordinates") : NULL;

  if (g_strcmp0 (type, "Polygon") == 0) {
    json_add_polygon (b, coordinates, cls, number);
  } else if (g_strcmp0 (type, "MultiPolygon") == 0) {
    JsonArray *parts;
    guint i;

    if (coordinates == NULL || !JSON_NODE_HOLDS_ARRAY (coordinates)) {
      builder_skip (b, "feature", number, "a MultiPolygon without polygons");
      return;
    }
    parts = json_node_get_array (coordinates);
    for (i = 0; i < json_array_get_length (parts); i++)
      json_add_polygon (b, json_array_get_element (parts, i), cls, number);
  } else {
    gchar *reason = g_strdup_printf ("geometry type %s is not an area",
        type ? type : "(none)");

    builder_skip (b, "feature", number, reason);
    g_free (reason);
  }
}

static void
json_add_feature (Builder * b, JsonNode * node, guint number)
{
  JsonObject *feature;
  JsonNode *geometry;

  if (!JSON_NODE_HOLDS_OBJECT (node)) {
    builder_skip (b, "feature", number, "not a JSON object");
    return;
  }
  feature = json_node_get_object (node);
  if (g_strcmp0 (json_member_string (feature, "type"), "Feature") != 0) {
    /* A bare geometry: no class. */
    json_add_geometry (b, feature, "", number);
    return;
  }
  geometry = json_object_has_member (feature, "geometry") ?
      json_object_get_member (feature, "geometry") : NULL;
  if (geometry == NULL || !JSON_NODE_HOLDS_OBJECT (geometry)) {
    builder_skip (b, "feature", number, "no geometry");
    return;
  }
  json_add_geometry (b, json_node_get_object (geometry),
      json_feature_class (feature), number);
}

static gboolean
json_add_features (Builder * b, JsonArray * features)
{
  guint i;

  for (i = 0; i < json_array_get_length (features); i++)
    json_add_feature (b, json_array_get_element (features, i), i + 1);
  return TRUE;
}

/* The whole document as one json-glib tree (a bare Feature or geometry,
 * the skeleton of a split list, or any file the splitter cannot split:
 * then json-glib names the error). */
static gboolean
parse_geojson_whole (Builder * b, const gchar * contents, gsize length,
    GError ** error)
{
  /* A mutable parser: json-glib 1.10 (Debian 13) aborts in
   * json_parser_get_root() on an immutable parser for some inputs (an
   * assertion that the root is sealed; found by the geojson fuzz target,
   * seed crash-jsonglib-immutable-root-assert). Nothing here needs sealed
   * nodes. */
  JsonParser *parser = json_parser_new ();
  GError *json_error = NULL;
  JsonNode *root;
  gboolean ok = TRUE;

  if (!json_parser_load_from_data (parser, contents, (gssize) length,
          &json_error)) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
        "%s: not valid JSON: %s", b->file, json_error->message);
    g_error_free (json_error);
    g_object_unref (parser);
    return FALSE;
  }
  root = json_parser_get_root (parser);
  if (root != NULL && JSON_NODE_HOLDS_ARRAY (root)) {
    json_add_features (b, json_node_get_array (root));
  } else if (root != NULL && JSON_NODE_HOLDS_OBJECT (root)) {
    JsonObject *object = json_node_get_object (root);
    const gchar *type = json_member_string (object, "type");

    if (g_strcmp0 (type, "FeatureCollection") == 0) {
      JsonNode *features = json_object_has_member (object, "features") ?
          json_object_get_member (object, "features") : NULL;

      if (features == NULL || !JSON_NODE_HOLDS_ARRAY (features)) {
        g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
            "%s: a FeatureCollection without a \"features\" array", b->file);
        ok = FALSE;
      } else {
        json_add_features (b, json_node_get_array (features));
      }
    } else if (g_strcmp0 (type, "Feature") == 0
        || g_strcmp0 (type, "Polygon") == 0
        || g_strcmp0 (type, "MultiPolygon") == 0) {
      json_add_feature (b, root, 1);
    } else {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
          "%s: GeoJSON of type \"%s\"; expected a FeatureCollection, a "
          "Feature, a Polygon, a MultiPolygon or an array of features",
          b->file, type ? type : "(none)");
      ok = FALSE;
    }
  } else {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
        "%s: the JSON is neither an object nor an array of features",
        b->file);
    ok = FALSE;
  }
  g_object_unref (parser);
  return ok;
}

/* ---- GeoJSON: one feature at a time ------------------------------------ */

/* json-glib builds a tree of the whole document: about 20 times the file
 * in memory (680 MB for 10^5 polygons of 13 points, 35 MB of GeoJSON) and
 * slower as it grows. The feature list is therefore cut into its elements
 * by a scanner that only follows strings and brackets, and json-glib
 * parses the document without the list (its "skeleton", checked as
 * before) and then each feature alone: memory bounded by one feature. */
typedef struct
{
  gsize open, close;            /* the list's '[' and ']' */
  GArray *starts, *ends;        /* each element: [start, end) */
} FeatureSpans;

static void
spans_push (FeatureSpans * spans, gsize * start, gsize end)
{
  if (*start == G_MAXSIZE)
    return;
  g_array_append_val (spans->starts, *start);
  g_array_append_val (spans->ends, end);
  *start = G_MAXSIZE;
}

/* Finds the feature list of a top-level array or of the "features" member
 * of a top-level object. FALSE when there is none, or when strings or
 * brackets do not balance (json-glib then reports the file as a whole). */
static gboolean
find_feature_spans (const gchar * s, gsize n, FeatureSpans * spans)
{
  gint depth = 0, list_depth = -1;
  gboolean in_string = FALSE, escaped = FALSE, root_object = FALSE;
  gboolean expect_value = FALSE, key_is_features = FALSE, closed = FALSE;
  gsize key_start = 0, element = G_MAXSIZE, i;

  for (i = 0; i < n; i++) {
    gchar c = s[i];
    gboolean at_list = list_depth > 0 && depth == list_depth && !closed;

    if (in_string) {
      if (escaped)
        escaped = FALSE;
      else if (c == '\\')
        escaped = TRUE;
      else if (c == '"') {
        in_string = FALSE;
        if (depth == 1 && root_object && !expect_value)
          key_is_features = i - key_start == 8
              && memcmp (s + key_start, "features", 8) == 0;
      }
      continue;
    }
    if (at_list && element == G_MAXSIZE && !g_ascii_isspace (c) && c != ','
        && c != ']')
      element = i;
    switch (c) {
      case '"':
        in_string = TRUE;
        key_start = i + 1;
        break;
      case ':':
        if (depth == 1 && root_object)
          expect_value = TRUE;
        break;
      case ',':
        if (depth == 1 && root_object)
          expect_value = FALSE;
        if (at_list)
          spans_push (spans, &element, i);
        break;
      case '[':
      case '{':
        if (depth == 0) {
          root_object = c == '{';
          if (c == '[') {
            list_depth = 1;
            spans->open = i;
          }
        } else if (depth == 1 && root_object && c == '[' && expect_value
            && key_is_features && list_depth < 0) {
          list_depth = 2;
          spans->open = i;
        }
        depth++;
        break;
      case ']':
      case '}':
        if (at_list && c == ']') {
          spans_push (spans, &element, i);
          spans->close = i;
          closed = TRUE;
        }
        if (--depth < 0)
          return FALSE;
        break;
      default:
        break;
    }
  }
  return !in_string && depth == 0 && closed;
}

static gboolean
parse_geojson (Builder * b, const gchar * contents, gsize length,
    GError ** error)
{
  FeatureSpans spans = { 0, 0, NULL, NULL };
  JsonParser *parser;
  GString *skeleton;
  gboolean ok;
  guint k;

  spans.starts = g_array_new (FALSE, FALSE, sizeof (gsize));
  spans.ends = g_array_new (FALSE, FALSE, sizeof (gsize));
  if (!find_feature_spans (contents, length, &spans)) {
    ok = parse_geojson_whole (b, contents, length, error);
    goto done;
  }
  /* The document with an empty list: its type and other members. */
  skeleton = g_string_new_len (contents, spans.open + 1);
  g_string_append_len (skeleton, contents + spans.close,
      length - spans.close);
  ok = parse_geojson_whole (b, skeleton->str, skeleton->len, error);
  g_string_free (skeleton, TRUE);
  parser = json_parser_new ();
  for (k = 0; ok && k < spans.starts->len; k++) {
    gsize start = g_array_index (spans.starts, gsize, k);
    gsize end = g_array_index (spans.ends, gsize, k);
    GError *json_error = NULL;

    if (!json_parser_load_from_data (parser, contents + start,
            (gssize) (end - start), &json_error)) {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
          "%s: not valid JSON: feature %u: %s", b->file, k + 1,
          json_error->message);
      g_error_free (json_error);
      ok = FALSE;
      break;
    }
    json_add_feature (b, json_parser_get_root (parser), k + 1);
  }
  g_object_unref (parser);
done:
  g_array_unref (spans.starts);
  g_array_unref (spans.ends);
  return ok;
}

/* ---- ASAP XML ----------------------------------------------------------- */

typedef struct
{
  Builder *b;
  gboolean in_annotation;
  guint number;                 /* Annotation elements seen */
  gchar *group;
  GArray *points;
  gboolean bad_point;
} AsapState;

static const gchar *
asap_attribute (const gchar ** names, const gchar ** values,
    const gchar * name)
{
  guint i;

  for (i = 0; names[i] != NULL; i++)
    if (g_ascii_strcasecmp (names[i], name) == 0)
      return values[i];
  return NULL;
}

static gboolean
asap_number (const gchar * text, gdouble * value)
{
  gchar *end = NULL;

  if (text == NULL)
    return FALSE;
  /* ASAP writes some coordinates with a decimal comma. */
  if (strchr (text, ',') != NULL && strchr (text, '.') == NULL) {
    gchar *copy = g_strdup (text);
    gboolean ok;

    g_strdelimit (copy, ",", '.');
    ok = asap_number (copy, value);
    g_free (copy);
    return ok;
  }
  *value = g_ascii_strtod (text, &end);
  return end != text && *end == '\0';
}

static void
asap_start (GMarkupParseContext * context, const gchar * element,
    const gchar ** names, const gchar ** values, gpointer user_data,
    GError ** error)
{
  AsapState *s = user_data;

  if (g_strcmp0 (element, "Annotation") == 0) {
    const gchar *group = asap_attribute (names, values, "PartOfGroup");

    s->in_annotation = TRUE;
    s->number++;
    g_free (s->group);
    s->group = g_strdup (group == NULL || g_strcmp0 (group, "None") == 0 ?
        "" : group);
    g_array_set_size (s->points, 0);
    s->bad_point = FALSE;
  } else if (g_strcmp0 (element, "Coordinate") == 0 && s->in_annotation) {
    WsiRegionPoint p;

    if (!asap_number (asap_attribute (names, values, "X"), &p.x)
        || !asap_number (asap_attribute (names, values, "Y"), &p.y))
      s->bad_point = TRUE;
    else
      g_array_append_val (s->points, p);
  }
}

static void
asap_end (GMarkupParseContext * context, const gchar * element,
    gpointer user_data, GError ** error)
{
  AsapState *s = user_data;
  GPtrArray *rings;

  if (g_strcmp0 (element, "Annotation") != 0 || !s->in_annotation)
    return;
  s->in_annotation = FALSE;
  if (s->bad_point) {
    builder_skip (s->b, "Annotation", s->number,
        "a Coordinate without numeric X and Y");
    return;
  }
  rings = rings_new ();
  g_ptr_array_add (rings, g_array_copy (s->points));
  builder_add_polygon (s->b, s->group, rings, "Annotation", s->number);
  g_ptr_array_unref (rings);
}

static gboolean
parse_asap (Builder * b, const gchar * contents, gsize length,
    GError ** error)
{
  static const GMarkupParser parser = { asap_start, asap_end, NULL, NULL,
    NULL
  };
  AsapState state = { b, FALSE, 0, NULL, NULL, FALSE };
  GMarkupParseContext *context;
  GError *xml_error = NULL;
  gboolean ok;

  state.points = g_array_new (FALSE, FALSE, sizeof (WsiRegionPoint));
  context = g_markup_parse_context_new (&parser, 0, &state, NULL);
  ok = g_markup_parse_context_parse (context, contents, (gssize) length,
      &xml_error) && g_markup_parse_context_end_parse (context, &xml_error);
  if (!ok) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
        "%s: not well-formed XML: %s", b->file, xml_error->message);
    g_error_free (xml_error);
  } else if (state.number == 0) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
        "%s: no ASAP Annotation element", b->file);
    ok = FALSE;
  }
  g_markup_parse_context_free (context);
  g_array_unref (state.points);
  g_free (state.group);
  return ok;
}

/* ---- entry points ------------------------------------------------------- */

/* By extension (.geojson, .json, .xml), else by the first non-blank
 * character ('<' XML, '{' or '[' JSON). */
WsiAnnotationsFormat
wsi_annotations_sniff (const gchar * file_name, const gchar * contents,
    gsize length)
{
  gchar *lower = g_ascii_strdown (file_name ? file_name : "", -1);
  WsiAnnotationsFormat format = WSI_ANNOTATIONS_UNKNOWN;
  gsize i;

  if (g_str_has_suffix (lower, ".geojson") || g_str_has_suffix (lower,
          ".json"))
    format = WSI_ANNOTATIONS_GEOJSON;
  else if (g_str_has_suffix (lower, ".xml"))
    format = WSI_ANNOTATIONS_ASAP_XML;
  g_free (lower);
  if (format != WSI_ANNOTATIONS_UNKNOWN)
    return format;
  for (i = 0; i < length && g_ascii_isspace (contents[i]); i++);
  if (i < length && contents[i] == '<')
    return WSI_ANNOTATIONS_ASAP_XML;
  if (i < length && (contents[i] == '{' || contents[i] == '['))
    return WSI_ANNOTATIONS_GEOJSON;
  return WSI_ANNOTATIONS_UNKNOWN;
}

WsiAnnotations *
wsi_annotations_parse (const gchar * file_name, const gchar * contents,
    gsize length, gdouble slide_width, gdouble slide_height, GError ** error)
{
  WsiAnnotationsFormat format = wsi_annotations_sniff (file_name, contents,
      length);
  Builder b;
  gboolean ok;

  if (format == WSI_ANNOTATIONS_UNKNOWN) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
        "%s: neither GeoJSON nor ASAP XML", file_name);
    return NULL;
  }
  builder_init (&b, file_name, slide_width, slide_height);
  if (format == WSI_ANNOTATIONS_GEOJSON)
    ok = parse_geojson (&b, contents, length, error);
  else
    ok = parse_asap (&b, contents, length, error);
  if (!ok) {
    builder_abandon (&b);
    return NULL;
  }
  return builder_finish (&b);
}

WsiAnnotations *
wsi_annotations_load (const gchar * file_name, gdouble slide_width,
    gdouble slide_height, GError ** error)
{
  WsiAnnotations *annotations;
  gchar *contents = NULL;
  gsize length = 0;
  GStatBuf st;

  if (g_stat (file_name, &st) == 0 && (guint64) st.st_size >
      (guint64) WSI_ANNOTATIONS_MAX_BYTES) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
        "%s: %" G_GUINT64_FORMAT " bytes, more than the %" G_GSIZE_FORMAT
        " MiB an annotation file may have", file_name,
        (guint64) st.st_size, WSI_ANNOTATIONS_MAX_BYTES >> 20);
    return NULL;
  }
  if (!wsi_local_file_read (file_name, WSI_ANNOTATIONS_MAX_BYTES, &contents,
          &length, error))
    return NULL;
  annotations = wsi_annotations_parse (file_name, contents, length,
      slide_width, slide_height, error);
  g_free (contents);
  return annotations;
}

void
wsi_annotations_free (WsiAnnotations * annotations)
{
  if (annotations == NULL)
    return;
  g_ptr_array_unref (annotations->classes);
  g_byte_array_unref (annotations->regions);
  g_free (annotations->first_problem);
  g_free (annotations);
}

/* ---- finding a slide's file --------------------------------------------- */

static const gchar *const extensions[] = { ".geojson", ".json", ".xml" };

gboolean
wsi_annotations_is_file_name (const gchar * file_name)
{
  gchar *lower = g_ascii_strdown (file_name, -1);
  gboolean found = FALSE;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (extensions); i++)
    found |= g_str_has_suffix (lower, extensions[i]);
  g_free (lower);
  return found;
}

gchar *
wsi_annotations_find (const gchar * slide_path, const gchar * folder,
    const gchar * named)
{
  /* A slide at a URL has no folder of ours: its file is in @folder or
   * named absolutely (and the URL, which may hold credentials, never ends
   * up in a file name shown in a message). */
  gboolean remote = strstr (slide_path, "://") != NULL;
  gchar *slide_dir = remote ? NULL : g_path_get_dirname (slide_path);
  const gchar *dir = folder && *folder ? folder : slide_dir;
  gchar *base, *dot, *found = NULL;
  guint i;

  if (dir == NULL && !(named && g_path_is_absolute (named)))
    return NULL;
  if (named != NULL && *named != '\0') {
    found = g_path_is_absolute (named) ? g_strdup (named) :
        g_build_filename (dir, named, NULL);
    g_free (slide_dir);
    return found;
  }
  base = g_path_get_basename (slide_path);
  if (remote && strchr (base, '?') != NULL)
    *strchr (base, '?') = '\0';
  dot = strrchr (base, '.');
  if (dot != NULL && dot != base)
    *dot = '\0';
  for (i = 0; i < G_N_ELEMENTS (extensions) && found == NULL; i++) {
    gchar *name = g_strconcat (base, extensions[i], NULL);
    gchar *candidate = g_build_filename (dir, name, NULL);

    /* any file of that name, not only a regular one: a FIFO, a folder or
     * an unreadable file named like the slide's annotations is then
     * refused by the load with its reason, not taken for no file */
    if (g_file_test (candidate, G_FILE_TEST_EXISTS))
      found = candidate;
    else
      g_free (candidate);
    g_free (name);
  }
  g_free (base);
  g_free (slide_dir);
  return found;
}
