"""A patch store opened like a slide folder: standard_pipeline("store/")
serves it through patchstoresrc, and BatchStream iterates it: every stored
patch once per epoch, in batches, with the records the store holds."""
import json

import numpy as np
import pytest

import gstwsi
from gstwsi.stream import Gst

PATCHES = 40


@pytest.fixture(scope="module")
def store(slides, tmp_root):
    out = tmp_root / "store-python"
    description = (f'wsislidesrc location="{slides}" seed=2 ! tissuemask ! queue ! '
                   f"patchsampler patch-size=64 max-patches={PATCHES} ! patchinterleave ! "
                   f'patchreader threads=2 ! patchstoresink location="{out}" '
                   "patches-per-shard=16")
    pipeline = Gst.parse_launch(description)
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    msg = bus.timed_pop_filtered(120 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    assert msg is not None and msg.type == Gst.MessageType.EOS
    return out


def test_standard_pipeline_serves_a_store(store):
    description = gstwsi.standard_pipeline(store, batch_size=8, cycle=False, seed=3)
    assert description.startswith("patchstoresrc ")
    assert json.loads((store / "manifest.json").read_text())["patches"] == PATCHES
    seen = []
    with gstwsi.BatchStream(description, torch=False) as stream:
        for batch in stream:
            assert batch.images.shape[1:] == (64, 64, 3)
            seen += list(batch.records["sequence"])
            assert set(batch.columns["store-epoch"]) == {0}
    # one epoch: every stored patch exactly once, shuffled
    assert sorted(seen) == sorted(set(seen)) and len(seen) == PATCHES
    assert seen != sorted(seen)


def test_store_epochs_and_keywords(store):
    description = gstwsi.standard_pipeline(store, batch_size=10, seed=3, epochs=2,
                                           order="sequential")
    indices, epochs = [], []
    with gstwsi.BatchStream(description, torch=False) as stream:
        for batch in stream:          # no batch kept: patchbatch's pool is bounded
            indices.append(np.array(batch.columns["store-index"]))
            epochs.append(np.array(batch.columns["store-epoch"]))
    indices, epochs = np.concatenate(indices), np.concatenate(epochs)
    assert list(indices) == list(range(PATCHES)) * 2
    assert list(epochs) == [0] * PATCHES + [1] * PATCHES
    with pytest.raises(gstwsi.SettingsError):
        gstwsi.standard_pipeline(store, min_tissue=0.5)


def test_views_store_batches(slides, tmp_root):
    """patchviews' locations stored (store version 2) and served through
    standard_pipeline: batch.views as patchviews' own batches, the same
    crops every epoch."""
    out = tmp_root / "store-views"
    description = (f'wsislidesrc location="{slides}" seed=2 ! tissuemask ! queue ! '
                   f"patchsampler patch-size=64 max-patches=16 ! patchinterleave ! "
                   f'patchreader threads=2 ! patchviews seed=1 views=v:2:32:0.3:1.0 ! '
                   f'patchstoresink location="{out}" patches-per-shard=8')
    pipeline = Gst.parse_launch(description)
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    msg = bus.timed_pop_filtered(120 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    assert msg is not None and msg.type == Gst.MessageType.EOS
    assert json.loads((out / "manifest.json").read_text())["version"] == 2
    epochs = []
    description = gstwsi.standard_pipeline(out, batch_size=8, cycle=False, epochs=2,
                                           order="sequential")
    with gstwsi.BatchStream(description, torch=False) as stream:
        for batch in stream:
            assert list(batch.views) == ["v_0", "v_1"]
            for name in batch.views:
                assert batch.views[name].shape == (8, 32, 32, 3)
            epochs.append({k: np.array(v) for k, v in batch.views.items()})
    assert len(epochs) == 4
    for k in ("v_0", "v_1"):
        assert np.array_equal(np.concatenate([e[k] for e in epochs[:2]]),
                              np.concatenate([e[k] for e in epochs[2:]]))
