/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-tissuemask
 * @title: tissuemask
 *
 * tissuemask finds the tissue on the overview (thumbnail) of each slide
 * that wsislidesrc pushes, so that patchsampler only draws patches where
 * there is tissue. It appends the mask (one byte per overview pixel,
 * 0 = background, 255 = tissue, tight rows) after the overview RGB bytes of
 * the slide buffer and updates the slide's `WsiSlideMeta`: `has-mask`,
 * `tissue-fraction` (share of overview pixels that are tissue) and
 * `tissue-rejected` (the fraction is below #GstTissueMask:min-tissue-fraction;
 * such a slide still goes downstream, but patchsampler samples nothing from
 * it, and a warning naming the slide is posted).
 *
 * Methods (#GstTissueMask:method):
 *
 * * `otsu` (default): Otsu's threshold on the HSV saturation channel, the
 *   usual choice for H&E. The threshold never goes below 15, so a blank or
 *   nearly uniform overview is not called tissue. With
 *   `otsu-channel=gray` the grey level is thresholded instead (tissue is
 *   darker, no floor); #GstTissueMask:otsu-blur-kernel,
 *   #GstTissueMask:otsu-close-kernel and #GstTissueMask:otsu-min-area add
 *   the Python peer's Gaussian blur, elliptical closing and small-piece
 *   removal (all off by default).
 * * `hsv`: hue in #GstTissueMask:hue-min..#GstTissueMask:hue-max (OpenCV's
 *   8-bit scale, degrees halved, 0-179; a minimum above the maximum wraps
 *   round red), saturation >= #GstTissueMask:hsv-saturation-min (-1:
 *   #GstTissueMask:saturation-threshold) and value in
 *   #GstTissueMask:value-min..#GstTissueMask:value-threshold. Midnight's
 *   ranges: `hue-min=90 hue-max=180 hsv-saturation-min=8 value-min=103
 *   value-threshold=255`.
 * * `clam`: CLAM's segment_tissue: saturation, median blur
 *   (#GstTissueMask:median-kernel), threshold at
 *   #GstTissueMask:saturation-threshold, morphological closing
 *   (#GstTissueMask:close-kernel), then tissue pieces smaller than
 *   #GstTissueMask:min-component-area are dropped and holes smaller than
 *   #GstTissueMask:min-hole-area are filled.
 * * `fluorescence`: for dark-background fluorescence scans (DAPI, TRITC,
 *   FITC...: black background, bright nuclei). Tissue is what is brighter
 *   than Otsu's threshold on the HSV value channel (the brightest of R, G
 *   and B, so a pure blue or pure red stain counts at full strength); the
 *   threshold never goes below #GstTissueMask:value-floor, so a blank dark
 *   overview is not called tissue. A morphological closing
 *   (#GstTissueMask:close-kernel) then joins clusters of nuclei into
 *   regions. The saturation-based methods are useless here: a dark pixel
 *   with a faint colour cast has a high HSV saturation, so they call nearly
 *   the whole black background tissue.
 * * `combined`: the logical AND of `otsu`, `hsv` and `clam`, each with its
 *   own properties above (the peer's CombinedTissueDetector).
 * * `none`: every pixel is tissue.
 *
 * Kernel sides (#GstTissueMask:median-kernel, #GstTissueMask:close-kernel,
 * #GstTissueMask:otsu-blur-kernel, #GstTissueMask:otsu-close-kernel) are
 * given in pixels of the slide's overview whose longest side is
 * #GstTissueMask:kernel-reference-size (1024 by default, wsislidesrc's
 * default thumbnail-size); an overview of another size scales them (odd
 * kernels kept odd), so that every overview of a slide closes and blurs
 * over the same micrometres: a closing of 4 pixels on a 1024 px overview is
 * one of 16 pixels on a 4096 px one, not another morphological operation.
 * With `kernel-reference-size=0` the sides are in pixels of whatever
 * overview arrives (the meaning before). Area shares
 * (#GstTissueMask:min-component-area...) do not depend on the size.
 *
 * A second tissuemask in a chain combines its mask with the one already on
 * the buffer (logical AND; tissue-fraction and tissue-rejected follow the
 * intersection) and says so in the debug log, so any set of detectors can
 * be intersected with its own parameters. Rejected slides are reported
 * upstream with a custom `wsi-slide-rejected` event (wsislidesrc counts
 * them). docs/tissue.md compares every method with the Python peer.
 *
 * Masks are kept in an LRU cache keyed by slide path and overview size
 * (#GstTissueMask:mask-cache-size), because wsislidesrc in cycle mode visits
 * the same slides again; they are kept run-length coded (a few KB each for
 * smooth tissue, about 45 KB for a 1024 px mask of H&E texture; at most 32
 * MiB in all), so the default 8192 slides cost little memory and a cycle
 * over thousands of distinct slides masks each only once.
 * When the cache is full, a new mask evicts the least recently used one and
 * is itself kept last in line, to be evicted by the next new mask unless a
 * revisit hits it first: a cycle over more slides than the cache holds then
 * still finds all but one of the cached masks on every pass, where plain
 * LRU would evict each mask just before its revisit and find none
 * (#GstTissueMask:mask-cache-bytes says what the masks take). A mask loaded
 * from #GstTissueMask:mask-cache-dir for a visit still to come goes first
 * in line instead, so that it is still there when that visit streams. Before
 * reading an overview, wsislidesrc sends a
 * custom downstream query named `wsi-mask-cached` with a string field `path`;
 * tissuemask answers it (boolean field `cached` = %TRUE) when it holds that
 * slide's mask, and the source then pushes the slide without its overview
 * (`has-overview` = %FALSE): the cached mask is attached instead. Changing
 * any property that shapes the mask empties the cache. In a chain, a
 * tissuemask that finds a mask already on a slide tells the ones before it
 * (custom upstream event `wsi-mask-chained`); from then on they ask it
 * before answering, and the overview is skipped only when every one of
 * them holds the mask.
 *
 * With #GstTissueMask:mask-cache-dir set, masks are also kept on disk, one
 * small file per slide and mask settings, so that later runs (and epochs
 * over more slides than the memory cache holds) skip every overview read
 * and mask: on an in-memory miss the mask is loaded from the folder, and
 * the `wsi-mask-cached` query is answered for a mask found there too. A
 * file is used only for the same slide path, the same file (size and
 * mtime, which wsislidesrc passes along), the same wsislidesrc
 * thumbnail-size and the same value of every mask-shaping property; a
 * damaged file is warned about (naming it) and replaced, an unusable folder
 * is warned about once and then ignored. Remote slides are not cached on
 * disk.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/slides/ ! tissuemask method=clam min-tissue-fraction=0.05 ! \
 *     fakesink dump=false
 * ]| Computes CLAM-style tissue masks for every slide of a folder and drops
 * (marks rejected) slides with less than 5 % tissue on their overview.
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/dapi/ ! tissuemask method=fluorescence value-floor=30 ! \
 *     queue ! patchsampler patch-size=256 ! patchinterleave ! patchreader ! fakesink
 * ]| Samples patches only on the bright (stained) parts of fluorescence
 * slides, ignoring anything darker than 30 on their overviews.
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/slides/ ! tissuemask method=combined hue-min=90 \
 *     hsv-saturation-min=8 value-min=103 value-threshold=255 ! queue ! patchsampler ! fakesink
 * ]| Tissue is where Otsu, Midnight's HSV ranges and CLAM all agree.
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/slides/ ! tissuemask mask-cache-dir=/data/masks ! \
 *     fakesink
 * ]| Masks every slide once and keeps the masks in /data/masks: the same
 * command run again reads no overview.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsttissuemask.h"

#include <gst/wsi/wsierrorrelay.h>
#include <gst/wsi/wsievent.h>
#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsirefusal.h>

#include "wsimaskpolicy.h"
#include "wsitissuedetect.h"
#include "wsitissueproperties.h"

#include <opencv2/core/version.hpp>

GST_DEBUG_CATEGORY_STATIC (gst_tissue_mask_debug);
#define GST_CAT_DEFAULT gst_tissue_mask_debug

/* The mask-cached query and mask-chained event (wsievent.h): a tissuemask
 * that finds a mask already on a slide tells the ones before it, which then
 * ask it before answering the query (and only then: it stays local
 * otherwise). */

G_STATIC_ASSERT ((int) GST_TISSUE_MASK_METHOD_COMBINED ==
    (int) WSI_TISSUE_COMBINED);
G_STATIC_ASSERT ((int) GST_TISSUE_MASK_METHOD_FLUORESCENCE ==
    (int) WSI_TISSUE_FLUORESCENCE);

struct _GstTissueMask
{
  GstBaseTransform parent;

  /* Guards every field below (the properties; the masks and counters
   * are the policy's). */
  GMutex lock;
  /* Everything that shapes a mask; a copy is taken for each computation
   * so that property changes never race with OpenCV. */
  WsiTissueSettings settings;
  /* -1: hsv follows saturation-threshold (resolved when copied). */
  gint hsv_saturation_min;
  gdouble min_tissue_fraction;
  /* Longest overview side the kernel sides are given at; 0 = any. */
  gint kernel_reference_size;
  /* Where masks come from and are kept: memory (mask-cache-size), disk
   * (mask-cache-dir), the settings generation and the counters
   * (wsimaskpolicy.h; its own lock, taken inside ours). */
  WsiMaskPolicy *masks;
  /* A tissuemask downstream combines with our masks (atomic). */
  gint later_mask;
  /* We told upstream that we follow a tissuemask (streaming thread). */
  gboolean announced_chain;
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (WSI_SLIDE_MEDIA_TYPE));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (WSI_SLIDE_MEDIA_TYPE));

#define gst_tissue_mask_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstTissueMask, gst_tissue_mask,
    GST_TYPE_BASE_TRANSFORM,
    GST_DEBUG_CATEGORY_INIT (gst_tissue_mask_debug, "tissuemask", 0,
        "Tissue detection on slide overviews"));
GST_ELEMENT_REGISTER_DEFINE (tissuemask, "tissuemask", GST_RANK_NONE,
    GST_TYPE_TISSUE_MASK);

/* Properties that do not change a mask, left out of the disk key
 * (wsimaskpolicy.h). Every other property of tissuemask is in it, so a new
 * mask-shaping property cannot be forgotten
 * (tests/check/elements/tissuemask.c changes each one and expects a new
 * mask). */
static const gchar *const not_mask_shaping[] = {
  "min-tissue-fraction", "mask-cache-size", "mask-cache-dir", NULL
};

/* ---- buffers ------------------------------------------------------------ */

/* A copy of the settings with hsv's saturation resolved. Call with the
 * lock held. */
static WsiTissueSettings
current_settings (GstTissueMask * self)
{
  WsiTissueSettings settings = self->settings;

  settings.hsv_saturation_min = self->hsv_saturation_min >= 0 ?
      (guint) self->hsv_saturation_min : settings.saturation_threshold;
  return settings;
}

/* What the kernel sides are multiplied by on a @width x @height overview
 * of a slide whose level 0's longest side is @slide_longest: the overview
 * at @reference px (or level 0, when smaller) keeps them as given. */
static gdouble
kernel_scale (gint reference, gint width, gint height, gint64 slide_longest)
{
  if (reference <= 0 || slide_longest <= 0)
    return 1.0;
  return (gdouble) MAX (width, height) / (gdouble) MIN (reference,
      slide_longest);
}

/* Computes the mask of the overview at the start of @buffer (followed by
 * @trailing bytes: an earlier tissuemask's mask) of a slide whose level 0's
 * longest side is @slide_longest (0 = unknown); returns NULL (error posted)
 * when the buffer does not hold what its meta says. @generation: the
 * settings it was computed with. */
static GstMemory *
gst_tissue_mask_compute (GstTissueMask * self, GstBuffer * buffer,
    const gchar * path, gint width, gint height, gint64 slide_longest,
    gsize trailing, gdouble * fraction, guint * generation_out)
{
  gsize expected = (gsize) width * height * 3;
  WsiTissueSettings settings;
  WsiTissueReport report;
  WsiMaskPolicyState state;
  guint generation, first_mem, n_mems;
  gsize skip;
  GstMapInfo overview, mask;
  GstMemory *memory;
  gchar *error = NULL;

  if (gst_buffer_get_size (buffer) != expected + trailing
      || !gst_buffer_find_memory (buffer, 0, expected, &first_mem, &n_mems,
          &skip)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("The overview of slide \"%s\" has %" G_GSIZE_FORMAT " bytes, "
            "expected %" G_GSIZE_FORMAT " (%dx%d RGB%s).", path,
            gst_buffer_get_size (buffer), expected + trailing, width, height,
            trailing ? " and a mask" : ""), (NULL));
    return NULL;
  }

  g_mutex_lock (&self->lock);
  settings = current_settings (self);
  settings.kernel_scale = kernel_scale (self->kernel_reference_size, width,
      height, slide_longest);
  wsi_mask_policy_get_state (self->masks, &state);
  generation = state.generation;
  g_mutex_unlock (&self->lock);
  *generation_out = generation;

  memory = gst_allocator_alloc (NULL, (gsize) width * height, NULL);
  gst_buffer_map_range (buffer, first_mem, n_mems, &overview, GST_MAP_READ);
  gst_memory_map (memory, &mask, GST_MAP_WRITE);
  *fraction = wsi_tissue_detect (overview.data + skip, width, height,
      &settings, mask.data, &report, &error);
  gst_memory_unmap (memory, &mask);
  gst_buffer_unmap (buffer, &overview);
  if (*fraction < 0) {
    gst_memory_unref (memory);
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
        ("Could not compute the tissue mask of slide \"%s\".", path),
        ("OpenCV: %s", error));
    g_free (error);
    return NULL;
  }

  GST_DEBUG_OBJECT (self, "mask of %s (%dx%d): tissue fraction %.4f "
      "(Otsu threshold %.0f, fluorescence threshold %.0f; -1 = unused; "
      "kernels x %.3f)", path, width, height, *fraction,
      report.otsu_threshold, report.fluorescence_threshold,
      settings.kernel_scale);
  return memory;
}

/* Replaces the mask an earlier tissuemask appended (the last @n bytes of
 * @buffer) with its AND with @mine; returns the new tissue fraction. The
 * cached memories of both elements stay untouched. */
static gdouble
combine_with_present_mask (GstBuffer * buffer, GstMemory * mine, gsize n)
{
  gsize offset = gst_buffer_get_size (buffer) - n, skip;
  GstMemory *combined = gst_allocator_alloc (NULL, n, NULL);
  GstMapInfo out, in;
  guint first_mem, n_mems;
  gsize tissue;

  gst_memory_map (combined, &out, GST_MAP_WRITE);
  gst_buffer_extract (buffer, offset, out.data, n);
  gst_memory_map (mine, &in, GST_MAP_READ);
  tissue = wsi_tissue_and (out.data, in.data, n);
  gst_memory_unmap (mine, &in);
  gst_memory_unmap (combined, &out);

  /* Drop the old mask's memories (or cut a memory it shares). */
  if (gst_buffer_find_memory (buffer, offset, n, &first_mem, &n_mems, &skip)
      && skip == 0)
    gst_buffer_remove_memory_range (buffer, first_mem, n_mems);
  else
    gst_buffer_resize (buffer, 0, offset);
  gst_buffer_append_memory (buffer, combined);
  return (gdouble) tissue / n;
}

/* Tells wsislidesrc that the slide gives no patch (it counts rejected and
 * blank slides). */
static void
report_rejected (GstTissueMask * self, const GstStructure * meta,
    const gchar * path, gdouble fraction, gboolean has_mask)
{
  guint index = G_MAXUINT;

  gst_structure_get_uint (meta, "index", &index);
  gst_pad_push_event (GST_BASE_TRANSFORM_SINK_PAD (self),
      wsi_event_new_slide_rejected (index, path, fraction,
          has_mask && fraction <= 0.0));
}

static void
gst_tissue_mask_set_result (GstTissueMask * self, GstStructure * meta,
    const gchar * path, gboolean has_mask, gdouble fraction, gboolean warn)
{
  gdouble min_fraction;
  gboolean rejected;

  g_mutex_lock (&self->lock);
  min_fraction = self->min_tissue_fraction;
  g_mutex_unlock (&self->lock);

  rejected = !has_mask || fraction < min_fraction;
  gst_structure_set (meta, "has-mask", G_TYPE_BOOLEAN, has_mask,
      "tissue-fraction", G_TYPE_DOUBLE, fraction,
      "tissue-rejected", G_TYPE_BOOLEAN, rejected, NULL);

  /* Warn once, when the mask is computed, not on every later visit. */
  if (has_mask && rejected && warn)
    GST_ELEMENT_WARNING (self, STREAM, FAILED,
        ("Slide \"%s\" is rejected: only %.4f of its overview is tissue "
            "(min-tissue-fraction is %.4f).", path, fraction, min_fraction),
        (NULL));
  if (rejected)
    report_rejected (self, meta, path, fraction, has_mask);
}

/* Once per run, when a slide arrives with a mask: tells the tissuemasks
 * before us to ask us about cached masks (see the query below). */
static void
announce_chain (GstTissueMask * self)
{
  if (self->announced_chain)
    return;
  self->announced_chain = TRUE;
  gst_pad_push_event (GST_BASE_TRANSFORM_SINK_PAD (self),
      wsi_event_new_mask_chained ());
}

/* Neither an overview nor a cached mask: a mask already present is kept
 * alone, otherwise the slide is rejected. */
static void
warn_no_mask (GstTissueMask * self, GstStructure * meta, const gchar * path,
    gboolean has_mask)
{
  if (has_mask) {
    GST_ELEMENT_WARNING (self, STREAM, FAILED,
        ("Slide \"%s\" came without an overview and this tissuemask holds "
            "no mask for it: the mask already present is used alone.", path),
        (NULL));
    return;
  }
  GST_ELEMENT_WARNING (self, STREAM, FAILED,
      ("Slide \"%s\" is rejected: it came without an overview and its mask "
          "is not cached.", path), (NULL));
  gst_tissue_mask_set_result (self, meta, path, FALSE, 0.0, FALSE);
}

static GstFlowReturn
gst_tissue_mask_transform_ip (GstBaseTransform * trans, GstBuffer * buffer)
{
  GstTissueMask *self = GST_TISSUE_MASK (trans);
  GstStructure *meta = wsi_slide_meta_get (buffer);
  gboolean has_overview = FALSE, has_mask = FALSE;
  gint width = 0, height = 0;
  gint64 slide_width = 0, slide_height = 0;
  gdouble fraction = 0.0, before = -1.0;
  GstMemory *mask;
  gboolean computed = FALSE;
  gsize mask_size;
  gchar *path;
  guint generation;

  if (meta == NULL) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Received a slide buffer without a " WSI_SLIDE_META_NAME "."),
        ("tissuemask needs wsislidesrc (or an equivalent) upstream"));
    return GST_FLOW_ERROR;
  }
  path = g_strdup (gst_structure_get_string (meta, "path"));
  if (path == NULL)
    path = g_strdup ("(unnamed slide)");
  gst_structure_get_boolean (meta, "has-overview", &has_overview);
  gst_structure_get_boolean (meta, "has-mask", &has_mask);
  gst_structure_get_int (meta, "overview-width", &width);
  gst_structure_get_int (meta, "overview-height", &height);
  gst_structure_get_int64 (meta, "width", &slide_width);
  gst_structure_get_int64 (meta, "height", &slide_height);
  gst_structure_get_double (meta, "tissue-fraction", &before);
  mask_size = (gsize) MAX (width, 0) * MAX (height, 0);

  if (has_mask && gst_buffer_get_size (buffer) < mask_size) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Slide \"%s\" says it has a %dx%d mask but holds only %"
            G_GSIZE_FORMAT " bytes.", path, width, height,
            gst_buffer_get_size (buffer)), (NULL));
    g_free (path);
    return GST_FLOW_ERROR;
  }

  /* An earlier tissuemask's time is its own (recorded at its push). */
  gst_structure_remove_field (meta, "prep-mask-ns");
  mask = wsi_mask_policy_find (self->masks, meta, path, width, height,
      &fraction);
  if (mask == NULL && has_overview && mask_size > 0) {
    gint64 start = g_get_monotonic_time ();

    mask = gst_tissue_mask_compute (self, buffer, path, width, height,
        MAX (slide_width, slide_height), has_mask ? mask_size : 0,
        &fraction, &generation);
    if (mask == NULL) {
      g_free (path);
      return GST_FLOW_ERROR;
    }
    computed = TRUE;
    wsi_mask_policy_computed (self->masks, meta, path, mask, width, height,
        fraction, generation);
    /* For wsistats' slide preparation stage (not stream content). */
    gst_structure_set (meta, "prep-mask-ns", G_TYPE_UINT64,
        (guint64) (g_get_monotonic_time () - start) * 1000, NULL);
  }

  if (has_mask)
    announce_chain (self);
  if (mask != NULL && has_mask) {
    fraction = combine_with_present_mask (buffer, mask, mask_size);
    gst_memory_unref (mask);
    GST_DEBUG_OBJECT (self, "%s already had a mask (tissue fraction %.4f): "
        "combined with this element's (AND), tissue fraction now %.4f",
        path, before, fraction);
    gst_tissue_mask_set_result (self, meta, path, TRUE, fraction, computed);
  } else if (mask != NULL) {
    gst_buffer_append_memory (buffer, mask);
    gst_tissue_mask_set_result (self, meta, path, TRUE, fraction, computed);
  } else {
    warn_no_mask (self, meta, path, has_mask);
  }
  g_free (path);
  return GST_FLOW_OK;
}

/* Answers wsislidesrc's "is this slide's mask cached?" query. When a
 * later tissuemask combines with ours, it is asked first: the overview may
 * be skipped only when every one of them holds the mask. */
static gboolean
gst_tissue_mask_query (GstBaseTransform * trans, GstPadDirection direction,
    GstQuery * query)
{
  GstTissueMask *self = GST_TISSUE_MASK (trans);
  gboolean cached, later_needs = FALSE;
  const gchar *path = NULL, *identity = NULL;
  gint thumbnail_size = 0;

  if (direction != GST_PAD_SINK
      || !wsi_query_parse_mask_cached (query, &path, NULL, NULL)
      || path == NULL)
    return GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction,
        query);

  /* a mask on disk is looked for only when the source says which file */
  if (!wsi_query_parse_mask_source (query, &identity, &thumbnail_size))
    identity = NULL;
  cached = wsi_mask_policy_holds (self->masks, path, identity,
      thumbnail_size);

  if (cached && g_atomic_int_get (&self->later_mask)) {
    gst_pad_peer_query (GST_BASE_TRANSFORM_SRC_PAD (trans), query);
    wsi_query_parse_mask_cached (query, &path, NULL, &later_needs);
  }
  GST_LOG_OBJECT (self, "mask of %s cached here: %d, needed later: %d",
      path, cached, later_needs);

  wsi_query_set_mask_cached (query, cached && !later_needs);
  return cached && !later_needs;
}

/* Learns that a later tissuemask combines with ours (and lets the event
 * go on upstream, for longer chains). */
static gboolean
gst_tissue_mask_src_event (GstBaseTransform * trans, GstEvent * event)
{
  GstTissueMask *self = GST_TISSUE_MASK (trans);

  if (wsi_event_parse_mask_chained (event)) {
    GST_DEBUG_OBJECT (self, "a later tissuemask combines with our masks");
    g_atomic_int_set (&self->later_mask, 1);
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->src_event (trans, event);
}

static gboolean
gst_tissue_mask_start (GstBaseTransform * trans)
{
  GstTissueMask *self = GST_TISSUE_MASK (trans);

  if (!wsi_refusal_check (GST_ELEMENT (self), wsi_refusal_of (self)))
    return FALSE;
  wsi_mask_policy_start (self->masks);
  self->announced_chain = FALSE;
  g_atomic_int_set (&self->later_mask, 0);
  return TRUE;
}

static gboolean
gst_tissue_mask_stop (GstBaseTransform * trans)
{
  GstTissueMask *self = GST_TISSUE_MASK (trans);

  wsi_mask_policy_stop (self->masks);
  return TRUE;
}

/* ---- properties --------------------------------------------------------- */

/* Where each number and enumeration property is kept in the element, and
 * whether a change of it changes the masks (the masks made with the old
 * value are then dropped, wsimaskpolicy.h). The property's GType says how
 * the field is read and written. */
typedef struct
{
  guint prop_id;
  gsize offset;
  gboolean shapes_mask;
  gboolean odd;                 /* a kernel that must be odd */
} FieldOf;

#define SETTING(prop, field, odd) { prop, G_STRUCT_OFFSET (GstTissueMask, \
      settings) + G_STRUCT_OFFSET (WsiTissueSettings, field), TRUE, odd }
#define OWN(prop, field, shapes) { prop, G_STRUCT_OFFSET (GstTissueMask, \
      field), shapes, FALSE }

static const FieldOf fields[] = {
  SETTING (PROP_METHOD, method, FALSE),
  SETTING (PROP_SATURATION_THRESHOLD, saturation_threshold, FALSE),
  SETTING (PROP_VALUE_THRESHOLD, value_max, FALSE),
  SETTING (PROP_VALUE_FLOOR, value_floor, FALSE),
  SETTING (PROP_MEDIAN_KERNEL, median_kernel, TRUE),
  SETTING (PROP_CLOSE_KERNEL, close_kernel, FALSE),
  SETTING (PROP_MIN_COMPONENT_AREA, min_component_area, FALSE),
  SETTING (PROP_MIN_HOLE_AREA, min_hole_area, FALSE),
  SETTING (PROP_OTSU_CHANNEL, otsu_channel, FALSE),
  SETTING (PROP_OTSU_BLUR_KERNEL, otsu_blur_kernel, TRUE),
  SETTING (PROP_OTSU_CLOSE_KERNEL, otsu_close_kernel, FALSE),
  SETTING (PROP_OTSU_MIN_AREA, otsu_min_area, FALSE),
  SETTING (PROP_HUE_MIN, hue_min, FALSE),
  SETTING (PROP_HUE_MAX, hue_max, FALSE),
  SETTING (PROP_VALUE_MIN, value_min, FALSE),
  OWN (PROP_HSV_SATURATION_MIN, hsv_saturation_min, TRUE),
  OWN (PROP_KERNEL_REFERENCE_SIZE, kernel_reference_size, TRUE),
  /* rejection is decided per buffer: the masks stay valid */
  OWN (PROP_MIN_TISSUE_FRACTION, min_tissue_fraction, FALSE),
};

/* the enumerations are stored as the gint of g_value_get_enum() */
G_STATIC_ASSERT (sizeof (WsiTissueMethod) == sizeof (gint));
G_STATIC_ASSERT (sizeof (WsiOtsuChannel) == sizeof (gint));

static const FieldOf *
field_of (guint prop_id)
{
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    if (fields[i].prop_id == prop_id)
      return &fields[i];
  return NULL;
}

/* Stores @value at @at; whether that changed it. */
static gboolean
field_set (gpointer at, const GValue * value)
{
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value))) {
    case G_TYPE_UINT:{
      guint v = g_value_get_uint (value), *field = (guint *) at;
      gboolean changed = *field != v;

      *field = v;
      return changed;
    }
    case G_TYPE_INT:
    case G_TYPE_ENUM:{
      gint v = G_VALUE_HOLDS_ENUM (value) ? g_value_get_enum (value) :
          g_value_get_int (value), *field = (gint *) at;
      gboolean changed = *field != v;

      *field = v;
      return changed;
    }
    case G_TYPE_DOUBLE:{
      gdouble v = g_value_get_double (value), *field = (gdouble *) at;
      gboolean changed = *field != v;

      *field = v;
      return changed;
    }
    default:
      g_return_val_if_reached (FALSE);
  }
}

static void
field_get (gconstpointer at, GValue * value)
{
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value))) {
    case G_TYPE_UINT:
      g_value_set_uint (value, *(const guint *) at);
      break;
    case G_TYPE_INT:
      g_value_set_int (value, *(const gint *) at);
      break;
    case G_TYPE_ENUM:
      g_value_set_enum (value, *(const gint *) at);
      break;
    case G_TYPE_DOUBLE:
      g_value_set_double (value, *(const gdouble *) at);
      break;
    default:
      g_return_if_reached ();
  }
}

/* Kernels are odd (OpenCV's median and Gaussian blurs need a centre):
 * an even one is refused, and the element then refuses to start
 * (wsirefusal.h); running already, a warning says it was not taken. */
static gboolean
kernel_accepted (GstTissueMask * self, GParamSpec * pspec, guint kernel)
{
  GParamSpecUInt *range = G_PARAM_SPEC_UINT (pspec);
  gchar *value, *accepted;

  GST_OBJECT_LOCK (self);
  if (kernel % 2 == 1) {
    wsi_refusal_forget (wsi_refusal_of (self), pspec->name);
    GST_OBJECT_UNLOCK (self);
    return TRUE;
  }
  value = g_strdup_printf ("%u", kernel);
  accepted = g_strdup_printf ("an odd number from %u to %u",
      range->minimum | 1, range->maximum);
  wsi_refusal_record (wsi_refusal_of (self), pspec->name, value, accepted);
  if (GST_STATE (self) > GST_STATE_READY)
    g_warning ("tissuemask: %s=%s refused (accepted: %s); keeping the "
        "previous value", pspec->name, value, accepted);
  GST_OBJECT_UNLOCK (self);
  g_free (value);
  g_free (accepted);
  return FALSE;
}

static void
gst_tissue_mask_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstTissueMask *self = GST_TISSUE_MASK (object);
  const FieldOf *field = field_of (prop_id);

  g_mutex_lock (&self->lock);
  if (field != NULL) {
    if ((!field->odd || kernel_accepted (self, pspec,
                g_value_get_uint (value)))
        && field_set ((guint8 *) self + field->offset, value)
        && field->shapes_mask)
      wsi_mask_policy_settings_changed (self->masks);
  } else if (prop_id == PROP_MASK_CACHE_SIZE) {
    wsi_mask_policy_set_max_masks (self->masks, g_value_get_uint (value));
  } else if (prop_id == PROP_MASK_CACHE_DIR) {
    wsi_mask_policy_set_dir (self->masks, g_value_get_string (value));
  } else {
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  }
  g_mutex_unlock (&self->lock);
}

static void
gst_tissue_mask_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstTissueMask *self = GST_TISSUE_MASK (object);
  const FieldOf *field = field_of (prop_id);
  WsiMaskPolicyState state;

  g_mutex_lock (&self->lock);
  wsi_mask_policy_get_state (self->masks, &state);
  if (field != NULL)
    field_get ((const guint8 *) self + field->offset, value);
  else if (prop_id == PROP_MASK_CACHE_SIZE)
    g_value_set_uint (value, state.max_masks);
  else if (prop_id == PROP_MASKS_COMPUTED)
    g_value_set_uint64 (value, state.computed);
  else if (prop_id == PROP_CACHE_HITS)
    g_value_set_uint64 (value, state.memory_hits);
  else if (prop_id == PROP_MASK_CACHE_DIR)
    g_value_take_string (value, wsi_mask_policy_dup_dir (self->masks));
  else if (prop_id == PROP_DISK_HITS)
    g_value_set_uint64 (value, state.disk_hits);
  else if (prop_id == PROP_MASK_CACHE_BYTES)
    g_value_set_uint64 (value, state.bytes);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  g_mutex_unlock (&self->lock);
}

static void
gst_tissue_mask_finalize (GObject * object)
{
  GstTissueMask *self = GST_TISSUE_MASK (object);

  wsi_mask_policy_free (self->masks);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_tissue_mask_class_init (GstTissueMaskClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->set_property = gst_tissue_mask_set_property;
  gobject_class->get_property = gst_tissue_mask_get_property;
  gobject_class->finalize = gst_tissue_mask_finalize;
  wsi_tissue_properties_install (gobject_class);

  gst_element_class_set_static_metadata (element_class,
      "Tissue mask", "Filter/Analyzer",
      "Finds the tissue on each slide's overview and appends the mask "
      "to the slide buffer", "gst-wsi developers");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);

  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_tissue_mask_transform_ip);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_tissue_mask_query);
  trans_class->src_event = GST_DEBUG_FUNCPTR (gst_tissue_mask_src_event);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_tissue_mask_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_tissue_mask_stop);

  gst_type_mark_as_plugin_api (GST_TYPE_TISSUE_MASK_METHOD,
      (GstPluginAPIFlags) 0);
  gst_type_mark_as_plugin_api (GST_TYPE_TISSUE_MASK_OTSU_CHANNEL,
      (GstPluginAPIFlags) 0);

  /* numbers outside their range refuse the start (wsirefusal.h) */
  wsi_refusal_class_init (GST_ELEMENT_CLASS (klass));
  /* every error of ours ends the application's main loop, however early
   * it comes (wsierrorrelay.h) */
  wsi_error_relay_class_init (element_class);
}

static void
gst_tissue_mask_init (GstTissueMask * self)
{
  g_mutex_init (&self->lock);
  self->settings.method = (WsiTissueMethod) DEFAULT_METHOD;
  self->settings.saturation_threshold = DEFAULT_SATURATION_THRESHOLD;
  self->settings.value_max = DEFAULT_VALUE_THRESHOLD;
  self->settings.value_floor = DEFAULT_VALUE_FLOOR;
  self->settings.median_kernel = DEFAULT_MEDIAN_KERNEL;
  self->settings.close_kernel = DEFAULT_CLOSE_KERNEL;
  self->settings.min_component_area = DEFAULT_MIN_COMPONENT_AREA;
  self->settings.min_hole_area = DEFAULT_MIN_HOLE_AREA;
  self->settings.otsu_channel = DEFAULT_OTSU_CHANNEL;
  self->settings.otsu_blur_kernel = DEFAULT_OTSU_BLUR_KERNEL;
  self->settings.otsu_close_kernel = DEFAULT_OTSU_CLOSE_KERNEL;
  self->settings.otsu_min_area = DEFAULT_OTSU_MIN_AREA;
  self->settings.hue_min = DEFAULT_HUE_MIN;
  self->settings.hue_max = DEFAULT_HUE_MAX;
  self->settings.value_min = DEFAULT_VALUE_MIN;
  self->hsv_saturation_min = DEFAULT_HSV_SATURATION_MIN;
  self->min_tissue_fraction = DEFAULT_MIN_TISSUE_FRACTION;
  self->kernel_reference_size = DEFAULT_KERNEL_REFERENCE_SIZE;
  self->masks = wsi_mask_policy_new (GST_ELEMENT (self), not_mask_shaping,
      WSI_TISSUE_MASK_REVISION, CV_VERSION, DEFAULT_MASK_CACHE_SIZE,
      MASK_CACHE_MAX_BYTES);

  /* The slide buffer leaves with a mask appended: never passthrough. */
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), FALSE);
}
