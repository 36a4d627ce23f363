"""A whole overview normalised in NumPy with its slide's stain estimate, for
wsi-preview's before/after panel: the equations stainnorm applies per patch
(gst/wsipatch/wsistain.h; torchstain's Macenko defaults, Reinhard in
Ruderman's l-alpha-beta), in double precision, not the element's tables."""
import numpy as np

IO, BETA = 240.0, 0.15
# torchstain's HERef (columns H, E) and maxCRef: stainnorm's built-in target
HE_REF = np.array([[0.5626, 0.2159], [0.7201, 0.8012], [0.4062, 0.5581]])
MAXC_REF = np.array([1.9705, 1.0308])
_RGB2LMS = np.array([[0.3811, 0.5783, 0.0402], [0.1967, 0.7244, 0.0782],
                     [0.0241, 0.1288, 0.8444]])
_LAB = np.diag([1 / np.sqrt(3), 1 / np.sqrt(6), 1 / np.sqrt(2)]) @ np.array(
    [[1, 1, 1], [1, 1, -2], [1, -1, 0]])


def _numbers(text, n):
    try:
        values = np.array([float(v) for v in str(text).split()])
    except ValueError:
        return None
    return values if values.size == n and np.all(np.isfinite(values)) else None


def _od(img):
    return -np.log((img.reshape(-1, 3).astype(np.float64) + 1) / IO)


def _lab(img):
    lms = img.reshape(-1, 3).astype(np.float64) @ _RGB2LMS.T
    return np.log10(np.maximum(lms, 1.0)) @ _LAB.T


def macenko_estimate(img):
    """(HE 3x2, maxC 2) of an image, torchstain's way; None without one."""
    od = _od(img)
    tissue = od[np.all(od >= BETA, axis=1)]
    if len(tissue) < 16:
        return None
    _, vecs = np.linalg.eigh(np.cov(tissue.T))
    plane = np.stack([v if v.sum() >= 0 else -v for v in (vecs[:, 1], vecs[:, 2])], axis=1)
    that = tissue @ plane
    phi = np.arctan2(that[:, 1], that[:, 0])
    lo, hi = np.percentile(phi, 1), np.percentile(phi, 99)
    vmin, vmax = plane @ [np.cos(lo), np.sin(lo)], plane @ [np.cos(hi), np.sin(hi)]
    he = np.stack([vmin, vmax] if vmin[0] > vmax[0] else [vmax, vmin], axis=1)
    c = np.linalg.lstsq(he, od.T, rcond=None)[0]
    return he, np.percentile(c, 99, axis=1)


def target(method, reference_pixels=None):
    """The target of `method` (reference image pixels or the built-in)."""
    if method == "reinhard":
        if reference_pixels is None:
            return None
        x = _lab(reference_pixels)
        return x.mean(axis=0), x.std(axis=0)
    if reference_pixels is None:
        return HE_REF, MAXC_REF
    return macenko_estimate(reference_pixels)


def normalise(img, columns, method, goal):
    """`img` (H x W x 3 uint8) normalised with the slide's estimate in
    `columns` (the stain-* column texts) onto `goal` (from target()); None
    when the slide has no estimate for the method."""
    if goal is None:
        return None
    if method == "reinhard":
        mean = _numbers(columns.get("stain-lab-mean"), 3)
        std = _numbers(columns.get("stain-lab-std"), 3)
        if mean is None or std is None or np.any(std <= 0):
            return None
        y = (_lab(img) - mean) / std * goal[1] + goal[0]
        rgb = (10.0 ** (y @ np.linalg.inv(_LAB).T)) @ np.linalg.inv(_RGB2LMS).T
        return np.clip(np.round(rgb), 0, 255).astype(np.uint8).reshape(img.shape)
    prefix = "stain-vahadane-" if method == "vahadane" else "stain-"
    m = _numbers(columns.get(prefix + "matrix"), 6)
    maxc = _numbers(columns.get(prefix + "max-c"), 2)
    if m is None or maxc is None or np.any(maxc <= 0):
        return None
    he = m.reshape(2, 3).T
    c = np.linalg.lstsq(he, _od(img).T, rcond=None)[0]
    c = c / (maxc / goal[1])[:, None]
    out = np.minimum(IO * np.exp(-goal[0] @ c), 255)
    return out.T.reshape(img.shape).astype(np.uint8)
