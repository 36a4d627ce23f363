/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsihttpresponse.h: what one ranged GET answered, and whether its body may
 * be used — the checks between the network and the pixels, with no
 * network in them (so the fuzzer drives them directly).
 *
 * Contract: a WsiHttpResponse collects the status and the headers that
 * matter (Content-Range, ETag, Last-Modified) from raw header lines as
 * libcurl hands them over (a new status line, after a redirect or a
 * 100-continue, starts afresh), and the body into the caller's buffer,
 * never past its end. wsi_http_response_check() then says, for the range
 * that was asked: the body is exactly those bytes of the pinned object
 * (OK); the failure is transient and worth another try (RETRY: timeouts,
 * resets, 429, 5xx, a body cut short, a wrong or malformed Content-Range
 * (no total, "*", "bytes *\/N", another unit) — the last with @error set
 * saying so); or it is final (FAIL, with a
 * WSI_BYTE_SOURCE_ERROR naming the display URI and the HTTP status). A body
 * whose Content-Range, length or identity differs from what was asked is
 * never OK.
 *
 * Cost: a few string compares per header line. Threading: a response
 * belongs to one request; the functions keep no state.
 */

#ifndef __WSI_HTTP_RESPONSE_H__
#define __WSI_HTTP_RESPONSE_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  /* the body goes here, at most @capacity bytes */
  guint8 *body;
  gsize capacity;
  gsize received;
  gboolean overflow;            /* the server sent more than asked */
  /* from the last header block */
  glong status;
  gchar *content_range;
  gchar *etag;
  gchar *last_modified;
} WsiHttpResponse;

typedef enum
{
  WSI_HTTP_OK,
  WSI_HTTP_RETRY,
  WSI_HTTP_FAIL
} WsiHttpVerdict;

/* The range a response must hold, and the object it must come from. */
typedef struct
{
  guint64 offset;
  guint64 length;
  guint64 object_size;          /* G_MAXUINT64: unknown (the open request) */
  const gchar *etag;            /* pinned, or NULL */
  const gchar *last_modified;   /* pinned (used when there is no ETag) */
  /* a whole small object (a listing), asked without a Range: messages
   * quote no byte range */
  gboolean whole;
} WsiHttpExpect;

void wsi_http_response_init (WsiHttpResponse * response, guint8 * body,
    gsize capacity);
void wsi_http_response_clear (WsiHttpResponse * response);
/* Ready for another attempt into the same buffer. */
void wsi_http_response_reset (WsiHttpResponse * response);

/* One raw header line ("HTTP/1.1 206 Partial Content\r\n", "ETag: ..."). */
void wsi_http_response_header_line (WsiHttpResponse * response,
    const gchar * line, gsize length);

/* Appends body bytes; FALSE (and overflow set) when they do not fit. */
gboolean wsi_http_response_body (WsiHttpResponse * response,
    const guint8 * data, gsize length);

/* Parses "bytes FIRST-LAST/TOTAL" (TOTAL may be "*": G_MAXUINT64). */
gboolean wsi_http_parse_content_range (const gchar * value, guint64 * first,
    guint64 * last, guint64 * total);

/* Judges a finished request. @transport_failed: the transfer itself failed
 * (timeout, reset, truncated); the verdict is then RETRY unless the body
 * overflowed (a server sending more than asked is not retried). On FAIL, @error names @display_uri, the status and the range.
 * On OK with expect->object_size unknown, *object_size is set from the
 * Content-Range total (or the body length of a whole-object 200). */
WsiHttpVerdict wsi_http_response_check (const WsiHttpResponse * response,
    const WsiHttpExpect * expect, gboolean transport_failed,
    const gchar * display_uri, guint64 * object_size, GError ** error);

G_END_DECLS

#endif /* __WSI_HTTP_RESPONSE_H__ */
