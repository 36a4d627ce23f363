/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsirefusal.h: property values an element's own validation refused, kept
 * until the element starts, which it then refuses to do (header only).
 *
 * Contract: a set_property() that refuses a value (a list that does not
 * parse, an even kernel, a zero count) keeps the previous value and records
 * the refusal with wsi_refusal_record(): the property, the value as given
 * and the accepted range, in words. A later accepted value of the same
 * property forgets it (wsi_refusal_forget()). wsi_refusal_check(), called
 * on the way to READY or PAUSED, posts ONE element error (RESOURCE,
 * SETTINGS) naming every refused property, value and range, and returns
 * FALSE, so the state change fails and gst-launch-1.0 exits non-zero at
 * once, instead of running with settings nobody asked for. A value refused
 * while the element runs is recorded too (and warned about by the caller,
 * since the run cannot be refused any more): the next start fails.
 *
 * Numbers outside their range, for every element (wsirefusal.c): GLib
 * refuses a value outside a GParamSpec's range (or NaN) itself, with a
 * warning nobody reads, before set_property() sees it, and the element runs
 * with the value it had. So elements declare their numeric properties with
 * wsi_param_spec_int(), _uint(), _int64(), _uint64() and _double(): the
 * same arguments and the same range in gst-inspect-1.0 and to Python
 * (G_PARAM_SPEC_INT() etc. work on them: they derive from GLib's types),
 * but GLib lets every value through, and wsi_refusal_class_init(), called at
 * the end of the element's class_init, wraps its set_property() and
 * change_state(): a value outside the range or NaN is recorded here with the
 * range (the element's own set_property() never sees it), a good one
 * forgets an earlier refusal, and the element refuses to start (NULL to
 * READY, READY to PAUSED) while any refusal is recorded. Call it once per
 * class hierarchy that installs change_state (the concrete element; a base
 * class with properties of its own uses wsi_refusal_class_init_properties()).
 *
 * Cost: a hash table of at most a few entries, a range check per property
 * set. Threading: the table belongs to the element (object data) and is
 * guarded by its object lock: record and forget with it held; check without
 * it (posting a message takes it).
 */

#ifndef __WSI_REFUSAL_H__
#define __WSI_REFUSAL_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* The element's table of refusals (object data, created on first use):
 * what record/forget/check take for @element. */
GHashTable **wsi_refusal_of (gpointer element);

/* Wraps @klass's set_property() and change_state() (see the top). */
void wsi_refusal_class_init (GstElementClass * klass);

/* Only set_property(): a base class whose subclasses call
 * wsi_refusal_class_init(). */
void wsi_refusal_class_init_properties (GObjectClass * klass);

/* g_param_spec_int() and friends whose range GLib does not enforce (the
 * wrapped set_property() does, see the top). */
GParamSpec *wsi_param_spec_int (const gchar * name, const gchar * nick,
    const gchar * blurb, gint minimum, gint maximum, gint default_value,
    GParamFlags flags);
GParamSpec *wsi_param_spec_uint (const gchar * name, const gchar * nick,
    const gchar * blurb, guint minimum, guint maximum, guint default_value,
    GParamFlags flags);
GParamSpec *wsi_param_spec_int64 (const gchar * name, const gchar * nick,
    const gchar * blurb, gint64 minimum, gint64 maximum,
    gint64 default_value, GParamFlags flags);
GParamSpec *wsi_param_spec_uint64 (const gchar * name, const gchar * nick,
    const gchar * blurb, guint64 minimum, guint64 maximum,
    guint64 default_value, GParamFlags flags);
GParamSpec *wsi_param_spec_double (const gchar * name, const gchar * nick,
    const gchar * blurb, gdouble minimum, gdouble maximum,
    gdouble default_value, GParamFlags flags);

/* Records that @property=@value was refused; @accepted says what would be
 * taken ("an odd number from 3 to 255"). Object lock held. */
static inline void
wsi_refusal_record (GHashTable ** refused, const gchar * property,
    const gchar * value, const gchar * accepted)
{
  if (*refused == NULL)
    *refused = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
        g_free);
  g_hash_table_replace (*refused, g_strdup (property),
      g_strdup_printf ("%s=\"%s\" (accepted: %s)", property,
          value ? value : "", accepted));
}

/* @property got a value that was taken. Object lock held. */
static inline void
wsi_refusal_forget (GHashTable ** refused, const gchar * property)
{
  if (*refused != NULL)
    g_hash_table_remove (*refused, property);
}

static inline void
wsi_refusal_clear (GHashTable ** refused)
{
  g_clear_pointer (refused, g_hash_table_unref);
}

/* TRUE when nothing was refused; else posts one element error naming
 * every refused value (sorted by property, so the text is the same on
 * every run) and returns FALSE. Object lock NOT held. */
static inline gboolean
wsi_refusal_check (GstElement * element, GHashTable ** refused)
{
  GString *text;
  GList *keys, *l;

  GST_OBJECT_LOCK (element);
  if (*refused == NULL || g_hash_table_size (*refused) == 0) {
    GST_OBJECT_UNLOCK (element);
    return TRUE;
  }
  text = g_string_new (NULL);
  keys = g_list_sort (g_hash_table_get_keys (*refused),
      (GCompareFunc) g_strcmp0);
  for (l = keys; l != NULL; l = l->next)
    g_string_append_printf (text, "%s%s", l == keys ? "" : "; ",
        (const gchar *) g_hash_table_lookup (*refused, l->data));
  g_list_free (keys);
  GST_OBJECT_UNLOCK (element);

  GST_ELEMENT_ERROR (element, RESOURCE, SETTINGS,
      ("%s refuses to start: %s.", GST_ELEMENT_NAME (element), text->str),
      ("a value outside the property's range, or one its own validation "
          "refused; the previous value was kept, "
          "and running with it would not be what was asked for"));
  g_string_free (text, TRUE);
  return FALSE;
}

G_END_DECLS

#endif /* __WSI_REFUSAL_H__ */
