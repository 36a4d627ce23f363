/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsisamplerplan.c: see wsisamplerplan.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>
#include <gst/wsi/wsilevel.h>
#include <gst/wsi/wsirecord.h>

#include "wsisamplerplan.h"
#include "wsitilealign.h"

#define GST_CAT_DEFAULT gst_patch_sampler_debug

/* ---- records ----------------------------------------------------------- */

/* Writes @samples as the records of one slide visit into a new buffer.
 * sequence stays 0: patchinterleave, which decides the stream order, is its
 * one writer. */
GstBuffer *
patch_sampler_records_from_samples (const WsiSample * samples, guint n,
    const WsiRecordTemplate * tmpl)
{
  GstBuffer *out = gst_buffer_new_allocate (NULL,
      (gsize) n * sizeof (WsiPatchRecord), NULL);
  gint64 now = (gint64) gst_util_get_timestamp ();
  WsiPatchRecord *records;
  GstMapInfo info;
  guint i;

  gst_buffer_map (out, &info, GST_MAP_WRITE);
  records = (WsiPatchRecord *) info.data;
  for (i = 0; i < n; i++) {
    WsiPatchRecord *r = &records[i];

    r->sequence = 0;
    r->x = samples[i].x;
    r->y = samples[i].y;
    r->created_ns = now;
    r->slide_index = tmpl->slide_index;
    r->cycle = tmpl->cycle;
    r->footprint = samples[i].footprint;
    r->out_size = tmpl->out_size;
    r->level = WSI_LEVEL_UNSET;
    r->read_size = 0;
    r->out_mpp = samples[i].out_mpp;
    r->tissue_fraction = samples[i].tissue_fraction;
  }
  gst_buffer_unmap (out, &info);
  return out;
}

/* ---- slide description ------------------------------------------------- */

gboolean
patch_sampler_slide_visit_read (WsiSlideVisit * visit, const GstStructure * meta)
{
  memset (visit, 0, sizeof (*visit));
  visit->path = gst_structure_get_string (meta, "path");
  if (visit->path == NULL)
    visit->path = "(unnamed slide)";
  if (!gst_structure_get_int64 (meta, "width", &visit->width) ||
      !gst_structure_get_int64 (meta, "height", &visit->height))
    return FALSE;
  gst_structure_get_uint (meta, "index", &visit->index);
  gst_structure_get_uint (meta, "cycle", &visit->cycle);
  gst_structure_get_uint64 (meta, "seed", &visit->seed);
  gst_structure_get_double (meta, "mpp-x", &visit->mpp_x);
  if (!gst_structure_get_int (meta, "level-count", &visit->level_count))
    visit->level_count = 1;
  gst_structure_get_int (meta, "overview-width", &visit->overview_width);
  gst_structure_get_int (meta, "overview-height", &visit->overview_height);
  gst_structure_get_boolean (meta, "has-overview", &visit->has_overview);
  gst_structure_get_boolean (meta, "has-mask", &visit->has_mask);
  gst_structure_get_boolean (meta, "tissue-rejected", &visit->tissue_rejected);
  return TRUE;
}

/* Maps @size bytes of @slide from @offset for reading; *@skip gets where
 * they start in @info. Only the memories holding them are mapped: a
 * whole-buffer map of a slide buffer (the overview's memory, then the
 * mask's) merged both into a new 3 MB block, a copy per new slide
 * (issue 23). */
static gboolean
map_bytes_of (GstBuffer * slide, gsize offset, gsize size, GstMapInfo * info,
    gsize * skip)
{
  guint idx, length;

  if (!gst_buffer_find_memory (slide, offset, size, &idx, &length, skip))
    return FALSE;
  return gst_buffer_map_range (slide, idx, (gint) length, info, GST_MAP_READ);
}

/* Points @map at the mask of @slide (overview RGB, then mask), building
 * the integral image in the element's scratch. */
gboolean
patch_sampler_tissue_map (GstPatchSampler * self, const WsiSlideVisit * visit,
    GstBuffer * slide, WsiTissueMap * map)
{
  gint64 mw = visit->overview_width, mh = visit->overview_height;
  gsize overview_bytes, needed, integral_len, size, skip;
  GstMapInfo info;

  wsi_tissue_map_init (map, visit->width, visit->height);
  if (!visit->has_mask)
    return TRUE;

  if (mw <= 0 || mh <= 0 || (guint64) mw * mh > G_MAXUINT32) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("The tissue mask of slide \"%s\" has an impossible size "
            "(%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT ").", visit->path,
            mw, mh), (NULL));
    return FALSE;
  }
  overview_bytes = visit->has_overview ? (gsize) (mw * mh * 3) : 0;
  needed = overview_bytes + (gsize) (mw * mh);
  size = gst_buffer_get_size (slide);
  if (size < needed) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("The buffer of slide \"%s\" holds %" G_GSIZE_FORMAT " bytes, but "
            "its %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " overview and mask "
            "need %" G_GSIZE_FORMAT ".", visit->path, size, mw, mh, needed),
        (NULL));
    return FALSE;
  }
  if (!map_bytes_of (slide, overview_bytes, (gsize) (mw * mh), &info, &skip)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Could not read the buffer of slide \"%s\".", visit->path), (NULL));
    return FALSE;
  }

  integral_len = (gsize) ((mw + 1) * (mh + 1));
  if (integral_len > self->integral_len) {
    g_free (self->integral);
    self->integral = g_new (guint32, integral_len);
    self->integral_len = integral_len;
  }
  /* the map keeps the integral image only: the mask can be unmapped */
  wsi_tissue_map_build (map, self->integral, info.data + skip, mw, mh);
  gst_buffer_unmap (slide, &info);
  return TRUE;
}


/* The distribution each patch of a magnification mode draws its
 * resolution from (NULL for the fixed-resolution modes). */
WsiMppDistribution *
patch_sampler_settings_mpp_distribution (const GstPatchSamplerSettings * settings)
{
  if (settings->mode == GST_PATCH_SAMPLER_MODE_MULTI_MAGNIFICATION)
    return wsi_mpp_distribution_new_discrete (settings->mpps,
        settings->n_weights ? settings->mpp_weights : NULL, settings->n_mpps);
  if (settings->mode == GST_PATCH_SAMPLER_MODE_CONTINUOUS_MAGNIFICATION)
    return wsi_mpp_distribution_new_continuous ((WsiMppDensity)
        settings->mpp_distribution, settings->mpp_min, settings->mpp_max,
        settings->maxavg_lambda);
  return NULL;
}

void
patch_sampler_sampling_request_init (WsiSamplingRequest * req_out,
    const GstPatchSamplerSettings * settings, const WsiSlideVisit * visit,
    const WsiRecordTemplate * tmpl, const WsiMppDistribution * mpps)
{
  WsiSamplingRequest req = { 0, };

  req.mode = (WsiSamplingMode) settings->mode;
  req.out_size = tmpl->out_size;
  req.footprint = tmpl->footprint;
  req.out_mpp = tmpl->out_mpp;
  req.slide_mpp = visit->mpp_x;
  req.mpps = mpps;
  req.n_wanted = settings->patches_per_slide;
  req.min_tissue = settings->min_tissue;
  req.replacement = settings->replacement;
  req.stride = settings->stride;
  req.max_attempts = settings->max_attempts;
  req.seed = visit->seed;
  req.slide_index = visit->index;
  req.visit = visit->cycle;
  *req_out = req;
}

/* The records of @samples in a new buffer (aligned to tiles when asked);
 * *@labels gets each record's class (NULL when @labelled is FALSE). */
GstBuffer *
patch_sampler_records (const GstPatchSamplerSettings * settings,
    const GstStructure * meta, WsiSample * samples, guint n,
    const WsiRecordTemplate * tmpl, gboolean labelled, gint32 ** labels)
{
  GstBuffer *out = patch_sampler_records_from_samples (samples, n, tmpl);
  guint i;

  *labels = NULL;
  if (labelled) {
    *labels = g_new (gint32, n);
    for (i = 0; i < n; i++)
      (*labels)[i] = samples[i].label;
  }
  g_free (samples);
  if (settings->align == GST_PATCH_SAMPLER_ALIGN_TILE)
    wsi_tile_align_records (out, meta);
  return out;
}

/* Plans one slide visit with wsisampling and writes the records into a new
 * buffer; returns NULL (and sets @reason) when none was found. */
GstBuffer *
patch_sampler_plan (const GstPatchSamplerSettings * settings,
    const WsiSlideVisit * visit, const GstStructure * meta,
    const WsiTissueMap * map, const WsiRecordTemplate * tmpl,
    const WsiMppDistribution * mpps, gchar ** reason)
{
  WsiSamplingRequest req;
  WsiSample *samples;
  gint32 *labels;
  guint n;

  patch_sampler_sampling_request_init (&req, settings, visit, tmpl, mpps);
  samples = wsi_sampling_plan (&req, map, &n);
  if (samples == NULL) {
    *reason = g_strdup_printf ("%s: no position with tissue share >= %g",
        visit->path, settings->min_tissue);
    return NULL;
  }
  return patch_sampler_records (settings, meta, samples, n, tmpl, FALSE,
      &labels);
}
