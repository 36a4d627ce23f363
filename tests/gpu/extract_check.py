# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runs the wsi-extract tool (the file itself, in this process) for the
extract part of tests/gpu/run.sh and prints one line of figures: patches,
seconds, patches/s, the share of the run spent waiting for data and in the
model, the process's peak RSS, the peak CUDA memory torch allocated, and
which way batches reached the GPU (summary["upload"]: "wsicudaupload",
"pinned", or none on the CPU). Then checks the files it wrote against
TRIDENT's layout: per slide a coords file (int64 N x 2) and, with a model,
a features file (N x D float32/float16, finite, coords equal to the coords
file's) read back with h5py.

    extract_check.py LABEL TOOL -- WSI-EXTRACT-ARGS...
    extract_check.py --compare JOB_A ENC_A JOB_B ENC_B

--compare checks that two jobs over the same slides (CPU and CUDA) wrote
the same coordinates and features within the tolerance of a different
device and TF32 convolutions: every row's cosine similarity >= 0.999 and
max |a - b| <= 2 % of max |a|.

Exit status: wsi-extract's, or 3 when the files are wrong.
"""
import json
import os
import resource
import runpy
import sys
import tempfile
import time

import numpy as np


def _h5():
    import h5py
    return h5py


def check_outputs(summary, enc):
    """Problems with the files of `summary`'s slides, as a list of lines."""
    h5py = _h5()
    problems, rows, dims = [], 0, set()
    job = summary["folder"]
    for name in summary["done"]:
        cpath = os.path.join(job, "patches", f"{name}_patches.h5")
        try:
            with h5py.File(cpath, "r") as f:
                coords = f["coords"][:]
                attrs = dict(f["coords"].attrs)
        except (OSError, KeyError) as exc:
            problems.append(f"{cpath}: {exc}")
            continue
        if coords.dtype != np.int64 or coords.ndim != 2 or coords.shape[1] != 2:
            problems.append(f"{cpath}: coords {coords.dtype} {coords.shape}, want int64 N x 2")
        for key in ("patch_size", "patch_size_level0", "level0_magnification",
                    "target_magnification", "overlap", "level0_width", "level0_height", "name"):
            if key not in attrs:
                problems.append(f"{cpath}: no attribute {key}")
        if len(np.unique(coords, axis=0)) != len(coords):
            problems.append(f"{cpath}: duplicate coordinates")
        rows += len(coords)
        if enc is None:
            continue
        fpath = os.path.join(job, f"features_{enc}", f"{name}.h5")
        try:
            with h5py.File(fpath, "r") as f:
                feats = f["features"][:]
                fcoords = f["coords"][:]
        except (OSError, KeyError) as exc:
            problems.append(f"{fpath}: {exc}")
            continue
        dims.add(feats.shape[1] if feats.ndim == 2 else None)
        if feats.ndim != 2 or len(feats) != len(coords) or \
                feats.dtype not in (np.float32, np.float16):
            problems.append(f"{fpath}: features {feats.dtype} {feats.shape} for "
                            f"{len(coords)} coords")
        elif not np.isfinite(feats).all():
            problems.append(f"{fpath}: non-finite features")
        if not np.array_equal(fcoords, coords):
            problems.append(f"{fpath}: coords differ from {cpath}")
    return problems, rows, dims


def run(label, tool, args):
    fd, summary_path = tempfile.mkstemp(prefix="extract-summary-", suffix=".json")
    os.close(fd)
    os.unlink(summary_path)
    argv = [tool] + list(args) + ["--summary-json", summary_path, "--quiet"]
    device = args[args.index("--device") + 1] if "--device" in args else "cpu"
    torch = None
    if "--model" in args:
        import torch
        if device.startswith("cuda") and torch.cuda.is_available():
            # cuBLAS and the attention kernels set themselves up on their
            # first call: do that here, not in the first batch timed
            with torch.autocast("cuda", dtype=torch.float16):
                a = torch.randn(256, 1024, device=device)
                (a @ a.t()).sum().item()
            torch.cuda.synchronize()
    sys.argv = argv
    t0 = time.monotonic()
    try:
        runpy.run_path(tool, run_name="__main__")
        rc = 0
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    wall = time.monotonic() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    cuda_mb = None
    if torch is not None and device.startswith("cuda") and torch.cuda.is_available():
        cuda_mb = torch.cuda.max_memory_allocated() / 2**20
    if not os.path.exists(summary_path):
        print(f"{label}: wsi-extract exited {rc} with no summary")
        return rc or 1
    with open(summary_path, encoding="utf-8") as f:
        s = json.load(f)
    os.unlink(summary_path)
    secs = s["seconds"] or 1e-9
    enc = None
    if "--model" in args:
        job = s["folder"]
        encs = [d[len("features_"):] for d in os.listdir(job) if d.startswith("features_")]
        enc = encs[0] if len(encs) == 1 else None
        if enc is None:
            print(f"{label}: expected one features_* folder in {job}, found {encs}")
            return 3
    problems, rows, dims = check_outputs(s, enc)
    line = {"label": label, "rc": rc, "slides": len(s["done"]), "failed": len(s["failed"]),
            "patches": s["patches"], "patches_decoded": s["patches_decoded"],
            "seconds": round(secs, 2), "wall_s": round(wall, 2),
            "patches_per_s": round(s["patches_per_s"], 1),
            "wait_share": round(s["wait_s"] / secs, 4),
            "model_share": round(s["model_s"] / secs, 4),
            "peak_rss_mb": round(rss_mb), "cuda_peak_mb": None if cuda_mb is None
            else round(cuda_mb), "upload": s.get("upload"), "features_dim": sorted(dims),
            "files_ok": not problems and rows == s["patches"]}
    print("RESULT " + json.dumps(line))
    rate = s["patches_per_s"]
    rate = f"{rate:.0f}" if rate >= 100 else f"{rate:.3g}"
    print(f"{label}: {s['patches']} patches in {secs:.1f} s = {rate} patches/s; waiting for data {100 * s['wait_s'] / secs:.1f} %, in the model "
          f"{100 * s['model_s'] / secs:.1f} %; peak RSS {rss_mb:.0f} MB"
          + (f", CUDA peak {cuda_mb:.0f} MB" if cuda_mb is not None else "")
          + f"; upload {s.get('upload')}; files "
          + ("OK" if line["files_ok"] else "WRONG"))
    for name, reason in s["failed"]:
        print(f"  FAILED {name}: {reason}")
    for p in problems[:10]:
        print(f"  {p}")
    if rows != s["patches"]:
        print(f"  the coords files hold {rows} rows, the summary says {s['patches']} patches")
    return rc or (3 if not line["files_ok"] else 0)


def compare(job_a, enc_a, job_b, enc_b):
    h5py = _h5()
    folder = os.path.join(job_a, f"features_{enc_a}")
    names = sorted(n[:-3] for n in os.listdir(folder) if n.endswith(".h5")) \
        if os.path.isdir(folder) else []
    if not names:
        print(f"compare: no features in {job_a}")
        return 3
    worst_cos, worst_rel, bad = 1.0, 0.0, []
    for name in names:
        with h5py.File(os.path.join(job_a, f"features_{enc_a}", f"{name}.h5"), "r") as f:
            a, ca = f["features"][:].astype(np.float64), f["coords"][:]
        try:
            with h5py.File(os.path.join(job_b, f"features_{enc_b}", f"{name}.h5"), "r") as f:
                b, cb = f["features"][:].astype(np.float64), f["coords"][:]
        except OSError as exc:
            bad.append(f"{name}: {exc}")
            continue
        if not np.array_equal(ca, cb) or a.shape != b.shape:
            bad.append(f"{name}: coords or shapes differ ({a.shape} vs {b.shape})")
            continue
        cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        rel = np.abs(a - b).max() / max(np.abs(a).max(), 1e-12)
        worst_cos, worst_rel = min(worst_cos, float(cos.min())), max(worst_rel, float(rel))
    ok = not bad and worst_cos >= 0.999 and worst_rel <= 0.02
    print(f"compare {len(names)} slides: lowest row cosine {worst_cos:.6f}, max |a-b| / max |a| "
          f"{worst_rel:.2e}: {'SAME within tolerance' if ok else 'DIFFERENT'}")
    for line in bad:
        print(f"  {line}")
    return 0 if ok else 3


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--compare":
        sys.exit(compare(*sys.argv[2:]))
    if len(sys.argv) < 4 or sys.argv[3] != "--":
        sys.exit(__doc__)
    sys.exit(run(sys.argv[1], sys.argv[2], sys.argv[4:]))
