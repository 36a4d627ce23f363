#!/usr/bin/env bash
# bench-read-ahead: is patchreader's automatic read-ahead for local slides
# deep enough (issue 26)? It is the pool's default: 4 patches per reader
# thread, at least 8 (a slide at a URL gets up to 256). A loaded-machine
# run of bench-remote once saw local disk at 622 patches/s with it and
# 1,321 with read-ahead=256.
#
# This runs bench-pipeline --steady (the README's pipeline cycling over 4
# generated 16384x12288 slides, 80 MB of JPEG tiles: more than the 64 MiB
# tile cache holds; 256 px patches, batches of 64, 2 reader threads) with
# patchreader read-ahead=0 (automatic: 8 queued for 2 threads), 16, 32 and
# 256, alternating, ROUNDS times, each run its own process. It prints every
# run's line, then per setting the median patches/s and peak RSS and the
# ratio against the first setting in the same rounds, then a verdict line
# for EACH other depth against the rule of docs/benchmarks.md (> 1.05x the
# automatic rate at < 1.10x its peak RSS: the case for a deeper default)
# and which depth, if any, would be the better default (the fastest of
# those that meet it); read-ahead-verdict.py does the arithmetic, and
# tests/benchmarks/test-read-ahead-verdict.py tests it on known tables.
#
#   meson devenv -C build -w . tests/benchmarks/bench-read-ahead.sh
# Environment: BUILD (default build), ROUNDS (default 3), DEPTHS (default
# "0 16 32 256"; the first is the baseline), THREADS (default 2), BATCHES
# (default 100), WARMUP (default 20), LOAD (busy loops run beside the
# benchmark, default 0; on a quiet machine LOAD=4 gives the loaded case
# the question is about).
set -euo pipefail
build="${BUILD:-build}"
rounds="${ROUNDS:-3}"
read -r -a depths <<< "${DEPTHS:-0 16 32 256}"
threads="${THREADS:-2}"
batches="${BATCHES:-100}"
warmup="${WARMUP:-20}"
load="${LOAD:-0}"

work="$(mktemp -d -t bench-read-ahead-XXXXXX)"
hogs=()
cleanup() {
  local pid
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

"$build/tools/wsi-make-test-slides" --count 4 --jobs 2 "$work/slides" \
  > /dev/null

for ((i = 0; i < load; i++)); do
  ( while :; do :; done ) &
  hogs+=("$!")
done

# one run: "depth patches/s rss" appended to $work/table
run_one() {
  local depth="$1" line rate rss
  line="$("$build/tests/benchmarks/bench-pipeline" --steady \
    --location "$work/slides" --threads "$threads" --read-ahead "$depth" \
    --batches "$batches" --warmup "$warmup" | tail -1)"
  echo "read-ahead=$depth: $line"
  rate="$(sed -n 's/.* warm-up: \([0-9.]*\) patches\/s.*/\1/p' <<< "$line")"
  rss="$(sed -n 's/.*peak RSS \([0-9.]*\) MiB.*/\1/p' <<< "$line")"
  [ -n "$rate" ] && [ -n "$rss" ] || { echo "no figures in: $line" >&2; exit 1; }
  echo "$depth $rate $rss" >> "$work/table"
}

echo "bench-read-ahead: ${rounds} rounds, read-ahead ${depths[*]}," \
  "threads=$threads, $load busy loops beside, load average now" \
  "$(cut -d' ' -f1 /proc/loadavg)"
for ((r = 1; r <= rounds; r++)); do
  for depth in "${depths[@]}"; do run_one "$depth"; done
done

/usr/bin/python3 "$(dirname "$0")/read-ahead-verdict.py" "$work/table" "${depths[0]}"
