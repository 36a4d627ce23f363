/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * jpeg-decode-cpu: tiles/s of libjpeg(-turbo) decoding the JPEG tiles of a
 * jpeg-tiles file on T threads, one decompressor each, as patchreader's
 * workers decode (default settings: ISLOW IDCT, fancy upsampling, RGB out;
 * the colour space libjpeg infers from the stream, as nvJPEG does). The
 * CPU side of issue 25's GPU decode experiment (nvjpeg-decode.cu).
 *
 *   jpeg-decode-cpu TILES THREADS ROUNDS [DUMP K]
 *
 * Every thread decodes tiles i = thread, thread + T, ... of each round;
 * only decoding is timed (tiles already in memory, output into a per-thread
 * buffer). DUMP: the RGB of K tiles spread evenly over the file (tile
 * i * count / K; u32 index, u32 width, u32 height, then width*height*3
 * bytes each) for the GPU comparison.
 */
#include "jpeg-tiles-file.h"     /* stdio.h and stdlib.h first: jpeglib.h needs them */

#include <jpeglib.h>
#include <pthread.h>
#include <setjmp.h>
#include <time.h>

typedef struct
{
  struct jpeg_error_mgr mgr;
  jmp_buf escape;
} ErrorTrap;

typedef struct
{
  const JpegTiles *tiles;
  int index, nthreads, rounds;
  uint64_t decoded, failed, pixels;
} Worker;

static void
error_exit (j_common_ptr cinfo)
{
  longjmp (((ErrorTrap *) cinfo->err)->escape, 1);
}

static void
silent (j_common_ptr cinfo, int level)
{
  (void) cinfo;
  (void) level;
}

/* Decodes one stream into rgb (grown as needed); 0 or -1. */
static int
decode_one (struct jpeg_decompress_struct *cinfo, ErrorTrap * trap,
    const unsigned char *data, size_t length, unsigned char **rgb,
    size_t *capacity, uint32_t * w, uint32_t * h)
{
  if (setjmp (trap->escape)) {
    jpeg_abort_decompress (cinfo);
    return -1;
  }
  jpeg_mem_src (cinfo, data, length);
  jpeg_read_header (cinfo, TRUE);
  cinfo->out_color_space = JCS_RGB;
  jpeg_start_decompress (cinfo);
  size_t row = (size_t) cinfo->output_width * 3;
  if (row * cinfo->output_height > *capacity) {
    *capacity = row * cinfo->output_height;
    *rgb = realloc (*rgb, *capacity);
  }
  while (cinfo->output_scanline < cinfo->output_height) {
    JSAMPROW line = *rgb + row * cinfo->output_scanline;
    jpeg_read_scanlines (cinfo, &line, 1);
  }
  *w = cinfo->output_width;
  *h = cinfo->output_height;
  jpeg_finish_decompress (cinfo);
  return 0;
}

static void *
run_worker (void *arg)
{
  Worker *wk = arg;
  struct jpeg_decompress_struct cinfo;
  ErrorTrap trap;
  unsigned char *rgb = NULL;
  size_t capacity = 0;
  uint32_t w, h;

  cinfo.err = jpeg_std_error (&trap.mgr);
  trap.mgr.error_exit = error_exit;
  trap.mgr.emit_message = silent;
  jpeg_create_decompress (&cinfo);
  for (int r = 0; r < wk->rounds; r++)
    for (uint32_t i = wk->index; i < wk->tiles->count; i += wk->nthreads) {
      if (decode_one (&cinfo, &trap, wk->tiles->data[i], wk->tiles->length[i],
              &rgb, &capacity, &w, &h) == 0) {
        wk->decoded++;
        wk->pixels += (uint64_t) w * h;
      } else {
        wk->failed++;
      }
    }
  jpeg_destroy_decompress (&cinfo);
  free (rgb);
  return NULL;
}

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int
dump_tiles (const JpegTiles * tiles, const char *path, uint32_t k)
{
  FILE *out = fopen (path, "wb");
  struct jpeg_decompress_struct cinfo;
  ErrorTrap trap;
  unsigned char *rgb = NULL;
  size_t capacity = 0;
  uint32_t w, h;

  if (out == NULL) {
    perror (path);
    return -1;
  }
  cinfo.err = jpeg_std_error (&trap.mgr);
  trap.mgr.error_exit = error_exit;
  jpeg_create_decompress (&cinfo);
  for (uint32_t j = 0; j < k && j < tiles->count; j++) {
    uint32_t i = (uint32_t) ((uint64_t) j * tiles->count / k);
    if (decode_one (&cinfo, &trap, tiles->data[i], tiles->length[i], &rgb,
            &capacity, &w, &h) < 0) {
      fprintf (stderr, "tile %u does not decode\n", i);
      return -1;
    }
    fwrite (&i, 4, 1, out);
    fwrite (&w, 4, 1, out);
    fwrite (&h, 4, 1, out);
    fwrite (rgb, 1, (size_t) w * h * 3, out);
  }
  jpeg_destroy_decompress (&cinfo);
  free (rgb);
  fclose (out);
  return 0;
}

int
main (int argc, char **argv)
{
  JpegTiles tiles;
  if (argc < 4) {
    fprintf (stderr, "usage: jpeg-decode-cpu TILES THREADS ROUNDS [DUMP K]\n");
    return 2;
  }
  if (jpeg_tiles_load (argv[1], &tiles) < 0)
    return 1;
  int nthreads = atoi (argv[2]), rounds = atoi (argv[3]);
  if (nthreads < 1 || rounds < 1) {
    fprintf (stderr, "THREADS and ROUNDS must be >= 1\n");
    return 2;
  }
  if (argc >= 6 && dump_tiles (&tiles, argv[4], (uint32_t) atoi (argv[5])) < 0)
    return 1;

  Worker *workers = calloc (nthreads, sizeof (Worker));
  pthread_t *ids = calloc (nthreads, sizeof (pthread_t));
  double t0 = now_s ();
  for (int t = 0; t < nthreads; t++) {
    workers[t] = (Worker) {.tiles = &tiles,.index = t,.nthreads = nthreads,
    .rounds = rounds};
    pthread_create (&ids[t], NULL, run_worker, &workers[t]);
  }
  uint64_t decoded = 0, failed = 0, pixels = 0;
  for (int t = 0; t < nthreads; t++) {
    pthread_join (ids[t], NULL);
    decoded += workers[t].decoded;
    failed += workers[t].failed;
    pixels += workers[t].pixels;
  }
  double seconds = now_s () - t0;
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < tiles.count; i++)
    bytes += tiles.length[i];
  printf ("cpu libjpeg-turbo %d: threads=%d tiles=%u rounds=%d decoded=%llu failed=%llu "
      "%.3f s  %.0f tiles/s  %.1f Mpix/s  %.1f MB/s compressed\n",
      LIBJPEG_TURBO_VERSION_NUMBER, nthreads, tiles.count, rounds,
      (unsigned long long) decoded, (unsigned long long) failed, seconds,
      decoded / seconds, pixels / seconds / 1e6, bytes * (double) rounds / seconds / 1e6);
  free (workers);
  free (ids);
  jpeg_tiles_free (&tiles);
  return failed ? 1 : 0;
}
