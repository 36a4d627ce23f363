"""The test suite's own environment: the real-slide folder is the caller's
when given (`WSI_SHARED_SLIDES_DIR=/elsewhere meson test` or
scripts/test.sh), ../shared/slides otherwise.

meson applies a test's `env.set()` over the caller's environment, so a value
set in meson.build would win over the caller's: the folder must come from a
compiled-in default instead. Checked on this build's introspection (what
`meson test` gives each test) and on one real-slide check run with that
environment, as `meson test` runs it."""
import json
import os
import pathlib
import subprocess

import pytest

from conftest import ROOT

BUILD = pathlib.Path(os.environ.get("WSI_MAKE_TEST_SLIDES", ROOT / "build" / "tools" / "x")).parents[1]
INTRO = BUILD / "meson-info" / "intro-tests.json"


def tests():
    if not INTRO.is_file():
        pytest.skip(f"{INTRO} absent (not a meson build folder)")
    return json.loads(INTRO.read_text())


def as_meson_runs_it(test, caller_env):
    """The environment `meson test` gives @test when called with
    @caller_env (introspection lists the values its env.set/prepend make)."""
    env = dict(caller_env)
    env.update(test.get("env") or {})
    return env


def test_no_test_sets_the_real_slide_folder():
    forced = [t["name"] for t in tests() if "WSI_SHARED_SLIDES_DIR" in (t.get("env") or {})]
    assert not forced, f"these tests' env.set overrides the caller's WSI_SHARED_SLIDES_DIR: {forced}"


@pytest.mark.parametrize("ci", ["", "true"])
def test_a_real_slide_check_reads_the_callers_folder(tmp_path, ci):
    found = [t for t in tests() if t["name"] == "pipelines_identity"]
    if not found:
        pytest.skip("pipelines_identity not built (needs OpenSlide and the tests)")
    test = found[0]
    elsewhere = tmp_path / "my-slides"          # empty: the slide is absent there
    elsewhere.mkdir()
    caller = dict(os.environ, WSI_SHARED_SLIDES_DIR=str(elsewhere), CI=ci)
    done = subprocess.run(test["cmd"], env=as_meson_runs_it(test, caller), capture_output=True,
                          text=True, timeout=120)
    out = done.stdout + done.stderr
    assert str(elsewhere / "Aperio-CMU-1-Small-Region.svs") in out, out
    # absent: skipped (77) on a developer's machine, a failure in CI
    assert done.returncode == (1 if ci else 77), out
