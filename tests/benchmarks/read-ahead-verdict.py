#!/usr/bin/python3
"""The figures and verdicts of bench-read-ahead.sh (issue 26).

Reads the runs bench-read-ahead.sh wrote, one "DEPTH PATCHES_PER_S
PEAK_RSS_MIB" line per run, and prints per depth the median rate and
peak RSS and their ratios against the baseline depth (the first of
DEPTHS, patchreader's automatic read-ahead by default), then one verdict
line per other depth against the rule of docs/benchmarks.md: a depth is
a case for a new default when its median rate is MORE than 1.05x the
baseline's AND its median peak RSS LESS than 1.10x the baseline's (both
strict). Last, which depth would be the better default: of the depths
that meet the rule, the fastest (the shallower on a tie), or none.

Every depth is judged, not only the fastest: a depth that is fastest but
too costly in memory must not hide a slower one that meets the rule.

Usage: read-ahead-verdict.py TABLE BASELINE_DEPTH
"""
import statistics
import sys

RATE_GAIN = 1.05    # more than this times the baseline's patches/s
RSS_GROWTH = 1.10   # at less than this times its peak RSS


def read_table(path):
    """{depth: [(rate, rss), ...]} in the order the depths first ran."""
    runs = {}
    with open(path) as table:
        for number, line in enumerate(table, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 3:
                sys.exit(f"{path}:{number}: expected 'depth rate rss', got {line!r}")
            depth, rate, rss = int(fields[0]), float(fields[1]), float(fields[2])
            runs.setdefault(depth, []).append((rate, rss))
    return runs


def medians(runs):
    """{depth: (median rate, median rss, min rate, max rate)}"""
    return {depth: (statistics.median(r for r, _ in rows),
                    statistics.median(s for _, s in rows),
                    min(r for r, _ in rows), max(r for r, _ in rows))
            for depth, rows in runs.items()}


def judge(gain, growth):
    """(meets the rule, the reason in words)"""
    fast = gain > RATE_GAIN
    lean = growth < RSS_GROWTH
    if fast and lean:
        return True, f"meets the rule (> {RATE_GAIN:.2f}x rate at < {RSS_GROWTH:.2f}x RSS)"
    reasons = []
    if not fast:
        reasons.append(f"rate {gain:.3f}x is not > {RATE_GAIN:.2f}x")
    if not lean:
        reasons.append(f"RSS {growth:.3f}x is not < {RSS_GROWTH:.2f}x")
    return False, "fails: " + "; ".join(reasons)


def name(depth):
    return "auto (0)" if depth == 0 else str(depth)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    runs = read_table(sys.argv[1])
    base = int(sys.argv[2])
    if base not in runs:
        sys.exit(f"{sys.argv[1]}: no run of the baseline read-ahead={base}")
    figures = medians(runs)
    base_rate, base_rss = figures[base][0], figures[base][1]
    if base_rate <= 0 or base_rss <= 0:
        # Ratios against nothing mean nothing (a run that streamed no patch).
        sys.exit(f"{sys.argv[1]}: the baseline read-ahead={base} has a median of "
                 f"{base_rate:g} patches/s and {base_rss:g} MiB: nothing to compare with")

    print(f"\nread-ahead  patches/s median (min-max)  peak RSS MiB  "
          f"rate vs {base}  RSS vs {base}")
    for depth, (rate, rss, low, high) in figures.items():
        print(f"{name(depth):>10}  {rate:8.0f} ({low:.0f}-{high:.0f})"
              f"          {rss:8.1f}      {rate / base_rate:6.2f}x    "
              f"{rss / base_rss:6.2f}x")

    print(f"\nrule (docs/benchmarks.md, issue 26): a read-ahead > {RATE_GAIN:.2f}x "
          f"the rate of read-ahead={base} at < {RSS_GROWTH:.2f}x its peak RSS")
    meeting = []
    for depth, (rate, rss, _, _) in figures.items():
        if depth == base:
            continue
        gain, growth = rate / base_rate, rss / base_rss
        ok, words = judge(gain, growth)
        print(f"verdict read-ahead={depth}: {gain:.2f}x rate, {growth:.2f}x RSS: {words}")
        if ok:
            meeting.append((gain, -depth, depth, growth))
    if meeting:
        gain, _, depth, growth = max(meeting)
        print(f"better default: read-ahead={depth} ({gain:.2f}x rate at "
              f"{growth:.2f}x RSS; the fastest of the {len(meeting)} that meet the rule)")
    else:
        print(f"better default: none (no read-ahead meets the rule; "
              f"read-ahead={base} stays)")
    print("(one run: repeat it before changing the default, at load the ratios swing)")


if __name__ == "__main__":
    main()
