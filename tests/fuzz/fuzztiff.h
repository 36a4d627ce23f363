/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzztiff.h: the TIFF-aware half of wsi-fuzz-slides: a tolerant parser of
 * the IFD chain of a seed (classic TIFF and BigTIFF, either byte order)
 * that records where every header field, IFD entry, tag value and tile
 * lies in the file, the structure-aware mutations that use it, and a
 * classic -> BigTIFF converter for seeds.
 */

#ifndef __WSI_FUZZ_TIFF_H__
#define __WSI_FUZZ_TIFF_H__

#include <glib.h>

G_BEGIN_DECLS

/* splitmix64: small, fast, the same on every platform. */
typedef struct
{
  guint64 state;
} FuzzRng;

void fuzz_rng_init (FuzzRng * rng, guint64 seed);
guint64 fuzz_rng_next (FuzzRng * rng);
/* 0 .. n-1 (0 when n == 0) */
guint64 fuzz_rng_below (FuzzRng * rng, guint64 n);
/* TRUE with probability percent / 100 */
gboolean fuzz_rng_chance (FuzzRng * rng, guint percent);

typedef struct
{
  gsize pos;                    /* file offset of the 12/20-byte entry */
  guint ifd;                    /* index of its IFD in the chain */
  guint16 tag, type;
  guint64 count;
  gboolean inline_value;        /* value bytes are in the entry itself */
  guint64 value_pos;            /* file offset of the value bytes */
  gsize value_field_pos;        /* the entry's value/offset field */
} FuzzTiffEntry;

typedef struct
{
  gsize pos;                    /* file offset of the IFD (its count) */
  guint64 n_entries;
  gsize first_entry;            /* index in FuzzTiffInfo.entries */
  gsize next_pos;               /* file offset of the next-IFD pointer */
} FuzzTiffIfd;

typedef struct
{
  guint64 offset, size;
  guint ifd;
} FuzzTiffRange;

typedef struct
{
  gboolean valid;               /* a TIFF header and at least one IFD */
  gboolean big;                 /* BigTIFF */
  gboolean be;                  /* big-endian ("MM") */
  GArray *ifds;                 /* FuzzTiffIfd */
  GArray *entries;              /* FuzzTiffEntry */
  GArray *tiles;                /* FuzzTiffRange: tiles and strips */
} FuzzTiffInfo;

void fuzz_tiff_parse (FuzzTiffInfo * info, const guint8 * data, gsize size);
void fuzz_tiff_info_clear (FuzzTiffInfo * info);

/* Applies one random mutation of a random kind (or of @kind when it is not
 * NULL: "header", "entry", "ifd", "value", "tile", "jpeg", "offset",
 * "havoc", "truncate") to @buf, whose layout @info describes (it may
 * already be mutated: every write is bounds-checked). Appends what it did
 * to @log. */
void fuzz_tiff_mutate (GByteArray * buf, const FuzzTiffInfo * info,
    FuzzRng * rng, const gchar * kind, GString * log);

/* The mutation kinds, NULL-terminated. */
extern const gchar *const fuzz_tiff_mutation_kinds[];

/* A BigTIFF copy of a classic TIFF (same byte order, same data, IFDs
 * rewritten at the end with 64-bit offsets), or NULL when @data is not a
 * classic TIFF this converter handles. */
GByteArray *fuzz_tiff_to_bigtiff (const guint8 * data, gsize size);

/* Tile/strip slots of @info (every element of every TileOffsets and
 * StripOffsets array that has byte counts), in file order of the IFDs. */
guint fuzz_tiff_count_slots (const FuzzTiffInfo * info);

/* A rewritten, compact copy of @data: the same IFD chain, tags and values,
 * with only the tile/strip data of the slots not in @drop (@n_drop flags;
 * a dropped slot gets offset 0 and byte count 0); data no IFD refers to is
 * gone. Offsets that pointed outside the file are kept as they were.
 * NULL when @data has no IFD this parser reads. */
GByteArray *fuzz_tiff_compact (const guint8 * data, gsize size,
    const gboolean * drop, guint n_drop);

G_END_DECLS

#endif /* __WSI_FUZZ_TIFF_H__ */
