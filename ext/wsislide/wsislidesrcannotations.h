/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsislidesrcannotations.h: a slide's annotation regions, as wsislidesrc
 * sends them in its slide meta for patchsampler's annotation-mode.
 *
 * Contract: slide_src_describe_annotations() finds the slide's file (the
 * manifest's `annotations` column, else SLIDE.geojson/.json/.xml in the
 * `annotations` folder, else next to the slide: wsiannotations.h), reads
 * it and writes the fields of gst/wsi/wsiannotation.h into the slide's
 * cached description; a file that cannot be used, and shapes that are
 * dropped, are warned about naming the file, and the slide then has no
 * regions (patchsampler skips and counts it). Called once per slide, on
 * its first open. slide_src_warn_unmatched_annotations() warns about each
 * file of the `annotations` folder named after no slide of the whole
 * collection (most likely a misspelt name).
 *
 * Cost: one parse of the slide's file (wsiannotations.h gives the figures);
 * one listing of the folder per start.
 *
 * Threading: the streaming thread (and start()).
 */

#ifndef __WSI_SLIDE_SRC_ANNOTATIONS_H__
#define __WSI_SLIDE_SRC_ANNOTATIONS_H__

#include "gstwsislidesrcpriv.h"

G_BEGIN_DECLS

void slide_src_describe_annotations (GstWsiSlideSrc * self,
    const WsiSlideEntry * entry, GstStructure * description);
void slide_src_warn_unmatched_annotations (GstWsiSlideSrc * self,
    const WsiCollection * collection);

G_END_DECLS

#endif /* __WSI_SLIDE_SRC_ANNOTATIONS_H__ */
