#!/usr/bin/env bash
# Packs what tests/gpu/run.sh needs on a GPU machine that has no GStreamer
# (the project's lent device machines: CUDA, python3 with torch, no network)
# into DEST: our build's plugins, test and bench binaries, Debian's
# GStreamer core plugins and nvcodec (the stock cudaupload), the
# gst-launch/gst-inspect tools, and every shared library they need per ldd
# except glibc's and the driver's (libcuda comes with the GPU machine) and
# libstdc++/libgcc_s (taken from that machine: newer and compatible; kept in
# a fallback folder). The libraries go in a tar.xz (94 MB unpacked).
# Also: the gstwsi Python module, examples/train_single_gpu.py and, where
# BUILD_DIR/pygi-site exists (tests/gpu/build-pygi.sh), PyGObject and the
# Gst overrides built for the device's CPython 3.12 with the GObject
# typelibs they need, so run.sh can run the example with `gi`; the
# wsi-extract tool with tests/gpu/vit_sized.py (ViT-sized models in plain
# torch) and extract_check.py for the extract part (h5py is the device's
# own: its python3 has it, and a copy built here would not match its numpy
# and HDF5); the JPEG
# decode experiment: jpeg-tiles files of a generated Aperio-like slide and
# of ../shared/slides' CMU-1-Small-Region.svs, the libjpeg-turbo decoder
# built here and the nvJPEG one's source (built there with nvcc).
#
#   tests/gpu/pack.sh BUILD_DIR DEST       # e.g. build /work/main/.gpu
set -euo pipefail
build=$(realpath "$1")
dest=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
sysplugins=/usr/lib/x86_64-linux-gnu/gstreamer-1.0
rm -rf "$dest" && mkdir -p "$dest"/{bin,plugins,sysplugins,python,jpeg}
stage=$(mktemp -d)
mkdir -p "$stage/lib" "$stage/libfallback"

cp "$build"/gst/*/libgst*.so "$build"/ext/*/libgst*.so "$dest/plugins/"
mv "$dest/plugins/libgstwsicudatensor.so" "$stage/lib/"
cp "$sysplugins"/libgst{coreelements,app,nvcodec}.so "$dest/sysplugins/"
cp /usr/bin/gst-launch-1.0 /usr/bin/gst-inspect-1.0 \
   /usr/lib/x86_64-linux-gnu/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner \
   "$build/tests/check/elements_wsicudaupload" \
   "$build/tests/benchmarks/bench-cuda" \
   "$build/tools/wsi-make-test-slides" "$src/tools/wsi-extract" "$dest/bin/"
cp -r "$src/ext/cuda/tensor/gstwsi_cuda" "$src/tests/gpu/torch_ctypes_check.py" \
   "$dest/python/"
cp -r "$src/python/gstwsi" "$src/examples/train_single_gpu.py" \
   "$src/tests/gpu/gstwsi_cuda_stream_check.py" "$src/tests/gpu/vit_sized.py" \
   "$src/tests/gpu/extract_check.py" "$dest/python/"
find "$dest/python" -name __pycache__ -prune -exec rm -rf {} +
cp "$src/tests/gpu/run.sh" "$dest/"

# PyGObject for the device's python3 (3.12), if built (tests/gpu/build-pygi.sh)
pygi_libs=()
if [ -d "$build/pygi-site/gi" ]; then
  cp -r "$build/pygi-site" "$dest/pygi"
  find "$dest/pygi" -name __pycache__ -prune -exec rm -rf {} +
  mkdir -p "$dest/typelibs"
  for t in GLib-2.0 GObject-2.0 Gio-2.0 GModule-2.0 Gst-1.0 GstBase-1.0 GstApp-1.0 \
           GstVideo-1.0; do
    cp "/usr/lib/x86_64-linux-gnu/girepository-1.0/$t.typelib" "$dest/typelibs/"
  done
  pygi_libs=("$dest"/pygi/gi/_gi*.so "$dest"/pygi/gi/overrides/_gi_gst*.so)
else
  echo "pack.sh: no $build/pygi-site (tests/gpu/build-pygi.sh): run.sh will skip" \
       "train_single_gpu.py" >&2
fi

# The JPEG decode experiment: tiles as our slides hold them, the CPU
# decoder (libjpeg-turbo), the GPU decoder's source
cp "$build/tests/gpu/jpeg-decode-cpu" "$dest/bin/"
cp "$src/tests/gpu/nvjpeg-decode.cu" "$src/tests/gpu/jpeg-tiles-file.h" "$dest/jpeg/"
"$build/tools/wsi-make-test-slides" -n 2 -W 9600 -H 7200 -t 240 --layout aperio \
   "$stage/slides" > /dev/null
"$build/tests/gpu/jpeg-tiles" "$dest/jpeg/generated.tiles" "$stage"/slides/*.svs
cmu="$src/../shared/slides/Aperio-CMU-1-Small-Region.svs"
if [ -f "$cmu" ]; then
  "$build/tests/gpu/jpeg-tiles" "$dest/jpeg/cmu1.tiles" "$cmu"
fi
rm -rf "$stage/slides"

for f in "$dest"/bin/* "$dest"/plugins/* "$dest"/sysplugins/* "$stage"/lib/* \
         "${pygi_libs[@]}"; do
  { ldd "$f" 2>/dev/null || true; } | awk '/=>/ && $3 ~ /^\// {print $3}'   # wsi-extract: a script
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
