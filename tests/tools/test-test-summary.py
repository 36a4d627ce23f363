#!/usr/bin/python3
"""scripts/test-summary.py on a real meson run: a small project whose tests
skip in each way the gst-wsi suite does (a whole meson test exiting 77, a
gst-check check printing WSI_TEST_SKIP's line, pytest skips, a part of a
plain test) must print every one as skipped with its reason, never as
passed, and count them in "N passed, N failed, N skipped".

Usage: test-test-summary.py SUMMARY_SCRIPT WORKDIR
"""
import os
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
    subprocess.run(["meson", "test", "-C", build], stdout=subprocess.DEVNULL,
                   env=env)  # all pass or skip: the exit status is 0
    done = subprocess.run([sys.executable, summary_script,
                           os.path.join(build, "meson-logs", "testlog.json")],
                          capture_output=True, text=True)
    out = done.stdout
    print(out)
    expected = [
        "no_gpu: upload: no CUDA device",
        "checks: test_real_slides: real slide /x/CMU.svs is absent",
        "checks: test_real_slides: real slide /x/NDPI.ndpi is absent",
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
    last = out.strip().splitlines()[-1]
    assert last == "16 passed, 0 failed, 7 skipped", last
    assert done.returncode == 0, done.returncode
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
