#!/usr/bin/env bash
# DICOM series against the TIFF slides they were made from: the same steady
# cycling stream (bench-pipeline --steady: random 256 px level-0 patches on
# tissue, pool 8, 4 per visit, batches of 64) read from the TIFF folder and
# from its DICOM copy (wsi-make-test-dicom: JPEG tiles copied unchanged, a
# Basic Offset Table, a thumbnail instance), alternating ROUNDS times for 1
# and 2 reader threads. Prints every run and the medians of patches/s and
# of CPU time per patch (user + system of the process: less sensitive to
# other load on a shared machine), with DICOM / TIFF, and the issue's goal:
# DICOM >= 90 % of the TIFF rate at 1 and 2 threads. About 3 minutes on 2
# idle cores with the defaults.
#
#   tests/benchmarks/bench-dicom.sh [WORK_DIR] [ROUNDS]     (from the source root)
set -euo pipefail
build="${BUILD_DIR:-build}"
# The plugins of this build: run inside its developer environment.
if [ -z "${MESON_DEVENV:-}" ]; then
  exec meson devenv -C "$build" -w "$PWD" "$0" "$@"
fi
work="${1:-$(mktemp -d)}"
rounds="${2:-3}"
warmup="${WARMUP:-20}"
batches="${BATCHES:-60}"
. "$(dirname "$0")/dicom-bench-slides.sh"
make_dicom_bench_slides "$build" "$work"

run() {   # run LOCATION THREADS -> "patches/s CPU-us/patch"
  "$build/tests/benchmarks/bench-pipeline" --steady --location "$1" --threads "$2" \
    --warmup "$warmup" --batches "$batches" 2>/dev/null \
    | awk '/patches\/s/ { for (i = 1; i <= NF; i++) { if ($i == "patches/s,") r = $(i - 1);
                                                    if ($i == "us/patch,") c = $(i - 1) }
                          print r, c }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

: > "$work/goal"
for threads in 1 2; do
  : > "$work/tiff-$threads" ; : > "$work/dicom-$threads"
  for r in $(seq 1 "$rounds"); do
    a=$(run "$work/tiff" "$threads"); b=$(run "$work/dicom" "$threads")
    echo "threads $threads round $r: tiff ${a% *} patches/s ${a#* } CPU us/patch," \
      "dicom ${b% *} patches/s ${b#* } CPU us/patch"
    echo "$a" >> "$work/tiff-$threads"; echo "$b" >> "$work/dicom-$threads"
  done
  mt=$(cut -d' ' -f1 "$work/tiff-$threads" | median)
  md=$(cut -d' ' -f1 "$work/dicom-$threads" | median)
  ct=$(cut -d' ' -f2 "$work/tiff-$threads" | median)
  cd=$(cut -d' ' -f2 "$work/dicom-$threads" | median)
  echo "threads $threads median: tiff $mt, dicom $md patches/s (dicom/tiff $(ratio "$md" "$mt"));" \
    "CPU tiff $ct, dicom $cd us/patch (dicom/tiff $(ratio "$cd" "$ct"))"
  echo "$threads $(ratio "$md" "$mt")" >> "$work/goal"
done
# The goal: the DICOM rate at least 90 % of the TIFF's, at each thread count.
awk '{ printf "goal DICOM >= 0.90 x TIFF patches/s, threads %s: %s (%s)\n", $1, $2,
       ($2 >= 0.90) ? "met" : "NOT met" }' "$work/goal"
rm -f "$work/goal"
