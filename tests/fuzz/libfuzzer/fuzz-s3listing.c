/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzz-s3listing.c: libFuzzer target for one S3 ListObjectsV2 page as
 * wsiobjectstore.c reads it (GMarkup: Contents/Key, IsTruncated,
 * NextContinuationToken).
 *
 * Input: the page's bytes. Invariants beyond ASan's: a failed parse hands
 * out no continuation token and sets an error; every key is a string of
 * its own. Cost: linear in the input. Single-threaded.
 */

#include "wsiobjectstore.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  GPtrArray *keys = g_ptr_array_new_with_free_func (g_free);
  gboolean truncated = TRUE;
  gchar *token = (gchar *) "unset";
  GError *error = NULL;
  guint i;

  if (!wsi_object_store_parse_listing ((const gchar *) data, size, keys,
          &truncated, &token, &error)) {
    if (token != NULL || truncated || error == NULL)
      abort ();
  }
  for (i = 0; i < keys->len; i++)
    if (g_ptr_array_index (keys, i) == NULL)
      abort ();
  g_clear_error (&error);
  g_free (token);
  g_ptr_array_unref (keys);
  return 0;
}
