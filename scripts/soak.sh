#!/usr/bin/env bash
# Memory soak of the standard pipeline under gst-launch-1.0 (issue 26, point 5).
#
#   scripts/soak.sh [--minutes N] [--interval S] [--warmup S] [--arena N]
#                   [--trim] [--threads N] [--tile-cache MB] [--build-dir DIR]
#                   [--out FILE] SLIDES
#
# Streams SLIDES (a slide, folder or list) with cycle=true through the
# README's pipeline into fakesink for N minutes (default 60), samples the
# process's RSS, threads and open descriptors every S seconds (default 10)
# and prints them, then the RSS slope after the warm-up (default the first
# quarter, at least 60 s) in MB per hour, with the wsistats tracer's summary
# (patches per second, peak RSS). Threads or descriptors that grow are a
# leak of ours whatever the allocator does.
#
# Telling a leak from allocator fragmentation: run it three ways and
# compare the slopes (the three may run at once on a machine with cores to
# spare; say so when you report figures taken on a busy machine):
#   scripts/soak.sh SLIDES                 glibc's defaults (8 x cores arenas)
#   scripts/soak.sh --arena 2 SLIDES       MALLOC_ARENA_MAX=2
#   scripts/soak.sh --trim SLIDES          malloc_trim(0) every 10 s
#                                          (tests/launch/trimloop.c)
# Growth that --arena or --trim removes was free memory held by malloc
# (fragmentation, per-thread arenas); growth that survives both is memory
# still allocated: a leak, or a cache still filling (patchreader's tile
# cache is bounded by tile-cache-size, 64 MiB by default; --tile-cache 0
# runs without it: what is left growing then is not the cache).
# --out FILE also writes the samples as "seconds rss_kb threads fds" lines.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
builddir=$root/build
minutes=60 interval=10 warmup="" arena="" trim=0 threads=0 out="" location=""
tile_cache=64
while [ $# -gt 0 ]; do
  case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --arena) arena=$2; shift 2 ;;
    --trim) trim=1; shift ;;
    --threads) threads=$2; shift 2 ;;
    --tile-cache) tile_cache=$2; shift 2 ;;
    --build-dir) builddir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) location=$1; shift ;;
  esac
done
[ -n "$location" ] || { echo "usage: scripts/soak.sh [options] SLIDES" >&2; exit 2; }
total=$((minutes * 60))
[ -n "$warmup" ] || warmup=$(( total / 4 > 60 ? total / 4 : 60 ))

env_args=(GST_PLUGIN_PATH="$builddir/ext/wsislide:$builddir/ext/opencv:$builddir/gst/wsipatch:$builddir/gst/wsitracer"
          GST_REGISTRY="$builddir/soak.registry" GST_TRACERS=wsistats)
label="glibc defaults"
[ "$tile_cache" = 64 ] || label="tile cache $tile_cache MiB"
if [ -n "$arena" ]; then env_args+=(MALLOC_ARENA_MAX="$arena"); label="$label, MALLOC_ARENA_MAX=$arena"; fi
if [ $trim -eq 1 ]; then
  shim=$builddir/tests/launch/libwsi-trimloop.so
  [ -f "$shim" ] || { echo "soak.sh: $shim is not built" >&2; exit 1; }
  env_args+=(LD_PRELOAD="$shim"); label="$label, malloc_trim every 10 s"
fi

log=$(mktemp)
env "${env_args[@]}" gst-launch-1.0 -q wsislidesrc location="$location" cycle=true ! \
  tissuemask ! queue max-size-buffers=4 ! \
  patchsampler patch-size=256 target-mpp=0.5 ! \
  patchinterleave pool-size=8 patches-per-visit=4 ! patchreader threads="$threads" \
  tile-cache-size="$tile_cache" ! \
  queue max-size-buffers=256 max-size-bytes=0 max-size-time=0 ! \
  patchbatch batch-size=64 ! fakesink sync=false >"$log" 2>&1 &
pid=$!
trap 'kill -INT $pid 2>/dev/null; rm -f "$log"' EXIT
echo "soak: $label, $minutes min, pid $pid, sampling every $interval s"
[ -n "$out" ] && : > "$out"
start=$(date +%s)
samples=()
while kill -0 $pid 2>/dev/null; do
  now=$(( $(date +%s) - start ))
  rss=$(awk '/^VmRSS:/ {print $2}' /proc/$pid/status 2>/dev/null)
  nthreads=$(awk '/^Threads:/ {print $2}' /proc/$pid/status 2>/dev/null)
  fds=$(ls /proc/$pid/fd 2>/dev/null | wc -l)
  [ -n "$rss" ] || break
  printf 't=%6d s  RSS %8.1f MB  threads %3d  fds %3d\n' "$now" \
    "$(echo "$rss" | awk '{print $1 / 1024}')" "$nthreads" "$fds"
  samples+=("$now $rss $nthreads $fds")
  [ -n "$out" ] && echo "$now $rss $nthreads $fds" >> "$out"
  [ $now -ge $total ] && break
  sleep "$interval"
done
if ! kill -0 $pid 2>/dev/null; then
  echo "soak: gst-launch ended early:"; tail -20 "$log"; exit 1
fi
kill -INT $pid
wait $pid 2>/dev/null
grep -E "^(patchbatch|reader|process)" "$log" | head -5
printf '%s\n' "${samples[@]}" | awk -v warm="$warmup" -v label="$label" '
  $1 >= warm { n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2;
               if (n == 1) { t0 = $1; r0 = $2; th0 = $3; fd0 = $4 }
               t1 = $1; r1 = $2; th1 = $3; fd1 = $4 }
  END {
    if (n < 3) { print "soak: too few samples after the warm-up"; exit 1 }
    slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)      # kB per second
    printf "soak (%s): after %d s of warm-up, RSS %.1f -> %.1f MB over %d s; " \
      "slope %+.2f MB/h; threads %d -> %d, fds %d -> %d\n", label, warm,
      r0 / 1024, r1 / 1024, t1 - t0, slope * 3600 / 1024, th0, th1, fd0, fd1
  }'
