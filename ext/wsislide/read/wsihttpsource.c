/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsihttpsource.c: ranged GETs with libcurl behind the WsiByteSource
 * interface (see wsihttpsource.h): a shared connection pool, retries with
 * backoff, the range cache. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "wsihttpsource.h"
#include "wsihttpresponse.h"
#include "wsirangecache.h"

/* Longest backoff between two tries. */
#define MAX_BACKOFF_MS 10000

typedef struct
{
  WsiByteSource parent;
  gchar *url;                   /* as requested: may hold credentials */
  gchar *etag;                  /* pinned at open, or NULL */
  gchar *last_modified;         /* pinned at open, or NULL */
  gboolean strong_etag;         /* sent as If-Match */
  WsiSigV4Key *sigv4;           /* a copy, or NULL */
  gchar **headers;
  WsiFetchStats stats;
  GPtrArray *inflight;          /* Prefetch being fetched (prefetch_lock) */
  /* The range cache's owner key (compared by address): "display size
   * identity" (interned) when the identity is pinned, so every open of the
   * same object shares bytes; else the source itself, whose bytes no other
   * open may use and which are dropped with it (an interned name per
   * unpinned open would be kept for the life of the process). */
  gconstpointer cache_key;
  gboolean pinned;
} WsiHttpSource;

/* A prefetch request: one range of one source, queued or in flight. */
typedef struct
{
  WsiHttpSource *source;        /* a reference */
  guint64 offset, length;
  gboolean done;
  guint8 *buffer;
  WsiHttpResponse response;
  CURL *handle;
  struct curl_slist *headers;
  gchar errbuf[CURL_ERROR_SIZE];
  gint64 start;
} Prefetch;

/* ---- process-wide state: settings, curl share, handle pool, cache ---- */

static GMutex settings_lock;
static WsiHttpSettings settings;
static CURLSH *share;
static GMutex share_locks[CURL_LOCK_DATA_LAST];
static GMutex pool_lock;
static GPtrArray *idle_handles;
static WsiRangeCache *range_cache;
static GMutex open_lock;
static GList *open_sources;     /* WsiHttpSource, for statistics */
/* display URI -> range cache key (interned) of its last pinned open, so a
 * reopen whose head is still cached asks for WSI_HTTP_REOPEN_BYTES only */
static GHashTable *opened_keys;

static guint
env_uint (const gchar * name, guint fallback)
{
  const gchar *value = g_getenv (name);
  gchar *end = NULL;
  guint64 v;

  if (value == NULL || *value == '\0')
    return fallback;
  v = g_ascii_strtoull (value, &end, 10);
  if (end == value || *end != '\0' || v > G_MAXUINT) {
    g_warning ("%s=%s is not a whole number; using %u", name, value,
        fallback);
    return fallback;
  }
  return (guint) v;
}

static void
share_lock (CURL * handle, curl_lock_data data, curl_lock_access access,
    void *user_data)
{
  g_mutex_lock (&share_locks[data]);
}

static void
share_unlock (CURL * handle, curl_lock_data data, void *user_data)
{
  g_mutex_unlock (&share_locks[data]);
}

static void
global_init (void)
{
  static gsize done = 0;

  if (!g_once_init_enter (&done))
    return;
  curl_global_init (CURL_GLOBAL_DEFAULT);
  settings.retries = env_uint ("WSI_HTTP_RETRIES", 5);
  settings.backoff_ms = env_uint ("WSI_HTTP_BACKOFF_MS", 100);
  settings.timeout_ms = env_uint ("WSI_HTTP_TIMEOUT_MS", 30000);
  settings.cache_mb = env_uint ("WSI_HTTP_CACHE_MB", 256);
  settings.prefetch_requests = env_uint ("WSI_HTTP_PREFETCH_REQUESTS", 64);
  settings.prefetch_mb = env_uint ("WSI_HTTP_PREFETCH_MB", 64);
  share = curl_share_init ();
  curl_share_setopt (share, CURLSHOPT_LOCKFUNC, share_lock);
  curl_share_setopt (share, CURLSHOPT_UNLOCKFUNC, share_unlock);
  curl_share_setopt (share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt (share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  /* Not CURL_LOCK_DATA_CONNECT: curl does not support one connection cache
   * used by concurrent threads. Connections are reused per pooled easy
   * handle (a handle keeps its connections between requests) and by the
   * prefetch thread's multi handle. */
  idle_handles = g_ptr_array_new ();
  range_cache = wsi_range_cache_new ((guint64) settings.cache_mb << 20);
  g_once_init_leave (&done, 1);
}

void
wsi_http_get_settings (WsiHttpSettings * out)
{
  global_init ();
  g_mutex_lock (&settings_lock);
  *out = settings;
  g_mutex_unlock (&settings_lock);
}

void
wsi_http_set_settings (const WsiHttpSettings * in)
{
  global_init ();
  g_mutex_lock (&settings_lock);
  settings = *in;
  g_mutex_unlock (&settings_lock);
  wsi_range_cache_set_max_bytes (range_cache, (guint64) in->cache_mb << 20);
}

static CURL *
handle_take (void)
{
  CURL *handle = NULL;

  g_mutex_lock (&pool_lock);
  if (idle_handles->len > 0)
    handle = g_ptr_array_steal_index_fast (idle_handles,
        idle_handles->len - 1);
  g_mutex_unlock (&pool_lock);
  return handle != NULL ? handle : curl_easy_init ();
}

static void
handle_give (CURL * handle)
{
  curl_easy_reset (handle);
  g_mutex_lock (&pool_lock);
  g_ptr_array_add (idle_handles, handle);
  g_mutex_unlock (&pool_lock);
}

/* ---- what a pipeline's NULL gives back ------------------------------- */

/* Open sources, wsi_http_get() calls under way and holds (elements between
 * start and stop). Connections live in
 * the pooled easy handles and in the prefetch thread's multi handle; when
 * the last user goes (the pipeline went to NULL and closed its slides),
 * the pooled handles are cleaned up (closing their connections) and the
 * prefetch thread ends, closing its multi handle's: nothing outlives the
 * pipeline but the range cache's bytes and curl's DNS and TLS session
 * caches (no sockets). Read by the prefetch thread without users_lock. */
static gint live_users;
static GMutex users_lock;
static void prefetch_wake (void);

static void
users_enter (void)
{
  g_mutex_lock (&users_lock);
  g_atomic_int_inc (&live_users);
  g_mutex_unlock (&users_lock);
}

static void
users_leave (void)
{
  GPtrArray *idle = NULL;

  g_mutex_lock (&users_lock);
  if (g_atomic_int_dec_and_test (&live_users)) {
    g_mutex_lock (&pool_lock);
    idle = idle_handles;
    idle_handles = g_ptr_array_new ();
    g_mutex_unlock (&pool_lock);
    /* under users_lock: a new user waits until this is done */
    while (idle->len > 0)
      curl_easy_cleanup (g_ptr_array_steal_index_fast (idle, idle->len - 1));
    g_ptr_array_unref (idle);
    prefetch_wake ();
    g_debug ("no remote object open: connections closed");
  }
  g_mutex_unlock (&users_lock);
}

void
wsi_http_hold (void)
{
  users_enter ();
}

void
wsi_http_unhold (void)
{
  users_leave ();
}

/* ---- display URIs ---------------------------------------------------- */

/* ---- one request ----------------------------------------------------- */

static size_t
on_header (char *data, size_t size, size_t n, void *user_data)
{
  wsi_http_response_header_line (user_data, data, size * n);
  return size * n;
}

static size_t
on_body (char *data, size_t size, size_t n, void *user_data)
{
  WsiHttpResponse *response = user_data;

  /* An error page is not data: swallow it, the status decides. */
  if (response->status < 200 || response->status > 299)
    return size * n;
  return wsi_http_response_body (response, (const guint8 *) data, size * n)
      ? size * n : 0;
}

/* What one request needs besides the range. */
typedef struct
{
  const gchar *url;
  const gchar *if_match;
  const WsiSigV4Key *sigv4;
  const gchar *const *headers;
} Request;

static Request
source_request (const WsiHttpSource * hs)
{
  Request r = { hs->url, hs->strong_etag ? hs->etag : NULL, hs->sigv4,
    (const gchar * const *) hs->headers
  };
  return r;
}

static WsiSigV4Key *
sigv4_copy (const WsiSigV4Key * key)
{
  WsiSigV4Key *copy;

  if (key == NULL)
    return NULL;
  copy = g_new0 (WsiSigV4Key, 1);
  copy->key_id = g_strdup (key->key_id);
  copy->secret = g_strdup (key->secret);
  copy->token = g_strdup (key->token);
  copy->region = g_strdup (key->region);
  copy->service = g_strdup (key->service);
  return copy;
}

static void
sigv4_free (WsiSigV4Key * key)
{
  if (key == NULL)
    return;
  /* secrets do not linger in freed memory */
  if (key->secret != NULL)
    memset ((gchar *) key->secret, 0, strlen (key->secret));
  g_free ((gchar *) key->key_id);
  g_free ((gchar *) key->secret);
  g_free ((gchar *) key->token);
  g_free ((gchar *) key->region);
  g_free ((gchar *) key->service);
  g_free (key);
}

static struct curl_slist *
request_headers (const Request * request)
{
  struct curl_slist *list = NULL;
  const gchar *const *h;

  if (request->if_match != NULL) {
    gchar *line = g_strconcat ("If-Match: ", request->if_match, NULL);
    list = curl_slist_append (list, line);
    g_free (line);
  }
  for (h = request->headers; h != NULL && *h != NULL; h++)
    list = curl_slist_append (list, *h);
  if (request->sigv4 != NULL) {
    /* Signed here, at each try (x-amz-date is the time it is sent), not by
     * curl: its CURLOPT_AWS_SIGV4 canonicalises query strings differently
     * from release to release (wsisigv4.h). */
    GDateTime *now = g_date_time_new_now_utc ();
    gchar **lines = wsi_sigv4_sign ("GET", request->url, NULL,
        request->sigv4, now);
    gchar **l;
    for (l = lines; l != NULL && *l != NULL; l++)
      list = curl_slist_append (list, *l);
    g_strfreev (lines);
    g_date_time_unref (now);
  }
  return list;
}

/* A pooled handle set up for one GET of @range into @response; *headers
 * must be freed after the transfer. */
static CURL *
handle_setup (const Request * request, const gchar * range, guint timeout_ms,
    WsiHttpResponse * response, gchar * errbuf, struct curl_slist **headers)
{
  CURL *handle = handle_take ();

  *headers = request_headers (request);
  errbuf[0] = '\0';
  curl_easy_setopt (handle, CURLOPT_SHARE, share);
  curl_easy_setopt (handle, CURLOPT_URL, request->url);
  curl_easy_setopt (handle, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt (handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt (handle, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt (handle, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt (handle, CURLOPT_HTTP_VERSION,
      (long) CURL_HTTP_VERSION_2TLS);
  curl_easy_setopt (handle, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (handle, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt (handle, CURLOPT_TIMEOUT_MS, (long) timeout_ms);
  curl_easy_setopt (handle, CURLOPT_CONNECTTIMEOUT_MS,
      (long) MIN (timeout_ms, 10000));
  curl_easy_setopt (handle, CURLOPT_USERAGENT, "gst-wsi");
  curl_easy_setopt (handle, CURLOPT_ERRORBUFFER, errbuf);
  if (range != NULL)
    curl_easy_setopt (handle, CURLOPT_RANGE, range);
  if (*headers != NULL)
    curl_easy_setopt (handle, CURLOPT_HTTPHEADER, *headers);
  curl_easy_setopt (handle, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt (handle, CURLOPT_HEADERDATA, response);
  curl_easy_setopt (handle, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt (handle, CURLOPT_WRITEDATA, response);
  return handle;
}

/* Performs one GET; returns the curl result, fills @response. */
static CURLcode
perform (const Request * request, const gchar * range, guint timeout_ms,
    WsiHttpResponse * response, gchar errbuf[CURL_ERROR_SIZE])
{
  struct curl_slist *headers;
  CURL *handle = handle_setup (request, range, timeout_ms, response, errbuf,
      &headers);
  CURLcode code = curl_easy_perform (handle);

  handle_give (handle);
  curl_slist_free_all (headers);
  return code;
}

/* Sleeps before try @attempt + 1: backoff x 2^attempt, x [0.5, 1) jitter. */
static void
backoff (guint backoff_ms, guint attempt)
{
  gdouble ms = MIN ((gdouble) backoff_ms * (gdouble) (1u << MIN (attempt,
              20u)), MAX_BACKOFF_MS);

  g_usleep ((gulong) (ms * g_random_double_range (0.5, 1.0) * 1000));
}

/* Why the last try failed, for the give-up message. */
static gchar *
retry_reason (CURLcode code, const gchar * errbuf,
    const WsiHttpResponse * response)
{
  if (code != CURLE_OK)
    return g_strdup (errbuf[0] ? errbuf : curl_easy_strerror (code));
  if (response->status >= 200 && response->status <= 299)
    return g_strdup_printf ("HTTP %ld with a body cut short (%"
        G_GSIZE_FORMAT " bytes)", response->status, response->received);
  return g_strdup_printf ("HTTP %ld", response->status);
}

/* The GET of @expect's range into @response, tried again on transient
 * failures. */
static gboolean
fetch (const Request * request, const WsiHttpExpect * expect,
    const gchar * display_uri, WsiFetchStats * stats,
    WsiHttpResponse * response, guint64 * object_size, GError ** error)
{
  WsiHttpSettings now;
  gchar errbuf[CURL_ERROR_SIZE];
  /* a whole small object (a listing) is asked without a Range */
  gchar *range = expect->whole ? NULL : g_strdup_printf ("%" G_GUINT64_FORMAT
      "-%" G_GUINT64_FORMAT, expect->offset,
      expect->offset + expect->length - 1);
  gchar *what = range ? g_strdup_printf ("bytes %s", range)
      : g_strdup ("whole");
  GError *local = NULL;
  guint attempt;
  gboolean ok = FALSE;

  wsi_http_get_settings (&now);
  for (attempt = 0;; attempt++) {
    WsiHttpVerdict verdict;
    gint64 start = g_get_monotonic_time ();
    CURLcode code;
    gdouble seconds;

    wsi_http_response_reset (response);
    g_debug ("GET %s %s (try %u)", display_uri, what, attempt + 1);
    wsi_fetch_stats_begin (stats);
    wsi_fetch_stats_begin (wsi_fetch_stats_total ());
    code = perform (request, range, now.timeout_ms, response, errbuf);
    seconds = (g_get_monotonic_time () - start) / 1e6;
    wsi_fetch_stats_end (stats, seconds, response->received);
    wsi_fetch_stats_end (wsi_fetch_stats_total (), seconds,
        response->received);

    g_clear_error (&local);
    verdict = wsi_http_response_check (response, expect, code != CURLE_OK,
        display_uri, object_size, &local);
    if (verdict == WSI_HTTP_OK) {
      ok = TRUE;
      break;
    }
    if (verdict == WSI_HTTP_RETRY && attempt < now.retries) {
      wsi_fetch_stats_add (&stats->retries, 1);
      wsi_fetch_stats_add (&wsi_fetch_stats_total ()->retries, 1);
      backoff (now.backoff_ms, attempt);
      continue;
    }
    if (verdict == WSI_HTTP_RETRY && local != NULL) {
      g_set_error (error, WSI_BYTE_SOURCE_ERROR, local->code,
          "%s (gave up after %u tries)", local->message, attempt + 1);
    } else if (verdict == WSI_HTTP_RETRY) {
      gchar *reason = retry_reason (code, errbuf, response);
      if (range != NULL)
        g_set_error (error, WSI_BYTE_SOURCE_ERROR, WSI_BYTE_SOURCE_ERROR_IO,
            "%s: bytes %s: %s (gave up after %u tries)", display_uri, range,
            reason, attempt + 1);
      else
        g_set_error (error, WSI_BYTE_SOURCE_ERROR, WSI_BYTE_SOURCE_ERROR_IO,
            "%s: %s (gave up after %u tries)", display_uri, reason,
            attempt + 1);
      g_free (reason);
    } else {
      g_propagate_error (error, g_steal_pointer (&local));
    }
    break;
  }
  g_clear_error (&local);
  if (!ok) {
    wsi_fetch_stats_add (&stats->failures, 1);
    wsi_fetch_stats_add (&wsi_fetch_stats_total ()->failures, 1);
  }
  g_free (range);
  g_free (what);
  return ok;
}

/* ---- the source -------------------------------------------------------- */

static WsiHttpExpect
source_expect (const WsiHttpSource * hs, guint64 offset, guint64 length)
{
  WsiHttpExpect e = { offset, length, hs->parent.size, hs->etag,
    hs->last_modified
  };
  return e;
}

static gboolean wait_for_prefetch (WsiHttpSource * hs, guint64 offset,
    guint64 length);
static void http_source_prefetch (WsiByteSource * source,
    const WsiByteRange * ranges, guint n_ranges);

static gboolean
http_source_read (WsiByteSource * source, guint64 offset, gsize length,
    guint8 * dest, GError ** error)
{
  WsiHttpSource *hs = (WsiHttpSource *) source;
  Request request = source_request (hs);
  WsiHttpExpect expect;
  WsiHttpResponse response;
  guint64 fetch_length = length;
  guint8 *buffer;
  gboolean ok, waited;
  /* the time this thread is blocked on the network: an I/O wait */
  gint64 start = g_get_monotonic_time ();

  waited = wait_for_prefetch (hs, offset, length);
  if (wsi_range_cache_lookup (range_cache, hs->cache_key, offset, length, dest)) {
    wsi_fetch_stats_add (&hs->stats.cache_hits, 1);
    wsi_fetch_stats_add (&wsi_fetch_stats_total ()->cache_hits, 1);
    if (waited)
      wsi_byte_source_note_wait (start);
    return TRUE;
  }
  buffer = g_malloc (fetch_length);
  expect = source_expect (hs, offset, fetch_length);
  wsi_http_response_init (&response, buffer, fetch_length);
  ok = fetch (&request, &expect, source->display_uri, &hs->stats, &response,
      NULL, error);
  wsi_byte_source_note_wait (start);
  wsi_http_response_clear (&response);
  if (!ok) {
    g_free (buffer);
    return FALSE;
  }
  memcpy (dest, buffer, length);
  {
    GBytes *bytes = g_bytes_new_take (buffer, fetch_length);
    wsi_range_cache_insert (range_cache, hs->cache_key, offset, bytes);
    g_bytes_unref (bytes);
  }
  return TRUE;
}

static void
http_source_finalize (WsiByteSource * source)
{
  WsiHttpSource *hs = (WsiHttpSource *) source;

  /* A pinned object's bytes stay for the next open of it (the LRU bounds
   * them); an unpinned one's cannot be trusted by another open. */
  if (hs->cache_key != NULL && !hs->pinned)
    wsi_range_cache_drop_owner (range_cache, hs->cache_key);
  g_mutex_lock (&open_lock);
  open_sources = g_list_remove (open_sources, hs);
  g_mutex_unlock (&open_lock);
  g_free (hs->url);
  g_free (hs->etag);
  g_free (hs->last_modified);
  sigv4_free (hs->sigv4);
  g_strfreev (hs->headers);
  if (hs->inflight != NULL)
    g_ptr_array_unref (hs->inflight);
  users_leave ();
}

static const WsiByteSourceClass http_source_class = {
  "http", http_source_read, http_source_prefetch, http_source_finalize
};

/* Pins what the open response says the object is. */
static gchar *
pin_identity (WsiHttpSource * hs, const WsiHttpResponse * response)
{
  if (response->etag != NULL) {
    hs->etag = g_strdup (response->etag);
    /* If-Match compares strongly: a weak ETag would always fail it. */
    hs->strong_etag = !g_str_has_prefix (hs->etag, "W/");
    return g_strconcat ("etag:", hs->etag, NULL);
  }
  if (response->last_modified != NULL) {
    hs->last_modified = g_strdup (response->last_modified);
    return g_strconcat ("last-modified:", hs->last_modified, NULL);
  }
  return g_strdup ("unpinned");
}

/* The cache key of @display's last pinned open when that open's head is
 * still in the range cache, else NULL. */
static const gchar *
cached_head_key (const gchar * display)
{
  const gchar *key;

  g_mutex_lock (&open_lock);
  key = opened_keys ? g_hash_table_lookup (opened_keys, display) : NULL;
  g_mutex_unlock (&open_lock);
  if (key != NULL && !wsi_range_cache_contains (range_cache, key, 0,
          WSI_HTTP_REOPEN_BYTES))
    key = NULL;
  return key;
}

static void
remember_key (const gchar * display, const gchar * key)
{
  g_mutex_lock (&open_lock);
  if (opened_keys == NULL)
    opened_keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
        NULL);
  g_hash_table_replace (opened_keys, g_strdup (display), (gpointer) key);
  g_mutex_unlock (&open_lock);
}

/* The identity a response names: "etag:…", "last-modified:…" or
 * "unpinned". */
static gchar *
response_identity (const WsiHttpResponse * response)
{
  if (response->etag != NULL)
    return g_strconcat ("etag:", response->etag, NULL);
  if (response->last_modified != NULL)
    return g_strconcat ("last-modified:", response->last_modified, NULL);
  return g_strdup ("unpinned");
}

/* "display size identity" of objects whose size two responses agreed on
 * (interned strings), so that a later open of the same object in this
 * process needs no confirming request. */
static GHashTable *confirmed_sizes;

static gchar *
size_key (const gchar * display, guint64 size,
    const WsiHttpResponse * response)
{
  gchar *identity = response_identity (response);
  gchar *key = g_strdup_printf ("%s %" G_GUINT64_FORMAT " %s", display, size,
      identity);

  g_free (identity);
  return key;
}

typedef enum
{
  SIZE_CONFIRMED,
  SIZE_DISAGREES,
  SIZE_FAILED
} SizeCheck;

/* Asks the last byte of the object whose open claimed @size: a 206 of an
 * object of @size confirms it; another total, or a 416 (the object ends
 * before), says the open's Content-Range was wrong. */
static SizeCheck
confirm_size (const Request * request, const WsiHttpResponse * opened,
    guint64 size, const gchar * display, WsiFetchStats * stats,
    guint64 * other, GError ** error)
{
  WsiHttpExpect expect = { size - 1, 1, G_MAXUINT64, opened->etag,
    opened->etag ? NULL : opened->last_modified, FALSE
  };
  Request r = *request;
  WsiHttpResponse response;
  guint8 byte;
  GError *local = NULL;
  SizeCheck result;

  *other = 0;
  if (opened->etag != NULL && !g_str_has_prefix (opened->etag, "W/"))
    r.if_match = opened->etag;
  wsi_http_response_init (&response, &byte, 1);
  if (fetch (&r, &expect, display, stats, &response, other, &local)) {
    result = *other == size ? SIZE_CONFIRMED : SIZE_DISAGREES;
  } else if (response.status == 416) {
    result = SIZE_DISAGREES;
    g_clear_error (&local);
  } else {
    g_propagate_error (error, local);
    result = SIZE_FAILED;
  }
  wsi_http_response_clear (&response);
  return result;
}

/* The open's GET (fetch()), its object size then confirmed before it is
 * trusted: by a whole-object 200, by an earlier confirmed open of the same
 * object in this process, or by confirm_size(). One wrong Content-Range
 * total would otherwise be pinned as the object's size, and every later
 * read refused as "not the range asked". Disagreeing responses make the
 * open start again (a retry, with backoff), at most `retries` times. */
static gboolean
open_fetch (const Request * request, const WsiHttpExpect * expect,
    const gchar * display, WsiFetchStats * stats, WsiHttpResponse * response,
    guint64 * size, GError ** error)
{
  WsiHttpSettings now;
  guint attempt;

  wsi_http_get_settings (&now);
  for (attempt = 0;; attempt++) {
    guint64 other = 0;
    gchar *key;
    gboolean known;
    SizeCheck check;

    if (!fetch (request, expect, display, stats, response, size, error))
      return FALSE;
    if (response->status == 200 || *size == 0)
      return TRUE;              /* the whole object came: its size is sure */
    key = size_key (display, *size, response);
    g_mutex_lock (&open_lock);
    known = confirmed_sizes != NULL
        && g_hash_table_contains (confirmed_sizes, key);
    g_mutex_unlock (&open_lock);
    if (known) {
      g_free (key);
      return TRUE;
    }
    check = confirm_size (request, response, *size, display, stats, &other,
        error);
    if (check == SIZE_CONFIRMED) {
      /* an unpinned object may change unseen: never known */
      if (response->etag != NULL || response->last_modified != NULL) {
        g_mutex_lock (&open_lock);
        if (confirmed_sizes == NULL)
          confirmed_sizes = g_hash_table_new (g_str_hash, g_str_equal);
        g_hash_table_add (confirmed_sizes,
            (gpointer) g_intern_string (key));
        g_mutex_unlock (&open_lock);
      }
      g_free (key);
      return TRUE;
    }
    g_free (key);
    if (check == SIZE_FAILED)
      return FALSE;
    if (attempt >= now.retries) {
      if (other != 0)
        g_set_error (error, WSI_BYTE_SOURCE_ERROR,
            WSI_BYTE_SOURCE_ERROR_SHORT, "%s: the server's responses "
            "disagree on the object's size (%" G_GUINT64_FORMAT " then %"
            G_GUINT64_FORMAT " bytes; gave up after %u tries)", display,
            *size, other, attempt + 1);
      else
        g_set_error (error, WSI_BYTE_SOURCE_ERROR,
            WSI_BYTE_SOURCE_ERROR_SHORT, "%s: the server said the object "
            "holds %" G_GUINT64_FORMAT " bytes, then that its last byte "
            "lies outside it (HTTP 416; gave up after %u tries)", display,
            *size, attempt + 1);
      wsi_fetch_stats_add (&stats->failures, 1);
      wsi_fetch_stats_add (&wsi_fetch_stats_total ()->failures, 1);
      return FALSE;
    }
    g_debug ("%s: the open said %" G_GUINT64_FORMAT " bytes, the check %"
        G_GUINT64_FORMAT ": opening again", display, *size, other);
    wsi_fetch_stats_add (&stats->retries, 1);
    wsi_fetch_stats_add (&wsi_fetch_stats_total ()->retries, 1);
    backoff (now.backoff_ms, attempt);
  }
}

WsiByteSource *
wsi_http_source_open (const gchar * url, const gchar * display_uri,
    const WsiHttpAuth * auth, GError ** error)
{
  WsiHttpSource *hs;
  WsiHttpExpect expect = { 0, WSI_HTTP_OPEN_BYTES, G_MAXUINT64, NULL, NULL };
  WsiHttpResponse response;
  const gchar *known_key;
  guint8 *buffer;
  gchar *display, *identity;
  guint64 size = 0;
  Request request;

  global_init ();
  users_enter ();               /* left by http_source_finalize */
  display = display_uri ? g_strdup (display_uri) : wsi_location_display (url);
  hs = g_new0 (WsiHttpSource, 1);
  hs->url = g_strdup (url);
  hs->inflight = g_ptr_array_new ();
  if (auth != NULL) {
    hs->sigv4 = sigv4_copy (auth->sigv4);
    hs->headers = g_strdupv ((gchar **) auth->headers);
  }
  request = source_request (hs);
  /* Opened before and its head still cached (wsislidesrc, then
   * patchreader): the request only pins size and identity again. */
  known_key = cached_head_key (display);
  if (known_key != NULL)
    expect.length = WSI_HTTP_REOPEN_BYTES;
  buffer = g_malloc (expect.length);
  wsi_http_response_init (&response, buffer, expect.length);
  if (!open_fetch (&request, &expect, display, &hs->stats, &response, &size,
          error)) {
    wsi_http_response_clear (&response);
    g_free (buffer);
    http_source_finalize (&hs->parent);
    g_free (hs);
    g_free (display);
    return NULL;
  }
  identity = pin_identity (hs, &response);
  wsi_byte_source_init (&hs->parent, &http_source_class, url, display, size,
      identity, FALSE);
  hs->pinned = hs->etag != NULL || hs->last_modified != NULL;
  if (hs->pinned) {
    gchar *key = g_strdup_printf ("%s %" G_GUINT64_FORMAT " %s", display,
        size, identity);
    hs->cache_key = g_intern_string (key);
    g_free (key);
  } else {
    hs->cache_key = hs;
  }
  g_mutex_lock (&open_lock);
  open_sources = g_list_prepend (open_sources, hs);
  g_mutex_unlock (&open_lock);
  if (hs->pinned)
    remember_key (display, hs->cache_key);
  /* The same object: the cached head is longer than this response. */
  if (known_key == hs->cache_key) {
    g_free (buffer);
  } else if (response.received > 0) {
    GBytes *bytes = g_bytes_new_take (g_realloc (buffer, response.received),
        response.received);
    wsi_range_cache_insert (range_cache, hs->cache_key, 0, bytes);
    g_bytes_unref (bytes);
  } else {
    g_free (buffer);
  }
  wsi_http_response_clear (&response);
  g_free (identity);
  g_free (display);
  return &hs->parent;
}

gchar *
wsi_http_get (const gchar * url, const gchar * display_uri,
    const WsiHttpAuth * auth, gsize max_bytes, gsize * length,
    GError ** error)
{
  Request request = { url, NULL, auth ? auth->sigv4 : NULL,
    auth ? auth->headers : NULL
  };
  WsiHttpExpect expect = { 0, max_bytes, G_MAXUINT64, NULL, NULL, TRUE };
  WsiHttpResponse response;
  guint8 *buffer = g_malloc (max_bytes + 1);
  guint64 size = 0;
  WsiFetchStats *own_stats = g_new0 (WsiFetchStats, 1);
  gboolean ok;

  global_init ();
  users_enter ();
  wsi_http_response_init (&response, buffer, max_bytes);
  ok = fetch (&request, &expect, display_uri, own_stats, &response, &size,
      error);
  users_leave ();
  g_free (own_stats);           /* the totals counted it */
  if (!ok) {
    wsi_http_response_clear (&response);
    g_free (buffer);
    return NULL;
  }
  buffer[response.received] = '\0';
  if (length != NULL)
    *length = response.received;
  wsi_http_response_clear (&response);
  return (gchar *) buffer;
}

void
wsi_http_foreach_source (void (*func) (const gchar * display_uri,
        const WsiFetchStats * stats, gpointer user_data), gpointer user_data)
{
  GList *l;

  g_mutex_lock (&open_lock);
  for (l = open_sources; l != NULL; l = l->next) {
    WsiHttpSource *hs = l->data;
    func (hs->parent.display_uri, &hs->stats, user_data);
  }
  g_mutex_unlock (&open_lock);
}

const WsiFetchStats *
wsi_http_source_stats (WsiByteSource * source)
{
  static const WsiFetchStats none;

  if (source == NULL || source->klass != &http_source_class)
    return &none;
  return &((WsiHttpSource *) source)->stats;
}

/* ---- prefetch: one I/O thread, curl multi ------------------------------ */

/* Ranges closer than this are fetched as one request (the gap's bytes are
 * cheaper than a round trip). */
#define COALESCE_GAP (16 * 1024)
/* One coalesced request at most. */
#define COALESCE_MAX (4 * 1024 * 1024)

static GMutex prefetch_lock;
static GCond prefetch_done;
static GQueue prefetch_queue;   /* Prefetch, not started yet */
static guint64 prefetch_pending_bytes;  /* queued + in flight */
static guint prefetch_active;
static CURLM *multi;

/* The source's queued or in-flight prefetch covering the range, or NULL.
 * Called with prefetch_lock held. */
static Prefetch *
find_inflight (WsiHttpSource * hs, guint64 offset, guint64 length)
{
  guint i;

  for (i = 0; i < hs->inflight->len; i++) {
    Prefetch *p = g_ptr_array_index (hs->inflight, i);
    if (!p->done && offset >= p->offset
        && offset + length <= p->offset + p->length)
      return p;
  }
  return NULL;
}

/* TRUE when it had to wait. */
static gboolean
wait_for_prefetch (WsiHttpSource * hs, guint64 offset, guint64 length)
{
  gboolean waited = FALSE;

  g_mutex_lock (&prefetch_lock);
  while (find_inflight (hs, offset, length) != NULL) {
    waited = TRUE;
    g_cond_wait (&prefetch_done, &prefetch_lock);
  }
  g_mutex_unlock (&prefetch_lock);
  return waited;
}

static void
prefetch_free (Prefetch * p)
{
  wsi_http_response_clear (&p->response);
  g_free (p->buffer);
  wsi_byte_source_unref (&p->source->parent);
  g_free (p);
}

/* Starts queued requests up to the bound. Called with prefetch_lock. */
static void
prefetch_start_queued (guint max_active, guint timeout_ms)
{
  while (prefetch_active < max_active && prefetch_queue.length > 0) {
    Prefetch *p = g_queue_pop_head (&prefetch_queue);
    Request request = source_request (p->source);
    gchar *range = g_strdup_printf ("%" G_GUINT64_FORMAT "-%"
        G_GUINT64_FORMAT, p->offset, p->offset + p->length - 1);

    p->buffer = g_malloc (p->length);
    wsi_http_response_init (&p->response, p->buffer, p->length);
    p->handle = handle_setup (&request, range, timeout_ms, &p->response,
        p->errbuf, &p->headers);
    curl_easy_setopt (p->handle, CURLOPT_PRIVATE, p);
    g_debug ("prefetch GET %s bytes %s (%u active, %u queued)",
        p->source->parent.display_uri, range, prefetch_active,
        prefetch_queue.length);
    p->start = g_get_monotonic_time ();
    wsi_fetch_stats_begin (&p->source->stats);
    wsi_fetch_stats_begin (wsi_fetch_stats_total ());
    curl_multi_add_handle (multi, p->handle);
    prefetch_active++;
    g_free (range);
  }
}

/* A finished transfer: its bytes into the range cache when the response
 * is exactly what was asked, else forgotten (the read will fetch). */
static void
prefetch_finish (Prefetch * p, CURLcode code)
{
  WsiHttpExpect expect = source_expect (p->source, p->offset, p->length);
  gdouble seconds = (g_get_monotonic_time () - p->start) / 1e6;
  GError *error = NULL;

  curl_multi_remove_handle (multi, p->handle);
  handle_give (p->handle);
  curl_slist_free_all (p->headers);
  wsi_fetch_stats_end (&p->source->stats, seconds, p->response.received);
  wsi_fetch_stats_end (wsi_fetch_stats_total (), seconds,
      p->response.received);
  if (wsi_http_response_check (&p->response, &expect, code != CURLE_OK,
          p->source->parent.display_uri, NULL, &error) == WSI_HTTP_OK) {
    GBytes *bytes = g_bytes_new_take (g_steal_pointer (&p->buffer),
        p->length);
    wsi_range_cache_insert (range_cache, p->source->cache_key, p->offset,
        bytes);
    g_bytes_unref (bytes);
  }
  g_clear_error (&error);

  g_mutex_lock (&prefetch_lock);
  p->done = TRUE;
  g_ptr_array_remove_fast (p->source->inflight, p);
  prefetch_active--;
  prefetch_pending_bytes -= p->length;
  g_cond_broadcast (&prefetch_done);
  g_mutex_unlock (&prefetch_lock);
  prefetch_free (p);
}

static gboolean prefetch_started;       /* prefetch_lock */

/* Runs while there are sources; ends (closing its multi handle and with it
 * its connections) once nothing is queued or in flight and the last user
 * has gone (users_leave() wakes it). A later prefetch starts it again. */
static gpointer
prefetch_thread (gpointer data)
{
  CURLM *own = data;

  for (;;) {
    WsiHttpSettings now;
    CURLMsg *msg;
    int running, left;

    wsi_http_get_settings (&now);
    g_mutex_lock (&prefetch_lock);
    if (prefetch_queue.length == 0 && prefetch_active == 0
        && g_atomic_int_get (&live_users) == 0) {
      prefetch_started = FALSE;
      multi = NULL;
      g_mutex_unlock (&prefetch_lock);
      break;
    }
    prefetch_start_queued (MAX (now.prefetch_requests, 1), now.timeout_ms);
    g_mutex_unlock (&prefetch_lock);
    curl_multi_perform (own, &running);
    while ((msg = curl_multi_info_read (own, &left)) != NULL) {
      Prefetch *p = NULL;
      if (msg->msg != CURLMSG_DONE)
        continue;
      curl_easy_getinfo (msg->easy_handle, CURLINFO_PRIVATE, (char **) &p);
      prefetch_finish (p, msg->data.result);
    }
    curl_multi_poll (own, NULL, 0, 1000, NULL);
  }
  curl_multi_cleanup (own);
  return NULL;
}

/* Starts the prefetch thread unless it runs. Called with prefetch_lock. */
static void
prefetch_start_thread (void)
{
  if (prefetch_started)
    return;
  multi = curl_multi_init ();
  curl_multi_setopt (multi, CURLMOPT_PIPELINING, (long) CURLPIPE_MULTIPLEX);
  prefetch_started = TRUE;
  g_thread_unref (g_thread_new ("wsi-http-prefetch", prefetch_thread,
          multi));
}

/* Wakes the prefetch thread (to see that the last user went). */
static void
prefetch_wake (void)
{
  g_mutex_lock (&prefetch_lock);
  if (multi != NULL)
    curl_multi_wakeup (multi);
  g_mutex_unlock (&prefetch_lock);
}

static gint
range_compare (gconstpointer a, gconstpointer b)
{
  const WsiByteRange *x = a, *y = b;

  return x->offset < y->offset ? -1 : x->offset > y->offset ? 1 : 0;
}

/* TRUE when [offset, offset + length) need not be fetched: it is cached or
 * a queued or in-flight prefetch brings it. Called with prefetch_lock. */
static gboolean
range_is_coming (WsiHttpSource * hs, guint64 offset, guint64 length)
{
  return find_inflight (hs, offset, length) != NULL
      || wsi_range_cache_contains (range_cache, hs->cache_key, offset, length);
}

/* Queues [offset, offset + length) unless it is over the byte bound.
 * Called with prefetch_lock held. */
static gboolean
prefetch_queue_range (WsiHttpSource * hs, guint64 offset, guint64 length,
    guint64 max_bytes)
{
  Prefetch *p;

  if (length == 0 || prefetch_pending_bytes + length > max_bytes)
    return FALSE;
  p = g_new0 (Prefetch, 1);
  p->source = (WsiHttpSource *) wsi_byte_source_ref (&hs->parent);
  p->offset = offset;
  p->length = length;
  g_ptr_array_add (hs->inflight, p);
  g_queue_push_tail (&prefetch_queue, p);
  prefetch_pending_bytes += length;
  return TRUE;
}

static void
http_source_prefetch (WsiByteSource * source, const WsiByteRange * ranges,
    guint n_ranges)
{
  WsiHttpSource *hs = (WsiHttpSource *) source;
  WsiByteRange *sorted;
  WsiHttpSettings now;
  guint64 start = 0, end = 0, max_bytes;
  gboolean queued = FALSE, open = FALSE;
  guint i;

  wsi_http_get_settings (&now);
  if (now.prefetch_requests == 0 || now.prefetch_mb == 0)
    return;
  max_bytes = (guint64) now.prefetch_mb << 20;
  sorted = g_memdup2 (ranges, n_ranges * sizeof (WsiByteRange));
  qsort (sorted, n_ranges, sizeof (WsiByteRange), range_compare);

  g_mutex_lock (&prefetch_lock);
  prefetch_start_thread ();
  for (i = 0; i < n_ranges; i++) {
    guint64 o = sorted[i].offset;
    guint64 e = MIN (o + sorted[i].length, source->size);
    /* Each range is checked alone, before coalescing: a run of tiles of
     * which some are cached or coming already is fetched without them
     * (the gap rule below may still take a small one along). */
    if (o >= e || range_is_coming (hs, o, e - o))
      continue;
    /* Adjacent tiles (and small gaps) become one request. */
    if (open && o <= end + COALESCE_GAP && MAX (e, end) - start <= COALESCE_MAX) {
      end = MAX (end, e);
      continue;
    }
    if (open)
      queued |= prefetch_queue_range (hs, start, end - start, max_bytes);
    start = o;
    end = e;
    open = TRUE;
  }
  if (open)
    queued |= prefetch_queue_range (hs, start, end - start, max_bytes);
  /* under the lock: the thread clears multi when it ends */
  if (queued)
    curl_multi_wakeup (multi);
  g_mutex_unlock (&prefetch_lock);
  g_free (sorted);
}

/* The scheme table's entry: the remembered full URL of a display form. */
static WsiByteSource *
http_source_open_location (const gchar * location, GError ** error)
{
  gchar *full = wsi_location_resolve (location);
  WsiByteSource *source = wsi_http_source_open (full, NULL, NULL, error);

  g_free (full);
  return source;
}

void
wsi_http_source_register (void)
{
  wsi_byte_source_register_scheme ("http", http_source_open_location);
  wsi_byte_source_register_scheme ("https", http_source_open_location);
}
