/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* The one place where the field names of our custom events and queries are
 * written (see wsievent.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsievent.h"

#define FIELD_SLIDE_INDEX "slide-index"
#define FIELD_CYCLE "cycle"
#define FIELD_SEQUENCE "sequence"
#define FIELD_PATH "path"
#define FIELD_REASON "reason"
#define FIELD_TISSUE_FRACTION "tissue-fraction"
#define FIELD_BLANK "blank"
#define FIELD_ROUND "round"
#define FIELD_ANSWERED "answered"
#define FIELD_CACHED "cached"
/* Added by a tissuemask that lacks the mask as the query goes upstream, so
 * that an earlier tissuemask holding it does not answer "cached" and starve
 * the later one of the overview. */
#define FIELD_OVERVIEW_NEEDED "overview-needed"
#define FIELD_POOL_SIZE "pool-size"
#define FIELD_SOURCE_IDENTITY "source-identity"
#define FIELD_THUMBNAIL_SIZE "thumbnail-size"

/* The structure of @event when it is a custom event of @type named @name. */
static const GstStructure *
custom_event_structure (GstEvent * event, GstEventType type,
    const gchar * name)
{
  if (event == NULL || GST_EVENT_TYPE (event) != type
      || !gst_event_has_name (event, name))
    return NULL;
  return gst_event_get_structure (event);
}

static GstStructure *
custom_query_structure (GstQuery * query, const gchar * name)
{
  GstStructure *s;

  if (query == NULL || GST_QUERY_TYPE (query) != GST_QUERY_CUSTOM)
    return NULL;
  s = (GstStructure *) gst_query_get_structure (query);
  if (s == NULL || !gst_structure_has_name (s, name))
    return NULL;
  return s;
}

static void
get_string (const GstStructure * s, const gchar * field, const gchar ** out)
{
  if (out != NULL)
    *out = gst_structure_get_string (s, field);
}

static void
get_uint (const GstStructure * s, const gchar * field, guint fallback,
    guint * out)
{
  if (out != NULL && !gst_structure_get_uint (s, field, out))
    *out = fallback;
}

static void
get_boolean (const GstStructure * s, const gchar * field, gboolean * out)
{
  if (out != NULL && !gst_structure_get_boolean (s, field, out))
    *out = FALSE;
}

/* ---- patch dropped ------------------------------------------------------ */

GstEvent *
wsi_event_new_patch_dropped (guint slide_index, guint cycle,
    guint64 sequence, const gchar * path, const gchar * reason)
{
  return gst_event_new_custom (GST_EVENT_CUSTOM_UPSTREAM,
      gst_structure_new (WSI_PATCH_DROPPED_EVENT,
          FIELD_SLIDE_INDEX, G_TYPE_UINT, slide_index,
          FIELD_CYCLE, G_TYPE_UINT, cycle,
          FIELD_SEQUENCE, G_TYPE_UINT64, sequence,
          FIELD_PATH, G_TYPE_STRING, path ? path : "",
          FIELD_REASON, G_TYPE_STRING, reason ? reason : "unknown", NULL));
}

gboolean
wsi_event_parse_patch_dropped (GstEvent * event, guint * slide_index,
    guint * cycle, guint64 * sequence, const gchar ** path,
    const gchar ** reason)
{
  const GstStructure *s = custom_event_structure (event,
      GST_EVENT_CUSTOM_UPSTREAM, WSI_PATCH_DROPPED_EVENT);

  if (s == NULL)
    return FALSE;
  get_uint (s, FIELD_SLIDE_INDEX, 0, slide_index);
  get_uint (s, FIELD_CYCLE, 0, cycle);
  if (sequence != NULL && !gst_structure_get_uint64 (s, FIELD_SEQUENCE,
          sequence))
    *sequence = 0;
  get_string (s, FIELD_PATH, path);
  get_string (s, FIELD_REASON, reason);
  return TRUE;
}

/* ---- slide given up ----------------------------------------------------- */

GstEvent *
wsi_event_new_slide_given_up (guint slide_index, const gchar * path,
    const gchar * reason)
{
  return gst_event_new_custom (GST_EVENT_CUSTOM_UPSTREAM,
      gst_structure_new (WSI_SLIDE_GIVEN_UP_EVENT,
          FIELD_SLIDE_INDEX, G_TYPE_UINT, slide_index,
          FIELD_PATH, G_TYPE_STRING, path,
          FIELD_REASON, G_TYPE_STRING, GST_STR_NULL (reason), NULL));
}

gboolean
wsi_event_parse_slide_given_up (GstEvent * event, guint * slide_index,
    const gchar ** path, const gchar ** reason)
{
  const GstStructure *s = custom_event_structure (event,
      GST_EVENT_CUSTOM_UPSTREAM, WSI_SLIDE_GIVEN_UP_EVENT);

  if (s == NULL)
    return FALSE;
  get_uint (s, FIELD_SLIDE_INDEX, G_MAXUINT, slide_index);
  get_string (s, FIELD_PATH, path);
  get_string (s, FIELD_REASON, reason);
  return TRUE;
}

/* ---- slide rejected ----------------------------------------------------- */

GstEvent *
wsi_event_new_slide_rejected (guint slide_index, const gchar * path,
    gdouble tissue_fraction, gboolean blank)
{
  return gst_event_new_custom (GST_EVENT_CUSTOM_UPSTREAM,
      gst_structure_new (WSI_SLIDE_REJECTED_EVENT,
          FIELD_SLIDE_INDEX, G_TYPE_UINT, slide_index,
          FIELD_PATH, G_TYPE_STRING, path,
          FIELD_TISSUE_FRACTION, G_TYPE_DOUBLE, tissue_fraction,
          FIELD_BLANK, G_TYPE_BOOLEAN, blank, NULL));
}

/* FALSE also when the slide index is missing: such a report names no
 * slide to count. */
gboolean
wsi_event_parse_slide_rejected (GstEvent * event, guint * slide_index,
    const gchar ** path, gdouble * tissue_fraction, gboolean * blank)
{
  const GstStructure *s = custom_event_structure (event,
      GST_EVENT_CUSTOM_UPSTREAM, WSI_SLIDE_REJECTED_EVENT);
  guint index;

  if (s == NULL || !gst_structure_get_uint (s, FIELD_SLIDE_INDEX, &index))
    return FALSE;
  if (slide_index != NULL)
    *slide_index = index;
  get_string (s, FIELD_PATH, path);
  if (tissue_fraction != NULL
      && !gst_structure_get_double (s, FIELD_TISSUE_FRACTION,
          tissue_fraction))
    *tissue_fraction = -1.0;
  get_boolean (s, FIELD_BLANK, blank);
  return TRUE;
}

/* ---- delivery check and acknowledgement --------------------------------- */

GstEvent *
wsi_event_new_delivery_check (guint round)
{
  return gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
      gst_structure_new (WSI_DELIVERY_CHECK_EVENT,
          FIELD_ROUND, G_TYPE_UINT, round, NULL));
}

gboolean
wsi_event_parse_delivery_check (GstEvent * event, guint * round)
{
  const GstStructure *s = custom_event_structure (event,
      GST_EVENT_CUSTOM_DOWNSTREAM, WSI_DELIVERY_CHECK_EVENT);

  if (s == NULL)
    return FALSE;
  get_uint (s, FIELD_ROUND, 0, round);
  return TRUE;
}

GstEvent *
wsi_event_new_delivery_ack (guint round)
{
  return gst_event_new_custom (GST_EVENT_CUSTOM_UPSTREAM,
      gst_structure_new (WSI_DELIVERY_ACK_EVENT,
          FIELD_ROUND, G_TYPE_UINT, round, NULL));
}

gboolean
wsi_event_parse_delivery_ack (GstEvent * event, guint * round)
{
  const GstStructure *s = custom_event_structure (event,
      GST_EVENT_CUSTOM_UPSTREAM, WSI_DELIVERY_ACK_EVENT);

  if (s == NULL)
    return FALSE;
  get_uint (s, FIELD_ROUND, 0, round);
  return TRUE;
}

/* ---- tissuemask chain --------------------------------------------------- */

GstEvent *
wsi_event_new_mask_chained (void)
{
  return gst_event_new_custom (GST_EVENT_CUSTOM_UPSTREAM,
      gst_structure_new_empty (WSI_MASK_CHAINED_EVENT));
}

gboolean
wsi_event_parse_mask_chained (GstEvent * event)
{
  return custom_event_structure (event, GST_EVENT_CUSTOM_UPSTREAM,
      WSI_MASK_CHAINED_EVENT) != NULL;
}

/* ---- delivery accounting query ------------------------------------------ */

GstQuery *
wsi_query_new_delivery_accounting (void)
{
  return gst_query_new_custom (GST_QUERY_CUSTOM,
      gst_structure_new_empty (WSI_DELIVERY_QUERY));
}

gboolean
wsi_query_parse_delivery_accounting (GstQuery * query, gboolean * answered)
{
  const GstStructure *s = custom_query_structure (query, WSI_DELIVERY_QUERY);

  if (s == NULL)
    return FALSE;
  get_boolean (s, FIELD_ANSWERED, answered);
  return TRUE;
}

void
wsi_query_set_delivery_accounting (GstQuery * query, gboolean answered)
{
  g_return_if_fail (custom_query_structure (query, WSI_DELIVERY_QUERY));
  gst_structure_set (gst_query_writable_structure (query), FIELD_ANSWERED,
      G_TYPE_BOOLEAN, answered, NULL);
}

/* ---- mask cached query -------------------------------------------------- */

GstQuery *
wsi_query_new_mask_cached (const gchar * path)
{
  return gst_query_new_custom (GST_QUERY_CUSTOM,
      gst_structure_new (WSI_MASK_CACHED_QUERY, FIELD_PATH, G_TYPE_STRING,
          path, NULL));
}

gboolean
wsi_query_parse_mask_cached (GstQuery * query, const gchar ** path,
    gboolean * cached, gboolean * overview_needed)
{
  const GstStructure *s = custom_query_structure (query,
      WSI_MASK_CACHED_QUERY);

  if (s == NULL)
    return FALSE;
  get_string (s, FIELD_PATH, path);
  get_boolean (s, FIELD_CACHED, cached);
  get_boolean (s, FIELD_OVERVIEW_NEEDED, overview_needed);
  return TRUE;
}

void
wsi_query_set_mask_cached (GstQuery * query, gboolean cached)
{
  GstStructure *s;

  g_return_if_fail (custom_query_structure (query, WSI_MASK_CACHED_QUERY));
  s = gst_query_writable_structure (query);
  if (cached) {
    gst_structure_set (s, FIELD_CACHED, G_TYPE_BOOLEAN, TRUE, NULL);
    return;
  }
  gst_structure_remove_field (s, FIELD_CACHED);
  gst_structure_set (s, FIELD_OVERVIEW_NEEDED, G_TYPE_BOOLEAN, TRUE, NULL);
}

void
wsi_query_set_mask_source (GstQuery * query, const gchar * identity,
    gint thumbnail_size)
{
  g_return_if_fail (custom_query_structure (query, WSI_MASK_CACHED_QUERY));
  gst_structure_set (gst_query_writable_structure (query),
      FIELD_SOURCE_IDENTITY, G_TYPE_STRING, identity ? identity : "",
      FIELD_THUMBNAIL_SIZE, G_TYPE_INT, thumbnail_size, NULL);
}

gboolean
wsi_query_parse_mask_source (GstQuery * query, const gchar ** identity,
    gint * thumbnail_size)
{
  const GstStructure *s = custom_query_structure (query,
      WSI_MASK_CACHED_QUERY);

  if (s == NULL)
    return FALSE;
  get_string (s, FIELD_SOURCE_IDENTITY, identity);
  if (thumbnail_size != NULL && !gst_structure_get_int (s,
          FIELD_THUMBNAIL_SIZE, thumbnail_size))
    *thumbnail_size = 0;
  return TRUE;
}

/* ---- pool size query ---------------------------------------------------- */

GstQuery *
wsi_query_new_pool_size (void)
{
  return gst_query_new_custom (GST_QUERY_CUSTOM,
      gst_structure_new_empty (WSI_POOL_SIZE_QUERY));
}

gboolean
wsi_query_parse_pool_size (GstQuery * query, guint * pool_size)
{
  const GstStructure *s = custom_query_structure (query, WSI_POOL_SIZE_QUERY);

  if (s == NULL)
    return FALSE;
  get_uint (s, FIELD_POOL_SIZE, 0, pool_size);
  return TRUE;
}

void
wsi_query_set_pool_size (GstQuery * query, guint pool_size)
{
  g_return_if_fail (custom_query_structure (query, WSI_POOL_SIZE_QUERY));
  gst_structure_set (gst_query_writable_structure (query), FIELD_POOL_SIZE,
      G_TYPE_UINT, pool_size, NULL);
}
