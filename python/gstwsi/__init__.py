"""gstwsi: stream whole-slide-image patch batches from GStreamer into Python.

`BatchStream` turns a gst-wsi pipeline description ending in `appsink` into an
iterator of `Batch` objects (uint8 N x H x W x C pixels sharing the buffer's
memory, plus per-patch metadata arrays); `Monitor` turns training steps and the
wsistats tracer into a flat metrics dict.  See docs/python.md; its "Modules"
section says which submodule owns what.
"""
try:
    import gi  # noqa: F401
except ImportError as _exc:
    import sys as _sys
    raise ImportError(
        f"gstwsi needs PyGObject (the 'gi' module), which this interpreter "
        f"({_sys.executable}) cannot import: run it with Debian's /usr/bin/python3 "
        f"(apt install python3-gi python3-gst-1.0 gir1.2-gstreamer-1.0 python3-numpy), "
        f"or make the virtual environment over it with its system packages visible: "
        f"/usr/bin/python3 -m venv --system-site-packages VENV"
        f" (see docs/python.md, 'Environments')") from _exc

from ._utils.buffers import live_mapped_buffers
from ._utils.gst import find_tracer, init, timeline_slice
from .batch import Batch
from .errors import ForkError, PipelineError, SettingsError
from .metadata import PATCH_RECORD, VIEW_RECORD
from .pipeline import is_patch_store, keyword_property, standard_pipeline, store_pipeline
from .settings import validate_description
from .stream import BatchStream, epoch_seed
from .monitor import Monitor

__all__ = ["PATCH_RECORD", "VIEW_RECORD", "Batch", "BatchStream", "ForkError", "PipelineError",
           "SettingsError", "Monitor", "WsiIterableDataset", "epoch_seed", "find_tracer",
           "extract", "init", "is_patch_store", "keyword_property", "live_mapped_buffers", "shard",
           "standard_pipeline", "store_pipeline", "timeline_slice", "validate_description"]


def __getattr__(name):
    # The torch adapter is imported on first use: torch is optional.
    if name in ("WsiIterableDataset", "shard"):
        from . import dataset
        return getattr(dataset, name)
    if name == "extract":             # h5py (and torch with a model) on first use
        from .extraction import extract
        return extract
    raise AttributeError(f"module 'gstwsi' has no attribute {name!r}")
__version__ = "0.1.0"
