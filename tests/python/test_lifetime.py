"""Pipelines are freed: closed streams, streams restarted for new epochs, left
loops, failed loops and dataset iterations leave no GstPipeline (nor any
wsislidesrc) alive, without waiting for Python's cycle collector."""
import gc

import pytest

import gstwsi
from gstwsi._utils.elements import elements_of

BATCH, PATCH, PER_SLIDE = 4, 32, 4


def finite(slides, **kw):
    opts = dict(batch_size=BATCH, patch_size=PATCH, patches_per_slide=PER_SLIDE,
                threads=1, cycle=False, seed=9, prefetch=16)
    opts.update(kw)
    return gstwsi.standard_pipeline(slides, **opts)


class Alive:
    """GObject weak references to every pipeline and wsislidesrc the
    module builds while active: `alive()` names those not finalized."""

    def __init__(self, monkeypatch):
        self.objects = {}
        parse = gstwsi.stream.parse_strict

        def tracked_parse(description):
            pipeline = parse(description)
            for obj in [pipeline] + elements_of(pipeline, "wsislidesrc"):
                self._watch(obj)
            return pipeline

        monkeypatch.setattr(gstwsi.stream, "parse_strict", tracked_parse)

    def _watch(self, obj):
        name = f"{obj.get_name()}@{id(obj):x}"
        self.objects[name] = True
        obj.weak_ref(lambda *_: self.objects.__setitem__(name, False))

    def alive(self):
        return [name for name, alive in self.objects.items() if alive]


@pytest.fixture
def tracked(monkeypatch):
    # Reference counting alone must free them: a reference cycle would keep
    # them until the cycle collector runs, so it is kept off meanwhile.
    gc.collect()
    gc.disable()
    try:
        yield Alive(monkeypatch)
    finally:
        gc.enable()


def test_epochs_and_set_epoch_free_the_pipeline(slides, tracked):
    stream = gstwsi.BatchStream(finite(slides), torch=False)
    for _ in range(3):                  # three epochs by re-iteration
        assert sum(1 for _ in stream) > 0
    stream.set_epoch(7)
    assert sum(1 for _ in stream) > 0
    assert len(tracked.objects) == 2    # one pipeline, one source: reused
    stream.close()
    del stream
    assert tracked.alive() == []


def test_break_exception_and_dropped_stream(slides, tracked):
    with gstwsi.BatchStream(finite(slides), torch=False) as stream:
        for batch in stream:
            break
        for batch in stream:            # next epoch, left by an exception
            with pytest.raises(ZeroDivisionError):
                1 / 0
            break
    del stream, batch
    # A stream left playing and dropped without close(): __del__ stops it.
    for batch in gstwsi.BatchStream(finite(slides, cycle=True), torch=False):
        break
    del batch
    assert len(tracked.objects) == 4
    assert tracked.alive() == []


def test_zero_copy_batches_keep_only_their_buffers(slides, tracked):
    stream = gstwsi.BatchStream(finite(slides), torch=False)
    kept = [b for b in stream]
    stream.close()
    del stream
    # The batches keep their buffers mapped, not the pipeline.
    assert gstwsi.live_mapped_buffers() >= 1
    assert tracked.alive() == []
    del kept
    assert gstwsi.live_mapped_buffers() == 0


def test_dataset_iterations_free_their_streams(slides, tracked):
    pytest.importorskip("torch")
    ds = gstwsi.WsiIterableDataset(location=slides, rank=0, world_size=1, worker_id=0,
                                   num_workers=1, batch_size=BATCH, patch_size=PATCH,
                                   patches_per_slide=PER_SLIDE, threads=1, cycle=False,
                                   seed=9, prefetch=16)
    for epoch in range(2):
        ds.set_epoch(epoch)
        assert sum(1 for _ in ds) > 0
    it = iter(ds)
    next(it)
    del it                              # a loop abandoned mid-epoch
    assert len(tracked.objects) == 6
    assert tracked.alive() == []
