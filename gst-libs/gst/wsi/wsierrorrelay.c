/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsierrorrelay.c: posts an ERROR again from the default main context when
 * it was first posted before any loop ran there (see wsierrorrelay.h).
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsierrorrelay.h"
#include "wsilocalfile.h"
#include "wsitoplevel.h"

/* An ERROR waiting for a loop on the default context. */
typedef struct
{
  GWeakRef element;             /* who posted it */
  GWeakRef top;                 /* its top-level bin when it did */
  guint32 cookie;               /* the top-level's state cookie then */
  GstMessage *copy;             /* what to post again */
} RelayedError;

/* The idle source of the waiting copy, or NULL. */
static GMutex relay_lock;
static GSource *relay_source;

static void
relayed_error_free (gpointer data)
{
  RelayedError *relayed = data;

  g_weak_ref_clear (&relayed->element);
  g_weak_ref_clear (&relayed->top);
  gst_clear_message (&relayed->copy);
  g_free (relayed);
}

/* TRUE when some thread iterates the default context now: a loop runs
 * there, so a quit from the application's sync handler cannot be lost. */
static gboolean
default_context_running (void)
{
  GMainContext *context = g_main_context_default ();

  if (g_main_context_is_owner (context))
    return TRUE;
  if (!g_main_context_acquire (context))
    return TRUE;
  g_main_context_release (context);
  return FALSE;
}

static guint32
state_cookie_of (GstElement * element)
{
  guint32 cookie;

  GST_OBJECT_LOCK (element);
  cookie = element->state_cookie;
  GST_OBJECT_UNLOCK (element);
  return cookie;
}

/* The same error, seqnum and source, its details marked as relayed. */
static GstMessage *
relay_copy_of (GstMessage * message)
{
  GError *error = NULL;
  gchar *debug = NULL;
  const GstStructure *details = NULL;
  GstStructure *marked;
  GstMessage *copy;

  gst_message_parse_error (message, &error, &debug);
  gst_message_parse_error_details (message, &details);
  marked = details != NULL ? gst_structure_copy (details)
      : gst_structure_new_empty ("wsi-error-details");
  gst_structure_set (marked, WSI_ERROR_RELAY_FIELD, G_TYPE_BOOLEAN, TRUE,
      NULL);
  copy = gst_message_new_error_with_details (GST_MESSAGE_SRC (message), error,
      debug, marked);
  gst_message_set_seqnum (copy, gst_message_get_seqnum (message));
  g_clear_error (&error);
  g_free (debug);
  return copy;
}

/* Idle callback on the default context: a loop runs there now. */
static gboolean
relay_error (gpointer data)
{
  RelayedError *relayed = data;
  GstElement *element = g_weak_ref_get (&relayed->element);
  GstElement *top = g_weak_ref_get (&relayed->top);

  g_mutex_lock (&relay_lock);
  if (relay_source == g_main_current_source ())
    g_clear_pointer (&relay_source, g_source_unref);
  g_mutex_unlock (&relay_lock);

  /* The application changed the pipeline's state since: it saw the
   * error (or stopped for another reason); the copy is stale. */
  if (element != NULL && top != NULL
      && state_cookie_of (top) == relayed->cookie) {
    GST_INFO_OBJECT (element, "posting again an error posted before the "
        "application's main loop ran");
    gst_element_post_message (element, g_steal_pointer (&relayed->copy));
  }
  gst_clear_object (&element);
  gst_clear_object (&top);
  return G_SOURCE_REMOVE;
}

/* Escapes (wsi_text_escape) the text of an ERROR, WARNING or INFO that
 * is not valid UTF-8: a file name or bytes from a damaged file put in a
 * message would otherwise make PyGObject raise UnicodeDecodeError where
 * the message is parsed, and lose the stream. In place: the message is
 * fresh (refcount 1) in post_message(). */
static void
make_text_utf8 (GstMessage * message)
{
  GstMessageType type = GST_MESSAGE_TYPE (message);
  GError *error = NULL;
  gchar *debug = NULL;
  GstStructure *s;

  if (type != GST_MESSAGE_ERROR && type != GST_MESSAGE_WARNING
      && type != GST_MESSAGE_INFO)
    return;
  if (type == GST_MESSAGE_ERROR)
    gst_message_parse_error (message, &error, &debug);
  else if (type == GST_MESSAGE_WARNING)
    gst_message_parse_warning (message, &error, &debug);
  else
    gst_message_parse_info (message, &error, &debug);
  if (error != NULL && error->message != NULL
      && !g_utf8_validate (error->message, -1, NULL)
      && gst_mini_object_is_writable (GST_MINI_OBJECT_CAST (message))) {
    gchar *text = wsi_text_escape (error->message, -1);

    g_free (error->message);
    error->message = text;
    /* "gerror": the field gst_message_new_error() & co. fill in */
    s = gst_message_writable_structure (message);
    gst_structure_set (s, "gerror", G_TYPE_ERROR, error, NULL);
  }
  if (debug != NULL && !g_utf8_validate (debug, -1, NULL)
      && gst_mini_object_is_writable (GST_MINI_OBJECT_CAST (message))) {
    gchar *text = wsi_text_escape (debug, -1);

    s = gst_message_writable_structure (message);
    gst_structure_set (s, "debug", G_TYPE_STRING, text, NULL);
    g_free (text);
  }
  g_clear_error (&error);
  g_free (debug);
}

void
wsi_error_relay_watch (GstElement * element, GstMessage * message)
{
  RelayedError *relayed;
  GstElement *top;
  GSource *source;

  make_text_utf8 (message);
  if (GST_MESSAGE_TYPE (message) != GST_MESSAGE_ERROR)
    return;
  if (default_context_running ())
    return;

  top = wsi_element_get_top_level (element);
  relayed = g_new0 (RelayedError, 1);
  g_weak_ref_init (&relayed->element, element);
  g_weak_ref_init (&relayed->top, top);
  relayed->cookie = state_cookie_of (top);
  relayed->copy = relay_copy_of (message);
  gst_object_unref (top);

  source = g_idle_source_new ();
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, relay_error, relayed, relayed_error_free);
  g_source_set_static_name (source, "wsi-error-relay");

  g_mutex_lock (&relay_lock);
  if (relay_source != NULL) {
    g_source_destroy (relay_source);
    g_source_unref (relay_source);
  }
  relay_source = source;
  g_source_attach (source, g_main_context_default ());
  g_mutex_unlock (&relay_lock);
}

/* The state cookie (plus one, so that 0 means none) of the element when
 * it last posted an error of its own: the set_state() call it came in. */
static GQuark
own_error_quark (void)
{
  return g_quark_from_static_string ("wsi-own-error");
}

/* GstBaseSrc and GstBaseSink post this ("Failed to start") whenever
 * start() returns FALSE, as a fallback for subclasses that post nothing. */
static gboolean
is_start_fallback (GstMessage * message)
{
  GError *error = NULL;
  gboolean fallback;

  gst_message_parse_error (message, &error, NULL);
  fallback = error != NULL && error->domain == GST_CORE_ERROR
      && error->code == GST_CORE_ERROR_STATE_CHANGE;
  g_clear_error (&error);
  return fallback;
}

gboolean
wsi_error_relay_post (GstElement * element, GstMessage * message,
    GstElementClass * parent_class)
{
  if (GST_MESSAGE_TYPE (message) == GST_MESSAGE_ERROR
      && GST_MESSAGE_SRC (message) == GST_OBJECT_CAST (element)) {
    guint cookie = state_cookie_of (element) + 1;
    guint own = GPOINTER_TO_UINT (g_object_get_qdata (G_OBJECT (element),
            own_error_quark ()));

    if (is_start_fallback (message)) {
      if (own == cookie) {
        GST_DEBUG_OBJECT (element, "dropping the base class's fallback "
            "error: this element said why it could not start");
        gst_message_unref (message);
        return FALSE;
      }
    } else {
      g_object_set_qdata (G_OBJECT (element), own_error_quark (),
          GUINT_TO_POINTER (cookie));
    }
  }
  wsi_error_relay_watch (element, message);
  return parent_class->post_message (element, message);
}

/* The parent class of the class that called wsi_error_relay_class_init(),
 * kept on that class's type. */
static GQuark
relay_parent_quark (void)
{
  return g_quark_from_static_string ("wsi-error-relay-parent");
}

/* The post_message() of every class set up by wsi_error_relay_class_init():
 * subclasses inherit it, so the chain goes on from the parent of the one
 * class in the instance's ancestry that installed it. */
static gboolean
relay_post_message (GstElement * element, GstMessage * message)
{
  GstElementClass *parent = NULL;
  GType type;

  for (type = G_OBJECT_TYPE (element); parent == NULL && type != 0;
      type = g_type_parent (type))
    parent = g_type_get_qdata (type, relay_parent_quark ());
  g_return_val_if_fail (parent != NULL, FALSE);
  return wsi_error_relay_post (element, message, parent);
}

void
wsi_error_relay_class_init (GstElementClass * klass)
{
  GstElementClass *parent = g_type_class_peek_parent (klass);

  if (parent->post_message == relay_post_message)
    return;
  g_type_set_qdata (G_TYPE_FROM_CLASS (klass), relay_parent_quark (),
      parent);
  klass->post_message = GST_DEBUG_FUNCPTR (relay_post_message);
}

gboolean
wsi_error_relay_pending (void)
{
  gboolean pending;

  g_mutex_lock (&relay_lock);
  pending = relay_source != NULL;
  g_mutex_unlock (&relay_lock);
  return pending;
}
