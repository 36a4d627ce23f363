/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsireadcontext.c: one reading thread's state (see wsislide.h): each
 * backend's per-thread object, grow-only scratch buffers and a resampler.
 * Owned by one thread at a time; nothing here locks. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "wsislide.h"

#define MAX_BACKENDS 8

struct _WsiReadContext
{
  const WsiSlideBackend *backend[MAX_BACKENDS];
  gpointer state[MAX_BACKENDS];
  gpointer scratch[WSI_READ_CONTEXT_SLOTS];
  gsize scratch_size[WSI_READ_CONTEXT_SLOTS];
  WsiResampler *resampler;
};

WsiReadContext *
wsi_read_context_new (void)
{
  WsiReadContext *ctx = g_new0 (WsiReadContext, 1);

  ctx->resampler = wsi_resampler_new ();
  return ctx;
}

void
wsi_read_context_free (WsiReadContext * ctx)
{
  guint i;

  if (ctx == NULL)
    return;
  for (i = 0; i < MAX_BACKENDS && ctx->backend[i] != NULL; i++) {
    if (ctx->state[i] != NULL && ctx->backend[i]->thread_state_free)
      ctx->backend[i]->thread_state_free (ctx->state[i]);
  }
  for (i = 0; i < WSI_READ_CONTEXT_SLOTS; i++)
    g_free (ctx->scratch[i]);
  wsi_resampler_free (ctx->resampler);
  g_free (ctx);
}

gpointer
wsi_read_context_backend_state (WsiReadContext * ctx,
    const WsiSlideBackend * backend)
{
  guint i;

  if (backend->thread_state_new == NULL)
    return NULL;
  for (i = 0; i < MAX_BACKENDS && ctx->backend[i] != NULL; i++) {
    if (ctx->backend[i] == backend)
      return ctx->state[i];
  }
  g_return_val_if_fail (i < MAX_BACKENDS, NULL);
  ctx->backend[i] = backend;
  ctx->state[i] = backend->thread_state_new ();
  return ctx->state[i];
}

gpointer
wsi_read_context_scratch (WsiReadContext * ctx, guint slot, gsize bytes)
{
  g_return_val_if_fail (slot < WSI_READ_CONTEXT_SLOTS, NULL);
  if (bytes > ctx->scratch_size[slot]) {
    g_free (ctx->scratch[slot]);
    ctx->scratch[slot] = g_try_malloc (bytes);
    ctx->scratch_size[slot] = ctx->scratch[slot] ? bytes : 0;
  }
  return ctx->scratch[slot];
}

WsiResampler *
wsi_read_context_resampler (WsiReadContext * ctx)
{
  return ctx->resampler;
}
