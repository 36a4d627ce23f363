#!/usr/bin/env bash
# The DINOv2 multi-crop preset end to end against the Python peer's
# equivalent, same slides, alternating ROUNDS times. Both: random 256 px
# level-0 patches on tissue (Otsu), pool 8, 4 patches per visit, 2 global
# 224 px crops (scale 0.32-1) + 8 local 96 px crops (0.05-0.32), each view
# flipped/rotated (p 0.5 each) and HED-jittered (sigma 0.05), batches of 64
# locations into torch. gst-wsi: 2 threads per pool stage; the peer: a torch
# DataLoader with 2 workers (peer-dinov2.py). Prints locations/s and peak RSS.
#
#   WSISTREAM_SRC=/scratch/wsistream/src meson devenv -C build -w . \
#       tests/benchmarks/bench-dinov2.sh SLIDES [ROUNDS]
set -euo pipefail
slides="${1:?slide directory}"
rounds="${2:-3}"
batches="${MEASURE_BATCHES:-40}"
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

ours() {
  /usr/bin/time -v /usr/bin/python3 - "$slides" "$batches" <<'PY' 2> "$out/time.txt"
import os, sys, time
sys.path.insert(0, os.path.join(os.getcwd(), "python"))
import gstwsi
slides, measure = sys.argv[1], int(sys.argv[2])
desc = (f'wsislidesrc location="{slides}" cycle=true seed=42 ! tissuemask ! queue ! '
        'patchsampler patch-size=256 target-mpp=0.25 ! '
        'patchinterleave pool-size=8 patches-per-visit=4 ! patchreader threads=2 ! '
        'patchviews preset=dinov2 seed=42 threads=2 ! '
        'patchaugment flip-h=0.5 flip-v=0.5 rotate90=0.5 hed-probability=1 hed-sigma=0.05 '
        'seed=42 threads=2 ! queue max-size-buffers=128 max-size-bytes=0 max-size-time=0 ! '
        'patchbatch batch-size=64 ! appsink name=sink sync=false max-buffers=2')
warmup, n, locations = 5, 0, 0
with gstwsi.BatchStream(desc, torch=True) as stream:
    for batch in stream:
        n += 1
        if n == warmup:
            start = time.monotonic()
        elif n > warmup:
            locations += len(batch)
        if n == warmup + measure:
            break
print(f"{locations / (time.monotonic() - start):.1f}")
PY
}

peer() {
  /usr/bin/time -v /usr/bin/python3 "$here/peer-dinov2.py" --slides "$slides" \
    --workers 2 --batches "$batches" > "$out/peer.json" 2> "$out/time.txt"
  /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['locations_per_s'])" "$out/peer.json"
}

rss_mb() {
  awk '/Maximum resident set size/ {printf "%.0f", $NF / 1024}' "$out/time.txt"
}

for r in $(seq 1 "$rounds"); do
  p=$(ours); m=$(rss_mb); echo "round $r gst-wsi   $p locations/s  peak RSS $m MB"
  echo "ours $p $m" >> "$out/results"
  p=$(peer); m=$(rss_mb); echo "round $r wsistream $p locations/s  peak RSS $m MB"
  echo "peer $p $m" >> "$out/results"
done
/usr/bin/python3 - "$out/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {w: statistics.median(float(r[1]) for r in rows if r[0] == w) for w in ("ours", "peer")}
rss = {w: statistics.median(float(r[2]) for r in rows if r[0] == w) for w in ("ours", "peer")}
print(f"median gst-wsi {med['ours']:.1f} locations/s, wsistream {med['peer']:.1f}: "
      f"{med['ours'] / med['peer']:.2f}x; peak RSS {rss['ours']:.0f} vs {rss['peer']:.0f} MB "
      f"({rss['ours'] / rss['peer']:.2f}x)")
PY
