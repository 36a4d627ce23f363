/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/* Unit test of the CSV/TSV manifest parser (ext/wsislide/collection/wsimanifest.c):
 * quoting, line ends, format sniffing, and every refusal naming the file
 * and line. */

#include <string.h>
#include <gst/check/gstcheck.h>

#include "wsimanifest.h"

static WsiManifest *
parse (const gchar * text, WsiManifestFormat format, GError ** error)
{
  return wsi_manifest_parse ("m.csv", text, strlen (text), format, error);
}

static const gchar *
value (WsiManifest * m, guint row, guint column)
{
  return ((WsiManifestRow *) g_ptr_array_index (m->rows, row))->values[column];
}

static const gchar *
row_path (WsiManifest * m, guint row)
{
  return ((WsiManifestRow *) g_ptr_array_index (m->rows, row))->path;
}

GST_START_TEST (test_csv_quoting)
{
  GError *error = NULL;
  WsiManifest *m = parse ("\xEF\xBB\xBF" "patient, Path ,label,note\r\n"
      "p1,a.svs,tumour,plain\r\n"
      "\r\n"
      "\"p,2\",\"dir/b c.svs\",\"normal\",\"say \"\"hi\"\"\"\n"
      "p3,c.svs,,\"two\nlines\"\n"
      "p4,d.svs,x,\n", WSI_MANIFEST_CSV, &error);

  fail_unless (m != NULL, "%s", error ? error->message : "");
  fail_unless_equals_int (g_strv_length (m->names), 3);
  fail_unless_equals_string (m->names[0], "patient");
  fail_unless_equals_string (m->names[1], "label");
  fail_unless_equals_string (m->names[2], "note");
  fail_unless_equals_int (m->rows->len, 4);
  fail_unless_equals_string (row_path (m, 0), "a.svs");
  fail_unless_equals_string (value (m, 0, 2), "plain");
  fail_unless_equals_string (value (m, 1, 0), "p,2");
  fail_unless_equals_string (row_path (m, 1), "dir/b c.svs");
  fail_unless_equals_string (value (m, 1, 2), "say \"hi\"");
  fail_unless_equals_string (value (m, 2, 1), "");
  fail_unless_equals_string (value (m, 2, 2), "two\nlines");
  fail_unless_equals_string (value (m, 3, 2), "");
  fail_unless_equals_int (((WsiManifestRow *) g_ptr_array_index (m->rows,
              1))->line, 4);
  fail_unless_equals_int (((WsiManifestRow *) g_ptr_array_index (m->rows,
              3))->line, 7);
  wsi_manifest_free (m);
}

GST_END_TEST;

GST_START_TEST (test_tsv)
{
  GError *error = NULL;
  WsiManifest *m = parse ("path\tsplit\tlabel\na,b.svs\ttrain\t1\n"
      "c.svs\tval\t0", WSI_MANIFEST_TSV, &error);

  fail_unless (m != NULL, "%s", error ? error->message : "");
  fail_unless_equals_int (m->rows->len, 2);
  fail_unless_equals_string (row_path (m, 0), "a,b.svs");
  fail_unless_equals_string (value (m, 1, 0), "val");
  fail_unless_equals_string (value (m, 1, 1), "0");
  wsi_manifest_free (m);
}

GST_END_TEST;

typedef struct
{
  const gchar *text;
  const gchar *expected;        /* start of the error message */
} BadCase;

static const BadCase bad_cases[] = {
  {"slide,label\na.svs,1\n", "m.csv:1: no \"path\" column"},
  {"", "m.csv:1: empty"},
  {"\n\npath,label,label\n", "m.csv:3: column \"label\" appears twice"},
  {"path,,label\n", "m.csv:1: column 2 of the header has no name"},
  {"path,label\na.svs,1\nb.svs\n", "m.csv:3: 1 fields, the header has 2"},
  {"path,label\na.svs,1,extra\n", "m.csv:2: 3 fields, the header has 2"},
  {"path,label\n  ,1\n", "m.csv:2: the path is empty"},
  {"path,label\na.svs,1\n\"b.svs,2\n", "m.csv:3: a quoted field is never"},
  {"path,label\n\"a.svs\"x,1\n", "m.csv:2: text after a closing quote"},
  /* a second path column (its name in another case): before, a row of
   * one field fewer than the header was accepted and its path read past
   * the fields (use after free; found by the slidemanifest fuzz target) */
  {"split,path,PATH\ntrain,a.svs\n", "m.csv:1: two path columns (\"path\" "
        "and \"PATH\")"},
};

GST_START_TEST (test_bad_manifests_name_file_and_line)
{
  for (guint i = 0; i < G_N_ELEMENTS (bad_cases); i++) {
    GError *error = NULL;
    WsiManifest *m = parse (bad_cases[i].text, WSI_MANIFEST_CSV, &error);

    fail_unless (m == NULL, "case %u accepted", i);
    fail_unless (error != NULL);
    fail_unless (g_str_has_prefix (error->message, bad_cases[i].expected),
        "case %u: \"%s\" does not start with \"%s\"", i, error->message,
        bad_cases[i].expected);
    g_error_free (error);
  }
}

GST_END_TEST;

GST_START_TEST (test_sniff)
{
  fail_unless_equals_int (wsi_manifest_sniff ("a/B.CSV", "x"),
      WSI_MANIFEST_CSV);
  fail_unless_equals_int (wsi_manifest_sniff ("b.tsv", NULL),
      WSI_MANIFEST_TSV);
  fail_unless_equals_int (wsi_manifest_sniff ("list.txt", "path,label\n"),
      WSI_MANIFEST_CSV);
  fail_unless_equals_int (wsi_manifest_sniff ("list", "\xEF\xBB\xBFPath\tx"),
      WSI_MANIFEST_TSV);
  fail_unless_equals_int (wsi_manifest_sniff ("list.txt", "path\n"),
      WSI_MANIFEST_NONE);
  fail_unless_equals_int (wsi_manifest_sniff ("list.txt",
          "pathology/a.svs\tlabel\n"), WSI_MANIFEST_NONE);
  fail_unless_equals_int (wsi_manifest_sniff ("list.txt", "a.svs\n"),
      WSI_MANIFEST_NONE);
}

GST_END_TEST;

static Suite *
wsimanifest_suite (void)
{
  Suite *s = suite_create ("wsimanifest");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_csv_quoting);
  tcase_add_test (tc, test_tsv);
  tcase_add_test (tc, test_bad_manifests_name_file_and_line);
  tcase_add_test (tc, test_sniff);
  return s;
}

GST_CHECK_MAIN (wsimanifest);
