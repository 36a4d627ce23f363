/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsilockedstr.h: a string setting kept under a mutex — set by a property
 * setter (the application's thread) and read by workers or getters — set
 * and copied in one place (tissuemask's mask folder, the slide cache's
 * backend name).
 *
 * Contract: wsi_locked_str_set() replaces *@field by a copy of @value
 * (NULL allowed) with @lock held, freeing the old string after it is
 * replaced. wsi_locked_str_dup() returns a copy of *@field taken with
 * @lock held (NULL when unset); the caller frees it, so the copy stays
 * valid whatever a later set does. Neither may be called with @lock
 * already held (GMutex is not recursive): a setter that changes other
 * fields under the same lock at the same time writes its own section.
 *
 * Cost: one lock round trip and one string copy.
 *
 * Threading: any thread. Header only (GLib).
 */

#ifndef __WSI_LOCKED_STR_H__
#define __WSI_LOCKED_STR_H__

#include <glib.h>

G_BEGIN_DECLS

static inline void
wsi_locked_str_set (GMutex * lock, gchar ** field, const gchar * value)
{
  gchar *copy = g_strdup (value), *old;

  g_mutex_lock (lock);
  old = *field;
  *field = copy;
  g_mutex_unlock (lock);
  g_free (old);
}

static inline gchar *
wsi_locked_str_dup (GMutex * lock, gchar * const *field)
{
  gchar *copy;

  g_mutex_lock (lock);
  copy = g_strdup (*field);
  g_mutex_unlock (lock);
  return copy;
}

G_END_DECLS

#endif /* __WSI_LOCKED_STR_H__ */
