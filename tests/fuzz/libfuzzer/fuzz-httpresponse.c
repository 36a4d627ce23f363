/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzz-httpresponse.c: libFuzzer target for what a server answers to a
 * ranged GET (ext/wsislide/read/wsihttpresponse.c): header lines as libcurl
 * hands them over, the body in chunks, then the verdict.
 *
 * Input layout:
 *
 *   byte 0      flags: bit 0 the open request (object size unknown), bit 1
 *               the transfer failed, bit 2 an ETag is pinned ("\"e\""),
 *               bit 3 a Last-Modified is pinned ("Mon")
 *   bytes 1-4   offset asked (big-endian)
 *   bytes 5-6   length asked (big-endian, 1..65536)
 *   bytes 7-10  object size pinned at open (big-endian)
 *   byte 11     body chunk size (1..256)
 *   then        header lines separated by '\n' up to an empty line, then
 *               the body
 *
 * Invariants checked beyond ASan's: an OK verdict means exactly the bytes
 * asked arrived (or, at open, a range starting at 0 no longer than asked),
 * and a FAIL always comes with an error. Cost: linear in the input.
 * Single-threaded.
 */

#include "wsihttpresponse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_SIZE 12

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

static guint32
be32 (const uint8_t * p)
{
  return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) |
      ((guint32) p[2] << 8) | p[3];
}

/* Feeds the header lines of [p, end) until an empty line; returns where
 * the body starts. */
static const uint8_t *
feed_headers (WsiHttpResponse * response, const uint8_t * p,
    const uint8_t * end)
{
  while (p < end) {
    const uint8_t *nl = memchr (p, '\n', end - p);
    gsize n = nl ? (gsize) (nl - p) : (gsize) (end - p);
    gchar *line;

    if (n == 0)
      return nl + 1;
    line = g_strdup_printf ("%.*s\r\n", (int) n, (const gchar *) p);
    wsi_http_response_header_line (response, line, strlen (line));
    g_free (line);
    p = nl ? nl + 1 : end;
  }
  return end;
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  WsiHttpExpect expect = { 0, };
  WsiHttpResponse response;
  WsiHttpVerdict verdict;
  const uint8_t *p, *end = data + size;
  guint64 object_size = 0, first, last, total;
  guint8 *body;
  gsize chunk;
  GError *error = NULL;

  if (size < HEADER_SIZE)
    return 0;
  expect.offset = be32 (data + 1);
  expect.length = ((guint64) data[5] << 8 | data[6]) + 1;
  expect.object_size = data[0] & 1 ? G_MAXUINT64 : be32 (data + 7);
  expect.etag = data[0] & 4 ? "\"e\"" : NULL;
  expect.last_modified = data[0] & 8 ? "Mon" : NULL;
  chunk = (gsize) data[11] + 1;

  body = g_malloc (expect.length);
  wsi_http_response_init (&response, body, expect.length);
  p = feed_headers (&response, data + HEADER_SIZE, end);
  while (p < end && !response.overflow) {
    gsize n = MIN (chunk, (gsize) (end - p));
    wsi_http_response_body (&response, p, n);
    p += n;
  }
  verdict = wsi_http_response_check (&response, &expect, (data[0] & 2) != 0,
      "http://fuzz/slide.svs", &object_size, &error);

  if (verdict == WSI_HTTP_OK && response.status == 206) {
    if (!wsi_http_parse_content_range (response.content_range, &first,
            &last, &total) || first != expect.offset
        || response.received != last - first + 1
        || response.received > expect.length)
      abort ();
    if (!(data[0] & 1) && response.received != expect.length)
      abort ();
  }
  if (verdict == WSI_HTTP_OK && response.overflow)
    abort ();
  if (verdict == WSI_HTTP_FAIL && error == NULL)
    abort ();
  g_clear_error (&error);
  wsi_http_response_clear (&response);
  g_free (body);
  return 0;
}
