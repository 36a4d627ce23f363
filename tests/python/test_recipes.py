"""docs/recipes/*.md run as written: every ```python recipe``` block is executed
with its SLIDES and BATCH_SIZE lines replaced (generated slides or a manifest,
small batches) and a train_step / encode that keep the batches, and every
```sh recipe``` gst-launch line is run to its end; shapes and dtypes of
batch.images, batch.views and batch.columns are checked against each page."""
import os
import pathlib
import re
import shlex
import subprocess

import numpy as np
import pytest

from conftest import ROOT, _generator
import gstwsi
from gstwsi.stream import Gst

RECIPES = ROOT / "docs" / "recipes"
BATCH = 4
BLOCK = re.compile(r"^```(python|sh) recipe\n(.*?)^```", re.S | re.M)

pytestmark = pytest.mark.skipif(Gst.ElementFactory.find("patchviews") is None,
                                reason="patchviews not built (needs OpenSlide)")

# page -> expected {view name: (h, w)} (None: plain batch), channels-first float or not
EXPECT = {
    "dinov2": dict(views={**{f"global_{k}": 224 for k in range(2)},
                          **{f"local_{k}": 96 for k in range(8)}}),
    "two-view": dict(views={"view_0": 224, "view_1": 224}),
    "midnight": dict(views={**{f"global_{k}": 224 for k in range(2)},
                            **{f"local_{k}": 98 for k in range(8)}}),
    "supervised": dict(size=224),
    "mil": dict(size=224, float=True),
    "annotations": dict(size=224),
    "stain": dict(size=224),
}


class Enough(Exception):
    """Raised by train_step after a few batches: leaves the recipe's loop."""


def blocks(page, kind):
    return [code for k, code in BLOCK.findall((RECIPES / f"{page}.md").read_text())
            if k == kind]


@pytest.fixture(scope="module")
def big_slides(tmp_root):
    """Slides large enough for 256 px patches at 2 um/px (2048 level-0 px)."""
    out = tmp_root / "recipe-slides"
    subprocess.run([_generator(), "--count", "3", "--width", "4608", "--height", "4608",
                    "--jobs", "2", str(out)], check=True, stdout=subprocess.DEVNULL)
    manifest = out / "train.csv"
    rows = ["path,label,patient,grade"]
    for k, name in enumerate(sorted(p.name for p in out.iterdir() if p.suffix != ".csv")):
        rows.append(f"{name},{'tumour' if k % 2 else 'normal'},P{k:03d},{k + 1}")
    manifest.write_text("\n".join(rows) + "\n")
    # QuPath-style annotations next to each slide: Tumor the left half,
    # Stroma the right half, an excluded corner.
    for slide in out.iterdir():
        if slide.suffix in (".svs", ".tiff"):
            (out / (slide.stem + ".geojson")).write_text(_halves_geojson())
    return out


def _halves_geojson(width=4608, height=4608):
    def feature(name, x0, y0, x1, y1):
        ring = [[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]]
        return ('{"type":"Feature","geometry":{"type":"Polygon","coordinates":[%s]},'
                '"properties":{"classification":{"name":"%s"}}}'
                % (str(ring).replace(" ", ""), name))
    half = width // 2
    features = [feature("Tumor", 0, 0, half, height), feature("Stroma", half, 0, width, height),
                feature("Ignore", 0, 0, 256, 256)]
    return '{"type":"FeatureCollection","features":[%s]}' % ",".join(features)


def location(page, slides):
    return slides / "train.csv" if page == "supervised" else slides


def test_every_page_has_its_blocks_and_is_indexed():
    index = (RECIPES / "index.md").read_text()
    for page in EXPECT:
        assert len(blocks(page, "python")) == 1, page
        assert len(blocks(page, "sh")) == 1, page
        assert f"({page}.md)" in index, page


def run_python(page, slides, limit=3):
    code = blocks(page, "python")[0]
    code, n = re.subn(r'^SLIDES = .*$', f"SLIDES = {str(location(page, slides))!r}", code,
                      flags=re.M)
    assert n == 1
    code, n = re.subn(r"^BATCH_SIZE = \d+", f"BATCH_SIZE = {BATCH}", code, flags=re.M)
    assert n == 1
    seen = []

    def keep(batch):
        seen.append(batch)
        if limit and len(seen) >= limit:
            raise Enough()

    namespace = {"train_step": keep, "encode": lambda x: _encode(x, seen)}
    try:
        exec(compile(code, f"{page}.md", "exec"), namespace)
    except Enough:
        pass
    return seen, namespace


def _encode(x, seen):
    """A stand-in encoder: keeps the batch's shape and dtype, not the batch."""
    a = _array(x)
    seen.append((a.shape, a.dtype))
    return np.zeros((len(a), 8), np.float32)


def _array(t):
    return t.numpy() if hasattr(t, "numpy") else t


@pytest.mark.parametrize("page", ["dinov2", "two-view", "midnight"])
def test_multiview_recipe(page, big_slides):
    batches, _ = run_python(page, big_slides)
    assert len(batches) == 3
    views = EXPECT[page]["views"]
    for batch in batches:
        assert list(batch.views) == list(views)
        for name, size in views.items():
            a = _array(batch.views[name])
            assert a.shape == (BATCH, size, size, 3) and a.dtype == np.uint8, (name, a.shape)
        assert batch.view_records.shape == (BATCH, len(views))
        assert len(batch.paths) == BATCH
    if page == "midnight":
        mpps = np.concatenate([np.asarray(b.mpp) for b in batches])
        assert set(np.round(mpps, 2)) <= {0.25, 0.5, 1.0, 2.0}


def test_supervised_recipe(big_slides):
    batches, _ = run_python("supervised", big_slides)
    assert len(batches) == 3
    for batch in batches:
        a = _array(batch.images)
        assert a.shape == (BATCH, 224, 224, 3) and a.dtype == np.uint8
        assert set(batch.labels) <= {"tumour", "normal"}
        assert batch.columns["grade"].dtype == np.int64
        assert batch.columns["grade"].shape == (BATCH,)
        assert batch.columns["patient"].shape == (BATCH,)
        for path, label, grade in zip(batch.paths, batch.labels, batch.columns["grade"]):
            assert label == ("tumour" if (grade - 1) % 2 else "normal")


def test_annotations_recipe(big_slides):
    batches, _ = run_python("annotations", big_slides)
    assert len(batches) == 3
    for batch in batches:
        a = _array(batch.images)
        assert a.shape == (BATCH, 224, 224, 3) and a.dtype == np.uint8
        ids = batch.columns["class-id"]
        assert ids.dtype == np.int64 and ids.shape == (BATCH,)
        for label, cid, cls, rec in zip(batch.labels, ids, batch.columns["class"],
                                        batch.records):
            assert label == cls == ["Tumor", "Stroma"][cid]
            centre_x = rec["x"] + rec["footprint"] / 2
            assert (centre_x <= 2304) if label == "Tumor" else (centre_x >= 2304)
            assert not (rec["x"] < 256 and rec["y"] < 256)     # Ignore excluded


def test_stain_recipe(big_slides):
    batches, _ = run_python("stain", big_slides)
    assert len(batches) == 3
    for batch in batches:
        a = _array(batch.images)
        assert a.shape == (BATCH, 224, 224, 3) and a.dtype == np.uint8
        assert set(batch.columns["stain-source"]) == {"slide"}
        for text in batch.columns["stain-matrix"]:
            m = np.array(text.split(), float).reshape(2, 3)
            np.testing.assert_allclose(np.linalg.norm(m, axis=1), 1, atol=1e-6)


def test_mil_recipe(big_slides):
    seen, ns = run_python("mil", big_slides, limit=0)   # finite: runs to its end
    bags = ns["bags"]
    assert len(bags) == 3
    for shape, dtype in seen:
        assert dtype == np.float32 and shape[1:] == (3, 224, 224)
        assert 1 <= shape[0] <= BATCH
    assert all(shape[0] == BATCH for shape, _ in seen[:-1])
    assert list(bags) == sorted(bags)                   # slide by slide, sorted
    for path, bag in bags.items():
        pos = [(int(y), int(x)) for _, x, y in bag]
        assert pos == sorted(pos)                       # raster order
        assert len(set(pos)) == len(pos)                # every position once
    assert sum(len(b) for b in bags.values()) == sum(shape[0] for shape, _ in seen)
    # slide by slide: the page's description again, each slide one contiguous run
    with gstwsi.BatchStream(ns["description"], torch=False) as stream:
        paths = [p for batch in stream for p in batch.paths]
    runs = [p for k, p in enumerate(paths) if k == 0 or paths[k - 1] != p]
    assert runs == list(bags)


@pytest.mark.parametrize("page", list(EXPECT))
def test_launch_line(page, big_slides):
    line = blocks(page, "sh")[0].replace("\\\n", " ")
    line, n = re.subn(r"location=\S+", f"location={location(page, big_slides)}", line)
    assert n == 1
    line = re.sub(r"batch-size=\d+", f"batch-size={BATCH}", line)
    line = re.sub(r"max-patches=\d+", f"max-patches={3 * BATCH}", line)
    argv = shlex.split(line)
    assert argv[0] == "gst-launch-1.0"
    env = dict(os.environ)
    env.pop("GST_TRACERS", None)
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "ERROR" not in done.stdout
