/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* wsistainref.c: see wsistainref.h. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <glib/gstdio.h>
#include <gst/video/video.h>

#include "wsistainref.h"

/* jpegdec's default inverse DCT is libjpeg's fast, less exact one; the
 * exact integer one is what libjpeg, PIL and OpenCV decode with, so the
 * reference's statistics are those of the pixels everyone else sees. */
static void
on_deep_element_added (GstBin * bin, GstBin * sub_bin, GstElement * element,
    gpointer user_data)
{
  GstElementFactory *factory = gst_element_get_factory (element);

  if (factory != NULL && g_strcmp0 (GST_OBJECT_NAME (factory),
          "jpegdec") == 0)
    gst_util_set_object_arg (G_OBJECT (element), "idct-method", "islow");
}

/* TRUE when @path starts as a TIFF or BigTIFF does. */
static gboolean
is_tiff (const gchar * path)
{
  guint8 magic[4] = { 0 };
  FILE *f = g_fopen (path, "rb");
  gboolean tiff;

  if (f == NULL)
    return FALSE;
  tiff = fread (magic, 1, 4, f) == 4
      && ((magic[0] == 'I' && magic[1] == 'I' && magic[3] == 0
          && (magic[2] == 42 || magic[2] == 43))
      || (magic[0] == 'M' && magic[1] == 'M' && magic[2] == 0
          && (magic[3] == 42 || magic[3] == 43)));
  fclose (f);
  return tiff;
}

/* Decodes @path to packed RGB with GStreamer's decoders; NULL with a
 * reason in @error. */
static GstSample *
decode_reference (const gchar * path, gchar ** error)
{
  GstElement *pipeline, *src, *sink;
  GstBus *bus;
  GstMessage *msg;
  GstSample *sample = NULL;
  GError *err = NULL;

  /* decodebin finds no TIFF decoder: gdk-pixbuf's (gst-plugins-good,
   * libtiff underneath) has rank none, so a TIFF is named to it */
  pipeline = gst_parse_launch (is_tiff (path) ?
      "filesrc name=src ! gdkpixbufdec ! videoconvert ! "
      "video/x-raw,format=RGB ! fakesink name=sink sync=false" :
      "filesrc name=src ! decodebin ! videoconvert ! "
      "video/x-raw,format=RGB ! fakesink name=sink sync=false", &err);
  if (pipeline == NULL) {
    *error = g_strdup_printf ("cannot make a decoder (%s)", err ?
        err->message : "?");
    g_clear_error (&err);
    return NULL;
  }
  g_signal_connect (pipeline, "deep-element-added",
      G_CALLBACK (on_deep_element_added), NULL);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  g_object_set (src, "location", path, NULL);
  g_object_set (sink, "enable-last-sample", TRUE, NULL);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  bus = gst_element_get_bus (pipeline);
  msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS)
    g_object_get (sink, "last-sample", &sample, NULL);
  else if (msg != NULL) {
    gst_message_parse_error (msg, &err, NULL);
    *error = g_strdup (err ? err->message : "decoding failed");
    g_clear_error (&err);
  } else
    *error = g_strdup ("decoding did not finish in 60 s");
  if (sample == NULL && *error == NULL)
    *error = g_strdup ("no image decoded");
  gst_clear_message (&msg);
  gst_object_unref (bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return sample;
}

gboolean
wsi_stain_reference_load (const gchar * path, WsiStainMethod method,
    WsiStainMatrix * matrix, WsiStainLab * lab, gchar ** error)
{
  GstSample *sample = decode_reference (path, error);
  GstVideoInfo info;
  GstVideoFrame frame;
  gboolean ok = FALSE;

  if (sample != NULL && gst_video_info_from_caps (&info,
          gst_sample_get_caps (sample))
      && gst_video_frame_map (&frame, &info, gst_sample_get_buffer (sample),
          GST_MAP_READ)) {
    WsiStainImage image = { GST_VIDEO_FRAME_PLANE_DATA (&frame, 0),
      GST_VIDEO_FRAME_WIDTH (&frame), GST_VIDEO_FRAME_HEIGHT (&frame),
      GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0), 3, 0, 1, 2
    };
    WsiStainPixels px = { &image, NULL, 0 };

    if (method == WSI_STAIN_MACENKO)
      ok = wsi_stain_estimate_macenko (&px, matrix, NULL);
    else if (method == WSI_STAIN_VAHADANE)
      ok = wsi_stain_estimate_vahadane (&px, matrix, NULL);
    else
      ok = wsi_stain_estimate_lab (&px, lab);
    if (!ok)
      *error = g_strdup ("its pixels give no stain estimate (too little "
          "stained tissue, or one colour)");
    gst_video_frame_unmap (&frame);
  } else if (sample != NULL)
    *error = g_strdup ("the decoded image is not 8-bit RGB");
  if (sample)
    gst_sample_unref (sample);
  return ok;
}
