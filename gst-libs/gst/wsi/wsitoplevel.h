/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitoplevel.h: the outermost bin an element sits in, the one object
 * that stands for "this pipeline" to the elements inside it.
 *
 * Why here: three places key something on the pipeline (the error relay
 * its state cookie, wsistore's settings description its element list,
 * wsislide's read caches the registry they share through); they walked
 * the parent chain with three copies of the same loop.
 *
 * Contract: wsi_element_get_top_level() returns a new reference to the
 * last ancestor of @element (gst_object_get_parent() until it returns
 * NULL), or to @element itself when it has no parent; never NULL. A
 * caller that needs to tell "inside a bin" from "alone" compares the
 * result with @element.
 *
 * Cost: one gst_object_get_parent() (an object lock, a ref) per level of
 * nesting; call it at state changes or once per slide, not per buffer.
 *
 * Threading: any thread. The answer can be stale as soon as it returns
 * when the application re-parents the element at the same time; the
 * reference keeps the object alive, nothing more.
 */

#ifndef __WSI_TOP_LEVEL_H__
#define __WSI_TOP_LEVEL_H__

#include <gst/gst.h>

G_BEGIN_DECLS

GstElement *wsi_element_get_top_level (GstElement * element);

G_END_DECLS

#endif /* __WSI_TOP_LEVEL_H__ */
