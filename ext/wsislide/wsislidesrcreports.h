/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsislidesrcreports.h: what wsislidesrc tells about its slides — the
 * warnings given once per slide and the counters behind its read-only
 * properties.
 *
 * Contract: a slide another backend reads because the direct reader
 * declined it, a damaged slide (counted in slides-damaged, its name kept
 * for damaged-slides, the first 100), a slide that cannot be read or that
 * a reader downstream gave up (`wsi-slide-given-up`: counted in
 * slides-failed and skipped from then on), a TCGA name without a barcode:
 * each is warned about once, naming the slide (as shown, without
 * credentials) and the reason without the path repeated. A slide
 * tissuemask rejected (`wsi-slide-rejected`) is counted once in
 * slides-rejected (and slides-blank when its mask is empty).
 * slide_src_describe_failures() names the first five failed slides and why,
 * for the error that ends a rank of which no slide can be read;
 * slide_src_post_no_slides_error() says why a rank got no slide at all.
 *
 * Cost: a lock round trip per counted slide; nothing per buffer.
 *
 * Threading: counters under the element's lock (read by get_property);
 * the given-up reports are queued by the event handler (any thread) and
 * taken by the streaming thread; the rest runs on the streaming thread.
 */

#ifndef __WSI_SLIDE_SRC_REPORTS_H__
#define __WSI_SLIDE_SRC_REPORTS_H__

#include "gstwsislidesrcpriv.h"

G_BEGIN_DECLS

void slide_src_warn_declined (GstWsiSlideSrc * self,
    const WsiSlideEntry * entry, const gchar * declined,
    const GstStructure * description);
void slide_src_warn_damaged (GstWsiSlideSrc * self,
    const WsiSlideEntry * entry, const gchar * damaged);
gchar **slide_src_damaged_names_copy (GstWsiSlideSrc * self);
void slide_src_report_unreadable (GstWsiSlideSrc * self,
    WsiSlideEntry * entry, const GError * error);
gchar *slide_src_describe_failures (GstWsiSlideSrc * self);
void slide_src_skip_given_up (GstWsiSlideSrc * self);
void slide_src_warn_tcga_unparsed (GstWsiSlideSrc * self,
    WsiSlideEntry * entry);
void slide_src_count_rejected (GstWsiSlideSrc * self, GstEvent * event);
void slide_src_post_no_slides_error (GstWsiSlideSrc * self);

G_END_DECLS

#endif /* __WSI_SLIDE_SRC_REPORTS_H__ */
