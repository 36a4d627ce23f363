#!/usr/bin/python3
# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.0-or-later
"""Is it the threshold? Why coarser overviews decide patches otherwise (issue 23)

    meson devenv -C build -w . /usr/bin/python3 tests/benchmarks/mask-threshold-study.py

mask-agreement.py found that a 512 px overview decides 1.36 points fewer
patch footprints like the reference mask than the default 1024 px one does
(CMU-1-Small-Region, otsu, 224 px at 1 um/px), and Otsu's threshold falls
as the overview gets coarser. If the moving threshold were the cause, a
threshold that does not move with the overview's scale would let a
smaller (cheaper) overview be the default. This script tests that on the
real slides of ../shared/slides whose methods are one global threshold
(otsu on saturation, fluorescence on value), at S = 128..1024 px:

  own      the method as tissuemask runs it (Otsu's threshold of that
           overview; checked against tissuemask's own mask: `same mask`)
  interior Otsu again on the overview's histogram without the mixed
           boundary pixels (those whose 3x3 neighbourhood straddles the
           first threshold), the candidate scale-free estimator
  ref-t    the reference mask's own threshold applied at S
  best     the best single threshold for that S (an oracle: chosen
           knowing the reference), the ceiling of any threshold rule

Each column is the share of grid footprints (step a quarter footprint)
decided as with the reference mask (the slide's level 0, at most 8192 px,
same method), as mask-agreement.py counts them; the worst setting of the
two (256 px at 0.5 um/px, 224 px at 1.0 um/px) is printed with both. The
verdict applies mask-agreement.py's rule (within 1 point of 1024 with its
own threshold, on every slide and setting) to each column. About a minute;
no timing. Needs python3-opencv (cv2) besides gi and numpy.
"""

import importlib.util
import os
import sys

import cv2
import gi
import numpy as np

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "mask_agreement", os.path.join(HERE, "mask-agreement.py"))
ma = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ma)

SIZES = ma.SIZES
FLOORS = {"otsu": 15, "fluorescence": 20}      # tissuemask's defaults
FLUORESCENCE_CLOSE = 4                          # close-kernel's default
RULES = ("own", "interior", "ref-t", "best")


def overview(path, size, width, height):
    """wsislidesrc's overview RGB at thumbnail-size @size."""
    pipeline = Gst.parse_launch(
        f'wsislidesrc location="{path}" thumbnail-size={size} '
        "! appsink name=sink sync=false")
    pipeline.set_state(Gst.State.PLAYING)
    sample = pipeline.get_by_name("sink").emit("pull-sample")
    pipeline.set_state(Gst.State.NULL)
    buf = sample.get_buffer()
    data = np.frombuffer(buf.extract_dup(0, buf.get_size()), np.uint8)
    ow, oh = ma.overview_size(width, height, size)
    return np.ascontiguousarray(data[:ow * oh * 3].reshape(oh, ow, 3))


def odd_side(side, scale):
    """wsitissuedetect.cpp's scaled_odd_side()."""
    return 2 * max(int(np.floor((side * scale - 1) / 2 + 0.5)), 0) + 1


class Overview:
    """One overview's thresholded plane, as tissuemask computes it."""

    def __init__(self, rgb, method, scale):
        hsv = cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV)
        self.method, self.scale = method, scale
        self.plane = hsv[:, :, 1 if method == "otsu" else 2]
        blur = odd_side(1, scale)       # otsu-blur-kernel 1, scaled
        if method == "otsu" and blur > 1:
            self.plane = cv2.GaussianBlur(self.plane, (blur, blur), 0)

    def otsu(self, keep=None):
        values = self.plane if keep is None else self.plane[keep]
        hist = np.bincount(values.ravel(), minlength=256).astype(float)
        level = np.arange(256)
        w0 = np.cumsum(hist)
        w1 = w0[-1] - w0
        m0 = np.cumsum(hist * level)
        with np.errstate(all="ignore"):
            between = w0 * w1 * (m0 / w0 - (m0[-1] - m0) / w1) ** 2
        between[~np.isfinite(between)] = -1
        return int(np.argmax(between))

    def interior_otsu(self):
        first = (self.plane > self.otsu()).astype(np.uint8)
        k = np.ones((3, 3), np.uint8)
        return self.otsu(cv2.dilate(first, k) == cv2.erode(first, k))

    def mask(self, threshold):
        m = (self.plane > max(threshold, FLOORS[self.method])).astype(
            np.uint8) * 255
        if self.method == "fluorescence":
            side = int(np.floor(FLUORESCENCE_CLOSE * self.scale + 0.5))
            if side > 0:
                m = cv2.morphologyEx(m, cv2.MORPH_CLOSE,
                                     np.ones((side, side), np.uint8))
        return m > 0


class Reference:
    """The reference mask's footprint shares per patch setting, computed
    once (mask-agreement.py's shares() and decision rule)."""

    def __init__(self, mask, width, height, mpp):
        self.width, self.height = width, height
        self.sides = [round(patch * target / mpp)
                      for patch, target in ma.PATCHES]
        self.accepted = [ma.shares(mask, width, height, side) >= ma.MIN_TISSUE
                         for side in self.sides]

    def agreement(self, mask):
        """Per patch setting: % of footprints decided as with the
        reference (mask-agreement.py's `agree`)."""
        return [100 * ((ma.shares(mask, self.width, self.height, side)
                        >= ma.MIN_TISSUE) == accepted).mean()
                for side, accepted in zip(self.sides, self.accepted)]


def study(name, method, width, height, mpp, worst):
    path = os.path.join(ma.SLIDES, name)
    longest = max(width, height)
    ref_size = min(longest, ma.MAX_REFERENCE)
    views = {}
    for s in SIZES + (ref_size,):
        rgb = overview(path, s, width, height)
        views[s] = Overview(rgb, method, max(rgb.shape[:2]) /
                            min(ma.DEFAULT, longest))
    ref_t = views[ref_size].otsu()
    ref = views[ref_size].mask(ref_t)
    same = (ref == ma.mask(path, method, ref_size, width, height, "")).all()
    reference = Reference(ref, width, height, mpp)
    print(f"\n{name} ({method}), reference {ref_size} px, its threshold "
          f"{ref_t}; emulation gives tissuemask's reference mask: {same}")
    print(f"  {'S':>5} {'own t':>5} {'own':>13} {'int. t':>6} "
          f"{'interior':>13} {'ref-t':>13} {'best t':>6} {'best':>13}"
          "  same mask")
    own_t = {s: views[s].otsu() for s in SIZES}
    goal = reference.agreement(views[1024].mask(own_t[1024]))
    for s in SIZES:
        v = views[s]
        int_t = v.interior_otsu()
        # the oracle: the threshold whose worst setting is closest to (or
        # furthest above) 1024's own, searched around both thresholds
        low = max(0, min(own_t[s], ref_t) - 25)
        high = min(255, max(own_t[s], ref_t) + 25)
        best_t, best = max(
            ((t, reference.agreement(v.mask(t)))
             for t in range(low, high + 1)),
            key=lambda tb: min(a - g for a, g in zip(tb[1], goal)))
        row = {"own": reference.agreement(v.mask(own_t[s])),
               "interior": reference.agreement(v.mask(int_t)),
               "ref-t": reference.agreement(v.mask(ref_t)),
               "best": best}
        same = (v.mask(own_t[s]) == ma.mask(path, method, s, width, height,
                                            "")).all()

        def pair(values):
            return "/".join(f"{a:6.2f}" for a in values)
        print(f"  {s:5d} {own_t[s]:5d} {pair(row['own'])} {int_t:6d} "
              f"{pair(row['interior'])} {pair(row['ref-t'])} {best_t:6d} "
              f"{pair(row['best'])}  {same}")
        if s == 1024:
            continue
        for rule in RULES:
            key = (rule, s)
            worst[key] = max([worst.get(key, -100.0)] +
                             [g - a for a, g in zip(row[rule], goal)])


def main():
    Gst.init(None)
    worst = {}
    for name, method, width, height, mpp, _ in ma.REAL:
        if method not in FLOORS:
            continue
        if not os.path.exists(os.path.join(ma.SLIDES, name)):
            print(f"skipped {name}: not in {ma.SLIDES}")
            continue
        study(name, method, width, height, mpp, worst)
    if not worst:
        sys.exit("no real slide found: nothing measured")
    print("\nverdict (worst setting, points under 1024 with its own "
          "threshold; the rule allows 1):")
    for rule in RULES:
        print(f"  {rule:8} " + "  ".join(
            f"S = {s}: {worst[(rule, s)]:+.2f}" for s in SIZES[:-1]))


if __name__ == "__main__":
    main()
