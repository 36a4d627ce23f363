/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsizarrfetch.h: chunks of a remote OME-Zarr store fetched ahead, in
 * parallel, each a whole object (the zarr backend's prefetch).
 *
 * Why: a chunk is its own object, so the byte sources' range prefetch
 * (which needs an open source and its offsets) cannot hint it, and a
 * reader thread that fetches its chunk itself waits one round trip per
 * chunk: at 50 ms a request two reader threads read 40 chunks a second.
 * Here wsi_zarr_fetch_hint() queues the chunk's object on a pool of fetch
 * threads that open and read it whole (nothing is coalesced: objects are
 * distinct); wsi_zarr_fetch_take() hands a reader the bytes, waiting for
 * a fetch in flight instead of asking again.
 *
 * Contract: the bytes are those the reader would have read itself (one
 * whole-object read through the byte sources); a chunk that does not
 * exist is NOT_FOUND (the fill value), a fetch that failed is read again
 * by the reader, which reports the error naming it. Hints are only hints: beyond
 * WSI_ZARR_FETCH_MAX_HELD chunks held or in flight a hint evicts the oldest
 * fetched chunk not yet taken, or is dropped when all are in flight.
 *
 * Cost: at most WSI_ZARR_FETCH_THREADS requests in flight, at most
 * WSI_ZARR_FETCH_MAX_HELD compressed chunks held. Threading: hint and take
 * from any number of threads; free waits for the fetches in flight.
 */

#ifndef __WSI_ZARR_FETCH_H__
#define __WSI_ZARR_FETCH_H__

#include <glib.h>

G_BEGIN_DECLS

#define WSI_ZARR_FETCH_THREADS 16
#define WSI_ZARR_FETCH_MAX_HELD 128

typedef struct _WsiZarrFetch WsiZarrFetch;

/* Reads the whole object at @location (at most @limit bytes) into a new
 * buffer; NULL with @error (WSI_BYTE_SOURCE_ERROR_NOT_FOUND kept). */
typedef guint8 *(*WsiZarrObjectReadFunc) (const gchar * location, gsize limit,
    gsize * size, GError ** error);

WsiZarrFetch *wsi_zarr_fetch_new (WsiZarrObjectReadFunc read);
void wsi_zarr_fetch_free (WsiZarrFetch * fetch);

/* Starts fetching @location (at most @limit bytes) unless it is held or in
 * flight. Never blocks on I/O. */
void wsi_zarr_fetch_hint (WsiZarrFetch * fetch, const gchar * location,
    gsize limit);

/* The bytes of @location, as the read function gives them: when hinted,
 * those fetched (waiting for a fetch in flight; the chunk is then
 * forgotten); else read here, the chunk marked in flight meanwhile so a
 * hint does not fetch it twice. A fetch that failed is read again here for
 * its error. NULL with @error (NOT_FOUND for an absent object). */
guint8 *wsi_zarr_fetch_get (WsiZarrFetch * fetch, const gchar * location,
    gsize limit, gsize * size, GError ** error);

G_END_DECLS

#endif /* __WSI_ZARR_FETCH_H__ */
