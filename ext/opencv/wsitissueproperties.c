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

#include "wsitissueproperties.h"

#include <gst/wsi/wsienumtype.h>
#include <gst/wsi/wsirefusal.h>

GType
gst_tissue_mask_method_get_type (void)
{
  static gsize type_id = 0;
  static const GEnumValue values[] = {
    {GST_TISSUE_MASK_METHOD_OTSU,
        "Otsu threshold on HSV saturation (H&E default)", "otsu"},
    {GST_TISSUE_MASK_METHOD_HSV,
          "Saturation >= saturation-threshold and value <= value-threshold",
        "hsv"},
    {GST_TISSUE_MASK_METHOD_CLAM,
          "CLAM segment_tissue: saturation, median blur, threshold, closing, "
          "small pieces dropped, small holes filled", "clam"},
    {GST_TISSUE_MASK_METHOD_NONE, "No detection: everything is tissue",
        "none"},
    {GST_TISSUE_MASK_METHOD_FLUORESCENCE,
          "Dark-background fluorescence: brighter than Otsu on HSV value "
          "(at least value-floor), then closing (close-kernel)",
        "fluorescence"},
    {GST_TISSUE_MASK_METHOD_COMBINED,
          "Logical AND of otsu, hsv and clam, each with its own parameters",
        "combined"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type_id, "GstTissueMaskMethod", values);
}

GType
gst_tissue_mask_otsu_channel_get_type (void)
{
  static gsize type_id = 0;
  static const GEnumValue values[] = {
    {GST_TISSUE_MASK_OTSU_SATURATION,
        "HSV saturation, tissue above the threshold (floor 15)", "saturation"},
    {GST_TISSUE_MASK_OTSU_GRAY,
        "Grey level, tissue at or below the threshold (the peer's)", "gray"},
    {0, NULL, NULL}
  };

  return wsi_enum_type_once (&type_id, "GstTissueMaskOtsuChannel", values);
}

static void
install_properties (GObjectClass * gobject_class)
{
  const GParamFlags rw = (GParamFlags) (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  const GParamFlags ro = (GParamFlags) (G_PARAM_READABLE |
      G_PARAM_STATIC_STRINGS);

  g_object_class_install_property (gobject_class, PROP_METHOD,
      g_param_spec_enum ("method", "Method",
          "How tissue is told from the background: otsu (Otsu on HSV "
          "saturation, floor 15, or on grey: otsu-*), hsv (HSV ranges: "
          "hue-min/max, hsv-saturation-min, value-min/value-threshold), clam "
          "(CLAM segment_tissue), fluorescence (dark background: Otsu on HSV "
          "value, floor value-floor, then closing), combined (AND of otsu, "
          "hsv and clam, each with its own properties) or none (all "
          "tissue). Default: otsu",
          GST_TYPE_TISSUE_MASK_METHOD, DEFAULT_METHOD, rw));
  g_object_class_install_property (gobject_class, PROP_SATURATION_THRESHOLD,
      wsi_param_spec_uint ("saturation-threshold", "Saturation threshold",
          "HSV saturation (0-255) above which a pixel is tissue for method "
          "clam (CLAM's sthresh), and at or above which it can be for hsv "
          "unless hsv-saturation-min is set. Range 0-255, default 8",
          0, 255, DEFAULT_SATURATION_THRESHOLD, rw));
  g_object_class_install_property (gobject_class, PROP_VALUE_THRESHOLD,
      wsi_param_spec_uint ("value-threshold", "Value threshold",
          "HSV value (brightness, 0-255) at or below which a pixel can be "
          "tissue, for methods hsv and combined (brighter pixels are glass). "
          "Range 0-255, default 245 (255 = no upper bound, as the peer)",
          0, 255, DEFAULT_VALUE_THRESHOLD, rw));
  g_object_class_install_property (gobject_class, PROP_VALUE_FLOOR,
      wsi_param_spec_uint ("value-floor", "Value floor",
          "Lowest threshold on HSV value (brightness, 0-255) for method "
          "fluorescence: tissue is brighter than Otsu's threshold or this, "
          "whichever is higher, so sensor noise on a blank dark overview is "
          "not tissue. Range 0-255, default 20",
          0, 255, DEFAULT_VALUE_FLOOR, rw));
  g_object_class_install_property (gobject_class, PROP_MEDIAN_KERNEL,
      wsi_param_spec_uint ("median-kernel", "Median kernel",
          "Side of the median blur applied to the saturation, for method "
          "clam (CLAM's mthresh), in pixels of the kernel-reference-size "
          "overview (scaled to the overview's size, kept odd). Odd, range "
          "1-255 (1 = no blur), default 7",
          1, MAX_KERNEL, DEFAULT_MEDIAN_KERNEL, rw));
  g_object_class_install_property (gobject_class, PROP_CLOSE_KERNEL,
      wsi_param_spec_uint ("close-kernel", "Close kernel",
          "Side of the square morphological closing, for methods clam "
          "(CLAM's close) and fluorescence (joins clusters of nuclei), in "
          "pixels of the kernel-reference-size overview (scaled to the "
          "overview's size). Range 0-255 (0 = no closing), default 4",
          0, MAX_KERNEL, DEFAULT_CLOSE_KERNEL, rw));
  g_object_class_install_property (gobject_class, PROP_MIN_COMPONENT_AREA,
      wsi_param_spec_double ("min-component-area", "Minimum component area",
          "Tissue pieces smaller than this fraction of the overview area are "
          "dropped, for method clam. Range 0-1, default 0.0005",
          0.0, 1.0, DEFAULT_MIN_COMPONENT_AREA, rw));
  g_object_class_install_property (gobject_class, PROP_MIN_HOLE_AREA,
      wsi_param_spec_double ("min-hole-area", "Minimum hole area",
          "Holes in the tissue smaller than this fraction of the overview "
          "area are filled, for method clam. Range 0-1, default 0.0002",
          0.0, 1.0, DEFAULT_MIN_HOLE_AREA, rw));
  g_object_class_install_property (gobject_class, PROP_MIN_TISSUE_FRACTION,
      wsi_param_spec_double ("min-tissue-fraction", "Minimum tissue fraction",
          "Slides whose mask covers less than this fraction of the overview "
          "are marked tissue-rejected (a warning is posted; patchsampler "
          "samples nothing from them). Range 0-1, default 0.01",
          0.0, 1.0, DEFAULT_MIN_TISSUE_FRACTION, rw));
  g_object_class_install_property (gobject_class, PROP_MASK_CACHE_SIZE,
      wsi_param_spec_uint ("mask-cache-size", "Mask cache size",
          "Number of slides whose masks are kept (least recently used "
          "evicted first; when full, a new mask is next in line) so that "
          "revisited slides need no overview. "
          "Masks are run-length coded and their bytes capped at 32 MiB "
          "whatever the count. Range 0-65536 (0 = no cache), default 8192",
          0, MAX_MASK_CACHE_SIZE, DEFAULT_MASK_CACHE_SIZE, rw));
  g_object_class_install_property (gobject_class, PROP_MASKS_COMPUTED,
      wsi_param_spec_uint64 ("masks-computed", "Masks computed",
          "Number of masks computed from overviews since the element "
          "started (read-only)", 0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_CACHE_HITS,
      wsi_param_spec_uint64 ("cache-hits", "Cache hits",
          "Number of slides that got their mask from the cache since the "
          "element started (read-only)", 0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_MASK_CACHE_DIR,
      g_param_spec_string ("mask-cache-dir", "Mask cache folder",
          "Folder where masks are kept across runs (created if missing), "
          "one file of a few KB (up to about 100 KB for detailed H&E at "
          "1024 px) per slide and mask settings, named by a "
          "hash (no path or URL in names), keyed by the slide path, its "
          "file's size and mtime, wsislidesrc's thumbnail-size and every "
          "mask-shaping property: a later run loads them instead of "
          "reading overviews. Nothing is evicted (delete the folder to "
          "reclaim space). Local slides only. Empty = off. Default: empty",
          NULL, rw));
  g_object_class_install_property (gobject_class, PROP_DISK_HITS,
      wsi_param_spec_uint64 ("disk-hits", "Disk hits",
          "Number of masks loaded from mask-cache-dir for a slide since "
          "the element started, each counted once (with mask-cache-size=0 "
          "a mask checked for the source's query is read again for its "
          "slide; read-only)", 0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_MASK_CACHE_BYTES,
      wsi_param_spec_uint64 ("mask-cache-bytes", "Mask cache bytes",
          "Bytes the cached masks take, run-length coded (at most 32 MiB; "
          "read-only)", 0, G_MAXUINT64, 0, ro));
}

/* The properties of otsu's optional steps and of hsv's ranges (methods
 * otsu, hsv and combined). */
static void
install_range_properties (GObjectClass * gobject_class)
{
  const GParamFlags rw = (GParamFlags) (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  g_object_class_install_property (gobject_class, PROP_OTSU_CHANNEL,
      g_param_spec_enum ("otsu-channel", "Otsu channel",
          "Channel thresholded by methods otsu and combined: saturation "
          "(tissue above Otsu's threshold, never below 15) or gray (tissue "
          "at or below it, no floor, as the Python peer). Default: "
          "saturation", GST_TYPE_TISSUE_MASK_OTSU_CHANNEL,
          DEFAULT_OTSU_CHANNEL, rw));
  g_object_class_install_property (gobject_class, PROP_OTSU_BLUR_KERNEL,
      wsi_param_spec_uint ("otsu-blur-kernel", "Otsu blur kernel",
          "Side of the Gaussian blur before Otsu's threshold (methods otsu "
          "and combined), in pixels of the kernel-reference-size overview "
          "(scaled to the overview's size, kept odd). Odd, range 1-255 "
          "(1 = no blur), default 1", 1, MAX_KERNEL, DEFAULT_OTSU_BLUR_KERNEL, rw));
  g_object_class_install_property (gobject_class, PROP_OTSU_CLOSE_KERNEL,
      wsi_param_spec_uint ("otsu-close-kernel", "Otsu close kernel",
          "Diameter of the elliptical closing after Otsu's threshold "
          "(methods otsu and combined), in pixels of the "
          "kernel-reference-size overview (scaled to the overview's size). "
          "Range 0-255 (0 = no closing), default 0", 0, MAX_KERNEL,
          DEFAULT_OTSU_CLOSE_KERNEL, rw));
  g_object_class_install_property (gobject_class, PROP_OTSU_MIN_AREA,
      wsi_param_spec_double ("otsu-min-area", "Otsu minimum area",
          "After Otsu's threshold, tissue pieces smaller than this fraction "
          "of the overview area (truncated to whole pixels) are dropped "
          "(methods otsu and combined). Range 0-1 (0 = keep all), "
          "default 0", 0.0, 1.0, DEFAULT_OTSU_MIN_AREA, rw));
  g_object_class_install_property (gobject_class, PROP_HUE_MIN,
      wsi_param_spec_uint ("hue-min", "Hue minimum",
          "Lowest HSV hue of tissue for methods hsv and combined, on "
          "OpenCV's 8-bit scale (degrees / 2, 0-179; the peer's scale). "
          "hue-min > hue-max selects the hues outside (hue-max, hue-min), "
          "round red. Range 0-180, default 0", 0, MAX_HUE, DEFAULT_HUE_MIN,
          rw));
  g_object_class_install_property (gobject_class, PROP_HUE_MAX,
      wsi_param_spec_uint ("hue-max", "Hue maximum",
          "Highest HSV hue of tissue for methods hsv and combined (OpenCV's "
          "scale, inclusive). Range 0-180, default 180 (no bound)", 0,
          MAX_HUE, DEFAULT_HUE_MAX, rw));
  g_object_class_install_property (gobject_class, PROP_HSV_SATURATION_MIN,
      wsi_param_spec_int ("hsv-saturation-min", "HSV saturation minimum",
          "Lowest HSV saturation (0-255) of tissue for methods hsv and "
          "combined; -1 uses saturation-threshold. Range -1-255, "
          "default -1", -1, 255, DEFAULT_HSV_SATURATION_MIN, rw));
  g_object_class_install_property (gobject_class, PROP_VALUE_MIN,
      wsi_param_spec_uint ("value-min", "Value minimum",
          "Lowest HSV value (brightness, 0-255) of tissue for methods hsv "
          "and combined (darker pixels are dirt, pen, folds). Range 0-255, "
          "default 0", 0, 255, DEFAULT_VALUE_MIN, rw));
  g_object_class_install_property (gobject_class, PROP_KERNEL_REFERENCE_SIZE,
      wsi_param_spec_int ("kernel-reference-size", "Kernel reference size",
          "Longest side in pixels of the slide overview at which the kernel "
          "sides (median-kernel, close-kernel, otsu-blur-kernel, "
          "otsu-close-kernel) are given; other overview sizes of the slide "
          "scale them to cover the same micrometres (a slide smaller than "
          "this: its level 0). 0 = in pixels of the overview received, "
          "whatever its size. Range 0-8192, default 1024 (wsislidesrc's "
          "default thumbnail-size)", 0, MAX_KERNEL_REFERENCE_SIZE,
          DEFAULT_KERNEL_REFERENCE_SIZE, rw));
}

void
wsi_tissue_properties_install (GObjectClass * gobject_class)
{
  install_properties (gobject_class);
  install_range_properties (gobject_class);
}
