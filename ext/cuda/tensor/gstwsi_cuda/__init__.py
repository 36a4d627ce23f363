# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Hand gst-wsi batches to PyTorch without a host round trip.

gst-python cannot map CUDA memory, so this module asks the compiled helper
libgstwsicudatensor (ext/cuda/tensor) to map a batch buffer and describe it;
the result implements ``__cuda_array_interface__`` (CUDA memory) or
``__array_interface__`` (system memory) and keeps the buffer alive and mapped
for as long as it (or a tensor made from it) lives::

    import torch, gstwsi_cuda
    torch.cuda.init(); torch.empty(1, device="cuda")   # make the context
    gstwsi_cuda.share_torch_context(pipeline)          # one context, not two
    ...
    sample = appsink.emit("pull-sample")
    batch = gstwsi_cuda.as_tensor(sample)              # uint8 N,H,W,C on cuda

The GPU paths need an NVIDIA GPU and driver; the system-memory path works
anywhere.
"""

import ctypes
import ctypes.util
import os

__all__ = ["BatchView", "as_tensor", "share_torch_context", "library"]


class _WsiTensor(ctypes.Structure):
    # mirrors WsiTensor in wsicudatensor.h
    _fields_ = [("data", ctypes.c_uint64),
                ("is_cuda", ctypes.c_int32),
                ("device_id", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 4),
                ("strides", ctypes.c_int64 * 4),
                ("priv", ctypes.c_void_p)]


def _load():
    path = (os.environ.get("GSTWSI_CUDA_LIBRARY")
            or ctypes.util.find_library("gstwsicudatensor")
            or "libgstwsicudatensor.so")
    lib = ctypes.CDLL(path)
    lib.wsi_tensor_new.restype = ctypes.POINTER(_WsiTensor)
    lib.wsi_tensor_new.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                   ctypes.c_uint,
                                   ctypes.POINTER(ctypes.c_char_p)]
    lib.wsi_tensor_free.restype = None
    lib.wsi_tensor_free.argtypes = [ctypes.POINTER(_WsiTensor)]
    lib.wsi_cuda_share_current_context.restype = ctypes.c_char_p
    lib.wsi_cuda_share_current_context.argtypes = [ctypes.c_void_p]
    return lib


_lib = None


def library():
    """The loaded helper (set GSTWSI_CUDA_LIBRARY to pick a build's copy)."""
    global _lib
    if _lib is None:
        _lib = _load()
    return _lib


def _pointer(gobj):
    # PyGObject hashes GObjects and boxed types (Gst.Buffer, Gst.Caps)
    # by the address of the wrapped C struct
    return ctypes.c_void_p(hash(gobj))


class BatchView:
    """A zero-copy, read-only NHWC uint8 view of one batch buffer."""

    def __init__(self, buffer, caps, patch_height=0):
        error = ctypes.c_char_p()
        ptr = library().wsi_tensor_new(_pointer(buffer), _pointer(caps),
                                       patch_height, ctypes.byref(error))
        if not ptr:
            raise ValueError("gstwsi_cuda: %s" % error.value.decode())
        self._ptr = ptr
        t = ptr.contents
        self.is_cuda = bool(t.is_cuda)
        self.device_id = t.device_id
        self.shape = tuple(t.shape)
        self.strides = tuple(t.strides)
        self.data = t.data

    def _interface(self):
        return {"shape": self.shape, "typestr": "|u1",
                "data": (self.data, True), "strides": self.strides,
                "version": 3}

    @property
    def __cuda_array_interface__(self):
        if not self.is_cuda:
            raise AttributeError("batch is in system memory")
        iface = self._interface()
        # PyTorch refuses read-only CUDA interfaces ("the read only flag is
        # not supported", seen on an H100, issue 25): the batch is the
        # caller's own buffer from the appsink, so the tensor may be written
        iface["data"] = (self.data, False)
        # wsicudaupload and cudaupload finish their copies before pushing
        iface["stream"] = None
        return iface

    @property
    def __array_interface__(self):
        if self.is_cuda:
            raise AttributeError("batch is in CUDA memory")
        return self._interface()

    def __del__(self):
        if getattr(self, "_ptr", None):
            library().wsi_tensor_free(self._ptr)
            self._ptr = None


def as_tensor(sample_or_buffer, caps=None, patch_height=0):
    """A torch.Tensor over the batch (CUDA or CPU), sharing its memory."""
    import torch
    if caps is None:
        caps = sample_or_buffer.get_caps()
        sample_or_buffer = sample_or_buffer.get_buffer()
    view = BatchView(sample_or_buffer, caps, patch_height)
    if view.is_cuda:
        # torch keeps `view` (hence the buffer) alive with the tensor
        return torch.as_tensor(view, device="cuda:%d" % view.device_id)
    import numpy
    return torch.from_numpy(numpy.asarray(view))


def share_torch_context(element):
    """Make GStreamer use the CUDA context current on this thread.

    Call after torch has created its context (any CUDA tensor will do) and
    before the pipeline leaves NULL; CUDA elements then take it through
    their need-context query instead of creating a second context.
    """
    error = library().wsi_cuda_share_current_context(_pointer(element))
    if error is not None:
        raise RuntimeError("gstwsi_cuda: %s" % error.decode())
