/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiobjectstore.h: s3:// and gs:// objects as HTTP byte sources
 * (wsihttpsource.h), their URLs and credentials.
 *
 * Contract: s3://BUCKET/KEY is read from https://BUCKET.s3.REGION.amazonaws.com/KEY,
 * or path-style from $AWS_ENDPOINT_URL/BUCKET/KEY (S3-compatible stores);
 * REGION from AWS_REGION, AWS_DEFAULT_REGION, else us-east-1. Requests are
 * signed with AWS Signature V4 (wsisigv4.h, not libcurl's) when
 * credentials are found — AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN, else the AWS_PROFILE (or "default") section of
 * ~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE) — and anonymous
 * otherwise or with AWS_NO_SIGN_REQUEST=true (public buckets). gs://BUCKET/KEY
 * is a public object read through the GCS XML endpoint,
 * https://storage.googleapis.com/BUCKET/KEY, or $WSI_GCS_ENDPOINT/BUCKET/KEY.
 * Messages show the s3:// or gs:// URL, never a key or secret.
 *
 * Cost: credentials are looked up at each open (environment, one small
 * file). Threading: any thread.
 */

#ifndef __WSI_OBJECT_STORE_H__
#define __WSI_OBJECT_STORE_H__

#include <glib.h>
#include "wsibytesource.h"

G_BEGIN_DECLS

/* Opens an s3:// or gs:// location. */
WsiByteSource *wsi_object_store_open (const gchar * location,
    GError ** error);

/* Registers s3:// and gs:// in the byte-source scheme table. */
void wsi_object_store_register (void);

/* The https:// (or endpoint) URL an s3:// or gs:// location is read from;
 * NULL with @error when @location is not one. */
gchar *wsi_object_store_url (const gchar * location, GError ** error);

/* Every object under s3://BUCKET/PREFIX or gs://BUCKET/PREFIX (recursive:
 * ListObjectsV2 without a delimiter, every continuation page; GCS's XML API
 * answers the same request), as s3:// or gs:// locations in the order the
 * store lists them (UTF-8 binary order of keys). One request per 1,000
 * keys. NULL with @error naming the prefix and the HTTP status. */
GPtrArray *wsi_object_store_list (const gchar * location, GError ** error);

/* One ListObjectsV2 page: appends its keys to @keys; *@truncated and
 * *@next_token (or NULL) say whether and where the listing goes on. */
gboolean wsi_object_store_parse_listing (const gchar * xml, gsize length,
    GPtrArray * keys, gboolean * truncated, gchar ** next_token,
    GError ** error);

G_END_DECLS

#endif /* __WSI_OBJECT_STORE_H__ */
