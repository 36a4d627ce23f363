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
# and, for the stain, OME and grid-order readers:
#   reinhard, macenko, vahadane
#              stainestimate + stainnorm, each method onto a reference TIFF
#              (macenko: estimate=patch and randstain drawing too)
#   ometiff    an OME-TIFF (SubIFD pyramid, zlib + predictor tiles)
#   omezarr    the same levels as OME-Zarr (NGFF 0.4, Zarr v2, zstd chunks)
#   grid       patchsampler mode=grid into patchreader grid-order=true
# Each prints its batch count (fakesink's last-message; expected 24, 3, 6,
# 2, then 4 each), valgrind's error summary and its definite losses; the
# logs stay in the work folder it names. Slides are generated (seconds);
# the runs take several minutes on 2 cores. Naming runs (after BUILD) runs
# only those.
#
#   scripts/valgrind-pipelines.sh [BUILD [RUN...]]     (default: build, all)
# Environment: DRY=1 runs the pipelines without valgrind (to check they
# deliver), WORK=DIR keeps the files there (default: a new temporary
# folder, kept).
set -uo pipefail
build=${1:-build}
[ $# -gt 0 ] && shift
only=" $* "
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
  [ "$only" = "  " ] || [[ "$only" == *" $name "* ]] || return 0
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
  [ "$only" = "  " ] || [[ "$only" == *" storeread "* ]] \
    || [[ "$only" == *" rawstore "* ]] || return 0
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

# The stain elements: a reference image with H&E-like pixels (TIFF, read
# through decodebin), each method.
/usr/bin/python3 - "$w" <<'PY' || echo "valgrind-pipelines: OME slides not made (python3-tifffile, python3-numcodecs)"
import json, os, sys
import numpy as np, tifffile
w = sys.argv[1]
rng = np.random.default_rng(5)
# reference: pink/purple stain mixture
h = np.array([0.65, 0.70, 0.29]); e = np.array([0.07, 0.99, 0.11])
c = rng.gamma(2.0, 0.4, (128, 128, 2))
od = c[..., :1] * h + c[..., 1:] * e
tifffile.imwrite(os.path.join(w, 'ref.tif'),
                 np.clip(240 * np.exp(-od), 0, 255).astype(np.uint8), photometric='rgb')
# a 3-level slide: tissue blobs on white, as OME-TIFF (SubIFDs) and OME-Zarr
H, W = 2048, 3072
yy, xx = np.mgrid[0:H, 0:W]
tissue = (np.sin(yy / 97.0) + np.cos(xx / 131.0)) > 0.3
c = rng.gamma(2.0, 0.4, (H, W, 2)) * tissue[..., None]
od = c[..., :1] * h + c[..., 1:] * e
base = np.clip(240 * np.exp(-od), 0, 255).astype(np.uint8)
levels = [base, base[::2, ::2].copy(), base[::4, ::4].copy()]
mpp = 0.25
os.makedirs(os.path.join(w, 'ome'), exist_ok=True)
with tifffile.TiffWriter(os.path.join(w, 'ome', 'slide.ome.tif'), ome=True) as tw:
    tw.write(levels[0], tile=(256, 256), photometric='rgb', compression='zlib',
             predictor=True, subifds=2,
             metadata={'PhysicalSizeX': mpp, 'PhysicalSizeY': mpp})
    for a in levels[1:]:
        tw.write(a, tile=(256, 256), photometric='rgb', compression='zlib',
                 predictor=True, subfiletype=1, metadata=None)
import numcodecs
codec = numcodecs.Zstd(level=3)
store = os.path.join(w, 'zarr', 'slide.zarr')
for i, a in enumerate(levels):
    d = os.path.join(store, str(i)); os.makedirs(d, exist_ok=True)
    json.dump({'zarr_format': 2, 'shape': list(a.shape), 'chunks': [256, 256, 3],
               'dtype': '|u1', 'compressor': codec.get_config(), 'fill_value': 0,
               'order': 'C', 'filters': None}, open(os.path.join(d, '.zarray'), 'w'))
    for y in range(0, a.shape[0], 256):
        for x in range(0, a.shape[1], 256):
            t = np.zeros((256, 256, 3), np.uint8); p = a[y:y + 256, x:x + 256]
            t[:p.shape[0], :p.shape[1]] = p
            open(os.path.join(d, '%d.%d.0' % (y // 256, x // 256)), 'wb').write(
                bytes(codec.encode(t.tobytes())))
axes = [{'name': 'y', 'type': 'space', 'unit': 'micrometer'},
        {'name': 'x', 'type': 'space', 'unit': 'micrometer'}, {'name': 'c', 'type': 'channel'}]
ds = [{'path': str(i), 'coordinateTransformations': [{'type': 'scale',
       'scale': [mpp * 2 ** i, mpp * 2 ** i, 1]}]} for i in range(3)]
json.dump({'multiscales': [{'version': '0.4', 'axes': axes, 'datasets': ds}]},
          open(os.path.join(store, '.zattrs'), 'w'))
PY
# stain SRC METHOD EXTRA...: 4 batches of 8 patches normalised
stain() {
  local name=$1 method=$2; shift 2
  run "$name" gst-launch-1.0 -v wsislidesrc location="$w/slides" seed=3 \
    ! tissuemask ! stainestimate ! queue ! patchsampler patch-size=128 \
    target-mpp=0.5 patches-per-slide=8 ! patchinterleave \
    ! patchreader threads=2 ! stainnorm method="$method" \
    reference="$w/ref.tif" threads=2 "$@" ! patchbatch batch-size=8 \
    ! fakesink silent=false num-buffers=4
}
stain reinhard reinhard
stain macenko macenko estimate=patch randstain-probability=0.5
stain vahadane vahadane
# ome SRC: 4 batches of 8 patches of one OME slide
ome() {
  run "$1" gst-launch-1.0 -v wsislidesrc location="$2" seed=3 ! tissuemask \
    ! queue ! patchsampler patch-size=128 target-mpp=0.5 patches-per-slide=32 \
    ! patchinterleave ! patchreader threads=2 ! patchbatch batch-size=8 \
    ! fakesink silent=false num-buffers=4
}
ome ometiff "$w/ome"
ome omezarr "$w/zarr"
run grid gst-launch-1.0 -v wsislidesrc location="$w/s40x" seed=3 ! tissuemask \
  ! queue ! patchsampler mode=grid patch-size=224 target-mpp=0.5 \
  patches-per-slide=32 ! patchinterleave ! patchreader threads=2 \
  grid-order=true ! patchbatch batch-size=8 ! fakesink silent=false \
  num-buffers=4
