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

#include <gst/wsi/wsiannotation.h>

#include <gst/wsi/wsievent.h>

#include "wsireaderslide.h"
#include "wsislide.h"
#include "wsislidecache.h"

GST_DEBUG_CATEGORY_EXTERN (gst_patch_reader_debug);
#define GST_CAT_DEFAULT gst_patch_reader_debug

WsiReaderSlide *
wsi_reader_slide_new (const gchar * file, const gchar * path,
    const gchar * label)
{
  WsiReaderSlide *ctx = g_new0 (WsiReaderSlide, 1);

  ctx->file = g_strdup (file);
  ctx->path = g_strdup (path);
  ctx->label = g_strdup (label ? label : "");
  ctx->remote = wsi_location_is_remote (file);
  return ctx;
}

void
wsi_reader_slide_free (WsiReaderSlide * ctx)
{
  g_free (ctx->file);
  g_free (ctx->uri);
  g_free (ctx->give_up_reason);
  g_free (ctx->path);
  g_free (ctx->label);
  g_strfreev (ctx->column_names);
  g_strfreev (ctx->column_values);
  g_free (ctx);
}

WsiReaderSlide *
wsi_reader_slide_lookup (GHashTable * slides, const GstStructure * s)
{
  const gchar *path = gst_structure_get_string (s, "path");
  const gchar *uri = gst_structure_get_string (s, "uri");
  gchar *file;
  WsiReaderSlide *ctx;

  if (path == NULL)
    return NULL;
  /* Keyed and opened by the file name's exact bytes (the uri); shown by the
   * UTF-8 path. */
  file = wsi_slide_cache_file_name (uri, path);
  ctx = g_hash_table_lookup (slides, file);
  if (ctx == NULL) {
    ctx = wsi_reader_slide_new (file, path, gst_structure_get_string (s,
            "label"));
    ctx->uri = g_strdup (uri);
    gst_structure_get_double (s, "mpp-x", &ctx->mpp);
    ctx->column_names = g_strdupv ((gchar **) wsi_structure_get_strv (s,
            "column-names"));
    ctx->column_values = g_strdupv ((gchar **) wsi_structure_get_strv (s,
            "column-values"));
    g_hash_table_insert (slides, ctx->file, ctx);
  }
  g_free (file);
  return ctx;
}

/* A patch sampled in an annotation region: its label is the region's
 * class, and columns "class" and "class-id" follow the slide's columns. */
static void
label_class (GstStructure * meta, WsiReaderSlide * ctx,
    const gchar * class_name, gint32 class_id)
{
  guint n = ctx->column_names ? g_strv_length (ctx->column_names) : 0, i;
  const gchar **names = g_new0 (const gchar *, n + 3);
  const gchar **values = g_new0 (const gchar *, n + 3);
  gchar id[16];

  for (i = 0; i < n; i++) {
    names[i] = ctx->column_names[i];
    values[i] = ctx->column_values && i < g_strv_length (ctx->column_values)
        ? ctx->column_values[i] : "";
  }
  g_snprintf (id, sizeof (id), "%d", class_id);
  names[n] = "class";
  values[n] = class_name;
  names[n + 1] = "class-id";
  values[n + 1] = id;
  wsi_meta_set_columns (meta, names, values);
  g_free (names);
  g_free (values);
}

void
wsi_reader_slide_label (GstBuffer * buffer, WsiReaderSlide * ctx,
    const WsiPatchRecord * record, const gchar * class_name, gint32 class_id)
{
  const gchar *paths[2] = { ctx->path, NULL };
  const gchar *labels[2] = { class_name ? class_name :
        ctx->label, NULL
  };
  GstStructure *meta;

  GST_BUFFER_OFFSET (buffer) = record->sequence;
  GST_BUFFER_OFFSET_END (buffer) = GST_BUFFER_OFFSET_NONE;
  GST_BUFFER_PTS (buffer) = GST_CLOCK_TIME_NONE;
  GST_BUFFER_DTS (buffer) = GST_CLOCK_TIME_NONE;
  GST_BUFFER_DURATION (buffer) = GST_CLOCK_TIME_NONE;
  meta = wsi_patch_meta_add (buffer, record, 1, paths, labels);
  if (ctx->uri != NULL) {
    const gchar *uris[2] = { ctx->uri, NULL };

    wsi_patch_meta_set_slides (meta, uris, &ctx->mpp, 1);
  }
  if (class_name != NULL)
    label_class (meta, ctx, class_name, class_id);
  else
    wsi_meta_set_columns (meta, (const gchar * const *) ctx->column_names,
        (const gchar * const *) ctx->column_values);
}

/* The per-record classes of an annotated plan (wsiannotation.h), or NULL
 * with *@n 0. */
const gint32 *
wsi_reader_patch_classes (const GstStructure * meta, gsize * n,
    const gchar * const **names)
{
  const GValue *value = meta ? gst_structure_get_value (meta,
      WSI_PATCH_CLASSES_FIELD) : NULL;
  GBytes *bytes;
  gsize size = 0;
  const gint32 *ids;

  *n = 0;
  *names = NULL;
  if (value == NULL || !G_VALUE_HOLDS (value, G_TYPE_BYTES)
      || (bytes = g_value_get_boxed (value)) == NULL)
    return NULL;
  ids = g_bytes_get_data (bytes, &size);
  *names = wsi_structure_get_strv (meta, WSI_CLASS_NAMES_FIELD);
  *n = *names ? size / sizeof (gint32) : 0;
  return ids;
}

/* The class name of id @id (interned: it outlives the buffer), or NULL. */
const gchar *
wsi_reader_class_label (const gchar * const *names, gint32 id,
    gint32 * class_id)
{
  gint32 k;

  for (k = 0; id >= 0 && names[k] != NULL; k++)
    if (k == id) {
      *class_id = id;
      return g_intern_string (names[k]);
    }
  return NULL;
}

/* ---- the give-up rule ---------------------------------------------------- */

/* Tells the source upstream to stop visiting a slide we gave up. */
static void
report_given_up (WsiPoolElement * element, WsiReaderSlide * ctx, guint index)
{
  gst_pad_push_event (WSI_POOL_ELEMENT_SINK_PAD (element),
      wsi_event_new_slide_given_up (index, ctx->path, ctx->give_up_reason));
}

void
wsi_reader_slide_read_failed (WsiReaderSlide * ctx, WsiPoolElement * element,
    const WsiPatchRecord * record, gint level, const GError * error,
    guint max_failures)
{
  gint failures;

  failures = ++ctx->consecutive_failures;
  /* Once per slide, with the decoder's words: on 10^5 slides one line
   * per dropped patch would hide the message that matters. */
  if (!ctx->warned_failure) {
    ctx->warned_failure = TRUE;
    GST_ELEMENT_WARNING (element, RESOURCE, READ,
        ("Could not read a patch of slide \"%s\": %s. The patch is dropped; "
            "further read failures of this slide are counted, not shown "
            "(patchreader read-stats failed-slides, the wsistats report).",
            ctx->path, error ? error->message : "unknown error"),
        ("patch %" G_GUINT64_FORMAT " at (%" G_GINT64_FORMAT ", %"
            G_GINT64_FORMAT ") level %d", record->sequence, record->x,
            record->y, level));
  } else {
    GST_DEBUG_OBJECT (element, "patch %" G_GUINT64_FORMAT " of %s dropped: %s",
        record->sequence, ctx->path, error ? error->message : "?");
  }
  if ((guint) failures >= max_failures
      && g_atomic_int_compare_and_exchange (&ctx->given_up, 0, 1)) {
    ctx->give_up_reason = g_strdup_printf ("given up after %d failed reads "
        "in a row (last: %s)", failures, error ? error->message : "?");
    report_given_up (element, ctx, record->slide_index);
    GST_ELEMENT_WARNING (element, RESOURCE, READ,
        ("Giving up on slide \"%s\" after %d failed reads in a row; its "
            "remaining patches are dropped.", ctx->path, failures), (NULL));
  }
}

void
wsi_reader_slide_open_failed (WsiReaderSlide * ctx, WsiPoolElement * element,
    const WsiPatchRecord * record, const GError * error)
{
  if (g_atomic_int_get (&ctx->given_up))
    return;
  ctx->give_up_reason = g_strdup_printf ("could not be opened: %s",
      error ? error->message : "?");
  g_atomic_int_set (&ctx->given_up, 1);
  report_given_up (element, ctx, record->slide_index);
  GST_ELEMENT_WARNING (element, RESOURCE, OPEN_READ,
      ("Could not open slide \"%s\"; its patches are dropped.",
          ctx->path), ("%s", error ? error->message : ""));
}
