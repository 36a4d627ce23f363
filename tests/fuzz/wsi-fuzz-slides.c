/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsi-fuzz-slides: a mutation fuzzer for the slide layer (wsislide.h).
 *
 * Seeds: small synthetic slides generated at start (generic and Aperio
 * layouts, several tile sizes and level steps, classic TIFF and BigTIFF),
 * the real slides of ../shared/slides when present, and the files of any
 * --corpus directory. Each iteration takes a seed, applies 1-6 TIFF-aware
 * mutations (fuzztiff.c), writes the mutant to a temporary file and, in a
 * forked child under an alarm, opens it with every selected backend and
 * reads it: several wsi_slide_read() calls at random levels and positions
 * (native scaling on/off, with and without a tile cache, every output
 * format) and one wsi_slide_read_region(). Errors returned through GError
 * are the expected outcome; a child that dies of a signal, exits non-zero
 * (a sanitizer report) or outlives the alarm is a finding: the mutant is
 * saved in --out with its seed and what the child was doing.
 *
 * Modes:
 *   (default)         fuzz for --seconds / --iterations
 *   --replay PATH     replay files (or every file of a directory) as they are
 *   --replay-seeds    replay the seeds themselves (and the generator's broken
 *                     files); valid seeds must open with some backend
 *   --minimize FILE   shrink a finding (truncation, zeroed chunks)
 * See docs/fuzzing.md.
 */

#include "fuzztiff.h"
#include "wsislide.h"
#include "wsitilecache.h"
#include "wsitestslide.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef WSI_SHARED_SLIDES_DIR
#define WSI_SHARED_SLIDES_DIR ""
#endif

/* Sanitizer defaults for this program (the environment overrides them):
 * a huge allocation from a hostile header returns NULL (as it would under
 * a memory limit) instead of aborting inside the allocator, and an abort
 * (g_error on that NULL) prints its stack. */
#if defined(__SANITIZE_ADDRESS__)
const char *__asan_default_options (void);
const char *
__asan_default_options (void)
{
  return "allocator_may_return_null=1:max_allocation_size_mb=3072:"
      "handle_abort=1:detect_leaks=0:print_summary=1";
}
#endif
const char *__ubsan_default_options (void);
const char *
__ubsan_default_options (void)
{
  return "print_stacktrace=1:halt_on_error=1";
}

/* gcov's writer, when built with -Db_coverage=true (meson.build defines
 * WSI_FUZZ_COVERAGE): children leave with _exit(), which skips the
 * atexit() that writes the .gcda files. */
#ifdef WSI_FUZZ_COVERAGE
extern void __gcov_dump (void);
#endif

/* LeakSanitizer's on-demand check, when the program is built with it. */
extern int __lsan_do_recoverable_leak_check (void) __attribute__ ((weak));

#define MAX_BACKENDS 4
#define EXIT_LEAK 42
#define MAX_SEED_BYTES (8u << 20)
#define MAX_SAMPLES_PER_FINDING 3

/* ---- options ------------------------------------------------------------- */

static gdouble opt_seconds = 60.0;
static gint64 opt_iterations = -1;
static gint64 opt_seed = 1;
static gchar **opt_corpus = NULL;
static gchar *opt_out = NULL;
static gchar *opt_backend = NULL;
static gint opt_timeout = 5;
static gchar *opt_shared = NULL;
static gboolean opt_no_shared = FALSE;
static gboolean opt_no_generated = FALSE;
static gchar **opt_replay = NULL;
static gboolean opt_replay_seeds = FALSE;
static gint opt_read_seeds = 3;
static gint64 opt_read_seed = -1;
static gchar *opt_minimize = NULL;
static gboolean opt_no_fork = FALSE;
static gboolean opt_verbose = FALSE;
static gchar *opt_save_seeds = NULL;
static gchar *opt_workdir = NULL;
static gboolean opt_detect_leaks = FALSE;
static gboolean opt_fatal_criticals = FALSE;
static gint opt_max_mutations = 6;
static gboolean opt_self_test = FALSE;
static gboolean opt_ignore_openslide = FALSE;

static GOptionEntry option_entries[] = {
  {"seconds", 0, 0, G_OPTION_ARG_DOUBLE, &opt_seconds,
      "Fuzz for this long (default 60)", "N"},
  {"iterations", 0, 0, G_OPTION_ARG_INT64, &opt_iterations,
      "Stop after this many inputs (default: only --seconds)", "N"},
  {"seed", 0, 0, G_OPTION_ARG_INT64, &opt_seed,
      "Master seed: the same seed gives the same inputs (default 1)", "S"},
  {"corpus", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_corpus,
      "Add the files of DIR (or the file) as seeds (repeatable)", "DIR"},
  {"out", 0, 0, G_OPTION_ARG_FILENAME, &opt_out,
      "Save crashing/hanging inputs here (default ./fuzz-findings)", "DIR"},
  {"backend", 0, 0, G_OPTION_ARG_STRING, &opt_backend,
      "auto, tiff, openslide or all (every built backend; default)", "B"},
  {"timeout", 0, 0, G_OPTION_ARG_INT, &opt_timeout,
      "Seconds an input may take before it counts as a hang (default 5)",
      "S"},
  {"shared-slides", 0, 0, G_OPTION_ARG_FILENAME, &opt_shared,
      "Real slides to add as seeds (default $WSI_SHARED_SLIDES_DIR or the "
        "build's ../shared/slides; skipped when absent)", "DIR"},
  {"no-shared", 0, 0, G_OPTION_ARG_NONE, &opt_no_shared,
      "Do not use the real slides", NULL},
  {"no-generated", 0, 0, G_OPTION_ARG_NONE, &opt_no_generated,
      "Do not generate synthetic seeds", NULL},
  {"replay", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_replay,
      "Replay FILE, or every file of DIR, unmutated (repeatable)", "PATH"},
  {"replay-seeds", 0, 0, G_OPTION_ARG_NONE, &opt_replay_seeds,
      "Replay the seeds and the generator's broken files", NULL},
  {"read-seeds", 0, 0, G_OPTION_ARG_INT, &opt_read_seeds,
      "Replay: read patterns per file (default 3)", "N"},
  {"read-seed", 0, 0, G_OPTION_ARG_INT64, &opt_read_seed,
      "Replay/minimize: this read pattern (default: the .seedN in the name)",
      "N"},
  {"minimize", 0, 0, G_OPTION_ARG_FILENAME, &opt_minimize,
      "Shrink this finding into --out", "FILE"},
  {"no-fork", 0, 0, G_OPTION_ARG_NONE, &opt_no_fork,
      "Replay in this process (for gdb)", NULL},
  {"max-mutations", 0, 0, G_OPTION_ARG_INT, &opt_max_mutations,
      "Mutations stacked on one input at most (default 6)", "N"},
  {"save-seeds", 0, 0, G_OPTION_ARG_FILENAME, &opt_save_seeds,
      "Copy the generated seeds into DIR", "DIR"},
  {"workdir", 0, 0, G_OPTION_ARG_FILENAME, &opt_workdir,
      "Scratch directory (default: a new one in $TMPDIR)", "DIR"},
  {"detect-leaks", 0, 0, G_OPTION_ARG_NONE, &opt_detect_leaks,
      "LeakSanitizer builds: a leak in a child is a finding", NULL},
  {"fatal-criticals", 0, 0, G_OPTION_ARG_NONE, &opt_fatal_criticals,
      "A g_critical/g_return_if_fail in a child is a finding", NULL},
  {"ignore-openslide", 0, 0, G_OPTION_ARG_NONE, &opt_ignore_openslide,
      "Findings whose stack is inside libopenslide are reported but do not "
        "fail the run (the meson tests: OpenSlide is not ours to fix)",
      NULL},
  {"self-test", 0, 0, G_OPTION_ARG_NONE, &opt_self_test,
      "Check that the harness sees a crash, an abort and a hang", NULL},
  {"verbose", 'v', 0, G_OPTION_ARG_NONE, &opt_verbose,
      "Children keep their stderr; print every input", NULL},
  {NULL}
};

/* ---- state shared with the children -------------------------------------- */

typedef struct
{
  guint64 opens, opened, reads_ok, reads_failed, regions_ok, regions_failed;
} BackendStats;

typedef struct
{
  BackendStats b[MAX_BACKENDS];
  guint64 criticals, warnings;
  gchar stage[512];
  gchar first_critical[256];
} Shared;

static Shared *shared;          /* MAP_SHARED: the child writes, we read */
static const gchar *backends[MAX_BACKENDS];
static guint n_backends;
static gchar *workdir;

typedef enum
{
  RESULT_OK,
  RESULT_CRASH,
  RESULT_HANG,
  RESULT_LEAK,
  RESULT_OOM,                   /* died of a failed (huge) allocation */
} ResultKind;

static const gchar *const result_names[] = { "ok", "crash", "hang", "leak",
  "oom"
};

typedef struct
{
  ResultKind kind;
  gchar *status;                /* "SIGSEGV", "exit 1", "timeout" */
  gchar *stage;                 /* what the child was doing */
  gchar *key;                   /* for grouping duplicates */
  gchar *log;                   /* the child's stderr */
  BackendStats b[MAX_BACKENDS];
  guint64 criticals;
  gboolean external;            /* the culprit is inside libopenslide */
} RunResult;

static void
run_result_clear (RunResult * r)
{
  g_free (r->status);
  g_free (r->stage);
  g_free (r->key);
  g_free (r->log);
  memset (r, 0, sizeof (*r));
}

/* ---- seeds --------------------------------------------------------------- */

typedef struct
{
  gchar *name;                  /* for reports */
  gchar *ext;                   /* ".tiff", ".svs", ".ndpi", ... */
  GByteArray *data;
  FuzzTiffInfo info;
  guint weight;
  gboolean must_open;           /* a valid slide: replay expects an open */
} Seed;

static GPtrArray *seeds;

static void
seed_free (gpointer p)
{
  Seed *s = p;

  g_free (s->name);
  g_free (s->ext);
  g_byte_array_unref (s->data);
  fuzz_tiff_info_clear (&s->info);
  g_free (s);
}

static const gchar *
path_ext (const gchar * path)
{
  const gchar *base = strrchr (path, '/');
  const gchar *dot = strrchr (base ? base : path, '.');

  return dot ? dot : ".tiff";
}

static Seed *
seed_add (const gchar * name, const gchar * ext, GByteArray * data,
    guint weight, gboolean must_open)
{
  Seed *s = g_new0 (Seed, 1);

  s->name = g_strdup (name);
  s->ext = g_ascii_strdown (ext, -1);
  s->data = data;
  s->weight = weight;
  s->must_open = must_open;
  fuzz_tiff_parse (&s->info, data->data, data->len);
  g_ptr_array_add (seeds, s);
  return s;
}

static GByteArray *
load_file (const gchar * path, GError ** error)
{
  gchar *contents;
  gsize len;

  if (!g_file_get_contents (path, &contents, &len, error))
    return NULL;
  return g_byte_array_new_take ((guint8 *) contents, len);
}

static gboolean
save_bytes (const gchar * path, const guint8 * data, gsize len)
{
  GError *error = NULL;

  if (!g_file_set_contents (path, (const gchar *) data, len, &error)) {
    g_printerr ("wsi-fuzz-slides: %s\n", error->message);
    g_error_free (error);
    return FALSE;
  }
  return TRUE;
}

typedef struct
{
  const gchar *name;
  WsiTestLayout layout;
  guint width, height, tile, levels, step;
  gboolean placeholder;
  guint weight;
  gboolean bigtiff_too;
} GenSpec;

/* Small on purpose: a finding on a tiny seed is a tiny regression file. */
static const GenSpec gen_specs[] = {
  {"generic-1024x768-t256-l3s2", WSI_TEST_LAYOUT_GENERIC, 1024, 768, 256, 3,
      2, FALSE, 4, FALSE},
  {"generic-1024x768-t128-l3s2", WSI_TEST_LAYOUT_GENERIC, 1024, 768, 128, 3,
      2, FALSE, 4, TRUE},
  {"generic-1000x700-t240-l2s4", WSI_TEST_LAYOUT_GENERIC, 1000, 700, 240, 2,
      4, TRUE, 3, FALSE},
  {"aperio-1024x768-t240-l2s4", WSI_TEST_LAYOUT_APERIO, 1024, 768, 240, 2,
      4, FALSE, 4, FALSE},
  {"aperio-1024x768-t256-l3s2", WSI_TEST_LAYOUT_APERIO, 1024, 768, 256, 3,
      2, FALSE, 4, FALSE},
  {"aperio-640x480-t128-l3s3", WSI_TEST_LAYOUT_APERIO, 640, 480, 128, 3, 3,
      FALSE, 3, TRUE},
  {"generic-256x192-t128-l2s2", WSI_TEST_LAYOUT_GENERIC, 256, 192, 128, 2,
      2, FALSE, 8, TRUE},
  {"aperio-320x200-t128-l2s2", WSI_TEST_LAYOUT_APERIO, 320, 200, 128, 2, 2,
      FALSE, 8, FALSE},
};

static void
spec_from_gen (WsiTestSlideSpec * spec, const GenSpec * g, guint32 seed)
{
  wsi_test_slide_spec_init (spec);
  spec->layout = g->layout;
  spec->width = g->width;
  spec->height = g->height;
  spec->tile_size = g->tile;
  spec->levels = g->levels;
  spec->level_step = g->step;
  spec->resolution_placeholder = g->placeholder;
  spec->seed = seed;
  spec->jpeg_quality = 80;
}

static gboolean
generate_seeds (void)
{
  gchar *dir = g_build_filename (workdir, "seeds", NULL);
  guint i;

  g_mkdir_with_parents (dir, 0755);
  if (opt_save_seeds)
    g_mkdir_with_parents (opt_save_seeds, 0755);
  for (i = 0; i < G_N_ELEMENTS (gen_specs); i++) {
    const GenSpec *g = &gen_specs[i];
    const gchar *ext = g->layout == WSI_TEST_LAYOUT_APERIO ? ".svs" : ".tiff";
    gchar *file = g_strconcat (g->name, ext, NULL);
    gchar *path = g_build_filename (dir, file, NULL);
    WsiTestSlideSpec spec;
    GError *error = NULL;
    GByteArray *data;

    spec_from_gen (&spec, g, i + 1);
    if (!wsi_test_slide_write (path, &spec, &error)
        || !(data = load_file (path, &error))) {
      g_printerr ("wsi-fuzz-slides: cannot generate %s: %s\n", g->name,
          error->message);
      g_error_free (error);
      g_free (file);
      g_free (path);
      g_free (dir);
      return FALSE;
    }
    seed_add (file, ext, data, g->weight, TRUE);
    if (opt_save_seeds) {
      gchar *copy = g_build_filename (opt_save_seeds, file, NULL);
      save_bytes (copy, data->data, data->len);
      g_free (copy);
    }
    if (g->bigtiff_too) {
      GByteArray *big = fuzz_tiff_to_bigtiff (data->data, data->len);
      if (big != NULL) {
        gchar *bigname = g_strconcat (g->name, "-bigtiff", ext, NULL);
        seed_add (bigname, ext, big, g->weight, TRUE);
        if (opt_save_seeds) {
          gchar *copy = g_build_filename (opt_save_seeds, bigname, NULL);
          save_bytes (copy, big->data, big->len);
          g_free (copy);
        }
        g_free (bigname);
      } else {
        g_printerr ("wsi-fuzz-slides: no BigTIFF copy of %s\n", g->name);
      }
    }
    g_free (file);
    g_free (path);
  }
  g_free (dir);
  return TRUE;
}

static gint
compare_paths (gconstpointer a, gconstpointer b)
{
  /* g_ptr_array_sort hands pointers to the elements */
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

/* The regular files of @path (a file or a directory), sorted; README and
 * notes (*.md, *.txt) are skipped. */
static GPtrArray *
list_files (const gchar * path)
{
  GPtrArray *files = g_ptr_array_new_with_free_func (g_free);
  GDir *dir;
  const gchar *name;

  if (g_file_test (path, G_FILE_TEST_IS_REGULAR)) {
    g_ptr_array_add (files, g_strdup (path));
    return files;
  }
  dir = g_dir_open (path, 0, NULL);
  if (dir == NULL)
    return files;
  while ((name = g_dir_read_name (dir)) != NULL) {
    gchar *full = g_build_filename (path, name, NULL);
    if (name[0] == '.' || g_str_has_prefix (name, "README")
        || g_str_has_suffix (name, ".md") || g_str_has_suffix (name, ".txt")
        || !g_file_test (full, G_FILE_TEST_IS_REGULAR)) {
      g_free (full);
      continue;
    }
    g_ptr_array_add (files, full);
  }
  g_dir_close (dir);
  g_ptr_array_sort (files, compare_paths);
  return files;
}

static const gchar *
shared_slides_dir (void)
{
  const gchar *env = g_getenv ("WSI_SHARED_SLIDES_DIR");

  if (opt_shared)
    return opt_shared;
  if (env && *env)
    return env;
  return WSI_SHARED_SLIDES_DIR;
}

static void
add_file_seeds (const gchar * path, guint weight, gboolean must_open,
    const gchar * what)
{
  GPtrArray *files = list_files (path);
  guint i, added = 0;

  for (i = 0; i < files->len; i++) {
    const gchar *f = g_ptr_array_index (files, i);
    GStatBuf st;
    GByteArray *data;
    gchar *base;

    if (g_stat (f, &st) != 0 || st.st_size > MAX_SEED_BYTES)
      continue;
    data = load_file (f, NULL);
    if (data == NULL)
      continue;
    base = g_path_get_basename (f);
    seed_add (base, path_ext (f), data, weight, must_open);
    g_free (base);
    added++;
  }
  if (opt_verbose || added == 0)
    g_print ("wsi-fuzz-slides: %u %s seed(s) from %s\n", added, what, path);
  g_ptr_array_unref (files);
}

/* ---- the child: open and read -------------------------------------------- */

static void
set_stage (const gchar * format, ...)
G_GNUC_PRINTF (1, 2);

static void
set_stage (const gchar * format, ...)
{
  va_list args;

  va_start (args, format);
  g_vsnprintf (shared->stage, sizeof (shared->stage), format, args);
  va_end (args);
  if (opt_verbose && opt_no_fork)
    g_printerr ("  %s\n", shared->stage);
}

static void
child_log_handler (const gchar * domain, GLogLevelFlags level,
    const gchar * message, gpointer user_data)
{
  if (level & G_LOG_LEVEL_CRITICAL) {
    if (shared->criticals++ == 0)
      g_strlcpy (shared->first_critical, message,
          sizeof (shared->first_critical));
  } else if (level & G_LOG_LEVEL_WARNING) {
    shared->warnings++;
  }
  g_log_default_handler (domain, level, message, user_data);
}

static const gchar *const format_names[] = { "RGB", "RGBA", "RGBX", "BGRX" };

static gint64
pick_position (FuzzRng * rng, gint64 size, gint64 span, gint64 tile)
{
  switch (fuzz_rng_below (rng, 8)) {
    case 0:
      return 0;
    case 1:                    /* across the far edge */
      return size - span / 2;
    case 2:                    /* across the near edge */
      return -span / 2;
    case 3:                    /* wholly outside */
      return size + (gint64) fuzz_rng_below (rng, 1000);
    case 4:                    /* on the tile grid */
      if (tile > 0)
        return (gint64) fuzz_rng_below (rng, MAX (size / tile, 1)) * tile;
      /* fall through */
    default:
      return (gint64) fuzz_rng_below (rng, MAX (size, 1));
  }
}

/* Reads stay below this many level pixels: a valid read of a hostile
 * pyramid (a level-0 height of 58325 beside levels of 384 and 192 rows)
 * can ask for a 60-Mpixel region, slow (seconds under ASan), not a bug. */
#define MAX_READ_PIXELS (8.0 * 1024 * 1024)

static void
bound_read (const WsiSlide * slide, WsiReadRequest * req, guint out_w,
    guint out_h)
{
  guint tries;

  for (tries = 0; tries < 4; tries++) {
    WsiReadPlan plan;
    gdouble area, k;

    wsi_slide_plan_read (slide, req, out_w, out_h, &plan);
    area = (gdouble) plan.read_width * plan.read_height;
    if (area <= MAX_READ_PIXELS)
      return;
    k = sqrt (MAX_READ_PIXELS / area) * 0.9;
    req->width = MAX ((gint64) (req->width * k), 1);
    req->height = MAX ((gint64) (req->height * k), 1);
  }
}

static WsiSlide *
child_open (const gchar * path, guint bi)
{
  GError *error = NULL;
  WsiSlide *slide;

  set_stage ("%s: wsi_slide_open", backends[bi]);
  shared->b[bi].opens++;
  slide = wsi_slide_open (path, backends[bi], &error);
  if (slide == NULL) {
    if (opt_verbose)
      g_printerr ("  %s: open: %s\n", backends[bi], error->message);
    g_error_free (error);
    return NULL;
  }
  shared->b[bi].opened++;
  return slide;
}

static void
child_backend (const gchar * path, guint bi, FuzzRng * rng)
{
  static const guint sides[] = { 1, 2, 7, 16, 63, 64, 100, 128, 224, 256,
    257, 300, 512
  };
  static const gdouble factors[] = { 1, 1, 1, 1.0005, 0.999, 1.5, 2, 3, 4, 8,
    9, 16
  };
  static const gdouble tolerances[] = { 0, 0.01, 0.02, 0.5 };
  BackendStats *st = &shared->b[bi];
  WsiReadContext *ctx;
  WsiTileCache *cache;
  WsiSlide *slide;
  guint i, n_reads, reopened = 0;

  slide = child_open (path, bi);
  if (slide == NULL)
    return;
  ctx = wsi_read_context_new ();
  cache = wsi_tile_cache_new (16 << 20);
  n_reads = 4 + fuzz_rng_below (rng, 5);
  for (i = 0; i < n_reads; i++) {
    WsiReadRequest req = { 0, };
    WsiReadReport report;
    WsiImage out;
    GError *error = NULL;
    gint level = fuzz_rng_below (rng, slide->level_count);
    gdouble ds = slide->level_downsample[level];
    gdouble f = factors[fuzz_rng_below (rng, G_N_ELEMENTS (factors))];
    gint64 tile = slide->level_tile_width[level];
    guint repeat, r;
    gboolean ok = TRUE;

    if (!(ds >= 1e-6 && ds <= 1e9))
      ds = 1.0;
    out.format = fuzz_rng_below (rng, 4);
    if (i == 0) {
      /* the whole slide at one level: every tile of it is decoded, so a
       * damaged one is found wherever it is */
      out.width = CLAMP (slide->level_width[level], 1, 1024);
      out.height = CLAMP (slide->level_height[level], 1, 1024);
      req.width = MAX (slide->level_width[0], 1);
      req.height = MAX (slide->level_height[0], 1);
      req.x = req.y = 0;
    } else {
      out.width = sides[fuzz_rng_below (rng, G_N_ELEMENTS (sides))];
      out.height = fuzz_rng_chance (rng, 50) ? out.width
          : sides[fuzz_rng_below (rng, G_N_ELEMENTS (sides))];
      req.width = CLAMP ((gdouble) out.width * ds * f, 1.0, 1e12);
      req.height = CLAMP ((gdouble) out.height * ds * f, 1.0, 1e12);
      req.x = pick_position (rng, slide->level_width[0], req.width,
          (gint64) (tile * ds));
      req.y = pick_position (rng, slide->level_height[0], req.height,
          (gint64) (slide->level_tile_height[level] * ds));
    }
    bound_read (slide, &req, out.width, out.height);
    out.stride = (gsize) out.width * wsi_pixel_format_bytes (out.format)
        + (fuzz_rng_chance (rng, 20) ? 4 * fuzz_rng_below (rng, 8) : 0);
    out.data = g_malloc (out.stride * out.height);
    req.resample_tolerance =
        tolerances[fuzz_rng_below (rng, G_N_ELEMENTS (tolerances))];
    req.native_scaling = fuzz_rng_chance (rng, 50);
    req.tile_cache = fuzz_rng_chance (rng, 50) ? cache : NULL;
    /* the same read again: tiles now come from the cache */
    repeat = req.tile_cache && fuzz_rng_chance (rng, 30) ? 2 : 1;
    for (r = 0; r < repeat && ok; r++) {
      set_stage ("%s: wsi_slide_read #%u%s x=%" G_GINT64_FORMAT " y=%"
          G_GINT64_FORMAT " %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
          " -> %ux%u %s stride %" G_GSIZE_FORMAT " (best level %d of %d) "
          "native_scaling=%d tile_cache=%s tolerance=%g", backends[bi], i,
          r ? " (again)" : "", req.x, req.y, req.width, req.height,
          out.width, out.height, format_names[out.format], out.stride,
          level, slide->level_count, req.native_scaling,
          req.tile_cache ? "yes" : "no", req.resample_tolerance);
      ok = wsi_slide_read (slide, ctx, &req, &out, &report, &error);
      if (ok) {
        st->reads_ok++;
      } else {
        st->reads_failed++;
        if (opt_verbose)
          g_printerr ("  %s: read: %s\n", backends[bi], error->message);
        g_clear_error (&error);
      }
    }
    g_free (out.data);
    if (!ok && report.sticky) {
      /* the contract: reopen before reading again */
      wsi_slide_close (slide);
      slide = reopened++ < 1 ? child_open (path, bi) : NULL;
      if (slide == NULL)
        break;
    }
  }

  if (slide != NULL) {
    GError *error = NULL;
    gint level = fuzz_rng_below (rng, slide->level_count);
    gdouble ds = slide->level_downsample[level];
    gint64 w = MIN (sides[fuzz_rng_below (rng, G_N_ELEMENTS (sides))], 300);
    gint64 h = MIN (sides[fuzz_rng_below (rng, G_N_ELEMENTS (sides))], 300);
    guint32 *argb = g_new (guint32, w * h);
    gint64 x, y;

    if (!(ds >= 1e-6 && ds <= 1e9))
      ds = 1.0;
    x = pick_position (rng, slide->level_width[0], w * ds, 0);
    y = pick_position (rng, slide->level_height[0], h * ds, 0);
    set_stage ("%s: wsi_slide_read_region level %d of %d x=%" G_GINT64_FORMAT
        " y=%" G_GINT64_FORMAT " %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT,
        backends[bi], level, slide->level_count, x, y, w, h);
    if (wsi_slide_read_region (slide, ctx, argb, x, y, level, w, h, &error)) {
      st->regions_ok++;
    } else {
      st->regions_failed++;
      if (opt_verbose)
        g_printerr ("  %s: region: %s\n", backends[bi], error->message);
      g_clear_error (&error);
    }
    g_free (argb);
    set_stage ("%s: wsi_slide_close", backends[bi]);
    wsi_slide_close (slide);
  }
  set_stage ("%s: wsi_read_context_free / wsi_tile_cache_free", backends[bi]);
  wsi_read_context_free (ctx);
  wsi_tile_cache_free (cache);
}

/* --self-test: what a child does instead of reading (0: read). */
static gint self_test_action;

static void
child_run (const gchar * path, guint64 read_seed)
{
  FuzzRng rng;
  guint bi;

  if (self_test_action == 1) {
    volatile gint *nowhere = NULL;
    set_stage ("self-test: write through NULL");
    *nowhere = 1;
  } else if (self_test_action == 2) {
    set_stage ("self-test: abort");
    g_error ("self-test");
  } else if (self_test_action == 3) {
    set_stage ("self-test: sleep");
    for (;;)
      pause ();
  }

  fuzz_rng_init (&rng, read_seed);
  for (bi = 0; bi < n_backends; bi++)
    child_backend (path, bi, &rng);
  set_stage ("done");
}

/* A sanitizer's stack printer, when the program is built with one. */
extern void __sanitizer_print_stack_trace (void) __attribute__ ((weak));

static void
child_crash_handler (int sig)
{
  static const char head[] = "\nwsi-fuzz-slides child: fatal signal or "
      "alarm; stage: ";

  if (write (2, head, sizeof head - 1) < 0
      || write (2, shared->stage, strlen (shared->stage)) < 0
      || write (2, "\n", 1) < 0) {
    /* nothing to do */
  }
  if (__sanitizer_print_stack_trace != NULL) {
    __sanitizer_print_stack_trace ();
  } else {
    void *frames[64];
    int n = backtrace (frames, G_N_ELEMENTS (frames));
    /* from the interrupted function on: not this handler, not the
     * signal trampoline */
    if (n > 2)
      backtrace_symbols_fd (frames + 2, n - 2, 2);
  }
  signal (sig, SIG_DFL);
  raise (sig);
}

static void
child_setup (void)
{
  g_log_set_default_handler (child_log_handler, NULL);
  if (opt_fatal_criticals)
    g_log_set_always_fatal (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL);
  /* g_error() and G_BREAKPOINT raise SIGTRAP, which no sanitizer reports;
   * the alarm: where it was stuck */
  signal (SIGTRAP, child_crash_handler);
  signal (SIGALRM, child_crash_handler);
#if !defined(__SANITIZE_ADDRESS__)
  {
    static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
    struct rlimit lim = { (rlim_t) 3 << 30, (rlim_t) 3 << 30 };
    guint i;
    for (i = 0; i < G_N_ELEMENTS (sigs); i++)
      signal (sigs[i], child_crash_handler);
    /* a hostile size must fail an allocation, not eat the machine (ASan
     * builds: max_allocation_size_mb, see __asan_default_options) */
    setrlimit (RLIMIT_AS, &lim);
  }
#endif
}

/* ---- the parent: run one input, classify --------------------------------- */

static gchar *
read_log (const gchar * path)
{
  gchar *contents = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &contents, &len, NULL))
    return g_strdup ("");
  if (len > 65536) {
    gchar *tail = g_strdup_printf ("[... %" G_GSIZE_FORMAT " bytes ...]\n%s",
        len - 65536, contents + len - 65536);
    g_free (contents);
    return tail;
  }
  return contents;
}

/* One frame of a sanitizer stack ("#3 0x... in func file.c:12",
 * "#8 0x...  (/lib/libx.so.0+0xce36)") or of backtrace_symbols()
 * ("/path/prog(func+0x12) [0x...]", "/lib/libx.so.0(+0xce36) [0x...]"):
 * its function (or module+offset) and whether it is in a shared library. */
static gchar *
parse_frame (const gchar * l, gboolean * external)
{
  const gchar *in, *open;

  if (l[0] == '#') {
    if ((in = strstr (l, " in ")) != NULL) {
      const gchar *fn = in + 4, *where = fn + strcspn (fn, " ");
      *external = strstr (where, ".so") != NULL;
      return g_strndup (fn, where - fn);
    }
    if ((open = strstr (l, "(/")) != NULL) {
      const gchar *slash = strrchr (open, '/');
      *external = TRUE;
      return g_strndup (slash + 1, strcspn (slash + 1, ")"));
    }
    return NULL;
  }
  if ((open = strchr (l, '(')) != NULL && strstr (l, "+0x") != NULL
      && strchr (l, '[') != NULL) {
    gsize n = strcspn (open + 1, "+)");
    *external = g_strstr_len (l, open - l, ".so") != NULL;
    if (n > 0)
      return g_strndup (open + 1, n);
    else {
      const gchar *slash = g_strrstr_len (l, open - l, "/");
      const gchar *base = slash ? slash + 1 : l;
      return g_strndup (base, strcspn (base, ")") + 1);
    }
  }
  return NULL;
}

static gboolean
is_plumbing (const gchar * name)
{
  static const gchar *const prefixes[] = { "__sanitizer", "__interceptor",
    "__GI_", "__assert", "__libc_message", "__pthread_kill", "child_crash",
    "raise", "abort", "g_log", "_g_log", "g_assertion", "g_error",
    "pthread_kill", "gsignal", "backtrace", "0x0",
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (prefixes); i++)
    if (g_str_has_prefix (name, prefixes[i]))
      return TRUE;
  return FALSE;
}

static gboolean
is_allocator (const gchar * name)
{
  static const gchar *const prefixes[] = { "g_malloc", "g_realloc",
    "g_try_", "g_new", "g_slice", "g_memdup", "malloc", "calloc", "realloc",
    "posix_memalign", "aligned_alloc", "operator new", "_Znwm", "_Znam",
    "libglib-2.0.so",
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (prefixes); i++)
    if (g_str_has_prefix (name, prefixes[i]))
      return TRUE;
  return FALSE;
}

/* The first frames of the child's stack (a sanitizer's SUMMARY kind first)
 * for grouping duplicates; *external: walking up from the crash, past
 * allocators, the abort path and other system libraries (libjpeg, libtiff,
 * GLib), libopenslide comes before any code of this project: the bug is
 * OpenSlide's. */
static gchar *
stack_key (const gchar * log, gboolean * external)
{
  gchar **lines = g_strsplit (log, "\n", -1);
  GString *key = g_string_new (NULL);
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  GArray *flags = g_array_new (FALSE, FALSE, sizeof (guint));
  gboolean in_stack = FALSE;
  guint i, first = 0, frames = 0;

  *external = FALSE;
  for (i = 0; lines[i]; i++) {
    const gchar *l = g_strstrip (lines[i]);
    gboolean ext = FALSE;
    gchar *name;

    if (g_str_has_prefix (l, "SUMMARY: ")) {
      /* "SUMMARY: AddressSanitizer: heap-buffer-overflow file:line in f" */
      const gchar *colon = strchr (l + 9, ':');
      const gchar *sp = colon ? strchr (colon + 2, ' ') : NULL;
      if (colon && sp)
        g_string_append_len (key, colon + 2, sp - colon - 2);
      break;
    }
    /* UBSan: "file.c:12:3: runtime error: store to null pointer of..." */
    if (key->len == 0 && strstr (l, ": runtime error: ") != NULL) {
      const gchar *m = strstr (l, ": runtime error: ") + 17;
      g_string_append_printf (key, "ubsan: %.*s", (int) MIN (strlen (m), 48),
          m);
      continue;
    }
    /* only the first stack (ASan adds allocation/free stacks after it) */
    if (names->len > 0 && !in_stack)
      continue;
    name = parse_frame (l, &ext);
    in_stack = name != NULL;
    if (name != NULL) {
      guint f = (ext ? 1 : 0) | (strstr (l, "libopenslide") ? 2 : 0);
      g_ptr_array_add (names, name);
      g_array_append_val (flags, f);
    }
  }
  /* the frames below the last of the abort path (g_log, abort, the
   * handlers...) are where it happened */
  for (i = 0; i < names->len; i++)
    if (is_plumbing (g_ptr_array_index (names, i)))
      first = i + 1;
  for (i = first; i < names->len; i++) {
    const gchar *name = g_ptr_array_index (names, i);
    guint f = g_array_index (flags, guint, i);
    if (f & 2) {
      *external = TRUE;
      break;
    }
    if (!(f & 1) && !is_allocator (name))
      break;
  }
  for (i = first; i < names->len && frames < 3; i++, frames++)
    g_string_append_printf (key, "%s%s", key->len ? (frames ? "<" : " ")
        : "", (const gchar *) g_ptr_array_index (names, i));
  g_ptr_array_unref (names);
  g_array_unref (flags);
  g_strfreev (lines);
  return g_string_free (key, FALSE);
}

/* "tiff: wsi_slide_read #2 ..." -> "tiff: wsi_slide_read" */
static gchar *
stage_op (const gchar * stage)
{
  gsize n = strcspn (stage, " ");

  if (stage[n] == ' ')
    n += 1 + strcspn (stage + n + 1, " #");
  return g_strndup (stage, n);
}

static void run_input_once (const gchar * path, guint64 read_seed,
    RunResult * res);

/* A hang is confirmed by a second run with 4 times the time: an input that
 * then finishes was only slow (a loaded machine, an ASan build). */
static guint64 slow_inputs;

static void
run_input (const gchar * path, guint64 read_seed, RunResult * res)
{
  gint saved = opt_timeout;

  run_input_once (path, read_seed, res);
  if (res->kind != RESULT_HANG || opt_no_fork)
    return;
  opt_timeout = saved * 4;
  run_result_clear (res);
  run_input_once (path, read_seed, res);
  opt_timeout = saved;
  if (res->kind != RESULT_HANG)
    slow_inputs++;
}

static void
run_input_once (const gchar * path, guint64 read_seed, RunResult * res)
{
  gchar *log_path = g_build_filename (workdir, "child.log", NULL);
  gint64 deadline;
  gulong nap = 50;
  int status = 0;
  pid_t pid;

  memset (res, 0, sizeof (*res));
  memset (shared, 0, sizeof (*shared));
  fflush (stdout);
  fflush (stderr);

  if (opt_no_fork) {
    child_setup ();
    child_run (path, read_seed);
    memcpy (res->b, shared->b, sizeof (res->b));
    res->criticals = shared->criticals;
    res->kind = RESULT_OK;
    res->status = g_strdup ("exit 0");
    res->stage = g_strdup (shared->stage);
    res->key = g_strdup ("");
    res->log = g_strdup ("");
    g_free (log_path);
    return;
  }

  pid = fork ();
  if (pid < 0) {
    g_printerr ("wsi-fuzz-slides: fork: %s\n", g_strerror (errno));
    exit (2);
  }
  if (pid == 0) {
    if (!opt_verbose) {
      int fd = open (log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2 (fd, 1);
        dup2 (fd, 2);
        close (fd);
      }
    }
    child_setup ();
    alarm (opt_timeout);
    child_run (path, read_seed);
    fflush (stdout);
    fflush (stderr);
    if (opt_detect_leaks && __lsan_do_recoverable_leak_check != NULL
        && __lsan_do_recoverable_leak_check () != 0)
      _exit (EXIT_LEAK);
#ifdef WSI_FUZZ_COVERAGE
    __gcov_dump ();
#endif
    _exit (0);
  }

  /* the alarm is the child's own; this is the safety net */
  deadline = g_get_monotonic_time () + (gint64) (opt_timeout + 5) * 1000000;
  for (;;) {
    pid_t w = waitpid (pid, &status, WNOHANG);
    if (w == pid)
      break;
    if (w < 0 && errno != EINTR) {
      status = 0;
      break;
    }
    if (g_get_monotonic_time () > deadline) {
      kill (pid, SIGKILL);
      waitpid (pid, &status, 0);
      status = -1;
      break;
    }
    g_usleep (nap);
    nap = MIN (nap * 2, 2000);
  }

  memcpy (res->b, shared->b, sizeof (res->b));
  res->criticals = shared->criticals;
  res->stage = g_strdup (shared->stage);
  res->log = opt_verbose ? g_strdup ("") : read_log (log_path);
  if (status == -1 || (WIFSIGNALED (status) && WTERMSIG (status) == SIGALRM)) {
    /* the stack where the alarm interrupted it: only to tell OpenSlide */
    gchar *stack = stack_key (res->log, &res->external);
    res->kind = RESULT_HANG;
    res->status = g_strdup_printf ("timeout (%d s)", opt_timeout);
    res->key = g_strdup ("hang");
    g_free (stack);
  } else if (WIFSIGNALED (status)) {
    gchar *stack = stack_key (res->log, &res->external);
    res->kind = RESULT_CRASH;
    res->status = g_strdup_printf ("signal %d (%s)", WTERMSIG (status),
        g_strsignal (WTERMSIG (status)));
    res->key = g_strdup_printf ("%s %s", g_strsignal (WTERMSIG (status)),
        stack);
    g_free (stack);
  } else if (WIFEXITED (status) && WEXITSTATUS (status) == EXIT_LEAK) {
    gchar *stack = stack_key (res->log, &res->external);
    res->kind = RESULT_LEAK;
    res->status = g_strdup ("leak");
    res->key = g_strdup_printf ("leak %s", stack);
    g_free (stack);
  } else if (WIFEXITED (status) && WEXITSTATUS (status) != 0) {
    gchar *stack = stack_key (res->log, &res->external);
    res->kind = RESULT_CRASH;
    res->status = g_strdup_printf ("exit %d", WEXITSTATUS (status));
    res->key = g_strdup_printf ("exit %d %s", WEXITSTATUS (status), stack);
    g_free (stack);
  } else {
    res->kind = RESULT_OK;
    res->status = g_strdup ("exit 0");
    res->key = g_strdup ("");
  }
  if (res->kind == RESULT_CRASH && (strstr (res->log, "failed to allocate")
          || strstr (res->log, "allocation-size-too-big")
          || strstr (res->log, "out-of-memory")
          || strstr (res->log, "requested allocation size"))) {
    res->kind = RESULT_OOM;
  }
  if (res->kind != RESULT_OK) {
    gchar *op = stage_op (res->stage);
    gchar *k = g_strdup_printf ("%s%s%s in %s", res->external
        ? "[in OpenSlide] " : "", res->kind == RESULT_OOM
        ? "allocation failure: " : "", res->key, op);
    g_free (res->key);
    g_free (op);
    res->key = k;
  }
  g_free (log_path);
}

/* ---- totals and findings ------------------------------------------------- */

typedef struct
{
  guint64 inputs;
  BackendStats b[MAX_BACKENDS];
  guint64 crashes, hangs, leaks, ooms, external, criticals, failures;
  GHashTable *findings;         /* key -> count */
  guint unique;
} Totals;

static Totals totals;

/* Worth saving. */
static gboolean
is_finding (const RunResult * r)
{
  return r->kind != RESULT_OK || (opt_fatal_criticals && r->criticals > 0);
}

/* Fails the run: every finding, but with --ignore-openslide not those
 * inside libopenslide (reported all the same; see docs/fuzzing.md). */
static gboolean
is_failure (const RunResult * r)
{
  if (r->external && opt_ignore_openslide)
    return FALSE;
  return is_finding (r);
}

static void
totals_add (const RunResult * r)
{
  guint i;

  totals.inputs++;
  for (i = 0; i < MAX_BACKENDS; i++) {
    totals.b[i].opens += r->b[i].opens;
    totals.b[i].opened += r->b[i].opened;
    totals.b[i].reads_ok += r->b[i].reads_ok;
    totals.b[i].reads_failed += r->b[i].reads_failed;
    totals.b[i].regions_ok += r->b[i].regions_ok;
    totals.b[i].regions_failed += r->b[i].regions_failed;
  }
  totals.criticals += r->criticals;
  if (r->kind == RESULT_CRASH)
    totals.crashes++;
  else if (r->kind == RESULT_HANG)
    totals.hangs++;
  else if (r->kind == RESULT_LEAK)
    totals.leaks++;
  else if (r->kind == RESULT_OOM)
    totals.ooms++;
  if (r->kind != RESULT_OK && r->external)
    totals.external++;
  if (is_failure (r))
    totals.failures++;
}

/* Counts a finding; returns how many times its key was seen before and
 * its number (1, 2, ... in order of discovery). */
static guint
finding_seen (const gchar * key, guint * number)
{
  guint *entry = g_hash_table_lookup (totals.findings, key);

  if (entry == NULL) {
    entry = g_new0 (guint, 2);
    entry[1] = ++totals.unique;
    g_hash_table_insert (totals.findings, g_strdup (key), entry);
  }
  *number = entry[1];
  return entry[0]++;
}

static void
save_finding (const RunResult * r, const guint8 * data, gsize len,
    const gchar * ext, guint64 read_seed, const gchar * origin,
    const gchar * mutations)
{
  guint number, seen = finding_seen (r->key, &number);
  gchar *base, *path, *txt;
  GString *info;
  guint i;

  if (seen == 0)
    g_print ("NEW %s #%u: %s\n  stage: %s\n  from: %s\n", result_names[r->kind],
        number, r->key, r->stage, origin);
  if (seen >= MAX_SAMPLES_PER_FINDING || opt_out == NULL)
    return;
  g_mkdir_with_parents (opt_out, 0755);
  base = g_strdup_printf ("%s-%03u-%u.seed%" G_GUINT64_FORMAT,
      result_names[r->kind], number, seen, read_seed);
  path = g_strconcat (opt_out, "/", base, ext, NULL);
  txt = g_strconcat (opt_out, "/", base, ".txt", NULL);
  save_bytes (path, data, len);
  info = g_string_new (NULL);
  g_string_append_printf (info, "input: %s%s (%" G_GSIZE_FORMAT " bytes)\n",
      base, ext, len);
  g_string_append_printf (info, "result: %s, %s\nkey: %s\nstage: %s\n",
      result_names[r->kind], r->status, r->key, r->stage);
  g_string_append_printf (info, "from: %s\nmutations: %s\nread seed: %"
      G_GUINT64_FORMAT "\nbackends:", origin, mutations ? mutations : "none",
      read_seed);
  for (i = 0; i < n_backends; i++)
    g_string_append_printf (info, " %s", backends[i]);
  g_string_append_printf (info, "\nreplay: wsi-fuzz-slides --replay %s%s "
      "--backend %s\n\n---- child stderr ----\n%s\n", path, "",
      opt_backend ? opt_backend : "all", r->log);
  save_bytes (txt, (const guint8 *) info->str, info->len);
  g_print ("  saved %s\n", path);
  g_string_free (info, TRUE);
  g_free (base);
  g_free (path);
  g_free (txt);
}

static void
print_summary (const gchar * what, gdouble elapsed)
{
  GString *s = g_string_new (NULL);
  guint i;

  g_string_append_printf (s, "wsi-fuzz-slides %s: %" G_GUINT64_FORMAT
      " inputs in %.1f s (seed %" G_GINT64_FORMAT ")", what, totals.inputs,
      elapsed, opt_seed);
  for (i = 0; i < n_backends; i++) {
    const BackendStats *b = &totals.b[i];
    g_string_append_printf (s, "; %s: %" G_GUINT64_FORMAT "/%"
        G_GUINT64_FORMAT " opened, reads %" G_GUINT64_FORMAT " ok %"
        G_GUINT64_FORMAT " failed, regions %" G_GUINT64_FORMAT " ok %"
        G_GUINT64_FORMAT " failed", backends[i], b->opened, b->opens,
        b->reads_ok, b->reads_failed, b->regions_ok, b->regions_failed);
  }
  g_string_append_printf (s, "; %" G_GUINT64_FORMAT " crashes, %"
      G_GUINT64_FORMAT " hangs, %" G_GUINT64_FORMAT " ooms (%"
      G_GUINT64_FORMAT " of them inside OpenSlide)", totals.crashes,
      totals.hangs, totals.ooms, totals.external);
  if (opt_detect_leaks)
    g_string_append_printf (s, ", %" G_GUINT64_FORMAT " leaks", totals.leaks);
  g_string_append_printf (s, " (%u distinct); %" G_GUINT64_FORMAT
      " criticals; %" G_GUINT64_FORMAT " slow (over %d s once, not a hang)",
      totals.unique, totals.criticals, slow_inputs, opt_timeout);
  g_print ("%s\n", s->str);
  g_string_free (s, TRUE);
}


/* ---- modes --------------------------------------------------------------- */

static gchar *
input_path (const gchar * ext)
{
  gchar *name = g_strconcat ("input", ext, NULL);
  gchar *path = g_build_filename (workdir, name, NULL);

  g_free (name);
  return path;
}

static const Seed *
pick_seed (FuzzRng * rng)
{
  guint total = 0, i, r;

  for (i = 0; i < seeds->len; i++)
    total += ((Seed *) g_ptr_array_index (seeds, i))->weight;
  r = fuzz_rng_below (rng, total);
  for (i = 0; i < seeds->len; i++) {
    const Seed *s = g_ptr_array_index (seeds, i);
    if (r < s->weight)
      return s;
    r -= s->weight;
  }
  return g_ptr_array_index (seeds, seeds->len - 1);
}

static int
mode_fuzz (void)
{
  FuzzRng master;
  gint64 start = g_get_monotonic_time (), next_progress;
  gint64 end = start + (gint64) (opt_seconds * 1e6);
  guint64 it;

  next_progress = start + 30 * G_USEC_PER_SEC;
  fuzz_rng_init (&master, opt_seed);
  for (it = 0; opt_iterations < 0 || it < (guint64) opt_iterations; it++) {
    /* 63 bits: names and --read-seed carry it as a signed number */
    guint64 iter_seed = fuzz_rng_next (&master) >> 1;
    FuzzRng rng;
    const Seed *seed;
    GByteArray *buf;
    GString *log = g_string_new (NULL);
    guint n_mut, k;
    gchar *path, *origin;
    RunResult res;
    gint64 now = g_get_monotonic_time ();

    if (opt_iterations < 0 && now >= end)
      break;
    if (now >= next_progress) {
      print_summary ("progress", (now - start) / 1e6);
      next_progress = now + 30 * G_USEC_PER_SEC;
    }
    fuzz_rng_init (&rng, iter_seed);
    seed = pick_seed (&rng);
    buf = g_byte_array_sized_new (seed->data->len);
    g_byte_array_append (buf, seed->data->data, seed->data->len);
    n_mut = 1;
    while ((gint) n_mut < opt_max_mutations && fuzz_rng_chance (&rng, 40))
      n_mut++;
    for (k = 0; k < n_mut; k++) {
      if (k)
        g_string_append (log, "; ");
      fuzz_tiff_mutate (buf, &seed->info, &rng, NULL, log);
    }
    path = input_path (seed->ext);
    save_bytes (path, buf->data, buf->len);
    if (opt_verbose)
      g_print ("[%" G_GUINT64_FORMAT "] %s: %s\n", it, seed->name, log->str);
    run_input (path, iter_seed, &res);
    totals_add (&res);
    if (is_finding (&res)) {
      origin = g_strdup_printf ("seed file %s, iteration %" G_GUINT64_FORMAT
          " of --seed %" G_GINT64_FORMAT, seed->name, it, opt_seed);
      save_finding (&res, buf->data, buf->len, seed->ext, iter_seed, origin,
          log->str);
      g_free (origin);
    }
    run_result_clear (&res);
    g_free (path);
    g_byte_array_unref (buf);
    g_string_free (log, TRUE);
  }
  print_summary ("fuzz", (g_get_monotonic_time () - start) / 1e6);
  return totals.failures > 0;
}

/* The read seed a finding's name carries ("crash-001-0.seed1234.svs"). */
static gint64
name_read_seed (const gchar * path)
{
  const gchar *p = strstr (path, ".seed");

  if (p == NULL || !g_ascii_isdigit (p[5]))
    return -1;
  return (gint64) MIN (g_ascii_strtoull (p + 5, NULL, 10),
      (guint64) G_MAXINT64);
}

typedef struct
{
  gchar *name;
  gchar *path;                  /* on disk, replayed as it is */
  gboolean must_open;
} ReplayItem;

static void
replay_item_free (gpointer p)
{
  ReplayItem *item = p;

  g_free (item->name);
  g_free (item->path);
  g_free (item);
}

static void
add_replay (GPtrArray * items, const gchar * name, const gchar * path,
    gboolean must_open)
{
  ReplayItem *item = g_new0 (ReplayItem, 1);

  item->name = g_strdup (name);
  item->path = g_strdup (path);
  item->must_open = must_open;
  g_ptr_array_add (items, item);
}

/* The generator's broken files: truncated, damaged tiles, garbage, empty. */
static void
add_broken_files (GPtrArray * items)
{
  gchar *dir = g_build_filename (workdir, "broken", NULL);
  WsiTestSlideSpec spec;
  static const gdouble keep[] = { 0.02, 0.3, 0.7, 0.98 };
  guint i;

  g_mkdir_with_parents (dir, 0755);
  spec_from_gen (&spec, &gen_specs[1], 7);
  for (i = 0; i < G_N_ELEMENTS (keep); i++) {
    gchar *name = g_strdup_printf ("truncated-%.2f.tiff", keep[i]);
    gchar *path = g_build_filename (dir, name, NULL);
    if (wsi_test_slide_write_truncated (path, &spec, keep[i], NULL))
      add_replay (items, name, path, FALSE);
    g_free (name);
    g_free (path);
  }
  spec_from_gen (&spec, &gen_specs[4], 8);
  for (i = 0; i < 2; i++) {
    gchar *name = g_strdup_printf ("truncated-aperio-%.2f.svs", keep[i + 1]);
    gchar *path = g_build_filename (dir, name, NULL);
    if (wsi_test_slide_write_truncated (path, &spec, keep[i + 1], NULL))
      add_replay (items, name, path, FALSE);
    g_free (name);
    g_free (path);
  }
  {
    gchar *path = g_build_filename (dir, "damaged-tiles.svs", NULL);
    if (wsi_test_slide_write_damaged_tiles (path, &spec, NULL))
      add_replay (items, "damaged-tiles.svs", path, FALSE);
    g_free (path);
    path = g_build_filename (dir, "garbage.tiff", NULL);
    if (wsi_test_slide_write_garbage (path, 65536, 3, NULL))
      add_replay (items, "garbage.tiff", path, FALSE);
    g_free (path);
    path = g_build_filename (dir, "empty.svs", NULL);
    if (wsi_test_slide_write_empty (path, NULL))
      add_replay (items, "empty.svs", path, FALSE);
    g_free (path);
  }
  g_free (dir);
}

static int
mode_replay (void)
{
  GPtrArray *items = g_ptr_array_new_with_free_func (replay_item_free);
  gint64 start = g_get_monotonic_time ();
  guint i, failures = 0;

  for (i = 0; opt_replay && opt_replay[i]; i++) {
    GPtrArray *files = list_files (opt_replay[i]);
    guint j;
    g_print ("replay: %u file(s) in %s\n", files->len, opt_replay[i]);
    for (j = 0; j < files->len; j++) {
      const gchar *f = g_ptr_array_index (files, j);
      gchar *base = g_path_get_basename (f);
      add_replay (items, base, f, FALSE);
      g_free (base);
    }
    g_ptr_array_unref (files);
  }
  if (opt_replay_seeds) {
    gchar *dir = g_build_filename (workdir, "replay-seeds", NULL);
    g_mkdir_with_parents (dir, 0755);
    for (i = 0; i < seeds->len; i++) {
      const Seed *s = g_ptr_array_index (seeds, i);
      gchar *name = g_strdup_printf ("%03u%s", i, s->ext);
      gchar *path = g_build_filename (dir, name, NULL);
      save_bytes (path, s->data->data, s->data->len);
      add_replay (items, s->name, path, s->must_open);
      g_free (name);
      g_free (path);
      /* the minimizer's rewriting, checked: a compacted valid slide is
       * still a valid slide */
      if (s->must_open && s->data->len < (2u << 20)) {
        GByteArray *c = fuzz_tiff_compact (s->data->data, s->data->len, NULL,
            0);
        if (c != NULL) {
          gchar *cname = g_strdup_printf ("%s (compacted)", s->name);
          name = g_strdup_printf ("%03u-compacted%s", i, s->ext);
          path = g_build_filename (dir, name, NULL);
          save_bytes (path, c->data, c->len);
          add_replay (items, cname, path, TRUE);
          g_byte_array_unref (c);
          g_free (cname);
          g_free (name);
          g_free (path);
        }
      }
    }
    g_free (dir);
    if (!opt_no_generated)
      add_broken_files (items);
  }
  if (items->len == 0) {
    g_print ("replay: nothing to replay\n");
    g_ptr_array_unref (items);
    return 0;
  }

  for (i = 0; i < items->len; i++) {
    const ReplayItem *item = g_ptr_array_index (items, i);
    gint64 embedded = opt_read_seed >= 0 ? opt_read_seed
        : name_read_seed (item->name);
    GString *line = g_string_new (NULL);
    guint64 opened[MAX_BACKENDS] = { 0 }, reads_ok = 0, reads_failed = 0;
    gboolean bad = FALSE;
    gint r, n = MAX (opt_read_seeds, 1);
    guint bi;

    for (r = embedded >= 0 ? -1 : 0; r < n; r++) {
      guint64 read_seed = r < 0 ? (guint64) embedded : (guint64) r + 1;
      RunResult res;
      run_input (item->path, read_seed, &res);
      totals_add (&res);
      for (bi = 0; bi < n_backends; bi++) {
        opened[bi] += res.b[bi].opened;
        reads_ok += res.b[bi].reads_ok + res.b[bi].regions_ok;
        reads_failed += res.b[bi].reads_failed + res.b[bi].regions_failed;
      }
      if (is_finding (&res)) {
        GByteArray *data = load_file (item->path, NULL);
        gchar *origin = g_strdup_printf ("replay of %s", item->name);
        gboolean fail = is_failure (&res);
        g_print ("%s %s (read seed %" G_GUINT64_FORMAT "): %s, %s\n"
            "  key: %s\n  stage: %s\n", fail ? "FAIL" : "NOTE", item->name,
            read_seed, result_names[res.kind], res.status, res.key,
            res.stage);
        if (fail && res.log && *res.log)
          g_print ("%s\n", res.log);
        if (data) {
          save_finding (&res, data->data, data->len, path_ext (item->name),
              read_seed, origin, NULL);
          g_byte_array_unref (data);
        }
        g_free (origin);
        bad |= fail;
      }
      run_result_clear (&res);
      if (opt_no_fork)
        break;
    }
    if (item->must_open) {
      guint64 any = 0;
      for (bi = 0; bi < n_backends; bi++)
        any += opened[bi];
      if (any == 0) {
        g_print ("FAIL %s: a valid slide that no backend opened\n",
            item->name);
        bad = TRUE;
      }
    }
    g_string_append_printf (line, "%s %s:", bad ? "FAIL" : "ok  ",
        item->name);
    for (bi = 0; bi < n_backends; bi++)
      g_string_append_printf (line, " %s %s", backends[bi],
          opened[bi] ? "opened" : "declined");
    g_string_append_printf (line, ", reads %" G_GUINT64_FORMAT " ok %"
        G_GUINT64_FORMAT " failed", reads_ok, reads_failed);
    g_print ("%s\n", line->str);
    g_string_free (line, TRUE);
    if (bad)
      failures++;
  }
  print_summary ("replay", (g_get_monotonic_time () - start) / 1e6);
  g_print ("replay: %u input(s), %u failed\n", items->len, failures);
  g_ptr_array_unref (items);
  return failures ? 1 : 0;
}

/* ---- self-test ----------------------------------------------------------- */

static int
mode_self_test (void)
{
  static const struct
  {
    const gchar *what;
    ResultKind expect;
  } cases[] = {
    {"a valid slide", RESULT_OK}, {"a NULL write", RESULT_CRASH},
    {"g_error", RESULT_CRASH}, {"a child that sleeps", RESULT_HANG},
  };
  const Seed *seed = g_ptr_array_index (seeds, 0);
  gchar *path = input_path (seed->ext);
  gint saved_timeout = opt_timeout;
  guint i, failures = 0;

  save_bytes (path, seed->data->data, seed->data->len);
  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    RunResult res;
    self_test_action = i;
    opt_timeout = i == 3 ? 1 : saved_timeout;
    run_input (path, 1, &res);
    g_print ("self-test: %s -> %s (%s)%s%s\n", cases[i].what,
        result_names[res.kind], res.status, res.key[0] ? ": " : "", res.key);
    if (res.kind != cases[i].expect) {
      g_print ("FAIL self-test: %s: expected %s\n", cases[i].what,
          result_names[cases[i].expect]);
      failures++;
    }
    run_result_clear (&res);
  }
  self_test_action = 0;
  opt_timeout = saved_timeout;
  g_free (path);
  return failures ? 1 : 0;
}

/* ---- minimize ------------------------------------------------------------ */

static gboolean
reproduces (const GByteArray * buf, const gchar * ext, guint64 read_seed,
    ResultKind kind, const gchar * key)
{
  gchar *path = input_path (ext);
  RunResult res;
  gboolean same;

  save_bytes (path, buf->data, buf->len);
  run_input_once (path, read_seed, &res);
  same = res.kind == kind && (kind == RESULT_HANG
      || g_strcmp0 (res.key, key) == 0);
  run_result_clear (&res);
  g_free (path);
  return same;
}

static int
mode_minimize (void)
{
  const gchar *ext = path_ext (opt_minimize);
  GByteArray *buf = load_file (opt_minimize, NULL);
  gint64 read_seed = opt_read_seed >= 0 ? opt_read_seed
      : name_read_seed (opt_minimize);
  gchar *path, *base, *out, *stem;
  RunResult first;
  ResultKind kind;
  gchar *key;
  guint64 step, chunk, runs = 0;
  gsize orig_len;

  if (buf == NULL) {
    g_printerr ("wsi-fuzz-slides: cannot read %s\n", opt_minimize);
    return 2;
  }
  if (read_seed < 0)
    read_seed = 1;
  orig_len = buf->len;
  path = input_path (ext);
  save_bytes (path, buf->data, buf->len);
  run_input (path, read_seed, &first);
  g_free (path);
  if (!is_finding (&first)) {
    g_print ("minimize: %s does not reproduce (read seed %" G_GINT64_FORMAT
        ")\n", opt_minimize, read_seed);
    run_result_clear (&first);
    return 1;
  }
  kind = first.kind;
  key = g_strdup (first.key);
  g_print ("minimize: %s: %s (%s)\n", opt_minimize, key, first.status);
  run_result_clear (&first);

  /* 1. rewrite the TIFF without the tiles it does not need */
  {
    FuzzTiffInfo info;
    guint n, chunk, start, j;
    gboolean *drop;
    GByteArray *c;

    fuzz_tiff_parse (&info, buf->data, buf->len);
    n = info.valid ? fuzz_tiff_count_slots (&info) : 0;
    fuzz_tiff_info_clear (&info);
    drop = g_new0 (gboolean, MAX (n, 1));
    c = n ? fuzz_tiff_compact (buf->data, buf->len, drop, n) : NULL;
    runs++;
    if (c != NULL && reproduces (c, ext, read_seed, kind, key)) {
      for (chunk = n; chunk >= 1; chunk /= 2) {
        for (start = 0; start < n; start += chunk) {
          gboolean any = FALSE;
          GByteArray *t;
          for (j = start; j < MIN (start + chunk, n); j++) {
            any |= !drop[j];
            drop[j] = TRUE;
          }
          if (!any)
            continue;
          t = fuzz_tiff_compact (buf->data, buf->len, drop, n);
          runs++;
          if (t == NULL || !reproduces (t, ext, read_seed, kind, key)) {
            /* put back what this chunk dropped */
            for (j = start; j < MIN (start + chunk, n); j++)
              drop[j] = FALSE;
          }
          if (t)
            g_byte_array_unref (t);
        }
        if (chunk == 1)
          break;
      }
      g_byte_array_unref (c);
      c = fuzz_tiff_compact (buf->data, buf->len, drop, n);
      if (c != NULL && reproduces (c, ext, read_seed, kind, key)) {
        guint kept = 0;
        for (j = 0; j < n; j++)
          kept += !drop[j];
        g_print ("minimize: compacted to %u bytes, %u of %u tiles kept\n",
            c->len, kept, n);
        g_byte_array_unref (buf);
        buf = c;
        c = NULL;
      }
    }
    if (c)
      g_byte_array_unref (c);
    g_free (drop);
  }

  /* 2. the shortest prefix that still fails the same way */
  for (step = buf->len / 2; step >= 1; step /= 2) {
    while (buf->len > step) {
      gsize len = buf->len;
      g_byte_array_set_size (buf, len - step);
      runs++;
      if (!reproduces (buf, ext, read_seed, kind, key)) {
        /* the bytes are still there: only the length changed back */
        g_byte_array_set_size (buf, len);
        break;
      }
    }
  }
  /* 3. zero what does not matter (compresses, and shows what does) */
  for (chunk = 4096; chunk >= 64; chunk /= 8) {
    guint64 off;
    for (off = 16; off < buf->len; off += chunk) {
      guint64 n = MIN (chunk, buf->len - off), j;
      guint8 *save;
      gboolean nonzero = FALSE;
      for (j = 0; j < n && !nonzero; j++)
        nonzero = buf->data[off + j] != 0;
      if (!nonzero)
        continue;
      save = g_memdup2 (buf->data + off, n);
      memset (buf->data + off, 0, n);
      runs++;
      if (!reproduces (buf, ext, read_seed, kind, key))
        memcpy (buf->data + off, save, n);
      g_free (save);
    }
  }

  base = g_path_get_basename (opt_minimize);
  stem = g_strndup (base, strcspn (base, "."));
  g_mkdir_with_parents (opt_out, 0755);
  out = g_strdup_printf ("%s/%s-min.seed%" G_GINT64_FORMAT "%s", opt_out,
      stem, read_seed, ext);
  save_bytes (out, buf->data, buf->len);
  g_print ("minimize: %" G_GSIZE_FORMAT " -> %u bytes in %" G_GUINT64_FORMAT
      " runs: %s\n", orig_len, buf->len, runs, out);
  g_free (base);
  g_free (stem);
  g_free (out);
  g_free (key);
  g_byte_array_unref (buf);
  return 0;
}

/* ---- main ---------------------------------------------------------------- */

static gboolean
pick_backends (void)
{
  const gchar *b = opt_backend ? opt_backend : "all";

  if (strcmp (b, "all") == 0) {
    const WsiSlideBackend *const *it;
    for (it = wsi_slide_backends (); *it && n_backends < MAX_BACKENDS; it++)
      backends[n_backends++] = (*it)->name;
  } else if (strcmp (b, WSI_BACKEND_AUTO) == 0) {
    backends[n_backends++] = WSI_BACKEND_AUTO;
  } else if (wsi_slide_backend_find (b) != NULL) {
    backends[n_backends++] = wsi_slide_backend_find (b)->name;
  } else {
    g_printerr ("wsi-fuzz-slides: backend '%s' is not built in\n", b);
    return FALSE;
  }
  return n_backends > 0;
}

static void
remove_tree (const gchar * path)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  const gchar *name;

  if (dir) {
    while ((name = g_dir_read_name (dir)) != NULL) {
      gchar *full = g_build_filename (path, name, NULL);
      if (g_file_test (full, G_FILE_TEST_IS_DIR)
          && !g_file_test (full, G_FILE_TEST_IS_SYMLINK))
        remove_tree (full);
      else
        g_unlink (full);
      g_free (full);
    }
    g_dir_close (dir);
  }
  g_rmdir (path);
}

int
main (int argc, char **argv)
{
  GOptionContext *octx;
  GError *error = NULL;
  gboolean own_workdir = FALSE;
  int ret;
  guint i;

  octx = g_option_context_new ("- mutation fuzzer for the slide backends");
  g_option_context_add_main_entries (octx, option_entries, NULL);
  if (!g_option_context_parse (octx, &argc, &argv, &error)) {
    g_printerr ("wsi-fuzz-slides: %s\n", error->message);
    return 2;
  }
  g_option_context_free (octx);
  if (opt_timeout < 1)
    opt_timeout = 1;
  if (opt_max_mutations < 1)
    opt_max_mutations = 1;
  if (opt_out == NULL)
    opt_out = g_strdup ("fuzz-findings");

  if (!pick_backends ())
    return 2;
  {
    /* backtrace() loads libgcc_s (and allocates) on its first call: not in
     * a signal handler */
    void *frame[1];
    backtrace (frame, 1);
  }
  shared = mmap (NULL, sizeof (Shared), PROT_READ | PROT_WRITE,
      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    g_printerr ("wsi-fuzz-slides: mmap: %s\n", g_strerror (errno));
    return 2;
  }
  totals.findings = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);

  if (opt_workdir) {
    workdir = g_strdup (opt_workdir);
    g_mkdir_with_parents (workdir, 0755);
  } else {
    workdir = g_dir_make_tmp ("wsi-fuzz-XXXXXX", &error);
    if (workdir == NULL) {
      g_printerr ("wsi-fuzz-slides: %s\n", error->message);
      return 2;
    }
    own_workdir = TRUE;
  }

  seeds = g_ptr_array_new_with_free_func (seed_free);
  if (opt_minimize) {
    ret = mode_minimize ();
    goto done;
  }
  if (!opt_no_generated && !generate_seeds ()) {
    ret = 2;
    goto done;
  }
  if (!opt_no_shared) {
    const gchar *dir = shared_slides_dir ();
    if (dir && *dir && g_file_test (dir, G_FILE_TEST_IS_DIR)) {
      add_file_seeds (dir, 2, TRUE, "real slide");
    } else if (g_strcmp0 (g_getenv ("CI"), "true") == 0) {
      /* CI provides ../shared/slides: without it the seeds are not real */
      g_printerr ("wsi-fuzz-slides: CI=true but the real slides folder %s "
          "is absent\n", dir && *dir ? dir : "(not configured)");
      ret = 2;
      goto done;
    } else {
      /* one line scripts/test-summary.py counts as a part skipped */
      g_print ("SKIP: real-slide seeds: real slides folder %s is absent\n",
          dir && *dir ? dir : "(not configured)");
    }
  }
  for (i = 0; opt_corpus && opt_corpus[i]; i++)
    add_file_seeds (opt_corpus[i], 3, FALSE, "corpus");

  {
    GString *s = g_string_new (NULL);
    for (i = 0; i < n_backends; i++)
      g_string_append_printf (s, "%s%s", i ? ", " : "", backends[i]);
    g_print ("wsi-fuzz-slides: %u seeds, backends: %s, timeout %d s, "
        "workdir %s\n", seeds->len, s->str, opt_timeout, workdir);
    g_string_free (s, TRUE);
  }

  if (opt_self_test && seeds->len > 0) {
    ret = mode_self_test ();
    if (ret == 0 && (opt_replay || opt_replay_seeds))
      ret = mode_replay ();
  } else if (opt_replay || opt_replay_seeds) {
    ret = mode_replay ();
  } else if (seeds->len == 0) {
    g_printerr ("wsi-fuzz-slides: no seeds\n");
    ret = 2;
  } else {
    ret = mode_fuzz ();
  }

done:
  if (own_workdir)
    remove_tree (workdir);
  g_free (workdir);
  g_ptr_array_unref (seeds);
  g_hash_table_destroy (totals.findings);
  munmap (shared, sizeof (Shared));
  return ret;
}
