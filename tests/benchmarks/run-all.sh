#!/usr/bin/env bash
# Every benchmark of docs/benchmarks.md once, one after another, on a quiet
# machine (nothing else running: the figures are only comparable within one
# run of this script). Each benchmark's full output goes to OUT/NAME.txt and
# its last lines (the ratios against the goals) to the terminal. About 25
# minutes on 2 idle cores; WSISTREAM_SRC (the Python peer's src/, see
# ../shared/peers/README.md) adds the peer comparison, SQUEEZE=1 the store
# served under memory pressure (machines without swap only).
#
#   tests/benchmarks/run-all.sh [OUT (bench-out)] [NAME ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${1:-bench-out}"; shift || true
mkdir -p "$out"
dev=(meson devenv -C build -w .)

run() { # NAME COMMAND...
  local name="$1"; shift
  if [ -n "${only:-}" ] && [[ " $only " != *" $name "* ]]; then return; fi
  echo "== $name ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))"
  local start=$SECONDS
  "$@" > "$out/$name.txt" 2>&1
  echo "   rc=$? in $((SECONDS - start)) s; tail:"
  tail -n "${TAIL:-12}" "$out/$name.txt" | sed 's/^/   /'
}
only="$*"

[ -d sample-slides ] || build/tools/wsi-make-test-slides sample-slides > /dev/null
run pipeline "${dev[@]}" build/tests/benchmarks/bench-pipeline \
  --location sample-slides --target-mpp 0 --patches-per-slide 400 --repeats 3
run backends build/tests/benchmarks/bench-backends --rounds 3 --patches 300 \
  --threads 1 --slides 4 --cases 40x-0.5,40x-1.0,20x-0.5 \
  --contenders bare-os,tiff,libjpeg
run churn "${dev[@]}" tests/benchmarks/bench-churn.sh
run mask-store "${dev[@]}" tests/benchmarks/bench-mask-store.sh
run slide-cost tests/benchmarks/bench-slide-cost.sh
run slide-prep tests/benchmarks/bench-slide-prep.sh
run remote "${dev[@]}" /usr/bin/python3 tests/benchmarks/bench-remote.py
run ome "${dev[@]}" /usr/bin/python3 tests/benchmarks/bench-ome.py --rounds 3
run store "${dev[@]}" build/tests/benchmarks/bench-store
run store-rss "${dev[@]}" tests/benchmarks/store-rss.sh 4096
run dicom tests/benchmarks/bench-dicom.sh
run dicom-instructions tests/benchmarks/bench-dicom-instructions.sh
run delivery-tally build/tests/benchmarks/bench-delivery-tally
if [ -n "${WSISTREAM_SRC:-}" ]; then
  run peer env MEASURE_BATCHES=60 "${dev[@]}" tests/benchmarks/bench-vs-peer.sh \
    sample-slides 2
else
  echo "== peer: skipped (WSISTREAM_SRC is not set; see ../shared/peers/README.md)"
fi
