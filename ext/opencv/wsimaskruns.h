/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsimaskruns.h: the run-length core shared by the two codings of a
 * tissue mask: tissuemask's in-memory cache (gsttissuemask.cpp, lengths
 * only, alternating between the mask's two values) and the mask files on
 * disk (wsimaskstore.c, a value byte before each length, versioned
 * format). Only the core is shared; each caller keeps its own framing
 * (count prefix, value bytes, two-value check), so neither coding changes
 * by a byte.
 *
 * Contract: a run length is written as a LEB128 varint (7 bits a byte, low
 * bits first; one byte under 128 pixels, at most 5 bytes for 32 bits).
 * wsi_mask_runs_take_length() reads one back from untrusted bytes: it
 * never reads past @size and refuses a varint longer than 5 bytes or
 * above 32 bits, without touching *@length.
 *
 * Cost: wsi_mask_runs_length_at() compares 8 bytes at a time through long
 * runs of tissue and glass (it runs once per new slide on the streaming
 * thread); the varint functions are a few instructions a byte.
 *
 * Threading: no state; every function may be called from any thread.
 */

#ifndef __WSI_MASK_RUNS_H__
#define __WSI_MASK_RUNS_H__

#include <glib.h>

G_BEGIN_DECLS

/* The most bytes wsi_mask_runs_put_length() writes (35 bits). */
#define WSI_MASK_RUNS_MAX_VARINT_SIZE 5

/* The length of the run of equal bytes that starts at @mask[@at]
 * (@at < @n): 1 to @n - @at. */
gsize wsi_mask_runs_length_at (const guint8 * mask, gsize n, gsize at);

/* Appends @length to @out as a LEB128 varint. */
void wsi_mask_runs_put_length (GByteArray * out, guint32 length);

/* Reads one varint of wsi_mask_runs_put_length() from @data (@size bytes)
 * at *@at and moves *@at past it: FALSE when it runs past @size, takes
 * more than 5 bytes or does not fit 32 bits (*@at is then left anywhere
 * up to @size, *@length untouched). */
gboolean wsi_mask_runs_take_length (const guint8 * data, gsize size,
    gsize * at, guint32 * length);

G_END_DECLS

#endif /* __WSI_MASK_RUNS_H__ */
