#!/usr/bin/python3
# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.0-or-later
"""Memory per distinct slide: bytes in use while one pass streams N slides.

Makes one small generated slide and N symbolic links to it (distinct paths:
each is opened, described and masked as a new slide), then streams them
once with both caches off (patchreader tile-cache-size=0, tissuemask
mask-cache-size=0), sampling glibc's bytes in use (mallinfo2 uordblks +
hblkhd) once a second against wsislidesrc's slides-opened. Buffers in
flight make single samples noisy, so it reports the lowest sample of each
tenth of the slides and a least-squares slope through those floors, in
bytes per distinct slide: about 0 when nothing is kept per slide.

  meson devenv -C build -w . /usr/bin/python3 tests/benchmarks/slide-memory.py \\
      --slides 3000 [--pipeline full|source] [--cycle]

--pipeline source streams wsislidesrc ! fakesink alone; --cycle keeps the
slide descriptions a cycling stream keeps for its next pass (about 3.7 KB
a slide, by design).
"""
import argparse
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile

import gi
gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402


class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks "
                "keepcost".split()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--slides", type=int, default=3000)
    ap.add_argument("--pipeline", choices=["full", "source"], default="full")
    ap.add_argument("--cycle", action="store_true",
                    help="cycle=true, stopped after one pass's worth of slides")
    args = ap.parse_args()
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = MallInfo2

    def in_use():
        m = libc.mallinfo2()
        return m.uordblks + m.hblkhd

    Gst.init(None)
    work = tempfile.mkdtemp(prefix="gstwsi-slide-memory-")
    try:
        generator = os.environ.get("WSI_MAKE_TEST_SLIDES") or shutil.which("wsi-make-test-slides")
        subprocess.run([generator, "-n", "1", "-W", "1024", "-H", "768", "-l", "2", "-t", "256",
                        "--layout", "generic", os.path.join(work, "orig")], check=True,
                       stdout=subprocess.DEVNULL)
        orig = os.path.join(work, "orig", os.listdir(os.path.join(work, "orig"))[0])
        folder = os.path.join(work, "links")
        os.mkdir(folder)
        for i in range(args.slides):
            os.symlink(orig, os.path.join(folder, f"s{i:06d}.tiff"))
        tail = ("tissuemask mask-cache-size=0 ! queue ! patchsampler patch-size=64 "
                "patches-per-slide=2 min-tissue=0 ! patchinterleave ! patchreader threads=1 "
                "tile-cache-size=0 ! queue ! patchbatch batch-size=4 ! fakesink sync=false"
                if args.pipeline == "full" else "fakesink sync=false")
        cycle = " cycle=true" if args.cycle else ""
        pipeline = Gst.parse_launch(f'wsislidesrc name=src location="{folder}"{cycle} ! {tail}')
        src = pipeline.get_by_name("src")
        bus = pipeline.get_bus()
        samples = []
        pipeline.set_state(Gst.State.PLAYING)
        while True:
            msg = bus.timed_pop_filtered(Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
            opened = src.get_property("slides-opened")
            samples.append((opened, in_use()))
            if msg is not None and msg.type == Gst.MessageType.ERROR:
                sys.exit(f"error: {msg.parse_error()[0].message}")
            if msg is not None or opened >= args.slides:
                break
        pipeline.set_state(Gst.State.NULL)
        floors = {}
        for opened, used in samples:
            if opened >= args.slides:
                continue
            k = opened * 10 // args.slides
            if k >= 1:                 # the first tenth is warm-up
                floors[k] = min(floors.get(k, 1 << 62), used)
        xs = [(k + 0.5) * args.slides / 10 for k in sorted(floors)]
        ys = [floors[k] for k in sorted(floors)]
        if len(xs) < 3:
            sys.exit("too few samples: use more slides")
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys))
                 / sum((x - mx) ** 2 for x in xs))
        print(f"pipeline {args.pipeline}{' cycle=true' if args.cycle else ''}, "
              f"{args.slides} distinct slides")
        print("lowest bytes in use per tenth of the slides (MB): "
              + " ".join(f"{y / 1e6:.1f}" for y in ys))
        print(f"slope: {slope:+.0f} bytes per distinct slide")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
