/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsihttpsource.h: the WsiByteSource of an object behind http:// or
 * https:// (libcurl), read by ranged GETs.
 *
 * Contract: open is one ranged GET of the object's first
 * WSI_HTTP_OPEN_BYTES (its size from Content-Range, its identity — ETag,
 * else Last-Modified — pinned, the bytes kept for the TIFF header walk;
 * WSI_HTTP_REOPEN_BYTES when an earlier open of the URL left its head in
 * the range cache and the object is still the same).
 * Every later response must be a 206 with exactly the Content-Range asked,
 * of an object of the same size and identity (requests carry If-Match with
 * a strong ETag), and exactly that many body bytes (wsihttpresponse.h);
 * anything else is an error for that read, never data. Timeouts, resets,
 * truncated bodies, 429 and 5xx are retried with exponential backoff and
 * jitter, at most `retries` times; other 4xx are not. Errors name the URL
 * without user, password, query or fragment, and the HTTP status.
 *
 * Cost: one request per read that misses the process-wide range cache
 * (wsirangecache.h, bounded in MiB, keyed by URL and identity, so a slide
 * opened again — by wsislidesrc, then patchreader — finds its bytes).
 * Connections are reused: each pooled easy handle keeps its connections
 * between requests (any source, any thread), the prefetch thread's multi
 * handle keeps its own; TLS sessions and DNS are shared through one curl
 * share. Both are held only while a source is open or a wsi_http_get()
 * runs: when the last closes, the pooled handles are cleaned up and the
 * prefetch thread ends (no socket or thread outlives the pipeline's NULL).
 * HTTP/2 is used
 * where the server offers it. The latency of a read is one round trip:
 * callers hide it with wsi_byte_source_prefetch(): hinted ranges (adjacent
 * ones coalesced into one request) are fetched by one I/O thread with curl
 * multi, up to `prefetch_requests` at once and `prefetch_mb` queued or in
 * flight (hints beyond are dropped, they are only hints); a read of a range
 * being prefetched waits for it instead of asking again. A prefetch that
 * fails is forgotten: the read then fetches (with retries) itself.
 *
 * Threading: reads and prefetches from any number of threads; the settings
 * are process-wide and may change at any time (they apply to the next
 * request).
 */

#ifndef __WSI_HTTP_SOURCE_H__
#define __WSI_HTTP_SOURCE_H__

#include <glib.h>
#include "wsibytesource.h"
#include "wsifetchstats.h"
#include "wsisigv4.h"

G_BEGIN_DECLS

#define WSI_HTTP_OPEN_BYTES (256 * 1024)
/* The open of an object whose head an earlier open left in the range cache
 * (same URL, size and identity) asks only this much. */
#define WSI_HTTP_REOPEN_BYTES 4096

/* Process-wide settings of remote reads (environment defaults in
 * parentheses: WSI_HTTP_RETRIES, WSI_HTTP_BACKOFF_MS, WSI_HTTP_TIMEOUT_MS,
 * WSI_HTTP_CACHE_MB, WSI_HTTP_PREFETCH_REQUESTS, WSI_HTTP_PREFETCH_MB). */
typedef struct
{
  guint retries;                /* tries after the first (5) */
  guint backoff_ms;             /* first backoff, doubled each time (100) */
  guint timeout_ms;             /* one request, connect included (30000) */
  guint cache_mb;               /* range cache bound, MiB (256) */
  guint prefetch_requests;      /* prefetch requests in flight at most (64) */
  guint prefetch_mb;            /* prefetch bytes queued or in flight, MiB (64) */
} WsiHttpSettings;

void wsi_http_get_settings (WsiHttpSettings * settings);
void wsi_http_set_settings (const WsiHttpSettings * settings);

/* Extra request options for sources that sign (s3://): an AWS Signature
 * V4 key (wsisigv4.h: each request, each retry, is signed when it is sent)
 * or NULL for anonymous requests; @headers ("Name: value"), sent as
 * given. The strings are copied. */
typedef struct
{
  const WsiSigV4Key *sigv4;
  const gchar *const *headers;
} WsiHttpAuth;

/* A pipeline element that reads remote objects holds the connections
 * from its start to its stop (wsislidesrc does), so that they are not
 * closed and opened again each time its last object closes between two
 * slides; NULL (stop) gives them up. Calls pair. */
void wsi_http_hold (void);
void wsi_http_unhold (void);

/* Opens @url (http:// or https://) as @display_uri (NULL:
 * wsi_location_display()). @auth may be NULL. */
WsiByteSource *wsi_http_source_open (const gchar * url,
    const gchar * display_uri, const WsiHttpAuth * auth, GError ** error);

/* Registers http:// and https:// in the byte-source scheme table (a
 * display form remembered with credentials opens the full URL). */
void wsi_http_source_register (void);

/* A GET of a whole small object (listings, manifests): at most @max_bytes,
 * with the same retries and error rules; NUL-terminated. */
gchar *wsi_http_get (const gchar * url, const gchar * display_uri,
    const WsiHttpAuth * auth, gsize max_bytes, gsize * length,
    GError ** error);

/* This source's counters (zeros for a source that is not HTTP). */
const WsiFetchStats *wsi_http_source_stats (WsiByteSource * source);

/* Calls @func with the display URI and counters of every open HTTP source
 * (under a lock: @func must not open or close sources). */
void wsi_http_foreach_source (void (*func) (const gchar * display_uri,
        const WsiFetchStats * stats, gpointer user_data), gpointer user_data);

G_END_DECLS

#endif /* __WSI_HTTP_SOURCE_H__ */
