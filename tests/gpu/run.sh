#!/usr/bin/env bash
# The GPU proof (issue 25), run on a GPU machine from the folder that
# tests/gpu/pack.sh made (it holds this script): unit tests that need a
# device, the upload bandwidth bench, patches/s into the GPU with the
# wsistats verdict at patchreader threads=4/8/16, and the PyTorch path
# (tests/gpu/torch_ctypes_check.py). Writes its logs to $OUT (default
# /tmp/wsi-gpu-out) and a summary on stdout. Needs nothing installed but the
# NVIDIA driver, and python3 with torch(vision) for the last step.
#
#   .gpu/run.sh                            # about 2-3 minutes on an H100
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/wsi-gpu-out}
work=/tmp/wsi-gpu
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

step "unit tests (elements_wsicudaupload, CK_FORK=no)"
CK_DEFAULT_TIMEOUT=60 timeout 150 elements_wsicudaupload > "$out/unit.log" 2>&1
echo "rc=$?" >> "$out/unit.log"
tail -12 "$out/unit.log"

step "upload bandwidth (bench-cuda)"
timeout 120 bench-cuda --batches 300 --rounds 5 > "$out/bench.log" 2>&1
echo "rc=$?" >> "$out/bench.log"
tail -9 "$out/bench.log"

step "sample slides"
timeout 60 wsi-make-test-slides -n 4 -W 8192 -H 6144 "$work/slides" > /dev/null 2>&1
ls "$work/slides"

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

step "PyTorch through gstwsi_cuda (ctypes, no gi)"
PYTHONUNBUFFERED=1 PYTHONPATH="$here/python" \
  GSTWSI_CUDA_LIBRARY="$work/lib/libgstwsicudatensor.so" \
  timeout 150 python3 "$here/python/torch_ctypes_check.py" "$work/slides" > "$out/torch.log" 2>&1
echo "rc=$?" >> "$out/torch.log"
cat "$out/torch.log" | tail -25
