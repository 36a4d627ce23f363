/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistoresettings.h: the settings a patch store was written with, kept
 * from the first shard on, so that patchstoresink resume=true continues
 * the same stream and nothing else.
 *
 * Contract: wsi_store_settings_record() writes @pipeline (the JSON array of
 * wsipipelinesettings.h) to WSI_STORE_SETTINGS in @dir, through a
 * temporary name and a rename. wsi_store_settings_recorded() returns what
 * the store recorded: the manifest's "pipeline" when the store is complete,
 * else the settings file; NULL without an error when the store recorded
 * nothing (written by an older gst-wsi), NULL with an error when the record
 * cannot be read. wsi_store_settings_difference() returns NULL when
 * @current makes the same stream as @recorded, else one sentence naming
 * the first setting that differs and both values ("wsislidesrc0 seed: 3
 * in the store, 4 now"). Settings that change speed and not the stream
 * (threads, caches, prefetch, queue sizes, the sink's sync, resume and
 * location, ...) and stream-neutral elements (queues, identity, tee) are
 * not compared; a property absent from one side is at its default.
 *
 * Cost: one small JSON file read or written per start. Threading: the
 * sink's start, no shared state.
 */

#ifndef __WSI_STORE_SETTINGS_H__
#define __WSI_STORE_SETTINGS_H__

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define WSI_STORE_SETTINGS "settings.json"

gboolean wsi_store_settings_record (const gchar * dir, JsonNode * pipeline,
    GError ** error);

JsonNode *wsi_store_settings_recorded (const gchar * dir, GError ** error);

gchar *wsi_store_settings_difference (JsonNode * recorded,
    JsonNode * current);

G_END_DECLS

#endif /* __WSI_STORE_SETTINGS_H__ */
