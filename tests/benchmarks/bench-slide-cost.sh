#!/usr/bin/env bash
# Instructions per new slide, stage by stage (issue 23): what opening a
# slide, reading its overview, masking it and building patchsampler's map
# of it cost. Runs `wsislidesrc prepare-ahead=0 ! tissuemask !
# patchsampler ! fakesink` under callgrind over 64 and over 16 distinct
# slides (bench-churn.sh's: symbolic links to 8 generated 8192x6144 Aperio
# slides at 0.25 um/px, 240 px tiles, levels in steps of 4) and prints each
# stage's inclusive instructions per slide, the difference of the two runs
# divided by 48 (so start-up is not counted). Callgrind counts user-space
# instructions only: other load on the machine does not move the figures
# (kernel time, page faults and the speed of each instruction are not in
# them). About 1.5 minutes on 2 idle cores.
#
#   tests/benchmarks/bench-slide-cost.sh            (from the source root)
# Environment: BUILD (build folder, default build), THUMBNAIL (wsislidesrc
# thumbnail-size; default: the element's, 1024).
set -euo pipefail
build="${BUILD:-build}"
# callgrind present, and the plugins of this build: its developer environment.
. "$(dirname "$0")/callgrind-devenv.sh"
callgrind_in_devenv "$build" "$0" "$@"
work="$(mktemp -d -t bench-slide-cost-XXXXXX)"
trap 'rm -rf "$work"' EXIT

"$build/tools/wsi-make-test-slides" --count 8 --width 8192 --height 6144 \
  --levels 3 --layout aperio --tile 240 --mpp 0.25 --seed 100 --jobs 2 \
  "$work/slides" > /dev/null
mapfile -t originals < <(ls "$work/slides"/*.svs | sort)
mkdir "$work/n64"
for ((i = 0; i < 64; i++)); do
  ln -s "${originals[i % 8]}" "$(printf '%s/s%05d.svs' "$work/n64" "$i")"
done

profile() {   # profile SLIDES: callgrind output in $work/callgrind.SLIDES
  local -a props=(location="$work/n64" prepare-ahead=0 num-buffers="$1")
  if [ -n "${THUMBNAIL:-}" ]; then props+=(thumbnail-size="$THUMBNAIL"); fi
  valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.$1" \
    gst-launch-1.0 -q wsislidesrc "${props[@]}" ! tissuemask \
    ! patchsampler patch-size=256 target-mpp=0.5 patches-per-slide=16 \
    ! fakesink > "$work/callgrind.$1.log" 2>&1
}
profile 64
profile 16

# inclusive FILE FUNCTION -> its instructions (0 when never called); the
# program's total for FUNCTION = TOTALS
inclusive() {
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null | awk -v f="$2" '
    f == "TOTALS" && /PROGRAM TOTALS/ { gsub(",", "", $1); print $1; done = 1; exit }
    f != "TOTALS" && $0 ~ ("[:]" f "( |\\(|$)") { gsub(",", "", $1); print $1; done = 1; exit }
    END { if (!done) print 0 }'
}
per_slide() {   # per_slide FUNCTION -> M instructions per new slide
  local a b
  a="$(inclusive "$work/callgrind.16" "$1")"
  b="$(inclusive "$work/callgrind.64" "$1")"
  awk -v a="$a" -v b="$b" 'BEGIN { printf "%7.2f", (b - a) / 48 / 1e6 }'
}

echo "== M instructions per new slide (64 vs 16 distinct slides; callgrind)"
printf '%s  %s\n' \
  "$(per_slide tiff_open)" "open: TIFF directories, path, properties (tiff_open)" \
  "$(per_slide wsi_overview_read)" "overview, all (wsi_overview_read)" \
  "$(per_slide wsi_jpeg_decoder_decode)" "  JPEG decode of the overview's level" \
  "$(per_slide wsi_overview_argb_to_rgb)" "  ARGB -> RGB on white" \
  "$(per_slide wsi_tissue_detect)" "tissuemask, all (wsi_tissue_detect)" \
  "$(per_slide wsi_tissue_hsv_plane)" "  saturation / value plane" \
  "$(per_slide gst_patch_sampler_chain)" "patchsampler, all (its chain function)" \
  "$(per_slide wsi_tissue_map_build)" "  integral image of the mask" \
  "$(per_slide TOTALS)" "the whole program"
