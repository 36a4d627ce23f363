#!/usr/bin/env bash
# valgrind memcheck over four gst-launch pipelines that run the code landed
# for slide churn, the 1/2-scale read and the patch store (issue 26):
#   churn      48 symlinks to 4 generated Aperio 0.25 um/px slides, read at
#              0.5 um/px, two passes (cycle=true: the second pass takes its
#              masks from tissuemask's mask cache); overview copy, per-thread
#              decode block, 1/2-scale partial decode, window resize
#   read40x    one 0.2527 um/px slide read at 0.5 um/px (the 40x-0.5 case:
#              footprint 507 px, 1/2 DCT scale, then a 0.99 resize)
#   storeread  a JPEG patch store (written outside valgrind) read back by
#              patchstoresrc threads=2 into patchbatch
#   rawstore   a raw store of 256 px patches read into 64-patch batches
#              (12 MiB: patchbatch's streaming-store copy, wsibatchcopy)
# Each prints its batch count (fakesink's last-message; expected 24, 3, 6
# and 2), valgrind's error summary and its definite losses; the logs stay
# in the work folder it names. Slides are generated (seconds); the four
# runs take a few minutes on 2 cores.
#
#   scripts/valgrind-pipelines.sh [BUILD]     (default: build)
# Environment: DRY=1 runs the pipelines without valgrind (to check they
# deliver), WORK=DIR keeps the files there (default: a new temporary
# folder, kept).
set -uo pipefail
build=${1:-build}
root=$PWD
w=${WORK:-$(mktemp -d -t wsi-valgrind-XXXXXX)}
mkdir -p "$w"
GST_PLUGIN_PATH=${GST_PLUGIN_PATH:-}
LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
PYTHONPATH=${PYTHONPATH:-}
eval "$(meson devenv -C "$build" --dump 2>/dev/null)" \
  || { echo "valgrind-pipelines: no meson build in $build" >&2; exit 2; }
export GST_REGISTRY="$w/registry.bin"
export GST_DEBUG='*:ERROR'
# the registry is made outside valgrind (the scanner is a child process)
gst-inspect-1.0 wsislidesrc > /dev/null
echo "valgrind-pipelines: work folder $w"

# run NAME COMMAND...: under memcheck unless DRY=1; one summary line
run() {
  local name=$1; shift
  local -a pre=()
  [ "${DRY:-0}" = 1 ] || pre=(valgrind --tool=memcheck --leak-check=full \
    --show-leak-kinds=definite --errors-for-leak-kinds=definite \
    --num-callers=30 --log-file="$w/$name.vg")
  "${pre[@]}" "$@" > "$w/$name.out" 2>&1
  echo "$name: exit $?, batches $(grep -c 'last-message = chain' "$w/$name.out")"
  [ "${DRY:-0}" = 1 ] \
    || grep -E 'ERROR SUMMARY|definitely lost:|Invalid (read|write)' "$w/$name.vg"
}

tools="$root/$build/tools"
"$tools/wsi-make-test-slides" --count 4 --width 4096 --height 3072 --levels 3 \
  --layout aperio --tile 240 --mpp 0.25 --seed 100 "$w/slides" > /dev/null
"$tools/wsi-make-test-slides" --count 1 --width 6144 --height 4608 --levels 3 \
  --layout aperio --tile 240 --mpp 0.2527 --seed 7 "$w/s40x" > /dev/null
mapfile -t originals < <(ls "$w"/slides/*.svs | sort)
mkdir -p "$w/churn"
for n in $(seq 0 47); do
  ln -sf "${originals[n % 4]}" "$(printf '%s/churn/s%03d.svs' "$w" "$n")"
done

run churn gst-launch-1.0 -v wsislidesrc location="$w/churn" seed=3 cycle=true \
  ! tissuemask ! queue ! patchsampler patch-size=256 target-mpp=0.5 \
  patches-per-slide=2 ! patchinterleave ! patchreader threads=2 ! queue \
  ! patchbatch batch-size=8 ! fakesink silent=false num-buffers=24
run read40x gst-launch-1.0 -v wsislidesrc location="$w/s40x" seed=3 \
  ! tissuemask ! queue ! patchsampler patch-size=256 target-mpp=0.5 \
  patches-per-slide=48 ! patchinterleave ! patchreader threads=2 ! queue \
  ! patchbatch batch-size=16 ! fakesink silent=false

# write_store DIR ENCODING PATCH_SIZE PER_SLIDE PER_SHARD: outside valgrind
write_store() {
  rm -rf "$1"
  gst-launch-1.0 -q wsislidesrc location="$w/slides" seed=3 ! tissuemask \
    ! queue ! patchsampler patch-size="$3" target-mpp=0.5 \
    patches-per-slide="$4" ! patchinterleave ! patchreader threads=2 \
    ! patchstoresink location="$1" encoding="$2" patches-per-shard="$5" \
    > "$1.log" 2>&1 || echo "writing $1 failed: $(tail -3 "$1.log")"
}
write_store "$w/store" jpeg 128 12 16
run storeread gst-launch-1.0 -v patchstoresrc location="$w/store" threads=2 \
  epochs=1 seed=4 ! patchbatch batch-size=8 ! fakesink silent=false
write_store "$w/rawstore" raw 256 32 64
run rawstore gst-launch-1.0 -v patchstoresrc location="$w/rawstore" threads=2 \
  epochs=1 seed=4 ! patchbatch batch-size=64 ! fakesink silent=false
