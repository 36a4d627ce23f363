/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistoreresume.h: the directory patchstoresink starts writing a native
 * store into — a new store begun, or an interrupted one continued
 * (`resume=true`) with the same stream and nothing else.
 *
 * Contract: wsi_store_resume_prepare() creates @dir. A directory without a
 * store gets the settings record of @manifest's pipeline
 * (wsistoresettings.h) and writing starts at the first shard. A directory
 * that holds a store (complete or not) is refused unless @resume; when
 * resuming, the recorded settings must make the same stream as
 * @manifest->pipeline (a store that recorded none is resumed with a
 * warning and records them now), a complete store's manifest is removed
 * (it is incomplete again until the new one), "*.tmp" leftovers are
 * removed, and the complete shards written with @manifest->encoding and
 * @manifest->patches_per_shard are appended to @manifest->shards in order;
 * a damaged shard and every later one is removed with a warning (written
 * again), and a short last shard (a finished store's) is removed too, to
 * be written again longer. *skip is set to the patches those shards hold:
 * the stream's first patches, which the sink drops rather than writes
 * again. Returns FALSE after posting an element error naming @dir and the
 * reason (not creatable, another store, other settings, shards of another
 * size or encoding).
 *
 * Cost: one directory scan and each complete shard's index and checksum
 * read once (wsi_shard_open() with verification), at start only.
 *
 * Threading: the sink's start (the thread changing the state); errors,
 * warnings and logs are posted on @element.
 */

#ifndef __WSI_STORE_RESUME_H__
#define __WSI_STORE_RESUME_H__

#include <gst/gst.h>

#include "wsistoremanifest.h"

G_BEGIN_DECLS

gboolean wsi_store_resume_prepare (GstElement * element, const gchar * dir,
    WsiStoreManifest * manifest, gboolean resume, guint64 * skip);

G_END_DECLS

#endif /* __WSI_STORE_RESUME_H__ */
