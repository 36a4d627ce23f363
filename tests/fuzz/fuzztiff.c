/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* fuzztiff.c: TIFF structure and mutations for wsi-fuzz-slides (see
 * fuzztiff.h). Nothing here trusts the file: every read and write is
 * bounds-checked, the IFD walk stops at loops and at 256 directories. */

#include "fuzztiff.h"

#include <string.h>

/* ---- random numbers ------------------------------------------------------ */

void
fuzz_rng_init (FuzzRng * rng, guint64 seed)
{
  rng->state = seed ^ G_GUINT64_CONSTANT (0x5eed5eed5eed5eed);
  fuzz_rng_next (rng);
}

guint64
fuzz_rng_next (FuzzRng * rng)
{
  guint64 z = (rng->state += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));

  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

guint64
fuzz_rng_below (FuzzRng * rng, guint64 n)
{
  return n == 0 ? 0 : fuzz_rng_next (rng) % n;
}

gboolean
fuzz_rng_chance (FuzzRng * rng, guint percent)
{
  return fuzz_rng_below (rng, 100) < percent;
}

/* ---- bounds-checked integer access --------------------------------------- */

static guint64
rd (const guint8 * data, gsize size, guint64 pos, guint bytes, gboolean be,
    gboolean * ok)
{
  guint64 v = 0;
  guint i;

  if (pos > size || bytes > size - pos) {
    if (ok)
      *ok = FALSE;
    return 0;
  }
  for (i = 0; i < bytes; i++) {
    guint8 b = data[pos + (be ? i : bytes - 1 - i)];
    v = (v << 8) | b;
  }
  return v;
}

static void
wr (GByteArray * buf, guint64 pos, guint bytes, gboolean be, guint64 v)
{
  guint i;

  if (pos > buf->len || bytes > buf->len - pos)
    return;
  for (i = 0; i < bytes; i++) {
    guint8 b = (v >> (8 * i)) & 0xff;
    buf->data[pos + (be ? bytes - 1 - i : i)] = b;
  }
}

/* Bytes per element of a TIFF field type (0: unknown type). */
static guint
type_size (guint type)
{
  switch (type) {
    case 1: case 2: case 6: case 7:
      return 1;
    case 3: case 8:
      return 2;
    case 4: case 9: case 11: case 13:
      return 4;
    case 5: case 10: case 12: case 16: case 17: case 18:
      return 8;
    default:
      return 0;
  }
}

/* Element width of an integer array (SHORT, LONG, LONG8, IFD...). */
static guint
int_size (guint type)
{
  switch (type) {
    case 1: case 6: case 7:
      return 1;
    case 3: case 8:
      return 2;
    case 4: case 9: case 13:
      return 4;
    case 16: case 17: case 18:
      return 8;
    case 5: case 10:
      return 4;                 /* the numerator */
    default:
      return 0;
  }
}

/* ---- parsing ------------------------------------------------------------- */

#define MAX_IFDS 256
#define MAX_ENTRIES_PER_IFD 4096

enum
{
  TAG_SUBFILE_TYPE = 254,
  TAG_IMAGE_WIDTH = 256,
  TAG_IMAGE_LENGTH = 257,
  TAG_BITS_PER_SAMPLE = 258,
  TAG_COMPRESSION = 259,
  TAG_PHOTOMETRIC = 262,
  TAG_IMAGE_DESCRIPTION = 270,
  TAG_STRIP_OFFSETS = 273,
  TAG_SAMPLES_PER_PIXEL = 277,
  TAG_ROWS_PER_STRIP = 278,
  TAG_STRIP_BYTE_COUNTS = 279,
  TAG_X_RESOLUTION = 282,
  TAG_Y_RESOLUTION = 283,
  TAG_PLANAR_CONFIG = 284,
  TAG_RESOLUTION_UNIT = 296,
  TAG_SOFTWARE = 305,
  TAG_TILE_WIDTH = 322,
  TAG_TILE_LENGTH = 323,
  TAG_TILE_OFFSETS = 324,
  TAG_TILE_BYTE_COUNTS = 325,
  TAG_SUBIFDS = 330,
  TAG_JPEG_TABLES = 347,
  TAG_YCBCR_SUBSAMPLING = 530,
  TAG_NDPI_FORMAT_FLAG = 65420,
  TAG_NDPI_MCU_STARTS = 65426,
};

void
fuzz_tiff_info_clear (FuzzTiffInfo * info)
{
  if (info->ifds)
    g_array_unref (info->ifds);
  if (info->entries)
    g_array_unref (info->entries);
  if (info->tiles)
    g_array_unref (info->tiles);
  memset (info, 0, sizeof (*info));
}

static const FuzzTiffEntry *
find_entry (const FuzzTiffInfo * info, guint ifd, guint16 tag)
{
  const FuzzTiffIfd *d = &g_array_index (info->ifds, FuzzTiffIfd, ifd);
  guint64 i;

  for (i = 0; i < d->n_entries; i++) {
    const FuzzTiffEntry *e = &g_array_index (info->entries, FuzzTiffEntry,
        d->first_entry + i);
    if (e->tag == tag)
      return e;
  }
  return NULL;
}

static guint64
entry_elem (const FuzzTiffInfo * info, const guint8 * data, gsize size,
    const FuzzTiffEntry * e, guint64 i, gboolean * ok)
{
  guint w = int_size (e->type);

  if (w == 0 || i >= e->count) {
    *ok = FALSE;
    return 0;
  }
  return rd (data, size, e->value_pos + i * (guint64) type_size (e->type), w,
      info->be, ok);
}

static void
collect_tiles (FuzzTiffInfo * info, const guint8 * data, gsize size,
    guint ifd, guint16 offsets_tag, guint16 counts_tag)
{
  const FuzzTiffEntry *offs = find_entry (info, ifd, offsets_tag);
  const FuzzTiffEntry *counts = find_entry (info, ifd, counts_tag);
  guint64 i, n;

  if (offs == NULL || counts == NULL)
    return;
  n = MIN (offs->count, counts->count);
  n = MIN (n, 1 << 20);
  for (i = 0; i < n; i++) {
    gboolean ok = TRUE;
    FuzzTiffRange r;

    r.offset = entry_elem (info, data, size, offs, i, &ok);
    r.size = entry_elem (info, data, size, counts, i, &ok);
    r.ifd = ifd;
    if (!ok)
      return;
    if (r.offset >= size || r.size == 0)
      continue;
    r.size = MIN (r.size, size - r.offset);
    g_array_append_val (info->tiles, r);
  }
}

void
fuzz_tiff_parse (FuzzTiffInfo * info, const guint8 * data, gsize size)
{
  gboolean ok = TRUE;
  guint64 off, magic;
  GHashTable *seen;
  guint k;

  memset (info, 0, sizeof (*info));
  info->ifds = g_array_new (FALSE, TRUE, sizeof (FuzzTiffIfd));
  info->entries = g_array_new (FALSE, TRUE, sizeof (FuzzTiffEntry));
  info->tiles = g_array_new (FALSE, TRUE, sizeof (FuzzTiffRange));
  if (size < 8)
    return;
  if (data[0] == 'M' && data[1] == 'M')
    info->be = TRUE;
  else if (!(data[0] == 'I' && data[1] == 'I'))
    return;
  magic = rd (data, size, 2, 2, info->be, &ok);
  if (magic == 42) {
    off = rd (data, size, 4, 4, info->be, &ok);
  } else if (magic == 43 && size >= 16) {
    info->big = TRUE;
    off = rd (data, size, 8, 8, info->be, &ok);
  } else {
    return;
  }

  seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  for (k = 0; k < MAX_IFDS && ok && off != 0 && off < size; k++) {
    guint hdr = info->big ? 8 : 2, esz = info->big ? 20 : 12;
    guint nsz = info->big ? 8 : 4;
    FuzzTiffIfd d;
    guint64 i, n, key = off;

    if (g_hash_table_contains (seen, &key))
      break;
    g_hash_table_add (seen, g_memdup2 (&key, sizeof key));
    n = rd (data, size, off, hdr, info->be, &ok);
    if (!ok || n == 0 || n > MAX_ENTRIES_PER_IFD
        || off + hdr + n * esz + nsz > size)
      break;
    d.pos = off;
    d.n_entries = n;
    d.first_entry = info->entries->len;
    d.next_pos = off + hdr + n * esz;
    for (i = 0; i < n; i++) {
      FuzzTiffEntry e;
      guint64 bytes;

      e.pos = off + hdr + i * esz;
      e.ifd = info->ifds->len;
      e.tag = rd (data, size, e.pos, 2, info->be, &ok);
      e.type = rd (data, size, e.pos + 2, 2, info->be, &ok);
      e.count = rd (data, size, e.pos + 4, info->big ? 8 : 4, info->be, &ok);
      e.value_field_pos = e.pos + (info->big ? 12 : 8);
      bytes = (guint64) type_size (e.type) * e.count;
      e.inline_value = bytes <= (info->big ? 8u : 4u);
      e.value_pos = e.inline_value ? e.value_field_pos
          : rd (data, size, e.value_field_pos, info->big ? 8 : 4, info->be,
          &ok);
      g_array_append_val (info->entries, e);
    }
    g_array_append_val (info->ifds, d);
    off = rd (data, size, d.next_pos, nsz, info->be, &ok);
  }
  g_hash_table_destroy (seen);
  info->valid = info->ifds->len > 0;

  for (k = 0; k < info->ifds->len; k++) {
    collect_tiles (info, data, size, k, TAG_TILE_OFFSETS,
        TAG_TILE_BYTE_COUNTS);
    collect_tiles (info, data, size, k, TAG_STRIP_OFFSETS,
        TAG_STRIP_BYTE_COUNTS);
  }
}

/* ---- interesting values -------------------------------------------------- */

static guint64
interesting (FuzzRng * rng, guint bytes, guint64 orig, gsize file_size)
{
  static const guint64 table[] = {
    0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 63, 64, 127, 128, 255, 256, 257,
    0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xfffffffe,
    0xffffffff, G_GUINT64_CONSTANT (0x100000000),
    G_GUINT64_CONSTANT (0x10000000000), G_GUINT64_CONSTANT (0x7fffffffffffffff),
    G_GUINT64_CONSTANT (0xffffffffffffffff),
  };
  guint64 v, mask = bytes >= 8 ? G_MAXUINT64 : (((guint64) 1 << (8 * bytes)) - 1);

  switch (fuzz_rng_below (rng, 10)) {
    case 0: case 1: case 2:
      v = table[fuzz_rng_below (rng, G_N_ELEMENTS (table))];
      break;
    case 3:
      v = file_size + fuzz_rng_below (rng, 3) - 1;
      break;
    case 4:
      v = file_size + 1 + fuzz_rng_below (rng, 1 << 20);
      break;
    case 5:
      v = orig + 1 + fuzz_rng_below (rng, 16);
      break;
    case 6:
      v = orig - 1 - fuzz_rng_below (rng, 16);
      break;
    case 7:
      v = fuzz_rng_chance (rng, 50) ? orig * 2 : orig / 2;
      break;
    case 8:
      v = orig ^ ((guint64) 1 << fuzz_rng_below (rng, 8 * bytes));
      break;
    default:
      v = fuzz_rng_next (rng);
      break;
  }
  return v & mask;
}

/* ---- mutations ----------------------------------------------------------- */

const gchar *const fuzz_tiff_mutation_kinds[] = {
  "header", "entry", "ifd", "value", "tile", "jpeg", "offset", "havoc",
  "truncate", NULL
};

static void
flip_byte (GByteArray * buf, guint64 pos, FuzzRng * rng, GString * log)
{
  guint8 old;

  if (pos >= buf->len)
    return;
  old = buf->data[pos];
  switch (fuzz_rng_below (rng, 4)) {
    case 0:
      buf->data[pos] ^= 1 << fuzz_rng_below (rng, 8);
      break;
    case 1:
      buf->data[pos] = 0;
      break;
    case 2:
      buf->data[pos] = 0xff;
      break;
    default:
      buf->data[pos] = fuzz_rng_below (rng, 256);
      break;
  }
  g_string_append_printf (log, " @%" G_GUINT64_FORMAT ":%02x->%02x", pos, old,
      buf->data[pos]);
}

static void
mutate_header (GByteArray * buf, const FuzzTiffInfo * info, FuzzRng * rng,
    GString * log)
{
  guint hsize = info->big ? 16 : 8;

  switch (fuzz_rng_below (rng, 4)) {
    case 0:{
      guint64 pos = fuzz_rng_below (rng, MIN (hsize, buf->len));
      g_string_append (log, "header-flip");
      flip_byte (buf, pos, rng, log);
      break;
    }
    case 1:{
      guint bytes = info->big ? 8 : 4;
      guint64 pos = info->big ? 8 : 4;
      guint64 orig = rd (buf->data, buf->len, pos, bytes, info->be, NULL);
      guint64 v = interesting (rng, bytes, orig, buf->len);
      /* sometimes: point the first IFD at a later IFD or into tile data */
      if (info->ifds->len > 1 && fuzz_rng_chance (rng, 30))
        v = g_array_index (info->ifds, FuzzTiffIfd,
            fuzz_rng_below (rng, info->ifds->len)).pos;
      wr (buf, pos, bytes, info->be, v);
      g_string_append_printf (log, "header-first-ifd %" G_GUINT64_FORMAT
          "->%" G_GUINT64_FORMAT, orig, v);
      break;
    }
    case 2:
      /* the other byte order: every field now reads swapped */
      if (buf->len >= 2) {
        guint8 c = buf->data[0] == 'I' ? 'M' : 'I';
        buf->data[0] = buf->data[1] = c;
        g_string_append_printf (log, "header-byte-order %c%c", c, c);
      }
      break;
    default:{
      /* classic <-> BigTIFF magic */
      guint64 magic = info->big ? 42 : 43;
      wr (buf, 2, 2, info->be, magic);
      g_string_append_printf (log, "header-magic %" G_GUINT64_FORMAT, magic);
      break;
    }
  }
}

static const FuzzTiffEntry *
random_entry (const FuzzTiffInfo * info, FuzzRng * rng)
{
  if (info->entries->len == 0)
    return NULL;
  return &g_array_index (info->entries, FuzzTiffEntry,
      fuzz_rng_below (rng, info->entries->len));
}

static const guint16 known_tags[] = {
  TAG_SUBFILE_TYPE, TAG_IMAGE_WIDTH, TAG_IMAGE_LENGTH, TAG_BITS_PER_SAMPLE,
  TAG_COMPRESSION, TAG_PHOTOMETRIC, TAG_IMAGE_DESCRIPTION, TAG_STRIP_OFFSETS,
  TAG_SAMPLES_PER_PIXEL, TAG_ROWS_PER_STRIP, TAG_STRIP_BYTE_COUNTS,
  TAG_X_RESOLUTION, TAG_Y_RESOLUTION, TAG_PLANAR_CONFIG, TAG_RESOLUTION_UNIT,
  TAG_SOFTWARE, TAG_TILE_WIDTH, TAG_TILE_LENGTH, TAG_TILE_OFFSETS,
  TAG_TILE_BYTE_COUNTS, TAG_SUBIFDS, TAG_JPEG_TABLES, TAG_YCBCR_SUBSAMPLING,
  TAG_NDPI_FORMAT_FLAG, TAG_NDPI_MCU_STARTS, 700 /* XMP */ ,
  34665 /* Exif IFD */ , 34675 /* ICC */ , 32997 /* ImageDepth */ ,
};

static void
mutate_entry (GByteArray * buf, const FuzzTiffInfo * info, FuzzRng * rng,
    GString * log)
{
  const FuzzTiffEntry *e = random_entry (info, rng);
  guint cbytes = info->big ? 8 : 4;

  if (e == NULL) {
    g_string_append (log, "entry(none)");
    return;
  }
  switch (fuzz_rng_below (rng, 4)) {
    case 0:{
      guint16 tag = fuzz_rng_chance (rng, 60)
          ? known_tags[fuzz_rng_below (rng, G_N_ELEMENTS (known_tags))]
          : (guint16) (e->tag ^ (1 << fuzz_rng_below (rng, 16)));
      wr (buf, e->pos, 2, info->be, tag);
      g_string_append_printf (log, "entry-tag ifd%u %u->%u", e->ifd, e->tag,
          tag);
      break;
    }
    case 1:{
      guint16 type = fuzz_rng_chance (rng, 70) ? fuzz_rng_below (rng, 20)
          : (guint16) (e->type ^ (1 << fuzz_rng_below (rng, 16)));
      wr (buf, e->pos + 2, 2, info->be, type);
      g_string_append_printf (log, "entry-type ifd%u tag %u %u->%u", e->ifd,
          e->tag, e->type, type);
      break;
    }
    case 2:{
      guint64 count = interesting (rng, cbytes, e->count, buf->len);
      wr (buf, e->pos + 4, cbytes, info->be, count);
      g_string_append_printf (log, "entry-count ifd%u tag %u %"
          G_GUINT64_FORMAT "->%" G_GUINT64_FORMAT, e->ifd, e->tag, e->count,
          count);
      break;
    }
    default:{
      guint64 orig = rd (buf->data, buf->len, e->value_field_pos, cbytes,
          info->be, NULL);
      guint64 v = interesting (rng, cbytes, orig, buf->len);
      wr (buf, e->value_field_pos, cbytes, info->be, v);
      g_string_append_printf (log, "entry-value ifd%u tag %u %"
          G_GUINT64_FORMAT "->%" G_GUINT64_FORMAT, e->ifd, e->tag, orig, v);
      break;
    }
  }
}

static void
mutate_ifd (GByteArray * buf, const FuzzTiffInfo * info, FuzzRng * rng,
    GString * log)
{
  const FuzzTiffIfd *d;
  guint nbytes = info->big ? 8 : 2, pbytes = info->big ? 8 : 4;
  guint esz = info->big ? 20 : 12;
  guint idx;

  if (info->ifds->len == 0) {
    g_string_append (log, "ifd(none)");
    return;
  }
  idx = fuzz_rng_below (rng, info->ifds->len);
  d = &g_array_index (info->ifds, FuzzTiffIfd, idx);
  switch (fuzz_rng_below (rng, 4)) {
    case 0:{
      guint64 n = interesting (rng, nbytes, d->n_entries, buf->len);
      wr (buf, d->pos, nbytes, info->be, n);
      g_string_append_printf (log, "ifd-count ifd%u %" G_GUINT64_FORMAT "->%"
          G_GUINT64_FORMAT, idx, d->n_entries, n);
      break;
    }
    case 1:{
      guint64 orig = rd (buf->data, buf->len, d->next_pos, pbytes, info->be,
          NULL), v;
      switch (fuzz_rng_below (rng, 4)) {
        case 0:
          v = d->pos;           /* a loop onto itself */
          break;
        case 1:                /* a loop onto an earlier directory */
          v = g_array_index (info->ifds, FuzzTiffIfd,
              fuzz_rng_below (rng, idx + 1)).pos;
          break;
        default:
          v = interesting (rng, pbytes, orig, buf->len);
          break;
      }
      wr (buf, d->next_pos, pbytes, info->be, v);
      g_string_append_printf (log, "ifd-next ifd%u %" G_GUINT64_FORMAT "->%"
          G_GUINT64_FORMAT, idx, orig, v);
      break;
    }
    case 2:{
      /* swap two entries: the tags are no longer sorted */
      guint64 a, b;
      guint8 tmp[20];
      if (d->n_entries < 2)
        break;
      a = fuzz_rng_below (rng, d->n_entries);
      b = fuzz_rng_below (rng, d->n_entries);
      a = d->pos + nbytes + a * esz;
      b = d->pos + nbytes + b * esz;
      if (a + esz > buf->len || b + esz > buf->len)
        break;
      memcpy (tmp, buf->data + a, esz);
      memmove (buf->data + a, buf->data + b, esz);
      memcpy (buf->data + b, tmp, esz);
      g_string_append_printf (log, "ifd-swap-entries ifd%u @%" G_GUINT64_FORMAT
          " @%" G_GUINT64_FORMAT, idx, a, b);
      break;
    }
    default:{
      /* duplicate an entry over its neighbour: the same tag twice */
      guint64 a;
      if (d->n_entries < 2)
        break;
      a = fuzz_rng_below (rng, d->n_entries - 1);
      a = d->pos + nbytes + a * esz;
      if (a + 2 * esz > buf->len)
        break;
      memcpy (buf->data + a + esz, buf->data + a, esz);
      g_string_append_printf (log, "ifd-dup-entry ifd%u @%" G_GUINT64_FORMAT,
          idx, a);
      break;
    }
  }
}

/* An entry whose tag is one of @tags (chosen at random among those
 * present), or NULL. */
static const FuzzTiffEntry *
random_entry_with_tag (const FuzzTiffInfo * info, FuzzRng * rng,
    const guint16 * tags, guint n_tags)
{
  GPtrArray *hits = g_ptr_array_new ();
  const FuzzTiffEntry *e = NULL;
  guint i, t;

  for (i = 0; i < info->entries->len; i++) {
    const FuzzTiffEntry *c = &g_array_index (info->entries, FuzzTiffEntry, i);
    for (t = 0; t < n_tags; t++)
      if (c->tag == tags[t])
        g_ptr_array_add (hits, (gpointer) c);
  }
  if (hits->len > 0)
    e = g_ptr_array_index (hits, fuzz_rng_below (rng, hits->len));
  g_ptr_array_unref (hits);
  return e;
}

static guint64
elem_pos (const FuzzTiffEntry * e, guint64 i)
{
  return e->value_pos + i * (guint64) type_size (e->type);
}

static void
corrupt_array_elem (GByteArray * buf, const FuzzTiffInfo * info,
    const FuzzTiffEntry * e, FuzzRng * rng, GString * log)
{
  guint w = int_size (e->type);
  guint64 i, orig, v;

  if (w == 0 || e->count == 0)
    return;
  i = fuzz_rng_below (rng, MIN (e->count, 1 << 20));
  orig = rd (buf->data, buf->len, elem_pos (e, i), w, info->be, NULL);
  v = interesting (rng, w, orig, buf->len);

  if (e->tag == TAG_TILE_OFFSETS || e->tag == TAG_STRIP_OFFSETS
      || e->tag == TAG_NDPI_MCU_STARTS) {
    switch (fuzz_rng_below (rng, 6)) {
      case 0:
        v = 0;
        break;
      case 1:                  /* past the end of the file */
        v = buf->len + fuzz_rng_below (rng, 4096);
        break;
      case 2:                  /* a few bytes before the end */
        v = buf->len - MIN (buf->len, 1 + fuzz_rng_below (rng, 64));
        break;
      case 3:{                 /* another tile's data: overlapping tiles */
        guint64 j = fuzz_rng_below (rng, MIN (e->count, 1 << 20));
        v = rd (buf->data, buf->len, elem_pos (e, j), w, info->be, NULL);
        break;
      }
      case 4:                  /* into the middle of its own data */
        v = orig + 1 + fuzz_rng_below (rng, 200);
        break;
      default:
        break;                  /* interesting() */
    }
  } else if (e->tag == TAG_TILE_BYTE_COUNTS
      || e->tag == TAG_STRIP_BYTE_COUNTS) {
    switch (fuzz_rng_below (rng, 5)) {
      case 0:
        v = fuzz_rng_below (rng, 3);
        break;
      case 1:                  /* reaches into the next tile / past EOF */
        v = orig + 1 + fuzz_rng_below (rng, 100000);
        break;
      case 2:                  /* cut short */
        v = orig / (2 + fuzz_rng_below (rng, 8));
        break;
      default:
        break;
    }
  } else if (e->tag == TAG_TILE_WIDTH || e->tag == TAG_TILE_LENGTH) {
    static const guint64 sides[] = { 0, 1, 8, 15, 16, 17, 64, 100, 128, 240,
      255, 256, 257, 272, 512, 4096, 8192, 8208, 65535, 65536, 0x7fffffff,
      0xffffffff
    };
    if (fuzz_rng_chance (rng, 70))
      v = sides[fuzz_rng_below (rng, G_N_ELEMENTS (sides))];
  } else if (e->tag == TAG_IMAGE_WIDTH || e->tag == TAG_IMAGE_LENGTH) {
    static const guint64 sides[] = { 0, 1, 2, 15, 16, 17, 255, 256, 257,
      1000, 65535, 65536, 100000, 0x7fffffff, 0x80000000, 0xffffffff
    };
    switch (fuzz_rng_below (rng, 4)) {
      case 0:
        v = sides[fuzz_rng_below (rng, G_N_ELEMENTS (sides))];
        break;
      case 1:                  /* one more/less tile row or column */
        v = fuzz_rng_chance (rng, 50) ? orig + 1 + fuzz_rng_below (rng, 512)
            : orig - MIN (orig, 1 + fuzz_rng_below (rng, 512));
        break;
      default:
        break;
    }
  } else if (e->tag == TAG_BITS_PER_SAMPLE) {
    static const guint64 vals[] = { 0, 1, 4, 7, 9, 12, 16, 32, 64, 255 };
    v = vals[fuzz_rng_below (rng, G_N_ELEMENTS (vals))];
  } else if (e->tag == TAG_SAMPLES_PER_PIXEL) {
    static const guint64 vals[] = { 0, 1, 2, 4, 5, 255, 65535 };
    v = vals[fuzz_rng_below (rng, G_N_ELEMENTS (vals))];
  } else if (e->tag == TAG_COMPRESSION) {
    static const guint64 vals[] = { 0, 1, 5, 6, 7, 8, 32773, 33003, 33005,
      34712, 34892, 50000, 65535
    };
    v = vals[fuzz_rng_below (rng, G_N_ELEMENTS (vals))];
  } else if (e->tag == TAG_PHOTOMETRIC) {
    static const guint64 vals[] = { 0, 1, 2, 3, 4, 5, 6, 8, 32844, 65535 };
    v = vals[fuzz_rng_below (rng, G_N_ELEMENTS (vals))];
  } else if (e->tag == TAG_PLANAR_CONFIG) {
    v = fuzz_rng_below (rng, 4);
  } else if (e->tag == TAG_YCBCR_SUBSAMPLING) {
    static const guint64 vals[] = { 0, 1, 2, 3, 4, 8, 255 };
    v = vals[fuzz_rng_below (rng, G_N_ELEMENTS (vals))];
  }
  wr (buf, elem_pos (e, i), w, info->be, v);
  g_string_append_printf (log, "value ifd%u tag %u [%" G_GUINT64_FORMAT
      "] %" G_GUINT64_FORMAT "->%" G_GUINT64_FORMAT, e->ifd, e->tag, i, orig,
      v);
}

/* JPEG marker segment positions in [start, end): @marker's FF xx. */
static gint64
find_marker (const guint8 * data, guint64 start, guint64 end, guint8 marker)
{
  guint64 i;

  for (i = start; i + 1 < end; i++)
    if (data[i] == 0xff && data[i + 1] == marker)
      return i;
  return -1;
}

static void
corrupt_jpeg_tables (GByteArray * buf, const FuzzTiffInfo * info,
    const FuzzTiffEntry * e, FuzzRng * rng, GString * log)
{
  guint64 start = e->value_pos, end;
  guint cbytes = info->big ? 8 : 4;

  if (start >= buf->len)
    return;
  end = MIN (start + e->count, (guint64) buf->len);
  switch (fuzz_rng_below (rng, 6)) {
    case 4:{                   /* a frame header where only tables belong */
      gint64 m = find_marker (buf->data, start, end, 0xdb);
      if (m < 0)
        m = find_marker (buf->data, start, end, 0xc4);
      if (m < 0)
        break;
      buf->data[m + 1] = fuzz_rng_chance (rng, 50) ? 0xc0 : 0xda;
      g_string_append_printf (log, "jpegtables-frame-marker %02x",
          buf->data[m + 1]);
      break;
    }
    case 0:{                   /* shorter or longer than the stream */
      guint64 count = fuzz_rng_chance (rng, 50)
          ? fuzz_rng_below (rng, e->count + 1)
          : e->count + 1 + fuzz_rng_below (rng, 1000);
      wr (buf, e->pos + 4, cbytes, info->be, count);
      g_string_append_printf (log, "jpegtables-count %" G_GUINT64_FORMAT
          "->%" G_GUINT64_FORMAT, e->count, count);
      break;
    }
    case 1:{                   /* a DHT: code counts and symbols */
      gint64 m = find_marker (buf->data, start, end, 0xc4);
      if (m < 0)
        break;
      g_string_append (log, "jpegtables-dht");
      flip_byte (buf, m + 2 + fuzz_rng_below (rng, 20), rng, log);
      break;
    }
    case 2:{                   /* a DQT: precision and length */
      gint64 m = find_marker (buf->data, start, end, 0xdb);
      if (m < 0)
        break;
      g_string_append (log, "jpegtables-dqt");
      flip_byte (buf, m + 2 + fuzz_rng_below (rng, 4), rng, log);
      break;
    }
    default:{
      guint n = 1 + fuzz_rng_below (rng, 4), k;
      g_string_append (log, "jpegtables-bytes");
      for (k = 0; k < n; k++)
        flip_byte (buf, start + fuzz_rng_below (rng, end - start), rng, log);
      break;
    }
  }
}

static void
corrupt_description (GByteArray * buf, const FuzzTiffEntry * e,
    FuzzRng * rng, GString * log)
{
  guint64 start = e->value_pos, end, i;
  static const gchar *const numbers[] = { "0", "-1", "nan", "inf", "1e308",
    "1e-308", "", "9999999999999999999999"
  };

  if (start >= buf->len)
    return;
  end = MIN (start + e->count, (guint64) buf->len);
  if (fuzz_rng_chance (rng, 15)) {
    /* another vendor's description, written over the start in place */
    static const gchar *const vendors[] = { "<?xml version=\"1.0\"?>",
      "  <OME", "Trestle", "Aperio Leica Biosystems", "Aperio", "Philips",
      "MedScan", "Leica SCN", "iScan", "\n\n"
    };
    const gchar *v = vendors[fuzz_rng_below (rng, G_N_ELEMENTS (vendors))];
    gsize n = MIN (strlen (v), end - start);
    memcpy (buf->data + start, v, n);
    g_string_append_printf (log, "%s-vendor '%s'", e->tag == 305
        ? "software" : "description", v);
    return;
  }
  /* Aperio "MPP = 0.4990": change the number in place */
  for (i = start; i + 3 < end; i++) {
    if (memcmp (buf->data + i, "MPP", 3) == 0 && fuzz_rng_chance (rng, 70)) {
      const gchar *n = numbers[fuzz_rng_below (rng, G_N_ELEMENTS (numbers))];
      guint64 p = i + 3, k;
      gsize nlen = strlen (n);
      while (p < end && (buf->data[p] == ' ' || buf->data[p] == '='))
        p++;
      for (k = 0; p + k < end && (g_ascii_isdigit (buf->data[p + k])
              || buf->data[p + k] == '.'); k++)
        buf->data[p + k] = k < nlen ? n[k] : ' ';
      g_string_append_printf (log, "description-mpp '%s'", n);
      return;
    }
  }
  if (fuzz_rng_chance (rng, 30) && end > start) {
    /* no NUL terminator */
    buf->data[end - 1] = 'X';
    g_string_append (log, "description-unterminated");
    return;
  }
  g_string_append (log, "description-bytes");
  flip_byte (buf, start + fuzz_rng_below (rng, MAX (end - start, 1)), rng,
      log);
}

static void
mutate_value (GByteArray * buf, const FuzzTiffInfo * info, FuzzRng * rng,
    GString * log)
{
  static const guint16 targets[] = {
    TAG_TILE_OFFSETS, TAG_TILE_OFFSETS, TAG_TILE_BYTE_COUNTS,
    TAG_TILE_BYTE_COUNTS, TAG_IMAGE_WIDTH, TAG_IMAGE_LENGTH, TAG_TILE_WIDTH,
    TAG_TILE_LENGTH, TAG_JPEG_TABLES, TAG_JPEG_TABLES, TAG_BITS_PER_SAMPLE,
    TAG_SAMPLES_PER_PIXEL, TAG_COMPRESSION, TAG_PHOTOMETRIC,
    TAG_PLANAR_CONFIG, TAG_YCBCR_SUBSAMPLING, TAG_IMAGE_DESCRIPTION,
    TAG_STRIP_OFFSETS, TAG_STRIP_BYTE_COUNTS, TAG_ROWS_PER_STRIP,
    TAG_NDPI_MCU_STARTS, TAG_X_RESOLUTION, TAG_RESOLUTION_UNIT,
    TAG_SOFTWARE, TAG_IMAGE_DESCRIPTION,
  };
  guint16 tag = targets[fuzz_rng_below (rng, G_N_ELEMENTS (targets))];
  const FuzzTiffEntry *e = random_entry_with_tag (info, rng, &tag, 1);

  if (e == NULL)
    e = random_entry_with_tag (info, rng, targets, G_N_ELEMENTS (targets));
  if (e == NULL) {
    g_string_append (log, "value(none)");
    return;
  }
  if (e->tag == TAG_JPEG_TABLES)
    corrupt_jpeg_tables (buf, info, e, rng, log);
  else if (e->tag == TAG_IMAGE_DESCRIPTION || e->tag == TAG_SOFTWARE)
    corrupt_description (buf, e, rng, log);
  else if ((e->tag == TAG_TILE_OFFSETS || e->tag == TAG_TILE_BYTE_COUNTS)
      && fuzz_rng_chance (rng, 15)) {
    /* a whole run of tiles at once */
    guint n = 2 + fuzz_rng_below (rng, 16), k;
    for (k = 0; k < n; k++)
      corrupt_array_elem (buf, info, e, rng, log);
  } else {
    corrupt_array_elem (buf, info, e, rng, log);
  }
}

static const FuzzTiffRange *
random_tile (const FuzzTiffInfo * info, FuzzRng * rng)
{
  if (info->tiles->len == 0)
    return NULL;
  return &g_array_index (info->tiles, FuzzTiffRange,
      fuzz_rng_below (rng, info->tiles->len));
}

static void
mutate_tile (GByteArray * buf, const FuzzTiffInfo * info, FuzzRng * rng,
    GString * log)
{
  const FuzzTiffRange *t = random_tile (info, rng);
  guint64 end;

  if (t == NULL || t->offset >= buf->len) {
    g_string_append (log, "tile(none)");
    return;
  }
  end = MIN (t->offset + t->size, (guint64) buf->len);
  switch (fuzz_rng_below (rng, 4)) {
    case 0:{
      guint n = 1 + fuzz_rng_below (rng, 8), k;
      g_string_append_printf (log, "tile-bytes ifd%u @%" G_GUINT64_FORMAT,
          t->ifd, t->offset);
      for (k = 0; k < n; k++)
        flip_byte (buf, t->offset + fuzz_rng_below (rng, end - t->offset),
            rng, log);
      break;
    }
    case 1:{                   /* a run of one value */
      guint64 a = t->offset + fuzz_rng_below (rng, end - t->offset);
      guint64 len = MIN (1 + fuzz_rng_below (rng, 512), end - a);
      guint8 v = fuzz_rng_chance (rng, 50) ? 0 : 0xff;
      memset (buf->data + a, v, len);
      g_string_append_printf (log, "tile-run ifd%u @%" G_GUINT64_FORMAT
          "+%" G_GUINT64_FORMAT "=%02x", t->ifd, a, len, v);
      break;
    }
    case 2:{                   /* another tile's bytes (other tables/size) */
      const FuzzTiffRange *o = random_tile (info, rng);
      guint64 len;
      if (o == NULL || o->offset >= buf->len)
        break;
      len = MIN (MIN (o->size, end - t->offset), buf->len - o->offset);
      memmove (buf->data + t->offset, buf->data + o->offset, len);
      g_string_append_printf (log, "tile-copy ifd%u @%" G_GUINT64_FORMAT
          " from ifd%u @%" G_GUINT64_FORMAT, t->ifd, t->offset, o->ifd,
          o->offset);
      break;
    }
    default:{                  /* the entropy-coded data only */
      guint64 a = t->offset + (end - t->offset) / 2;
      g_string_append_printf (log, "tile-scan ifd%u", t->ifd);
      flip_byte (buf, a + fuzz_rng_below (rng, end - a), rng, log);
      break;
    }
  }
}

/* Corrupts the JPEG headers of one tile: frame size, components, sampling,
 * restart interval, scan header, markers. */
static void
mutate_jpeg (GByteArray * buf, const FuzzTiffInfo * info, FuzzRng * rng,
    GString * log)
{
  const FuzzTiffRange *t = random_tile (info, rng);
  guint64 end;
  gint64 m;
  gsize log_len = log->len;

  if (t == NULL || t->offset >= buf->len) {
    g_string_append (log, "jpeg(none)");
    return;
  }
  end = MIN (t->offset + t->size, (guint64) buf->len);
  switch (fuzz_rng_below (rng, 6)) {
    case 0:
    case 1:{                   /* SOF: P, Y, X, Nf, (C, HV, Tq)* */
      static const guint64 sides[] = { 0, 1, 7, 8, 15, 16, 17, 64, 128,
        239, 240, 241, 255, 256, 257, 512, 1024, 4096, 65535
      };
      guint which;
      m = find_marker (buf->data, t->offset, end, 0xc0);
      if (m < 0)
        m = find_marker (buf->data, t->offset, end, 0xc1);
      if (m < 0)
        m = find_marker (buf->data, t->offset, end, 0xc2);
      if (m < 0)
        break;
      which = fuzz_rng_below (rng, 5);
      if (which <= 1) {
        guint64 v = sides[fuzz_rng_below (rng, G_N_ELEMENTS (sides))];
        wr (buf, m + 5 + 2 * which, 2, TRUE, v);
        g_string_append_printf (log, "jpeg-sof-%s ifd%u @%" G_GINT64_FORMAT
            " ->%" G_GUINT64_FORMAT, which ? "width" : "height", t->ifd, m, v);
      } else if (which == 2) {
        static const guint8 ncomp[] = { 0, 1, 2, 4, 255 };
        guint8 v = ncomp[fuzz_rng_below (rng, G_N_ELEMENTS (ncomp))];
        wr (buf, m + 9, 1, TRUE, v);
        g_string_append_printf (log, "jpeg-sof-ncomp ifd%u ->%u", t->ifd, v);
      } else if (which == 3) {
        static const guint8 hv[] = { 0x00, 0x11, 0x12, 0x21, 0x22, 0x44,
          0x14, 0x41, 0xff
        };
        guint8 v = hv[fuzz_rng_below (rng, G_N_ELEMENTS (hv))];
        wr (buf, m + 11 + 3 * fuzz_rng_below (rng, 3), 1, TRUE, v);
        g_string_append_printf (log, "jpeg-sof-sampling ifd%u ->%02x",
            t->ifd, v);
      } else {
        static const guint8 prec[] = { 0, 1, 8, 12, 16, 255 };
        guint8 v = prec[fuzz_rng_below (rng, G_N_ELEMENTS (prec))];
        wr (buf, m + 4, 1, TRUE, v);
        g_string_append_printf (log, "jpeg-sof-precision ifd%u ->%u", t->ifd,
            v);
      }
      break;
    }
    case 2:{                   /* SOS: Ns, component selectors, Ss/Se/AhAl */
      m = find_marker (buf->data, t->offset, end, 0xda);
      if (m < 0)
        break;
      g_string_append_printf (log, "jpeg-sos ifd%u", t->ifd);
      flip_byte (buf, m + 4 + fuzz_rng_below (rng, 10), rng, log);
      break;
    }
    case 3:{                   /* DRI: restart interval */
      static const guint64 vals[] = { 0, 1, 2, 255, 65535 };
      guint64 v = vals[fuzz_rng_below (rng, G_N_ELEMENTS (vals))];
      m = find_marker (buf->data, t->offset, end, 0xdd);
      if (m < 0) {
        /* restart markers inside the scan instead (NDPI) */
        m = find_marker (buf->data, t->offset + fuzz_rng_below (rng,
                end - t->offset), end, 0xd0 + fuzz_rng_below (rng, 8));
        if (m < 0)
          break;
        buf->data[m + 1] = 0xd0 + fuzz_rng_below (rng, 8);
        g_string_append_printf (log, "jpeg-rst ifd%u @%" G_GINT64_FORMAT,
            t->ifd, m);
        break;
      }
      wr (buf, m + 4, 2, TRUE, v);
      g_string_append_printf (log, "jpeg-dri ifd%u ->%" G_GUINT64_FORMAT,
          t->ifd, v);
      break;
    }
    case 4:{                   /* SOI/EOI/SOS gone */
      gboolean soi = fuzz_rng_chance (rng, 50);
      if (fuzz_rng_chance (rng, 30)) {
        m = find_marker (buf->data, t->offset, end, 0xda);
        if (m < 0)
          break;
        buf->data[m + 1] = 0xd9;
        g_string_append_printf (log, "jpeg-no-sos ifd%u", t->ifd);
        break;
      }
      m = soi ? find_marker (buf->data, t->offset, end, 0xd8)
          : find_marker (buf->data, MAX (t->offset, end - MIN (end, 4)), end,
          0xd9);
      if (m < 0)
        break;
      buf->data[m + 1] = 0;
      g_string_append_printf (log, "jpeg-no-%s ifd%u", soi ? "soi" : "eoi",
          t->ifd);
      break;
    }
    default:{                  /* tables inside the tile (CMU, NDPI) */
      guint8 marker = fuzz_rng_chance (rng, 50) ? 0xc4 : 0xdb;
      m = find_marker (buf->data, t->offset, end, marker);
      if (m < 0)
        break;
      g_string_append_printf (log, "jpeg-%s ifd%u", marker == 0xc4 ? "dht"
          : "dqt", t->ifd);
      flip_byte (buf, m + 2 + fuzz_rng_below (rng, 24), rng, log);
      break;
    }
  }
  if (log->len == log_len)
    g_string_append (log, "jpeg(no marker)");
}

/* Any offset-bearing field: the first-IFD pointer, next-IFD pointers,
 * out-of-line value offsets, tile offsets. */
static void
mutate_offset (GByteArray * buf, const FuzzTiffInfo * info, FuzzRng * rng,
    GString * log)
{
  guint pbytes = info->big ? 8 : 4;
  guint64 pos = 0, orig, v;
  guint bytes = pbytes;
  const gchar *what = "?";
  guint choice = fuzz_rng_below (rng, 4);

  if (choice == 0 && info->ifds->len > 0) {
    const FuzzTiffIfd *d = &g_array_index (info->ifds, FuzzTiffIfd,
        fuzz_rng_below (rng, info->ifds->len));
    pos = d->next_pos;
    what = "next-ifd";
  } else if (choice == 1) {
    GArray *outl = g_array_new (FALSE, FALSE, sizeof (guint));
    guint i;
    for (i = 0; i < info->entries->len; i++)
      if (!g_array_index (info->entries, FuzzTiffEntry, i).inline_value)
        g_array_append_val (outl, i);
    if (outl->len > 0) {
      const FuzzTiffEntry *e = &g_array_index (info->entries, FuzzTiffEntry,
          g_array_index (outl, guint, fuzz_rng_below (rng, outl->len)));
      pos = e->value_field_pos;
      what = "value-offset";
    }
    g_array_unref (outl);
  } else if (choice == 2) {
    guint16 tags[] = { TAG_TILE_OFFSETS, TAG_STRIP_OFFSETS };
    const FuzzTiffEntry *e = random_entry_with_tag (info, rng, tags, 2);
    if (e != NULL && int_size (e->type) > 0 && e->count > 0) {
      bytes = int_size (e->type);
      pos = elem_pos (e, fuzz_rng_below (rng, MIN (e->count, 1 << 20)));
      what = "tile-offset";
    }
  }
  if (pos == 0) {
    pos = info->big ? 8 : 4;
    what = "first-ifd";
  }
  orig = rd (buf->data, buf->len, pos, bytes, info->be, NULL);
  switch (fuzz_rng_below (rng, 6)) {
    case 0:
      v = 0;
      break;
    case 1:
      v = buf->len + fuzz_rng_below (rng, 1 << 16);
      break;
    case 2:
      v = buf->len - MIN (buf->len, 1 + fuzz_rng_below (rng, 16));
      break;
    case 3:                    /* overlap: onto an IFD or the header */
      v = info->ifds->len > 0 && fuzz_rng_chance (rng, 70)
          ? g_array_index (info->ifds, FuzzTiffIfd, fuzz_rng_below (rng,
              info->ifds->len)).pos : fuzz_rng_below (rng, 16);
      break;
    case 4:{                   /* overlap: onto a tile */
      const FuzzTiffRange *t = random_tile (info, rng);
      v = t ? t->offset + fuzz_rng_below (rng, 8) : 0;
      break;
    }
    default:
      v = interesting (rng, bytes, orig, buf->len);
      break;
  }
  if (bytes < 8)
    v &= (((guint64) 1 << (8 * bytes)) - 1);
  wr (buf, pos, bytes, info->be, v);
  g_string_append_printf (log, "offset-%s @%" G_GUINT64_FORMAT " %"
      G_GUINT64_FORMAT "->%" G_GUINT64_FORMAT, what, (guint64) pos, orig, v);
}

static void
mutate_havoc (GByteArray * buf, FuzzRng * rng, GString * log)
{
  guint n = 1 + fuzz_rng_below (rng, 16), k;

  g_string_append (log, "havoc");
  for (k = 0; k < n && buf->len > 0; k++)
    flip_byte (buf, fuzz_rng_below (rng, buf->len), rng, log);
}

static void
mutate_truncate (GByteArray * buf, const FuzzTiffInfo * info, FuzzRng * rng,
    GString * log)
{
  guint64 len = buf->len, cut;
  const FuzzTiffRange *t;

  if (len == 0)
    return;
  switch (fuzz_rng_below (rng, 4)) {
    case 0:                    /* inside a tile */
      t = random_tile (info, rng);
      cut = t ? t->offset + fuzz_rng_below (rng, t->size + 1)
          : fuzz_rng_below (rng, len);
      break;
    case 1:                    /* inside an IFD */
      if (info->ifds->len > 0) {
        const FuzzTiffIfd *d = &g_array_index (info->ifds, FuzzTiffIfd,
            fuzz_rng_below (rng, info->ifds->len));
        cut = d->pos + fuzz_rng_below (rng, d->next_pos - d->pos + 8);
      } else {
        cut = fuzz_rng_below (rng, 16);
      }
      break;
    case 2:                    /* just short of the end */
      cut = len - MIN (len, 1 + fuzz_rng_below (rng, 64));
      break;
    default:
      cut = fuzz_rng_below (rng, len);
      break;
  }
  cut = MIN (cut, len);
  g_byte_array_set_size (buf, cut);
  g_string_append_printf (log, "truncate %" G_GUINT64_FORMAT "->%"
      G_GUINT64_FORMAT, len, cut);
}

void
fuzz_tiff_mutate (GByteArray * buf, const FuzzTiffInfo * info, FuzzRng * rng,
    const gchar * kind, GString * log)
{
  /* weights: structure first, raw bytes last */
  static const struct
  {
    const gchar *name;
    guint weight;
  } kinds[] = {
    {"header", 4}, {"entry", 14}, {"ifd", 6}, {"value", 26}, {"tile", 12},
    {"jpeg", 14}, {"offset", 12}, {"havoc", 6}, {"truncate", 6},
  };
  guint i;

  if (kind == NULL) {
    guint total = 0, r;
    for (i = 0; i < G_N_ELEMENTS (kinds); i++)
      total += kinds[i].weight;
    r = fuzz_rng_below (rng, total);
    for (i = 0; i < G_N_ELEMENTS (kinds); i++) {
      if (r < kinds[i].weight)
        break;
      r -= kinds[i].weight;
    }
    kind = kinds[MIN (i, G_N_ELEMENTS (kinds) - 1)].name;
  }
  if (!info->valid && strcmp (kind, "truncate") != 0)
    kind = "havoc";

  if (strcmp (kind, "header") == 0)
    mutate_header (buf, info, rng, log);
  else if (strcmp (kind, "entry") == 0)
    mutate_entry (buf, info, rng, log);
  else if (strcmp (kind, "ifd") == 0)
    mutate_ifd (buf, info, rng, log);
  else if (strcmp (kind, "value") == 0)
    mutate_value (buf, info, rng, log);
  else if (strcmp (kind, "tile") == 0)
    mutate_tile (buf, info, rng, log);
  else if (strcmp (kind, "jpeg") == 0)
    mutate_jpeg (buf, info, rng, log);
  else if (strcmp (kind, "offset") == 0)
    mutate_offset (buf, info, rng, log);
  else if (strcmp (kind, "truncate") == 0)
    mutate_truncate (buf, info, rng, log);
  else
    mutate_havoc (buf, rng, log);
}

/* ---- classic TIFF -> BigTIFF --------------------------------------------- */

static void
put (GByteArray * out, guint bytes, gboolean be, guint64 v)
{
  guint8 tmp[8];
  guint i;

  for (i = 0; i < bytes; i++)
    tmp[be ? bytes - 1 - i : i] = (v >> (8 * i)) & 0xff;
  g_byte_array_append (out, tmp, bytes);
}

static void
pad8 (GByteArray * out)
{
  static const guint8 zeros[8] = { 0 };

  if (out->len % 8)
    g_byte_array_append (out, zeros, 8 - out->len % 8);
}

GByteArray *
fuzz_tiff_to_bigtiff (const guint8 * data, gsize size)
{
  FuzzTiffInfo info;
  GByteArray *out;
  guint64 *ifd_at;
  guint k;
  const gint64 shift = 8;       /* the header grows from 8 to 16 bytes */

  fuzz_tiff_parse (&info, data, size);
  if (!info.valid || info.big) {
    fuzz_tiff_info_clear (&info);
    return NULL;
  }
  /* Offset-bearing tags other than tiles/strips would need rewriting. */
  for (k = 0; k < info.entries->len; k++) {
    const FuzzTiffEntry *e = &g_array_index (info.entries, FuzzTiffEntry, k);
    if (e->tag == TAG_SUBIFDS || e->tag == 34665 || e->tag == 34853
        || e->tag == 288 || type_size (e->type) == 0
        || (!e->inline_value && e->value_pos + type_size (e->type) * e->count
            > size)) {
      fuzz_tiff_info_clear (&info);
      return NULL;
    }
  }

  out = g_byte_array_sized_new (size + 4096);
  put (out, 2, FALSE, info.be ? 0x4d4d : 0x4949);
  put (out, 2, info.be, 43);
  put (out, 2, info.be, 8);
  put (out, 2, info.be, 0);
  put (out, 8, info.be, 0);     /* first IFD: patched below */
  g_byte_array_append (out, data + 8, size - 8);

  /* The arrays that become LONG8 (tile/strip offsets, shifted). */
  ifd_at = g_new0 (guint64, info.ifds->len);
  {
    GHashTable *array_at = g_hash_table_new (NULL, NULL);
    for (k = 0; k < info.entries->len; k++) {
      const FuzzTiffEntry *e = &g_array_index (info.entries, FuzzTiffEntry,
          k);
      guint64 i;
      if (e->tag != TAG_TILE_OFFSETS && e->tag != TAG_STRIP_OFFSETS)
        continue;
      if (e->count <= 1)
        continue;               /* inline: rewritten in the entry */
      pad8 (out);
      g_hash_table_insert (array_at, GUINT_TO_POINTER (k),
          GSIZE_TO_POINTER ((gsize) out->len));
      for (i = 0; i < e->count; i++) {
        gboolean ok = TRUE;
        guint64 v = entry_elem (&info, data, size, e, i, &ok);
        put (out, 8, info.be, v + shift);
      }
    }

    for (k = 0; k < info.ifds->len; k++) {
      const FuzzTiffIfd *d = &g_array_index (info.ifds, FuzzTiffIfd, k);
      guint64 i;
      pad8 (out);
      ifd_at[k] = out->len;
      put (out, 8, info.be, d->n_entries);
      for (i = 0; i < d->n_entries; i++) {
        guint idx = d->first_entry + i;
        const FuzzTiffEntry *e = &g_array_index (info.entries, FuzzTiffEntry,
            idx);
        guint tsz = type_size (e->type);
        guint64 bytes = (guint64) tsz * e->count;
        gboolean offsets = e->tag == TAG_TILE_OFFSETS
            || e->tag == TAG_STRIP_OFFSETS;

        put (out, 2, info.be, e->tag);
        if (offsets) {
          gboolean ok = TRUE;
          put (out, 2, info.be, 16);    /* LONG8 */
          put (out, 8, info.be, e->count);
          if (e->count == 1)
            put (out, 8, info.be, entry_elem (&info, data, size, e, 0, &ok)
                + shift);
          else
            put (out, 8, info.be, GPOINTER_TO_SIZE (g_hash_table_lookup
                    (array_at, GUINT_TO_POINTER (idx))));
          continue;
        }
        put (out, 2, info.be, e->type);
        put (out, 8, info.be, e->count);
        if (bytes <= 8) {
          guint8 value[8] = { 0 };
          memcpy (value, data + e->value_pos, bytes);
          g_byte_array_append (out, value, 8);
        } else {
          put (out, 8, info.be, e->value_pos + shift);
        }
      }
      put (out, 8, info.be, 0);   /* next: patched below */
    }
    g_hash_table_destroy (array_at);
  }
  /* chain the directories */
  wr (out, 8, 8, info.be, ifd_at[0]);
  for (k = 0; k + 1 < info.ifds->len; k++) {
    const FuzzTiffIfd *d = &g_array_index (info.ifds, FuzzTiffIfd, k);
    wr (out, ifd_at[k] + 8 + d->n_entries * 20, 8, info.be, ifd_at[k + 1]);
  }
  g_free (ifd_at);
  fuzz_tiff_info_clear (&info);
  return out;
}

/* ---- compaction (for minimized findings) --------------------------------- */

static gboolean
is_offsets_tag (guint16 tag)
{
  return tag == TAG_TILE_OFFSETS || tag == TAG_STRIP_OFFSETS;
}

static guint16
counts_tag_for (guint16 offsets_tag)
{
  return offsets_tag == TAG_TILE_OFFSETS ? TAG_TILE_BYTE_COUNTS
      : TAG_STRIP_BYTE_COUNTS;
}

guint
fuzz_tiff_count_slots (const FuzzTiffInfo * info)
{
  guint k, n = 0, i;

  for (k = 0; k < info->ifds->len; k++) {
    const FuzzTiffIfd *d = &g_array_index (info->ifds, FuzzTiffIfd, k);
    for (i = 0; i < d->n_entries; i++) {
      const FuzzTiffEntry *e = &g_array_index (info->entries, FuzzTiffEntry,
          d->first_entry + i);
      const FuzzTiffEntry *c;
      if (!is_offsets_tag (e->tag))
        continue;
      c = find_entry (info, k, counts_tag_for (e->tag));
      if (c != NULL)
        n += MIN (MIN (e->count, c->count), 1 << 20);
    }
  }
  return n;
}

/* Appends @len bytes of @data at @pos (when they lie in the file) and
 * returns their new offset, or G_MAXUINT64. */
static guint64
append_block (GByteArray * out, const guint8 * data, gsize size,
    guint64 pos, guint64 len)
{
  guint64 at;

  if (pos > size || len > size - pos)
    return G_MAXUINT64;
  if (out->len % 2)
    g_byte_array_append (out, (const guint8 *) "", 1);
  at = out->len;
  g_byte_array_append (out, data + pos, len);
  return at;
}

GByteArray *
fuzz_tiff_compact (const guint8 * data, gsize size, const gboolean * drop,
    guint n_drop)
{
  FuzzTiffInfo info;
  GByteArray *out;
  guint pbytes, nbytes, esz, k, slot = 0;
  guint64 *ifd_at;

  fuzz_tiff_parse (&info, data, size);
  if (!info.valid) {
    fuzz_tiff_info_clear (&info);
    return NULL;
  }
  pbytes = info.big ? 8 : 4;
  nbytes = info.big ? 8 : 2;
  esz = info.big ? 20 : 12;
  out = g_byte_array_new ();
  g_byte_array_append (out, data, info.big ? 16 : 8);
  ifd_at = g_new0 (guint64, info.ifds->len);

  for (k = 0; k < info.ifds->len; k++) {
    const FuzzTiffIfd *d = &g_array_index (info.ifds, FuzzTiffIfd, k);
    guint64 i, ifd_len = nbytes + d->n_entries * esz + pbytes;

    if (out->len % 2)
      g_byte_array_append (out, (const guint8 *) "", 1);
    ifd_at[k] = out->len;
    /* the IFD as it was (tags, types, counts, inline values), patched */
    g_byte_array_append (out, data + d->pos, ifd_len);
    wr (out, ifd_at[k] + nbytes + d->n_entries * esz, pbytes, info.be, 0);

    for (i = 0; i < d->n_entries; i++) {
      const FuzzTiffEntry *e = &g_array_index (info.entries, FuzzTiffEntry,
          d->first_entry + i);
      guint64 field = ifd_at[k] + nbytes + i * esz + (info.big ? 12 : 8);
      guint tsz = type_size (e->type);

      if (is_offsets_tag (e->tag)
          && find_entry (&info, k, counts_tag_for (e->tag)) != NULL) {
        const FuzzTiffEntry *c = find_entry (&info, k,
            counts_tag_for (e->tag));
        guint64 n = MIN (MIN (e->count, c->count), 1 << 20), j;
        guint w = int_size (e->type), cw = int_size (c->type);
        guint64 *offs = g_new0 (guint64, n), *cnts = g_new0 (guint64, n);
        guint64 cfield = ifd_at[k] + (c->pos - d->pos)
            + (info.big ? 12 : 8);

        for (j = 0; j < n; j++, slot++) {
          gboolean ok = TRUE;
          guint64 o = entry_elem (&info, data, size, e, j, &ok);
          guint64 cnt = entry_elem (&info, data, size, c, j, &ok), at;
          if (slot < n_drop && drop[slot]) {
            offs[j] = cnts[j] = 0;
            continue;
          }
          at = ok ? append_block (out, data, size, o, cnt) : G_MAXUINT64;
          offs[j] = at == G_MAXUINT64 ? o : at;   /* hostile: kept */
          cnts[j] = cnt;
        }
        /* the two arrays: inline, or appended */
        if (w > 0 && cw > 0) {
          guint64 arr;
          if (e->inline_value) {
            for (j = 0; j < n; j++)
              wr (out, field + j * type_size (e->type), w, info.be, offs[j]);
          } else {
            if (out->len % 2)
              g_byte_array_append (out, (const guint8 *) "", 1);
            arr = out->len;
            g_byte_array_set_size (out, out->len + e->count * tsz);
            memset (out->data + arr, 0, e->count * tsz);
            for (j = 0; j < n; j++)
              wr (out, arr + j * tsz, w, info.be, offs[j]);
            wr (out, field, pbytes, info.be, arr);
          }
          if (c->inline_value) {
            for (j = 0; j < n; j++)
              wr (out, cfield + j * type_size (c->type), cw, info.be,
                  cnts[j]);
          } else {
            guint ctsz = type_size (c->type);
            if (out->len % 2)
              g_byte_array_append (out, (const guint8 *) "", 1);
            arr = out->len;
            g_byte_array_set_size (out, out->len + c->count * ctsz);
            memset (out->data + arr, 0, c->count * ctsz);
            for (j = 0; j < n; j++)
              wr (out, arr + j * ctsz, cw, info.be, cnts[j]);
            wr (out, cfield, pbytes, info.be, arr);
          }
        }
        g_free (offs);
        g_free (cnts);
        continue;
      }
      if (e->tag == TAG_TILE_BYTE_COUNTS || e->tag == TAG_STRIP_BYTE_COUNTS) {
        guint16 otag = e->tag == TAG_TILE_BYTE_COUNTS ? TAG_TILE_OFFSETS
            : TAG_STRIP_OFFSETS;
        if (find_entry (&info, k, otag) != NULL)
          continue;             /* written with its offsets */
      }
      if (!e->inline_value && tsz > 0) {
        guint64 at = append_block (out, data, size, e->value_pos,
            (guint64) tsz * e->count);
        if (at != G_MAXUINT64)
          wr (out, field, pbytes, info.be, at);
      }
    }
  }
  /* the chain */
  wr (out, info.big ? 8 : 4, pbytes, info.be, ifd_at[0]);
  for (k = 0; k + 1 < info.ifds->len; k++) {
    const FuzzTiffIfd *d = &g_array_index (info.ifds, FuzzTiffIfd, k);
    wr (out, ifd_at[k] + nbytes + d->n_entries * esz, pbytes, info.be,
        ifd_at[k + 1]);
  }
  g_free (ifd_at);
  fuzz_tiff_info_clear (&info);
  return out;
}
