/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsisigv4.c: AWS Signature Version 4 with GLib's SHA-256 and HMAC (see
 * wsisigv4.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "wsisigv4.h"

/* SHA-256 of nothing: the payload hash of a bodiless request. */
#define EMPTY_SHA256 \
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

gchar *
wsi_sigv4_encode (const gchar * text, gboolean keep_slash)
{
  GString *out = g_string_sized_new (strlen (text) + 16);
  const guchar *p;

  for (p = (const guchar *) text; *p != '\0'; p++) {
    if (g_ascii_isalnum (*p) || *p == '-' || *p == '_' || *p == '.'
        || *p == '~' || (keep_slash && *p == '/'))
      g_string_append_c (out, (gchar) * p);
    else
      g_string_append_printf (out, "%%%02X", *p);
  }
  return g_string_free (out, FALSE);
}

/* @text with %XX decoded (a '+' stays a '+': S3 reads it so in a path,
 * and this layer never sends one raw in a query). */
static gchar *
decode (const gchar * text, gsize length)
{
  GString *out = g_string_sized_new (length);
  gsize i;

  for (i = 0; i < length; i++) {
    if (text[i] == '%' && i + 2 < length + 0 && g_ascii_isxdigit (text[i + 1])
        && g_ascii_isxdigit (text[i + 2])) {
      g_string_append_c (out, (gchar) (g_ascii_xdigit_value (text[i + 1]) * 16
              + g_ascii_xdigit_value (text[i + 2])));
      i += 2;
    } else {
      g_string_append_c (out, text[i]);
    }
  }
  return g_string_free (out, FALSE);
}

static gchar *
reencode (const gchar * text, gsize length, gboolean keep_slash)
{
  gchar *raw = decode (text, length);
  gchar *encoded = wsi_sigv4_encode (raw, keep_slash);

  g_free (raw);
  return encoded;
}

static gint
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

/* "name=value&..." encoded and sorted (by name, then value: sorting the
 * "name=value" strings would put "a-b" before "a=b"). */
static gchar *
canonical_query (const gchar * query)
{
  GPtrArray *pairs = g_ptr_array_new_with_free_func (g_free);
  gchar **parts, **part;
  GString *out = g_string_new (NULL);
  guint i;

  if (query == NULL || *query == '\0') {
    g_ptr_array_unref (pairs);
    return g_string_free (out, FALSE);
  }
  parts = g_strsplit (query, "&", -1);
  for (part = parts; *part != NULL; part++) {
    const gchar *eq = strchr (*part, '=');
    gsize name_length = eq ? (gsize) (eq - *part) : strlen (*part);
    gchar *name, *value;
    if (**part == '\0')
      continue;
    name = reencode (*part, name_length, FALSE);
    value = eq ? reencode (eq + 1, strlen (eq + 1), FALSE) : g_strdup ("");
    /* "\001" sorts below every encoded byte: name order first */
    g_ptr_array_add (pairs, g_strconcat (name, "\001", value, NULL));
    g_free (name);
    g_free (value);
  }
  g_strfreev (parts);
  g_ptr_array_sort (pairs, compare_strings);
  for (i = 0; i < pairs->len; i++) {
    gchar *pair = g_ptr_array_index (pairs, i);
    *strchr (pair, '\001') = '=';
    if (i > 0)
      g_string_append_c (out, '&');
    g_string_append (out, pair);
  }
  g_ptr_array_unref (pairs);
  return g_string_free (out, FALSE);
}

/* A header value trimmed, inner runs of spaces made one. */
static gchar *
header_value (const gchar * value)
{
  GString *out = g_string_new (NULL);
  gboolean space = FALSE;
  const gchar *p;

  for (p = value; *p != '\0'; p++) {
    if (*p == ' ' || *p == '\t') {
      space = out->len > 0;
      continue;
    }
    if (space)
      g_string_append_c (out, ' ');
    space = FALSE;
    g_string_append_c (out, *p);
  }
  return g_string_free (out, FALSE);
}

static gchar *
hex (const guint8 * bytes, gsize n)
{
  gchar *out = g_malloc (2 * n + 1);
  gsize i;

  for (i = 0; i < n; i++)
    g_snprintf (out + 2 * i, 3, "%02x", bytes[i]);
  return out;
}

static void
hmac (const guint8 * key, gsize key_length, const gchar * data,
    guint8 digest[32])
{
  GHmac *h = g_hmac_new (G_CHECKSUM_SHA256, key, key_length);
  gsize n = 32;

  g_hmac_update (h, (const guchar *) data, -1);
  g_hmac_get_digest (h, digest, &n);
  g_hmac_unref (h);
}

gchar **
wsi_sigv4_sign (const gchar * method, const gchar * url,
    const gchar * const *extra_headers, const WsiSigV4Key * key,
    GDateTime * when)
{
  GUri *uri = g_uri_parse (url, G_URI_FLAGS_ENCODED, NULL);
  GPtrArray *headers, *out;
  GString *canonical, *signed_names, *canonical_headers;
  gchar *amz_date, *date, *host, *path, *query, *request_hash, *scope;
  gchar *to_sign, *signature, *secret_key;
  const gchar *scheme, *raw_path;
  guint8 k[32];
  gint port;
  guint i;

  if (uri == NULL || g_uri_get_host (uri) == NULL) {
    /* a URL without a host ("name:path") parses: it is still not signable */
    if (uri != NULL)
      g_uri_unref (uri);
    return NULL;
  }
  amz_date = g_date_time_format (when, "%Y%m%dT%H%M%SZ");
  date = g_date_time_format (when, "%Y%m%d");
  scheme = g_uri_get_scheme (uri);
  port = g_uri_get_port (uri);
  {
    const gchar *h = g_uri_get_host (uri);
    gchar *bracketed = strchr (h, ':') ? g_strdup_printf ("[%s]", h)
        : g_strdup (h);
    gboolean default_port = port < 0
        || (g_ascii_strcasecmp (scheme, "http") == 0 && port == 80)
        || (g_ascii_strcasecmp (scheme, "https") == 0 && port == 443);
    host = default_port ? g_strdup (bracketed)
        : g_strdup_printf ("%s:%d", bracketed, port);
    g_free (bracketed);
  }
  raw_path = g_uri_get_path (uri);
  path = *raw_path ? reencode (raw_path, strlen (raw_path), TRUE)
      : g_strdup ("/");
  query = canonical_query (g_uri_get_query (uri));

  /* "name:value" lines, lower-case names, sorted */
  headers = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (headers, g_strconcat ("host:", host, NULL));
  g_ptr_array_add (headers, g_strconcat ("x-amz-content-sha256:",
          EMPTY_SHA256, NULL));
  g_ptr_array_add (headers, g_strconcat ("x-amz-date:", amz_date, NULL));
  if (key->token != NULL)
    g_ptr_array_add (headers, g_strconcat ("x-amz-security-token:",
            key->token, NULL));
  for (i = 0; extra_headers != NULL && extra_headers[i] != NULL; i++) {
    const gchar *colon = strchr (extra_headers[i], ':');
    gchar *name, *value;
    if (colon == NULL)
      continue;
    name = g_ascii_strdown (extra_headers[i], colon - extra_headers[i]);
    g_strstrip (name);
    value = header_value (colon + 1);
    g_ptr_array_add (headers, g_strconcat (name, ":", value, NULL));
    g_free (name);
    g_free (value);
  }
  g_ptr_array_sort (headers, compare_strings);
  signed_names = g_string_new (NULL);
  canonical_headers = g_string_new (NULL);
  for (i = 0; i < headers->len; i++) {
    const gchar *line = g_ptr_array_index (headers, i);
    if (i > 0)
      g_string_append_c (signed_names, ';');
    g_string_append_len (signed_names, line, strchr (line, ':') - line);
    g_string_append (canonical_headers, line);
    g_string_append_c (canonical_headers, '\n');
  }

  canonical = g_string_new (NULL);
  g_string_append_printf (canonical, "%s\n%s\n%s\n%s\n%s\n%s", method, path,
      query, canonical_headers->str, signed_names->str, EMPTY_SHA256);
  request_hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256,
      canonical->str, canonical->len);
  scope = g_strdup_printf ("%s/%s/%s/aws4_request", date, key->region,
      key->service);
  to_sign = g_strdup_printf ("AWS4-HMAC-SHA256\n%s\n%s\n%s", amz_date, scope,
      request_hash);

  /* kDate = HMAC("AWS4" + secret, date), then region, service, request */
  secret_key = g_strconcat ("AWS4", key->secret, NULL);
  hmac ((const guint8 *) secret_key, strlen (secret_key), date, k);
  memset (secret_key, 0, strlen (secret_key));
  g_free (secret_key);
  hmac (k, 32, key->region, k);
  hmac (k, 32, key->service, k);
  hmac (k, 32, "aws4_request", k);
  hmac (k, 32, to_sign, k);
  signature = hex (k, 32);
  memset (k, 0, sizeof (k));

  out = g_ptr_array_new ();
  g_ptr_array_add (out, g_strdup_printf ("Authorization: AWS4-HMAC-SHA256 "
          "Credential=%s/%s, SignedHeaders=%s, Signature=%s", key->key_id,
          scope, signed_names->str, signature));
  g_ptr_array_add (out, g_strconcat ("x-amz-date: ", amz_date, NULL));
  g_ptr_array_add (out, g_strdup ("x-amz-content-sha256: " EMPTY_SHA256));
  if (key->token != NULL)
    g_ptr_array_add (out, g_strconcat ("x-amz-security-token: ", key->token,
            NULL));
  g_ptr_array_add (out, NULL);

  g_free (signature);
  g_free (to_sign);
  g_free (scope);
  g_free (request_hash);
  g_string_free (canonical, TRUE);
  g_string_free (canonical_headers, TRUE);
  g_string_free (signed_names, TRUE);
  g_ptr_array_unref (headers);
  g_free (query);
  g_free (path);
  g_free (host);
  g_free (date);
  g_free (amz_date);
  g_uri_unref (uri);
  return (gchar **) g_ptr_array_free (out, FALSE);
}
