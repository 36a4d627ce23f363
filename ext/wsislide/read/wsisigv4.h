/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsisigv4.h: AWS Signature Version 4 of one request (header form), so
 * that signed s3:// requests do not depend on how one libcurl release
 * signs them (curl's CURLOPT_AWS_SIGV4 canonicalises query strings
 * differently from release to release; one signs an encoded "+" wrongly).
 *
 * Contract: wsi_sigv4_sign() returns the header lines that make a request
 * signed: "Authorization", "x-amz-date", "x-amz-content-sha256" (the
 * empty payload's hash: only bodiless requests are signed) and, with a
 * session token, "x-amz-security-token". The canonical request is built
 * as AWS specifies it: the path percent-decoded and encoded again (every
 * byte but A-Z a-z 0-9 - _ . ~ and '/' as %XX), the query parameters
 * decoded, encoded the same way ('/' too), sorted by name then value; the
 * signed headers are host (as libcurl sends it: the port only when it is
 * not the scheme's), the x-amz-* ones above and @extra_headers. The URL
 * sent must be the one signed. wsi_sigv4_encode() is that encoding, for
 * building URLs whose query needs no further canonicalising.
 *
 * Cost: five HMAC-SHA256 and two SHA-256 of a few hundred bytes per
 * request. Threading: pure functions, any thread.
 */

#ifndef __WSI_SIGV4_H__
#define __WSI_SIGV4_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  const gchar *key_id;
  const gchar *secret;
  const gchar *token;           /* session token, or NULL */
  const gchar *region;          /* "us-east-1" */
  const gchar *service;         /* "s3" */
} WsiSigV4Key;

/* AWS's URI encoding of @text: unreserved bytes kept, '/' kept when
 * @keep_slash, every other byte %XX (upper-case hex). */
gchar *wsi_sigv4_encode (const gchar * text, gboolean keep_slash);

/* The header lines ("Name: value", NULL-terminated, g_strfreev) that sign
 * @method @url at @when (UTC). @extra_headers ("Name: value", or NULL) are
 * signed too and must be sent as given. NULL when @url is not a URL. */
gchar **wsi_sigv4_sign (const gchar * method, const gchar * url,
    const gchar * const *extra_headers, const WsiSigV4Key * key,
    GDateTime * when);

G_END_DECLS

#endif /* __WSI_SIGV4_H__ */
