"""The two training examples, run for a few steps as the user would."""
import json
import shutil
import socket
import subprocess
import sys

import pytest
from conftest import ROOT, run_process_group

from gstwsi.stream import Gst


def run(cmd, env, timeout=240):
    try:
        proc = run_process_group(cmd, timeout, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"did not end within {timeout} s (its process group was killed): {cmd}")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def test_train_single_gpu(slides, example_env):
    pytest.importorskip("torch")
    out = run([sys.executable, str(ROOT / "examples" / "train_single_gpu.py"),
               "--slides", str(slides), "--steps", "12", "--log-every", "6",
               "--batch-size", "8", "--patch-size", "32"], example_env)
    logs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [log["train/step"] for log in logs] == [6, 12]
    assert "data/wait_ms_p95" in logs[-1] and "data/queue/queue1/fill_pct_mean" in logs[-1]
    assert "done: 12 steps, 96 patches" in out


def test_train_single_gpu_names_skipped_slides(tmp_root, slides, example_env):
    """The example prints which slides were skipped and why, once each,
    not only the counters."""
    pytest.importorskip("torch")
    from conftest import _generator
    folder = tmp_root / "example-skipping"
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run([_generator(), "--broken", "--count", "0", str(folder)], check=True,
                   stdout=subprocess.DEVNULL)
    shutil.copy(slides / "slide-00.tiff", folder / "slide-00.tiff")
    out = run([sys.executable, str(ROOT / "examples" / "train_single_gpu.py"),
               "--slides", str(folder), "--steps", "6", "--log-every", "3",
               "--batch-size", "8", "--patch-size", "32"], example_env)
    for name in ("broken-empty.svs", "broken-garbage.svs", "broken-truncated.tiff"):
        lines = [l for l in out.splitlines() if l.startswith("slide failed: ") and name in l]
        assert len(lines) == 1, out
        assert lines[0].startswith(f"slide failed: {folder / name}: ") and \
            len(lines[0]) > len(f"slide failed: {folder / name}: "), lines
    assert "slide-00.tiff" not in out.replace("done:", "")


# Debian's torch 1.13 on Python 3.11: torchrun's default "--redirects 0" is
# parsed to None (IntFlag iteration skips 0) and the launcher crashes; any
# single-bit value parses.  "2" + "--tee 2" keeps stderr on the console too.
TORCHRUN_FIX = ["--redirects", "2", "--tee", "2"]


def _free_port():
    # A fixed port collides with a previous run's TIME_WAIT or another job.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _torchrun():
    exe = shutil.which("torchrun")
    return [exe] if exe else [sys.executable, "-m", "torch.distributed.run"]


def _torchrun_store_refusal():
    """Why torchrun cannot start here, or None: its agent creates a TCPStore
    with torch's defaults, which from torch 2.4 on means libuv; a torch built
    without libuv (Debian 13's 2.6) refuses that whatever the rendezvous
    backend or USE_LIBUV says. train_ddp.py --nproc-per-node runs there."""
    from datetime import timedelta

    import torch.distributed as dist
    try:
        store = dist.TCPStore("127.0.0.1", _free_port(), 1, True, timedelta(seconds=10))
    except RuntimeError as e:
        return str(e).splitlines()[0]
    del store
    return None


# The two launchers of examples/train_ddp.py: its own (--nproc-per-node,
# every torch) and torchrun (torch with libuv; Debian 12 needs TORCHRUN_FIX).
LAUNCHERS = ["nproc-per-node", "torchrun"]


def _ddp(slides, env, launcher, *extra):
    script = [str(ROOT / "examples" / "train_ddp.py"), "--slides", str(slides),
              "--batch-size", "8", "--patch-size", "32", "--patches-per-slide", "8"]
    if launcher == "torchrun":
        refusal = _torchrun_store_refusal()
        if refusal:
            pytest.skip(f"torchrun cannot start with this torch: {refusal}")
        cmd = _torchrun() + ["--nproc_per_node=2", f"--master_port={_free_port()}"] + TORCHRUN_FIX
    else:
        cmd = [sys.executable]
        script += ["--nproc-per-node", "2", "--master-port", str(_free_port())]
    out = run(cmd + script + list(extra), env)
    # the ranks share one pipe: lines may come out glued together
    decoder = json.JSONDecoder()
    results = [decoder.raw_decode(chunk)[0] for chunk in out.split("RESULT ")[1:]]
    assert sorted(r["rank"] for r in results) == [0, 1], out
    return sorted(results, key=lambda r: r["rank"])


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_train_ddp_steps_disjoint_slides(slides, example_env, launcher):
    pytest.importorskip("torch")
    r0, r1 = _ddp(slides, example_env, launcher, "--steps", "4")
    assert r0["steps"] == r1["steps"] == 4
    assert r0["world_size"] == 2
    assert r0["slides"] and r1["slides"]
    assert not set(r0["slides"]) & set(r1["slides"])
    assert r0["loss"] is not None


def _has(factory, prop):
    Gst.init(None)
    elem = Gst.ElementFactory.make(factory, None)
    return elem is not None and elem.find_property(prop) is not None


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_train_ddp_finite_equal_counts(slides, example_env, launcher):
    pytest.importorskip("torch")
    if not _has("patchsampler", "rank-quota"):
        pytest.skip("patchsampler has no rank-quota yet")
    r0, r1 = _ddp(slides, example_env, launcher, "--epoch")
    # 5 slides over 2 ranks: 3 and 2, rank-slides-min = 2 -> 2 x 8 patches each
    assert r0["patches"] == r1["patches"] == 2 * 8
    assert r0["steps"] == r1["steps"] == 2
    assert not set(r0["slides"]) & set(r1["slides"])


def test_mil_store(slides, example_env, tmp_root):
    """examples/mil_store.py end to end: the grid extracted into a store once,
    features from the store, the MIL head trained; a second run reuses the
    store and sees the same patches."""
    pytest.importorskip("torch")
    store = tmp_root / "mil-store"
    cmd = [sys.executable, str(ROOT / "examples" / "mil_store.py"), "--slides", str(slides),
           "--store", str(store), "--patch-size", "64", "--batch-size", "8",
           "--epochs", "2"]
    first = run(cmd, example_env)
    patches = json.loads((store / "manifest.json").read_text())["patches"]
    assert patches > 0
    assert f"extracted {patches} patches" in first
    epochs = [json.loads(line)["epoch"] for line in first.splitlines() if line.startswith("{")]
    assert epochs == [0, 1]
    assert f"done: 5 slides, {patches} patches" in first
    second = run(cmd, example_env)
    assert "extraction skipped" in second
    assert f"done: 5 slides, {patches} patches" in second
