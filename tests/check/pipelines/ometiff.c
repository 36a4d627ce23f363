/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* A JPEG-tiled TIFF slide converted losslessly to an OME-TIFF pyramid by
 * other software (every level decoded by libvips, written as deflate tiles
 * in SubIFDs by tifffile, PhysicalSize in the OME-XML) and to an OME-Zarr
 * store (the same levels, zstd chunks, NGFF 0.4 scales; and on Zarr v3,
 * unsharded and sharded: sharding_indexed shards of 2 x 2 inner chunks, the
 * index read by ranged reads) streams the same
 * records and byte-identical batches as the TIFF it came from (the store
 * named, and found as one slide in a folder scan), at 1, 2 and 4 reader
 * threads, at level 0 and at 2x from level 1 (DCT scaling off: a
 * lossless tile has no DCT to scale). No tissuemask: its overview is
 * decoded at a DCT scale only the JPEG slide has. Without /usr/bin/python3,
 * tifffile or vips the checks print a SKIP line with the reason (a failure
 * under CI=true, where install-deps.sh ran). The same copies (and the
 * store as NGFF 0.5 on Zarr v3) at an http:// URL served by nginx on
 * loopback stream the same bytes as on disk (SKIP without nginx); through
 * patchviews and through the patch store (written and served) they give
 * the same bytes as their TIFF. */

#include "wsipipeline.h"
#include "wsislide.h"
#include "wsitestslide.h"
#include "wsitestutil.h"
#include "wsiservers.h"

#include <glib/gstdio.h>
#include <string.h>

#define PYTHON "/usr/bin/python3"
#define PATCH 64

/* argv: source.tiff out.ome.tif levels mpp */
static const gchar convert_script[] =
    "import subprocess, sys, os, numpy as np, tifffile\n"
    "src, out, n, mpp = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])\n"
    "levels = []\n"
    "with tifffile.TiffFile(src) as t:\n"
    "    shapes = [p.shape for p in t.pages[:n]]\n"
    "for i in range(n):\n"
    "    raw = out + '.%d.raw' % i\n"
    "    subprocess.run(['vips', 'rawsave', '%s[page=%d]' % (src, i), raw], check=True)\n"
    "    levels.append(np.fromfile(raw, np.uint8).reshape(shapes[i][0], shapes[i][1], 3))\n"
    "    os.unlink(raw)\n"
    "tmp = out + '.part'\n"
    "with tifffile.TiffWriter(tmp, ome=True) as tw:\n"
    "    tw.write(levels[0], tile=(256, 256), photometric='rgb', compression='zlib',\n"
    "             predictor=True, subifds=n - 1,\n"
    "             metadata={'PhysicalSizeX': mpp, 'PhysicalSizeY': mpp})\n"
    "    for a in levels[1:]:\n"
    "        tw.write(a, tile=(256, 256), photometric='rgb', compression='zlib',\n"
    "                 predictor=True, subfiletype=1, metadata=None)\n"
    "os.rename(tmp, out)\n"
    "# the same levels as an OME-Zarr store (NGFF 0.4, Zarr v2, (y, x, c),\n"
    "# zstd chunks), written from the specification\n"
    "import json, numcodecs, shutil\n"
    "store = out.replace('.ome.tif', '.zarr')\n"
    "shutil.rmtree(store, ignore_errors=True)\n"
    "shutil.rmtree(os.path.join(os.path.dirname(out), 'zarr-only'), ignore_errors=True)\n"
    "for i in range(4):\n"
    "    shutil.rmtree(os.path.join(os.path.dirname(out), 'store-%d' % i), ignore_errors=True)\n"
    "codec = numcodecs.Zstd(level=3)\n"
    "for i, a in enumerate(levels):\n"
    "    d = os.path.join(store, str(i)); os.makedirs(d)\n"
    "    json.dump({'zarr_format': 2, 'shape': list(a.shape), 'chunks': [256, 256, 3],\n"
    "               'dtype': '|u1', 'compressor': codec.get_config(), 'fill_value': 0,\n"
    "               'order': 'C', 'filters': None}, open(os.path.join(d, '.zarray'), 'w'))\n"
    "    for y in range(0, a.shape[0], 256):\n"
    "        for x in range(0, a.shape[1], 256):\n"
    "            c = np.zeros((256, 256, 3), np.uint8); p = a[y:y + 256, x:x + 256]\n"
    "            c[:p.shape[0], :p.shape[1]] = p\n"
    "            open(os.path.join(d, '%d.%d.0' % (y // 256, x // 256)), 'wb').write(bytes(codec.encode(c.tobytes())))\n"
    "axes = [{'name': 'y', 'type': 'space', 'unit': 'micrometer'},\n"
    "        {'name': 'x', 'type': 'space', 'unit': 'micrometer'}, {'name': 'c', 'type': 'channel'}]\n"
    "ds = [{'path': str(i), 'coordinateTransformations': [{'type': 'scale', 'scale': [mpp * 2 ** i, mpp * 2 ** i, 1]}]} for i in range(n)]\n"
    "json.dump({'multiscales': [{'version': '0.4', 'axes': axes, 'datasets': ds}]}, open(os.path.join(store, '.zattrs'), 'w'))\n"
    "# and as NGFF 0.5 on Zarr v3 (zarr.json, bytes + zstd, keys c/y/x/c)\n"
    "store = out.replace('.ome.tif', '-v3.zarr')\n"
    "shutil.rmtree(store, ignore_errors=True)\n"
    "for i, a in enumerate(levels):\n"
    "    d = os.path.join(store, str(i)); os.makedirs(d)\n"
    "    json.dump({'zarr_format': 3, 'node_type': 'array', 'shape': list(a.shape), 'data_type': 'uint8',\n"
    "               'chunk_grid': {'name': 'regular', 'configuration': {'chunk_shape': [256, 256, 3]}},\n"
    "               'chunk_key_encoding': {'name': 'default', 'configuration': {'separator': '/'}},\n"
    "               'fill_value': 0, 'codecs': [{'name': 'bytes', 'configuration': {'endian': 'little'}},\n"
    "               {'name': 'zstd', 'configuration': {'level': 3, 'checksum': False}}]},\n"
    "              open(os.path.join(d, 'zarr.json'), 'w'))\n"
    "    for y in range(0, a.shape[0], 256):\n"
    "        for x in range(0, a.shape[1], 256):\n"
    "            c = np.zeros((256, 256, 3), np.uint8); p = a[y:y + 256, x:x + 256]\n"
    "            c[:p.shape[0], :p.shape[1]] = p\n"
    "            k = os.path.join(d, 'c', str(y // 256), str(x // 256)); os.makedirs(k, exist_ok=True)\n"
    "            open(os.path.join(k, '0'), 'wb').write(bytes(codec.encode(c.tobytes())))\n"
    "json.dump({'zarr_format': 3, 'node_type': 'group', 'attributes': {'ome': {'version': '0.5',\n"
    "           'multiscales': [{'axes': axes, 'datasets': ds}]}}}, open(os.path.join(store, 'zarr.json'), 'w'))\n"
    "# and sharded (sharding_indexed: 512-pixel shards of 256-pixel zstd inner\n"
    "# chunks, the index of (offset, nbytes) uint64 pairs at the end)\n"
    "import struct\n"
    "store = out.replace('.ome.tif', '-v3s.zarr')\n"
    "shutil.rmtree(store, ignore_errors=True)\n"
    "for i, a in enumerate(levels):\n"
    "    d = os.path.join(store, str(i)); os.makedirs(d)\n"
    "    json.dump({'zarr_format': 3, 'node_type': 'array', 'shape': list(a.shape), 'data_type': 'uint8',\n"
    "               'chunk_grid': {'name': 'regular', 'configuration': {'chunk_shape': [512, 512, 3]}},\n"
    "               'chunk_key_encoding': {'name': 'default', 'configuration': {'separator': '/'}},\n"
    "               'fill_value': 0, 'codecs': [{'name': 'sharding_indexed', 'configuration': {\n"
    "               'chunk_shape': [256, 256, 3], 'index_codecs': [{'name': 'bytes', 'configuration': {'endian': 'little'}}],\n"
    "               'codecs': [{'name': 'bytes', 'configuration': {'endian': 'little'}},\n"
    "               {'name': 'zstd', 'configuration': {'level': 3, 'checksum': False}}]}}]},\n"
    "              open(os.path.join(d, 'zarr.json'), 'w'))\n"
    "    for y in range(0, a.shape[0], 512):\n"
    "        for x in range(0, a.shape[1], 512):\n"
    "            body, index = b'', b''\n"
    "            for iy in range(2):\n"
    "                for ix in range(2):\n"
    "                    c = np.zeros((256, 256, 3), np.uint8)\n"
    "                    p = a[y + iy * 256:y + iy * 256 + 256, x + ix * 256:x + ix * 256 + 256]\n"
    "                    if p.size == 0:\n"
    "                        index += struct.pack('<QQ', 2 ** 64 - 1, 2 ** 64 - 1); continue\n"
    "                    c[:p.shape[0], :p.shape[1]] = p; e = bytes(codec.encode(c.tobytes()))\n"
    "                    index += struct.pack('<QQ', len(body), len(e)); body += e\n"
    "            k = os.path.join(d, 'c', str(y // 512), str(x // 512)); os.makedirs(k, exist_ok=True)\n"
    "            open(os.path.join(k, '0'), 'wb').write(body + index)\n"
    "json.dump({'zarr_format': 3, 'node_type': 'group', 'attributes': {'ome': {'version': '0.5',\n"
    "           'multiscales': [{'axes': axes, 'datasets': ds}]}}}, open(os.path.join(store, 'zarr.json'), 'w'))\n";

static gboolean
converter_usable (const gchar * check)
{
  gchar *probe[] = { (gchar *) PYTHON, (gchar *) "-c",
    (gchar *) "import tifffile, numpy, numcodecs, shutil; "
        "assert shutil.which('vips')",
    NULL
  };
  gint status = 0;
  const gchar *why = NULL;

  if (!g_file_test (PYTHON, G_FILE_TEST_IS_EXECUTABLE))
    why = PYTHON " not found";
  else if (!g_spawn_sync (NULL, probe, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL,
          NULL, NULL, NULL, &status, NULL)
      || !g_spawn_check_wait_status (status, NULL))
    why = "python3-tifffile, python3-zarr or libvips-tools (vips) missing "
        "(scripts/install-deps.sh installs them)";
  if (why == NULL)
    return TRUE;
  fail_if (wsi_test_in_ci (), "CI=true but %s", why);
  wsi_test_skip (check, "%s", why);
  return FALSE;
}

/* A 2048 x 1536 TIFF (3 levels, step 2) and its OME-TIFF copy. */
static void
make_pair (gchar ** tiff, gchar ** ome)
{
  gchar *dir = wsi_test_make_dir (WSI_TEST_TMPDIR, "ome");
  WsiTestSlideSpec spec;
  GError *error = NULL;
  gchar *argv[] = { (gchar *) PYTHON, (gchar *) "-c",
    (gchar *) convert_script, NULL, NULL, (gchar *) "3", (gchar *) "0.25",
    NULL
  };
  gchar *out = NULL, *err = NULL;
  gint status = 0;

  wsi_test_slide_spec_init (&spec);
  spec.width = 2048;
  spec.height = 1536;
  spec.tile_size = 256;
  spec.levels = 3;
  spec.level_step = 2;
  spec.mpp = 0.25;
  spec.tissue_blobs = 3;
  spec.seed = 11;
  *tiff = g_build_filename (dir, "slide.tiff", NULL);
  *ome = g_build_filename (dir, "slide.ome.tif", NULL);
  fail_unless (wsi_test_slide_write (*tiff, &spec, &error), "%s",
      error ? error->message : "?");
  argv[3] = *tiff;
  argv[4] = *ome;
  fail_unless (g_spawn_sync (NULL, argv, NULL, 0, NULL, NULL, &out, &err,
          &status, NULL));
  fail_unless (g_spawn_check_wait_status (status, NULL), "conversion: %s%s",
      out, err);
  g_free (out);
  g_free (err);
  g_free (dir);
}

static WsiRun *
run_stream (const gchar * location, const gchar * sampler_extra,
    guint threads)
{
  gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=5 ! "
      "queue ! patchsampler patch-size=%d patches-per-slide=48 %s ! "
      "patchinterleave ! patchreader threads=%u dct-scaling=false ! "
      "queue ! patchbatch batch-size=8 ! appsink name=sink sync=false",
      location, PATCH, sampler_extra, threads);
  WsiRun *run = wsi_run_pipeline (desc, 0);

  fail_unless (run->error == NULL, "%s: %s", desc, run->error);
  g_free (desc);
  return run;
}

GST_START_TEST (test_ome_copy_streams_like_its_tiff)
{
  const gchar *samplers[] = { "", "target-mpp=0.5" };
  gchar *tiff, *ome, *zarr, *zarr_folder, *zarr_only, *inside, *zarr_v3;
  gchar *zarr_v3s;
  guint s, t;

  if (!converter_usable ("ome-tiff copy stream"))
    return;
  make_pair (&tiff, &ome);
  {
    GError *error = NULL;
    WsiSlide *slide = wsi_slide_open (ome, WSI_BACKEND_AUTO, &error);
    fail_unless (slide != NULL, "%s", error ? error->message : "");
    fail_unless_equals_string (slide->vendor, "ome-tiff");
    fail_unless_equals_int (slide->level_count, 3);
    wsi_slide_close (slide);
  }
  zarr = g_strdup (ome);
  strcpy (strstr (zarr, ".ome.tif"), ".zarr");
  zarr_folder = g_path_get_dirname (zarr);
  zarr_only = g_build_filename (zarr_folder, "zarr-only", NULL);
  fail_unless (g_mkdir (zarr_only, 0755) == 0);
  inside = g_build_filename (zarr_only, "slide.zarr", NULL);
  zarr_v3 = g_build_filename (zarr_folder, "slide-v3.zarr", NULL);
  zarr_v3s = g_build_filename (zarr_folder, "slide-v3s.zarr", NULL);
  fail_unless (g_rename (zarr, inside) == 0);
  for (s = 0; s < G_N_ELEMENTS (samplers); s++) {
    WsiRun *reference = run_stream (tiff, samplers[s], 1);

    fail_unless_equals_int (WSI_RECORD (reference, 0)->level, s);
    for (t = 1; t <= 4; t *= 2) {
      /* the OME-TIFF; the OME-Zarr store named, and found in a folder
       * scan as one slide (the scan does not go into it) */
      const gchar *copies[] = { ome, inside, zarr_only, zarr_v3, zarr_v3s };
      guint c;
      for (c = 0; c < G_N_ELEMENTS (copies); c++) {
        WsiRun *run = run_stream (copies[c], samplers[s], t);
        gchar *what = g_strdup_printf ("%s '%s' at %u threads", copies[c],
            samplers[s], t);
        wsi_run_assert_same_stream (reference, run, what);
        g_free (what);
        wsi_run_free (run);
      }
    }
    wsi_run_free (reference);
  }
  g_free (zarr);
  g_free (zarr_folder);
  g_free (zarr_only);
  g_free (inside);
  g_free (zarr_v3);
  g_free (zarr_v3s);
  g_free (tiff);
  g_free (ome);
}

GST_END_TEST;

/* The same OME-TIFF and OME-Zarr stores (v2 and v3) served by nginx on
 * loopback stream the same records and bytes as the TIFF on disk (and so
 * as the stores on disk) at 1 and 4 reader threads: the stores' objects
 * are fetched one by one by name over HTTP, a chunk a whole object. */
GST_START_TEST (test_stores_at_url_stream_as_on_disk)
{
  const gchar *samplers[] = { "", "target-mpp=0.5" };
  const gchar *names[] = { "slide.ome.tif", "slide.zarr", "slide-v3.zarr",
    "slide-v3s.zarr"
  };
  gchar *tiff, *ome, *dir, *workdir, *why = NULL;
  WsiNginx nginx;
  guint s, t, c;

  if (!converter_usable ("ome stores at a URL"))
    return;
  make_pair (&tiff, &ome);
  dir = g_path_get_dirname (ome);
  workdir = g_build_filename (WSI_TEST_TMPDIR, "nginx", NULL);
  if (!wsi_nginx_start (&nginx, dir, workdir, &why)) {
    fail_if (wsi_test_in_ci (), "CI=true but %s", why);
    wsi_test_skip ("ome stores at a URL", "%s", why);
    g_free (why);
  } else {
    for (s = 0; s < G_N_ELEMENTS (samplers); s++) {
      WsiRun *reference = run_stream (tiff, samplers[s], 1);
      for (c = 0; c < G_N_ELEMENTS (names); c++) {
        for (t = 1; t <= 4; t *= 4) {
          gchar *url = g_strdup_printf ("http://127.0.0.1:%u/%s", nginx.port,
              names[c]);
          WsiRun *run = run_stream (url, samplers[s], t);
          gchar *what = g_strdup_printf ("%s '%s' at %u threads", url,
              samplers[s], t);
          wsi_run_assert_same_stream (reference, run, what);
          g_free (what);
          g_free (url);
          wsi_run_free (run);
        }
      }
      wsi_run_free (reference);
    }
    wsi_nginx_stop (&nginx);
  }
  g_free (workdir);
  g_free (dir);
  g_free (tiff);
  g_free (ome);
}

GST_END_TEST;

/* Runs @description (no appsink) to EOS; returns the error or NULL. */
static gchar *
run_to_end (const gchar * description)
{
  return wsi_test_run_to_end (description, 120 * GST_SECOND);
}

/* patchviews (multi-view crops with context) and the patch store (written
 * by patchstoresink, served by patchstoresrc) give the same bytes from the
 * OME-TIFF and the OME-Zarr (v2 and v3) copies as from their TIFF. */
GST_START_TEST (test_views_and_store_like_its_tiff)
{
  gchar *tiff, *ome, *dir, *sources[4];
  WsiRun *views_ref = NULL, *store_ref = NULL;
  guint i;

  if (!converter_usable ("ome views and store"))
    return;
  if (gst_element_factory_find ("patchviews") == NULL
      || gst_element_factory_find ("patchstoresink") == NULL) {
    fail_if (wsi_test_in_ci (), "CI=true but patchviews or the store missing");
    wsi_test_skip ("ome views and store", "patchviews or patchstoresink "
        "not built");
    return;
  }
  make_pair (&tiff, &ome);
  dir = g_path_get_dirname (ome);
  sources[0] = tiff;
  sources[1] = ome;
  sources[2] = g_build_filename (dir, "slide.zarr", NULL);
  sources[3] = g_build_filename (dir, "slide-v3.zarr", NULL);
  for (i = 0; i < G_N_ELEMENTS (sources); i++) {
    gchar *store = g_strdup_printf ("%s/store-%u", dir, i);
    gchar *desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=5 ! "
        "queue ! patchsampler patch-size=%d patches-per-slide=24 ! "
        "patchinterleave ! patchreader threads=2 dct-scaling=false ! "
        "patchviews views=g:2:24:0.3:1.0,ctx:context:16:2x seed=11 "
        "threads=2 ! queue ! patchbatch batch-size=8 ! "
        "appsink name=sink sync=false", sources[i], PATCH);
    WsiRun *views = wsi_run_pipeline (desc, 0), *served;
    gchar *error;

    g_free (desc);
    if (i == 0)
      views_ref = views;
    else {
      wsi_run_assert_same_stream (views_ref, views, sources[i]);
      wsi_run_free (views);
    }
    desc = g_strdup_printf ("wsislidesrc location=\"%s\" seed=5 ! queue ! "
        "patchsampler patch-size=%d patches-per-slide=24 ! patchinterleave ! "
        "patchreader threads=2 dct-scaling=false ! patchstoresink "
        "location=\"%s\" patches-per-shard=16", sources[i], PATCH, store);
    error = run_to_end (desc);
    fail_unless (error == NULL, "%s: %s", desc, error);
    g_free (desc);
    desc = g_strdup_printf ("patchstoresrc location=\"%s\" ! "
        "appsink name=sink sync=false", store);
    served = wsi_run_pipeline (desc, 0);
    g_free (desc);
    if (i == 0)
      store_ref = served;
    else {
      wsi_run_assert_same_stream (store_ref, served, store);
      wsi_run_free (served);
    }
    g_free (store);
  }
  wsi_run_free (views_ref);
  wsi_run_free (store_ref);
  g_free (sources[2]);
  g_free (sources[3]);
  g_free (dir);
  g_free (tiff);
  g_free (ome);
}

GST_END_TEST;

static Suite *
ometiff_suite (void)
{
  Suite *s = suite_create ("ometiff");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_ome_copy_streams_like_its_tiff);
  tcase_add_test (tc, test_stores_at_url_stream_as_on_disk);
  tcase_add_test (tc, test_views_and_store_like_its_tiff);
  return s;
}

GST_CHECK_MAIN (ometiff);
