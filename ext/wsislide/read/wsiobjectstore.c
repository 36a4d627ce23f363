/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsiobjectstore.c: s3:// and gs:// URLs and credentials (see
 * wsiobjectstore.h). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "wsiobjectstore.h"
#include "wsihttpsource.h"
#include "wsisigv4.h"

typedef struct
{
  gchar *key_id;
  gchar *secret;
  gchar *token;                 /* or NULL */
} Credentials;

static void
credentials_clear (Credentials * c)
{
  g_free (c->key_id);
  /* secrets do not linger in freed memory */
  if (c->secret != NULL)
    memset (c->secret, 0, strlen (c->secret));
  g_free (c->secret);
  g_free (c->token);
  memset (c, 0, sizeof (*c));
}

static const gchar *
env_nonempty (const gchar * name)
{
  const gchar *v = g_getenv (name);

  return v != NULL && *v != '\0' ? v : NULL;
}

/* Environment first, then the shared credentials file; FALSE: none. */
static gboolean
credentials_find (Credentials * c)
{
  const gchar *profile = env_nonempty ("AWS_PROFILE");
  const gchar *file = env_nonempty ("AWS_SHARED_CREDENTIALS_FILE");
  GKeyFile *keys;
  gchar *path;

  memset (c, 0, sizeof (*c));
  if (g_strcmp0 (g_getenv ("AWS_NO_SIGN_REQUEST"), "true") == 0)
    return FALSE;
  if (env_nonempty ("AWS_ACCESS_KEY_ID") && env_nonempty
      ("AWS_SECRET_ACCESS_KEY")) {
    c->key_id = g_strdup (g_getenv ("AWS_ACCESS_KEY_ID"));
    c->secret = g_strdup (g_getenv ("AWS_SECRET_ACCESS_KEY"));
    c->token = g_strdup (env_nonempty ("AWS_SESSION_TOKEN"));
    return TRUE;
  }
  path = file ? g_strdup (file) : g_build_filename (g_get_home_dir (),
      ".aws", "credentials", NULL);
  keys = g_key_file_new ();
  if (g_key_file_load_from_file (keys, path, G_KEY_FILE_NONE, NULL)) {
    const gchar *group = profile ? profile : "default";
    c->key_id = g_key_file_get_string (keys, group, "aws_access_key_id",
        NULL);
    c->secret = g_key_file_get_string (keys, group,
        "aws_secret_access_key", NULL);
    c->token = g_key_file_get_string (keys, group, "aws_session_token", NULL);
  }
  g_key_file_free (keys);
  g_free (path);
  if (c->key_id != NULL && c->secret != NULL)
    return TRUE;
  credentials_clear (c);
  return FALSE;
}

static gchar *
region (void)
{
  const gchar *r = env_nonempty ("AWS_REGION");

  if (r == NULL)
    r = env_nonempty ("AWS_DEFAULT_REGION");
  return g_strdup (r ? r : "us-east-1");
}

/* "bucket" and "key" of SCHEME://bucket/key; FALSE when malformed. */
static gboolean
split_location (const gchar * location, gsize scheme_length, gchar ** bucket,
    gchar ** key)
{
  const gchar *rest = location + scheme_length;
  const gchar *slash = strchr (rest, '/');

  if (slash == NULL || slash == rest || slash[1] == '\0')
    return FALSE;
  *bucket = g_strndup (rest, slash - rest);
  *key = g_strdup (slash + 1);
  return TRUE;
}

gchar *
wsi_object_store_url (const gchar * location, GError ** error)
{
  gboolean s3 = g_ascii_strncasecmp (location, "s3://", 5) == 0;
  gboolean gs = g_ascii_strncasecmp (location, "gs://", 5) == 0;
  gchar *bucket = NULL, *key = NULL, *url = NULL;

  if ((!s3 && !gs) || !split_location (location, 5, &bucket, &key)) {
    gchar *display = wsi_location_display (location);
    g_set_error (error, WSI_BYTE_SOURCE_ERROR,
        WSI_BYTE_SOURCE_ERROR_NOT_FOUND,
        "%s: not an s3://BUCKET/KEY or gs://BUCKET/KEY location", display);
    g_free (display);
    return NULL;
  }
  if ((s3 && env_nonempty ("AWS_ENDPOINT_URL"))
      || (gs && env_nonempty ("WSI_GCS_ENDPOINT"))) {
    gchar *base = g_strdup (g_getenv (s3 ? "AWS_ENDPOINT_URL" :
            "WSI_GCS_ENDPOINT"));
    gsize n = strlen (base);
    while (n > 0 && base[n - 1] == '/')
      base[--n] = '\0';        /* "http://host:port/" */
    url = g_strdup_printf ("%s/%s/%s", base, bucket, key);
    g_free (base);
  } else if (s3) {
    gchar *r = region ();
    url = g_strdup_printf ("https://%s.s3.%s.amazonaws.com/%s", bucket, r,
        key);
    g_free (r);
  } else {
    url = g_strdup_printf ("https://storage.googleapis.com/%s/%s", bucket,
        key);
  }
  g_free (bucket);
  g_free (key);
  return url;
}

/* The signing of one s3:// request (key NULL: anonymous). */
typedef struct
{
  Credentials credentials;
  gchar *region;
  WsiSigV4Key key;
  WsiHttpAuth auth;
} Signing;

static void
signing_init (Signing * g, const gchar * location)
{
  memset (g, 0, sizeof (*g));
  if (g_ascii_strncasecmp (location, "s3://", 5) != 0
      || !credentials_find (&g->credentials))
    return;
  g->region = region ();
  g->key.key_id = g->credentials.key_id;
  g->key.secret = g->credentials.secret;
  g->key.token = g->credentials.token;
  g->key.region = g->region;
  g->key.service = "s3";
  /* signed by wsisigv4.c at each request, with x-amz-content-sha256 (S3
   * wants the payload hash of every SigV4 request) */
  g->auth.sigv4 = &g->key;
}

static void
signing_clear (Signing * g)
{
  credentials_clear (&g->credentials);
  g_free (g->region);
  memset (g, 0, sizeof (*g));
}

/* An s3:// request refused (401/403) that went out unsigned: says why it
 * was unsigned, since that, not the bucket's policy, is the usual cause. */
static void
hint_unsigned (const Signing * g, const gchar * location, GError * error)
{
  gchar *message;

  if (error == NULL || g->auth.sigv4 != NULL
      || g_ascii_strncasecmp (location, "s3://", 5) != 0
      || !g_error_matches (error, WSI_BYTE_SOURCE_ERROR,
          WSI_BYTE_SOURCE_ERROR_DENIED))
    return;
  if (g_strcmp0 (g_getenv ("AWS_NO_SIGN_REQUEST"), "true") == 0)
    message = g_strconcat (error->message, " (the request went out "
        "unsigned: AWS_NO_SIGN_REQUEST=true)", NULL);
  else
    message = g_strconcat (error->message, " (the request went out "
        "unsigned: no AWS credentials were found in AWS_ACCESS_KEY_ID and "
        "AWS_SECRET_ACCESS_KEY, nor in the AWS_PROFILE or default section "
        "of ~/.aws/credentials or AWS_SHARED_CREDENTIALS_FILE)", NULL);
  g_free (error->message);
  error->message = message;
}

WsiByteSource *
wsi_object_store_open (const gchar * location, GError ** error)
{
  gchar *url = wsi_object_store_url (location, error);
  gchar *display;
  Signing signing;
  WsiByteSource *source;

  if (url == NULL)
    return NULL;
  display = wsi_location_display (location);
  signing_init (&signing, location);
  source = wsi_http_source_open (url, display, &signing.auth, error);
  if (source == NULL && error != NULL)
    hint_unsigned (&signing, location, *error);
  signing_clear (&signing);
  g_free (display);
  g_free (url);
  return source;
}

/* ---- listing: S3 ListObjectsV2 ------------------------------------------ */

/* One listing page is at most this large (1,000 keys of 1 KB each). */
#define MAX_LISTING_BYTES (4 << 20)

typedef struct
{
  GPtrArray *keys;
  gchar *element;               /* the innermost open element */
  gboolean in_contents;
  gboolean truncated;
  gchar *next_token;
} ListingParse;

static void
listing_start (GMarkupParseContext * ctx, const gchar * name,
    const gchar ** attribute_names, const gchar ** attribute_values,
    gpointer user_data, GError ** error)
{
  ListingParse *lp = user_data;

  g_free (lp->element);
  lp->element = g_strdup (name);
  if (strcmp (name, "Contents") == 0)
    lp->in_contents = TRUE;
}

static void
listing_end (GMarkupParseContext * ctx, const gchar * name,
    gpointer user_data, GError ** error)
{
  ListingParse *lp = user_data;

  if (strcmp (name, "Contents") == 0)
    lp->in_contents = FALSE;
  g_clear_pointer (&lp->element, g_free);
}

static void
listing_text (GMarkupParseContext * ctx, const gchar * text, gsize length,
    gpointer user_data, GError ** error)
{
  ListingParse *lp = user_data;

  if (lp->element == NULL)
    return;
  if (lp->in_contents && strcmp (lp->element, "Key") == 0)
    g_ptr_array_add (lp->keys, g_strndup (text, length));
  else if (strcmp (lp->element, "IsTruncated") == 0)
    lp->truncated = length == 4 && strncmp (text, "true", 4) == 0;
  else if (strcmp (lp->element, "NextContinuationToken") == 0) {
    g_free (lp->next_token);
    lp->next_token = g_strndup (text, length);
  }
}

gboolean
wsi_object_store_parse_listing (const gchar * xml, gsize length,
    GPtrArray * keys, gboolean * truncated, gchar ** next_token,
    GError ** error)
{
  static const GMarkupParser parser = {
    listing_start, listing_end, listing_text, NULL, NULL
  };
  ListingParse lp = { keys, NULL, FALSE, FALSE, NULL };
  GMarkupParseContext *ctx = g_markup_parse_context_new (&parser, 0, &lp,
      NULL);
  gboolean ok = g_markup_parse_context_parse (ctx, xml, length, error)
      && g_markup_parse_context_end_parse (ctx, error);

  g_markup_parse_context_free (ctx);
  g_free (lp.element);
  *truncated = ok && lp.truncated;
  *next_token = ok ? lp.next_token : NULL;
  if (!ok)
    g_free (lp.next_token);
  return ok;
}

/* The ListObjectsV2 URL of @scheme ("s3" or "gs") @bucket / @prefix from
 * @token on. GCS's XML API answers the same request and document
 * (list-type=2, continuation-token), so one parser serves both. */
static gchar *
listing_url (const gchar * scheme, const gchar * bucket, const gchar * prefix,
    const gchar * token)
{
  gchar *object = g_strdup_printf ("%s://%s/x", scheme, bucket);
  gchar *base = wsi_object_store_url (object, NULL);
  /* encoded as SigV4 encodes them (a continuation token holds '+', '/'
   * and '='): the query sent is already canonical */
  gchar *escaped_prefix = wsi_sigv4_encode (prefix, FALSE);
  gchar *escaped_token = token ? wsi_sigv4_encode (token, FALSE) : NULL;
  gchar *url;

  base[strlen (base) - 1] = '\0';       /* ".../bucket/" or "host/" */
  /* Parameters in sorted order, as SigV4 canonicalises them. */
  url = g_strdup_printf ("%s?%s%s%slist-type=2&prefix=%s", base,
      token ? "continuation-token=" : "", token ? escaped_token : "",
      token ? "&" : "", escaped_prefix);
  g_free (escaped_token);
  g_free (escaped_prefix);
  g_free (base);
  g_free (object);
  return url;
}

GPtrArray *
wsi_object_store_list (const gchar * location, GError ** error)
{
  GPtrArray *keys = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *urls = g_ptr_array_new_with_free_func (g_free);
  gchar *display = wsi_location_display (location);
  gboolean s3 = g_ascii_strncasecmp (location, "s3://", 5) == 0;
  gboolean gs = g_ascii_strncasecmp (location, "gs://", 5) == 0;
  const gchar *scheme = s3 ? "s3" : "gs";
  gchar *bucket, *prefix, *token = NULL;
  const gchar *slash = NULL;
  Signing signing;
  gboolean ok = TRUE, more = TRUE;
  guint pages = 0, i;

  if ((!s3 && !gs) || (slash = strchr (location + 5, '/')) == NULL
      || slash == location + 5) {
    g_set_error (error, WSI_BYTE_SOURCE_ERROR,
        WSI_BYTE_SOURCE_ERROR_UNSUPPORTED, "%s: only s3://BUCKET/PREFIX/ "
        "and gs://BUCKET/PREFIX/ prefixes can be listed", display);
    g_free (display);
    g_ptr_array_unref (keys);
    g_ptr_array_unref (urls);
    return NULL;
  }
  bucket = g_strndup (location + 5, slash - (location + 5));
  prefix = g_strdup (slash + 1);
  signing_init (&signing, location);
  while (ok && more && pages++ < 100000) {
    gchar *url = listing_url (scheme, bucket, prefix, token);
    gsize length = 0;
    gchar *xml = wsi_http_get (url, display, &signing.auth,
        MAX_LISTING_BYTES, &length, error);
    g_free (token);
    token = NULL;
    ok = xml != NULL && wsi_object_store_parse_listing (xml, length, keys,
        &more, &token, error);
    /* a truncated page without a token would list the same page forever */
    more = more && token != NULL;
    g_free (xml);
    g_free (url);
  }
  if (!ok && error != NULL)
    hint_unsigned (&signing, location, *error);
  signing_clear (&signing);
  g_free (token);
  if (ok)
    for (i = 0; i < keys->len; i++)
      g_ptr_array_add (urls, g_strdup_printf ("%s://%s/%s", scheme, bucket,
              (const gchar *) g_ptr_array_index (keys, i)));
  g_free (prefix);
  g_free (bucket);
  g_free (display);
  g_ptr_array_unref (keys);
  if (!ok) {
    g_ptr_array_unref (urls);
    return NULL;
  }
  return urls;
}

void
wsi_object_store_register (void)
{
  wsi_byte_source_register_scheme ("s3", wsi_object_store_open);
  wsi_byte_source_register_scheme ("gs", wsi_object_store_open);
}
