/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsiworkmeta.c: the pool's per-item timing meta (see wsiworkmeta.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsiworkmeta.h"

#include <string.h>

static gboolean
work_meta_init (GstMeta * meta, gpointer params, GstBuffer * buffer)
{
  WsiWorkMeta *m = (WsiWorkMeta *) meta;

  m->pad = NULL;
  m->worker_name = NULL;
  m->worker_tid = m->queued_tid = 0;
  m->start = m->end = m->wait_start = m->wait_end = 0;
  memset (&m->io, 0, sizeof (m->io));
  return TRUE;
}

/* The pool is a static library linked into several plugins: each copy
 * looks the meta up by name before registering it, and the lock makes the
 * check-then-register of one copy atomic. */
const GstMetaInfo *
wsi_work_meta_get_info (void)
{
  static const gchar *tags[] = { NULL };
  static GMutex lock;
  const GstMetaInfo *info = gst_meta_get_info (WSI_WORK_META_NAME);
  GType api;

  if (G_LIKELY (info != NULL))
    return info;
  g_mutex_lock (&lock);
  info = gst_meta_get_info (WSI_WORK_META_NAME);
  if (info == NULL) {
    api = g_type_from_name (WSI_WORK_META_API_NAME);
    if (api == 0)
      api = gst_meta_api_type_register (WSI_WORK_META_API_NAME, tags);
    /* no transform function: copies of the buffer do not carry it */
    info = gst_meta_register (api, WSI_WORK_META_NAME, sizeof (WsiWorkMeta),
        work_meta_init, NULL, NULL);
  }
  g_mutex_unlock (&lock);
  return info;
}

WsiWorkMeta *
wsi_work_meta_ensure (GstBuffer * buffer)
{
  const GstMetaInfo *info = wsi_work_meta_get_info ();
  WsiWorkMeta *m = (WsiWorkMeta *) gst_buffer_get_meta (buffer, info->api);

  if (m == NULL)
    m = (WsiWorkMeta *) gst_buffer_add_meta (buffer, info, NULL);
  return m;
}

/* ---- I/O waits of the item a thread is making ----------------------------- */

/* The thread's current item's WsiWorkIoWaits is kept under one key per
 * process, not one per copy of this file. Each plugin links its own copy
 * of the pool, but the WsiPoolElement class is registered once, by name,
 * by the first plugin loaded: patchreader's workers may run wsipatch's
 * copy of the pool (begin and end on that copy's key) while wsislide's
 * byte sources note waits through wsislide's copy of
 * wsi_work_io_wait_note(). With a key per copy every wait was lost when
 * wsipatch happened to load first (an in-process registry scan does). The
 * first copy to ask publishes its key on the default registry, a
 * process-wide object, with a compare-and-set; every copy uses that one. */
static GPrivate own_waits_key;  /* WsiWorkIoWaits *, or NULL */

static GPrivate *
waits_key (void)
{
  static GPrivate *key;

  if (g_once_init_enter (&key)) {
    GObject *registry = G_OBJECT (gst_registry_get ());
    GQuark quark = g_quark_from_static_string ("wsi-work-io-waits-key");

    g_object_replace_qdata (registry, quark, NULL, &own_waits_key, NULL,
        NULL);
    g_once_init_leave (&key, g_object_get_qdata (registry, quark));
  }
  return key;
}

void
wsi_work_io_waits_begin (WsiWorkIoWaits * waits)
{
  memset (waits, 0, sizeof (*waits));
  g_private_set (waits_key (), waits);
}

void
wsi_work_io_waits_end (void)
{
  g_private_set (waits_key (), NULL);
}

void
wsi_work_io_wait_note (guint64 start_ns, guint64 end_ns)
{
  WsiWorkIoWaits *waits = g_private_get (waits_key ());

  if (waits == NULL || end_ns < start_ns)
    return;
  waits->count++;
  waits->total_ns += end_ns - start_ns;
  if (waits->n < WSI_WORK_IO_WAITS) {
    waits->start[waits->n] = start_ns;
    waits->end[waits->n] = end_ns;
    waits->n++;
  }
}
