/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Numbers outside their range refused by the element, not by GLib: see
 * wsirefusal.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>

#include "wsirefusal.h"

/* ---- param specs whose range GLib does not enforce ------------------- */

/* GLib calls these before set_property(): the value is left as it is and
 * said to be valid, so the wrapped set_property() sees it. */
static gboolean
lax_validate (GParamSpec * pspec, GValue * value)
{
  return FALSE;
}

static gboolean
lax_is_valid (GParamSpec * pspec, const GValue * value)
{
  return TRUE;
}

static void
lax_class_init (gpointer klass, gpointer data)
{
  GParamSpecClass *pclass = klass;

  pclass->value_validate = lax_validate;
  pclass->value_is_valid = lax_is_valid;
}

/* A type derived from GLib's @parent (GParamSpecInt...), so that
 * G_PARAM_SPEC_INT() and gst-inspect-1.0's range line work on it. This
 * file is linked into every plugin: the first one loaded registers it,
 * the others use it (plugins are never unloaded). Plugins load one at a
 * time (the registry's lock). */
static GType
lax_type (GType parent, const gchar * name, guint instance_size)
{
  GTypeInfo info = { 0, };
  GType type = g_type_from_name (name);

  if (type != 0)
    return type;

  info.class_size = sizeof (GParamSpecClass);
  info.class_init = lax_class_init;
  info.instance_size = instance_size;
  return g_type_register_static (parent, name, &info, 0);
}

#define LAX_TYPE_FUNC(func, parent, name, size)                         \
static GType                                                            \
func (void)                                                             \
{                                                                       \
  static gsize type;                                                    \
  if (g_once_init_enter (&type))                                        \
    g_once_init_leave (&type, lax_type (parent, name, size));           \
  return type;                                                          \
}

LAX_TYPE_FUNC (lax_int_type, G_TYPE_PARAM_INT, "WsiParamInt",
    sizeof (GParamSpecInt));
LAX_TYPE_FUNC (lax_uint_type, G_TYPE_PARAM_UINT, "WsiParamUInt",
    sizeof (GParamSpecUInt));
LAX_TYPE_FUNC (lax_int64_type, G_TYPE_PARAM_INT64, "WsiParamInt64",
    sizeof (GParamSpecInt64));
LAX_TYPE_FUNC (lax_uint64_type, G_TYPE_PARAM_UINT64, "WsiParamUInt64",
    sizeof (GParamSpecUInt64));
LAX_TYPE_FUNC (lax_double_type, G_TYPE_PARAM_DOUBLE, "WsiParamDouble",
    sizeof (GParamSpecDouble));

#define LAX_SPEC_NEW(TYPE_FUNC, CType, Cast)                            \
  CType *spec;                                                          \
  g_return_val_if_fail (default_value >= minimum                        \
      && default_value <= maximum, NULL);                               \
  spec = Cast (g_param_spec_internal (TYPE_FUNC (), name, nick, blurb,  \
          flags));                                                      \
  spec->minimum = minimum;                                              \
  spec->maximum = maximum;                                              \
  spec->default_value = default_value;                                  \
  return G_PARAM_SPEC (spec)

GParamSpec *
wsi_param_spec_int (const gchar * name, const gchar * nick,
    const gchar * blurb, gint minimum, gint maximum, gint default_value,
    GParamFlags flags)
{
  LAX_SPEC_NEW (lax_int_type, GParamSpecInt, G_PARAM_SPEC_INT);
}

GParamSpec *
wsi_param_spec_uint (const gchar * name, const gchar * nick,
    const gchar * blurb, guint minimum, guint maximum, guint default_value,
    GParamFlags flags)
{
  LAX_SPEC_NEW (lax_uint_type, GParamSpecUInt, G_PARAM_SPEC_UINT);
}

GParamSpec *
wsi_param_spec_int64 (const gchar * name, const gchar * nick,
    const gchar * blurb, gint64 minimum, gint64 maximum,
    gint64 default_value, GParamFlags flags)
{
  LAX_SPEC_NEW (lax_int64_type, GParamSpecInt64, G_PARAM_SPEC_INT64);
}

GParamSpec *
wsi_param_spec_uint64 (const gchar * name, const gchar * nick,
    const gchar * blurb, guint64 minimum, guint64 maximum,
    guint64 default_value, GParamFlags flags)
{
  LAX_SPEC_NEW (lax_uint64_type, GParamSpecUInt64, G_PARAM_SPEC_UINT64);
}

GParamSpec *
wsi_param_spec_double (const gchar * name, const gchar * nick,
    const gchar * blurb, gdouble minimum, gdouble maximum,
    gdouble default_value, GParamFlags flags)
{
  LAX_SPEC_NEW (lax_double_type, GParamSpecDouble, G_PARAM_SPEC_DOUBLE);
}

/* NULL when @value is inside @pspec's range (or @pspec is not one of
 * ours); else the value as text, and in @accepted the range. */
static gchar *
out_of_range (GParamSpec * pspec, const GValue * value, gchar ** accepted)
{
  GType type = G_PARAM_SPEC_TYPE (pspec);

  if (type == lax_int_type ()) {
    GParamSpecInt *spec = G_PARAM_SPEC_INT (pspec);
    gint v = g_value_get_int (value);

    if (v >= spec->minimum && v <= spec->maximum)
      return NULL;
    *accepted = g_strdup_printf ("an integer from %d to %d", spec->minimum,
        spec->maximum);
    return g_strdup_printf ("%d", v);
  }
  if (type == lax_uint_type ()) {
    GParamSpecUInt *spec = G_PARAM_SPEC_UINT (pspec);
    guint v = g_value_get_uint (value);

    if (v >= spec->minimum && v <= spec->maximum)
      return NULL;
    *accepted = g_strdup_printf ("an integer from %u to %u", spec->minimum,
        spec->maximum);
    /* "-5" reaches an unsigned property as 4294967291: say both */
    if (v > G_MAXINT)
      return g_strdup_printf ("%u, that is %d read as unsigned", v, (gint) v);
    return g_strdup_printf ("%u", v);
  }
  if (type == lax_int64_type ()) {
    GParamSpecInt64 *spec = G_PARAM_SPEC_INT64 (pspec);
    gint64 v = g_value_get_int64 (value);

    if (v >= spec->minimum && v <= spec->maximum)
      return NULL;
    *accepted = g_strdup_printf ("an integer from %" G_GINT64_FORMAT " to %"
        G_GINT64_FORMAT, spec->minimum, spec->maximum);
    return g_strdup_printf ("%" G_GINT64_FORMAT, v);
  }
  if (type == lax_uint64_type ()) {
    GParamSpecUInt64 *spec = G_PARAM_SPEC_UINT64 (pspec);
    guint64 v = g_value_get_uint64 (value);

    if (v >= spec->minimum && v <= spec->maximum)
      return NULL;
    *accepted = g_strdup_printf ("an integer from %" G_GUINT64_FORMAT " to %"
        G_GUINT64_FORMAT, spec->minimum, spec->maximum);
    if (v > G_MAXINT64)
      return g_strdup_printf ("%" G_GUINT64_FORMAT ", that is %"
          G_GINT64_FORMAT " read as unsigned", v, (gint64) v);
    return g_strdup_printf ("%" G_GUINT64_FORMAT, v);
  }
  if (type == lax_double_type ()) {
    GParamSpecDouble *spec = G_PARAM_SPEC_DOUBLE (pspec);
    gdouble v = g_value_get_double (value);
    gchar lo[G_ASCII_DTOSTR_BUF_SIZE], hi[G_ASCII_DTOSTR_BUF_SIZE];

    /* written so that NaN fails it */
    if (v >= spec->minimum && v <= spec->maximum)
      return NULL;
    *accepted = g_strdup_printf ("a number from %s to %s",
        g_ascii_formatd (lo, sizeof (lo), "%g", spec->minimum),
        g_ascii_formatd (hi, sizeof (hi), "%g", spec->maximum));
    if (isnan (v))
      return g_strdup ("nan");
    return g_strdup (g_ascii_formatd (lo, sizeof (lo), "%g", v));
  }
  return NULL;
}

/* ---- the element's table of refusals --------------------------------- */

G_LOCK_DEFINE_STATIC (refusal_tables);

static void
refusal_slot_free (gpointer data)
{
  GHashTable **slot = data;

  wsi_refusal_clear (slot);
  g_free (slot);
}

GHashTable **
wsi_refusal_of (gpointer element)
{
  GQuark quark = g_quark_from_static_string ("wsi-refused");
  GHashTable **slot;

  G_LOCK (refusal_tables);
  slot = g_object_get_qdata (G_OBJECT (element), quark);
  if (slot == NULL) {
    slot = g_new0 (GHashTable *, 1);
    g_object_set_qdata_full (G_OBJECT (element), quark, slot,
        refusal_slot_free);
  }
  G_UNLOCK (refusal_tables);
  return slot;
}

/* ---- the wrapped vfuncs ----------------------------------------------- */

/* What a class had before wsi_refusal_class_init() (type data). */
typedef struct
{
  void (*set_property) (GObject *, guint, const GValue *, GParamSpec *);
  GstStateChangeReturn (*change_state) (GstElement *, GstStateChange);
} Originals;

static GQuark
originals_quark (void)
{
  return g_quark_from_static_string ("wsi-refusal-originals");
}

/* The originals of @type or of its nearest ancestor that has them (with a
 * change_state() when @need_change_state). */
static const Originals *
originals_of (GType type, gboolean need_change_state)
{
  for (; type != 0; type = g_type_parent (type)) {
    const Originals *originals = g_type_get_qdata (type, originals_quark ());

    if (originals != NULL
        && (!need_change_state || originals->change_state != NULL))
      return originals;
  }
  g_assert_not_reached ();
  return NULL;
}

static void
refusal_set_property (GObject * object, guint prop_id, const GValue * value,
    GParamSpec * pspec)
{
  const Originals *originals = originals_of (pspec->owner_type, FALSE);
  gchar *accepted = NULL;
  gchar *text = out_of_range (pspec, value, &accepted);
  gboolean running;

  if (text == NULL) {
    /* taken: forget an earlier refusal first, so that the element's own
     * validation of this value (a list, an odd kernel) can record one */
    GST_OBJECT_LOCK (object);
    wsi_refusal_forget (wsi_refusal_of (object), pspec->name);
    GST_OBJECT_UNLOCK (object);
    originals->set_property (object, prop_id, value, pspec);
    return;
  }

  GST_OBJECT_LOCK (object);
  wsi_refusal_record (wsi_refusal_of (object), pspec->name, text, accepted);
  running = GST_STATE (GST_ELEMENT (object)) >= GST_STATE_PAUSED;
  GST_OBJECT_UNLOCK (object);
  GST_INFO_OBJECT (object, "refused %s=%s (accepted: %s)", pspec->name, text,
      accepted);
  if (running)
    GST_ELEMENT_WARNING (GST_ELEMENT (object), RESOURCE, SETTINGS,
        ("%s=\"%s\" refused (accepted: %s); the current value is kept, and "
            "%s will refuse to start again until it is set to an accepted "
            "one.", pspec->name, text, accepted, GST_OBJECT_NAME (object)),
        (NULL));
  g_free (text);
  g_free (accepted);
}

static GstStateChangeReturn
refusal_change_state (GstElement * element, GstStateChange transition)
{
  const Originals *originals = originals_of (G_OBJECT_TYPE (element), TRUE);

  if ((transition == GST_STATE_CHANGE_NULL_TO_READY
          || transition == GST_STATE_CHANGE_READY_TO_PAUSED)
      && !wsi_refusal_check (element, wsi_refusal_of (element)))
    return GST_STATE_CHANGE_FAILURE;
  return originals->change_state (element, transition);
}

static void
wrap (GObjectClass * klass, gboolean change_state)
{
  GType type = G_TYPE_FROM_CLASS (klass);
  Originals *originals;

  g_return_if_fail (g_type_get_qdata (type, originals_quark ()) == NULL);
  g_return_if_fail (klass->set_property != NULL);
  /* per class, for the life of the process, as the class itself */
  originals = g_new0 (Originals, 1);
  originals->set_property = klass->set_property;
  klass->set_property = refusal_set_property;
  if (change_state) {
    GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

    originals->change_state = element_class->change_state;
    element_class->change_state = refusal_change_state;
  }
  g_type_set_qdata (type, originals_quark (), originals);
}

void
wsi_refusal_class_init (GstElementClass * klass)
{
  wrap (G_OBJECT_CLASS (klass), TRUE);
}

void
wsi_refusal_class_init_properties (GObjectClass * klass)
{
  wrap (klass, FALSE);
}
