/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitestdicom.c: DICOM WSI series from TIFF pyramids (see wsitestdicom.h).
 * Explicit VR little endian throughout; the shared functional groups are
 * written with defined lengths, the per-frame ones with undefined lengths,
 * so that readers meet both encodings.
 */

#include "wsitestdicom.h"

#include <string.h>
#include <glib/gstdio.h>
#include <tiffio.h>
#ifdef WSI_TEST_HAVE_OPENJPEG
#include <openjpeg.h>
#endif
#ifdef WSI_TEST_HAVE_CHARLS
#include <charls/charls.h>
#endif

#define SOP_CLASS_WSI "1.2.840.10008.5.1.4.1.1.77.1.6"
#define TS_EXPLICIT_LE "1.2.840.10008.1.2.1"
#define TS_JPEG_BASELINE "1.2.840.10008.1.2.4.50"
#define TS_J2K_LOSSLESS "1.2.840.10008.1.2.4.90"
#define TS_J2K "1.2.840.10008.1.2.4.91"
#define TS_HTJ2K_LOSSLESS "1.2.840.10008.1.2.4.201"
#define TS_JPEGLS_LOSSLESS "1.2.840.10008.1.2.4.80"
#define IMPLEMENTATION_UID "2.25.80302813137786398554742050926734630921"

void
wsi_test_dicom_spec_init (WsiTestDicomSpec * spec)
{
  memset (spec, 0, sizeof (*spec));
  spec->table = WSI_TEST_DICOM_TABLE_BASIC;
  spec->seed = 1;
}

#define ICC_PROFILE_BYTES 600

const guint8 *
wsi_test_dicom_icc_profile (gsize * size)
{
  static guint8 profile[ICC_PROFILE_BYTES];
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    guint i;
    memcpy (profile + 36, "acsp", 4);
    for (i = 128; i < ICC_PROFILE_BYTES; i++)
      profile[i] = (guint8) (i * 7 + 3);
    profile[3] = ICC_PROFILE_BYTES & 0xFF;
    profile[2] = ICC_PROFILE_BYTES >> 8;
    g_once_init_leave (&done, 1);
  }
  *size = ICC_PROFILE_BYTES;
  return profile;
}

/* ---- element writers ---------------------------------------------------- */

static void
put16 (GByteArray * b, guint16 v)
{
  guint8 le[2] = { v & 0xFF, v >> 8 };
  g_byte_array_append (b, le, 2);
}

static void
put32 (GByteArray * b, guint32 v)
{
  guint8 le[4] = { v & 0xFF, (v >> 8) & 0xFF, (v >> 16) & 0xFF, v >> 24 };
  g_byte_array_append (b, le, 4);
}

static void
put64 (GByteArray * b, guint64 v)
{
  put32 (b, (guint32) v);
  put32 (b, (guint32) (v >> 32));
}

static gboolean
long_vr (const gchar * vr)
{
  return strstr ("OB OD OF OL OV OW SQ SV UC UN UR UT UV", vr) != NULL;
}

static void
header (GByteArray * b, guint16 g, guint16 e, const gchar * vr, guint32 len)
{
  put16 (b, g);
  put16 (b, e);
  g_byte_array_append (b, (const guint8 *) vr, 2);
  if (long_vr (vr)) {
    put16 (b, 0);
    put32 (b, len);
  } else {
    put16 (b, (guint16) len);
  }
}

/* A text value, padded to even length (UI with NUL, others with space). */
static void
el_text (GByteArray * b, guint16 g, guint16 e, const gchar * vr,
    const gchar * text)
{
  gsize n = strlen (text);
  guint8 pad = strcmp (vr, "UI") == 0 ? 0 : ' ';

  header (b, g, e, vr, n + (n & 1));
  g_byte_array_append (b, (const guint8 *) text, n);
  if (n & 1)
    g_byte_array_append (b, &pad, 1);
}

static void
el_number (GByteArray * b, guint16 g, guint16 e, const gchar * vr,
    guint64 value)
{
  gchar *text;

  if (strcmp (vr, "US") == 0) {
    header (b, g, e, vr, 2);
    put16 (b, value);
  } else if (strcmp (vr, "UL") == 0 || strcmp (vr, "SL") == 0) {
    header (b, g, e, vr, 4);
    put32 (b, value);
  } else {
    text = g_strdup_printf ("%" G_GUINT64_FORMAT, value);
    el_text (b, g, e, vr, text);
    g_free (text);
  }
}

static void
el_bytes (GByteArray * b, guint16 g, guint16 e, const gchar * vr,
    const guint8 * data, gsize n)
{
  header (b, g, e, vr, n);
  g_byte_array_append (b, data, n);
}

/* A sequence of one item, both of defined length. */
static void
el_sequence_defined (GByteArray * b, guint16 g, guint16 e, GByteArray * item)
{
  header (b, g, e, "SQ", item->len + 8);
  put16 (b, 0xFFFE);
  put16 (b, 0xE000);
  put32 (b, item->len);
  g_byte_array_append (b, item->data, item->len);
}

static void
item_begin_undefined (GByteArray * b)
{
  put16 (b, 0xFFFE);
  put16 (b, 0xE000);
  put32 (b, 0xFFFFFFFF);
}

static void
delimiter (GByteArray * b, guint16 e)
{
  put16 (b, 0xFFFE);
  put16 (b, e);
  put32 (b, 0);
}

/* ---- JPEG 2000 frames ------------------------------------------------------ */

#ifdef WSI_TEST_HAVE_OPENJPEG
/* A growing buffer as an OpenJPEG output stream. */
typedef struct
{
  GByteArray *bytes;
  gsize position;
} J2kOutput;

static OPJ_SIZE_T
j2k_write (void *data, OPJ_SIZE_T n, void *user)
{
  J2kOutput *o = user;

  if (o->position + n > o->bytes->len)
    g_byte_array_set_size (o->bytes, o->position + n);
  memcpy (o->bytes->data + o->position, data, n);
  o->position += n;
  return n;
}

static OPJ_OFF_T
j2k_skip (OPJ_OFF_T n, void *user)
{
  J2kOutput *o = user;

  if ((OPJ_OFF_T) o->position + n < 0)
    return -1;
  o->position += n;
  if (o->position > o->bytes->len)
    g_byte_array_set_size (o->bytes, o->position);
  return n;
}

static OPJ_BOOL
j2k_seek (OPJ_OFF_T n, void *user)
{
  J2kOutput *o = user;

  if (n < 0)
    return OPJ_FALSE;
  o->position = n;
  if (o->position > o->bytes->len)
    g_byte_array_set_size (o->bytes, o->position);
  return OPJ_TRUE;
}

/* Resolutions: 5, fewer when the tile is too small for them. */
static gint
j2k_resolutions (guint w, guint h)
{
  gint n = 5;

  while (n > 1 && (1u << (n - 1)) > MIN (w, h))
    n--;
  return n;
}

/* @rgb (w x h interleaved RGB) as a JPEG 2000 codestream. */
static GBytes *
j2k_encode (const guint8 * rgb, guint w, guint h, gboolean lossy)
{
  opj_image_cmptparm_t comps[3];
  opj_cparameters_t parameters;
  opj_image_t *image;
  opj_codec_t *codec;
  opj_stream_t *stream;
  J2kOutput out = { g_byte_array_new (), 0 };
  gboolean ok;
  guint c, i;

  memset (comps, 0, sizeof (comps));
  for (c = 0; c < 3; c++) {
    comps[c].dx = comps[c].dy = 1;
    comps[c].w = w;
    comps[c].h = h;
    comps[c].prec = 8;
  }
  image = opj_image_create (3, comps, OPJ_CLRSPC_SRGB);
  image->x1 = w;
  image->y1 = h;
  for (c = 0; c < 3; c++)
    for (i = 0; i < w * h; i++)
      image->comps[c].data[i] = rgb[3 * i + c];
  opj_set_default_encoder_parameters (&parameters);
  parameters.numresolution = j2k_resolutions (w, h);
  parameters.tcp_mct = 1;
  parameters.tcp_numlayers = 1;
  if (lossy) {
    parameters.irreversible = 1;
    parameters.cp_fixed_quality = 1;
    parameters.tcp_distoratio[0] = 52;
  } else {
    parameters.cp_disto_alloc = 1;
    parameters.tcp_rates[0] = 0;
  }
  codec = opj_create_compress (OPJ_CODEC_J2K);
  stream = opj_stream_create (64 * 1024, OPJ_FALSE);
  opj_stream_set_user_data (stream, &out, NULL);
  opj_stream_set_write_function (stream, j2k_write);
  opj_stream_set_skip_function (stream, j2k_skip);
  opj_stream_set_seek_function (stream, j2k_seek);
  ok = opj_setup_encoder (codec, &parameters, image)
      && opj_start_compress (codec, image, stream)
      && opj_encode (codec, stream) && opj_end_compress (codec, stream);
  opj_stream_destroy (stream);
  opj_destroy_codec (codec);
  opj_image_destroy (image);
  if (!ok) {
    g_byte_array_unref (out.bytes);
    return NULL;
  }
  return g_byte_array_free_to_bytes (out.bytes);
}
#endif

/* @rgb as an HTJ2K lossless codestream: ojph_compress on a PPM file. */
static GBytes *
htj2k_encode (const guint8 * rgb, guint w, guint h, GError ** error)
{
  gchar *dir = g_dir_make_tmp ("wsitestdicom-XXXXXX", error);
  gchar *ppm, *j2c, *header, *decomps, *out = NULL;
  gchar *argv[] = { (gchar *) "ojph_compress", (gchar *) "-i", NULL,
    (gchar *) "-o", NULL, (gchar *) "-reversible", (gchar *) "true",
    (gchar *) "-num_decomps", NULL, NULL
  };
  GByteArray *file = g_byte_array_new ();
  GBytes *encoded = NULL;
  gsize size;
  gint status = 0;

  if (dir == NULL) {
    g_byte_array_unref (file);
    return NULL;
  }
  ppm = g_build_filename (dir, "frame.ppm", NULL);
  j2c = g_build_filename (dir, "frame.j2c", NULL);
  header = g_strdup_printf ("P6\n%u %u\n255\n", w, h);
  decomps = g_strdup_printf ("%d", j2k_resolutions (w, h) - 1);
  argv[2] = ppm;
  argv[4] = j2c;
  argv[8] = decomps;
  g_byte_array_append (file, (const guint8 *) header, strlen (header));
  g_byte_array_append (file, rgb, (gsize) w * h * 3);
  if (g_file_set_contents (ppm, (const gchar *) file->data, file->len, error)
      && g_spawn_sync (NULL, argv, NULL, G_SPAWN_SEARCH_PATH
          | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL,
          NULL, NULL, NULL, &status, error)
      && g_spawn_check_wait_status (status, error)
      && g_file_get_contents (j2c, &out, &size, error))
    encoded = g_bytes_new_take (out, size);
  g_unlink (ppm);
  g_unlink (j2c);
  g_rmdir (dir);
  g_byte_array_unref (file);
  g_free (decomps);
  g_free (header);
  g_free (j2c);
  g_free (ppm);
  g_free (dir);
  return encoded;
}

/* Each RGB frame of @frames as a JPEG 2000 codestream, in place. */
static gboolean
frames_to_j2k (GPtrArray * frames, guint w, guint h, WsiTestDicomJ2k kind,
    GError ** error)
{
#ifdef WSI_TEST_HAVE_OPENJPEG
  guint t;

  for (t = 0; t < frames->len; t++) {
    const guint8 *rgb = g_bytes_get_data (frames->pdata[t], NULL);
    GBytes *encoded;

    if (kind == WSI_TEST_DICOM_J2K_HT_LOSSLESS) {
      GError *local = NULL;
      encoded = htj2k_encode (rgb, w, h, &local);
      if (encoded == NULL) {
        g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "ojph_compress "
            "(openjph-tools) could not encode tile %u: %s", t,
            local != NULL ? local->message : "?");
        g_clear_error (&local);
        return FALSE;
      }
      g_bytes_unref (frames->pdata[t]);
      frames->pdata[t] = encoded;
      continue;
    }
    encoded = j2k_encode (rgb, w, h, kind == WSI_TEST_DICOM_J2K_LOSSY);
    if (encoded == NULL) {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
          "OpenJPEG could not encode tile %u", t);
      return FALSE;
    }
    g_bytes_unref (frames->pdata[t]);
    frames->pdata[t] = encoded;
  }
  return TRUE;
#else
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
      "JPEG 2000 frames need OpenJPEG, which this build lacks");
  return FALSE;
#endif
}

/* ---- JPEG-LS frames ------------------------------------------------------- */

/* Each RGB frame of @frames as a JPEG-LS lossless stream, in place. */
static gboolean
frames_to_jpegls (GPtrArray * frames, guint w, guint h,
    WsiTestDicomJpegLs mode, GError ** error)
{
#ifdef WSI_TEST_HAVE_CHARLS
  charls_frame_info info = { w, h, 8, 3 };
  guint t;

  for (t = 0; t < frames->len; t++) {
    const guint8 *rgb = g_bytes_get_data (frames->pdata[t], NULL);
    gsize n = (gsize) w * h * 3, i;
    guint8 *source = g_malloc (n), *out;
    charls_jpegls_encoder *encoder = charls_jpegls_encoder_create ();
    size_t capacity = 0, written = 0;
    charls_jpegls_errc code;

    /* CharLS takes planar pixels for mode NONE, interleaved otherwise. */
    if (mode == WSI_TEST_DICOM_JPEGLS_PLANAR)
      for (i = 0; i < (gsize) w * h; i++) {
        source[i] = rgb[3 * i];
        source[(gsize) w * h + i] = rgb[3 * i + 1];
        source[2 * (gsize) w * h + i] = rgb[3 * i + 2];
    } else
      memcpy (source, rgb, n);
    code = charls_jpegls_encoder_set_frame_info (encoder, &info);
    if (code == 0)
      code = charls_jpegls_encoder_set_interleave_mode (encoder,
          mode == WSI_TEST_DICOM_JPEGLS_PLANAR ? CHARLS_INTERLEAVE_MODE_NONE
          : mode == WSI_TEST_DICOM_JPEGLS_LINE ? CHARLS_INTERLEAVE_MODE_LINE
          : CHARLS_INTERLEAVE_MODE_SAMPLE);
    if (code == 0)
      code = charls_jpegls_encoder_get_estimated_destination_size (encoder,
          &capacity);
    out = g_malloc (capacity);
    if (code == 0)
      code = charls_jpegls_encoder_set_destination_buffer (encoder, out,
          capacity);
    if (code == 0)
      code = charls_jpegls_encoder_encode_from_buffer (encoder, source, n, 0);
    if (code == 0)
      code = charls_jpegls_encoder_get_bytes_written (encoder, &written);
    charls_jpegls_encoder_destroy (encoder);
    g_free (source);
    if (code != 0) {
      g_free (out);
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
          "CharLS could not encode tile %u: %s", t,
          charls_get_error_message (code));
      return FALSE;
    }
    g_bytes_unref (frames->pdata[t]);
    frames->pdata[t] = g_bytes_new_take (out, written);
  }
  return TRUE;
#else
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
      "JPEG-LS frames need CharLS, which this build lacks");
  return FALSE;
#endif
}

/* ---- one level ---------------------------------------------------------- */

typedef struct
{
  guint32 width, height, tile_w, tile_h;
  guint across, down;
  gboolean rgb;                 /* TIFF photometric RGB */
  GPtrArray *frames;            /* GBytes per tile, grid order */
} Level;

static void
level_clear (Level * level)
{
  if (level->frames != NULL)
    g_ptr_array_unref (level->frames);
  memset (level, 0, sizeof (*level));
}

/* SOI, the tables (between their SOI and EOI), the tile after its SOI. */
static GBytes *
jpeg_splice (const guint8 * tables, guint32 tables_size, const guint8 * tile,
    gsize tile_size)
{
  GByteArray *out = g_byte_array_sized_new (tables_size + tile_size);

  g_byte_array_append (out, tile, 2);
  if (tables != NULL && tables_size > 4)
    g_byte_array_append (out, tables + 2, tables_size - 4);
  g_byte_array_append (out, tile + 2, tile_size - 2);
  return g_byte_array_free_to_bytes (out);
}

static gboolean
level_read (TIFF * tif, Level * level, const WsiTestDicomSpec * spec,
    GError ** error)
{
  /* JPEG 2000 frames start as libtiff's RGB decode. */
  gboolean uncompressed = spec->uncompressed
      || spec->j2k != WSI_TEST_DICOM_J2K_NONE
      || spec->jpegls != WSI_TEST_DICOM_JPEGLS_NONE;
  guint16 photometric = 0;
  guint32 tables_size = 0;
  guint8 *tables = NULL;
  guint64 *counts = NULL;
  guint t, n;

  TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &level->width);
  TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &level->height);
  TIFFGetField (tif, TIFFTAG_TILEWIDTH, &level->tile_w);
  TIFFGetField (tif, TIFFTAG_TILELENGTH, &level->tile_h);
  TIFFGetField (tif, TIFFTAG_PHOTOMETRIC, &photometric);
  level->rgb = photometric == PHOTOMETRIC_RGB;
  level->across = (level->width + level->tile_w - 1) / level->tile_w;
  level->down = (level->height + level->tile_h - 1) / level->tile_h;
  n = level->across * level->down;
  level->frames = g_ptr_array_new_with_free_func ((GDestroyNotify)
      g_bytes_unref);
  if (!uncompressed) {
    TIFFGetField (tif, TIFFTAG_JPEGTABLES, &tables_size, &tables);
    TIFFGetField (tif, TIFFTAG_TILEBYTECOUNTS, &counts);
  } else if (photometric == PHOTOMETRIC_YCBCR) {
    TIFFSetField (tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
  }
  for (t = 0; t < n; t++) {
    gsize size = uncompressed ? (gsize) level->tile_w * level->tile_h * 3
        : counts[t];
    guint8 *buf = g_malloc (size);
    tmsize_t got = uncompressed ? TIFFReadEncodedTile (tif, t, buf, size)
        : TIFFReadRawTile (tif, t, buf, size);
    if (got != (tmsize_t) size) {
      g_free (buf);
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
          "tile %u of a TIFF level could not be read", t);
      return FALSE;
    }
    if (uncompressed)
      g_ptr_array_add (level->frames, g_bytes_new_take (buf, size));
    else {
      g_ptr_array_add (level->frames, jpeg_splice (tables, tables_size, buf,
              size));
      g_free (buf);
    }
  }
  if (spec->jpegls != WSI_TEST_DICOM_JPEGLS_NONE)
    return frames_to_jpegls (level->frames, level->tile_w, level->tile_h,
        spec->jpegls, error);
  if (spec->j2k != WSI_TEST_DICOM_J2K_NONE)
    return frames_to_j2k (level->frames, level->tile_w, level->tile_h,
        spec->j2k, error);
  return TRUE;
}

/* ---- one instance ------------------------------------------------------- */

typedef struct
{
  const WsiTestDicomSpec *spec;
  const Level *level;
  gchar *series_uid, *study_uid, *instance_uid;
  const gchar *flavor;          /* VOLUME or THUMBNAIL */
  guint instance_number;
  gdouble downsample;           /* level 0 width / this level's */
  gboolean damaged;             /* damage applies to this instance */
  guint *order;                 /* frame k is tile order[k] */
  guint n_frames;
  /* A part of a concatenation: its UID, number (1-based) and the level's
   * frame number its first frame has (0-based); NULL UID: a whole level. */
  gchar *concatenation_uid;
  guint concatenation_number;
  guint concatenation_offset;
} Instance;

static void
write_meta (GByteArray * out, const Instance * in, const gchar * ts)
{
  GByteArray *meta = g_byte_array_new ();
  static const guint8 version[2] = { 0, 1 };
  guint8 preamble[128] = { 0, };

  el_bytes (meta, 0x0002, 0x0001, "OB", version, 2);
  el_text (meta, 0x0002, 0x0002, "UI", SOP_CLASS_WSI);
  el_text (meta, 0x0002, 0x0003, "UI", in->instance_uid);
  el_text (meta, 0x0002, 0x0010, "UI", ts);
  el_text (meta, 0x0002, 0x0012, "UI", IMPLEMENTATION_UID);
  g_byte_array_append (out, preamble, sizeof (preamble));
  g_byte_array_append (out, (const guint8 *) "DICM", 4);
  header (out, 0x0002, 0x0000, "UL", 4);
  put32 (out, meta->len);
  g_byte_array_append (out, meta->data, meta->len);
  g_byte_array_unref (meta);
}

/* OpticalPathSequence: one item, when the spec asks for its attributes. */
static void
write_optical_path (GByteArray * out, const WsiTestDicomSpec * spec)
{
  GByteArray *item;

  if (spec->objective_power <= 0 && !spec->icc_profile)
    return;
  item = g_byte_array_new ();
  if (spec->icc_profile) {
    gsize size;
    const guint8 *profile = wsi_test_dicom_icc_profile (&size);
    el_bytes (item, 0x0028, 0x2000, "OB", profile, size);
  }
  el_text (item, 0x0048, 0x0106, "SH", "1");
  if (spec->objective_power > 0) {
    gchar power[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd (power, sizeof (power), "%g", spec->objective_power);
    el_text (item, 0x0048, 0x0112, "DS", power);
  }
  el_sequence_defined (out, 0x0048, 0x0105, item);
  g_byte_array_unref (item);
}

static void
write_shared_groups (GByteArray * out, const Instance * in)
{
  GByteArray *measures = g_byte_array_new (), *shared = g_byte_array_new ();
  gchar spacing[64], mm[G_ASCII_DTOSTR_BUF_SIZE];

  /* Each level's spacing scales with its size. */
  if (in->spec->mpp > 0) {
    g_ascii_formatd (mm, sizeof (mm), "%.8g",
        in->spec->mpp / 1000.0 * in->downsample);
    g_snprintf (spacing, sizeof (spacing), "%s\\%s", mm, mm);
    el_text (measures, 0x0018, 0x0050, "DS", "0.001");
    el_text (measures, 0x0028, 0x0030, "DS", spacing);
  } else {
    el_text (measures, 0x0018, 0x0050, "DS", "0.001");
  }
  el_sequence_defined (shared, 0x0028, 0x9110, measures);
  el_sequence_defined (out, 0x5200, 0x9229, shared);
  g_byte_array_unref (measures);
  g_byte_array_unref (shared);
}

/* Per-frame plane positions, with undefined lengths. */
static void
write_per_frame_groups (GByteArray * out, const Instance * in)
{
  const Level *level = in->level;
  guint k;

  header (out, 0x5200, 0x9230, "SQ", 0xFFFFFFFF);
  for (k = 0; k < in->n_frames; k++) {
    guint tile = in->order[k];
    guint col = tile % level->across, row = tile / level->across;
    item_begin_undefined (out);
    header (out, 0x0048, 0x021A, "SQ", 0xFFFFFFFF);
    item_begin_undefined (out);
    el_text (out, 0x0040, 0x072A, "DS", "0");
    el_text (out, 0x0040, 0x073A, "DS", "0");
    el_text (out, 0x0040, 0x074A, "DS", "0");
    el_number (out, 0x0048, 0x021E, "SL", col * level->tile_w + 1);
    el_number (out, 0x0048, 0x021F, "SL", row * level->tile_h + 1);
    delimiter (out, 0xE00D);
    delimiter (out, 0xE0DD);
    delimiter (out, 0xE00D);
  }
  delimiter (out, 0xE0DD);
}

static const guint8 *
frame_data (const Instance * in, guint k, gsize * size)
{
  return g_bytes_get_data (in->level->frames->pdata[in->order[k]], size);
}

/* JPEG frame whose entropy-coded data is EOI markers from its 16th byte
 * on (libjpeg: premature end of data, in the first rows); a JPEG 2000
 * frame likewise from the 16th byte of its first tile's packet data. */
static guint8 *
frame_broken (const guint8 * data, gsize size)
{
  guint8 *copy = g_memdup2 (data, size);
  gsize i, start = size;

  for (i = 2; i + 4 < size; i++) {
    if (data[i] == 0xFF && data[i + 1] == 0xDA) {
      start = i + 2 + ((data[i + 2] << 8) | data[i + 3]) + 16;
      break;
    }
    /* JPEG 2000: the packets after the first start-of-data (SOD). */
    if (data[i] == 0xFF && data[i + 1] == 0x93) {
      start = i + 2 + 16;
      break;
    }
  }
  for (i = start; i + 1 < size; i += 2) {
    copy[i] = 0xFF;
    copy[i + 1] = 0xD9;
  }
  return copy;
}

/* One frame as @items fragment items: even-sized pieces (a pad byte inside
 * the codestream would corrupt it), the last one padded to even length. */
static void
frame_items (GByteArray * out, const guint8 * data, gsize size, guint items)
{
  gsize piece = (size / items) & ~(gsize) 1, done = 0;
  guint8 zero = 0;
  guint i;

  for (i = 0; i < items; i++) {
    gsize length = i + 1 < items ? piece : size - done;
    put16 (out, 0xFFFE);
    put16 (out, 0xE000);
    put32 (out, length + (length & 1));
    g_byte_array_append (out, data + done, length);
    if (length & 1)
      g_byte_array_append (out, &zero, 1);
    done += length;
  }
}

static void
write_encapsulated (GByteArray * out, const Instance * in)
{
  const WsiTestDicomSpec *spec = in->spec;
  guint64 *offsets = g_new0 (guint64, in->n_frames);
  guint64 *lengths = g_new0 (guint64, in->n_frames);
  GByteArray *fragments = g_byte_array_new ();
  guint k;

  for (k = 0; k < in->n_frames; k++) {
    gsize size;
    const guint8 *data = frame_data (in, k, &size);
    guint8 *broken = NULL;

    if (in->damaged && spec->damage == WSI_TEST_DICOM_DAMAGE_JPEG_DATA
        && k == 1)
      data = broken = frame_broken (data, size);
    offsets[k] = fragments->len;
    lengths[k] = size;
    frame_items (fragments, data, size, MAX (spec->fragments, 1));
    g_free (broken);
  }
  if (in->damaged && spec->damage == WSI_TEST_DICOM_DAMAGE_BAD_OFFSET
      && in->n_frames > 2)
    offsets[2] += 6;

  if (spec->table == WSI_TEST_DICOM_TABLE_EXTENDED) {
    header (out, 0x7FE0, 0x0001, "OV", in->n_frames * 8);
    for (k = 0; k < in->n_frames; k++)
      put64 (out, offsets[k]);
    header (out, 0x7FE0, 0x0002, "OV", in->n_frames * 8);
    for (k = 0; k < in->n_frames; k++)
      put64 (out, lengths[k]);
  }
  header (out, 0x7FE0, 0x0010, "OB", 0xFFFFFFFF);
  put16 (out, 0xFFFE);
  put16 (out, 0xE000);
  if (spec->table == WSI_TEST_DICOM_TABLE_BASIC) {
    put32 (out, in->n_frames * 4);
    for (k = 0; k < in->n_frames; k++)
      put32 (out, (guint32) offsets[k]);
  } else {
    put32 (out, 0);
  }
  g_byte_array_append (out, fragments->data, fragments->len);
  delimiter (out, 0xE0DD);
  g_byte_array_unref (fragments);
  g_free (offsets);
  g_free (lengths);
}

static void
write_native (GByteArray * out, const Instance * in)
{
  gsize total = 0, size;
  guint k;
  guint8 zero = 0;

  for (k = 0; k < in->n_frames; k++) {
    frame_data (in, k, &size);
    total += size;
  }
  header (out, 0x7FE0, 0x0010, "OB", total + (total & 1));
  for (k = 0; k < in->n_frames; k++) {
    const guint8 *data = frame_data (in, k, &size);
    g_byte_array_append (out, data, size);
  }
  if (total & 1)
    g_byte_array_append (out, &zero, 1);
}

static GByteArray *
instance_bytes (const Instance * in)
{
  const WsiTestDicomSpec *spec = in->spec;
  const Level *level = in->level;
  gboolean jpegls = spec->jpegls != WSI_TEST_DICOM_JPEGLS_NONE;
  gboolean j2k = !jpegls && spec->j2k != WSI_TEST_DICOM_J2K_NONE;
  gboolean native = spec->uncompressed && !j2k && !jpegls;
  const gchar *ts = jpegls ? TS_JPEGLS_LOSSLESS : j2k
      ? (spec->j2k == WSI_TEST_DICOM_J2K_LOSSY ? TS_J2K
      : spec->j2k == WSI_TEST_DICOM_J2K_HT_LOSSLESS ? TS_HTJ2K_LOSSLESS
      : TS_J2K_LOSSLESS) : native ? TS_EXPLICIT_LE : TS_JPEG_BASELINE;
  const gchar *photometric = jpegls ? "RGB" : j2k
      ? (spec->j2k == WSI_TEST_DICOM_J2K_LOSSY ? "YBR_ICT" : "YBR_RCT")
      : native || level->rgb ? "RGB" : "YBR_FULL_422";
  GByteArray *out = g_byte_array_new ();
  gchar *image_type = g_strdup_printf ("DERIVED\\PRIMARY\\%s\\NONE",
      in->flavor);
  guint32 frames_said = in->n_frames;

  if (in->damaged && spec->damage == WSI_TEST_DICOM_DAMAGE_FRAME_COUNT)
    frames_said--;
  write_meta (out, in, ts);
  el_text (out, 0x0008, 0x0008, "CS", image_type);
  el_text (out, 0x0008, 0x0016, "UI", SOP_CLASS_WSI);
  el_text (out, 0x0008, 0x0018, "UI", in->instance_uid);
  el_text (out, 0x0008, 0x0060, "CS", "SM");
  el_text (out, 0x0008, 0x0070, "LO", "gst-wsi test generator");
  el_text (out, 0x0010, 0x0010, "PN", "Synthetic^Slide");
  el_text (out, 0x0010, 0x0020, "LO", "WSI-TEST");
  el_text (out, 0x0020, 0x000D, "UI", in->study_uid);
  el_text (out, 0x0020, 0x000E, "UI", in->series_uid);
  el_number (out, 0x0020, 0x0013, "IS", in->instance_number);
  if (in->concatenation_uid != NULL) {
    el_text (out, 0x0020, 0x9161, "UI", in->concatenation_uid);
    el_number (out, 0x0020, 0x9162, "US", in->concatenation_number);
    el_number (out, 0x0020, 0x9163, "US", 2);
    el_number (out, 0x0020, 0x9228, "UL", in->concatenation_offset);
  }
  el_text (out, 0x0020, 0x9311, "CS", spec->sparse ? "TILED_SPARSE" :
      "TILED_FULL");
  el_number (out, 0x0028, 0x0002, "US", 3);
  el_text (out, 0x0028, 0x0004, "CS", photometric);
  el_number (out, 0x0028, 0x0006, "US", 0);
  el_number (out, 0x0028, 0x0008, "IS", frames_said);
  el_number (out, 0x0028, 0x0010, "US", level->tile_h);
  el_number (out, 0x0028, 0x0011, "US", level->tile_w);
  el_number (out, 0x0028, 0x0100, "US", 8);
  el_number (out, 0x0028, 0x0101, "US", 8);
  el_number (out, 0x0028, 0x0102, "US", 7);
  el_number (out, 0x0028, 0x0103, "US", 0);
  el_text (out, 0x0028, 0x2110, "CS", native || jpegls
      || spec->j2k == WSI_TEST_DICOM_J2K_LOSSLESS
      || spec->j2k == WSI_TEST_DICOM_J2K_HT_LOSSLESS ? "00" : "01");
  el_number (out, 0x0048, 0x0006, "UL", level->width);
  el_number (out, 0x0048, 0x0007, "UL", level->height);
  write_optical_path (out, spec);
  el_number (out, 0x0048, 0x0303, "UL", 1);
  write_shared_groups (out, in);
  if (spec->sparse)
    write_per_frame_groups (out, in);
  if (native)
    write_native (out, in);
  else
    write_encapsulated (out, in);
  if (in->damaged && spec->damage == WSI_TEST_DICOM_DAMAGE_TRUNCATED_ITEM) {
    gsize last;
    frame_data (in, in->n_frames - 1, &last);
    /* Cut inside the last fragment: its item overruns the file. */
    g_byte_array_set_size (out, out->len - 8 - last / 2);
  }
  g_free (image_type);
  return out;
}

/* Which tiles become frames, in file order. */
static guint *
frame_order (const WsiTestDicomSpec * spec, const Level * level, guint * n)
{
  guint tiles = level->across * level->down, t;
  guint *order = g_new (guint, tiles);

  *n = 0;
  for (t = 0; t < tiles; t++) {
    guint tile = spec->sparse ? tiles - 1 - t : t;
    if (spec->sparse && spec->omit_every > 0
        && tile % spec->omit_every == spec->omit_every - 1)
      continue;
    order[(*n)++] = tile;
  }
  return order;
}

static gchar *
make_uid (guint32 seed, guint a, guint b)
{
  return g_strdup_printf ("2.25.%u%04u%04u", seed + 1000, a, b);
}

static gboolean
bytes_write (const gchar * path, Instance * in, GError ** error)
{
  GByteArray *bytes = instance_bytes (in);
  gboolean ok = g_file_set_contents (path, (const gchar *) bytes->data,
      bytes->len, error);

  g_byte_array_unref (bytes);
  return ok;
}

static gboolean
instance_write (const gchar * path, Instance * in, GError ** error)
{
  guint *order;
  guint n;
  gboolean ok;

  order = frame_order (in->spec, in->level, &n);
  in->order = order;
  in->n_frames = n;
  ok = bytes_write (path, in, error);
  g_free (order);
  in->order = NULL;
  return ok;
}

/* Level 0 as two instances of one concatenation: the first half of the
 * frames at @path, the rest at @path2. */
static gboolean
concatenation_write (const gchar * path, const gchar * path2, Instance * in,
    guint32 seed, GError ** error)
{
  gchar *uid = make_uid (seed, 5, 0), *second_uid = make_uid (seed, 6, 0);
  gchar *first_uid = in->instance_uid;
  guint n, half, *order = frame_order (in->spec, in->level, &n);
  gboolean ok;

  half = n / 2;
  in->concatenation_uid = uid;
  in->concatenation_number = 1;
  in->concatenation_offset = 0;
  in->order = order;
  in->n_frames = half;
  ok = bytes_write (path, in, error);
  in->concatenation_number = 2;
  in->concatenation_offset = half;
  in->order = order + half;
  in->n_frames = n - half;
  in->instance_uid = second_uid;
  in->damaged = FALSE;
  ok = ok && bytes_write (path2, in, error);
  in->instance_uid = first_uid;
  in->concatenation_uid = NULL;
  in->order = NULL;
  g_free (order);
  g_free (second_uid);
  g_free (uid);
  return ok;
}

gboolean
wsi_test_dicom_from_tiff (const gchar * tiff_path, const gchar * out_dir,
    const gchar * prefix, const WsiTestDicomSpec * spec, gchar *** paths,
    GError ** error)
{
  TIFF *tif = TIFFOpen (tiff_path, "r");
  GPtrArray *written = g_ptr_array_new ();
  Level level = { 0, }, smallest = { 0, };
  guint n_levels = 0, width0 = 0;
  gboolean ok = TRUE;
  Instance in = { 0, };

  if (tif == NULL) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
        "%s: libtiff cannot open it", tiff_path);
    g_ptr_array_unref (written);
    return FALSE;
  }
  g_mkdir_with_parents (out_dir, 0755);
  in.spec = spec;
  in.series_uid = make_uid (spec->seed, 1, 0);
  in.study_uid = make_uid (spec->seed, 2, 0);
  do {
    gchar *name, *path, *path2 = NULL;

    if (!TIFFIsTiled (tif))
      continue;
    if (!(ok = level_read (tif, &level, spec, error)))
      break;
    name = g_strdup_printf ("%s-level%u.dcm", prefix, n_levels);
    path = g_build_filename (out_dir, name, NULL);
    if (n_levels == 0)
      width0 = level.width;
    in.level = &level;
    in.downsample = (gdouble) width0 / level.width;
    in.flavor = "VOLUME";
    in.instance_number = n_levels + 1;
    in.instance_uid = make_uid (spec->seed, 3, n_levels);
    in.damaged = n_levels == 0;
    if (n_levels == 0 && spec->concatenation) {
      gchar *name2 = g_strdup_printf ("%s-level0-part2.dcm", prefix);
      path2 = g_build_filename (out_dir, name2, NULL);
      ok = concatenation_write (path, path2, &in, spec->seed, error);
      g_free (name2);
    } else {
      ok = instance_write (path, &in, error);
    }
    g_free (in.instance_uid);
    g_free (name);
    g_ptr_array_add (written, path);
    if (path2 != NULL)
      g_ptr_array_add (written, path2);
    n_levels++;
    level_clear (&smallest);
    smallest = level;
    memset (&level, 0, sizeof (level));
  } while (ok && TIFFReadDirectory (tif));

  if (ok && spec->thumbnail && smallest.frames != NULL) {
    gchar *name = g_strdup_printf ("%s-thumbnail.dcm", prefix);
    gchar *path = g_build_filename (out_dir, name, NULL);
    in.level = &smallest;
    in.downsample = (gdouble) width0 / smallest.width;
    in.flavor = "THUMBNAIL";
    in.instance_number = n_levels + 1;
    in.instance_uid = make_uid (spec->seed, 4, 0);
    in.damaged = FALSE;
    ok = instance_write (path, &in, error);
    g_free (in.instance_uid);
    g_free (name);
    g_ptr_array_add (written, path);
  }
  level_clear (&level);
  level_clear (&smallest);
  TIFFClose (tif);
  g_free (in.series_uid);
  g_free (in.study_uid);
  g_ptr_array_add (written, NULL);
  if (ok && paths != NULL)
    *paths = (gchar **) g_ptr_array_free (written, FALSE);
  else
    g_strfreev ((gchar **) g_ptr_array_free (written, FALSE));
  return ok;
}
