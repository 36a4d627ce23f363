/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsitestslide.h: writes small synthetic whole-slide images for the tests,
 * the demo and the benchmarks: pyramidal JPEG-tiled TIFFs in the generic
 * layout (one tiled directory per level) and the Aperio layout (SVS:
 * "Aperio ..." ImageDescription with MPP, a stripped thumbnail as the
 * second directory, non-power-of-two level steps), with tissue-like blobs
 * on a glass-white background, plus broken files. Level 0 is painted at the
 * slide's mpp (nuclei of 2-4 um radius, fibres every 8 um, half a micron of
 * optical blur); every other level is the area average of level 0, as a
 * scanner derives its pyramid, so a read at level k's mpp from level 0 and
 * the read of level k agree (cost: one level-0 area painted per level).
 */

#ifndef __WSI_TEST_SLIDE_H__
#define __WSI_TEST_SLIDE_H__

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  WSI_TEST_LAYOUT_GENERIC,      /* generic tiled TIFF, .tiff */
  WSI_TEST_LAYOUT_APERIO        /* Aperio SVS, .svs */
} WsiTestLayout;

typedef struct
{
  WsiTestLayout layout;
  guint width;                  /* level-0 size in pixels */
  guint height;
  guint tile_size;              /* multiple of 16 */
  guint levels;                 /* pyramid levels, >= 1 */
  guint level_step;             /* downsample between levels: 2, 3, 4, ... */
  gdouble mpp;                  /* microns per level-0 pixel; 0 = write none */
  /* Generic layout only: write a placeholder resolution (72 dpi) that a
   * reader must ignore, instead of the real mpp. */
  gboolean resolution_placeholder;
  guint tissue_blobs;           /* elliptic tissue regions; 0 = blank slide */
  guint32 seed;                 /* blob placement and texture */
  gint jpeg_quality;            /* 1..100 */
} WsiTestSlideSpec;

/* Defaults: generic layout, 2048x1536, tiles 256, 3 levels, step 2,
 * mpp 0.25, 3 blobs, seed 1, quality 85. */
void wsi_test_slide_spec_init (WsiTestSlideSpec * spec);

/* Writes a valid slide. */
gboolean wsi_test_slide_write (const gchar * path,
    const WsiTestSlideSpec * spec, GError ** error);

/* TRUE when level-0 position (x, y) lies inside a tissue blob of the slide
 * that wsi_test_slide_write() writes for @spec (the ground truth). */
gboolean wsi_test_slide_is_tissue (const WsiTestSlideSpec * spec,
    gdouble x, gdouble y);

/* Share of the slide area covered by tissue, 0..1. */
gdouble wsi_test_slide_tissue_fraction (const WsiTestSlideSpec * spec);

/* Broken files, each a different way for a slide to be unusable. */
/* A valid slide cut to @keep_fraction of its bytes (OpenSlide may refuse
 * it at open or fail later when reading). */
gboolean wsi_test_slide_write_truncated (const gchar * path,
    const WsiTestSlideSpec * spec, gdouble keep_fraction, GError ** error);
/* A slide that opens, but whose level-0 tiles all hold damaged JPEG data:
 * reads of level 0 fail, the overview (highest level) reads fine. */
gboolean wsi_test_slide_write_damaged_tiles (const gchar * path,
    const WsiTestSlideSpec * spec, GError ** error);
/* A slide whose level-0 tiles with index % @every == 0 hold damaged JPEG
 * data (row-major tile index): patches touching one fail, the rest read. */
gboolean wsi_test_slide_write_partly_damaged (const gchar * path,
    const WsiTestSlideSpec * spec, guint every, GError ** error);
/* Random bytes under a slide's name. */
gboolean wsi_test_slide_write_garbage (const gchar * path, gsize size,
    guint32 seed, GError ** error);
/* An empty file. */
gboolean wsi_test_slide_write_empty (const gchar * path, GError ** error);

G_END_DECLS

#endif /* __WSI_TEST_SLIDE_H__ */
