/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsimaskstore.h: tissue masks kept on disk, one file per (slide, slide
 * file identity, settings), so that a later run, or an epoch over more
 * slides than tissuemask's memory holds, skips the slide's overview read
 * and mask computation (issue 23).
 *
 * Contract: the caller builds the key: a text holding everything the mask
 * depends on (slide path or URI as given, the slide file's identity, every
 * mask-shaping setting); wsi_mask_store_key_add() appends one "name=value"
 * line to it. The file is named after the SHA-256 of the key (never the
 * path or URL itself: no credentials in file names) and holds the key, so
 * a load compares it: a file for another key, of another format version,
 * truncated or corrupt is refused with an error naming the file and the
 * reason (the caller warns and stores a fresh mask over it). A file is
 * written to a temporary name in the same folder and renamed into place,
 * so readers (other processes, other ranks sharing the folder) see either
 * no file or a whole one; two writers of the same key write the same bytes.
 *
 * Format (version WSI_MASK_STORE_VERSION, little-endian): "GWSIMASK",
 * u32 version, u32 key length, key bytes, u32 width, u32 height, f64
 * tissue fraction, u32 run count, runs (u8 value, then the length as a
 * LEB128 varint of wsimaskruns.h: one byte under 128 pixels; any byte
 * value, so the format does not depend on how tissuemask codes masks in
 * memory), then the SHA-256 of all the bytes before it. wsi_mask_store_parse() validates every length against
 * the bytes present and the runs against width x height before it writes
 * a byte of the mask: it is fuzzed (tests/fuzz/libfuzzer/fuzz-maskstore.c).
 *
 * Cost: a file is 2-4 bytes a run: a few KB for bench-churn's synthetic
 * slides at 1024 px, about 100 KB for a mask of detailed H&E texture;
 * a load is one read and one SHA-256, a store one write and one rename:
 * below the 8-11 ms of CPU an overview decode and a mask cost. Nothing is evicted: the folder grows by one file per slide and
 * settings (delete it to reclaim the space).
 *
 * Threading: no state; every function may be called from any thread.
 */

#ifndef __WSI_MASK_STORE_H__
#define __WSI_MASK_STORE_H__

#include <glib.h>

G_BEGIN_DECLS

#define WSI_MASK_STORE_VERSION 2
/* Longest overview side a stored mask may have (wsislidesrc's
 * thumbnail-size maximum). */
#define WSI_MASK_STORE_MAX_SIDE 8192

/* A mask as stored: @width x @height bytes, 0 = background, 255 = tissue
 * (any byte value survives a round trip). */
typedef struct
{
  guint width;
  guint height;
  gdouble fraction;
  GBytes *mask;
} WsiStoredMask;

void wsi_mask_stored_clear (WsiStoredMask * stored);

/* Appends "@name=@value\n" to @key (a newline or '=' in @value is
 * escaped, so two different lists never make the same key). */
void wsi_mask_store_key_add (GString * key, const gchar * name,
    const gchar * value);

/* The file in @dir that holds @key's mask (a new string). */
gchar *wsi_mask_store_file (const gchar * dir, const gchar * key);

/* Parses the bytes of a mask file: TRUE and @stored filled (free with
 * wsi_mask_stored_clear) when they are whole and hold @key's mask; FALSE
 * and @error (without the file name) otherwise. */
gboolean wsi_mask_store_parse (const guint8 * data, gsize size,
    const gchar * key, WsiStoredMask * stored, GError ** error);

/* Loads @key's mask from @dir. FALSE with @error NULL: no such file or
 * folder (an ordinary miss); FALSE with @error G_FILE_ERROR_INVAL: the
 * file cannot be used (the message names it and says why); another
 * G_FILE_ERROR: the file cannot be read (a folder problem). */
gboolean wsi_mask_store_load (const gchar * dir, const gchar * key,
    WsiStoredMask * stored, GError ** error);

/* Writes @key's mask (@width x @height bytes) to @dir, creating the
 * folder when missing; FALSE with @error naming the folder or file and
 * the reason when it cannot. */
gboolean wsi_mask_store_save (const gchar * dir, const gchar * key,
    const guint8 * mask, guint width, guint height, gdouble fraction,
    GError ** error);

G_END_DECLS

#endif /* __WSI_MASK_STORE_H__ */
