#!/usr/bin/env bash
# Installs the Debian 12 and 13 packages gst-wsi needs to build, test and run.
# Skips apt-get when everything is already there; uses sudo when not root.
set -euo pipefail

packages=(
  meson ninja-build pkg-config gcc g++
  libglib2.0-dev libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  libgstreamer-plugins-bad1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad
  libopenslide-dev openslide-tools
  libopencv-dev liborc-0.4-dev libtiff-dev libjpeg-dev libopenjp2-7-dev libcharls-dev libjson-glib-dev zlib1g-dev
  # OME-TIFF zstd tiles and OME-Zarr chunks (zstd, blosc)
  libzstd-dev libblosc-dev
  clang libclang-rt-dev
  python3-gi python3-gst-1.0 gir1.2-gstreamer-1.0 gir1.2-gst-plugins-base-1.0
  python3-numpy python3-pytest python3-torch
  python3-pil fonts-dejavu-core
  python3-matplotlib python3-pil
  python3-pydicom
  # OME-TIFF and OME-Zarr test data written (and decoded) by other software
  python3-tifffile python3-zarr libvips-tools
  # wsi-extract / gstwsi.extract writes H5 files (h5py) and tissue contours
  # (cv2, python3-opencv below); tests/python/test_extract.py reads the
  # slides independently with openslide-python
  python3-h5py python3-openslide
  # wsi-extract's contours; tests/benchmarks: mask-threshold-study.py (cv2), bench-slide-cost.sh and
  # bench-dicom-instructions.sh (callgrind)
  python3-opencv valgrind
  libcurl4-openssl-dev nginx-light curl
  # tests/check/pipelines/faultproxy.py checks AWS signatures with botocore
  # too (an implementation of SigV4 independent of the project's)
  python3-botocore
  # tests/python/test_stain.py: HED stain separation by scikit-image
  python3-skimage
  openjph-tools
  # tests/gpu/build-pygi.sh (PyGObject for the GPU machine's Python, docs/cuda.md)
  libgirepository1.0-dev libffi-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing: ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# s3rver (npm), the S3-protocol server tests/check/pipelines/remote.c signs
# requests against, into the project folder tests/s3 (git-ignored): in CI
# (CI=true) or when asked (WSI_INSTALL_S3RVER=1), since npm takes minutes;
# elsewhere that check prints SKIP with the reason. npm: Debian's package
# only where none is on PATH (a Node.js from elsewhere ships its own npm,
# and Debian's conflicts with it). An npm failure is said, not fatal.
if [ "${CI:-}" = "true" ] || [ "${WSI_INSTALL_S3RVER:-0}" = "1" ]; then
  repo="$(cd "$(dirname "$0")/.." && pwd)"
  if [ ! -x "$repo/tests/s3/node_modules/.bin/s3rver" ]; then
    command -v npm >/dev/null \
      || $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null \
      || echo "install-deps: npm could not be installed" >&2
    echo "Installing s3rver into tests/s3"
    npm install --prefix "$repo/tests/s3" --no-audit --no-fund --silent s3rver@3.7.1 \
      || echo "install-deps: could not install s3rver from npm; the S3 checks will say so" >&2
  fi
fi
