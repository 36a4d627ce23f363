#!/usr/bin/env bash
# bench-churn: slide churn (issue 23). Foundation-model runs sample few
# patches from each of very many slides, so every slide visit pays its
# open, overview read and tissue mask. This runs bench-pipeline --steady
# (cycling pipeline, pool 8, batches of 64, 0.5 um/px, 256 px patches) on
# N distinct slides x 16 patches per visit, for each N given (default 8,
# 100 and 1000), at 2 reader threads, each N twice side by side: slides
# prepared one by one on the source's streaming thread (prepare-ahead=0,
# the old way) and ahead on worker threads (wsislidesrc's default). The N
# slides are symbolic links to 8 generated 0.25 um/px slides (distinct
# paths, so each is opened and masked as a new slide; their tiles are not
# shared in the tile cache either, which is keyed by open slide).
#
# Cold and warm apart: each N > 8 runs over its first pass (every visit a
# new slide: open, overview, mask) AND at least one more full pass (N x 16
# patches, N / 4 batches of 64 each; training revisits its slides every
# epoch, and tissuemask's mask cache then spares the overview). bench-pipeline
# --first-pass-batches splits the measured batches there: "first pass" from
# batch 6 (after a 4-batch start-up) to N / 4, "later passes" the next
# max(N / 4, BATCHES) batches, each with its rate, CPU per patch, batch
# p95/p50 and the slide visits, overviews read and masks computed over that
# window (the warm window should read no overview and compute no mask).
# N = 8's first pass is shorter than its warm-up: it is measured steady.
#
# It prints bench-pipeline's lines per run, the wsistats tracer's slide
# preparation and reader lines, and a table with the issue's goals: the
# largest N's rate >= 90 % of N = 8's (cold and warm), batch p95/p50 <= 1.5,
# peak RSS not growing with N.
#
#   meson devenv -C build -w . tests/benchmarks/bench-churn.sh [N ...]
# Environment: BUILD (build folder, default build), BATCHES (N = 8's
# measured batches and the fewest of the later passes, default 100), WARMUP
# (N = 8's, default 20), THREADS (default 2), AHEAD (the
# prepared-ahead run's prepare-ahead, default: the element's default),
# TILE_CACHE (patchreader tile-cache-size in MiB; 0 isolates what churn
# costs from what the tile cache saves when 8 slides are revisited),
# THUMBNAIL (wsislidesrc thumbnail-size: the overview, hence the mask, is
# what each new slide costs; default: the element's, 1024), MASK_CACHE_DIR
# (tissuemask mask-cache-dir for every run, as a training run after the
# first one has it: before each N is measured, one pass of wsislidesrc !
# tissuemask over its N slides fills the folder, so both runs of that N
# start with every mask on disk and "first pass" is a new process's first
# epoch; default: off; bench-mask-store.sh measures an empty and a filled
# folder side by side).
set -euo pipefail
. "$(dirname "$0")/churn-slides.sh"
build="${BUILD:-build}"
batches="${BATCHES:-100}"
warmup="${WARMUP:-20}"
threads="${THREADS:-2}"
ahead="${AHEAD:-}"
cache="${TILE_CACHE:-}"
thumbnail="${THUMBNAIL:-}"
mask_dir="${MASK_CACHE_DIR:-}"
if [ "$#" -gt 0 ]; then counts=("$@"); else counts=(8 100 1000); fi

work="$(mktemp -d -t bench-churn-XXXXXX)"
trap 'rm -rf "$work"' EXIT

churn_make_slides "$build" "$work"

# one run: lines "N mode phase patches/s p50 p95 cpu rss visits overviews
# masks" appended to $work/table (phase: steady, cold or warm)
run_one() {
  local n="$1" mode="$2" dir="$3" out line rss
  local -a extra=() phases=()
  local w="$warmup" b="$batches" first=$(( (n * 16 + 63) / 64 ))
  if [ "$mode" = serial ]; then
    extra=(--prepare-ahead 0)
  elif [ -n "$ahead" ]; then
    extra=(--prepare-ahead "$ahead")
  fi
  if [ -n "$cache" ]; then extra+=(--tile-cache-mb "$cache"); fi
  if [ -n "$thumbnail" ]; then extra+=(--thumbnail-size "$thumbnail"); fi
  if [ -n "$mask_dir" ]; then extra+=(--mask-cache-dir "$mask_dir"); fi
  # a first pass long enough to measure apart: split it from the revisits
  if [ "$first" -ge 16 ]; then
    w=4
    b=$(( first - w + (first > batches ? first : batches) ))
    extra+=(--first-pass-batches "$first")
  fi
  out="$(GST_TRACERS="wsistats(interval=0)" \
    "$build/tests/benchmarks/bench-pipeline" --steady --location "$dir" \
    --threads "$threads" --target-mpp 0.5 --patches-per-slide 16 \
    --pool-size 8 --warmup "$w" --batches "$b" "${extra[@]}" 2>&1)"
  line="$(grep -E '^[0-9]+ batches after' <<< "$out")" || {
    echo "$out" >&2; exit 1; }
  echo "-- $mode: $line"
  grep -E '^(first pass|later passes|mask cache|mask disk cache): ' <<< "$out" \
    | sed 's/^/   /' || true
  grep -E '^(slides|reader) [^ ]+: ' <<< "$out" | sed 's/^/   /' || true
  rss="$(sed -E 's/.*peak RSS ([0-9.]+) MiB.*/\1/' <<< "$line")"
  phases=("steady|$line")
  if [ "$first" -ge 16 ]; then
    phases=("cold|$(grep -E '^first pass: ' <<< "$out")"
      "warm|$(grep -E '^later passes: ' <<< "$out")")
  fi
  for p in "${phases[@]}"; do
    sed -E 's/.*: ([0-9.]+) patches\/s, batch time p50 ([0-9.]+) ms, p95 ([0-9.]+) ms.*CPU ([0-9.]+) us\/patch.*/\1 \2 \3 \4/' \
      <<< "${p#*|}" | awk -v n="$n" -v m="$mode" -v ph="${p%%|*}" -v r="$rss" \
      -v s="$(sed -nE 's/.*; ([0-9]+) slide visits, ([0-9]+) overviews read, ([0-9]+) masks computed.*/\1 \2 \3/p' <<< "${p#*|}")" \
      '{ if (s == "") s = "- - -"; print n, m, ph, $0, r, s }' >> "$work/table"
  done
}

for n in "${counts[@]}"; do
  dir="$work/n$n"
  churn_link_slides "$dir" "$n"
  if [ -n "$mask_dir" ]; then
    warm=(location="$dir" num-buffers="$n")
    if [ -n "$thumbnail" ]; then warm+=(thumbnail-size="$thumbnail"); fi
    gst-launch-1.0 -q wsislidesrc "${warm[@]}" ! tissuemask \
      mask-cache-dir="$mask_dir" ! fakesink > /dev/null
  fi
  echo "== N = $n distinct slides, 16 patches per visit, $threads threads" \
    "(load: $(cut -d' ' -f1-3 /proc/loadavg))${mask_dir:+, masks on disk in $mask_dir}"
  run_one "$n" serial "$dir"
  run_one "$n" ahead "$dir"
done

# CPU per new slide alone, no patches read: wsislidesrc (prepare-ahead=0,
# so the overview is read in this process's streaming thread) ! tissuemask
# ! patchsampler ! fakesink over the largest N's distinct slides. User +
# system CPU of a run over min(N, 240) slides less that of a run over a
# sixth as many, per slide of the difference (so start-up is not counted): what each new slide visit costs whatever the
# load; the 1.3 ms the issue's goal allows at 2,500 patches/s is the mark.
prep_cpu() {
  local visits="$1" t
  local -a props=(location="$work/n${counts[-1]}" prepare-ahead=0
    num-buffers="$visits")
  if [ -n "$thumbnail" ]; then props+=(thumbnail-size="$thumbnail"); fi
  local -a mask_props=()
  if [ -n "$mask_dir" ]; then mask_props=(mask-cache-dir="$mask_dir"); fi
  t="$( { TIMEFORMAT='%U %S'; time gst-launch-1.0 -q wsislidesrc "${props[@]}" \
    ! tissuemask "${mask_props[@]}" ! patchsampler patch-size=256 target-mpp=0.5 \
    patches-per-slide=16 ! fakesink > /dev/null 2>&1; } 2>&1 )"
  awk '{ print $1 + $2 }' <<< "$t"
}
# wsislidesrc stops after the N slides (no cycle): at most N visits.
long_n=$(( counts[-1] < 240 ? counts[-1] : 240 ))
short_n=$(( long_n / 6 ))
short="$(prep_cpu "$short_n")"
long="$(prep_cpu "$long_n")"
echo
echo "== preparation alone: $(awk -v a="$short" -v b="$long" \
  -v n=$((long_n - short_n)) 'BEGIN { printf "%.2f", (b - a) * 1000 / n }')" \
  "ms of CPU per new slide (open, overview, mask, sampler; $((long_n - short_n))" \
  "distinct slides; goal budget about 1.3 ms)"

echo
echo "== summary (goals: rate at the largest N >= 90 % of N = ${counts[0]}'s," \
  "cold and warm, batch p95/p50 <= 1.5, peak RSS independent of N)"
awk '
  { key = $1 " " $2 " " $3; rate[key] = $4; ratio[key] = $6 / $5;
    cpu[key] = $7; rss[$1 " " $2] = $8; visits[key] = $9; ovw[key] = $10;
    masks[key] = $11; if (!($1 in seen)) { seen[$1] = 1; order[k++] = $1 } }
  # the reference: the smallest N, steady (warm when it was split)
  function ref(m) {
    if ((order[0] " " m " steady") in rate) return order[0] " " m " steady";
    return order[0] " " m " warm";
  }
  END {
    printf "%6s %-7s %-6s %10s %8s %9s %10s %17s %11s\n", "N", "slides",
      "phase", "patches/s", "p95/p50", "CPU us/p", "peak MiB",
      "masks/ovw/visits", "rate vs N=" order[0];
    for (i = 0; i < k; i++)
      for (m = 0; m < 2; m++)
        for (p = 0; p < 3; p++) {
          mode = m ? "ahead" : "serial";
          phase = p == 0 ? "steady" : (p == 1 ? "cold" : "warm");
          key = order[i] " " mode " " phase;
          if (!(key in rate)) continue;
          printf "%6s %-7s %-6s %10.1f %8.2f %9.0f %10.1f %17s %10.1f%%\n",
            order[i], mode, phase, rate[key], ratio[key], cpu[key],
            rss[order[i] " " mode], masks[key] "/" ovw[key] "/" visits[key],
            100 * rate[key] / rate[ref(mode)];
        }
    last = order[k - 1]; r = ref("ahead");
    for (p = 1; p < 3; p++) {
      phase = p == 1 ? "cold" : "warm";
      key = last " ahead " phase;
      if (!(key in rate)) key = last " ahead steady";
      printf "goal rate %s: N = %s at %.1f%% of N = %s (goal >= 90%%): %s;", phase,
        last, 100 * rate[key] / rate[r], order[0],
        (rate[key] >= 0.9 * rate[r]) ? "met" : "NOT met";
      printf " by CPU per patch (steadier under load) %.0f vs %.0f us: %.1f%%\n",
        cpu[key], cpu[r], 100 * cpu[r] / cpu[key];
      printf "goal p95/p50 %s at N = %s: %.2f (goal <= 1.5): %s\n", phase, last,
        ratio[key], (ratio[key] <= 1.5) ? "met" : "NOT met";
    }
    if ((last " serial warm") in rate)
      printf "prepared ahead vs serial at N = %s: cold %.2fx, warm %.2fx patches/s\n",
        last, rate[last " ahead cold"] / rate[last " serial cold"],
        rate[last " ahead warm"] / rate[last " serial warm"];
    printf "peak RSS N = %s vs N = %s: %.1f vs %.1f MiB\n", last,
      order[0], rss[last " ahead"], rss[order[0] " ahead"];
  }' "$work/table"
