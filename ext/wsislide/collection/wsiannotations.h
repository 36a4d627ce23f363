/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiannotations.h: annotation files (QuPath GeoJSON, ASAP XML) read into
 * the packed polygons of wsiannotation.h.
 *
 * Contract: GeoJSON is a FeatureCollection, a bare Feature, an array of
 * Features or a bare Polygon/MultiPolygon geometry; Polygon and
 * MultiPolygon give polygons (first ring the outline, the others holes),
 * other geometry types are not areas and are skipped. A feature's class is
 * properties.classification.name (or classification as a string), else
 * properties.name, else "" (no class). ASAP XML: every Annotation with at
 * least three Coordinate children is a polygon (Rectangle, Polygon and
 * Spline alike, splines by their control points), its class PartOfGroup
 * ("None" and missing = ""); ASAP has no holes. Coordinates are level-0
 * pixels, x right, y down, origin top-left (what QuPath and ASAP export);
 * nothing is rescaled.
 *
 * A shape that cannot be an area is dropped and counted (n_skipped, the
 * first reason in first_problem): fewer than three distinct points, a
 * non-finite coordinate or one beyond 2^31 pixels, an area below half a pixel, edges that cross
 * (checked on rings up to WSI_ANNOTATIONS_MAX_CHECKED_POINTS points), a
 * hole outside its outline's box, or a polygon wholly outside the slide
 * (when the slide size is given). A file that is not well-formed JSON or
 * XML, or of another shape, is refused with a GError naming the file and
 * the problem.
 *
 * Cost: one pass of a bracket-and-string scanner cuts a feature list into
 * its features, and json-glib parses the rest of the document and then
 * each feature alone, so memory is the file plus one feature's tree
 * (json-glib's tree of a whole file is about 20 times the file: 680 MB for
 * 35 MB of GeoJSON); GMarkup streams. Crossing edges are checked in
 * O(n²) per ring up to WSI_ANNOTATIONS_MAX_CHECKED_POINTS points; files
 * over WSI_ANNOTATIONS_MAX_BYTES are refused. json-glib's parsing is the
 * time: about 2 MB/s on the busy build machine (10^5 polygons of 13
 * points, 35 MB: 15-17 s, 60 MB peak).
 * Threading: no shared state.
 */

#ifndef __WSI_ANNOTATIONS_H__
#define __WSI_ANNOTATIONS_H__

#include <glib.h>
#include <gst/wsi/wsiannotation.h>

G_BEGIN_DECLS

#define WSI_ANNOTATIONS_MAX_BYTES ((gsize) 512 << 20)
#define WSI_ANNOTATIONS_MAX_CHECKED_POINTS 4096

typedef enum
{
  WSI_ANNOTATIONS_UNKNOWN,
  WSI_ANNOTATIONS_GEOJSON,
  WSI_ANNOTATIONS_ASAP_XML,
} WsiAnnotationsFormat;

typedef struct
{
  GPtrArray *classes;           /* gchar *, index = class index */
  GByteArray *regions;          /* packed polygons (wsiannotation.h) */
  guint n_polygons;
  guint n_skipped;
  gchar *first_problem;         /* why the first skipped shape was dropped */
} WsiAnnotations;

WsiAnnotationsFormat wsi_annotations_sniff (const gchar * file_name,
    const gchar * contents, gsize length);

/* Parses @contents (@length bytes) of @file_name (named in messages);
 * @slide_width/@slide_height (level-0 pixels, 0 = unknown) drop polygons
 * wholly outside the slide. NULL with @error when the file is malformed. */
WsiAnnotations *wsi_annotations_parse (const gchar * file_name,
    const gchar * contents, gsize length, gdouble slide_width,
    gdouble slide_height, GError ** error);

/* Reads and parses @file_name. */
WsiAnnotations *wsi_annotations_load (const gchar * file_name,
    gdouble slide_width, gdouble slide_height, GError ** error);

void wsi_annotations_free (WsiAnnotations * annotations);

/* The annotation file of the slide @slide_path (g_free), or NULL: @named
 * (a manifest's "annotations" value; relative to @folder when given, else
 * to the slide's folder) when not empty; else STEM.geojson, STEM.json or
 * STEM.xml (STEM = the slide's name without its extension) in @folder when
 * given, else next to the slide. A slide at a URL is looked up only in
 * @folder (or by an absolute @named). */
gchar *wsi_annotations_find (const gchar * slide_path, const gchar * folder,
    const gchar * named);

/* TRUE when @file_name's extension is one annotation files have. */
gboolean wsi_annotations_is_file_name (const gchar * file_name);

G_END_DECLS

#endif /* __WSI_ANNOTATIONS_H__ */
