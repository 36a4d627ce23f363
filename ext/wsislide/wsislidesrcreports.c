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

#include <string.h>

#include <gst/wsi/wsievent.h>

#include "wsislidesrcreports.h"
#include "wsislide.h"

#define GST_CAT_DEFAULT gst_wsi_slide_src_debug

/* @reason without the file name it starts with ("PATH: why"). */
static const gchar *
reason_without_path (const WsiSlideEntry * entry, const gchar * reason)
{
  if (g_str_has_prefix (reason, entry->path)
      && g_str_has_prefix (reason + strlen (entry->path), ": "))
    return reason + strlen (entry->path) + 2;
  return reason;
}

/* Once per slide (its first open): the direct reader declined a file of a
 * format it reads, and another backend reads it now, slower and painting
 * whatever it paints where the file is damaged. */
void
slide_src_warn_declined (GstWsiSlideSrc * self, const WsiSlideEntry * entry,
    const gchar * declined, const GstStructure * description)
{
  if (declined == NULL)
    return;
  GST_ELEMENT_WARNING (self, RESOURCE, READ,
      ("Slide %s is read through %s: %s.", entry->display,
          gst_structure_get_string (description, "backend"),
          reason_without_path (entry, declined)),
      ("backend=auto fell back; patchreader does the same for its patches"));
}

/* damaged-slides keeps this many names; slides-damaged counts them all. */
#define MAX_DAMAGED_NAMES 100

/* A NULL-terminated copy of the damaged slides' names (self->lock held). */
gchar **
slide_src_damaged_names_copy (GstWsiSlideSrc * self)
{
  gchar **names = g_new0 (gchar *, self->damaged_names->len + 1);
  guint i;

  for (i = 0; i < self->damaged_names->len; i++)
    names[i] = g_strdup (g_ptr_array_index (self->damaged_names, i));
  return names;
}

/* Once per slide (its first open): the file opened but is damaged
 * (WsiSlide.damaged: frames it declares and does not hold); the stream goes
 * on without the tiles it lacks. Counted in slides-damaged. */
void
slide_src_warn_damaged (GstWsiSlideSrc * self, const WsiSlideEntry * entry,
    const gchar * damaged)
{
  if (damaged == NULL)
    return;
  GST_ELEMENT_WARNING (self, RESOURCE, READ,
      ("Slide %s is damaged: %s.", entry->display,
          reason_without_path (entry, damaged)),
      ("the slide is read; patches over the missing tiles fail to read"));
  g_mutex_lock (&self->lock);
  self->slides_damaged++;
  if (self->damaged_names->len < MAX_DAMAGED_NAMES)
    g_ptr_array_add (self->damaged_names, g_strdup (entry->display));
  g_mutex_unlock (&self->lock);
}

void
slide_src_report_unreadable (GstWsiSlideSrc * self, WsiSlideEntry * entry,
    const GError * error)
{
  entry->failed = TRUE;
  g_free (entry->failure);
  entry->failure = g_strdup (error ? error->message : "unknown error");
  self->failed_count++;
  g_mutex_lock (&self->lock);
  self->slides_failed++;
  g_mutex_unlock (&self->lock);

  GST_ELEMENT_WARNING (self, RESOURCE, READ,
      ("Skipping slide %s: %s", entry->display,
          error ? reason_without_path (entry, error->message) :
          "unknown error"),
      ("%u of %u slides of this rank failed so far", self->failed_count,
          self->entries->len));
}

/* "a.svs (reason); b.svs (reason)" for the first few failed slides, so
 * the error that ends the stream names the files and why, whichever
 * element notices first that nothing can progress. */
gchar *
slide_src_describe_failures (GstWsiSlideSrc * self)
{
  GString *why = g_string_new (NULL);
  guint i, shown = 0;

  for (i = 0; i < self->entries->len; i++) {
    WsiSlideEntry *entry = g_ptr_array_index (self->entries, i);

    if (!entry->failed)
      continue;
    if (shown == 5) {
      g_string_append_printf (why, "; and %u more", self->failed_count - 5);
      break;
    }
    g_string_append_printf (why, "%s%s (%s)", shown ? "; " : "",
        entry->display, GST_STR_NULL (entry->failure));
    shown++;
  }
  return g_string_free (why, FALSE);
}

/* Slides that opened here but that a reader downstream gave up (damaged
 * tiles, truncated while the stream ran): skipped from now on and counted
 * as failed, like slides that do not open. */
void
slide_src_skip_given_up (GstWsiSlideSrc * self)
{
  GPtrArray *reports;
  guint i, j;

  g_mutex_lock (&self->lock);
  reports = self->given_up;
  self->given_up = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_event_unref);
  g_mutex_unlock (&self->lock);

  for (i = 0; i < reports->len; i++) {
    const gchar *reason = NULL;
    guint index = G_MAXUINT;
    GError *error;

    wsi_event_parse_slide_given_up (g_ptr_array_index (reports, i), &index,
        NULL, &reason);
    for (j = 0; j < self->entries->len; j++) {
      WsiSlideEntry *entry = g_ptr_array_index (self->entries, j);

      if (entry->index != index || entry->failed)
        continue;
      error = g_error_new (WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_READ,
          "the patch reader gave it up: %s", GST_STR_NULL (reason));
      slide_src_report_unreadable (self, entry, error);
      g_error_free (error);
    }
  }
  g_ptr_array_unref (reports);
}

/* Once per slide: tcga=true but the name holds no barcode. */
void
slide_src_warn_tcga_unparsed (GstWsiSlideSrc * self, WsiSlideEntry * entry)
{
  if (!entry->tcga_unparsed || entry->tcga_warned)
    return;
  entry->tcga_warned = TRUE;
  GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
      ("The file name of slide %s holds no TCGA slide barcode "
          "(TCGA-SS-PPPP-NNV-NN-DX1 and the like): its TCGA columns are "
          "empty.", entry->display), (NULL));
}

/* Counts a slide tissuemask rejected, once per slide. */
void
slide_src_count_rejected (GstWsiSlideSrc * self, GstEvent * event)
{
  guint index = G_MAXUINT;
  gboolean blank = FALSE;
  gpointer key;

  if (!wsi_event_parse_slide_rejected (event, &index, NULL, NULL, &blank))
    return;
  key = GUINT_TO_POINTER (index + 1);
  g_mutex_lock (&self->lock);
  if (!g_hash_table_contains (self->rejected, key)) {
    g_hash_table_add (self->rejected, key);
    self->slides_blank += blank;
  }
  g_mutex_unlock (&self->lock);
}

/* Why this rank got no slide, in the user's terms: a folder or list with
 * none (naming the extensions searched), or more ranks than slides. */
void
slide_src_post_no_slides_error (GstWsiSlideSrc * self)
{
  /* shown without credentials (and as UTF-8) */
  const gchar *location = self->run.display;

  if (self->collection_size > 0) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("Rank %d has no slides: %s holds %u slides for %d ranks.",
            self->run.rank, location, self->collection_size,
            self->run.world_size),
        ("give at most %u ranks, or more slides", self->collection_size));
  } else if (g_file_test (self->run.location, G_FILE_TEST_IS_DIR)) {
    gchar *known = wsi_slide_known_extensions_text ();

    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No slides in %s: no file in it or its subfolders has an extension "
            "of a format this build reads (%s).", location, known),
        ("give a folder of slides, a slide, or a list file"));
    g_free (known);
  } else {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No slides in %s: the list names none.", location),
        ("one slide path per line; empty lines and # comments are ignored"));
  }
}
