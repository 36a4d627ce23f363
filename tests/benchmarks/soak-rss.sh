#!/usr/bin/env bash
# Soak: streams the standard pipeline for SECONDS (default 600) and samples
# the process's RSS every 5 s; prints the samples and the RSS slope over the
# second half of the run (MB per minute; ~0 when nothing leaks or grows).
# TILE_CACHE=MB sets patchreader's tile-cache-size (its budget is memory the
# run may legitimately grow into as the cache fills).
# With STALL=S the consumer stops pulling for S seconds halfway (an
# evaluation step, a checkpoint): the RSS must stay flat through the pause.
#
#   meson devenv -C build -w . tests/benchmarks/soak-rss.sh sample-slides
#   STALL=30 SECONDS_TOTAL=120 meson devenv -C build -w . tests/benchmarks/soak-rss.sh sample-slides
set -euo pipefail
location="${1:-sample-slides}"
total="${SECONDS_TOTAL:-600}"
stall="${STALL:-0}"
py=/usr/bin/python3

exec "$py" - "$location" "$total" "$stall" "${TILE_CACHE:-}" <<'EOF'
import os, sys, time, threading
sys.path.insert(0, os.path.join(os.getcwd(), "python"))
import gstwsi

location, total, stall = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
cache = sys.argv[4] if len(sys.argv) > 4 else ""

def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0

samples = []
stop = threading.Event()

def sampler():
    start = time.monotonic()
    while not stop.wait(5.0):
        samples.append((time.monotonic() - start, rss_mb()))

description = gstwsi.standard_pipeline(location, batch_size=64, patch_size=256,
                                       target_mpp=0.5, threads=0, cycle=True)
if cache:
    description = description.replace("patchreader ", f"patchreader tile-cache-size={cache} ")
threading.Thread(target=sampler, daemon=True).start()
start = time.monotonic()
patches = 0
paused = False
with gstwsi.BatchStream(description, torch=False, copy=True) as stream:
    for batch in stream:
        patches += len(batch)
        elapsed = time.monotonic() - start
        if stall and not paused and elapsed > total / 2:
            paused = True
            print(f"consumer pauses {stall:.0f} s at {elapsed:.0f} s, RSS {rss_mb():.0f} MB",
                  flush=True)
            time.sleep(stall)
            print(f"consumer resumes, RSS {rss_mb():.0f} MB", flush=True)
        if elapsed > total:
            break
stop.set()
half = [s for s in samples if s[0] >= total / 2]
for t, r in samples:
    print(f"t={t:6.0f} s  RSS {r:7.1f} MB")
if len(half) >= 2:
    n = len(half)
    mt = sum(t for t, _ in half) / n
    mr = sum(r for _, r in half) / n
    slope = sum((t - mt) * (r - mr) for t, r in half) / max(
        sum((t - mt) ** 2 for t, _ in half), 1e-9)
    print(f"patches {patches}, {patches / (time.monotonic() - start):.0f}/s; "
          f"peak RSS {max(r for _, r in samples):.0f} MB; "
          f"slope over the second half {slope * 60:+.2f} MB/min")
EOF
