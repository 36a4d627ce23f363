#!/usr/bin/env bash
# bench-slide-prep: the CPU time a new slide costs to prepare (issue 23),
# this build's plugins against a baseline commit's, side by side. Runs
# `wsislidesrc prepare-ahead=0 ! tissuemask ! patchsampler ! fakesink`
# (open, overview, mask, the sampler's tissue map; 16 patches at 0.5 um/px
# planned per slide) over MANY and over FEW distinct slides (symbolic
# links to bench-churn.sh's 8 generated 8192x6144 Aperio slides at 0.25
# um/px, 240 px tiles, levels in steps of 4), and prints user + system CPU
# per new slide: the difference of the two runs divided by MANY - FEW (so
# start-up is not counted). Baseline and new runs alternate, PAIRS pairs;
# the medians, their ratio and the budget of the churn goal are printed.
# That budget: at 2,500 patches/s on 2 cores, 16 patches per visit, the
# 1,000-slide rate reaches 90 % of the 8-slide rate only if a new slide
# costs about 1.3 ms of CPU (docs/benchmarks.md, Slide churn).
#
# The baseline's plugins are built once from `git archive BASE` into
# BASE_DIR (a few minutes with 2 cores the first time, not timed; kept for
# later runs). The timed part takes about a minute on 2 idle cores. CPU
# times, not instruction counts: other load on the machine inflates them
# (bench-slide-cost.sh counts instructions, which load does not move).
#
#   tests/benchmarks/bench-slide-prep.sh        (from the source root)
# Environment: BUILD (this build, default build), BASE (baseline commit,
# default 58c9c32: main before session 9's cuts), BASE_DIR (default
# /tmp/gst-wsi-base-BASE), PAIRS (default 5), MANY / FEW (default 300 /
# 50), THUMBNAIL (wsislidesrc thumbnail-size, default the element's 1024,
# whose overview is the level at 1/2 exactly; 1000 measures the averaged
# overview most real slides get).
set -euo pipefail
build="$(cd "${BUILD:-build}" && pwd)"
base="${BASE:-58c9c32}"
base_dir="${BASE_DIR:-/tmp/gst-wsi-base-$base}"
pairs="${PAIRS:-5}"
many="${MANY:-300}"
few="${FEW:-50}"
thumbnail=()
if [ -n "${THUMBNAIL:-}" ]; then thumbnail=(thumbnail-size="$THUMBNAIL"); fi
plugins=(ext/wsislide/libgstwsislide.so ext/opencv/libgstwsiopencv.so
  gst/wsipatch/libgstwsipatch.so)

if [ ! -f "$base_dir/build/${plugins[0]}" ]; then
  echo "== building the baseline's plugins ($base) in $base_dir (once)"
  mkdir -p "$base_dir"
  git archive "$base" | tar -x -C "$base_dir"
  (cd "$base_dir" && meson setup build > "$base_dir/setup.log" 2>&1 \
    && ninja -C build -j2 "${plugins[@]}" > "$base_dir/build.log" 2>&1) || {
    echo "the baseline did not build: see $base_dir/*.log"; exit 1; }
fi

work="$(mktemp -d -t bench-slide-prep-XXXXXX)"
trap 'rm -rf "$work"' EXIT
"$build/tools/wsi-make-test-slides" --count 8 --width 8192 --height 6144 \
  --levels 3 --layout aperio --tile 240 --mpp 0.25 --seed 100 --jobs 2 \
  "$work/slides" > /dev/null
mapfile -t originals < <(ls "$work/slides"/*.svs | sort)
mkdir "$work/links"
for ((i = 0; i < many; i++)); do
  ln -s "${originals[i % 8]}" "$(printf '%s/s%05d.svs' "$work/links" "$i")"
done

# cpu SIDE_BUILD_DIR SLIDES -> user + system seconds of one run
cpu() {
  local dir=$1 registry="$work/registry-$(basename "$(dirname "$1")").bin"
  local path="$dir/ext/wsislide:$dir/ext/opencv:$dir/gst/wsipatch"
  env GST_PLUGIN_PATH="$path" GST_PLUGIN_PATH_1_0="$path" \
    GST_REGISTRY="$registry" GST_REGISTRY_1_0="$registry" \
    /usr/bin/time -f "%U %S" -o "$work/time" \
    gst-launch-1.0 -q wsislidesrc location="$work/links" prepare-ahead=0 \
    num-buffers="$2" "${thumbnail[@]}" ! tissuemask ! patchsampler patch-size=256 \
    target-mpp=0.5 patches-per-slide=16 ! fakesink > "$work/log" 2>&1 || {
    echo "run failed ($dir, $2 slides):"; cat "$work/log"; exit 1; }
  awk '{ printf "%.3f", $1 + $2 }' "$work/time"
}
# per_slide DIR -> ms of CPU per new slide (MANY run minus FEW run)
per_slide() {
  local a b
  b="$(cpu "$1" "$many")"
  a="$(cpu "$1" "$few")"
  awk -v a="$a" -v b="$b" -v n=$((many - few)) \
    'BEGIN { printf "%.2f", (b - a) * 1000 / n }'
}

# warm-up: registries, page cache
cpu "$base_dir/build" "$few" > /dev/null
cpu "$build" "$few" > /dev/null

echo "== CPU per new slide, ms (user + system; $many vs $few slides;" \
  "thumbnail-size ${THUMBNAIL:-1024})"
echo "   load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
old=()
new=()
for ((p = 1; p <= pairs; p++)); do
  old+=("$(per_slide "$base_dir/build")")
  new+=("$(per_slide "$build")")
  echo "pair $p: baseline ($base) ${old[-1]}  this build ${new[-1]}"
done
echo "   load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
  END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
m_old="$(median "${old[@]}")"
m_new="$(median "${new[@]}")"
awk -v o="$m_old" -v n="$m_new" 'BEGIN {
  printf "median: baseline %.2f ms, this build %.2f ms: %.2fx less CPU (new / old %.2f)\n",
    o, n, o / n, n / o
  printf "goal (the 90 %% churn rate): about 1.3 ms per new slide: %s (%.1fx over)\n",
    (n <= 1.3) ? "met" : "not met", n / 1.3 }'
