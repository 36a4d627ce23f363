/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsislide.h: an open whole-slide image, whatever library decodes it.
 *
 * wsislidesrc and patchreader only talk to this interface. A decoding
 * backend (OpenSlide today, see wsislide-openslide.c) fills in a
 * WsiSlideBackend; adding another one means adding a file and a line to
 * wsi_slide_backends(), nothing in the elements.
 */

#ifndef __WSI_SLIDE_H__
#define __WSI_SLIDE_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct _WsiSlide WsiSlide;
typedef struct _WsiSlideBackend WsiSlideBackend;

#define WSI_SLIDE_ERROR (wsi_slide_error_quark ())
GQuark wsi_slide_error_quark (void);

typedef enum
{
  WSI_SLIDE_ERROR_UNSUPPORTED,  /* no backend recognises the file */
  WSI_SLIDE_ERROR_OPEN,         /* recognised, but opening failed */
  WSI_SLIDE_ERROR_READ,         /* a region could not be decoded */
  WSI_SLIDE_ERROR_EMPTY         /* the slide has no pixels */
} WsiSlideError;

/* Where WsiSlide.mpp_x/mpp_y came from. */
#define WSI_MPP_SOURCE_BACKEND "openslide"
#define WSI_MPP_SOURCE_TIFF "tiff-resolution"
#define WSI_MPP_SOURCE_UNKNOWN "unknown"

struct _WsiSlide
{
  const WsiSlideBackend *backend;
  gpointer handle;              /* the backend's own object */
  gchar *path;
  gchar *vendor;
  gint level_count;
  gint64 *level_width;          /* level_count entries */
  gint64 *level_height;
  gdouble *level_downsample;
  gdouble mpp_x;                /* microns per level-0 pixel, 0 = unknown */
  gdouble mpp_y;
  const gchar *mpp_source;      /* one of WSI_MPP_SOURCE_* */
};

struct _WsiSlideBackend
{
  const gchar *name;
  /* Returns TRUE when this backend can read the file (cheap check). */
  gboolean (*detect) (const gchar * path);
  /* Fills slide->handle and every descriptive field, or sets @error. */
  gboolean (*open) (WsiSlide * slide, GError ** error);
  /* Decodes a w x h region at @level whose top-left is (x, y) in level-0
   * pixels into @argb: premultiplied 0xAARRGGBB words, row-major. */
  gboolean (*read_region) (WsiSlide * slide, guint32 * argb, gint64 x,
      gint64 y, gint level, gint64 w, gint64 h, GError ** error);
  /* Releases slide->handle. */
  void (*close) (WsiSlide * slide);
};

/* Tries every backend in turn; the error names the file and the reason. */
WsiSlide *wsi_slide_open (const gchar * path, GError ** error);

void wsi_slide_close (WsiSlide * slide);

gboolean wsi_slide_read_region (WsiSlide * slide, guint32 * argb,
    gint64 x, gint64 y, gint level, gint64 w, gint64 h, GError ** error);

/* The coarsest level whose downsample does not exceed @downsample (with a
 * small tolerance so that 2.0005 counts as 2). */
gint wsi_slide_best_level (const WsiSlide * slide, gdouble downsample);

/* TRUE when @path has an extension some backend may read (for directory
 * scans). */
gboolean wsi_slide_has_known_extension (const gchar * path);

/* Microns per pixel from TIFF resolution tags, or 0 when the unit is not
 * centimetre/inch or the value is implausible for a slide (placeholders such
 * as 72 dpi or 10 px/cm). @unit is the TIFF ResolutionUnit (2 = inch,
 * 3 = centimetre). */
gdouble wsi_mpp_from_tiff_resolution (gdouble pixels_per_unit, gint unit);

/* Converts premultiplied ARGB to RGB composited on white (transparent,
 * unscanned areas come out as glass). @rgb has room for n * 3 bytes. */
void wsi_argb_to_rgb_on_white (const guint32 * argb, guint8 * rgb, gsize n);

/* The backends, in the order they are tried. */
const WsiSlideBackend *const *wsi_slide_backends (void);

extern const WsiSlideBackend wsi_slide_backend_openslide;

G_END_DECLS

#endif /* __WSI_SLIDE_H__ */
