/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsinumberlist.h: a list of numbers written as text, the one way
 * patchsampler writes its resolution lists back (`target-mpps`,
 * `mpp-weights`: "%g", ',') and the stain columns write their estimates
 * ("%.17g", ' ', so they read back exactly).
 *
 * Contract: wsi_number_list_format() returns @n numbers printed with the
 * printf @format (one double conversion, e.g. "%g") in the C locale
 * (g_ascii_formatd(): a '.' decimal point whatever the process locale),
 * @separator between them, nothing around; "" for none. The caller frees
 * it.
 *
 * Cost: one allocation per list. Threading: any thread (no state).
 */

#ifndef __WSI_NUMBER_LIST_H__
#define __WSI_NUMBER_LIST_H__

#include <glib.h>

G_BEGIN_DECLS

gchar *wsi_number_list_format (const gdouble * values, guint n,
    gchar separator, const gchar * format);

G_END_DECLS

#endif /* __WSI_NUMBER_LIST_H__ */
