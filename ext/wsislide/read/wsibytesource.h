/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsibytesource.h: where a slide's bytes come from — the only way a direct
 * backend (TIFF/JPEG, DICOM) touches them.
 *
 * Contract: a WsiByteSource is one immutable object (a local file, or an
 * object behind http://, https://, s3:// or gs://) of a known size, read by
 * byte ranges. wsi_byte_source_read() returns exactly @length bytes or
 * FALSE with an error naming the source's display URI and the reason; a
 * short or inconsistent read is an error, never partial data. The object's
 * identity (size and mtime for a file; ETag or Last-Modified for a remote
 * object) is pinned at open: a read that finds the object changed fails
 * with WSI_BYTE_SOURCE_ERROR_CHANGED. Credentials never appear in the
 * display URI, in errors or in anything else this interface hands out.
 *
 * Cost: a local read is one pread(); a remote read is one ranged request
 * unless the bytes are in the source's block cache. wsi_byte_source_prefetch()
 * is a hint that lets a remote source start fetching ranges the caller will
 * read soon (latency hiding); it never blocks and is a no-op for files.
 *
 * Threading: open/unref are not thread-safe with respect to reads of the
 * same source; read, prefetch and the getters may be called from any number
 * of threads at once.
 */

#ifndef __WSI_BYTE_SOURCE_H__
#define __WSI_BYTE_SOURCE_H__

#include <glib.h>

#include "wsilocation.h"

G_BEGIN_DECLS

typedef struct _WsiByteSource WsiByteSource;
typedef struct _WsiByteSourceClass WsiByteSourceClass;

#define WSI_BYTE_SOURCE_ERROR (wsi_byte_source_error_quark ())
GQuark wsi_byte_source_error_quark (void);

typedef enum
{
  WSI_BYTE_SOURCE_ERROR_NOT_FOUND,      /* no such file or object */
  WSI_BYTE_SOURCE_ERROR_DENIED,         /* permission or credentials refused */
  WSI_BYTE_SOURCE_ERROR_IO,             /* a read failed (after any retries) */
  WSI_BYTE_SOURCE_ERROR_SHORT,          /* fewer bytes than asked, or a bad range */
  WSI_BYTE_SOURCE_ERROR_CHANGED,        /* the object changed since open */
  WSI_BYTE_SOURCE_ERROR_UNSUPPORTED     /* a scheme this build cannot read */
} WsiByteSourceError;

/* One byte range, for prefetch hints. */
typedef struct
{
  guint64 offset;
  guint64 length;
} WsiByteRange;

/* What a kind of source implements (local file here; remote sources in
 * their own file pairs, found through the scheme table). */
struct _WsiByteSourceClass
{
  const gchar *name;            /* "file", "http", "s3", "gs" */
  gboolean (*read) (WsiByteSource * source, guint64 offset, gsize length,
      guint8 * dest, GError ** error);
  void (*prefetch) (WsiByteSource * source, const WsiByteRange * ranges,
      guint n_ranges);
  void (*finalize) (WsiByteSource * source);
};

struct _WsiByteSource
{
  const WsiByteSourceClass *klass;
  gint ref_count;
  gchar *location;              /* as given (may hold no credentials either) */
  gchar *display_uri;           /* printable, escaped, credential-free */
  guint64 size;
  gchar *identity;              /* pinned at open: "size:mtime" or an ETag */
  gboolean is_local;
};

/* What a remote source gives the scheme table: opens @location (a URL of
 * the registered scheme) or returns NULL with @error set. */
typedef WsiByteSource *(*WsiByteSourceOpenFunc) (const gchar * location,
    GError ** error);

/* Makes wsi_byte_source_open() hand locations of @scheme ("https", case
 * does not matter) to @open; a later registration of the same scheme
 * replaces it. Remote sources call this from their register function
 * (wsireadsources.c calls those once). Any thread. */
void wsi_byte_source_register_scheme (const gchar * scheme,
    WsiByteSourceOpenFunc open);

/* Opens a local path (or file:// URI) or, through the scheme table, a URL
 * of a scheme a source registered. NULL with @error set when it cannot be opened; a local
 * path must be a regular file (a FIFO or device is refused at once, never
 * waited on). */
WsiByteSource *wsi_byte_source_open (const gchar * location, GError ** error);

WsiByteSource *wsi_byte_source_ref (WsiByteSource * source);
void wsi_byte_source_unref (WsiByteSource * source);

/* Exactly @length bytes at @offset into @dest, or FALSE and @error. A range
 * past the end of the object is WSI_BYTE_SOURCE_ERROR_SHORT. */
gboolean wsi_byte_source_read (WsiByteSource * source, guint64 offset,
    gsize length, guint8 * dest, GError ** error);

/* Hint: these ranges will be read soon. Never blocks. */
void wsi_byte_source_prefetch (WsiByteSource * source,
    const WsiByteRange * ranges, guint n_ranges);

guint64 wsi_byte_source_get_size (const WsiByteSource * source);
const gchar *wsi_byte_source_get_display_uri (const WsiByteSource * source);
const gchar *wsi_byte_source_get_identity (const WsiByteSource * source);
gboolean wsi_byte_source_is_local (const WsiByteSource * source);

/* Called with the monotonic times (ns, the clock of
 * gst_util_get_timestamp()) of each interval a reading thread spent
 * blocked on remote bytes (a request, or waiting for a prefetch), on that
 * thread. Set once by whoever reports it (the wsislide plugin: the pool's
 * per-item I/O waits, drawn by the wsistats tracer); NULL: nobody. */
typedef void (*WsiByteSourceWaitFunc) (guint64 start_ns, guint64 end_ns);
void wsi_byte_source_set_wait_func (WsiByteSourceWaitFunc func);

/* For implementations: reports a wait that began at @start_us
 * (g_get_monotonic_time ()) and ends now. */
void wsi_byte_source_note_wait (gint64 start_us);

/* For implementations: fills the common fields (takes copies). */
void wsi_byte_source_init (WsiByteSource * source,
    const WsiByteSourceClass * klass, const gchar * location,
    const gchar * display_uri, guint64 size, const gchar * identity,
    gboolean is_local);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (WsiByteSource, wsi_byte_source_unref)

G_END_DECLS

#endif /* __WSI_BYTE_SOURCE_H__ */
