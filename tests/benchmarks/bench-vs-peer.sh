#!/usr/bin/env bash
# gst-wsi against the Python peer (RamonKaspar/wsistream), same slides, same
# sampling (256 px patches at the slides' level-0 resolution, pool 8, 4 patches
# per visit, batches of 64 into torch tensors in a Python loop), alternating
# ROUNDS times so that load from elsewhere hits both alike. Prints patches/s
# and peak RSS (/usr/bin/time -v) of every run, then the medians and ratios.
#
#   WSISTREAM_SRC=/scratch/wsistream/src meson devenv -C build -w . \
#       tests/benchmarks/bench-vs-peer.sh SLIDES [ROUNDS]
#
# The peer runs its own benchmark_throughput (shared/peers/wsistream_bench.py)
# in its fastest configuration on 2 cores: 2 DataLoader workers, tissue-mask
# cache on (BENCH_MASK_CACHE=64). gst-wsi runs gstwsi.BatchStream with 2
# reader threads.
set -euo pipefail
slides="${1:?slide directory}"
rounds="${2:-3}"
runner="${PEER_RUNNER:-$(dirname "$0")/../../../shared/peers/wsistream_bench.py}"
measure="${MEASURE_BATCHES:-60}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

ours() {
  /usr/bin/time -v /usr/bin/python3 - "$slides" "$measure" <<'EOF' 2> "$out/time.txt"
import os, sys, time
sys.path.insert(0, os.path.join(os.getcwd(), "python"))
import gstwsi
slides, measure = sys.argv[1], int(sys.argv[2])
desc = gstwsi.standard_pipeline(slides, batch_size=64, patch_size=256, target_mpp=0.25,
                                threads=2, pool_size=8, patches_per_visit=4,
                                patches_per_slide=100, cycle=True, seed=42)
warmup, n, patches = 10, 0, 0
with gstwsi.BatchStream(desc, torch=True) as stream:
    for batch in stream:
        n += 1
        if n == warmup:
            start = time.monotonic()
        elif n > warmup:
            patches += len(batch)
        if n == warmup + measure:
            break
print(f"{patches / (time.monotonic() - start):.1f}")
EOF
}

peer() {
  BENCH_MASK_CACHE=64 /usr/bin/time -v /usr/bin/python3 "$runner" sweep \
    --slides "$slides" --num-workers 2 --pool-size 8 --ppv 4 --batch 64 \
    --measure "$measure" --json "$out/peer.jsonl" > "$out/peer.txt" \
    2> "$out/time.txt"
  /usr/bin/python3 -c "import json,sys; print(round(json.loads(open(sys.argv[1]).readlines()[-1])['patches_per_sec'],1))" "$out/peer.jsonl"
}

rss_mb() {
  awk '/Maximum resident set size/ {printf "%.0f", $NF / 1024}' "$out/time.txt"
}

: > "$out/results"
for r in $(seq 1 "$rounds"); do
  p=$(ours); m=$(rss_mb); echo "round $r gst-wsi  $p patches/s  peak RSS $m MB"
  echo "ours $p $m" >> "$out/results"
  p=$(peer); m=$(rss_mb); echo "round $r wsistream $p patches/s  peak RSS $m MB"
  echo "peer $p $m" >> "$out/results"
done
/usr/bin/python3 - "$out/results" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {k: (statistics.median(float(r[1]) for r in rows if r[0] == k),
           statistics.median(float(r[2]) for r in rows if r[0] == k)) for k in ("ours", "peer")}
print(f"median gst-wsi {med['ours'][0]:.0f} patches/s, {med['ours'][1]:.0f} MB; "
      f"wsistream {med['peer'][0]:.0f} patches/s, {med['peer'][1]:.0f} MB; "
      f"speed {med['ours'][0] / med['peer'][0]:.2f}x, memory {med['ours'][1] / med['peer'][1]:.2f}x")
EOF
