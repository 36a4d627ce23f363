/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistoreorder.h: which store patch a rank serves at each step of an
 * epoch.
 *
 * Contract: epoch e lays the store's n patches out in an order — the
 * store order (sequential) or a permutation that is a pure function of
 * (seed, e) (shuffle, Fisher-Yates on wsirng.h) — and rank r of w takes
 * the entries r, r + w, r + 2w, … of it, floor (n / w) of them: the ranks'
 * parts are disjoint and equal-sized, and together they hold all but the
 * last n mod w entries of the epoch's order (different ones each epoch
 * when shuffled). Nothing depends on threads or timing.
 *
 * Cost: shuffle keeps one permutation of n 32-bit indices (4 bytes per
 * patch: 40 MB for 10 million) and rebuilds it once per epoch (O(n), about
 * 10 ns per patch); sequential order keeps nothing. A store of more than
 * 2^32 patches cannot be shuffled. Threading: one thread.
 */

#ifndef __WSI_STORE_ORDER_H__
#define __WSI_STORE_ORDER_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct _WsiStoreOrder WsiStoreOrder;

WsiStoreOrder *wsi_store_order_new (guint64 n_patches, gboolean shuffle,
    guint64 seed, guint rank, guint world_size);
void wsi_store_order_free (WsiStoreOrder * order);

/* Patches the rank serves per epoch. */
guint64 wsi_store_order_count (const WsiStoreOrder * order);

/* The store index of step @k (< count) of @epoch. */
guint64 wsi_store_order_get (WsiStoreOrder * order, guint epoch, guint64 k);

G_END_DECLS

#endif /* __WSI_STORE_ORDER_H__ */
