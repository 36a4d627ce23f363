#!/usr/bin/python3
# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.0-or-later
"""How much a coarser overview changes the tissue mask (issue 23).

    meson devenv -C build -w . /usr/bin/python3 tests/benchmarks/mask-agreement.py

A new slide's CPU is mostly its overview (decode) and mask, both set by
wsislidesrc's thumbnail-size: a coarser overview would make slide churn
cheap, but it also makes another mask, hence other patch positions. For each
real slide of ../shared/slides with a known mpp this streams `wsislidesrc !
tissuemask` once at the default thumbnail-size (1024) and once at the size
that gives 4, 8 and 16 um per overview pixel, scales the coarse mask up to the
1024 one (nearest neighbour) and prints their IoU and tissue shares. The issue
asks IoU >= 0.95 against the old mask before a default may change. Brightfield
slides use tissuemask's default method (otsu), fluorescence (NDPI) slides
`method=fluorescence`. Takes a few seconds; no timing involved.
"""

import math
import os
import sys

import gi
import numpy as np

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SLIDES = os.path.join(HERE, "..", "..", "..", "shared", "slides")
# name, method, level-0 width and height, mpp (../shared/slides/README.md)
CASES = [
    ("Aperio-CMU-1-Small-Region.svs", "otsu", 2220, 2967, 0.499),
    ("Hamamatsu-test3-DAPI-2-387.ndpi", "fluorescence", 3968, 4864, 0.2282),
    ("Hamamatsu-test3-TRITC-2-560.ndpi", "fluorescence", 3968, 4864, 0.2282),
]
DEFAULT_THUMBNAIL = 1024


def overview_size(width, height, longest):
    """wsislidesrc's overview_size(): longest side, aspect kept."""
    if max(width, height) <= longest:
        return width, height
    if width >= height:
        return longest, max(1, round(height * longest / width))
    return max(1, round(width * longest / height)), longest


def mask(path, method, thumbnail, width, height):
    """The first slide buffer's mask (after the overview RGB), boolean."""
    pipeline = Gst.parse_launch(
        f'wsislidesrc location="{path}" thumbnail-size={thumbnail} '
        f"! tissuemask method={method} ! appsink name=sink sync=false")
    pipeline.set_state(Gst.State.PLAYING)
    sample = pipeline.get_by_name("sink").emit("pull-sample")
    pipeline.set_state(Gst.State.NULL)
    if sample is None:
        sys.exit(f"{path}: no slide buffer came out")
    buf = sample.get_buffer()
    data = np.frombuffer(buf.extract_dup(0, buf.get_size()), np.uint8)
    ow, oh = overview_size(width, height, thumbnail)
    if data.size != ow * oh * 4:
        sys.exit(f"{path}: {data.size} bytes, expected {ow}x{oh} RGB + mask")
    return data[ow * oh * 3:].reshape(oh, ow) > 0


def upscale(m, shape):
    ys = ((np.arange(shape[0]) + 0.5) * m.shape[0] / shape[0]).astype(int)
    xs = ((np.arange(shape[1]) + 0.5) * m.shape[1] / shape[1]).astype(int)
    return m[ys][:, xs]


def main():
    Gst.init(None)
    worst = 1.0
    for name, method, width, height, mpp in CASES:
        path = os.path.join(SLIDES, name)
        if not os.path.exists(path):
            print(f"skipped {name}: not in {SLIDES}")
            continue
        reference = mask(path, method, DEFAULT_THUMBNAIL, width, height)
        for um in (4, 8, 16):
            thumbnail = max(64, math.ceil(max(width, height) * mpp / um))
            coarse = upscale(mask(path, method, thumbnail, width, height),
                             reference.shape)
            union = (reference | coarse).sum()
            iou = (reference & coarse).sum() / max(1, union)
            worst = min(worst, iou)
            print(f"{name} ({method}): {um:2d} um/px, thumbnail-size "
                  f"{thumbnail:4d}: IoU {iou:.3f} against {DEFAULT_THUMBNAIL}"
                  f"; tissue {reference.mean():.3f} -> {coarse.mean():.3f}")
    print(f"worst IoU {worst:.3f} (a default change needs >= 0.95): "
          f"{'met' if worst >= 0.95 else 'NOT met'}")


if __name__ == "__main__":
    main()
