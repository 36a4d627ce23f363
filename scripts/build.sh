#!/usr/bin/env bash
# Configures (once) and builds gst-wsi in ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  meson setup build >/dev/null
fi
ninja -C build >/dev/null
