#!/usr/bin/python3
"""read-ahead-verdict.py judges every depth by the rule of
docs/benchmarks.md (> 1.05x the baseline's median rate at < 1.10x its
median peak RSS) on synthetic tables whose answer is known:

1. the fastest depth (256) costs too much memory while a slower one (32)
   meets the rule: 32 is the better default. The old verdict, which
   judged only the fastest depth, said "no case" here.
2. two depths meet it: the faster is named; a depth that fails on rate
   alone says so.
3. the bounds are strict: exactly 1.05x the rate, or exactly 1.10x the
   RSS, does not meet the rule; nothing meets it: "none".
4. medians, not means or single rounds, are judged (one wild round of a
   depth does not make it win), and the baseline may be any depth.
5. a malformed table, a missing baseline or one whose median rate is 0
   (no division by zero) is an error naming the file.

Usage: test-read-ahead-verdict.py VERDICT_SCRIPT WORKDIR
"""
import os
import re
import shutil
import subprocess
import sys

VERDICT = re.compile(r"^verdict read-ahead=(\d+): ([0-9.]+)x rate, ([0-9.]+)x RSS: "
                     r"(meets the rule|fails: [^\n]*)", re.M)
BETTER = re.compile(r"^better default: (none|read-ahead=(\d+))", re.M)


def run(script, workdir, name, rows, base, expect_fail=False):
    path = os.path.join(workdir, name)
    with open(path, "w") as table:
        table.writelines(f"{d} {rate} {rss}\n" for d, rate, rss in rows)
    done = subprocess.run([sys.executable, script, path, str(base)],
                          capture_output=True, text=True)
    if expect_fail:
        assert done.returncode != 0, f"{name}: accepted: {done.stdout}"
        assert name in done.stderr, f"{name}: the error names no file: {done.stderr!r}"
        return None
    assert done.returncode == 0, f"{name}: exit {done.returncode}: {done.stderr}"
    verdicts = {int(m[1]): (float(m[2]), float(m[3]), m[4]) for m in VERDICT.finditer(done.stdout)}
    better = BETTER.search(done.stdout)
    assert better, f"{name}: no 'better default' line in:\n{done.stdout}"
    return verdicts, (None if better[1] == "none" else int(better[2])), done.stdout


def rounds(depth, rates, rss):
    return [(depth, rate, rss) for rate in rates]


def main():
    script, workdir = sys.argv[1], sys.argv[2]
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)

    # 1. 256 is fastest (1.30x) at 1.27x RSS; 32 meets the rule (1.13x at 1.05x).
    rows = (rounds(0, [1000, 1010, 990], 300) + rounds(16, [1020, 1030, 1010], 306)
            + rounds(32, [1130, 1120, 1140], 315) + rounds(256, [1300, 1290, 1310], 381))
    verdicts, better, out = run(script, workdir, "fastest-too-big", rows, 0)
    assert set(verdicts) == {16, 32, 256}, f"a verdict per depth expected:\n{out}"
    assert verdicts[32][2] == "meets the rule", out
    assert verdicts[256][2].startswith("fails") and "RSS" in verdicts[256][2], out
    assert "rate" in verdicts[16][2] and "RSS" not in verdicts[16][2], out
    assert better == 32, f"better default should be 32, got {better}:\n{out}"
    print("ok: the fastest depth over the RSS bound does not hide 32, which meets the rule")

    # 2. 16 and 32 both meet it; 32 is faster; 256 fails on rate only.
    rows = (rounds(0, [1000], 300) + rounds(16, [1100], 303) + rounds(32, [1200], 320)
            + rounds(256, [1040], 310))
    verdicts, better, out = run(script, workdir, "two-meet", rows, 0)
    assert verdicts[16][2] == verdicts[32][2] == "meets the rule", out
    assert "rate" in verdicts[256][2] and "RSS" not in verdicts[256][2], out
    assert better == 32, out
    print("ok: of two depths that meet the rule the faster is named")

    # 3. exactly on the bounds: not met; nothing else meets it either.
    rows = (rounds(0, [1000], 100) + rounds(16, [1050], 100) + rounds(32, [1200], 110)
            + rounds(256, [900], 90))
    verdicts, better, out = run(script, workdir, "on-the-bounds", rows, 0)
    assert all(v[2].startswith("fails") for v in verdicts.values()), out
    assert better is None, out
    print("ok: 1.05x the rate or 1.10x the RSS exactly does not meet the rule; none named")

    # 4. medians: one wild round of 256 (5x) does not make it win; baseline 8.
    rows = (rounds(8, [1000, 1000, 1000], 200) + rounds(256, [5000, 1000, 1010], 210)
            + rounds(64, [1080, 1090, 1070], 212))
    verdicts, better, out = run(script, workdir, "medians", rows, 8)
    assert set(verdicts) == {64, 256}, out
    assert abs(verdicts[256][0] - 1.01) < 0.005, f"not the median rate:\n{out}"
    assert better == 64, out
    print("ok: medians are judged, the baseline may be any depth")

    # 5. bad input.
    run(script, workdir, "malformed", [(0, "1000", "300 extra")], 0, expect_fail=True)
    run(script, workdir, "no-baseline", rounds(16, [1000], 300), 0, expect_fail=True)
    run(script, workdir, "zero-baseline", rounds(0, [0, 0], 300) + rounds(16, [1000], 300),
        0, expect_fail=True)
    print("ok: a malformed table, a missing baseline and one that streamed nothing are "
          "errors naming the file")


if __name__ == "__main__":
    main()
