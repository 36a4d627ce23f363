"""Shared fixtures: small generated slides and the environment the examples need."""
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest

ROOT = pathlib.Path(os.environ.get("WSI_SOURCE_ROOT",
                                   pathlib.Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(ROOT / "python"))

# Tracers are read once, at Gst.init: enable wsistats for the whole session
# (test_monitor needs it; the other tests do not mind).
import gstwsi  # noqa: E402

gstwsi.init(monitor=True, tracer_params="interval=200,summary=false")


def run_process_group(argv, timeout, **popen_args):
    """Runs argv in a process group of its own and returns the
    CompletedProcess (text, stdout and stderr captured). If it outlives
    timeout, the whole group is killed before subprocess.TimeoutExpired is
    raised: torchrun's workers are its children, and killing torchrun alone
    (what subprocess.run does) left them streaming after the test."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, **popen_args)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _generator():
    path = os.environ.get("WSI_MAKE_TEST_SLIDES") or shutil.which("wsi-make-test-slides")
    if not path:
        pytest.skip("wsi-make-test-slides not found (set WSI_MAKE_TEST_SLIDES)")
    return path


@pytest.fixture(scope="session", autouse=True)
def plugins():
    """Skips everything when the gst-wsi plugins are not on GST_PLUGIN_PATH."""
    if gstwsi.stream.Gst.ElementFactory.find("wsislidesrc") is None:
        pytest.skip("gst-wsi plugins not found: run through `meson test -C BUILD python`")


@pytest.fixture(scope="session")
def tmp_root():
    base = os.environ.get("WSI_TEST_TMPDIR")
    if base:
        os.makedirs(base, exist_ok=True)
    path = tempfile.mkdtemp(prefix="gstwsi-", dir=base)
    yield pathlib.Path(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def slides(tmp_root):
    """Five small generated slides (mixed generic TIFF / Aperio, 0.25 mpp)."""
    out = tmp_root / "slides"
    subprocess.run([_generator(), "--count", "5", "--width", "2048", "--height", "1536",
                    "--jobs", "2", str(out)], check=True, stdout=subprocess.DEVNULL)
    return out


@pytest.fixture(scope="session")
def example_env():
    """Environment for running examples/scripts as child processes."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "python")] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.pop("GST_TRACERS", None)
    return env
