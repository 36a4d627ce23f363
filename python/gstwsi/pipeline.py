"""`standard_pipeline`: the documented training pipeline as a description
string, from Python keywords.

The keyword table `_KEYWORDS` maps each keyword to one (element, property);
any other property of a stage is reached as ELEMENT_PROPERTY.  Values are
written as GStreamer's parser reads them and checked against the element's
own ParamSpec (gstwsi.settings), so a bad keyword or value raises
`SettingsError` naming it.  To add a keyword, add a line to `_KEYWORDS`
(and to the docstring of standard_pipeline and docs/python.md).
"""
import difflib
import numbers
import os
import pathlib
import re

from ._utils.gst import init
from .errors import SettingsError
from .settings import check_setting, class_specs, validate_description

__all__ = ["keyword_property", "standard_pipeline"]

# The elements of the standard pipeline, in order: the generic keyword rule
# ELEMENT_PROPERTY (e.g. patchreader_tile_cache_size=128) accepts these.
_STAGES = ("wsislidesrc", "tissuemask", "stainestimate", "patchsampler",
           "patchinterleave", "patchreader", "stainnorm", "patchbatch")

# standard_pipeline keyword -> (element, property).  Keywords whose property
# this build may lack (added with newer elements) are listed all the same:
# they are looked up in the element's ParamSpecs, so they work as soon as
# the property exists and raise SettingsError naming it until then.
_KEYWORDS = {
    # slides
    "cycle": ("wsislidesrc", "cycle"),
    "seed": ("wsislidesrc", "seed"),
    "slide_order": ("wsislidesrc", "slide-order"),
    "rank": ("wsislidesrc", "rank"),
    "world_size": ("wsislidesrc", "world-size"),
    "default_mpp": ("wsislidesrc", "default-mpp"),
    "tcga": ("wsislidesrc", "tcga"),
    "thumbnail_size": ("wsislidesrc", "thumbnail-size"),
    "annotations": ("wsislidesrc", "annotations"),
    # tissue
    "tissue_method": ("tissuemask", "method"),
    "saturation_threshold": ("tissuemask", "saturation-threshold"),
    "value_threshold": ("tissuemask", "value-threshold"),
    "value_floor": ("tissuemask", "value-floor"),
    "hue_min": ("tissuemask", "hue-min"),
    "hue_max": ("tissuemask", "hue-max"),
    "close_kernel": ("tissuemask", "close-kernel"),
    "median_kernel": ("tissuemask", "median-kernel"),
    "min_component_area": ("tissuemask", "min-component-area"),
    "min_hole_area": ("tissuemask", "min-hole-area"),
    "min_tissue_fraction": ("tissuemask", "min-tissue-fraction"),
    "mask_cache_size": ("tissuemask", "mask-cache-size"),
    "mask_cache_dir": ("tissuemask", "mask-cache-dir"),
    # sampling
    "patch_size": ("patchsampler", "patch-size"),
    "target_mpp": ("patchsampler", "target-mpp"),
    "patches_per_slide": ("patchsampler", "patches-per-slide"),
    "mode": ("patchsampler", "mode"),
    "target_mpps": ("patchsampler", "target-mpps"),
    "mpp_weights": ("patchsampler", "mpp-weights"),
    "mpp_min": ("patchsampler", "mpp-min"),
    "mpp_max": ("patchsampler", "mpp-max"),
    "mpp_distribution": ("patchsampler", "mpp-distribution"),
    "maxavg_lambda": ("patchsampler", "maxavg-lambda"),
    "min_tissue": ("patchsampler", "min-tissue"),
    "replacement": ("patchsampler", "replacement"),
    "stride": ("patchsampler", "stride"),
    "level": ("patchsampler", "level"),
    "align": ("patchsampler", "align"),
    "max_attempts": ("patchsampler", "max-attempts"),
    "max_patches": ("patchsampler", "max-patches"),
    "rank_quota": ("patchsampler", "rank-quota"),
    # sampling inside annotation regions (docs/annotations.md)
    "annotation_mode": ("patchsampler", "annotation-mode"),
    "annotation_classes": ("patchsampler", "annotation-classes"),
    "annotation_exclude": ("patchsampler", "annotation-exclude"),
    "min_annotation_coverage": ("patchsampler", "min-annotation-coverage"),
    "annotation_overlap": ("patchsampler", "annotation-overlap"),
    "class_balance": ("patchsampler", "class-balance"),
    "class_weights": ("patchsampler", "class-weights"),
    # pool of slides
    "pool_size": ("patchinterleave", "pool-size"),
    "patches_per_visit": ("patchinterleave", "patches-per-visit"),
    # reading
    "threads": ("patchreader", "threads"),
    "backend": ("patchreader", "backend"),
    "tile_cache_size": ("patchreader", "tile-cache-size"),
    "dct_scaling": ("patchreader", "dct-scaling"),
    "resample_tolerance": ("patchreader", "resample-tolerance"),
    "max_open_slides": ("patchreader", "max-open-slides"),
    "max_read_failures": ("patchreader", "max-read-failures"),
    # stain normalisation (with stain=...; docs/recipes/stain.md)
    "stain_method": ("stainnorm", "method"),
    "stain_reference": ("stainnorm", "reference"),
    "stain_estimate": ("stainnorm", "estimate"),
    "stain_min_tissue": ("stainnorm", "min-tissue"),
    "stain_augment_probability": ("stainnorm", "augment-probability"),
    "stain_augment_sigma": ("stainnorm", "augment-sigma"),
    "stain_randstain_probability": ("stainnorm", "randstain-probability"),
    "stain_randstain_spread": ("stainnorm", "randstain-spread"),
    # batching
    "batch_size": ("patchbatch", "batch-size"),
    "max_batches": ("patchbatch", "max-batches"),
    "drop_remainder": ("patchbatch", "drop-remainder"),
}

# Keywords that are not element properties.
_OWN_KEYWORDS = ("tissue", "prefetch", "sink", "cuda_upload", "stain")

# What cuda_upload=True puts between patchbatch and the appsink: a queue, so
# that batches are assembled in their own thread (docs/cuda.md), then the
# upload into CUDA memory.
_CUDA_UPLOAD = "queue max-size-buffers=2 max-size-bytes=0 max-size-time=0 ! wsicudaupload"


def keyword_property(keyword):
    """(element, property) that a standard_pipeline keyword sets, from the
    table or the generic rule ELEMENT_PROPERTY; None when it names neither."""
    if keyword in _KEYWORDS:
        return _KEYWORDS[keyword]
    for element in _STAGES:
        if keyword.startswith(element + "_") and len(keyword) > len(element) + 1:
            return element, keyword[len(element) + 1:].replace("_", "-")
    return None


def _value_text(value):
    """A Python value as GStreamer's parser reads it: booleans true/false,
    lists comma-separated ("0.25,0.5,1"), strings quoted when they must be."""
    if hasattr(value, "item") and not isinstance(value, (list, tuple)):
        value = value.item()            # numpy scalars
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        items = value.tolist() if hasattr(value, "tolist") else value
        return '"' + ",".join(_value_text(v).strip('"') for v in items) + '"'
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    if re.fullmatch(r"[A-Za-z0-9_.+:,/-]+", text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _unknown_keyword(keyword, value):
    names = list(_KEYWORDS) + list(_OWN_KEYWORDS) + ["location"]
    close = difflib.get_close_matches(keyword, names, n=3)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    return SettingsError(
        f"standard_pipeline: unknown keyword '{keyword}={value!r}'{hint}; use one of "
        f"{', '.join(sorted(names))}, or ELEMENT_PROPERTY for any property of "
        f"{', '.join(_STAGES)} (e.g. patchreader_tile_cache_size=128)",
        None, keyword, value, None)


def _check_keyword(keyword, factory, prop, text):
    """SettingsError when this build's `factory` lacks `prop` or `text` is
    outside its ParamSpec (needs GStreamer initialised)."""
    specs = class_specs(factory)
    if specs is None:
        raise SettingsError(f"{factory}: element not found (keyword {keyword}): "
                            f"is the gst-wsi plugin on GST_PLUGIN_PATH?",
                            factory, prop, text, None)
    if prop not in specs:
        close = difflib.get_close_matches(prop, list(specs), n=3)
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        why = ("it needs a newer gst-wsi" if keyword in _KEYWORDS
               else f"keyword {factory}_PROPERTY sets {factory}'s PROPERTY")
        raise SettingsError(
            f"{factory}: no property '{prop}' in this build{hint}, so keyword "
            f"{keyword}={text} cannot be set ({why})",
            factory, prop, text.strip('"'), None)
    try:
        check_setting(factory, prop, text.strip('"'))
    except SettingsError as exc:
        raise SettingsError(f"{exc} (keyword {keyword})", exc.element, exc.property,
                            exc.value, exc.allowed) from None


def standard_pipeline(location, *, batch_size=64, patch_size=224, target_mpp=None,
                      patches_per_slide=64, threads=2, pool_size=8,
                      patches_per_visit=4, cycle=True, seed=0, tissue=True,
                      prefetch=256, sink="sink", cuda_upload=False, mask_cache_dir=None,
                      stain=None, **settings):
    """The documented gst-wsi training pipeline as a description string.

    `location`: a slide, a folder, a list or manifest file, a patch store, or a
    URL — `http(s)://`, `s3://BUCKET/KEY`, `gs://BUCKET/KEY`, and `s3://` or
    `gs://` prefixes ending in `/`, listed like a folder (docs/remote.md).

    Every keyword sets one element property (table `_KEYWORDS`; `keyword_property(k)`
    tells which): slides `cycle seed slide_order rank world_size default_mpp
    tcga thumbnail_size annotations`; tissue `tissue_method saturation_threshold
    value_threshold value_floor hue_min hue_max close_kernel median_kernel
    min_component_area min_hole_area min_tissue_fraction mask_cache_size
    mask_cache_dir`;
    sampling `patch_size target_mpp patches_per_slide mode target_mpps
    mpp_weights mpp_min mpp_max mpp_distribution maxavg_lambda min_tissue
    replacement stride level align max_attempts max_patches rank_quota`;
    annotations `annotation_mode annotation_classes annotation_exclude
    min_annotation_coverage annotation_overlap class_balance class_weights`
    (lists such as `annotation_classes=["Tumor", "Stroma"]` allowed); pool
    `pool_size patches_per_visit`; reading `threads backend tile_cache_size
    dct_scaling resample_tolerance max_open_slides max_read_failures`;
    batching `batch_size max_batches drop_remainder`; stain normalisation
    (with `stain`) `stain_reference stain_estimate stain_min_tissue`, stain augmentation
    `stain_augment_probability stain_augment_sigma` (HED jitter on the slide's stains)
    `stain_randstain_probability stain_randstain_spread` (RandStainNA).  Any other property is
    reached as ELEMENT_PROPERTY (`patchreader_tile_cache_size=128`).  Lists
    (`target_mpps=[0.25, 0.5]`) become comma-separated strings.

    `tissue`: True (tissuemask with its default method), False (no
    tissuemask) or a method name (`"clam"`, same as `tissue_method`).
    `prefetch`: patches the queue before patchbatch holds (its own thread
    decouples the per-patch stages from batching); 0 = no queue:
    patchreader's output thread (or the last per-patch stage) pushes
    straight into patchbatch, one thread hand-off a patch fewer, and only
    the batches the sink holds run ahead (feature extraction reads so).
    `mask_cache_dir`: a folder where tissuemask keeps every slide's mask
    across runs (created if missing; None = off): runs after the first skip
    each local slide's overview read and mask (up to about 100 KB per slide,
    keyed by the slide file's size and mtime and the mask settings;
    docs/tissue.md).
    `cuda_upload`: True puts `wsicudaupload` before the appsink: batches
    arrive in CUDA memory and `BatchStream` yields them as torch CUDA tensors
    without a host round trip (needs ext/cuda, a GPU and gstwsi_cuda;
    docs/cuda.md).  Not for patch stores.
    `stain`: None (default: colours as read), "macenko", "vahadane" or "reinhard":
    `stainestimate` after tissuemask estimates each slide's stains once
    from its overview and `stainnorm` after patchreader maps every patch
    onto `stain_reference` (an image file; unset: torchstain's built-in
    Macenko target; Reinhard needs one), with the slide's estimate or,
    `stain_estimate="patch"`, each patch's own (docs/recipes/stain.md).
    Any stain keyword alone implies `stain="macenko"`.  stainnorm's augmentation
    draws are seeded by `seed` (unless `stainnorm_seed` is given).
    `target_mpp` defaults to 0.5, or 0 when `level` is given.  `target_mpps`
    alone implies `mode="multi-magnification"`, `mpp_min`/`mpp_max`
    `mode="continuous-magnification"`.  `rank`/`world_size` unset:
    wsislidesrc reads RANK/WORLD_SIZE itself.

    Every value is checked here, at the call: an unknown keyword, a property
    this build's element lacks, a value outside the property's ParamSpec or
    of the wrong type raises `SettingsError` naming the keyword, the value
    and what the element allows (its own ParamSpec: the range cannot drift
    from the C code).  Initialises GStreamer (`init()`; `init(monitor=True)`
    may still come later).
    """
    if mask_cache_dir is not None:
        if not isinstance(mask_cache_dir, (str, bytes, os.PathLike)):
            # str(5) would make a folder named "5" in the working directory
            raise TypeError(f"mask_cache_dir must be a path (str or os.PathLike), "
                            f"not {type(mask_cache_dir).__name__}: {mask_cache_dir!r}")
        settings["mask_cache_dir"] = os.fsdecode(mask_cache_dir)
    if is_patch_store(location):
        if cuda_upload:
            raise SettingsError(f"cuda_upload=True is not supported for a patch store "
                                f"({location})", "wsicudaupload", None, "True", None)
        settings.setdefault("epochs", 0 if cycle else 1)
        return store_pipeline(location, batch_size=batch_size, threads=threads, seed=seed,
                              prefetch=prefetch, sink=sink, **settings)
    tissue, target_mpp, settings = _implied_settings(tissue, target_mpp, settings)
    if stain is not None:
        settings["stain_method"] = stain
        # the slide branch estimates only what stainnorm applies
        settings.setdefault("stainestimate_methods", stain)
    if stain is not None or any((keyword_property(k) or ("",))[0] in ("stainnorm", "stainestimate")
                                for k in settings):
        # stainnorm's draws follow the stream's seed, as every other stage's
        settings.setdefault("stainnorm_seed", _number(seed, int))
    given = dict(cycle=cycle, seed=_number(seed, int), patch_size=patch_size,
                 target_mpp=_number(target_mpp, float),
                 patches_per_slide=patches_per_slide, pool_size=pool_size,
                 patches_per_visit=patches_per_visit, threads=threads,
                 batch_size=batch_size)
    for keyword, value in settings.items():
        if value is None:
            continue                  # None = leave the element's default
        if keyword_property(keyword) is None:
            raise _unknown_keyword(keyword, value)
        given[keyword] = value
    init()                            # the checks read the elements' ParamSpecs
    props = _stage_settings(given, tissue)
    if cuda_upload and class_specs("wsicudaupload") is None:
        raise SettingsError("cuda_upload=True needs the wsicudaupload element, which this "
                            "build lacks (ext/cuda is built only with the CUDA toolkit "
                            "headers; docs/cuda.md)", "wsicudaupload", None, "True", None)
    description = _describe_pipeline(location, props, tissue, _prefetch_text(prefetch),
                                     sink, cuda_upload)
    validate_description(description)
    return description


# What a patch store (patchstoresink) takes besides batch_size, threads, seed,
# cycle, prefetch and sink: keyword -> (element, property).
_STORE_KEYWORDS = {
    "order": ("patchstoresrc", "order"),
    "epochs": ("patchstoresrc", "epochs"),
    "rank": ("patchstoresrc", "rank"),
    "world_size": ("patchstoresrc", "world-size"),
    "allow_incomplete": ("patchstoresrc", "allow-incomplete"),
    "verify": ("patchstoresrc", "verify"),
    "max_batches": ("patchbatch", "max-batches"),
    "drop_remainder": ("patchbatch", "drop-remainder"),
}


def is_patch_store(location):
    """True when `location` is a patch store directory (it holds patchstoresink's
    manifest.json, or shards of an unfinished one: shard-00000.wsis)."""
    path = pathlib.Path(str(location))
    return path.is_dir() and ((path / "manifest.json").is_file()
                              or (path / "shard-00000.wsis").is_file())


def store_pipeline(location, *, batch_size=64, threads=2, seed=0, order="shuffle",
                   epochs=0, prefetch=256, sink="sink", **settings):
    """The training pipeline over a patch store (docs/data-formats.md, "Patch
    store"): patchstoresrc (shuffled per (seed, epoch), `epochs` 0 = for ever,
    `rank`/`world_size` from torchrun's RANK/WORLD_SIZE unless given) into
    patchbatch and an appsink, as a description string.  `standard_pipeline`
    returns this when its location is a store.  patchbatch_PROPERTY keywords
    (patchbatch_normalize=True) set patchbatch as for slides.  Slide-reading
    keywords (tissue, sampling, patch size) do not apply to a store: the
    patches are stored as they were extracted; giving one raises
    `SettingsError`."""
    loc = str(location).replace("\\", "\\\\").replace('"', '\\"')
    src = [f'location="{loc}"', f"threads={_value_text(threads)}",
           f"seed={_value_text(_number(seed, int))}", f"order={_value_text(order)}",
           f"epochs={_value_text(epochs)}"]
    batch = [f"batch-size={_value_text(batch_size)}"]
    for keyword, value in settings.items():
        if value is None:
            continue
        if keyword.startswith("patchbatch_") and len(keyword) > len("patchbatch_"):
            batch.append(f"{keyword[len('patchbatch_'):].replace('_', '-')}="
                         f"{_value_text(value)}")
            continue
        if keyword not in _STORE_KEYWORDS:
            raise SettingsError(f"{keyword}={value!r} does not apply to a patch store "
                                f"({location}): its patches were extracted with the "
                                "settings in its manifest.json", value=str(value),
                                allowed=", ".join(sorted(_STORE_KEYWORDS)))
        element, prop = _STORE_KEYWORDS[keyword]
        (src if element == "patchstoresrc" else batch).append(
            f"{prop}={_value_text(value)}")
    init()
    prefetch = _prefetch_text(prefetch)
    description = " ! ".join(
        ["patchstoresrc " + " ".join(src)]
        + ([f"queue max-size-buffers={prefetch} max-size-bytes=0 max-size-time=0"]
           if prefetch != "0" else [])
        + ["patchbatch " + " ".join(batch),
           f"appsink name={sink} sync=false max-buffers=2"])
    validate_description(description)
    return description


def _implied_settings(tissue, target_mpp, settings):
    """(tissuemask wanted, target_mpp, settings) with what the shortcut keywords imply:
    a method name as `tissue`, target_mpp's default (0.5, or 0 with
    `level`), the sampling mode that target_mpps or mpp_min/mpp_max need."""
    settings = dict(settings)
    if isinstance(tissue, str):
        settings.setdefault("tissue_method", tissue)
        tissue = True
    if target_mpp is None:
        target_mpp = 0 if settings.get("level") is not None else 0.5
    if "mode" not in settings:
        if "target_mpps" in settings:
            settings["mode"] = "multi-magnification"
        elif "mpp_min" in settings or "mpp_max" in settings:
            settings["mode"] = "continuous-magnification"
    return bool(tissue), target_mpp, settings


def _number(value, kind):
    """A number as `kind` (the seed as int, target_mpp as float, as the
    description always had them); anything else as given, for the
    ParamSpec check to refuse."""
    accepted = numbers.Integral if kind is int else numbers.Real
    if isinstance(value, accepted) and not isinstance(value, bool):
        return kind(value)
    return value


def _stage_settings(given, tissue):
    """{element: [(keyword, property, value text)]} of the keywords given,
    each checked against its element's ParamSpec."""
    props = {element: [] for element in _STAGES}
    for keyword, value in given.items():
        element, prop = keyword_property(keyword)
        if element == "tissuemask" and not tissue:
            raise SettingsError(f"standard_pipeline: {keyword}={value!r} needs tissuemask, "
                                f"but tissue=False leaves it out", element, prop, value, None)
        text = _value_text(value)
        _check_keyword(keyword, element, prop, text)
        props[element].append((keyword, prop, text))
    return props


def _prefetch_text(prefetch):
    """`prefetch` (patches the queue before patchbatch holds; 0: no queue) as
    checked text."""
    text = _value_text(prefetch)
    _check_keyword("prefetch", "queue", "max-size-buffers", text)
    return text


def _describe_pipeline(location, props, tissue, prefetch, sink, cuda_upload=False):
    """The description: each stage with its settings, in order."""
    def stage(element, first=""):
        words = [element] + ([first] if first else [])
        words += [f"{prop}={text}" for _, prop, text in props[element]]
        return " ".join(words)

    loc = str(location).replace("\\", "\\\\").replace('"', '\\"')
    # any stainnorm or stainestimate setting (stain=... sets the method)
    # brings both stages
    stain = bool(props["stainnorm"] or props["stainestimate"])
    parts = [stage("wsislidesrc", f'location="{loc}"')]
    if tissue:
        parts.append(stage("tissuemask"))
    if stain:
        parts.append(stage("stainestimate"))
    parts += ["queue max-size-buffers=4", stage("patchsampler"), stage("patchinterleave"),
              stage("patchreader")]
    if stain:
        parts.append(stage("stainnorm"))
    if prefetch != "0":
        parts.append(f"queue max-size-buffers={prefetch} max-size-bytes=0 max-size-time=0")
    parts.append(stage("patchbatch"))
    if cuda_upload:
        parts.append(_CUDA_UPLOAD)
    parts.append(f"appsink name={sink} sync=false max-buffers=2")
    return " ! ".join(parts)
