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

#include "wsimaskruns.h"

#include <string.h>

gsize
wsi_mask_runs_length_at (const guint8 * mask, gsize n, gsize at)
{
  guint8 value = mask[at];
  guint64 pattern = G_GUINT64_CONSTANT (0x0101010101010101) * value, word;
  gsize length = 1;

  /* Eight bytes at a time through the long runs of tissue and glass. */
  while (at + length + sizeof (word) <= n) {
    memcpy (&word, mask + at + length, sizeof (word));
    if (word != pattern)
      break;
    length += sizeof (word);
  }
  while (at + length < n && mask[at + length] == value)
    length++;
  return length;
}

void
wsi_mask_runs_put_length (GByteArray * out, guint32 length)
{
  guint8 byte;

  while (length >= 0x80) {
    byte = (guint8) (length | 0x80);
    g_byte_array_append (out, &byte, 1);
    length >>= 7;
  }
  byte = (guint8) length;
  g_byte_array_append (out, &byte, 1);
}

gboolean
wsi_mask_runs_take_length (const guint8 * data, gsize size, gsize * at,
    guint32 * length)
{
  guint64 value = 0;
  guint i;

  for (i = 0; i < WSI_MASK_RUNS_MAX_VARINT_SIZE && *at < size; i++) {
    guint8 byte = data[(*at)++];

    value |= (guint64) (byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) {
      if (value > G_MAXUINT32)
        return FALSE;
      *length = (guint32) value;
      return TRUE;
    }
  }
  return FALSE;
}
