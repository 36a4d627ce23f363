"""`extract`: every tissue patch of every slide through a frozen model, one
H5 file per slide in TRIDENT's job layout (what TRIDENT's readers and MIL
code load; CLAM reads the same datasets), resumable and split over any number of jobs.

    OUT/<mag>x_<patch>px_<overlap>px_overlap/
        patches/<name>_patches.h5         coords (int64 N x 2, level-0 top-left)
        features_<encoder>/<name>.h5      features (N x D) + coords
        contours_geojson/<name>.geojson   tissue regions (QuPath opens them)
        visualization/<name>.jpg          overview with the patch grid
        claims/<name>.claim               while a job works on the slide

Each slide runs the standard pipeline in grid mode over all its tissue
positions (wsislidesrc ! tissuemask ! patchsampler mode=grid
patches-per-slide=-1 ! patchinterleave ! patchreader grid-order=true !
patchbatch ! appsink), so pixels are decoded by the C read path, each tile
of the grid once; without a model the pipeline ends at patchsampler (no
patch pixel is decoded); the next slide's
pipeline opens, masks and reads ahead while the current one is read and the
model runs on it.  Magnification: the slide's objective power where the format records
it, else 10 / mpp; the grid is planned at the target resolution `mpp` (or
10 / `magnification`).  A model without a transform receives float32 NCHW
batches scaled to 0..1.  `wsi-extract` (tools/) is the command line;
docs/recipes/features.md the walk-through.
"""
import importlib
import os
import sys
import tempfile
import time
import warnings

import numpy as np

from ._utils.buffers import as_tensor
from ._utils.claims import drop_claim, rank_and_world, try_claim
from ._utils.elements import elements_of
from ._utils.gst import Gst
from ._utils.slidelist import resolve_slides
from ._utils import trident_h5
from .errors import PipelineError, SettingsError
from .metadata import PATCH_RECORD
from .pipeline import standard_pipeline
from .stream import BatchStream

__all__ = ["extract", "job_folder", "load_model", "main"]

_PRECISIONS = ("fp32", "fp16", "bf16")


def _number_text(value):
    """20.0 -> "20", 13.333 -> "13.33": magnifications in names and attrs."""
    value = round(float(value), 2)
    return str(int(value)) if value == int(value) else format(value, "g")


def _attr_number(value):
    value = round(float(value), 4)
    return int(value) if value == int(value) else value


def job_folder(out_dir, mpp=0.5, patch_size=256, overlap=0, magnification=None):
    """OUT/<mag>x_<patch>px_<overlap>px_overlap: TRIDENT's folder of a job."""
    mag = magnification if magnification else 10.0 / mpp
    return os.path.join(os.fspath(out_dir),
                        f"{_number_text(mag)}x_{int(patch_size)}px_{int(overlap)}px_overlap")


def load_model(spec):
    """(model, transform, feature dim or None, encoder name) from
    "module:callable" (module imported the normal way, PYTHONPATH) or a
    callable.  The callable returns an nn.Module, or (module, transform),
    or (module, transform, dim); a Module or a plain function given
    directly is the model itself."""
    name = None
    if isinstance(spec, str):
        if ":" not in spec:
            raise SettingsError(f"--model {spec!r}: expected module:callable "
                                f"(e.g. mymodels:tiny_cnn)", None, "model", spec, None)
        mod_name, attr = spec.split(":", 1)
        try:
            module = importlib.import_module(mod_name)
        except ImportError as exc:
            raise SettingsError(f"--model {spec!r}: cannot import module {mod_name!r} ({exc}); "
                                f"is its folder on PYTHONPATH?", None, "model", spec, None) from exc
        factory = module
        for part in attr.split("."):
            if not hasattr(factory, part):
                raise SettingsError(f"--model {spec!r}: module {mod_name!r} has no {attr!r}",
                                    None, "model", spec, None)
            factory = getattr(factory, part)
        name = attr.split(".")[-1]
        made = factory()
    else:
        made = spec
    transform, dim = None, None
    if isinstance(made, tuple):
        if not 1 <= len(made) <= 3:
            raise SettingsError(f"model factory returned {len(made)} values; expected model, "
                                f"(model, transform) or (model, transform, dim)",
                                None, "model", str(spec), None)
        model = made[0]
        transform = made[1] if len(made) > 1 else None
        dim = int(made[2]) if len(made) > 2 and made[2] is not None else None
    else:
        model = made
    if not callable(model):
        raise SettingsError(f"model {spec!r} is not callable", None, "model", str(spec), None)
    enc = getattr(model, "enc_name", None) or name or getattr(model, "__name__", None) \
        or type(model).__name__
    return model, transform, dim, str(enc)


# ---- one slide --------------------------------------------------------------

def _slide_meta(buffer, overview=True, mask=True):
    """The slide's size, mpp and objective power from its WsiSlideMeta, and
    (read-only copies, only when asked: the side outputs need them) its
    overview and tissue mask from the buffer's bytes."""
    meta = buffer.get_custom_meta("WsiSlideMeta")
    if meta is None:
        return None
    s = meta.get_structure()

    def get(field, default=None):
        return s.get_value(field) if s.has_field(field) else default

    ow, oh = int(get("overview-width", 0)), int(get("overview-height", 0))
    slide = {"width": int(get("width", 0)), "height": int(get("height", 0)),
             "mpp": float(get("mpp-x", 0.0)), "objective": float(get("objective-power", 0.0)),
             "rejected": bool(get("tissue-rejected", False)), "overview": None, "mask": None}
    # Each part copied out alone: mapping the whole buffer would first merge
    # its memories (overview and mask, ~12 MB for a 32000 px slide) into a
    # fresh block, on the streaming thread.
    size, at = buffer.get_size(), 0
    if get("has-overview", False) and size >= ow * oh * 3:
        if overview:
            slide["overview"] = np.frombuffer(buffer.extract_dup(0, ow * oh * 3),
                                              np.uint8).reshape(oh, ow, 3)
        at = ow * oh * 3
    if mask and get("has-mask", False) and size >= at + ow * oh:
        slide["mask"] = np.frombuffer(buffer.extract_dup(at, ow * oh), np.uint8).reshape(oh, ow)
    return slide


def _given_records(given, first, slide):
    """PATCH_RECORDs for the coordinates of a coords file, as patchsampler
    would write them (slide index, cycle and time from its first record)."""
    coords = given["coords"]
    rec = np.zeros(len(coords), PATCH_RECORD)
    rec["x"], rec["y"] = coords[:, 0], coords[:, 1]
    rec["footprint"], rec["out_size"] = given["footprint"], given["out_size"]
    mpp = slide["mpp"] if slide else 0.0
    rec["out_mpp"] = given["footprint"] * mpp / given["out_size"] if mpp > 0 else 0.0
    rec["tissue_fraction"] = 1.0
    rec["level"] = 0xFFFFFFFF                    # WSI_LEVEL_UNSET: patchreader picks
    if len(first):
        for field in ("slide_index", "cycle", "created_ns"):
            rec[field] = first[field][0]
    return rec


def _description(location, opts, given=None):
    """The grid pipeline of `location` (a slide, or a list of slides read
    one after the other) as standard_pipeline writes it."""
    settings = dict(opts["settings"])
    # Grids are read in raster order: a tile shared by neighbouring
    # patches is decoded once and kept until the next row has used it
    # (two rows of tiles: ~12 MB for a 24000 px slide read at 1/2, ~100 MB
    # for a 100000 px slide read at full size).
    settings.setdefault("patchreader_grid_order", True)
    settings.setdefault("tile_cache_size", 128)
    if opts["mask_cache_dir"]:
        settings["mask_cache_dir"] = opts["mask_cache_dir"]
    patch_size, target_mpp = opts["patch_size"], opts["mpp"]
    if given is not None:
        # Every position of the file, not a grid: plan the whole slide
        # (no mask) and swap the planned records for the file's.
        patch_size = given["out_size"]
        settings.update(tissue=False, min_tissue=0.0)
        # DCT-scaled reads move a patch onto the scaled grid (up to a
        # few level-0 pixels); the file's positions are kept exactly.
        settings.setdefault("dct_scaling", False)
        target_mpp = 0.0
    return standard_pipeline(
        location, batch_size=opts["batch_size"], patch_size=patch_size,
        target_mpp=target_mpp, patches_per_slide=-1, mode="grid", cycle=False,
        threads=opts["threads"], pool_size=1, patches_per_visit=64, seed=0, rank=0,
        world_size=1, cuda_upload=opts["cuda_upload"],
        **dict(dict(min_tissue=opts["min_tissue"], tissue=opts["tissue"],
                    prefetch=opts["prefetch"]), **settings))


class _SlideRun:
    """One slide's pipeline, started ahead of use; its slide meta is caught
    on the way into patchsampler (where the grid stride for an overlap is
    set from the slide's mpp)."""

    def __init__(self, location, name, claim, opts):
        self.location, self.name, self.claim = location, name, claim
        self.slide = None
        self.error = None
        self.next_run, self.asked_next = None, False
        self.started = time.monotonic()
        given = opts["given_coords"](name) if opts["given_coords"] else None
        self.given = given
        patch_size, overlap, target_mpp = opts["patch_size"], opts["overlap"], opts["mpp"]
        desc = _description(location, opts, given)
        if given is not None:
            patch_size, target_mpp = given["out_size"], 0.0
        # Coordinates only: the pipeline ends at patchsampler (overview, mask
        # and grid); no patchreader, so no patch pixel is decoded.
        self.coords_only = opts["coords_only"] and given is None
        if self.coords_only:
            head, cut, _ = desc.partition(" ! patchinterleave ")
            if not cut:
                raise PipelineError(f"no patchinterleave in {desc!r}")
            desc = head + " ! appsink name=sink sync=false max-buffers=4"
        self.stream = BatchStream(desc, torch=False, timeout=opts["timeout"])
        sampler = elements_of(self.stream.pipeline, "patchsampler")[0]
        self.sampler = sampler
        readers = elements_of(self.stream.pipeline, "patchreader")
        self.reader = readers[0] if readers else None
        # The grid as planned (level-0 top-left, footprint) is what the H5
        # coords hold, with or without a model: reading may move a patch by
        # less than one output pixel onto the DCT-scaled grid, which the
        # coordinates-only mode cannot know, so both modes write the plan.
        self.planned = []

        def on_slide(pad, info):
            buffer = info.get_buffer()
            slide = _slide_meta(buffer, *opts["side_parts"]) if buffer is not None else None
            if slide is not None and self.slide is None:
                self.slide = slide
                if overlap and slide["mpp"] > 0 and given is None:
                    side = max(1, round(patch_size * target_mpp / slide["mpp"]))
                    sampler.set_property("stride", max(1, round(
                        (patch_size - overlap) * side / patch_size)))
            return Gst.PadProbeReturn.OK

        sampler.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, on_slide)
        if given is None:
            def keep_plan(pad, info):
                buffer = info.get_buffer()
                ok, mapped = buffer.map(Gst.MapFlags.READ)
                if ok:
                    rec = np.frombuffer(mapped.data, PATCH_RECORD)
                    self.planned.append(np.stack([rec["x"], rec["y"], rec["footprint"]],
                                                 axis=1).astype(np.int64))
                    buffer.unmap(mapped)
                return Gst.PadProbeReturn.OK

            sampler.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, keep_plan)
        if given is not None:
            pushing = []

            def swap_records(pad, info):
                if pushing:                     # ours, on its way
                    return Gst.PadProbeReturn.OK
                planned = info.get_buffer()
                ok, mapped = planned.map(Gst.MapFlags.READ)
                first = np.frombuffer(mapped.data, PATCH_RECORD)[:1].copy()
                planned.unmap(mapped)
                records = _given_records(given, first, self.slide)
                ours = Gst.Buffer.new_wrapped(records.tobytes())
                Gst.Buffer.copy_into(ours, planned, Gst.BufferCopyFlags.FLAGS
                                     | Gst.BufferCopyFlags.TIMESTAMPS
                                     | Gst.BufferCopyFlags.META, 0, planned.get_size())
                pushing.append(True)
                try:
                    pad.push(ours)
                finally:
                    pushing.clear()
                return Gst.PadProbeReturn.DROP

            sampler.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, swap_records)
        try:
            self.stream.start()
        except PipelineError as exc:
            self.error = exc

    def close(self):
        self.stream.close()


def _groupable(location):
    """A local slide file a list can name (one line, no tab or comment)."""
    return (isinstance(location, str) and os.path.isfile(location)
            and not any(c in location for c in "\t\n\r") and location == location.strip()
            and not location.startswith("#"))


class _Member:
    """One slide of a group: what _finish_slide needs of a run."""

    given, coords_only = None, False

    def __init__(self, location, name, claim):
        self.location, self.name, self.claim = location, name, claim
        self.slide, self.planned, self.started = None, [], time.monotonic()


class _GroupRun:
    """Several claimed slides through one pipeline (a list location): the
    batch, patch and tile memory and the threads of one pipeline serve
    them all instead of being made anew for each slide (fresh memory costs
    a page fault per 4 KiB on its first write).  wsislidesrc visits them
    in sorted order; with one slide in the pool at a time (pool_size=1) a
    slide's patches all come before the next slide's, so a slide is
    complete when a later one's patches arrive.  Records carry the slide's
    index in that order; the slide meta its index."""

    def __init__(self, members, opts, list_dir=None):
        # the list goes to the local temporary folder (list_dir None), not
        # to a shared output folder: a killed job leaves nothing there
        self.members = [_Member(*m) for m in members]
        self.claim = None
        self.error = None
        self.next_run, self.asked_next = None, False
        self.started = time.monotonic()
        self.by_index = {}
        fd, self.list_path = tempfile.mkstemp(prefix=".group-", suffix=".txt", dir=list_dir)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for m in self.members:
                f.write(os.path.abspath(m.location) + "\n")
        try:
            self._build(opts)
        except BaseException:
            self._unlink()
            raise

    def _build(self, opts):
        desc = _description(self.list_path, opts)
        patch_size, overlap, target_mpp = opts["patch_size"], opts["overlap"], opts["mpp"]
        self.stream = BatchStream(desc, torch=False, timeout=opts["timeout"])
        sampler = elements_of(self.stream.pipeline, "patchsampler")[0]
        self.sampler = sampler
        self.src = elements_of(self.stream.pipeline, "wsislidesrc")[0]
        readers = elements_of(self.stream.pipeline, "patchreader")
        self.reader = readers[0] if readers else None
        slides = {}

        def on_slide(pad, info):
            buffer = info.get_buffer()
            meta = buffer.get_custom_meta("WsiSlideMeta") if buffer is not None else None
            if meta is None:
                return Gst.PadProbeReturn.OK
            index = int(meta.get_structure().get_value("index"))
            if index not in slides:
                slide = _slide_meta(buffer, *opts["side_parts"])
                slides[index] = slide
                if overlap and slide["mpp"] > 0:
                    # this slide's stride, set before patchsampler plans it
                    side = max(1, round(patch_size * target_mpp / slide["mpp"]))
                    sampler.set_property("stride", max(1, round(
                        (patch_size - overlap) * side / patch_size)))
            return Gst.PadProbeReturn.OK

        planned = {}

        def keep_plan(pad, info):
            buffer = info.get_buffer()
            ok, mapped = buffer.map(Gst.MapFlags.READ)
            if ok:
                rec = np.frombuffer(mapped.data, PATCH_RECORD)
                for index in np.unique(rec["slide_index"]):
                    part = rec[rec["slide_index"] == index]
                    planned.setdefault(int(index), []).append(np.stack(
                        [part["x"], part["y"], part["footprint"]], axis=1).astype(np.int64))
                buffer.unmap(mapped)
            return Gst.PadProbeReturn.OK

        sampler.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, on_slide)
        sampler.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, keep_plan)
        self.slides, self.plans = slides, planned
        try:
            self.stream.start()
        except PipelineError as exc:
            self.error = exc
            return
        # index -> member through the source's sorted list of the paths
        order = list(self.src.get_property("slide-paths") or [])
        where = {os.path.realpath(p): i for i, p in enumerate(order)}
        for m in self.members:
            i = where.get(os.path.realpath(m.location))
            if i is None:
                self.error = PipelineError(f"{m.location}: not in the list read")
                return
            self.by_index[i] = m

    def _unlink(self):
        try:
            os.unlink(self.list_path)
        except OSError:
            pass

    def close(self):
        if hasattr(self, "stream"):
            self.stream.close()
        self._unlink()

    def release(self):
        for m in self.members:
            m.claim.release()


class _Rechunk:
    """A slide's rows cut into model batches as its own pipeline would
    have: batch_size rows from the slide's first, the rest at its end, so
    the features do not depend on which slides share a pipeline batch.  A
    pipeline batch of one slide that lines up is passed on as it is (no
    copy)."""

    def __init__(self, embed, batch_size):
        self.embed, self.batch_size = embed, batch_size
        self.parts, self.count = [], 0

    def add(self, images, out):
        if not self.parts and len(images) == self.batch_size:
            out.append(self.embed(images))
            return
        self.parts.append(images)
        self.count += len(images)
        while self.count >= self.batch_size:
            self._emit(self.batch_size, out)

    def _emit(self, rows, out):
        joined = _concat(self.parts)
        out.append(self.embed(joined[:rows]))
        rest = joined[rows:]
        self.parts = [rest] if len(rest) else []
        self.count = len(rest)

    def flush(self, out):
        if self.count:
            self._emit(self.count, out)


def _concat(parts):
    if len(parts) == 1:
        return parts[0]
    if hasattr(parts[0], "is_cuda"):
        import torch
        return torch.cat(parts)
    return np.concatenate(parts)


def _group_slides(run, embed, enc_name, job_dir, paths, opts, target_mag, summary, report,
                  visualize, contours, start_next):
    """Streams a group's slides, writing each slide's files as soon as a
    later slide's patches show it complete; done/failed go to the summary
    slide by slide."""
    began = time.monotonic()
    error = run.error
    if error is None and not run.asked_next:
        run.asked_next = True
        run.next_run = start_next()
    acc = {}            # index -> [xs, ys, feats, footprints, rechunk]
    finished = set()

    def finish(index, error=None):
        finished.add(index)
        m = run.by_index[index]
        xs, ys, feats, footprints, chunk = acc.pop(index, ([], [], [], set(), None))
        m.slide = run.slides.get(index)
        m.planned = run.plans.get(index, [])
        try:
            if chunk is not None:
                t0 = time.monotonic()
                chunk.flush(feats)
                summary["model_s"] += time.monotonic() - t0
            why = error
            if m.slide is None and why is None:
                why = _skip_reason(run.stream, m.location)
            n = _finish_slide(m, sum(len(p) for p in m.planned), xs, ys, feats, footprints, why,
                              embed, enc_name, job_dir, paths, opts, target_mag, summary,
                              visualize, contours)
            summary["done"].append(m.name)
            summary["patches"] += n
            report.slide(m.name, "done", n, time.monotonic() - m.started)
        except _SlideFailed as exc:
            summary["failed"].append((m.name, exc.reason))
            report.slide(m.name, "FAILED (reason in the summary)")
        finally:
            m.claim.release()

    if error is None:
        try:
            while True:
                batch = run.stream.next_batch()
                if batch is None:
                    break
                rec = batch.records
                index = rec["slide_index"]
                for i in run.by_index:
                    if i not in finished:
                        run.by_index[i].claim.refresh()
                first, last = int(index[0]), int(index[-1])
                for i in sorted(run.by_index):      # complete: a later slide has begun
                    if i < first and i not in finished:
                        finish(i)
                for i in (range(first, last + 1) if first != last else (first,)):
                    sel = slice(None) if first == last else index == i
                    part = rec[sel] if first != last else rec
                    if not len(part):
                        continue
                    if i not in run.by_index:
                        raise PipelineError(f"patches of slide index {i}, not in the list")
                    a = acc.setdefault(i, ([], [], [], set(),
                                           _Rechunk(embed, opts["batch_size"]) if embed else None))
                    a[0].append(part["x"].astype(np.int64))
                    a[1].append(part["y"].astype(np.int64))
                    a[3].update(int(f) for f in np.unique(part["footprint"]))
                    if embed is not None:
                        t0 = time.monotonic()
                        a[4].add(batch.images if first == last else batch.images[sel], a[2])
                        summary["model_s"] += time.monotonic() - t0
                    for j in sorted(run.by_index):
                        if j < i and j not in finished:
                            finish(j)
                report.batch(run.by_index[last].name, sum(len(x) for x in acc[last][0]),
                             time.monotonic() - began)
        except (PipelineError, TimeoutError) as exc:
            error = exc
        summary["wait_s"] += run.stream.wait_ns / 1e9
    if run.reader is not None:
        summary["patches_decoded"] += run.reader.get_property("patches-read")
    for i in sorted(run.by_index):
        if i not in finished:
            finish(i, error)
    for m in run.members:           # the list never got read (error at start)
        if m not in run.by_index.values():
            summary["failed"].append((m.name, _reason(error) if error else "not read"))
            report.slide(m.name, "FAILED (reason in the summary)")
            m.claim.release()


def _skip_reason(stream, location):
    """Why wsislidesrc skipped a slide (its warning), as an error."""
    for w in getattr(stream, "warnings", []):
        if location in w or os.path.abspath(location) in w:
            text = w.split(": ", 1)[1] if ": " in w else w
            if text.startswith("Skipping slide "):     # "PATH: why", as a failure
                text = text[len("Skipping slide "):]
            return PipelineError(text)
    return None


# ---- progress ---------------------------------------------------------------

class _Progress:
    """One line per slide, and on a terminal a line redrawn as batches come."""

    def __init__(self, total, enabled, out=sys.stderr):
        self.total, self.enabled, self.out = total, enabled, out
        self.tty = enabled and hasattr(out, "isatty") and out.isatty()
        self.began = time.monotonic()
        self.finished = 0
        self.patches = 0
        self._drawn = 0.0
        # when the first batch came, and its patches: the fixed start cost
        # (open, overview, mask, pipeline start) apart from the reading rate
        self.first_batch = None

    def _overall(self, extra_patches=0):
        elapsed = max(1e-9, time.monotonic() - self.began)
        rate = (self.patches + extra_patches) / elapsed
        left = self.total - self.finished
        eta = elapsed / self.finished * left if self.finished else float("nan")
        eta_text = f"{eta:.0f} s" if eta == eta else "?"
        return (f"slides {self.finished}/{self.total}, {self.patches + extra_patches} patches, "
                f"{rate:.0f} patches/s, ETA {eta_text}")

    def batch(self, name, patches, seconds):
        if self.first_batch is None:
            self.first_batch = (time.monotonic() - self.began, patches)
        if not self.tty or time.monotonic() - self._drawn < 0.5:
            return
        self._drawn = time.monotonic()
        rate = patches / max(seconds, 1e-9)
        self.out.write(f"\r\033[K{name}: {patches} patches, {rate:.0f}/s | "
                       f"{self._overall(patches)}")
        self.out.flush()

    def slide(self, name, status, patches=0, seconds=0.0):
        self.finished += 1
        self.patches += patches
        if not self.enabled:
            return
        what = (f"{patches} patches in {seconds:.1f} s ({patches / max(seconds, 1e-9):.0f}/s)"
                if status == "done" else status)
        self.out.write(("\r\033[K" if self.tty else "") +
                       f"[{self.finished}/{self.total}] {name}: {what} | {self._overall()}\n")
        self.out.flush()


# ---- the job ------------------------------------------------------------------

class _Embedder:
    """The user's model over uint8 NHWC batches: float32 NCHW 0..1, the
    transform, autocast at the chosen precision; rows stay where the model
    put them until `rows()` brings a slide's features back as numpy.

    On CUDA a batch reaches the GPU one of two ways (`upload`):
    "wsicudaupload" when this build has the element: the pipeline copies
    each batch from pinned memory on its own thread and CUDA stream, ahead
    of the model (the appsink queue holds uploaded batches), so the model
    thread does no copy at all; else "pinned": the batch is copied into one
    of two pinned staging buffers and sent with a non-blocking copy on a
    side stream that the model's stream waits for, while the features stay
    on the GPU until the slide ends, so the next batch's copy overlaps this
    batch's model."""

    def __init__(self, model, transform, device, precision, out_dtype):
        import torch
        self.torch = torch
        if precision not in _PRECISIONS:
            raise SettingsError(f"precision {precision!r}: use one of {', '.join(_PRECISIONS)}",
                                None, "precision", precision, None)
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        if self.cuda and not torch.cuda.is_available():
            raise SettingsError("device cuda: torch sees no CUDA device", None, "device",
                                device, None)
        self.amp = {"fp32": None, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]
        if hasattr(model, "to"):
            model = model.to(self.device)
        if hasattr(model, "eval"):
            model.eval()
        self.model, self.transform, self.out_dtype = model, transform, out_dtype
        self.upload = None
        if self.cuda:
            from .settings import class_specs
            self.upload = "wsicudaupload" if class_specs("wsicudaupload") is not None \
                else "pinned"
        self._staging, self._uploaded, self._turn = [None, None], [None, None], 0
        self._held = []
        self._copy_stream = torch.cuda.Stream(self.device) if self.upload == "pinned" else None

    def _on_device(self, images):
        torch = self.torch
        if isinstance(images, torch.Tensor) and images.is_cuda:
            return images                      # wsicudaupload's batch (see __call__)
        host = as_tensor(torch, np.asarray(images))     # read, never written
        if self._copy_stream is None:
            return host.to(self.device)
        k, self._turn = self._turn, self._turn ^ 1
        buf = self._staging[k]
        if buf is None or buf.shape[1:] != host.shape[1:] or len(buf) < len(host):
            buf = self._staging[k] = torch.empty(host.shape, dtype=host.dtype).pin_memory()
        elif self._uploaded[k] is not None:
            self._uploaded[k].synchronize()   # its previous upload has left it
        buf = buf[:len(host)]
        buf.copy_(host)
        compute = torch.cuda.current_stream(self.device)
        with torch.cuda.stream(self._copy_stream):
            x = buf.to(self.device, non_blocking=True)
            done = torch.cuda.Event()
            done.record(self._copy_stream)
        self._uploaded[k] = done
        compute.wait_stream(self._copy_stream)
        x.record_stream(compute)
        return x

    def __call__(self, images):
        torch = self.torch
        with torch.inference_mode():
            x = self._on_device(images).permute(0, 3, 1, 2).float().div_(255.0)
            if isinstance(images, torch.Tensor) and images.is_cuda:
                # The batch's device memory goes back to wsicudaupload's pool
                # when the tensor dies: keep the last two alive until the
                # kernel that read them has run.
                read = torch.cuda.Event()
                read.record(torch.cuda.current_stream(self.device))
                self._held.append((images, read))
                if len(self._held) > 2:
                    self._held.pop(0)[1].synchronize()
            if self.transform is not None:
                x = self.transform(x)
            if self.amp is not None:
                with torch.autocast(device_type=self.device.type, dtype=self.amp):
                    y = self.model(x)
            else:
                y = self.model(x)
            if isinstance(y, (tuple, list)):
                y = y[0]
            return y.reshape(y.shape[0], -1).float()

    def rows(self, outputs):
        """One slide's outputs as an N x D numpy array of out_dtype."""
        torch = self.torch
        if not outputs:
            return np.zeros((0, 0), self.out_dtype)
        with torch.inference_mode():
            y = torch.cat(outputs).cpu().numpy()
        self._held.clear()                  # .cpu() waited for every kernel
        return y.astype(self.out_dtype, copy=False)


def _coords_attrs(name, slide, patch_size, overlap, target_mag, footprint, job_dir):
    level0_mag = slide["objective"] if slide["objective"] > 0 else \
        (10.0 / slide["mpp"] if slide["mpp"] > 0 else 0.0)
    return {"patch_size": int(patch_size), "patch_size_level0": int(footprint),
            "level0_magnification": _attr_number(level0_mag),
            "target_magnification": _attr_number(target_mag), "overlap": int(overlap),
            "name": name, "savetodir": job_dir,
            "level0_width": int(slide["width"]), "level0_height": int(slide["height"])}


def extract(slides, out_dir, *, mpp=0.5, magnification=None, patch_size=256, overlap=0,
            min_tissue=0.5, model=None, transform=None, encoder=None, device="cpu",
            precision="fp32", batch_size=64, features_dtype="float32", threads=2,
            rank=None, world_size=None, claim_timeout=900.0, mask_cache_dir=None,
            visualize=True, contours=True, progress=True, tissue=True, prefetch=0,
            timeout=600.0, coords_from=None, read_pixels=False, slides_per_pipeline=8,
            **settings):
    """Coordinates (and, with `model`, features) of every tissue patch of
    `slides` under `job_folder(out_dir, ...)`; returns the summary dict
    (done, skipped, failed [(name, reason)], patches, seconds, wait_s
    (blocked on the next batch, or building a slide's pipeline), model_s,
    patches_per_s, first_batch_s (from the call to the first batch: slide
    open, overview, mask, pipeline start) and patches_per_s_after_first_batch
    (the rate after it), patches_decoded (patches whose pixels were read),
    pipelines (pipelines built), folder).

    `slides`: a slide, folder, list/manifest, URL, or a list of those.
    `mpp` (target µm/px; or `magnification`, which means mpp = 10 /
    magnification), `patch_size`, `overlap` (pixels at the target
    resolution), `min_tissue` (share of a patch on tissue).  `model`: an
    nn.Module or any callable on a float32 NCHW batch (0..1 unless
    `transform`, applied to that batch first, says otherwise), or
    "module:callable" (see `load_model`); `encoder` names it in
    `features_<encoder>` (default: its `enc_name`, else the callable's
    name).  `device` "cpu"/"cuda", `precision` fp32/fp16/bf16 (autocast),
    `batch_size`, `features_dtype` float32/float16.  `rank`/`world_size`
    (default: RANK/WORLD_SIZE, SLURM_PROCID/SLURM_NTASKS,
    SLURM_ARRAY_TASK_ID/COUNT) pick this job's share; claim files split it
    between jobs sharing `out_dir` (a claim untouched for `claim_timeout`
    seconds is taken over).  `mask_cache_dir` keeps the tissue masks for
    later runs and training.  Other keywords go to `standard_pipeline`
    (e.g. `tissue_method="clam"`, `backend=...`).  Complete outputs are
    skipped; damaged or foreign ones are redone with a warning naming them.

    `coords_from`: a folder of existing TRIDENT (`<name>_patches.h5`, or a
    job folder with `patches/`) or CLAM (`<name>.h5`) coordinate files:
    features for exactly those positions (footprint `patch_size_level0`, or
    CLAM's patch_size x downsample; resized to the file's `patch_size`),
    written to `out_dir/features_<encoder>/<name>.h5` with the file's
    coords attributes; needs `model`.

    `slides_per_pipeline`: when pixels are read, up to this many local
    slide files are claimed together and read one after the other by one
    pipeline (its batch, patch and tile memory made once instead of once a
    slide; each slide's files are written as soon as it is complete, and
    its features are computed over the same model batches as if it ran
    alone); 1 = one pipeline a slide.

    `prefetch`: patches queued between patchreader and patchbatch (0, the
    default: none; the grid has no per-patch stage, patchreader's own
    output thread already runs ahead of batching, and the sink's 4 batches
    run ahead of the model; a queue only added a thread hand-off a patch).

    Without `model` only the overview, the mask and the grid are computed
    (no patch pixel is decoded; summary["patches_decoded"] stays 0), unless
    `read_pixels`: then every patch is read and dropped, which checks that
    each decodes and is what bench-extract times as the loader.
    """
    if magnification:
        mpp = 10.0 / float(magnification)
    if not mpp or mpp <= 0:
        raise SettingsError(f"mpp {mpp!r}: give a target resolution > 0 (µm/px)", None,
                            "mpp", str(mpp), None)
    if not 0 <= int(overlap) < int(patch_size):
        raise SettingsError(f"overlap {overlap}: must be in 0..patch_size-1", None, "overlap",
                            str(overlap), None)
    if features_dtype not in ("float32", "float16"):
        raise SettingsError(f"features_dtype {features_dtype!r}: float32 or float16", None,
                            "features_dtype", str(features_dtype), None)
    target_mag = 10.0 / mpp
    job_dir = job_folder(out_dir, mpp, patch_size, overlap) if coords_from is None \
        else os.fspath(out_dir)
    if coords_from is not None and model is None:
        raise SettingsError("coords_from needs a model: the coordinates exist already",
                            None, "coords_from", str(coords_from), None)
    embed, enc_name, feat_dim = None, None, None
    if model is not None:
        m, t, feat_dim, enc_name = load_model(model)
        embed = _Embedder(m, transform if transform is not None else t, device, precision,
                          np.dtype(features_dtype))
        enc_name = encoder or enc_name
    r, w, _ = rank_and_world(rank, world_size)
    all_slides = resolve_slides(slides)
    mine = all_slides[r::w]
    claims_dir = os.path.join(job_dir, "claims")
    opts = dict(batch_size=int(batch_size), patch_size=int(patch_size), mpp=float(mpp),
                overlap=int(overlap), min_tissue=float(min_tissue), threads=int(threads),
                tissue=tissue, prefetch=int(prefetch), timeout=timeout,
                mask_cache_dir=os.fspath(mask_cache_dir) if mask_cache_dir else None,
                settings=settings, given_coords=None, coords_only=embed is None and not read_pixels,
                cuda_upload=embed is not None and embed.upload == "wsicudaupload",
                side_parts=(bool(visualize), bool(contours)))     # overview, mask wanted
    if coords_from is not None:
        given_files = {}

        def given(name):
            if name not in given_files:
                given_files[name] = trident_h5.given_coords(_coords_file(coords_from, name))
            return given_files[name]
        opts["given_coords"] = given
    probe_attrs = {"patch_size": int(patch_size), "target_magnification":
                   _attr_number(target_mag), "overlap": int(overlap)}

    def paths(name):
        coords = os.path.join(job_dir, "patches", f"{name}_patches.h5") \
            if coords_from is None else None
        feats = os.path.join(job_dir, f"features_{enc_name}", f"{name}.h5") if embed else None
        return coords, feats

    def state(name):
        """None when complete, "missing", or why the outputs are not this job's."""
        coords, feats = paths(name)
        if coords_from is not None:
            try:
                attrs = opts["given_coords"](name)["attrs"]
            except (OSError, ValueError):
                return "missing"            # the slide's run names the reason
            attrs = {k: attrs[k] for k in ("patch_size", "patch_size_level0", "name")
                     if k in attrs}
            why = trident_h5.check_features(feats, attrs, enc_name, feat_dim)
            return f"{feats}: {why}" if why not in (None, "missing") else why
        attrs = dict(probe_attrs, name=name)
        why = trident_h5.check_coords(coords, attrs)
        if why is None and embed:
            why = trident_h5.check_features(feats, attrs, enc_name, feat_dim)
            if why is not None and why != "missing":
                return f"{feats}: {why}"
            return why
        return f"{coords}: {why}" if why not in (None, "missing") else why

    summary = {"done": [], "skipped": [], "failed": [], "patches": 0, "patches_decoded": 0,
               "pipelines": 0,
               "wait_s": 0.0,
               "model_s": 0.0, "folder": job_dir, "rank": r, "world_size": w,
               "claimed_elsewhere": [], "upload": embed.upload if embed is not None else None}
    report = _Progress(len(mine), progress)
    began = time.monotonic()

    def claims():
        """The slides of this rank this job gets, claimed, one at a time."""
        for location, name in mine:
            why = state(name)
            if why is None:
                drop_claim(claims_dir, name)
                summary["skipped"].append(name)
                report.slide(name, "skipped (complete)")
                continue
            claim, taken = try_claim(claims_dir, name, claim_timeout)
            if claim is None:
                summary["claimed_elsewhere"].append(name)
                report.slide(name, "claimed by another job")
                continue
            if taken:
                warnings.warn(f"{name}: took over the stale claim of {taken}", stacklevel=3)
            why = state(name)                    # done meanwhile by another job?
            if why is None:
                claim.release()
                summary["skipped"].append(name)
                report.slide(name, "skipped (complete)")
                continue
            if why != "missing":
                warnings.warn(f"redoing {why}", stacklevel=3)
            yield location, name, claim

    pending = claims()
    stashed = []
    # Slides read by one pipeline: pixels are read, no coordinates file
    # gives the positions, and each is a local file a list can name.
    group_size = max(1, int(slides_per_pipeline)) if not opts["coords_only"] \
        and coords_from is None else 1

    def next_claimed():
        if stashed:
            return stashed.pop()
        return next(pending, None)

    def start_next():
        while True:
            first = next_claimed()
            if first is None:
                return None
            members = [first]
            if group_size > 1 and _groupable(first[0]):
                while len(members) < group_size:
                    more = next_claimed()
                    if more is None:
                        break
                    if not _groupable(more[0]):
                        stashed.append(more)
                        break
                    members.append(more)
            t0 = time.monotonic()
            try:
                if len(members) > 1:
                    run = _GroupRun(members, opts, None)
                else:
                    run = _SlideRun(*first, opts)
                summary["pipelines"] += 1
                return run
            except (SettingsError, PipelineError, ValueError, OSError) as exc:
                for location, name, claim in members:
                    claim.release()
                    summary["failed"].append((name, _reason(exc)))
                    report.slide(name, "FAILED (reason in the summary)")
            finally:
                # building and starting a pipeline is time the model waits too
                summary["wait_s"] += time.monotonic() - t0

    run = start_next()
    try:
        while run is not None:
            if isinstance(run, _GroupRun):
                try:
                    _group_slides(run, embed, enc_name, job_dir, paths, opts, target_mag,
                                  summary, report, visualize, contours, start_next)
                finally:
                    run.close()
                    run.release()
                run = run.next_run if run.next_run is not None else start_next()
                continue
            try:
                n = _one_slide(run, embed, enc_name, job_dir, paths, opts, target_mag,
                               summary, report, visualize, contours, start_next)
                summary["done"].append(run.name)
                summary["patches"] += n
                report.slide(run.name, "done", n, time.monotonic() - run.started)
            except _SlideFailed as exc:
                summary["failed"].append((run.name, exc.reason))
                report.slide(run.name, "FAILED (reason in the summary)")
            finally:
                run.close()
                run.claim.release()
            run = run.next_run if run.next_run is not None else start_next()
    finally:
        while run is not None:          # an exception: give back what is held
            run.close()
            if isinstance(run, _GroupRun):
                run.release()
            else:
                run.claim.release()
            run = run.next_run
        for location, name, claim in stashed:
            claim.release()
    seconds = time.monotonic() - began
    summary["seconds"] = seconds
    summary["patches_per_s"] = summary["patches"] / seconds if seconds > 0 else 0.0
    if report.first_batch is not None:
        summary["first_batch_s"], first = report.first_batch
        rest = seconds - summary["first_batch_s"]
        summary["patches_per_s_after_first_batch"] = \
            (summary["patches"] - first) / rest if rest > 0 else 0.0
    return summary


def _coords_file(folder, name):
    """A slide's coords file in `folder`: TRIDENT's <name>_patches.h5 (also
    under patches/), else CLAM's <name>.h5."""
    folder = os.fspath(folder)
    for candidate in (os.path.join(folder, f"{name}_patches.h5"),
                      os.path.join(folder, "patches", f"{name}_patches.h5"),
                      os.path.join(folder, f"{name}.h5"),
                      os.path.join(folder, "patches", f"{name}.h5")):
        if os.path.isfile(candidate):
            return candidate
    raise ValueError(f"no coordinates for slide {name} in {folder} "
                     f"({name}_patches.h5 or {name}.h5)")


def _reason(exc):
    """The human sentence of an error, without GStreamer's debug string."""
    return getattr(exc, "message", None) or str(exc).split("\n", 1)[0]


class _SlideFailed(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def _one_slide(run, embed, enc_name, job_dir, paths, opts, target_mag, summary, report,
               visualize, contours, start_next):
    """Streams one slide, writes its files, returns its patch count (the
    next slide's run, started ahead, goes to run.next_run). Raises
    _SlideFailed with the reason."""
    xs, ys, feats, footprints = [], [], [], set()
    began = time.monotonic()
    error = run.error
    if error is None and not run.asked_next:
        # the next slide opens, reads its overview and masks while this one
        # does the same: those steps are single-threaded, reading is not
        run.asked_next = True
        run.next_run = start_next()
    if error is None and run.coords_only:
        try:
            while run.stream._pull() is not None:      # the plan, caught by keep_plan
                pass
        except (PipelineError, TimeoutError) as exc:
            error = exc
        summary["wait_s"] += run.stream.wait_ns / 1e9
    elif error is None:
        try:
            stream = run.stream
            while True:
                batch = stream.next_batch()
                if batch is None:
                    break
                run.claim.refresh()
                rec = batch.records
                xs.append(rec["x"].astype(np.int64))
                ys.append(rec["y"].astype(np.int64))
                footprints.update(int(f) for f in np.unique(rec["footprint"]))
                if embed is not None:
                    t0 = time.monotonic()
                    feats.append(embed(batch.images))
                    summary["model_s"] += time.monotonic() - t0
                n = sum(len(x) for x in xs)
                report.batch(run.name, n, time.monotonic() - began)
            summary["wait_s"] += stream.wait_ns / 1e9
        except (PipelineError, TimeoutError) as exc:
            summary["wait_s"] += run.stream.wait_ns / 1e9
            error = exc
    planned = run.sampler.get_property("patches-planned")
    if run.reader is not None:
        summary["patches_decoded"] += run.reader.get_property("patches-read")
    return _finish_slide(run, planned, xs, ys, feats, footprints, error, embed, enc_name,
                         job_dir, paths, opts, target_mag, summary, visualize, contours)


def _finish_slide(run, planned, xs, ys, feats, footprints, error, embed, enc_name, job_dir,
                  paths, opts, target_mag, summary, visualize, contours):
    """Checks what one slide streamed against its plan and writes its
    files; returns its patch count or raises _SlideFailed."""
    slide = run.slide
    plan = np.concatenate(run.planned) if run.planned else np.zeros((0, 3), np.int64)
    n = len(plan) if run.coords_only else sum(len(x) for x in xs)
    if slide is None:
        raise _SlideFailed(_reason(error) if error else "the slide gave no slide description")
    if run.given is not None:
        planned = len(run.given["coords"])
    if error is not None and planned > 0:
        raise _SlideFailed(_reason(error))
    if n < planned:
        raise _SlideFailed(f"{planned - n} of {planned} patches could not be read")
    if not run.claim.held():
        raise _SlideFailed("its claim was taken over by another job (stale?); "
                           "that job writes it")
    if run.given is None:
        if len(plan) != n:
            raise _SlideFailed(f"{n} patches read for {len(plan)} planned")
        if not run.coords_only and n:
            # the patches read are those planned, in order (a read moves one
            # by less than an output pixel at most)
            moved = np.abs(np.concatenate(xs) - plan[:, 0]).max(initial=0)
            moved = max(moved, np.abs(np.concatenate(ys) - plan[:, 1]).max(initial=0))
            if moved > max(1, plan[:, 2].max() / max(opts["patch_size"], 1)) + 1:
                raise _SlideFailed(f"the patches read are {moved} px off the grid planned")
        coords = plan[:, :2].copy()
        footprints = set(int(f) for f in np.unique(plan[:, 2]))
    else:
        coords = np.stack([np.concatenate(xs), np.concatenate(ys)], axis=1) if n else \
            np.zeros((0, 2), np.int64)
    if len(footprints) > 1:
        warnings.warn(f"{run.name}: patches of {len(footprints)} footprints "
                      f"({sorted(footprints)}); patch_size_level0 is the first", stacklevel=2)
    footprint = min(footprints) if footprints else (
        max(1, round(opts["patch_size"] * opts["mpp"] / slide["mpp"])) if slide["mpp"] > 0 else 0)
    attrs = _coords_attrs(run.name, slide, opts["patch_size"], opts["overlap"], target_mag,
                          footprint, job_dir)
    coords_path, feats_path = paths(run.name)
    if run.given is not None:
        if not np.array_equal(coords, run.given["coords"]):
            raise _SlideFailed("the patches read are not those of its coordinates file")
        attrs = dict(run.given["attrs"])
        t0 = time.monotonic()
        features = embed.rows(feats)
        summary["model_s"] += time.monotonic() - t0
        trident_h5.write_features(feats_path, features, coords, attrs, run.name, enc_name)
        return n
    if embed is not None:
        t0 = time.monotonic()
        features = embed.rows(feats)        # waits for the GPU's last batch
        summary["model_s"] += time.monotonic() - t0
        trident_h5.write_features(feats_path, features, coords, attrs, run.name, enc_name)
    trident_h5.write_coords(coords_path, coords, attrs)
    _side_outputs(run, slide, coords, footprint, job_dir, visualize, contours)
    return n


def _side_outputs(run, slide, coords, footprint, job_dir, visualize, contours):
    from ._utils import slideviews
    try:
        if contours and slide["mask"] is not None:
            slideviews.write_contours(os.path.join(job_dir, "contours_geojson",
                                                   f"{run.name}.geojson"),
                                      slide["mask"], slide["width"], slide["height"])
        if visualize and slide["overview"] is not None:
            slideviews.write_visualization(
                os.path.join(job_dir, "visualization", f"{run.name}.jpg"), slide["overview"],
                coords, footprint, slide["width"], slide["height"],
                caption=f"{len(coords)} patches")
    except ImportError as exc:
        warnings.warn(f"{run.name}: contours/visualization not written ({exc})", stacklevel=3)


# ---- command line ----------------------------------------------------------------

def _summary_text(s):
    lines = [f"wsi-extract: {len(s['done'])} done, {len(s['skipped'])} skipped (complete), "
             f"{len(s['failed'])} failed, {len(s['claimed_elsewhere'])} claimed by other jobs; "
             f"rank {s['rank']} of {s['world_size']}",
             f"  {s['patches']} patches in {s['seconds']:.1f} s ({s['patches_per_s']:.0f} "
             f"patches/s); waiting for data {s['wait_s']:.1f} s, in the model "
             f"{s['model_s']:.1f} s",
             f"  output: {s['folder']}"]
    for name, reason in s["failed"]:
        lines.append(f"  FAILED {name}: {reason}")
    return "\n".join(lines)


def main(argv=None):
    import argparse
    p = argparse.ArgumentParser(
        prog="wsi-extract",
        description="Coordinates and features of every tissue patch of every slide, "
        "one H5 file per slide in TRIDENT's job layout (docs/recipes/features.md).")
    p.add_argument("slides", nargs="+", help="slide files, folders, lists, manifests or URLs")
    p.add_argument("out_dir", help="output folder (the job folder is made inside it)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--mpp", type=float, default=None, help="target µm/px (default 0.5)")
    g.add_argument("--magnification", type=float, default=None,
                   help="target magnification, meaning mpp = 10 / magnification")
    p.add_argument("--patch-size", type=int, default=256, help="patch side in pixels (256)")
    p.add_argument("--overlap", type=int, default=0,
                   help="overlap of neighbouring patches in target pixels (0)")
    p.add_argument("--min-tissue", type=float, default=0.5,
                   help="share of a patch that must be tissue, 0..1 (0.5)")
    p.add_argument("--model", help="module:callable returning an nn.Module "
                   "(or (module, transform[, dim])); without it, coordinates only")
    p.add_argument("--encoder", help="name in features_<encoder> (default: the model's "
                   "enc_name, else the callable's name)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (cpu)")
    p.add_argument("--precision", default="fp32", choices=_PRECISIONS,
                   help="autocast precision (fp32)")
    p.add_argument("--features-dtype", default="float32", choices=("float32", "float16"))
    p.add_argument("--batch-size", type=int, default=64, help="patches per batch (64)")
    p.add_argument("--threads", type=int, default=2, help="patchreader threads (2)")
    p.add_argument("--rank", type=int, help="this job's rank (default from the environment)")
    p.add_argument("--world-size", type=int, help="number of ranks")
    p.add_argument("--claim-timeout", type=float, default=900.0,
                   help="seconds after which an untouched claim is taken over (900)")
    p.add_argument("--mask-cache-dir", help="keep tissue masks here for later runs")
    p.add_argument("--coords-from", help="features for the positions of existing TRIDENT "
                   "(<name>_patches.h5) or CLAM (<name>.h5) coordinate files in this folder; "
                   "features go to OUT_DIR/features_<encoder>/")
    p.add_argument("--read-pixels", action="store_true",
                   help="without --model, still read every patch (and drop it): checks "
                   "that each decodes; the loader bench-extract times")
    p.add_argument("--slides-per-pipeline", type=int, default=8,
                   help="slides claimed together and read by one pipeline when pixels "
                   "are read (8; 1 = a pipeline per slide)")
    p.add_argument("--tissue-method", help="tissuemask method (default: its default)")
    p.add_argument("--no-visualization", action="store_true",
                   help="write no contours or grid picture")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--summary-json", help="also write the closing summary to this JSON file")
    a = p.parse_args(argv)
    settings = {}
    if a.tissue_method:
        settings["tissue_method"] = a.tissue_method
    warnings.simplefilter("always")
    warnings.formatwarning = lambda msg, *args, **kw: f"wsi-extract: warning: {msg}\n"
    try:
        s = extract(a.slides, a.out_dir, mpp=a.mpp or 0.5, magnification=a.magnification,
                    patch_size=a.patch_size, overlap=a.overlap, min_tissue=a.min_tissue,
                    model=a.model, encoder=a.encoder, device=a.device, precision=a.precision,
                    features_dtype=a.features_dtype, batch_size=a.batch_size,
                    threads=a.threads, rank=a.rank, world_size=a.world_size,
                    claim_timeout=a.claim_timeout, mask_cache_dir=a.mask_cache_dir,
                    visualize=not a.no_visualization, contours=not a.no_visualization,
                    progress=not a.quiet, coords_from=a.coords_from,
                    read_pixels=a.read_pixels, slides_per_pipeline=a.slides_per_pipeline,
                    **settings)
    except (SettingsError, ValueError, ImportError) as exc:
        print(f"wsi-extract: {exc}", file=sys.stderr)
        return 2
    print(_summary_text(s), file=sys.stderr)
    if a.summary_json:
        import json
        with open(a.summary_json, "w", encoding="utf-8") as f:
            json.dump(s, f, indent=1)
    return 1 if s["failed"] else 0
