#!/usr/bin/env python3
"""Slopes and verdict of a memory soak (scripts/soak.sh calls it).

    soak-verdict.py --warmup S [--floor MB] [--pid PID]
                    RSS_SAMPLES MALLINFO_SAMPLES TRACER_JSONL

RSS_SAMPLES: "seconds rss_kb threads fds" lines (soak.sh's sampler).
MALLINFO_SAMPLES: "pid seconds arena hblkhd uordblks fordblks" lines
(tests/launch/mallinfoloop.c, preloaded into gst-launch); only the lines
of --pid are read (a wrapper that inherits the preload samples itself).
TRACER_JSONL: the wsistats tracer's JSON Lines (file=, interval=...): the
cumulative patch count of patchbatch at each interval, so that memory can
be regressed against patches as well as against time (a busy machine
changes the rate, not the bytes per patch).

For each series after the warm-up it fits a least-squares line and prints
the slope per hour and per million patches with its standard error. The
samples are autocorrelated (the allocator and caches move in steps), so
the standard error is computed with the effective number of samples
n (1 - r1) / (1 + r1), r1 the lag-1 autocorrelation of the residuals.

Verdict per series: "grows" when the slope per million patches is above
zero by more than two standard errors AND above the floor (default
0.1 MB per million patches, 0.1 byte per patch: about 100 MB a week at
1,700 patches/s); otherwise "flat". What the two series say together:
  bytes in use grow           -> memory still allocated: a leak or an
                                 unbounded structure (ours or a library's)
  in use flat, RSS grows      -> memory malloc keeps: fragmentation, arenas
  both flat                   -> flat within noise
It also lists the steps of bytes in use (persistent rises of more than
1.5 MB): a buffer pool reaching a new high-water mark (patchreader's, up
to the queue after it; docs/reliability.md) rises in steps of whole
buffers, a leak per patch in a slope.
"""

import argparse
import json
import math
import sys


def read_rss(path):
    """(seconds, MB) from soak.sh's "seconds rss_kb threads fds" lines."""
    samples = []
    with open(path) as lines:
        for line in lines:
            fields = line.split()
            if len(fields) >= 2:
                samples.append((float(fields[0]), int(fields[1]) / 1024.0))
    return samples


def read_mallinfo(path, pid):
    """{name: [(seconds, MB)]} for the process pid (or the longest series)."""
    by_pid = {}
    with open(path) as lines:
        for line in lines:
            fields = line.split()
            if len(fields) != 6:
                continue
            by_pid.setdefault(fields[0], []).append([float(f) for f in fields[1:]])
    if not by_pid:
        return {}
    rows = by_pid.get(str(pid)) if pid else None
    if rows is None:
        rows = max(by_pid.values(), key=len)
    mb = 1024.0 * 1024.0
    return {
        "in use (uordblks+hblkhd)": [(r[0], (r[3] + r[2]) / mb) for r in rows],
        "free kept (fordblks)": [(r[0], r[4] / mb) for r in rows],
        "heap from kernel (arena+hblkhd)": [(r[0], (r[1] + r[2]) / mb) for r in rows],
    }


def read_patch_counts(path):
    """[(seconds, cumulative patches out of patchbatch)], starting at (0, 0)."""
    counts = [(0.0, 0.0)]
    with open(path) as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            for element in record.get("elements", []):
                if element.get("factory") == "patchbatch":
                    counts.append((float(record["time-s"]),
                                   float(element.get("patches-out", 0))))
    return counts


def patches_at(counts, seconds):
    """Cumulative patches at a time, linear between the tracer's intervals."""
    for (t0, p0), (t1, p1) in zip(counts, counts[1:]):
        if t0 <= seconds <= t1 and t1 > t0:
            return p0 + (p1 - p0) * (seconds - t0) / (t1 - t0)
    return None


def fit(xs, ys):
    """Least-squares slope and its autocorrelation-corrected standard error."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if n < 4 or sxx == 0:
        return None
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    residuals = [y - my - slope * (x - mx) for x, y in zip(xs, ys)]
    ssr = sum(r * r for r in residuals)
    r1 = 0.0
    if ssr > 0:
        r1 = sum(a * b for a, b in zip(residuals, residuals[1:])) / ssr
    r1 = min(max(r1, 0.0), 0.95)
    n_eff = n * (1 - r1) / (1 + r1)
    se = math.sqrt(ssr / (n - 2) / sxx * n / n_eff)
    return slope, se


def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def steps(samples, rise=1.5, width=3):
    """Persistent rises: (seconds, MB) where the median of the next `width`
    samples exceeds the median of the previous `width` by more than `rise`
    MB, the largest of its neighbourhood. A buffer pool reaching a new
    high-water mark moves bytes in use this way; a leak per patch does not."""
    values = [v for _, v in samples]
    rises = {}
    for i in range(width, len(values) - width + 1):
        rises[i] = median(values[i:i + width]) - median(values[i - width:i])
    found = []
    for i, d in rises.items():
        before = [rises.get(j, 0) for j in range(i - width + 1, i)]
        after = [rises.get(j, 0) for j in range(i + 1, i + width)]
        if d > rise and all(d > b for b in before) and all(d >= a for a in after):
            found.append((samples[i][0], d))
    return found


def describe(name, samples, counts, warmup, floor):
    """Prints one series' slopes; returns its verdict ("grows"/"flat") or None."""
    kept = [(t, v) for t, v in samples if t >= warmup]
    if len(kept) < 4:
        print(f"  {name}: too few samples after the warm-up")
        return None
    per_hour = fit([t / 3600.0 for t, _ in kept], [v for _, v in kept])
    paired = [(patches_at(counts, t), v) for t, v in kept]
    paired = [(p / 1e6, v) for p, v in paired if p is not None]
    per_million = fit([p for p, _ in paired], [v for _, v in paired]) if len(paired) >= 4 else None
    values = [v for _, v in kept]
    line = (f"  {name}: {kept[0][1]:.1f} -> {kept[-1][1]:.1f} MB over "
            f"{kept[-1][0] - kept[0][0]:.0f} s (min {min(values):.1f}, max {max(values):.1f}); "
            f"slope {per_hour[0]:+.2f} ± {per_hour[1]:.2f} MB/h")
    verdict = None
    if per_million:
        slope, se = per_million
        verdict = "grows" if slope > 2 * se and slope > floor else "flat"
        line += f", {slope:+.3f} ± {se:.3f} MB per million patches: {verdict}"
    else:
        line += "; no patch counts from the tracer for this window"
    print(line)
    return verdict


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warmup", type=float, required=True)
    parser.add_argument("--floor", type=float, default=0.1,
                        help="MB per million patches below which a slope is flat")
    parser.add_argument("--pid", type=int, default=0)
    parser.add_argument("rss")
    parser.add_argument("mallinfo")
    parser.add_argument("tracer")
    args = parser.parse_args()

    counts = read_patch_counts(args.tracer)
    window = [c for c in counts if c[0] >= args.warmup]
    if len(window) >= 2:
        (t0, p0), (t1, p1) = window[0], window[-1]
        print(f"soak: after {args.warmup:.0f} s of warm-up, {p1 - p0:,.0f} patches in "
              f"{t1 - t0:.0f} s ({(p1 - p0) / max(t1 - t0, 1e-9):,.0f} patches/s); "
              f"{p1:,.0f} in all")
    rss_verdict = describe("RSS", read_rss(args.rss), counts, args.warmup, args.floor)
    heap = read_mallinfo(args.mallinfo, args.pid)
    verdicts = {name: describe(name, samples, counts, args.warmup, args.floor)
                for name, samples in heap.items()}
    in_use_samples = heap.get("in use (uordblks+hblkhd)", [])
    rises = steps(in_use_samples)
    if rises:
        after = sum(d for t, d in rises if t >= args.warmup)
        print("  steps of bytes in use (30-s medians rising > 1.5 MB): "
              + ", ".join(f"t={t:.0f} s {d:+.1f} MB" for t, d in rises)
              + f"; {after:+.1f} MB of them after the warm-up")
    in_use = verdicts.get("in use (uordblks+hblkhd)")
    if in_use is None or rss_verdict is None:
        print("soak verdict: undecided (too few samples or no patch counts)")
        return 1
    if in_use == "grows":
        print("soak verdict: GROWS: bytes in use grow after warm-up: memory still "
              "allocated (a leak or an unbounded structure)")
    elif rss_verdict == "grows":
        print("soak verdict: RSS GROWS, bytes in use flat: memory that malloc keeps "
              "(fragmentation, arenas), not a leak")
    else:
        print("soak verdict: FLAT: RSS and bytes in use flat within noise after warm-up")
    return 0


if __name__ == "__main__":
    sys.exit(main())
