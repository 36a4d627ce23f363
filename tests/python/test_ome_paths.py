"""OME-TIFF files and OME-Zarr stores in the Python paths: the slide lists
(a .zarr folder is one slide, found in a folder scan without going into its
chunks), wsi-preview (one PNG per slide, the same patches as the TIFF the
copies came from) and wsi-bench (a one-configuration run on a folder of
them). The copies are written at test time from a generated slide's levels:
an OME-TIFF by tifffile (deflate, SubIFDs) and an OME-Zarr store (NGFF 0.4,
Zarr v2, zstd) from the specification with numcodecs."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, _generator
from gstwsi._utils.slidelist import is_zarr_store, resolve_slides

tifffile = pytest.importorskip("tifffile")
numcodecs = pytest.importorskip("numcodecs")
pytest.importorskip("PIL.Image")

W, H = 2048, 1536


def _levels(tiff):
    """Every level of a generated slide, decoded by libvips (tifffile needs
    imagecodecs for JPEG)."""
    with tifffile.TiffFile(tiff) as t:
        shapes = [p.shape for p in t.pages if p.is_tiled]
    out = []
    for i, shape in enumerate(shapes):
        raw = str(tiff) + ".%d.raw" % i
        subprocess.run(["vips", "rawsave", "%s[page=%d]" % (tiff, i), raw], check=True)
        out.append(np.fromfile(raw, np.uint8).reshape(shape[0], shape[1], 3))
        os.unlink(raw)
    return out


@pytest.fixture(scope="module")
def copies(tmp_root):
    if subprocess.run(["which", "vips"], capture_output=True).returncode != 0:
        pytest.skip("libvips-tools (vips) missing (scripts/install-deps.sh installs it)")
    src = tmp_root / "ome-src"
    subprocess.run([_generator(), "--count", "1", "--width", str(W), "--height", str(H),
                    "--levels", "3", "--layout", "generic", "--seed", "4", str(src)],
                   check=True, stdout=subprocess.DEVNULL)
    tiff = src / "slide-00.tiff"
    levels = _levels(tiff)
    out = tmp_root / "ome-copies"
    out.mkdir()
    ome = out / "copy.ome.tif"
    with tifffile.TiffWriter(ome, ome=True) as tw:
        tw.write(levels[0], tile=(256, 256), photometric="rgb", compression="zlib",
                 subifds=len(levels) - 1,
                 metadata={"PhysicalSizeX": 0.25, "PhysicalSizeY": 0.25})
        for a in levels[1:]:
            tw.write(a, tile=(256, 256), photometric="rgb", compression="zlib",
                     subfiletype=1, metadata=None)
    store = out / "store.zarr"
    codec = numcodecs.Zstd(level=1)
    for i, a in enumerate(levels):
        d = store / str(i)
        d.mkdir(parents=True)
        (d / ".zarray").write_text(json.dumps({
            "zarr_format": 2, "shape": list(a.shape), "chunks": [256, 256, 3],
            "dtype": "|u1", "compressor": codec.get_config(), "fill_value": 0,
            "order": "C", "filters": None}))
        for y in range(0, a.shape[0], 256):
            for x in range(0, a.shape[1], 256):
                c = np.zeros((256, 256, 3), np.uint8)
                p = a[y:y + 256, x:x + 256]
                c[:p.shape[0], :p.shape[1]] = p
                (d / ("%d.%d.0" % (y // 256, x // 256))).write_bytes(
                    bytes(codec.encode(c.tobytes())))
    axes = [{"name": "y", "type": "space", "unit": "micrometer"},
            {"name": "x", "type": "space", "unit": "micrometer"},
            {"name": "c", "type": "channel"}]
    ds = [{"path": str(i), "coordinateTransformations":
           [{"type": "scale", "scale": [0.25 * 2 ** i, 0.25 * 2 ** i, 1]}]}
          for i in range(len(levels))]
    (store / ".zattrs").write_text(json.dumps(
        {"multiscales": [{"version": "0.4", "axes": axes, "datasets": ds}]}))
    return tiff, ome, store


def test_a_zarr_store_is_one_slide_in_lists_and_folders(copies):
    tiff, ome, store = copies
    assert is_zarr_store(str(store)) and not is_zarr_store(str(store / "0"))
    assert resolve_slides(str(store)) == [(str(store), "store")]
    assert resolve_slides(str(ome.parent)) == [(str(ome), "copy"), (str(store), "store")]


def _preview(location, out, env):
    sets = ["--set=patch_size=64", "--set=patches_per_slide=12", "--set=seed=5",
            "--set=target_mpp=0", "--set=batch_size=8"]
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "wsi-preview"), "-o",
                           str(out)] + [str(x) for x in location] + sets, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with open(out / "preview.json") as f:
        return json.load(f)


def test_preview_draws_the_copies(copies, tmp_root, example_env):
    tiff, ome, store = copies
    both = _preview([ome, store], tmp_root / "ome-preview", example_env)
    assert [s["path"] for s in both["slides"]] == [str(ome), str(store)]
    for s in both["slides"]:
        assert os.path.isfile(tmp_root / "ome-preview" / s["png"]), s
        assert len(s["patches"]) > 0, s
    # the same pixels (lossless copies of one slide): the same patches
    alone = [_preview([p], tmp_root / ("ome-preview-%d" % i), example_env)["slides"][0]
             for i, p in enumerate((ome, store))]
    assert alone[0]["patches"] == alone[1]["patches"]
    assert len(alone[0]["patches"]) > 0


def test_wsi_bench_runs_on_the_copies(copies, tmp_root, example_env):
    tiff, ome, store = copies
    listing = tmp_root / "ome-bench.txt"
    listing.write_text("%s\n%s\n" % (ome, store))
    prefix = tmp_root / "ome-bench"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "wsi-bench"),
                           "--world-size", "1", "--threads", "1", "--pool-size", "2",
                           "--patches-per-slide", "16", "--repeats", "1",
                           "--patches-per-visit", "4", "--batch-size", "8",
                           "--warmup", "1", "--batches", "3", "--timeout", "120",
                           "--slides", str(listing), "--out", str(prefix)],
                          env=example_env, capture_output=True, text=True, timeout=280)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(prefix / "wsi-bench.json") as f:
        result = json.load(f)
    rates = [v for k, v in _walk_numbers(result) if "patches_per_s" in k or "rate" in k]
    assert rates and max(rates) > 0, result


def _walk_numbers(node, key=""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _walk_numbers(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from _walk_numbers(v, key)
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield key, node
