#!/usr/bin/python3
"""The soak's two instruments measure what they say.

1. tests/launch/mallinfoloop.c, preloaded into a process that keeps
   2 MiB blocks (1 MiB with the C allocator behind Python's bytearray),
   writes "pid seconds arena hblkhd uordblks fordblks" lines at the
   interval asked, with that process's pid, and its bytes in use
   (uordblks + hblkhd) grow by about what the process kept.
2. scripts/soak-verdict.py reads synthetic soaks whose answer is known:
   bytes in use growing (a leak) -> GROWS; in use flat, RSS growing
   (memory malloc keeps) -> RSS GROWS; both flat with noise -> FLAT; and
   regresses against the tracer's patch counts, so that a run at half the
   rate with the same bytes per patch gives the same slope per patch.

Usage: test-soak-instruments.py MALLINFO_SHIM VERDICT_SCRIPT WORKDIR
"""
import os
import random
import re
import shutil
import subprocess
import sys

KEEPER = """
import time
kept = []
for _ in range(40):
    kept.append(bytearray(2 * 1024 * 1024))   # malloc'ed, mmap'ed: hblkhd
    time.sleep(0.05)
time.sleep(1.5)
"""


def check_mallinfo_shim(shim, workdir):
    samples = os.path.join(workdir, "heap")
    # After whatever is preloaded already (a sanitizer runtime must stay
    # first).
    preload = ":".join(p for p in (os.environ.get("LD_PRELOAD"), shim) if p)
    env = dict(os.environ, LD_PRELOAD=preload, WSI_MALLINFO_FILE=samples,
               WSI_MALLINFO_SECONDS="1")
    child = subprocess.Popen([sys.executable, "-c", KEEPER], env=env)
    assert child.wait() == 0, "the keeper failed"
    rows = [line.split() for line in open(samples)]
    mine = [[float(f) for f in row[1:]] for row in rows if row[0] == str(child.pid)]
    assert all(len(row) == 6 for row in rows), f"malformed lines: {rows}"
    assert len(mine) >= 3, f"expected >= 3 samples of pid {child.pid}, got {rows}"
    seconds = [row[0] for row in mine]
    assert seconds == sorted(seconds) and seconds[0] < 1.0, f"times: {seconds}"
    in_use = [(row[2] + row[3]) / 2 ** 20 for row in mine]
    # The peak, not the last sample: the shim's last sample may come after
    # the interpreter freed the arrays on its way out (a loaded machine
    # stretches the keeper's timing).
    growth = max(in_use) - in_use[0]
    assert 60 <= growth <= 100, f"in use grew {growth:.1f} MiB, kept 80 MiB: {in_use}"
    print(f"ok: mallinfo shim: {len(mine)} samples of pid {child.pid}, "
          f"in use +{growth:.1f} MiB for 80 MiB kept")


def write_soak(workdir, name, rss_mb_per_mpatch, in_use_mb_per_mpatch, rate, seed,
               step_at=None, step_mb=0.0):
    """A 20-minute soak at `rate` patches/s, 10 s samples, with noise;
    bytes in use rise by step_mb from step_at seconds (a pool's new
    high-water mark)."""
    rng = random.Random(seed)
    base = os.path.join(workdir, name)
    with open(base, "w") as rss, open(base + ".heap", "w") as heap, \
            open(base + ".jsonl", "w") as stats:
        for step in range(121):
            t = step * 10
            mpatches = rate * t / 1e6
            in_use = 100 + in_use_mb_per_mpatch * mpatches + rng.gauss(0, 0.3)
            if step_at is not None and t >= step_at:
                in_use += step_mb
            kept = 30 + (rss_mb_per_mpatch - in_use_mb_per_mpatch) * mpatches \
                + rng.gauss(0, 2)
            resident = in_use + kept + 30 + rng.gauss(0, 1)
            rss.write(f"{t} {int(resident * 1024)} 12 19\n")
            heap.write(f"4242 {t:.1f} {int((in_use + kept) * 2**20)} 0 "
                       f"{int(in_use * 2**20)} {int(kept * 2**20)}\n")
            heap.write(f"17 {t:.1f} 1 0 1 1\n")   # a wrapper's lines: ignored
            stats.write('{"type":"interval","time-s":%d,"elements":[{"name":"patchbatch0",'
                        '"factory":"patchbatch","patches-out":%d}]}\n' % (t, rate * t))
    return base


def verdict(script, base, *extra):
    out = subprocess.run([sys.executable, script, "--warmup", "300", "--pid", "4242",
                          *extra, base, base + ".heap", base + ".jsonl"],
                         capture_output=True, text=True, check=True).stdout
    print(out, end="")
    return out


def per_million(out, series):
    match = re.search(re.escape(series) + r".*?([+-][0-9.]+) ± ([0-9.]+) MB per million", out)
    assert match, f"no per-patch slope for {series} in:\n{out}"
    return float(match.group(1)), float(match.group(2))


def check_verdicts(script, workdir):
    leak = verdict(script, write_soak(workdir, "leak", 3.0, 3.0, 1700, 1))
    assert "soak verdict: GROWS" in leak, leak
    slope, se = per_million(leak, "in use")
    assert abs(slope - 3.0) < 3 * se + 0.1, f"in use slope {slope} ± {se}, made 3.0"

    kept = verdict(script, write_soak(workdir, "kept", 3.0, 0.0, 1700, 2))
    assert "soak verdict: RSS GROWS, bytes in use flat" in kept, kept

    flat = verdict(script, write_soak(workdir, "flat", 0.0, 0.0, 1700, 3))
    assert "soak verdict: FLAT" in flat, flat

    # Same bytes per patch at half the rate: half the slope per hour, the
    # same per million patches.
    slow = verdict(script, write_soak(workdir, "slow", 3.0, 3.0, 850, 1))
    fast_slope, _ = per_million(leak, "in use")
    slow_slope, slow_se = per_million(slow, "in use")
    assert abs(slow_slope - fast_slope) < 3 * slow_se + 0.2, (fast_slope, slow_slope)

    # The floor: a resolved but tiny slope is flat.
    tiny = verdict(script, write_soak(workdir, "tiny", 0.05, 0.05, 1700, 4), "--floor", "0.1")
    assert "soak verdict: FLAT" in tiny, tiny
    # A pool's high-water mark: one step of 10 MB at 600 s, flat around it.
    step = verdict(script, write_soak(workdir, "step", 0.0, 0.0, 1700, 5, 600, 10.0))
    found = re.findall(r"t=(\d+) s ([+-][0-9.]+) MB", step)
    assert len(found) == 1, f"expected one step, got {found}"
    assert abs(int(found[0][0]) - 600) <= 10 and abs(float(found[0][1]) - 10) < 1.5, found
    assert "steps of bytes in use" not in flat, flat
    print("ok: soak-verdict.py: leak, kept, flat, rate, floor and a step")


def main():
    shim, script, workdir = sys.argv[1:4]
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    check_verdicts(script, workdir)
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        # scripts/test-asan.sh: ASan's allocator serves malloc, and glibc's
        # mallinfo2() then reports nothing to measure.
        print("SKIP: mallinfo shim: the ASan runtime is preloaded, so malloc "
              "is not glibc's and mallinfo2() counts nothing; the verdict "
              "checks above ran")
        sys.exit(77)
    check_mallinfo_shim(shim, workdir)


if __name__ == "__main__":
    main()
