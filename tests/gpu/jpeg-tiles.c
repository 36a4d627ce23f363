/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * jpeg-tiles: writes the JPEG tiles of TIFF slides (level 0, the first
 * directory) as complete JPEG streams into one file, for the decode
 * benchmarks of tests/gpu (jpeg-decode-cpu.c, nvjpeg-decode.cu; issue 25).
 * A tiled JPEG TIFF keeps the quantisation and Huffman tables once, in the
 * JPEGTables tag (an abbreviated stream: SOI, tables, EOI); each tile holds
 * SOI, frame, scan and EOI. A decoder outside libtiff needs both, so each
 * tile is written as SOI + the tables' segments + the tile's segments, as
 * a TIFF reader hands them to libjpeg. Tiles that are not JPEG streams are
 * skipped with a warning.
 *
 *   jpeg-tiles OUT SLIDE...
 *
 * OUT: "WSIJPGT1", u32 count, then per tile u32 length + the stream
 * (little-endian). Prints the tile count, sizes and tile dimensions.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

static int
write_u32 (FILE * out, uint32_t v)
{
  unsigned char b[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };
  return fwrite (b, 1, 4, out) == 4 ? 0 : -1;
}

/* APP14 "Adobe", version 100, flags 0, transform 0: the components are RGB */
static const unsigned char adobe_rgb[16] = { 0xff, 0xee, 0x00, 0x0e, 'A', 'd', 'o',
  'b', 'e', 0x00, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00
};

/* One tile as a complete stream: SOI, [APP14 RGB], the tables' segments,
 * then the tile without its SOI. Returns the length written into out
 * (sized by the caller: tile + tables + 16). */
static size_t
merge_tables (const unsigned char *tables, uint32_t tables_len,
    const unsigned char *tile, size_t tile_len, int rgb, unsigned char *out)
{
  size_t n = 2;
  memcpy (out, tile, 2);        /* SOI */
  if (rgb) {
    memcpy (out + n, adobe_rgb, sizeof adobe_rgb);
    n += sizeof adobe_rgb;
  }
  if (tables_len >= 4) {        /* DQT/DHT without the tables' SOI and EOI */
    memcpy (out + n, tables + 2, tables_len - 4);
    n += tables_len - 4;
  }
  memcpy (out + n, tile + 2, tile_len - 2);
  return n + tile_len - 2;
}

static long
extract (const char *path, FILE * out, uint32_t * count, uint64_t * bytes)
{
  TIFF *tif = TIFFOpen (path, "r");
  uint16_t compression = 0, photometric = 0;
  uint32_t tw = 0, th = 0, tables_len = 0;
  void *tables = NULL;
  long written = 0;

  if (tif == NULL) {
    fprintf (stderr, "jpeg-tiles: %s: cannot open as TIFF\n", path);
    return -1;
  }
  TIFFGetField (tif, TIFFTAG_COMPRESSION, &compression);
  if (!TIFFIsTiled (tif) || compression != COMPRESSION_JPEG) {
    fprintf (stderr, "jpeg-tiles: %s: level 0 is not JPEG-tiled\n", path);
    TIFFClose (tif);
    return -1;
  }
  TIFFGetField (tif, TIFFTAG_PHOTOMETRIC, &photometric);
  TIFFGetField (tif, TIFFTAG_TILEWIDTH, &tw);
  TIFFGetField (tif, TIFFTAG_TILELENGTH, &th);
  if (!TIFFGetField (tif, TIFFTAG_JPEGTABLES, &tables_len, &tables))
    tables_len = 0;

  uint32_t ntiles = TIFFNumberOfTiles (tif);
  uint64_t *sizes = NULL;
  TIFFGetField (tif, TIFFTAG_TILEBYTECOUNTS, &sizes);
  for (uint32_t t = 0; t < ntiles; t++) {
    size_t raw_len = sizes ? sizes[t] : 0;
    if (raw_len < 4)
      continue;
    unsigned char *raw = malloc (raw_len);
    unsigned char *full = malloc (raw_len + tables_len + sizeof adobe_rgb);
    tmsize_t got = TIFFReadRawTile (tif, t, raw, raw_len);
    if (got < 4 || raw[0] != 0xff || raw[1] != 0xd8) {
      fprintf (stderr, "jpeg-tiles: %s: tile %u is not a JPEG stream, skipped\n",
          path, t);
    } else {
      size_t n = merge_tables (tables, tables_len, raw, got,
          photometric == PHOTOMETRIC_RGB, full);
      if (write_u32 (out, n) < 0 || fwrite (full, 1, n, out) != n) {
        fprintf (stderr, "jpeg-tiles: write failed\n");
        exit (1);
      }
      (*count)++;
      *bytes += n;
      written++;
    }
    free (raw);
    free (full);
  }
  printf ("%s: %ld tiles of %ux%u, JPEGTables %u bytes, photometric %s\n", path,
      written, tw, th, tables_len, photometric == PHOTOMETRIC_RGB ? "RGB (Adobe "
      "marker added)" : photometric == PHOTOMETRIC_YCBCR ? "YCbCr" : "other");
  TIFFClose (tif);
  return written;
}

int
main (int argc, char **argv)
{
  if (argc < 3) {
    fprintf (stderr, "usage: jpeg-tiles OUT SLIDE...\n");
    return 2;
  }
  FILE *out = fopen (argv[1], "wb");
  if (out == NULL) {
    perror (argv[1]);
    return 1;
  }
  uint32_t count = 0;
  uint64_t bytes = 0;
  fwrite ("WSIJPGT1", 1, 8, out);
  write_u32 (out, 0);           /* count, patched below */
  for (int i = 2; i < argc; i++)
    if (extract (argv[i], out, &count, &bytes) < 0)
      return 1;
  fseek (out, 8, SEEK_SET);
  write_u32 (out, count);
  fclose (out);
  printf ("%s: %u tiles, %.1f MB, %.1f KB per tile\n", argv[1], count,
      bytes / 1e6, count ? bytes / 1e3 / count : 0.0);
  return count > 0 ? 0 : 1;
}
