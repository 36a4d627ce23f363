/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzz-maskstore.c: libFuzzer target for tissuemask's mask files
 * (ext/opencv/wsimaskstore.c, wsi_mask_store_parse).
 *
 * Input: a mask file without its final SHA-256. Each input is parsed
 * twice: as it is (the checksum check must refuse nearly all of them) and
 * with a correct SHA-256 appended, expecting the key the file itself
 * names, so that mutations reach the size, fraction and run checks behind
 * the checksum and key. Invariants beyond ASan's: a refusal sets an error
 * and hands out no mask; an accepted mask is width x height bytes with
 * both sides in 1..8192 and a fraction in [0, 1]. Cost: linear in the
 * input plus the mask it declares (at most 64 MiB). Single-threaded.
 */

#include "wsimaskstore.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

#define KEY_AT 16               /* magic, version, key length */

static void
check_parse (const guint8 * data, gsize size, const gchar * key)
{
  WsiStoredMask stored;
  GError *error = NULL;

  if (wsi_mask_store_parse (data, size, key, &stored, &error)) {
    if (error != NULL || stored.mask == NULL || stored.width == 0
        || stored.height == 0 || stored.width > WSI_MASK_STORE_MAX_SIDE
        || stored.height > WSI_MASK_STORE_MAX_SIDE
        || g_bytes_get_size (stored.mask) !=
        (gsize) stored.width * stored.height
        || !(stored.fraction >= 0.0 && stored.fraction <= 1.0))
      abort ();
    wsi_mask_stored_clear (&stored);
  } else if (error == NULL || stored.mask != NULL) {
    abort ();
  }
  g_clear_error (&error);
}

/* The key the input names (its key field), or a fixed one. */
static gchar *
named_key (const uint8_t * data, size_t size)
{
  guint32 length;

  if (size < KEY_AT)
    return g_strdup ("path=/fuzz.svs\n");
  memcpy (&length, data + KEY_AT - 4, sizeof (length));
  length = GUINT32_FROM_LE (length);
  if (length > size - KEY_AT)
    return g_strdup ("path=/fuzz.svs\n");
  return g_strndup ((const gchar *) data + KEY_AT, length);
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  gchar *key = named_key (data, size);
  GChecksum *checksum = g_checksum_new (G_CHECKSUM_SHA256);
  guint8 *sealed = g_malloc (size + 32);
  gsize digest_size = 32;

  check_parse (data, size, key);

  memcpy (sealed, data, size);
  g_checksum_update (checksum, data, size);
  g_checksum_get_digest (checksum, sealed + size, &digest_size);
  check_parse (sealed, size + 32, key);

  g_checksum_free (checksum);
  g_free (sealed);
  g_free (key);
  return 0;
}
