#!/usr/bin/env bash
# Installs the Debian packages gst-wsi needs, in two sets:
#
#   scripts/install-deps.sh run    # build and run (scripts/demo.sh): build
#                                  # tools, GStreamer, the slide libraries
#   scripts/install-deps.sh test   # run + everything the test suite uses
#                                  # (scripts/test.sh): pytest, torch, nginx,
#                                  # valgrind, clang, OpenJPH, s3rver under CI
#   scripts/install-deps.sh --list run|test   # print the set, install nothing
#
# Package names exist in Debian 12 and Debian 13. Skips apt-get when the set
# is already there; uses sudo when not root. Prints one line per phase with
# its time; apt's own output goes to a log file, named when it fails.
# Services: the test set brings nginx-light, which Debian starts as a system
# service on install where systemd runs; this script forbids that start for
# the install (a policy-rc.d that refuses, removed afterwards): the tests
# start their own nginx on a free port. The unit stays enabled for the next
# boot (`systemctl disable nginx` if that machine should not serve port 80).
set -euo pipefail

# Build and run: what scripts/build.sh and scripts/demo.sh need.
run_packages=(
  meson ninja-build pkg-config gcc g++
  libglib2.0-dev libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base
  libopenslide-dev
  libopencv-dev liborc-0.4-dev libtiff-dev libjpeg-dev libopenjp2-7-dev
  libjson-glib-dev zlib1g-dev libcurl4-openssl-dev
  # OME-TIFF zstd tiles and OME-Zarr chunks (zstd, blosc)
  libzstd-dev libblosc-dev
)

# Testing only (scripts/test.sh), on top of the run set.
test_packages=(
  # pipeline tests: videotestsrc and friends, openslide's CLI as a peer
  gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
  libgstreamer-plugins-bad1.0-dev
  openslide-tools
  # DICOM JPEG-LS (-Djpegls=enabled) and its fuzz target
  libcharls-dev
  # libFuzzer targets (scripts/fuzz.sh)
  clang libclang-rt-dev
  # Python module and its tests
  python3-gi python3-gst-1.0 gir1.2-gstreamer-1.0 gir1.2-gst-plugins-base-1.0
  python3-numpy python3-pytest python3-torch
  python3-pil fonts-dejavu-core
  python3-matplotlib
  python3-pydicom
  # OME-TIFF and OME-Zarr test data written (and decoded) by other software
  python3-tifffile python3-zarr libvips-tools
  # wsi-extract / gstwsi.extract writes H5 files (h5py) and tissue contours
  # (cv2, python3-opencv below); tests/python/test_extract.py reads the
  # slides independently with openslide-python
  python3-h5py python3-openslide
  # wsi-extract's contours; tests/benchmarks: mask-threshold-study.py (cv2),
  # bench-slide-cost.sh and bench-dicom-instructions.sh (callgrind)
  python3-opencv valgrind
  # remote slides: a local nginx serves them; curl checks it
  nginx-light curl
  # tests/check/pipelines/faultproxy.py checks AWS signatures with botocore
  # too (an implementation of SigV4 independent of the project's)
  python3-botocore
  # tests/python/test_stain.py: HED stain separation by scikit-image
  python3-skimage
  # HTJ2K peer decoder for the DICOM tests
  openjph-tools
  # tests/gpu/build-pygi.sh (PyGObject for the GPU machine's Python, docs/cuda.md)
  libgirepository1.0-dev libffi-dev
)

usage() {
  echo "usage: scripts/install-deps.sh [--list] run|test" >&2
  exit 2
}

list_only=0
if [ "${1:-}" = "--list" ]; then
  list_only=1
  shift
fi
set_name="${1:-}"
case "$set_name" in
  run) packages=("${run_packages[@]}") ;;
  test) packages=("${run_packages[@]}" "${test_packages[@]}") ;;
  *) usage ;;
esac
if [ $list_only -eq 1 ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

repo="$(cd "$(dirname "$0")/.." && pwd)"
log="${WSI_INSTALL_LOG:-${TMPDIR:-/tmp}/gst-wsi-install-deps.log}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done

# run PHASE COMMAND...: one line when it starts, one when it ends with its
# time; the command's output in $log, its tail shown when it fails.
phase() {
  local what=$1 start=$SECONDS
  shift
  echo "install-deps: $what ..."
  if ! "$@" >>"$log" 2>&1; then
    echo "install-deps: $what failed after $((SECONDS - start)) s; the last lines of $log:" >&2
    tail -n 15 "$log" >&2
    return 1
  fi
  echo "install-deps: $what done in $((SECONDS - start)) s"
}

# A policy-rc.d that refuses every service start while packages install
# (invoke-rc.d and deb-systemd-invoke both ask it); an existing one is kept.
policy="${WSI_POLICY_RC_D:-/usr/sbin/policy-rc.d}"  # tests name another
added_policy=0
forbid_service_starts() {
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# gst-wsi install-deps.sh: no service starts during the install\nexit 101\n' \
      | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    added_policy=1
  fi
}
allow_service_starts() {
  if [ $added_policy -eq 1 ]; then
    $SUDO rm -f "$policy"
    added_policy=0
  fi
}
trap allow_service_starts EXIT

: >"$log"
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: the $set_name set (${#packages[@]} packages) is installed"
else
  echo "install-deps: ${#missing[@]} of the $set_name set's ${#packages[@]} packages missing: ${missing[*]} (log: $log)"
  phase "apt-get update" $SUDO apt-get update
  forbid_service_starts
  phase "apt-get install (${#missing[@]} packages and what they need)" \
    $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
  allow_service_starts
fi

# s3rver (npm), the S3-protocol server tests/check/pipelines/remote.c signs
# requests against, into the project folder tests/s3 (git-ignored): test set
# only, in CI (CI=true) or when asked (WSI_INSTALL_S3RVER=1), since npm takes
# minutes; elsewhere that check prints SKIP with the reason. npm: Debian's
# package only where none is on PATH (a Node.js from elsewhere ships its own
# npm, and Debian's conflicts with it). An npm failure is said, not fatal.
if [ "$set_name" = test ] && { [ "${CI:-}" = "true" ] || [ "${WSI_INSTALL_S3RVER:-0}" = "1" ]; }; then
  if [ ! -x "$repo/tests/s3/node_modules/.bin/s3rver" ]; then
    command -v npm >/dev/null \
      || phase "apt-get install npm" $SUDO apt-get install -y --no-install-recommends npm \
      || echo "install-deps: npm could not be installed" >&2
    phase "npm install s3rver into tests/s3" \
      npm install --prefix "$repo/tests/s3" --no-audit --no-fund s3rver@3.7.1 \
      || echo "install-deps: could not install s3rver from npm; the S3 checks will say so" >&2
  fi
fi
