"""gstwsi batches beyond uint8 NHWC: multi-view dicts (patchviews), float32
NCHW batches (patchbatch normalize=true) and slide columns."""
import numpy as np
import pytest

import gstwsi
from gstwsi.metadata import _columns
from gstwsi.stream import GObject, Gst

BATCH, PATCH, PER_SLIDE = 4, 32, 4
VIEWS = "g:2:24:0.3:1.0,l:2:12:0.05:0.3,ctx:context:16:2x"
NAMES = ["g_0", "g_1", "l_0", "l_1", "ctx"]
SIZES = {"g_0": 24, "g_1": 24, "l_0": 12, "l_1": 12, "ctx": 16}
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)

pytestmark = pytest.mark.skipif(Gst.ElementFactory.find("patchviews") is None,
                                reason="patchviews not built (needs OpenSlide)")


def description(slides, views=True, batch=True, batch_opts=""):
    """The standard finite pipeline, with patchviews after the reader and
    with or without patchbatch."""
    parts = gstwsi.standard_pipeline(
        slides, batch_size=BATCH, patch_size=PATCH, patches_per_slide=PER_SLIDE,
        threads=2, cycle=False, seed=5).split(" ! ")
    out = []
    for part in parts:
        if part.startswith("patchbatch"):
            if not batch:
                continue
            part += " " + batch_opts
        out.append(part)
        if views and part.startswith("patchreader"):
            out.append(f'patchviews views="{VIEWS}" seed=11 threads=2')
    return " ! ".join(out)


def run(desc, **kw):
    with gstwsi.BatchStream(desc, torch=False, **kw) as stream:
        return list(stream)


def test_views_are_a_dict_aligned_on_locations(slides):
    batches = run(description(slides))
    singles = run(description(slides, batch=False))     # one location a buffer
    assert len(batches) == 5 * PER_SLIDE // BATCH
    assert len(singles) == 5 * PER_SLIDE
    for k, b in enumerate(batches):
        assert list(b.views) == NAMES
        for name, array in b.views.items():
            assert array.shape == (BATCH, SIZES[name], SIZES[name], 3)
            assert array.dtype == np.uint8
            assert not array.flags.writeable            # zero-copy, read-only
        assert b.images is b.views["g_0"]
        # metadata once per location, view records (location, view)
        assert len(b) == BATCH and len(b.paths) == BATCH
        assert b.view_records.shape == (BATCH, len(NAMES))
        assert (b.view_records["view_index"] == np.arange(len(NAMES))).all()
        assert (b.view_records["out_width"][:, 0] == 24).all()
        # every crop inside its own location's footprint
        crops = b.view_records[:, :4]
        x0 = b.records["x"][:, None]
        foot = b.records["footprint"][:, None]
        assert (crops["x"] >= x0 - 1e-6).all()
        assert (crops["x"] + crops["width0"] <= x0 + foot + 1e-3).all()
        # the same bytes, view by view, as the unbatched locations
        for i in range(BATCH):
            single = singles[k * BATCH + i]
            assert single.sequence[0] == b.sequence[i]
            assert single.view_records.tobytes() == b.view_records[i:i + 1].tobytes()
            for name in NAMES:
                assert np.array_equal(single.views[name][0], b.views[name][i])
    # distinct locations really differ (a batch is not one location repeated)
    assert not np.array_equal(batches[0].views["g_0"][0], batches[0].views["g_0"][1])


def test_views_as_torch_tensors_share_memory(slides):
    torch = pytest.importorskip("torch")
    with gstwsi.BatchStream(description(slides)) as stream:
        batch = stream.next_batch()
        assert isinstance(batch.views["l_1"], torch.Tensor)
        assert tuple(batch.views["l_1"].shape) == (BATCH, 12, 12, 3)
        held = gstwsi.live_mapped_buffers()
        assert held >= 1
        del batch
        assert gstwsi.live_mapped_buffers() < held


def _normalised(uint8_nhwc):
    x = uint8_nhwc.astype(np.float64) / 255.0
    x = (x - np.array(MEAN)) / np.array(STD)
    return x.transpose(0, 3, 1, 2)


def test_float_batches_are_normalised_nchw(slides):
    plain = run(description(slides, views=False))
    floats = run(description(slides, views=False, batch_opts="normalize=true"))
    assert len(floats) == len(plain) == 5 * PER_SLIDE // BATCH
    for p, f in zip(plain, floats):
        assert f.images.dtype == np.float32
        assert f.images.shape == (BATCH, 3, PATCH, PATCH)
        assert f.views is None
        assert (f.sequence == p.sequence).all()
        np.testing.assert_allclose(f.images, _normalised(p.images), rtol=1e-5, atol=1e-5)


def test_float_views(slides):
    torch = pytest.importorskip("torch")
    plain = run(description(slides))
    opts = 'normalize=true mean="<0.5>" std="<0.25>"'
    with gstwsi.BatchStream(description(slides, batch_opts=opts)) as stream:
        floats = list(stream)
    for p, f in zip(plain, floats):
        for name in NAMES:
            t = f.views[name]
            assert t.dtype == torch.float32
            assert tuple(t.shape) == (BATCH, 3, SIZES[name], SIZES[name])
            want = ((p.views[name].astype(np.float64) / 255 - 0.5) / 0.25).transpose(0, 3, 1, 2)
            np.testing.assert_allclose(t.numpy(), want, rtol=1e-5, atol=1e-5)


def test_bad_mean_is_refused(slides):
    desc = description(slides, views=False, batch_opts='normalize=true mean="<0.1,0.2>"')
    with pytest.raises(gstwsi.PipelineError, match="2 mean and 3 std"):
        run(desc)


def _structure(names, values):
    s = Gst.Structure.new_empty("WsiPatchMeta")
    s.set_value("column-names", GObject.Value(GObject.TYPE_STRV, names))
    s.set_value("column-values", GObject.Value(GObject.TYPE_STRV, values))
    return s


def test_column_arrays_parse_numbers():
    # 3 locations x (label, grade, score, site, maybe)
    s = _structure(["label", "grade", "score", "site", "maybe"],
                   ["tumour", "1", "0.5", "A1", "3",
                    "normal", "-2", "1e3", "B2", "",
                    "tumour", "7", "2", "C3", "x"])
    cols = _columns(s, 3)
    assert list(cols) == ["label", "grade", "score", "site", "maybe"]
    assert cols["label"].tolist() == ["tumour", "normal", "tumour"]
    assert cols["label"].dtype.kind == "U"
    assert cols["grade"].dtype == np.int64 and cols["grade"].tolist() == [1, -2, 7]
    assert cols["score"].dtype == np.float64 and cols["score"].tolist() == [0.5, 1000.0, 2.0]
    assert cols["site"].dtype.kind == "U"
    # an empty value is not a number: the column stays text
    assert cols["maybe"].dtype.kind == "U" and cols["maybe"].tolist() == ["3", "", "x"]
    with pytest.raises(gstwsi.PipelineError):
        _columns(_structure(["a", "b"], ["1", "2", "3"]), 2)
    assert _columns(Gst.Structure.new_empty("WsiPatchMeta"), 2) == {}


@pytest.mark.parametrize("setting", ['std="<0>"', 'mean="<1,2,3,4,5>"', 'std="<0.5,-1,1>"'])
def test_bad_mean_std_raise_settings_error(setting):
    desc = ("videotestsrc num-buffers=1 ! video/x-raw,format=RGB,width=8,height=8 ! "
            f"patchbatch normalize=true {setting} ! appsink")
    with pytest.raises(gstwsi.SettingsError, match="patchbatch"):
        gstwsi.validate_description(desc)
    gstwsi.validate_description(desc.replace(setting, 'mean="<0.5,0.5,0.5>" std="<0.25>"'))


def test_dataset_yields_views(slides):
    torch = pytest.importorskip("torch")
    data = gstwsi.WsiIterableDataset(description(slides), rank=0, world_size=1,
                                     worker_id=0, num_workers=1)
    batches = list(data)
    assert len(batches) == 5 * PER_SLIDE // BATCH
    for b in batches:
        assert list(b["views"]) == NAMES
        assert tuple(b["views"]["ctx"].shape) == (BATCH, 16, 16, 3)
        assert b["views"]["g_0"].dtype == torch.uint8
        assert b["images"] is b["views"]["g_0"]


def test_columns_from_a_manifest(slides, tmp_root):
    """End to end: wsislidesrc manifest columns -> patchreader -> (patchviews)
    -> patchbatch -> batch.columns, aligned with the locations."""
    files = sorted(p.name for p in slides.iterdir())
    rows = {name: (f"class{i % 2}", str(i - 2), f"{i * 0.25:.2f}", f"site-{i}")
            for i, name in enumerate(files)}
    manifest = tmp_root / "manifest.csv"
    manifest.write_text("path,label,grade,score,site\n" + "".join(
        f"{slides.name}/{name},{','.join(row)}\n" for name, row in rows.items()))
    for views in (False, True):
        desc = description(manifest, views=views)
        batches = run(desc)
        assert len(batches) == 5 * PER_SLIDE // BATCH
        for b in batches:
            assert list(b.columns) == ["label", "grade", "score", "site"]
            assert b.columns["label"].tolist() == b.labels
            meta = b.metadata()      # columns join the records' fields
            assert (meta["grade"] == b.columns["grade"]).all()
            assert (meta["column_label"] == b.columns["label"]).all()
            assert b.columns["grade"].dtype == np.int64
            assert b.columns["score"].dtype == np.float64
            assert b.columns["site"].dtype.kind == "U"
            for i, path in enumerate(b.paths):
                label, grade, score, site = rows[path.rsplit("/", 1)[-1]]
                assert b.labels[i] == label
                assert b.columns["grade"][i] == int(grade)
                assert b.columns["score"][i] == float(score)
                assert b.columns["site"][i] == site
            if views:
                assert list(b.views) == NAMES


def test_views_copied_on_request(slides):
    shared = run(description(slides))
    before = gstwsi.live_mapped_buffers()
    copied = run(description(slides), copy=True)
    assert gstwsi.live_mapped_buffers() == before      # nothing held for copies
    for s, c in zip(shared, copied):
        for name in NAMES:
            assert c.views[name].flags.writeable and c.views[name].base.flags.owndata
            assert np.array_equal(s.views[name], c.views[name])


def test_views_batches_do_not_depend_on_threads(slides):
    """The batched stream is a function of the seed and the settings: the
    same bytes with 1 reader/views thread as with 3."""
    def stream_bytes(threads):
        desc = description(slides, batch_opts="normalize=true")
        desc = desc.replace("patchreader threads=2", f"patchreader threads={threads}")
        desc = desc.replace("seed=11 threads=2", f"seed=11 threads={threads}")
        assert desc.count(f"threads={threads}") == 2
        batches = run(desc)
        return [(b.records.tobytes(), b.view_records.tobytes(),
                 b"".join(b.views[n].tobytes() for n in NAMES)) for b in batches]
    one, three = stream_bytes(1), stream_bytes(3)
    assert len(one) == 5 * PER_SLIDE // BATCH
    for a, b in zip(one, three):
        assert a[1:] == b[1:]
        # records equal except created_ns (a timestamp)
        ra = np.frombuffer(a[0], gstwsi.PATCH_RECORD).copy()
        rb = np.frombuffer(b[0], gstwsi.PATCH_RECORD).copy()
        ra["created_ns"] = rb["created_ns"] = 0
        assert ra.tobytes() == rb.tobytes()
