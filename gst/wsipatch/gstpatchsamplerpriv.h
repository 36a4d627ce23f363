/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * gstpatchsamplerpriv.h: patchsampler's instance and the types its parts
 * share: the element (gstpatchsampler.c: pads, properties, events, state
 * changes, the chain that calls the parts), the footprint and level rule
 * (wsisamplerfootprint.c), a slide visit's plan (wsisamplerplan.c), the
 * annotation regions (wsisamplerregions.c), the annotation settings
 * (wsisamplerannotation.c), the settings as values (wsisamplerconfig.c)
 * and the cycle and warning bookkeeping (wsisamplercycle.c). Nothing outside patchsampler includes
 * it. The fields say which lock or thread guards them.
 */

#ifndef __GST_PATCH_SAMPLER_PRIV_H__
#define __GST_PATCH_SAMPLER_PRIV_H__

#include <gst/gst.h>
#include <gst/wsi/wsiannotation.h>

#include "wsisamplersettings.h"
#include "wsiclassplan.h"
#include "wsidelivery.h"
#include "wsisampling.h"
#include "wsisamplerquota.h"

G_BEGIN_DECLS

/* the same typedef as gstpatchsampler.h's G_DECLARE_FINAL_TYPE (C11 allows
 * it twice), so the parts need no header of the element */
typedef struct _GstPatchSampler GstPatchSampler;

GST_DEBUG_CATEGORY_EXTERN (gst_patch_sampler_debug);

#define DEFAULT_MODE GST_PATCH_SAMPLER_MODE_RANDOM
#define DEFAULT_ALIGN GST_PATCH_SAMPLER_ALIGN_NONE
#define DEFAULT_PATCH_SIZE 256
#define MIN_PATCH_SIZE 8
#define MAX_PATCH_SIZE 8192
#define DEFAULT_TARGET_MPP 0.0
#define MAX_TARGET_MPP 1000.0
#define DEFAULT_LEVEL -1
#define MAX_LEVEL 64
#define DEFAULT_PATCHES_PER_SLIDE 100
#define MAX_PATCHES_PER_SLIDE 1000000
#define DEFAULT_MIN_TISSUE 0.5
#define DEFAULT_REPLACEMENT TRUE
#define DEFAULT_STRIDE 0
#define DEFAULT_MAX_ATTEMPTS 0
#define DEFAULT_MAX_PATCHES -1
#define DEFAULT_RANK_QUOTA FALSE
#define DEFAULT_TARGET_MPPS "0.25,0.5,1,2"
#define MAX_MPPS 32
#define DEFAULT_MPP_MIN 0.25
#define DEFAULT_MPP_MAX 2.0
#define DEFAULT_MPP_DISTRIBUTION GST_PATCH_SAMPLER_MPP_UNIFORM
#define DEFAULT_MAXAVG_LAMBDA 1.0
#define DEFAULT_ANNOTATION_MODE WSI_ANNOTATION_OFF
#define DEFAULT_MIN_ANNOTATION_COVERAGE 0.0
#define DEFAULT_ANNOTATION_OVERLAP WSI_OVERLAP_SMALLEST
#define DEFAULT_CLASS_BALANCE WSI_CLASS_BALANCE_NONE


/* The annotation properties as set; a WsiClassPlan is built from them. */
typedef struct
{
  WsiAnnotationMode mode;
  gchar *classes;
  gchar *exclude;
  gdouble min_coverage;
  WsiOverlapRule overlap;
  WsiClassBalance balance;
  gchar *weights;
} GstPatchSamplerAnnotationProps;

/* The property values one slide is planned with (a snapshot taken under
 * the object lock, so a property change never splits a slide). */
typedef struct
{
  GstPatchSamplerMode mode;
  guint patch_size;
  gdouble target_mpp;
  gint level;
  gint patches_per_slide;
  gdouble min_tissue;
  gboolean replacement;
  guint stride;
  guint max_attempts;
  GstPatchSamplerAlign align;
  /* multi-magnification: target-mpps and mpp-weights (n_weights 0 =
   * uniform) */
  gdouble mpps[MAX_MPPS];
  guint n_mpps;
  gdouble mpp_weights[MAX_MPPS];
  guint n_weights;
  /* continuous-magnification */
  gdouble mpp_min;
  gdouble mpp_max;
  GstPatchSamplerMppDistribution mpp_distribution;
  gdouble maxavg_lambda;
  /* annotations: a reference taken with the snapshot */
  WsiClassPlan *class_plan;
} GstPatchSamplerSettings;


/* One slide visit, as read from its WsiSlideMeta. */
typedef struct
{
  const gchar *path;
  guint index;
  guint cycle;
  guint64 seed;
  gint64 width;
  gint64 height;
  gdouble mpp_x;
  gint level_count;
  gint overview_width;
  gint overview_height;
  gboolean has_overview;
  gboolean has_mask;
  gboolean tissue_rejected;
} WsiSlideVisit;

/* What every record of one slide shares. */
typedef struct
{
  guint slide_index;
  guint cycle;
  guint footprint;
  guint out_size;
  gfloat out_mpp;
} WsiRecordTemplate;

struct _GstPatchSampler
{
  GstElement parent;

  GstPad *sinkpad;
  GstPad *srcpad;

  /* properties and counters, under the object lock */
  GstPatchSamplerSettings settings;
  guint64 slides_sampled;
  guint64 slides_skipped;
  guint64 patches_planned;
  gint64 max_patches;
  gboolean rank_quota;
  WsiSamplerQuota stream_quota; /* quota and planned under the object lock */
  GstPatchSamplerAnnotationProps annotation;
  WsiClassPlan *class_plan;     /* built from annotation, replaced on change */
  guint64 slides_without_regions;

  /* streaming thread only */
  guint64 next_sequence;
  gboolean cycle_started;
  guint cycle;
  guint cycle_slides;
  guint64 cycle_patches;
  gchar *cycle_last_skip;       /* why the last slide of the cycle gave none */
  GHashTable *warned_slides;    /* slide indices already warned about */
  gboolean warned_unlimited;
  gboolean warned_unused_annotations;   /* once per start */
  gboolean warned_unseen;       /* requested classes no file had: told */
  WsiClassCounts class_counts;  /* patches planned per class (balance) */
  gboolean class_seen[WSI_MAX_CLASSES]; /* in some slide's annotations */

  /* planned vs delivered: drops reported from downstream threads */
  WsiDelivery *delivery;
  gint delivery_failed;         /* atomic: a whole cycle was lost */

  /* integral image scratch, kept between slides to avoid reallocating */
  guint32 *integral;
  gsize integral_len;
};

G_END_DECLS

#endif /* __GST_PATCH_SAMPLER_PRIV_H__ */
