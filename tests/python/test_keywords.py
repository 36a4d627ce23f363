"""standard_pipeline keywords: each reaches its element property; unknown
keywords, missing properties and out-of-range values raise SettingsError."""
import subprocess
import sys

import pytest

import gstwsi
from gstwsi.pipeline import _KEYWORDS, keyword_property
from gstwsi.settings import INT_TYPES, class_specs
from gstwsi.stream import GObject, Gst


LOCATION = "/nonexistent/slides"

# Properties whose values are text (lists): a value to set and how to read it back.
LIST_VALUES = {
    "target_mpps": [0.25, 0.5, 2.0],
    "mpp_weights": [1.0, 2.0, 3.0],
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
        for value in spec.enum_class.__enum_values__.values():
            if value.value_nick != baseline:
                return value.value_nick
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
    if keyword in LIST_VALUES:
        value = LIST_VALUES[keyword]
        elem = _element(gstwsi.standard_pipeline(LOCATION, **{keyword: value}), factory)
        assert _floats(elem.get_property(prop)) == value
        return
    baseline = _read_back(_element(gstwsi.standard_pipeline(LOCATION), factory).get_property(prop))
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


def test_checks_wait_for_gstreamer_when_it_is_not_initialised(example_env):
    # monitor=True needs GStreamer uninitialised until BatchStream: the string
    # is built unchecked, and BatchStream refuses it with the same error.
    code = ("import gstwsi\n"
            "from gstwsi.stream import Gst\n"
            "d = gstwsi.standard_pipeline('/nonexistent', min_tissue=2)\n"
            "assert not Gst.is_initialized() and 'min-tissue=2' in d\n"
            "try:\n"
            "    gstwsi.BatchStream(d, torch=False)\n"
            "except gstwsi.SettingsError as e:\n"
            "    print('refused:', e)\n")
    proc = subprocess.run([sys.executable, "-c", code], env=example_env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "refused: patchsampler: min-tissue=2 is out of range 0.0..1.0" in proc.stdout


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
