/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsibatchcopy.h"

#include <gst/wsi/wsicpu.h>

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_STREAMING_STORES 1
#endif

/* Batches from this size on are streamed: two of them (the one written,
 * the one downstream reads) no longer fit a typical last-level cache share
 * (glibc's memcpy makes the same choice per call, but a patch of a batch
 * is far below its threshold). */
#define STREAM_FROM_BYTES (8 * 1024 * 1024)

gboolean
wsi_batch_copy_should_stream (gsize batch_bytes)
{
#ifdef HAVE_STREAMING_STORES
  return batch_bytes >= STREAM_FROM_BYTES;
#else
  return FALSE;
#endif
}

#ifdef HAVE_STREAMING_STORES

/* @size a multiple of 128, @dest 32-byte aligned. */
__attribute__ ((target ("avx")))
static void
stream_avx (guint8 * dest, const guint8 * src, gsize size)
{
  gsize i;

  for (i = 0; i < size; i += 128) {
    __m256i a = _mm256_loadu_si256 ((const __m256i *) (src + i));
    __m256i b = _mm256_loadu_si256 ((const __m256i *) (src + i + 32));
    __m256i c = _mm256_loadu_si256 ((const __m256i *) (src + i + 64));
    __m256i d = _mm256_loadu_si256 ((const __m256i *) (src + i + 96));

    _mm256_stream_si256 ((__m256i *) (dest + i), a);
    _mm256_stream_si256 ((__m256i *) (dest + i + 32), b);
    _mm256_stream_si256 ((__m256i *) (dest + i + 64), c);
    _mm256_stream_si256 ((__m256i *) (dest + i + 96), d);
  }
}

/* @size a multiple of 128, @dest 32-byte aligned. */
static void
stream_sse2 (guint8 * dest, const guint8 * src, gsize size)
{
  gsize i, j;

  for (i = 0; i < size; i += 128)
    for (j = 0; j < 128; j += 16)
      _mm_stream_si128 ((__m128i *) (dest + i + j),
          _mm_loadu_si128 ((const __m128i *) (src + i + j)));
}

#endif

void
wsi_batch_copy (guint8 * dest, const guint8 * src, gsize size,
    gboolean streaming)
{
#ifdef HAVE_STREAMING_STORES
  gsize head, body;

  if (streaming && size >= 4096) {
    /* the unaligned start and the tail that is not a whole 128-byte step
     * go through memcpy; the stores of the body bypass the caches and are
     * fenced so that they are visible before the batch is pushed */
    head = (32 - ((guintptr) dest & 31)) & 31;
    memcpy (dest, src, head);
    body = (size - head) & ~(gsize) 127;
    if (wsi_cpu_has (WSI_CPU_AVX))
      stream_avx (dest + head, src + head, body);
    else
      stream_sse2 (dest + head, src + head, body);
    _mm_sfence ();
    memcpy (dest + head + body, src + head + body, size - head - body);
    return;
  }
#endif
  memcpy (dest, src, size);
}
