/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitissuedetect.h: tissue masks of slide overviews (the maths behind the
 * tissuemask element, no GStreamer).
 *
 * Contract: wsi_tissue_detect() reads a tightly packed RGB overview and
 * writes one byte per pixel (0 = background, 255 = tissue) into the
 * caller's memory, following the method and the parameters of a
 * WsiTissueSettings. Every method has its own parameters, so that `combined`
 * (the logical AND of otsu, hsv and clam) runs each with the values it would
 * use alone. HSV is OpenCV's 8-bit HSV (COLOR_RGB2HSV): hue 0-179 (degrees
 * halved), saturation and value 0-255, the scale the Python peer
 * (wsistream, cv2) uses too. wsi_tissue_and() intersects two masks.
 * Kernel sides are multiplied by @kernel_scale first (odd ones kept odd),
 * so that overviews of one slide at other sizes apply the same kernel in
 * micrometres; 1 uses them as given.
 *
 * Cost: one colour conversion (saturation or value alone unless a method
 * needs hue: wsi_tissue_hsv_plane()) and a few whole-image passes (blur,
 * threshold, morphology, connected components) per method, on the overview
 * only (about 1 Mpx at the default 1024 px): milliseconds, once per slide.
 * Each thread keeps its HSV image and one channel plane (4 bytes per
 * overview pixel, for overviews up to 4 Mpx) from one call to the next, so
 * that a stream of new slides does not allocate them again; the other
 * temporaries (blurs, morphology, components) are allocated per call.
 *
 * Threading: no shared state but each thread's own scratch images; any
 * number of calls may run at once on different threads.
 */

#ifndef __WSI_TISSUE_DETECT_H__
#define __WSI_TISSUE_DETECT_H__

#include <glib.h>

G_BEGIN_DECLS

/* The revision of the masks this code makes. tissuemask's disk cache
 * (mask-cache-dir) keys every stored mask by it, so a change that alters
 * any mask (overview reading, colour planes, thresholds, morphology) must
 * raise it, or later runs would reuse masks made by the old code.
 * pipelines_maskstore's test_mask_revision_matches_the_masks records the
 * digest of a set of masks at this revision and fails when they change
 * without it. */
#define WSI_TISSUE_MASK_REVISION 1

/* Same order and values as GstTissueMaskMethod. */
typedef enum
{
  WSI_TISSUE_OTSU,
  WSI_TISSUE_HSV,
  WSI_TISSUE_CLAM,
  WSI_TISSUE_NONE,
  WSI_TISSUE_FLUORESCENCE,
  WSI_TISSUE_COMBINED,
} WsiTissueMethod;

/* What Otsu's threshold is taken on. */
typedef enum
{
  WSI_OTSU_SATURATION,          /* HSV saturation, tissue above (floor 15) */
  WSI_OTSU_GRAY,                /* grey level, tissue below (the peer's) */
} WsiOtsuChannel;

/* Otsu never thresholds saturation below this: on a blank overview Otsu
 * would otherwise split JPEG noise into "tissue" and "glass". */
#define WSI_OTSU_SATURATION_FLOOR 15

typedef struct
{
  WsiTissueMethod method;

  /* otsu */
  WsiOtsuChannel otsu_channel;
  guint otsu_blur_kernel;       /* odd side of a Gaussian blur, 1 = none */
  guint otsu_close_kernel;      /* elliptical closing, 0 = none */
  gdouble otsu_min_area;        /* pieces below this share dropped, 0 = none */

  /* hsv: inclusive ranges; hue_min > hue_max wraps round red (170-10) */
  guint hue_min;
  guint hue_max;
  guint hsv_saturation_min;
  guint value_min;
  guint value_max;

  /* clam */
  guint saturation_threshold;   /* tissue strictly above (CLAM's sthresh) */
  guint median_kernel;          /* odd */
  guint close_kernel;           /* square closing, 0 = none; fluorescence too */
  gdouble min_component_area;   /* shares of the overview area */
  gdouble min_hole_area;

  /* fluorescence */
  guint value_floor;

  /* Every kernel side above is multiplied by this before use (> 0). */
  gdouble kernel_scale;
} WsiTissueSettings;

/* Thresholds the methods chose, for the caller's debug log (-1 = unused). */
typedef struct
{
  gdouble otsu_threshold;
  gdouble fluorescence_threshold;
} WsiTissueReport;

/* Computes the mask of the @width x @height RGB overview @rgb (rows of
 * width * 3 bytes) into @mask (width * height bytes) and returns the
 * tissue fraction (0..1), or -1 with *@error set (g_free it) when OpenCV
 * fails. @report may be NULL. */
gdouble wsi_tissue_detect (const guint8 * rgb, gint width, gint height,
    const WsiTissueSettings * settings, guint8 * mask,
    WsiTissueReport * report, gchar ** error);

/* Channel 1 (saturation) or 2 (value) of OpenCV's 8-bit RGB -> HSV of
 * the @width x @height RGB image @rgb (tight rows) into @out (one byte per
 * pixel): value = max (R, G, B), saturation = 255 (value - min) / value in
 * OpenCV's 12-bit fixed point, the bytes cv::cvtColor (COLOR_RGB2HSV)
 * gives (checked over every colour by libs_wsitissuedetect) at a fraction
 * of its cost: hue is not computed, and 32 pixels at a time go through
 * AVX2 where the CPU has it (picked at run time), else 16 through
 * OpenCV's 128-bit universal intrinsics (same integer arithmetic). */
void wsi_tissue_hsv_plane (const guint8 * rgb, gint width, gint height,
    gint channel, guint8 * out);

/* Which kernel wsi_tissue_hsv_plane_with() runs (the same bytes from
 * each): AUTO picks AVX2 (32 pixels a step) when the CPU has it, else the
 * 128-bit one; the others force one, for tests and benchmarks. */
typedef enum
{
  WSI_TISSUE_KERNEL_AUTO,
  WSI_TISSUE_KERNEL_128,
  WSI_TISSUE_KERNEL_AVX2,
} WsiTissueKernel;

/* TRUE when this build and CPU can run WSI_TISSUE_KERNEL_AVX2. */
gboolean wsi_tissue_have_avx2 (void);

/* wsi_tissue_hsv_plane() through @kernel; FALSE (and nothing written) when
 * AVX2 is asked for and wsi_tissue_have_avx2() is FALSE. */
gboolean wsi_tissue_hsv_plane_with (const guint8 * rgb, gint width,
    gint height, gint channel, guint8 * out, WsiTissueKernel kernel);

/* @dst[i] = @dst[i] AND @other[i] for @n mask bytes; returns the number of
 * tissue bytes left in @dst. */
gsize wsi_tissue_and (guint8 * dst, const guint8 * other, gsize n);

G_END_DECLS

#endif /* __WSI_TISSUE_DETECT_H__ */
