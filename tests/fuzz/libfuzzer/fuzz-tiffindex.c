/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzz-tiffindex.c: libFuzzer target for a TIFF pyramid index read back
 * from the on-disk index cache (wsitiffindex.c), which any local user or a
 * damaged disk may have written.
 *
 * Input: the index's bytes, for an object of 1 MiB. Invariants beyond
 * ASan's: an accepted pyramid has levels, strictly narrower, every tile
 * inside the object; it is written back and read again unchanged; a
 * refused one says why and leaves the pyramid empty. Cost: linear in the
 * input. Single-threaded.
 */

#include "wsitiffindex.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OBJECT_SIZE (1 << 20)

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

static void
check_accepted (const WsiTiffPyramid * p)
{
  guint i;
  guint64 t;

  if (p->n_levels == 0 || p->vendor == NULL || p->mpp_source == NULL)
    abort ();
  for (i = 0; i < p->n_levels; i++) {
    const WsiTiffLevel *l = &p->levels[i];
    guint64 n = (guint64) l->tiles_across * l->tiles_down;
    if (i > 0 && l->width >= p->levels[i - 1].width)
      abort ();
    for (t = 0; t < n; t++)
      if (l->tile_offsets[t] + l->tile_byte_counts[t] > OBJECT_SIZE)
        abort ();
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  GBytes *bytes = g_bytes_new (data, size);
  WsiTiffPyramid pyramid, again;
  gchar *why = NULL;

  if (wsi_tiff_index_from_bytes (bytes, OBJECT_SIZE, &pyramid, &why)) {
    GBytes *written;
    check_accepted (&pyramid);
    written = wsi_tiff_index_to_bytes (&pyramid);
    if (!wsi_tiff_index_from_bytes (written, OBJECT_SIZE, &again, &why)
        || again.n_levels != pyramid.n_levels
        || !g_bytes_equal (written, bytes))
      abort ();
    wsi_tiff_pyramid_clear (&again);
    g_bytes_unref (written);
    wsi_tiff_pyramid_clear (&pyramid);
  } else if (why == NULL || pyramid.n_levels != 0 || pyramid.levels != NULL) {
    abort ();
  }
  g_free (why);
  g_bytes_unref (bytes);
  return 0;
}
