/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsireadsources.h: the byte sources this build has, registered into the
 * byte-source scheme table (wsi_byte_source_register_scheme()). The one
 * place that names them, as a plugin's init names its elements; the
 * byte-source base knows none of them.
 *
 * Contract: after wsi_read_sources_init(), wsi_byte_source_open() opens
 * every scheme the build reads (http, https, s3 and gs where libcurl was
 * found; local paths and file:// always). Before it, a remote location is
 * refused as unsupported. Called by the entry points of the read layer
 * (wsi_slide_open(), the wsislide plugin's one-time init); a program that
 * opens byte sources by itself calls it first.
 *
 * Cost: registers a handful of table entries, once per process.
 *
 * Threading: any thread, any number of times.
 */

#ifndef __WSI_READ_SOURCES_H__
#define __WSI_READ_SOURCES_H__

#include <glib.h>

G_BEGIN_DECLS

void wsi_read_sources_init (void);

G_END_DECLS

#endif /* __WSI_READ_SOURCES_H__ */
