#!/usr/bin/env bash
# Packs what tests/gpu/run.sh needs on a GPU machine that has no GStreamer
# (the project's lent device machines: CUDA, python3 with torch, no network)
# into DEST: our build's plugins, test and bench binaries, Debian's
# GStreamer core plugins and nvcodec (the stock cudaupload), the
# gst-launch/gst-inspect tools, and every shared library they need per ldd
# except glibc's and the driver's (libcuda comes with the GPU machine) and
# libstdc++/libgcc_s (taken from that machine: newer and compatible; kept in
# a fallback folder). The libraries go in a tar.xz (94 MB unpacked).
#
#   tests/gpu/pack.sh BUILD_DIR DEST       # e.g. build /work/main/.gpu
set -euo pipefail
build=$(realpath "$1")
dest=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
sysplugins=/usr/lib/x86_64-linux-gnu/gstreamer-1.0
rm -rf "$dest" && mkdir -p "$dest"/{bin,plugins,sysplugins,python}
stage=$(mktemp -d)
mkdir -p "$stage/lib" "$stage/libfallback"

cp "$build"/gst/*/libgst*.so "$build"/ext/*/libgst*.so "$dest/plugins/"
mv "$dest/plugins/libgstwsicudatensor.so" "$stage/lib/"
cp "$sysplugins"/libgst{coreelements,app,nvcodec}.so "$dest/sysplugins/"
cp /usr/bin/gst-launch-1.0 /usr/bin/gst-inspect-1.0 \
   /usr/lib/x86_64-linux-gnu/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner \
   "$build/tests/check/elements_wsicudaupload" \
   "$build/tests/benchmarks/bench-cuda" \
   "$build/tools/wsi-make-test-slides" "$dest/bin/"
cp -r "$src/ext/cuda/tensor/gstwsi_cuda" "$src/tests/gpu/torch_ctypes_check.py" \
   "$dest/python/"
cp "$src/tests/gpu/run.sh" "$dest/"

for f in "$dest"/bin/* "$dest"/plugins/* "$dest"/sysplugins/* "$stage"/lib/*; do
  ldd "$f" | awk '/=>/ && $3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libcuda.so*|libresolv.so*) ;;
    libstdc++.so*|libgcc_s.so*) cp -L "$lib" "$stage/libfallback/" ;;
    *) cp -L "$lib" "$stage/lib/" ;;
  esac
done
# our own libraries next to the binaries are found through RUNPATH here;
# there they come from lib/
tar -C "$stage" -cJf "$dest/libs.tar.xz" lib libfallback
rm -rf "$stage"
du -sh "$dest"
