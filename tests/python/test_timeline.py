"""The wsistats timeline seen from a training loop: examples/timeline.py runs
a loop with a sleeping step under `wsistats(timeline=...)` in a child
process (tracers are read at Gst.init, and this session's tracer has no
timeline), then tools/wsi-timeline-png draws the trace."""
import json
import subprocess
import sys

import pytest
from conftest import ROOT

STEP_MS = 20
WARMUP, BATCHES, BATCH_SIZE = 2, 6, 4


def _lanes(events):
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    lanes = {}
    for e in events:
        if e.get("ph") == "X":
            lanes.setdefault(names.get(e["tid"], str(e["tid"])), []).append(e)
    return lanes


@pytest.fixture(scope="module")
def traced_loop(slides, example_env, tmp_path_factory):
    out = tmp_path_factory.mktemp("timeline") / "loop"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "timeline.py"), str(slides), str(out),
         "--step-ms", str(STEP_MS), "--warmup", str(WARMUP), "--batches", str(BATCHES),
         "--batch-size", str(BATCH_SIZE), "--patch-size", "64", "--threads", "2"],
        env=example_env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(f"{out}.json") as f:
        return out, json.load(f)


def test_mark_step_draws_wait_and_compute(traced_loop):
    _, events = traced_loop
    steps = _lanes(events)["consumer: training steps"]
    waits = [e for e in steps if e["name"] == "data wait"]
    computes = [e for e in steps if e["name"] == "compute"]
    assert len(waits) == len(computes) == WARMUP + BATCHES
    assert {e["cat"] for e in waits} == {"consumer-wait"}
    assert {e["cat"] for e in computes} == {"consumer-compute"}
    # the step sleeps STEP_MS: compute holds it, the wait does not
    assert all(e["dur"] >= 0.9 * STEP_MS * 1e3 for e in computes), computes
    for wait, compute in zip(sorted(waits, key=lambda e: e["ts"]),
                             sorted(computes, key=lambda e: e["ts"])):
        assert abs(wait["ts"] + wait["dur"] - compute["ts"]) < 1.0


def test_stream_draws_its_pulls(traced_loop):
    _, events = traced_loop
    pulls = _lanes(events)["consumer: appsink pulls"]
    assert len([e for e in pulls if e["name"] == "pull"]) == WARMUP + BATCHES
    between = [e for e in pulls if e["name"] == "between pulls"]
    assert len(between) == WARMUP + BATCHES - 1
    assert all(e["dur"] >= 0.9 * STEP_MS * 1e3 for e in between)


def test_worker_lanes_in_the_same_trace(traced_loop):
    _, events = traced_loop
    lanes = _lanes(events)
    workers = sorted(n for n in lanes if ": worker " in n)
    assert workers == ["patchreader0: worker 1/2", "patchreader0: worker 2/2"], sorted(lanes)
    items = sum(len([e for e in lanes[w] if e["cat"] == "work"]) for w in workers)
    assert items >= (WARMUP + BATCHES) * BATCH_SIZE


def test_png_drawn(traced_loop):
    out, _ = traced_loop
    data = open(f"{out}.png", "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert 10_000 < len(data) < 400_000, len(data)


def test_png_tool_refuses_a_bad_trace(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "wsi-timeline-png"),
                           str(bad), str(tmp_path / "x.png")], capture_output=True, text=True)
    assert proc.returncode != 0 and "cannot read the trace" in proc.stderr
    assert not (tmp_path / "x.png").exists()
