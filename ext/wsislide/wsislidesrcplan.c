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

#include <gst/wsi/wsirng.h>

#include "wsislidesrcplan.h"

#define GST_CAT_DEFAULT gst_wsi_slide_src_debug

/* ---- Rank and visit order ----------------------------------------------- */

/* The property when set, else the environment variable, else @fallback. */
gboolean
slide_src_resolve_rank_setting (GstWsiSlideSrc * self, gint property,
    const gchar * env_name, gint minimum, gint fallback, gint * value)
{
  const gchar *env = g_getenv (env_name);
  gint64 parsed;
  GError *err = NULL;

  if (property >= 0) {
    *value = property;
    return TRUE;
  }
  if (env == NULL || env[0] == '\0') {
    *value = fallback;
    return TRUE;
  }
  if (!g_ascii_string_to_signed (env, 10, minimum, G_MAXINT, &parsed, &err)) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("The environment variable %s=\"%s\" is not a valid value.", env_name,
            env), ("%s", err->message));
    g_clear_error (&err);
    return FALSE;
  }
  *value = (gint) parsed;
  return TRUE;
}

/* Sequential: sorted order. Random: a Fisher-Yates shuffle drawn from
 * wsirng.h keyed by the seed, the rank and the cycle, so runs are
 * reproducible on every GLib version (GRand's sequence is not promised). */
void
slide_src_arrange_visit_order (GstWsiSlideSrc * self)
{
  guint n = self->entries->len, i;
  WsiRng rng;

  for (i = 0; i < n; i++)
    self->visit_order[i] = i;
  if (self->run.order != GST_WSI_SLIDE_ORDER_RANDOM || n < 2)
    return;

  /* Key 0x5348 ("SH") keeps this stream apart from the sampler's, which
   * is keyed by (seed, slide index, cycle). */
  wsi_rng_seed_keys (&rng, self->run.seed, self->run.rank,
      self->plan_cycle, 0x5348);
  for (i = n - 1; i > 0; i--) {
    guint j = (guint) wsi_rng_below (&rng, (guint64) i + 1);
    guint tmp = self->visit_order[i];

    self->visit_order[i] = self->visit_order[j];
    self->visit_order[j] = tmp;
  }
}

/* The plan (slides prepared ahead) starts its next pass. */
static void
plan_next_cycle (GstWsiSlideSrc * self)
{
  self->plan_cycle++;
  self->position = 0;
  slide_src_arrange_visit_order (self);
}

/* The stream reaches a visit of cycle @cycle. */
void
slide_src_enter_cycle (GstWsiSlideSrc * self, guint cycle)
{
  if (cycle == self->cycle_number)
    return;
  self->cycle_number = cycle;
  g_mutex_lock (&self->lock);
  self->cycles_completed = self->cycle_number;
  g_mutex_unlock (&self->lock);
  GST_DEBUG_OBJECT (self, "starting cycle %u", self->cycle_number);
}

/* The next visit of the plan, skipping failed slides; FALSE when the
 * collection is done (no cycling) or every slide failed. */
gboolean
slide_src_plan_next_visit (GstWsiSlideSrc * self, WsiSlideEntry ** entry,
    guint * cycle)
{
  guint tries;

  for (tries = 0; tries <= self->entries->len; tries++) {
    if (self->position == self->entries->len) {
      if (!self->run.cycle)
        return FALSE;
      plan_next_cycle (self);
    }
    *entry = g_ptr_array_index (self->entries,
        self->visit_order[self->position++]);
    *cycle = self->plan_cycle;
    if (!(*entry)->failed)
      return TRUE;
  }
  return FALSE;
}
