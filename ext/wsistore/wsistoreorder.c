/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsistoreorder.h"

#include <gst/wsi/wsirng.h>

/* Third RNG key: the store order draws apart from every other consumer of
 * the same seed ("STOR"). */
#define ORDER_KEY G_GUINT64_CONSTANT (0x53544f52)

struct _WsiStoreOrder
{
  guint64 n;
  gboolean shuffle;
  guint64 seed;
  guint rank;
  guint world_size;
  guint32 *permutation;         /* shuffle only */
  guint permutation_epoch;
  gboolean have_permutation;
};

WsiStoreOrder *
wsi_store_order_new (guint64 n_patches, gboolean shuffle, guint64 seed,
    guint rank, guint world_size)
{
  WsiStoreOrder *order = g_new0 (WsiStoreOrder, 1);

  g_return_val_if_fail (world_size > 0 && rank < world_size, NULL);
  g_return_val_if_fail (!shuffle || n_patches <= G_MAXUINT32, NULL);
  order->n = n_patches;
  order->shuffle = shuffle;
  order->seed = seed;
  order->rank = rank;
  order->world_size = world_size;
  return order;
}

void
wsi_store_order_free (WsiStoreOrder * order)
{
  if (order == NULL)
    return;
  g_free (order->permutation);
  g_free (order);
}

guint64
wsi_store_order_count (const WsiStoreOrder * order)
{
  return order->n / order->world_size;
}

static void
build_permutation (WsiStoreOrder * order, guint epoch)
{
  WsiRng rng;
  guint64 i;

  if (order->permutation == NULL)
    order->permutation = g_new (guint32, order->n);
  for (i = 0; i < order->n; i++)
    order->permutation[i] = (guint32) i;
  /* epoch + 1: the second key is shifted into the high word, and 0 would
   * leave epoch 0 keyed like "no epoch" */
  wsi_rng_seed_keys (&rng, order->seed, ORDER_KEY, (guint64) epoch + 1, 0);
  for (i = order->n; i > 1; i--) {
    guint64 j = wsi_rng_below (&rng, i);
    guint32 t = order->permutation[i - 1];

    order->permutation[i - 1] = order->permutation[j];
    order->permutation[j] = t;
  }
  order->permutation_epoch = epoch;
  order->have_permutation = TRUE;
}

guint64
wsi_store_order_get (WsiStoreOrder * order, guint epoch, guint64 k)
{
  guint64 position = k * order->world_size + order->rank;

  if (!order->shuffle)
    return position;
  if (!order->have_permutation || order->permutation_epoch != epoch)
    build_permutation (order, epoch);
  return order->permutation[position];
}
