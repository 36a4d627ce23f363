"""patchstoresink format=webdataset read back with Python's tarfile, as
webdataset / litdata readers would: every sample has KEY.png (or KEY.jpg),
KEY.json and KEY.cls; the images decode to the patch size; the JSON holds the
record that the native store keeps for the same patch."""
import io
import json
import tarfile

import numpy as np
import pytest

from gstwsi.stream import Gst

PATCHES = 24


def run(description):
    pipeline = Gst.parse_launch(description)
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    msg = bus.timed_pop_filtered(120 * Gst.SECOND,
                                 Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    assert msg is not None, "no EOS within 120 s"
    if msg.type == Gst.MessageType.ERROR:
        pytest.fail(msg.parse_error()[0].message)


def extract(slides, sink):
    run(f'wsislidesrc location="{slides}" seed=4 ! tissuemask ! queue ! '
        f"patchsampler patch-size=64 max-patches={PATCHES} ! patchinterleave ! "
        f"patchreader threads=2 ! {sink}")


def samples(folder):
    """key -> {extension: bytes}, over every shard, in shard order."""
    found = {}
    for shard in sorted(folder.glob("shard-*.tar")):
        with tarfile.open(shard) as tar:
            for member in tar.getmembers():
                key, ext = member.name.split(".", 1)
                found.setdefault(key, {})[ext] = tar.extractfile(member).read()
    return found


@pytest.mark.parametrize("encoding,image", [("raw", "png"), ("jpeg", "jpg")])
def test_webdataset_shards_read_with_tarfile(slides, tmp_root, encoding, image):
    PIL = pytest.importorskip("PIL.Image")
    out = tmp_root / f"wds-{encoding}"
    extract(slides, f'patchstoresink location="{out}" format=webdataset '
            f"encoding={encoding} patches-per-shard=10")
    assert sorted(p.name for p in out.glob("*")) == [
        "shard-000000.tar", "shard-000001.tar", "shard-000002.tar"]
    found = samples(out)
    assert sorted(found) == [f"{k:010d}" for k in range(PATCHES)]
    sequences = []
    for key, parts in found.items():
        assert set(parts) == {image, "json", "cls"}, key
        picture = PIL.open(io.BytesIO(parts[image]))
        assert picture.size == (64, 64) and picture.mode == "RGB"
        meta = json.loads(parts["json"])
        assert meta["key"] == key
        assert meta["record"]["out_size"] == 64
        assert meta["path"].endswith((".tiff", ".svs"))
        assert parts["cls"].decode() == meta["label"]
        sequences.append(meta["record"]["sequence"])
    assert sequences == sorted(sequences)


def test_webdataset_png_is_the_native_stores_patch(slides, tmp_root):
    """Lossless export: the PNG pixels are the raw store's bytes."""
    PIL = pytest.importorskip("PIL.Image")
    wds, native = tmp_root / "wds-same", tmp_root / "native-same"
    extract(slides, f'tee name=t ! queue ! patchstoresink location="{wds}" '
            f'format=webdataset t. ! queue ! patchstoresink location="{native}"')
    manifest = json.loads((native / "manifest.json").read_text())
    assert manifest["patches"] == PATCHES
    raw = np.fromfile(native / "shard-00000.wsis", np.uint8)
    footer = raw[-64:]
    n = int(footer[12:16].view("<u4")[0])
    at = int(footer[16:24].view("<u8")[0])
    entries = raw[at:at + 128 * n]
    found = samples(wds)
    for i in range(n):
        entry = entries[128 * i:128 * (i + 1)]
        offset, size = (int(v) for v in entry[:16].view("<u8"))
        pixels = raw[offset:offset + size].reshape(64, 64, 3)
        png = np.asarray(PIL.open(io.BytesIO(found[f"{i:010d}"]["png"])))
        assert np.array_equal(png, pixels), i
        sequence = int(entry[16:24].view("<u8")[0])
        assert json.loads(found[f"{i:010d}"]["json"])["record"]["sequence"] == sequence


VIEWS = "target:patch,crop:2:24:0.3:1.0"
VIEW_NAMES = ["target", "crop_0", "crop_1"]
VIEW_SIZES = {"target": 64, "crop_0": 24, "crop_1": 24}


@pytest.mark.skipif(Gst.ElementFactory.find("patchviews") is None,
                    reason="patchviews not built (needs OpenSlide)")
@pytest.mark.parametrize("encoding,image", [("raw", "png"), ("jpeg", "jpg")])
def test_webdataset_multi_view_samples(slides, tmp_root, encoding, image):
    """patchviews' locations exported: one sample per location with
    KEY.NAME.png (or .jpg) per view, KEY.json (record + the views' records)
    and KEY.cls; the PNG views are the very pixels patchviews pushed (the
    same seeded pipeline into an appsink), the JPEG views close to them."""
    PIL = pytest.importorskip("PIL.Image")
    import gstwsi
    out = tmp_root / f"wds-views-{encoding}"
    head = (f'wsislidesrc location="{slides}" seed=4 ! tissuemask ! queue ! '
            f"patchsampler patch-size=64 max-patches={PATCHES} ! patchinterleave ! "
            f'patchreader threads=2 ! patchviews views="{VIEWS}" seed=9 threads=2')
    run(f'{head} ! patchstoresink location="{out}" format=webdataset '
        f"encoding={encoding} patches-per-shard=10")
    with gstwsi.BatchStream(f"{head} ! patchbatch batch-size=1 ! "
                            "appsink name=sink sync=false", torch=False,
                            copy=True) as stream:
        pushed = list(stream)
    assert len(pushed) == PATCHES
    found = samples(out)
    assert sorted(found) == [f"{k:010d}" for k in range(PATCHES)]
    for k, batch in enumerate(pushed):
        parts = found[f"{k:010d}"]
        assert set(parts) == {f"{n}.{image}" for n in VIEW_NAMES} | {"json", "cls"}
        meta = json.loads(parts["json"])
        assert meta["record"]["sequence"] == int(batch.records["sequence"][0])
        assert [v["name"] for v in meta["views"]] == VIEW_NAMES
        assert [v["view_index"] for v in meta["views"]] == [0, 1, 2]
        for v, name in enumerate(VIEW_NAMES):
            picture = np.asarray(PIL.open(io.BytesIO(parts[f"{name}.{image}"])))
            want = batch.views[name][0]
            assert picture.shape == (VIEW_SIZES[name], VIEW_SIZES[name], 3)
            assert meta["views"][v]["out_width"] == VIEW_SIZES[name]
            assert meta["views"][v]["x"] == pytest.approx(
                float(batch.view_records["x"][0, v]))
            if image == "png":
                assert np.array_equal(picture, want), (k, name)
            else:
                err = np.mean((picture.astype(float) - want) ** 2)
                assert 10 * np.log10(255.0 ** 2 / max(err, 1e-9)) >= 30, (k, name)
