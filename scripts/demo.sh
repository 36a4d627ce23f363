#!/usr/bin/env bash
# The README's main command: installs what is missing (the run set of
# scripts/install-deps.sh: no test tools), builds, generates sample slides
# when no location is given, streams patch batches through the standard
# pipeline into appsink and prints patches/s. One line per phase with its
# time before the stream's own report.
#
#   scripts/demo.sh                      # sample slides, 100 batches
#   scripts/demo.sh /data/slides         # your slides (dir, file or list)
#   BATCHES=500 THREADS=4 TARGET_MPP=0.5 scripts/demo.sh /data/slides
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh run
scripts/build.sh

location="${1:-}"
if [ -z "$location" ]; then
  location=sample-slides
  if [ ! -d "$location" ]; then
    start=$SECONDS
    echo "demo: generating sample slides in $location/ ..."
    # into a temporary folder renamed when complete: an interrupted run
    # generates them again instead of streaming half a set
    rm -rf "$location.partial"
    build/tools/wsi-make-test-slides "$location.partial" >/dev/null
    mv "$location.partial" "$location"
    echo "demo: sample slides done in $((SECONDS - start)) s ($(ls "$location" | wc -l) files)"
  fi
fi

# The tracer, when built, prints where the time goes when the stream stops.
tracer=()
if ls build/gst/wsitracer/libgstwsitracers.so >/dev/null 2>&1; then
  tracer=(env "GST_TRACERS=${GST_TRACERS:-wsistats}")
fi

echo "demo: streaming from $location ..."
exec meson devenv -C build -w . "${tracer[@]}" build/examples/wsi-stream \
  --location "$location" --batches "${BATCHES:-100}" --warmup 10 \
  --batch-size "${BATCH_SIZE:-64}" --patch-size "${PATCH_SIZE:-256}" \
  --target-mpp "${TARGET_MPP:-0.5}" --threads "${THREADS:-0}"
