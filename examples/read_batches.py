#!/usr/bin/python3
"""Pull patch batches from a gst-wsi pipeline in Python and read their metadata.

Run with Debian's Python (python3-gi), inside the build's environment:

    meson devenv -C build -w . /usr/bin/python3 examples/read_batches.py sample-slides

Each batch is a tall video/x-raw frame (width = patch size, height = batch x
patch size), i.e. contiguous NHWC uint8 memory, plus one "WsiPatchMeta"
custom meta with the per-patch records (docs/data-formats.md has every
format: this one, multi-view and float batches, columns).
"""
import sys
import time

import gi
import numpy as np

gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
gi.require_version("GstVideo", "1.0")
from gi.repository import Gst, GstApp, GstVideo  # noqa: E402,F401

# WsiPatchRecord, 64 bytes (gst-libs/gst/wsi/wsirecord.h).
PATCH_RECORD = np.dtype([
    ("sequence", "<u8"), ("x", "<i8"), ("y", "<i8"), ("created_ns", "<i8"),
    ("slide_index", "<u4"), ("cycle", "<u4"), ("footprint", "<u4"),
    ("out_size", "<u4"), ("level", "<u4"), ("read_size", "<u4"),
    ("out_mpp", "<f4"), ("tissue_fraction", "<f4"),
])


def batch_metadata(buffer):
    """Returns (records, paths, labels) of a batch buffer."""
    meta = buffer.get_custom_meta("WsiPatchMeta")
    if meta is None:
        raise ValueError("buffer has no WsiPatchMeta")
    s = meta.get_structure()
    records = np.frombuffer(s.get_value("records").get_data(), PATCH_RECORD)
    return records, list(s.get_value("paths")), list(s.get_value("labels"))


def batch_pixels(sample):
    """Copies a batch into an (N, H, W, C) uint8 array."""
    # VideoInfo rather than caps.get_structure(0), which returns a context
    # manager around the structure from gst-python 1.26 on
    video = GstVideo.VideoInfo.new_from_caps(sample.get_caps())
    width, height = video.width, video.height
    channels = 3 if video.finfo.format == GstVideo.VideoFormat.RGB else 4
    buffer = sample.get_buffer()
    ok, info = buffer.map(Gst.MapFlags.READ)
    if not ok:
        raise RuntimeError("cannot map the batch")
    try:
        pixels = np.frombuffer(info.data, np.uint8).copy()
    finally:
        buffer.unmap(info)
    return pixels.reshape(height // width, width, width, channels)


def main(location, batches=20):
    Gst.init(None)
    pipeline = Gst.parse_launch(
        f'wsislidesrc location="{location}" cycle=true ! tissuemask ! '
        "queue max-size-buffers=4 ! patchsampler patch-size=256 target-mpp=0.5 ! "
        "patchinterleave pool-size=8 patches-per-visit=4 ! patchreader ! "
        "queue max-size-buffers=256 max-size-bytes=0 max-size-time=0 ! "
        "patchbatch batch-size=64 ! appsink name=sink sync=false max-buffers=2")
    sink = pipeline.get_by_name("sink")
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    start, patches = None, 0
    try:
        for i in range(batches):
            sample = sink.try_pull_sample(10 * Gst.SECOND)
            if sample is None:
                msg = bus.pop_filtered(Gst.MessageType.ERROR)
                if msg is not None:
                    raise RuntimeError(msg.parse_error()[0].message)
                break
            images = batch_pixels(sample)
            records, paths, labels = batch_metadata(sample.get_buffer())
            if i == 0:
                start = time.monotonic()
                print(f"batch shape {images.shape}, first patch: {paths[0]} "
                      f"x={records['x'][0]} y={records['y'][0]} "
                      f"level={records['level'][0]} mpp={records['out_mpp'][0]:.3f} "
                      f"tissue={records['tissue_fraction'][0]:.2f} label='{labels[0]}'")
            else:
                patches += len(records)
        if start is not None and patches:
            print(f"{patches / (time.monotonic() - start):.1f} patches/s")
    finally:
        pipeline.set_state(Gst.State.NULL)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "sample-slides")
