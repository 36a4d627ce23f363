/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsimaskpolicy.h: where tissuemask's mask of a slide comes from, and
 * where a computed one is kept. A slide's mask is served from memory
 * (wsimaskcache.h: mask-cache-size) when held there; on an in-memory miss
 * from disk (wsimaskstore.h: mask-cache-dir), then kept in memory too;
 * otherwise the element computes it and hands it here, to be kept in
 * memory and written to disk. The source's `wsi-mask-cached` query is
 * answered the same way: a mask found on disk is loaded ahead of its slide
 * buffer (kept first in line, so that the new masks before that visit do
 * not evict it). A file on disk is used only under the same key: the slide
 * path, the slide file's identity (size and mtime; remote slides have none
 * and are not kept on disk), wsislidesrc's thumbnail-size, the format and
 * code revisions, and the value of every mask-shaping property of the
 * element (all its read-write properties but the ones named at creation,
 * so a new property cannot be forgotten). A damaged file is warned about
 * once (naming it) and replaced when the mask is computed again; a folder
 * that cannot be read or written is warned about once and then not used
 * for the rest of the run.
 *
 * Contract: the element calls wsi_mask_policy_settings_changed() whenever
 * a mask-shaping property really changes: the masks in memory are dropped
 * and a mask computed or loaded with the older settings (an older
 * generation) is neither kept nor saved. Every mask returned is a new
 * memory the caller owns. The counters (masks computed, memory hits, disk
 * hits: each mask loaded from disk is counted once, when it reaches its
 * slide) restart with wsi_mask_policy_start().
 *
 * Cost: a memory hit is a hash lookup and a run-length decode; a disk
 * lookup reads one small file (a few KB) and hashes its key; the key's
 * settings part is described once per settings generation (reading the
 * element's properties).
 *
 * Threading: any thread; the policy has its own lock. It reads the
 * element's properties (which take the element's lock) without holding
 * its own, so the element may call it with its own lock held, except
 * wsi_mask_policy_find(), _computed() and _holds(), which may read them.
 */

#ifndef __WSI_MASK_POLICY_H__
#define __WSI_MASK_POLICY_H__

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct _WsiMaskPolicy WsiMaskPolicy;

/* For @element (not referenced: it owns the policy), whose read-write
 * properties but @not_mask_shaping (NULL-terminated) shape its masks;
 * @mask_revision and @opencv_version name the code that makes them (a
 * change makes every stored mask unusable). */
WsiMaskPolicy *wsi_mask_policy_new (GstElement * element,
    const gchar * const *not_mask_shaping, gint mask_revision,
    const gchar * opencv_version, guint max_masks, gsize max_bytes);
void wsi_mask_policy_free (WsiMaskPolicy * policy);

/* A run starts: counters at 0, the folder tried again, the files warned
 * about forgotten. */
void wsi_mask_policy_start (WsiMaskPolicy * policy);
/* A run ends: the masks in memory are dropped. */
void wsi_mask_policy_stop (WsiMaskPolicy * policy);

/* A mask-shaping setting changed. */
void wsi_mask_policy_settings_changed (WsiMaskPolicy * policy);
void wsi_mask_policy_set_max_masks (WsiMaskPolicy * policy, guint max_masks);
/* The folder (NULL or empty: no disk cache); setting it tries it again. */
void wsi_mask_policy_set_dir (WsiMaskPolicy * policy, const gchar * dir);
gchar *wsi_mask_policy_dup_dir (WsiMaskPolicy * policy);

/* What the policy holds and has done, read at once. */
typedef struct
{
  guint generation;             /* a mask computed now is made with it */
  guint max_masks;              /* mask-cache-size */
  gsize bytes;                  /* coded bytes of the masks in memory */
  guint64 computed;             /* masks computed this run */
  guint64 memory_hits;
  guint64 disk_hits;
} WsiMaskPolicyState;

void wsi_mask_policy_get_state (WsiMaskPolicy * policy,
    WsiMaskPolicyState * state);

/* The @width x @height mask of the slide @meta describes (@path), from
 * memory, else (when the size is known) from disk, and its tissue
 * fraction; NULL when it must be computed. */
GstMemory *wsi_mask_policy_find (WsiMaskPolicy * policy,
    const GstStructure * meta, const gchar * path, gint width, gint height,
    gdouble * fraction);

/* Keeps a mask the element computed with the settings of @generation: in
 * memory and on disk, unless the settings changed since. */
void wsi_mask_policy_computed (WsiMaskPolicy * policy,
    const GstStructure * meta, const gchar * path, GstMemory * mask,
    gint width, gint height, gdouble fraction, guint generation);

/* Whether the mask of @path is held, for the source's query: in memory,
 * or on disk under @identity and @thumbnail_size (@identity NULL: not
 * looked for), then loaded for the slide buffer to come. */
gboolean wsi_mask_policy_holds (WsiMaskPolicy * policy, const gchar * path,
    const gchar * identity, gint thumbnail_size);

G_END_DECLS

#endif /* __WSI_MASK_POLICY_H__ */
