/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/**
 * SECTION:element-patchsampler
 * @title: patchsampler
 * @see_also: tissuemask, patchinterleave, patchreader
 *
 * patchsampler turns each slide into patch coordinates; it reads no pixels.
 * For every `application/x-wsi-slide` buffer (one slide visit, with its
 * `WsiSlideMeta` and, from tissuemask, a tissue mask) it pushes one
 * `application/x-wsi-patches` buffer holding all the patches planned on
 * that slide as packed `WsiPatchRecord`s, with the slide's `WsiSlideMeta`
 * copied onto it. A slide that yields no patch (rejected by tissuemask, too
 * small, unknown resolution, no tissue found) produces no buffer.
 *
 * The side of a patch on the slide (its footprint, in level-0 pixels) is
 * `patch-size` when `target-mpp` is 0 and `level` is -1;
 * `round (patch-size × target-mpp / mpp-x)` when `target-mpp` > 0; and
 * `round (patch-size × downsample (level))` when `level` >= 0. Every
 * patch lies wholly inside the slide, and the share of its footprint that
 * the mask calls tissue is at least `min-tissue`. The mask is compared at
 * its own resolution: every mask pixel the footprint touches counts, so
 * `min-tissue=1` keeps only patches wholly on tissue. A slide without a
 * mask counts as all tissue.
 *
 ## Modes
 *
 * - `mode=random` draws positions uniformly on tissue (rejection sampling,
 *   at most `max-attempts` draws per slide, then the rest from the tissue
 *   positions of a lattice of step footprint/4, so a slide with little
 *   tissue still gives `patches-per-slide` patches).
 * - `mode=grid` takes the cells of a regular grid of step `stride` whose
 *   tissue share reaches `min-tissue`, each visit in raster order.
 * - `mode=multi-magnification`: each patch draws one of `target-mpps`
 *   (with probabilities `mpp-weights`, equal by default), then a position
 *   on tissue for the footprint of that resolution, round (patch-size ×
 *   mpp / mpp-x) level-0 pixels. `out_mpp` in the record is what that
 *   rounding gives.
 * - `mode=continuous-magnification`: each patch draws its resolution from
 *   [`mpp-min`, `mpp-max`], then its position (Moellers et al. 2026,
 *   "Mind the Gap"). `mpp-distribution=uniform`; `maxavg`, density ∝
 *   exp (K̄(x) / `maxavg-lambda`) with K̄(x) = ∫ (min(x,y)/max(x,y))² dy
 *   = 4x/3 − a³/(3x²) − x²/b the transfer potential, which favours central
 *   resolutions; `minmax`, the distribution that maximises the worst
 *   transfer min_x ∫ K(x, y) p(y) dy: an atom of 1 / (2 (1 + ln (b/a))) at
 *   each end and log-uniform between (the exact solution of the peer's
 *   linear programme). patchreader reads each patch at the coarsest level
 *   finer than its resolution and resizes it to `patch-size`.
 *
 * The magnification modes skip a slide without mpp with a warning (set
 * wsislidesrc `default-mpp`); a resolution whose footprint fits nowhere
 * on a slide's tissue is drawn again, so on small slides the histogram is
 * that of the resolutions the slide can give.
 *
 * ## Without replacement
 *
 * `replacement=false` (random mode) and grid mode with
 * `patches-per-slide` below the slide's positions never repeat a position
 * until every one has been used, across all visits of the slide (each
 * cycle of wsislidesrc is one visit): the slide's positions — for random,
 * the tissue cells of a lattice of step footprint (so no two patches
 * overlap) with an origin drawn per slide; for grid, the grid cells — are
 * put in an order by a permutation keyed by (seed, slide index, epoch), and
 * visit k takes the k-th `patches-per-slide` of the chain of epochs 0, 1,
 * 2, ... When an epoch is exhausted the next one is a fresh permutation: a
 * visit starts epoch floor (k × patches-per-slide / positions). Each visit
 * depends only on the seed, the slide and the visit, so resuming, other
 * ranks and other pool sizes see the same positions. A visit never takes
 * more than all of a slide's positions.
 *
 * Random draws come from wsirng.h seeded by the slide meta's `seed`,
 * `index` and `cycle`: one `seed` on wsislidesrc fixes the whole stream,
 * on every platform, and a revisit of a slide (a higher cycle) draws new
 * positions.
 *
 * ## Records
 *
 * patchsampler writes x, y, footprint, out_size, out_mpp, tissue_fraction,
 * slide_index, cycle and created_ns; it leaves `sequence` 0 for
 * patchinterleave, which decides the stream order and numbers it, and
 * `level`/`read_size` to patchreader. The output buffer carries
 * `GST_BUFFER_OFFSET` = the offset of the slide buffer it came from.
 *
 * When a whole pass over the slides (one cycle) yields no patch at all,
 * the element posts an error instead of cycling forever; at EOS with no
 * patch planned in total it posts a warning. The same error comes when
 * every patch planned in a pass is dropped downstream (unreadable slides,
 * reported by patchreader); a drop reported more than 2048 passes after
 * its plan is past that check (the tallies of older passes are not kept),
 * and the element warns once per stream.
 *
 * ## Finite runs and DDP
 *
 * #GstPatchSampler:max-patches plans at most that many patches over the
 * whole stream: the plan of the last slide is cut short, EOS is pushed
 * downstream and GST_FLOW_EOS returned upstream, so the source stops.
 *
 * With #GstPatchSampler:rank-quota every rank of a distributed job stops
 * after exactly the same number of patches, decided locally: the quota is
 * `rank-slides-min × patches-per-slide`, with `rank-slides-min` (the slide
 * count of the smallest rank, from the first slide's `WsiSlideMeta`) the
 * same on every rank (if max-patches is set too, the smaller wins; the
 * #GstPatchSampler:quota property tells the result). Use it with
 * wsislidesrc `cycle=true`: patches lost to bad, blank or tissue-poor slides
 * are then made up by revisiting the rank's slides with fresh positions
 * (the next `cycle`, which every record carries), and the stream ends
 * exactly at the quota. If upstream ends first (`cycle=false` and a
 * shortfall) the element posts an error naming the rank and the numbers.
 * A rank whose slides all fail still ends with the errors above (every
 * slide failed, or a whole pass yielded no patch), never a hang.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/slides seed=7 ! \
 *     tissuemask ! queue ! \
 *     patchsampler patch-size=224 target-mpp=0.5 patches-per-slide=200 ! \
 *     fakesink sync=false
 * ]| Plans 200 random 224×224 patches at 0.5 µm/px on the tissue of every
 * slide.
 * |[
 * gst-launch-1.0 wsislidesrc location=train.lst rank=1 world-size=4 cycle=true ! \
 *     tissuemask ! queue ! patchsampler patches-per-slide=100 rank-quota=true ! \
 *     fakesink sync=false
 * ]| Plans exactly 100 × floor(slides / 4) patches on rank 1, refilling
 * from the rank's slides when some give fewer, then ends the stream.
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/slides ! tissuemask ! queue ! \
 *     patchsampler mode=multi-magnification target-mpps="0.25,0.5,1,2" \
 *     patch-size=224 ! patchinterleave ! patchreader ! queue ! \
 *     patchbatch ! fakesink sync=false
 * ]| Midnight's recipe: each patch at one of four resolutions.
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/slides cycle=true ! tissuemask ! \
 *     queue ! patchsampler mode=continuous-magnification mpp-min=0.25 \
 *     mpp-max=2 mpp-distribution=minmax ! patchinterleave ! patchreader ! \
 *     queue ! patchbatch ! fakesink sync=false
 * ]| Every patch at its own resolution between 0.25 and 2 µm/px, weighted
 * for the best worst-case transfer across resolutions.
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/slides cycle=true ! tissuemask ! \
 *     queue ! patchsampler replacement=false patches-per-slide=32 ! \
 *     patchinterleave ! patchreader ! queue ! patchbatch ! fakesink sync=false
 * ]| 32 non-overlapping patches per visit; a slide repeats a position only
 * after all of its tissue positions have been used.
 *
 * ## Annotation regions
 *
 * With `annotation-mode` (and-tissue or replace-tissue), patches lie only
 * inside the regions of `annotation-classes` that wsislidesrc read from
 * each slide's QuPath GeoJSON or ASAP XML file (docs/annotations.md): a
 * patch is inside when its centre is (holes excluded), or, with
 * `min-annotation-coverage` c > 0, when one region of its class covers at
 * least c of its footprint (exact polygon areas). Regions of
 * `annotation-exclude` veto any patch whose centre (coverage rule: any part)
 * lies in them. Each patch is labelled with its region's class — where
 * regions overlap, the one `annotation-overlap` picks (default: the
 * smallest) — and patchreader makes it the patch's label and the columns
 * `class` and `class-id` (the position in `annotation-classes`, the same on
 * every rank). `class-balance=uniform|weights` draws each patch's class
 * first (`class-weights` gives the shares), then a position in that class's
 * regions; the shares are corrected by what the stream has planned so far,
 * so a class missing from a slide is made up on later slides. Random mode
 * draws positions uniformly inside the regions; grid and
 * `replacement=false` keep their lattices and test each cell. Slides
 * without usable regions are skipped with a warning and counted in
 * `slides-without-regions`.
 *
 * |[
 * gst-launch-1.0 wsislidesrc location=/data/slides ! tissuemask ! queue ! \
 *     patchsampler annotation-mode=and-tissue annotation-classes=Tumor,Stroma \
 *     annotation-exclude=Ignore class-balance=uniform max-patches=256 ! \
 *     patchinterleave ! patchreader ! queue ! patchbatch ! fakesink sync=false
 * ]| Tumor and Stroma patches in equal shares from the regions outlined in
 * SLIDE.geojson next to each slide, never touching the Ignore regions.
 *
 * ## Differences from wsistream (the Python peer)
 *
 * The peer's multi-magnification reads `patch_size` pixels at the pyramid
 * level nearest each target, so its patches have the level's resolution,
 * not the target's; here every patch has the requested resolution (exact
 * footprint, resized by patchreader). The peer falls back to level 0 on a
 * slide without mpp; here it is skipped with a warning. The peer draws
 * continuous resolutions from 1000 grid points and solves minmax with
 * scipy's LP; here maxavg is sampled continuously (inverse CDF over 4096
 * cells) and minmax uses its closed form (ends within 1e-3 of the LP's).
 * The peer's without-replacement pools live for one visit; here they span
 * all visits and cycles, and no two patches of an epoch overlap.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <gst/wsi/wsierrorrelay.h>
#include <gst/wsi/wsilevel.h>
#include <gst/wsi/wsirecord.h>
#include <gst/wsi/wsirefusal.h>

#include <gst/wsi/wsiannotation.h>

#include "gstpatchsampler.h"
#include "gstpatchsamplerpriv.h"
#include "wsisamplerannotation.h"
#include "wsisamplerconfig.h"
#include "wsisamplercycle.h"
#include "wsisamplerfootprint.h"
#include "wsisamplerplan.h"
#include "wsisamplerproperties.h"
#include "wsisamplerregions.h"
#include "gstwsipatchelements.h"
#include "wsiclassplan.h"
#include "wsidelivery.h"
#include "wsisampling.h"
#include "wsisamplerquota.h"
#include "wsitilealign.h"

GST_DEBUG_CATEGORY (gst_patch_sampler_debug);
#define GST_CAT_DEFAULT gst_patch_sampler_debug

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (WSI_SLIDE_MEDIA_TYPE));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (WSI_PATCHES_MEDIA_TYPE));

#define gst_patch_sampler_parent_class parent_class
G_DEFINE_TYPE (GstPatchSampler, gst_patch_sampler, GST_TYPE_ELEMENT);

static void patch_sampler_element_init (GstPlugin * plugin);
GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (patchsampler, "patchsampler",
    GST_RANK_NONE, GST_TYPE_PATCH_SAMPLER, patch_sampler_element_init (plugin));

/* ---- the element ------------------------------------------------------- */

static void
patch_sampler_reset_stream (GstPatchSampler * self)
{
  self->next_sequence = 0;
  self->cycle_started = FALSE;
  self->cycle = 0;
  self->cycle_slides = 0;
  self->cycle_patches = 0;
  g_clear_pointer (&self->cycle_last_skip, g_free);
  g_hash_table_remove_all (self->warned_slides);
  self->warned_unlimited = FALSE;
  self->warned_unused_annotations = FALSE;
  memset (&self->class_counts, 0, sizeof (self->class_counts));
  memset (self->class_seen, 0, sizeof (self->class_seen));
  self->warned_unseen = FALSE;
  wsi_delivery_reset (self->delivery);
  g_atomic_int_set (&self->delivery_failed, 0);
  wsi_sampler_quota_reset (&self->stream_quota, GST_ELEMENT (self));
}

/* ---- finite runs: the quota (wsisamplerquota.h) ---------------------- */

static gboolean
patch_sampler_decide_quota (GstPatchSampler * self,
    const GstPatchSamplerSettings * settings, const GstStructure * meta)
{
  gint64 max_patches;
  gboolean rank_quota;

  GST_OBJECT_LOCK (self);
  max_patches = self->max_patches;
  rank_quota = self->rank_quota;
  GST_OBJECT_UNLOCK (self);

  if (!wsi_sampler_quota_decide (&self->stream_quota, GST_ELEMENT (self),
          max_patches, rank_quota, settings->patches_per_slide, meta))
    return FALSE;
  /* A finite quota counts delivered patches when downstream can tell. */
  if (self->stream_quota.quota >= 0)
    wsi_delivery_probe (self->delivery, self->srcpad);
  return TRUE;
}

static gint64
patch_sampler_quota_left_checked (GstPatchSampler * self)
{
  return wsi_sampler_quota_left_checked (&self->stream_quota,
      GST_ELEMENT (self), self->delivery, self->srcpad);
}

static GstFlowReturn
patch_sampler_finish_quota (GstPatchSampler * self)
{
  return wsi_sampler_quota_finish (&self->stream_quota, GST_ELEMENT (self),
      self->srcpad);
}

/* Reads the mask of @slide and plans its patches into *@out (NULL, with
 * @reason, when none qualifies). FALSE after posting an error. */
static gboolean
patch_sampler_plan_slide (GstPatchSampler * self,
    const GstPatchSamplerSettings * settings, const WsiSlideVisit * visit,
    const GstStructure * meta, GstBuffer * slide,
    const WsiRecordTemplate * tmpl, GstBuffer ** out, gint32 ** labels,
    gchar ** reason)
{
  WsiMppDistribution *mpps;
  WsiTissueMap map;

  *out = NULL;
  if (!patch_sampler_tissue_map (self, visit, slide, &map))
    return FALSE;
  mpps = patch_sampler_settings_mpp_distribution (settings);
  if (settings->class_plan->mode != WSI_ANNOTATION_OFF)
    *out = patch_sampler_plan_regions (self, settings, visit, meta, &map,
        tmpl, mpps, labels, reason);
  else
    *out = patch_sampler_plan (settings, visit, meta, &map, tmpl, mpps,
        reason);
  wsi_mpp_distribution_free (mpps);
  return TRUE;
}

static GstFlowReturn patch_sampler_chain_planned (GstPatchSampler * self,
    const GstPatchSamplerSettings * settings_in, GstBuffer * slide,
    GstStructure * meta, const WsiSlideVisit * visit_in);

static GstFlowReturn
gst_patch_sampler_chain (GstPad * pad, GstObject * parent, GstBuffer * slide)
{
  GstPatchSampler *self = GST_PATCH_SAMPLER (parent);
  GstPatchSamplerSettings settings;
  GstStructure *meta = wsi_slide_meta_get (slide);
  WsiSlideVisit visit;
  GstFlowReturn ret;

  if (self->stream_quota.reached) {
    /* Slides already on their way when the quota was met. */
    gst_buffer_unref (slide);
    return GST_FLOW_EOS;
  }
  if (meta == NULL || !patch_sampler_slide_visit_read (&visit, meta)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Received a slide buffer without a usable WsiSlideMeta (path, "
            "width and height are needed); is patchsampler fed by "
            "wsislidesrc or tissuemask?"), (NULL));
    gst_buffer_unref (slide);
    return GST_FLOW_ERROR;
  }
  if (!patch_sampler_check_cycle (self, &visit)) {
    gst_buffer_unref (slide);
    return GST_FLOW_ERROR;
  }
  if (!patch_sampler_settings_snapshot (self, &settings)) {
    wsi_class_plan_unref (settings.class_plan);
    gst_buffer_unref (slide);
    return GST_FLOW_ERROR;
  }
  ret = patch_sampler_chain_planned (self, &settings, slide, meta, &visit);
  wsi_class_plan_unref (settings.class_plan);
  return ret;
}

/* The rest of the chain, with the settings snapshot taken. */
static GstFlowReturn
patch_sampler_chain_planned (GstPatchSampler * self,
    const GstPatchSamplerSettings * settings_in, GstBuffer * slide,
    GstStructure * meta, const WsiSlideVisit * visit_in)
{
  GstPatchSamplerSettings settings = *settings_in;
  WsiSlideVisit visit = *visit_in;
  WsiRecordTemplate tmpl = { 0, };
  GstBuffer *out = NULL;
  gint32 *labels = NULL;
  gchar *reason = NULL;
  gint64 quota_left;
  GstFlowReturn ret;

  if (!self->stream_quota.decided
      && !patch_sampler_decide_quota (self, &settings, meta)) {
    gst_buffer_unref (slide);
    return GST_FLOW_ERROR;
  }
  quota_left = patch_sampler_quota_left_checked (self);
  if (quota_left == WSI_SAMPLER_QUOTA_INTERRUPTED) {
    gst_buffer_unref (slide);
    return GST_FLOW_FLUSHING;
  }
  if (quota_left == 0) {
    gst_buffer_unref (slide);
    return patch_sampler_finish_quota (self);
  }

  /* A new cycle: every slide of the rank has been seen once. */
  if (visit.cycle > 0)
    patch_sampler_warn_unseen_classes (self, settings.class_plan);
  if (visit.tissue_rejected) {
    patch_sampler_skip (self, &visit,
        g_strdup_printf ("%s: rejected by tissuemask", visit.path));
    gst_buffer_unref (slide);
    return GST_FLOW_OK;
  }
  if (!patch_sampler_footprint (self, &settings, &visit, meta, &tmpl,
          &reason)) {
    patch_sampler_skip (self, &visit, reason);
    gst_buffer_unref (slide);
    return GST_FLOW_OK;
  }

  if (!patch_sampler_plan_slide (self, &settings, &visit, meta, slide, &tmpl,
          &out, &labels, &reason)) {
    gst_buffer_unref (slide);
    return GST_FLOW_ERROR;
  }
  if (out == NULL) {
    patch_sampler_skip (self, &visit, reason);
    gst_buffer_unref (slide);
    return GST_FLOW_OK;
  }

  if (quota_left > 0)
    wsi_sampler_quota_truncate_plan (out, quota_left);
  GST_BUFFER_OFFSET (out) = GST_BUFFER_OFFSET (slide);
  wsi_slide_meta_copy (out, slide);
  gst_buffer_unref (slide);
  if (labels != NULL)
    patch_sampler_attach_classes (self, settings.class_plan, out, labels,
        gst_buffer_get_size (out) / sizeof (WsiPatchRecord));
  g_free (labels);

  self->cycle_patches += gst_buffer_get_size (out) / sizeof (WsiPatchRecord);
  wsi_delivery_planned (self->delivery, visit.cycle,
      gst_buffer_get_size (out) / sizeof (WsiPatchRecord));
  GST_OBJECT_LOCK (self);
  self->slides_sampled++;
  self->patches_planned += gst_buffer_get_size (out) / sizeof (WsiPatchRecord);
  self->stream_quota.planned +=
      gst_buffer_get_size (out) / sizeof (WsiPatchRecord);
  GST_OBJECT_UNLOCK (self);
  GST_LOG_OBJECT (self, "slide %u (%s) cycle %u: %" G_GSIZE_FORMAT
      " patches, footprint %u", visit.index, visit.path, visit.cycle,
      gst_buffer_get_size (out) / sizeof (WsiPatchRecord), tmpl.footprint);

  ret = gst_pad_push (self->srcpad, out);
  if (ret == GST_FLOW_OK) {
    quota_left = patch_sampler_quota_left_checked (self);
    if (quota_left == WSI_SAMPLER_QUOTA_INTERRUPTED)
      ret = GST_FLOW_FLUSHING;
    else if (quota_left == 0)
      ret = patch_sampler_finish_quota (self);
  }
  return ret;
}

/* Delivery reports from downstream (dropped patches, acknowledged checks)
 * stop here; they arrive from downstream threads. */
static gboolean
gst_patch_sampler_src_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstPatchSampler *self = GST_PATCH_SAMPLER (parent);
  guint lost_cycle = 0, forgotten;

  if (!wsi_delivery_handle_event (self->delivery, event, &lost_cycle))
    return gst_pad_event_default (pad, parent, event);
  gst_event_unref (event);
  if (lost_cycle > 0)
    patch_sampler_cycle_lost (self, lost_cycle - 1);
  if (wsi_delivery_take_forgotten (self->delivery, &forgotten))
    patch_sampler_warn_forgotten (self, forgotten);
  return TRUE;
}

static gboolean
gst_patch_sampler_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstPatchSampler *self = GST_PATCH_SAMPLER (parent);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:{
      /* Slides in, coordinates out: our caps never depend on theirs. */
      GstCaps *caps = gst_pad_get_pad_template_caps (self->srcpad);

      gst_event_unref (event);
      event = gst_event_new_caps (caps);
      gst_caps_unref (caps);
      return gst_pad_push_event (self->srcpad, event);
    }
    case GST_EVENT_FLUSH_START:
      wsi_delivery_set_flushing (self->delivery, TRUE);
      break;
    case GST_EVENT_FLUSH_STOP:
      patch_sampler_reset_stream (self);
      wsi_delivery_set_flushing (self->delivery, FALSE);
      break;
    case GST_EVENT_EOS:{
      WsiClassPlan *plan;

      if (self->stream_quota.reached) {
        /* EOS already went downstream when the quota was met. */
        gst_event_unref (event);
        return TRUE;
      }
      wsi_sampler_quota_check_met (&self->stream_quota, GST_ELEMENT (self),
          self->delivery, self->srcpad);
      GST_OBJECT_LOCK (self);
      plan = wsi_class_plan_ref (self->class_plan);
      GST_OBJECT_UNLOCK (self);
      patch_sampler_warn_unseen_classes (self, plan);
      wsi_class_plan_unref (plan);
      patch_sampler_check_stream_end (self);
      break;
    }
    default:
      break;
  }
  return gst_pad_event_default (pad, parent, event);
}

static GstStateChangeReturn
gst_patch_sampler_change_state (GstElement * element,
    GstStateChange transition)
{
  GstPatchSampler *self = GST_PATCH_SAMPLER (element);
  GstStateChangeReturn ret;

  if ((transition == GST_STATE_CHANGE_NULL_TO_READY
          || transition == GST_STATE_CHANGE_READY_TO_PAUSED)
      && !wsi_refusal_check (element, wsi_refusal_of (self)))
    return GST_STATE_CHANGE_FAILURE;
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    wsi_delivery_set_flushing (self->delivery, TRUE);
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
    wsi_delivery_set_flushing (self->delivery, FALSE);
    patch_sampler_reset_stream (self);
    GST_OBJECT_LOCK (self);
    self->slides_sampled = 0;
    self->slides_skipped = 0;
    self->patches_planned = 0;
    self->slides_without_regions = 0;
    GST_OBJECT_UNLOCK (self);
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  if (ret == GST_STATE_CHANGE_FAILURE)
    return ret;

  switch (transition) {
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      patch_sampler_reset_stream (self);
      break;
    case GST_STATE_CHANGE_READY_TO_NULL:
      g_clear_pointer (&self->integral, g_free);
      self->integral_len = 0;
      break;
    default:
      break;
  }
  return ret;
}

/* A new plan from the annotation properties (object lock held): slides
 * already being planned keep the reference they took. */
static void
patch_sampler_rebuild_class_plan (GstPatchSampler * self)
{
  wsi_class_plan_unref (self->class_plan);
  self->class_plan = patch_sampler_annotation_plan (&self->annotation);
}

static void
gst_patch_sampler_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstPatchSampler *self = GST_PATCH_SAMPLER (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODE:
      self->settings.mode = g_value_get_enum (value);
      break;
    case PROP_PATCH_SIZE:
      self->settings.patch_size = g_value_get_uint (value);
      break;
    case PROP_TARGET_MPP:{
      gdouble mpp = g_value_get_double (value);

      /* The range check lets NaN through. */
      if (isnan (mpp)) {
        patch_sampler_refuse_number (self, "target-mpp", mpp, "a number >= 0 (µm/px)");
      } else {
        self->settings.target_mpp = mpp;
        wsi_refusal_forget (wsi_refusal_of (self), "target-mpp");
      }
      break;
    }
    case PROP_LEVEL:
      self->settings.level = g_value_get_int (value);
      break;
    case PROP_PATCHES_PER_SLIDE:{
      gint n = g_value_get_int (value);

      if (n == 0) {
        patch_sampler_refuse_value (self, "patches-per-slide", "0", "a count > 0, or -1 "
            "in grid mode for every position; 0 would plan nothing");
      } else {
        self->settings.patches_per_slide = n;
        wsi_refusal_forget (wsi_refusal_of (self), "patches-per-slide");
      }
      break;
    }
    case PROP_MIN_TISSUE:{
      gdouble fraction = g_value_get_double (value);

      if (isnan (fraction)) {
        patch_sampler_refuse_number (self, "min-tissue", fraction, "a number in 0..1");
      } else {
        self->settings.min_tissue = fraction;
        wsi_refusal_forget (wsi_refusal_of (self), "min-tissue");
      }
      break;
    }
    case PROP_REPLACEMENT:
      self->settings.replacement = g_value_get_boolean (value);
      break;
    case PROP_STRIDE:
      self->settings.stride = g_value_get_uint (value);
      break;
    case PROP_MAX_ATTEMPTS:
      self->settings.max_attempts = g_value_get_uint (value);
      break;
    case PROP_ALIGN:
      self->settings.align = g_value_get_enum (value);
      break;
    case PROP_MAX_PATCHES:
      self->max_patches = g_value_get_int64 (value);
      break;
    case PROP_RANK_QUOTA:
      self->rank_quota = g_value_get_boolean (value);
      break;
    case PROP_TARGET_MPPS:
      patch_sampler_set_mpp_list (self, "target-mpps", g_value_get_string (value),
          self->settings.mpps, &self->settings.n_mpps, FALSE);
      break;
    case PROP_MPP_WEIGHTS:
      patch_sampler_set_mpp_list (self, "mpp-weights", g_value_get_string (value),
          self->settings.mpp_weights, &self->settings.n_weights, TRUE);
      break;
    case PROP_MPP_MIN:
      patch_sampler_set_positive (self, "mpp-min", g_value_get_double (value),
          &self->settings.mpp_min);
      break;
    case PROP_MPP_MAX:
      patch_sampler_set_positive (self, "mpp-max", g_value_get_double (value),
          &self->settings.mpp_max);
      break;
    case PROP_MPP_DISTRIBUTION:
      self->settings.mpp_distribution = g_value_get_enum (value);
      break;
    case PROP_MAXAVG_LAMBDA:
      patch_sampler_set_positive (self, "maxavg-lambda", g_value_get_double (value),
          &self->settings.maxavg_lambda);
      break;
    default:
      if (prop_id >= PROP_ANNOTATION_MODE && prop_id <= PROP_CLASS_WEIGHTS)
        patch_sampler_annotation_set (&self->annotation,
            prop_id - PROP_ANNOTATION_MODE, value);
      else
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  if (prop_id >= PROP_ANNOTATION_MODE)
    patch_sampler_rebuild_class_plan (self);
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_sampler_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstPatchSampler *self = GST_PATCH_SAMPLER (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODE:
      g_value_set_enum (value, self->settings.mode);
      break;
    case PROP_PATCH_SIZE:
      g_value_set_uint (value, self->settings.patch_size);
      break;
    case PROP_TARGET_MPP:
      g_value_set_double (value, self->settings.target_mpp);
      break;
    case PROP_LEVEL:
      g_value_set_int (value, self->settings.level);
      break;
    case PROP_PATCHES_PER_SLIDE:
      g_value_set_int (value, self->settings.patches_per_slide);
      break;
    case PROP_MIN_TISSUE:
      g_value_set_double (value, self->settings.min_tissue);
      break;
    case PROP_REPLACEMENT:
      g_value_set_boolean (value, self->settings.replacement);
      break;
    case PROP_STRIDE:
      g_value_set_uint (value, self->settings.stride);
      break;
    case PROP_ALIGN:
      g_value_set_enum (value, self->settings.align);
      break;
    case PROP_MAX_ATTEMPTS:
      g_value_set_uint (value, self->settings.max_attempts);
      break;
    case PROP_SLIDES_SAMPLED:
      g_value_set_uint64 (value, self->slides_sampled);
      break;
    case PROP_SLIDES_SKIPPED:
      g_value_set_uint64 (value, self->slides_skipped);
      break;
    case PROP_PATCHES_PLANNED:
      g_value_set_uint64 (value, self->patches_planned);
      break;
    case PROP_MAX_PATCHES:
      g_value_set_int64 (value, self->max_patches);
      break;
    case PROP_RANK_QUOTA:
      g_value_set_boolean (value, self->rank_quota);
      break;
    case PROP_QUOTA:
      g_value_set_int64 (value, self->stream_quota.quota);
      break;
    case PROP_TARGET_MPPS:
      g_value_take_string (value, patch_sampler_format_mpp_list (self->settings.mpps,
              self->settings.n_mpps));
      break;
    case PROP_MPP_WEIGHTS:
      g_value_take_string (value, patch_sampler_format_mpp_list (self->settings.mpp_weights,
              self->settings.n_weights));
      break;
    case PROP_MPP_MIN:
      g_value_set_double (value, self->settings.mpp_min);
      break;
    case PROP_MPP_MAX:
      g_value_set_double (value, self->settings.mpp_max);
      break;
    case PROP_MPP_DISTRIBUTION:
      g_value_set_enum (value, self->settings.mpp_distribution);
      break;
    case PROP_MAXAVG_LAMBDA:
      g_value_set_double (value, self->settings.maxavg_lambda);
      break;
    case PROP_SLIDES_WITHOUT_REGIONS:
      g_value_set_uint64 (value, self->slides_without_regions);
      break;
    default:
      if (prop_id >= PROP_ANNOTATION_MODE && prop_id <= PROP_CLASS_WEIGHTS)
        patch_sampler_annotation_get (&self->annotation,
            prop_id - PROP_ANNOTATION_MODE, value);
      else
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_patch_sampler_finalize (GObject * object)
{
  GstPatchSampler *self = GST_PATCH_SAMPLER (object);

  g_free (self->cycle_last_skip);
  g_free (self->integral);
  patch_sampler_annotation_clear (&self->annotation);
  wsi_class_plan_unref (self->class_plan);
  g_hash_table_unref (self->warned_slides);
  wsi_delivery_free (self->delivery);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_patch_sampler_class_init (GstPatchSamplerClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->set_property = gst_patch_sampler_set_property;
  gobject_class->get_property = gst_patch_sampler_get_property;
  gobject_class->finalize = gst_patch_sampler_finalize;

  wsi_sampler_properties_install (gobject_class);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Whole-slide patch sampler", "Filter/Analyzer",
      "Plans patch coordinates (random, grid, multi- or continuous "
      "magnification, on tissue) for each whole-slide image",
      "gst-wsi developers");

  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_patch_sampler_change_state);

  /* numbers outside their range refuse the start (wsirefusal.h) */
  wsi_refusal_class_init (GST_ELEMENT_CLASS (klass));
  /* every error of ours ends the application's main loop, however early
   * it comes (wsierrorrelay.h) */
  wsi_error_relay_class_init (element_class);
}

static void
gst_patch_sampler_init (GstPatchSampler * self)
{
  self->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_patch_sampler_chain));
  gst_pad_set_event_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_patch_sampler_sink_event));
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);

  self->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  gst_pad_set_event_function (self->srcpad,
      GST_DEBUG_FUNCPTR (gst_patch_sampler_src_event));
  gst_pad_use_fixed_caps (self->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  self->settings.mode = DEFAULT_MODE;
  self->settings.align = DEFAULT_ALIGN;
  self->settings.patch_size = DEFAULT_PATCH_SIZE;
  self->settings.target_mpp = DEFAULT_TARGET_MPP;
  self->settings.level = DEFAULT_LEVEL;
  self->settings.patches_per_slide = DEFAULT_PATCHES_PER_SLIDE;
  self->settings.min_tissue = DEFAULT_MIN_TISSUE;
  self->settings.replacement = DEFAULT_REPLACEMENT;
  self->settings.stride = DEFAULT_STRIDE;
  self->settings.max_attempts = DEFAULT_MAX_ATTEMPTS;
  self->max_patches = DEFAULT_MAX_PATCHES;
  self->rank_quota = DEFAULT_RANK_QUOTA;
  self->stream_quota.quota = WSI_SAMPLER_NO_QUOTA;
  patch_sampler_set_mpp_list (self, "target-mpps", DEFAULT_TARGET_MPPS, self->settings.mpps,
      &self->settings.n_mpps, FALSE);
  self->settings.n_weights = 0;
  self->settings.mpp_min = DEFAULT_MPP_MIN;
  self->settings.mpp_max = DEFAULT_MPP_MAX;
  self->settings.mpp_distribution = DEFAULT_MPP_DISTRIBUTION;
  self->settings.maxavg_lambda = DEFAULT_MAXAVG_LAMBDA;
  patch_sampler_annotation_init (&self->annotation);
  patch_sampler_rebuild_class_plan (self);
  self->warned_slides = g_hash_table_new (g_direct_hash, g_direct_equal);
  self->delivery = wsi_delivery_new ();
}

/* One-time setup, whichever registration comes first. */
static void
patch_sampler_element_init (GstPlugin * plugin)
{
  static gsize init = 0;

  if (g_once_init_enter (&init)) {
    GST_DEBUG_CATEGORY_INIT (gst_patch_sampler_debug, "patchsampler", 0,
        "whole-slide patch sampler");
    wsipatch_element_init (plugin);
    g_once_init_leave (&init, 1);
  }
}
