"""GStreamer for gstwsi: the one import of Gst, start-up, the fork guard and
the wsistats tracer.

Every gstwsi module takes `Gst`, `GObject` and `GLib` from here, so the
`gi.require_version` calls run once, before any of them.  `init()` starts
GStreamer once per process (under a lock; cheap after the first call).

Fork safety: GStreamer's streaming and pool threads do not survive fork().
The PID in which a pipeline first went to PLAYING is remembered
(`mark_threads_started`); a fork()ed child of that process gets `ForkError`
from `check_fork()` instead of a pipeline that would hang on locks its
parent's threads held.  The registry of open streams lives here too: a
child marks the streams it inherited as forked (never stopped or freed
there), and at interpreter exit the open ones are closed while GStreamer
is still usable.
"""
import atexit
import os
import threading
import warnings
import weakref

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
from gi.repository import GLib, GObject, Gst, GstApp  # noqa: E402,F401  (GstApp: try_pull_sample)

from ..errors import ForkError  # noqa: E402

__all__ = ["GLib", "GObject", "Gst", "PULL_LANE", "check_fork", "find_tracer", "init",
           "mark_threads_started", "open_streams", "timeline_slice"]

_init_lock = threading.Lock()

# The PID that initialised GStreamer, and the PID in which a pipeline went
# to PLAYING (so GStreamer's streaming and pool threads ran).
_init_pid = None
_threads_pid = None

# Streams now playing (BatchStream adds itself in start(), removes itself
# when it stops).
open_streams = weakref.WeakSet()

# Streams inherited by a fork()ed child: never touched (stopping or freeing
# them there could hang on the parent's locks), never freed.
_forked_streams = []


def check_fork():
    """Raises ForkError in a child fork()ed after a pipeline ran in its parent."""
    if _threads_pid is not None and _threads_pid != os.getpid():
        raise ForkError(
            f"this process ({os.getpid()}) was fork()ed from process {_threads_pid}, in "
            f"which a GStreamer pipeline already ran: GStreamer's threads do not survive "
            f"fork() and a pipeline started here would hang.  Start DataLoader workers "
            f"with spawn or forkserver instead: torch.utils.data.DataLoader(..., "
            f"multiprocessing_context=\"spawn\") (or \"forkserver\"), or "
            f"multiprocessing.set_start_method(\"spawn\"); see docs/python.md")


def mark_threads_started():
    """Called as a pipeline goes to PLAYING: from now on a fork()ed child
    of this process must not use GStreamer."""
    global _threads_pid
    _threads_pid = os.getpid()


def _after_fork_in_child():
    for stream in list(open_streams):
        stream._forked = True
        _forked_streams.append(stream)
    open_streams.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


@atexit.register
def _close_open_streams():
    # Streams still playing at exit (never closed, never collected) are
    # stopped while GStreamer and gi are still importable; __del__ during
    # interpreter teardown could not.
    for stream in list(open_streams):
        if not getattr(stream, "_forked", False):
            stream.close()


def init(monitor=False, tracer_params="interval=1000,summary=false"):
    """Initialises GStreamer once per process.

    With `monitor=True` and no `GST_TRACERS` in the environment, enables the
    `wsistats` tracer: before `Gst.init` through `GST_TRACERS` (as
    GStreamer reads tracers), or, when GStreamer is already initialised
    (`standard_pipeline` initialises it to check its keywords), by making
    the tracer now, which is safe while no pipeline plays.  Either way
    `GST_TRACERS` is set, so processes started from this one (spawned
    DataLoader workers) trace too.  Returns True when the wsistats tracer
    is active.
    """
    global _init_pid
    check_fork()
    with _init_lock:
        wanted = monitor and "GST_TRACERS" not in os.environ
        if wanted:
            os.environ["GST_TRACERS"] = f"wsistats({tracer_params})"
        if not Gst.is_initialized():
            Gst.init(None)
            _init_pid = os.getpid()
        elif wanted and find_tracer() is None:
            _attach_tracer(tracer_params)
    return find_tracer() is not None


# Tracers made after Gst.init: GStreamer's hooks reference them, this keeps
# them for the life of the process as GST_TRACERS' tracers are.
_late_tracers = []


def _attach_tracer(params):
    """Makes the wsistats tracer in an initialised GStreamer.  Its hooks are
    registered as it is made; a pipeline that is running meanwhile could
    call a hook half-registered, so this is refused while a stream plays."""
    if len(open_streams):
        del os.environ["GST_TRACERS"]
        warnings.warn("init(monitor=True): a stream is playing, so the wsistats tracer "
                      "cannot be added now; call gstwsi.init(monitor=True) before the "
                      "first stream starts", RuntimeWarning, stacklevel=3)
        return
    feature = Gst.Registry.get().lookup_feature("wsistats")
    factory = feature.load() if feature is not None else None
    if factory is None:
        return              # plugin not installed: find_tracer() says None
    _late_tracers.append(GObject.new(factory.get_tracer_type(), params=params))


def find_tracer():
    """The process' wsistats tracer, or None when it is not active."""
    for tracer in Gst.tracing_get_active_tracers():
        if tracer.__gtype__.name == "GstWsiStats":
            return tracer
    return None


# The wsistats timeline lane of BatchStream's appsink pulls.
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
