"""gstwsi split by job (issue 18): each piece in its own module, and the
names that older code imports from gstwsi and gstwsi.stream still there."""
import importlib
import pathlib

import pytest

import gstwsi

# module -> names it owns (docs/python.md, "Modules")
HOMES = {
    "gstwsi.errors": ["ForkError", "PipelineError", "SettingsError"],
    "gstwsi._utils.gst": ["Gst", "GObject", "GLib", "init", "find_tracer", "timeline_slice",
                          "PULL_LANE", "check_fork"],
    "gstwsi._utils.buffers": ["live_mapped_buffers", "batch_arrays", "as_tensor"],
    "gstwsi._utils.elements": ["elements_of", "find_appsink"],
    "gstwsi.metadata": ["PATCH_RECORD", "VIEW_RECORD", "decode_metadata"],
    "gstwsi.batch": ["Batch"],
    "gstwsi.stream": ["BatchStream", "epoch_seed"],
    "gstwsi.settings": ["validate_description", "class_specs", "check_setting",
                        "parse_strict"],
    "gstwsi.pipeline": ["standard_pipeline", "keyword_property"],
}

# What gstwsi.stream exported before the split, used by docs, examples and tests.
OLD_STREAM_NAMES = ["PATCH_RECORD", "VIEW_RECORD", "Batch", "BatchStream", "ForkError",
                    "PipelineError", "SettingsError", "epoch_seed", "init", "find_tracer",
                    "standard_pipeline", "live_mapped_buffers", "validate_description",
                    "keyword_property", "timeline_slice", "PULL_LANE", "Gst", "GObject",
                    "GLib"]


@pytest.mark.parametrize("module", sorted(HOMES))
def test_each_job_has_its_module(module):
    mod = importlib.import_module(module)
    for name in HOMES[module]:
        obj = getattr(mod, name)
        home = getattr(obj, "__module__", None)
        if home is not None and home.startswith("gstwsi") and callable(obj):
            assert home == module, f"{name} lives in {home}, not {module}"


def test_old_imports_keep_working():
    stream = importlib.import_module("gstwsi.stream")
    for name in OLD_STREAM_NAMES:
        assert getattr(stream, name) is not None, name
    # one object, whichever way it is imported
    assert stream.BatchStream is gstwsi.BatchStream
    assert stream.SettingsError is gstwsi.SettingsError
    assert stream.standard_pipeline is gstwsi.standard_pipeline
    assert stream.Gst is importlib.import_module("gstwsi._utils.gst").Gst
    for name in gstwsi.__all__:
        assert getattr(gstwsi, name) is not None, name


def test_meson_installs_every_module():
    # python/meson.build lists the files it installs: a module added by the
    # split but missing there would import from the source tree and fail
    # once installed.
    package = pathlib.Path(gstwsi.__file__).parent
    listed = (package.parent / "meson.build").read_text()
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(package.parent).as_posix()
        assert f"'{name}'" in listed, f"{name} is not installed by python/meson.build"
