"""Batches out of a gst-wsi pipeline: the pipeline's life and zero-copy pixels.

A `BatchStream` parses a pipeline description that ends in an `appsink`,
plays it and yields one `Batch` per appsink sample.  The pixels of a batch
are a uint8 (N, H, W, C) array (or torch tensor) that *shares* the GstBuffer's
memory: the buffer stays referenced and mapped for exactly as long as some
array or tensor still points into it (see `_MappedBuffer`).
"""
import atexit
import difflib
import os
import re
import shlex
import threading
import time
import warnings
import weakref

import numpy as np

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
from gi.repository import GLib, GObject, Gst, GstApp  # noqa: E402,F401  (GstApp: try_pull_sample)

from .streamstats import MESSAGE_NAME as _STATS_MESSAGE, stats_dict as _stats_dict  # noqa: E402

__all__ = ["PATCH_RECORD", "VIEW_RECORD", "Batch", "BatchStream", "ForkError", "PipelineError",
           "SettingsError", "epoch_seed", "init", "standard_pipeline", "live_mapped_buffers", "validate_description"]

# WsiPatchRecord, 64 bytes, native endian (gst-libs/gst/wsi/wsirecord.h).
PATCH_RECORD = np.dtype([
    ("sequence", "=u8"), ("x", "=i8"), ("y", "=i8"), ("created_ns", "=i8"),
    ("slide_index", "=u4"), ("cycle", "=u4"), ("footprint", "=u4"),
    ("out_size", "=u4"), ("level", "=u4"), ("read_size", "=u4"),
    ("out_mpp", "=f4"), ("tissue_fraction", "=f4"),
])
assert PATCH_RECORD.itemsize == 64

# WsiViewRecord, 48 bytes (record version 2: one per view of a location).
VIEW_RECORD = np.dtype([
    ("x", "=f8"), ("y", "=f8"), ("width0", "=f4"), ("height0", "=f4"),
    ("mpp", "=f4"), ("view_index", "=u4"), ("out_width", "=u4"),
    ("out_height", "=u4"), ("flags", "=u4"), ("reserved", "=u4"),
])
assert VIEW_RECORD.itemsize == 48

_VIEWS_CAPS = "application/x-wsi-views"
_TENSOR_CAPS = "application/x-wsi-tensor"
_CHANNELS = {"RGB": 3, "BGR": 3, "GRAY8": 1}

# How long one appsink pull may block before Python gets control back (to
# look at the bus and to let Ctrl-C through).
_POLL_NS = 100 * Gst.MSECOND

_init_lock = threading.Lock()

# Fork safety: the PID that initialised GStreamer, and the PID in which a
# pipeline went to PLAYING (so GStreamer's streaming and pool threads ran).
# A fork()ed child inherits GStreamer's state but none of those threads: the
# locks they held stay held, and a pipeline started there hangs.
_init_pid = None
_threads_pid = None

# Streams inherited by a fork()ed child: never touched (stopping or freeing
# them there could hang on the parent's locks), never freed.
_forked_streams = []


class ForkError(RuntimeError):
    """GStreamer used in a process fork()ed after a pipeline ran in its parent."""


def _check_fork():
    if _threads_pid is not None and _threads_pid != os.getpid():
        raise ForkError(
            f"this process ({os.getpid()}) was fork()ed from process {_threads_pid}, in "
            f"which a GStreamer pipeline already ran: GStreamer's threads do not survive "
            f"fork() and a pipeline started here would hang.  Start DataLoader workers "
            f"with spawn or forkserver instead: torch.utils.data.DataLoader(..., "
            f"multiprocessing_context=\"spawn\") (or \"forkserver\"), or "
            f"multiprocessing.set_start_method(\"spawn\"); see docs/python.md")


def _after_fork_in_child():
    for stream in list(_open_streams):
        stream._forked = True
        _forked_streams.append(stream)
    _open_streams.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def epoch_seed(seed, epoch):
    """wsislidesrc seed of epoch `epoch` of a stream with base seed `seed`:
    (seed + epoch * 0x9E3779B97F4A7C15) mod 2**64 (epoch 0 keeps `seed`)."""
    return (int(seed) + int(epoch) * 0x9E3779B97F4A7C15) % (1 << 64)


class PipelineError(RuntimeError):
    """An ERROR message from the pipeline's bus, as a Python exception.

    `message` is the element's human sentence, `debug` GStreamer's debug
    string and `source` the name of the element that posted it.
    """

    def __init__(self, message, debug=None, source=None):
        self.message = message
        self.debug = debug
        self.source = source
        text = message if source is None else f"{source}: {message}"
        if debug:
            text += f"\n{debug}"
        super().__init__(text)


class SettingsError(ValueError):
    """A pipeline description GStreamer would not run as written.

    An unknown element or property, a value out of its ParamSpec's range, an
    enum value the element does not know, a read-only property.  `element`
    (factory name), `property`, `value` (as written) and `allowed` (the range
    or the values, as text) are None where they do not apply.
    """

    def __init__(self, message, element=None, property=None, value=None, allowed=None):
        self.element = element
        self.property = property
        self.value = value
        self.allowed = allowed
        super().__init__(message)


def init(monitor=False, tracer_params="interval=1000,summary=false"):
    """Initialises GStreamer once per process.

    With `monitor=True` and no `GST_TRACERS` in the environment, enables the
    `wsistats` tracer first: tracers are only read at `Gst.init` time, so this
    has to happen before anything else initialises GStreamer.  Returns True
    when the wsistats tracer is active.
    """
    global _init_pid
    _check_fork()
    with _init_lock:
        if monitor and not Gst.is_initialized() and "GST_TRACERS" not in os.environ:
            os.environ["GST_TRACERS"] = f"wsistats({tracer_params})"
        if not Gst.is_initialized():
            Gst.init(None)
            _init_pid = os.getpid()
    return find_tracer() is not None


def find_tracer():
    """The process' wsistats tracer, or None when it is not active."""
    for tracer in Gst.tracing_get_active_tracers():
        if tracer.__gtype__.name == "GstWsiStats":
            return tracer
    return None


PULL_LANE = "consumer: appsink pulls"


def timeline_slice(tracer, lane, name, category, start_ns, end_ns):
    """Adds a slice to the wsistats timeline (its `timeline-slice` signal).

    `lane` is the row it is drawn on, `category` its trace-event "cat";
    times are `time.monotonic_ns()` values (the clock GStreamer's
    timestamps use).  Does nothing when `tracer` is None or the tracer has
    no `timeline=` file.
    """
    if tracer is not None:
        tracer.emit("timeline-slice", lane, name, category,
                    int(start_ns), int(end_ns))


# ---- zero-copy pixels -----------------------------------------------------

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
    caps = sample.get_caps().get_structure(0)
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
    caps = sample.get_caps().get_structure(0)
    buffer = sample.get_buffer()
    float_batch = caps.get_name() == _TENSOR_CAPS
    if float_batch:
        channels, dtype = caps.get_value("channels"), np.float32
    else:
        channels, dtype = _CHANNELS.get(caps.get_value("format"), 4), np.uint8
    count = len(meta["records"])
    owner = None if copy else _BatchOwner(buffer, owner_set)
    names = meta["view_names"]
    if not names:          # float batch of single-view patches
        shape = (channels, caps.get_value("height"), caps.get_value("width"))
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


def _batch_arrays(sample, meta, copy, owner_set=None):
    """(images, views) of any batch sample."""
    name = sample.get_caps().get_structure(0).get_name()
    if name in (_VIEWS_CAPS, _TENSOR_CAPS):
        return _planar_arrays(sample, meta, copy, owner_set)
    return _pixels(sample, copy, owner_set), None


# ---- metadata -------------------------------------------------------------

class Batch:
    """One batch: pixels plus per-patch metadata arrays (all of length N).

    `images`: uint8 (N, H, W, C), numpy or torch (shares the buffer's memory
    unless the stream copies); float32 (N, C, H, W) from `patchbatch
    normalize=true`.  Multi-view batches (patchviews): `views` is a dict
    {view name: (N, h, w, C) uint8 or (N, C, h, w) float32}, every view
    aligned on the same N locations, `view_records` a structured VIEW_RECORD
    array (N, n_views), `images` the first view; `views` is None otherwise.
    `columns`: {column name: numpy array of N} from the slide list's columns
    (numeric dtype when every value is a number, else str).  Metadata, once
    per location: `records` (structured PATCH_RECORD
    array) and its columns `slide_index`, `x`, `y`, `level`, `mpp`,
    `tissue_fraction`, `cycle`, `sequence`; `paths` and `labels` (lists of
    str); `index` (batch number in the stream, counting resumed batches) and
    `offset` (the buffer's GST_BUFFER_OFFSET); `epoch` (the stream's epoch).
    """

    __slots__ = ("images", "records", "paths", "labels", "index", "offset", "epoch",
                 "views", "view_records", "columns")

    def __init__(self, images, records, paths, labels, index, offset, epoch=0,
                 views=None, view_records=None, columns=None):
        self.views = views
        self.view_records = view_records
        self.columns = columns if columns is not None else {}
        self.epoch = epoch
        self.images = images
        self.records = records
        self.paths = paths
        self.labels = labels
        self.index = index
        self.offset = offset

    def __len__(self):
        return len(self.records)

    slide_index = property(lambda self: self.records["slide_index"])
    x = property(lambda self: self.records["x"])
    y = property(lambda self: self.records["y"])
    level = property(lambda self: self.records["level"])
    mpp = property(lambda self: self.records["out_mpp"])
    tissue_fraction = property(lambda self: self.records["tissue_fraction"])
    cycle = property(lambda self: self.records["cycle"])
    sequence = property(lambda self: self.records["sequence"])

    def metadata(self):
        """The metadata as a dict of arrays/lists (e.g. for a DataFrame)."""
        out = {name: self.records[name] for name in PATCH_RECORD.names}
        out["path"] = self.paths
        out["label"] = self.labels
        for name, values in self.columns.items():
            out[name if name not in out else f"column_{name}"] = values
        return out


_INT = re.compile(r"[+-]?\d+")


def _column_array(values):
    """A column's values as int64 or float64 when every one is a number,
    else as str."""
    if values and all(_INT.fullmatch(v.strip()) for v in values):
        try:
            return np.array([int(v) for v in values], np.int64)
        except OverflowError:
            pass
    try:
        if values and all(v.strip() for v in values):
            return np.array([float(v) for v in values], np.float64)
    except ValueError:
        pass
    return np.array(values, dtype=str)


def _columns(s, count):
    names = list(s.get_value("column-names") or []) if s.has_field("column-names") else []
    if not names:
        return {}
    values = list(s.get_value("column-values") or [])
    if len(values) != count * len(names):
        raise PipelineError(f"batch meta has {len(values)} column values for {count} "
                            f"locations x {len(names)} columns")
    return {name: _column_array(values[j::len(names)]) for j, name in enumerate(names)}


def _view_meta(s, count):
    """(view names, (count, n_views) VIEW_RECORD array) of a multi-view batch."""
    if not s.has_field("view-names"):
        return [], None
    names = list(s.get_value("view-names") or [])
    records = np.frombuffer(s.get_value("views").get_data(), VIEW_RECORD).copy()
    if len(records) != count * len(names):
        raise PipelineError(f"batch meta has {len(records)} view records for {count} "
                            f"locations x {len(names)} views")
    return names, records.reshape(count, len(names))


def _metadata(buffer):
    meta = buffer.get_custom_meta("WsiPatchMeta")
    if meta is None:
        raise PipelineError("batch buffer has no WsiPatchMeta: the pipeline "
                            "must end in patchbatch ! appsink")
    s = meta.get_structure()
    # One copy of the (small) record block per batch: it outlives the buffer.
    records = np.frombuffer(s.get_value("records").get_data(), PATCH_RECORD).copy()
    paths = list(s.get_value("paths") or [])
    labels = list(s.get_value("labels") or [])
    view_names, view_records = _view_meta(s, len(records))
    return dict(records=records, paths=paths, labels=labels, view_names=view_names,
                view_records=view_records, columns=_columns(s, len(records)))


# ---- the stream -----------------------------------------------------------

_open_streams = weakref.WeakSet()


@atexit.register
def _close_open_streams():
    # Streams still playing at exit (never closed, never collected) are
    # stopped while GStreamer and gi are still importable; __del__ during
    # interpreter teardown could not.
    for stream in list(_open_streams):
        if not getattr(stream, "_forked", False):
            stream.close()


def _find_appsink(pipeline, name):
    if name is not None:
        sink = pipeline.get_by_name(name)
        if sink is None:
            raise ValueError(f"no element named '{name}' in the pipeline")
        return sink
    sinks = []
    it = pipeline.iterate_sinks()
    while True:
        res, elem = it.next()
        if res != Gst.IteratorResult.OK:
            break
        if elem.get_factory() and elem.get_factory().get_name() == "appsink":
            sinks.append(elem)
    if len(sinks) != 1:
        raise ValueError("the pipeline must have exactly one appsink "
                         f"(found {len(sinks)}); name it and pass sink=")
    return sinks[0]


def _elements_of(pipeline, factory):
    found = []
    it = pipeline.iterate_recurse()
    while True:
        res, elem = it.next()
        if res != Gst.IteratorResult.OK:
            break
        f = elem.get_factory()
        if f is not None and f.get_name() == factory:
            found.append(elem)
    return found


class BatchStream:
    """Iterates the batches of a pipeline description ending in `appsink`.

    ```python
    with BatchStream(standard_pipeline("slides/", batch_size=64)) as stream:
        for batch in stream:
            train(batch.images, batch.tissue_fraction)
    ```

    The pipeline goes to PLAYING on the first batch and back to NULL at EOS,
    on an error (raised as `PipelineError` with the bus message), on `close()`,
    when a `for` loop over it is left (break, exception, Ctrl-C) or when the
    stream is garbage collected.  Arguments:

    - `torch`: True/False/"auto": images as torch tensors (`torch.from_numpy`
      over the shared memory, no copy) or numpy arrays.
    - `copy`: copy each batch once into fresh memory instead of sharing the
      buffer (frees the pipeline's buffer at once; one copy per batch).
    - `start_batch`: resume a deterministic stream at batch k: sets
      patchinterleave's `skip-patches` to k x batch-size (read from patchbatch).
    - `start_epoch`: the epoch the first iteration plays (see `set_epoch`);
      with `start_batch`, resume at batch k of epoch e.
    - `timeout`: seconds without a batch before `TimeoutError` (None: wait).

    Epochs: once a finite stream reached EOS (or a `for` loop over it was
    left), iterating it again restarts the pipeline for the next epoch.
    `set_epoch(e)` picks epoch e explicitly: wsislidesrc's seed becomes
    `epoch_seed(seed, e)`, so epoch e depends on (seed, e) only.
    """

    def __init__(self, description, sink=None, *, torch="auto", copy=False,
                 start_batch=0, start_epoch=0, timeout=120.0, monitor=False):
        _check_fork()
        init(monitor=monitor)
        self.description = description
        self.copy = copy
        self.timeout = timeout
        self.warnings = []
        self._torch = _resolve_torch(torch)
        self._pipeline = _parse_strict(description)
        self._sink = _find_appsink(self._pipeline, sink)
        self._bus = self._pipeline.get_bus()
        self.batch_size = self._batch_size()
        self.start_batch = int(start_batch)
        if self.start_batch:
            self._apply_resume(self.start_batch)
        sources = _elements_of(self._pipeline, "wsislidesrc")
        self._source = sources[0] if sources else None
        self.seed = self._source.get_property("seed") if self._source else 0
        self.start_epoch = int(start_epoch)
        self.epoch = self.start_epoch
        self._resume_pending = bool(self.start_batch)
        self._epoch_skip = self.start_batch   # batches skipped in this epoch
        self._apply_epoch_seed()
        self.epoch_batches = 0    # batches handed out in the current epoch
        self.batches = 0          # batches handed out by this stream
        self.patches = 0
        self.wait_ns = 0          # time spent blocked waiting for a batch
        self._tracer = find_tracer()      # draws the pulls on its timeline
        self._last_pull_end = None
        self._state = "ready"     # ready -> playing -> ended (-> ready) / closed
        self._forked = False
        self._held = weakref.WeakSet()    # zero-copy batches still alive
        self._max_held = self._max_zero_copy()
        self._warned_held = False

    # -- setup helpers --

    def _max_zero_copy(self):
        """How many zero-copy batches the caller may hold before the bounded
        pool of patchbatch runs dry: max-batches, less what the appsink queue
        and patchbatch's batch in progress take. None when unbounded."""
        batchers = _elements_of(self._pipeline, "patchbatch")
        if not batchers or batchers[0].find_property("max-batches") is None:
            return None
        max_batches = batchers[0].get_property("max-batches")
        if max_batches == 0:
            return None
        queued = self._sink.get_property("max-buffers") or max_batches
        return max(1, max_batches - queued - 1)

    def _must_copy(self):
        """Copy this batch when the caller holds so many zero-copy batches
        that patchbatch's bounded pool (max-batches) would run dry and the
        stream would stall waiting for one to come back."""
        if self.copy:
            return True
        if self._max_held is None or len(self._held) < self._max_held:
            return False
        if not self._warned_held:
            self._warned_held = True
            warnings.warn(
                f"{len(self._held)} batches of this stream are still alive: "
                f"patchbatch keeps at most max-batches of them, so further "
                f"batches are copied (drop references to old batches, or pass "
                f"copy=True)", RuntimeWarning, stacklevel=3)
        return True

    def _batch_size(self):
        batchers = _elements_of(self._pipeline, "patchbatch")
        return batchers[0].get_property("batch-size") if batchers else None

    def _apply_resume(self, k):
        interleavers = _elements_of(self._pipeline, "patchinterleave")
        if not interleavers or self.batch_size is None:
            raise ValueError("start_batch needs patchinterleave and patchbatch "
                             "in the pipeline")
        if interleavers[0].find_property("skip-patches") is None:
            raise ValueError("this patchinterleave has no skip-patches property: "
                             "resuming needs a newer gst-wsi")
        interleavers[0].set_property("skip-patches", k * self.batch_size)

    def _apply_epoch_seed(self):
        if self._source is not None:
            self._source.set_property("seed", epoch_seed(self.seed, self.epoch))

    @property
    def pipeline(self):
        return self._pipeline

    # -- stream statistics --

    # The latest wsi-stream-stats message (patchbatch stats-interval > 0) as a
    # gstwsi.streamstats dict, None before the first one.
    stream_stats = None

    # An error read off the bus by read_stream_stats, raised by the next pull.
    _held_error = None

    def read_stream_stats(self):
        """Takes the pipeline's queued wsi-stream-stats messages off the bus
        (so they do not pile up) and returns the latest as a dict, or None.
        The bus discards what a pop does not ask for, so warnings and errors
        are taken too: warnings into `warnings`, an error for the next pull."""
        error = self._pop_error()
        if error is not None and self._held_error is None:
            self._held_error = error
        return self.stream_stats

    def _element_message(self, msg):
        s = msg.get_structure()
        if s is not None and s.get_name() == _STATS_MESSAGE:
            self.stream_stats = _stats_dict(s)

    # -- epochs --

    def set_epoch(self, epoch):
        """Makes the next iteration play epoch `epoch` (stopping the current
        one if it is playing): wsislidesrc's seed = epoch_seed(seed, epoch).
        The resume point (start_batch) applies to start_epoch only, on the
        stream's first run."""
        if self._state == "closed":
            raise RuntimeError("the stream is closed")
        self._stop()
        epoch = int(epoch)
        keep_resume = self._resume_pending and epoch == self.start_epoch
        if not keep_resume and self._epoch_skip:
            self._apply_resume(0)
        self._epoch_skip = self.start_batch if keep_resume else 0
        self._resume_pending = keep_resume
        self.epoch = epoch
        self._apply_epoch_seed()
        self.epoch_batches = 0
        self._state = "ready"

    def _stop(self):
        self._last_pull_end = None    # the timeline's next "between pulls" starts afresh
        if self._state == "playing":
            _open_streams.discard(self)
            self._pipeline.set_state(Gst.State.NULL)
            self._pipeline.get_state(Gst.CLOCK_TIME_NONE)
        if self._state != "closed":
            self._state = "ended" if self._state == "playing" else self._state

    # -- life --

    def start(self):
        global _threads_pid
        if self._state == "closed":
            raise RuntimeError("the stream is closed")
        if self._state == "playing":
            return
        if self._state == "ended":
            raise RuntimeError("this epoch has ended: iterate the stream again "
                               "or call set_epoch() for the next one")
        _check_fork()
        self._state = "playing"
        self._resume_pending = False
        _open_streams.add(self)
        _threads_pid = os.getpid()
        if self._pipeline.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE:
            error = self._pop_error()
            self.close()
            raise error or PipelineError("the pipeline refused to start")

    def close(self):
        """Stops the pipeline (NULL) and waits for it; safe to call twice."""
        if self._state == "closed":
            return
        self._state = "closed"
        _open_streams.discard(self)
        if self._forked:
            return            # the parent's pipeline: leave it alone
        self._pipeline.set_state(Gst.State.NULL)
        self._pipeline.get_state(Gst.CLOCK_TIME_NONE)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_state", "closed") != "closed":
            self.close()

    # -- batches --

    def __iter__(self):
        if self._state == "ended":
            self.set_epoch(self.epoch + 1)
        elif self._state == "closed":
            raise RuntimeError("the stream is closed")
        return self._batches()

    def _batches(self):
        self.start()
        ok = False
        try:
            while True:
                batch = self.next_batch()
                if batch is None:
                    ok = True
                    return
                yield batch
        except GeneratorExit:
            ok = True          # break, or the generator dropped: next epoch
            raise
        finally:
            # EOS, break or the generator dropped: the pipeline stops and the
            # next iteration plays the next epoch; an exception or Ctrl-C
            # closes the stream.
            if ok:
                self._stop()
            else:
                self.close()

    def next_batch(self):
        """The next Batch, None at EOS; raises PipelineError/TimeoutError."""
        if self._state in ("closed", "ended"):
            return None
        self.start()
        sample = self._pull()
        self.read_stream_stats()
        if sample is None:
            self._stop()
            return None
        buffer = sample.get_buffer()
        meta = _metadata(buffer)
        images, views = _batch_arrays(sample, meta, self._must_copy(), self._held)
        if self._torch is not None:
            images = _as_tensor(self._torch, images)
            if views is not None:
                views = {name: _as_tensor(self._torch, a) for name, a in views.items()}
                images = views[meta["view_names"][0]]
        batch = Batch(images, meta["records"], meta["paths"], meta["labels"],
                      self._epoch_skip + self.epoch_batches, buffer.offset, self.epoch,
                      views=views, view_records=meta["view_records"],
                      columns=meta["columns"])
        self.epoch_batches += 1
        self.batches += 1
        self.patches += len(meta["records"])
        return batch

    def _pull(self):
        began = time.monotonic_ns()
        try:
            while True:
                sample = self._sink.try_pull_sample(_POLL_NS)
                if sample is not None:
                    return sample
                error = self._pop_error()
                if error is not None:
                    self.close()
                    raise error
                if self._sink.is_eos():
                    return None
                waited = (time.monotonic_ns() - began) / 1e9
                if self.timeout is not None and waited > self.timeout:
                    self.close()
                    raise TimeoutError(f"no batch for {waited:.0f} s from: "
                                       f"{self.description}")
        finally:
            ended = time.monotonic_ns()
            self.wait_ns += ended - began
            self._draw_pull(began, ended)

    def _draw_pull(self, began, ended):
        """The consumer's lane on the wsistats timeline (`timeline=`): each
        pull (waiting for a batch) and the time between two pulls (the
        caller using its batch).  Nothing without the tracer."""
        if self._tracer is None:
            return
        if self._last_pull_end is not None:
            timeline_slice(self._tracer, PULL_LANE, "between pulls",
                           "consumer-compute", self._last_pull_end, began)
        timeline_slice(self._tracer, PULL_LANE, "pull", "consumer-wait",
                       began, ended)
        self._last_pull_end = ended

    def _pop_error(self):
        if self._held_error is not None:
            error, self._held_error = self._held_error, None
            return error
        while True:
            msg = self._bus.pop_filtered(Gst.MessageType.ERROR | Gst.MessageType.WARNING
                                         | Gst.MessageType.ELEMENT)
            if msg is None:
                return None
            if msg.type == Gst.MessageType.ELEMENT:
                self._element_message(msg)
                continue
            source = msg.src.get_name() if msg.src else None
            if msg.type == Gst.MessageType.WARNING:
                err, _ = msg.parse_warning()
                self.warnings.append(f"{source}: {err.message}")
                continue
            err, debug = msg.parse_error()
            return PipelineError(err.message, debug, source)


def _resolve_torch(choice):
    if choice is False:
        return None
    try:
        import torch
    except ImportError:
        if choice == "auto":
            return None
        raise
    return torch


def _as_tensor(torch, array):
    # The mapping is read-only (numpy refuses writes): torch has no read-only
    # tensors and warns on every such array.  Training reads its inputs (.to(device), .float()
    # copy them), so sharing is safe; writing in place into batch.images is
    # not supported (use copy=True for that).
    if not array.flags.writeable:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return torch.from_numpy(array)
    return torch.from_numpy(array)


# ---- strict settings --------------------------------------------------------
#
# GStreamer's parser hands every name=value to g_object_set_property, which
# only *warns* when a value is out of the ParamSpec's range and leaves the
# default in place.  So the description is read here first, and every value
# is checked against the element class' ParamSpec before GStreamer sees it.

_INTS = {GObject.TYPE_INT, GObject.TYPE_UINT, GObject.TYPE_LONG, GObject.TYPE_ULONG,
         GObject.TYPE_INT64, GObject.TYPE_UINT64, GObject.TYPE_CHAR, GObject.TYPE_UCHAR}
_FLOATS = {GObject.TYPE_FLOAT, GObject.TYPE_DOUBLE}
_TRUE = {"true", "yes", "t", "1"}
_FALSE = {"false", "no", "f", "0"}
_specs_cache = {}


def _class_specs(factory_name):
    """{property name: GParamSpec} of an element factory, None if unknown."""
    if factory_name not in _specs_cache:
        specs = None
        factory = Gst.ElementFactory.find(factory_name)
        if factory is not None:
            loaded = factory.load()
            gtype = loaded.get_element_type() if loaded is not None else None
            if gtype is not None:
                specs = {spec.name: spec for spec in GObject.list_properties(gtype)}
        _specs_cache[factory_name] = specs
    return _specs_cache[factory_name]


def _tokens(description):
    """The description as shell-like tokens, '!' a token of its own."""
    lexer = shlex.shlex(description, posix=True, punctuation_chars="!")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError as exc:     # unbalanced quotes
        raise SettingsError(f"cannot read the pipeline description ({exc}): "
                            f"{description}") from None


def _settings(description):
    """(factory, property, value) for every name=value of a known element."""
    current = None
    for token in _tokens(description):
        if token == "!":
            current = None
            continue
        token = token.strip("()")
        if not token:
            continue
        if "=" not in token:
            # an element, or a reference ('name.'), caps, a bin: only
            # factories get their properties checked
            current = token if _class_specs(token) is not None else None
            continue
        name, _, value = token.partition("=")
        if current is not None and name and "::" not in name:
            yield current, name.strip(), value.strip()


def _describe(spec):
    """The values a ParamSpec allows, as text."""
    vtype = spec.value_type
    fundamental = vtype.fundamental
    if fundamental in _INTS or fundamental in _FLOATS:
        return f"{spec.minimum}..{spec.maximum}"
    if fundamental == GObject.TYPE_BOOLEAN:
        return "true, false"
    if fundamental == GObject.TYPE_ENUM:
        values = spec.enum_class.__enum_values__.values()
        return ", ".join(f"{v.value_nick} ({int(v)})" for v in values)
    return vtype.name


def _parse_int(text):
    if re.fullmatch(r"[+-]?0[0-7]+", text):       # strtoll base 0: octal
        return int(text, 8)
    try:
        return int(text, 0)
    except ValueError:
        return None


def _check_setting(factory, name, value):
    specs = _class_specs(factory)
    spec = specs.get(name) or specs.get(name.replace("_", "-"))
    if spec is None:
        close = difflib.get_close_matches(name, list(specs), n=3)
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        raise SettingsError(
            f"{factory}: no property '{name}'{hint}; '{name}={value}' cannot be set",
            factory, name, value, None)
    if not spec.flags & GObject.ParamFlags.WRITABLE:
        raise SettingsError(f"{factory}: {spec.name} is read-only (a statistic or "
                            f"status), '{name}={value}' cannot be set",
                            factory, spec.name, value, None)
    fundamental = spec.value_type.fundamental
    allowed = _describe(spec)
    bad = None
    if fundamental in _INTS:
        number = _parse_int(value)
        if number is None:
            bad = f"is not an integer (allowed: {allowed})"
        elif not spec.minimum <= number <= spec.maximum:
            bad = f"is out of range {allowed}" + _kept(spec)
    elif fundamental in _FLOATS:
        try:
            number = float(value)
        except ValueError:
            bad = f"is not a number (allowed: {allowed})"
        else:
            if number == number and not spec.minimum <= number <= spec.maximum:
                bad = f"is out of range {allowed}" + _kept(spec)
    elif fundamental == GObject.TYPE_BOOLEAN:
        if value.lower() not in _TRUE | _FALSE:
            bad = f"is not a boolean (allowed: {allowed})"
    elif fundamental == GObject.TYPE_ENUM:
        values = spec.enum_class.__enum_values__.values()
        number = _parse_int(value)
        if not any(value in (v.value_nick, v.value_name) or number == int(v)
                   for v in values):
            bad = f"is not one of {allowed}"
    elif spec.value_type.name == "GstValueArray":
        bad = _array_refusal(factory, spec, value)
    if bad is not None:
        raise SettingsError(
            f"{factory}: {spec.name}={value} {bad}", factory, spec.name, value, allowed)


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)", re.I)


def _array_refusal(factory, spec, value):
    """Why the element refuses a numeric array value such as patchbatch
    mean="<0.5,0.5>" (GStreamer would warn and keep the old value), or
    None: the value is tried on a scratch element and read back."""
    element = Gst.ElementFactory.make(factory, None)
    if element is None:
        return None
    name = spec.name
    want = [float(x) for x in _NUMBER.findall(value.replace("(double)", "")
                                              .replace("(float)", ""))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Gst.util_set_object_arg(element, name, value)
    try:
        got = [float(x) for x in element.get_property(name)]
    except (TypeError, ValueError):
        return None                      # not numbers: left to the parser
    if len(got) == len(want) and all(abs(a - b) <= 1e-9 * max(1.0, abs(b))
                                     for a, b in zip(got, want)):
        return None
    reason = "; ".join(str(w.message) for w in caught)
    return (f"is refused by the element, which kept <{', '.join(f'{g:g}' for g in got)}>"
            + (f" ({reason})" if reason else "") + f"; {name}: {spec.blurb}")


def _kept(spec):
    return (f" ({spec.value_type.name} ParamSpec range; GStreamer would warn and "
            f"silently keep the default {_default_text(spec)})")


def _default_text(spec):
    default = spec.default_value
    if spec.value_type.fundamental == GObject.TYPE_ENUM:
        return getattr(default, "value_nick", str(default))
    if spec.value_type.fundamental == GObject.TYPE_BOOLEAN:
        return str(bool(default)).lower()
    return str(default)


def validate_description(description):
    """Raises SettingsError when a description sets a property GStreamer would
    refuse or silently ignore: unknown, read-only, out of its ParamSpec's
    range, not one of an enum's values, not a boolean.  Elements whose factory
    is not installed are left to the parser.  Initialises GStreamer."""
    init()
    for factory, name, value in _settings(description):
        _check_setting(factory, name, value)


_PARSE_SETTING = re.compile(r'could not set property "([^"]+)" in element "([^"]+)" '
                            r'to "(.*)"')


def _parse_strict(description):
    """Gst.parse_launch with every error fatal and values checked first."""
    validate_description(description)
    try:
        return Gst.parse_launch_full(description, None, Gst.ParseFlags.FATAL_ERRORS)
    except GLib.Error as exc:
        message = exc.message
        match = _PARSE_SETTING.search(message)
        if match is not None:
            prop, element, value = match.groups()
            factory = next((f for f, n, _ in _settings(description) if n == prop), element)
            specs = _class_specs(factory) or {}
            spec = specs.get(prop)
            allowed = _describe(spec) if spec is not None else None
            raise SettingsError(
                f"{factory}: {prop}={value} is not a valid value"
                + (f" (allowed: {allowed})" if allowed else "") + f": {message}",
                factory, prop, value, allowed) from None
        raise SettingsError(f"invalid pipeline description ({message}): "
                            f"{description}") from None


# ---- pipeline descriptions -------------------------------------------------

# The elements of the standard pipeline, in order: the generic keyword rule
# ELEMENT_PROPERTY (e.g. patchreader_tile_cache_size=128) accepts these.
_STAGES = ("wsislidesrc", "tissuemask", "patchsampler", "patchinterleave",
           "patchreader", "patchbatch")

# standard_pipeline keyword -> (element, property).  Keywords whose property
# this build may lack (added with newer elements) are listed all the same:
# they are looked up in the element's ParamSpecs, so they work as soon as
# the property exists and raise SettingsError naming it until then.
_KEYWORDS = {
    # slides
    "cycle": ("wsislidesrc", "cycle"),
    "seed": ("wsislidesrc", "seed"),
    "slide_order": ("wsislidesrc", "slide-order"),
    "rank": ("wsislidesrc", "rank"),
    "world_size": ("wsislidesrc", "world-size"),
    "default_mpp": ("wsislidesrc", "default-mpp"),
    "tcga": ("wsislidesrc", "tcga"),
    "thumbnail_size": ("wsislidesrc", "thumbnail-size"),
    # tissue
    "tissue_method": ("tissuemask", "method"),
    "saturation_threshold": ("tissuemask", "saturation-threshold"),
    "value_threshold": ("tissuemask", "value-threshold"),
    "value_floor": ("tissuemask", "value-floor"),
    "hue_min": ("tissuemask", "hue-min"),
    "hue_max": ("tissuemask", "hue-max"),
    "close_kernel": ("tissuemask", "close-kernel"),
    "median_kernel": ("tissuemask", "median-kernel"),
    "min_component_area": ("tissuemask", "min-component-area"),
    "min_hole_area": ("tissuemask", "min-hole-area"),
    "min_tissue_fraction": ("tissuemask", "min-tissue-fraction"),
    "mask_cache_size": ("tissuemask", "mask-cache-size"),
    # sampling
    "patch_size": ("patchsampler", "patch-size"),
    "target_mpp": ("patchsampler", "target-mpp"),
    "patches_per_slide": ("patchsampler", "patches-per-slide"),
    "mode": ("patchsampler", "mode"),
    "target_mpps": ("patchsampler", "target-mpps"),
    "mpp_weights": ("patchsampler", "mpp-weights"),
    "mpp_min": ("patchsampler", "mpp-min"),
    "mpp_max": ("patchsampler", "mpp-max"),
    "mpp_distribution": ("patchsampler", "mpp-distribution"),
    "maxavg_lambda": ("patchsampler", "maxavg-lambda"),
    "min_tissue": ("patchsampler", "min-tissue"),
    "replacement": ("patchsampler", "replacement"),
    "stride": ("patchsampler", "stride"),
    "level": ("patchsampler", "level"),
    "align": ("patchsampler", "align"),
    "max_attempts": ("patchsampler", "max-attempts"),
    "max_patches": ("patchsampler", "max-patches"),
    "rank_quota": ("patchsampler", "rank-quota"),
    # pool of slides
    "pool_size": ("patchinterleave", "pool-size"),
    "patches_per_visit": ("patchinterleave", "patches-per-visit"),
    # reading
    "threads": ("patchreader", "threads"),
    "backend": ("patchreader", "backend"),
    "tile_cache_size": ("patchreader", "tile-cache-size"),
    "dct_scaling": ("patchreader", "dct-scaling"),
    "resample_tolerance": ("patchreader", "resample-tolerance"),
    "max_open_slides": ("patchreader", "max-open-slides"),
    "max_read_failures": ("patchreader", "max-read-failures"),
    # batching
    "batch_size": ("patchbatch", "batch-size"),
    "max_batches": ("patchbatch", "max-batches"),
    "drop_remainder": ("patchbatch", "drop-remainder"),
}

# Keywords that are not element properties.
_OWN_KEYWORDS = ("tissue", "prefetch", "sink")


def keyword_property(keyword):
    """(element, property) that a standard_pipeline keyword sets, from the
    table or the generic rule ELEMENT_PROPERTY; None when it names neither."""
    if keyword in _KEYWORDS:
        return _KEYWORDS[keyword]
    for element in _STAGES:
        if keyword.startswith(element + "_") and len(keyword) > len(element) + 1:
            return element, keyword[len(element) + 1:].replace("_", "-")
    return None


def _value_text(value):
    """A Python value as GStreamer's parser reads it: booleans true/false,
    lists comma-separated ("0.25,0.5,1"), strings quoted when they must be."""
    if hasattr(value, "item") and not isinstance(value, (list, tuple)):
        value = value.item()            # numpy scalars
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        items = value.tolist() if hasattr(value, "tolist") else value
        return '"' + ",".join(_value_text(v).strip('"') for v in items) + '"'
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    if re.fullmatch(r"[A-Za-z0-9_.+:,/-]+", text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _unknown_keyword(keyword, value):
    names = list(_KEYWORDS) + list(_OWN_KEYWORDS) + ["location"]
    close = difflib.get_close_matches(keyword, names, n=3)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    return SettingsError(
        f"standard_pipeline: unknown keyword '{keyword}={value!r}'{hint}; use one of "
        f"{', '.join(sorted(names))}, or ELEMENT_PROPERTY for any property of "
        f"{', '.join(_STAGES)} (e.g. patchreader_tile_cache_size=128)",
        None, keyword, value, None)


def _check_keyword(keyword, factory, prop, text):
    """SettingsError when this build's `factory` lacks `prop` or `text` is
    outside its ParamSpec (needs GStreamer initialised)."""
    specs = _class_specs(factory)
    if specs is None:
        raise SettingsError(f"{factory}: element not found (keyword {keyword}): "
                            f"is the gst-wsi plugin on GST_PLUGIN_PATH?",
                            factory, prop, text, None)
    if prop not in specs:
        close = difflib.get_close_matches(prop, list(specs), n=3)
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        why = ("it needs a newer gst-wsi" if keyword in _KEYWORDS
               else f"keyword {factory}_PROPERTY sets {factory}'s PROPERTY")
        raise SettingsError(
            f"{factory}: no property '{prop}' in this build{hint}, so keyword "
            f"{keyword}={text} cannot be set ({why})",
            factory, prop, text.strip('"'), None)
    try:
        _check_setting(factory, prop, text.strip('"'))
    except SettingsError as exc:
        raise SettingsError(f"{exc} (keyword {keyword})", exc.element, exc.property,
                            exc.value, exc.allowed) from None


def standard_pipeline(location, *, batch_size=64, patch_size=224, target_mpp=None,
                      patches_per_slide=64, threads=2, pool_size=8,
                      patches_per_visit=4, cycle=True, seed=0, tissue=True,
                      prefetch=256, sink="sink", **settings):
    """The documented gst-wsi training pipeline as a description string.

    Every keyword sets one element property (table `_KEYWORDS`; `keyword_property(k)`
    tells which): slides `cycle seed slide_order rank world_size default_mpp
    tcga thumbnail_size`; tissue `tissue_method saturation_threshold
    value_threshold value_floor hue_min hue_max close_kernel median_kernel
    min_component_area min_hole_area min_tissue_fraction mask_cache_size`;
    sampling `patch_size target_mpp patches_per_slide mode target_mpps
    mpp_weights mpp_min mpp_max mpp_distribution maxavg_lambda min_tissue
    replacement stride level align max_attempts max_patches rank_quota`; pool
    `pool_size patches_per_visit`; reading `threads backend tile_cache_size
    dct_scaling resample_tolerance max_open_slides max_read_failures`;
    batching `batch_size max_batches drop_remainder`.  Any other property is
    reached as ELEMENT_PROPERTY (`patchreader_tile_cache_size=128`).  Lists
    (`target_mpps=[0.25, 0.5]`) become comma-separated strings.

    `tissue`: True (tissuemask with its default method), False (no
    tissuemask) or a method name (`"clam"`, same as `tissue_method`).
    `target_mpp` defaults to 0.5, or 0 when `level` is given.  `target_mpps`
    alone implies `mode="multi-magnification"`, `mpp_min`/`mpp_max`
    `mode="continuous-magnification"`.  `rank`/`world_size` unset:
    wsislidesrc reads RANK/WORLD_SIZE itself.

    Unknown keywords raise `SettingsError` at once.  A property this build's
    element lacks, or a value outside its ParamSpec, raises `SettingsError`
    naming the property, its range and the value: here when GStreamer is
    initialised, else when `BatchStream` parses the string (initialising it
    here would be too early for monitor=True).
    """
    if isinstance(tissue, str):
        settings.setdefault("tissue_method", tissue)
        tissue = True
    if target_mpp is None:
        target_mpp = 0 if settings.get("level") is not None else 0.5
    if "mode" not in settings:
        if "target_mpps" in settings:
            settings["mode"] = "multi-magnification"
        elif "mpp_min" in settings or "mpp_max" in settings:
            settings["mode"] = "continuous-magnification"
    given = dict(cycle=cycle, seed=int(seed), patch_size=patch_size, target_mpp=float(target_mpp),
                 patches_per_slide=patches_per_slide, pool_size=pool_size,
                 patches_per_visit=patches_per_visit, threads=threads,
                 batch_size=batch_size)
    for keyword, value in settings.items():
        if value is None:
            continue                  # None = leave the element's default
        if keyword_property(keyword) is None:
            raise _unknown_keyword(keyword, value)
        given[keyword] = value
    props = {element: [] for element in _STAGES}
    for keyword, value in given.items():
        element, prop = keyword_property(keyword)
        if element == "tissuemask" and not tissue:
            raise SettingsError(f"standard_pipeline: {keyword}={value!r} needs tissuemask, "
                                f"but tissue=False leaves it out", element, prop, value, None)
        props[element].append((keyword, prop, _value_text(value)))
    if Gst.is_initialized():
        for element, items in props.items():
            for keyword, prop, text in items:
                _check_keyword(keyword, element, prop, text)

    def stage(element, first=""):
        words = [element] + ([first] if first else [])
        words += [f"{prop}={text}" for _, prop, text in props[element]]
        return " ".join(words)

    loc = str(location).replace("\\", "\\\\").replace('"', '\\"')
    parts = [stage("wsislidesrc", f'location="{loc}"')]
    if tissue:
        parts.append(stage("tissuemask"))
    parts += ["queue max-size-buffers=4", stage("patchsampler"), stage("patchinterleave"),
              stage("patchreader"),
              f"queue max-size-buffers={int(prefetch)} max-size-bytes=0 max-size-time=0",
              stage("patchbatch"),
              f"appsink name={sink} sync=false max-buffers=2"]
    description = " ! ".join(parts)
    if Gst.is_initialized():
        validate_description(description)
    return description
