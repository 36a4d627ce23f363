/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiannotation.h: how annotation regions travel from wsislidesrc to
 * patchsampler, and per-patch classes from patchsampler to patchreader
 * (header only, GLib; docs/data-formats.md describes the same layout).
 *
 * Contract: wsislidesrc parses a slide's annotation file (GeoJSON or ASAP
 * XML) into WsiSlideMeta fields:
 *   annotation-file (string, "" when the slide has none),
 *   annotation-classes (GStrv: class names, index = a polygon's class
 *     index; "" for objects without a class),
 *   annotation-regions (GBytes: polygons packed as below, level-0 pixels),
 *   annotation-polygons (uint: polygons kept), annotation-skipped (uint:
 *     shapes dropped as unusable, each named in a warning).
 * A polygon is a WsiRegionHeader, then n_rings rings (the first the
 * outline, the others holes), each a WsiRegionRing then n_points
 * WsiRegionPoint (not closed: the last point is not the first repeated).
 * patchsampler writes, on each coordinate buffer, patch-classes (GBytes:
 * one gint32 per record, the class id in the stream's class list, -1 =
 * none) and class-names (GStrv: the stream's class list, the same for
 * every slide and rank); patchinterleave slices patch-classes with the
 * records it takes.
 *
 * Cost: the walk is a pointer bump per ring; no allocation.
 * Threading: plain data.
 */

#ifndef __WSI_ANNOTATION_H__
#define __WSI_ANNOTATION_H__

#include <glib.h>

G_BEGIN_DECLS

#define WSI_ANNOTATION_FILE_FIELD "annotation-file"
#define WSI_ANNOTATION_CLASSES_FIELD "annotation-classes"
#define WSI_ANNOTATION_REGIONS_FIELD "annotation-regions"
#define WSI_ANNOTATION_POLYGONS_FIELD "annotation-polygons"
#define WSI_ANNOTATION_SKIPPED_FIELD "annotation-skipped"
#define WSI_PATCH_CLASSES_FIELD "patch-classes"
#define WSI_CLASS_NAMES_FIELD "class-names"
#define WSI_CLASS_NONE (-1)

typedef struct
{
  guint32 class_index;          /* into annotation-classes */
  guint32 n_rings;              /* >= 1: outline, then holes */
} WsiRegionHeader;

typedef struct
{
  guint32 n_points;             /* >= 3 */
  guint32 reserved;             /* 0 */
} WsiRegionRing;

typedef struct
{
  gdouble x;                    /* level-0 pixels */
  gdouble y;
} WsiRegionPoint;

G_STATIC_ASSERT (sizeof (WsiRegionHeader) == 8);
G_STATIC_ASSERT (sizeof (WsiRegionRing) == 8);
G_STATIC_ASSERT (sizeof (WsiRegionPoint) == 16);

/* Appends one polygon to @out: @rings[r] has @n_points[r] points. */
static inline void
wsi_region_append (GByteArray * out, guint32 class_index,
    const WsiRegionPoint * const *rings, const guint32 * n_points,
    guint32 n_rings)
{
  WsiRegionHeader header = { class_index, n_rings };
  guint32 r;

  g_byte_array_append (out, (const guint8 *) &header, sizeof (header));
  for (r = 0; r < n_rings; r++) {
    WsiRegionRing ring = { n_points[r], 0 };

    g_byte_array_append (out, (const guint8 *) &ring, sizeof (ring));
    g_byte_array_append (out, (const guint8 *) rings[r],
        n_points[r] * sizeof (WsiRegionPoint));
  }
}

/* Reads the polygon at *@offset of @data (@size bytes): its header and
 * the start of its first ring; advances *@offset past it. FALSE when the
 * bytes end early or a count is impossible (corrupt data). */
static inline gboolean
wsi_region_next (const guint8 * data, gsize size, gsize * offset,
    const WsiRegionHeader ** header, const guint8 ** rings)
{
  gsize at = *offset;
  guint32 r;

  if (size - at < sizeof (WsiRegionHeader) || at > size)
    return FALSE;
  *header = (const WsiRegionHeader *) (data + at);
  at += sizeof (WsiRegionHeader);
  *rings = data + at;
  if ((*header)->n_rings == 0)
    return FALSE;
  for (r = 0; r < (*header)->n_rings; r++) {
    const WsiRegionRing *ring = (const WsiRegionRing *) (data + at);

    if (size - at < sizeof (WsiRegionRing))
      return FALSE;
    at += sizeof (WsiRegionRing);
    if (ring->n_points < 3
        || (size - at) / sizeof (WsiRegionPoint) < ring->n_points)
      return FALSE;
    at += (gsize) ring->n_points * sizeof (WsiRegionPoint);
  }
  *offset = at;
  return TRUE;
}

G_END_DECLS

#endif /* __WSI_ANNOTATION_H__ */
