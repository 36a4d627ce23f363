"""Metadata decoding: the WsiPatchMeta of a batch buffer as numpy arrays.

`PATCH_RECORD` and `VIEW_RECORD` mirror the C records of
gst-libs/gst/wsi/wsirecord.h (docs/data-formats.md); `decode_metadata`
copies a batch's record block (small: 64 bytes a patch) out of the meta so
the metadata outlives the buffer, and reads the paths, labels, slide uris
and level-0 mpps, view records and slide-list columns that patchbatch
attaches.  Pure functions, no state.
"""
import re

import numpy as np

from .errors import PipelineError

__all__ = ["PATCH_RECORD", "VIEW_RECORD", "decode_metadata"]

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


def _slides(s, count):
    """(uris, level-0 mpps) of every location: the meta's `uris` (GStrv) and
    `mpps` (GstValueArray of double), as patchreader took them from the slide
    meta; "" and 0.0 (unknown) when the meta has none (a buffer not made by
    patchreader)."""
    if not s.has_field("uris"):
        return [""] * count, np.zeros(count, np.float64)
    uris = list(s.get_value("uris") or [])
    mpps = np.array(list(s.get_value("mpps") or []) if s.has_field("mpps") else [],
                     np.float64)
    if len(uris) != count or len(mpps) != count:
        raise PipelineError(f"batch meta has {len(uris)} uris and {len(mpps)} mpps "
                            f"for {count} locations")
    return uris, mpps


def decode_metadata(buffer):
    """{records, paths, labels, uris, mpps, view_names, view_records, columns}
    of a batch buffer (PipelineError when it has no WsiPatchMeta or the parts
    disagree).  `uris`: each location's slide as the read layer opened it;
    `mpps`: its level-0 um/px (float64, 0 = unknown)."""
    meta = buffer.get_custom_meta("WsiPatchMeta")
    if meta is None:
        raise PipelineError("batch buffer has no WsiPatchMeta: the pipeline "
                            "must end in patchbatch ! appsink")
    s = meta.get_structure()
    # One copy of the (small) record block per batch: it outlives the buffer.
    records = np.frombuffer(s.get_value("records").get_data(), PATCH_RECORD).copy()
    paths = list(s.get_value("paths") or [])
    labels = list(s.get_value("labels") or [])
    uris, mpps = _slides(s, len(records))
    view_names, view_records = _view_meta(s, len(records))
    return dict(records=records, paths=paths, labels=labels, uris=uris, mpps=mpps,
                view_names=view_names, view_records=view_records,
                columns=_columns(s, len(records)))

