"""Strict settings, read-only zero-copy views, and the interpreter/venv story."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import gstwsi

BATCH, PATCH, PER_SLIDE = 8, 32, 8
ROOT = pathlib.Path(os.environ.get("WSI_SOURCE_ROOT",
                                   pathlib.Path(__file__).resolve().parents[2]))


def finite(slides, **kw):
    opts = dict(batch_size=BATCH, patch_size=PATCH, patches_per_slide=PER_SLIDE,
                threads=2, cycle=False, seed=3)
    opts.update(kw)
    return gstwsi.standard_pipeline(slides, **opts)


def settings_error(description):
    with pytest.raises(gstwsi.SettingsError) as info:
        gstwsi.BatchStream(description, torch=False)
    assert isinstance(info.value, ValueError)
    return info.value


# ---- strict settings ----------------------------------------------------------

def test_out_of_range_value_raises_instead_of_the_default(slides):
    description = finite(slides).replace(f"patch-size={PATCH}", "patch-size=4")
    err = settings_error(description)
    text = str(err)
    assert "patchsampler" in text and "patch-size=4" in text
    assert "out of range 8..8192" in text          # the ParamSpec's own range
    assert (err.element, err.property, err.value, err.allowed) == \
        ("patchsampler", "patch-size", "4", "8..8192")


def test_out_of_range_double(slides):
    err = settings_error(finite(slides).replace("target-mpp=0.5", "target-mpp=-1"))
    assert "patchsampler" in str(err) and "target-mpp=-1" in str(err)
    assert "0.0..1000.0" in str(err)


def test_nan_is_refused_in_python_and_by_the_element(slides):
    # Python: the keyword and the description, before anything runs
    with pytest.raises(gstwsi.SettingsError, match=r"target-mpp=nan is not a number"):
        gstwsi.standard_pipeline(slides, target_mpp=float("nan"))
    err = settings_error(finite(slides).replace("target-mpp=0.5", "target-mpp=nan"))
    assert err.property == "target-mpp"
    # the element itself (what gst-launch-1.0 and C applications meet): a
    # value GLib used to refuse with a warning while the element ran on
    from gi.repository import Gst
    sampler = Gst.ElementFactory.make("patchsampler", None)
    sampler.set_property("target-mpp", float("nan"))
    pipeline = Gst.Pipeline.new(None)
    pipeline.add(sampler)
    assert pipeline.set_state(Gst.State.READY) == Gst.StateChangeReturn.FAILURE
    message = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    error, _ = message.parse_error()
    assert 'target-mpp="nan" (accepted: a number from 0 to 1000)' in error.message
    assert message.src is sampler
    pipeline.set_state(Gst.State.NULL)


def test_typo_in_a_property_name(slides):
    err = settings_error(finite(slides).replace("patch-size=", "patch-sise="))
    text = str(err)
    assert "patchsampler" in text and "patch-sise" in text
    assert "did you mean patch-size" in text
    assert err.property == "patch-sise"


def test_unknown_enum_value_lists_the_values(slides):
    err = settings_error(finite(slides).replace("patchreader ", "patchreader backend=fast "))
    text = str(err)
    assert "patchreader" in text and "backend=fast" in text
    for nick in ("auto", "openslide", "tiff", "dicom"):
        assert nick in text
    assert err.allowed == "auto (0), openslide (1), tiff (2), dicom (3)"


def test_bad_boolean_and_read_only_property(slides):
    err = settings_error(finite(slides).replace("cycle=false", "cycle=maybe"))
    assert "wsislidesrc" in str(err) and "cycle=maybe" in str(err) and "true, false" in str(err)
    err = settings_error(finite(slides).replace("patchreader ", "patchreader patches-read=3 "))
    assert "patchreader" in str(err) and "read-only" in str(err)


def test_unknown_element_is_a_settings_error():
    err = settings_error("fakesrc ! patchsamplr ! appsink")
    assert "patchsamplr" in str(err)


def test_standard_pipeline_keywords_are_checked():
    # GStreamer is initialised (conftest): standard_pipeline checks at once
    with pytest.raises(gstwsi.SettingsError, match=r"patchsampler: patch-size=4 .*8\.\.8192"):
        gstwsi.standard_pipeline("/nonexistent", patch_size=4)
    with pytest.raises(gstwsi.SettingsError, match=r"patchreader: threads=1000 .*0\.\.64"):
        gstwsi.standard_pipeline("/nonexistent", threads=1000)
    with pytest.raises(gstwsi.SettingsError, match=r"wsislidesrc: slide-order=shuffled"):
        gstwsi.standard_pipeline("/nonexistent", slide_order="shuffled")


def test_valid_descriptions_still_work(slides):
    # quoted values with spaces and '!', enum nicks and numbers, hex, booleans
    gstwsi.validate_description(
        'wsislidesrc location="/a b ! c" slide-order=random cycle=TRUE ! '
        "patchreader backend=2 threads=0x4 ! queue leaky=downstream ! "
        "video/x-raw,format=(string)RGB ! appsink name=s")
    with gstwsi.BatchStream(finite(slides, slide_order="sequential"), torch=False) as stream:
        batches = list(stream)
    assert len(batches) == 5 * PER_SLIDE // BATCH
    assert batches[0].images.shape == (BATCH, PATCH, PATCH, 3)


# ---- read-only zero-copy views --------------------------------------------------

def test_zero_copy_numpy_batches_are_read_only(slides):
    with gstwsi.BatchStream(finite(slides), torch=False) as stream:
        batch = stream.next_batch()
        assert not batch.images.flags.writeable
        with pytest.raises(ValueError):
            batch.images[0, 0, 0, 0] = 1
        with pytest.raises(ValueError):
            batch.images.flags.writeable = True
        view = batch.images[1:]
        assert not view.flags.writeable


def test_copied_numpy_batches_are_writable(slides):
    with gstwsi.BatchStream(finite(slides), torch=False, copy=True) as stream:
        batch = stream.next_batch()
        assert batch.images.flags.writeable
        batch.images[:] = 0
        assert not batch.images.any()


def test_zero_copy_torch_path_still_works_without_warnings(slides, recwarn):
    torch = pytest.importorskip("torch")
    with gstwsi.BatchStream(finite(slides), torch=True) as stream:
        batch = stream.next_batch()
        assert isinstance(batch.images, torch.Tensor)
        assert batch.images.float().mean() > 0
        clone = batch.images.clone()
        clone.mul_(0)                       # the documented way to modify
        assert batch.images.float().mean() > 0
    assert not [w for w in recwarn if "not writable" in str(w.message)]


# ---- environments ----------------------------------------------------------------

SYSTEM_PYTHON = "/usr/bin/python3"


def test_import_without_gi_says_what_to_do(tmp_path):
    # a 'gi' that fails to import stands for an interpreter without PyGObject
    (tmp_path / "gi").mkdir()
    (tmp_path / "gi" / "__init__.py").write_text("raise ImportError('no gi here')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT / "python")]))
    proc = subprocess.run([sys.executable, "-c", "import gstwsi"], env=env,
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "/usr/bin/python3" in proc.stderr
    assert "--system-site-packages" in proc.stderr


def test_venv_with_system_site_packages_imports_gstwsi(tmp_path):
    if not os.path.exists(SYSTEM_PYTHON):
        pytest.skip(f"{SYSTEM_PYTHON} not found")
    venv_dir = tmp_path / "venv"
    made = subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages",
                           "--without-pip", str(venv_dir)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"the venv module is unavailable: {made.stderr.strip()[-200:]}")
    python = venv_dir / "bin" / "python"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    env.pop("GST_TRACERS", None)
    code = ("import sys, gstwsi; gstwsi.init(); "
            "from gstwsi.stream import Gst; "
            "assert sys.prefix != sys.base_prefix; "
            "assert Gst.ElementFactory.find('patchsampler') is not None; "
            "print(gstwsi.__file__)")
    proc = subprocess.run([str(python), "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().startswith(str(ROOT / "python"))
