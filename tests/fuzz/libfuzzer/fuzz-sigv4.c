/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * fuzz-sigv4.c: libFuzzer target for the SigV4 signer
 * (ext/wsislide/read/wsisigv4.c): the URL parse, the path and query
 * canonicalisation (percent-decoding, re-encoding, sorting) and the header
 * canonicalisation. What it signs comes from outside: object keys and
 * continuation tokens out of a listing, the user's s3:// URL.
 *
 * Input layout: byte 0 flags, then three fields separated by '\n':
 *
 *   bit 0 set   field 1 is a whole URL, signed as given (the user's URL)
 *   bit 0 clear field 1 is an object key, field 2 a continuation token:
 *               the URL is built as the object store builds it (key encoded
 *               keeping '/', token encoded) and must sign
 *   bit 1       a session token is signed too
 *   field 3     an extra header line ("Name: value") signed with it (the
 *               signer's callers pass single lines: further lines are
 *               ignored)
 *
 * Invariants beyond ASan's: wsi_sigv4_encode() gives only unreserved bytes,
 * '/' (when kept) and %XX; a URL built from encoded parts always signs;
 * a signature is 3 or 4 "Name: value" lines starting with the
 * Authorization line, with a 64-hex-digit signature, and signing twice
 * gives the same lines. Cost: linear in the input (the query sort is
 * n log n). Single-threaded.
 */

#include "wsisigv4.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

static void
check_encoded (const gchar * text, gboolean keep_slash)
{
  gchar *encoded = wsi_sigv4_encode (text, keep_slash);
  const gchar *p;

  for (p = encoded; *p != '\0'; p++) {
    if (g_ascii_isalnum (*p) || strchr ("-_.~", *p) != NULL
        || (keep_slash && *p == '/'))
      continue;
    if (*p != '%' || !g_ascii_isxdigit (p[1]) || !g_ascii_isxdigit (p[2]))
      abort ();
    p += 2;
  }
  g_free (encoded);
}

static void
check_signature (gchar ** lines, gboolean with_token)
{
  const gchar *sig;
  guint n = g_strv_length (lines), i;

  if (n != (with_token ? 4u : 3u))
    abort ();
  if (!g_str_has_prefix (lines[0], "Authorization: AWS4-HMAC-SHA256 "
          "Credential=AKID/20260102/us-east-1/s3/aws4_request, "
          "SignedHeaders="))
    abort ();
  sig = strstr (lines[0], ", Signature=");
  if (sig == NULL || strlen (sig + 12) != 64)
    abort ();
  for (i = 0; i < 64; i++)
    if (!g_ascii_isxdigit (sig[12 + i]))
      abort ();
  for (i = 0; i < n; i++)
    if (strstr (lines[i], ": ") == NULL || strchr (lines[i], '\n') != NULL)
      abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  WsiSigV4Key key = { "AKID", "secret/key+", NULL, "us-east-1", "s3" };
  GDateTime *when;
  gchar *text, **fields, *url;
  const gchar *extra[2] = { NULL, NULL };
  gchar **first, **second;
  guint8 flags;
  guint n;

  if (size < 1)
    return 0;
  flags = data[0];
  /* the signer takes C strings: a NUL ends the input */
  text = g_strndup ((const gchar *) data + 1, size - 1);
  fields = g_strsplit (text, "\n", -1);
  n = g_strv_length (fields);
  if (flags & 2)
    key.token = "session token";
  if (n > 2)
    extra[0] = fields[2];

  if (flags & 1) {
    url = g_strdup (n > 0 ? fields[0] : "");
  } else {
    gchar *k = wsi_sigv4_encode (n > 0 ? fields[0] : "", TRUE);
    gchar *t = wsi_sigv4_encode (n > 1 ? fields[1] : "", FALSE);
    check_encoded (n > 0 ? fields[0] : "", TRUE);
    check_encoded (n > 1 ? fields[1] : "", FALSE);
    url = g_strconcat ("https://bucket.s3.us-east-1.amazonaws.com/", k,
        "?list-type=2&continuation-token=", t, NULL);
    g_free (k);
    g_free (t);
  }

  when = g_date_time_new_utc (2026, 1, 2, 3, 4, 5);
  first = wsi_sigv4_sign ("GET", url, extra, &key, when);
  if (first == NULL && !(flags & 1))
    abort ();
  if (first != NULL) {
    check_signature (first, key.token != NULL);
    second = wsi_sigv4_sign ("GET", url, extra, &key, when);
    if (second == NULL || !g_strv_equal ((const gchar * const *) first,
            (const gchar * const *) second))
      abort ();
    g_strfreev (second);
  }
  g_strfreev (first);
  g_date_time_unref (when);
  g_free (url);
  g_strfreev (fields);
  g_free (text);
  return 0;
}
