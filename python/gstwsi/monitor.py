"""Per-step data-loading metrics for a training loop.

```python
monitor = Monitor(stream, log_every=50)
for batch in stream:
    loss = step(batch)
    logs = monitor.mark_step(extra={"loss": loss.item()})
    if logs:
        wandb.log(logs)          # or: for k, v in logs.items(): writer.add_scalar(k, v, step)
```

Python measures what only the training loop sees (how long each step waited
for its batch, the step time); the `wsistats` tracer, asked in-process with
its `get-stats` action signal, adds what only the pipeline sees (queue fill,
patch rate at the sink, loader/trainer verdict, process RSS and CPU), for the
elements of this stream's pipeline only (the tracer also remembers pipelines
that ran before in the process); the elements' read-only counters and
patchbatch's `wsi-stream-stats` message give the `pipeline/...` keys.
"""
import os
import re
import time

import numpy as np

from ._utils.gst import GObject, Gst, find_tracer, init, timeline_slice
from .streamstats import flat_keys

# Element read-only counters -> pipeline/ keys (summed when two elements, or
# two properties, feed one key): the same table as patchbatch's
# wsi-stream-stats message (gst/wsipatch/wsistreamstats.c).
_COUNTERS = (("slides-opened", "slides_opened"), ("slides-failed", "slides_failed"),
             ("slides-damaged", "slides_damaged"),
             ("slides-rejected", "slides_rejected"), ("slides-blank", "slides_blank"),
             ("patches-planned", "patches_planned"), ("patches-read", "patches_read"),
             ("patches-failed", "patches_dropped"), ("patches-skipped", "patches_dropped"),
             ("patches-rejected", "patches_rejected"))

__all__ = ["Monitor"]

STEP_LANE = "consumer: training steps"

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _rss_mb():
    """Current resident set size of this process in MiB (Linux)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * _PAGE / 2**20
    except OSError:
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _elements(pipeline):
    """Every element inside `pipeline`, bins' children included."""
    found = []
    it = pipeline.iterate_recurse()
    while True:
        res, elem = it.next()
        if res != Gst.IteratorResult.OK:
            return found
        found.append(elem)


def pipeline_counters(pipeline):
    """{"slides_opened": n, ...}: the read-only counters of the pipeline's
    elements (keys absent when no element counts them)."""
    out = {}
    for element in _elements(pipeline):
        for prop, key in _COUNTERS:
            spec = element.find_property(prop)
            if spec is None or spec.flags & GObject.ParamFlags.WRITABLE:
                continue         # a setting of that name, not a counter
            out[key] = out.get(key, 0) + int(element.get_property(prop))
    return out


def damaged_slides(pipeline):
    """The slides the pipeline's wsislidesrc found damaged (opened, but a
    file lacks frames it declares), named as in their warnings, in the order
    found; counted in `pipeline/slides_damaged`."""
    names = []
    for element in _elements(pipeline):
        if element.find_property("damaged-slides") is not None:
            names.extend(element.get_property("damaged-slides") or [])
    return names


# The warnings wsislidesrc and tissuemask post once per slide that gives no
# patch (or gives them with tiles missing): (kind, pattern of the message).
_SKIP_WARNINGS = (
    ("failed", re.compile(r"^Skipping slide (?P<slide>.+?): (?P<why>.+)$", re.S)),
    ("rejected", re.compile(r'^Slide "(?P<slide>.+?)" is rejected: (?P<why>.+?)\.?$', re.S)),
    ("damaged", re.compile(r"^Slide (?P<slide>.+?) is damaged: (?P<why>.+?)\.?$", re.S)),
)


def skipped_slides(warnings):
    """[(slide, kind, why)] from a stream's bus warnings ("source: message"
    strings, `BatchStream.warnings`), once per slide, in the order warned:
    kind "failed" (unreadable, skipped), "rejected" (too little tissue),
    "blank" (none at all) or "damaged" (read, but tiles missing)."""
    found, seen = [], set()
    for warning in warnings:
        message = warning.split(": ", 1)[1] if ": " in warning else warning
        for kind, pattern in _SKIP_WARNINGS:
            match = pattern.match(message)
            if match and match["slide"] not in seen:
                seen.add(match["slide"])
                why = match["why"].strip()
                if kind == "rejected" and why.startswith("only 0.0000 "):
                    kind = "blank"             # pipeline/slides_blank: no tissue at all
                found.append((match["slide"], kind, why))
                break
    return found


def _hist(stats, name):
    """A wsistats histogram sub-structure as a dict, or None."""
    h = stats.get_value(name) if stats.has_field(name) else None
    if h is None:
        return None
    return {k: h.get_value(k) for k in ("count", "p50", "p95", "max", "mean")
            if h.has_field(k)}


class Monitor:
    """Collects step timings and returns a flat dict every `log_every` steps.

    `stream`: the `BatchStream` the loop consumes (its wait time and patch
    count are read at every step).  `prefix` is put in front of every key.
    The tracer part needs the wsistats tracer active (`gstwsi.init(monitor=
    True)` or `BatchStream(..., monitor=True)` before the first stream
    plays); without it the dict has the Python-side keys only.
    """

    def __init__(self, stream, log_every=100, prefix="data/"):
        if log_every < 1:
            raise ValueError("log_every must be >= 1")
        init(monitor=True)
        self.stream = stream
        self.log_every = int(log_every)
        self.prefix = prefix
        self.tracer = find_tracer()
        # Fixed-size rings: mark_step allocates nothing per step.
        self._wait_s = np.zeros(self.log_every)
        self._step_s = np.zeros(self.log_every)
        self._n = 0
        self.steps = 0
        self._last_mark = None
        self._last_mark_ns = None
        self._last_wait_ns = stream.wait_ns
        self._window_start = None
        self._window_patches = stream.patches
        self._window_batches = stream.batches
        self._last_sink_times = (0.0, 0.0)     # sink busy-s, wait-s at the last log
        self._skipped_told = 0                 # skipped slides new_skipped_slides returned

    def mark_step(self, extra=None):
        """Call once per training step, after the step's work.

        Returns None, or every `log_every` steps the metrics of the steps
        since the last log (plus `extra`, prefixed only if not already).
        With the tracer's `timeline=` on, the step is drawn on the timeline's
        "consumer: training steps" lane: "data wait" then "compute".
        """
        now_ns = time.monotonic_ns()
        now = now_ns / 1e9
        wait_ns = self.stream.wait_ns
        if self._last_mark is None:
            # First call: the step began when its batch was asked for; we
            # only know the wait, so the step time starts there.
            self._window_start = now - (wait_ns - self._last_wait_ns) / 1e9
            self._last_mark = self._window_start
        self._wait_s[self._n] = (wait_ns - self._last_wait_ns) / 1e9
        self._step_s[self._n] = now - self._last_mark
        self._draw_step(self._last_mark_ns, wait_ns - self._last_wait_ns, now_ns)
        self._last_mark_ns = now_ns
        self._last_wait_ns = wait_ns
        self._last_mark = now
        self._n += 1
        self.steps += 1
        if self._n < self.log_every:
            return None
        logs = self._collect(now)
        if extra:
            logs.update(extra)
        self._n = 0
        self._window_start = now
        self._window_patches = self.stream.patches
        self._window_batches = self.stream.batches
        return logs

    def skipped_slides(self):
        """Every slide so far that gave no patch or lost tiles, once each:
        [(slide, kind, why)] with kind "failed", "rejected", "blank" or "damaged"
        and the reason its warning gave (the `pipeline/slides_*` keys count
        them; this names them)."""
        return skipped_slides(self.stream.warnings)

    def new_skipped_slides(self):
        """The `skipped_slides()` not returned by an earlier call of this
        method: call it at each log to print each slide once."""
        found = self.skipped_slides()
        new, self._skipped_told = found[self._skipped_told:], len(found)
        return new

    def damaged_slides(self):
        """Names of the damaged slides counted in `pipeline/slides_damaged`
        (the dict holds numbers only): log them once, e.g. as text."""
        return damaged_slides(self.stream.pipeline)

    def _draw_step(self, last_mark_ns, wait_ns, end_ns):
        # A step: from the last mark to the batch in hand (the end of the
        # stream's latest pull) the loop waited for data, then it computed.
        # Before the first mark only the pull's own wait is known.
        if self.tracer is None:
            return
        got = getattr(self.stream, "_last_pull_end", None) or end_ns
        got = min(got, end_ns)
        start = last_mark_ns if last_mark_ns is not None else got - wait_ns
        timeline_slice(self.tracer, STEP_LANE, "data wait", "consumer-wait",
                       min(start, got), got)
        timeline_slice(self.tracer, STEP_LANE, "compute", "consumer-compute",
                       got, end_ns)

    # -- the dict --

    def _collect(self, now):
        p = self.prefix
        span = max(now - self._window_start, 1e-9)
        wait, step = self._wait_s[:self._n], self._step_s[:self._n]
        logs = {
            f"{p}step": self.steps,
            f"{p}patches_per_s": (self.stream.patches - self._window_patches) / span,
            f"{p}batches_per_s": (self.stream.batches - self._window_batches) / span,
            f"{p}wait_ms_p50": float(np.percentile(wait, 50)) * 1e3,
            f"{p}wait_ms_p95": float(np.percentile(wait, 95)) * 1e3,
            f"{p}step_ms_p50": float(np.percentile(step, 50)) * 1e3,
            f"{p}step_ms_p95": float(np.percentile(step, 95)) * 1e3,
            f"{p}wait_share": float(wait.sum() / max(step.sum(), 1e-9)),
            f"{p}rss_mb": _rss_mb(),
        }
        logs.update(self._pipeline_metrics())
        if self.tracer is not None:
            logs.update(self._tracer_metrics())
        return logs

    def _pipeline_metrics(self):
        """pipeline/ keys: patchbatch's latest wsi-stream-stats message
        (stats-interval > 0), then the elements' counters read now."""
        key = f"{self.prefix}pipeline/"
        out = {}
        stats = self.stream.read_stream_stats()
        if stats is not None:
            out.update(flat_keys(stats, key))
        for name, value in pipeline_counters(self.stream.pipeline).items():
            out[key + name] = value
        return out

    def _tracer_metrics(self):
        p = self.prefix
        stats = self.tracer.emit("get-stats")
        if stats is None:
            return {}
        out = {}
        ok, rss = stats.get_uint64("peak-rss-kb")
        if ok:
            out[f"{p}peak_rss_mb"] = rss / 1024
        ok, cpu = stats.get_double("window-cpu-percent")
        if ok:
            out[f"{p}cpu_percent"] = cpu
        # Only this stream's elements: the tracer also reports elements of
        # pipelines that ran before in the process (until it is reset).
        mine = {e.get_name() for e in _elements(self.stream.pipeline)}
        sink_name = self.stream._sink.get_name()
        for element in stats.get_value("elements") or []:
            name = element.get_string("name")
            if name not in mine:
                continue
            if element.get_string("shape") == "queue":
                self._queue_metrics(out, name, element)
            elif name == sink_name:
                self._sink_metrics(out, element)
        return out

    def _sink_metrics(self, out, element):
        p = self.prefix
        ok, rate = element.get_double("patches-per-s")
        if ok:
            out[f"{p}sink_patches_per_s"] = rate
        # loader_bound over the same window as wait_share: the sink's busy
        # and wait times since the last log (docs/python.md).
        ok_busy, busy = element.get_double("busy-s")
        ok_wait, wait = element.get_double("wait-s")
        if not (ok_busy and ok_wait):
            return
        last_busy, last_wait = self._last_sink_times
        if busy < last_busy or wait < last_wait:
            last_busy = last_wait = 0.0         # the tracer was reset
        self._last_sink_times = (busy, wait)
        total = (busy - last_busy) + (wait - last_wait)
        if total > 0:
            out[f"{p}loader_bound"] = (wait - last_wait) / total

    def _queue_metrics(self, out, name, element):
        key = f"{self.prefix}queue/{name}/"
        fill = _recent(element, "fill")
        if fill:
            out[key + "fill_pct_p50"] = float(fill["p50"])
            out[key + "fill_pct_mean"] = float(fill["mean"])
        level = _recent(element, "level")
        if level:
            out[key + "level_p50"] = float(level["p50"])
        ok, empty = element.get_double("empty-share-window")
        if not ok or not (_recent(element, "fill", window_only=True)):
            ok, empty = element.get_double("empty-share")
        if ok:
            out[key + "empty_share"] = empty


def _recent(element, name, window_only=False):
    """The tracer's last-interval histogram, or the cumulative one when the
    interval has just begun and holds no sample yet; None if both are empty."""
    for field in (f"{name}-window",) + (() if window_only else (name,)):
        h = _hist(element, field)
        if h and h.get("count"):
            return h
    return None
