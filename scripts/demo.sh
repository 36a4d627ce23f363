#!/usr/bin/env bash
# The README's main command: installs what is missing, builds, generates
# sample slides when no location is given, streams patch batches through
# the standard pipeline into appsink and prints patches/s.
#
#   scripts/demo.sh                      # sample slides, 100 batches
#   scripts/demo.sh /data/slides         # your slides (dir, file or list)
#   BATCHES=500 THREADS=4 TARGET_MPP=0.5 scripts/demo.sh /data/slides
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh

location="${1:-}"
if [ -z "$location" ]; then
  location=sample-slides
  if [ ! -d "$location" ]; then
    echo "Generating sample slides in $location/ ..."
    build/tools/wsi-make-test-slides "$location"
  fi
fi

# The tracer, when built, prints where the time goes when the stream stops.
tracer=()
if ls build/gst/wsitracer/libgstwsitracers.so >/dev/null 2>&1; then
  tracer=(env "GST_TRACERS=${GST_TRACERS:-wsistats}")
fi

exec meson devenv -C build -w . "${tracer[@]}" build/examples/wsi-stream \
  --location "$location" --batches "${BATCHES:-100}" --warmup 10 \
  --batch-size "${BATCH_SIZE:-64}" --patch-size "${PATCH_SIZE:-256}" \
  --target-mpp "${TARGET_MPP:-0.5}" --threads "${THREADS:-0}"
