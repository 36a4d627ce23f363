/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistainmeta.h: stain estimates as columns of the slide and patch metas.
 *
 * Contract: stainestimate writes a slide's estimates as columns of its
 * WsiSlideMeta (wsirecord.h's column-names/column-values); patchsampler
 * copies the slide meta onto coordinates, patchreader copies the columns
 * onto each patch, patchbatch gathers them per batch and Python shows them
 * as Batch.columns: so the estimate made once per slide reaches every
 * patch and the user with no new field in any element between. Columns
 * (text, numbers separated by spaces, %.17g so they read back exactly;
 * "" when there is no estimate):
 *   stain-tissue-pixels   pixels the estimate used (Macenko: above beta)
 *   stain-matrix          Macenko: "h_r h_g h_b e_r e_g e_b" (unit OD
 *                         vectors of haematoxylin and eosin)
 *   stain-max-c           Macenko: "max_h max_e" (99th percentiles)
 *   stain-vahadane-matrix Vahadane: as stain-matrix
 *   stain-vahadane-max-c  Vahadane: as stain-max-c
 *   stain-lab-mean        Reinhard: lab means "l alpha beta"
 *   stain-lab-std         Reinhard: lab standard deviations
 * stainnorm adds per patch: stain-source ("slide", "patch", "fallback":
 * the slide's because the patch had too little tissue, or "none": passed
 * unchanged) and stain-used (the source estimate's numbers it applied,
 * the matrix then max-c, or the means then the deviations) and
 * stain-jitter (the augmentation's "alpha_h alpha_e beta_h beta_e", ""
 * when none applied). With randstain-probability (wsirandstain.h):
 * stain-randstain (the drawn target "mean_l mean_a mean_b std_l std_a
 * std_b", "" when not drawn) and stain-randstain-dist (the distribution it
 * was drawn from: six means, six deviations, the slides it counts). On a
 * multi-view buffer stain-jitter and stain-randstain hold a field per view,
 * ';' between them ("" for an undrawn view). stainnorm gathers a
 * location's columns in a WsiStainColumns: wsi_stain_columns_add() once
 * per image (the patch, or each view in order; the first image's source
 * and numbers are the location's, the draws are kept only for an image
 * that was normalised), wsi_stain_columns_write() once, which also frees
 * what was gathered (with a NULL meta: frees only).
 *
 * Cost: a string per column per patch (copied by the elements that copy
 * the meta). Threading: none of its own.
 */

#ifndef __WSI_STAIN_META_H__
#define __WSI_STAIN_META_H__

#include <gst/gst.h>
#include "wsistain.h"
#include "wsirandstain.h"

G_BEGIN_DECLS

#define WSI_STAIN_COL_PIXELS "stain-tissue-pixels"
#define WSI_STAIN_COL_MATRIX "stain-matrix"
#define WSI_STAIN_COL_MAX_C "stain-max-c"
#define WSI_STAIN_COL_VAHADANE_MATRIX "stain-vahadane-matrix"
#define WSI_STAIN_COL_VAHADANE_MAX_C "stain-vahadane-max-c"
#define WSI_STAIN_COL_LAB_MEAN "stain-lab-mean"
#define WSI_STAIN_COL_LAB_STD "stain-lab-std"
#define WSI_STAIN_COL_SOURCE "stain-source"
#define WSI_STAIN_COL_USED "stain-used"
#define WSI_STAIN_COL_JITTER "stain-jitter"
#define WSI_STAIN_COL_RANDSTAIN "stain-randstain"
#define WSI_STAIN_COL_RANDSTAIN_DIST "stain-randstain-dist"

/* Where the estimate stainnorm applied to an image came from: the
 * values of stain-source. */
typedef enum
{
  WSI_STAIN_SOURCE_NONE,        /* passed unchanged */
  WSI_STAIN_SOURCE_SLIDE,
  WSI_STAIN_SOURCE_PATCH,
  WSI_STAIN_SOURCE_FALLBACK,    /* the slide's: too little tissue */
  WSI_STAIN_N_SOURCES
} WsiStainSource;

/* What one location's stainnorm columns say: the first image's source and
 * numbers, and each image's draws (a field per view, ';' between). */
typedef struct
{
  WsiStainSource source;        /* WSI_STAIN_N_SOURCES: no image yet */
  gdouble used[8];
  GString *jitter, *randstain;
  gboolean any_jitter, any_randstain;
} WsiStainColumns;

void wsi_stain_columns_init (WsiStainColumns * cols);
/* One image: @used the numbers of the estimate applied (8 for a matrix, 6
 * for lab statistics), @jitter the "alpha_h alpha_e beta_h beta_e" drawn
 * or NULL, @drawn the RandStainNA target drawn or NULL. */
void wsi_stain_columns_add (WsiStainColumns * cols, WsiStainSource source,
    const gdouble * used, const gdouble * jitter, const WsiStainLab * drawn);
/* Sets stain-source, stain-used (8 numbers with @matrix, else 6) and
 * stain-jitter on @meta, and with @dist (randstain on) stain-randstain and
 * stain-randstain-dist; frees @cols' strings. */
void wsi_stain_columns_write (WsiStainColumns * cols, GstStructure * meta,
    gboolean matrix, const WsiRandStainDist * dist);

/* Sets (or replaces) the columns @names (NULL-terminated) of @s, a slide
 * meta or a one-location patch meta, to @values; other columns stay. */
void wsi_stain_meta_set_columns (GstStructure * s, const gchar * const *names,
    const gchar * const *values);

/* The slide's Macenko (or, with @vahadane, Vahadane) estimate on a
 * one-location patch meta or a slide meta; FALSE when absent or empty. */
gboolean wsi_stain_meta_get_matrix (const GstStructure * s,
    gboolean vahadane, WsiStainMatrix * out);
/* The slide's Reinhard estimate; FALSE when absent or empty. */
gboolean wsi_stain_meta_get_lab (const GstStructure * s, WsiStainLab * out);

G_END_DECLS

#endif /* __WSI_STAIN_META_H__ */
