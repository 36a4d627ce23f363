/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitissueproperties.h: tissuemask's properties as the user sees them —
 * the enumerations `method` and `otsu-channel` and their GTypes, the
 * property ids, defaults and ranges, and the installation with the blurbs
 * (units, ranges, defaults) that gst-inspect-1.0 and the docs show.
 *
 * Contract: wsi_tissue_properties_install() installs every property of
 * tissuemask on its class, once, from class_init: the mask-shaping ones
 * (method, thresholds, kernels, areas, Otsu's and HSV's ranges,
 * kernel-reference-size), min-tissue-fraction, the mask caches'
 * (mask-cache-size, mask-cache-dir) and the read-only counters. Numbers
 * are installed through wsirefusal.h, so a value outside its range is
 * refused and the element then refuses to start. The element keeps the
 * values (its field table, set and get) and sets its instance from the
 * DEFAULT_* values here, so a blurb's default and the element's cannot
 * part. The PROP_ and DEFAULT_ names are the element's: this header is
 * included by gsttissuemask.cpp and this pair only (gsttissuemask.h
 * declares the element type alone).
 *
 * Cost: class_init only; the enumeration types are registered once.
 * Threading: GType class initialisation (thread-safe, once).
 */

#ifndef __WSI_TISSUE_PROPERTIES_H__
#define __WSI_TISSUE_PROPERTIES_H__

#include <gst/gst.h>

#include "wsitissuedetect.h"

G_BEGIN_DECLS

/**
 * GstTissueMaskMethod:
 * @GST_TISSUE_MASK_METHOD_OTSU: Otsu threshold on the HSV saturation channel
 * @GST_TISSUE_MASK_METHOD_HSV: fixed saturation and value thresholds
 * @GST_TISSUE_MASK_METHOD_CLAM: CLAM's segment_tissue (saturation, median
 *   blur, threshold, closing, small components dropped, small holes filled)
 * @GST_TISSUE_MASK_METHOD_NONE: every overview pixel is tissue
 * @GST_TISSUE_MASK_METHOD_FLUORESCENCE: dark-background fluorescence: Otsu
 *   threshold on the HSV value channel (never below value-floor), then
 *   closing
 * @GST_TISSUE_MASK_METHOD_COMBINED: logical AND of otsu, hsv and clam, each
 *   with its own parameters (the peer's CombinedTissueDetector)
 *
 * How tissuemask separates tissue from the background (bright glass for
 * brightfield stains, black for fluorescence).
 */
typedef enum
{
  GST_TISSUE_MASK_METHOD_OTSU,
  GST_TISSUE_MASK_METHOD_HSV,
  GST_TISSUE_MASK_METHOD_CLAM,
  GST_TISSUE_MASK_METHOD_NONE,
  GST_TISSUE_MASK_METHOD_FLUORESCENCE,
  GST_TISSUE_MASK_METHOD_COMBINED,
} GstTissueMaskMethod;

/**
 * GstTissueMaskOtsuChannel:
 * @GST_TISSUE_MASK_OTSU_SATURATION: HSV saturation, tissue above the
 *   threshold (never below 15)
 * @GST_TISSUE_MASK_OTSU_GRAY: grey level, tissue at or below the threshold
 *   (darker than glass), as the Python peer's OtsuTissueDetector
 *
 * The channel method otsu thresholds.
 */
typedef enum
{
  GST_TISSUE_MASK_OTSU_SATURATION,
  GST_TISSUE_MASK_OTSU_GRAY,
} GstTissueMaskOtsuChannel;

#define GST_TYPE_TISSUE_MASK_OTSU_CHANNEL \
  (gst_tissue_mask_otsu_channel_get_type ())
GType gst_tissue_mask_otsu_channel_get_type (void);

#define GST_TYPE_TISSUE_MASK_METHOD (gst_tissue_mask_method_get_type ())
GType gst_tissue_mask_method_get_type (void);

#define DEFAULT_METHOD GST_TISSUE_MASK_METHOD_OTSU
#define DEFAULT_OTSU_CHANNEL WSI_OTSU_SATURATION
#define DEFAULT_OTSU_BLUR_KERNEL 1
#define DEFAULT_OTSU_CLOSE_KERNEL 0
#define DEFAULT_OTSU_MIN_AREA 0.0
#define DEFAULT_HUE_MIN 0
#define DEFAULT_HUE_MAX 180
#define DEFAULT_HSV_SATURATION_MIN -1   /* follow saturation-threshold */
#define DEFAULT_VALUE_MIN 0
#define DEFAULT_SATURATION_THRESHOLD 8  /* CLAM's sthresh */
#define DEFAULT_VALUE_THRESHOLD 245
/* Above the sensor noise of a black fluorescence background (a few grey
 * levels), below the dimmest stain the NDPI samples show. */
#define DEFAULT_VALUE_FLOOR 20
#define DEFAULT_MEDIAN_KERNEL 7 /* CLAM's mthresh */
#define DEFAULT_CLOSE_KERNEL 4  /* CLAM's presets */
#define DEFAULT_MIN_COMPONENT_AREA 0.0005
#define DEFAULT_MIN_HOLE_AREA 0.0002
#define DEFAULT_MIN_TISSUE_FRACTION 0.01
/* Kernels are in pixels of the 1024 px overview (wsislidesrc's default
 * thumbnail-size), so the default overview gets the masks it always had. */
#define DEFAULT_KERNEL_REFERENCE_SIZE 1024
#define MAX_KERNEL_REFERENCE_SIZE 8192
/* Masks are kept run-length coded (a few KB each, at most about 45 KB on
 * the real slides of ../shared/slides at 1024 px), so the cache can hold
 * thousands of slides' masks where 64 raw ones (0.8 MB each at 1024x768)
 * used to: runs over many distinct slides revisit each only after a whole
 * cycle, and a rank of a large collection holds thousands (issue 23). The
 * bytes held are capped as well, whatever the count: that cap, not the
 * count, is the memory bound (8192 synthetic masks of bench-churn take 19
 * MB; the lookup is a hash, so the count costs nothing per visit). */
#define DEFAULT_MASK_CACHE_SIZE 8192
#define MASK_CACHE_MAX_BYTES (32 << 20)
#define MAX_KERNEL 255
#define MAX_HUE 180
#define MAX_MASK_CACHE_SIZE 65536

enum
{
  PROP_0,
  PROP_METHOD,
  PROP_SATURATION_THRESHOLD,
  PROP_VALUE_THRESHOLD,
  PROP_VALUE_FLOOR,
  PROP_MEDIAN_KERNEL,
  PROP_CLOSE_KERNEL,
  PROP_MIN_COMPONENT_AREA,
  PROP_MIN_HOLE_AREA,
  PROP_MIN_TISSUE_FRACTION,
  PROP_MASK_CACHE_SIZE,
  PROP_MASKS_COMPUTED,
  PROP_CACHE_HITS,
  PROP_OTSU_CHANNEL,
  PROP_OTSU_BLUR_KERNEL,
  PROP_OTSU_CLOSE_KERNEL,
  PROP_OTSU_MIN_AREA,
  PROP_HUE_MIN,
  PROP_HUE_MAX,
  PROP_HSV_SATURATION_MIN,
  PROP_VALUE_MIN,
  PROP_KERNEL_REFERENCE_SIZE,
  PROP_MASK_CACHE_DIR,
  PROP_DISK_HITS,
  PROP_MASK_CACHE_BYTES,
};

void wsi_tissue_properties_install (GObjectClass * gobject_class);

G_END_DECLS

#endif /* __WSI_TISSUE_PROPERTIES_H__ */
