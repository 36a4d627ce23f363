/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsidicom.c: the DICOM parser of wsidicom.h, limited to what the VL Whole
 * Slide Microscopy IOD needs (see there for the contract). One generic walk
 * over little endian elements (explicit VR, or implicit with the VRs of
 * the attributes used from a small table), with a small visitor that picks
 * the attributes by tag and enclosing sequence: no tree.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "wsidicom.h"
#include "wsislide.h"

#define PREAMBLE_BYTES 128
/* Bytes read at a time while walking the data set. */
#define WINDOW_BYTES (256 * 1024)
/* The same when only the identity is wanted (header_only): the meta and
 * the attributes up to (0048,0007) take a few KiB; a folder scan probes
 * thousands of files, so a 256 KiB read each would dominate it. */
#define IDENTITY_WINDOW_BYTES (8 * 1024)
/* Sequences nest a few levels in WSI files; hostile files nest forever. */
#define MAX_DEPTH 12
/* String values longer than this are not attributes we use. */
#define MAX_STRING 1024
#define UNDEFINED_LENGTH G_MAXUINT32

#define TAG(g, e) (((guint32) (g) << 16) | (guint32) (e))
#define TAG_TRANSFER_SYNTAX TAG (0x0002, 0x0010)
#define TAG_IMAGE_TYPE TAG (0x0008, 0x0008)
#define TAG_SOP_CLASS TAG (0x0008, 0x0016)
#define TAG_SOP_INSTANCE TAG (0x0008, 0x0018)
#define TAG_SERIES_UID TAG (0x0020, 0x000E)
#define TAG_CONCATENATION_UID TAG (0x0020, 0x9161)
#define TAG_CONCATENATION_OFFSET TAG (0x0020, 0x9228)
#define TAG_DIMENSION_ORGANIZATION TAG (0x0020, 0x9311)
#define TAG_SAMPLES_PER_PIXEL TAG (0x0028, 0x0002)
#define TAG_PHOTOMETRIC TAG (0x0028, 0x0004)
#define TAG_PLANAR_CONFIGURATION TAG (0x0028, 0x0006)
#define TAG_NUMBER_OF_FRAMES TAG (0x0028, 0x0008)
#define TAG_ROWS TAG (0x0028, 0x0010)
#define TAG_COLUMNS TAG (0x0028, 0x0011)
#define TAG_PIXEL_SPACING TAG (0x0028, 0x0030)
#define TAG_BITS_ALLOCATED TAG (0x0028, 0x0100)
#define TAG_BITS_STORED TAG (0x0028, 0x0101)
#define TAG_PIXEL_REPRESENTATION TAG (0x0028, 0x0103)
#define TAG_ICC_PROFILE TAG (0x0028, 0x2000)
#define TAG_PIXEL_MEASURES TAG (0x0028, 0x9110)
#define TAG_Z_OFFSET TAG (0x0040, 0x074A)
#define TAG_TOTAL_COLUMNS TAG (0x0048, 0x0006)
#define TAG_TOTAL_ROWS TAG (0x0048, 0x0007)
#define TAG_OPTICAL_PATH_SEQUENCE TAG (0x0048, 0x0105)
#define TAG_OPTICAL_PATH_ID TAG (0x0048, 0x0106)
#define TAG_OBJECTIVE_POWER TAG (0x0048, 0x0112)
#define TAG_OPTICAL_PATH_ID_SEQUENCE TAG (0x0048, 0x0207)
#define TAG_PLANE_POSITION_SLIDE TAG (0x0048, 0x021A)
#define TAG_COLUMN_POSITION TAG (0x0048, 0x021E)
#define TAG_ROW_POSITION TAG (0x0048, 0x021F)
#define TAG_FOCAL_PLANES TAG (0x0048, 0x0303)
#define TAG_SHARED_GROUPS TAG (0x5200, 0x9229)
#define TAG_PER_FRAME_GROUPS TAG (0x5200, 0x9230)
#define TAG_EXTENDED_OFFSET_TABLE TAG (0x7FE0, 0x0001)
#define TAG_PIXEL_DATA TAG (0x7FE0, 0x0010)
#define TAG_ITEM TAG (0xFFFE, 0xE000)
#define TAG_ITEM_END TAG (0xFFFE, 0xE00D)
#define TAG_SEQUENCE_END TAG (0xFFFE, 0xE0DD)

/* ---- the byte window ----------------------------------------------------- */

typedef struct
{
  WsiByteSource *source;
  const gchar *uri;
  guint64 size;
  guint8 *buf;
  gsize capacity;
  guint64 start;                /* file offset of buf[0] */
  gsize length;                 /* valid bytes in buf */
  gsize window_bytes;           /* bytes read at a time, at least */
  /* The data set (not the group 2 meta) is implicit VR little endian. */
  gboolean implicit;
} Window;

static gboolean
fail (GError ** error, const gchar * uri, const gchar * format, ...)
G_GNUC_PRINTF (3, 4);

static gboolean
fail (GError ** error, const gchar * uri, const gchar * format, ...)
{
  va_list args;
  gchar *reason;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_OPEN, "%s: %s", uri,
      reason);
  g_free (reason);
  return FALSE;
}

/* @n bytes at @offset, valid until the next call; NULL past the end. */
static const guint8 *
window_at (Window * w, guint64 offset, gsize n, GError ** error)
{
  gsize want;

  if (offset > w->size || n > w->size - offset) {
    fail (error, w->uri, "truncated: %" G_GSIZE_FORMAT " bytes at offset %"
        G_GUINT64_FORMAT " lie past the end (%" G_GUINT64_FORMAT " bytes)",
        n, offset, w->size);
    return NULL;
  }
  if (offset >= w->start && offset + n <= w->start + w->length)
    return w->buf + (offset - w->start);
  want = MIN (MAX (n, w->window_bytes), w->size - offset);
  if (want > w->capacity) {
    g_free (w->buf);
    w->buf = g_try_malloc (want);
    w->capacity = w->buf != NULL ? want : 0;
    w->length = 0;
    if (w->buf == NULL) {
      fail (error, w->uri, "out of memory for %" G_GSIZE_FORMAT " bytes",
          want);
      return NULL;
    }
  }
  w->length = 0;
  if (!wsi_byte_source_read (w->source, offset, want, w->buf, error))
    return NULL;
  w->start = offset;
  w->length = want;
  return w->buf;
}

static guint16
le16 (const guint8 * p)
{
  return (guint16) (p[0] | (p[1] << 8));
}

static guint32
le32 (const guint8 * p)
{
  return (guint32) p[0] | ((guint32) p[1] << 8) | ((guint32) p[2] << 16)
      | ((guint32) p[3] << 24);
}

static guint64
le64 (const guint8 * p)
{
  return (guint64) le32 (p) | ((guint64) le32 (p + 4) << 32);
}

/* ---- elements ----------------------------------------------------------- */

typedef struct
{
  guint32 tag;
  gchar vr[3];
  guint32 length;               /* UNDEFINED_LENGTH possible */
  guint64 offset;               /* of the element */
  guint64 value_offset;
} Element;

/* VRs with a 2-byte reserved field and a 4-byte length (PS3.5 7.1.2). */
static gboolean
vr_has_long_length (const gchar * vr)
{
  static const gchar *const long_vrs[] = { "OB", "OD", "OF", "OL", "OV",
    "OW", "SQ", "SV", "UC", "UN", "UR", "UT", "UV"
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (long_vrs); i++)
    if (vr[0] == long_vrs[i][0] && vr[1] == long_vrs[i][1])
      return TRUE;
  return FALSE;
}

/* The VRs of the attributes this parser uses, for implicit VR data sets
 * (PS3.6); any other attribute is "UN", an opaque value to skip (or a
 * sequence, when its length is undefined). */
static const gchar *
implicit_vr (guint32 tag)
{
  static const struct
  {
    guint32 tag;
    const gchar *vr;
  } dictionary[] = {
    {TAG_IMAGE_TYPE, "CS"}, {TAG_SOP_CLASS, "UI"}, {TAG_SOP_INSTANCE, "UI"},
    {TAG_SERIES_UID, "UI"}, {TAG_CONCATENATION_UID, "UI"},
    {TAG_CONCATENATION_OFFSET, "UL"}, {TAG_DIMENSION_ORGANIZATION, "CS"},
    {TAG_SAMPLES_PER_PIXEL, "US"}, {TAG_PHOTOMETRIC, "CS"},
    {TAG_PLANAR_CONFIGURATION, "US"}, {TAG_NUMBER_OF_FRAMES, "IS"},
    {TAG_ROWS, "US"}, {TAG_COLUMNS, "US"}, {TAG_PIXEL_SPACING, "DS"},
    {TAG_BITS_ALLOCATED, "US"}, {TAG_BITS_STORED, "US"},
    {TAG_PIXEL_REPRESENTATION, "US"}, {TAG_ICC_PROFILE, "OB"},
    {TAG_PIXEL_MEASURES, "SQ"}, {TAG_Z_OFFSET, "DS"},
    {TAG_TOTAL_COLUMNS, "UL"}, {TAG_TOTAL_ROWS, "UL"},
    {TAG_OPTICAL_PATH_SEQUENCE, "SQ"}, {TAG_OPTICAL_PATH_ID, "SH"},
    {TAG_OBJECTIVE_POWER, "DS"}, {TAG_OPTICAL_PATH_ID_SEQUENCE, "SQ"},
    {TAG_PLANE_POSITION_SLIDE, "SQ"}, {TAG_COLUMN_POSITION, "SL"},
    {TAG_ROW_POSITION, "SL"}, {TAG_FOCAL_PLANES, "UL"},
    {TAG_SHARED_GROUPS, "SQ"}, {TAG_PER_FRAME_GROUPS, "SQ"},
    {TAG_EXTENDED_OFFSET_TABLE, "OV"}, {TAG_PIXEL_DATA, "OW"},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (dictionary); i++)
    if (dictionary[i].tag == tag)
      return dictionary[i].vr;
  return "UN";
}

static gboolean
element_read (Window * w, guint64 offset, Element * e, GError ** error)
{
  const guint8 *p = window_at (w, offset, 8, error);

  if (p == NULL)
    return FALSE;
  e->offset = offset;
  e->tag = TAG (le16 (p), le16 (p + 2));
  if ((e->tag >> 16) == 0xFFFE) {
    /* Items and delimiters have no VR. */
    e->vr[0] = e->vr[1] = e->vr[2] = '\0';
    e->length = le32 (p + 4);
    e->value_offset = offset + 8;
    return TRUE;
  }
  if (w->implicit && (e->tag >> 16) != 0x0002) {
    /* Tag, 4-byte length; the VR from the dictionary, SQ when the length
     * is undefined (the only undefined-length values of a native data
     * set). */
    const gchar *vr = implicit_vr (e->tag);
    e->length = le32 (p + 4);
    e->value_offset = offset + 8;
    if (e->length == UNDEFINED_LENGTH)
      vr = "SQ";
    e->vr[0] = vr[0];
    e->vr[1] = vr[1];
    e->vr[2] = '\0';
    return TRUE;
  }
  e->vr[0] = p[4];
  e->vr[1] = p[5];
  e->vr[2] = '\0';
  if (!g_ascii_isupper (e->vr[0]) || !g_ascii_isupper (e->vr[1]))
    return fail (error, w->uri, "element (%04X,%04X) at offset %"
        G_GUINT64_FORMAT " has no explicit VR", e->tag >> 16,
        e->tag & 0xFFFF, offset);
  if (vr_has_long_length (e->vr)) {
    p = window_at (w, offset, 12, error);
    if (p == NULL)
      return FALSE;
    e->length = le32 (p + 8);
    e->value_offset = offset + 12;
  } else {
    e->length = le16 (p + 6);
    e->value_offset = offset + 8;
  }
  return TRUE;
}

/* ---- the visitor -------------------------------------------------------- */

typedef struct
{
  guint32 tag;                  /* the sequence */
  guint32 item;                 /* item index within it */
} SequenceLevel;

typedef struct
{
  Window window;
  WsiDicomInstance *instance;
  GError **error;
  SequenceLevel stack[MAX_DEPTH];
  guint depth;
  gboolean meta_done;           /* the first data-set element was seen */
  /* header_only: the walk ends at the first top-level data-set element
   * after this tag (the last attribute of the identity). */
  guint32 last_tag;
  gboolean pixel_data_found;
  guint64 eot_offset, eot_length;       /* Extended Offset Table value */
  gboolean shared_spacing;      /* spacing came from the shared groups */
  /* The per-frame item being walked. */
  gdouble item_z;
  gchar item_path[65];
  gdouble first_z;
  gchar first_path[65];
} Parser;

/* The value as a string (trailing spaces and NULs removed), or NULL when it
 * is absent or too long to be an attribute we use. */
static gchar *
value_string (Parser * p, const Element * e)
{
  const guint8 *v;
  gsize n = e->length;

  if (n == 0 || n > MAX_STRING)
    return NULL;
  v = window_at (&p->window, e->value_offset, n, p->error);
  if (v == NULL)
    return NULL;
  while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\0'))
    n--;
  return g_strndup ((const gchar *) v, n);
}

/* A numeric value: US, UL or SL binary, IS or DS text (first value).
 * FALSE when absent or malformed. */
static gboolean
value_number (Parser * p, const Element * e, gdouble * number)
{
  const guint8 *v;
  gchar *text, *end;

  if (strcmp (e->vr, "US") == 0 || strcmp (e->vr, "UL") == 0
      || strcmp (e->vr, "SL") == 0) {
    guint need = e->vr[0] == 'U' && e->vr[1] == 'S' ? 2 : 4;
    if (e->length < need)
      return FALSE;
    v = window_at (&p->window, e->value_offset, need, p->error);
    if (v == NULL)
      return FALSE;
    if (need == 2)
      *number = le16 (v);
    else if (e->vr[0] == 'S')
      *number = (gint32) le32 (v);
    else
      *number = le32 (v);
    return TRUE;
  }
  text = value_string (p, e);
  if (text == NULL)
    return FALSE;
  g_strstrip (text);
  *number = g_ascii_strtod (text, &end);
  /* DS and IS may hold several values separated by backslashes. */
  if (end == text || (*end != '\0' && *end != '\\') || !isfinite (*number)) {
    g_free (text);
    return FALSE;
  }
  if (*end == '\\') {
    /* Second value of a pair (PixelSpacing: row\column). */
    gdouble second = g_ascii_strtod (end + 1, NULL);
    number[1] = second;
  }
  g_free (text);
  return TRUE;
}

static void
replace_string (gchar ** field, gchar * value)
{
  if (value == NULL)
    return;
  g_free (*field);
  *field = value;
}

static WsiDicomFlavor
flavor_from_image_type (const gchar * image_type)
{
  gchar **values;
  WsiDicomFlavor flavor = WSI_DICOM_FLAVOR_OTHER;

  if (image_type == NULL)
    return flavor;
  values = g_strsplit (image_type, "\\", -1);
  if (g_strv_length (values) >= 3) {
    const gchar *third = g_strstrip (values[2]);
    if (strcmp (third, "VOLUME") == 0)
      flavor = WSI_DICOM_FLAVOR_VOLUME;
    else if (strcmp (third, "THUMBNAIL") == 0)
      flavor = WSI_DICOM_FLAVOR_THUMBNAIL;
    else if (strcmp (third, "OVERVIEW") == 0)
      flavor = WSI_DICOM_FLAVOR_OVERVIEW;
    else if (strcmp (third, "LABEL") == 0)
      flavor = WSI_DICOM_FLAVOR_LABEL;
  }
  g_strfreev (values);
  return flavor;
}

/* Per-frame arrays, allocated when the per-frame groups start (after
 * NumberOfFrames, which precedes them in tag order). */
static gboolean
per_frame_arrays_alloc (Parser * p)
{
  WsiDicomInstance *inst = p->instance;
  guint32 n = inst->n_frames;

  if (inst->frame_column_position != NULL || n == 0)
    return TRUE;
  /* Each per-frame item takes at least 8 bytes of the file. */
  if ((guint64) n * 8 > p->window.size)
    return fail (p->error, p->window.uri, "NumberOfFrames %u is more than "
        "the file can hold", n);
  inst->frame_column_position = g_try_new0 (gint32, n);
  inst->frame_row_position = g_try_new0 (gint32, n);
  inst->frame_in_first_plane = g_try_malloc (n);
  if (inst->frame_column_position == NULL || inst->frame_row_position == NULL
      || inst->frame_in_first_plane == NULL)
    return fail (p->error, p->window.uri, "out of memory for %u frames", n);
  memset (inst->frame_in_first_plane, 1, n);
  return TRUE;
}

/* The first ICC profile met: where its value lies. */
static void
icc_profile_note (WsiDicomInstance * inst, const Element * e)
{
  if (inst->icc_profile_length == 0 && e->length > 0) {
    inst->icc_profile_offset = e->value_offset;
    inst->icc_profile_length = e->length;
  }
}

/* NumberOfFrames sizes the per-frame arrays when the per-frame groups
 * start; a second, different value after them (out of tag order: two data
 * sets run together) would let frame indices run past those arrays (found
 * by fuzz-dicom), so it is refused. */
static gboolean
number_of_frames_set (Parser * p, guint32 n)
{
  WsiDicomInstance *inst = p->instance;

  if (inst->frame_column_position != NULL && n != inst->n_frames)
    return fail (p->error, p->window.uri, "NumberOfFrames changes from %u "
        "to %u after the per-frame functional groups", inst->n_frames, n);
  inst->n_frames = n;
  return TRUE;
}

/* Top-level attributes. */
static gboolean
visit_top (Parser * p, const Element * e)
{
  WsiDicomInstance *inst = p->instance;
  gdouble number[2] = { 0, 0 };

  switch (e->tag) {
    case TAG_TRANSFER_SYNTAX:
      replace_string (&inst->transfer_syntax, value_string (p, e));
      /* From the next data-set element on (group 2 stays explicit). */
      p->window.implicit = g_strcmp0 (inst->transfer_syntax,
          WSI_DICOM_TS_IMPLICIT_LE) == 0;
      break;
    case TAG_IMAGE_TYPE:
      replace_string (&inst->image_type, value_string (p, e));
      inst->flavor = flavor_from_image_type (inst->image_type);
      break;
    case TAG_SOP_CLASS:
      replace_string (&inst->sop_class_uid, value_string (p, e));
      break;
    case TAG_SOP_INSTANCE:
      replace_string (&inst->sop_instance_uid, value_string (p, e));
      break;
    case TAG_SERIES_UID:
      replace_string (&inst->series_uid, value_string (p, e));
      break;
    case TAG_CONCATENATION_UID:
      replace_string (&inst->concatenation_uid, value_string (p, e));
      break;
    case TAG_PHOTOMETRIC:
      replace_string (&inst->photometric, value_string (p, e));
      break;
    case TAG_DIMENSION_ORGANIZATION:{
      gchar *text = value_string (p, e);
      inst->tiled_sparse = g_strcmp0 (text, "TILED_SPARSE") == 0;
      g_free (text);
      break;
    }
    case TAG_ICC_PROFILE:
      icc_profile_note (inst, e);
      break;
    case TAG_CONCATENATION_OFFSET:
    case TAG_SAMPLES_PER_PIXEL:
    case TAG_PLANAR_CONFIGURATION:
    case TAG_NUMBER_OF_FRAMES:
    case TAG_ROWS:
    case TAG_COLUMNS:
    case TAG_BITS_ALLOCATED:
    case TAG_BITS_STORED:
    case TAG_PIXEL_REPRESENTATION:
    case TAG_TOTAL_COLUMNS:
    case TAG_TOTAL_ROWS:
    case TAG_FOCAL_PLANES:
      if (!value_number (p, e, number))
        break;
      if (number[0] < 0 || number[0] > G_MAXUINT32)
        break;
      if (e->tag == TAG_CONCATENATION_OFFSET)
        inst->concatenation_frame_offset = number[0];
      else if (e->tag == TAG_SAMPLES_PER_PIXEL)
        inst->samples_per_pixel = MIN (number[0], G_MAXUINT16);
      else if (e->tag == TAG_PLANAR_CONFIGURATION)
        inst->planar_configuration = MIN (number[0], G_MAXUINT16);
      else if (e->tag == TAG_NUMBER_OF_FRAMES)
        return number_of_frames_set (p, number[0]);
      else if (e->tag == TAG_ROWS)
        inst->rows = number[0];
      else if (e->tag == TAG_COLUMNS)
        inst->columns = number[0];
      else if (e->tag == TAG_BITS_ALLOCATED)
        inst->bits_allocated = MIN (number[0], G_MAXUINT16);
      else if (e->tag == TAG_BITS_STORED)
        inst->bits_stored = MIN (number[0], G_MAXUINT16);
      else if (e->tag == TAG_PIXEL_REPRESENTATION)
        inst->pixel_representation = MIN (number[0], G_MAXUINT16);
      else if (e->tag == TAG_TOTAL_COLUMNS)
        inst->total_columns = number[0];
      else if (e->tag == TAG_TOTAL_ROWS)
        inst->total_rows = number[0];
      else if (e->tag == TAG_FOCAL_PLANES)
        inst->n_focal_planes = number[0];
      break;
    default:
      break;
  }
  return *p->error == NULL;
}

static void
set_spacing (WsiDicomInstance * inst, const gdouble * number)
{
  if (number[0] > 0 && number[1] > 0) {
    inst->spacing_row_mm = number[0];
    inst->spacing_column_mm = number[1];
  }
}

/* Attributes inside sequences; p->stack says where. */
static gboolean
visit_nested (Parser * p, const Element * e)
{
  WsiDicomInstance *inst = p->instance;
  guint32 outer = p->stack[0].tag, parent = p->stack[p->depth - 1].tag;
  guint32 frame = p->stack[0].item;
  gdouble number[2] = { 0, 0 };

  if (e->tag == TAG_PIXEL_SPACING && parent == TAG_PIXEL_MEASURES
      && p->depth == 2) {
    if (!value_number (p, e, number))
      return *p->error == NULL;
    if (outer == TAG_SHARED_GROUPS) {
      set_spacing (inst, number);
      p->shared_spacing = TRUE;
    } else if (outer == TAG_PER_FRAME_GROUPS && frame == 0
        && !p->shared_spacing) {
      set_spacing (inst, number);
    }
  } else if (outer == TAG_OPTICAL_PATH_SEQUENCE && p->depth == 1) {
    if (e->tag == TAG_ICC_PROFILE && p->stack[0].item == 0)
      icc_profile_note (inst, e);
    else if (e->tag == TAG_OBJECTIVE_POWER && p->stack[0].item == 0
        && value_number (p, e, number) && number[0] > 0)
      inst->objective_power = number[0];
  } else if (outer == TAG_PER_FRAME_GROUPS && p->depth == 2
      && inst->frame_column_position != NULL && frame < inst->n_frames) {
    if (parent == TAG_PLANE_POSITION_SLIDE && value_number (p, e, number)) {
      if (e->tag == TAG_COLUMN_POSITION)
        inst->frame_column_position[frame] = CLAMP (number[0], G_MININT32,
            G_MAXINT32);
      else if (e->tag == TAG_ROW_POSITION)
        inst->frame_row_position[frame] = CLAMP (number[0], G_MININT32,
            G_MAXINT32);
      else if (e->tag == TAG_Z_OFFSET)
        p->item_z = number[0];
    } else if (parent == TAG_OPTICAL_PATH_ID_SEQUENCE
        && e->tag == TAG_OPTICAL_PATH_ID) {
      gchar *text = value_string (p, e);
      g_strlcpy (p->item_path, text != NULL ? text : "",
          sizeof (p->item_path));
      g_free (text);
    }
  }
  return *p->error == NULL;
}

/* A per-frame item ended: is its frame in the first plane and path? */
static void
per_frame_item_done (Parser * p, guint32 frame)
{
  WsiDicomInstance *inst = p->instance;

  if (inst->frame_in_first_plane == NULL || frame >= inst->n_frames)
    return;
  if (frame == 0) {
    p->first_z = p->item_z;
    memcpy (p->first_path, p->item_path, sizeof (p->first_path));
  }
  inst->frame_in_first_plane[frame] =
      (p->item_z == p->first_z || (isnan (p->item_z) && isnan (p->first_z)))
      && strcmp (p->item_path, p->first_path) == 0;
}

/* ---- the walk ----------------------------------------------------------- */

static gboolean walk_items (Parser * p, const Element * sequence,
    guint64 * end);

/* The data set must be little endian, explicit or implicit VR: checked
 * when its first element (after the group 2 meta) comes. */
static gboolean
check_transfer_syntax (Parser * p)
{
  const gchar *ts = p->instance->transfer_syntax;

  p->meta_done = TRUE;
  if (ts == NULL)
    return fail (p->error, p->window.uri, "no TransferSyntaxUID in the file "
        "meta information");
  if (strcmp (ts, "1.2.840.10008.1.2.2") == 0
      || strcmp (ts, "1.2.840.10008.1.2.1.99") == 0)
    return fail (p->error, p->window.uri, "transfer syntax %s (%s) is not "
        "supported: only little endian, not deflated, data sets are read",
        wsi_dicom_transfer_syntax_name (ts), ts);
  return TRUE;
}

/* Walks elements from @offset to @end (exclusive), or, with @undefined,
 * up to an Item Delimitation element; *@next is where the walk stopped. At
 * depth 0, stops at Pixel Data. */
static gboolean
walk_elements (Parser * p, guint64 offset, guint64 end, gboolean undefined,
    guint64 * next)
{
  Element e;

  while (undefined || offset < end) {
    if (!element_read (&p->window, offset, &e, p->error))
      return FALSE;
    if (e.tag == TAG_ITEM_END && undefined) {
      *next = e.value_offset;
      return TRUE;
    }
    if ((e.tag >> 16) == 0xFFFE)
      return fail (p->error, p->window.uri, "unexpected (%04X,%04X) at "
          "offset %" G_GUINT64_FORMAT, e.tag >> 16, e.tag & 0xFFFF, offset);
    if (p->depth == 0 && !p->meta_done && (e.tag >> 16) != 0x0002
        && !check_transfer_syntax (p))
      return FALSE;
    if (p->depth == 0 && p->last_tag != 0 && e.tag > p->last_tag) {
      *next = e.offset;
      return TRUE;
    }
    if (p->depth == 0 && e.tag == TAG_PIXEL_DATA) {
      p->pixel_data_found = TRUE;
      p->instance->pixel_data_offset = e.value_offset;
      p->instance->pixel_data_length = e.length;
      *next = e.offset;
      return TRUE;
    }
    if (strcmp (e.vr, "SQ") == 0 || e.length == UNDEFINED_LENGTH) {
      if (strcmp (e.vr, "SQ") != 0)
        return fail (p->error, p->window.uri, "element (%04X,%04X) of VR %s "
            "has an undefined length", e.tag >> 16, e.tag & 0xFFFF, e.vr);
      if (!walk_items (p, &e, &offset))
        return FALSE;
    } else {
      if (e.value_offset + e.length > (undefined ? p->window.size : end))
        return fail (p->error, p->window.uri, "element (%04X,%04X) at offset %"
            G_GUINT64_FORMAT " overruns its container", e.tag >> 16,
            e.tag & 0xFFFF, offset);
      if (e.tag == TAG_EXTENDED_OFFSET_TABLE && p->depth == 0) {
        p->eot_offset = e.value_offset;
        p->eot_length = e.length;
      } else if (p->depth == 0 ? !visit_top (p, &e) : !visit_nested (p, &e)) {
        return FALSE;
      }
      offset = e.value_offset + e.length;
    }
  }
  if (offset != end)
    return fail (p->error, p->window.uri, "an element overruns its container "
        "at offset %" G_GUINT64_FORMAT, offset);
  *next = offset;
  return TRUE;
}

static void
item_begin (Parser * p, guint32 tag, guint32 index)
{
  p->stack[p->depth].tag = tag;
  p->stack[p->depth].item = index;
  p->depth++;
  if (p->depth == 1 && tag == TAG_PER_FRAME_GROUPS) {
    p->item_z = NAN;
    p->item_path[0] = '\0';
  }
}

static void
item_end (Parser * p)
{
  p->depth--;
  if (p->depth == 0 && p->stack[0].tag == TAG_PER_FRAME_GROUPS)
    per_frame_item_done (p, p->stack[0].item);
  if (p->depth == 0 && p->stack[0].tag == TAG_OPTICAL_PATH_SEQUENCE)
    p->instance->n_optical_paths = p->stack[0].item + 1;
}

/* The items of @sequence; *@end is the offset after it. */
static gboolean
walk_items (Parser * p, const Element * sequence, guint64 * end)
{
  gboolean undefined = sequence->length == UNDEFINED_LENGTH;
  guint64 offset = sequence->value_offset;
  guint64 limit = undefined ? p->window.size
      : sequence->value_offset + sequence->length;
  guint32 index = 0;
  Element item;

  if (p->depth >= MAX_DEPTH)
    return fail (p->error, p->window.uri, "sequences nest deeper than %d "
        "levels at offset %" G_GUINT64_FORMAT, MAX_DEPTH, sequence->offset);
  if (limit > p->window.size)
    return fail (p->error, p->window.uri, "sequence (%04X,%04X) at offset %"
        G_GUINT64_FORMAT " overruns the file", sequence->tag >> 16,
        sequence->tag & 0xFFFF, sequence->offset);
  if (p->depth == 0 && sequence->tag == TAG_PER_FRAME_GROUPS
      && !per_frame_arrays_alloc (p))
    return FALSE;

  while (undefined || offset < limit) {
    guint64 next;
    gboolean ok;

    if (!element_read (&p->window, offset, &item, p->error))
      return FALSE;
    if (item.tag == TAG_SEQUENCE_END && undefined) {
      *end = item.value_offset;
      return TRUE;
    }
    if (item.tag != TAG_ITEM)
      return fail (p->error, p->window.uri, "sequence (%04X,%04X) holds "
          "(%04X,%04X) instead of an item at offset %" G_GUINT64_FORMAT,
          sequence->tag >> 16, sequence->tag & 0xFFFF, item.tag >> 16,
          item.tag & 0xFFFF, offset);
    if (item.length != UNDEFINED_LENGTH
        && item.value_offset + item.length > limit)
      return fail (p->error, p->window.uri, "an item at offset %"
          G_GUINT64_FORMAT " overruns its sequence", offset);
    item_begin (p, sequence->tag, index++);
    if (item.length == UNDEFINED_LENGTH)
      ok = walk_elements (p, item.value_offset, 0, TRUE, &next);
    else
      ok = walk_elements (p, item.value_offset,
          item.value_offset + item.length, FALSE, &next);
    item_end (p);
    if (!ok)
      return FALSE;
    offset = next;
  }
  if (offset != limit)
    return fail (p->error, p->window.uri, "sequence (%04X,%04X) overruns "
        "its length", sequence->tag >> 16, sequence->tag & 0xFFFF);
  *end = offset;
  return TRUE;
}

/* ---- frames ------------------------------------------------------------- */

static gboolean
frames_native (Parser * p)
{
  WsiDicomInstance *inst = p->instance;
  guint64 frame_bytes = (guint64) inst->rows * inst->columns
      * inst->samples_per_pixel * (inst->bits_allocated / 8);
  guint64 end = inst->pixel_data_offset + inst->pixel_data_length;
  guint32 i;

  if (inst->pixel_data_length == UNDEFINED_LENGTH)
    return fail (p->error, p->window.uri, "uncompressed Pixel Data has an "
        "undefined length");
  if (end > p->window.size)
    return fail (p->error, p->window.uri, "Pixel Data (%" G_GUINT64_FORMAT
        " bytes) runs past the end of the file", inst->pixel_data_length);
  for (i = 0; i < inst->n_frames; i++) {
    guint64 offset = inst->pixel_data_offset + i * frame_bytes;
    if (frame_bytes > 0 && offset + frame_bytes <= end) {
      inst->frames[i].offset = offset;
      inst->frames[i].length = frame_bytes;
    }
  }
  p->instance->frame_index_source = "uncompressed";
  return TRUE;
}

/* The item header at @offset: its value length, or FALSE when it is not an
 * item (the sequence delimiter, damage, or the end of the file). */
static gboolean
item_at (Parser * p, guint64 offset, guint32 * length)
{
  guint8 h[8];

  if (offset > p->window.size || p->window.size - offset < 8)
    return FALSE;
  if (!wsi_byte_source_read (p->window.source, offset, 8, h, NULL))
    return FALSE;
  if (le16 (h) != 0xFFFE || le16 (h + 2) != 0xE000)
    return FALSE;
  *length = le32 (h + 4);
  return *length != UNDEFINED_LENGTH
      && offset + 8 + *length <= p->window.size;
}

/* One walk over the fragments: fragment k is frame k. */
static void
frames_walk (Parser * p, guint64 first_fragment)
{
  WsiDicomInstance *inst = p->instance;
  guint64 offset = first_fragment;
  guint32 i, length;

  for (i = 0; i < inst->n_frames && item_at (p, offset, &length); i++) {
    inst->frames[i].offset = offset;
    inst->frames[i].length = 8 + (guint64) length;
    offset += 8 + (guint64) length;
  }
  inst->frame_index_source = "item walk";
}

/* The end of the frame starting at @offset: after its items, up to the
 * sequence delimiter. */
static guint64
frame_end_by_walk (Parser * p, guint64 offset)
{
  guint32 length;

  while (item_at (p, offset, &length))
    offset += 8 + (guint64) length;
  return offset;
}

/* Frames from a table of offsets relative to @first_fragment; FALSE when the
 * table is not plausible (not increasing, outside the file). */
static gboolean
frames_from_table (Parser * p, guint64 first_fragment,
    const guint64 * offsets)
{
  WsiDicomInstance *inst = p->instance;
  guint32 i, n = inst->n_frames;

  for (i = 0; i < n; i++) {
    if (offsets[i] > p->window.size - first_fragment
        || (i > 0 && offsets[i] <= offsets[i - 1]))
      return FALSE;
  }
  if (n > 0 && offsets[0] != 0)
    return FALSE;
  for (i = 0; i < n; i++) {
    guint64 start = first_fragment + offsets[i];
    guint64 end = i + 1 < n ? first_fragment + offsets[i + 1]
        : frame_end_by_walk (p, start);
    inst->frames[i].offset = start;
    inst->frames[i].length = end > start ? end - start : 0;
  }
  return TRUE;
}

/* Reads a table of @count @width-byte little-endian offsets at @offset. */
static guint64 *
table_read (Parser * p, guint64 offset, guint32 count, guint width)
{
  guint64 *table;
  guint8 *raw;
  guint32 i;

  if ((guint64) count * width > p->window.size)
    return NULL;
  raw = g_try_malloc ((gsize) count * width + 1);
  table = g_try_new (guint64, (gsize) count + 1);
  if (raw == NULL || table == NULL
      || !wsi_byte_source_read (p->window.source, offset,
          (gsize) count * width, raw, NULL)) {
    g_free (raw);
    g_free (table);
    return NULL;
  }
  for (i = 0; i < count; i++)
    table[i] = width == 8 ? le64 (raw + (gsize) i * 8) : le32 (raw
        + (gsize) i * 4);
  g_free (raw);
  return table;
}

static gboolean
frames_encapsulated (Parser * p)
{
  WsiDicomInstance *inst = p->instance;
  guint32 bot_length = 0;
  guint64 first_fragment;
  guint64 *table = NULL;

  if (!item_at (p, inst->pixel_data_offset, &bot_length))
    return fail (p->error, p->window.uri, "encapsulated Pixel Data does not "
        "start with a Basic Offset Table item");
  first_fragment = inst->pixel_data_offset + 8 + bot_length;
  if (p->eot_length == (guint64) inst->n_frames * 8 && inst->n_frames > 0) {
    table = table_read (p, p->eot_offset, inst->n_frames, 8);
    inst->frame_index_source = "extended offset table";
  } else if (bot_length == (guint64) inst->n_frames * 4 && bot_length > 0) {
    table = table_read (p, inst->pixel_data_offset + 8, inst->n_frames, 4);
    inst->frame_index_source = "basic offset table";
  }
  if (table == NULL || !frames_from_table (p, first_fragment, table)) {
    /* No table, or one that cannot be right: the items say it all. */
    if (table != NULL)
      g_debug ("%s: the %s is implausible, walking the items instead",
          p->window.uri, inst->frame_index_source);
    memset (inst->frames, 0, sizeof (WsiDicomFrame) * inst->n_frames);
    frames_walk (p, first_fragment);
  }
  g_free (table);
  return TRUE;
}

/* Every frame of an instance is declared by NumberOfFrames (a TILED_SPARSE
 * one lists each in its per-frame groups): one the file does not hold is
 * damage, which the backend reports at open (wsislide-dicom.c). */
static void
frames_count_missing (WsiDicomInstance * inst)
{
  guint32 i;

  inst->n_frames_missing = 0;
  for (i = 0; i < inst->n_frames; i++)
    if (inst->frames[i].length == 0)
      inst->n_frames_missing++;
}

static gboolean
frames_locate (Parser * p)
{
  WsiDicomInstance *inst = p->instance;

  if (inst->n_frames == 0)
    return fail (p->error, p->window.uri, "no frames (NumberOfFrames is 0 "
        "or absent)");
  if ((guint64) inst->n_frames * 8 > p->window.size)
    return fail (p->error, p->window.uri, "NumberOfFrames %u is more than "
        "the file can hold", inst->n_frames);
  inst->frames = g_try_new0 (WsiDicomFrame, inst->n_frames);
  if (inst->frames == NULL)
    return fail (p->error, p->window.uri, "out of memory for %u frames",
        inst->n_frames);
  if (inst->pixels == WSI_DICOM_PIXELS_NATIVE) {
    if (!frames_native (p))
      return FALSE;
  } else if (inst->pixel_data_length != UNDEFINED_LENGTH) {
    return fail (p->error, p->window.uri, "compressed Pixel Data is not "
        "encapsulated");
  } else if (!frames_encapsulated (p)) {
    return FALSE;
  }
  frames_count_missing (inst);
  return TRUE;
}

/* ---- public ------------------------------------------------------------- */

gboolean
wsi_dicom_sniff (const guint8 * bytes, gsize size)
{
  return size >= PREAMBLE_BYTES + 4
      && memcmp (bytes + PREAMBLE_BYTES, "DICM", 4) == 0;
}

gboolean
wsi_dicom_source_is_dicom (WsiByteSource * source)
{
  guint8 head[PREAMBLE_BYTES + 4];

  return wsi_byte_source_get_size (source) >= sizeof (head)
      && wsi_byte_source_read (source, 0, sizeof (head), head, NULL)
      && wsi_dicom_sniff (head, sizeof (head));
}

gboolean
wsi_dicom_path_is_dicom (const gchar * path)
{
  gchar *lower;
  gboolean dicom;
  WsiByteSource *source;

  if (wsi_slide_has_known_extension (path)) {
    lower = g_ascii_strdown (path, -1);
    dicom = g_str_has_suffix (lower, ".dcm");
    g_free (lower);
    return dicom;
  }
  if (wsi_location_is_remote (path)
      || !g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return FALSE;
  source = wsi_byte_source_open (path, NULL);
  if (source == NULL)
    return FALSE;
  dicom = wsi_dicom_source_is_dicom (source);
  wsi_byte_source_unref (source);
  return dicom;
}

const gchar *
wsi_dicom_transfer_syntax_name (const gchar * uid)
{
  static const struct
  {
    const gchar *uid, *name;
  } names[] = {
    {"1.2.840.10008.1.2", "Implicit VR Little Endian"},
    {"1.2.840.10008.1.2.1", "Explicit VR Little Endian"},
    {"1.2.840.10008.1.2.1.99", "Deflated Explicit VR Little Endian"},
    {"1.2.840.10008.1.2.2", "Explicit VR Big Endian"},
    {"1.2.840.10008.1.2.4.50", "JPEG Baseline"},
    {"1.2.840.10008.1.2.4.51", "JPEG Extended"},
    {"1.2.840.10008.1.2.4.57", "JPEG Lossless"},
    {"1.2.840.10008.1.2.4.70", "JPEG Lossless SV1"},
    {"1.2.840.10008.1.2.4.80", "JPEG-LS Lossless"},
    {"1.2.840.10008.1.2.4.81", "JPEG-LS Near-Lossless"},
    {"1.2.840.10008.1.2.4.90", "JPEG 2000 Lossless"},
    {"1.2.840.10008.1.2.4.91", "JPEG 2000"},
    {"1.2.840.10008.1.2.4.201", "HTJ2K Lossless"},
    {"1.2.840.10008.1.2.4.202", "HTJ2K Lossless RPCL"},
    {"1.2.840.10008.1.2.4.203", "HTJ2K"},
    {"1.2.840.10008.1.2.5", "RLE Lossless"},
  };
  guint i;

  for (i = 0; uid != NULL && i < G_N_ELEMENTS (names); i++)
    if (strcmp (uid, names[i].uid) == 0)
      return names[i].name;
  return uid != NULL ? uid : "(none)";
}

static WsiDicomPixels
pixels_from_transfer_syntax (const gchar * ts)
{
  if (g_strcmp0 (ts, WSI_DICOM_TS_EXPLICIT_LE) == 0
      || g_strcmp0 (ts, WSI_DICOM_TS_IMPLICIT_LE) == 0)
    return WSI_DICOM_PIXELS_NATIVE;
  if (g_strcmp0 (ts, WSI_DICOM_TS_JPEG_BASELINE) == 0)
    return WSI_DICOM_PIXELS_JPEG;
  if (g_strcmp0 (ts, WSI_DICOM_TS_J2K_LOSSLESS) == 0
      || g_strcmp0 (ts, WSI_DICOM_TS_J2K) == 0
      || g_strcmp0 (ts, WSI_DICOM_TS_HTJ2K_LOSSLESS) == 0
      || g_strcmp0 (ts, WSI_DICOM_TS_HTJ2K_LOSSLESS_RPCL) == 0
      || g_strcmp0 (ts, WSI_DICOM_TS_HTJ2K) == 0)
    return WSI_DICOM_PIXELS_JPEG2000;
  if (g_strcmp0 (ts, WSI_DICOM_TS_JPEGLS_LOSSLESS) == 0
      || g_strcmp0 (ts, WSI_DICOM_TS_JPEGLS_NEAR) == 0)
    return WSI_DICOM_PIXELS_JPEGLS;
  return WSI_DICOM_PIXELS_UNSUPPORTED;
}

static gboolean
instance_parse (Parser * p, gboolean header_only)
{
  WsiDicomInstance *inst = p->instance;
  const guint8 *head;
  guint64 next;

  head = window_at (&p->window, 0, PREAMBLE_BYTES + 4, p->error);
  if (head == NULL)
    return FALSE;
  if (!wsi_dicom_sniff (head, PREAMBLE_BYTES + 4))
    return fail (p->error, p->window.uri, "not a DICOM file (no DICM after "
        "the 128-byte preamble)");
  if (header_only)
    p->last_tag = TAG_TOTAL_ROWS;
  if (!walk_elements (p, PREAMBLE_BYTES + 4, p->window.size, FALSE, &next))
    return FALSE;
  if (header_only && p->meta_done) {
    /* The identity is read; Pixel Data is looked for by the full parse. */
    inst->pixels = pixels_from_transfer_syntax (inst->transfer_syntax);
    return TRUE;
  }
  if (!p->pixel_data_found)
    return fail (p->error, p->window.uri, "no Pixel Data");
  inst->pixels = pixels_from_transfer_syntax (inst->transfer_syntax);
  if (header_only || inst->pixels == WSI_DICOM_PIXELS_UNSUPPORTED)
    return TRUE;
  return frames_locate (p);
}

gboolean
wsi_dicom_instance_read (WsiDicomInstance * instance, WsiByteSource * source,
    gboolean header_only, GError ** error)
{
  GError *local = NULL;
  Parser p;
  gboolean ok;

  memset (instance, 0, sizeof (*instance));
  memset (&p, 0, sizeof (p));
  p.window.source = source;
  p.window.uri = wsi_byte_source_get_display_uri (source);
  p.window.size = wsi_byte_source_get_size (source);
  p.window.window_bytes = header_only ? IDENTITY_WINDOW_BYTES : WINDOW_BYTES;
  p.instance = instance;
  p.error = &local;
  p.item_z = p.first_z = NAN;

  ok = instance_parse (&p, header_only) && local == NULL;
  g_free (p.window.buf);
  if (!ok) {
    if (local == NULL)
      fail (&local, p.window.uri, "unreadable DICOM data set");
    /* Byte-source errors keep their own domain; say what was being read. */
    if (local->domain != WSI_SLIDE_ERROR) {
      GError *wrapped = g_error_new (WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_OPEN,
          "%s", local->message);
      g_error_free (local);
      local = wrapped;
    }
    g_propagate_error (error, local);
    wsi_dicom_instance_clear (instance);
  }
  return ok;
}

void
wsi_dicom_instance_clear (WsiDicomInstance * instance)
{
  g_free (instance->sop_class_uid);
  g_free (instance->sop_instance_uid);
  g_free (instance->series_uid);
  g_free (instance->transfer_syntax);
  g_free (instance->image_type);
  g_free (instance->photometric);
  g_free (instance->concatenation_uid);
  g_free (instance->frame_column_position);
  g_free (instance->frame_row_position);
  g_free (instance->frame_in_first_plane);
  g_free (instance->frames);
  memset (instance, 0, sizeof (*instance));
}
