#!/usr/bin/env bash
# The GPU proof (issue 25), run on a GPU machine from the folder that
# tests/gpu/pack.sh made (it holds this script). Parts (PARTS, default all):
#   unit      unit tests that need a device (elements_wsicudaupload)
#   bench     the upload bandwidth bench (bench-cuda)
#   pipeline  patches/s into the GPU with the wsistats verdict, threads 4/8/16
#   torch     the PyTorch path through ctypes (torch_ctypes_check.py)
#   stream    gstwsi.BatchStream with cuda_upload=True against the CPU stream
#   train     examples/train_single_gpu.py, CPU batches and --cuda-upload:
#             steps/s, patches/s and the data-wait share per step
#   jpeg      the GPU JPEG decode experiment: nvjpeg-decode (built here with
#             nvcc) against jpeg-decode-cpu (libjpeg-turbo, 16 threads)
#   extract   wsi-extract (feature extraction, TRIDENT's H5 layout) on
#             EXTRACT_COUNT (16) generated dense Aperio-like slides of
#             32000x24000 (0.2527 um/px, 240 px tiles, 10 tissue regions;
#             about 1,500 tissue patches each) at 0.5 um/px, 224 px, batch
#             256: first ViT-B/16 fp32 on a small slide on the CPU and on
#             the GPU (wsicudaupload), features compared; then the loader
#             alone (--read-pixels, no model, EXTRACT_LOADER_THREADS 16)
#             for the patches/s ceiling; then ViT-B/16- and ViT-L/16-sized
#             randomly initialised models (vit_sized.py, plain torch) at fp16
#             and bf16 with patchreader threads = the cores. Per run:
#             patches/s, data-wait and model shares, peak RSS, peak CUDA
#             memory, whether wsicudaupload carried the batches, and the
#             H5 files checked (extract_check.py). About 3 minutes on an
#             H100. EXTRACT_DEVICE=cpu (with small EXTRACT_WIDTH/HEIGHT,
#             EXTRACT_MODELS=vit_ti16) runs every step but CUDA on a CPU;
#             with cuda and no CUDA device it is SKIPPED with that reason.
# stream, train and extract need PyGObject: the one pack.sh carries
# (pygi/, typelibs/) when it was built for this python3, else python3's
# own; extract also needs h5py (the GPU machines' python3 has it).
# Writes its logs to $OUT (default /tmp/wsi-gpu-out) and a summary on
# stdout. Needs nothing installed but the NVIDIA driver, python3 with torch
# and numpy (PYTHON names another interpreter), and nvcc for the jpeg part.
#
#   .gpu/run.sh                            # about 6-7 minutes on an H100
#   PARTS="train jpeg" .gpu/run.sh
#   PARTS=extract .gpu/run.sh              # the feature-extraction proof only
#
# Recipe for a lent GPU machine (no GStreamer, no network; python3 3.12 with
# torch, numpy and h5py), from the repository root here:
#   scripts/build.sh
#   # once, PyGObject for the device's CPython 3.12 (docs/cuda.md):
#   mkdir -p /tmp/pygobject-3.48.2     # PYGOBJECT_GIT: a clone of GNOME's pygobject
#   git -C PYGOBJECT_GIT archive 3.48.2 | tar -x -C /tmp/pygobject-3.48.2
#   tests/gpu/build-pygi.sh /tmp/pygobject-3.48.2 ~/.pyenv/versions/3.12.1/bin/python3 \
#     build/pygi-site
#   tests/gpu/pack.sh build .gpu           # ~50 MB; /.gpu/ is git-ignored
# then on the device, from the repository root, carrying .gpu:
#   PARTS=extract bash .gpu/run.sh         # about 3 minutes on an H100
# (the extract log and the summary table come back in $OUT/extract.log).
# Rehearsal on a machine without a GPU (every step but CUDA; minutes on
# 2 cores), from a copy of the packed folder:
#   PARTS=extract PYTHON=/usr/bin/python3 OUT=/tmp/x-out WORK=/tmp/x-work \
#   EXTRACT_DEVICE=cpu EXTRACT_COUNT=2 EXTRACT_WIDTH=4000 EXTRACT_HEIGHT=3000 \
#   EXTRACT_SMALL_WIDTH=2400 EXTRACT_SMALL_HEIGHT=1800 EXTRACT_MODELS=vit_ti16 \
#   EXTRACT_SMALL_MODEL=vit_ti16 EXTRACT_THREADS=2 EXTRACT_LOADER_THREADS=2 bash DIR/run.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/wsi-gpu-out}
work=${WORK:-/tmp/wsi-gpu}
mkdir -p "$out" "$work"
tar -C "$work" -xJf "$here/libs.tar.xz"
export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
have_stdcxx=no
for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /usr/lib64; do
  [ -e "$d/libstdc++.so.6" ] && have_stdcxx=yes
done
[ $have_stdcxx = yes ] || LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$work/libfallback"

export GST_PLUGIN_SYSTEM_PATH_1_0="$here/sysplugins" GST_PLUGIN_SYSTEM_PATH="$here/sysplugins"
export GST_PLUGIN_PATH_1_0="$here/plugins" GST_PLUGIN_PATH="$here/plugins"
export GST_REGISTRY_1_0="$work/registry.bin" GST_REGISTRY="$work/registry.bin"
export GST_PLUGIN_SCANNER_1_0="$here/bin/gst-plugin-scanner" GST_PLUGIN_SCANNER="$here/bin/gst-plugin-scanner"
export PATH="$here/bin:$PATH"
export GST_DEBUG="${GST_DEBUG:-*:ERROR}"

step() { echo; echo "=== $* ($(date -u +%T))"; }
parts=" ${PARTS:-unit bench pipeline torch stream train jpeg extract} "
want() { [[ $parts == *" $1 "* ]]; }
py=${PYTHON:-python3}
# PyGObject: pack.sh's when it was built for this interpreter, else its own
pysuffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
have_gi=no
if [ -n "$pysuffix" ] && [ -e "$here/pygi/gi/_gi$pysuffix" ]; then
  export GI_TYPELIB_PATH="$here/typelibs"
  pypath="$here/pygi:$here/python"
  have_gi=carried
else
  pypath="$here/python"
  "$py" -c 'import gi' 2>/dev/null && have_gi=own
fi
export GSTWSI_CUDA_LIBRARY="$work/lib/libgstwsicudatensor.so"

{
  step environment
  nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv 2>&1
  nvidia-smi 2>&1 | head -12
  grep PRETTY /etc/os-release; ldd --version | head -1; nproc
  gst-inspect-1.0 --version | head -2
  gst-inspect-1.0 wsicudaupload 2>&1 | grep -E "Factory Details|Long-name|Version" | head -3
  gst-inspect-1.0 cudaupload 2>&1 | grep -E "Long-name|Version|No such" | head -3
} > "$out/env.log" 2>&1
cat "$out/env.log"

if want unit; then
step "unit tests (elements_wsicudaupload, CK_FORK=no)"
CK_DEFAULT_TIMEOUT=60 timeout 150 elements_wsicudaupload > "$out/unit.log" 2>&1
echo "rc=$?" >> "$out/unit.log"
tail -12 "$out/unit.log"
fi

if want bench; then
step "upload bandwidth (bench-cuda)"
timeout 120 bench-cuda --batches 300 --rounds 5 > "$out/bench.log" 2>&1
echo "rc=$?" >> "$out/bench.log"
tail -9 "$out/bench.log"
fi

if want pipeline || want torch || want stream || want train; then
step "sample slides"
timeout 60 wsi-make-test-slides -n 4 -W 8192 -H 6144 "$work/slides" > /dev/null 2>&1
ls "$work/slides"
fi

if want pipeline; then
step "patches/s into the GPU, wsistats tracer (README pipeline, 4 slides x patches-per-slide)"
for threads in ${THREADS_LIST:-4 8 16}; do
  for tail in "queue max-size-buffers=2 max-size-bytes=0 max-size-time=0 ! wsicudaupload name=upload ! fakesink sync=false" \
              "queue max-size-buffers=2 max-size-bytes=0 max-size-time=0 ! cudaupload name=upload ! video/x-raw(memory:CUDAMemory) ! fakesink sync=false" \
              "fakesink sync=false"; do
    echo "--- threads=$threads sink: $tail"
    t0=$(date +%s.%N)
    GST_TRACERS=wsistats timeout 40 gst-launch-1.0 -q \
      wsislidesrc location="$work/slides/" ! tissuemask ! queue max-size-buffers=4 ! \
      patchsampler patch-size=256 target-mpp=0.5 patches-per-slide=${PATCHES_PER_SLIDE:-10000} ! \
      patchinterleave pool-size=8 patches-per-visit=4 ! patchreader threads=$threads ! \
      queue max-size-buffers=256 max-size-bytes=0 max-size-time=0 ! \
      patchbatch batch-size=64 ! $tail 2>&1
    echo "rc=$? wall=$(echo "$(date +%s.%N) - $t0" | bc 2>/dev/null || python3 -c "print($(date +%s.%N)-$t0)") s"
  done
done > "$out/pipeline.log" 2>&1
grep -E "^---|^rc=|ERROR|^patchreader0|^upload|^fakesink0|^patchbatch0|^verdict|^sink" "$out/pipeline.log"
fi

if want torch; then
step "PyTorch through gstwsi_cuda (ctypes, no gi)"
PYTHONUNBUFFERED=1 PYTHONPATH="$here/python" \
  timeout 150 python3 "$here/python/torch_ctypes_check.py" "$work/slides" > "$out/torch.log" 2>&1
echo "rc=$?" >> "$out/torch.log"
cat "$out/torch.log" | tail -25
fi

if want stream || want train || want extract; then
  if [ $have_gi = no ]; then
    echo "SKIP: stream, train, extract: no PyGObject for $("$py" -V 2>&1) (pack.sh carries" \
         "one where tests/gpu/build-pygi.sh built it for this interpreter)"
    parts=${parts/ stream / }; parts=${parts/ train / }; parts=${parts/ extract / }
  else
    step "PyGObject ($have_gi) for $("$py" -V 2>&1)"
    PYTHONPATH="$pypath" "$py" -c "import gi; gi.require_version('Gst', '1.0'); \
from gi.repository import Gst; Gst.init(None); print('gi', gi.__version__, Gst.version_string())" 2>&1
  fi
fi

if want stream; then
step "gstwsi.BatchStream, cuda_upload=True, against the CPU stream"
PYTHONUNBUFFERED=1 PYTHONPATH="$pypath" timeout 120 \
  "$py" "$here/python/gstwsi_cuda_stream_check.py" "$work/slides" > "$out/stream.log" 2>&1
echo "rc=$?" >> "$out/stream.log"
tail -8 "$out/stream.log"
fi

if want train; then
step "examples/train_single_gpu.py: CPU batches, then --cuda-upload (threads ${TRAIN_THREADS:-16})"
for mode in "" "--cuda-upload"; do
  echo "--- train_single_gpu.py ${mode:-(CPU batches)}"
  PYTHONUNBUFFERED=1 PYTHONPATH="$pypath" timeout 150 "$py" "$here/python/train_single_gpu.py" \
    --slides "$work/slides" --steps ${TRAIN_STEPS:-600} --log-every ${TRAIN_LOG_EVERY:-100} \
    --batch-size 64 --patch-size 256 --patches-per-slide 10000 \
    --threads ${TRAIN_THREADS:-16} $mode 2>&1
  echo "rc=$?"
done > "$out/train.log" 2>&1
python3 - "$out/train.log" <<'PY'
import json, sys
mode = None
for line in open(sys.argv[1]):
    if line.startswith("---"):
        mode = line[4:].strip(); print(line.rstrip())
    elif line.startswith("{"):
        d = json.loads(line)
        print(f"  step {d['train/step']:5d}: {d['data/batches_per_s']:6.1f} steps/s "
              f"{d['data/patches_per_s']:8.0f} patches/s  data-wait share "
              f"{100 * d['data/wait_share']:5.1f} %  wait p50/p95 {d['data/wait_ms_p50']:.2f}/"
              f"{d['data/wait_ms_p95']:.2f} ms  step p50 {d['data/step_ms_p50']:.2f} ms")
    elif line.startswith(("done:", "rc=", "Traceback")) or "Error" in line:
        print("  " + line.rstrip())
PY
fi

if want jpeg; then
step "JPEG tiles: GPU batched decode (nvJPEG) vs libjpeg-turbo on $(nproc) threads"
{
  nvcc --version | tail -2
  # the toolkit's own copy first, then pip's (nvidia-*, torchvision's bundled one)
  hdr=$( (find /usr/local/cuda*/ /usr/include -name nvjpeg.h; find /opt -name nvjpeg.h) \
         2>/dev/null | head -1)
  lib=$( (find /usr/local/cuda*/ -name 'libnvjpeg.so*'; find /opt /usr/lib -name 'libnvjpeg*.so*') \
         2>/dev/null | head -1)
  echo "nvjpeg.h: ${hdr:-none}; libnvjpeg: ${lib:-none}; all copies:"
  find /usr/local /usr/lib /opt -name 'libnvjpeg*.so*' 2>/dev/null
  if [ -n "$lib" ]; then
    inc=()
    [ -n "$hdr" ] && inc=(-I"$(dirname "$hdr")")
    libdir=$(dirname "$lib")
    link=(-Xlinker "$lib")          # nvcc takes no versioned .so as an input
    [ -e "$libdir/libnvjpeg.so" ] && link=(-L"$libdir" -lnvjpeg)
    nvcc -O2 -std=c++17 "${inc[@]}" -o "$work/nvjpeg-decode" "$here/jpeg/nvjpeg-decode.cu" \
      "${link[@]}" -lcudart -Xlinker -rpath="$libdir" && echo "nvjpeg-decode built"
  fi
  for set in generated:${JPEG_ROUNDS_GEN:-8} cmu1:${JPEG_ROUNDS_CMU:-100}; do
    name=${set%%:*} rounds=${set##*:}
    tiles="$here/jpeg/$name.tiles"
    [ -f "$tiles" ] || continue
    echo "--- $name tiles"
    timeout 120 jpeg-decode-cpu "$tiles" "$(nproc)" $((rounds * 2)) "$work/$name.rgb" 16
    if [ -x "$work/nvjpeg-decode" ]; then
      timeout 150 "$work/nvjpeg-decode" "$tiles" "$rounds" ${JPEG_BATCH:-256} "$work/$name.rgb"
      echo "rc=$?"
    fi
  done
  echo "--- torchvision.io.decode_jpeg on cuda (batched nvJPEG inside torchvision), same tiles"
  PYTHONUNBUFFERED=1 timeout 120 python3 - "$here/jpeg" <<'PY'
import struct, sys, time
import torch, torchvision
from torchvision.io import decode_jpeg
for name, rounds in (("generated", 8), ("cmu1", 100)):
    blob = open(f"{sys.argv[1]}/{name}.tiles", "rb").read()
    count, at, tiles = struct.unpack_from("<I", blob, 8)[0], 12, []
    for _ in range(count):
        n = struct.unpack_from("<I", blob, at)[0]
        tiles.append(torch.frombuffer(bytearray(blob[at + 4:at + 4 + n]), dtype=torch.uint8))
        at += 4 + n
    batches = [tiles[i:i + 256] for i in range(0, len(tiles), 256)]
    decode_jpeg(batches[0], device="cuda"); torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(rounds):
        for b in batches:
            decode_jpeg(b, device="cuda")
    torch.cuda.synchronize()
    s = time.perf_counter() - t0
    print(f"torchvision {torchvision.__version__} decode_jpeg cuda {name}: "
          f"{count * rounds} tiles {s:.3f} s {count * rounds / s:.0f} tiles/s")
PY
  echo "rc=$?"
} > "$out/jpeg.log" 2>&1
grep -v ": tile [0-9]* mean" "$out/jpeg.log"
fi

if want extract; then
xdev=${EXTRACT_DEVICE:-cuda}
xthreads=${EXTRACT_THREADS:-$(nproc)}
step "wsi-extract at 0.5 um/px, 224 px, batch ${EXTRACT_BATCH:-256}, device $xdev, threads $xthreads"
{
  why=
  "$py" -c 'import torch, numpy' 2>/dev/null || why="$py cannot import torch and numpy"
  [ -z "$why" ] && { "$py" -c 'import h5py' 2>/dev/null \
    || why="$py has no h5py (wsi-extract writes TRIDENT's H5 files with it)"; }
  if [ -z "$why" ] && [ "${xdev%%:*}" = cuda ]; then
    "$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null \
      || why="no CUDA device (torch.cuda.is_available() is False; EXTRACT_DEVICE=cpu runs it on the CPU)"
  fi
  if [ -n "$why" ]; then
    echo "SKIP: extract: $why"
  else
    "$py" -c 'import sys, torch, numpy, h5py; print("python", sys.version.split()[0], "torch",
torch.__version__, "numpy", numpy.__version__, "h5py", h5py.__version__)'
    export PYTHONUNBUFFERED=1 PYTHONPATH="$pypath"
    check() { timeout "${EXTRACT_TIMEOUT:-300}" "$py" "$here/python/extract_check.py" "$@"; }
    tool=$here/bin/wsi-extract
    gen=(--blobs 10 --levels 3 --layout aperio --tile 240 --mpp 0.2527 -j "$(nproc)")
    grid=(--mpp 0.5 --patch-size 224 --batch-size "${EXTRACT_BATCH:-256}" --no-visualization)
    rm -rf "$work/xslides" "$work/xsmall" "$work"/xout-*
    t0=$(date +%s)
    wsi-make-test-slides "${gen[@]}" --count "${EXTRACT_COUNT:-16}" \
      --width "${EXTRACT_WIDTH:-32000}" --height "${EXTRACT_HEIGHT:-24000}" "$work/xslides" \
      | tail -2
    wsi-make-test-slides "${gen[@]}" --count 1 --seed 101 --width "${EXTRACT_SMALL_WIDTH:-6000}" \
      --height "${EXTRACT_SMALL_HEIGHT:-4500}" "$work/xsmall" | tail -1
    echo "slides made in $(( $(date +%s) - t0 )) s; $(du -sh "$work/xslides" | cut -f1)"
    small=${EXTRACT_SMALL_MODEL:-vit_b16}
    echo "--- $small fp32 on a small slide: CPU, then $xdev; features compared"
    check "agree cpu" "$tool" -- "$work/xsmall" "$work/xout-agree-cpu" "${grid[@]}" \
      --model "vit_sized:$small" --device cpu --threads "$xthreads"
    check "agree $xdev" "$tool" -- "$work/xsmall" "$work/xout-agree-dev" "${grid[@]}" \
      --model "vit_sized:$small" --device "$xdev" --threads "$xthreads"
    "$py" "$here/python/extract_check.py" --compare "$work"/xout-agree-cpu/*_overlap \
      "${small}_random" "$work"/xout-agree-dev/*_overlap "${small}_random"
    echo "--- the loader alone (--read-pixels, no model), threads ${EXTRACT_LOADER_THREADS:-16}"
    check "loader" "$tool" -- "$work/xslides" "$work/xout-loader" "${grid[@]}" --read-pixels \
      --threads "${EXTRACT_LOADER_THREADS:-16}"
    if [ "${xdev%%:*}" = cuda ]; then precs=${EXTRACT_PRECISIONS:-fp16 bf16}
    else precs=${EXTRACT_PRECISIONS:-fp32}; fi
    for model in ${EXTRACT_MODELS:-vit_b16 vit_l16}; do
      for prec in $precs; do
        echo "--- $model $prec"
        check "$model $prec" "$tool" -- "$work/xslides" "$work/xout-$model-$prec" "${grid[@]}" \
          --model "vit_sized:$model" --device "$xdev" --precision "$prec" --threads "$xthreads"
        rm -rf "$work/xout-$model-$prec"
      done
    done
  fi
} > "$out/extract.log" 2>&1
grep -v '^RESULT ' "$out/extract.log"
"$py" - "$out/extract.log" <<'PY'
import json, sys
rows = [json.loads(l[7:]) for l in open(sys.argv[1]) if l.startswith("RESULT ")]
if rows:
    print("| run | slides | patches | patches/s | data wait | model | peak RSS MB "
          "| CUDA peak MB | upload | files |")
    print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    rate = r["patches_per_s"]
    rate = f"{rate:,.0f}" if rate >= 100 else f"{rate:.3g}"
    print(f"| {r['label']} | {r['slides']} | {r['patches']} | {rate} | "
          f"{100 * r['wait_share']:.1f} % | {100 * r['model_share']:.1f} % | "
          f"{r['peak_rss_mb']} | {r['cuda_peak_mb'] if r['cuda_peak_mb'] is not None else '-'}"
          f" | {r['upload'] or '-'} | {'OK' if r['files_ok'] else 'WRONG'} |")
PY
fi
