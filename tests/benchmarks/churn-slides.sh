# shellcheck shell=bash
# Sourced by the slide-churn benchmarks (bench-churn.sh, bench-mask-store.sh):
# the slides both measure, so their figures stay comparable.
# churn_make_slides BUILD DIR writes 8 generated 0.25 um/px Aperio slides
# (8192 x 6144, 3 levels, seed 100) under DIR/slides and sets the array
# churn_originals to their paths, sorted. churn_link_slides DIR COUNT fills
# DIR with COUNT symbolic links s00000.svs... cycling over those 8: distinct
# paths, so each is opened and masked as a new slide (the tile cache is
# keyed by open slide, so their tiles are not shared either).
churn_make_slides() {
  local build=$1 dir=$2
  "$build/tools/wsi-make-test-slides" --count 8 --width 8192 --height 6144 \
    --levels 3 --layout aperio --tile 240 --mpp 0.25 --seed 100 --jobs 2 \
    "$dir/slides" > /dev/null
  mapfile -t churn_originals < <(ls "$dir/slides"/*.svs | sort)
  [ "${#churn_originals[@]}" -eq 8 ] || { echo "expected 8 slides" >&2; exit 2; }
}

churn_link_slides() {
  local dir=$1 count=$2 i
  mkdir -p "$dir"
  for ((i = 0; i < count; i++)); do
    ln -sf "${churn_originals[i % 8]}" "$(printf '%s/s%05d.svs' "$dir" "$i")"
  done
}
