"""gstwsi: stream whole-slide-image patch batches from GStreamer into Python.

`BatchStream` turns a gst-wsi pipeline description ending in `appsink` into an
iterator of `Batch` objects (uint8 N x H x W x C pixels sharing the buffer's
memory, plus per-patch metadata arrays); `Monitor` turns training steps and the
wsistats tracer into a flat metrics dict.  See docs/python.md.
"""
from .stream import (PATCH_RECORD, Batch, BatchStream, PipelineError, find_tracer,
                     init, live_mapped_buffers, standard_pipeline)
from .monitor import Monitor

__all__ = ["PATCH_RECORD", "Batch", "BatchStream", "PipelineError", "Monitor",
           "find_tracer", "init", "live_mapped_buffers", "standard_pipeline"]
__version__ = "0.1.0"
