/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitcga.h: TCGA slide barcodes in file names.
 *
 * Contract: wsi_tcga_parse() reads the barcode in a slide's file name, as
 * the GDC names slides (at the start of the name, or after a character
 * that is neither a letter nor a digit, as in "Aperio-TCGA-..."; ended by
 * a '.' or the end of the name):
 *
 *   TCGA-A1-A0SB-01Z-00-DX1.B34C267B-....svs
 *        |  |    | |  |  |
 *        |  |    | |  |  slide type (DX diagnostic, TS top, BS bottom,
 *        |  |    | |  |  MS middle) and its number
 *        |  |    | |  portion (2 digits)
 *        |  |    | vial (letter)
 *        |  |    sample type (2 digits: 01 primary tumour, 11 normal...)
 *        |  participant (4 characters)
 *        tissue source site (2 characters)
 *
 * and fills WSI_TCGA_N_COLUMNS strings named by wsi_tcga_column_names:
 * project (the nearest of the parent and grandparent folder names that
 * looks like "TCGA-BRCA", else ""; the GDC puts each file in a folder named
 * by its UUID), barcode (TCGA-A1-A0SB-01Z-00-DX1), patient (TCGA-A1-A0SB),
 * sample (TCGA-A1-A0SB-01Z), sample_type (01), vial (Z), portion (00),
 * tissue_source_site (A1), slide_type (DX). Letters are matched
 * case-insensitively and reported in upper case. A name that is not a
 * slide barcode gives FALSE and "" everywhere (project still filled).
 *
 * Cost: a few string operations. Threading: no shared state.
 */

#ifndef __WSI_TCGA_H__
#define __WSI_TCGA_H__

#include <glib.h>

G_BEGIN_DECLS

#define WSI_TCGA_N_COLUMNS 9

extern const gchar *const wsi_tcga_column_names[WSI_TCGA_N_COLUMNS + 1];

/* Fills @values (WSI_TCGA_N_COLUMNS new strings, g_free each) from the
 * file name @path; TRUE when its name holds a slide barcode. */
gboolean wsi_tcga_parse (const gchar * path,
    gchar * values[WSI_TCGA_N_COLUMNS]);

G_END_DECLS

#endif /* __WSI_TCGA_H__ */
