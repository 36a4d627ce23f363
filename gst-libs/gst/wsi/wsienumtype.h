/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsienumtype.h: the one registration of an element's enumeration type
 * (a property's GEnum or GFlags), so that each `_get_type()` function holds only its
 * table of values.
 *
 * Contract: wsi_enum_type_once() registers @values under @name the first
 * time any thread calls it with @type_id, and returns that type ever
 * after; @type_id and @values must be static (GLib keeps the table).
 * wsi_flags_type_once() does the same for a flags type (a property whose
 * values combine, "a+b").
 *
 * Cost: one atomic read once registered.
 *
 * Threading: any thread (g_once_init_enter). Header only (GLib).
 */

#ifndef __WSI_ENUM_TYPE_H__
#define __WSI_ENUM_TYPE_H__

#include <glib-object.h>

G_BEGIN_DECLS

static inline GType
wsi_enum_type_once (gsize * type_id, const gchar * name,
    const GEnumValue * values)
{
  if (g_once_init_enter (type_id)) {
    GType type = g_enum_register_static (name, values);

    g_once_init_leave (type_id, type);
  }
  return (GType) * type_id;
}

static inline GType
wsi_flags_type_once (gsize * type_id, const gchar * name,
    const GFlagsValue * values)
{
  if (g_once_init_enter (type_id)) {
    GType type = g_flags_register_static (name, values);

    g_once_init_leave (type_id, type);
  }
  return (GType) * type_id;
}

G_END_DECLS

#endif /* __WSI_ENUM_TYPE_H__ */
