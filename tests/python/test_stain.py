"""stainestimate and stainnorm against the published equations, written here
again in NumPy: Reinhard et al. 2001 in Ruderman's l-alpha-beta space, and
Macenko et al. 2009 with torchstain's defaults (Io 240, beta 0.15, alpha 1,
99th-percentile concentrations). The eigenvectors' signs are fixed as the C
code documents (numpy's eigh leaves them arbitrary)."""
import hashlib

import numpy as np
import pytest

import gstwsi
from gstwsi.stream import Gst

PIL = pytest.importorskip("PIL.Image")

IO, BETA, ALPHA = 240.0, 0.15, 1.0
HE_REF = np.array([[0.5626, 0.2159], [0.7201, 0.8012], [0.4062, 0.5581]])
MAXC_REF = np.array([1.9705, 1.0308])
RGB2LMS = np.array([[0.3811, 0.5783, 0.0402],
                    [0.1967, 0.7244, 0.0782],
                    [0.0241, 0.1288, 0.8444]])
# Reinhard et al.'s two lab matrices, as printed.
LAB = np.diag([1 / np.sqrt(3), 1 / np.sqrt(6), 1 / np.sqrt(2)]) @ np.array(
    [[1, 1, 1], [1, 1, -2], [1, -1, 0]])
LAB_INV = np.array([[1, 1, 1], [1, 1, -1], [1, -2, 0]]) @ np.diag(
    [np.sqrt(3) / 3, np.sqrt(6) / 6, np.sqrt(2) / 2])


# ---- the reference implementation ----------------------------------------

def np_lab(pixels):
    lms = pixels.reshape(-1, 3).astype(np.float64) @ RGB2LMS.T
    return np.log10(np.maximum(lms, 1.0)) @ LAB.T


def np_lab_stats(pixels):
    x = np_lab(pixels)
    return x.mean(axis=0), x.std(axis=0)


def np_reinhard(img, src, ref):
    x = np_lab(img)
    y = (x - src[0]) / src[1] * ref[1] + ref[0]
    lms = 10.0 ** (y @ LAB_INV.T)
    rgb = lms @ np.linalg.inv(RGB2LMS).T
    return np.clip(np.round(rgb), 0, 255).reshape(img.shape).astype(np.uint8)


def _fix_sign(v):
    s = v.sum()
    return -v if s < 0 else v


def np_macenko(pixels):
    """(HE 3x2, maxC 2) of pixels (N x 3) as torchstain computes them."""
    pixels = pixels.reshape(-1, 3).astype(np.float64)
    od = -np.log((pixels + 1) / IO)
    odhat = od[~np.any(od < BETA, axis=1)]
    _, vecs = np.linalg.eigh(np.cov(odhat.T))
    e_mid, e_big = _fix_sign(vecs[:, 1]), _fix_sign(vecs[:, 2])
    plane = np.stack([e_mid, e_big], axis=1)
    that = odhat @ plane
    phi = np.arctan2(that[:, 1], that[:, 0])
    lo, hi = np.percentile(phi, ALPHA), np.percentile(phi, 100 - ALPHA)
    vmin = plane @ np.array([np.cos(lo), np.sin(lo)])
    vmax = plane @ np.array([np.cos(hi), np.sin(hi)])
    he = np.stack([vmin, vmax] if vmin[0] > vmax[0] else [vmax, vmin], axis=1)
    c = np.linalg.lstsq(he, od.T, rcond=None)[0]
    return he, np.array([np.percentile(c[0], 99), np.percentile(c[1], 99)])


def np_macenko_apply(img, src, ref):
    he, maxc = src
    od = -np.log((img.reshape(-1, 3).astype(np.float64) + 1) / IO)
    c = np.linalg.lstsq(he, od.T, rcond=None)[0]
    c2 = c / (maxc / ref[1])[:, None]
    out = np.minimum(IO * np.exp(-ref[0] @ c2), 255)
    return out.T.reshape(img.shape).astype(np.uint8)


# ---- images -----------------------------------------------------------------

def synthetic_he(seed, size=224, he=None, glass=0.3):
    """An H&E-like image: smooth random H and E concentrations on the stain
    vectors `he` (3x2), with a share `glass` of background."""
    rng = np.random.default_rng(seed)
    he = HE_REF if he is None else he
    k = 8
    coarse = rng.gamma(2.0, 0.5, size=(2, k, k))
    idx = np.arange(size) * k // size
    c = coarse[:, idx][:, :, idx] * rng.uniform(0.7, 1.3, size=(2, size, size))
    c[:, :, : int(size * glass)] *= 0.02
    od = np.einsum("sk,khw->hws", he, c)
    img = IO * np.exp(-od) + rng.normal(0, 2, size=od.shape)
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


def normalise(v):
    return v / np.linalg.norm(v)


# Source stains unlike the reference's: a lab with purple H and pink E.
HE_SRC = np.stack([normalise(np.array([0.70, 0.65, 0.30])),
                   normalise(np.array([0.10, 0.85, 0.50]))], axis=1)


@pytest.fixture(scope="module")
def reference_png(tmp_root):
    path = tmp_root / "stain-reference.png"
    PIL.fromarray(synthetic_he(99, size=256)).save(path)
    return path


def pull_samples(pipeline, timeout):
    """The samples appsink "sink" of the PLAYING `pipeline` gives until EOS
    (or until an error ends the stream, or `timeout` seconds pass without
    one)."""
    sink = pipeline.get_by_name("sink")
    samples = []
    while True:
        sample = sink.emit("try-pull-sample", timeout * Gst.SECOND)
        if sample is None:
            return samples
        samples.append(sample)


def push_images(images, element):
    """Pushes images (each HxWx3 uint8, buffer offsets 0, 1, ...) from an
    appsrc through the `element` description into an appsink and pulls
    until EOS (or an error ends the stream); (outputs, pipeline), the
    pipeline still PLAYING so that its properties and bus can be read: the
    caller sets it to NULL."""
    h, w = images[0].shape[:2]
    pipeline = Gst.parse_launch(
        f"appsrc name=src format=bytes caps=video/x-raw,format=RGB,width={w},height={h},"
        f"framerate=0/1 ! {element} ! appsink name=sink sync=false")
    src = pipeline.get_by_name("src")
    pipeline.set_state(Gst.State.PLAYING)
    for i, img in enumerate(images):
        buf = Gst.Buffer.new_wrapped(img.tobytes())
        buf.offset = i
        src.emit("push-buffer", buf)
    src.emit("end-of-stream")
    out = []
    for sample in pull_samples(pipeline, 20):
        buf = sample.get_buffer()
        out.append(np.frombuffer(buf.extract_dup(0, buf.get_size()),
                                 np.uint8).reshape(h, w, 3))
    return out, pipeline


def run_patches(images, settings):
    """Pushes images (each HxWx3 uint8) through stainnorm; (outputs, counts)."""
    out, pipeline = push_images(images, f"stainnorm name=norm {settings}")
    msg = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    norm = pipeline.get_by_name("norm")
    counts = {k: norm.get_property(f"patches-{k}")
              for k in ("slide", "patch", "fallback", "unchanged")}
    pipeline.set_state(Gst.State.NULL)
    assert msg is None, msg.parse_error()
    assert len(out) == len(images)
    return out, counts


# ---- per-patch estimates against NumPy ---------------------------------------

def test_macenko_per_patch_matches_torchstain_equations():
    images = [synthetic_he(s, he=HE_SRC) for s in range(6)]
    out, counts = run_patches(images, "method=macenko estimate=patch threads=2")
    assert counts["patch"] == 6
    diffs = []
    for img, got in zip(images, out):
        want = np_macenko_apply(img, np_macenko(img), (HE_REF, MAXC_REF))
        diffs.append(np.abs(got.astype(int) - want).mean())
        # the patch did change: far from the input
        assert np.abs(got.astype(int) - img).mean() > 5
    assert max(diffs) <= 1.0, diffs


def test_reinhard_per_patch_matches_lab_equations(reference_png):
    ref_img = np.asarray(PIL.open(reference_png).convert("RGB"))
    ref = np_lab_stats(ref_img)
    images = [synthetic_he(s, he=HE_SRC) for s in range(4)]
    out, counts = run_patches(images, f"method=reinhard estimate=patch "
                                      f"reference={reference_png}")
    assert counts["patch"] == 4
    for img, got in zip(images, out):
        want = np_reinhard(img, np_lab_stats(img), ref)
        assert np.abs(got.astype(int) - want).mean() <= 0.5
        assert np.abs(got.astype(int) - img).mean() > 2


def test_macenko_reference_file_is_the_target(reference_png):
    ref_img = np.asarray(PIL.open(reference_png).convert("RGB"))
    target = np_macenko(ref_img)
    img = synthetic_he(3, he=HE_SRC)
    (got,), _ = run_patches([img], f"method=macenko estimate=patch reference={reference_png}")
    want = np_macenko_apply(img, np_macenko(img), target)
    assert np.abs(got.astype(int) - want).mean() <= 1.0


@pytest.mark.parametrize("suffix,options", [
    (".png", {}), (".jpg", {"quality": 95}), (".tif", {}),
    (".tif", {"compression": "tiff_lzw"}), (".tiff", {"compression": "tiff_adobe_deflate"})])
def test_reference_file_formats(tmp_root, suffix, options):
    """reference= PNG, JPEG and TIFF (plain, LZW, deflate): the target is the
    statistics of the pixels PIL decodes from the same file."""
    path = tmp_root / f"stain-ref-{len(options)}-{options.get('compression', 'q')}{suffix}"
    PIL.fromarray(synthetic_he(98, size=128)).save(path, **options)
    ref = np_lab_stats(np.asarray(PIL.open(path).convert("RGB")))
    img = synthetic_he(4, he=HE_SRC)
    (got,), _ = run_patches([img], f"method=reinhard estimate=patch reference={path}")
    want = np_reinhard(img, np_lab_stats(img), ref)
    # JPEG: GStreamer upsamples the 4:2:0 chroma unlike libjpeg's "fancy"
    # upsampling PIL uses, so the reference's statistics differ a little
    limit = 2.0 if suffix == ".jpg" else 0.5
    assert np.abs(got.astype(int) - want).mean() <= limit
    assert np.abs(got.astype(int) - img).mean() > 2


def test_glass_black_single_colour_and_pen_never_fail():
    glass = np.full((224, 224, 3), 245, np.uint8)
    black = np.zeros((224, 224, 3), np.uint8)
    single = np.empty((224, 224, 3), np.uint8)
    single[:] = (150, 80, 160)
    pen = glass.copy()
    pen[60:90] = (40, 90, 200)          # blue ink
    pen[120:130] = (30, 140, 60)        # green ink
    images = [glass, black, single, pen]
    for method in ("macenko", "reinhard"):
        settings = f"method={method} estimate=patch min-tissue=0"
        if method == "reinhard":
            settings += " reference=" + str(_reference_for_reinhard())
        out, counts = run_patches(images, settings)
        # glass, black and one colour have no estimate and no slide's: unchanged
        for img, got in zip(images[:3], out[:3]):
            assert np.array_equal(img, got)
        assert counts["unchanged"] >= 3
        assert counts["unchanged"] + counts["patch"] == 4


_REF_CACHE = {}


def _reference_for_reinhard():
    import tempfile
    if "path" not in _REF_CACHE:
        f = tempfile.NamedTemporaryFile(suffix=".png", delete=False)
        PIL.fromarray(synthetic_he(98, size=128)).save(f.name)
        _REF_CACHE["path"] = f.name
    return _REF_CACHE["path"]


def test_reinhard_without_reference_is_refused():
    img = synthetic_he(1)
    with pytest.raises(AssertionError, match="reference"):
        run_patches([img], "method=reinhard")


@pytest.mark.parametrize("method", ["macenko", "reinhard"])
def test_output_is_the_same_at_any_thread_count(method, reference_png):
    images = [synthetic_he(s, he=HE_SRC) for s in range(12)]
    digests = set()
    for threads in (1, 2, 4):
        out, _ = run_patches(images, f"method={method} estimate=patch threads={threads} "
                                     f"reference={reference_png}")
        digests.add(hashlib.sha256(b"".join(o.tobytes() for o in out)).hexdigest())
    assert len(digests) == 1


# ---- slide estimates -----------------------------------------------------------

def slide_buffers(location):
    """[(overview HxWx3, mask HxW or None, slide meta structure)] after stainestimate."""
    pipeline = Gst.parse_launch(
        f'wsislidesrc location="{location}" ! tissuemask ! stainestimate name=est ! '
        "appsink name=sink sync=false")
    pipeline.set_state(Gst.State.PLAYING)
    out = []
    for sample in pull_samples(pipeline, 30):
        buf = sample.get_buffer()
        s = buf.get_custom_meta("WsiSlideMeta").get_structure()
        w, h = s.get_value("overview-width"), s.get_value("overview-height")
        data = np.frombuffer(buf.extract_dup(0, buf.get_size()), np.uint8)
        overview = data[: w * h * 3].reshape(h, w, 3)
        mask = data[w * h * 3: w * h * 4].reshape(h, w) if s.get_value("has-mask") else None
        out.append((overview, mask, s.copy()))
    warnings = []
    bus = pipeline.get_bus()
    while True:
        msg = bus.pop_filtered(Gst.MessageType.WARNING)
        if msg is None:
            break
        if msg.src.get_name() == "est":
            warnings.append(msg.parse_warning()[0].message)
    pipeline.set_state(Gst.State.NULL)
    return out, warnings


def column(s, name):
    names = list(s.get_value("column-names"))
    return list(s.get_value("column-values"))[names.index(name)]


def numbers(text):
    return np.array([float(v) for v in text.split()])


def test_slide_estimates_match_numpy_on_the_overview_tissue(slides):
    got, warnings = slide_buffers(slides)
    assert len(got) == 5 and not warnings
    for overview, mask, s in got:
        pixels = overview[mask > 0] if mask is not None else overview.reshape(-1, 3)
        he, maxc = np_macenko(pixels)
        m = numbers(column(s, "stain-matrix")).reshape(2, 3).T
        np.testing.assert_allclose(m, he, rtol=0.02, atol=0.002)
        np.testing.assert_allclose(numbers(column(s, "stain-max-c")), maxc, rtol=0.02)
        mean, std = np_lab_stats(pixels)
        np.testing.assert_allclose(numbers(column(s, "stain-lab-mean")), mean, rtol=0.02,
                                   atol=1e-3)
        np.testing.assert_allclose(numbers(column(s, "stain-lab-std")), std, rtol=0.02)


def test_slide_without_tissue_is_named_once_and_passes(tmp_root):
    import subprocess
    from conftest import _generator
    out = tmp_root / "stain-blank"
    subprocess.run([_generator(), "--count", "1", "--blobs", "0", "--width", "1024",
                    "--height", "768", str(out)], check=True, stdout=subprocess.DEVNULL)
    got, warnings = slide_buffers(out)
    assert len(got) == 1
    assert column(got[0][2], "stain-matrix") == ""
    assert len(warnings) == 1 and "slide-00" in warnings[0], warnings


def test_slide_without_tissue_passes_through_the_pipeline(tmp_root):
    """A slide with nothing stained (tissue=False, so its patches still come):
    stainestimate names it once, stainnorm passes every patch as read with
    stain-source "none" and warns nothing per patch, whatever the method."""
    import subprocess
    from conftest import _generator
    out = tmp_root / "stain-blank-pipeline"
    subprocess.run([_generator(), "--count", "1", "--blobs", "0", "--width", "1024",
                    "--height", "768", str(out)], check=True, stdout=subprocess.DEVNULL)

    def run(**settings):
        description = gstwsi.standard_pipeline(
            out, batch_size=4, patch_size=64, patches_per_slide=8, threads=2,
            cycle=False, seed=3, tissue=False, **settings)
        with gstwsi.BatchStream(description, torch=False) as stream:
            batches = [(b.images.copy(), dict(b.columns)) for b in stream]
            return batches, list(stream.warnings)

    plain, _ = run()
    for settings in ({"stain": "macenko", "stainnorm_augment_probability": 1.0},
                     {"stain": "vahadane"},
                     {"stain": "reinhard", "stainnorm_randstain_probability": 1.0},
                     {"stain": "macenko", "stain_estimate": "patch"}):
        got, warnings = run(**settings)
        assert len(got) == len(plain) == 2
        for (raw, _), (normed, columns) in zip(plain, got):
            assert np.array_equal(raw, normed), settings
            assert set(columns["stain-source"]) == {"none"}, settings
            assert set(columns["stain-used"]) == {""}
        assert len(warnings) == 1 and "slide-00" in warnings[0], (settings, warnings)


def _stream(slides, **settings):
    description = gstwsi.standard_pipeline(
        slides, batch_size=8, patch_size=64, patches_per_slide=4, threads=2,
        cycle=False, seed=3, **settings)
    with gstwsi.BatchStream(description, torch=False) as stream:
        return [(b.images.copy(), dict(b.columns), list(b.paths)) for b in stream]


def test_pipeline_applies_each_slide_estimate(slides):
    estimates = {}
    for overview, mask, s in slide_buffers(slides)[0]:
        pixels = overview[mask > 0] if mask is not None else overview.reshape(-1, 3)
        estimates[s.get_value("path")] = np_macenko(pixels)
    plain = _stream(slides)
    normed = _stream(slides, stain="macenko")
    assert len(plain) == len(normed) > 0
    diffs = []
    for (raw, _, paths), (got, columns, paths2) in zip(plain, normed):
        assert paths == paths2
        assert set(columns["stain-source"]) == {"slide"}
        # stain="macenko" estimates only Macenko's (and not Vahadane's) per slide
        assert set(columns["stain-vahadane-matrix"]) == {""}
        for i, path in enumerate(paths):
            want = np_macenko_apply(raw[i], estimates[path], (HE_REF, MAXC_REF))
            diffs.append(np.abs(got[i].astype(int) - want).mean())
            used = numbers(columns["stain-used"][i])
            np.testing.assert_allclose(used[:6].reshape(2, 3).T, estimates[path][0],
                                       rtol=0.02, atol=0.002)
    assert np.mean(diffs) <= 1.0 and max(diffs) <= 2.0, (np.mean(diffs), max(diffs))


# ---- Vahadane -------------------------------------------------------------------

H_KNOWN = normalise(np.array([0.65, 0.70, 0.29]))
E_KNOWN = normalise(np.array([0.22, 0.80, 0.56]))


def known_stain_slide(folder):
    """A 1024 px tiled pyramidal TIFF whose tissue is a third pure H, a third
    pure E and a third mixed, on the known stain vectors, a quarter glass."""
    tifffile = pytest.importorskip("tifffile")
    rng = np.random.default_rng(0)
    size, k = 1024, 32
    idx = np.arange(size) * k // size
    cls = rng.integers(0, 4, size=(k, k))[idx][:, idx][..., None]
    c = rng.uniform(0.6, 1.6, size=(size, size, 1))
    mix = rng.uniform(0.2, 0.8, size=(size, size, 1))
    od = np.where(cls == 0, c * H_KNOWN, np.where(
        cls == 1, c * E_KNOWN, np.where(cls == 2, c * (mix * H_KNOWN + (1 - mix) * E_KNOWN),
                                        0.02)))
    img = np.clip(np.round(IO * np.exp(-od)), 0, 255).astype(np.uint8)
    folder.mkdir(exist_ok=True)
    with tifffile.TiffWriter(folder / "known.tiff") as tw:
        for level in range(3):
            tw.write(img[::2 ** level, ::2 ** level], tile=(256, 256), photometric="rgb",
                     resolution=(1e4 / 0.25, 1e4 / 0.25), resolutionunit="CENTIMETER",
                     subfiletype=0 if level == 0 else 1)
    return folder


def test_vahadane_recovers_known_stains(tmp_root):
    got, warnings = slide_buffers(known_stain_slide(tmp_root / "stain-known"))
    assert len(got) == 1 and not warnings
    m = numbers(column(got[0][2], "stain-vahadane-matrix")).reshape(2, 3)
    # the factorisation starts from mean +- a third of the spread (0.18 off
    # these stains) and must move to them
    np.testing.assert_allclose(m[0], H_KNOWN, atol=0.02)
    np.testing.assert_allclose(m[1], E_KNOWN, atol=0.02)
    assert len(numbers(column(got[0][2], "stain-vahadane-max-c"))) == 2


def test_vahadane_per_patch_is_refused():
    with pytest.raises(AssertionError, match="once per slide"):
        run_patches([synthetic_he(1)], "method=vahadane estimate=patch")


def test_vahadane_pipeline_uses_the_slide_factorisation(slides):
    batches = _stream(slides, stain="vahadane")
    assert batches
    for _, columns, _ in batches:
        assert set(columns["stain-source"]) == {"slide"}
        for used, vahadane in zip(columns["stain-used"], columns["stain-vahadane-matrix"]):
            np.testing.assert_allclose(numbers(used)[:6], numbers(vahadane), rtol=1e-12)


# ---- stain augmentation on the slide's own matrix ---------------------------------

def np_macenko_jitter(img, src, ref, alpha, beta):
    he, maxc = src
    od = -np.log((img.reshape(-1, 3).astype(np.float64) + 1) / IO)
    c = np.linalg.lstsq(he, od.T, rcond=None)[0]
    c2 = c / (maxc / ref[1])[:, None] * np.asarray(alpha)[:, None] + np.asarray(beta)[:, None]
    out = np.minimum(IO * np.exp(-ref[0] @ c2), 255)
    return out.T.reshape(img.shape).astype(np.uint8)


def test_augmentation_on_the_slide_matrix(slides):
    estimates = {}
    for overview, mask, s in slide_buffers(slides)[0]:
        estimates[s.get_value("path")] = np_macenko(overview[mask > 0])
    plain = _stream(slides)
    runs = [_stream(slides, stain="macenko", stainnorm_augment_probability=0.5,
                    stainnorm_augment_sigma=0.2, stainnorm_seed=7, stainnorm_threads=t)
            for t in (1, 3)]
    assert b"".join(b[0].tobytes() for b in runs[0]) == b"".join(
        b[0].tobytes() for b in runs[1])
    drawn = 0
    diffs = []
    for (raw, _, paths), (got, columns, _) in zip(plain, runs[0]):
        for i, path in enumerate(paths):
            text = columns["stain-jitter"][i]
            alpha, beta = ((1, 1), (0, 0)) if text == "" else (
                numbers(text)[:2], numbers(text)[2:])
            if text:
                drawn += 1
                assert np.all(np.abs(np.asarray(alpha) - 1) <= 0.2)
                assert np.all(np.abs(beta) <= 0.2)
            want = np_macenko_jitter(raw[i], estimates[path], (HE_REF, MAXC_REF), alpha, beta)
            diffs.append(np.abs(got[i].astype(int) - want).mean())
    n = len(diffs)
    assert 0 < drawn < n                   # about half of the patches
    assert np.mean(diffs) <= 1.0, np.mean(diffs)
    # another seed draws other values
    other = _stream(slides, stain="macenko", stainnorm_augment_probability=0.5,
                    stainnorm_augment_sigma=0.2, stainnorm_seed=8)
    assert ([list(c["stain-jitter"]) for _, c, _ in other]
            != [list(c["stain-jitter"]) for _, c, _ in runs[0]])


def test_preview_draws_each_slide_before_and_after(slides, tmp_root):
    from gstwsi import preview
    out = tmp_root / "stain-preview"
    preview.preview(str(slides), out, settings=dict(stain="macenko", patches_per_slide=4,
                                                    patch_size=64), max_slides=2)
    got, _ = slide_buffers(slides)
    drawn = sorted(out.glob("*-stain.png"))
    assert len(drawn) == 2
    for png, (overview, mask, _) in zip(drawn, got[:2]):
        image = np.asarray(PIL.open(png).convert("RGB"))
        h, w = overview.shape[:2]
        top, margin = 32, 8
        before = image[top:top + h, margin:margin + w]
        after = image[top:top + h, 2 * margin + w:2 * margin + 2 * w]
        assert np.array_equal(before, overview)
        want = np_macenko_apply(overview, np_macenko(overview[mask > 0]), (HE_REF, MAXC_REF))
        assert np.abs(after.astype(int) - want).mean() <= 1.0
        assert np.abs(after.astype(int) - overview).mean() > 3


# ---- RandStainNA: targets drawn from the slides' own statistics --------------------

def test_randstain_draws_targets_from_the_slides_statistics(slides):
    stats = {s.get_value("path"): (numbers(column(s, "stain-lab-mean")),
                                   numbers(column(s, "stain-lab-std")))
             for _, _, s in slide_buffers(slides)[0]}
    plain = _stream(slides)
    runs = [_stream(slides, stain="reinhard", stainnorm_randstain_probability=0.7,
                    stainnorm_seed=5, stainnorm_threads=t) for t in (1, 3)]
    # the same bytes and draws at any thread count
    assert b"".join(b[0].tobytes() for b in runs[0]) == b"".join(
        b[0].tobytes() for b in runs[1])
    assert [list(c["stain-randstain"]) for _, c, _ in runs[0]] == [
        list(c["stain-randstain"]) for _, c, _ in runs[1]]
    seen, drawn, diffs, moved = [], 0, [], []
    for (raw, _, paths), (got, columns, _) in zip(plain, runs[0]):
        for i, path in enumerate(paths):
            # the distribution: the distinct slides so far, in stream order
            if path not in seen:
                seen.append(path)
            x = np.array([np.concatenate(stats[p]) for p in seen])
            dist = numbers(columns["stain-randstain-dist"][i])
            assert dist[12] == len(seen)
            np.testing.assert_allclose(dist[:6], x.mean(axis=0), rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(dist[6:12], x.std(axis=0), rtol=1e-9, atol=1e-12)
            text = columns["stain-randstain"][i]
            if text == "":
                # not drawn and no reference: passed as read
                assert np.array_equal(got[i], raw[i])
                continue
            drawn += 1
            target = numbers(text)
            sigma = np.where(dist[6:12] > 0, dist[6:12], 1.0)
            assert np.all(np.abs((target[:3] - dist[:3]) / sigma[:3]) < 6)
            assert np.all(target[3:] >= 0.1 * dist[3:6] - 1e-12)
            want = np_reinhard(raw[i], stats[path], (target[:3], target[3:]))
            diffs.append(np.abs(got[i].astype(int) - want).mean())
            moved.append(np.abs(got[i].astype(int) - raw[i]).mean())
    n = sum(len(p) for _, _, p in plain)
    assert len(seen) == 5 and 0 < drawn < n
    assert np.mean(diffs) <= 0.5 and max(diffs) <= 1.0, (np.mean(diffs), max(diffs))
    assert max(moved) > 2                  # the draws do change colours
    other = _stream(slides, stain="reinhard", stainnorm_randstain_probability=0.7,
                    stainnorm_seed=6)
    assert ([list(c["stain-randstain"]) for _, c, _ in other]
            != [list(c["stain-randstain"]) for _, c, _ in runs[0]])


# ---- HED jitter against scikit-image's stain separation ---------------------------

def test_hed_jitter_matches_scikit_image_stain_separation(slides):
    """stainnorm's HED jitter on the slide's own stains against scikit-image's
    separate_stains / combine_stains (what rgb2hed / hed2rgb run, with the
    slide's matrix instead of the fixed H&E-DAB one), given the drawn numbers.
    Conventions mapped: torchstain's OD -ln((I + 1) / 240) is skimage's with
    rgb = (I + 1) / 240; the third stain is the normal of the H-E plane, so
    the first two concentrations are the least-squares ones; the output's
    ceiling 255 is a constant third stain on (1, 1, 1). skimage zeroes
    negative concentrations where the C code keeps them: those pixels are
    left out."""
    color = pytest.importorskip("skimage.color")
    log_adjust = -np.log(1e-6)
    got_runs = _stream(slides, stain="macenko", stainnorm_augment_probability=1.0,
                       stainnorm_augment_sigma=0.2, stainnorm_seed=11)
    plain = _stream(slides)
    drawn, diffs = 0, []
    for (raw, _, paths), (got, columns, _) in zip(plain, got_runs):
        for i in range(len(paths)):
            if columns["stain-jitter"][i] == "":
                continue
            drawn += 1
            alpha_beta = numbers(columns["stain-jitter"][i])
            alpha, beta = alpha_beta[:2], alpha_beta[2:]
            used = numbers(columns["stain-used"][i])
            h, e, maxc = used[:3], used[3:6], used[6:8]
            r = np.cross(h, e)
            hed_from_rgb = np.linalg.inv(np.stack([h, e, r / np.linalg.norm(r)]))
            rgb = (raw[i].reshape(-1, 3).astype(np.float64) + 1) / IO
            stains = color.separate_stains(rgb[None], hed_from_rgb)[0]
            keep = (stains[:, 0] > 0) & (stains[:, 1] > 0)
            out = np.empty_like(stains)
            out[:, :2] = stains[:, :2] * alpha * (MAXC_REF / maxc) + beta / log_adjust
            out[:, 2] = np.log(255 / IO) * np.sqrt(3) / log_adjust
            rgb_from_target = np.stack([HE_REF[:, 0], HE_REF[:, 1],
                                        np.ones(3) / np.sqrt(3)])
            want = np.floor(255 * color.combine_stains(out[None], rgb_from_target)[0]
                            + 1e-9)
            g = got[i].reshape(-1, 3).astype(np.float64)
            assert keep.sum() >= 50, keep.sum()
            diffs.append(np.abs(g[keep] - want[keep]).mean())
    assert drawn > 0
    # about 0.03 of a level; ignoring the draws would be 3 to 20 levels off
    assert np.mean(diffs) <= 0.5 and max(diffs) <= 1.0, (np.mean(diffs), max(diffs))


# ---- multi-view buffers (after patchviews) ----------------------------------------

def _views_run(slides, norm, threads=2):
    """[(views [HxWx3 per view], patch meta structure)] of patchviews'
    two-view preset, with `norm` (a stainnorm description or "") after it."""
    pipeline = Gst.parse_launch(
        f'wsislidesrc location="{slides}" cycle=false seed=3 ! tissuemask ! '
        "stainestimate methods=macenko ! queue ! patchsampler patch-size=96 "
        "patches-per-slide=2 ! patchinterleave ! patchreader ! "
        f"patchviews preset=two-view seed=5 threads=2 ! {norm} appsink name=sink sync=false")
    pipeline.set_state(Gst.State.PLAYING)
    out = []
    for sample in pull_samples(pipeline, 30):
        buf = sample.get_buffer()
        s = buf.get_custom_meta("WsiPatchMeta").get_structure().copy()
        views = []
        for v in range(buf.n_memory()):
            mem = buf.peek_memory(v)
            ok, info = mem.map(Gst.MapFlags.READ)
            side = int(np.sqrt(info.size // 3))
            views.append(np.frombuffer(info.data, np.uint8).copy().reshape(side, side, 3))
            mem.unmap(info)
        out.append((views, s))
    msg = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    assert msg is None, msg.parse_error()
    return out


def test_multi_view_buffers_get_their_slide_mapping(slides):
    plain = _views_run(slides, "")
    normed = _views_run(slides, "stainnorm method=macenko threads=1 !")
    assert len(plain) == len(normed) > 0
    diffs = []
    for (raw, _), (got, s) in zip(plain, normed):
        assert len(got) == len(raw) == 2
        assert column(s, "stain-source") == "slide"
        used = numbers(column(s, "stain-used"))
        src = (used[:6].reshape(2, 3).T, used[6:8])
        for r, g in zip(raw, got):
            want = np_macenko_apply(r, src, (HE_REF, MAXC_REF))
            diffs.append(np.abs(g.astype(int) - want).mean())
    assert np.mean(diffs) <= 1.0 and max(diffs) <= 2.0, (np.mean(diffs), max(diffs))
    # augmentation: each view its own draws, the same at any thread count
    runs = [_views_run(slides, f"stainnorm method=macenko augment-probability=1 "
                               f"augment-sigma=0.2 seed=7 threads={t} !") for t in (1, 3)]
    assert [b"".join(v.tobytes() for v in views) for views, _ in runs[0]] == [
        b"".join(v.tobytes() for v in views) for views, _ in runs[1]]
    for (raw, _), (got, s) in zip(plain, runs[0]):
        fields = column(s, "stain-jitter").split(";")
        assert len(fields) == 2 and fields[0] != fields[1]
        used = numbers(column(s, "stain-used"))
        src = (used[:6].reshape(2, 3).T, used[6:8])
        for r, g, f in zip(raw, got, fields):
            d = numbers(f)
            want = np_macenko_jitter(r, src, (HE_REF, MAXC_REF), d[:2], d[2:])
            assert np.abs(g.astype(int) - want).mean() <= 1.0


def _run_element(images, element):
    """Pushes images (HxWx3 uint8) through `element`; the outputs."""
    out, pipeline = push_images(images, element)
    pipeline.set_state(Gst.State.NULL)
    assert len(out) == len(images)
    return out


def test_patchaugment_hed_is_a_scaling_in_scikit_image_hed_space():
    """patchaugment's HED path (scikit-image's fixed H&E-DAB matrix) with
    beta = 0 scales each stain of skimage's rgb2hed by its alpha: the alphas
    fitted from the output lie in [1 - sigma, 1 + sigma] and hed2rgb of the
    scaled stains gives the output's bytes. Images are made by hed2rgb from
    positive concentrations, so skimage's clamp at 0 rarely bites (those
    pixels are left out)."""
    color = pytest.importorskip("skimage.color")
    rng = np.random.default_rng(4)
    images = []
    for _ in range(6):
        c = np.stack([rng.uniform(0.0, 0.12, (64, 64)), rng.uniform(0.0, 0.08, (64, 64)),
                      rng.uniform(0.005, 0.03, (64, 64))], axis=-1)
        images.append(np.round(255 * color.hed2rgb(c)).astype(np.uint8))
    sigma = 0.3
    out = _run_element(images, f"patchaugment flip-h=0 flip-v=0 rotate90=0 "
                               f"hed-probability=1 hed-sigma={sigma} hed-sigma-bias=0 seed=3")
    alphas = []
    for img, got in zip(images, out):
        x = color.rgb2hed(img).reshape(-1, 3)
        y = color.rgb2hed(got).reshape(-1, 3)
        keep = np.all(x > 1e-4, axis=1) & np.all(y > 1e-4, axis=1)
        assert keep.mean() > 0.8
        alpha = (x[keep] * y[keep]).sum(0) / (x[keep] ** 2).sum(0)
        assert np.all(np.abs(alpha - 1) <= sigma + 0.01), alpha
        alphas.append(alpha)
        want = np.round(255 * color.hed2rgb((x * alpha).reshape(img.shape)))
        diff = np.abs(got.astype(int) - want).reshape(-1, 3)[keep]
        # about 0.02 of a level (the input moved 2.6 to 15 levels)
        assert diff.mean() <= 0.25, diff.mean()
    assert np.ptp(np.array(alphas), axis=0).max() > 0.05   # draws differ per patch
