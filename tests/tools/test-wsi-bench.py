#!/usr/bin/python3
# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Self-check of wsi-bench: a short world-size-2 sweep on generated slides.

  test-wsi-bench.py WSI_BENCH WSI_MAKE_TEST_SLIDES WORKDIR

Runs the real default pipeline (every element, the wsistats tracer) over
threads and pool size with repeats and checks that the printed table, the
best-configuration block, the JSON and the CSV say the same thing, that
medians and ranges are those of the runs, that the numbers are the
pipeline's (patches counted from the batches' WsiPatchMeta, both ranks
measured), and that the plot has one panel per swept setting with its
title, axis labels and legend (PNG and SVG). Exit 0 or 1.
"""

import csv
import json
import os
import shutil
import statistics
import subprocess
import sys

WORLD_SIZE = 2
THREADS = [1, 2]
POOLS = [2, 3]
REPEATS = 2
BATCH_SIZE = 16


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def close(printed, value, decimals):
    """True when @printed is @value rounded to @decimals places."""
    return abs(float(printed) - value) <= 0.5 * 10 ** -decimals + 1e-9


def make_slides(generator, workdir):
    slides = os.path.join(workdir, "slides")
    subprocess.run([generator, "--count", "4", "--width", "2048",
                    "--height", "1536", "--levels", "3", "--blobs", "2",
                    slides], check=True, stdout=subprocess.DEVNULL)
    return slides


def run_sweep(bench, slides, out_dir):
    cmd = [sys.executable, bench, "--world-size", str(WORLD_SIZE),
           "--threads", ",".join(str(t) for t in THREADS),
           "--pool-size", ",".join(str(p) for p in POOLS),
           "--patches-per-slide", "32", "--repeats", str(REPEATS),
           "--patches-per-visit", "4", "--batch-size", str(BATCH_SIZE),
           "--warmup", "2", "--batches", "6", "--timeout", "120",
           "--slides", slides, "--out", out_dir]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=280)
    print(proc.stdout)
    if proc.returncode != 0:
        fail("wsi-bench exited with %d: %s" % (proc.returncode, proc.stderr))
    return proc.stdout


def table_rows(stdout):
    """The sweep table's rows, as lists of strings."""
    lines = stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("world size"))
    rows = []
    for line in lines[start + 2:]:
        if not line.strip():
            break
        rows.append(line.split())
    return rows


def best_block(stdout):
    lines = stdout.splitlines()
    i = next(i for i, l in enumerate(lines) if l.startswith("best:"))
    ranks = []
    for line in lines[i + 2:]:
        if not line.strip():
            break
        ranks.append(line.split())
    return lines[i], ranks


def check_result(row, r):
    """A table row against its JSON result; the result against its runs."""
    check(int(row[0]) == r["threads"] and int(row[1]) == r["pool_size"]
          and int(row[2]) == r["patches_per_slide"]
          and int(row[3]) == r["patches_per_visit"],
          "table row %s names another configuration than %s" % (row, r))
    for col, key in ((4, "effective"), (5, "effective_min"),
                     (6, "effective_max"), (7, "aggregate"), (8, "slowest")):
        check(close(row[col], r[key], 1), "%s %s vs %s" % (key, row[col], r[key]))
    check(close(row[9], r["peak_rss_kb"] / 1024.0, 1), "RSS %s vs %s"
          % (row[9], r["peak_rss_kb"]))
    runs = r["runs"]
    check(len(runs) == REPEATS, "%d runs, %d repeats asked" % (len(runs), REPEATS))
    effective = [run["effective"] for run in runs]
    check(abs(r["effective"] - statistics.median(effective)) < 1e-6, "median")
    check(r["effective_min"] == min(effective) and r["effective_max"] == max(effective),
          "range of %s" % effective)
    check(r["effective_min"] <= r["effective"] <= r["effective_max"], "median in range")
    for run in runs:
        # The definitions, and that the numbers are real measurements.
        check(len(run["ranks"]) == WORLD_SIZE, "ranks measured: %s" % run)
        rates = [k["patches_per_s"] for k in run["ranks"]]
        check(abs(run["slowest"] - min(rates)) < 1e-6, "slowest = min")
        check(abs(run["effective"] - WORLD_SIZE * min(rates)) < 1e-6,
              "effective = slowest x world size")
        check(abs(run["aggregate"] - sum(rates)) < 1e-6, "aggregate = sum")
        for k in run["ranks"]:
            check(k["patches_per_s"] > 0, "rank %d read no patches" % k["rank"])
            # Patches, not buffers: a batch of BATCH_SIZE counts BATCH_SIZE.
            check(abs(k["patches_per_s"] - BATCH_SIZE * k["batches_per_s"])
                  <= 0.01 * k["patches_per_s"],
                  "patches/s %.1f is not %d x batches/s %.1f"
                  % (k["patches_per_s"], BATCH_SIZE, k["batches_per_s"]))
            check(0 < k["batch_p50_ms"] <= k["batch_p95_ms"],
                  "batch time p50 %.2f p95 %.2f" % (k["batch_p50_ms"],
                                                    k["batch_p95_ms"]))
            check(k["peak_rss_kb"] > 0, "peak RSS")


def check_best(stdout, results, best_index):
    best = results[best_index]
    check(best["effective"] == max(r["effective"] for r in results),
          "JSON best is not the fastest")
    line, ranks = best_block(stdout)
    check("threads=%d pool-size=%d " % (best["threads"], best["pool_size"]) in line
          and "%.1f patches/s" % best["effective"] in line
          and "%.1f-%.1f" % (best["effective_min"], best["effective_max"]) in line,
          "best line %r vs %s" % (line, best))
    check(len(ranks) == WORLD_SIZE, "per-rank lines: %s" % ranks)
    check(any(run["ranks"] == best["ranks"] for run in best["runs"]),
              "the rank block comes from one of the runs")
    for printed, k in zip(ranks, best["ranks"]):
        check(int(printed[0]) == k["rank"]
              and close(printed[1], k["patches_per_s"], 1)
              and close(printed[2], k["batch_p50_ms"], 2)
              and close(printed[3], k["batch_p95_ms"], 2)
              and printed[5] == k["verdict"],
              "rank line %s vs %s" % (printed, k))


def check_png(path):
    from PIL import Image
    with Image.open(path) as im:
        check(im.format == "PNG", "%s is not a PNG" % path)
        width, height = im.size
        check(width >= 800 and height >= 400, "PNG is %dx%d" % im.size)
        colours = im.convert("RGB").getcolors(maxcolors=1 << 20) or []
        check(len(colours) > 50, "PNG has %d colours: empty?" % len(colours))


def check_svg(path, want_labels, unwanted_labels):
    """Title, axis labels (one x label per panel), ticks and legend."""
    with open(path) as f:
        svg = f.read()
    for text in ["wsi-bench: world size %d" % WORLD_SIZE, "patch 256 px",
                 "level-0 pixels", "batch %d" % BATCH_SIZE, "slides: slides",
                 "median and min–max of %d runs" % REPEATS,
                 "effective patches/s"] + want_labels:
        check(text in svg, "%s lacks %r" % (path, text))
    for text in unwanted_labels:
        check(text not in svg, "%s has %r: a panel for an unswept setting"
              % (path, text))
    return svg


def check_plots(bench, prefix, results, workdir):
    threads_label = "reader threads (patchreader threads)"
    pool_label = "slide pool size (patchinterleave pool-size)"
    check_png(prefix + ".png")
    svg = check_svg(prefix + ".svg", [threads_label, pool_label], [])
    # Legends name the other setting's values: "pool 2" in the threads panel,
    # "threads 1" in the pool panel.
    for text in ["pool %d" % p for p in POOLS] + ["threads %d" % t for t in THREADS]:
        check(">%s<" % text in svg, "legend entry %r missing" % text)
    # A sweep over pool size alone: its own x axis, not threads.
    with open(prefix + ".json") as f:
        data = json.load(f)
    data["results"] = [r for r in results if r["threads"] == THREADS[0]]
    pool_json = os.path.join(workdir, "pool-only.json")
    with open(pool_json, "w") as f:
        json.dump(data, f)
    pool_dir = os.path.join(workdir, "pool-only")
    pool_prefix = os.path.join(pool_dir, "wsi-bench")
    proc = subprocess.run([sys.executable, bench, "--replot", pool_json,
                           "--out", pool_dir], capture_output=True, text=True)
    check(proc.returncode == 0, "--replot failed: %s" % proc.stderr)
    check_png(pool_prefix + ".png")
    check_svg(pool_prefix + ".svg", [pool_label, "threads %d" % THREADS[0]],
              [threads_label])


def check_refusals(bench, slides):
    for args, says in ((["--repeats", "0", "--slides", slides], "--repeats"),
                       (["--threads", "0", "--slides", slides], "--threads"),
                       ([], "--slides"),
                       (["--slides", slides + "-missing"], "no such file")):
        proc = subprocess.run([sys.executable, bench] + args,
                              capture_output=True, text=True, timeout=60)
        check(proc.returncode != 0 and says in proc.stderr,
              "%s: exit %d, %r" % (args, proc.returncode, proc.stderr))


def main(argv):
    bench, generator, workdir = argv[1:4]
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    slides = make_slides(generator, workdir)
    check_refusals(bench, slides)
    # --out names a folder, made when absent (here two levels of it)
    out_dir = os.path.join(workdir, "results", "sweep")
    stdout = run_sweep(bench, slides, out_dir)
    prefix = os.path.join(out_dir, "wsi-bench")
    check(sorted(os.listdir(out_dir)) == ["wsi-bench." + e for e in ("csv", "json", "png", "svg")],
          "--out %s holds %s" % (out_dir, os.listdir(out_dir)))
    check("wrote %s.json" % prefix in stdout, "the closing line names the files in the folder")
    not_a_folder = os.path.join(workdir, "a-file")
    open(not_a_folder, "w").close()
    proc = subprocess.run([sys.executable, bench, "--slides", slides, "--out", not_a_folder],
                          capture_output=True, text=True, timeout=60)
    check(proc.returncode != 0 and "not a folder" in proc.stderr,
          "--out on a file: exit %d, %r" % (proc.returncode, proc.stderr))

    with open(prefix + ".json") as f:
        report = json.load(f)
    results = report["results"]
    check(report["world_size"] == WORLD_SIZE and report["repeats"] == REPEATS,
          "JSON world_size, repeats")
    check([(r["pool_size"], r["threads"]) for r in results]
          == [(p, t) for p in POOLS for t in THREADS],
          "one result per configuration, in order: %s" % results)
    rows = table_rows(stdout)
    check(len(rows) == len(results), "table has %d rows, JSON %d results"
          % (len(rows), len(results)))
    for row, r in zip(rows, results):
        check_result(row, r)
    check_best(stdout, results, report["best"])

    with open(prefix + ".csv") as f:
        csv_rows = list(csv.DictReader(f))
    check(len(csv_rows) == len(results), "CSV rows")
    for c, r in zip(csv_rows, results):
        check(abs(float(c["effective"]) - r["effective"]) < 1e-6, "CSV")
        check(len(c["runs"].split()) == REPEATS, "CSV runs")
    check_plots(bench, prefix, results, workdir)

    shutil.rmtree(workdir, ignore_errors=True)
    print("wsi-bench: table, JSON, CSV and plots agree on %d configurations "
          "x %d repeats" % (len(results), REPEATS))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
