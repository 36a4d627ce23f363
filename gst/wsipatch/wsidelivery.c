/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsidelivery.c: planned vs delivered patches (see wsidelivery.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsidelivery.h"

#include <gst/wsi/wsievent.h>
#include <gst/wsi/wsirecord.h>

#include <string.h>

/* Slides named in a loss message, at most. */
#define MAX_NAMED_SLIDES 4

/* What one cycle planned and lost; a slot of WsiDelivery's ring. */
typedef struct
{
  gboolean used;
  guint cycle;
  guint64 planned;
  guint64 dropped;
  gboolean closed;
  gboolean reported;            /* its loss was already returned once */
  /* slide index -> "path (reason)"; made at the cycle's first drop, so a
   * healthy cycle holds no table. */
  GHashTable *reasons;
} CycleTally;

struct _WsiDelivery
{
  GMutex lock;
  GCond acked;
  gboolean active;
  gboolean flushing;
  guint64 dropped;
  guint check_round;
  guint ack_round;
  /* A drop came for a forgotten cycle (the first one's cycle); told once. */
  gboolean forgotten_seen, forgotten_told;
  guint forgotten_cycle;
  /* Cycle c lives in slot c % WSI_DELIVERY_KEPT_CYCLES until cycle
   * c + WSI_DELIVERY_KEPT_CYCLES takes the slot: a fixed ring, so a stream
   * that cycles for a week holds the same memory as one that cycled once
   * (a table per cycle used to grow for the stream's life). */
  CycleTally tallies[WSI_DELIVERY_KEPT_CYCLES];
};

static void
cycle_tally_clear (CycleTally * tally)
{
  if (tally->reasons != NULL)
    g_hash_table_unref (tally->reasons);
  memset (tally, 0, sizeof (*tally));
}

/* The tally of @cycle, made when missing; NULL when a newer cycle holds
 * its slot (@cycle was forgotten: see wsidelivery.h). */
static CycleTally *
cycle_tally_get_locked (WsiDelivery * delivery, guint cycle)
{
  CycleTally *tally = &delivery->tallies[cycle % WSI_DELIVERY_KEPT_CYCLES];

  if (tally->used && tally->cycle == cycle)
    return tally;
  if (tally->used && tally->cycle > cycle)
    return NULL;
  cycle_tally_clear (tally);
  tally->used = TRUE;
  tally->cycle = cycle;
  return tally;
}

/* Like cycle_tally_get_locked() but never makes one. */
static CycleTally *
cycle_tally_find_locked (WsiDelivery * delivery, guint cycle)
{
  CycleTally *tally = &delivery->tallies[cycle % WSI_DELIVERY_KEPT_CYCLES];

  return tally->used && tally->cycle == cycle ? tally : NULL;
}

static void
cycle_tallies_clear_locked (WsiDelivery * delivery)
{
  guint i;

  for (i = 0; i < WSI_DELIVERY_KEPT_CYCLES; i++)
    cycle_tally_clear (&delivery->tallies[i]);
}

static gboolean
cycle_lost (const CycleTally * tally)
{
  return tally->closed && tally->planned > 0
      && tally->dropped >= tally->planned;
}

WsiDelivery *
wsi_delivery_new (void)
{
  WsiDelivery *delivery = g_new0 (WsiDelivery, 1);

  g_mutex_init (&delivery->lock);
  g_cond_init (&delivery->acked);
  return delivery;
}

void
wsi_delivery_free (WsiDelivery * delivery)
{
  cycle_tallies_clear_locked (delivery);
  g_mutex_clear (&delivery->lock);
  g_cond_clear (&delivery->acked);
  g_free (delivery);
}

void
wsi_delivery_reset (WsiDelivery * delivery)
{
  g_mutex_lock (&delivery->lock);
  delivery->active = FALSE;
  delivery->dropped = 0;
  delivery->check_round = delivery->ack_round = 0;
  delivery->forgotten_seen = delivery->forgotten_told = FALSE;
  cycle_tallies_clear_locked (delivery);
  g_mutex_unlock (&delivery->lock);
}

gboolean
wsi_delivery_probe (WsiDelivery * delivery, GstPad * srcpad)
{
  GstQuery *query = wsi_query_new_delivery_accounting ();
  gboolean answered = FALSE;

  if (gst_pad_peer_query (srcpad, query))
    wsi_query_parse_delivery_accounting (query, &answered);
  gst_query_unref (query);
  g_mutex_lock (&delivery->lock);
  delivery->active = answered;
  g_mutex_unlock (&delivery->lock);
  GST_DEBUG_OBJECT (srcpad, "delivery accounting %s",
      answered ? "on" : "off (nobody downstream acknowledges checks)");
  return answered;
}

gboolean
wsi_delivery_active (WsiDelivery * delivery)
{
  gboolean active;

  g_mutex_lock (&delivery->lock);
  active = delivery->active;
  g_mutex_unlock (&delivery->lock);
  return active;
}

void
wsi_delivery_planned (WsiDelivery * delivery, guint cycle, guint64 n)
{
  CycleTally *tally;

  g_mutex_lock (&delivery->lock);
  tally = cycle_tally_get_locked (delivery, cycle);
  if (tally != NULL)
    tally->planned += n;
  g_mutex_unlock (&delivery->lock);
}

guint64
wsi_delivery_dropped (WsiDelivery * delivery)
{
  guint64 dropped;

  g_mutex_lock (&delivery->lock);
  dropped = delivery->dropped;
  g_mutex_unlock (&delivery->lock);
  return dropped;
}

static void
count_dropped (WsiDelivery * delivery, guint slide, guint cycle,
    const gchar * path, const gchar * reason, guint * lost_cycle)
{
  CycleTally *tally;

  g_mutex_lock (&delivery->lock);
  delivery->dropped++;
  tally = cycle_tally_get_locked (delivery, cycle);
  if (tally == NULL) {
    /* A cycle that long closed: counted in the stream; its loss cannot be
     * checked any more, which wsi_delivery_take_forgotten() tells. */
    if (!delivery->forgotten_seen) {
      delivery->forgotten_seen = TRUE;
      delivery->forgotten_cycle = cycle;
    }
    g_mutex_unlock (&delivery->lock);
    return;
  }
  tally->dropped++;
  if (tally->reasons == NULL)
    tally->reasons = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  g_hash_table_replace (tally->reasons, GUINT_TO_POINTER (slide),
      g_strdup_printf ("%s (%s)", GST_STR_NULL (path), GST_STR_NULL (reason)));
  if (cycle_lost (tally) && !tally->reported) {
    tally->reported = TRUE;
    *lost_cycle = cycle + 1;
  }
  g_mutex_unlock (&delivery->lock);
}

gboolean
wsi_delivery_handle_event (WsiDelivery * delivery, GstEvent * event,
    guint * lost_cycle)
{
  const gchar *path, *reason;
  guint slide, cycle, round;

  if (wsi_event_parse_patch_dropped (event, &slide, &cycle, NULL, &path,
          &reason)) {
    count_dropped (delivery, slide, cycle, path, reason, lost_cycle);
    return TRUE;
  }
  if (wsi_event_parse_delivery_ack (event, &round)) {
    g_mutex_lock (&delivery->lock);
    delivery->ack_round = MAX (delivery->ack_round, round);
    g_cond_broadcast (&delivery->acked);
    g_mutex_unlock (&delivery->lock);
    return TRUE;
  }
  return FALSE;
}

gboolean
wsi_delivery_close_cycle (WsiDelivery * delivery, guint cycle)
{
  CycleTally *tally;
  gboolean lost;

  lost = FALSE;
  g_mutex_lock (&delivery->lock);
  tally = cycle_tally_get_locked (delivery, cycle);
  if (tally != NULL) {
    tally->closed = TRUE;
    lost = cycle_lost (tally) && !tally->reported;
    tally->reported |= lost;
  }
  g_mutex_unlock (&delivery->lock);
  return lost;
}

gboolean
wsi_delivery_take_forgotten (WsiDelivery * delivery, guint * cycle)
{
  gboolean tell;

  g_mutex_lock (&delivery->lock);
  tell = delivery->forgotten_seen && !delivery->forgotten_told;
  delivery->forgotten_told |= tell;
  if (tell && cycle != NULL)
    *cycle = delivery->forgotten_cycle;
  g_mutex_unlock (&delivery->lock);
  return tell;
}

guint
wsi_delivery_tallies_kept (WsiDelivery * delivery, guint * with_reasons)
{
  guint i, kept = 0, tables = 0;

  g_mutex_lock (&delivery->lock);
  for (i = 0; i < WSI_DELIVERY_KEPT_CYCLES; i++) {
    kept += delivery->tallies[i].used;
    tables += delivery->tallies[i].reasons != NULL;
  }
  g_mutex_unlock (&delivery->lock);
  if (with_reasons != NULL)
    *with_reasons = tables;
  return kept;
}

static gint
compare_slide_keys (gconstpointer a, gconstpointer b)
{
  guint x = GPOINTER_TO_UINT (a), y = GPOINTER_TO_UINT (b);

  return x < y ? -1 : (x > y);
}

gchar *
wsi_delivery_describe_loss (WsiDelivery * delivery, guint cycle)
{
  GString *out = g_string_new (NULL);
  CycleTally *tally;
  GList *keys, *l;
  guint named = 0;

  g_mutex_lock (&delivery->lock);
  tally = cycle_tally_find_locked (delivery, cycle);
  if (tally == NULL) {
    /* Only if the stream ran on for WSI_DELIVERY_KEPT_CYCLES cycles. */
    g_mutex_unlock (&delivery->lock);
    g_string_append_printf (out, "all patches planned in cycle %u were "
        "dropped", cycle);
    return g_string_free (out, FALSE);
  }
  g_string_append_printf (out, "all %" G_GUINT64_FORMAT " patches planned in "
      "cycle %u were dropped; slides given up or unreadable: ",
      tally->planned, cycle);
  /* In slide order, so the message is the same every run. */
  keys = tally->reasons ? g_hash_table_get_keys (tally->reasons) : NULL;
  keys = g_list_sort (keys, (GCompareFunc) compare_slide_keys);
  for (l = keys; l != NULL && named < MAX_NAMED_SLIDES; l = l->next, named++)
    g_string_append_printf (out, "%s%s", named ? "; " : "",
        (const gchar *) g_hash_table_lookup (tally->reasons, l->data));
  if (g_list_length (keys) > MAX_NAMED_SLIDES)
    g_string_append_printf (out, "; and %u more",
        g_list_length (keys) - MAX_NAMED_SLIDES);
  g_list_free (keys);
  g_mutex_unlock (&delivery->lock);
  return g_string_free (out, FALSE);
}

gboolean
wsi_delivery_check (WsiDelivery * delivery, GstPad * srcpad)
{
  guint round;
  gboolean ok;

  g_mutex_lock (&delivery->lock);
  if (!delivery->active) {
    g_mutex_unlock (&delivery->lock);
    return TRUE;
  }
  round = ++delivery->check_round;
  g_mutex_unlock (&delivery->lock);

  GST_DEBUG_OBJECT (srcpad, "delivery check %u", round);
  if (!gst_pad_push_event (srcpad, wsi_event_new_delivery_check (round)))
    return FALSE;

  g_mutex_lock (&delivery->lock);
  while (!delivery->flushing && delivery->ack_round < round)
    g_cond_wait (&delivery->acked, &delivery->lock);
  ok = delivery->ack_round >= round;
  g_mutex_unlock (&delivery->lock);
  return ok;
}

void
wsi_delivery_set_flushing (WsiDelivery * delivery, gboolean flushing)
{
  g_mutex_lock (&delivery->lock);
  delivery->flushing = flushing;
  g_cond_broadcast (&delivery->acked);
  g_mutex_unlock (&delivery->lock);
}
