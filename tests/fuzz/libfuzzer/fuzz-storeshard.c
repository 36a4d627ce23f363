/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzz-storeshard.c: libFuzzer target for a patch store's shard files
 * (ext/wsistore/wsishardreader.c: header, footer, entry table, the
 * GVariant slide table, multi-view tables) and the payload decode behind
 * them (wsistorecodec.c: raw, yuv420, jpeg through libjpeg).
 *
 * Input: a whole shard file. It is put in an anonymous in-memory file
 * named by a path (the reader maps paths, as patchstoresrc does) and
 * opened without the crc32 check (which would refuse nearly every
 * mutation before the structure is looked at), then served as
 * patchstoresrc serves it: every entry's slide strings read and its
 * payload (or each of its views) decoded into a buffer of exactly the
 * size the entry declares, in the pixel layout of the shard's format.
 *
 * Invariants beyond ASan's: a refusal sets an error with a message naming
 * the file; an accepted shard's entries, payloads and view payloads lie
 * inside the file, and each entry names a slide of the table (what
 * wsishardreader.h promises and patchstoresrc relies on); a failed decode
 * says why. Decodes above 1 Mpixel are skipped (slow, not a bug: the
 * reader bounds sides at 65536). GLib criticals and warnings are fatal.
 *
 * Cost: one write of the input and one decode per entry. Single-threaded.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "wsishardreader.h"
#include "wsistorecodec.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_DECODE_PIXELS (1u << 20)

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

static WsiStoreCodec *codec;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  (void) argc;
  (void) argv;
  g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  /* made once and reused, as each patchstoresrc worker does */
  codec = wsi_store_codec_new ();
  return 0;
}

static void
decode (const WsiShard * shard, const WsiStorePixels * pixels,
    const guint8 * payload, gsize size, guint width, guint height)
{
  GError *error = NULL;
  gsize stride = (gsize) width * pixels->channels;
  guint8 *dest;

  if ((guint64) width * height > MAX_DECODE_PIXELS)
    return;
  dest = g_malloc (stride * height);
  if (!wsi_store_decode (codec, shard->encoding, pixels, payload, size,
          width, height, dest, stride, &error))
    g_assert (error != NULL && error->message != NULL);
  g_clear_error (&error);
  g_free (dest);
}

static void
serve (const WsiShard * shard)
{
  WsiStorePixels pixels;
  gboolean known = wsi_store_pixels_from_format (shard->video_format,
      &pixels);
  guint i, v;

  for (i = 0; i < shard->n_patches; i++) {
    const WsiStoreEntry *e = &shard->entries[i];
    const WsiStoreSlide *slide;

    g_assert (e->offset <= shard->size && e->size <= shard->size - e->offset);
    g_assert (e->slide < shard->slides->len);
    slide = wsi_shard_slide (shard, i);
    g_assert (slide->path != NULL && slide->uri != NULL
        && slide->label != NULL);
    g_assert (g_strv_length (slide->column_names) < G_MAXUINT);
    g_assert (g_strv_length (slide->column_values) < G_MAXUINT);
    /* patchstoresrc serves a shard only in its store's format: pixels
     * of the format's own layout */
    if (!known)
      continue;
    if (!shard->views) {
      if (e->channels == pixels.channels)
        decode (shard, &pixels, wsi_shard_payload (shard, i), e->size,
            e->width, e->height);
      continue;
    }
    for (v = 0; v < e->n_views; v++) {
      const WsiStoreView *view = &wsi_shard_views (shard, i)[v];

      g_assert (view->offset <= e->size
          && view->size <= e->size - view->offset);
      decode (shard, &pixels, wsi_shard_payload (shard, i) + view->offset,
          view->size, view->record.out_width, view->record.out_height);
    }
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  GError *error = NULL;
  WsiShard *shard;
  gchar *path;
  size_t done = 0;
  int fd = memfd_create ("fuzz.wsis", MFD_CLOEXEC);

  g_assert (fd >= 0);
  while (done < size) {
    ssize_t n = write (fd, data + done, size - done);

    g_assert (n > 0);
    done += n;
  }
  path = g_strdup_printf ("/proc/self/fd/%d", fd);
  shard = wsi_shard_open (path, FALSE, &error);
  if (shard == NULL) {
    g_assert (error != NULL && strstr (error->message, path) != NULL);
    g_clear_error (&error);
  } else {
    g_assert (error == NULL && shard->size == size);
    serve (shard);
    wsi_shard_free (shard);
  }
  g_free (path);
  close (fd);
  return 0;
}
