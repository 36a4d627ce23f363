#!/usr/bin/python3
# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.0-or-later
"""Do coarser overviews make the same patch decisions? (issue 23)

    meson devenv -C build -w . /usr/bin/python3 tests/benchmarks/mask-agreement.py

A new slide's CPU is mostly its overview (decode) and mask, both set by
wsislidesrc's thumbnail-size. The mask exists to accept or reject candidate
patches: patchsampler keeps a footprint when the share of the mask pixels it
touches that are tissue is at least min-tissue (default 0.5). So what a
coarser overview must preserve is those decisions, measured against a
reference: the mask of an overview 2.9-8x finer than the default 1024 px
(the slide's level 0, at most 8192 px), not the 1024 mask, which is itself
an approximation.

For each real slide of ../shared/slides and a few generated slides, this
streams `wsislidesrc ! tissuemask` (default settings but the method) at
thumbnail-size S = 128, 256, 512, 1024 and at the reference size, lays a
grid of patch footprints over the slide (step a quarter footprint) for two
patch settings (256 px at 0.5 um/px, 224 px at 1.0 um/px), computes each
footprint's tissue share as patchsampler does (every mask pixel the
footprint touches counts) and prints, per slide, setting and S:

  agree     share of grid footprints whose accept/reject decision equals the
            reference's
  agree@t   the same among footprints where either mask sees any tissue
            (the background, decided alike by any mask, left out)
  +acc      accepted at S but rejected by the reference (patches on glass)
  -acc      accepted by the reference but rejected at S (tissue lost)
  |err|     mean absolute error of the tissue share, footprints touching
            tissue
  px/side   mask pixels per patch side at S

and a verdict: S qualifies when its `agree` is within 1 percentage point of
the 1024 mask's on every slide and setting. Kernel sides of tissuemask are
given in pixels of the slide's 1024 px overview (kernel-reference-size,
default 1024), so every S uses the same kernels in micrometres;
KERNELS=overview passes kernel-reference-size=0 (the old meaning: pixels of
whatever overview arrives). No timing involved; about 2 minutes on 2 busy cores.
Environment: BUILD (build folder, default build), GENERATED (how many
generated slides, default 3; 0 = none).
"""

import os
import subprocess
import sys
import tempfile

import gi
import numpy as np

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
SLIDES = os.path.join(ROOT, "..", "shared", "slides")
# name, method, level-0 width and height, mpp, note (slides/README.md)
REAL = [
    ("Aperio-CMU-1-Small-Region.svs", "otsu", 2220, 2967, 0.499, ""),
    ("Aperio-CMU-1-Small-Region.svs", "clam", 2220, 2967, 0.499, ""),
    ("Aperio-JP2K-TCGA-CR-7395-01A-01-TS1.svs", "otsu", 4443, 3567, 0.5,
     "no mpp in the file: 0.5 assumed"),
    ("Hamamatsu-test3-DAPI-2-387.ndpi", "fluorescence", 3968, 4864, 0.2282,
     ""),
    ("Hamamatsu-test3-TRITC-2-560.ndpi", "fluorescence", 3968, 4864, 0.2282,
     ""),
]
SIZES = (128, 256, 512, 1024)
DEFAULT = 1024
MAX_REFERENCE = 8192
MIN_TISSUE = 0.5                # patchsampler's default min-tissue
PATCHES = ((256, 0.5), (224, 1.0))
# the generated slides: bench-churn's (8192 x 6144 at 0.25 um/px)
GEN_WIDTH, GEN_HEIGHT, GEN_MPP = 8192, 6144, 0.25


def overview_size(width, height, longest):
    """wsislidesrc's overview_size(): longest side, aspect kept."""
    if max(width, height) <= longest:
        return width, height
    if width >= height:
        return longest, max(1, round(height * longest / width))
    return max(1, round(width * longest / height)), longest


def has_kernel_reference():
    element = Gst.ElementFactory.make("tissuemask", None)
    return element.find_property("kernel-reference-size") is not None


def mask(path, method, thumbnail, width, height, extra):
    """The first slide buffer's mask (after the overview RGB), boolean."""
    pipeline = Gst.parse_launch(
        f'wsislidesrc location="{path}" thumbnail-size={thumbnail} '
        f"! tissuemask method={method} {extra} "
        "! appsink name=sink sync=false")
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
    return data[ow * oh * 3:].reshape(oh, ow) >= 128


def shares(m, width, height, side):
    """Tissue share of each footprint of a grid (step side / 4) as
    wsi_tissue_map_fraction() computes it: every mask pixel touched."""
    mh, mw = m.shape
    integral = np.zeros((mh + 1, mw + 1), np.int64)
    integral[1:, 1:] = m.astype(np.int64).cumsum(0).cumsum(1)
    step = max(1, side // 4)
    xs = np.arange(0, width - side + 1, step, dtype=np.int64)
    ys = np.arange(0, height - side + 1, step, dtype=np.int64)
    x0 = xs * mw // width
    x1 = np.clip(((xs + side) * mw + width - 1) // width, x0 + 1, mw)
    y0 = ys * mh // height
    y1 = np.clip(((ys + side) * mh + height - 1) // height, y0 + 1, mh)
    count = (integral[y1][:, x1] - integral[y0][:, x1]
             - integral[y1][:, x0] + integral[y0][:, x0])
    area = np.outer(y1 - y0, x1 - x0)
    return count / area


def compare(reference, coarse, width, height, side):
    ref = shares(reference, width, height, side)
    got = shares(coarse, width, height, side)
    ref_ok, got_ok = ref >= MIN_TISSUE, got >= MIN_TISSUE
    touched = (ref > 0) | (got > 0)
    agree = (ref_ok == got_ok).mean()
    agree_t = (ref_ok == got_ok)[touched].mean() if touched.any() else 1.0
    err = np.abs(ref - got)[touched].mean() if touched.any() else 0.0
    return dict(agree=agree, agree_t=agree_t,
                false_acc=(got_ok & ~ref_ok).mean(),
                missed=(ref_ok & ~got_ok).mean(), err=err,
                accepted=ref_ok.mean(), n=ref.size)


def generated_slides(work, count):
    """bench-churn's slides (same generator, options and seed)."""
    build = os.environ.get("BUILD", "build")
    tool = os.path.join(build, "tools", "wsi-make-test-slides")
    subprocess.run([tool, "--count", str(count), "--width", str(GEN_WIDTH),
                    "--height", str(GEN_HEIGHT), "--levels", "3",
                    "--layout", "aperio", "--tile", "240", "--mpp",
                    str(GEN_MPP), "--seed", "100", "--jobs", "2", work],
                   check=True, stdout=subprocess.DEVNULL)
    return [(os.path.join(work, name), "otsu", GEN_WIDTH, GEN_HEIGHT,
             GEN_MPP, "generated")
            for name in sorted(os.listdir(work)) if name.endswith(".svs")]


def study(path, method, width, height, mpp, extra, rows):
    longest = max(width, height)
    ref_size = min(longest, MAX_REFERENCE)
    reference = mask(path, method, ref_size, width, height, extra)
    ref_um = longest * mpp / ref_size
    masks = {s: mask(path, method, s, width, height, extra) for s in SIZES}
    name = os.path.basename(path)
    print(f"\n{name} ({method}), reference {ref_size} px = "
          f"{ref_um:.2f} um/px ({ref_size / min(DEFAULT, longest):.1f}x "
          f"finer than {DEFAULT}), tissue {reference.mean():.3f}")
    print(f"  {'patch':>12} {'S':>5} {'um/px':>6} {'px/side':>7} "
          f"{'agree':>7} {'agree@t':>7} {'+acc':>6} {'-acc':>6} "
          f"{'|err|':>6} {'IoU':>6}")
    for patch, target in PATCHES:
        side = round(patch * target / mpp)
        for s in SIZES:
            coarse = masks[s]
            r = compare(reference, coarse, width, height, side)
            up = coarse[((np.arange(reference.shape[0]) + 0.5)
                         * coarse.shape[0] / reference.shape[0]).astype(int)][
                :, ((np.arange(reference.shape[1]) + 0.5)
                    * coarse.shape[1] / reference.shape[1]).astype(int)]
            iou = (reference & up).sum() / max(1, (reference | up).sum())
            um = longest * mpp / min(s, longest)
            print(f"  {patch:4d}@{target:.1f}um {s:5d} {um:6.2f} "
                  f"{side / longest * min(s, longest):7.1f} "
                  f"{100 * r['agree']:6.2f}% {100 * r['agree_t']:6.2f}% "
                  f"{100 * r['false_acc']:5.2f}% {100 * r['missed']:5.2f}% "
                  f"{r['err']:6.3f} {iou:6.3f}")
            rows.append((name, method, patch, target, s, r["agree"]))


def verdict(rows):
    print(f"\nverdict (a size qualifies when its agreement with the reference"
          f" is within 1 point of {DEFAULT}'s on every slide and setting):")
    by_case = {}
    for name, method, patch, target, s, agree in rows:
        by_case.setdefault((name, method, patch, target), {})[s] = agree
    for s in SIZES[:-1]:
        worst = max(100 * (c[DEFAULT] - c[s]) for c in by_case.values())
        print(f"  S = {s:4d}: at most {worst:+.2f} points under {DEFAULT} -> "
              f"{'qualifies' if worst <= 1.0 else 'does NOT qualify'}")


def main():
    Gst.init(None)
    extra = ""
    if has_kernel_reference():
        extra = ("kernel-reference-size=0"
                 if os.environ.get("KERNELS") == "overview" else "")
    elif os.environ.get("KERNELS") != "overview":
        print("note: this tissuemask has no kernel-reference-size: kernels "
              "are in pixels of each overview")
    rows = []
    for name, method, width, height, mpp, note in REAL:
        path = os.path.join(SLIDES, name)
        if not os.path.exists(path):
            print(f"skipped {name}: not in {SLIDES}")
            continue
        if note:
            print(f"\n({name}: {note})")
        study(path, method, width, height, mpp, extra, rows)
    print("\n(skipped ../shared/slides/dicom: 50 x 50 px, smaller than any"
          " overview, so every S gives the same mask)")
    count = int(os.environ.get("GENERATED", "3"))
    if count > 0:
        with tempfile.TemporaryDirectory(prefix="mask-agreement-") as work:
            for case in generated_slides(work, count):
                study(*case[:5], extra, rows)
    verdict(rows)


if __name__ == "__main__":
    main()
