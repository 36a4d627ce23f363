"""Buffer lifetime: batch pixels as numpy arrays (or torch tensors) that share
the GstBuffer's memory.

Contract: an array made here keeps its buffer referenced and read-mapped for
exactly as long as some array, view or tensor still points into it (its
`.base` chain holds a small mapping object whose `weakref.finalize` unmaps
and releases the buffer); nothing else unmaps it.  Arrays over GStreamer's
memory are read-only.  `copy=True` costs one memcpy per batch and gives
ordinary writable memory instead.  Cost otherwise: one map per buffer (or
per memory of a multi-memory batch), no copy.  Thread-safe as far as numpy
and GstBuffer references are; `live_mapped_buffers()` counts what is held.
"""
import warnings
import weakref

import numpy as np

from ..errors import PipelineError
from .compat import caps_structure
from .gst import Gst

__all__ = ["as_tensor", "batch_arrays", "live_mapped_buffers", "resolve_torch"]

_VIEWS_CAPS = "application/x-wsi-views"
_TENSOR_CAPS = "application/x-wsi-tensor"
_CHANNELS = {"RGB": 3, "BGR": 3, "GRAY8": 1}

_live = weakref.WeakSet()


def live_mapped_buffers():
    """Number of GstBuffers currently kept mapped by arrays of this module."""
    return len(_live)


class _MappedBuffer:
    """Owns one reference to a GstBuffer and its read mapping.

    numpy sees it through `__array_interface__`, so every array made from it
    (and every view or torch tensor of those arrays) keeps it alive through
    its `.base` chain; the buffer is unmapped and released only when the last
    of them is gone (a weakref.finalize, which also runs at interpreter exit
    while GStreamer is still usable).  Nothing else unmaps it.
    """

    __slots__ = ("__array_interface__", "__weakref__")

    def __init__(self, buffer, owner_set=None):
        info = buffer.map(Gst.MapFlags.READ)
        if not info.__parent__:
            raise PipelineError("cannot map a batch buffer for reading")
        # Only the pointer, size and read-only flag are kept: no export of
        # the mapping's memoryview stays open, so unmapping can release it.
        self.__array_interface__ = dict(
            np.frombuffer(info.data, np.uint8).__array_interface__)
        weakref.finalize(self, buffer.unmap, info)
        _live.add(self)
        if owner_set is not None:
            owner_set.add(self)


def _pixels(sample, copy, owner_set=None):
    """(N, H, W, C) uint8 numpy array of a batch sample."""
    with caps_structure(sample.get_caps()) as caps:
        width = caps.get_value("width")
        height = caps.get_value("height")
        fmt = caps.get_value("format")
    channels = _CHANNELS.get(fmt, 4)
    buffer = sample.get_buffer()
    if copy:
        with buffer.map(Gst.MapFlags.READ) as info:
            flat = np.frombuffer(info.data, np.uint8).copy()
    else:
        flat = np.asarray(_MappedBuffer(buffer, owner_set))
        # GStreamer's memory: numpy must not write into it (it is mapped
        # for reading and may be shared with other buffers or the pool).
        flat.flags.writeable = False
    row = width * channels
    if flat.size != height * row:
        raise PipelineError(
            f"batch buffer holds {flat.size} bytes, caps say {height * row} "
            f"({width}x{height} {fmt}): padded strides are not supported")
    return flat.reshape(height // width, width, width, channels)


class _BatchOwner:
    """Owns one reference to a multi-memory batch (a view per memory, or a
    float tensor); each memory's array holds it through a _MappedMemory, so
    it counts as one live buffer however many views are alive."""

    __slots__ = ("buffer", "__weakref__")

    def __init__(self, buffer, owner_set=None):
        self.buffer = buffer
        _live.add(self)
        if owner_set is not None:
            owner_set.add(self)


class _MappedMemory:
    """Read mapping of memory `index` of a batch, held as _MappedBuffer holds
    a whole buffer (unmapped when the last array over it is gone)."""

    __slots__ = ("__array_interface__", "_owner", "__weakref__")

    def __init__(self, owner, index):
        buffer = owner.buffer
        info = buffer.map_range(index, 1, Gst.MapFlags.READ)
        if not info.__parent__:
            raise PipelineError(f"cannot map memory {index} of a batch for reading")
        self.__array_interface__ = dict(
            np.frombuffer(info.data, np.uint8).__array_interface__)
        self._owner = owner
        weakref.finalize(self, buffer.unmap, info)


def _memory_bytes(buffer, index, copy, owner):
    """Flat uint8 array over memory `index` of `buffer` (shared, read-only,
    or a copy)."""
    if copy:
        info = buffer.map_range(index, 1, Gst.MapFlags.READ)
        if not info.__parent__:
            raise PipelineError(f"cannot map memory {index} of a batch for reading")
        try:
            return np.frombuffer(info.data, np.uint8).copy()
        finally:
            buffer.unmap(info)
    flat = np.asarray(_MappedMemory(owner, index))
    flat.flags.writeable = False
    return flat


def _plane(flat, count, shape, dtype, what):
    """`flat` bytes as a (count, *shape) array of `dtype`."""
    want = count * int(np.prod(shape)) * np.dtype(dtype).itemsize
    if flat.size != want:
        raise PipelineError(f"{what} holds {flat.size} bytes, {want} expected for "
                            f"{count} x {shape} {np.dtype(dtype).name}")
    return flat.view(dtype).reshape((count,) + tuple(shape))


def _planar_arrays(sample, meta, copy, owner_set=None):
    """(images, views) of a multi-view or float batch: views is a dict
    {view name: array} (None for a single float tensor), images the first
    view (or the float tensor)."""
    with caps_structure(sample.get_caps()) as caps:
        float_batch = caps.get_name() == _TENSOR_CAPS
        if float_batch:
            channels, dtype = caps.get_value("channels"), np.float32
        else:
            channels, dtype = _CHANNELS.get(caps.get_value("format"), 4), np.uint8
        # single-view float tensors only (views caps carry no size)
        size = ((caps.get_value("height"), caps.get_value("width"))
                if caps.has_field("height") else None)
    buffer = sample.get_buffer()
    count = len(meta["records"])
    owner = None if copy else _BatchOwner(buffer, owner_set)
    names = meta["view_names"]
    if not names:          # float batch of single-view patches
        if size is None:
            raise PipelineError("float batch caps carry no height and width")
        shape = (channels,) + size
        flat = _memory_bytes(buffer, 0, copy, owner)
        return _plane(flat, count, shape, dtype, "float batch"), None
    if buffer.n_memory() != len(names):
        raise PipelineError(f"batch has {buffer.n_memory()} memories for "
                            f"{len(names)} views")
    views = {}
    for v, name in enumerate(names):
        first = meta["view_records"][0, v]
        h, w = int(first["out_height"]), int(first["out_width"])
        shape = (channels, h, w) if float_batch else (h, w, channels)
        flat = _memory_bytes(buffer, v, copy, owner)
        views[name] = _plane(flat, count, shape, dtype, f"view {name}")
    return views[names[0]], views


def batch_arrays(sample, meta, copy, owner_set=None):
    """(images, views) of any batch sample."""
    with caps_structure(sample.get_caps()) as caps:
        name = caps.get_name()
    if name in (_VIEWS_CAPS, _TENSOR_CAPS):
        return _planar_arrays(sample, meta, copy, owner_set)
    return _pixels(sample, copy, owner_set), None



def resolve_torch(choice):
    """The torch module for `torch=True`/"auto" (None for False, or "auto"
    without torch installed)."""
    if choice is False:
        return None
    try:
        import torch
    except ImportError:
        if choice == "auto":
            return None
        raise
    return torch


def as_tensor(torch, array):
    """`torch.from_numpy(array)`: shares the memory, no copy."""
    # The mapping is read-only (numpy refuses writes): torch has no read-only
    # tensors and warns on every such array.  Training reads its inputs (.to(device), .float()
    # copy them), so sharing is safe; writing in place into batch.images is
    # not supported (use copy=True for that).
    if not array.flags.writeable:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return torch.from_numpy(array)
    return torch.from_numpy(array)

