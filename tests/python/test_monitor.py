"""gstwsi.Monitor: the flat dict a training loop logs."""
import os
import shutil
import subprocess
import time

import pytest

import gstwsi
from gstwsi._utils.elements import elements_of

LOG_EVERY = 5


def pipeline(slides, stats_interval=0, **kw):
    opts = dict(batch_size=8, patch_size=32, patches_per_slide=8, cycle=True)
    opts.update(kw)
    description = gstwsi.standard_pipeline(slides, **opts)
    if stats_interval:
        description = description.replace(
            "patchbatch ", f"patchbatch stats-interval={stats_interval} ")
    return description


def run_logged(stream, monitor, windows, step_s):
    """Iterates until `windows` logs came; a step sleeps `step_s`."""
    logs = []
    for i, batch in enumerate(stream):
        time.sleep(step_s)                        # the "training step"
        out = monitor.mark_step(extra={"train/loss": 0.5})
        if (i + 1) % LOG_EVERY:
            assert out is None
        else:
            logs.append(out)
        if len(logs) == windows:
            break
    return logs


def test_monitor_dict(slides):
    assert gstwsi.init(monitor=True), "wsistats tracer not active (GST_TRACERS set elsewhere?)"
    # A pipeline that ran before in this process: the tracer remembers its
    # queues, the monitor of another stream must not report them.
    with gstwsi.BatchStream(pipeline(slides, cycle=False), torch=False) as earlier:
        assert sum(1 for _ in earlier) > 0
    stream = gstwsi.BatchStream(pipeline(slides), torch=False)
    monitor = gstwsi.Monitor(stream, log_every=LOG_EVERY, prefix="data/")
    logs = run_logged(stream, monitor, 2, 0.01)
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
    fills = sorted(k for k in last if k.startswith("data/queue/") and k.endswith("fill_pct_mean"))
    queues = sorted(f"data/queue/{q.get_name()}/fill_pct_mean"
                    for q in elements_of(stream.pipeline, "queue"))
    assert fills == queues and len(fills) == 2    # this pipeline's two queues only
    # A queue takes a whole buffer list while it is not full: after
    # patchreader (runs of at most 16 patches in one list) it may hold up to
    # 15 patches over its limit, which its fill shows (over 100 %).
    for q in elements_of(stream.pipeline, "queue"):
        limit = q.get_property("max-size-buffers")
        fill = last[f"data/queue/{q.get_name()}/fill_pct_mean"]
        assert 0 <= fill <= 100 * (limit + 15) / limit, (q.get_name(), fill, limit)
    stream.close()


def test_monitor_pipeline_counters(slides):
    stream = gstwsi.BatchStream(pipeline(slides), torch=False)
    monitor = gstwsi.Monitor(stream, log_every=LOG_EVERY, prefix="data/")
    last = run_logged(stream, monitor, 2, 0.0)[-1]
    stream.close()
    p = "data/pipeline/"
    source = elements_of(stream.pipeline, "wsislidesrc")[0]
    for key in ("slides_failed", "patches_planned", "patches_read", "patches_dropped"):
        assert isinstance(last[p + key], int), key
    # wsislidesrc's visit counters, where this wsislidesrc has them
    for key in ("slides_opened", "slides_rejected", "slides_blank"):
        if source.find_property(key.replace("_", "-")) is not None:
            assert isinstance(last[p + key], int), key
    if source.find_property("slides-opened") is not None:
        assert last[p + "slides_opened"] >= 1
    # 10 batches of 8 were consumed: read and planned ahead of that
    assert last[p + "patches_read"] >= 10 * 8
    assert last[p + "patches_planned"] >= last[p + "patches_read"]
    assert last[p + "slides_failed"] == last[p + "patches_dropped"] == 0
    # Read now from the elements themselves (no stats message requested).
    readers = elements_of(stream.pipeline, "patchreader")
    assert last[p + "patches_read"] <= readers[0].get_property("patches-read")
    assert "patches_rejected" not in {k[len(p):] for k in last if k.startswith(p)}


def test_monitor_stream_stats(slides):
    stream = gstwsi.BatchStream(pipeline(slides, stats_interval=20), torch=False)
    monitor = gstwsi.Monitor(stream, log_every=LOG_EVERY, prefix="data/")
    logs = run_logged(stream, monitor, 3, 0.02)
    stream.close()
    p = "data/pipeline/"
    stats = stream.stream_stats
    assert stats is not None, "no wsi-stream-stats message seen"
    last = logs[-1]
    assert 0 < last[p + "patches"] <= stream.patches + 2 * 8 * 4  # what patchbatch pushed
    assert last[p + "patches"] % 8 == 0
    assert 0 < last[p + "tissue_fraction_mean"] <= 1
    # 0.25-mpp slides read at target-mpp 0.5: every patch in the 0.5 bin
    mpp = {k: v for k, v in last.items() if k.startswith(p + "mpp/")}
    assert list(mpp) == [p + "mpp/0.5"] and mpp[p + "mpp/0.5"] == last[p + "patches"]
    # the generated slides carry no label
    assert last[p + "label/(none)"] == last[p + "patches"]
    # later logs report later messages
    assert logs[0][p + "patches"] <= last[p + "patches"]


class _Clock:
    """time.monotonic_ns for gstwsi.monitor: moves only when told."""

    def __init__(self):
        self.ns = 10**12

    def monotonic_ns(self):
        return self.ns


class _SinkEntry:
    """The sink's entry of the tracer's get-stats: cumulative busy/wait."""

    def __init__(self, name):
        self.name, self.busy_s, self.wait_s = name, 0.0, 0.0

    def get_string(self, field):
        return {"name": self.name, "shape": "sink"}.get(field)

    def get_double(self, field):
        value = {"busy-s": self.busy_s, "wait-s": self.wait_s}.get(field)
        return (value is not None, value or 0.0)


class _Stats:
    def __init__(self, sink):
        self.sink = sink

    def get_uint64(self, field):
        return (False, 0)

    def get_double(self, field):
        return (False, 0.0)

    def get_value(self, field):
        return [self.sink] if field == "elements" else None


class _Tracer:
    def __init__(self, sink):
        self.sink = sink

    def emit(self, signal, *args):
        return _Stats(self.sink) if signal == "get-stats" else None


class _Stream:
    """What Monitor reads of a BatchStream: its wait time, its counts, a
    pipeline holding its appsink."""

    def __init__(self):
        self.pipeline = gstwsi.stream.Gst.Pipeline.new(None)
        self._sink = gstwsi.stream.Gst.ElementFactory.make("fakesink", "sink")
        self.pipeline.add(self._sink)
        self.wait_ns = 0
        self.patches = self.batches = 0

    def read_stream_stats(self):
        return None


def test_loader_bound_and_wait_share_agree(monkeypatch):
    """Both over the same window, on one clock that moves only as the
    scenario says (a live run made them depend on the machine's load). A
    trainer faster than the loader waits for its batches (wait_share 1)
    while the sink waits for data (loader_bound 1); a trainer slower than
    the loader never waits (wait_share 0) and the sink is blocked on it
    (loader_bound 0); a mixed window gives the same share on both sides.
    Each window counts only its own steps: after a loader-bound window,
    a trainer-bound one reads 0, not an average over the run."""
    clock = _Clock()
    monkeypatch.setattr(gstwsi.monitor, "time", clock)
    stream = _Stream()
    sink = _SinkEntry("sink")
    monitor = gstwsi.Monitor(stream, log_every=LOG_EVERY)
    monitor.tracer = _Tracer(sink)

    def window(wait_ms, compute_ms):
        """LOG_EVERY steps: the trainer waits wait_ms for its batch (the
        sink waits for data as long), then computes compute_ms (the sink
        is blocked on it as long)."""
        for _ in range(LOG_EVERY):
            clock.ns += wait_ms * 10**6
            stream.wait_ns += wait_ms * 10**6
            sink.wait_s += wait_ms / 1e3
            clock.ns += compute_ms * 10**6
            sink.busy_s += compute_ms / 1e3
            stream.batches += 1
            stream.patches += 8
            out = monitor.mark_step()
        return out

    fast = window(20, 0)
    assert fast["data/wait_share"] == pytest.approx(1.0)
    assert fast["data/loader_bound"] == pytest.approx(1.0)
    slow = window(0, 100)
    assert slow["data/wait_share"] == pytest.approx(0.0)
    assert slow["data/loader_bound"] == pytest.approx(0.0)
    mixed = window(30, 70)
    assert mixed["data/wait_share"] == pytest.approx(0.3)
    assert mixed["data/loader_bound"] == pytest.approx(0.3)
    assert mixed["data/batches_per_s"] == pytest.approx(10.0)   # 100 ms a step


def test_monitor_rejects_bad_log_every(slides):
    stream = gstwsi.BatchStream(gstwsi.standard_pipeline(slides), torch=False)
    with pytest.raises(ValueError):
        gstwsi.Monitor(stream, log_every=0)
    stream.close()


def test_stream_stats_columns_and_labels(tmp_root, slides):
    """Per-column counts of a manifest in stream.stream_stats (and the
    Monitor's column/ keys) equal what the batches carried."""
    names = sorted(p.name for p in slides.iterdir() if p.is_file())
    manifest = tmp_root / "stats-manifest.csv"
    manifest.write_text("path,patient,label\n" + "".join(
        f"{slides / n},P{i % 2},{'tumor' if i < 2 else 'normal'}\n"
        for i, n in enumerate(names)))
    description = pipeline(manifest, stats_interval=1, cycle=False)
    seen = {}
    labels = {}
    logs = []
    with gstwsi.BatchStream(description, torch=False) as stream:
        monitor = gstwsi.Monitor(stream, log_every=1, prefix="")
        for batch in stream:
            for value in batch.columns["patient"].tolist():
                seen[str(value)] = seen.get(str(value), 0) + 1
            for label in batch.labels:
                labels[label or "(none)"] = labels.get(label or "(none)", 0) + 1
            time.sleep(0.002)               # > stats-interval: a message per batch
            logs.append(monitor.mark_step())
        stats = stream.stream_stats          # the message posted at EOS
    assert stats is not None and stats["patches"] == sum(seen.values()) > 0
    assert stats["columns"]["patient"] == seen
    assert set(seen) == {"P0", "P1"}
    assert stats["labels"] == labels and set(labels) == {"tumor", "normal"}
    flat = gstwsi.streamstats.flat_keys(stats, "pipeline/")
    for value, count in seen.items():
        assert flat[f"pipeline/column/patient/{value}"] == count
    # the monitor logged the messages as they came: counts only grow
    counted = [sum(v for k, v in log.items() if k.startswith("pipeline/column/patient/"))
               for log in logs]
    assert counted[-1] > 0 and counted == sorted(counted)
    assert counted[-1] <= stats["patches"]


def test_monitor_names_damaged_slides(slides, tmp_root):
    """A DICOM series whose level-0 instance is cut short still streams;
    the monitor counts it in pipeline/slides_damaged and names it."""
    tool = os.environ.get("WSI_MAKE_TEST_DICOM") or shutil.which("wsi-make-test-dicom")
    if not tool:
        pytest.skip("wsi-make-test-dicom not found (set WSI_MAKE_TEST_DICOM)")
    tiffs = sorted(slides.glob("*.tif*"))
    out = tmp_root / "damaged-dicom"
    subprocess.run([tool, str(tiffs[0]), str(out)], check=True, stdout=subprocess.DEVNULL)
    level0 = out / "slide-level0.dcm"
    os.truncate(level0, level0.stat().st_size * 3 // 4)
    listing = tmp_root / "damaged-dicom.txt"
    listing.write_text("\n".join([str(level0)] + [str(t) for t in tiffs[1:3]]) + "\n")
    stream = gstwsi.BatchStream(pipeline(str(listing)), torch=False)
    monitor = gstwsi.Monitor(stream, log_every=LOG_EVERY, prefix="data/")
    last = run_logged(stream, monitor, 2, 0.0)[-1]
    names = monitor.damaged_slides()
    stream.close()
    assert last["data/pipeline/slides_damaged"] == 1, last
    assert names == [str(level0)]
    # the intact slides next to it are not named
    assert all(str(t) not in names for t in tiffs)


@pytest.fixture(scope="module")
def skipping_slides(slides, tmp_root):
    """Two good slides, three broken files and a slide without tissue."""
    from conftest import _generator
    out = tmp_root / "skipping-slides"
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([_generator(), "--broken", "--count", "0", str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([_generator(), "--count", "1", "--width", "2048", "--height", "1536",
                    "--blobs", "0", str(out / "blank")], check=True, stdout=subprocess.DEVNULL)
    for name in ("slide-00.tiff", "slide-01.svs"):
        shutil.copy(slides / name, out / name)
    expected = {str(out / "broken-empty.svs"): "failed", str(out / "broken-garbage.svs"): "failed",
                str(out / "broken-truncated.tiff"): "failed",
                str(out / "blank" / "slide-00.tiff"): "blank"}
    return out, expected


def test_monitor_names_skipped_slides(skipping_slides):
    """The pipeline/slides_* counters say how many; skipped_slides() says
    which and why, once each, and new_skipped_slides() each only once."""
    folder, expected = skipping_slides
    stream = gstwsi.BatchStream(pipeline(str(folder), cycle=False), torch=False)
    monitor = gstwsi.Monitor(stream, log_every=2, prefix="data/")
    told = []
    for _ in stream:
        monitor.mark_step()
        told += monitor.new_skipped_slides()
    told += monitor.new_skipped_slides()
    found = monitor.skipped_slides()
    stream.close()
    assert {slide: kind for slide, kind, _ in found} == expected, found
    assert len(found) == len(expected)                  # once each
    assert sorted(told) == sorted(found)                # each told once
    assert all(why and slide not in why.split(": ")[0] for slide, _, why in found
               if not slide.endswith(".tiff")), found   # the reason, not the name again
    assert "not a slide format" in dict((s, w) for s, _, w in found)[str(folder / "broken-garbage.svs")]
    assert "tissue" in dict((s, w) for s, _, w in found)[str(folder / "blank" / "slide-00.tiff")]
