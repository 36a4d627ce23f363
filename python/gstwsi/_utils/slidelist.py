"""The slides of a feature-extraction job, each with the name its output
files get: a slide file, an OME-Zarr store (a folder with .zattrs or
zarr.json), a folder (every slide file and store below it, sorted; the
.dcm files of one folder are one DICOM series), a list (one path or URL a
line, '#' comments, an optional TAB and label ignored) or a manifest (.csv
/.tsv or a first line starting with `path`; its `path` column), relative
paths taken from the list's folder; an http(s)/s3/gs URL is one slide,
an `s3://` / `gs://` prefix ending in `/` or a list or manifest at a URL
is listed by wsislidesrc itself (its `slide-paths`), as training lists it.
The names follow TRIDENT: the file name without its extension (.ome.tif
and .ome.tiff counted as one); a DICOM series is named after its folder.
Two slides with one name are refused (their outputs would collide).
Functions over the file system, and wsislidesrc for remote collections.
"""
import csv
import os

__all__ = ["SLIDE_EXTENSIONS", "is_zarr_store", "resolve_slides", "slide_name"]

# The extensions wsislidesrc reads (ext/wsislide/read/wsislide.c).
SLIDE_EXTENSIONS = (".svs", ".tif", ".tiff", ".ndpi", ".vms", ".vmu", ".scn", ".mrxs",
                    ".svslide", ".bif", ".dcm")
_COMPOUND = (".ome.tif", ".ome.tiff")


def is_url(location):
    return "://" in location and location.split("://", 1)[0].lower() in (
        "http", "https", "s3", "gs")


def slide_name(location):
    """TRIDENT's name of a slide: its file name without the extension."""
    if location.lower().endswith(".dcm"):
        return os.path.basename(os.path.dirname(location.rstrip("/"))) or "dicom"
    base = os.path.basename(location.split("?", 1)[0].rstrip("/"))
    low = base.lower()
    for ext in _COMPOUND:
        if low.endswith(ext):
            return base[:-len(ext)]
    return os.path.splitext(base)[0]


def _is_slide(path):
    return path.lower().endswith(SLIDE_EXTENSIONS)


def is_zarr_store(path):
    """An OME-Zarr store: a folder holding .zattrs (Zarr v2) or zarr.json
    (Zarr v3), one slide (as wsi_zarr_is_store() decides)."""
    return os.path.isdir(path) and (os.path.isfile(os.path.join(path, ".zattrs"))
                                    or os.path.isfile(os.path.join(path, "zarr.json")))


def _walk(folder):
    found = []
    for root, dirs, files in os.walk(folder, followlinks=True):
        dirs.sort()
        # an OME-Zarr store below is one slide; its chunks are not searched
        stores = [d for d in dirs if is_zarr_store(os.path.join(root, d))]
        found += [os.path.join(root, d) for d in stores]
        dirs[:] = [d for d in dirs if d not in stores]
        dicom = sorted(f for f in files if f.lower().endswith(".dcm"))
        if dicom:                       # one series per folder
            found.append(os.path.join(root, dicom[0]))
        found += [os.path.join(root, f) for f in sorted(files)
                  if _is_slide(f) and not f.lower().endswith(".dcm")]
    return sorted(found)


def _manifest_paths(path):
    with open(path, newline="", encoding="utf-8-sig") as f:
        dialect = "excel-tab" if path.lower().endswith(".tsv") or "\t" in f.readline() \
            else "excel"
        f.seek(0)
        rows = list(csv.reader(f, dialect))
    header = [h.strip().lower() for h in rows[0]] if rows else []
    if "path" not in header:
        raise ValueError(f"{path}: a manifest needs a 'path' column (header: {rows[:1]})")
    col = header.index("path")
    return [r[col] for r in rows[1:] if len(r) > col and r[col].strip()]


def _list_paths(path):
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    low = path.lower()
    if low.endswith((".csv", ".tsv")) or first.split(",")[0].split("\t")[0].strip().lower() == "path" \
            and ("," in first or "\t" in first):
        entries = _manifest_paths(path)
    else:
        with open(path, encoding="utf-8") as f:
            entries = [line.split("\t", 1)[0].strip() for line in f]
        entries = [e for e in entries if e and not e.startswith("#")]
    base = os.path.dirname(os.path.abspath(path))
    return [e if is_url(e) or os.path.isabs(e) else os.path.join(base, e) for e in entries]


_LIST_EXTENSIONS = (".lst", ".txt", ".list", ".csv", ".tsv")


def _is_remote_collection(location):
    path = location.split("?", 1)[0].lower()
    return location.endswith("/") or path.endswith(_LIST_EXTENSIONS)


def _remote_collection(location, timeout_s=120):
    """The slides wsislidesrc finds at a remote prefix, list or manifest
    (what a training pipeline on `location` reads); ValueError naming the
    location with wsislidesrc's reason."""
    from .gst import Gst, init
    init()
    src = Gst.ElementFactory.make("wsislidesrc", None)
    sink = Gst.ElementFactory.make("fakesink", None)
    if src is None or src.find_property("slide-paths") is None:
        raise ValueError(f"{location}: listing a remote collection needs wsislidesrc with "
                         f"slide-paths (this build's gst-wsi is older)")
    # num-buffers=0: started (listed, first slide opened), then EOS at once
    src.set_property("location", location)
    for name, value in (("rank", 0), ("world-size", 1), ("prepare-ahead", 0),
                        ("num-buffers", 0)):
        src.set_property(name, value)
    pipeline = Gst.Pipeline.new(None)
    pipeline.add(src)
    pipeline.add(sink)
    src.link(sink)
    try:
        pipeline.set_state(Gst.State.PAUSED)
        ret, _, _ = pipeline.get_state(int(timeout_s * Gst.SECOND))
        paths = list(src.get_property("slide-paths") or [])
        if ret == Gst.StateChangeReturn.FAILURE or not paths:
            msg = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
            reason = msg.parse_error()[0].message if msg else "no slides found"
            raise ValueError(reason if location in reason else f"{location}: {reason}")
        return paths
    finally:
        pipeline.set_state(Gst.State.NULL)


def resolve_slides(locations):
    """[(location, name)] of one location or a list of them; ValueError
    naming the location when it is neither a slide, a folder nor a list,
    or when two slides share a name."""
    if isinstance(locations, (str, os.PathLike)):
        locations = [locations]
    out = []
    for loc in map(os.fspath, locations):
        if is_url(loc):
            out += _remote_collection(loc) if _is_remote_collection(loc) else [loc]
        elif is_zarr_store(loc):
            out.append(loc.rstrip("/"))
        elif os.path.isdir(loc):
            found = _walk(loc)
            if not found:
                raise ValueError(f"{loc}: no slide files (extensions "
                                 f"{', '.join(SLIDE_EXTENSIONS)}) in this folder")
            out += found
        elif os.path.isfile(loc):
            out += [loc] if _is_slide(loc) else _list_paths(loc)
        else:
            raise ValueError(f"{loc}: no such file or folder")
    names = {}
    result = []
    for loc in out:
        name = slide_name(loc)
        if name in names:
            if names[name] == loc:
                continue
            raise ValueError(f"two slides would write the same outputs '{name}': "
                             f"{names[name]} and {loc}")
        names[name] = loc
        result.append((loc, name))
    return result
