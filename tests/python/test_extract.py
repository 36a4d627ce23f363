"""Feature extraction (gstwsi.extract, wsi-extract): TRIDENT's H5 layout
field by field, the grid against an independent grid, the pixels behind
every coordinate against openslide-python's read_region with the same
resize, features against the model applied to those independent patches,
resume (complete skipped, damaged/foreign redone and named once), ranks,
claims shared by concurrent jobs, kill and resume, a corrupt slide."""
import json
import os
import pathlib
import random
import shutil
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

h5py = pytest.importorskip("h5py", reason="python3-h5py not installed")
openslide = pytest.importorskip("openslide", reason="python3-openslide not installed")
torch = pytest.importorskip("torch", reason="python3-torch not installed")
from PIL import Image  # noqa: E402

import gstwsi  # noqa: E402
from gstwsi._utils.claims import rank_and_world, try_claim  # noqa: E402

from conftest import ROOT, _generator  # noqa: E402

PATCH = 64
MPP = 0.5
COORD_ATTRS = {"patch_size", "patch_size_level0", "level0_magnification",
               "target_magnification", "overlap", "name", "savetodir", "level0_width",
               "level0_height"}


@pytest.fixture(scope="module")
def few_slides(tmp_root):
    """Three small slides (0.25 mpp, 1024 x 768): 64 px at 0.5 um/px is a
    128-pixel footprint, a 8 x 6 grid."""
    out = tmp_root / "extract-slides"
    subprocess.run([_generator(), "--count", "3", "--width", "1024", "--height", "768",
                    "--jobs", "2", str(out)], check=True, stdout=subprocess.DEVNULL)
    return out


def _names(folder):
    return sorted(os.path.splitext(p)[0] for p in os.listdir(folder)
                  if p.endswith((".svs", ".tif", ".tiff")))


def _slide_files(folder):
    return {os.path.splitext(p)[0]: folder / p for p in os.listdir(folder)
            if p.endswith((".svs", ".tif", ".tiff"))}


class Pool8(torch.nn.Module):
    """Features = the patch averaged to 8 x 8 (D = 192): pixels in, so a row
    says which pixels the patch held."""
    enc_name = "pool8"

    def forward(self, x):
        return torch.nn.functional.adaptive_avg_pool2d(x, 8).flatten(1)


def tiny_cnn():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 5, stride=2), torch.nn.ReLU(),
                               torch.nn.Conv2d(8, 16, 3, stride=2), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())


def _openslide_patch(slide, x, y, footprint):
    """The patch read independently: level-0 region, area-resized to PATCH."""
    region = slide.read_region((int(x), int(y)), 0, (footprint, footprint)).convert("RGB")
    return region.resize((PATCH, PATCH), Image.BOX)


def _openslide_mpp(osr):
    """Level-0 um/px as openslide-python reports it: openslide.mpp-x, else
    the TIFF resolution tags (generic TIFF)."""
    props = osr.properties
    if openslide.PROPERTY_NAME_MPP_X in props:
        return float(props[openslide.PROPERTY_NAME_MPP_X])
    per_unit = {"centimeter": 1e4, "inch": 25400.0}[props["tiff.ResolutionUnit"]]
    return per_unit / float(props["tiff.XResolution"])


def _as_batch(img):
    return torch.from_numpy(np.array(img)).permute(2, 0, 1)[None].float() / 255.0


def _job(out):
    return pathlib.Path(out) / f"20x_{PATCH}px_0px_overlap"


def _run(slides, out, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("batch_size", 16)
    return gstwsi.extract(slides, out, mpp=MPP, patch_size=PATCH, **kw)


def test_coords_layout_and_grid(few_slides, tmp_root):
    out = tmp_root / "extract-coords"
    s = _run(few_slides, out, min_tissue=0.0, tissue=False)
    assert sorted(s["done"]) == _names(few_slides) and not s["failed"]
    for name, path in _slide_files(few_slides).items():
        f = h5py.File(_job(out) / "patches" / f"{name}_patches.h5", "r")
        with f, openslide.OpenSlide(str(path)) as osr:
            assert list(f.keys()) == ["coords"]
            c = f["coords"]
            assert c.dtype == np.int64 and c.ndim == 2 and c.shape[1] == 2
            assert c.maxshape == (None, 2) and c.chunks[1:] == (2,)    # resizable, as TRIDENT's
            assert set(c.attrs) == COORD_ATTRS
            W, H = osr.dimensions
            mpp = _openslide_mpp(osr)
            power = osr.properties.get(openslide.PROPERTY_NAME_OBJECTIVE_POWER)
            fp = round(PATCH * MPP / mpp)
            assert c.attrs["patch_size"] == PATCH and c.attrs["overlap"] == 0
            assert c.attrs["patch_size_level0"] == fp
            assert c.attrs["target_magnification"] == 20
            assert c.attrs["level0_magnification"] == pytest.approx(
                float(power) if power else 10.0 / mpp)
            assert (c.attrs["level0_width"], c.attrs["level0_height"]) == (W, H)
            assert c.attrs["name"] == name
            # without a mask and min_tissue 0: exactly every grid cell inside the slide
            want = {(x, y) for y in range(0, H - fp + 1, fp) for x in range(0, W - fp + 1, fp)}
            got = [tuple(v) for v in c[:]]
            assert len(got) == len(set(got)) and set(got) == want
            assert got == sorted(got, key=lambda v: (v[1], v[0]))          # raster order
    assert len(list((_job(out) / "visualization").glob("*.jpg"))) == 3
    # CLAM's save_hdf5 appends to an existing coords file (mode "a"): resize, write the rows
    copy = tmp_root / "extract-coords-append.h5"
    shutil.copyfile(_job(out) / "patches" / f"{_names(few_slides)[0]}_patches.h5", copy)
    with h5py.File(copy, "a") as f:
        n = len(f["coords"])
        f["coords"].resize(n + 3, axis=0)
        f["coords"][n:] = [[1, 2], [3, 4], [5, 6]]
    with h5py.File(copy, "r") as f:
        assert len(f["coords"]) == n + 3 and f["coords"][-1].tolist() == [5, 6]


def test_tissue_grid_and_side_outputs(few_slides, tmp_root):
    out = tmp_root / "extract-tissue"
    s = _run(few_slides, out, min_tissue=0.5)
    assert not s["failed"]
    for name, path in _slide_files(few_slides).items():
        with h5py.File(_job(out) / "patches" / f"{name}_patches.h5", "r") as f:
            c = f["coords"][:]
            fp = int(f["coords"].attrs["patch_size_level0"])
            W, H = f["coords"].attrs["level0_width"], f["coords"].attrs["level0_height"]
        all_cells = (W // fp) * (H // fp)
        assert 0 < len(c) < all_cells, "tissue keeps some cells and drops background"
        assert not (c % fp).any() and len({tuple(v) for v in c}) == len(c)
        assert (c[:, 0] + fp <= W).all() and (c[:, 1] + fp <= H).all()
        gj = json.loads((_job(out) / "contours_geojson" / f"{name}.geojson").read_text())
        assert gj["type"] == "FeatureCollection" and gj["features"]
        ring = np.array(gj["features"][0]["geometry"]["coordinates"][0])
        assert ring.shape[1] == 2 and (ring[:, 0] <= W).all() and (ring[:, 1] <= H).all()
        assert (ring[0] == ring[-1]).all()
        img = Image.open(_job(out) / "visualization" / f"{name}.jpg")
        assert img.format == "JPEG" and max(img.size) >= 1000


def test_patch_pixels_and_features_match_openslide(few_slides, tmp_root):
    out = tmp_root / "extract-pool"
    s = _run(few_slides, out, model=Pool8(), features_dtype="float32")
    assert not s["failed"] and s["patches"] > 0
    rng = random.Random(1)
    for name, path in _slide_files(few_slides).items():
        with h5py.File(_job(out) / "features_pool8" / f"{name}.h5", "r") as f:
            feats, coords = f["features"][:], f["coords"][:]
            assert f["features"].dtype == np.float32 and feats.shape == (len(coords), 192)
            assert f["features"].attrs["encoder"] == "pool8"
            assert f["features"].attrs["name"] == name
            assert set(f["coords"].attrs) == COORD_ATTRS
            fp = int(f["coords"].attrs["patch_size_level0"])
        with h5py.File(_job(out) / "patches" / f"{name}_patches.h5", "r") as f:
            assert (f["coords"][:] == coords).all()
        model = Pool8()
        with openslide.OpenSlide(str(path)) as osr:
            for i in rng.sample(range(len(coords)), min(6, len(coords))):
                x, y = coords[i]
                want = model(_as_batch(_openslide_patch(osr, x, y, fp)))[0].numpy()
                assert np.abs(feats[i] - want).max() < 0.04, (name, i)
                # the check can fail: half a patch off, the pixels differ
                off = model(_as_batch(_openslide_patch(osr, x + fp // 2, y, fp)))[0].numpy()
                assert np.abs(feats[i] - off).max() > 0.04


def test_tiny_cnn_features_and_float16(few_slides, tmp_root):
    out = tmp_root / "extract-cnn"
    sys.modules[__name__].tiny_cnn = tiny_cnn
    s = _run(few_slides, out, model=f"{__name__}:tiny_cnn", features_dtype="float16",
             batch_size=7)
    assert not s["failed"]
    model = tiny_cnn().eval()
    name, path = sorted(_slide_files(few_slides).items())[0]
    with h5py.File(_job(out) / "features_tiny_cnn" / f"{name}.h5", "r") as f:
        feats, coords = f["features"][:], f["coords"][:]
        fp = int(f["coords"].attrs["patch_size_level0"])
    assert feats.dtype == np.float16 and feats.shape == (len(coords), 16)
    with openslide.OpenSlide(str(path)) as osr, torch.inference_mode():
        for i in (0, len(coords) // 2, len(coords) - 1):
            want = model(_as_batch(_openslide_patch(osr, *coords[i], fp)))[0].numpy()
            assert np.allclose(feats[i].astype(np.float32), want, atol=0.02, rtol=0.05), i


def test_resume_skips_complete_and_redoes_damaged_once(few_slides, tmp_root):
    out = tmp_root / "extract-resume"
    _run(few_slides, out, model=Pool8())
    files = sorted(_job(out).rglob("*.h5"))
    before = {p: p.read_bytes() for p in files}
    again = _run(few_slides, out, model=Pool8())
    assert sorted(again["skipped"]) == _names(few_slides) and not again["done"]
    names = _names(few_slides)
    damaged = _job(out) / "patches" / f"{names[0]}_patches.h5"
    damaged.write_bytes(before[damaged][:300])                       # truncated
    foreign = _job(out) / "features_pool8" / f"{names[1]}.h5"
    with h5py.File(foreign, "a") as f:
        f["features"].attrs["encoder"] = "someone_else"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        third = _run(few_slides, out, model=Pool8())
    assert sorted(third["done"]) == names[:2] and third["skipped"] == names[2:]
    texts = [str(w.message) for w in caught]
    assert sum(str(damaged) in t for t in texts) == 1, texts
    assert sum(str(foreign) in t for t in texts) == 1, texts
    for p in files:
        assert p.read_bytes() == before[p], p
    assert not list(_job(out).rglob("*.tmp-*")) and not list(_job(out).rglob("*.claim"))


def test_rank_sources():
    env = {"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_ARRAY_TASK_ID": "7",
           "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "3"}
    saved = {k: os.environ.pop(k, None) for k in list(env) + ["RANK", "WORLD_SIZE"]}
    try:
        os.environ.update(env)
        assert rank_and_world()[:2] == (2 * 2 + 1, 6)
        os.environ.update({"RANK": "3", "WORLD_SIZE": "4"})
        assert rank_and_world()[:2] == (3, 4)
        assert rank_and_world(1, 2)[:2] == (1, 2)
        with pytest.raises(ValueError):
            rank_and_world(2, 2)
    finally:
        for k in list(env) + ["RANK", "WORLD_SIZE"]:
            os.environ.pop(k, None)
            if saved.get(k) is not None:
                os.environ[k] = saved[k]


def test_stale_claim_taken_over(tmp_root):
    folder = tmp_root / "claims"
    a, _ = try_claim(folder, "s1", stale_after=3600)
    assert a is not None and try_claim(folder, "s1", stale_after=3600) == (None, None)
    old = time.time() - 100
    os.utime(folder / "s1.claim", (old, old))
    b, taken = try_claim(folder, "s1", stale_after=50)
    assert b is not None and taken and not a.held() and b.held()
    # a claim of a process of this host that is gone: taken over at once
    (folder / "s2.claim").write_text(json.dumps({"host": os.uname().nodename,
                                                 "pid": 2 ** 22 + 12345, "token": "x"}))
    c, taken = try_claim(folder, "s2", stale_after=3600)
    assert c is not None and taken


def _cli(args, env_extra=None, **popen):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), str(pathlib.Path(__file__).parent)]
                                        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                           if p])
    env.update(env_extra or {})
    env.pop("GST_TRACERS", None)
    for k in ("RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS"):
        if not env_extra or k not in env_extra:
            env.pop(k, None)
    return subprocess.Popen([sys.executable, str(ROOT / "tools" / "wsi-extract")] + args,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **popen)


def _common(slides, out, summary):
    return [str(slides), str(out), "--mpp", str(MPP), "--patch-size", str(PATCH),
            "--batch-size", "16", "--quiet", "--summary-json", str(summary)]


def test_ranks_partition_slides(few_slides, tmp_root):
    out = tmp_root / "extract-ranks"
    procs = [_cli(_common(few_slides, out, tmp_root / f"rank{r}.json"),
                  {"RANK": str(r), "WORLD_SIZE": "2"}) for r in (0, 1)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    done = [json.loads((tmp_root / f"rank{r}.json").read_text())["done"] for r in (0, 1)]
    names = _names(few_slides)
    assert done[0] == names[0::2] and done[1] == names[1::2]


def test_three_jobs_share_a_folder_each_slide_once(tmp_root):
    slides = tmp_root / "extract-six"
    subprocess.run([_generator(), "--count", "6", "--width", "1024", "--height", "768",
                    "--jobs", "2", str(slides)], check=True, stdout=subprocess.DEVNULL)
    out = tmp_root / "extract-three"
    procs = [_cli(_common(slides, out, tmp_root / f"job{j}.json")) for j in range(3)]
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    summaries = [json.loads((tmp_root / f"job{j}.json").read_text()) for j in range(3)]
    done = [n for s in summaries for n in s["done"]]
    assert sorted(done) == _names(slides), summaries          # each slide exactly once
    assert len(list((_job(out) / "patches").glob("*.h5"))) == 6


def test_kill_at_random_points_then_resume_gives_the_same_files(few_slides, tmp_root):
    """Coordinates and features: jobs killed (SIGKILL) at random points, then
    one resumed run, give the bytes of an uninterrupted run."""
    models = tmp_root / "kill-models"
    models.mkdir(exist_ok=True)
    (models / "kill_models.py").write_text(
        "import torch\n\n\ndef cnn():\n    torch.manual_seed(0)\n"
        "    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 5, stride=2), torch.nn.ReLU(),\n"
        "                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())\n")
    env = {"PYTHONPATH": os.pathsep.join([str(models), str(ROOT / "python")])}
    out = tmp_root / "extract-killed"
    args = ["--model", "kill_models:cnn"]

    def job(summary):
        return _cli(_common(few_slides, out, tmp_root / summary) + args, env)

    p = job("uninterrupted.json")            # in the same folder (savetodir)
    _, err = p.communicate(timeout=180)
    assert p.returncode == 0, err
    files = sorted(p for p in _job(out).rglob("*.h5"))
    ref = {p.relative_to(out): p.read_bytes() for p in files}
    assert len(ref) == 6
    shutil.rmtree(out)
    rng = random.Random(7)
    for _ in range(3):
        p = job("killed.json")
        time.sleep(rng.uniform(0.5, 4.0))
        p.send_signal(signal.SIGKILL)
        p.communicate()
    p = job("resumed.json")
    _, err = p.communicate(timeout=180)
    assert p.returncode == 0, err
    for rel, data in ref.items():
        assert (out / rel).read_bytes() == data, rel
    assert not list(_job(out).rglob("*.claim"))


def test_corrupt_slide_named_once_others_finish(few_slides, tmp_root):
    slides = tmp_root / "extract-corrupt"
    slides.mkdir()
    for name, path in _slide_files(few_slides).items():
        os.symlink(path, slides / path.name)
    (slides / "broken.svs").write_bytes(b"II*\x00" + os.urandom(4000))
    out = tmp_root / "extract-corrupt-out"
    p = _cli(_common(slides, out, tmp_root / "corrupt.json"))
    _, err = p.communicate(timeout=120)
    assert p.returncode == 1
    s = json.loads((tmp_root / "corrupt.json").read_text())
    assert sorted(s["done"]) == _names(few_slides)
    assert [n for n, _ in s["failed"]] == ["broken"]
    reason = s["failed"][0][1]
    assert "broken.svs" in reason and "read" in reason
    assert err.count(reason) == 1, err             # named once, with its reason


def test_overlap_grid_and_mask_cache(few_slides, tmp_root):
    out, masks = tmp_root / "extract-overlap", tmp_root / "extract-masks"
    s = _run(few_slides, out, overlap=16, min_tissue=0.0, tissue=False)
    assert not s["failed"]
    job = pathlib.Path(out) / f"20x_{PATCH}px_16px_overlap"
    for name, path in _slide_files(few_slides).items():
        with h5py.File(job / "patches" / f"{name}_patches.h5", "r") as f, \
                openslide.OpenSlide(str(path)) as osr:
            assert f["coords"].attrs["overlap"] == 16
            fp = round(PATCH * MPP / _openslide_mpp(osr))
            step = round((PATCH - 16) * fp / PATCH)          # 48 target px apart
            W, H = osr.dimensions
            want = {(x, y) for y in range(0, H - fp + 1, step)
                    for x in range(0, W - fp + 1, step)}
            assert {tuple(v) for v in f["coords"][:]} == want
    s = _run(few_slides, tmp_root / "extract-cached", mask_cache_dir=masks)
    assert not s["failed"] and len([p for p in masks.rglob("*") if p.is_file()]) >= 3


def test_from_coordinates_trident_and_clam_files(few_slides, tmp_root):
    """Features for the positions of coordinate files written by other tools
    (h5py directly, off-grid positions), TRIDENT's and CLAM's attributes."""
    src = tmp_root / "extract-given"
    src.mkdir()
    files = sorted(_slide_files(few_slides).items())
    given = {}
    for k, (name, path) in enumerate(files[:2]):
        with openslide.OpenSlide(str(path)) as osr:
            W, H = osr.dimensions
            fp = round(PATCH * MPP / _openslide_mpp(osr))
        rng = np.random.default_rng(k)
        coords = np.stack([rng.integers(0, W - fp, 9), rng.integers(0, H - fp, 9)], 1)
        given[name] = (coords.astype(np.int64), fp)
        if k == 0:          # TRIDENT
            with h5py.File(src / f"{name}_patches.h5", "w") as f:
                d = f.create_dataset("coords", data=coords.astype(np.int64))
                d.attrs.update({"patch_size": PATCH, "patch_size_level0": fp,
                                "level0_magnification": 40, "target_magnification": 20,
                                "overlap": 0, "name": name})
        else:               # CLAM: patch_size at patch_level, its downsample
            with h5py.File(src / f"{name}.h5", "w") as f:
                d = f.create_dataset("coords", data=coords.astype(np.int64))
                d.attrs.update({"patch_size": PATCH, "patch_level": 0,
                                "downsample": np.array([fp / PATCH, fp / PATCH]),
                                "name": name})
    out = tmp_root / "extract-from-coords"
    s = _run([p for _, p in files[:2]], out, model=Pool8(), coords_from=src)
    assert sorted(s["done"]) == sorted(given) and not s["failed"], s
    model = Pool8()
    for name, (coords, fp) in given.items():
        with h5py.File(out / "features_pool8" / f"{name}.h5", "r") as f:
            assert (f["coords"][:] == coords).all()
            feats = f["features"][:]
        with openslide.OpenSlide(str(dict(files)[name])) as osr:
            for i in range(len(coords)):
                want = model(_as_batch(_openslide_patch(osr, *coords[i], fp)))[0].numpy()
                assert np.abs(feats[i] - want).max() < 0.04, (name, i)
    again = _run([p for _, p in files[:2]], out, model=Pool8(), coords_from=src)
    assert sorted(again["skipped"]) == sorted(given)


def test_recipe_mil_block_trains_on_the_features(few_slides, tmp_root, capsys):
    """docs/recipes/features.md's MIL block, run on features written here."""
    import re
    page = (ROOT / "docs" / "recipes" / "features.md").read_text()
    blocks = re.findall(r"^```python mil-features\n(.*?)^```", page, re.S | re.M)
    assert len(blocks) == 1
    out = tmp_root / "extract-mil"
    _run(few_slides, out, model=Pool8())
    labels = tmp_root / "labels.csv"
    labels.write_text("slide,label\n" + "".join(f"{n},{i % 2}\n"
                                                for i, n in enumerate(_names(few_slides))))
    code = re.sub(r'^FEATURES = .*$', f"FEATURES = {str(_job(out) / 'features_pool8')!r}",
                  blocks[0], flags=re.M)
    code = re.sub(r'^LABELS = .*$', f"LABELS = {str(labels)!r}", code, flags=re.M)
    code = code.replace("range(10)", "range(2)")
    scope = {}
    exec(compile(code, "features.md", "exec"), scope)
    assert len(scope["bags"]) == 3 and scope["dim"] == 192
    assert "epoch 1: mean loss" in capsys.readouterr().out


def test_level0_magnification_is_the_objective_power():
    """A real Aperio slide with AppMag 20 and MPP 0.499: level0_magnification
    is openslide-python's objective power (20), not 10 / mpp (20.04)."""
    path = pathlib.Path(os.environ.get("WSI_SHARED_SLIDES_DIR") or ROOT.parent / "shared" / "slides") \
        / "Aperio-CMU-1-Small-Region.svs"
    if not path.exists():
        pytest.skip(f"{path} not found (the shared real slides)")
    import tempfile
    with tempfile.TemporaryDirectory() as out, openslide.OpenSlide(str(path)) as osr:
        power = float(osr.properties[openslide.PROPERTY_NAME_OBJECTIVE_POWER])
        mpp = _openslide_mpp(osr)
        s = gstwsi.extract(path, out, mpp=1.0, patch_size=PATCH, progress=False,
                           visualize=False, contours=False)
        assert s["done"] == [path.stem]
        with h5py.File(pathlib.Path(out) / f"10x_{PATCH}px_0px_overlap" / "patches" /
                       f"{path.stem}_patches.h5", "r") as f:
            assert f["coords"].attrs["level0_magnification"] == power == 20
            assert abs(10.0 / mpp - power) > 0.01


def test_progress_and_summary_lines(few_slides, tmp_root):
    """What a user sees: a line per slide (its patches and patches/s; slides
    done, overall patches/s, ETA) and the closing summary."""
    out = tmp_root / "extract-progress"
    p = _cli([str(few_slides), str(out), "--mpp", str(MPP), "--patch-size", str(PATCH)])
    _, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    lines = err.splitlines()
    per_slide = [line for line in lines if line.startswith("[")]
    assert len(per_slide) == 3
    for k, line in enumerate(per_slide, 1):
        assert f"[{k}/3]" in line and "patches/s" in line and f"slides {k}/3" in line
        assert "ETA" in line
    summary = "\n".join(lines[lines.index(next(x for x in lines if x.startswith("wsi-extract:"))):])
    assert "3 done, 0 skipped (complete), 0 failed" in summary
    assert "waiting for data" in summary and "in the model" in summary and str(out) in summary


def test_bf16_autocast_and_device_check(few_slides, tmp_root):
    name = _names(few_slides)[0]
    feats = {}
    for precision in ("fp32", "bf16"):
        out = tmp_root / f"extract-{precision}"
        s = _run(few_slides, out, model=tiny_cnn(), encoder="cnn", precision=precision)
        assert not s["failed"]
        with h5py.File(_job(out) / "features_cnn" / f"{name}.h5", "r") as f:
            feats[precision] = f["features"][:]
    assert feats["bf16"].dtype == np.float32
    # bf16 keeps 8 bits of mantissa: close to fp32, but not the same numbers
    assert np.allclose(feats["bf16"], feats["fp32"], rtol=0.05, atol=0.02)
    assert not np.array_equal(feats["bf16"], feats["fp32"])
    if not torch.cuda.is_available():
        with pytest.raises(gstwsi.SettingsError, match="cuda"):
            _run(few_slides, tmp_root / "extract-nocuda", model=tiny_cnn(), device="cuda")


def _grid_stream(path, **kw):
    """Every grid patch of one slide through patchreader: (images bytes,
    coords, tile decodes)."""
    from gstwsi._utils.elements import elements_of
    desc = gstwsi.standard_pipeline(str(path), batch_size=16, patch_size=PATCH, target_mpp=MPP,
                                    patches_per_slide=-1, mode="grid", cycle=False,
                                    pool_size=1, rank=0, world_size=1, tissue=False,
                                    min_tissue=0.0, **kw)
    images, coords = [], []
    with gstwsi.BatchStream(desc, torch=False) as stream:
        reader = elements_of(stream.pipeline, "patchreader")[0]
        for batch in iter(stream.next_batch, None):
            images.append(np.array(batch.images))
            coords += [(int(r["x"]), int(r["y"]), int(r["footprint"]), int(r["level"]))
                       for r in batch.records]
        decodes = reader.get_property("tile-cache-misses")
    return np.concatenate(images), coords, decodes


def test_grid_order_decodes_each_tile_once(few_slides):
    """patchreader grid-order (what extraction reads with): each tile the
    grid touches is decoded once (tiles counted here from openslide's tile
    size and the coordinates), where the default rule decodes shared tiles
    again; the pixels are the same, at any thread count."""
    path = sorted(_slide_files(few_slides).values())[0]
    base, coords, base_decodes = _grid_stream(path, threads=1)
    grid, grid_coords, decodes = _grid_stream(path, threads=1, patchreader_grid_order=True)
    grid2, _, _ = _grid_stream(path, threads=2, patchreader_grid_order=True)
    assert grid_coords == coords and np.array_equal(grid, base) and np.array_equal(grid2, base)
    tiles = set()
    with openslide.OpenSlide(str(path)) as osr:
        for x, y, fp, level in coords:        # the level patchreader read
            tw = int(osr.properties[f"openslide.level[{level}].tile-width"])
            th = int(osr.properties[f"openslide.level[{level}].tile-height"])
            ds = round(osr.level_downsamples[level])
            x0, y0, x1, y1 = x // ds, y // ds, (x + fp - 1) // ds, (y + fp - 1) // ds
            tiles |= {(level, tx, ty) for ty in range(y0 // th, y1 // th + 1)
                      for tx in range(x0 // tw, x1 // tw + 1)}
    assert len(coords) > 4 * len(tiles) / 2          # tiles shared by neighbouring patches
    assert decodes == len(tiles), (decodes, len(tiles))
    assert base_decodes > 1.3 * len(tiles), (base_decodes, len(tiles))


def test_coordinates_only_reads_no_pixels(few_slides, tmp_root):
    """Without a model the pipeline ends at patchsampler: overview, mask and
    grid only (patchreader's patches-read counter stays 0, where the model
    run decodes every patch), and the coords are the model run's."""
    coords_out, model_out = tmp_root / "extract-nopix", tmp_root / "extract-nopix-model"
    s = _run(few_slides, coords_out)
    m = _run(few_slides, model_out, model=Pool8())
    assert not s["failed"] and not m["failed"] and s["patches"] == m["patches"] > 0
    assert s["patches_decoded"] == 0
    assert m["patches_decoded"] == m["patches"]
    r = _run(few_slides, tmp_root / "extract-nopix-read", read_pixels=True)
    assert r["patches_decoded"] == r["patches"] == s["patches"]
    # the start (to the first batch) apart from the rate after it
    assert 0 < r["first_batch_s"] < r["seconds"]
    assert r["patches_per_s_after_first_batch"] > 0
    for name in _names(few_slides):
        with h5py.File(_job(coords_out) / "patches" / f"{name}_patches.h5", "r") as a, \
                h5py.File(_job(model_out) / "patches" / f"{name}_patches.h5", "r") as b, \
                h5py.File(_job(model_out) / "features_pool8" / f"{name}.h5", "r") as f:
            assert np.array_equal(a["coords"][:], b["coords"][:])
            assert np.array_equal(a["coords"][:], f["coords"][:])
            want = dict(b["coords"].attrs, savetodir=None)
            assert dict(a["coords"].attrs, savetodir=None) == want


def test_mask_cache_dir_lets_training_skip_overview_and_mask(few_slides, tmp_root):
    """The masks wsi-extract computed (coordinates only) are the ones a later
    training run on the same slides reads from mask-cache-dir: tissuemask
    computes none there (and a run without the folder computes them all)."""
    from gstwsi._utils.elements import elements_of
    masks = tmp_root / "extract-train-masks"
    s = _run(few_slides, tmp_root / "extract-train", mask_cache_dir=masks)
    assert not s["failed"] and s["patches_decoded"] == 0

    def train(**kw):
        desc = gstwsi.standard_pipeline(str(few_slides), batch_size=8, patch_size=PATCH,
                                        patches_per_slide=4, cycle=False, seed=1, **kw)
        with gstwsi.BatchStream(desc, torch=False) as stream:
            n = sum(len(b.records) for b in stream)
            mask = elements_of(stream.pipeline, "tissuemask")[0]
            return n, mask.get_property("masks-computed"), mask.get_property("disk-hits")

    n, computed, hits = train(mask_cache_dir=masks)
    assert n > 0 and computed == 0 and hits == len(_names(few_slides))
    n2, computed2, _ = train()
    assert n2 == n and computed2 == len(_names(few_slides))


def test_cuda_device_batches_pinned_and_overlapped(few_slides, tmp_root):
    """--device cuda: batches reach the GPU through wsicudaupload when the
    build has it, else through pinned staging buffers and a side stream;
    the features equal the CPU run's."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    cpu = _run(few_slides, tmp_root / "extract-cpu", model=Pool8())
    gpu = _run(few_slides, tmp_root / "extract-cuda", model=Pool8(), device="cuda")
    assert not gpu["failed"] and gpu["patches"] == cpu["patches"] > 0
    from gstwsi.settings import class_specs
    assert gpu["upload"] == ("wsicudaupload" if class_specs("wsicudaupload") else "pinned")
    for name in _names(few_slides):
        with h5py.File(_job(tmp_root / "extract-cpu") / "features_pool8" / f"{name}.h5") as a, \
                h5py.File(_job(tmp_root / "extract-cuda") / "features_pool8" / f"{name}.h5") as b:
            assert np.array_equal(a["coords"][:], b["coords"][:])
            assert np.abs(a["features"][:] - b["features"][:]).max() < 1e-5


def test_dicom_series_folder(few_slides, tmp_root):
    """A folder holding one DICOM WSI series (one instance a level, the
    TIFF's JPEG tiles) is one slide named after the folder: its coords and
    features equal the TIFF's, and its size is the one pydicom reads."""
    pydicom = pytest.importorskip("pydicom", reason="python3-pydicom not installed")
    maker = os.environ.get("WSI_MAKE_TEST_DICOM") or shutil.which("wsi-make-test-dicom")
    if not maker:
        pytest.skip("wsi-make-test-dicom not found")
    name, tiff = sorted(_slide_files(few_slides).items())[0]
    with openslide.OpenSlide(str(tiff)) as osr:
        mpp = _openslide_mpp(osr)
    series = tmp_root / "extract-dicom" / "series-a"
    subprocess.run([maker, f"--mpp={mpp}", str(tiff), str(series)], check=True,
                   stdout=subprocess.DEVNULL)
    from_dicom = _run(series.parent, tmp_root / "extract-dicom-out", model=Pool8())
    from_tiff = _run(tiff, tmp_root / "extract-dicom-tiff", model=Pool8())
    assert from_dicom["done"] == ["series-a"] and not from_dicom["failed"], from_dicom
    job_d, job_t = _job(tmp_root / "extract-dicom-out"), _job(tmp_root / "extract-dicom-tiff")
    level0 = max((pydicom.dcmread(p, stop_before_pixels=True) for p in series.glob("*.dcm")),
                 key=lambda d: int(d.TotalPixelMatrixColumns))
    with h5py.File(job_d / "patches" / "series-a_patches.h5", "r") as a, \
            h5py.File(job_t / "patches" / f"{name}_patches.h5", "r") as b, \
            h5py.File(job_d / "features_pool8" / "series-a.h5", "r") as fa, \
            h5py.File(job_t / "features_pool8" / f"{name}.h5", "r") as fb:
        assert len(a["coords"]) > 0 and np.array_equal(a["coords"][:], b["coords"][:])
        assert (a["coords"].attrs["level0_width"], a["coords"].attrs["level0_height"]) == (
            int(level0.TotalPixelMatrixColumns), int(level0.TotalPixelMatrixRows))
        assert np.abs(fa["features"][:] - fb["features"][:]).max() < 1e-6


def test_slides_share_one_pipeline_same_files(few_slides, tmp_root):
    """Claimed slides read one after the other by one pipeline: the same
    coordinates and byte-identical features as one pipeline a slide (model
    batches of 5 rows, so pipeline batches straddle slides), at 1 and 2
    threads; a corrupt slide among them is named once and the others
    finish."""
    slides = tmp_root / "extract-group"
    slides.mkdir()
    for name, path in _slide_files(few_slides).items():
        os.symlink(path, slides / path.name)
    (slides / "broken.svs").write_bytes(b"II*\x00" + os.urandom(4000))
    sys.modules[__name__].tiny_cnn = tiny_cnn
    runs = {}
    for key, per, threads in (("single", 1, 2), ("group", 8, 2), ("group1", 8, 1)):
        out = tmp_root / f"extract-group-{key}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = _run(slides, out, model=f"{__name__}:tiny_cnn", batch_size=5,
                     slides_per_pipeline=per, threads=threads)
        assert sorted(s["done"]) == _names(few_slides), s
        assert [n for n, _ in s["failed"]] == ["broken"], s["failed"]
        assert "broken.svs" in s["failed"][0][1] and "read" in s["failed"][0][1], s["failed"]
        runs[key] = (s, out)
    assert runs["single"][0]["pipelines"] == 4         # one a slide, the broken one too
    assert runs["group"][0]["pipelines"] == 1 and runs["group1"][0]["pipelines"] == 1
    for name in _names(few_slides):
        files = [_job(out) / "features_tiny_cnn" / f"{name}.h5" for _, out in runs.values()]
        with h5py.File(files[0], "r") as a:
            want_c, want_f = a["coords"][:], a["features"][:]
        assert len(want_c) > 5           # several model batches a slide
        for other in files[1:]:
            with h5py.File(other, "r") as b:
                assert np.array_equal(b["coords"][:], want_c), other
                assert b["features"][:].tobytes() == want_f.tobytes(), other
        with h5py.File(_job(runs["group"][1]) / "patches" / f"{name}_patches.h5", "r") as g, \
                h5py.File(_job(runs["single"][1]) / "patches" / f"{name}_patches.h5", "r") as o:
            assert np.array_equal(g["coords"][:], o["coords"][:])
            assert {k: str(v) for k, v in g["coords"].attrs.items() if k != "savetodir"} == \
                {k: str(v) for k, v in o["coords"].attrs.items() if k != "savetodir"}
