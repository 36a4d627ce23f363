"""wsi-preview: see what a pipeline configuration samples before training on it.

Runs the real pipeline (wsislidesrc ! tissuemask ! ... ! patchsampler !
patchinterleave ! patchreader ! patchbatch ! appsink) once over the slides,
with `cycle=false`, and writes under the output folder:

- `<slide>.png` per slide: its overview, the tissue mask outline and a box
  per sampled patch, coloured by the patch's output mpp, with a legend; with
  annotation regions (patchsampler annotation-mode), the region outlines by
  class and the boxes coloured by their patch's class instead;
- `contact-sheet.png`: the first decoded patches of every slide, one row per
  slide, each framed in its mpp colour and labelled with its mpp;
- `preview.json`: the description run, and per slide the file names, the
  level-0 -> overview scale, the records drawn and the sheet's cell positions.

The overview and mask are the slide buffers (application/x-wsi-slide) as
they reach patchsampler, read by a buffer probe on its sink pad, so the mask
shown is the one the sampler used; the boxes are the records of the patches
that reached the appsink (x, y, footprint in level-0 pixels, out_mpp as
patchreader wrote them).  Nothing is added to the pipeline.

Memory: one overview and mask per slide plus `columns` thumbnails per slide;
`max_slides` bounds it.
"""
import argparse
import json
import os
import pathlib
import re
import sys
import tempfile

import numpy as np

from ._utils.elements import elements_of
from ._utils.slidelist import is_zarr_store
from ._utils.gst import Gst
from .errors import PipelineError, SettingsError
from .pipeline import standard_pipeline
from .stream import BatchStream
from . import preview_draw

__all__ = ["collect", "main", "preview", "preview_description", "write_preview"]

SINK = "sink"

# The tail of a training pipeline, added after a fragment that stops early.
_TAIL = [("patchinterleave", "patchinterleave pool-size=8 patches-per-visit=4"),
         ("patchreader", "patchreader threads=2"),
         ("queue", "queue max-size-buffers=64 max-size-bytes=0 max-size-time=0"),
         ("patchbatch", "patchbatch batch-size=16")]


def _quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _factories(fragment):
    """Element names of a description fragment (first word of each link)."""
    names = []
    for link in re.split(r"!(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)", fragment):
        words = link.split()
        if words:
            names.append(words[0])
    return names


def preview_description(location, settings=None, fragment=None, source="", max_slides=None):
    """The pipeline a preview runs.

    `settings`: standard_pipeline keywords (cycle is forced off: one pass).
    `fragment`: instead, the elements between wsislidesrc and appsink, e.g.
    "tissuemask method=clam ! patchsampler mode=grid patch-size=224"; the
    missing tail (patchinterleave, patchreader, queue, patchbatch) is added.
    `source`: extra wsislidesrc properties in fragment mode.
    """
    if fragment is not None and settings:
        raise SettingsError("give either standard_pipeline settings or a pipeline fragment, "
                            "not both")
    if fragment is None:
        settings = dict(settings or {})
        settings["cycle"] = False
        settings.setdefault("sink", SINK)
        description = standard_pipeline(location, **settings)
        sink = settings["sink"]
    else:
        names = _factories(fragment)
        if "patchsampler" not in names:
            raise SettingsError(f"the pipeline fragment has no patchsampler: {fragment}")
        if "appsink" in names or "wsislidesrc" in names:
            raise SettingsError("the fragment is what goes between wsislidesrc and appsink "
                                f"(both are added): {fragment}")
        if re.search(r"(^|\s)cycle\s*=", source):
            raise SettingsError("a preview is one pass over the slides: leave cycle out of "
                                f"--source ({source})")
        present = [i for i, (name, _) in enumerate(_TAIL) if name in names and name != "queue"]
        start = max(present) + 1 if present else 0
        links = [f"wsislidesrc location={_quote(location)} cycle=false {source}".strip(),
                 fragment.strip()]
        links += [text for _, text in _TAIL[start:]]
        links.append(f"appsink name={SINK} sync=false max-buffers=2")
        description = " ! ".join(links)
        sink = SINK
    if max_slides:
        # wsislidesrc is a GstBaseSrc: num-buffers = slide visits before EOS
        description = description.replace("wsislidesrc ", f"wsislidesrc num-buffers={int(max_slides)} ", 1)
    return description, sink


# ---- collecting -------------------------------------------------------------

def _slide_from_buffer(buffer):
    """The slide description, overview and mask of an application/x-wsi-slide buffer."""
    meta = buffer.get_custom_meta("WsiSlideMeta")
    if meta is None:
        return None
    s = meta.get_structure()

    def get(name, default=None):
        return s.get_value(name) if s.has_field(name) else default

    ow, oh = int(get("overview-width", 0)), int(get("overview-height", 0))
    slide = {"path": get("path", ""), "index": int(get("index", 0)),
             "width": int(get("width", 0)), "height": int(get("height", 0)),
             "overview_width": ow, "overview_height": oh,
             "mpp": float(get("mpp-x", 0.0)), "mpp_source": get("mpp-source", ""),
             "vendor": get("vendor", ""), "backend": get("backend", ""),
             "label": get("label", "") or "",
             "tissue_fraction": float(get("tissue-fraction", -1.0)),
             "tissue_rejected": bool(get("tissue-rejected", False)),
             "overview": None, "mask": None}
    slide["regions"] = _regions(get)
    names = list(get("column-names") or [])
    values = list(get("column-values") or [])
    slide["stain"] = {n: v for n, v in zip(names, values) if n.startswith("stain-")}
    ok, info = buffer.map(Gst.MapFlags.READ)
    if not ok:
        return slide
    try:
        data = np.frombuffer(info.data, np.uint8)
        offset = 0
        if get("has-overview", False) and data.size >= ow * oh * 3:
            slide["overview"] = data[:ow * oh * 3].reshape(oh, ow, 3).copy()
            offset = ow * oh * 3
        if get("has-mask", False) and data.size >= offset + ow * oh:
            slide["mask"] = data[offset:offset + ow * oh].reshape(oh, ow).copy()
    finally:
        buffer.unmap(info)
    return slide


def _regions(get):
    """The annotation polygons of a slide meta (docs/data-formats.md):
    [(class name, [ring as an (n, 2) float64 array, ...]), ...]."""
    regions = get("annotation-regions")
    classes = list(get("annotation-classes") or [])
    if regions is None:
        return []
    data = regions.get_data() if hasattr(regions, "get_data") else bytes(regions)
    out, at = [], 0
    while at + 8 <= len(data):
        class_index, n_rings = np.frombuffer(data, np.uint32, 2, at)
        at += 8
        rings = []
        for _ in range(int(n_rings)):
            n_points = int(np.frombuffer(data, np.uint32, 1, at)[0])
            at += 8
            rings.append(np.frombuffer(data, np.float64, 2 * n_points, at).reshape(-1, 2))
            at += 16 * n_points
        name = classes[class_index] if class_index < len(classes) else ""
        out.append((name, rings))
    return out


def _sampled_classes(description):
    """annotation-classes of the description's patchsampler, or []."""
    found = re.search(r"annotation-classes=(\"[^\"]*\"|\S+)", description)
    if not found:
        return []
    return [c.strip() for c in found.group(1).strip('"').split(",") if c.strip()]


def collect(description, sink=SINK, columns=8, thumb=128, timeout=300.0):
    """Runs the description to EOS; returns (slides by index, records by
    slide index, sheet patches by slide index, warnings).  Each slide's
    `labels` lists its records' labels."""
    slides, records, sheet = {}, {}, {}
    labels = {}
    stream = BatchStream(description, sink=sink, torch=False, timeout=timeout)
    try:
        samplers = elements_of(stream.pipeline, "patchsampler")
        if not samplers:
            raise SettingsError("the pipeline has no patchsampler")

        def on_slide(pad, info):
            buffer = info.get_buffer()
            slide = _slide_from_buffer(buffer) if buffer is not None else None
            if slide is not None and slide["index"] not in slides:
                slides[slide["index"]] = slide      # first visit: has the overview
            return Gst.PadProbeReturn.OK

        for sampler in samplers:
            sampler.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, on_slide)
        for batch in stream:
            for i, record in enumerate(batch.records):
                index = int(record["slide_index"])
                records.setdefault(index, []).append(record.copy())
                labels.setdefault(index, []).append(batch.labels[i])
                kept = sheet.setdefault(index, [])
                if len(kept) < columns:
                    kept.append((_small(batch.images[i], thumb), record.copy()))
                if index not in slides:
                    slides[index] = {"path": batch.paths[i], "index": index}
        warnings = list(stream.warnings)
        for index, slide in slides.items():
            slide["labels"] = labels.get(index, [])
            slide["sampled_classes"] = _sampled_classes(description)
    except PipelineError as exc:
        exc.warnings = list(stream.warnings)    # the reasons behind the error
        raise
    finally:
        stream.close()
    return slides, records, sheet, warnings


def _small(pixels, thumb):
    """A copy of a patch, area-reduced by a whole factor when over `thumb`."""
    pixels = np.asarray(pixels)
    factor = max(1, -(-pixels.shape[0] // thumb))
    if factor > 1:
        h = pixels.shape[0] // factor * factor
        w = pixels.shape[1] // factor * factor
        pixels = pixels[:h, :w].reshape(h // factor, factor, w // factor, factor, -1) \
            .mean(axis=(1, 3)).round().astype(np.uint8)
    return np.array(pixels, copy=True)


# ---- writing ----------------------------------------------------------------

def _display_names(slides):
    """Slide index -> its path relative to the folder all slides share
    (a/slide-00.tiff and b/slide-00.tiff stay apart), or its file name."""
    paths = {i: s.get("path") or str(i) for i, s in slides.items()}
    folders = [os.path.dirname(p) for p in paths.values()]
    try:
        common = os.path.commonpath(folders) if len(folders) > 1 else folders[0]
    except ValueError:                 # relative and absolute mixed
        common = ""
    return {i: os.path.relpath(p, common) if common else os.path.basename(p)
            for i, p in paths.items()}


def _stem(name, index, used):
    """A file name for the slide's PNG: its display name, made safe."""
    stem = os.path.splitext(name)[0]
    stem = re.sub(r"[^A-Za-z0-9.-]+", "_", stem).strip("._") or f"slide-{index}"
    if stem in used:
        stem = f"{stem}-{index}"
    used.add(stem)
    return stem


def _caption(slide, n):
    parts = [f"{slide['width']}x{slide['height']} px"]
    if slide.get("mpp", 0) > 0:
        parts.append(f"{slide['mpp']:.4g} µm/px ({slide.get('mpp_source', '')})")
    else:
        parts.append("mpp unknown")
    if slide.get("tissue_fraction", -1) >= 0:
        parts.append(f"tissue {slide['tissue_fraction']:.1%}")
    parts.append(f"{n} patches")
    if slide.get("label"):
        parts.append(f"label {slide['label']}")
    return ", ".join(parts)


def _note(slide, n, warnings):
    if n:
        return ""
    lines = ["no patch sampled"]
    if slide.get("tissue_rejected"):
        lines.append("(tissue-rejected: too little tissue)")
    elif slide.get("mpp", 0) <= 0:
        lines.append("(slide mpp unknown: try default-mpp)")
    name = os.path.basename(slide.get("path", ""))
    lines += [w for w in warnings if name and name in w][:1]
    return "\n".join(lines)


def write_preview(outdir, description, slides, records, sheet, warnings, columns=8, thumb=128):
    """Draws and writes the PNGs and preview.json; returns the summary dict."""
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    every = [r["out_mpp"] for rs in records.values() for r in rs]
    colours = preview_draw.MppColours(every)
    sampled = next((s.get("sampled_classes") for s in slides.values()
                    if s.get("sampled_classes")), [])
    classes = preview_draw.ClassColours(sampled)
    used, summary = set(), {"description": description, "warnings": warnings, "slides": []}
    names = _display_names(slides)
    for index in sorted(slides):
        slide = slides[index]
        recs = records.get(index, [])
        entry = {"index": index, "path": slide.get("path", ""),
                 "patches": [[int(r["x"]), int(r["y"]), int(r["footprint"]),
                              float(r["out_mpp"])] for r in recs]}
        if slide.get("regions"):
            entry["labels"] = list(slide.get("labels", []))
            entry["class_colours"] = {name: list(classes.colour(name, name in sampled))
                                      for name, _ in slide["regions"]}
        if "width" in slide and slide.get("overview_width", 0) > 0 and slide["width"] > 0:
            stem = _stem(names[index], index, used)
            slide["name"] = names[index]
            slide["caption"] = _caption(slide, len(recs))
            image, layout = preview_draw.draw_slide(slide, recs, colours,
                                                    _note(slide, len(recs), warnings),
                                                    slide.get("labels"), classes)
            image.save(outdir / f"{stem}.png", optimize=True)
            stain_png = _write_stain(outdir, stem, slide, description)
            if stain_png:
                entry["stain_png"] = stain_png
            entry.update(png=f"{stem}.png", origin=layout["origin"], scale=layout["scale"],
                         overview_size=layout["overview_size"], width=slide["width"],
                         height=slide["height"], mpp=slide.get("mpp", 0.0),
                         tissue_fraction=slide.get("tissue_fraction", -1.0),
                         colours={mpp_key(v): list(colours.colour(v)) for v in
                                  {float(r["out_mpp"]) for r in recs}})
        summary["slides"].append(entry)
    rows = [(names.get(i, str(i)), sheet[i])
            for i in sorted(sheet) if sheet[i]]
    # the reduced patch side (patches keep their own size up to `thumb`)
    side = max((p.shape[0] for _, kept in rows for p, _ in kept), default=thumb)
    image, layout = preview_draw.draw_contact_sheet(rows, colours, columns, side)
    image.save(outdir / "contact-sheet.png", optimize=True)
    summary["contact_sheet"] = dict(layout, png="contact-sheet.png")
    summary["continuous_colours"] = bool(colours.continuous)
    with open(outdir / "preview.json", "w") as f:
        json.dump(summary, f, indent=1)
    return summary


def _stainnorm_settings(description):
    """(method, reference path or None) of the description's stainnorm, or
    None when it has none."""
    link = next((part for part in description.split("!")
                 if part.split() and part.split()[0] == "stainnorm"), None)
    if link is None:
        return None
    method = re.search(r"\bmethod=(\S+)", link)
    ref = re.search(r'\breference=("(?:[^"\\]|\\.)*"|\S+)', link)
    path = ref.group(1).strip('"').replace('\\"', '"').replace("\\\\", "\\") if ref else None
    return (method.group(1) if method else "macenko"), path


def _write_stain(outdir, stem, slide, description):
    """STEM-stain.png: the overview before and after stainnorm's mapping
    (NumPy, the slide's estimate) next to the target; None when the
    pipeline has no stainnorm or the slide no estimate."""
    from PIL import Image
    from ._utils import stain
    settings = _stainnorm_settings(description)
    if settings is None or slide.get("overview") is None or not slide.get("stain"):
        return None
    method, path = settings
    reference = np.asarray(Image.open(path).convert("RGB")) if path else None
    after = stain.normalise(slide["overview"], slide["stain"], method,
                            stain.target(method, reference))
    if after is None:
        return None
    image = preview_draw.draw_stain(slide.get("name", stem), slide["overview"], after,
                                    reference, method)
    image.save(outdir / f"{stem}-stain.png", optimize=True)
    return f"{stem}-stain.png"


def mpp_key(mpp):
    """preview.json's key for an out_mpp (4 decimals, as colours group them)."""
    return f"{round(float(mpp), 4):.4f}"


def preview(location, outdir, settings=None, fragment=None, source="", max_slides=16,
            columns=8, thumb=128):
    """Runs the pipeline over `location` and writes the preview; returns the summary."""
    description, sink = preview_description(location, settings, fragment, source, max_slides)
    slides, records, sheet, warnings = collect(description, sink, columns, thumb)
    return write_preview(outdir, description, slides, records, sheet, warnings, columns, thumb)


# ---- command line -----------------------------------------------------------

def _parse_value(text):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if "," in text:
        try:
            return [float(v) for v in text.split(",")]
        except ValueError:
            pass
    return text


def _settings(pairs):
    settings = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SettingsError(f"--set needs KEY=VALUE, got '{pair}'")
        settings[key.strip().replace("-", "_")] = _parse_value(value.strip())
    return settings


def _is_url(location):
    """A location wsislidesrc reads remotely: http(s)://, s3://, gs:// (docs/remote.md)."""
    scheme, sep, _ = str(location).partition("://")
    return bool(sep) and scheme.lower() in ("http", "https", "s3", "gs")


def _location(paths, tmpdir):
    """One wsislidesrc location: the path or URL itself, or a list file of several
    (slide files and slide URLs; a list may name URLs)."""
    if len(paths) == 1:
        return paths[0]
    for p in paths:
        if not _is_url(p) and not os.path.isfile(p) and not is_zarr_store(p):
            raise SettingsError(f"{p}: several slides must be files or URLs (give one "
                                f"folder, prefix or list file alone)")
    listing = os.path.join(tmpdir, "slides.txt")
    with open(listing, "w") as f:
        f.write("".join((p if _is_url(p) else os.path.abspath(p)) + "\n" for p in paths))
    return listing


def _count(n, singular, plural=None):
    """'1 slide', '3 slides'."""
    return f"{n} {singular if n == 1 else plural or singular + 's'}"


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="wsi-preview",
        description="Run a gst-wsi pipeline once over slides and draw what it samples: per "
                    "slide the overview, the tissue mask outline and the patch positions "
                    "(boxes coloured by output mpp), plus a contact sheet of decoded patches.",
        epilog="examples:\n"
               "  wsi-preview -o preview/ slides/ --set patch_size=224 --set target_mpp=0.5\n"
               "  wsi-preview -o preview/ train.txt --set tissue=clam --set mode=grid "
               "--set patches_per_slide=-1\n"
               "  wsi-preview -o preview/ slide.svs --pipeline "
               "'tissuemask method=hsv ! patchsampler patch-size=256 target-mpp=1'",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("slides", nargs="+", help="a slide, a folder (searched recursively), "
                        "a list or manifest file, or several slide files; any of them may be "
                        "a URL (http(s)://, s3://, gs://; an s3:// or gs:// prefix ending in / "
                        "is listed like a folder)")
    parser.add_argument("-o", "--output", default="wsi-preview", help="output folder "
                        "(default ./wsi-preview)")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE",
                        help="a gstwsi.standard_pipeline keyword (patch_size=224, "
                        "tissue=clam, min_tissue=0.75, target_mpps=0.25,0.5,1, ...); repeat")
    parser.add_argument("--pipeline", metavar="FRAGMENT", help="instead of --set: the "
                        "elements between wsislidesrc and appsink, e.g. 'tissuemask method=clam "
                        "! patchsampler patch-size=224'; a missing patchinterleave ! "
                        "patchreader ! queue ! patchbatch tail is added")
    parser.add_argument("--source", default="", metavar="PROPS",
                        help="with --pipeline: wsislidesrc properties, e.g. 'default-mpp=0.25 seed=3'")
    parser.add_argument("--max-slides", type=int, default=16,
                        help="slides previewed (default 16; 0 = all)")
    parser.add_argument("--columns", type=int, default=8,
                        help="patches per slide on the contact sheet (default 8)")
    parser.add_argument("--thumb", type=int, default=128,
                        help="largest side of a contact-sheet patch in pixels (default 128)")
    args = parser.parse_args(argv)
    if args.columns < 1 or args.thumb < 8 or args.max_slides < 0:
        parser.error("--columns must be >= 1, --thumb >= 8, --max-slides >= 0")
    with tempfile.TemporaryDirectory(prefix="wsi-preview-") as tmpdir:
        try:
            location = _location(args.slides, tmpdir)
            summary = preview(location, args.output, _settings(args.set), args.pipeline,
                              args.source, args.max_slides or None, args.columns, args.thumb)
        except (SettingsError, PipelineError, TimeoutError) as exc:
            for warning in getattr(exc, "warnings", []):
                print(f"wsi-preview: warning: {warning}", file=sys.stderr)
            print(f"wsi-preview: {exc}", file=sys.stderr)
            return 1
    for warning in summary["warnings"]:
        print(f"wsi-preview: warning: {warning}", file=sys.stderr)
    for entry in summary["slides"]:
        where = entry.get("png", "(no overview)")
        print(f"{where}: {entry['path']}: {_count(len(entry['patches']), 'patch', 'patches')}")
    rows, columns = summary["contact_sheet"]["rows"], summary["contact_sheet"]["columns"]
    print(f"contact-sheet.png: {_count(rows, 'slide')} x up to "
          f"{_count(columns, 'patch', 'patches')}; preview.json")
    if not summary["slides"]:
        print("wsi-preview: no slide reached patchsampler", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
