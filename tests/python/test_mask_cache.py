"""standard_pipeline(mask_cache_dir=...): tissuemask keeps masks on disk; a
second run streams the same bytes without computing a mask."""
import gstwsi
from gstwsi.stream import Gst

BATCH, PATCH, PER_SLIDE = 8, 32, 8


def _run(slides, cache, **settings):
    description = gstwsi.standard_pipeline(
        slides, batch_size=BATCH, patch_size=PATCH, patches_per_slide=PER_SLIDE,
        threads=2, cycle=False, seed=5, mask_cache_dir=cache, **settings)
    assert "mask-cache-dir=" in description
    if "mask_cache_size" in settings:
        assert f"mask-cache-size={settings['mask_cache_size']}" in description
    with gstwsi.BatchStream(description, torch=False) as stream:
        images = b"".join(b.images.tobytes() for b in stream)
        mask = next(e for e in _elements(stream.pipeline)
                    if e.get_factory().get_name() == "tissuemask")
    return images, mask.get_property("masks-computed"), mask.get_property("disk-hits")


def _elements(pipeline):
    it = pipeline.iterate_recurse()
    while True:
        res, elem = it.next()
        if res != Gst.IteratorResult.OK:
            return
        yield elem


def test_warm_mask_cache_computes_nothing_and_streams_the_same(slides, tmp_root):
    cache = tmp_root / "mask-cache"
    cold, cold_computed, cold_hits = _run(slides, cache)
    files = sorted(cache.glob("*.mask"))
    assert cold_computed == 5 and cold_hits == 0
    assert len(files) == 5
    # File names are hashes: no slide name in them.
    assert not any("slide" in f.name or "tif" in f.name for f in files)
    warm, warm_computed, warm_hits = _run(slides, cache)
    assert warm_computed == 0 and warm_hits == 5
    assert warm == cold and len(cold) > 0


def test_without_memory_cache_each_disk_mask_counts_once(slides, tmp_root):
    # mask-cache-size=0: the mask checked for wsislidesrc's query is not
    # kept, so its slide buffer reads it again; disk-hits still counts one
    # mask a slide, and the stream is the one computed masks give.
    cache = tmp_root / "mask-cache-no-memory"
    cold, cold_computed, _ = _run(slides, cache, mask_cache_size=0)
    assert cold_computed == 5
    warm, warm_computed, warm_hits = _run(slides, cache, mask_cache_size=0)
    assert warm_computed == 0 and warm_hits == 5
    assert warm == cold and len(cold) > 0


def test_mask_cache_dir_is_not_for_patch_stores(tmp_root):
    import pytest
    store = tmp_root / "not-a-store-mask"
    store.mkdir(exist_ok=True)
    (store / "manifest.json").write_text("{}")
    with pytest.raises(gstwsi.SettingsError):
        gstwsi.standard_pipeline(store, mask_cache_dir=tmp_root / "masks")
