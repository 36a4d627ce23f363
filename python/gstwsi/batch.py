"""`Batch`: one batch's pixels and per-patch metadata, as handed out by
`BatchStream`.  A plain container; the pixels' lifetime is that of the
arrays (gstwsi._utils.buffers), the metadata arrays are copies.
"""
import numpy as np

from .metadata import PATCH_RECORD

__all__ = ["Batch"]


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
    str); `uris` (list of str: each patch's slide as the read layer opened
    it, a file:// URI or the URL as shown; "" when unknown) and `slide_mpp`
    (float64 array: the slide's level-0 um/px, default-mpp included, 0 when
    unknown; `mpp` is the patch's own output um/px); `index` (batch number in the stream, counting resumed batches) and
    `offset` (the buffer's GST_BUFFER_OFFSET); `epoch` (the stream's epoch).
    """

    __slots__ = ("images", "records", "paths", "labels", "index", "offset", "epoch",
                 "views", "view_records", "columns", "uris", "slide_mpp")

    def __init__(self, images, records, paths, labels, index, offset, epoch=0,
                 views=None, view_records=None, columns=None, uris=None, slide_mpp=None):
        self.uris = uris if uris is not None else [""] * len(records)
        self.slide_mpp = (slide_mpp if slide_mpp is not None
                          else np.zeros(len(records), np.float64))
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
        out["uri"] = self.uris
        out["slide_mpp"] = self.slide_mpp
        for name, values in self.columns.items():
            out[name if name not in out else f"column_{name}"] = values
        return out
