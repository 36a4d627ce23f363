#!/usr/bin/env python3
# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The gstwsi_cuda -> PyTorch path on a GPU machine that has no PyGObject.

The device machines of this project have python3 with torch but neither
GStreamer's Python bindings (gi) nor a way to install them, so this drives
the pipeline through ctypes calls into libgstreamer and hands the raw
GstBuffer/GstCaps/GstElement pointers to gstwsi_cuda (its BatchView takes
any object whose hash() is the C address, which an int's is). Everything
else is the real thing: share_torch_context, as_tensor through
``__cuda_array_interface__``, a model step on the tensor.

Checks, for the same seed: the batches of the README pipeline through
wsicudaupload and through the stock cudaupload, as torch CUDA tensors
without a host copy, equal the CPU run's batches (compared on the GPU after
uploading the CPU batch), and a ResNet-18 step on them gives a finite loss.
Then measures the data-wait share of a training loop fed that way.

    GSTWSI_CUDA_LIBRARY=build/ext/cuda/libgstwsicudatensor.so \
    PYTHONPATH=ext/cuda/tensor python3 tests/gpu/torch_ctypes_check.py SLIDES
Exit 0: all checks passed; 1: a check failed; 77: no CUDA device.
"""
import ctypes
import sys
import time

import torch

import gstwsi_cuda

GST_STATE_NULL, GST_STATE_PLAYING = 1, 4
SECOND = 1000000000

gst = ctypes.CDLL("libgstreamer-1.0.so.0")
gstapp = ctypes.CDLL("libgstapp-1.0.so.0")
gst.gst_init.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
gst.gst_parse_launch.restype = ctypes.c_void_p
gst.gst_parse_launch.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
gst.gst_bin_get_by_name.restype = ctypes.c_void_p
gst.gst_bin_get_by_name.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
gst.gst_element_set_state.argtypes = [ctypes.c_void_p, ctypes.c_int]
gst.gst_object_unref.argtypes = [ctypes.c_void_p]
gst.gst_sample_get_buffer.restype = ctypes.c_void_p
gst.gst_sample_get_buffer.argtypes = [ctypes.c_void_p]
gst.gst_sample_get_caps.restype = ctypes.c_void_p
gst.gst_sample_get_caps.argtypes = [ctypes.c_void_p]
gst.gst_mini_object_unref.argtypes = [ctypes.c_void_p]
gstapp.gst_app_sink_try_pull_sample.restype = ctypes.c_void_p
gstapp.gst_app_sink_try_pull_sample.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
gstapp.gst_app_sink_is_eos.argtypes = [ctypes.c_void_p]


def pipeline_desc(slides, upload, threads=4, patches_per_slide=64, batch=64):
    return ("wsislidesrc location=%s seed=7 ! tissuemask ! queue max-size-buffers=4 ! "
            "patchsampler patch-size=256 target-mpp=0.5 patches-per-slide=%d ! "
            "patchinterleave pool-size=8 patches-per-visit=4 ! patchreader threads=%d ! "
            "queue max-size-buffers=256 max-size-bytes=0 max-size-time=0 ! "
            "patchbatch batch-size=%d ! %s appsink name=sink sync=false"
            % (slides, patches_per_slide, threads, batch, upload))


class Pipeline:
    """A parsed pipeline ending in appsink name=sink, pulled with ctypes."""

    def __init__(self, desc, share_context):
        self.ptr = gst.gst_parse_launch(desc.encode(), None)
        if not self.ptr:
            raise RuntimeError("cannot parse: " + desc)
        self.sink = gst.gst_bin_get_by_name(self.ptr, b"sink")
        if share_context:
            gstwsi_cuda.share_torch_context(self.ptr)
        gst.gst_element_set_state(self.ptr, GST_STATE_PLAYING)

    def batches(self):
        """Yields (view tensor, seconds waited for it) until EOS."""
        while True:
            t0 = time.perf_counter()
            sample = gstapp.gst_app_sink_try_pull_sample(self.sink, 20 * SECOND)
            waited = time.perf_counter() - t0
            if not sample:
                if not gstapp.gst_app_sink_is_eos(self.sink):
                    raise RuntimeError("no batch within 20 s and no EOS (an element failed? rerun with GST_DEBUG=3)")
                return
            buf = gst.gst_sample_get_buffer(sample)
            caps = gst.gst_sample_get_caps(sample)
            # the view refs the buffer; the sample can go at once
            tensor = gstwsi_cuda.as_tensor(buf, caps)
            gst.gst_mini_object_unref(sample)
            yield tensor, waited

    def close(self):
        gst.gst_element_set_state(self.ptr, GST_STATE_NULL)
        gst.gst_object_unref(self.sink)
        gst.gst_object_unref(self.ptr)


def check_equal_to_cpu(slides, upload, cpu_batches, model, failures):
    p = Pipeline(pipeline_desc(slides, upload), share_context=True)
    n = 0
    for x, _ in p.batches():
        if not x.is_cuda:
            failures.append("%s: batch %d is not a CUDA tensor" % (upload, n))
            break
        ref = cpu_batches[n].to("cuda")          # compare on the GPU
        if x.shape != ref.shape or not torch.equal(x, ref):
            failures.append("%s: batch %d differs from the CPU batch" % (upload, n))
        if n == 0:
            inp = x.permute(0, 3, 1, 2).float().div(255)
            loss = model(inp).float().square().mean()
            loss.backward()
            if not torch.isfinite(loss):
                failures.append("%s: model step gave %s" % (upload, loss.item()))
            print("  %s: batch %s %s on %s, strides %s, loss %.4f"
                  % (upload, tuple(x.shape), x.dtype, x.device, x.stride(), loss.item()))
        n += 1
    p.close()
    if n != len(cpu_batches):
        failures.append("%s: %d batches, CPU run %d" % (upload, n, len(cpu_batches)))
    print("  %s: %d batches compared with the CPU run" % (upload, n))


def data_wait_share(slides, threads, model, steps=60):
    """Training loop fed by wsicudaupload: share of wall time spent waiting."""
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    p = Pipeline(pipeline_desc(slides, "queue max-size-buffers=2 max-size-bytes=0 "
                               "max-size-time=0 ! wsicudaupload !", threads=threads,
                               patches_per_slide=4000), share_context=True)
    waited = 0.0
    n = 0
    start = None
    for x, w in p.batches():
        if n == 5:                               # warm-up done
            torch.cuda.synchronize()
            start = time.perf_counter()
            waited = 0.0
        elif n > 5:
            waited += w
        inp = x.permute(0, 3, 1, 2).float().div_(255)
        opt.zero_grad(set_to_none=True)
        loss = model(inp).float().square().mean()
        loss.backward()
        opt.step()
        loss.item()                              # one sync per step, like a logger
        n += 1
        if n == steps + 6:
            break
    torch.cuda.synchronize()
    total = time.perf_counter() - start
    p.close()
    return steps, total, waited


def main():
    slides = sys.argv[1]
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 77
    gst.gst_init(None, None)
    torch.empty(1, device="cuda")                # torch's context, shared below
    import torchvision
    model = torchvision.models.resnet18(num_classes=8).cuda()
    failures = []

    cpu = Pipeline(pipeline_desc(slides, ""), share_context=False)
    cpu_batches = [x.clone() for x, _ in cpu.batches()]
    cpu.close()
    print("CPU run: %d batches of %s" % (len(cpu_batches), tuple(cpu_batches[0].shape)))
    if cpu_batches[0].is_cuda:
        failures.append("the CPU run gave CUDA tensors")

    check_equal_to_cpu(slides, "queue max-size-buffers=2 max-size-bytes=0 max-size-time=0 ! "
                       "wsicudaupload !", cpu_batches, model, failures)
    check_equal_to_cpu(slides, "queue max-size-buffers=2 max-size-bytes=0 max-size-time=0 ! "
                       "cudaupload ! video/x-raw(memory:CUDAMemory) !", cpu_batches, model,
                       failures)

    print("\nResNet-18 training steps on 64x3x256x256 fed by wsicudaupload "
          "(ctypes, no gi), after 5 warm-up steps:")
    print("threads  steps  wall s  steps/s  patches/s  data-wait share")
    for threads in (4, 8, 16):
        steps, total, waited = data_wait_share(slides, threads, model)
        print("%7d  %5d  %6.2f  %7.1f  %9.0f  %14.0f%%"
              % (threads, steps, total, steps / total, 64 * steps / total,
                 100 * waited / total))

    for f in failures:
        print("FAIL: " + f)
    print("torch_ctypes_check: %s" % ("FAILED" if failures else "all checks passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
