/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#include "benchjpeglimit.h"

#include <tiffio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

void
bench_jpeg_levels_free (BenchJpegLevel * levels, gint n)
{
  gint i;

  if (levels == NULL)
    return;
  for (i = 0; i < n; i++) {
    g_free (levels[i].offsets);
    g_free (levels[i].counts);
    g_free (levels[i].tables);
  }
  g_free (levels);
}

BenchJpegLevel *
bench_jpeg_levels_read (const gchar * path, const WsiSlide * info,
    gchar ** why)
{
  BenchJpegLevel *levels = g_new0 (BenchJpegLevel, info->level_count);
  TIFFErrorHandler old_warn = TIFFSetWarningHandler (NULL);
  TIFFErrorHandler old_err = TIFFSetErrorHandler (NULL);
  TIFF *tif = TIFFOpen (path, "r");
  gint found = 0, l;

  if (tif == NULL) {
    *why = g_strdup ("libtiff cannot open it");
    goto fail;
  }
  do {
    guint32 w = 0, h = 0, tw = 0, th = 0, n_tables = 0;
    guint16 compression = 0, photometric = 0, spp = 0, bps = 0;
    uint64_t *offsets = NULL, *counts = NULL;
    void *tables = NULL;
    BenchJpegLevel *lv = NULL;
    gsize n;

    if (!TIFFIsTiled (tif))
      continue;
    TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &w);
    TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &h);
    TIFFGetField (tif, TIFFTAG_TILEWIDTH, &tw);
    TIFFGetField (tif, TIFFTAG_TILELENGTH, &th);
    TIFFGetFieldDefaulted (tif, TIFFTAG_COMPRESSION, &compression);
    TIFFGetFieldDefaulted (tif, TIFFTAG_PHOTOMETRIC, &photometric);
    TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted (tif, TIFFTAG_BITSPERSAMPLE, &bps);
    for (l = 0; l < info->level_count; l++) {
      if (levels[l].width == 0 && info->level_width[l] == w
          && info->level_height[l] == h) {
        lv = &levels[l];
        break;
      }
    }
    if (lv == NULL || compression != COMPRESSION_JPEG || spp != 3 || bps != 8
        || tw == 0 || th == 0)
      continue;
    if (!TIFFGetField (tif, TIFFTAG_TILEOFFSETS, &offsets)
        || !TIFFGetField (tif, TIFFTAG_TILEBYTECOUNTS, &counts))
      continue;
    lv->width = w;
    lv->height = h;
    lv->tile_w = tw;
    lv->tile_h = th;
    lv->across = (w + tw - 1) / tw;
    lv->down = (h + th - 1) / th;
    n = (gsize) lv->across * lv->down;
    if (n > TIFFNumberOfTiles (tif))
      n = TIFFNumberOfTiles (tif);
    lv->offsets = g_new0 (guint64, (gsize) lv->across * lv->down);
    lv->counts = g_new0 (guint64, (gsize) lv->across * lv->down);
    memcpy (lv->offsets, offsets, n * sizeof (guint64));
    memcpy (lv->counts, counts, n * sizeof (guint64));
    if (TIFFGetField (tif, TIFFTAG_JPEGTABLES, &n_tables, &tables)
        && n_tables > 0) {
      lv->tables = g_memdup2 (tables, n_tables);
      lv->tables_size = n_tables;
    }
    lv->rgb = photometric == PHOTOMETRIC_RGB;
    found++;
  } while (TIFFReadDirectory (tif));
  TIFFClose (tif);
  if (found != info->level_count) {
    *why = g_strdup_printf ("%d of %d levels are JPEG-tiled TIFF "
        "directories", found, info->level_count);
    goto fail;
  }
  TIFFSetWarningHandler (old_warn);
  TIFFSetErrorHandler (old_err);
  return levels;

fail:
  TIFFSetWarningHandler (old_warn);
  TIFFSetErrorHandler (old_err);
  bench_jpeg_levels_free (levels, info->level_count);
  return NULL;
}

static void
limit_error_exit (j_common_ptr cinfo)
{
  BenchJpegDecoder *dec = (BenchJpegDecoder *) cinfo->client_data;

  cinfo->err->format_message (cinfo, dec->message);
  longjmp (dec->jmp, 1);
}

/* Warnings (corrupt-data notes) are not the limit loop's business. */
static void
limit_output_message (j_common_ptr cinfo)
{
}

void
bench_jpeg_decoder_init (BenchJpegDecoder * dec, guint max_tile_w,
    guint max_tile_h)
{
  memset (dec, 0, sizeof (*dec));
  dec->cinfo.err = jpeg_std_error (&dec->pub);
  dec->pub.error_exit = limit_error_exit;
  dec->pub.output_message = limit_output_message;
  dec->cinfo.client_data = dec;
  jpeg_create_decompress (&dec->cinfo);
  dec->pixels_cap = (gsize) max_tile_w * max_tile_h * 4;
  dec->pixels = g_malloc (MAX (dec->pixels_cap, 4));
  dec->rows_cap = MAX (max_tile_h, 1);
  dec->rows = g_new (JSAMPROW, dec->rows_cap);
}

void
bench_jpeg_decoder_clear (BenchJpegDecoder * dec)
{
  jpeg_destroy_decompress (&dec->cinfo);
  g_free (dec->data);
  g_free (dec->pixels);
  g_free (dec->rows);
}

gboolean
bench_jpeg_decode (BenchJpegDecoder * dec, const BenchJpegLevel * lv,
    const guint8 * data, gsize n, guint scale)
{
  struct jpeg_decompress_struct *cinfo = &dec->cinfo;
  guint i;

  if (setjmp (dec->jmp)) {
    jpeg_abort_decompress (cinfo);
    dec->tables_loaded = NULL;
    return FALSE;
  }
  if (lv->tables != NULL && lv->tables != dec->tables_loaded) {
    jpeg_mem_src (cinfo, lv->tables, lv->tables_size);
    jpeg_read_header (cinfo, FALSE);
    dec->tables_loaded = lv->tables;
  }
  jpeg_mem_src (cinfo, data, n);
  jpeg_read_header (cinfo, TRUE);
  if (lv->rgb)
    cinfo->jpeg_color_space = JCS_RGB;
  cinfo->out_color_space = JCS_EXT_BGRA;
  cinfo->scale_num = 1;
  cinfo->scale_denom = scale;
  jpeg_start_decompress (cinfo);
  if ((gsize) cinfo->output_width * cinfo->output_height * 4 > dec->pixels_cap
      || cinfo->output_height > dec->rows_cap) {
    dec->pixels_cap = (gsize) cinfo->output_width * cinfo->output_height * 4;
    dec->pixels = g_realloc (dec->pixels, dec->pixels_cap);
    dec->rows_cap = cinfo->output_height;
    dec->rows = g_renew (JSAMPROW, dec->rows, dec->rows_cap);
  }
  for (i = 0; i < cinfo->output_height; i++)
    dec->rows[i] = dec->pixels + (gsize) i * cinfo->output_width * 4;
  while (cinfo->output_scanline < cinfo->output_height)
    jpeg_read_scanlines (cinfo, dec->rows + cinfo->output_scanline,
        cinfo->output_height - cinfo->output_scanline);
  jpeg_finish_decompress (cinfo);
  return TRUE;
}

gboolean
bench_jpeg_decode_tile (BenchJpegDecoder * dec, int fd,
    const BenchJpegLevel * lv, gsize k, guint scale)
{
  gsize n = lv->counts[k];

  if (n == 0)
    return TRUE;                /* a missing tile: nothing to decode */
  if (n > dec->data_cap) {
    dec->data_cap = n;
    dec->data = g_realloc (dec->data, n);
  }
  if (pread (fd, dec->data, n, lv->offsets[k]) != (gssize) n) {
    g_strlcpy (dec->message, "short read", sizeof (dec->message));
    return FALSE;
  }
  return bench_jpeg_decode (dec, lv, dec->data, n, scale);
}

gdouble
bench_cpu_seconds (void)
{
  struct rusage usage;

  getrusage (RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 +
      usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}
