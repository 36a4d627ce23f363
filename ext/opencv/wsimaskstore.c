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

#include "wsimaskstore.h"
#include "wsimaskruns.h"
#include "wsilocalfile.h"

#include <errno.h>
#include <string.h>
#include <glib/gstdio.h>

#define MAGIC "GWSIMASK"
#define MAGIC_SIZE 8
#define MIN_RUN_SIZE 2          /* u8 value, varint length of 1-5 bytes */
#define DIGEST_SIZE 32          /* SHA-256 */
/* A key is a few hundred bytes of settings and a path: anything far
 * longer is not ours. */
#define MAX_KEY_SIZE (1 << 20)

void
wsi_mask_stored_clear (WsiStoredMask * stored)
{
  g_clear_pointer (&stored->mask, g_bytes_unref);
}

void
wsi_mask_store_key_add (GString * key, const gchar * name,
    const gchar * value)
{
  const gchar *c;

  g_string_append (key, name);
  g_string_append_c (key, '=');
  for (c = value; *c != '\0'; c++) {
    if (*c == '\n')
      g_string_append (key, "\\n");
    else if (*c == '\\')
      g_string_append (key, "\\\\");
    else
      g_string_append_c (key, *c);
  }
  g_string_append_c (key, '\n');
}

gchar *
wsi_mask_store_file (const gchar * dir, const gchar * key)
{
  gchar *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, key, -1);
  gchar *name = g_strconcat (digest, ".mask", NULL);
  gchar *file = g_build_filename (dir, name, NULL);

  g_free (name);
  g_free (digest);
  return file;
}

/* ---- writing ------------------------------------------------------------ */

static void
put_u32 (GByteArray * out, guint32 value)
{
  guint32 le = GUINT32_TO_LE (value);

  g_byte_array_append (out, (const guint8 *) &le, sizeof (le));
}

static void
put_f64 (GByteArray * out, gdouble value)
{
  guint64 bits;

  memcpy (&bits, &value, sizeof (bits));
  bits = GUINT64_TO_LE (bits);
  g_byte_array_append (out, (const guint8 *) &bits, sizeof (bits));
}

/* Appends the run count and the runs of @n mask bytes. */
static void
put_runs (GByteArray * out, const guint8 * mask, gsize n)
{
  guint count_at = out->len;
  guint32 count = 0;
  gsize i = 0;

  put_u32 (out, 0);
  while (i < n) {
    gsize length = wsi_mask_runs_length_at (mask, n, i);

    g_byte_array_append (out, mask + i, 1);
    wsi_mask_runs_put_length (out, (guint32) length);
    count++;
    i += length;
  }
  count = GUINT32_TO_LE (count);
  memcpy (out->data + count_at, &count, sizeof (count));
}

static void
put_digest (GByteArray * out)
{
  GChecksum *checksum = g_checksum_new (G_CHECKSUM_SHA256);
  guint8 digest[DIGEST_SIZE];
  gsize length = sizeof (digest);

  g_checksum_update (checksum, out->data, out->len);
  g_checksum_get_digest (checksum, digest, &length);
  g_checksum_free (checksum);
  g_byte_array_append (out, digest, sizeof (digest));
}

gboolean
wsi_mask_store_save (const gchar * dir, const gchar * key,
    const guint8 * mask, guint width, guint height, gdouble fraction,
    GError ** error)
{
  GByteArray *out;
  gchar *file;
  gboolean ok;
  gsize key_size = strlen (key);

  g_return_val_if_fail (width > 0 && height > 0, FALSE);
  if (g_mkdir_with_parents (dir, 0755) != 0) {
    int saved = errno;

    g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
        "cannot create the mask cache folder \"%s\": %s", dir,
        g_strerror (saved));
    return FALSE;
  }

  out = g_byte_array_sized_new (256 + key_size);
  g_byte_array_append (out, (const guint8 *) MAGIC, MAGIC_SIZE);
  put_u32 (out, WSI_MASK_STORE_VERSION);
  put_u32 (out, (guint32) key_size);
  g_byte_array_append (out, (const guint8 *) key, key_size);
  put_u32 (out, width);
  put_u32 (out, height);
  put_f64 (out, fraction);
  put_runs (out, mask, (gsize) width * height);
  put_digest (out);

  /* A temporary file in @dir renamed over the name: atomic. */
  file = wsi_mask_store_file (dir, key);
  ok = g_file_set_contents_full (file, (const gchar *) out->data, out->len,
      G_FILE_SET_CONTENTS_CONSISTENT, 0644, error);
  g_byte_array_unref (out);
  g_free (file);
  return ok;
}

/* ---- reading (the bytes are not trusted) -------------------------------- */

typedef struct
{
  const guint8 *data;
  gsize size;
  gsize at;
} Reader;

static gboolean
take (Reader * r, gsize n, const guint8 ** bytes)
{
  if (n > r->size - r->at)
    return FALSE;
  *bytes = r->data + r->at;
  r->at += n;
  return TRUE;
}

static gboolean
take_u32 (Reader * r, guint32 * value)
{
  const guint8 *bytes;

  if (!take (r, sizeof (*value), &bytes))
    return FALSE;
  memcpy (value, bytes, sizeof (*value));
  *value = GUINT32_FROM_LE (*value);
  return TRUE;
}

static gboolean
take_f64 (Reader * r, gdouble * value)
{
  const guint8 *bytes;
  guint64 bits;

  if (!take (r, sizeof (bits), &bytes))
    return FALSE;
  memcpy (&bits, bytes, sizeof (bits));
  bits = GUINT64_FROM_LE (bits);
  memcpy (value, &bits, sizeof (bits));
  return TRUE;
}

static gboolean
refuse (GError ** error, const gchar * why)
{
  g_set_error_literal (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, why);
  return FALSE;
}

/* The SHA-256 at the end covers everything before it. */
static gboolean
digest_matches (const guint8 * data, gsize size)
{
  GChecksum *checksum = g_checksum_new (G_CHECKSUM_SHA256);
  guint8 digest[DIGEST_SIZE];
  gsize length = sizeof (digest);

  g_checksum_update (checksum, data, size - DIGEST_SIZE);
  g_checksum_get_digest (checksum, digest, &length);
  g_checksum_free (checksum);
  return memcmp (digest, data + size - DIGEST_SIZE, DIGEST_SIZE) == 0;
}

/* One run length from @r (wsi_mask_runs_take_length()). */
static gboolean
take_varint (Reader * r, guint32 * value)
{
  return wsi_mask_runs_take_length (r->data, r->size, &r->at, value);
}

/* Checks that @count runs from @r cover exactly @n bytes, without writing
 * anything (so a hostile length never sizes an allocation). */
static gboolean
runs_cover (Reader r, guint32 count, gsize n)
{
  gsize at = 0;
  guint32 i;

  for (i = 0; i < count; i++) {
    guint32 length;

    if (r.at >= r.size)
      return FALSE;
    r.at++;                     /* the value */
    if (!take_varint (&r, &length) || length == 0 || length > n - at)
      return FALSE;
    at += length;
  }
  return at == n;
}

/* Decodes @count runs from @r into exactly @n bytes. */
static GBytes *
read_runs (Reader * r, guint32 count, gsize n, GError ** error)
{
  guint8 *mask;
  gsize at = 0;
  guint32 i;

  if ((gsize) count > (r->size - r->at) / MIN_RUN_SIZE) {
    refuse (error, "the runs go past the end of the file");
    return NULL;
  }
  if (!runs_cover (*r, count, n)) {
    refuse (error, "the runs do not cover width x height exactly");
    return NULL;
  }
  mask = g_malloc (n);
  for (i = 0; i < count; i++) {
    guint8 value = r->data[r->at++];
    guint32 length;

    take_varint (r, &length);   /* checked by runs_cover() */
    memset (mask + at, value, length);
    at += length;
  }
  return g_bytes_new_take (mask, n);
}

gboolean
wsi_mask_store_parse (const guint8 * data, gsize size, const gchar * key,
    WsiStoredMask * stored, GError ** error)
{
  Reader r = { data, size, 0 };
  const guint8 *bytes;
  guint32 version, key_size, width, height, count;
  gdouble fraction;

  memset (stored, 0, sizeof (*stored));
  if (size < MAGIC_SIZE + DIGEST_SIZE || memcmp (data, MAGIC, MAGIC_SIZE) != 0)
    return refuse (error, "not a gst-wsi mask file");
  r.size = size - DIGEST_SIZE;  /* the digest is not content */
  r.at = MAGIC_SIZE;
  if (!take_u32 (&r, &version))
    return refuse (error, "truncated");
  if (version != WSI_MASK_STORE_VERSION)
    return refuse (error, "written by another format version");
  if (!digest_matches (data, size))
    return refuse (error, "truncated or corrupt (checksum mismatch)");
  if (!take_u32 (&r, &key_size) || key_size > MAX_KEY_SIZE
      || !take (&r, key_size, &bytes))
    return refuse (error, "truncated");
  if (key_size != strlen (key) || memcmp (bytes, key, key_size) != 0)
    return refuse (error, "holds the mask of another slide or settings");
  if (!take_u32 (&r, &width) || !take_u32 (&r, &height)
      || !take_f64 (&r, &fraction) || !take_u32 (&r, &count))
    return refuse (error, "truncated");
  if (width == 0 || height == 0 || width > WSI_MASK_STORE_MAX_SIDE
      || height > WSI_MASK_STORE_MAX_SIDE)
    return refuse (error, "the mask size is out of range");
  if (!(fraction >= 0.0 && fraction <= 1.0))
    return refuse (error, "the tissue fraction is out of range");
  stored->mask = read_runs (&r, count, (gsize) width * height, error);
  if (stored->mask == NULL)
    return FALSE;
  if (r.at != r.size) {
    wsi_mask_stored_clear (stored);
    return refuse (error, "bytes left after the runs");
  }
  stored->width = width;
  stored->height = height;
  stored->fraction = fraction;
  return TRUE;
}

gboolean
wsi_mask_store_load (const gchar * dir, const gchar * key,
    WsiStoredMask * stored, GError ** error)
{
  gchar *file = wsi_mask_store_file (dir, key), *contents = NULL;
  GError *local = NULL;
  gsize size = 0;
  gboolean ok;

  memset (stored, 0, sizeof (*stored));
  /* Never blocks: a FIFO named like a mask is refused, not waited on. */
  if (!wsi_local_file_read (file, G_MAXSSIZE, &contents, &size, &local)) {
    /* No file, or no folder yet: a miss. */
    if (!g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT)
        && !g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOTDIR))
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_IO,
          "mask cache file %s", local->message);
    g_clear_error (&local);
    g_free (file);
    return FALSE;
  }
  ok = wsi_mask_store_parse ((const guint8 *) contents, size, key, stored,
      &local);
  if (!ok) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
        "mask cache file \"%s\" is not used: %s", file, local->message);
    g_clear_error (&local);
  }
  g_free (contents);
  g_free (file);
  return ok;
}
