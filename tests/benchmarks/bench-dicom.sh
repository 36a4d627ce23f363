#!/usr/bin/env bash
# DICOM series against the TIFF slides they were made from: the same steady
# cycling stream (bench-pipeline --steady: random 256 px level-0 patches on
# tissue, pool 8, 4 per visit, batches of 64) read from the TIFF folder and
# from its DICOM copy (wsi-make-test-dicom: JPEG tiles copied unchanged, a
# Basic Offset Table, a thumbnail instance), alternating ROUNDS times for 1
# and 2 reader threads. Prints every run and the median patches/s of each,
# with DICOM / TIFF.
#
#   meson devenv -C build -w . tests/benchmarks/bench-dicom.sh [WORK_DIR] [ROUNDS]
set -euo pipefail
work="${1:-$(mktemp -d)}"
rounds="${2:-3}"
warmup="${WARMUP:-20}"
batches="${BATCHES:-60}"
build="${BUILD_DIR:-build}"
mkdir -p "$work/tiff" "$work/dicom"

if [ -z "$(ls "$work/tiff")" ]; then
  "$build/tools/wsi-make-test-slides" -n 2 -W 8192 -H 6144 -l 3 --layout generic \
    -m 0.25 "$work/tiff" >/dev/null
  for t in "$work"/tiff/*.tiff; do
    name=$(basename "$t" .tiff)
    "$build/tools/wsi-make-test-dicom" "$t" "$work/dicom" --prefix "$name" \
      --mpp 0.25 --thumbnail --seed "${name//[!0-9]/}" >/dev/null
  done
fi

run() {   # run LOCATION THREADS -> patches/s
  "$build/tests/benchmarks/bench-pipeline" --steady --location "$1" --threads "$2" \
    --warmup "$warmup" --batches "$batches" 2>/dev/null \
    | awk '/patches\/s/ { for (i = 1; i <= NF; i++) if ($i == "patches/s,") print $(i - 1) }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for threads in 1 2; do
  : > "$work/tiff-$threads" ; : > "$work/dicom-$threads"
  for r in $(seq 1 "$rounds"); do
    a=$(run "$work/tiff" "$threads"); b=$(run "$work/dicom" "$threads")
    echo "threads $threads round $r: tiff $a patches/s, dicom $b patches/s"
    echo "$a" >> "$work/tiff-$threads"; echo "$b" >> "$work/dicom-$threads"
  done
  mt=$(median < "$work/tiff-$threads"); md=$(median < "$work/dicom-$threads")
  echo "threads $threads median: tiff $mt, dicom $md patches/s, dicom/tiff $(awk -v a="$md" -v b="$mt" 'BEGIN { printf "%.2f", a / b }')"
done
