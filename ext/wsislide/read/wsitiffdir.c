/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsitiffdir.c: the pyramid of a JPEG-tiled TIFF, as OpenSlide 3.4.1's
 * aperio and generic-tiff readers see it (see wsitiffdir.h). */

#include "wsitiffdir.h"
#include "wsitiffcodec.h"
#include "wsislide.h"

#include <tiffio.h>
#include <math.h>
#include <stdio.h>              /* SEEK_* */
#include <string.h>

#define MAX_TILE_SIDE WSI_TIFF_MAX_TILE_SIDE
#define MAX_IMAGE_SIDE WSI_TIFF_MAX_IMAGE_SIDE
/* Largest single allocation libtiff may make while reading directories
 * (tile tables of a huge or hostile file). */
#define TIFF_MAX_SINGLE_ALLOC ((tmsize_t) 256 << 20)
#define MAX_DIRECTORIES WSI_TIFF_MAX_DIRECTORIES
/* Hamamatsu NDPI's private tag, OpenSlide's NDPI test (NDPI_FORMAT_FLAG). */
#define NDPI_FORMAT_FLAG 65420

/* ---- libtiff, quietly --------------------------------------------------- */

/* libtiff prints every warning and error on stderr unless the handle has
 * its own handlers (libtiff >= 4.5); the first error becomes our reason. */
typedef struct
{
  gchar *first_error;
} TiffMessages;

#ifdef TIFFLIB_AT_LEAST
static int
tiff_error_handler (TIFF * tif, void *user_data, const char *module,
    const char *fmt, va_list ap)
{
  TiffMessages *messages = user_data;

  if (messages->first_error == NULL)
    messages->first_error = g_strdup_vprintf (fmt, ap);
  return 1;                     /* handled: stays off stderr */
}

static int
tiff_warning_handler (TIFF * tif, void *user_data, const char *module,
    const char *fmt, va_list ap)
{
  return 1;
}
#endif

/* libtiff reads through these client procedures from a byte source at a
 * position of its own: the directory walk is the only libtiff I/O, and it
 * goes through the source like every tile read (for a remote source the
 * source's block cache turns libtiff's small reads into few requests). */
typedef struct
{
  WsiByteSource *source;
  guint64 position;
  GError *read_error;           /* the first failed read: fails the walk */
  /* libtiff reads a directory in pieces of a few bytes: they are served
   * from one window read at once (one round trip for a remote source). */
  guint8 *window;
  guint64 window_offset, window_length;
} TiffClient;

/* Reads below this size go through the window... */
#define WINDOW_SMALL_READ (4 * 1024)
/* ...which is this long (clipped to the file). */
#define WINDOW_BYTES (64 * 1024)

/* Copies [offset, offset + n) from the window, refilling it when it does
 * not hold the range. */
static gboolean
window_read (TiffClient * client, guint64 offset, guint64 n, guint8 * dest,
    GError ** error)
{
  guint64 size = wsi_byte_source_get_size (client->source);

  if (client->window == NULL || offset < client->window_offset
      || offset + n > client->window_offset + client->window_length) {
    guint64 length = MAX (n, MIN ((guint64) WINDOW_BYTES, size - offset));
    client->window = g_realloc (client->window, length);
    client->window_offset = offset;
    client->window_length = 0;
    if (!wsi_byte_source_read (client->source, offset, length,
            client->window, error))
      return FALSE;
    client->window_length = length;
  }
  memcpy (dest, client->window + (offset - client->window_offset), n);
  return TRUE;
}

static tmsize_t
tiff_client_read (thandle_t handle, void *buf, tmsize_t size)
{
  TiffClient *client = handle;
  guint64 file_size = wsi_byte_source_get_size (client->source);
  guint64 n;
  GError *error = NULL;

  if (size <= 0 || client->position >= file_size)
    return 0;
  /* libtiff asks past the end and accepts a short count there. */
  n = MIN ((guint64) size, file_size - client->position);
  if (!(n < WINDOW_SMALL_READ ? window_read (client, client->position, n, buf,
              &error) : wsi_byte_source_read (client->source,
              client->position, n, buf, &error))) {
    /* libtiff may take a failed IFD read for the end of the chain: the
     * caller checks read_error so a flaky read never drops a level. */
    if (client->read_error == NULL)
      client->read_error = error;
    else
      g_error_free (error);
    return -1;
  }
  client->position += n;
  return (tmsize_t) n;
}

static tmsize_t
tiff_client_write (thandle_t handle, void *buf, tmsize_t size)
{
  return -1;                    /* read only */
}

static toff_t
tiff_client_seek (thandle_t handle, toff_t offset, int whence)
{
  TiffClient *client = handle;
  guint64 base = whence == SEEK_CUR ? client->position :
      whence == SEEK_END ? wsi_byte_source_get_size (client->source) : 0;

  client->position = base + offset;
  return client->position;
}

static int
tiff_client_close (thandle_t handle)
{
  return 0;                     /* the caller owns the source */
}

static toff_t
tiff_client_size (thandle_t handle)
{
  TiffClient *client = handle;

  return wsi_byte_source_get_size (client->source);
}

static int
tiff_client_map (thandle_t handle, void **base, toff_t * size)
{
  return 0;                     /* never mapped: a file cut short must not SIGBUS */
}

static void
tiff_client_unmap (thandle_t handle, void *base, toff_t size)
{
}

static TIFF *
tiff_open_source (TiffClient * client, TiffMessages * messages)
{
  const gchar *name = wsi_byte_source_get_display_uri (client->source);
  TIFF *tif;

#ifdef TIFFLIB_AT_LEAST
  TIFFOpenOptions *opts = TIFFOpenOptionsAlloc ();
  TIFFOpenOptionsSetMaxSingleMemAlloc (opts, TIFF_MAX_SINGLE_ALLOC);
  TIFFOpenOptionsSetErrorHandlerExtR (opts, tiff_error_handler, messages);
  TIFFOpenOptionsSetWarningHandlerExtR (opts, tiff_warning_handler, messages);
  tif = TIFFClientOpenExt (name, "rm", client, tiff_client_read,
      tiff_client_write, tiff_client_seek, tiff_client_close,
      tiff_client_size, tiff_client_map, tiff_client_unmap, opts);
  TIFFOpenOptionsFree (opts);
#else
  tif = TIFFClientOpen (name, "rm", client, tiff_client_read,
      tiff_client_write, tiff_client_seek, tiff_client_close,
      tiff_client_size, tiff_client_map, tiff_client_unmap);
#endif
  return tif;
}

/* ---- errors ------------------------------------------------------------- */

static void
decline (GError ** error, const gchar * path, const gchar * format, ...)
G_GNUC_PRINTF (3, 4);

/* WSI_SLIDE_ERROR_UNSUPPORTED: not ours; `auto` hands it to OpenSlide. */
static void
decline (GError ** error, const gchar * path, const gchar * format, ...)
{
  va_list args;
  gchar *reason;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_UNSUPPORTED,
      "%s: not a JPEG-tiled TIFF pyramid the direct reader takes: %s", path,
      reason);
  g_free (reason);
}

static void
decline_damaged (GError ** error, const gchar * path, const gchar * format,
    ...)
G_GNUC_PRINTF (3, 4);

/* WSI_SLIDE_ERROR_DECLINED: a JPEG-tiled pyramid of a layout we read, but
 * damaged (geometry, tile table, level order): `auto` hands it to
 * OpenSlide, and the user hears once why (WsiSlide.declined). */
static void
decline_damaged (GError ** error, const gchar * path, const gchar * format,
    ...)
{
  va_list args;
  gchar *reason;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_DECLINED,
      "%s: the direct reader does not trust this pyramid: %s", path, reason);
  g_free (reason);
}

/* ---- directory 0: whose layout is it? ----------------------------------- */

static const gchar *
string_field (TIFF * tif, guint32 tag)
{
  const gchar *value = NULL;

  if (!TIFFGetField (tif, tag, &value))
    return NULL;
  return value;
}

/* A passcount tag (XMP, vendor tags) as bytes; NULL when absent. */
static const gchar *
bytes_field (TIFF * tif, guint32 tag, guint32 * count)
{
  const void *data = NULL;

  *count = 0;
  if (TIFFFindField (tif, tag, TIFF_ANY) == NULL
      || !TIFFGetField (tif, tag, count, &data))
    return NULL;
  return data;
}

static gboolean
bytes_contain (const gchar * data, guint32 size, const gchar * needle)
{
  gsize n = strlen (needle);
  guint32 i;

  for (i = 0; data != NULL && i + n <= size; i++) {
    if (memcmp (data + i, needle, n) == 0)
      return TRUE;
  }
  return FALSE;
}

/* OpenSlide 3.4.1 tries its formats in a fixed order (openslide.c): NDPI
 * and Trestle before Aperio, then Leica, Philips and Ventana, then generic
 * TIFF. The direct reader takes the two it reproduces and declines the
 * layouts the others claim, with cheap versions of their tests. */
/* An OME-TIFF: its ImageDescription is OME-XML (the OME schema's root
 * element, in whatever namespace prefix). */
static gboolean
is_ome_xml (const gchar * desc)
{
  return desc != NULL && strstr (desc, "<?xml") != NULL
      && (strstr (desc, "<OME") != NULL || strstr (desc, ":OME") != NULL)
      && strstr (desc, "openmicroscopy.org/Schemas/OME") != NULL;
}

/* A first image with SubIFDs: its reduced resolutions live there. */
static gboolean
has_subifds (TIFF * tif)
{
  guint16 n = 0;
  void *offsets = NULL;

  return TIFFGetField (tif, TIFFTAG_SUBIFD, &n, &offsets) && n > 0
      && offsets != NULL;
}

static gboolean
classify_layout (TIFF * tif, const gchar * path, gboolean * aperio,
    gboolean * ome, gboolean * subifds, GError ** error)
{
  const gchar *desc = string_field (tif, TIFFTAG_IMAGEDESCRIPTION);
  const gchar *software = string_field (tif, TIFFTAG_SOFTWARE);
  const gchar *xmp;
  guint32 count;

  if (bytes_field (tif, NDPI_FORMAT_FLAG, &count) != NULL) {
    decline (error, path, "Hamamatsu NDPI");
    return FALSE;
  }
  if ((software && g_str_has_prefix (software, "MedScan"))
      || (desc && strstr (desc, "Trestle"))) {
    decline (error, path, "Trestle layout");
    return FALSE;
  }
  *ome = is_ome_xml (desc);
  *subifds = has_subifds (tif);
  if (*ome && !TIFFIsTiled (tif)) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_REFUSED,
        "%s: OME-TIFF whose first image is not tiled (strips): not read",
        path);
    return FALSE;
  }
  /* Both readers OpenSlide could pick here need a tiled first image. */
  if (!TIFFIsTiled (tif)) {
    decline (error, path, "the first image is not tiled");
    return FALSE;
  }
  *aperio = desc != NULL && g_str_has_prefix (desc, "Aperio");
  if (*aperio || *ome)
    return TRUE;

  while (desc && g_ascii_isspace (*desc))
    desc++;
  if (desc && desc[0] == '<') {
    decline (error, path, "XML ImageDescription (Leica, Philips, Ventana "
        "or another vendor's layout)");
    return FALSE;
  }
  if (software && g_str_has_prefix (software, "Philips")) {
    decline (error, path, "Philips layout");
    return FALSE;
  }
  xmp = bytes_field (tif, TIFFTAG_XMLPACKET, &count);
  if (bytes_contain (xmp, count, "iScan")) {
    decline (error, path, "Ventana layout (iScan XMP)");
    return FALSE;
  }
  return TRUE;
}

/* ---- mpp ---------------------------------------------------------------- */

/* OpenSlide's _openslide_parse_double(): comma as decimal point, the whole
 * string must be the number. */
static gdouble
parse_openslide_double (const gchar * value)
{
  gchar *canonical = g_strdelimit (g_strdup (value), ",", '.');
  gchar *end = NULL;
  gdouble result;

  errno = 0;
  result = g_ascii_strtod (canonical, &end);
  if (canonical[0] == '\0' || *end != '\0' || errno == ERANGE)
    result = NAN;
  g_free (canonical);
  return result;
}

/* "Aperio Image Library ...|AppMag = 20|MPP = 0.4990|...": OpenSlide
 * splits on '|', skips the first field, splits each on the first '=' and
 * strips both sides; the last one of a name wins (hash table insert).
 * Returns the positive number of field @name, else 0. */
static gdouble
aperio_number (const gchar * desc, const gchar * name)
{
  gchar **fields = g_strsplit (desc, "|", -1);
  gchar *value = NULL;
  gdouble number;
  guint i;

  for (i = 1; fields[0] != NULL && fields[i] != NULL; i++) {
    gchar *eq = strchr (fields[i], '=');
    if (eq == NULL)
      continue;
    *eq = '\0';
    if (strcmp (g_strstrip (fields[i]), name) == 0)
      value = g_strstrip (eq + 1);
  }
  number = value ? parse_openslide_double (value) : NAN;
  g_strfreev (fields);
  return (isfinite (number) && number > 0.0) ? number : 0.0;
}

/* The resolution tags of directory 0 (OpenSlide's tiff.* properties; a
 * missing ResolutionUnit is inch there, as in the TIFF specification).
 * libtiff hands the rationals out as floats: within 1e-7 of OpenSlide's
 * doubles, exact for whole numbers of pixels per unit. */
static void
resolution_mpp (TIFF * tif, gdouble * mpp_x, gdouble * mpp_y)
{
  gfloat xres = 0, yres = 0;
  guint16 unit = RESUNIT_INCH;

  *mpp_x = *mpp_y = 0.0;
  TIFFGetField (tif, TIFFTAG_RESOLUTIONUNIT, &unit);
  if (TIFFGetField (tif, TIFFTAG_XRESOLUTION, &xres))
    *mpp_x = wsi_mpp_from_tiff_resolution (xres, unit);
  if (TIFFGetField (tif, TIFFTAG_YRESOLUTION, &yres))
    *mpp_y = wsi_mpp_from_tiff_resolution (yres, unit);
}

/* Micrometres in one @unit of OME's UnitsLength (0: unknown unit). */
static gdouble
ome_unit_um (const gchar * unit)
{
  static const struct
  {
    const gchar *name;
    gdouble um;
  } units[] = {
    {"\xc2\xb5m", 1.0}, {"\xce\xbcm", 1.0}, {"um", 1.0},
    {"nm", 1e-3}, {"pm", 1e-6}, {"\xc3\x85", 1e-4}, {"mm", 1e3},
    {"cm", 1e4}, {"dm", 1e5}, {"m", 1e6}, {"in", 25400.0},
  };
  guint i;

  if (unit == NULL)
    return 1.0;                 /* the schema's default: micrometres */
  for (i = 0; i < G_N_ELEMENTS (units); i++)
    if (strcmp (unit, units[i].name) == 0)
      return units[i].um;
  return 0.0;
}

typedef struct
{
  gboolean found;
  gdouble mpp_x, mpp_y;
} OmePixels;

/* GMarkup: the first Pixels element's physical sizes, then stop. */
static void
ome_start_element (GMarkupParseContext * context, const gchar * element,
    const gchar ** names, const gchar ** values, gpointer user_data,
    GError ** error)
{
  OmePixels *pixels = user_data;
  const gchar *local = strrchr (element, ':');
  const gchar *sx = NULL, *sy = NULL, *ux = NULL, *uy = NULL;
  guint i;

  local = local ? local + 1 : element;
  if (pixels->found || strcmp (local, "Pixels") != 0)
    return;
  pixels->found = TRUE;
  for (i = 0; names[i] != NULL; i++) {
    if (strcmp (names[i], "PhysicalSizeX") == 0)
      sx = values[i];
    else if (strcmp (names[i], "PhysicalSizeY") == 0)
      sy = values[i];
    else if (strcmp (names[i], "PhysicalSizeXUnit") == 0)
      ux = values[i];
    else if (strcmp (names[i], "PhysicalSizeYUnit") == 0)
      uy = values[i];
  }
  if (sx != NULL && sy != NULL) {
    gdouble x = g_ascii_strtod (sx, NULL) * ome_unit_um (ux);
    gdouble y = g_ascii_strtod (sy, NULL) * ome_unit_um (uy);
    if (isfinite (x) && isfinite (y) && x > 0 && y > 0) {
      pixels->mpp_x = x;
      pixels->mpp_y = y;
    }
  }
  /* Nothing more is needed: end the parse here. */
  g_set_error_literal (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
      "done");
}

/* The physical pixel size of the OME-XML's first image (0 when absent). */
static void
ome_mpp (const gchar * xml, gdouble * mpp_x, gdouble * mpp_y)
{
  GMarkupParser parser = { ome_start_element, NULL, NULL, NULL, NULL };
  OmePixels pixels = { FALSE, 0.0, 0.0 };
  GMarkupParseContext *context =
      g_markup_parse_context_new (&parser, 0, &pixels, NULL);

  g_markup_parse_context_parse (context, xml, -1, NULL);
  g_markup_parse_context_free (context);
  *mpp_x = pixels.mpp_x;
  *mpp_y = pixels.mpp_y;
}

/* Reads directory 0's mpp: Aperio's MPP field first (an OME-TIFF's
 * PhysicalSize), then the resolution tags, as the OpenSlide backend does
 * with OpenSlide's properties. */
static void
pyramid_read_mpp (WsiTiffPyramid * pyramid, TIFF * tif, gboolean aperio,
    gboolean ome)
{
  const gchar *desc = string_field (tif, TIFFTAG_IMAGEDESCRIPTION);
  gdouble mpp_x = 0.0, mpp_y = 0.0;

  /* OpenSlide's openslide.objective-power comes from AppMag too. */
  pyramid->objective_power = (aperio && desc) ? aperio_number (desc, "AppMag")
      : 0.0;
  if (ome && desc) {
    ome_mpp (desc, &mpp_x, &mpp_y);
    if (mpp_x > 0.0 && mpp_y > 0.0) {
      pyramid->mpp_x = mpp_x;
      pyramid->mpp_y = mpp_y;
      pyramid->mpp_source = WSI_MPP_SOURCE_OME;
      return;
    }
  }

  if (aperio && desc) {
    mpp_x = mpp_y = aperio_number (desc, "MPP");
    if (mpp_x > 0.0) {
      pyramid->mpp_x = pyramid->mpp_y = mpp_x;
      pyramid->mpp_source = WSI_MPP_SOURCE_APERIO;
      return;
    }
  }
  resolution_mpp (tif, &mpp_x, &mpp_y);
  if (mpp_x > 0.0 && mpp_y > 0.0) {
    pyramid->mpp_x = mpp_x;
    pyramid->mpp_y = mpp_y;
    pyramid->mpp_source = WSI_MPP_SOURCE_TIFF;
  } else {
    pyramid->mpp_x = pyramid->mpp_y = 0.0;
    pyramid->mpp_source = WSI_MPP_SOURCE_UNKNOWN;
  }
}

/* ---- levels ------------------------------------------------------------- */

static void
level_clear (WsiTiffLevel * level)
{
  g_free (level->tile_offsets);
  g_free (level->tile_byte_counts);
  g_free (level->jpeg_tables);
  memset (level, 0, sizeof (*level));
}

/* How a walk treats what it finds: OpenSlide's layouts (JPEG only, a
 * decline hands the file to OpenSlide) or a pyramid OpenSlide does not
 * read as one (OME-TIFF, SubIFDs: lossless codecs too). */
typedef struct
{
  const gchar *path;
  gboolean extended;            /* OME-TIFF or SubIFD pyramid */
  gboolean ome;                 /* OME-TIFF: a refusal is final */
} Walk;

static void
refuse (GError ** error, const Walk * walk, const gchar * format, ...)
G_GNUC_PRINTF (3, 4);

/* Pixel data an extended pyramid holds that this reader cannot deliver as
 * RGB: final for an OME-TIFF (WSI_SLIDE_ERROR_REFUSED: OpenSlide would
 * read one plane of it as something else), a decline otherwise. */
static void
refuse (GError ** error, const Walk * walk, const gchar * format, ...)
{
  va_list args;
  gchar *reason;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  if (walk->ome)
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_REFUSED,
        "%s: OME-TIFF not read: %s", walk->path, reason);
  else
    decline (error, walk->path, "%s", reason);
  g_free (reason);
}

/* The formats of an extended pyramid: 8-bit chunky RGB, JPEG (YCbCr or
 * RGB) or a lossless codec of wsitiffcodec.h with predictor 1 or 2. */
static gboolean
level_check_extended_format (TIFF * tif, const gchar * where,
    const Walk * walk, WsiTiffLevel * level, guint16 compression,
    guint16 planar, guint16 photometric, guint16 bits, guint16 samples,
    GError ** error)
{
  guint16 predictor = 1;

  if (planar != PLANARCONFIG_CONTIG) {
    refuse (error, walk, "%s stores its channels as separate planes "
        "(PlanarConfiguration %u); only interleaved RGB is read", where,
        planar);
    return FALSE;
  }
  if (bits != 8) {
    refuse (error, walk, "%s has %u-bit samples; only 8-bit RGB is read",
        where, bits);
    return FALSE;
  }
  if (samples != 3) {
    refuse (error, walk, "%s has %u channel%s a pixel; only 3-channel RGB "
        "is read (no fluorescence or multiplex channels)", where, samples,
        samples == 1 ? "" : "s");
    return FALSE;
  }
  if (compression == COMPRESSION_JPEG) {
    if (photometric != PHOTOMETRIC_YCBCR && photometric != PHOTOMETRIC_RGB) {
      refuse (error, walk, "%s is JPEG with photometric %u (want YCbCr or "
          "RGB)", where, photometric);
      return FALSE;
    }
  } else if (!wsi_tiff_codec_supported (compression)) {
    const gchar *name = wsi_tiff_codec_name (compression);
    refuse (error, walk, "%s has compression %u%s%s%s, which this build does "
        "not decode", where, compression, name ? " (" : "",
        name ? name : "", name ? ")" : "");
    return FALSE;
  } else if (photometric != PHOTOMETRIC_RGB) {
    refuse (error, walk, "%s is %s with photometric %u (want RGB)", where,
        wsi_tiff_codec_name (compression), photometric);
    return FALSE;
  } else {
    TIFFGetField (tif, TIFFTAG_PREDICTOR, &predictor);
    if (predictor != 1 && predictor != 2) {
      refuse (error, walk, "%s has predictor %u (1 and 2 are read)", where,
          predictor);
      return FALSE;
    }
  }
  level->compression = compression;
  level->predictor = predictor;
  level->rgb = photometric == PHOTOMETRIC_RGB;
  return TRUE;
}

/* The pixel format OpenSlide decodes with libjpeg directly (its
 * tile_read_direct in openslide-decode-tiff.c); any other goes through
 * libtiff's RGBA reader, which we do not reproduce. */
static gboolean
level_check_format (TIFF * tif, const gchar * where, const Walk * walk,
    WsiTiffLevel * level, GError ** error)
{
  const gchar *path = walk->path;
  guint16 compression, planar, photometric, bits, samples;
  guint32 depth;

  if (!TIFFGetField (tif, TIFFTAG_COMPRESSION, &compression)
      || !TIFFGetField (tif, TIFFTAG_PLANARCONFIG, &planar)
      || !TIFFGetField (tif, TIFFTAG_PHOTOMETRIC, &photometric)
      || !TIFFGetField (tif, TIFFTAG_BITSPERSAMPLE, &bits)
      || !TIFFGetField (tif, TIFFTAG_SAMPLESPERPIXEL, &samples)) {
    decline_damaged (error, path, "%s lacks a required tag", where);
    return FALSE;
  }
  if (TIFFGetField (tif, TIFFTAG_IMAGEDEPTH, &depth) && depth != 1) {
    refuse (error, walk, "%s has ImageDepth %u", where, depth);
    return FALSE;
  }
  if (walk->extended)
    return level_check_extended_format (tif, where, walk, level, compression,
        planar, photometric, bits, samples, error);
  if (compression != COMPRESSION_JPEG) {
    decline (error, path, "%s has compression %u, not JPEG (7)",
        where, compression);
    return FALSE;
  }
  if (bits != 8 || samples != 3 || planar != PLANARCONFIG_CONTIG) {
    decline (error, path, "%s has %u samples of %u bits, planar "
        "config %u (want 3 x 8, chunky)", where, samples, bits, planar);
    return FALSE;
  }
  if (photometric != PHOTOMETRIC_YCBCR && photometric != PHOTOMETRIC_RGB) {
    decline (error, path, "%s has photometric %u (want YCbCr or "
        "RGB)", where, photometric);
    return FALSE;
  }
  level->rgb = photometric == PHOTOMETRIC_RGB;
  level->compression = COMPRESSION_JPEG;
  level->predictor = 1;
  return TRUE;
}

/* Sizes every later computation relies on: tile sides a multiple of 8 (so
 * DCT scaling by 1/8 keeps tiles on a regular grid), both bounded. */
static gboolean
level_check_geometry (TIFF * tif, const gchar * where, const gchar * path,
    WsiTiffLevel * level, GError ** error)
{
  guint32 w, h, tw, th;

  if (!TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &w)
      || !TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &h)
      || !TIFFGetField (tif, TIFFTAG_TILEWIDTH, &tw)
      || !TIFFGetField (tif, TIFFTAG_TILELENGTH, &th)) {
    decline_damaged (error, path, "%s lacks its size or tile size", where);
    return FALSE;
  }
  if (w == 0 || h == 0 || w > MAX_IMAGE_SIDE || h > MAX_IMAGE_SIDE) {
    decline_damaged (error, path, "%s is %ux%u pixels", where, w, h);
    return FALSE;
  }
  if (tw == 0 || th == 0 || tw % 8 != 0 || th % 8 != 0
      || tw > MAX_TILE_SIDE || th > MAX_TILE_SIDE) {
    decline_damaged (error, path, "%s has %ux%u tiles", where, tw, th);
    return FALSE;
  }
  level->width = w;
  level->height = h;
  level->tile_width = tw;
  level->tile_height = th;
  level->tiles_across = w / tw + (w % tw != 0);
  level->tiles_down = h / th + (h % th != 0);
  return TRUE;
}

/* Copies the tile tables and JPEGTables out of libtiff. */
static gboolean
level_copy_tables (TIFF * tif, const gchar * where, const gchar * path,
    WsiTiffLevel * level, GError ** error)
{
  guint64 n = (guint64) level->tiles_across * level->tiles_down;
  uint64_t *offsets = NULL, *counts = NULL;
  const void *tables = NULL;
  guint32 tables_size = 0;

  if (TIFFNumberOfTiles (tif) != n
      || !TIFFGetField (tif, TIFFTAG_TILEOFFSETS, &offsets)
      || !TIFFGetField (tif, TIFFTAG_TILEBYTECOUNTS, &counts)
      || offsets == NULL || counts == NULL) {
    decline_damaged (error, path, "%s has no complete tile table", where);
    return FALSE;
  }
  level->tile_offsets = g_memdup2 (offsets, n * sizeof (guint64));
  level->tile_byte_counts = g_memdup2 (counts, n * sizeof (guint64));
  if (level->compression == COMPRESSION_JPEG
      && TIFFGetField (tif, TIFFTAG_JPEGTABLES, &tables_size, &tables)
      && tables != NULL && tables_size > 0) {
    level->jpeg_tables = g_memdup2 (tables, tables_size);
    level->jpeg_tables_size = tables_size;
  }
  return TRUE;
}

/* Reads the current directory as a level: @dir is its main-chain index
 * (its parent's for a SubIFD), @where how messages name it. */
static gboolean
level_read (TIFF * tif, guint dir, const gchar * where, const Walk * walk,
    WsiTiffLevel * level, GError ** error)
{
  memset (level, 0, sizeof (*level));
  level->directory = dir;
  if (level_check_format (tif, where, walk, level, error)
      && level_check_geometry (tif, where, walk->path, level, error)
      && level_copy_tables (tif, where, walk->path, level, error))
    return TRUE;
  level_clear (level);
  return FALSE;
}

/* Aperio writes zero-length tiles now and then; OpenSlide paints those
 * (and the tiles above them) from the level below, which we do not. */
static gboolean
level_has_missing_tiles (const WsiTiffLevel * level)
{
  guint64 i, n = (guint64) level->tiles_across * level->tiles_down;

  for (i = 0; i < n; i++) {
    if (level->tile_byte_counts[i] == 0)
      return TRUE;
  }
  return FALSE;
}

/* Which directories are levels: every tiled one for Aperio (file order);
 * for generic TIFF the first and every tiled reduced-resolution image. */
static gboolean
directory_is_level (TIFF * tif, guint dir, gboolean aperio)
{
  guint32 subfile = 0;

  if (!TIFFIsTiled (tif))
    return FALSE;
  if (aperio || dir == 0)
    return TRUE;
  return TIFFGetField (tif, TIFFTAG_SUBFILETYPE, &subfile)
      && (subfile & FILETYPE_REDUCEDIMAGE);
}

/* OpenSlide's Aperio reader fails on any directory (levels and associated
 * images alike) with ImageDepth != 1 or a codec libtiff lacks. */
static gboolean
aperio_check_directory (TIFF * tif, guint dir, const gchar * path,
    GError ** error)
{
  guint32 depth;
  guint16 compression;

  if (TIFFGetField (tif, TIFFTAG_IMAGEDEPTH, &depth) && depth != 1) {
    decline (error, path, "directory %u has ImageDepth %u", dir, depth);
    return FALSE;
  }
  if (!TIFFGetField (tif, TIFFTAG_COMPRESSION, &compression)) {
    decline (error, path, "directory %u has no compression tag", dir);
    return FALSE;
  }
  if (!TIFFIsCODECConfigured (compression)) {
    decline (error, path, "directory %u has compression %u, which libtiff "
        "cannot decode (Aperio JPEG 2000 is 33003/33005)", dir, compression);
    return FALSE;
  }
  return TRUE;
}

/* Walks the directories, collecting levels. Like OpenSlide, a directory
 * libtiff cannot read ends the walk instead of failing the open. */
static gboolean
collect_levels (TIFF * tif, const Walk * walk, gboolean aperio,
    GArray * levels, GError ** error)
{
  const gchar *path = walk->path;
  guint dir = 0;

  do {
    WsiTiffLevel level;

    if (aperio && !aperio_check_directory (tif, dir, path, error))
      return FALSE;
    if (directory_is_level (tif, dir, aperio)) {
      gchar where[32];
      g_snprintf (where, sizeof (where), "directory %u", dir);
      if (!level_read (tif, dir, where, walk, &level, error))
        return FALSE;
      g_array_append_val (levels, level);
      if (aperio && level_has_missing_tiles (&level)) {
        decline_damaged (error, path, "directory %u has missing tiles, which "
            "OpenSlide paints from another level", dir);
        return FALSE;
      }
    }
    dir++;
  } while (dir < MAX_DIRECTORIES && TIFFReadDirectory (tif));
  return TRUE;
}

/* An extended pyramid: the first image, the SubIFDs it lists (in that
 * order; an offset seen before is a loop), then the reduced-resolution
 * images of the main chain after it (older OME-TIFF pyramids; other
 * images there, a label or another series, are not levels). */
static gboolean
collect_extended_levels (TIFF * tif, const Walk * walk, GArray * levels,
    GError ** error)
{
  GArray *seen = g_array_new (FALSE, FALSE, sizeof (guint64));
  guint64 here = TIFFCurrentDirOffset (tif);
  guint64 *subifds = NULL;
  guint16 n_subifds = 0;
  void *offsets = NULL;
  WsiTiffLevel level;
  gboolean ok = FALSE;
  guint i, j, dir;

  if (!level_read (tif, 0, "directory 0", walk, &level, error))
    goto out;
  g_array_append_val (levels, level);
  g_array_append_val (seen, here);
  if (TIFFGetField (tif, TIFFTAG_SUBIFD, &n_subifds, &offsets)
      && offsets != NULL && n_subifds > 0)
    subifds = g_memdup2 (offsets, (gsize) n_subifds * sizeof (guint64));
  for (i = 0; i < n_subifds; i++) {
    gchar where[48];

    g_snprintf (where, sizeof (where), "SubIFD %u of directory 0", i);
    for (j = 0; j < seen->len; j++) {
      if (g_array_index (seen, guint64, j) == subifds[i]) {
        g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_REFUSED,
            "%s: SubIFD loop: %s points at offset %" G_GUINT64_FORMAT
            ", a directory already read", walk->path, where, subifds[i]);
        goto out;
      }
    }
    g_array_append_val (seen, subifds[i]);
    if (!TIFFSetSubDirectory (tif, subifds[i]) || !TIFFIsTiled (tif)) {
      g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_REFUSED,
          "%s: %s (offset %" G_GUINT64_FORMAT ") is not a readable tiled "
          "image", walk->path, where, subifds[i]);
      goto out;
    }
    if (!level_read (tif, 0, where, walk, &level, error))
      goto out;
    g_array_append_val (levels, level);
  }
  for (dir = 1; dir < MAX_DIRECTORIES && TIFFSetDirectory (tif, dir); dir++) {
    guint32 subfile = 0;
    gchar where[32];

    if (!TIFFIsTiled (tif) || !TIFFGetField (tif, TIFFTAG_SUBFILETYPE,
            &subfile) || !(subfile & FILETYPE_REDUCEDIMAGE))
      continue;
    g_snprintf (where, sizeof (where), "directory %u", dir);
    if (!level_read (tif, dir, where, walk, &level, error))
      goto out;
    g_array_append_val (levels, level);
  }
  ok = TRUE;
out:
  g_free (subifds);
  g_array_free (seen, TRUE);
  return ok;
}

static gint
level_wider_first (gconstpointer a, gconstpointer b)
{
  const WsiTiffLevel *la = a, *lb = b;

  return la->width > lb->width ? -1 : (la->width < lb->width ? 1 : 0);
}

/* OpenSlide sorts generic TIFF levels by width and refuses downsamples
 * that shrink; we want strictly narrower levels (equal widths would leave
 * the order to the sort). */
static gboolean
check_level_order (GArray * levels, const gchar * path, gboolean aperio,
    GError ** error)
{
  guint i;

  if (levels->len == 0) {
    decline (error, path, "no tiled levels");
    return FALSE;
  }
  if (!aperio)
    g_array_sort (levels, level_wider_first);
  for (i = 1; i < levels->len; i++) {
    const WsiTiffLevel *prev = &g_array_index (levels, WsiTiffLevel, i - 1);
    const WsiTiffLevel *cur = &g_array_index (levels, WsiTiffLevel, i);
    if (cur->width >= prev->width || cur->height > prev->height) {
      decline_damaged (error, path, "level %u (%ux%u) is not smaller than "
          "level %u "
          "(%ux%u)", i, cur->width, cur->height, i - 1, prev->width,
          prev->height);
      return FALSE;
    }
  }
  return TRUE;
}

static void
levels_free (GArray * levels)
{
  guint i;

  for (i = 0; i < levels->len; i++)
    level_clear (&g_array_index (levels, WsiTiffLevel, i));
  g_array_free (levels, TRUE);
}

/* Directory 0 decides the layout and the mpp; the walk then collects the
 * levels. */
static gboolean
pyramid_read_open_tiff (WsiTiffPyramid * pyramid, TIFF * tif,
    const gchar * path, GError ** error)
{
  GArray *levels;
  gboolean aperio = FALSE, ome = FALSE, subifds = FALSE;
  Walk walk = { path, FALSE, FALSE };
  gboolean collected;

  if (!classify_layout (tif, path, &aperio, &ome, &subifds, error))
    return FALSE;
  walk.extended = !aperio && (ome || subifds);
  walk.ome = ome;
  pyramid_read_mpp (pyramid, tif, aperio, ome);
  pyramid->vendor = aperio ? "aperio" : ome ? "ome-tiff" : "generic-tiff";

  levels = g_array_new (FALSE, TRUE, sizeof (WsiTiffLevel));
  collected = walk.extended ? collect_extended_levels (tif, &walk, levels,
      error) : collect_levels (tif, &walk, aperio, levels, error);
  if (!collected
      || !check_level_order (levels, path, aperio, error)) {
    levels_free (levels);
    return FALSE;
  }
  pyramid->n_levels = levels->len;
  pyramid->levels = (WsiTiffLevel *) g_array_free (levels, FALSE);
  return TRUE;
}

/* The first failed source read, as the open's error (it wins over what
 * libtiff made of the short data). */
static gboolean
take_read_error (TiffClient * client, const gchar * path, GError ** error)
{
  if (client->read_error == NULL)
    return FALSE;
  g_clear_error (error);
  g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_OPEN,
      "%s: reading its TIFF directories failed: %s", path,
      client->read_error->message);
  g_clear_error (&client->read_error);
  return TRUE;
}

gboolean
wsi_tiff_pyramid_read (WsiTiffPyramid * pyramid, WsiByteSource * source,
    GError ** error)
{
  const gchar *path = wsi_byte_source_get_display_uri (source);
  TiffMessages messages = { NULL };
  TiffClient client = { source, 0, NULL, NULL, 0, 0 };
  TIFF *tif;
  gboolean ok;

  memset (pyramid, 0, sizeof (*pyramid));
  tif = tiff_open_source (&client, &messages);
  if (tif == NULL) {
    /* TIFF magic but no readable first directory: broken, not foreign. */
    if (!take_read_error (&client, path, error))
      g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_OPEN,
          "%s: libtiff cannot read it: %s", path,
          messages.first_error ? messages.first_error : "no first directory");
    g_free (client.window);
    g_free (messages.first_error);
    return FALSE;
  }
  ok = pyramid_read_open_tiff (pyramid, tif, path, error);
  TIFFClose (tif);
  g_free (client.window);
  g_free (messages.first_error);
  if (take_read_error (&client, path, error))
    ok = FALSE;
  if (!ok)
    wsi_tiff_pyramid_clear (pyramid);
  return ok;
}

void
wsi_tiff_pyramid_clear (WsiTiffPyramid * pyramid)
{
  guint i;

  for (i = 0; i < pyramid->n_levels; i++)
    level_clear (&pyramid->levels[i]);
  g_free (pyramid->levels);
  memset (pyramid, 0, sizeof (*pyramid));
}

/* One tiled directory's tile grid is one that every TIFF reader can be
 * trusted with: sides non-zero multiples of 16 (TIFF 6.0 requires it) and
 * byte counts a JPEG or LZW tile could have. */
static gboolean
directory_tiles_sane (TIFF * tif, const gchar * path, guint index,
    goffset file_size, GError ** error)
{
  uint32_t tw = 0, th = 0;
  uint64_t *counts = NULL, *offsets = NULL;
  ttile_t i, n;

  if (!TIFFIsTiled (tif))
    return TRUE;
  TIFFGetField (tif, TIFFTAG_TILEWIDTH, &tw);
  TIFFGetField (tif, TIFFTAG_TILELENGTH, &th);
  if (tw == 0 || th == 0 || tw % 16 != 0 || th % 16 != 0 || tw > 65536
      || th > 65536) {
    g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_OPEN,
        "%s: directory %u has %ux%u tiles; TIFF requires non-zero multiples "
        "of 16", path, index, tw, th);
    return FALSE;
  }
  n = TIFFNumberOfTiles (tif);
  if (!TIFFGetField (tif, TIFFTAG_TILEBYTECOUNTS, &counts)
      || !TIFFGetField (tif, TIFFTAG_TILEOFFSETS, &offsets))
    return TRUE;                /* the reader reports a missing array */
  for (i = 0; i < n; i++) {
    if (counts[i] > (guint64) tw * th * 4 * 8 + (1 << 20)
        || offsets[i] > (guint64) file_size
        || counts[i] > (guint64) file_size - offsets[i]) {
      g_set_error (error, WSI_SLIDE_ERROR, WSI_SLIDE_ERROR_OPEN,
          "%s: directory %u tile %u claims %" G_GUINT64_FORMAT " bytes at "
          "%" G_GUINT64_FORMAT " in a %" G_GOFFSET_FORMAT "-byte file", path,
          index, (guint) i, (guint64) counts[i], (guint64) offsets[i],
          file_size);
      return FALSE;
    }
  }
  return TRUE;
}

gboolean
wsi_tiff_check_tiles (const gchar * path, GError ** error)
{
  TiffMessages messages = { NULL };
  TiffClient client = { NULL, 0, NULL, NULL, 0, 0 };
  gboolean ok = TRUE;
  guint index = 0;
  TIFF *tif;

  client.source = wsi_byte_source_open (path, NULL);
  if (client.source == NULL)
    return TRUE;                /* not ours to report: the backend will */
  tif = tiff_open_source (&client, &messages);
  if (tif != NULL) {
    do {
      ok = directory_tiles_sane (tif, path, index++,
          (goffset) wsi_byte_source_get_size (client.source), error);
    } while (ok && index < 1024 && TIFFReadDirectory (tif));
    TIFFClose (tif);
  }                             /* else not a TIFF: nothing to check */
  g_clear_error (&client.read_error);
  g_free (client.window);
  wsi_byte_source_unref (client.source);
  g_free (messages.first_error);
  return ok;
}
