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

/* Slides named in a loss message, at most. */
#define MAX_NAMED_SLIDES 4

/* What one cycle planned and lost. */
typedef struct
{
  guint64 planned;
  guint64 dropped;
  gboolean closed;
  gboolean reported;            /* its loss was already returned once */
  /* slide index -> "path (reason)"; made at the cycle's first drop: a
   * healthy cycle's tally stays a few words, and a cycling stream makes
   * one tally per pass for as long as it runs (they are not freed: a
   * closed cycle's drops may still arrive from patches in flight). */
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
  GHashTable *cycles;           /* cycle -> CycleTally */
};

static void
cycle_tally_free (CycleTally * tally)
{
  if (tally->reasons != NULL)
    g_hash_table_unref (tally->reasons);
  g_free (tally);
}

static CycleTally *
cycle_tally_get_locked (WsiDelivery * delivery, guint cycle)
{
  CycleTally *tally = g_hash_table_lookup (delivery->cycles,
      GUINT_TO_POINTER (cycle));

  if (tally == NULL) {
    tally = g_new0 (CycleTally, 1);
    g_hash_table_insert (delivery->cycles, GUINT_TO_POINTER (cycle), tally);
  }
  return tally;
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
  delivery->cycles = g_hash_table_new_full (NULL, NULL, NULL,
      (GDestroyNotify) cycle_tally_free);
  return delivery;
}

void
wsi_delivery_free (WsiDelivery * delivery)
{
  g_hash_table_unref (delivery->cycles);
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
  g_hash_table_remove_all (delivery->cycles);
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
  g_mutex_lock (&delivery->lock);
  cycle_tally_get_locked (delivery, cycle)->planned += n;
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

  g_mutex_lock (&delivery->lock);
  tally = cycle_tally_get_locked (delivery, cycle);
  tally->closed = TRUE;
  lost = cycle_lost (tally) && !tally->reported;
  tally->reported |= lost;
  g_mutex_unlock (&delivery->lock);
  return lost;
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
  tally = cycle_tally_get_locked (delivery, cycle);
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
