/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiclassplan.h: patchsampler's annotation policy (GLib only): which
 * classes are sampled and excluded, their stream ids, the class shares
 * of each slide under class-balance, and the plan of one slide visit
 * inside its regions.
 *
 * Contract: a WsiClassPlan is built from the element's annotation
 * properties and never changes (a property change builds a new one). The
 * stream's class ids are the positions in annotation-classes, so every
 * slide and every rank of a job agrees on them without seeing each other's
 * files. Class balance draws each patch's class first: the shares of a
 * slide are the requested shares corrected by what the stream has planned
 * so far (a class the slide lacks is made up on later slides that have
 * it), restricted to the classes present on the slide. The correction
 * depends only on the slides planned before, in stream order, so the
 * stream stays a pure function of (seed, rank, world size, settings).
 *
 * Cost: building the slide's regions is O(polygon points) per visit; see
 * wsiregions.h for the queries. Threading: a WsiClassPlan is immutable and
 * refcounted; WsiClassCounts belongs to the streaming thread.
 */

#ifndef __WSI_CLASS_PLAN_H__
#define __WSI_CLASS_PLAN_H__

#include <glib.h>

#include "wsiregions.h"
#include "wsisampling.h"

G_BEGIN_DECLS

typedef enum
{
  WSI_ANNOTATION_OFF,
  WSI_ANNOTATION_AND_TISSUE,
  WSI_ANNOTATION_REPLACE_TISSUE,
} WsiAnnotationMode;

typedef enum
{
  WSI_CLASS_BALANCE_NONE,
  WSI_CLASS_BALANCE_UNIFORM,
  WSI_CLASS_BALANCE_WEIGHTS,
} WsiClassBalance;

#define WSI_MAX_CLASSES 256

typedef struct
{
  WsiAnnotationMode mode;
  gchar **classes;              /* stream class list: id = index */
  guint n_classes;
  gchar **exclude;
  gdouble min_coverage;
  WsiOverlapRule overlap;
  WsiClassBalance balance;
  gdouble *shares;              /* requested share per class, sum 1 */
  gchar *problem;               /* why the settings cannot be used, or NULL */
} WsiClassPlan;

/* Patches planned per class so far in the stream (for balance). */
typedef struct
{
  guint64 per_class[WSI_MAX_CLASSES];
  guint64 total;
} WsiClassCounts;

WsiClassPlan *wsi_class_plan_new (WsiAnnotationMode mode,
    const gchar * classes, const gchar * exclude, gdouble min_coverage,
    WsiOverlapRule overlap, WsiClassBalance balance, const gchar * weights);
WsiClassPlan *wsi_class_plan_ref (WsiClassPlan * plan);
void wsi_class_plan_unref (WsiClassPlan * plan);

/* The role (stream class id, WSI_REGION_EXCLUDED or WSI_REGION_IGNORED) of
 * each of a file's classes; g_free. */
gint32 *wsi_class_plan_roles (const WsiClassPlan * plan,
    const gchar * const *file_classes, guint * n_roles);

/* This slide's class shares (n_classes entries) from the counts so far,
 * for @n_wanted patches; FALSE when no requested class is on the slide. */
gboolean wsi_class_plan_shares (const WsiClassPlan * plan,
    const WsiClassCounts * counts, const WsiRegions * regions,
    guint n_wanted, gdouble * shares);

/* Plans one slide visit inside @regions (random with replacement: class
 * draws; grid and without replacement: lattice cells the regions accept).
 * @map is the tissue map (an all-tissue map for replace-tissue). Returns
 * the samples (g_free), their number in @n_samples; NULL when none. */
WsiSample *wsi_class_plan_slide (const WsiClassPlan * plan,
    const WsiClassCounts * counts, const WsiRegions * regions,
    const WsiSamplingRequest * req, WsiTissueMap * map, guint * n_samples);

void wsi_class_counts_add (WsiClassCounts * counts, const WsiSample * samples,
    guint n);

G_END_DECLS

#endif /* __WSI_CLASS_PLAN_H__ */
