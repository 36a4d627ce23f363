"""wsi-preview: run the tool on generated slides, open its PNGs and check them
against the records and pixels of an independent run of the same pipeline."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import gstwsi
from gstwsi import preview_draw

from conftest import ROOT, _generator

Image = pytest.importorskip("PIL.Image")

TOOL = ROOT / "tools" / "wsi-preview"
W, H = 2048, 1536          # overview: longest side 1024 -> scale 1/2
PATCH, PER_SLIDE, COLUMNS = 64, 12, 5
SETTINGS = dict(patch_size=PATCH, target_mpp=0, patches_per_slide=PER_SLIDE, seed=5,
                batch_size=8)


@pytest.fixture(scope="module")
def two_mpp_slides(tmp_root):
    """Two slides scanned at 0.25 µm/px and one at 0.5, in one list file: at
    the level-0 scale (target_mpp=0) their patches have two output mpps."""
    out = tmp_root / "preview-slides"
    for sub, mpp, count, seed in (("fine", "0.25", 2, 1), ("coarse", "0.5", 1, 7)):
        subprocess.run([_generator(), "--count", str(count), "--width", str(W), "--height",
                        str(H), "--mpp", mpp, "--seed", str(seed), str(out / sub)],
                       check=True, stdout=subprocess.DEVNULL)
    listing = out / "slides.txt"
    paths = sorted(str(p) for p in out.rglob("slide-*.*"))
    listing.write_text("".join(p + "\n" for p in paths))
    return listing


def run_tool(args, env):
    return subprocess.run([sys.executable, str(TOOL)] + [str(a) for a in args], env=env,
                          capture_output=True, text=True, timeout=300)


def independent_run(location):
    """Records and pixels per slide, in stream order, from gstwsi itself."""
    description = gstwsi.standard_pipeline(location, cycle=False, **SETTINGS)
    per_slide = {}
    with gstwsi.BatchStream(description, torch=False, copy=True) as stream:
        for batch in stream:
            for i, record in enumerate(batch.records):
                per_slide.setdefault(int(record["slide_index"]), []).append(
                    (record.copy(), np.array(batch.images[i])))
    return per_slide


@pytest.fixture(scope="module")
def preview_run(two_mpp_slides, tmp_root, example_env):
    out = tmp_root / "preview-out"
    sets = [f"--set={k}={v}" for k, v in SETTINGS.items()]
    proc = run_tool(["-o", out, "--columns", COLUMNS, two_mpp_slides] + sets, example_env)
    assert proc.returncode == 0, proc.stderr
    with open(out / "preview.json") as f:
        summary = json.load(f)
    return out, summary, independent_run(two_mpp_slides)


def test_one_png_per_slide_with_the_overview_size(preview_run):
    out, summary, expected = preview_run
    assert len(summary["slides"]) == 3
    for entry in summary["slides"]:
        image = Image.open(out / entry["png"])
        assert image.mode == "RGB"
        assert entry["overview_size"] == [1024, 768]      # thumbnail-size 1024, W x H / 2
        assert entry["scale"] == [0.5, 0.5]
        x0, y0 = entry["origin"]
        assert image.size[0] >= x0 + 1024 + 100 and image.size[1] >= y0 + 768   # + legend
        assert len(entry["patches"]) == PER_SLIDE == len(expected[entry["index"]])


def _box_outline(shape, boxes, width=2, slack=1):
    """Pixels that lie on (or within `slack` of) the outline of any box."""
    on = np.zeros(shape, bool)
    for x0, y0, x1, y1 in boxes:
        for d in range(-slack, width + slack):
            on[max(y0 + d, 0), max(x0 - slack, 0):x1 + slack + 1] = True
            on[max(y1 - d, 0), max(x0 - slack, 0):x1 + slack + 1] = True
            on[max(y0 - slack, 0):y1 + slack + 1, max(x0 + d, 0)] = True
            on[max(y0 - slack, 0):y1 + slack + 1, max(x1 - d, 0)] = True
    return on


def test_boxes_are_where_the_records_say_in_their_mpp_colour(preview_run):
    out, summary, expected = preview_run
    mpps = [float(r["out_mpp"]) for recs in expected.values() for r, _ in recs]
    assert sorted({round(m, 3) for m in mpps}) == [0.25, 0.5]
    colours = preview_draw.MppColours(mpps)
    seen = set()
    for entry in summary["slides"]:
        pixels = np.asarray(Image.open(out / entry["png"]))
        x0, y0 = entry["origin"]
        overview = pixels[y0:y0 + 768, x0:x0 + 1024]
        records = [r for r, _ in expected[entry["index"]]]
        colour = colours.colour(records[0]["out_mpp"])
        seen.add(colour)
        boxes = []
        for r in records:
            # level-0 footprint -> overview pixels (scale 1/2), computed here
            bx0, by0 = int(r["x"]) // 2, int(r["y"]) // 2
            bx1, by1 = (int(r["x"]) + int(r["footprint"])) // 2 - 1, \
                (int(r["y"]) + int(r["footprint"])) // 2 - 1
            boxes.append((bx0, by0, bx1, by1))
            for cx, cy in ((bx0, by0), (bx1, by0), (bx0, by1), (bx1, by1)):
                assert tuple(overview[cy, cx]) == colour, (entry["png"], r["x"], r["y"])
        # and nothing else in that colour: no box the records do not have
        painted = np.all(overview == np.array(colour, np.uint8), axis=-1)
        assert painted.sum() > 0
        assert not (painted & ~_box_outline(painted.shape, boxes)).any(), entry["png"]
    assert len(seen) == 2                   # two mpps, two colours


def test_mask_outline_is_drawn_on_the_tissue_border(preview_run):
    out, summary, _ = preview_run
    entry = summary["slides"][0]
    pixels = np.asarray(Image.open(out / entry["png"])).astype(int)
    x0, y0 = entry["origin"]
    overview = pixels[y0:y0 + 768, x0:x0 + 1024]
    # outline pixels are mostly cyan (blue and green well above red)
    cyanish = (overview[..., 1] - overview[..., 0] > 80) & (overview[..., 2] - overview[..., 0] > 80)
    assert cyanish.sum() > 500
    # but not the whole image: the generated slide is ~30 % tissue blobs
    assert cyanish.mean() < 0.2


def test_contact_sheet_grid_holds_the_decoded_patches(preview_run):
    out, summary, expected = preview_run
    sheet = summary["contact_sheet"]
    image = np.asarray(Image.open(out / sheet["png"]))
    assert sheet["rows"] == 3 and sheet["columns"] == COLUMNS
    cells = sheet["cells"]
    assert len(cells) == 3 * COLUMNS
    mpps = [float(r["out_mpp"]) for recs in expected.values() for r, _ in recs]
    colours = preview_draw.MppColours(mpps)
    for row, index in enumerate(sorted(expected)):
        row_cells = sorted((c for c in cells if c["row"] == row), key=lambda c: c["column"])
        assert [c["column"] for c in row_cells] == list(range(COLUMNS))
        assert len({c["y"] for c in row_cells}) == 1                # one row
        xs = [c["x"] for c in row_cells]
        assert xs == sorted(xs) and len(set(np.diff(xs))) == 1      # evenly spaced
        for cell, (record, patch) in zip(row_cells, expected[index][:COLUMNS]):
            assert (cell["slide_index"], cell["record_x"], cell["record_y"]) == \
                (index, int(record["x"]), int(record["y"]))
            assert cell["size"] == PATCH                            # <= thumb: not resized
            got = image[cell["y"]:cell["y"] + PATCH, cell["x"]:cell["x"] + PATCH]
            assert np.array_equal(got, patch[..., :3])
            frame = tuple(image[cell["y"] - 2, cell["x"] + PATCH // 2])
            assert frame == colours.colour(record["out_mpp"])
    assert image.shape[1] >= COLUMNS * PATCH and image.shape[0] >= 3 * PATCH


def test_pipeline_fragment_and_errors(two_mpp_slides, tmp_root, example_env):
    out = tmp_root / "preview-fragment"
    proc = run_tool(["-o", out, "--source", "seed=2", two_mpp_slides, "--pipeline",
                     "tissuemask method=hsv ! queue ! patchsampler mode=grid patch-size=128 "
                     "patches-per-slide=-1 target-mpp=0.5"], example_env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "preview.json").read_text())
    assert "tissuemask method=hsv" in summary["description"]
    for entry in summary["slides"]:
        patches = entry["patches"]
        assert patches and all(abs(p[3] - 0.5) < 0.01 for p in patches)
        # grid mode, all positions: distinct cells
        assert len({(p[0], p[1]) for p in patches}) == len(patches)
        assert Image.open(out / entry["png"]).size[0] > 1024

    proc = run_tool(["-o", tmp_root / "preview-one", "--max-slides", 1, two_mpp_slides,
                     "--set", "patches_per_slide=3"], example_env)
    assert proc.returncode == 0, proc.stderr
    one = json.loads((tmp_root / "preview-one" / "preview.json").read_text())
    assert len(one["slides"]) == 1 and len(one["slides"][0]["patches"]) == 3
    # counted in words that agree with the number
    assert "contact-sheet.png: 1 slide x up to " in proc.stdout, proc.stdout
    assert ": 3 patches\n" in proc.stdout, proc.stdout

    proc = run_tool(["-o", out, two_mpp_slides, "--set", "min_tisue=0.5"], example_env)
    assert proc.returncode == 1 and "min_tisue" in proc.stderr and "min_tissue" in proc.stderr
    proc = run_tool(["-o", out, two_mpp_slides, "--set", "min_tissue=2"], example_env)
    assert proc.returncode == 1 and "min-tissue=2" in proc.stderr and "0.0..1.0" in proc.stderr
    proc = run_tool(["-o", out, two_mpp_slides, "--pipeline", "tissuemask"], example_env)
    assert proc.returncode == 1 and "no patchsampler" in proc.stderr
    proc = run_tool(["-o", out, two_mpp_slides, "--source", "cycle=true", "--pipeline",
                     "patchsampler"], example_env)
    assert proc.returncode == 1 and "one pass" in proc.stderr


def test_many_mpps_get_a_colour_bar():
    colours = preview_draw.MppColours(np.linspace(0.25, 2.0, 40))
    assert colours.continuous
    assert colours.colour(0.25) == preview_draw.MppColours.ramp(0.0)
    assert colours.colour(2.0) == preview_draw.MppColours.ramp(1.0)
    few = preview_draw.MppColours([0.25, 0.5, 0.499, 1.0, 2.0])
    assert not few.continuous and len(few.groups) == 4     # 0.499 and 0.5: one group
    assert few.colour(0.499) == few.colour(0.5) != few.colour(1.0)


def test_boxes_on_dark_overviews_get_a_white_halo():
    records = np.zeros(1, gstwsi.PATCH_RECORD)
    records["x"], records["y"], records["footprint"], records["out_mpp"] = 400, 200, 400, 0.5
    colours = preview_draw.MppColours(records["out_mpp"])
    for level, halo in ((10, True), (230, False)):
        slide = dict(name="s", width=2000, height=1000, overview_width=200, overview_height=100,
                     overview=np.full((100, 200, 3), level, np.uint8), mask=None)
        image, layout = preview_draw.draw_slide(slide, records, colours)
        x0, y0 = layout["origin"]
        px = np.asarray(image)[y0:y0 + 100, x0:x0 + 200]
        assert tuple(px[30, 40]) == tuple(px[30, 41]) == colours.colour(0.5)  # box x 40..79
        assert (tuple(px[30, 39]) == (255, 255, 255)) == halo
        assert (tuple(px[30, 42]) == (255, 255, 255)) == halo
        assert tuple(px[50, 100]) == (level,) * 3                            # inside untouched


def test_multi_magnification_boxes_carry_each_records_colour(two_mpp_slides, tmp_root,
                                                              example_env):
    specs = gstwsi.settings.class_specs("patchsampler") or {}
    if "target-mpps" not in specs:
        pytest.skip("patchsampler has no target-mpps in this build")
    out = tmp_root / "preview-multi"
    settings = dict(SETTINGS, target_mpp=0.5, target_mpps="0.5,1,2", patches_per_slide=30)
    proc = run_tool(["-o", out, two_mpp_slides] + [f"--set={k}={v}" for k, v in settings.items()],
                    example_env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "preview.json").read_text())
    mpps = [p[3] for entry in summary["slides"] for p in entry["patches"]]
    colours = preview_draw.MppColours(mpps)
    assert len(colours.groups) == 3 and not colours.continuous
    for entry in summary["slides"]:
        pixels = np.asarray(Image.open(out / entry["png"]))
        x0, y0 = entry["origin"]
        overview = pixels[y0:y0 + 768, x0:x0 + 1024]
        by_colour = {}
        for x, y, footprint, mpp in entry["patches"]:
            assert footprint == round(PATCH * mpp / (0.25 if "/fine/" in entry["path"] else 0.5))
            box = (x // 2, y // 2, (x + footprint) // 2 - 1, (y + footprint) // 2 - 1)
            by_colour.setdefault(colours.colour(mpp), []).append(box)
        assert len(by_colour) >= 2                  # several resolutions on one slide
        for colour, boxes in by_colour.items():
            painted = np.all(overview == np.array(colour, np.uint8), axis=-1)
            # every box shows its colour somewhere on its outline ...
            for bx0, by0, bx1, by1 in boxes:
                edge = np.concatenate([painted[by0, bx0:bx1 + 1], painted[by1, bx0:bx1 + 1],
                                       painted[by0:by1 + 1, bx0], painted[by0:by1 + 1, bx1]])
                assert edge.any(), (entry["png"], colour, (bx0, by0, bx1, by1))
            # ... and that colour appears on no outline but its own boxes'
            assert not (painted & ~_box_outline(painted.shape, boxes)).any()


def test_annotation_regions_and_boxes_by_class(tmp_root, example_env):
    """With annotation-mode, the outlines are drawn in their class's colour
    and every box in the colour of its patch's label; preview.json keeps
    the labels, and the excluded class is grey."""
    out_slides = tmp_root / "preview-annotated"
    subprocess.run([_generator(), "--count", "1", "--width", str(W), "--height", str(H),
                    str(out_slides)], check=True, stdout=subprocess.DEVNULL)
    slide = sorted(out_slides.glob("slide-*.*"))[0]
    rects = {"Tumor": (100, 100, 900, 700), "Stroma": (1000, 100, 1900, 1400),
             "Ignore": (100, 900, 900, 1400)}
    features = []
    for name, (x0, y0, x1, y1) in rects.items():
        ring = [[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]]
        features.append({"type": "Feature", "properties": {"classification": {"name": name}},
                         "geometry": {"type": "Polygon", "coordinates": [ring]}})
    (out_slides / (slide.stem + ".geojson")).write_text(
        json.dumps({"type": "FeatureCollection", "features": features}))
    out = tmp_root / "preview-annotated-out"
    fragment = ("patchsampler patch-size=64 patches-per-slide=40 annotation-mode=replace-tissue "
                "annotation-classes=Tumor,Stroma annotation-exclude=Ignore")
    proc = run_tool(["-o", out, slide, "--pipeline", fragment], example_env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "preview.json").read_text())
    entry = summary["slides"][0]
    assert len(entry["labels"]) == len(entry["patches"]) == 40
    assert set(entry["labels"]) == {"Tumor", "Stroma"}
    colours = {k: tuple(v) for k, v in entry["class_colours"].items()}
    assert colours["Ignore"] == (150, 150, 150) and colours["Tumor"] != colours["Stroma"]
    pixels = np.asarray(Image.open(out / entry["png"]))
    x0, y0 = entry["origin"]
    overview = pixels[y0:y0 + 768, x0:x0 + 1024]
    for (x, y, side, _), label in zip(entry["patches"], entry["labels"]):
        rx0, ry0, rx1, ry1 = rects[label]
        cx, cy = x + side / 2, y + side / 2
        assert rx0 <= cx <= rx1 and ry0 <= cy <= ry1, (label, x, y)
        # the box's corner (scale 1/2) is in the label's colour
        assert tuple(overview[y // 2, x // 2]) == colours[label], (label, x, y)
    # each outline's top edge (scale 1/2, 3 px wide) in its class colour
    for name, (rx0, ry0, rx1, _) in rects.items():
        assert tuple(overview[ry0 // 2, (rx0 + rx1) // 4]) == colours[name], name
