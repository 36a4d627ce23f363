"""The per-slide H5 files of a feature-extraction job, in the layout
mahmoodlab/TRIDENT writes and reads (its `IO.py`: `coords_to_h5`,
`save_h5`, `read_coords`; CLAM reads the same `coords` dataset):

- `patches/<name>_patches.h5`: dataset `coords` (int64, N x 2, level-0
  top-left x, y) with attributes `patch_size`, `patch_size_level0`,
  `level0_magnification`, `target_magnification`, `overlap`, `name`,
  `savetodir`, `level0_width`, `level0_height`;
- `features_<encoder>/<name>.h5`: dataset `features` (N x D, float32 or
  float16, row i for coords[i]) with attributes `name`, `encoder`,
  `savetodir`, and `coords` again with the attributes above.

Datasets have an unlimited first axis, as TRIDENT's `save_h5` makes them,
and chunks of up to 1 MiB of rows (TRIDENT's are one row).  Files are written to a temporary name in
the same folder and renamed, so a killed job never leaves a file that
looks complete; `check_*` verify a file on read (dtypes, shapes, the
attributes that say which job wrote it) and return None when it is
complete for these settings, else the reason.  Needs h5py (Debian's
python3-h5py).  No state; one call writes or reads one file.
"""
import os
import socket

import numpy as np

__all__ = ["check_coords", "check_features", "given_coords", "read_coords", "write_coords",
           "write_features"]

# Attributes of `coords` that tell whether a file belongs to this job.
_JOB_ATTRS = ("patch_size", "target_magnification", "overlap", "name")


def _h5py():
    try:
        import h5py
    except ImportError as exc:
        raise ImportError(f"feature extraction writes H5 files with h5py, which this "
                          f"interpreter cannot import ({exc}): apt install python3-h5py") from exc
    return h5py


# Rows a chunk holds at most: 1 MiB of them.
_CHUNK_BYTES = 1 << 20


def _create(f, key, data, attrs):
    # A resizable first axis like TRIDENT's save_h5 (appending, as CLAM's
    # save_hdf5 does, resizes it), but chunks of up to 1 MiB of rows where
    # TRIDENT writes one row a chunk: one-row chunks cost ~25 us of CPU a
    # row to write (0.04 s for a 1,600-patch slide's coords) and triple the
    # file; readers see the same datasets. No timestamps, so that the same
    # job writes the same bytes.
    row_bytes = max(1, data.dtype.itemsize * int(np.prod(data.shape[1:], dtype=np.int64)))
    rows = max(1, min(data.shape[0], _CHUNK_BYTES // row_bytes))
    dset = f.create_dataset(key, shape=data.shape, maxshape=(None,) + data.shape[1:],
                            chunks=(rows,) + data.shape[1:] if data.shape[0] else None,
                            dtype=data.dtype, track_times=False)
    if data.shape[0]:
        dset[:] = data
    for k, v in attrs.items():
        dset.attrs[k] = v
    return dset


def _atomic_write(path, fill):
    """Writes `path` through a temporary file in its folder and a rename."""
    path = os.fspath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp-{socket.gethostname()}-{os.getpid()}"
    h5py = _h5py()
    try:
        with h5py.File(tmp, "w", track_order=False) as f:
            fill(f)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def coords_array(coords):
    coords = np.asarray(coords, dtype=np.int64)
    return coords.reshape(-1, 2)


def write_coords(path, coords, attrs):
    """patches/<name>_patches.h5: `coords` with the job's attributes."""
    coords = coords_array(coords)
    _atomic_write(path, lambda f: _create(f, "coords", coords, attrs))


def write_features(path, features, coords, coords_attrs, name, encoder):
    """features_<encoder>/<name>.h5: `features` (rows aligned with coords)
    and `coords`."""
    coords = coords_array(coords)
    features = np.asarray(features)
    if features.ndim != 2 or features.shape[0] != coords.shape[0]:
        raise ValueError(f"{name}: {features.shape} features for {coords.shape[0]} coordinates")

    def fill(f):
        _create(f, "features", features, {"name": name, "encoder": encoder,
                                          "savetodir": os.path.dirname(os.fspath(path))})
        _create(f, "coords", coords, coords_attrs)
    _atomic_write(path, fill)


def read_coords(path):
    """(attrs dict, int64 N x 2 coords) of a TRIDENT or CLAM coords file."""
    h5py = _h5py()
    with h5py.File(path, "r") as f:
        if "coords" not in f:
            raise ValueError(f"{path}: no dataset 'coords'")
        return dict(f["coords"].attrs), coords_array(f["coords"][:])


def _same(a, b):
    if isinstance(a, bytes):
        a = a.decode("utf-8", "replace")
    if isinstance(b, bytes):
        b = b.decode("utf-8", "replace")
    if isinstance(a, (float, np.floating)) or isinstance(b, (float, np.floating)):
        try:
            return abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(b)))
        except (TypeError, ValueError):
            return False
    if hasattr(a, "item"):
        a = a.item()
    return a == b


def _check_coords_dataset(f, attrs):
    if "coords" not in f:
        return "no dataset 'coords'"
    c = f["coords"]
    if c.dtype != np.int64 or c.ndim != 2 or c.shape[1] != 2:
        return f"'coords' is {c.dtype} {c.shape}, not int64 N x 2"
    for k in attrs:
        if k not in c.attrs:
            return f"'coords' has no attribute '{k}'"
        if not _same(c.attrs[k], attrs[k]):
            return f"made with {k}={c.attrs[k]!r}, this job has {attrs[k]!r}"
    return None


def _checked(path, check):
    if not os.path.exists(path):
        return "missing"
    h5py = _h5py()
    try:
        with h5py.File(path, "r") as f:
            return check(f)
    except (OSError, KeyError, ValueError, RuntimeError) as exc:
        return f"unreadable ({exc})"


def check_coords(path, attrs):
    """None when `path` is a complete coords file of this job, else why not
    ("missing" when there is none)."""
    return _checked(path, lambda f: _check_coords_dataset(f, attrs))


def check_features(path, attrs, encoder, dim=None):
    """None when `path` is a complete features file of this job and
    encoder (rows matching its coords, `dim` columns when given), else why
    not ("missing" when there is none)."""
    def check(f):
        why = _check_coords_dataset(f, attrs)
        if why:
            return why
        if "features" not in f:
            return "no dataset 'features'"
        feats = f["features"]
        if feats.ndim != 2 or feats.shape[0] != f["coords"].shape[0]:
            return f"'features' is {feats.shape} for {f['coords'].shape[0]} coordinates"
        if feats.dtype not in (np.float32, np.float16):
            return f"'features' is {feats.dtype}, not float32 or float16"
        if dim is not None and feats.shape[1] != dim:
            return f"'features' has {feats.shape[1]} columns, the model gives {dim}"
        if not _same(feats.attrs.get("encoder", ""), encoder):
            return f"made by encoder {feats.attrs.get('encoder', '')!r}, not {encoder!r}"
        return None
    return _checked(path, check)


def given_coords(path):
    """The positions of an existing TRIDENT or CLAM coords file: dict with
    coords (int64 N x 2), footprint (level-0 side: TRIDENT's
    patch_size_level0, else CLAM's patch_size x downsample), out_size
    (patch_size) and attrs (the file's `coords` attributes); ValueError
    naming the file when neither layout fits."""
    attrs, coords = read_coords(path)
    if "patch_size" not in attrs:
        raise ValueError(f"{path}: 'coords' has no attribute 'patch_size'")
    size = int(attrs["patch_size"])
    if "patch_size_level0" in attrs:
        footprint = int(attrs["patch_size_level0"])
    elif "downsample" in attrs:                          # CLAM: size at patch_level
        footprint = int(round(size * float(np.asarray(attrs["downsample"]).ravel()[0])))
    else:
        raise ValueError(f"{path}: neither TRIDENT's patch_size_level0 nor CLAM's "
                         f"downsample among the attributes of 'coords'")
    return {"coords": coords, "footprint": footprint, "out_size": size, "attrs": attrs}
