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

#include <math.h>
#include <string.h>
#include <glib/gstdio.h>

#include <gst/wsi/wsievent.h>
#include <gst/wsi/wsirecord.h>

#include "wsislidesrcvisit.h"
#include "wsislidesrcannotations.h"
#include "wsislidesrcplan.h"
#include "wsislidesrcreports.h"
#include "wsioverview.h"
#include "wsislide.h"

#define GST_CAT_DEFAULT gst_wsi_slide_src_debug

/* ---- Slide description ------------------------------------------------- */

/* Longest side @longest, aspect kept, never larger than level 0. */
static void
overview_size (gint64 width, gint64 height, gint longest, gint * ow, gint * oh)
{
  if (MAX (width, height) <= longest) {
    *ow = (gint) width;
    *oh = (gint) height;
  } else if (width >= height) {
    *ow = longest;
    *oh = (gint) CLAMP (llround ((gdouble) height * longest / width), 1,
        longest);
  } else {
    *oh = longest;
    *ow = (gint) CLAMP (llround ((gdouble) width * longest / height), 1,
        longest);
  }
}

/* The pyramid geometry, one GstValueArray entry per level (wsirecord.h):
 * typed values, so consumers read numbers, never parse text. */
static void
describe_levels (GstStructure * s, const WsiSlide * slide)
{
  guint n = (guint) slide->level_count;

  wsi_structure_set_double_array (s, "level-downsamples",
      slide->level_downsample, n);
  wsi_structure_set_int64_array (s, "level-widths", slide->level_width, n);
  wsi_structure_set_int64_array (s, "level-heights", slide->level_height, n);
  wsi_structure_set_int64_array (s, "level-tile-widths",
      slide->level_tile_width, n);
  wsi_structure_set_int64_array (s, "level-tile-heights",
      slide->level_tile_height, n);
}

/* What is true of the slide whichever visit it is: cached by path. */
static GstStructure *
describe_slide (GstWsiSlideSrc * self, const WsiSlide * slide)
{
  gdouble mpp_x = slide->mpp_x, mpp_y = slide->mpp_y;
  const gchar *mpp_source = slide->mpp_source;
  GstStructure *s;
  gint ow, oh;

  if (!(mpp_x > 0.0 && mpp_y > 0.0) && self->run.default_mpp > 0.0) {
    mpp_x = mpp_y = self->run.default_mpp;
    mpp_source = MPP_SOURCE_DEFAULT;
  }
  overview_size (slide->level_width[0], slide->level_height[0],
      self->run.thumbnail_size, &ow, &oh);
  s = gst_structure_new (WSI_SLIDE_META_NAME,
      "vendor", G_TYPE_STRING, slide->vendor ? slide->vendor : "",
      "width", G_TYPE_INT64, slide->level_width[0],
      "height", G_TYPE_INT64, slide->level_height[0],
      "level-count", G_TYPE_INT, slide->level_count,
      "backend", G_TYPE_STRING, slide->backend->name,
      "mpp-x", G_TYPE_DOUBLE, mpp_x,
      "mpp-y", G_TYPE_DOUBLE, mpp_y,
      "mpp-source", G_TYPE_STRING, mpp_source,
      "objective-power", G_TYPE_DOUBLE, slide->objective_power,
      "icc-profile-size", G_TYPE_UINT64, slide->icc_profile_size,
      "icc-profile-sha256", G_TYPE_STRING, slide->icc_profile_sha256 != NULL
      ? slide->icc_profile_sha256 : "",
      "overview-width", G_TYPE_INT, ow,
      "overview-height", G_TYPE_INT, oh, NULL);
  describe_levels (s, slide);
  GST_DEBUG_OBJECT (self, "%s: %s backend, vendor %s, %d levels",
      slide->path, slide->backend->name, slide->vendor, slide->level_count);
  return s;
}

/* ---- One slide visit ---------------------------------------------------- */

/* The identity of @entry's file for masks kept across runs (tissuemask's
 * mask-cache-dir): its size and mtime to the nanosecond, so a rewrite or a
 * touch makes a new key. NULL for a remote object, whose validator is only
 * known once it is opened: its mask is not looked up on disk. */
static gchar *
entry_identity (const WsiSlideEntry * entry)
{
  GStatBuf st;

  if (wsi_location_is_remote (entry->path) || g_stat (entry->path, &st) != 0)
    return NULL;
  return g_strdup_printf ("%" G_GUINT64_FORMAT ":%" G_GINT64_FORMAT ".%09ld",
      (guint64) st.st_size, (gint64) st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

/* TRUE when a downstream element (tissuemask) already holds the mask of
 * @entry (file @identity), so the overview need not be decoded again. */
static gboolean
downstream_has_mask (GstWsiSlideSrc * self, const WsiSlideEntry * entry,
    const gchar * identity)
{
  GstQuery *query = wsi_query_new_mask_cached (entry->display);
  gboolean cached = FALSE;

  wsi_query_set_mask_source (query, identity, self->run.thumbnail_size);
  if (gst_pad_peer_query (GST_BASE_SRC_PAD (self), query))
    wsi_query_parse_mask_cached (query, NULL, &cached, NULL);
  gst_query_unref (query);
  return cached;
}

static gboolean
fill_overview (GstWsiSlideSrc * self, GstBuffer * buffer, WsiSlide * slide,
    gint ow, gint oh, GError ** error)
{
  GstMapInfo map;
  gboolean ok;
  gint level;

  if (!gst_buffer_map (buffer, &map, GST_MAP_WRITE)) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
        "cannot map a %dx%d overview buffer", ow, oh);
    return FALSE;
  }
  level = wsi_overview_level (slide, ow, oh);
  GST_DEBUG_OBJECT (self, "overview %dx%d of %s from level %d (%"
      G_GINT64_FORMAT "x%" G_GINT64_FORMAT ")", ow, oh, slide->path, level,
      slide->level_width[level], slide->level_height[level]);
  /* Fails without an error when flushing starts: the caller sees the flag. */
  ok = wsi_overview_read (slide, ow, oh, &self->flushing, map.data, error);
  gst_buffer_unmap (buffer, &map);
  return ok;
}

static void
attach_slide_meta (GstWsiSlideSrc * self, GstBuffer * buffer,
    const WsiSlideEntry * entry, const GstStructure * description,
    gboolean has_overview)
{
  GstStructure *meta = wsi_slide_meta_add (buffer);
  /* The exact bytes of the file name, losslessly (a file URI is ASCII); a
   * URL as shown (credentials stay in the read layer, see
   * wsi_location_remember). */
  gchar *uri = wsi_location_is_remote (entry->path) ?
      g_strdup (entry->display) : g_filename_to_uri (entry->path, NULL, NULL);

  gst_structure_foreach (description, wsi_structure_copy_field, meta);
  gst_structure_set (meta,
      "path", G_TYPE_STRING, entry->display,
      "uri", G_TYPE_STRING, uri,
      "index", G_TYPE_UINT, entry->index,
      "cycle", G_TYPE_UINT, self->cycle_number,
      "seed", G_TYPE_UINT64, self->run.seed,
      "label", G_TYPE_STRING, entry->label,
      "rank", G_TYPE_UINT, (guint) self->run.rank,
      "world-size", G_TYPE_UINT, (guint) self->run.world_size,
      "rank-slides", G_TYPE_UINT, self->entries->len,
      "rank-slides-min", G_TYPE_UINT, self->smallest_rank_slides,
      "has-overview", G_TYPE_BOOLEAN, has_overview,
      "has-mask", G_TYPE_BOOLEAN, FALSE,
      "tissue-fraction", G_TYPE_DOUBLE, -1.0,
      "tissue-rejected", G_TYPE_BOOLEAN, FALSE, NULL);
  wsi_meta_set_columns (meta, (const gchar * const *) self->column_names,
      (const gchar * const *) entry->values);
  g_free (uri);
}

/* ---- Slide preparation ahead of need ------------------------------------ */

void
slide_prep_free (SlidePrep * prep)
{
  g_clear_pointer (&prep->description, gst_structure_free);
  g_free (prep->declined);
  g_free (prep->damaged);
  g_free (prep->identity);
  gst_clear_buffer (&prep->buffer);
  g_clear_error (&prep->error);
  g_free (prep);
}

/* Runs on a worker (or inline): opens the slide when its description or
 * its overview is needed and closes it again (patchreader keeps its own
 * handles). Touches only @prep and settings fixed while streaming. */
void
slide_prep_run (gpointer data, gpointer user_data)
{
  SlidePrep *prep = data;
  GstWsiSlideSrc *self = prep->self;
  gboolean describe = prep->describe && prep->description == NULL;
  WsiSlide *slide;

  gint64 start = g_get_monotonic_time (), opened;

  prep->cancelled = FALSE;
  if (!describe && !prep->overview)
    return;
  slide = wsi_slide_open (prep->entry->path, WSI_BACKEND_AUTO, &prep->error);
  opened = g_get_monotonic_time ();
  prep->open_ns += (guint64) (opened - start) * 1000;
  if (slide == NULL)
    return;
  if (describe) {
    prep->description = describe_slide (self, slide);
    prep->declined = g_strdup (slide->declined);
    prep->damaged = g_strdup (slide->damaged);
    gst_structure_get_int (prep->description, "overview-width", &prep->ow);
    gst_structure_get_int (prep->description, "overview-height", &prep->oh);
  }
  if (prep->overview) {
    prep->buffer = gst_buffer_new_allocate (NULL,
        (gsize) prep->ow * prep->oh * 3, NULL);
    if (!fill_overview (self, prep->buffer, slide, prep->ow, prep->oh,
            &prep->error)) {
      gst_clear_buffer (&prep->buffer);
      /* No error: the flushing flag stopped it. */
      prep->cancelled = prep->error == NULL;
    }
    prep->overview_ns += (guint64) (g_get_monotonic_time () - opened) * 1000;
  }
  wsi_slide_close (slide);
}

static SlidePrep *
slide_prep_new (GstWsiSlideSrc * self, WsiSlideEntry * entry, guint cycle)
{
  GstStructure *description =
      g_hash_table_lookup (self->descriptions, entry->path);
  SlidePrep *prep = g_new0 (SlidePrep, 1);

  prep->self = self;
  prep->entry = entry;
  prep->cycle = cycle;
  prep->describe = description == NULL;
  prep->identity = entry_identity (entry);
  prep->overview = !downstream_has_mask (self, entry, prep->identity);
  if (description != NULL) {
    gst_structure_get_int (description, "overview-width", &prep->ow);
    gst_structure_get_int (description, "overview-height", &prep->oh);
  }
  return prep;
}

/* Plans visits until #wsislidesrc:prepare-ahead of them are being prepared
 * (one, run inline by the caller, when it is 0). */
static void
plan_ahead (GstWsiSlideSrc * self)
{
  guint ahead = MAX (self->run.prepare_ahead, 1);
  WsiSlideEntry *entry;
  guint cycle;

  while (wsi_prep_queue_length (self->prep) < ahead
      && slide_src_plan_next_visit (self, &entry, &cycle))
    wsi_prep_queue_push (self->prep, slide_prep_new (self, entry, cycle));
}

/* A value of self->descriptions: NULL once dropped (one-pass streams). */
void
slide_src_description_free (gpointer description)
{
  if (description != NULL)
    gst_structure_free (description);
}

/* The first visit of a slide: keep its description and say what it is. */
static GstStructure *
remember_description (GstWsiSlideSrc * self, SlidePrep * prep)
{
  WsiSlideEntry *entry = prep->entry;
  GstStructure *description = NULL;
  gboolean seen = g_hash_table_lookup_extended (self->descriptions,
      entry->path, NULL, (gpointer *) & description);

  if (description != NULL)
    return description;
  description = g_steal_pointer (&prep->description);
  if (!seen) {
    slide_src_warn_declined (self, entry, prep->declined, description);
    slide_src_warn_damaged (self, entry, prep->damaged);
  }
  slide_src_describe_annotations (self, entry, description);
  g_hash_table_insert (self->descriptions, g_strdup (entry->path),
      description);
  if (!seen) {
    g_mutex_lock (&self->lock);
    self->slides_opened++;
    g_mutex_unlock (&self->lock);
  }
  return description;
}

/* The buffer of a prepared visit, or NULL with @error set. A mask that was
 * cached downstream when the visit was planned may have left that cache
 * since: the overview is then read now. */
GstBuffer *
slide_src_make_slide_buffer (GstWsiSlideSrc * self, SlidePrep * prep,
    GError ** error)
{
  GstStructure *description;
  GstBuffer *buffer;
  gboolean has_overview;

  if (prep->error == NULL && prep->buffer == NULL
      && !downstream_has_mask (self, prep->entry, prep->identity)) {
    prep->overview = TRUE;
    slide_prep_run (prep, NULL);
  }
  if (prep->error != NULL) {
    g_propagate_error (error, g_steal_pointer (&prep->error));
    return NULL;
  }
  if (prep->cancelled)
    return NULL;                /* flushing: the caller sees the flag */

  description = remember_description (self, prep);
  has_overview = prep->buffer != NULL;
  if (has_overview)
    buffer = g_steal_pointer (&prep->buffer);
  else {
    GST_DEBUG_OBJECT (self, "mask of %s cached downstream: no overview",
        prep->entry->display);
    buffer = gst_buffer_new ();
  }
  attach_slide_meta (self, buffer, prep->entry, description, has_overview);
  /* the meta holds a copy; a one-pass stream will not visit it again */
  if (!self->run.cycle)
    g_hash_table_insert (self->descriptions, g_strdup (prep->entry->path),
        NULL);
  /* Not part of the stream's content: timings for wsistats. */
  gst_structure_set (wsi_slide_meta_get (buffer),
      "prep-open-ns", G_TYPE_UINT64, prep->open_ns,
      "prep-overview-ns", G_TYPE_UINT64, prep->overview_ns,
      "prep-wait-ns", G_TYPE_UINT64, prep->wait_ns, NULL);
  /* What tissuemask keys the masks it keeps across runs on. */
  gst_structure_set (wsi_slide_meta_get (buffer),
      "source-identity", G_TYPE_STRING, prep->identity ? prep->identity : "",
      "thumbnail-size", G_TYPE_INT, self->run.thumbnail_size, NULL);
  return buffer;
}

/* The next prepared visit (it stays first in the queue until popped), or
 * NULL at the end of the plan. A visit a flush interrupted is prepared
 * again here once the flush is over. */
SlidePrep *
slide_src_next_prepared (GstWsiSlideSrc * self)
{
  WsiSlideEntry *entry;
  SlidePrep *prep;
  guint cycle;

  if (self->prep != NULL) {
    gint64 start;

    plan_ahead (self);
    start = g_get_monotonic_time ();
    prep = wsi_prep_queue_wait_head (self->prep);
    if (prep != NULL)
      prep->wait_ns += (guint64) (g_get_monotonic_time () - start) * 1000;
  } else {
    /* prepare-ahead=0: each visit on this thread, when it is needed. */
    if (self->inline_prep == NULL
        && slide_src_plan_next_visit (self, &entry, &cycle)) {
      self->inline_prep = slide_prep_new (self, entry, cycle);
      slide_prep_run (self->inline_prep, NULL);
    }
    prep = self->inline_prep;
  }
  if (prep != NULL && prep->cancelled
      && !g_atomic_int_get (&self->flushing))
    slide_prep_run (prep, NULL);
  return prep;
}

/* Takes the visit slide_src_next_prepared() returned out of the queue. */
SlidePrep *
slide_src_pop_prepared (GstWsiSlideSrc * self)
{
  if (self->prep == NULL)
    return g_steal_pointer (&self->inline_prep);
  return wsi_prep_queue_pop (self->prep);
}

/* prepare-ahead=-1: the slides patchinterleave's pool holds (its
 * pool-size), else FALLBACK_PREPARE_AHEAD. */
guint
slide_src_downstream_pool_size (GstWsiSlideSrc * self)
{
  GstQuery *query = wsi_query_new_pool_size ();
  guint pool_size = 0;

  if (gst_pad_peer_query (GST_BASE_SRC_PAD (self), query))
    wsi_query_parse_pool_size (query, &pool_size);
  gst_query_unref (query);
  GST_DEBUG_OBJECT (self, "pool downstream: %u slides", pool_size);
  if (pool_size == 0)
    return FALLBACK_PREPARE_AHEAD;
  return MIN (pool_size, MAX_PREPARE_AHEAD);
}
