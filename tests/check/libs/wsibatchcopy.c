/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* patchbatch's copy into big batches (wsibatchcopy.h): the streaming copy
 * writes exactly what memcpy() writes, whatever the alignment of either
 * side and the length, and nothing outside the destination. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <string.h>

#include "wsibatchcopy.h"

#define GUARD 64

static void
check_copy (gsize size, guint src_shift, guint dest_shift, gboolean stream)
{
  guint8 *src = g_malloc (size + src_shift + 1);
  guint8 *dest = g_malloc (size + dest_shift + 2 * GUARD);
  guint8 *at = dest + GUARD + dest_shift;
  gsize i;

  for (i = 0; i < size + src_shift + 1; i++)
    src[i] = (guint8) (i * 131 + 7);
  memset (dest, 0xA5, size + dest_shift + 2 * GUARD);
  wsi_batch_copy (at, src + src_shift, size, stream);
  fail_unless (memcmp (at, src + src_shift, size) == 0,
      "%" G_GSIZE_FORMAT " bytes, shifts %u/%u, stream %d: copy differs",
      size, src_shift, dest_shift, stream);
  for (i = 0; i < GUARD + dest_shift; i++)
    fail_unless_equals_int (dest[i], 0xA5);
  for (i = 0; i < GUARD; i++)
    fail_unless_equals_int (at[size + i], 0xA5);
  g_free (src);
  g_free (dest);
}

GST_START_TEST (test_copy_equals_memcpy)
{
  /* below the streaming minimum, around it, one 256 px RGB patch, and
   * lengths that leave a tail after the 128-byte steps */
  static const gsize sizes[] = { 0, 1, 127, 4095, 4096, 4097, 4096 + 127,
    65536 + 33, 256 * 256 * 3, 256 * 256 * 4 + 5
  };
  static const guint shifts[] = { 0, 1, 7, 16, 31, 32, 33 };
  guint s, a, b, stream;

  for (s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (a = 0; a < G_N_ELEMENTS (shifts); a++)
      for (b = 0; b < G_N_ELEMENTS (shifts); b++)
        for (stream = 0; stream < 2; stream++)
          check_copy (sizes[s], shifts[a], shifts[b], stream);
}

GST_END_TEST;

GST_START_TEST (test_streams_big_batches_only)
{
  /* a batch of 64 patches of 256 px RGB (12.5 MB) bypasses the caches on
   * x86-64; one of 64 patches of 64 px (0.8 MB) never does */
  fail_if (wsi_batch_copy_should_stream (64 * 64 * 64 * 3));
#if defined(__x86_64__) && defined(__GNUC__)
  fail_unless (wsi_batch_copy_should_stream (64 * 256 * 256 * 3));
#endif
}

GST_END_TEST;

static Suite *
wsibatchcopy_suite (void)
{
  Suite *s = suite_create ("wsibatchcopy");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_copy_equals_memcpy);
  tcase_add_test (tc, test_streams_big_batches_only);
  return s;
}

GST_CHECK_MAIN (wsibatchcopy);
