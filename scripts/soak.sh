#!/usr/bin/env bash
# Memory soak of the standard pipeline under gst-launch-1.0 (issue 26, point 5).
#
#   scripts/soak.sh [--minutes N] [--interval S] [--warmup S] [--arena N]
#                   [--trim] [--threads N] [--tile-cache MB] [--queue N]
#                   [--floor MB] [--build-dir DIR] [--out FILE] SLIDES
#
# Streams SLIDES (a slide, folder or list) with cycle=true through the
# README's pipeline into fakesink for N minutes (default 60), samples the
# process's RSS, threads and open descriptors every S seconds (default 10)
# and prints them, then the wsistats tracer's summary (patches per second,
# peak RSS) and scripts/soak-verdict.py's slopes after the warm-up (default
# the first quarter, at least 60 s), per hour and per million patches, each
# with its standard error, of:
#   RSS;
#   bytes in use (glibc's mallinfo2 uordblks + hblkhd, sampled every 10 s
#     inside gst-launch by tests/launch/mallinfoloop.c, preloaded);
#   free bytes malloc keeps (fordblks) and the heap it holds from the kernel;
# and the verdict: GROWS (bytes in use grow: memory still allocated, a leak
# or an unbounded structure), RSS GROWS (in use flat: memory malloc keeps,
# fragmentation or arenas) or FLAT. A slope "grows" when it is above zero by
# more than two standard errors and above --floor MB per million patches
# (default 0.1, a tenth of a byte per patch). Per patch is the figure to
# compare between runs: a busy machine changes the rate, not the bytes per
# patch. Threads or descriptors that grow are a leak of ours whatever the
# allocator does.
#
# The same thing by other means: run it three ways and compare the slopes
# (one after the other on 2 cores; say so when you report figures taken on
# a busy machine):
#   scripts/soak.sh SLIDES                 glibc's defaults (8 x cores arenas)
#   scripts/soak.sh --arena 2 SLIDES       MALLOC_ARENA_MAX=2
#   scripts/soak.sh --trim SLIDES          malloc_trim(0) every 10 s
#                                          (tests/launch/trimloop.c)
# Growth that --arena or --trim removes was free memory held by malloc
# (fragmentation, per-thread arenas); growth that survives both is memory
# still allocated: a leak, or a cache still filling (patchreader's tile
# cache is bounded by tile-cache-size, 64 MiB by default; --tile-cache 0
# runs without it: what is left growing then is not the cache).
# Bytes in use also climb in steps until the queue between patchreader and
# patchbatch (--queue, 256 patches as in the README) has once been full:
# patchreader's buffer pool keeps every patch buffer it ever needed at once
# (docs/reliability.md, "What the quiet hour's drift was"); --queue 16
# reaches that bound in the first seconds.
# --out FILE also writes the samples as "seconds rss_kb threads fds" lines,
# FILE.heap the mallinfo2 samples ("pid seconds arena hblkhd uordblks
# fordblks") and FILE.jsonl the tracer's interval records (patch counts).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
builddir=$root/build
minutes=60 interval=10 warmup="" arena="" trim=0 threads=0 out="" location=""
floor=0.1 queue=256
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
    --floor) floor=$2; shift 2 ;;
    --queue) queue=$2; shift 2 ;;
    -h|--help) sed -n '2,47p' "$0"; exit 0 ;;
    *) location=$1; shift ;;
  esac
done
[ -n "$location" ] || { echo "usage: scripts/soak.sh [options] SLIDES" >&2; exit 2; }
total=$((minutes * 60))
[ -n "$warmup" ] || warmup=$(( total / 4 > 60 ? total / 4 : 60 ))

work=$(mktemp -d)
log=$work/log
samples_file=${out:-$work/rss}
heap_file=${out:+$out.heap}
heap_file=${heap_file:-$work/heap}
stats_file=${out:+$out.jsonl}
stats_file=${stats_file:-$work/jsonl}
: > "$samples_file"; : > "$heap_file"

preload=$builddir/tests/launch/libwsi-mallinfoloop.so
[ -f "$preload" ] || { echo "soak.sh: $preload is not built (ninja -C $builddir)" >&2; exit 1; }
env_args=(GST_PLUGIN_PATH="$builddir/ext/wsislide:$builddir/ext/opencv:$builddir/gst/wsipatch:$builddir/gst/wsitracer"
          GST_REGISTRY="$builddir/soak.registry"
          GST_TRACERS="wsistats(interval=10000,file=$stats_file)"
          WSI_MALLINFO_FILE="$heap_file" WSI_MALLINFO_SECONDS="$interval")
label="glibc defaults"
[ "$tile_cache" = 64 ] || label="tile cache $tile_cache MiB"
[ "$queue" = 256 ] || label="$label, queue of $queue patches"
if [ -n "$arena" ]; then env_args+=(MALLOC_ARENA_MAX="$arena"); label="$label, MALLOC_ARENA_MAX=$arena"; fi
if [ $trim -eq 1 ]; then
  shim=$builddir/tests/launch/libwsi-trimloop.so
  [ -f "$shim" ] || { echo "soak.sh: $shim is not built" >&2; exit 1; }
  preload="$preload:$shim"; label="$label, malloc_trim every 10 s"
fi
env_args+=(LD_PRELOAD="$preload")

env "${env_args[@]}" gst-launch-1.0 -q wsislidesrc location="$location" cycle=true ! \
  tissuemask ! queue max-size-buffers=4 ! \
  patchsampler patch-size=256 target-mpp=0.5 ! \
  patchinterleave pool-size=8 patches-per-visit=4 ! patchreader threads="$threads" \
  tile-cache-size="$tile_cache" ! \
  queue max-size-buffers="$queue" max-size-bytes=0 max-size-time=0 ! \
  patchbatch batch-size=64 ! fakesink sync=false >"$log" 2>&1 &
pid=$!
trap 'kill -INT $pid 2>/dev/null; rm -rf "$work"' EXIT
echo "soak: $label, $minutes min, pid $pid, sampling every $interval s"
start=$(date +%s)
while kill -0 $pid 2>/dev/null; do
  now=$(( $(date +%s) - start ))
  rss=$(awk '/^VmRSS:/ {print $2}' /proc/$pid/status 2>/dev/null)
  nthreads=$(awk '/^Threads:/ {print $2}' /proc/$pid/status 2>/dev/null)
  fds=$(ls /proc/$pid/fd 2>/dev/null | wc -l)
  [ -n "$rss" ] || break
  printf 't=%6d s  RSS %8.1f MB  threads %3d  fds %3d\n' "$now" \
    "$(echo "$rss" | awk '{print $1 / 1024}')" "$nthreads" "$fds"
  echo "$now $rss $nthreads $fds" >> "$samples_file"
  [ $now -ge $total ] && break
  sleep "$interval"
done
if ! kill -0 $pid 2>/dev/null; then
  echo "soak: gst-launch ended early:"; tail -20 "$log"; exit 1
fi
kill -INT $pid
wait $pid 2>/dev/null
grep -E "^(patchbatch|reader|process)" "$log" | head -5
awk -v warm="$warmup" '
  $1 >= warm { n++; if (n == 1) { th0 = $3; fd0 = $4 } th1 = $3; fd1 = $4 }
  END { if (n) printf "soak: threads %d -> %d, fds %d -> %d after the warm-up\n",
                     th0, th1, fd0, fd1 }' "$samples_file"
echo "soak ($label), slopes after $warmup s of warm-up:"
python3 "$root/scripts/soak-verdict.py" --warmup "$warmup" \
  --floor "$floor" --pid "$pid" "$samples_file" "$heap_file" "$stats_file"
