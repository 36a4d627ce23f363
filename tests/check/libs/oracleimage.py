# The test image the OME oracles (ometiff-oracle.py, omezarr-oracle.py)
# write their pyramids from, and the 2x2 average that makes each next
# level: one definition, so both formats are checked on the same kind of
# pixels. Imported from the oracle's own folder (python3 puts a script's
# folder first on sys.path).

import numpy as np


def image(h, w, seed):
    # smooth tissue-like colour plus mild noise: JPEG keeps it well
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    rng = np.random.default_rng(seed)
    r = 128 + 90 * np.sin(x / 37.0) * np.cos(y / 23.0)
    g = 128 + 80 * np.cos((x + y) / 51.0)
    b = 160 + 60 * np.sin(y / 17.0)
    a = np.stack([r, g, b], -1) + rng.normal(0, 6, (h, w, 3))
    return np.clip(a, 0, 255).astype(np.uint8)


def halve(a):
    # 2x2 mean, rounded, in @a's type; an odd last row or column is dropped
    h, w = a.shape[0] // 2, a.shape[1] // 2
    return a[:2 * h, :2 * w].reshape(h, 2, w, 2, -1).mean((1, 3)).round() \
        .astype(a.dtype)
