#!/usr/bin/python3
# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Self-check of wsi-bench: a short world-size-2 sweep on generated slides.

  test-wsi-bench.py WSI_BENCH WSI_MAKE_TEST_SLIDES WORKDIR

Runs the real default pipeline (every element, the wsistats tracer) and
checks that the printed table, the best-configuration block, the JSON and the
CSV say the same thing, and that the numbers are the pipeline's: patches
counted from the batches' WsiPatchMeta, both ranks measured. Exit 0 or 1.
"""

import csv
import json
import os
import shutil
import subprocess
import sys

WORLD_SIZE = 2
THREADS = [1, 2]
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


def run_sweep(bench, slides, prefix):
    cmd = [sys.executable, bench, "--world-size", str(WORLD_SIZE),
           "--threads", ",".join(str(t) for t in THREADS),
           "--pool-size", "2", "--patches-per-slide", "32",
           "--patches-per-visit", "4", "--batch-size", str(BATCH_SIZE),
           "--warmup", "2", "--batches", "6", "--timeout", "120",
           "--slides", slides, "--out", prefix]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=170)
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


def main(argv):
    bench, generator, workdir = argv[1:4]
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    slides = make_slides(generator, workdir)
    prefix = os.path.join(workdir, "sweep")
    stdout = run_sweep(bench, slides, prefix)

    with open(prefix + ".json") as f:
        report = json.load(f)
    results = report["results"]
    check(report["world_size"] == WORLD_SIZE, "JSON world_size")
    check([r["threads"] for r in results] == THREADS,
          "one result per thread count, in order: %s" % results)

    rows = table_rows(stdout)
    check(len(rows) == len(results), "table has %d rows, JSON %d results"
          % (len(rows), len(results)))
    for row, r in zip(rows, results):
        check(int(row[0]) == r["threads"] and int(row[1]) == r["pool_size"]
              and int(row[2]) == r["patches_per_slide"]
              and int(row[3]) == r["patches_per_visit"],
              "table row %s names another configuration than %s" % (row, r))
        check(close(row[4], r["effective"], 1), "effective %s vs %s"
              % (row[4], r["effective"]))
        check(close(row[5], r["aggregate"], 1), "aggregate %s vs %s"
              % (row[5], r["aggregate"]))
        check(close(row[6], r["slowest"], 1), "slowest %s vs %s"
              % (row[6], r["slowest"]))
        check(close(row[7], r["peak_rss_kb"] / 1024.0, 1), "RSS %s vs %s"
              % (row[7], r["peak_rss_kb"]))
        # The definitions, and that the numbers are real measurements.
        check(len(r["ranks"]) == WORLD_SIZE, "ranks measured: %s" % r)
        rates = [k["patches_per_s"] for k in r["ranks"]]
        check(abs(r["slowest"] - min(rates)) < 1e-6, "slowest = min")
        check(abs(r["effective"] - WORLD_SIZE * min(rates)) < 1e-6,
              "effective = slowest x world size")
        check(abs(r["aggregate"] - sum(rates)) < 1e-6, "aggregate = sum")
        for k in r["ranks"]:
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

    best = results[report["best"]]
    check(best["effective"] == max(r["effective"] for r in results),
          "JSON best is not the fastest")
    line, ranks = best_block(stdout)
    check("threads=%d " % best["threads"] in line
          and "%.1f patches/s" % best["effective"] in line,
          "best line %r vs %s" % (line, best))
    check(len(ranks) == WORLD_SIZE, "per-rank lines: %s" % ranks)
    for printed, k in zip(ranks, best["ranks"]):
        check(int(printed[0]) == k["rank"]
              and close(printed[1], k["patches_per_s"], 1)
              and close(printed[2], k["batch_p50_ms"], 2)
              and close(printed[3], k["batch_p95_ms"], 2)
              and printed[5] == k["verdict"],
              "rank line %s vs %s" % (printed, k))

    with open(prefix + ".csv") as f:
        csv_rows = list(csv.DictReader(f))
    check(len(csv_rows) == len(results), "CSV rows")
    for c, r in zip(csv_rows, results):
        check(abs(float(c["effective"]) - r["effective"]) < 1e-6, "CSV")
    with open(prefix + ".svg") as f:
        check(f.read().count("<circle") == len(results), "SVG points")

    shutil.rmtree(workdir, ignore_errors=True)
    print("wsi-bench: table, JSON, CSV and SVG agree on %d configurations"
          % len(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
