#!/usr/bin/python3
"""scripts/test-summary.py on a real meson run: a small project whose tests
skip in each way the gst-wsi suite does (a whole meson test exiting 77, a
gst-check check printing WSI_TEST_SKIP's line, pytest skips, a part of a
plain test) must print every one as skipped with its reason, never as
passed, and count them in "N passed, N failed, N skipped".

Usage: test-test-summary.py SUMMARY_SCRIPT WORKDIR
"""
import os
import re
import shutil
import subprocess
import sys
import textwrap

MESON_BUILD = """
project('summary-fixture', 'c')
sh = find_program('sh')
test('no_gpu', sh, args : ['-c', 'echo "SKIP: upload: no CUDA device"; exit 77'])
test('checks', sh, args : ['-c', '''
echo "SKIP: test_real_slides: real slide /x/CMU.svs is absent"
echo "SKIP: test_real_slides: real slide /x/NDPI.ndpi is absent"
echo "SKIP: test_gpu_upload: no CUDA device"
echo "100%: Checks: 5, Failures: 0, Errors: 0"
'''])
test('python', sh, args : ['-c', '''
echo "SKIPPED [2] tests/python/test_x.py:12: torch is not installed"
echo "======= 7 passed, 2 skipped in 1.25s ======="
'''])
test('python_quiet', sh, args : ['-c', '''
echo "SKIPPED [1] tests/python/test_y.py:3: no GPU"
echo "4 passed, 1 skipped, 1 warning in 0.50s (0:00:00)"
'''])
test('fuzz', sh, args : ['-c', 'echo "SKIP: real-slide seeds: folder /x is absent"; echo done'])
test('plain', sh, args : ['-c', 'echo fine'])
"""


def main(summary_script, workdir):
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    with open(os.path.join(workdir, "meson.build"), "w") as f:
        f.write(textwrap.dedent(MESON_BUILD))
    build = os.path.join(workdir, "build")
    env = dict(os.environ)
    env.pop("MESON_TESTTHREADS", None)
    subprocess.run(["meson", "setup", build, workdir], check=True,
                   stdout=subprocess.DEVNULL, env=env)
    table = subprocess.run(["meson", "test", "-C", build], capture_output=True, text=True,
                           env=env).stdout  # all pass or skip: the exit status is 0
    done = subprocess.run([sys.executable, summary_script,
                           os.path.join(build, "meson-logs", "testlog.json")],
                          capture_output=True, text=True)
    out = done.stdout
    print(out)
    expected = [
        "no_gpu: upload: no CUDA device",
        # one check, two absent slides: one line
        "checks: test_real_slides: real slide /x/CMU.svs is absent; real slide /x/NDPI.ndpi is absent",
        "checks: test_gpu_upload: no CUDA device",
        "python: tests/python/test_x.py:12: torch is not installed (2 tests)",
        "python_quiet: tests/python/test_y.py:3: no GPU (1 test)",
        "fuzz: real-slide seeds: folder /x is absent",
    ]
    for line in expected:
        assert f"  {line}\n" in out, f"missing from the summary: {line!r}"
    # checks: 5 run by gst-check, 2 of them skipped (test_real_slides once);
    # python 7 + 2 skipped, python_quiet 4 + 1; fuzz and plain ran (fuzz with a part skipped);
    # no_gpu skipped as a whole.
    lines = out.strip().splitlines()
    last = lines[-1]
    assert last == "16 passed, 0 failed, 7 skipped", last
    # the reason lines add up to the count in their header and in the last
    # line: one line per skipped check, "(n tests)" for pytest's groups
    header = next(i for i, l in enumerate(lines) if l.startswith("Did not run here"))
    assert lines[header] == "Did not run here (7 skipped):", lines[header]
    listed = [l for l in lines[header + 1:] if l.startswith("  ")]
    weights = [int(m.group(1)) if (m := re.search(r"\((\d+) tests?\)$", l)) else 1 for l in listed]
    assert sum(weights) == 7, listed
    # meson's own table counts tests: the summary says so, with its numbers
    ok = int(re.search(r"^Ok:\s+(\d+)", table, re.M).group(1))
    skipped = int(re.search(r"^Skipped:\s+(\d+)", table, re.M).group(1))
    assert (ok, skipped) == (5, 1), table
    assert f"meson tests (meson's table): {ok} ok, 0 failed, {skipped} skipped; " \
           "the checks inside them:" in out, out
    assert done.returncode == 0, done.returncode
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
