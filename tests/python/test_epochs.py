"""Epochs: re-iterating a finite BatchStream, set_epoch and resuming at (epoch, batch)."""

import gstwsi

BATCH = 8
PATCH = 64
PER_SLIDE = 16


def finite(slides, **kw):
    opts = dict(batch_size=BATCH, patch_size=PATCH, patches_per_slide=PER_SLIDE,
                threads=2, cycle=False, seed=3, slide_order="random")
    opts.update(kw)
    return gstwsi.standard_pipeline(slides, **opts)


def key(batch):
    return (batch.slide_index.tolist(), batch.x.tolist(), batch.y.tolist())


def run_epoch(stream):
    return [(b.epoch, b.index, key(b)) for b in stream]


def test_epoch_seed_formula():
    assert gstwsi.epoch_seed(3, 0) == 3
    assert gstwsi.epoch_seed(3, 1) == (3 + 0x9E3779B97F4A7C15) % 2**64
    assert 0 <= gstwsi.epoch_seed(2**64 - 1, 5) < 2**64


def test_two_epochs_differ_and_are_reproducible(slides):
    with gstwsi.BatchStream(finite(slides), torch=False) as stream:
        e0 = run_epoch(stream)
        e1 = run_epoch(stream)          # no set_epoch: advances to epoch 1
        assert stream.epoch == 1
    assert len(e0) == len(e1) == 5 * PER_SLIDE // BATCH
    assert {e for e, _, _ in e0} == {0} and {e for e, _, _ in e1} == {1}
    assert [i for _, i, _ in e1] == list(range(len(e1)))
    assert [k for _, _, k in e0] != [k for _, _, k in e1]
    with gstwsi.BatchStream(finite(slides), torch=False) as fresh:
        fresh.set_epoch(1)
        assert run_epoch(fresh) == e1
        fresh.set_epoch(0)
        assert run_epoch(fresh) == e0


def test_break_then_next_epoch(slides):
    with gstwsi.BatchStream(finite(slides), torch=False) as stream:
        for b in stream:
            break
        assert stream.pipeline.get_state(0)[1] == gstwsi.stream.Gst.State.NULL
        rest = run_epoch(stream)
    assert rest and rest[0][0] == 1


def test_resume_at_epoch_and_batch(slides):
    with gstwsi.BatchStream(finite(slides), torch=False, start_epoch=1) as stream:
        e1 = run_epoch(stream)
        e2 = run_epoch(stream)
    k = 3
    with gstwsi.BatchStream(finite(slides), torch=False, start_epoch=1,
                            start_batch=k) as stream:
        stream.set_epoch(1)              # the resume point survives this
        tail = run_epoch(stream)
        nxt = run_epoch(stream)          # epoch 2 plays in full
    assert tail == e1[k:]
    assert nxt == e2
