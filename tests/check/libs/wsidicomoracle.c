/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* pydicom as the oracle of the DICOM backend: every kind of series the
 * generator writes (TILED_FULL and TILED_SPARSE, JPEG and uncompressed,
 * each offset table, a thumbnail) is read by pydicom (python3-pydicom,
 * Pillow for JPEG) to prove it valid DICOM, and each level's whole pixel
 * matrix as pydicom decodes it is compared with ours; the real files of
 * ../shared/slides/dicom likewise (the JPEG-LS one must be refused by
 * name). Without /usr/bin/python3 and pydicom each check prints a SKIP line
 * with the reason (a failure under CI=true, where install-deps.sh ran). */

#include <gst/check/gstcheck.h>
#include <math.h>
#include <string.h>

#include "wsislide.h"
#include "wsitestslide.h"
#include "wsitestdicom.h"
#include "wsitestutil.h"

#define PYTHON "/usr/bin/python3"

/* argv: mode path [out]. "decode": the total pixel matrix as RGB bytes
 * (grey repeated; 16-bit grey scaled over BitsStored as the backend
 * documents) into out. "check": the file is a valid WSI instance whose
 * frames all decode. */
static const gchar oracle_script[] =
    "import sys\n"
    "import numpy as np\n"
    "import pydicom\n"
    "mode, path = sys.argv[1], sys.argv[2]\n"
    "d = pydicom.dcmread(path)\n"
    "assert d.SOPClassUID == '1.2.840.10008.5.1.4.1.1.77.1.6', d.SOPClassUID\n"
    "assert d.file_meta.TransferSyntaxUID is not None\n"
    "n = int(d.NumberOfFrames)\n"
    "a = d.pixel_array\n"
    "if n == 1: a = a[None]\n"
    "assert a.shape[0] == n, (a.shape, n)\n"
    "if d.PhotometricInterpretation in ('YBR_FULL', 'YBR_FULL_422'):\n"
    "    # pydicom hands JPEG YCbCr frames over unconverted (JPEG 2000's\n"
    "    # YBR_RCT and YBR_ICT come out RGB: the codestream's own transform)\n"
    "    from pydicom.pixel_data_handlers.util import convert_color_space\n"
    "    a = convert_color_space(a, d.PhotometricInterpretation, 'RGB', per_frame=True)\n"
    "if int(d.SamplesPerPixel) == 1:\n"
    "    if int(d.BitsAllocated) == 16:\n"
    "        m = (1 << int(d.BitsStored)) - 1\n"
    "        a = ((a.astype(np.uint32) & m) * 255 + m // 2) // m\n"
    "    if d.PhotometricInterpretation == 'MONOCHROME1': a = 255 - a\n"
    "    a = np.repeat(a.astype(np.uint8)[..., None], 3, axis=-1)\n"
    "r, c = int(d.Rows), int(d.Columns)\n"
    "W, H = int(d.TotalPixelMatrixColumns), int(d.TotalPixelMatrixRows)\n"
    "across = -(-W // c)\n"
    "sparse = d.get('DimensionOrganizationType', 'TILED_FULL') == 'TILED_SPARSE'\n"
    "out = np.full((H + r, W + c, 3), 255, np.uint8)\n"
    "for k in range(n):\n"
    "    if sparse:\n"
    "        p = d.PerFrameFunctionalGroupsSequence[k].PlanePositionSlideSequence[0]\n"
    "        x = int(p.ColumnPositionInTotalImagePixelMatrix) - 1\n"
    "        y = int(p.RowPositionInTotalImagePixelMatrix) - 1\n"
    "    else:\n"
    "        x, y = (k % across) * c, (k // across) * r\n"
    "    out[y:y + r, x:x + c] = a[k]\n"
    "if mode == 'decode':\n"
    "    open(sys.argv[3], 'wb').write(np.ascontiguousarray(out[:H, :W]).tobytes())\n"
    "print('ok', path, n, W, H)\n";

/* argv: out_dir files...: each file rewritten by pydicom in implicit VR
 * little endian into out_dir (same name). */
static const gchar implicit_script[] =
    "import os, sys\n"
    "import pydicom\n"
    "from pydicom.uid import ImplicitVRLittleEndian\n"
    "for f in sys.argv[2:]:\n"
    "    d = pydicom.dcmread(f)\n"
    "    d.file_meta.TransferSyntaxUID = ImplicitVRLittleEndian\n"
    "    d.is_implicit_VR = True\n"
    "    d.is_little_endian = True\n"
    "    d.save_as(os.path.join(sys.argv[1], os.path.basename(f)),\n"
    "              write_like_original=False)\n";

static gboolean
oracle_available (gchar ** why)
{
  gchar *argv[] = { (gchar *) PYTHON, (gchar *) "-c",
    (gchar *) "import pydicom, numpy, PIL", NULL
  };
  gint status = 0;

  if (!g_file_test (PYTHON, G_FILE_TEST_IS_EXECUTABLE)) {
    *why = g_strdup (PYTHON " not found");
    return FALSE;
  }
  if (!g_spawn_sync (NULL, argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL,
          NULL, NULL, NULL, &status, NULL) || !g_spawn_check_wait_status (status,
          NULL)) {
    *why = g_strdup ("pydicom, numpy or Pillow missing for " PYTHON
        " (scripts/install-deps.sh installs python3-pydicom)");
    return FALSE;
  }
  return TRUE;
}

/* FALSE after a SKIP line for @check (a failure under CI) when the oracle
 * cannot run here. */
static gboolean
oracle_usable (gchar ** why, const gchar * check)
{
  if (oracle_available (why))
    return TRUE;
  fail_if (wsi_test_in_ci (), "CI=true but %s", *why);
  wsi_test_skip (check, "%s", *why);
  g_free (*why);
  return FALSE;
}

/* Runs the oracle; fails the test with its output when it fails. */
static void
oracle_run (const gchar * mode, const gchar * path, const gchar * out)
{
  gchar *argv[] = { (gchar *) PYTHON, (gchar *) "-c",
    (gchar *) oracle_script, (gchar *) mode, (gchar *) path, (gchar *) out,
    NULL
  };
  gchar *std_out = NULL, *std_err = NULL;
  gint status = 0;

  fail_unless (g_spawn_sync (NULL, argv, NULL, 0, NULL, NULL, &std_out,
          &std_err, &status, NULL));
  fail_unless (g_spawn_check_wait_status (status, NULL), "pydicom on %s: "
      "%s%s", path, std_out, std_err);
  GST_INFO ("%s", std_out);
  g_free (std_out);
  g_free (std_err);
}

static gdouble
psnr (const guint8 * a, const guint8 * b, gsize n)
{
  gdouble sum = 0.0;
  gsize i;

  for (i = 0; i < n; i++)
    sum += ((gdouble) a[i] - b[i]) * ((gdouble) a[i] - b[i]);
  return sum == 0.0 ? INFINITY : 10.0 * log10 (255.0 * 255.0 / (sum / n));
}

/* Level @level of @slide read whole at 1:1 as RGB. */
static guint8 *
read_level (WsiSlide * slide, gint level)
{
  gint64 w = slide->level_width[level], h = slide->level_height[level];
  gdouble ds = slide->level_downsample[level];
  WsiImage out = { NULL, (gsize) w * 3, w, h, WSI_PIXEL_RGB };
  WsiReadRequest request = { 0, };
  WsiReadContext *ctx = wsi_read_context_new ();
  WsiReadReport report;
  GError *error = NULL;

  out.data = g_malloc (out.stride * h);
  request.width = llround (w * ds);
  request.height = llround (h * ds);
  request.resample_tolerance = 0.02;
  fail_unless (wsi_slide_read (slide, ctx, &request, &out, &report, &error),
      "%s", error ? error->message : "?");
  wsi_read_context_free (ctx);
  fail_unless_equals_int (report.level, level);
  fail_unless_equals_int64 (report.read_width, w);
  return out.data;
}

/* pydicom's decode of @path against our read of @level of @slide. */
static void
compare_level (WsiSlide * slide, gint level, const gchar * path,
    gdouble min_psnr)
{
  gchar *raw = g_strconcat (path, ".oracle.rgb", NULL);
  gchar *expected;
  gsize size;
  guint8 *ours = read_level (slide, level);
  gsize n = (gsize) slide->level_width[level] * slide->level_height[level]
      * 3;
  gdouble q;

  oracle_run ("decode", path, raw);
  fail_unless (g_file_get_contents (raw, &expected, &size, NULL));
  fail_unless_equals_uint64 (size, n);
  q = psnr (ours, (guint8 *) expected, n);
  fail_unless (q >= min_psnr, "%s: PSNR %.2f dB against pydicom (need %.1f)",
      path, q, min_psnr);
  GST_INFO ("%s level %d: PSNR %.2f dB against pydicom", path, level, q);
  g_free (expected);
  g_free (ours);
  g_free (raw);
}

/* The slide's ICC profile size and SHA-256 are those of the first optical
 * path's ICCProfile as pydicom reads it ("0 -" when it has none). */
static void
assert_icc_profile (const WsiSlide * slide, const gchar * path)
{
  gchar *argv[] = { (gchar *) PYTHON, (gchar *) "-c", (gchar *)
    "import hashlib, sys, pydicom\n"
    "d = pydicom.dcmread(sys.argv[1])\n"
    "p = d.OpticalPathSequence[0].get('ICCProfile') if 'OpticalPathSequence' in d else None\n"
    "print(len(p), hashlib.sha256(p).hexdigest()) if p else print(0, '-')\n",
    (gchar *) path, NULL
  };
  gchar *std_out = NULL, *ours;
  gint status = 0;

  fail_unless (g_spawn_sync (NULL, argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL,
          NULL, NULL, &std_out, NULL, &status, NULL));
  fail_unless (g_spawn_check_wait_status (status, NULL));
  ours = g_strdup_printf ("%" G_GUINT64_FORMAT " %s\n",
      slide->icc_profile_size, slide->icc_profile_sha256 != NULL
      ? slide->icc_profile_sha256 : "-");
  fail_unless_equals_string (ours, std_out);
  g_free (ours);
  g_free (std_out);
}

GST_START_TEST (test_generated_series_valid_and_equal)
{
  gchar *dir = g_build_filename (WSI_TEST_TMPDIR, "oracle", NULL);
  gchar *tiff = g_build_filename (dir, "source.tiff", NULL);
  WsiTestSlideSpec spec;
  GError *error = NULL;
  gchar *why = NULL;
  guint variant;

  if (!oracle_usable (&why, __func__)) {
    g_free (tiff);
    g_free (dir);
    return;
  }
  g_mkdir_with_parents (dir, 0755);
  wsi_test_slide_spec_init (&spec);
  spec.width = 700;
  spec.height = 500;
  spec.tile_size = 128;
  spec.levels = 2;
  spec.mpp = 0.5;
  fail_unless (wsi_test_slide_write (tiff, &spec, &error));

  /* 0-5: JPEG and uncompressed, TILED_FULL and TILED_SPARSE, each table;
   * 6, 7: JPEG 2000 lossless (full) and lossy (sparse, no table), when
   * built with OpenJPEG (pydicom decodes them through Pillow's OpenJPEG). */
#ifdef WSI_HAVE_OPENJPEG
  const guint n_variants = 8;
#else
  const guint n_variants = 6;
  wsi_test_skip ("JPEG 2000 variants", "built without OpenJPEG");
#endif

  for (variant = 0; variant < n_variants; variant++) {
    gchar *sub = g_strdup_printf ("%s/v%u", dir, variant);
    WsiTestDicomSpec dspec;
    gchar **paths = NULL;
    WsiSlide *slide;
    guint i;

    wsi_test_dicom_spec_init (&dspec);
    dspec.sparse = variant % 2 == 1;
    dspec.uncompressed = variant == 4 || variant == 5;
    dspec.j2k = variant == 6 ? WSI_TEST_DICOM_J2K_LOSSLESS : variant == 7
        ? WSI_TEST_DICOM_J2K_LOSSY : WSI_TEST_DICOM_J2K_NONE;
    dspec.table = variant / 2 == 0 || variant == 6
        ? WSI_TEST_DICOM_TABLE_BASIC : variant / 2 == 1
        ? WSI_TEST_DICOM_TABLE_EXTENDED : WSI_TEST_DICOM_TABLE_NONE;
    dspec.thumbnail = TRUE;
    dspec.mpp = 0.5;
    dspec.omit_every = variant == 3 ? 4 : 0;
    fail_unless (wsi_test_dicom_from_tiff (tiff, sub, "s", &dspec, &paths,
            &error), "%s", error ? error->message : "?");
    slide = wsi_slide_open (paths[0], WSI_BACKEND_AUTO, &error);
    fail_unless (slide != NULL, "%s", error ? error->message : "?");
    fail_unless_equals_int (slide->level_count, 2);
    for (i = 0; paths[i] != NULL; i++) {
      if (g_str_has_suffix (paths[i], "thumbnail.dcm"))
        oracle_run ("check", paths[i], NULL);
      else
        compare_level (slide, i, paths[i], dspec.uncompressed
            || dspec.j2k == WSI_TEST_DICOM_J2K_LOSSLESS ? INFINITY : 40.0);
    }
    wsi_slide_close (slide);
    g_strfreev (paths);
    g_free (sub);
  }
  g_free (tiff);
  g_free (dir);
}

GST_END_TEST;

GST_START_TEST (test_real_files_against_pydicom)
{
  static const gchar *const names[] = { "sm_image.dcm",
    "sm_image_grayscale.dcm"
  };
  gchar *jpegls, *why = NULL;
  GError *error = NULL;
  guint i;

  if (!oracle_usable (&why, __func__))
    return;
  jpegls = WSI_TEST_SHARED_SLIDE ("dicom/sm_image_jpegls.dcm");
  for (i = 0; i < G_N_ELEMENTS (names); i++) {
    gchar *name = g_build_filename ("dicom", names[i], NULL);
    gchar *path = WSI_TEST_SHARED_SLIDE (name);
    gchar *copy_dir, *copy;
    WsiSlide *slide;
    gchar *contents;
    gsize size;

    g_free (name);
    if (path == NULL)
      continue;
    /* A copy alone in a folder: the oracle's output goes beside it. */
    copy_dir = g_build_filename (WSI_TEST_TMPDIR, "real", names[i], NULL);
    g_mkdir_with_parents (copy_dir, 0755);
    copy = g_build_filename (copy_dir, names[i], NULL);
    fail_unless (g_file_get_contents (path, &contents, &size, NULL));
    fail_unless (g_file_set_contents (copy, contents, size, NULL));
    slide = wsi_slide_open (copy, WSI_BACKEND_AUTO, &error);
    fail_unless (slide != NULL, "%s", error ? error->message : "?");
    compare_level (slide, 0, copy, INFINITY);
    assert_icc_profile (slide, copy);
    wsi_slide_close (slide);
    g_free (contents);
    g_free (copy);
    g_free (copy_dir);
    g_free (path);
  }
  if (jpegls != NULL && !WSI_TEST_READS_JPEGLS) {
    /* pydicom reads it (valid DICOM); we refuse it by name. */
    fail_if (wsi_slide_open (jpegls, WSI_BACKEND_AUTO, &error) != NULL);
    fail_unless (strstr (error->message, "JPEG-LS Lossless") != NULL, "%s",
        error->message);
    g_clear_error (&error);
  }
  g_free (jpegls);
}

GST_END_TEST;

/* Rewrites @paths in implicit VR with pydicom into @dir. */
static void
to_implicit (gchar ** paths, const gchar * dir)
{
  GPtrArray *argv = g_ptr_array_new ();
  gchar *std_out = NULL, *std_err = NULL;
  gint status = 0;
  guint i;

  g_mkdir_with_parents (dir, 0755);
  g_ptr_array_add (argv, (gpointer) PYTHON);
  g_ptr_array_add (argv, (gpointer) "-c");
  g_ptr_array_add (argv, (gpointer) implicit_script);
  g_ptr_array_add (argv, (gpointer) dir);
  for (i = 0; paths[i] != NULL; i++)
    g_ptr_array_add (argv, paths[i]);
  g_ptr_array_add (argv, NULL);
  fail_unless (g_spawn_sync (NULL, (gchar **) argv->pdata, NULL, 0, NULL,
          NULL, &std_out, &std_err, &status, NULL));
  fail_unless (g_spawn_check_wait_status (status, NULL), "pydicom: %s%s",
      std_out, std_err);
  g_free (std_out);
  g_free (std_err);
  g_ptr_array_unref (argv);
}

/* The same slide from an explicit and an implicit VR copy: same pyramid,
 * mpp, and byte-identical levels. */
static void
assert_same_slide (const gchar * explicit_path, const gchar * implicit_path)
{
  GError *error = NULL;
  WsiSlide *a = wsi_slide_open (explicit_path, WSI_BACKEND_AUTO, &error);
  WsiSlide *b;
  gint level;

  fail_unless (a != NULL, "%s", error ? error->message : "?");
  b = wsi_slide_open (implicit_path, WSI_BACKEND_AUTO, &error);
  fail_unless (b != NULL, "%s", error ? error->message : "?");
  fail_unless_equals_string (b->backend->name, WSI_BACKEND_DICOM);
  fail_unless_equals_int (a->level_count, b->level_count);
  fail_unless (a->mpp_x == b->mpp_x, "mpp %g vs %g", a->mpp_x, b->mpp_x);
  for (level = 0; level < a->level_count; level++) {
    gsize n = (gsize) a->level_width[level] * a->level_height[level] * 3;
    guint8 *x, *y;
    fail_unless_equals_int64 (a->level_width[level], b->level_width[level]);
    fail_unless_equals_int64 (a->level_height[level], b->level_height[level]);
    x = read_level (a, level);
    y = read_level (b, level);
    fail_unless (memcmp (x, y, n) == 0, "%s level %d differs from %s",
        implicit_path, level, explicit_path);
    g_free (x);
    g_free (y);
  }
  wsi_slide_close (a);
  wsi_slide_close (b);
}

/* Implicit VR little endian (1.2.840.10008.1.2) files written by pydicom:
 * generated TILED_FULL and TILED_SPARSE series (per-frame functional
 * groups of undefined length) and the real files read as their explicit
 * VR originals, and each level equals pydicom's decode. */
GST_START_TEST (test_implicit_vr_files)
{
  gchar *dir = g_build_filename (WSI_TEST_TMPDIR, "implicit", NULL);
  gchar *tiff = g_build_filename (dir, "source.tiff", NULL);
  static const gchar *const real[] = { "sm_image.dcm",
    "sm_image_grayscale.dcm"
  };
  WsiTestSlideSpec spec;
  GError *error = NULL;
  gchar *why = NULL;
  guint sparse, i;

  if (!oracle_usable (&why, __func__)) {
    g_free (tiff);
    g_free (dir);
    return;
  }
  g_mkdir_with_parents (dir, 0755);
  wsi_test_slide_spec_init (&spec);
  spec.width = 700;
  spec.height = 500;
  spec.tile_size = 128;
  spec.levels = 2;
  fail_unless (wsi_test_slide_write (tiff, &spec, &error));
  for (sparse = 0; sparse < 2; sparse++) {
    gchar *sub = g_strdup_printf ("%s/explicit%u", dir, sparse);
    gchar *isub = g_strdup_printf ("%s/implicit%u", dir, sparse);
    gchar *ipath;
    WsiTestDicomSpec dspec;
    gchar **paths = NULL;
    WsiSlide *slide;

    wsi_test_dicom_spec_init (&dspec);
    dspec.sparse = sparse;
    dspec.uncompressed = TRUE;
    dspec.mpp = 0.5;
    dspec.omit_every = sparse ? 3 : 0;
    fail_unless (wsi_test_dicom_from_tiff (tiff, sub, "s", &dspec, &paths,
            &error), "%s", error ? error->message : "?");
    to_implicit (paths, isub);
    ipath = g_build_filename (isub, "s-level0.dcm", NULL);
    assert_same_slide (paths[0], ipath);
    slide = wsi_slide_open (ipath, WSI_BACKEND_AUTO, &error);
    fail_unless (slide != NULL, "%s", error ? error->message : "?");
    compare_level (slide, 0, ipath, INFINITY);
    wsi_slide_close (slide);
    g_free (ipath);
    g_strfreev (paths);
    g_free (isub);
    g_free (sub);
  }
  for (i = 0; i < G_N_ELEMENTS (real); i++) {
    gchar *name = g_build_filename ("dicom", real[i], NULL);
    gchar *path = WSI_TEST_SHARED_SLIDE (name);
    gchar *isub = g_build_filename (dir, "real", real[i], NULL);
    gchar *ipath = g_build_filename (isub, real[i], NULL);
    gchar *one[] = { path, NULL };

    if (path != NULL) {
      to_implicit (one, isub);
      assert_same_slide (path, ipath);
    }
    g_free (ipath);
    g_free (isub);
    g_free (path);
    g_free (name);
  }
  g_free (tiff);
  g_free (dir);
}

GST_END_TEST;

static Suite *
wsidicomoracle_suite (void)
{
  Suite *s = suite_create ("wsidicomoracle");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_generated_series_valid_and_equal);
  tcase_add_test (tc, test_real_files_against_pydicom);
  tcase_add_test (tc, test_implicit_vr_files);
  return s;
}

GST_CHECK_MAIN (wsidicomoracle);
