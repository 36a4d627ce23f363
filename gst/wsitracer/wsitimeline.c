/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsitimeline.c: Chrome trace-event writer (see wsitimeline.h). */

#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#include "wsitimeline.h"
#include "wsijson.h"

typedef enum
{
  EVENT_SLICE,
  EVENT_COUNTER,
  EVENT_THREAD_NAME,
} WsiTimelineEventType;

typedef struct
{
  gint64 published;             /* ring index + 1 once the event is complete */
  WsiTimelineEventType type;
  gint tid;
  guint64 ts;
  guint64 value;                /* duration (slice) or value (counter) */
  guint64 limit;                /* counter: the queue's limit */
  const gchar *name;            /* slice, counter or thread name */
  const gchar *category;
} WsiTimelineEvent;

struct _WsiTimeline
{
  WsiTimelineEvent *events;
  gint64 capacity;
  gint64 reserved;              /* next index to hand out */
  gint64 written;               /* events before this index are in the file */
  gint64 dropped;
  FILE *file;
  gchar *path;
  gboolean has_events;
  gboolean closed_array;
  gint pid;
  GString *line;
};

#define ARRAY_END "\n]\n"

WsiTimeline *
wsi_timeline_new (const gchar * path, guint capacity)
{
  WsiTimeline *t;
  FILE *file = fopen (path, "w");

  if (file == NULL) {
    g_warning ("wsistats: cannot write the timeline file \"%s\": %s", path,
        g_strerror (errno));
    return NULL;
  }
  t = g_new0 (WsiTimeline, 1);
  t->capacity = MAX (capacity, 1024);
  t->events = g_new0 (WsiTimelineEvent, t->capacity);
  t->file = file;
  t->path = g_strdup (path);
  t->pid = getpid ();
  t->line = g_string_sized_new (256);
  fputs ("[", file);
  /* the process' name for trace viewers (Perfetto's process track) */
  g_string_printf (t->line, "{\"name\":\"process_name\",\"ph\":\"M\","
      "\"pid\":%d,\"args\":{\"name\":", t->pid);
  wsi_json_append_string (t->line, g_get_prgname ()? g_get_prgname () :
      "gst-wsi");
  g_string_append (t->line, "}}");
  fwrite (t->line->str, 1, t->line->len, file);
  t->has_events = TRUE;
  fputs (ARRAY_END, file);
  t->closed_array = TRUE;
  fflush (file);
  return t;
}

void
wsi_timeline_free (WsiTimeline * t)
{
  if (t == NULL)
    return;
  wsi_timeline_flush (t);
  fclose (t->file);
  g_string_free (t->line, TRUE);
  g_free (t->events);
  g_free (t->path);
  g_free (t);
}

/* Returns a free slot or NULL when the writer is a whole ring behind. */
static WsiTimelineEvent *
reserve (WsiTimeline * t, gint64 * index)
{
  gint64 next = __atomic_load_n (&t->reserved, __ATOMIC_RELAXED);

  do {
    if (next - __atomic_load_n (&t->written, __ATOMIC_ACQUIRE) >= t->capacity) {
      __atomic_fetch_add (&t->dropped, 1, __ATOMIC_RELAXED);
      return NULL;
    }
  } while (!__atomic_compare_exchange_n (&t->reserved, &next, next + 1, TRUE,
          __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
  *index = next;
  return &t->events[next % t->capacity];
}

static void
publish (WsiTimelineEvent * ev, gint64 index)
{
  __atomic_store_n (&ev->published, index + 1, __ATOMIC_RELEASE);
}

void
wsi_timeline_add_slice (WsiTimeline * t, gint tid, const gchar * name,
    const gchar * category, guint64 start_ns, guint64 duration_ns)
{
  gint64 index;
  WsiTimelineEvent *ev = reserve (t, &index);

  if (ev == NULL)
    return;
  ev->type = EVENT_SLICE;
  ev->tid = tid;
  ev->name = name;
  ev->category = category;
  ev->ts = start_ns;
  ev->value = duration_ns;
  publish (ev, index);
}

void
wsi_timeline_add_counter (WsiTimeline * t, const gchar * name, guint64 ts_ns,
    guint64 value, guint64 limit)
{
  gint64 index;
  WsiTimelineEvent *ev = reserve (t, &index);

  if (ev == NULL)
    return;
  ev->type = EVENT_COUNTER;
  ev->tid = 0;
  ev->name = name;
  ev->ts = ts_ns;
  ev->value = value;
  ev->limit = limit;
  publish (ev, index);
}

void
wsi_timeline_add_thread_name (WsiTimeline * t, gint tid,
    const gchar * thread_name)
{
  const gchar *name = g_intern_string (thread_name ? thread_name : "");
  gint64 index;
  WsiTimelineEvent *ev = reserve (t, &index);

  if (ev == NULL)
    return;
  ev->type = EVENT_THREAD_NAME;
  ev->tid = tid;
  ev->name = name;
  publish (ev, index);
}

static void
format_event (WsiTimeline * t, const WsiTimelineEvent * ev, GString * line)
{
  gchar ts[G_ASCII_DTOSTR_BUF_SIZE], dur[G_ASCII_DTOSTR_BUF_SIZE];

  /* trace-event times are microseconds */
  g_ascii_formatd (ts, sizeof (ts), "%.3f", ev->ts / 1000.0);
  switch (ev->type) {
    case EVENT_SLICE:
      g_ascii_formatd (dur, sizeof (dur), "%.3f", ev->value / 1000.0);
      g_string_append (line, "{\"name\":");
      wsi_json_append_string (line, ev->name);
      g_string_append (line, ",\"cat\":");
      wsi_json_append_string (line, ev->category);
      g_string_append_printf (line, ",\"ph\":\"X\","
          "\"ts\":%s,\"dur\":%s,\"pid\":%d,\"tid\":%d}", ts, dur, t->pid,
          ev->tid);
      break;
    case EVENT_COUNTER:
      g_string_append (line, "{\"name\":");
      wsi_json_append_string (line, ev->name);
      g_string_append_printf (line, ",\"cat\":\"queue\",\"ph\":\"C\","
          "\"ts\":%s,\"pid\":%d,\"args\":{\"level\":%" G_GUINT64_FORMAT
          ",\"limit\":%" G_GUINT64_FORMAT "}}", ts, t->pid, ev->value,
          ev->limit);
      break;
    case EVENT_THREAD_NAME:
      g_string_append_printf (line, "{\"name\":\"thread_name\",\"ph\":\"M\","
          "\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", t->pid, ev->tid);
      wsi_json_append_string (line, ev->name);
      g_string_append (line, "}}");
      break;
  }
}

void
wsi_timeline_flush (WsiTimeline * t)
{
  gint64 i = t->written;
  gint64 end = __atomic_load_n (&t->reserved, __ATOMIC_ACQUIRE);
  gboolean wrote = FALSE;

  for (; i < end; i++) {
    WsiTimelineEvent *ev = &t->events[i % t->capacity];

    if (__atomic_load_n (&ev->published, __ATOMIC_ACQUIRE) != i + 1)
      break;                    /* still being filled: next flush */
    if (t->closed_array) {
      /* reopen the array: drop the "]" written by the last flush */
      fseek (t->file, -(long) strlen (ARRAY_END), SEEK_END);
      t->closed_array = FALSE;
    }
    g_string_truncate (t->line, 0);
    if (t->has_events)
      g_string_append (t->line, ",\n");
    format_event (t, ev, t->line);
    fwrite (t->line->str, 1, t->line->len, t->file);
    t->has_events = TRUE;
    wrote = TRUE;
    __atomic_store_n (&t->written, i + 1, __ATOMIC_RELEASE);
  }
  if (wrote) {
    fputs (ARRAY_END, t->file);
    t->closed_array = TRUE;
    fflush (t->file);
  }
}

guint64
wsi_timeline_dropped (WsiTimeline * t)
{
  return (guint64) __atomic_load_n (&t->dropped, __ATOMIC_RELAXED);
}
