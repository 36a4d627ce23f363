#!/usr/bin/env bash
# bench-mask-store: tissuemask's disk cache (mask-cache-dir, issue 23) on
# slide churn. A run after the first one finds every slide's mask on disk,
# so a new process's first epoch over N distinct slides reads no overview
# and computes no mask. Three bench-pipeline --steady runs in one go, same
# settings as bench-churn (pool 8, 16 patches per visit, 0.5 um/px, 256 px
# patches, 2 reader threads, wsislidesrc's default prepare-ahead):
#   ref   N = 8 distinct slides cycled (every slide revisited: the churn
#         goal's reference rate);
#   cold  N slides with an EMPTY mask-cache-dir (as the first run);
#   warm  the same N slides, a new process, the folder the cold run filled.
# The cold and warm runs are split at the end of their first pass over the
# N slides (--first-pass-batches): the first pass is where a new process
# pays each slide's preparation. Printed: each run's lines, the first-pass
# rates, masks computed and overviews read, and the ratios warm / cold and
# warm / ref (goal: the N-slide rate >= 90 % of the 8-slide one). The
# slides are symbolic links to 8 generated slides, as in bench-churn.
#
#   meson devenv -C build -w . tests/benchmarks/bench-mask-store.sh [N]
# N: distinct slides (default 1000). Environment: BUILD (default build),
# THREADS (default 2), BATCHES (the ref run's measured batches and the
# fewest after the first pass, default 60), TILE_CACHE (patchreader
# tile-cache-size in MiB for all three runs; 0 takes the 8-slide
# reference's tile reuse out of the comparison; default: the element's).
# About 2 minutes on 2 idle cores (2 min 0 s on a busy one, load 5).
set -euo pipefail
. "$(dirname "$0")/churn-slides.sh"
build="${BUILD:-build}"
threads="${THREADS:-2}"
batches="${BATCHES:-60}"
n="${1:-1000}"
tile=()
if [ -n "${TILE_CACHE:-}" ]; then tile=(--tile-cache-mb "$TILE_CACHE"); fi

work="$(mktemp -d -t bench-mask-store-XXXXXX)"
trap 'rm -rf "$work"' EXIT

churn_make_slides "$build" "$work"
churn_link_slides "$work/n8" 8
churn_link_slides "$work/n$n" "$n"

# bench-pipeline --steady over $1 slides with extra options; prints its
# lines and leaves them in $work/$2.
run() {
  local count="$1" name="$2" out
  shift 2
  out="$("$build/tests/benchmarks/bench-pipeline" --steady \
    --location "$work/n$count" --threads "$threads" --target-mpp 0.5 \
    --patches-per-slide 16 --pool-size 8 "${tile[@]}" "$@" 2>&1)" || {
    echo "$out" >&2; exit 1; }
  grep -E '^([0-9]+ batches after|first pass|later passes|mask cache|mask disk cache)' \
    <<< "$out" | sed "s/^/  $name: /"
  echo "$out" > "$work/$name"
}

first=$(( (n * 16 + 63) / 64 ))
if [ "$first" -lt 16 ]; then
  echo "N = $n is too small to split its first pass (use N >= 64)" >&2
  exit 2
fi
split=(--warmup 4 --batches $(( first - 4 + (first > batches ? first : batches) ))
  --first-pass-batches "$first")

echo "== load: $(cut -d' ' -f1-3 /proc/loadavg)"
run 8 ref --warmup 20 --batches "$batches"
run "$n" cold --mask-cache-dir "$work/masks" "${split[@]}"
echo "   $(ls "$work/masks" | wc -l) mask files, $(du -sk "$work/masks" | cut -f1) KiB"
run "$n" warm --mask-cache-dir "$work/masks" "${split[@]}"

rate() { sed -nE "s/^$2.*: ([0-9.]+) patches\/s.*/\1/p" "$work/$1" | head -1; }
counts() { sed -nE "s/^$2.* ([0-9]+) overviews read, ([0-9]+) masks computed.*/\1 overviews read, \2 masks computed/p" "$work/$1" | head -1; }
cpu() { sed -nE "s/^$2.*CPU ([0-9.]+) us\/patch.*/\1/p" "$work/$1" | head -1; }
ref="$(rate ref '[0-9]+ batches after')"
revisit="$(rate cold 'later passes')"
cold="$(rate cold 'first pass')"
warm="$(rate warm 'first pass')"
echo
echo "== summary, N = $n distinct slides, first pass of a new process" \
  "(busy machine: compare ratios only)"
echo "cold (empty mask-cache-dir): $cold patches/s, $(cpu cold 'first pass') us CPU/patch; $(counts cold 'first pass')"
echo "warm (filled mask-cache-dir): $warm patches/s, $(cpu warm 'first pass') us CPU/patch; $(counts warm 'first pass')"
echo "revisits in the cold run (masks in memory): $revisit patches/s, $(cpu cold 'later passes') us CPU/patch"
echo "N = 8 cycled (reference): $ref patches/s, $(cpu ref '[0-9]+ batches after') us CPU/patch"
awk -v c="$cold" -v w="$warm" -v r="$ref" -v n="$n" \
  -v cc="$(cpu cold 'first pass')" -v wc="$(cpu warm 'first pass')" \
  -v v="$revisit" -v vc="$(cpu cold 'later passes')" 'BEGIN {
  printf "warm / cold first pass: %.2fx patches/s, %.2fx less CPU per patch\n",
    w / c, cc / wc;
  printf "warm first pass / in-memory revisits (the aim: as cheap as a " \
    "revisit): %.1f%% of the rate, %.1f%% of the CPU per patch\n",
    100 * w / v, 100 * wc / vc;
  printf "goal: N = %s rate >= 90%% of N = 8: cold %.1f%%, warm %.1f%%: %s\n",
    n, 100 * c / r, 100 * w / r, (w >= 0.9 * r) ? "met warm" : "NOT met warm";
}'
