"""standard_pipeline keywords: each reaches its element property; unknown
keywords, missing properties and out-of-range values raise SettingsError."""
import subprocess
import sys

import pytest

import gstwsi
from gstwsi._utils.compat import enum_values
from gstwsi.pipeline import _KEYWORDS, keyword_property
from gstwsi.settings import FLOAT_TYPES, INT_TYPES, class_specs
from gstwsi.stream import GObject, Gst


LOCATION = "/nonexistent/slides"

# Properties whose values are text (lists): a value to set and how to read it back.
LIST_VALUES = {
    "target_mpps": [0.25, 0.5, 2.0],
    "mpp_weights": [1.0, 2.0, 3.0],
}
# Text properties: a value to set (a list where the property takes one) and
# the text read back.
TEXT_VALUES = {
    "annotations": ("/data/annotations", "/data/annotations"),
    "mask_cache_dir": ("/data/masks", "/data/masks"),
    "stain_reference": ("/data/reference.png", "/data/reference.png"),
    "annotation_classes": (["Tumor", "Stroma"], "Tumor,Stroma"),
    "annotation_exclude": (["Ignore", "Pen"], "Ignore,Pen"),
    "class_weights": ([1.0, 3.0], "1.0,3.0"),
}


def _element(description, factory):
    pipeline = Gst.parse_launch(description)
    it = pipeline.iterate_recurse()
    while True:
        res, elem = it.next()
        if res != Gst.IteratorResult.OK:
            break
        if elem.get_factory().get_name() == factory:
            return elem
    raise AssertionError(f"no {factory} in {description}")


def _other_value(spec, baseline):
    """A value of `spec` that differs from `baseline` (what the pipeline has
    without the keyword), so a keyword that does nothing fails the test."""
    fundamental = spec.value_type.fundamental
    if fundamental == GObject.TYPE_BOOLEAN:
        return not baseline
    if fundamental == GObject.TYPE_ENUM:
        for nick, _, _ in enum_values(spec):
            if nick != baseline:
                return nick
    if fundamental in (GObject.TYPE_DOUBLE, GObject.TYPE_FLOAT):
        step = min(1.0, (spec.maximum - spec.minimum) / 4)
        return baseline + step if baseline + step <= spec.maximum else baseline - step
    if fundamental in INT_TYPES:
        return baseline + 2 if baseline + 2 <= spec.maximum else baseline - 2
    raise AssertionError(f"no test value for {spec.name} ({spec.value_type.name})")


def _read_back(value):
    if isinstance(value, GObject.GEnum):
        return value.value_nick
    return value


def _floats(text):
    return [float(v) for v in str(text).split(",") if v.strip()]


@pytest.mark.parametrize("keyword", sorted(_KEYWORDS))
def test_keyword_reaches_its_property(keyword):
    factory, prop = keyword_property(keyword)
    specs = class_specs(factory)
    assert specs is not None, f"{factory} is not registered"
    spec = specs.get(prop)
    if spec is None:
        # Not in this build yet (being added): a clear error naming it.
        value = LIST_VALUES.get(keyword, 1)
        with pytest.raises(gstwsi.SettingsError) as info:
            gstwsi.standard_pipeline(LOCATION, **{keyword: value})
        assert f"no property '{prop}'" in str(info.value) and keyword in str(info.value)
        assert (info.value.element, info.value.property) == (factory, prop)
        return
    if keyword in TEXT_VALUES:
        value, text = TEXT_VALUES[keyword]
        elem = _element(gstwsi.standard_pipeline(LOCATION, **{keyword: value}), factory)
        assert elem.get_property(prop) == text
        return
    if keyword in LIST_VALUES:
        value = LIST_VALUES[keyword]
        elem = _element(gstwsi.standard_pipeline(LOCATION, **{keyword: value}), factory)
        assert _floats(elem.get_property(prop)) == value
        return
    # optional stages (stainnorm) are not in the default pipeline: their
    # element's own default is the baseline
    default = gstwsi.standard_pipeline(LOCATION)
    stages = [part.split()[0] for part in default.split("!")]
    owner = (_element(default, factory) if factory in stages
             else Gst.ElementFactory.make(factory, None))
    baseline = _read_back(owner.get_property(prop))
    value = _other_value(spec, baseline)
    description = gstwsi.standard_pipeline(LOCATION, **{keyword: value})
    got = _read_back(_element(description, factory).get_property(prop))
    if isinstance(value, float):
        assert got == pytest.approx(value), (keyword, description)
    else:
        assert got == value, (keyword, description)
    assert got != baseline


def test_generic_element_property_rule():
    assert keyword_property("patchinterleave_skip_patches") == ("patchinterleave", "skip-patches")
    elem = _element(gstwsi.standard_pipeline(LOCATION, patchinterleave_skip_patches=96),
                    "patchinterleave")
    assert elem.get_property("skip-patches") == 96
    with pytest.raises(gstwsi.SettingsError, match=r"patchreader: no property 'bogus-knob'"):
        gstwsi.standard_pipeline(LOCATION, patchreader_bogus_knob=1)


def test_tissue_takes_a_method_or_false():
    elem = _element(gstwsi.standard_pipeline(LOCATION, tissue="clam"), "tissuemask")
    assert elem.get_property("method").value_nick == "clam"
    assert "tissuemask" not in gstwsi.standard_pipeline(LOCATION, tissue=False)
    with pytest.raises(gstwsi.SettingsError, match="tissue=False"):
        gstwsi.standard_pipeline(LOCATION, tissue=False, saturation_threshold=20)


def test_level_alone_turns_target_mpp_off():
    elem = _element(gstwsi.standard_pipeline(LOCATION, level=1), "patchsampler")
    assert elem.get_property("level") == 1 and elem.get_property("target-mpp") == 0


def test_unknown_keyword_raises_with_a_suggestion():
    with pytest.raises(gstwsi.SettingsError) as info:
        gstwsi.standard_pipeline(LOCATION, min_tisue=0.5)
    text = str(info.value)
    assert "unknown keyword 'min_tisue=0.5'" in text and "did you mean min_tissue" in text
    assert info.value.property == "min_tisue"


@pytest.mark.parametrize("keyword,value,prop,allowed", [
    ("min_tissue", 1.5, "min-tissue", "0.0..1.0"),
    ("stride", -1, "stride", "0..2147483647"),
    ("threads", 65, "threads", "0..64"),
    ("saturation_threshold", 300, "saturation-threshold", "0..255"),
    ("default_mpp", 2000.0, "default-mpp", "0.0..1000.0"),
    ("pool_size", 0, "pool-size", "1..1024"),
])
def test_out_of_range_names_property_range_and_value(keyword, value, prop, allowed):
    with pytest.raises(gstwsi.SettingsError) as info:
        gstwsi.standard_pipeline(LOCATION, **{keyword: value})
    text = str(info.value)
    assert f"{prop}={value}" in text and allowed in text and keyword in text
    assert (info.value.property, info.value.allowed) == (prop, allowed)


def test_bad_enum_value_lists_the_values():
    with pytest.raises(gstwsi.SettingsError) as info:
        gstwsi.standard_pipeline(LOCATION, mode="spiral")
    assert "mode=spiral" in str(info.value) and "random" in str(info.value)


def _child(code, env):
    """Runs `code` in a fresh interpreter (GStreamer not initialised)."""
    proc = subprocess.run([sys.executable, "-c", code], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_values_are_checked_at_the_call_before_gstreamer_runs(example_env):
    # standard_pipeline checks its values itself, even in a process where
    # nothing initialised GStreamer yet: it raises at once, naming the
    # keyword, the value and the element's range.
    out = _child("import gstwsi\n"
                 "from gstwsi.stream import Gst\n"
                 "assert not Gst.is_initialized()\n"
                 "try:\n"
                 "    gstwsi.standard_pipeline('/nonexistent', patch_size=100000)\n"
                 "except gstwsi.SettingsError as e:\n"
                 "    print('refused:', e)\n"
                 "    print('fields:', e.property, e.value, e.allowed)\n", example_env)
    spec = class_specs("patchsampler")["patch-size"]
    allowed = f"{spec.minimum}..{spec.maximum}"
    assert "refused: patchsampler: patch-size=100000 is out of range " + allowed in out
    assert "(keyword patch_size)" in out
    assert f"fields: patch-size 100000 {allowed}" in out


def test_monitor_after_standard_pipeline_still_traces(example_env, slides):
    # standard_pipeline initialises GStreamer to check its values; a
    # BatchStream(monitor=True) made afterwards still gets the wsistats
    # tracer, and the tracer sees the stream's batches.
    out = _child("import gstwsi\n"
                 f"d = gstwsi.standard_pipeline({str(slides)!r}, batch_size=4, patch_size=32,\n"
                 "    patches_per_slide=4, cycle=False)\n"
                 "assert gstwsi.find_tracer() is None\n"
                 "with gstwsi.BatchStream(d, torch=False, monitor=True) as stream:\n"
                 "    n = sum(1 for _ in stream)\n"
                 "stats = gstwsi.find_tracer().emit('get-stats')\n"
                 "print('batches', n)\n"
                 "print('interval count', stats.get_value('batch-interval')"
                 ".get_value('count'))\n", example_env)
    batches = int(out.split("batches ")[1].split()[0])
    intervals = int(out.split("interval count ")[1].split()[0])
    assert batches >= 2 and intervals >= batches - 1, out


def test_monitor_is_refused_while_a_stream_plays(example_env, slides):
    # Making the tracer registers hooks that running pipelines call: not
    # while a stream plays (a warning, no tracer), fine once it stopped.
    out = _child("import warnings\n"
                 "import gstwsi\n"
                 f"d = gstwsi.standard_pipeline({str(slides)!r}, batch_size=4, patch_size=32,\n"
                 "    patches_per_slide=4, cycle=False)\n"
                 "stream = gstwsi.BatchStream(d, torch=False)\n"
                 "stream.next_batch()\n"
                 "with warnings.catch_warnings(record=True) as caught:\n"
                 "    warnings.simplefilter('always')\n"
                 "    print('while playing', gstwsi.init(monitor=True))\n"
                 "print('warned', any('stream is playing' in str(w.message) for w in caught))\n"
                 "stream.close()\n"
                 "print('after close', gstwsi.init(monitor=True))\n", example_env)
    assert "while playing False" in out and "warned True" in out, out
    assert "after close True" in out, out


def _numeric_keywords():
    """(keyword, element, property) of every table keyword whose property
    is an integer or floating-point number in this build."""
    found = []
    for keyword in sorted(_KEYWORDS):
        factory, prop = keyword_property(keyword)
        spec = (class_specs(factory) or {}).get(prop)
        if spec is not None and (spec.value_type.fundamental in INT_TYPES
                                 or spec.value_type.fundamental in FLOAT_TYPES):
            found.append((keyword, factory, prop))
    return found


def _element_spec(factory, prop):
    """The ParamSpec as an element instance reports it (not the module's cache)."""
    return Gst.ElementFactory.make(factory, None).find_property(prop)


@pytest.mark.parametrize("keyword,factory,prop", _numeric_keywords())
def test_range_is_the_elements_own(keyword, factory, prop):
    # The limits of the element's ParamSpec are accepted; one step past them
    # is refused with that same range (so the check cannot drift from the C
    # code: nothing in Python holds a copy of the range).
    spec = _element_spec(factory, prop)
    is_int = spec.value_type.fundamental in INT_TYPES
    allowed = f"{spec.minimum}..{spec.maximum}"
    for edge in (spec.minimum, spec.maximum):
        description = gstwsi.standard_pipeline(LOCATION, **{keyword: edge})
        assert f"{prop}=" in description
    above = spec.maximum + 1 if is_int else (spec.maximum * 2 or 1.0)
    below = spec.minimum - 1 if is_int else spec.minimum - max(1.0, abs(spec.minimum))
    for bad in (above, below):
        with pytest.raises(gstwsi.SettingsError) as info:
            gstwsi.standard_pipeline(LOCATION, **{keyword: bad})
        assert info.value.allowed == allowed and info.value.property == prop
        assert keyword in str(info.value) and allowed in str(info.value)


@pytest.mark.parametrize("keyword,value,why", [
    ("patch_size", "big", "is not an integer"),
    ("patch_size", 1.5, "is not an integer"),
    ("patch_size", [224, 256], "is not an integer"),
    ("seed", 2.5, "is not an integer"),
    ("batch_size", True, "is not an integer"),
    ("target_mpp", "fine", "is not a number"),
    ("min_tissue", "half", "is not a number"),
    ("cycle", "maybe", "is not a boolean"),
    ("drop_remainder", 2, "is not a boolean"),
    ("mode", 7, "is not one of"),
    ("prefetch", "lots", "is not an integer"),
])
def test_wrong_type_is_refused_at_the_call(keyword, value, why):
    with pytest.raises(gstwsi.SettingsError) as info:
        gstwsi.standard_pipeline(LOCATION, **{keyword: value})
    text = str(info.value)
    assert why in text and f"(keyword {keyword})" in text, text


@pytest.mark.parametrize("keyword,value", [
    ("patch_size", 8192), ("patch_size", "256"), ("seed", 2**64 - 1), ("min_tissue", 0),
    ("target_mpp", 2), ("cycle", False), ("mode", "grid"), ("prefetch", 0),
])
def test_values_in_range_pass(keyword, value):
    description = gstwsi.standard_pipeline(LOCATION, **{keyword: value})
    assert description.endswith("appsink name=sink sync=false max-buffers=2")


def test_prefetch_zero_means_no_queue_before_patchbatch(slides):
    """prefetch=N: a queue of N patches before patchbatch; 0: none (not an
    unbounded queue, GStreamer's meaning of max-size-buffers=0), and the
    stream is the same patches either way."""
    kw = dict(batch_size=4, patch_size=32, patches_per_slide=8, cycle=False, mode="grid",
              stride=64, default_mpp=0.25, threads=2)
    with_queue = gstwsi.standard_pipeline(slides, prefetch=16, **kw)
    without = gstwsi.standard_pipeline(slides, prefetch=0, **kw)
    assert "queue max-size-buffers=16" in with_queue
    assert "max-size-buffers=0" not in without
    assert without.count("queue") == with_queue.count("queue") - 1
    assert "patchreader threads=2 ! patchbatch" in without
    streams = []
    for description in (with_queue, without):
        with gstwsi.BatchStream(description, torch=False) as stream:
            batches = []
            for b in stream:
                records = b.records.copy()
                records["created_ns"] = 0       # a timestamp
                batches.append((records.tobytes(), b.images.tobytes()))
            streams.append(batches)
    assert streams[0] and streams[0] == streams[1]


def test_keywords_stream(slides):
    # a non-default setting of each stage, end to end
    description = gstwsi.standard_pipeline(
        slides, batch_size=4, patch_size=32, patches_per_slide=4, cycle=False,
        tissue="hsv", mode="grid", stride=64, min_tissue=0.25, default_mpp=0.25,
        backend="openslide", drop_remainder=True)
    with gstwsi.BatchStream(description, torch=False) as stream:
        batches = list(stream)
    assert batches and all(len(b) == 4 for b in batches)
    assert all(b.images.shape[1:] == (32, 32, 3) for b in batches)


def test_stain_keywords_and_seed():
    """stain= brings stainestimate and stainnorm, seeded by the stream's seed
    unless stainnorm_seed says otherwise; a stain keyword alone implies them."""
    assert "stainnorm" not in gstwsi.standard_pipeline(LOCATION, seed=9)
    elem = _element(gstwsi.standard_pipeline(LOCATION, stain="reinhard", seed=9,
                                             stain_randstain_probability=0.5), "stainnorm")
    assert elem.get_property("seed") == 9
    assert elem.get_property("method").value_nick == "reinhard"
    assert elem.get_property("randstain-probability") == 0.5
    elem = _element(gstwsi.standard_pipeline(LOCATION, seed=9, stainnorm_seed=4,
                                             stain_augment_probability=0.25), "stainnorm")
    assert elem.get_property("seed") == 4
    assert elem.get_property("augment-probability") == 0.25
    assert elem.get_property("method").value_nick == "macenko"
