#!/usr/bin/env bash
# Instructions, not seconds: the DICOM series of bench-dicom.sh against the
# TIFF slides they were made from, each read by the same steady stream
# (bench-pipeline --steady, 1 reader thread, WARMUP + BATCHES batches of 64)
# under callgrind, both sides at once (one core each). Prints the program's
# instructions for each side and DICOM / TIFF, and the instructions a tile
# decode costs (the backend's WsiTileDecodeFunc, inclusive, per call) with
# DICOM's excess over the TIFF's. Callgrind counts user-space instructions
# only, so other load on the machine does not move the figures (the system
# time of pread() and thread wake-ups is not in them; bench-dicom.sh times
# the whole process). About 2 minutes on 2 idle cores.
#
#   tests/benchmarks/bench-dicom-instructions.sh [WORK_DIR]   (from the source root)
set -euo pipefail
build="${BUILD_DIR:-build}"
# callgrind present, and the plugins of this build: its developer environment.
. "$(dirname "$0")/callgrind-devenv.sh"
callgrind_in_devenv "$build" "$0" "$@"
if [ -n "${1:-}" ]; then
  work="$1"
else   # a folder of our own: removed at exit (slides and callgrind files, ~30 MB)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
warmup="${WARMUP:-5}"
batches="${BATCHES:-30}"
# The slides of bench-dicom.sh (same command, same seeds).
. "$(dirname "$0")/dicom-bench-slides.sh"
make_dicom_bench_slides "$build" "$work"

profile() {   # profile SIDE: callgrind output in $work/callgrind.SIDE
  valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.$1" \
    "$build/tests/benchmarks/bench-pipeline" --steady --location "$work/$1" \
    --threads 1 --warmup "$warmup" --batches "$batches" >"$work/callgrind.$1.log" 2>&1
}
profile tiff & tiff_pid=$!
profile dicom & dicom_pid=$!
wait "$tiff_pid"; wait "$dicom_pid"

total() {   # total SIDE -> the program's instructions
  callgrind_annotate "$work/callgrind.$1" 2>/dev/null \
    | awk '/PROGRAM TOTALS/ && !seen { gsub(",", "", $1); print $1; seen = 1 }'
}

per_decode() {   # per_decode SIDE FUNCTION -> "instructions calls"
  callgrind_annotate --tree=calling --inclusive=yes "$work/callgrind.$1" 2>/dev/null \
    | awk -v f="$2" '$0 ~ ("=> .*:" f " \\(") { gsub(",", "", $1);
                        n = $0; sub(/.*\(/, "", n); sub(/x\).*/, "", n); gsub(",", "", n);
                        ir += $1; calls += n }
                      END { print ir, calls }'
}

tt=$(total tiff); td=$(total dicom)
read -r dt ct <<<"$(per_decode tiff tiff_decode_tile)"
read -r dd cd <<<"$(per_decode dicom dicom_decode_tile)"
awk -v tt="$tt" -v td="$td" -v dt="$dt" -v ct="$ct" -v dd="$dd" -v cd="$cd" 'BEGIN {
  printf "program instructions, %s warm-up + %s measured batches, 1 thread: tiff %.0f, dicom %.0f (dicom/tiff %.4f)\n",
         "'"$warmup"'", "'"$batches"'", tt, td, td / tt
  if (ct > 0 && cd > 0)
    printf "tile decode: tiff %.0f instructions/tile (%d tiles), dicom %.0f (%d tiles): dicom/tiff %.4f, DICOM excess %.0f instructions/tile\n",
           dt / ct, ct, dd / cd, cd, (dd / cd) / (dt / ct), dd / cd - dt / ct
  else
    print "tile decode: no per-call figures (callgrind_annotate found no decode calls)"
}'
echo "goal (issue 20): DICOM >= 0.90 x TIFF patches/s; by instructions DICOM costs" \
  "$(awk -v a="$td" -v b="$tt" 'BEGIN { printf "%.2f %%", (a / b - 1) * 100 }') more than TIFF"
