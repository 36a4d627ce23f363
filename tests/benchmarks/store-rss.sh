#!/usr/bin/env bash
# Memory while serving a patch store (issue 21): does patchstoresrc's
# resident memory stay bounded when the store grows? Extracts a raw store of
# PATCHES 256 px patches and one of 2 x PATCHES (about 0.2 MB a patch), serves
# each shuffled for 2 epochs into batches of 64, and samples the server's
# /proc/PID/status every 0.1 s:
#   RssAnon  the process's own memory (queues, batches, decoders): must not
#            grow with the store;
#   RssFile  store pages mapped into the process: clean page cache, which
#            the kernel reclaims under memory pressure (it is not the
#            process's to free), so it is bounded by the RAM, not the store.
# A store larger than RAM is served bounded when RssAnon stays flat and the
# kernel can reclaim RssFile. When `systemd-run --scope -p MemoryMax=` works
# (a systemd host), the large store is also served under a cap of half its
# size, which makes the kernel reclaim; elsewhere (containers without
# systemd or a delegated cgroup) that step is skipped and says why.
# With SQUEEZE=1 (a quiet machine without swap only: it takes most of the
# RAM), a second process first fills and holds all the memory available but
# half the large store's size, so the large store is twice the RAM left to
# the page cache; the store is then served under that real memory pressure
# and max RssFile shows the kernel reclaiming mapped store pages.
#
#   meson devenv -C build -w . tests/benchmarks/store-rss.sh [PATCHES (4096)]
#
# Needs about 3 x PATCHES x 0.2 MB of disk in $TMPDIR (2.4 GB for 4096);
# about 1-2 minutes on 2 idle cores.
set -euo pipefail
patches="${1:-4096}"
here="$(cd "$(dirname "$0")" && pwd)"
slide="${WSI_SLIDE:-$here/../../../shared/slides/Aperio-CMU-1-Small-Region.svs}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
[ -e "$slide" ] || { echo "no slide at $slide (set WSI_SLIDE)" >&2; exit 2; }

extract() { # N DIR
  gst-launch-1.0 -q wsislidesrc location="$slide" seed=7 cycle=true ! \
    tissuemask ! queue ! patchsampler patch-size=256 max-patches="$1" ! \
    patchinterleave ! patchreader threads=2 ! patchstoresink location="$2"
}

# Serves DIR and prints "max-RssAnon-kB max-RssFile-kB seconds"; $wrap
# (optional) runs the server under a memory cap.
serve() { # DIR
  local start=$SECONDS anon=0 file=0 a f pid
  ${wrap:-} gst-launch-1.0 -q patchstoresrc location="$1" order=shuffle \
    epochs=2 threads=2 ! queue ! patchbatch batch-size=64 ! \
    fakesink sync=false &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if [ -r "/proc/$pid/status" ]; then
      a=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
      f=$(awk '/^RssFile:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
      [ "${a:-0}" -gt "$anon" ] && anon=$a
      [ "${f:-0}" -gt "$file" ] && file=$f
    fi
    sleep 0.1
  done
  wait "$pid"
  echo "$anon $file $((SECONDS - start))"
}

mb() { echo $(( $1 / 1024 )); }

small="$out/small"; large="$out/large"
extract "$patches" "$small"
extract $((patches * 2)) "$large"
small_mb=$(du -sm "$small" | cut -f1); large_mb=$(du -sm "$large" | cut -f1)
echo "stores: $small_mb MB ($patches patches), $large_mb MB ($((patches * 2)) patches); RAM $(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) MB"

read -r a1 f1 s1 < <(serve "$small")
read -r a2 f2 s2 < <(serve "$large")
echo
echo "| store | MB | max RssAnon MB | max RssFile MB (mapped store pages) | s |"
echo "|---|---|---|---|---|"
echo "| small | $small_mb | $(mb "$a1") | $(mb "$f1") | $s1 |"
echo "| large | $large_mb | $(mb "$a2") | $(mb "$f2") | $s2 |"
awk -v a="$a1" -v b="$a2" 'BEGIN { printf "RssAnon large / small = %.2f (bounded: about 1; the store doubled)\n", b / a }'

if systemd-run --scope -q -p MemoryMax=64M true 2>/dev/null; then
  cap=$((large_mb / 2))
  wrap="systemd-run --scope -q -p MemoryMax=${cap}M"
  read -r a3 f3 s3 < <(serve "$large")
  echo "under a cgroup cap of $cap MB (half the store): max RssAnon $(mb "$a3") MB, max RssFile $(mb "$f3") MB, $s3 s, served to the end"
else
  echo "no memory cap: systemd-run --scope does not work here ($(systemd-run --scope -q true 2>&1 | head -1)); the cgroup step is skipped"
fi

if [ "${SQUEEZE:-0}" = 1 ]; then
  if [ "$(awk '/^SwapTotal:/ {print $2}' /proc/meminfo)" != 0 ]; then
    echo "SQUEEZE skipped: this machine has swap, a memory hog would be swapped out instead of shrinking the page cache"
    exit 0
  fi
  avail_mb=$(awk '/^MemAvailable:/ {print int($2/1024)}' /proc/meminfo)
  left_mb=$((large_mb / 2))
  hog_mb=$((avail_mb - left_mb))
  # Anonymous memory without swap cannot be reclaimed: touching it takes it
  # from the page cache for as long as the hog lives.
  /usr/bin/python3 -c '
import sys, time, mmap
n = int(sys.argv[1]) << 20
m = mmap.mmap(-1, n)
for off in range(0, n, 4096):
    m[off] = 1
print("ready", flush=True)
time.sleep(3600)' "$hog_mb" > "$out/hog.txt" &
  hog=$!
  trap 'kill $hog 2>/dev/null; rm -rf "$out"' EXIT
  until grep -q ready "$out/hog.txt" 2>/dev/null; do
    kill -0 "$hog" 2>/dev/null || { echo "SQUEEZE: the memory hog died"; exit 1; }
    sleep 0.5
  done
  now_mb=$(awk '/^MemAvailable:/ {print int($2/1024)}' /proc/meminfo)
  wrap=""
  read -r a4 f4 s4 < <(serve "$large")
  kill "$hog"; wait "$hog" 2>/dev/null || true
  echo "under memory pressure (a hog holds $hog_mb MB; MemAvailable $now_mb MB for a $large_mb MB store): max RssAnon $(mb "$a4") MB, max RssFile $(mb "$f4") MB, $s4 s, served to the end"
fi
