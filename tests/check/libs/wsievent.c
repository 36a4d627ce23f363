/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* The event and query vocabulary (wsievent.h): every new/parse pair gives
 * back what was put in, and a parse refuses the other kinds. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <gst/wsi/wsievent.h>

/* One of each event, for the "refuses other kinds" checks. */
static GstEvent **
all_events (void)
{
  GstEvent **events = g_new0 (GstEvent *, 7);

  events[0] = wsi_event_new_patch_dropped (1, 2, 3, "a", "b");
  events[1] = wsi_event_new_slide_given_up (1, "a", "b");
  events[2] = wsi_event_new_slide_rejected (1, "a", 0.5, FALSE);
  events[3] = wsi_event_new_delivery_check (1);
  events[4] = wsi_event_new_delivery_ack (1);
  events[5] = wsi_event_new_mask_chained ();
  return events;
}

static void
free_events (GstEvent ** events)
{
  guint i;

  for (i = 0; events[i] != NULL; i++)
    gst_event_unref (events[i]);
  g_free (events);
}

GST_START_TEST (test_patch_dropped)
{
  GstEvent *event = wsi_event_new_patch_dropped (7, 3, 123456789012ULL,
      "/slides/a.svs", "unreadable");
  const gchar *path = NULL, *reason = NULL;
  guint slide = 0, cycle = 0;
  guint64 sequence = 0;

  fail_unless_equals_int (GST_EVENT_TYPE (event), GST_EVENT_CUSTOM_UPSTREAM);
  fail_unless (gst_event_has_name (event, WSI_PATCH_DROPPED_EVENT));
  fail_unless (wsi_event_parse_patch_dropped (event, &slide, &cycle,
          &sequence, &path, &reason));
  fail_unless_equals_int (slide, 7);
  fail_unless_equals_int (cycle, 3);
  fail_unless_equals_uint64 (sequence, 123456789012ULL);
  fail_unless_equals_string (path, "/slides/a.svs");
  fail_unless_equals_string (reason, "unreadable");
  fail_unless (wsi_event_parse_patch_dropped (event, NULL, NULL, NULL, NULL,
          NULL));
  gst_event_unref (event);

  /* NULL path and reason travel as "" and "unknown" */
  event = wsi_event_new_patch_dropped (0, 0, 0, NULL, NULL);
  fail_unless (wsi_event_parse_patch_dropped (event, NULL, NULL, NULL, &path,
          &reason));
  fail_unless_equals_string (path, "");
  fail_unless_equals_string (reason, "unknown");
  gst_event_unref (event);
}

GST_END_TEST;

GST_START_TEST (test_slide_events)
{
  GstEvent *given_up = wsi_event_new_slide_given_up (4, "/s/b.svs", "bad");
  GstEvent *rejected = wsi_event_new_slide_rejected (5, "/s/c.svs", 0.0,
      TRUE);
  const gchar *path = NULL, *reason = NULL;
  guint index = 0;
  gdouble fraction = -2.0;
  gboolean blank = FALSE;

  fail_unless (wsi_event_parse_slide_given_up (given_up, &index, &path,
          &reason));
  fail_unless_equals_int (index, 4);
  fail_unless_equals_string (path, "/s/b.svs");
  fail_unless_equals_string (reason, "bad");

  fail_unless (wsi_event_parse_slide_rejected (rejected, &index, &path,
          &fraction, &blank));
  fail_unless_equals_int (index, 5);
  fail_unless_equals_string (path, "/s/c.svs");
  fail_unless_equals_float (fraction, 0.0);
  fail_unless (blank);
  gst_event_unref (given_up);
  gst_event_unref (rejected);
}

GST_END_TEST;

GST_START_TEST (test_delivery)
{
  GstEvent *check = wsi_event_new_delivery_check (9);
  GstEvent *ack = wsi_event_new_delivery_ack (10);
  GstQuery *query = wsi_query_new_delivery_accounting ();
  guint round = 0;
  gboolean answered = TRUE;

  fail_unless_equals_int (GST_EVENT_TYPE (check),
      GST_EVENT_CUSTOM_DOWNSTREAM);
  fail_unless (wsi_event_parse_delivery_check (check, &round));
  fail_unless_equals_int (round, 9);
  fail_unless (wsi_event_parse_delivery_ack (ack, &round));
  fail_unless_equals_int (round, 10);
  /* a check is not an ack */
  fail_unless (!wsi_event_parse_delivery_ack (check, &round));

  fail_unless (wsi_query_parse_delivery_accounting (query, &answered));
  fail_unless (!answered);
  wsi_query_set_delivery_accounting (query, TRUE);
  fail_unless (wsi_query_parse_delivery_accounting (query, &answered));
  fail_unless (answered);
  gst_event_unref (check);
  gst_event_unref (ack);
  gst_query_unref (query);
}

GST_END_TEST;

GST_START_TEST (test_mask_cached)
{
  GstQuery *query = wsi_query_new_mask_cached ("/s/d.svs");
  const gchar *path = NULL;
  gboolean cached = TRUE, needed = TRUE;

  fail_unless (wsi_query_parse_mask_cached (query, &path, &cached, &needed));
  fail_unless_equals_string (path, "/s/d.svs");
  fail_unless (!cached && !needed);
  wsi_query_set_mask_cached (query, TRUE);
  fail_unless (wsi_query_parse_mask_cached (query, NULL, &cached, &needed));
  fail_unless (cached && !needed);
  /* withdrawing "cached" also says the overview is needed */
  wsi_query_set_mask_cached (query, FALSE);
  fail_unless (wsi_query_parse_mask_cached (query, NULL, &cached, &needed));
  fail_unless (!cached && needed);
  fail_unless (!wsi_query_parse_delivery_accounting (query, NULL));
  gst_query_unref (query);
}

GST_END_TEST;

/* Each parse accepts exactly its own event. */
GST_START_TEST (test_parse_refuses_other_kinds)
{
  GstEvent **events = all_events ();
  GstEvent *eos = gst_event_new_eos ();
  guint i, accepted;

  for (i = 0; events[i] != NULL; i++) {
    GstEvent *e = events[i];

    accepted = wsi_event_parse_patch_dropped (e, NULL, NULL, NULL, NULL,
        NULL) + wsi_event_parse_slide_given_up (e, NULL, NULL, NULL)
        + wsi_event_parse_slide_rejected (e, NULL, NULL, NULL, NULL)
        + wsi_event_parse_delivery_check (e, NULL)
        + wsi_event_parse_delivery_ack (e, NULL)
        + wsi_event_parse_mask_chained (e);
    fail_unless_equals_int (accepted, 1);
  }
  fail_unless (!wsi_event_parse_patch_dropped (eos, NULL, NULL, NULL, NULL,
          NULL));
  fail_unless (!wsi_event_parse_mask_chained (eos));
  gst_event_unref (eos);
  free_events (events);
}

GST_END_TEST;

static Suite *
wsievent_suite (void)
{
  Suite *s = suite_create ("wsievent");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_patch_dropped);
  tcase_add_test (tc, test_slide_events);
  tcase_add_test (tc, test_delivery);
  tcase_add_test (tc, test_mask_cached);
  tcase_add_test (tc, test_parse_refuses_other_kinds);
  return s;
}

GST_CHECK_MAIN (wsievent);
