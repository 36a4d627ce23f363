/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiviewspec.h: what patchviews makes of one location — the view list
 * (parsed from the `views` text or a preset) and the random-resized crop
 * draws. Pure maths, no GStreamer.
 *
 * Contract. A view list is text, groups separated by commas, fields by
 * colons:
 *   NAME:COUNT:SIZE:SCALE_MIN:SCALE_MAX[:RATIO_MIN:RATIO_MAX]
 *       COUNT random-resized crops of the patch, named NAME_0 ..
 *       NAME_{COUNT-1}, SIZE x SIZE pixels out, covering SCALE_MIN..
 *       SCALE_MAX of the patch area (0 < min <= max <= 1), aspect ratio
 *       w/h log-uniform in RATIO_MIN..RATIO_MAX (default 3/4..4/3, as
 *       torchvision's RandomResizedCrop);
 *   NAME:patch
 *       the decoded patch itself, unchanged;
 *   NAME:context:SIZE:MPP
 *       a SIZE x SIZE view re-read from the slide around the patch's
 *       level-0 centre at MPP microns per pixel, or at MPP times the
 *       patch's own mpp when MPP ends in "x" ("4x"); SIZE 0 = the patch's
 *       size.
 * At most WSI_VIEWS_MAX views in all (a GstBuffer holds 16 memories),
 * names unique, SIZE 1..4096.
 *
 * A crop draw is a pure function of (seed, sequence, view index): each
 * view seeds its own wsirng.h generator from those keys, so the draw does
 * not depend on which thread makes it or in which order.
 *
 * Cost: parsing is done once per configuration; a crop draw is a few
 * random numbers (up to 10 attempts when a box falls outside the patch).
 * Threading: a WsiViewSet is immutable once parsed; share it freely.
 */

#ifndef __WSI_VIEW_SPEC_H__
#define __WSI_VIEW_SPEC_H__

#include <glib.h>

G_BEGIN_DECLS

/* A GstBuffer holds at most 16 memories; one per view. */
#define WSI_VIEWS_MAX 16
#define WSI_VIEW_SIZE_MAX 4096

typedef enum
{
  WSI_VIEW_KIND_CROP,           /* random-resized crop of the patch */
  WSI_VIEW_KIND_PATCH,          /* the patch as decoded */
  WSI_VIEW_KIND_CONTEXT,        /* re-read from the slide, same centre */
} WsiViewKind;

typedef struct
{
  WsiViewKind kind;
  gchar *name;                  /* "global_0", "target", ... */
  guint size;                   /* output side in px; 0 = the patch's */
  /* crops */
  gdouble scale_min, scale_max; /* area fraction of the patch */
  gdouble log_ratio_min, log_ratio_max; /* ln (width / height) */
  /* context: exactly one of the two is > 0 */
  gdouble mpp;                  /* microns per output pixel */
  gdouble mpp_factor;           /* times the patch's mpp */
} WsiViewSpec;

typedef struct
{
  guint n_views;
  WsiViewSpec views[WSI_VIEWS_MAX];
  gboolean has_context;         /* some view needs the slide */
} WsiViewSet;

/* Parses @text (see above); NULL with @error saying which group is wrong
 * and why. */
WsiViewSet *wsi_view_set_parse (const gchar * text, GError ** error);
void wsi_view_set_free (WsiViewSet * set);

/* The view names, NULL-terminated (g_strfreev it). */
gchar **wsi_view_set_names (const WsiViewSet * set);

/* A crop box in patch pixels (fractional). */
typedef struct
{
  gdouble x, y, width, height;
} WsiCropBox;

/* Draws the crop of view @view_index (a WSI_VIEW_KIND_CROP) for the patch
 * of stream position @sequence, side @patch_side pixels. */
void wsi_view_draw_crop (const WsiViewSpec * spec, guint64 seed,
    guint64 sequence, guint view_index, gdouble patch_side, WsiCropBox * box);

G_END_DECLS

#endif /* __WSI_VIEW_SPEC_H__ */
