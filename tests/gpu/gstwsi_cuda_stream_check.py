#!/usr/bin/env python3
# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.1-or-later
"""gstwsi.BatchStream over standard_pipeline(cuda_upload=True), on a GPU.

Checks, for the same seed, that the first batches of the stream through
wsicudaupload are torch uint8 tensors on the GPU (no host copy: their data
pointer is device memory) whose pixels equal the CPU stream's (compared on
the GPU after uploading the CPU batch) and whose patch records are the
same (but for created_ns, the time each patch was read). Run by tests/gpu/run.sh with PyGObject on PYTHONPATH:

    python3 gstwsi_cuda_stream_check.py SLIDES
Exit 0: passed; 1: a check failed; 77: no CUDA device.
"""
import sys

import numpy as np
import torch

import gstwsi

BATCHES = 4


def same_records(a, b):
    """Equal patch records, but for created_ns (when each patch was read)."""
    fields = [f for f in a.dtype.names if f != "created_ns"]
    return all(np.array_equal(a[f], b[f]) for f in fields)


def stream(slides, cuda_upload):
    description = gstwsi.standard_pipeline(
        slides, batch_size=32, patch_size=128, patches_per_slide=64, threads=4, seed=7,
        cycle=False, cuda_upload=cuda_upload)
    return gstwsi.BatchStream(description, copy=not cuda_upload, timeout=60)


def main():
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 77
    gstwsi.init()
    with stream(sys.argv[1], False) as cpu_stream:
        cpu = [batch for _, batch in zip(range(BATCHES), cpu_stream)]
    ok = len(cpu) == BATCHES
    compared = 0
    # each CUDA batch is compared and dropped at once: the upload's pool is bounded
    with stream(sys.argv[1], True) as gpu_stream:
        for c, g in zip(cpu, gpu_stream):
            on_gpu = g.images.is_cuda
            same = on_gpu and torch.equal(c.images.to("cuda"), g.images)
            records = same_records(c.records, g.records)
            print(f"batch {compared}: {tuple(g.images.shape)} {g.images.dtype} on "
                  f"{g.images.device}, pixels equal to the CPU stream: {same}, "
                  f"records equal: {records}")
            ok = ok and on_gpu and same and records
            compared += 1
    ok = ok and compared == BATCHES
    print("gstwsi cuda_upload stream check:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
