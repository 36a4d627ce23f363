"""Annotation labels through gstwsi: batch.labels are the region classes,
batch.columns["class-id"] their int64 ids (positions in annotation-classes),
and the stream statistics count patches per class (docs/annotations.md)."""
import json
import pathlib
import subprocess

import numpy as np
import pytest

import gstwsi

from conftest import _generator

W, H = 2048, 1536
RECTS = {"Tumor": (64, 64, 960, 1472), "Stroma": (1088, 64, 1984, 1472)}


@pytest.fixture(scope="module")
def annotated(tmp_root):
    out = tmp_root / "annotated"
    subprocess.run([_generator(), "--count", "2", "--width", str(W), "--height", str(H),
                    str(out)], check=True, stdout=subprocess.DEVNULL)
    features = []
    for name, (x0, y0, x1, y1) in RECTS.items():
        ring = [[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]]
        features.append({"type": "Feature", "properties": {"classification": {"name": name}},
                         "geometry": {"type": "Polygon", "coordinates": [ring]}})
    text = json.dumps({"type": "FeatureCollection", "features": features})
    for slide in out.iterdir():
        if slide.suffix in (".tiff", ".svs"):
            (out / (slide.stem + ".geojson")).write_text(text)
    return out


def test_labels_ids_and_stream_statistics(annotated):
    description = gstwsi.standard_pipeline(
        annotated, batch_size=8, patch_size=64, target_mpp=0, patches_per_slide=40,
        cycle=False, seed=3, tissue=False,
        annotation_mode="replace-tissue", annotation_classes=["Stroma", "Tumor"],
        class_balance="uniform",
        patchbatch_stats_interval=1)
    seen = {"Stroma": 0, "Tumor": 0}
    with gstwsi.BatchStream(description, torch=False) as stream:
        for batch in stream:
            ids = batch.columns["class-id"]
            assert ids.dtype == np.int64
            for label, cid, record in zip(batch.labels, ids, batch.records):
                assert label == ["Stroma", "Tumor"][cid]
                x0, y0, x1, y1 = RECTS[label]
                cx = record["x"] + record["footprint"] / 2
                cy = record["y"] + record["footprint"] / 2
                assert x0 <= cx <= x1 and y0 <= cy <= y1
                seen[label] += 1
        stream.read_stream_stats()
        stats = stream.stream_stats
    assert sum(seen.values()) == 80 and min(seen.values()) > 20
    assert stats is not None and stats["labels"] == seen
    assert stats["slides_without_regions"] == 0


def test_slides_without_regions_are_counted(annotated, tmp_root):
    """An annotations folder holding one slide's file: the other slide is
    skipped with a warning and counted in the stream statistics."""
    notes = tmp_root / "annotated-notes"
    notes.mkdir(exist_ok=True)
    first = sorted(p for p in annotated.iterdir() if p.suffix == ".geojson")[0]
    (notes / first.name).write_text(first.read_text())
    description = gstwsi.standard_pipeline(
        annotated, batch_size=8, patch_size=64, target_mpp=0, patches_per_slide=16,
        cycle=False, seed=3, tissue=False, annotations=str(notes),
        annotation_mode="replace-tissue", annotation_classes=["Stroma", "Tumor"],
        patchbatch_stats_interval=1)
    with gstwsi.BatchStream(description, torch=False) as stream:
        paths = [p for batch in stream for p in batch.paths]
        stream.read_stream_stats()
        stats = stream.stream_stats
        warnings = list(stream.warnings)
    assert len(paths) == 16 and len({pathlib.Path(p).stem for p in paths}) == 1
    assert pathlib.Path(paths[0]).stem == first.stem
    assert stats["slides_without_regions"] == 1
    assert any("no annotation region" in w for w in warnings), warnings
