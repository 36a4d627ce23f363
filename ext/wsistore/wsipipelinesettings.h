/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsipipelinesettings.h: what produced a stream, for a patch store's
 * manifest: every element of the pipeline around an element, with the
 * properties that differ from their defaults.
 *
 * Contract: returns a JSON array, one object per element sorted by name:
 * {"element": factory name, "name": element name, "properties": {name:
 * value as gst_value_serialize() writes it}}; only readable and writable
 * properties are listed (counters and read-only state are not settings),
 * "name" and "parent" never. @seed gets wsislidesrc's seed when the
 * pipeline has one. Values are the ones set when it is called (the sink's
 * start).
 *
 * Cost: one walk of the bin, a few µs per property. Threading: call from
 * a state change, not while properties are being set elsewhere.
 */

#ifndef __WSI_PIPELINE_SETTINGS_H__
#define __WSI_PIPELINE_SETTINGS_H__

#include <gst/gst.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

JsonNode *wsi_pipeline_settings_describe (GstElement * element,
    gboolean * has_seed, guint64 * seed);

G_END_DECLS

#endif /* __WSI_PIPELINE_SETTINGS_H__ */
