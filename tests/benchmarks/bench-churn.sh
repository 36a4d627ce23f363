#!/usr/bin/env bash
# bench-churn: slide churn (issue 23). Foundation-model runs sample few
# patches from each of very many slides, so every slide visit pays its
# open, overview read and tissue mask. This runs bench-pipeline --steady
# (cycling pipeline, pool 8, batches of 64, 0.5 um/px, 256 px patches) on
# N distinct slides x 16 patches per visit, for each N given (default 8,
# 100 and 1000), at 2 reader threads: the N slides are symbolic links to 8
# generated 0.25 um/px slides (distinct paths, so each is opened and masked
# as a new slide). It prints bench-pipeline's lines per N: patches/s, batch
# time p50/p95/max and the peak RSS.
#
#   meson devenv -C build -w . tests/benchmarks/bench-churn.sh [N ...]
# Environment: BUILD (build folder, default build), BATCHES (measured,
# default 100), WARMUP (default 20), THREADS (default 2).
set -euo pipefail
build="${BUILD:-build}"
batches="${BATCHES:-100}"
warmup="${WARMUP:-20}"
threads="${THREADS:-2}"
if [ "$#" -gt 0 ]; then counts=("$@"); else counts=(8 100 1000); fi

work="$(mktemp -d -t bench-churn-XXXXXX)"
trap 'rm -rf "$work"' EXIT

"$build/tools/wsi-make-test-slides" --count 8 --width 8192 --height 6144 \
  --levels 3 --layout aperio --tile 240 --mpp 0.25 --seed 100 --jobs 2 \
  "$work/slides" > /dev/null
mapfile -t originals < <(ls "$work/slides"/*.svs | sort)
[ "${#originals[@]}" -eq 8 ] || { echo "expected 8 slides" >&2; exit 2; }

for n in "${counts[@]}"; do
  dir="$work/n$n"
  mkdir "$dir"
  for ((i = 0; i < n; i++)); do
    ln -s "${originals[i % 8]}" "$(printf '%s/s%05d.svs' "$dir" "$i")"
  done
  echo "== N = $n distinct slides, 16 patches per visit, $threads threads" \
    "(load: $(cut -d' ' -f1-3 /proc/loadavg))"
  "$build/tests/benchmarks/bench-pipeline" --steady --location "$dir" \
    --threads "$threads" --target-mpp 0.5 --patches-per-slide 16 \
    --pool-size 8 --warmup "$warmup" \
    --batches "$batches"
done
