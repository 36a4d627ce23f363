"""gstwsi.BatchStream: pixels, metadata, errors, shutdown, zero-copy safety."""
import gc
import os
import subprocess
import threading

import numpy as np
import pytest

import gstwsi
from gstwsi.stream import Gst
from gi.repository import GLib

BATCH, PATCH, PER_SLIDE = 8, 32, 8


def finite(slides, **kw):
    opts = dict(batch_size=BATCH, patch_size=PATCH, patches_per_slide=PER_SLIDE,
                threads=2, cycle=False, seed=3)
    opts.update(kw)
    return gstwsi.standard_pipeline(slides, **opts)


def test_batches_equal_the_c_path_bytes(slides, tmp_root):
    description = finite(slides)
    with gstwsi.BatchStream(description, torch=False) as stream:
        batches = list(stream)
    assert len(batches) == 5 * PER_SLIDE // BATCH
    for b in batches:
        assert b.images.shape == (BATCH, PATCH, PATCH, 3)
        assert b.images.dtype == np.uint8
        assert b.images.std() > 0           # real pixels, not a blank buffer
    # The same description run by gst-launch-1.0 (C only), bytes into a file.
    raw = tmp_root / "c-path.raw"
    launch = description.replace("appsink name=sink sync=false max-buffers=2",
                                 f"filesink location={raw}")
    subprocess.run(["gst-launch-1.0", "-q"] + launch.split(), check=True,
                   stdout=subprocess.DEVNULL)
    c_bytes = raw.read_bytes()
    py_bytes = b"".join(b.images.tobytes() for b in batches)
    assert len(py_bytes) == len(c_bytes)
    assert py_bytes == c_bytes


def test_metadata_arrays(slides):
    with gstwsi.BatchStream(finite(slides), torch=False) as stream:
        batches = list(stream)
    names = sorted(p.name for p in slides.iterdir())
    seen = set()
    for i, b in enumerate(batches):
        assert b.index == i and b.offset == i
        assert len(b) == BATCH and len(b.paths) == BATCH and len(b.labels) == BATCH
        for arr in (b.slide_index, b.x, b.y, b.level, b.mpp, b.tissue_fraction, b.cycle):
            assert arr.shape == (BATCH,)
        for path, index in zip(b.paths, b.slide_index):
            # slide_index is the position in the sorted collection
            assert path.endswith(names[index])
            seen.add(path)
        # each patch names its slide's file (what patchreader opened) and its
        # level-0 resolution, from the slide meta: nothing to reconstruct
        assert [GLib.filename_from_uri(u)[0] for u in b.uris] == \
            [str(slides / names[i]) for i in b.slide_index]
        assert b.slide_mpp.dtype == np.float64 and np.allclose(b.slide_mpp, 0.25)
        assert b.metadata()["uri"] == b.uris
        # 0.5 mpp output from 0.25 mpp slides: 64 px footprints inside 2048x1536
        assert np.allclose(b.mpp, 0.5)
        assert (b.records["footprint"] == 2 * PATCH).all()
        assert (b.x >= 0).all() and (b.x + 2 * PATCH <= 2048).all()
        assert (b.y >= 0).all() and (b.y + 2 * PATCH <= 1536).all()
        assert (b.level != 0xFFFFFFFF).all()
        assert ((b.tissue_fraction >= 0) & (b.tissue_fraction <= 1)).all()
        assert (b.cycle == 0).all()
    assert len(seen) == 5
    seqs = np.concatenate([b.sequence for b in batches])
    assert (seqs == np.arange(len(seqs))).all()


def test_torch_tensor_shares_the_buffer(slides):
    torch = pytest.importorskip("torch")
    with gstwsi.BatchStream(finite(slides)) as stream:
        batch = stream.next_batch()
        assert isinstance(batch.images, torch.Tensor)
        assert batch.images.dtype == torch.uint8
        assert tuple(batch.images.shape) == (BATCH, PATCH, PATCH, 3)
        # no copy: the tensor points into the mapped GstBuffer
        assert gstwsi.live_mapped_buffers() >= 1
        assert not batch.images.numpy().flags.owndata


def test_zero_copy_outlives_the_pipeline_and_is_released(slides):
    gc.collect()
    before = gstwsi.live_mapped_buffers()
    stream = gstwsi.BatchStream(finite(slides, cycle=True), torch=False)
    first = stream.next_batch()
    kept = first.images[2:5]                       # a view: holds the buffer too
    snapshot = kept.copy()
    del first
    for _ in range(10):                            # the pipeline moves on...
        stream.next_batch()
    stream.close()                                 # ...and stops
    gc.collect()
    assert stream.pipeline.get_state(0)[1] == Gst.State.NULL
    assert gstwsi.live_mapped_buffers() == before + 1   # only `kept`'s buffer
    assert np.array_equal(kept, snapshot)          # still valid, same bytes
    del kept
    gc.collect()
    assert gstwsi.live_mapped_buffers() == before  # unmapped and released


def test_copy_mode_holds_no_buffer(slides):
    gc.collect()
    before = gstwsi.live_mapped_buffers()
    with gstwsi.BatchStream(finite(slides), torch=False, copy=True) as stream:
        batch = stream.next_batch()
        assert batch.images.flags.owndata or batch.images.base.flags.owndata
        assert gstwsi.live_mapped_buffers() == before


def test_bad_location_raises_with_the_bus_message(tmp_root):
    missing = tmp_root / "no-such-dir"
    stream = gstwsi.BatchStream(finite(missing), torch=False, timeout=30)
    with pytest.raises(gstwsi.PipelineError) as info:
        for _ in stream:
            pass
    err = info.value
    assert err.source.startswith("wsislidesrc")
    assert "no-such-dir" in str(err) and err.message
    assert stream.pipeline.get_state(0)[1] == Gst.State.NULL


def test_early_break_shuts_down(slides):
    threads_before = threading.active_count()
    stream = gstwsi.BatchStream(finite(slides, cycle=True), torch=False)
    for i, _ in enumerate(stream):
        if i == 2:
            break
    # leaving the loop stopped the pipeline: NULL, no element PLAYING
    assert stream.pipeline.get_state(0)[1] == Gst.State.NULL
    it = stream.pipeline.iterate_recurse()
    while True:
        res, elem = it.next()
        if res != Gst.IteratorResult.OK:
            break
        assert elem.get_state(0)[1] == Gst.State.NULL, elem.get_name()
    assert threading.active_count() == threads_before
    assert stream.next_batch() is None
    # the pipeline's own streaming threads are gone too
    assert stream.pipeline.get_by_name("sink").get_state(0)[1] == Gst.State.NULL


def test_keyboard_interrupt_shuts_down(slides):
    stream = gstwsi.BatchStream(finite(slides, cycle=True), torch=False)
    with pytest.raises(KeyboardInterrupt):
        for i, _ in enumerate(stream):
            if i == 1:
                raise KeyboardInterrupt
    assert stream.pipeline.get_state(0)[1] == Gst.State.NULL


def test_repeated_streams_do_not_leak_mappings(slides):
    gc.collect()
    before = gstwsi.live_mapped_buffers()
    for _ in range(3):
        with gstwsi.BatchStream(finite(slides), torch=False) as stream:
            total = sum(len(b) for b in stream)
        assert total == 5 * PER_SLIDE
    gc.collect()
    assert gstwsi.live_mapped_buffers() == before


def _has(factory, prop):
    elem = Gst.ElementFactory.make(factory, None)
    return elem is not None and elem.find_property(prop) is not None


def test_resume_continues_the_same_stream(slides):
    if not _has("patchinterleave", "skip-patches"):
        pytest.skip("patchinterleave has no skip-patches yet")
    description = finite(slides, cycle=True)
    with gstwsi.BatchStream(description, torch=False) as stream:
        full = [stream.next_batch() for _ in range(6)]
    with gstwsi.BatchStream(description, torch=False, start_batch=4) as stream:
        resumed = [stream.next_batch() for _ in range(2)]
    for a, b in zip(full[4:], resumed):
        assert b.index == a.index
        assert np.array_equal(a.records[["x", "y", "slide_index", "cycle"]],
                              b.records[["x", "y", "slide_index", "cycle"]])
        assert np.array_equal(a.images, b.images)
    assert max(int(b.cycle.max()) for b in full) >= 1   # cycle travels in the meta


CHILD = r'''
import sys, threading, gstwsi
from gstwsi.stream import Gst
stream = gstwsi.BatchStream(sys.argv[1], torch=False)
try:
    for i, batch in enumerate(stream):
        if i == 1:
            print("ready", flush=True)
except KeyboardInterrupt:
    print("interrupted", stream.pipeline.get_state(0)[1].value_nick, flush=True)
'''


def test_sigint_stops_the_pipeline(slides, example_env):
    import signal
    import sys
    # An endless stream whose consumer never sleeps: the signal lands while
    # Python waits in the appsink pull, which must let it through.
    proc = subprocess.Popen([sys.executable, "-c", CHILD, finite(slides, cycle=True)],
                            env=example_env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert out.strip().splitlines()[-1] == "interrupted null"


def test_holding_every_batch_does_not_stall(slides):
    """list(stream) keeps every zero-copy batch alive: past what patchbatch's
    bounded pool allows, batches are copied (with a warning) instead of the
    stream waiting for the caller to release one."""
    description = finite(slides, patches_per_slide=32)   # 20 batches > 8
    with pytest.warns(RuntimeWarning, match="batches are copied"):
        with gstwsi.BatchStream(description, torch=False, timeout=30) as stream:
            batches = list(stream)
    assert len(batches) == 5 * 32 // BATCH
    assert all(b.images.std() > 0 for b in batches)


def test_latin1_file_names(tmp_root, slides):
    """A slide named in Latin-1 streams; a broken one with such a name is
    skipped with a warning Python can read (escaped, UTF-8)."""
    folder = tmp_root / "latin1"
    folder.mkdir(exist_ok=True)
    source = sorted(slides.iterdir())[0]
    good = os.path.join(os.fsencode(folder), b"caf\xe9" + os.fsencode(source.suffix))
    with open(source, "rb") as src, open(good, "wb") as dst:
        dst.write(src.read())
    with open(os.path.join(os.fsencode(folder), b"d\xe9fectueux.svs"), "wb") as f:
        f.write(os.urandom(4096))
    description = finite(folder)
    with gstwsi.BatchStream(description, torch=False) as stream:
        batches = list(stream)
        warnings_seen = list(stream.warnings)
    assert len(batches) == PER_SLIDE // BATCH
    assert all(p.endswith("caf\\xE9" + source.suffix) for b in batches for p in b.paths)
    # the uri keeps the name's exact bytes: it opens the very file
    assert {GLib.filename_from_uri(u)[0] for b in batches for u in b.uris} == \
        {os.fsdecode(good)}
    assert any("d\\xE9fectueux.svs" in w for w in map(str, warnings_seen))
