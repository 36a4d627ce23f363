/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsislide-dicom.c: the DICOM backend ("dicom"): VL Whole Slide Microscopy
 * series, parsed by wsidicom.c and read through WsiByteSource, tiles
 * decoded by libjpeg-turbo (wsijpegdecode.c) or copied raw.
 *
 * Contract: a slide is a series. Opening one instance file opens its
 * series: the instances a collection recorded for it (wsidicomseriesmap.h:
 * a list file, a manifest, an object-storage prefix), else every DICOM
 * file in the same folder, with the same SeriesInstanceUID join it (the
 * folder's instances indexed once per version of the folder,
 * wsidicomfolder.h; a URL nobody recorded is a one-instance series).
 * Levels are the VOLUME instances (an instance's concatenation counts as
 * one), widest first; two instances of
 * one size (other optical paths or focal planes stored apart) keep the
 * first by file name. THUMBNAIL, OVERVIEW and LABEL instances are never
 * levels: wsislidesrc's overview comes from the smallest level, and a label
 * never enters training data. Downsamples are OpenSlide's
 * (h0 / h + w0 / w) / 2, so a series made from a TIFF slide plans every
 * read as the TIFF backend does. Within a level only the first optical path
 * and focal plane are read (the frames of TILED_FULL's first plane; in
 * TILED_SPARSE, the frames sharing frame 1's Z offset and optical path).
 * Missing tiles of a TILED_SPARSE level read as glass (white). Frames are
 * JPEG baseline (YCbCr, or RGB when the photometric says so or an APP14
 * Adobe segment marks it), JPEG 2000 or HTJ2K through OpenJPEG
 * (wsij2kdecode.h: 1 or 3 components of up to 16 bits, reduced-resolution
 * decode for the DCT-like scales up to the codestream's decomposition
 * levels, read from the first frame's main header at open), JPEG-LS
 * through CharLS (wsijlsdecode.h: whole frames, RGB or MONOCHROME1/2, no
 * native scaling) or explicit VR
 * little endian uncompressed: 8-bit RGB, 8- or 16-bit MONOCHROME1/2 (16
 * bits scaled over BitsStored to 8); any other transfer syntax is refused
 * at open with a message naming it. mpp comes from the shared (else the first per-frame)
 * PixelSpacing, mm to µm; objective power from the first optical path's
 * ObjectiveLensPower; the ICC profile (first optical path, else top level)
 * noted by size and SHA-256 (read once at open), not applied.
 * A damaged frame (no item where the index says, truncated, a bad JPEG
 * stream, a frame the file does not hold) fails the read that needs it
 * with WSI_SLIDE_ERROR_READ naming file, level, tile and frame; never
 * sticky.
 *
 * Cost: open parses every instance of the series once (see wsidicom.h);
 * the other files of its folder cost nothing once the folder is indexed
 * (its first open reads a few KiB of each);
 * reads are those of wsitiledread.h, one ranged byte-source read per frame
 * (only the rows needed for uncompressed frames); for a remote source the
 * frames a read (or a prefetch hint) covers are hinted first, so they are
 * fetched together. Threading: the slide is
 * immutable after open; byte sources read from any thread.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "wsislide.h"
#include "wsibytesource.h"
#include "wsidicom.h"
#include "wsidicomfolder.h"
#include "wsidicomseriesmap.h"
#include "wsijpegdecode.h"
#include "wsitiledread.h"
#ifdef WSI_HAVE_OPENJPEG
#include "wsij2kdecode.h"
#endif
#ifdef WSI_HAVE_CHARLS
#include "wsijlsdecode.h"
#endif

/* Scratch slots (wsitiledread.h uses WSI_TILED_SCRATCH_REGION). */
#define SCRATCH_FRAME_BYTES 0
#define SCRATCH_RAW_ROW 2
#define SCRATCH_DECODED_RGB 3

/* Bytes of a JPEG 2000 frame read at open for its main header (COD). */
#define J2K_HEADER_BYTES 4096

/* A frame larger than 8 x its raw size plus this is not a JPEG frame. */
#define FRAME_BYTES_SLACK (1 << 20)

/* A level's tile grid beyond this many tiles is not a slide we allocate. */
#define MAX_TILES (1 << 26)

/* Nor one with more than this many tiles per frame its instances hold: a
 * sparse scan covers a few percent of the glass at least, a short
 * TILED_FULL instance misses some frames, not nearly all. Bounds the grid's
 * memory by the file's size (each frame costs 8 bytes of its tables): a
 * 1.7 KB file claiming 838,860,832 rows of 32 made 52 million tiles, 420 MB
 * and 1.7 s of work (found by fuzz-dicom). */
#define MAX_TILES_PER_FRAME 256

/* tile_frame entries that are not frames: a TILED_SPARSE tile never
 * scanned (glass), a TILED_FULL tile whose frame the instance lacks (its
 * NumberOfFrames is short: damage). */
#define NO_FRAME (-1)
#define LOST_FRAME (-2)

typedef struct
{
  WsiDicomInstance inst;
  WsiByteSource *source;
  gchar *file_name;             /* for the stable order of duplicates */
} DicomPart;

typedef struct
{
  WsiTiledLevel tiled;
  guint64 tiles_across, tiles_down;
  gint64 *tile_frame;           /* part << 32 | frame, or NO_FRAME */
  guint64 n_frames;             /* of its instance and concatenation */
  guint64 n_lost_tiles;         /* LOST_FRAME entries (TILED_FULL, short) */
  DicomPart *first;             /* geometry, photometric, codec */
} DicomLevel;

typedef struct
{
  WsiTiledSlide head;           /* first: read by wsitiledread.c */
  GPtrArray *parts;             /* DicomPart, every VOLUME instance kept */
  DicomLevel *levels;
  guint n_levels;
} DicomSlide;

static gboolean dicom_decode_tile (WsiSlide * slide, WsiReadContext * ctx,
    gint level, gint64 column, gint64 row, guint scale, guint x, guint y,
    guint w, guint h, const WsiTiledTarget * target, GError ** error);
static gboolean dicom_tile_bytes (WsiSlide * slide, gint level, gint64 column,
    gint64 row, WsiByteSource ** source, WsiByteRange * range);

/* ---- detect, parts -------------------------------------------------------- */

static gboolean is_dicom_name (const gchar * name);

/* Local files by their magic; remote objects by a .dcm name (no request
 * for every TIFF slide `auto` tries: open reads the magic anyway). */
static gboolean
dicom_detect (const gchar * path)
{
  WsiByteSource *source;
  gboolean dicom;

  if (wsi_location_is_remote (path)) {
    gchar *name = g_strndup (path, strcspn (path, "?#"));
    dicom = is_dicom_name (name);
    g_free (name);
    return dicom;
  }
  source = wsi_byte_source_open (path, NULL);
  if (source == NULL)
    return FALSE;
  dicom = wsi_dicom_source_is_dicom (source);
  wsi_byte_source_unref (source);
  return dicom;
}

static void
dicom_part_free (DicomPart * part)
{
  wsi_dicom_instance_clear (&part->inst);
  if (part->source != NULL)
    wsi_byte_source_unref (part->source);
  g_free (part->file_name);
  g_free (part);
}

static DicomPart *
dicom_part_open (const gchar * location, gboolean header_only,
    GError ** error)
{
  DicomPart *part = g_new0 (DicomPart, 1);

  part->source = wsi_byte_source_open (location, error);
  if (part->source == NULL
      || !wsi_dicom_instance_read (&part->inst, part->source, header_only,
          error)) {
    if (error != NULL && *error != NULL && (*error)->domain != WSI_SLIDE_ERROR) {
      /* A byte-source error: an open error of the slide. */
      (*error)->domain = WSI_SLIDE_ERROR;
      (*error)->code = WSI_SLIDE_ERROR_OPEN;
    }
    dicom_part_free (part);
    return NULL;
  }
  part->file_name = g_path_get_basename (location);
  return part;
}

static gboolean
is_dicom_name (const gchar * name)
{
  gchar *lower = g_ascii_strdown (name, -1);
  gboolean dcm = g_str_has_suffix (lower, ".dcm");

  g_free (lower);
  return dcm;
}

/* Whether @inst, parsed in full, belongs to @first's series as another
 * level: a VOLUME instance of its SeriesInstanceUID, not @first again
 * (a copy under another name). Checked after the full parse too, since the
 * folder index (wsidicomfolder.h) may predate a file rewritten in place. */
static gboolean
is_sibling (const WsiDicomInstance * inst, const DicomPart * first)
{
  return inst->flavor == WSI_DICOM_FLAVOR_VOLUME
      && g_strcmp0 (inst->series_uid, first->inst.series_uid) == 0
      && g_strcmp0 (inst->sop_instance_uid,
      first->inst.sop_instance_uid) != 0;
}

/* The members a collection recorded for @path's series (a list, a
 * manifest, an object-storage prefix) that are other VOLUME instances of
 * it: each one's identity is read (a few KiB), since a collection records
 * every instance of the series, labels and thumbnails too. */
static GPtrArray *
recorded_volumes (gchar ** recorded, const gchar * path,
    const DicomPart * first)
{
  GPtrArray *members = g_ptr_array_new_with_free_func (g_free);
  guint i;

  for (i = 0; recorded[i] != NULL; i++) {
    DicomPart *head;

    if (strcmp (recorded[i], path) == 0)
      continue;
    head = dicom_part_open (recorded[i], TRUE, NULL);
    if (head != NULL && is_sibling (&head->inst, first))
      g_ptr_array_add (members, g_strdup (recorded[i]));
    if (head != NULL)
      dicom_part_free (head);
  }
  return members;
}

/* The other VOLUME instances of @path's series: those a collection
 * recorded, else those of its folder (indexed once per folder version,
 * wsidicomfolder.h); a URL nobody recorded has none. */
static GPtrArray *
sibling_volumes (const gchar * path, const DicomPart * first)
{
  gchar **recorded = wsi_dicom_series_map_get (path);
  GPtrArray *members;

  if (recorded != NULL) {
    members = recorded_volumes (recorded, path, first);
    g_strfreev (recorded);
    return members;
  }
  if (wsi_location_is_remote (path))
    return g_ptr_array_new_with_free_func (g_free);
  return wsi_dicom_folder_volumes (path, first->inst.series_uid,
      first->inst.sop_instance_uid);
}

/* The other VOLUME instances of @first's series, parsed. */
static void
add_siblings (GPtrArray * parts, const gchar * path, const DicomPart * first)
{
  GPtrArray *members;
  guint i;

  if (first->inst.series_uid == NULL)
    return;
  members = sibling_volumes (path, first);
  for (i = 0; i < members->len; i++) {
    const gchar *child = members->pdata[i];
    DicomPart *part = dicom_part_open (child, FALSE, NULL);

    if (part != NULL && is_sibling (&part->inst, first)) {
      g_ptr_array_add (parts, part);
      continue;
    }
    if (part != NULL) {
      dicom_part_free (part);
    } else {
      gchar *display = wsi_location_display (child);
      g_debug ("%s: an instance of the series that cannot be read is left "
          "out", display);
      g_free (display);
    }
  }
  g_ptr_array_unref (members);
}

/* ---- levels ------------------------------------------------------------- */

static guint64
part_area (const DicomPart * part)
{
  return part->inst.total_columns * part->inst.total_rows;
}

/* Widest first; ties by file name. */
static gint
part_compare (gconstpointer a, gconstpointer b)
{
  const DicomPart *pa = *(DicomPart * const *) a;
  const DicomPart *pb = *(DicomPart * const *) b;
  guint64 aa = part_area (pa), ab = part_area (pb);

  if (aa != ab)
    return aa > ab ? -1 : 1;
  return g_strcmp0 (pa->file_name, pb->file_name);
}

static gboolean
open_fail (GError ** error, const gchar * uri, const gchar * format, ...)
G_GNUC_PRINTF (3, 4);

static gboolean
open_fail (GError ** error, const gchar * uri, const gchar * format, ...)
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

static const gchar *
part_uri (const DicomPart * part)
{
  return wsi_byte_source_get_display_uri (part->source);
}

/* What a part must be for this backend to read its frames. */
static gboolean
part_check (const DicomPart * part, GError ** error)
{
  const WsiDicomInstance *inst = &part->inst;
  const gchar *pi = inst->photometric != NULL ? inst->photometric : "";

  if (inst->pixels == WSI_DICOM_PIXELS_UNSUPPORTED)
    return open_fail (error, part_uri (part), "transfer syntax %s (%s) is not "
        "supported (JPEG baseline, JPEG 2000, HTJ2K and explicit VR little "
        "endian are)", wsi_dicom_transfer_syntax_name (inst->transfer_syntax),
        inst->transfer_syntax != NULL ? inst->transfer_syntax : "none");
#ifndef WSI_HAVE_CHARLS
  /* The fix is the option in both cases (off by default, docs/design.md);
   * the package only when it is missing. */
  if (inst->pixels == WSI_DICOM_PIXELS_JPEGLS)
    return open_fail (error, part_uri (part), "transfer syntax %s (%s) is not "
        "supported by this build: JPEG-LS frames are read only when built "
        "with -Djpegls=enabled (%s; off by default, since CharLS 2.4.1 spends "
        "seconds of CPU on some damaged frames)",
        wsi_dicom_transfer_syntax_name (inst->transfer_syntax),
        inst->transfer_syntax,
#ifdef WSI_CHARLS_INSTALLED
        "CharLS is installed: `meson configure build -Djpegls=enabled`, then "
        "rebuild"
#else
        "install CharLS first: libcharls-dev"
#endif
        );
#endif
#ifndef WSI_HAVE_OPENJPEG
  if (inst->pixels == WSI_DICOM_PIXELS_JPEG2000)
    return open_fail (error, part_uri (part), "transfer syntax %s (%s) needs "
        "OpenJPEG, which this build lacks (libopenjp2-7-dev)",
        wsi_dicom_transfer_syntax_name (inst->transfer_syntax),
        inst->transfer_syntax);
#endif
  if (inst->rows == 0 || inst->columns == 0 || inst->total_columns == 0
      || inst->total_rows == 0)
    return open_fail (error, part_uri (part), "no frame size or total pixel "
        "matrix size");
  if (inst->bits_allocated != 8 && !(inst->bits_allocated == 16
          && ((inst->pixels == WSI_DICOM_PIXELS_NATIVE
                  && inst->samples_per_pixel == 1)
              || inst->pixels == WSI_DICOM_PIXELS_JPEG2000
              || inst->pixels == WSI_DICOM_PIXELS_JPEGLS)))
    return open_fail (error, part_uri (part), "%u bits a sample (8, or 16 "
        "for uncompressed grey and JPEG 2000, are read)",
        inst->bits_allocated);
  if (inst->pixel_representation != 0)
    return open_fail (error, part_uri (part), "signed samples are not read");
  if (inst->pixels == WSI_DICOM_PIXELS_JPEG && inst->samples_per_pixel != 3)
    return open_fail (error, part_uri (part), "JPEG frames of %u samples (3 "
        "are read)", inst->samples_per_pixel);
  if (inst->pixels == WSI_DICOM_PIXELS_JPEG2000
      && inst->samples_per_pixel != 3 && inst->samples_per_pixel != 1)
    return open_fail (error, part_uri (part), "JPEG 2000 frames of %u "
        "samples (1 or 3 are read)", inst->samples_per_pixel);
  if (inst->pixels == WSI_DICOM_PIXELS_JPEGLS
      && !((inst->samples_per_pixel == 3 && strcmp (pi, "RGB") == 0)
          || (inst->samples_per_pixel == 1 && g_str_has_prefix (pi,
                  "MONOCHROME"))))
    return open_fail (error, part_uri (part), "JPEG-LS %s with %u samples is "
        "not read (RGB and MONOCHROME1/2 are)", pi, inst->samples_per_pixel);
  if (inst->pixels == WSI_DICOM_PIXELS_NATIVE
      && !((inst->samples_per_pixel == 3 && strcmp (pi, "RGB") == 0)
          || (inst->samples_per_pixel == 1 && g_str_has_prefix (pi,
                  "MONOCHROME"))))
    return open_fail (error, part_uri (part), "uncompressed %s with %u "
        "samples is not read (RGB and MONOCHROME1/2 are)", pi,
        inst->samples_per_pixel);
  if (inst->tiled_sparse && inst->frame_column_position == NULL)
    return open_fail (error, part_uri (part), "TILED_SPARSE without "
        "per-frame plane positions");
  return TRUE;
}

/* Puts the frames of @part (number @index in the slide) on @level's grid. */
static void
level_map_part (DicomLevel * level, const DicomPart * part, guint index)
{
  const WsiDicomInstance *inst = &part->inst;
  guint64 n_tiles = level->tiles_across * level->tiles_down;
  guint32 k;

  for (k = 0; k < inst->n_frames; k++) {
    guint64 tile;

    if (inst->tiled_sparse) {
      gint64 c = (gint64) inst->frame_column_position[k] - 1;
      gint64 r = (gint64) inst->frame_row_position[k] - 1;
      if (!inst->frame_in_first_plane[k] || c < 0 || r < 0
          || c % inst->columns != 0 || r % inst->rows != 0)
        continue;
      if ((guint64) c / inst->columns >= level->tiles_across)
        continue;
      tile = (guint64) (r / inst->rows) * level->tiles_across
          + (guint64) c / inst->columns;
    } else {
      /* TILED_FULL: the first plane's frames come first. */
      tile = (guint64) inst->concatenation_frame_offset + k;
    }
    if (tile < n_tiles && level->tile_frame[tile] < 0)
      level->tile_frame[tile] = ((gint64) index << 32) | k;
  }
}

/* JPEG 2000: 2^k up to the first frame's decomposition levels (one read
 * of its main header at open), 8 at most; 1 when it cannot be read. */
static guint
j2k_max_scale (const DicomPart * part)
{
  const WsiDicomInstance *inst = &part->inst;
  guint8 head[J2K_HEADER_BYTES];
  guint32 k;
  gint levels = -1;

  for (k = 0; k < inst->n_frames && inst->frames[k].length == 0; k++);
  if (k < inst->n_frames) {
    gsize n = MIN (inst->frames[k].length, sizeof (head));
    /* Skip the item header: the codestream follows. */
    if (n > 8 && wsi_byte_source_read (part->source, inst->frames[k].offset,
            n, head, NULL))
      levels = wsi_j2k_decomposition_levels (head + 8, n - 8);
  }
  return levels >= 3 ? 8 : levels == 2 ? 4 : levels == 1 ? 2 : 1;
}

/* The largest native scale of a level's codec: JPEG's DCT scaling, JPEG
 * 2000's resolution levels, none for raw pixels. */
static guint
level_max_scale (const DicomPart * first)
{
  switch (first->inst.pixels) {
    case WSI_DICOM_PIXELS_JPEG:
      return 8;
    case WSI_DICOM_PIXELS_JPEG2000:
      return j2k_max_scale (first);
    default:
      return 1;
  }
}

/* Part @i is part @first_index's instance or the rest of its
 * concatenation. */
static gboolean
same_concatenation (DicomSlide * ds, guint first_index, guint i)
{
  const WsiDicomInstance *first = &((DicomPart *)
      ds->parts->pdata[first_index])->inst;
  const DicomPart *part = ds->parts->pdata[i];

  return i == first_index || (first->concatenation_uid != NULL
      && g_strcmp0 (part->inst.concatenation_uid,
          first->concatenation_uid) == 0);
}

/* The frames of part @first_index's instance and its concatenation. */
static guint64
level_frames (DicomSlide * ds, guint first_index)
{
  guint64 frames = 0;
  guint i;

  for (i = first_index; i < ds->parts->len; i++)
    if (same_concatenation (ds, first_index, i))
      frames += ((DicomPart *) ds->parts->pdata[i])->inst.n_frames;
  return frames;
}

/* Tiles of a TILED_FULL grid that no frame filled: its NumberOfFrames (or
 * its concatenation's) is short of the grid. One pass at open, 8 bytes a
 * tile, which level_build() bounds by the file's frames. */
static guint64
level_count_lost (const DicomLevel * level)
{
  guint64 i, n_tiles = level->tiles_across * level->tiles_down, lost = 0;

  for (i = 0; i < n_tiles; i++)
    if (level->tile_frame[i] == LOST_FRAME)
      lost++;
  return lost;
}

static gboolean
level_build (DicomLevel * level, DicomSlide * ds, guint first_index,
    GError ** error)
{
  DicomPart *first = ds->parts->pdata[first_index];
  const WsiDicomInstance *inst = &first->inst;
  guint64 n_tiles, frames;
  guint i;

  level->first = first;
  level->tiled.width = inst->total_columns;
  level->tiled.height = inst->total_rows;
  level->tiled.tile_width = inst->columns;
  level->tiled.tile_height = inst->rows;
  level->tiled.max_scale = level_max_scale (first);
  level->tiled.decode = dicom_decode_tile;
  /* Hints only help remote series (all parts come from one place). */
  level->tiled.tile_bytes = wsi_byte_source_is_local (first->source)
      ? NULL : dicom_tile_bytes;
  level->tiles_across = (inst->total_columns + inst->columns - 1)
      / inst->columns;
  level->tiles_down = (inst->total_rows + inst->rows - 1) / inst->rows;
  n_tiles = level->tiles_across * level->tiles_down;
  if (n_tiles > MAX_TILES)
    return open_fail (error, part_uri (first), "%" G_GUINT64_FORMAT " tiles "
        "in one level is implausible", n_tiles);
  frames = level_frames (ds, first_index);
  level->n_frames = frames;
  if (n_tiles > MAX_TILES_PER_FRAME * frames)
    return open_fail (error, part_uri (first), "%" G_GUINT64_FORMAT " tiles "
        "(%" G_GUINT64_FORMAT " x %" G_GUINT64_FORMAT " pixels in tiles of "
        "%u x %u) for %" G_GUINT64_FORMAT
        " frames is implausible", n_tiles, inst->total_columns,
        inst->total_rows, inst->columns, inst->rows, frames);
  level->tile_frame = g_try_new (gint64, n_tiles);
  if (level->tile_frame == NULL)
    return open_fail (error, part_uri (first), "out of memory for %"
        G_GUINT64_FORMAT " tiles", n_tiles);
  for (i = 0; i < n_tiles; i++)
    level->tile_frame[i] = inst->tiled_sparse ? NO_FRAME : LOST_FRAME;

  /* The instance and the rest of its concatenation. */
  for (i = first_index; i < ds->parts->len; i++) {
    const DicomPart *part = ds->parts->pdata[i];
    if (!same_concatenation (ds, first_index, i))
      continue;
    if (part->inst.rows != inst->rows || part->inst.columns != inst->columns
        || part->inst.pixels != inst->pixels
        || part->inst.tiled_sparse != inst->tiled_sparse)
      return open_fail (error, part_uri (part), "its frames differ from "
          "those of %s in the same concatenation", part_uri (first));
    level_map_part (level, part, i);
  }
  level->n_lost_tiles = level_count_lost (level);
  return TRUE;
}

static void
dicom_slide_free (DicomSlide * ds)
{
  guint i;

  if (ds == NULL)
    return;
  for (i = 0; i < ds->n_levels; i++)
    g_free (ds->levels[i].tile_frame);
  g_free (ds->levels);
  wsi_tiled_slide_clear (&ds->head);
  if (ds->parts != NULL)
    g_ptr_array_unref (ds->parts);
  g_free (ds);
}

/* Levels from the sorted parts: the first instance of each size that is
 * not a later part of a concatenation already used. */
static gboolean
levels_build (DicomSlide * ds, GError ** error)
{
  guint i, j;
  guint64 last_area = 0;

  ds->levels = g_new0 (DicomLevel, ds->parts->len);
  for (i = 0; i < ds->parts->len; i++) {
    DicomPart *part = ds->parts->pdata[i];
    gboolean used = FALSE;

    for (j = 0; j < ds->n_levels && !used; j++)
      used = part->inst.concatenation_uid != NULL
          && g_strcmp0 (part->inst.concatenation_uid,
          ds->levels[j].first->inst.concatenation_uid) == 0;
    if (used || (ds->n_levels > 0 && part_area (part) == last_area))
      continue;
    if (!part_check (part, error)
        || !level_build (&ds->levels[ds->n_levels], ds, i, error)) {
      g_free (ds->levels[ds->n_levels].tile_frame);
      ds->levels[ds->n_levels].tile_frame = NULL;
      return FALSE;
    }
    last_area = part_area (part);
    ds->n_levels++;
  }
  wsi_tiled_slide_init (&ds->head, ds->n_levels);
  for (i = 0; i < ds->n_levels; i++)
    ds->head.levels[i] = &ds->levels[i].tiled;
  return TRUE;
}

/* ---- open, close -------------------------------------------------------- */

/* An ICC profile larger than this is noted by size only (not hashed). */
#define MAX_HASHED_ICC_BYTES (16 << 20)

/* The ICC profile of @part: its size, and the SHA-256 of its bytes (one
 * read at open; NULL when it is too large or cannot be read). */
static void
icc_profile_describe (WsiSlide * slide, const DicomPart * part)
{
  const WsiDicomInstance *inst = &part->inst;
  guint8 *bytes;

  slide->icc_profile_size = inst->icc_profile_length;
  if (inst->icc_profile_length == 0
      || inst->icc_profile_length > MAX_HASHED_ICC_BYTES)
    return;
  bytes = g_try_malloc (inst->icc_profile_length);
  if (bytes != NULL && wsi_byte_source_read (part->source,
          inst->icc_profile_offset, inst->icc_profile_length, bytes, NULL))
    slide->icc_profile_sha256 = g_compute_checksum_for_data (G_CHECKSUM_SHA256,
        bytes, inst->icc_profile_length);
  g_free (bytes);
}

/* Levels from the instances' total pixel matrices; mpp from PixelSpacing
 * (mm). */
static void
dicom_slide_describe (WsiSlide * slide, const DicomSlide * ds)
{
  const WsiDicomInstance *base = &ds->levels[0].first->inst;
  guint i;

  wsi_slide_alloc_levels (slide, ds->n_levels);
  for (i = 0; i < ds->n_levels; i++) {
    const WsiTiledLevel *level = &ds->levels[i].tiled;
    wsi_slide_set_level (slide, i, level->width, level->height,
        level->tile_width, level->tile_height);
  }
  wsi_slide_set_origin (slide, "dicom", base->spacing_column_mm * 1000.0,
      base->spacing_row_mm * 1000.0, WSI_MPP_SOURCE_DICOM);
  slide->objective_power = base->objective_power;
  icc_profile_describe (slide, ds->levels[0].first);
}

/* The first level whose TILED_FULL grid has more tiles than its frames
 * (NumberOfFrames short of Columns/Rows vs the total pixel matrix), named
 * in slide->damaged: those tiles fail to read (LOST_FRAME), as a truncated
 * instance's do. */
static void
note_short_grid (WsiSlide * slide, const DicomSlide * ds)
{
  guint i;

  for (i = 0; i < ds->n_levels; i++) {
    const DicomLevel *lv = &ds->levels[i];
    const WsiDicomInstance *inst = &lv->first->inst;

    if (lv->n_lost_tiles == 0)
      continue;
    slide->damaged = g_strdup_printf ("%s: short: its NumberOfFrames gives "
        "%" G_GUINT64_FORMAT " frames for level %u's TILED_FULL grid of %"
        G_GUINT64_FORMAT " x %" G_GUINT64_FORMAT " tiles of %u x %u pixels, "
        "so %" G_GUINT64_FORMAT " of its tiles cannot be read",
        part_uri (lv->first), lv->n_frames, i, lv->tiles_across,
        lv->tiles_down, inst->columns, inst->rows, lv->n_lost_tiles);
    return;
  }
}

/* The first instance of the slide that declares frames it does not hold
 * (wsidicom.h: n_frames_missing), else the first level with fewer frames
 * than its TILED_FULL grid, named in slide->damaged: the level opens and
 * those tiles fail to read, but the user hears why once. Tiles that a
 * TILED_SPARSE instance does not list are glass, not damage. */
static void
note_missing_frames (WsiSlide * slide, const DicomSlide * ds)
{
  guint i;

  for (i = 0; i < ds->parts->len; i++) {
    const DicomPart *part = ds->parts->pdata[i];
    const WsiDicomInstance *inst = &part->inst;

    if (inst->n_frames_missing == 0)
      continue;
    slide->damaged = g_strdup_printf ("%s: truncated or damaged: %u of the "
        "%u frames its NumberOfFrames declares are not in the file (%s), "
        "so their tiles cannot be read", part_uri (part),
        inst->n_frames_missing, inst->n_frames, inst->frame_index_source);
    return;
  }
  note_short_grid (slide, ds);
}

static gboolean
dicom_open (WsiSlide * slide, GError ** error)
{
  DicomSlide *ds = g_new0 (DicomSlide, 1);
  DicomPart *given = dicom_part_open (slide->path, FALSE, error);

  if (given == NULL) {
    g_free (ds);
    return FALSE;
  }
  if (g_strcmp0 (given->inst.sop_class_uid, WSI_DICOM_SOP_CLASS_WSI) != 0) {
    open_fail (error, part_uri (given), "not a VL Whole Slide Microscopy "
        "image (SOP class %s)", given->inst.sop_class_uid != NULL
        ? given->inst.sop_class_uid : "absent");
    dicom_part_free (given);
    g_free (ds);
    return FALSE;
  }
  if (given->inst.flavor == WSI_DICOM_FLAVOR_LABEL) {
    /* A label is never training data, not even on its own. */
    open_fail (error, part_uri (given), "a LABEL image is not a slide");
    dicom_part_free (given);
    g_free (ds);
    return FALSE;
  }
  ds->parts = g_ptr_array_new_with_free_func ((GDestroyNotify)
      dicom_part_free);
  add_siblings (ds->parts, slide->path, given);
  /* The given instance is a level when it is a VOLUME, or when nothing
   * else is (an OVERVIEW or THUMBNAIL opened on purpose). */
  if (given->inst.flavor == WSI_DICOM_FLAVOR_VOLUME || ds->parts->len == 0)
    g_ptr_array_add (ds->parts, given);
  else
    dicom_part_free (given);
  g_ptr_array_sort (ds->parts, part_compare);

  if (!levels_build (ds, error)) {
    dicom_slide_free (ds);
    return FALSE;
  }
  dicom_slide_describe (slide, ds);
  note_missing_frames (slide, ds);
  slide->handle = ds;
  return TRUE;
}

static void
dicom_close (WsiSlide * slide)
{
  dicom_slide_free (slide->handle);
  slide->handle = NULL;
}

/* ---- one tile --------------------------------------------------------------- */

static gboolean
tile_fail (WsiSlide * slide, gint level, gint64 col, gint64 row,
    gint64 frame, GError ** error, const gchar * format, ...)
G_GNUC_PRINTF (7, 8);

/* WSI_SLIDE_ERROR_READ: "<path>: level L tile (c, r): frame F: <reason>". */
static gboolean
tile_fail (WsiSlide * slide, gint level, gint64 col, gint64 row,
    gint64 frame, GError ** error, const gchar * format, ...)
{
  va_list args;
  gchar *reason;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  wsi_tiled_tile_fail (slide, level, col, row, error, "frame %"
      G_GINT64_FORMAT ": %s", frame + 1, reason);
  g_free (reason);
  return FALSE;
}

/* The frame's fragments joined in place behind the first one's item
 * header: the codestream (@joined bytes at the pointer returned), or NULL
 * when the items are malformed. The first fragment stays where it was
 * read, so a one-fragment frame (the usual case) is never copied; later
 * fragments move left over the item headers. */
static guint8 *
fragments_join (guint8 * bytes, gsize length, gsize * joined)
{
  gsize in = 0, out = 8;

  while (in < length) {
    guint32 item_length;
    if (length - in < 8 || bytes[in] != 0xFE || bytes[in + 1] != 0xFF
        || bytes[in + 2] != 0x00 || bytes[in + 3] != 0xE0)
      return NULL;
    item_length = bytes[in + 4] | (bytes[in + 5] << 8)
        | (bytes[in + 6] << 16) | ((guint32) bytes[in + 7] << 24);
    if (item_length > length - in - 8)
      return NULL;
    if (in + 8 != out)
      memmove (bytes + out, bytes + in + 8, item_length);
    out += item_length;
    in += 8 + (gsize) item_length;
  }
  *joined = out - 8;
  return out > 8 ? bytes + 8 : NULL;
}

/* An APP14 "Adobe" segment before the frame header: its transform (0 = RGB,
 * 1 = YCbCr), or -1 when there is none. */
static gint
adobe_transform (const guint8 * data, gsize size)
{
  gsize i = 2;

  if (size < 4 || data[0] != 0xFF || data[1] != 0xD8)
    return -1;
  while (i + 4 <= size && data[i] == 0xFF) {
    guint marker = data[i + 1];
    gsize length = ((gsize) data[i + 2] << 8) | data[i + 3];
    if (marker == 0xEE && length >= 12 && i + 2 + length <= size
        && memcmp (data + i + 4, "Adobe", 5) == 0)
      return data[i + 2 + 11];
    if (marker == 0xC0 || marker == 0xC1 || marker == 0xC2 || marker == 0xDA)
      break;
    i += 2 + length;
  }
  return -1;
}

/* A codec's error, prefixed with the frame it was decoding (the slide,
 * the level, the tile and the frame's 1-based number); FALSE. */
static gboolean
frame_decode_failed (WsiSlide * slide, gint level, gint64 col, gint64 row,
    gint64 index, GError ** error)
{
  g_prefix_error (error, "%s: level %d tile (%" G_GINT64_FORMAT ", %"
      G_GINT64_FORMAT ") frame %" G_GINT64_FORMAT ": ", slide->display, level,
      col, row, index + 1);
  return FALSE;
}

static gboolean
decode_jpeg (WsiSlide * slide, WsiReadContext * ctx, const DicomPart * part,
    const WsiDicomFrame * frame, gint level, gint64 col, gint64 row,
    gint64 index, guint scale, guint x, guint y, guint w, guint h,
    const WsiTiledTarget * target, GError ** error)
{
  const WsiDicomInstance *inst = &part->inst;
  guint64 limit = (guint64) inst->rows * inst->columns * 3 * 8
      + FRAME_BYTES_SLACK;
  WsiJpegDecoder *decoder;
  WsiJpegTile tile = { 0, };
  GError *local = NULL;
  guint8 *bytes;
  gsize size;
  gint transform;

  if (frame->length > limit)
    return tile_fail (slide, level, col, row, index, error, "%"
        G_GUINT64_FORMAT " bytes is implausible for a frame", frame->length);
  bytes = wsi_read_context_scratch (ctx, SCRATCH_FRAME_BYTES, frame->length);
  decoder = wsi_read_context_backend_state (ctx, &wsi_slide_backend_dicom);
  if (bytes == NULL || decoder == NULL)
    return tile_fail (slide, level, col, row, index, error, "out of memory");
  if (!wsi_byte_source_read (part->source, frame->offset, frame->length,
          bytes, &local)) {
    tile_fail (slide, level, col, row, index, error, "%s", local->message);
    g_error_free (local);
    return FALSE;
  }
  bytes = fragments_join (bytes, frame->length, &size);
  if (bytes == NULL)
    return tile_fail (slide, level, col, row, index, error, "no fragment "
        "item at offset %" G_GUINT64_FORMAT " (%s)", frame->offset,
        inst->frame_index_source);
  transform = adobe_transform (bytes, size);
  tile.data = bytes;
  tile.size = size;
  tile.rgb = transform == 0 || (transform < 0
      && g_strcmp0 (inst->photometric, "RGB") == 0);
  tile.width = inst->columns;
  tile.height = inst->rows;
  if (!wsi_jpeg_decoder_decode (decoder, &tile, scale, x, y, w, h,
          target->data, target->stride, target->layout, error))
    return frame_decode_failed (slide, level, col, row, index, error);
  return TRUE;
}

static void raw_row_convert (const guint8 * src, guint samples,
    gboolean invert, guint w, guint8 * dst, gint layout);

#if defined (WSI_HAVE_OPENJPEG) || defined (WSI_HAVE_CHARLS)
/* The codecs that decode whole codestreams (JPEG 2000, JPEG-LS): the
 * frame's bytes read into the thread's scratch and its fragments joined
 * (@size), with scratch for the w x h RGB rectangle they decode to. */
static gboolean
fetch_encapsulated_frame (WsiSlide * slide, WsiReadContext * ctx,
    const DicomPart * part, const WsiDicomFrame * frame, gint level,
    gint64 col, gint64 row, gint64 index, guint w, guint h, guint8 ** bytes,
    gsize * size, guint8 ** rgb, GError ** error)
{
  const WsiDicomInstance *inst = &part->inst;
  guint64 limit = (guint64) inst->rows * inst->columns * 3
      * inst->bits_allocated + FRAME_BYTES_SLACK;
  GError *local = NULL;

  if (frame->length > limit)
    return tile_fail (slide, level, col, row, index, error, "%"
        G_GUINT64_FORMAT " bytes is implausible for a frame", frame->length);
  *bytes = wsi_read_context_scratch (ctx, SCRATCH_FRAME_BYTES, frame->length);
  *rgb = wsi_read_context_scratch (ctx, SCRATCH_DECODED_RGB, (gsize) w * h * 3);
  if (*bytes == NULL || *rgb == NULL)
    return tile_fail (slide, level, col, row, index, error, "out of memory");
  if (!wsi_byte_source_read (part->source, frame->offset, frame->length,
          *bytes, &local)) {
    tile_fail (slide, level, col, row, index, error, "%s", local->message);
    g_error_free (local);
    return FALSE;
  }
  *bytes = fragments_join (*bytes, frame->length, size);
  if (*bytes == NULL)
    return tile_fail (slide, level, col, row, index, error, "no fragment "
        "item at offset %" G_GUINT64_FORMAT " (%s)", frame->offset,
        inst->frame_index_source);
  return TRUE;
}

/* The tail of those codecs: when the frame @decoded to the w x h RGB
 * scratch, its rows written in the target's layout; else the codec's
 * error, prefixed with the frame. */
static gboolean
deliver_decoded_rgb (WsiSlide * slide, gint level, gint64 col, gint64 row,
    gint64 index, gboolean decoded, const guint8 * rgb, guint w, guint h,
    const WsiTiledTarget * target, GError ** error)
{
  guint i;

  if (!decoded)
    return frame_decode_failed (slide, level, col, row, index, error);
  for (i = 0; i < h; i++)
    raw_row_convert (rgb + (gsize) i * w * 3, 3, FALSE, w,
        target->data + (gsize) i * target->stride, target->layout);
  return TRUE;
}
#endif

#ifdef WSI_HAVE_OPENJPEG
static WsiJ2kColor
j2k_color (const WsiDicomInstance * inst)
{
  if (inst->samples_per_pixel == 1)
    return g_strcmp0 (inst->photometric, "MONOCHROME1") == 0
        ? WSI_J2K_COLOR_GREY_INVERTED : WSI_J2K_COLOR_GREY;
  /* YBR_RCT and YBR_ICT: the codestream's own transform undoes it. */
  return g_strcmp0 (inst->photometric, "YBR_FULL") == 0
      ? WSI_J2K_COLOR_YBR_FULL : WSI_J2K_COLOR_RGB;
}

/* JPEG 2000 and HTJ2K: the frame decoded to RGB scratch at 1/@scale, then
 * written in the target's layout. */
static gboolean
decode_j2k (WsiSlide * slide, WsiReadContext * ctx, const DicomPart * part,
    const WsiDicomFrame * frame, gint level, gint64 col, gint64 row,
    gint64 index, guint scale, guint x, guint y, guint w, guint h,
    const WsiTiledTarget * target, GError ** error)
{
  const WsiDicomInstance *inst = &part->inst;
  WsiJ2kFrame j2k = { 0, };
  guint8 *bytes = NULL, *rgb = NULL;
  gsize size;

  if (!fetch_encapsulated_frame (slide, ctx, part, frame, level, col, row,
          index, w, h, &bytes, &size, &rgb, error))
    return FALSE;
  j2k.data = bytes;
  j2k.size = size;
  j2k.width = inst->columns;
  j2k.height = inst->rows;
  j2k.color = j2k_color (inst);
  return deliver_decoded_rgb (slide, level, col, row, index,
      wsi_j2k_decode (&j2k, scale, x, y, w, h, rgb, (gsize) w * 3, error),
      rgb, w, h, target, error);
}
#endif

#ifdef WSI_HAVE_CHARLS
/* JPEG-LS: the whole frame decoded by CharLS, the rectangle written in the
 * target's layout. */
static gboolean
decode_jls (WsiSlide * slide, WsiReadContext * ctx, const DicomPart * part,
    const WsiDicomFrame * frame, gint level, gint64 col, gint64 row,
    gint64 index, guint x, guint y, guint w, guint h,
    const WsiTiledTarget * target, GError ** error)
{
  const WsiDicomInstance *inst = &part->inst;
  WsiJlsFrame jls = { 0, };
  guint8 *bytes = NULL, *rgb = NULL;
  gsize size;

  if (!fetch_encapsulated_frame (slide, ctx, part, frame, level, col, row,
          index, w, h, &bytes, &size, &rgb, error))
    return FALSE;
  jls.data = bytes;
  jls.size = size;
  jls.width = inst->columns;
  jls.height = inst->rows;
  jls.components = inst->samples_per_pixel;
  jls.invert = g_strcmp0 (inst->photometric, "MONOCHROME1") == 0;
  return deliver_decoded_rgb (slide, level, col, row, index,
      wsi_jls_decode (&jls, x, y, w, h, rgb, (gsize) w * 3, error),
      rgb, w, h, target, error);
}
#endif

/* One row of 8-bit samples (RGB or grey) into the target's layout. */
static void
raw_row_convert (const guint8 * src, guint samples, gboolean invert, guint w,
    guint8 * dst, gint layout)
{
  guint i;

  for (i = 0; i < w; i++) {
    guint8 r, g, b;
    if (samples == 3) {
      r = src[3 * i];
      g = src[3 * i + 1];
      b = src[3 * i + 2];
    } else {
      r = g = b = invert ? 255 - src[i] : src[i];
    }
    switch (layout) {
      case WSI_TILED_LAYOUT_ARGB:
        ((guint32 *) dst)[i] = 0xFF000000u | ((guint32) r << 16)
            | ((guint32) g << 8) | b;
        break;
      case WSI_PIXEL_RGB:
        dst[3 * i] = r;
        dst[3 * i + 1] = g;
        dst[3 * i + 2] = b;
        break;
      case WSI_PIXEL_BGRX:
        dst[4 * i] = b;
        dst[4 * i + 1] = g;
        dst[4 * i + 2] = r;
        dst[4 * i + 3] = 0xFF;
        break;
      default:                 /* RGBA, RGBX */
        dst[4 * i] = r;
        dst[4 * i + 1] = g;
        dst[4 * i + 2] = b;
        dst[4 * i + 3] = 0xFF;
        break;
    }
  }
}

/* 16-bit grey to 8 bits over the stored range: round (v * 255 / max). */
static const guint8 *
grey16_to_8 (const guint8 * src, guint w, guint bits_stored, guint8 * dst)
{
  guint32 max = bits_stored >= 1 && bits_stored <= 16
      ? (1u << bits_stored) - 1 : 0xFFFF;
  guint i;

  if (dst == NULL)
    return NULL;
  for (i = 0; i < w; i++) {
    guint32 v = (src[2 * i] | (src[2 * i + 1] << 8)) & max;
    dst[i] = (v * 255 + max / 2) / max;
  }
  return dst;
}

/* Uncompressed: the rows needed, one read, converted. Planar (sample by
 * sample) frames are read whole and interleaved first. */
static gboolean
decode_raw (WsiSlide * slide, WsiReadContext * ctx, const DicomPart * part,
    const WsiDicomFrame * frame, gint level, gint64 col, gint64 row,
    gint64 index, guint x, guint y, guint w, guint h,
    const WsiTiledTarget * target, GError ** error)
{
  const WsiDicomInstance *inst = &part->inst;
  guint samples = inst->samples_per_pixel;
  guint sample_bytes = inst->bits_allocated / 8;
  gboolean planar = samples == 3 && inst->planar_configuration == 1;
  gsize row_bytes = (gsize) inst->columns * samples * sample_bytes;
  gsize first = planar ? 0 : (gsize) y * row_bytes;
  gsize length = planar ? frame->length : (gsize) h * row_bytes;
  gboolean invert = g_strcmp0 (inst->photometric, "MONOCHROME1") == 0;
  GError *local = NULL;
  guint8 *bytes, *rgb_row = NULL;
  guint i, j;

  bytes = wsi_read_context_scratch (ctx, SCRATCH_FRAME_BYTES, length);
  if (planar)
    rgb_row = wsi_read_context_scratch (ctx, SCRATCH_RAW_ROW, row_bytes);
  if (bytes == NULL || (planar && rgb_row == NULL))
    return tile_fail (slide, level, col, row, index, error, "out of memory");
  if (!wsi_byte_source_read (part->source, frame->offset + first, length,
          bytes, &local)) {
    tile_fail (slide, level, col, row, index, error, "%s", local->message);
    g_error_free (local);
    return FALSE;
  }
  for (i = 0; i < h; i++) {
    const guint8 *src;
    if (planar) {
      gsize plane = (gsize) inst->rows * inst->columns;
      for (j = 0; j < w; j++) {
        gsize at = (gsize) (y + i) * inst->columns + x + j;
        rgb_row[3 * j] = bytes[at];
        rgb_row[3 * j + 1] = bytes[plane + at];
        rgb_row[3 * j + 2] = bytes[2 * plane + at];
      }
      src = rgb_row;
    } else if (sample_bytes == 2) {
      src = grey16_to_8 (bytes + (gsize) i * row_bytes + (gsize) x * 2, w,
          inst->bits_stored, wsi_read_context_scratch (ctx, SCRATCH_RAW_ROW,
              w));
      if (src == NULL)
        return tile_fail (slide, level, col, row, index, error,
            "out of memory");
    } else {
      src = bytes + (gsize) i * row_bytes + (gsize) x * samples;
    }
    raw_row_convert (src, samples, invert, w,
        target->data + (gsize) i * target->stride, target->layout);
  }
  return TRUE;
}

static gboolean
dicom_decode_tile (WsiSlide * slide, WsiReadContext * ctx, gint level,
    gint64 column, gint64 row, guint scale, guint x, guint y, guint w,
    guint h, const WsiTiledTarget * target, GError ** error)
{
  const DicomSlide *ds = slide->handle;
  const DicomLevel *lv = &ds->levels[level];
  gint64 entry = lv->tile_frame[row * lv->tiles_across + column];
  const DicomPart *part;
  const WsiDicomFrame *frame;
  gint64 index;

  if (entry == NO_FRAME) {
    /* Not scanned (TILED_SPARSE): glass. */
    wsi_tiled_target_fill_white (target, w, h);
    return TRUE;
  }
  if (entry == LOST_FRAME)
    return tile_fail (slide, level, column, row,
        row * lv->tiles_across + column, error, "the instance has fewer "
        "frames (%" G_GUINT64_FORMAT ") than its TILED_FULL grid",
        lv->n_frames);
  part = ds->parts->pdata[entry >> 32];
  index = entry & G_MAXUINT32;
  frame = &part->inst.frames[index];
  if (frame->length == 0)
    return tile_fail (slide, level, column, row, index, error, "the file "
        "holds no such frame (%s)", part->inst.frame_index_source);
  if (part->inst.pixels == WSI_DICOM_PIXELS_JPEG)
    return decode_jpeg (slide, ctx, part, frame, level, column, row, index,
        scale, x, y, w, h, target, error);
#ifdef WSI_HAVE_OPENJPEG
  if (part->inst.pixels == WSI_DICOM_PIXELS_JPEG2000)
    return decode_j2k (slide, ctx, part, frame, level, column, row, index,
        scale, x, y, w, h, target, error);
#endif
#ifdef WSI_HAVE_CHARLS
  if (part->inst.pixels == WSI_DICOM_PIXELS_JPEGLS)
    return decode_jls (slide, ctx, part, frame, level, column, row, index,
        x, y, w, h, target, error);
#endif
  return decode_raw (slide, ctx, part, frame, level, column, row, index, x,
      y, w, h, target, error);
}

/* ---- prefetch: where a frame's bytes are ------------------------------ */

/* WsiTileBytesFunc: the frame's bytes in its part's source. */
static gboolean
dicom_tile_bytes (WsiSlide * slide, gint level, gint64 column, gint64 row,
    WsiByteSource ** source, WsiByteRange * range)
{
  const DicomSlide *ds = slide->handle;
  const DicomLevel *lv = &ds->levels[level];
  gint64 entry = lv->tile_frame[row * lv->tiles_across + column];
  const DicomPart *part;
  const WsiDicomFrame *frame;

  if (entry < 0)
    return FALSE;
  part = ds->parts->pdata[entry >> 32];
  frame = &part->inst.frames[entry & G_MAXUINT32];
  if (frame->length == 0)
    return FALSE;
  *source = part->source;
  range->offset = frame->offset;
  range->length = frame->length;
  return TRUE;
}

const WsiSlideBackend wsi_slide_backend_dicom = {
  .name = WSI_BACKEND_DICOM,
  .detect = dicom_detect,
  .open = dicom_open,
  .read_argb = wsi_tiled_backend_read_argb,
  .read = wsi_tiled_backend_read,
  .prefetch = wsi_tiled_backend_prefetch,
  .thread_state_new = wsi_jpeg_decoder_state_new,
  .thread_state_free = wsi_jpeg_decoder_state_free,
  .close = dicom_close,
  .native_scale = wsi_tiled_backend_native_scale,
  .read_argb_scaled = wsi_tiled_backend_read_argb_scaled,
  .read_rgb_scaled = wsi_tiled_backend_read_rgb_scaled,
};
