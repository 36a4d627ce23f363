/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsihttpresponse.c: header parsing and the verdict on one ranged GET
 * (see wsihttpresponse.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "wsihttpresponse.h"
#include "wsibytesource.h"

void
wsi_http_response_init (WsiHttpResponse * response, guint8 * body,
    gsize capacity)
{
  memset (response, 0, sizeof (*response));
  response->body = body;
  response->capacity = capacity;
}

void
wsi_http_response_clear (WsiHttpResponse * response)
{
  g_clear_pointer (&response->content_range, g_free);
  g_clear_pointer (&response->etag, g_free);
  g_clear_pointer (&response->last_modified, g_free);
}

void
wsi_http_response_reset (WsiHttpResponse * response)
{
  wsi_http_response_clear (response);
  response->received = 0;
  response->overflow = FALSE;
  response->status = 0;
}

/* "Name: value" with @name matched case-insensitively: the trimmed value,
 * or NULL. */
static gchar *
header_value (const gchar * line, gsize length, const gchar * name)
{
  gsize n = strlen (name);
  gchar *value;

  if (length <= n || line[n] != ':' || g_ascii_strncasecmp (line, name, n))
    return NULL;
  value = g_strndup (line + n + 1, length - n - 1);
  return g_strstrip (value);
}

static void
replace (gchar ** field, gchar * value)
{
  g_free (*field);
  *field = value;
}

void
wsi_http_response_header_line (WsiHttpResponse * response,
    const gchar * line, gsize length)
{
  gchar *value;

  if (length >= 5 && strncmp (line, "HTTP/", 5) == 0) {
    /* A new response (redirect, 100-continue): forget the last one's. */
    const gchar *space = memchr (line, ' ', length);
    wsi_http_response_clear (response);
    response->status = 0;
    if (space != NULL && (gsize) (space - line) + 4 <= length
        && g_ascii_isdigit (space[1]) && g_ascii_isdigit (space[2])
        && g_ascii_isdigit (space[3]))
      response->status = (space[1] - '0') * 100 + (space[2] - '0') * 10
          + (space[3] - '0');
    return;
  }
  if ((value = header_value (line, length, "Content-Range")) != NULL)
    replace (&response->content_range, value);
  else if ((value = header_value (line, length, "ETag")) != NULL)
    replace (&response->etag, value);
  else if ((value = header_value (line, length, "Last-Modified")) != NULL)
    replace (&response->last_modified, value);
}

gboolean
wsi_http_response_body (WsiHttpResponse * response, const guint8 * data,
    gsize length)
{
  if (length > response->capacity - response->received) {
    response->overflow = TRUE;
    return FALSE;
  }
  memcpy (response->body + response->received, data, length);
  response->received += length;
  return TRUE;
}

/* A decimal number of at most 19 digits (fits guint64), moving *p. */
static gboolean
parse_number (const gchar ** p, guint64 * value)
{
  guint digits = 0;

  *value = 0;
  while (g_ascii_isdigit (**p) && digits < 19) {
    *value = *value * 10 + (guint64) (**p - '0');
    (*p)++;
    digits++;
  }
  return digits > 0 && !g_ascii_isdigit (**p);
}

gboolean
wsi_http_parse_content_range (const gchar * value, guint64 * first,
    guint64 * last, guint64 * total)
{
  const gchar *p = value;

  if (value == NULL || g_ascii_strncasecmp (p, "bytes ", 6) != 0)
    return FALSE;
  p += 6;
  while (*p == ' ')
    p++;
  if (!parse_number (&p, first) || *p++ != '-' || !parse_number (&p, last)
      || *p++ != '/' || *last < *first)
    return FALSE;
  if (p[0] == '*' && p[1] == '\0') {
    *total = G_MAXUINT64;
    return TRUE;
  }
  return parse_number (&p, total) && *p == '\0' && *last < *total;
}

static WsiHttpVerdict
fail (GError ** error, gint code, const gchar * display_uri,
    const WsiHttpExpect * expect, const gchar * format, ...)
G_GNUC_PRINTF (5, 6);

/* FAIL with "<uri>: bytes A-B: <reason>". */
static WsiHttpVerdict
fail (GError ** error, gint code, const gchar * display_uri,
    const WsiHttpExpect * expect, const gchar * format, ...)
{
  va_list args;
  gchar *reason;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  if (expect->whole)
    g_set_error (error, WSI_BYTE_SOURCE_ERROR, code, "%s: %s", display_uri,
        reason);
  else
    g_set_error (error, WSI_BYTE_SOURCE_ERROR, code, "%s: bytes %"
        G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT ": %s", display_uri,
        expect->offset, expect->offset + expect->length - 1, reason);
  g_free (reason);
  return WSI_HTTP_FAIL;
}

/* The object behind the response is the pinned one. */
static gboolean
identity_matches (const WsiHttpResponse * response,
    const WsiHttpExpect * expect)
{
  if (expect->etag != NULL)
    return g_strcmp0 (response->etag, expect->etag) == 0;
  if (expect->last_modified != NULL)
    return g_strcmp0 (response->last_modified, expect->last_modified) == 0;
  return TRUE;
}

static WsiHttpVerdict
check_status (const WsiHttpResponse * response, const WsiHttpExpect * expect,
    const gchar * display_uri, GError ** error)
{
  glong status = response->status;

  if (status == 429 || (status >= 500 && status <= 599))
    return WSI_HTTP_RETRY;
  if (status == 404 || status == 410)
    return fail (error, WSI_BYTE_SOURCE_ERROR_NOT_FOUND, display_uri, expect,
        "HTTP %ld: no such object", status);
  if (status == 401 || status == 403)
    return fail (error, WSI_BYTE_SOURCE_ERROR_DENIED, display_uri, expect,
        "HTTP %ld: access denied", status);
  if (status == 412)
    return fail (error, WSI_BYTE_SOURCE_ERROR_CHANGED, display_uri, expect,
        "HTTP 412: the object changed since it was opened");
  if (status == 416)
    return fail (error, WSI_BYTE_SOURCE_ERROR_SHORT, display_uri, expect,
        "HTTP 416: the range lies outside the object");
  if (status != 206 && status != 200)
    return fail (error, WSI_BYTE_SOURCE_ERROR_IO, display_uri, expect,
        "HTTP %ld", status);
  return WSI_HTTP_OK;
}

/* A 206 must carry exactly the range asked, of an object of the pinned
 * size; a 200 is the whole object, usable only when that is what was asked
 * (or, at open, when it fits the open request). */
static WsiHttpVerdict
check_range (const WsiHttpResponse * response, const WsiHttpExpect * expect,
    const gchar * display_uri, guint64 * object_size, GError ** error)
{
  guint64 first, last, total;
  gboolean opening = expect->object_size == G_MAXUINT64;

  if (response->status == 200) {
    if (expect->offset != 0 || response->overflow
        || (!opening && response->received != expect->object_size))
      return fail (error, WSI_BYTE_SOURCE_ERROR_IO, display_uri, expect,
          "HTTP 200: the server ignores Range requests");
    if (opening)
      *object_size = response->received;
    return WSI_HTTP_OK;
  }
  if (!wsi_http_parse_content_range (response->content_range, &first, &last,
          &total) || total == G_MAXUINT64) {
    /* Never data (the object's size or the bytes' place is unknown); a
     * proxy's glitch may pass: worth another try. */
    /* escaped: the header's bytes are the server's */
    gchar *value = response->content_range
        ? g_strescape (response->content_range, NULL) : g_strdup ("none");
    fail (error, WSI_BYTE_SOURCE_ERROR_SHORT, display_uri, expect,
        "HTTP 206 with a missing or malformed Content-Range (%s)", value);
    g_free (value);
    return WSI_HTTP_RETRY;
  }
  if (first != expect->offset || (!opening
          && (last != expect->offset + expect->length - 1
              || total != expect->object_size))
      || (opening && last - first + 1 > expect->length)) {
    /* Never data; a proxy's glitch may pass: worth another try. */
    fail (error, WSI_BYTE_SOURCE_ERROR_SHORT, display_uri, expect,
        "HTTP 206 with Content-Range %" G_GUINT64_FORMAT "-%"
        G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT ", not the range asked",
        first, last, total);
    return WSI_HTTP_RETRY;
  }
  if (response->overflow)
    return fail (error, WSI_BYTE_SOURCE_ERROR_SHORT, display_uri, expect,
        "HTTP 206 with a body longer than its Content-Range");
  if (response->received != last - first + 1)
    return WSI_HTTP_RETRY;      /* cut short: the next try may get it all */
  if (opening)
    *object_size = total;
  return WSI_HTTP_OK;
}

WsiHttpVerdict
wsi_http_response_check (const WsiHttpResponse * response,
    const WsiHttpExpect * expect, gboolean transport_failed,
    const gchar * display_uri,
    guint64 * object_size, GError ** error)
{
  WsiHttpVerdict verdict;

  if (transport_failed && !response->overflow)
    return WSI_HTTP_RETRY;
  verdict = check_status (response, expect, display_uri, error);
  if (verdict != WSI_HTTP_OK)
    return verdict;
  if (!identity_matches (response, expect))
    return fail (error, WSI_BYTE_SOURCE_ERROR_CHANGED, display_uri, expect,
        "the object changed since it was opened (ETag or Last-Modified "
        "differs)");
  return check_range (response, expect, display_uri, object_size, error);
}
