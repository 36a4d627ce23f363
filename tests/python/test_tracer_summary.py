"""The wsistats summary on runs too short for rates, and on runs where
nothing flowed: gst-launch-1.0 with GST_TRACERS=wsistats, reading the table
the tracer prints on stderr."""
import os
import re
import shutil
import subprocess

import pytest


def launch(env, description):
    env = dict(env, GST_TRACERS="wsistats")
    return subprocess.run(["gst-launch-1.0", "-q"] + description.split(), env=env,
                          capture_output=True, text=True, timeout=120)


def element_line(stderr, name):
    for line in stderr.splitlines():
        if line.startswith(name + " "):
            return line.split()
    pytest.fail(f"no summary line for {name}:\n{stderr}")


def test_short_run_shows_no_rates(example_env):
    # three 1 MB buffers a few milliseconds apart: any rate would be noise
    done = launch(example_env, "fakesrc num-buffers=3 sizetype=fixed sizemax=1000000 "
                  "! queue name=q ! fakesink sync=false")
    assert done.returncode == 0, done.stderr
    assert "wsistats summary" in done.stderr, done.stderr
    fields = element_line(done.stderr, "q")
    assert fields[2:5] == ["short", "short", "short"], fields
    assert re.search(r"^short: under 1 s between", done.stderr, re.M), done.stderr


def test_coordinates_counted_for_sampler_and_interleave(example_env, slides):
    done = launch(example_env, f"wsislidesrc location={slides} cycle=true num-buffers=40 "
                  "! tissuemask ! queue ! patchsampler patch-size=64 patches-per-slide=16 "
                  "! patchinterleave ! fakesink sync=false")
    assert done.returncode == 0, done.stderr
    for name in ("patchsampler0", "patchinterleave0"):
        patch_rate = element_line(done.stderr, name)[3]
        assert patch_rate == "short" or float(patch_rate) > 0, done.stderr


def test_no_table_when_nothing_flowed(example_env, tmp_root):
    missing = tmp_root / "no-such-slides"
    done = launch(example_env, f"wsislidesrc location={missing} ! fakesink")
    assert done.returncode != 0
    assert str(missing) in done.stderr
    assert "wsistats summary" not in done.stderr, done.stderr
    assert "peak RSS" not in done.stderr, done.stderr


def test_damaged_slides_named(example_env, slides, tmp_root):
    """A DICOM series whose level-0 instance is cut short: the summary's
    source line counts it as damaged and names it, next to the slides that
    opened and failed."""
    tool = os.environ.get("WSI_MAKE_TEST_DICOM") or shutil.which("wsi-make-test-dicom")
    if not tool:
        pytest.skip("wsi-make-test-dicom not found (set WSI_MAKE_TEST_DICOM)")
    tiffs = sorted(slides.glob("*.tif*"))
    out = tmp_root / "summary-damaged"
    subprocess.run([tool, str(tiffs[0]), str(out), "--prefix", "cut"], check=True,
                   stdout=subprocess.DEVNULL)
    level0 = out / "cut-level0.dcm"
    os.truncate(level0, level0.stat().st_size * 3 // 4)
    # the overview from an intact lower level, so the slide opens
    done = launch(example_env, f"wsislidesrc name=dsrc location={out} thumbnail-size=256 "
                  "! fakesink sync=false")
    assert done.returncode == 0, done.stderr
    line = next((l for l in done.stderr.splitlines() if l.startswith("source dsrc:")), None)
    assert line == f"source dsrc: 1 slides opened, 0 failed, 1 damaged: {level0}", done.stderr
