#!/usr/bin/env bash
# Configures (once) and builds gst-wsi in ./build. One line per phase with
# its time; meson's and ninja's output go to build/build.log, whose last
# lines are shown when a phase fails.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
log=build/build.log
: >"$log"

phase() {
  local what=$1 start=$SECONDS
  shift
  echo "build: $what ..."
  if ! "$@" >>"$log" 2>&1; then
    echo "build: $what failed after $((SECONDS - start)) s; the last lines of $log:" >&2
    tail -n 25 "$log" >&2
    return 1
  fi
  echo "build: $what done in $((SECONDS - start)) s"
}

if [ ! -f build/build.ninja ]; then
  phase "meson setup build" meson setup build
fi
phase "ninja -C build (compiling; log: $log)" ninja -C build
