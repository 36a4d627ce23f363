/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitestdicom.h: DICOM VL Whole Slide Microscopy series written from a
 * JPEG-tiled TIFF pyramid (the synthetic slides of wsitestslide.h), for the
 * tests and benchmarks of the DICOM backend.
 *
 * Contract: wsi_test_dicom_from_tiff() writes one instance per tiled TIFF
 * directory (a level), all of one new series, into a folder as
 * <prefix>-level<N>.dcm, plus <prefix>-thumbnail.dcm when asked; with
 * `concatenation`, level 0 is split in two instances of one concatenation
 * (<prefix>-level0.dcm and <prefix>-level0-part2.dcm, in @paths after it). JPEG frames
 * are the TIFF tiles unchanged, with the directory's JPEGTables spliced in
 * after SOI (a DICOM frame is a whole JPEG stream), so a decoder gives the
 * same pixels as from the TIFF; uncompressed frames hold libtiff's RGB
 * decode of the tile. TILED_FULL writes frames in grid order; TILED_SPARSE
 * writes them last tile first with per-frame plane positions, leaving out
 * the tiles @omit_tile says to. Pixel spacing is the TIFF's mpp when the
 * caller gives it. Damage options write broken files on purpose for the
 * failure tests. The files are valid for pydicom (tests/check checks).
 *
 * Cost: one pass over the TIFF's tiles; the frames of one level are held in
 * memory while it is written. Threading: no shared state.
 */

#ifndef __WSI_TEST_DICOM_H__
#define __WSI_TEST_DICOM_H__

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  WSI_TEST_DICOM_TABLE_NONE,    /* empty Basic Offset Table */
  WSI_TEST_DICOM_TABLE_BASIC,
  WSI_TEST_DICOM_TABLE_EXTENDED,
} WsiTestDicomTable;

typedef enum
{
  WSI_TEST_DICOM_DAMAGE_NONE,
  /* The last level-0 frame's item cut short by the file's end. */
  WSI_TEST_DICOM_DAMAGE_TRUNCATED_ITEM,
  /* Level 0's offset table points frame 3 (1-based) 6 bytes late: frames
   * 2 and 3 fail. */
  WSI_TEST_DICOM_DAMAGE_BAD_OFFSET,
  /* Level 0's NumberOfFrames is one short of the frames written. */
  WSI_TEST_DICOM_DAMAGE_FRAME_COUNT,
  /* The JPEG (or JPEG 2000) stream of level 0's frame 2 has its entropy
   * data (packet data) overwritten with FF D9 pairs. */
  WSI_TEST_DICOM_DAMAGE_JPEG_DATA,
} WsiTestDicomDamage;

/* JPEG 2000 frames (OpenJPEG's encoder on libtiff's RGB decode of each
 * tile): reversible 5/3 wavelet with the RCT (YBR_RCT, transfer syntax
 * .4.90: lossless), or irreversible 9/7 with the ICT at a fixed quality of
 * 52 dB (YBR_ICT, .4.91); 5 resolutions (fewer for small tiles), 64x64
 * code-blocks. Only when built with OpenJPEG (WSI_TEST_HAVE_OPENJPEG). */
typedef enum
{
  WSI_TEST_DICOM_J2K_NONE,
  WSI_TEST_DICOM_J2K_LOSSLESS,
  WSI_TEST_DICOM_J2K_LOSSY,
  /* HTJ2K lossless (.4.201, YBR_RCT), encoded by OpenJPH's ojph_compress
   * (Debian openjph-tools; OpenJPEG 2.5 decodes HTJ2K but does not encode
   * it), run once a frame: fails when that command is not on PATH. */
  WSI_TEST_DICOM_J2K_HT_LOSSLESS,
} WsiTestDicomJ2k;

/* JPEG-LS lossless frames (.4.80, RGB) by CharLS's encoder from libtiff's
 * RGB decode of each tile, in one of JPEG-LS's interleave modes. Only when
 * built with CharLS (WSI_TEST_HAVE_CHARLS). */
typedef enum
{
  WSI_TEST_DICOM_JPEGLS_NONE,
  WSI_TEST_DICOM_JPEGLS_SAMPLE, /* pixel-interleaved */
  WSI_TEST_DICOM_JPEGLS_LINE,   /* line-interleaved */
  WSI_TEST_DICOM_JPEGLS_PLANAR, /* one scan per component */
} WsiTestDicomJpegLs;

typedef struct
{
  gboolean sparse;              /* TILED_SPARSE (else TILED_FULL) */
  WsiTestDicomJpegLs jpegls;    /* JPEG-LS frames (overrides the below) */
  gboolean uncompressed;        /* explicit VR LE raw RGB (else JPEG) */
  WsiTestDicomJ2k j2k;          /* JPEG 2000 frames (overrides the two above) */
  WsiTestDicomTable table;      /* encapsulated only */
  guint fragments;              /* encapsulated: items a frame (0, 1: one) */
  gboolean thumbnail;           /* also a THUMBNAIL instance */
  gdouble mpp;                  /* PixelSpacing in µm; 0: none */
  guint omit_every;             /* sparse: leave out every Nth tile (0: none) */
  gboolean concatenation;       /* level 0 as two instances of a concatenation */
  /* An OpticalPathSequence item with ObjectiveLensPower (when > 0) and the
   * ICC profile of wsi_test_dicom_icc_profile() (when set). */
  gdouble objective_power;
  gboolean icc_profile;
  WsiTestDicomDamage damage;
  guint32 seed;                 /* UIDs */
} WsiTestDicomSpec;

void wsi_test_dicom_spec_init (WsiTestDicomSpec * spec);

/* The bytes written as the ICC profile (a fixed, even-sized stand-in, not
 * a real profile: readers note it, none applies it). */
const guint8 *wsi_test_dicom_icc_profile (gsize * size);

/* Writes the series; the paths written (level 0 first) go to @paths when
 * not NULL (free with g_strfreev). */
gboolean wsi_test_dicom_from_tiff (const gchar * tiff_path,
    const gchar * out_dir, const gchar * prefix,
    const WsiTestDicomSpec * spec, gchar *** paths, GError ** error);

G_END_DECLS

#endif /* __WSI_TEST_DICOM_H__ */
