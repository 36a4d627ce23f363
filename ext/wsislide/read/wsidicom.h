/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsidicom.h: what one DICOM VL Whole Slide Microscopy instance holds, for
 * the DICOM backend (wsislide-dicom.c) and the collections that group
 * instances into series.
 *
 * Contract: wsi_dicom_instance_read() parses the file meta (explicit VR
 * little endian, after the 128-byte preamble and "DICM") and the data set
 * up to Pixel Data, in explicit VR little endian (the transfer syntaxes of
 * tiled slides: uncompressed, JPEG, JPEG 2000, JPEG-LS) or implicit VR
 * little endian (uncompressed; the VRs of the attributes used come from a
 * small dictionary, an undefined length marks a sequence), through a
 * WsiByteSource: it never sees a path, so a remote object parses as a local
 * file does. It keeps only the attributes a tiled pyramid needs (see
 * WsiDicomInstance) and, unless asked for the header only, locates every
 * frame's bytes without reading them: the Basic or the Extended Offset
 * Table when present and plausible, else one walk over the encapsulated
 * items' headers. A frame the file does not really hold (truncated item,
 * offset pointing elsewhere, fewer items than NumberOfFrames) is not an
 * open error: its entry says so and reading it fails then (the caller
 * drops and refills that tile). The parser is written for hostile input:
 * every length is checked against its parent and the object's size, nesting
 * is bounded, and nothing is allocated from a length before that check.
 *
 * Cost: the data set is read in 256 KiB windows, 8 KiB for the identity
 * alone (header_only); Pixel Data and large values such as ICC profiles
 * are skipped, not read. The per-frame
 * functional groups of a 10^5-frame TILED_SPARSE level are walked in one
 * tight pass over memory (no tree is built), keeping 16 bytes a frame.
 * Walking items without an offset table costs one 8-byte read per
 * fragment. Threading: the result is immutable after reading.
 */

#ifndef __WSI_DICOM_H__
#define __WSI_DICOM_H__

#include <glib.h>
#include "wsibytesource.h"

G_BEGIN_DECLS

/* VL Whole Slide Microscopy Image Storage. */
#define WSI_DICOM_SOP_CLASS_WSI "1.2.840.10008.5.1.4.1.1.77.1.6"

#define WSI_DICOM_TS_IMPLICIT_LE "1.2.840.10008.1.2"
#define WSI_DICOM_TS_EXPLICIT_LE "1.2.840.10008.1.2.1"
#define WSI_DICOM_TS_JPEG_BASELINE "1.2.840.10008.1.2.4.50"
#define WSI_DICOM_TS_JPEGLS_LOSSLESS "1.2.840.10008.1.2.4.80"
#define WSI_DICOM_TS_JPEGLS_NEAR "1.2.840.10008.1.2.4.81"
#define WSI_DICOM_TS_J2K_LOSSLESS "1.2.840.10008.1.2.4.90"
#define WSI_DICOM_TS_J2K "1.2.840.10008.1.2.4.91"
/* High-throughput JPEG 2000: lossless, lossless RPCL, lossy. */
#define WSI_DICOM_TS_HTJ2K_LOSSLESS "1.2.840.10008.1.2.4.201"
#define WSI_DICOM_TS_HTJ2K_LOSSLESS_RPCL "1.2.840.10008.1.2.4.202"
#define WSI_DICOM_TS_HTJ2K "1.2.840.10008.1.2.4.203"

/* ImageType's third value. */
typedef enum
{
  WSI_DICOM_FLAVOR_OTHER,
  WSI_DICOM_FLAVOR_VOLUME,
  WSI_DICOM_FLAVOR_THUMBNAIL,
  WSI_DICOM_FLAVOR_OVERVIEW,
  WSI_DICOM_FLAVOR_LABEL,
} WsiDicomFlavor;

/* How frames are stored. */
typedef enum
{
  WSI_DICOM_PIXELS_NATIVE,      /* uncompressed, frame after frame */
  WSI_DICOM_PIXELS_JPEG,        /* encapsulated JPEG baseline */
  WSI_DICOM_PIXELS_JPEG2000,    /* encapsulated JPEG 2000 or HTJ2K */
  WSI_DICOM_PIXELS_JPEGLS,      /* encapsulated JPEG-LS */
  WSI_DICOM_PIXELS_UNSUPPORTED, /* another transfer syntax */
} WsiDicomPixels;

/* Where one frame's bytes lie. For encapsulated data: the file range from
 * the frame's first item header to the end of its last item (length 0:
 * the file does not hold this frame). For native data: the frame's pixels. */
typedef struct
{
  guint64 offset;
  guint64 length;
} WsiDicomFrame;

typedef struct
{
  gchar *sop_class_uid;
  gchar *sop_instance_uid;
  gchar *series_uid;
  gchar *transfer_syntax;
  gchar *image_type;            /* the whole value, e.g. ORIGINAL\PRIMARY\VOLUME\NONE */
  WsiDicomFlavor flavor;
  WsiDicomPixels pixels;

  guint32 rows, columns;        /* one frame */
  guint64 total_columns, total_rows;    /* the level (0 when absent) */
  guint32 n_frames;
  gboolean tiled_sparse;        /* DimensionOrganizationType TILED_SPARSE */
  guint16 samples_per_pixel, bits_allocated, bits_stored;
  guint16 planar_configuration, pixel_representation;
  gchar *photometric;
  gdouble spacing_row_mm, spacing_column_mm;    /* 0 = unknown */
  gdouble objective_power;      /* the first optical path's; 0 = unknown */
  /* The ICC profile's value in the file (the first optical path's, or a
   * top-level one): length 0 when there is none. Not read at parse. */
  guint64 icc_profile_offset, icc_profile_length;
  guint n_optical_paths;        /* items of OpticalPathSequence */
  guint32 n_focal_planes;       /* TotalPixelMatrixFocalPlanes (0 = absent) */

  /* Concatenation: instances sharing concatenation_uid make one level;
   * frame k of this one is frame concatenation_frame_offset + k of it. */
  gchar *concatenation_uid;
  guint32 concatenation_frame_offset;

  /* Per frame (n_frames entries) from the per-frame functional groups, or
   * NULL when the file has none: 1-based positions in the total pixel
   * matrix, and whether the frame is in the first optical path and focal
   * plane (those of frame 1). */
  gint32 *frame_column_position;
  gint32 *frame_row_position;
  guint8 *frame_in_first_plane;

  /* Pixel Data: where its value starts, its length (G_MAXUINT32 when
   * encapsulated), and each frame (NULL with header_only). */
  guint64 pixel_data_offset;
  guint64 pixel_data_length;
  WsiDicomFrame *frames;
  const gchar *frame_index_source;      /* "basic offset table", ... */
  /* Frames NumberOfFrames declares that the file does not hold (length 0:
   * cut inside Pixel Data, an item running past the end, fewer items):
   * damage, unlike a TILED_SPARSE tile no frame lists (glass, by design). */
  guint32 n_frames_missing;
} WsiDicomInstance;

/* TRUE when @bytes (the first @size bytes of a file) hold the DICOM
 * preamble and "DICM" magic. */
gboolean wsi_dicom_sniff (const guint8 * bytes, gsize size);

/* Reads the first 132 bytes of @source and sniffs them. */
gboolean wsi_dicom_source_is_dicom (WsiByteSource * source);

/* TRUE when the local file @path is to be taken as a DICOM instance: its
 * name ends in .dcm (any case), or it has no slide extension of this build
 * (an IDC download, a PACS export named by UID) and sniffs as DICOM. The
 * sniff is one 132-byte read, made only for names without a slide
 * extension. */
gboolean wsi_dicom_path_is_dicom (const gchar * path);

/* Parses @source into @instance (zeroed first). The error names the
 * source's display URI and the reason. On failure @instance is cleared.
 * With @header_only (grouping files into series) only the identity is
 * read: the file meta and the top-level attributes up to
 * TotalPixelMatrixRows (0048,0007), i.e. the SOP class and instance,
 * ImageType (flavor), series and concatenation UIDs, the Image Pixel
 * attributes and the total pixel matrix; the walk stops at the first
 * top-level element after it, in 8 KiB windows, so an instance costs a few
 * KiB read whatever its size. Optical paths, spacing, the per-frame groups
 * and Pixel Data are not looked at (a file without Pixel Data passes). */
gboolean wsi_dicom_instance_read (WsiDicomInstance * instance,
    WsiByteSource * source, gboolean header_only, GError ** error);

void wsi_dicom_instance_clear (WsiDicomInstance * instance);

/* The name of a transfer syntax UID for messages ("JPEG-LS Lossless"), or
 * the UID itself. */
const gchar *wsi_dicom_transfer_syntax_name (const gchar * uid);

G_END_DECLS

#endif /* __WSI_DICOM_H__ */
