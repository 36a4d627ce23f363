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

WsiByteSource *
wsi_object_store_open (const gchar * location, GError ** error)
{
  gchar *url = wsi_object_store_url (location, error);
  gchar *display, *sigv4 = NULL, *userpwd = NULL, *token_header = NULL;
  /* S3 wants the payload hash of every SigV4 request (a GET's is that of
   * nothing); curl 7.88 does not add it itself. */
  const gchar *headers[3] = { NULL, NULL, NULL };
  WsiHttpAuth auth = { NULL, NULL, headers };
  Credentials c;
  WsiByteSource *source;

  if (url == NULL)
    return NULL;
  display = wsi_location_display (location);
  if (g_ascii_strncasecmp (location, "s3://", 5) == 0 && credentials_find (&c)) {
    gchar *r = region ();
    sigv4 = g_strdup_printf ("aws:amz:%s:s3", r);
    userpwd = g_strdup_printf ("%s:%s", c.key_id, c.secret);
    headers[0] = "x-amz-content-sha256: "
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    if (c.token != NULL) {
      token_header = g_strconcat ("x-amz-security-token: ", c.token, NULL);
      headers[1] = token_header;
    }
    auth.aws_sigv4 = sigv4;
    auth.user_password = userpwd;
    g_free (r);
    credentials_clear (&c);
  }
  source = wsi_http_source_open (url, display, &auth, error);
  if (userpwd != NULL)
    memset (userpwd, 0, strlen (userpwd));
  g_free (userpwd);
  g_free (token_header);
  g_free (sigv4);
  g_free (display);
  g_free (url);
  return source;
}
