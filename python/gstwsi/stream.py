"""`BatchStream`: batches out of a gst-wsi pipeline, and the pipeline's life.

A `BatchStream` parses a pipeline description that ends in an `appsink`
(settings checked first, gstwsi.settings), plays it and yields one `Batch`
per appsink sample: pixels sharing the buffer's memory
(gstwsi._utils.buffers) and the decoded WsiPatchMeta (gstwsi.metadata).  It
owns the pipeline's states (PLAYING on the first batch, NULL at EOS, error,
close or collection), epochs and resume, the bus (errors raised, warnings
collected, stream statistics kept) and the consumer lane of the wsistats
timeline.  One thread iterates a stream.
"""
import math
import numbers
import threading
import time
import warnings
import weakref

from ._utils.buffers import as_tensor, batch_arrays, resolve_torch
from ._utils.cuda import cuda_images, is_cuda_sample, share_torch_context
from ._utils.elements import elements_of, find_appsink
from ._utils.gst import (PULL_LANE, check_fork, find_tracer, init, mark_threads_started,
                         open_streams, timeline_slice)
from .batch import Batch
from .errors import PipelineError
from .metadata import decode_metadata
from .settings import parse_strict
from .streamstats import MESSAGE_NAME as _STATS_MESSAGE, stats_dict as _stats_dict

# The names this module held before gstwsi was split by job (issue 18), kept
# so that `from gstwsi.stream import X` goes on working; their homes are the
# modules named in docs/python.md, "Modules".
from ._utils.buffers import live_mapped_buffers  # noqa: E402,F401
from ._utils.gst import GLib, GObject, Gst  # noqa: E402,F401
from .errors import ForkError, SettingsError  # noqa: E402,F401
from .metadata import PATCH_RECORD, VIEW_RECORD  # noqa: E402,F401
from .pipeline import keyword_property, standard_pipeline  # noqa: E402,F401
from .settings import validate_description  # noqa: E402,F401

__all__ = ["BatchStream", "epoch_seed"]

# How long one appsink pull may block before Python gets control back (to
# look at the bus and to let Ctrl-C through).
_POLL_NS = 100 * Gst.MSECOND


def _whole_number(name, value):
    """`value` as an int >= 0, or TypeError/ValueError naming `name`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a whole number, not "
                        f"{type(value).__name__}: {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, not {value}")
    return int(value)


def _check_timeout(timeout):
    """None (wait for ever) or a finite number of seconds > 0."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
        raise TypeError(f"timeout must be a number of seconds or None, not "
                        f"{type(timeout).__name__}: {timeout!r}")
    if not math.isfinite(timeout) or timeout <= 0:
        raise ValueError(f"timeout must be a finite number of seconds > 0, or None "
                         f"to wait for ever; not {timeout!r}")
    return float(timeout)


def epoch_seed(seed, epoch):
    """wsislidesrc seed of epoch `epoch` of a stream with base seed `seed`:
    (seed + epoch * 0x9E3779B97F4A7C15) mod 2**64 (epoch 0 keeps `seed`)."""
    return (int(seed) + int(epoch) * 0x9E3779B97F4A7C15) % (1 << 64)



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
        if not isinstance(description, str):
            raise TypeError(f"BatchStream takes a pipeline description (str, e.g. from "
                            f"standard_pipeline()), not {type(description).__name__}: "
                            f"{description!r}")
        timeout = _check_timeout(timeout)
        start_batch = _whole_number("start_batch", start_batch)
        start_epoch = _whole_number("start_epoch", start_epoch)
        check_fork()
        init(monitor=monitor)
        self.description = description
        self.copy = copy
        self.timeout = timeout
        self.warnings = []
        self._torch = resolve_torch(torch)
        self._pipeline = parse_strict(description)
        self._sink = find_appsink(self._pipeline, sink)
        self._bus = self._pipeline.get_bus()
        self.batch_size = self._batch_size()
        self.start_batch = int(start_batch)
        if self.start_batch:
            self._apply_resume(self.start_batch)
        sources = elements_of(self._pipeline, "wsislidesrc")
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
        batchers = elements_of(self._pipeline, "patchbatch")
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
        batchers = elements_of(self._pipeline, "patchbatch")
        return batchers[0].get_property("batch-size") if batchers else None

    def _apply_resume(self, k):
        interleavers = elements_of(self._pipeline, "patchinterleave")
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
            open_streams.discard(self)
            self._pipeline.set_state(Gst.State.NULL)
            self._pipeline.get_state(Gst.CLOCK_TIME_NONE)
        if self._state != "closed":
            self._state = "ended" if self._state == "playing" else self._state

    # -- life --

    def start(self):
        if self._state == "closed":
            raise RuntimeError("the stream is closed")
        if self._state == "playing":
            return
        if self._state == "ended":
            raise RuntimeError("this epoch has ended: iterate the stream again "
                               "or call set_epoch() for the next one")
        check_fork()
        self._state = "playing"
        self._resume_pending = False
        if elements_of(self._pipeline, "wsicudaupload"):
            try:
                share_torch_context(self._pipeline)     # before leaving NULL
            except PipelineError:
                self.close()
                raise
        open_streams.add(self)
        mark_threads_started()
        if self._set_playing() == Gst.StateChangeReturn.FAILURE:
            error = self._pop_error()
            self.close()
            raise error or PipelineError("the pipeline refused to start")

    def _set_playing(self):
        """set_state(PLAYING) within `timeout`: a source's start() runs inside
        it (a folder walk, the first slide's open, a remote request), so it
        runs on a helper thread and the timeout fires even while it blocks.
        On a timeout the stream is closed: the pipeline goes to NULL on that
        thread once the state change returns."""
        if self.timeout is None:
            return self._pipeline.set_state(Gst.State.PLAYING)
        result, abandoned = [], []
        lock = threading.Lock()
        pipeline = self._pipeline

        def run():
            ret = pipeline.set_state(Gst.State.PLAYING)
            with lock:
                result.append(ret)
                stop = bool(abandoned)
            if stop:
                pipeline.set_state(Gst.State.NULL)

        thread = threading.Thread(target=run, name="gstwsi-start", daemon=True)
        thread.start()
        thread.join(self.timeout)
        with lock:
            if result:
                return result[0]
            abandoned.append(True)
        self._state = "closed"
        open_streams.discard(self)
        raise TimeoutError(f"the pipeline did not start within {self.timeout:g} s "
                           f"(a source still opening its input?): {self.description}")

    def close(self):
        """Stops the pipeline (NULL) and waits for it; safe to call twice."""
        if self._state == "closed":
            return
        self._state = "closed"
        open_streams.discard(self)
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
        meta = decode_metadata(buffer)
        on_gpu = is_cuda_sample(sample)
        if on_gpu:
            # wsicudaupload's batches: a torch CUDA tensor over the buffer
            # whatever `torch` says (numpy cannot hold device memory)
            images, views = cuda_images(sample, self.copy), None
        else:
            images, views = batch_arrays(sample, meta, self._must_copy(), self._held)
        if self._torch is not None and not on_gpu:
            images = as_tensor(self._torch, images)
            if views is not None:
                views = {name: as_tensor(self._torch, a) for name, a in views.items()}
                images = views[meta["view_names"][0]]
        batch = Batch(images, meta["records"], meta["paths"], meta["labels"],
                      self._epoch_skip + self.epoch_batches, buffer.offset, self.epoch,
                      views=views, view_records=meta["view_records"],
                      columns=meta["columns"], uris=meta["uris"],
                      slide_mpp=meta["mpps"])
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

