"""gstwsi.Monitor: the flat dict a training loop logs."""
import time

import pytest

import gstwsi

LOG_EVERY = 5


def test_monitor_dict(slides):
    assert gstwsi.init(monitor=True), "wsistats tracer not active (GST_TRACERS set elsewhere?)"
    description = gstwsi.standard_pipeline(slides, batch_size=8, patch_size=32,
                                           patches_per_slide=8, cycle=True)
    stream = gstwsi.BatchStream(description, torch=False)
    monitor = gstwsi.Monitor(stream, log_every=LOG_EVERY, prefix="data/")
    logs = []
    for i, batch in enumerate(stream):
        time.sleep(0.01)                          # the "training step"
        out = monitor.mark_step(extra={"train/loss": 0.5})
        if (i + 1) % LOG_EVERY:
            assert out is None
        else:
            logs.append(out)
        if len(logs) == 2:
            break
    last = logs[-1]
    assert last["data/step"] == 2 * LOG_EVERY
    assert last["train/loss"] == 0.5
    assert all(isinstance(v, (int, float)) for v in last.values())
    # Python side: 5 batches of 8 in a window of >= 5 x 10 ms
    assert 0 < last["data/batches_per_s"] <= 1 / 0.01
    assert last["data/patches_per_s"] == pytest.approx(8 * last["data/batches_per_s"])
    assert 0 <= last["data/wait_ms_p50"] <= last["data/wait_ms_p95"]
    assert last["data/step_ms_p50"] >= 10
    assert 0 <= last["data/wait_share"] <= 1
    assert last["data/rss_mb"] > 10
    # tracer side
    assert last["data/peak_rss_mb"] >= 10
    assert 0 <= last["data/loader_bound"] <= 1
    assert last["data/sink_patches_per_s"] > 0
    fills = [k for k in last if k.startswith("data/queue/") and k.endswith("fill_pct_mean")]
    assert len(fills) == 2                        # the two queues of the pipeline
    assert all(0 <= last[k] <= 100 for k in fills)


def test_monitor_rejects_bad_log_every(slides):
    stream = gstwsi.BatchStream(gstwsi.standard_pipeline(slides), torch=False)
    with pytest.raises(ValueError):
        gstwsi.Monitor(stream, log_every=0)
    stream.close()
