#!/usr/bin/python3
# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.0-or-later
"""OME-TIFF and OME-Zarr against the TIFF they came from, locally and over
HTTP at +50 ms, the same seeded stream, side by side in one run.

    meson devenv -C build -w . /usr/bin/python3 tests/benchmarks/bench-ome.py

Writes one synthetic Aperio slide (wsi-make-test-slides, JPEG tiles) and
from it:

- an OME-TIFF holding the SVS's own JPEG tiles, byte for byte (tifffile
  writes the tiles and JPEGTables it is handed; SubIFD levels, OME-XML
  PhysicalSize): "OME-TIFF JPEG vs SVS" compares the two containers of the
  same compressed tiles;
- every level decoded once by libvips, written as an uncompressed SubIFD
  TIFF (tifffile) and as an OME-Zarr store (NGFF 0.5, Zarr v3, (y, x, c),
  256 x 256 chunks, zstd level 3, written from the specification): "OME-Zarr
  zstd vs uncompressed TIFF" compares the same pixels;
- the OME-Zarr store and the OME-TIFF served by nginx on 127.0.0.1 with
  50 ms added before each response (bench-remote.py's server: nginx's echo
  module sleeps, so waiting costs no CPU) against the same from local disk.

Each stream runs in its own process (bench-remote.py's child: wsislidesrc !
tissuemask ! patchsampler target-mpp=0.5 ! patchreader threads=2
read-ahead=256 ! patchbatch), in rounds that alternate the sources so load
hits them alike; the median round's steady patches/s (from 20 % of the
stream on) and each pair's ratio within the round are printed, and whether
the pair's streams are byte-identical. Goals: OME-TIFF JPEG >= 95 % of
the SVS, OME-Zarr zstd >= 80 % of the uncompressed TIFF, HTTP +50 ms
>= 80 % of local.
"""

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "bench_remote", os.path.join(HERE, "bench-remote.py"))
remote = importlib.util.module_from_spec(spec)
spec.loader.exec_module(remote)


def tiled_pages(path):
    import tifffile
    with tifffile.TiffFile(path) as t:
        return [p for p in t.pages if p.is_tiled]


def ome_from_svs_tiles(svs, out, mpp):
    """The SVS's JPEG tiles and tables, unchanged, as an OME-TIFF pyramid."""
    import tifffile
    # tifffile looks its JPEG encoder up (imagecodecs) even when it is
    # handed encoded tiles, which it writes as they are: a stand-in that is
    # never called lets it write without imagecodecs.
    tifffile.TIFF.COMPRESSORS._codecs.setdefault(7, lambda data, *a, **k: data)
    with tifffile.TiffFile(svs) as t, open(svs, "rb") as f:
        pages = [p for p in t.pages if p.is_tiled]

        def tiles(p):
            for off, n in zip(p.dataoffsets, p.databytecounts):
                f.seek(off)
                yield f.read(n)

        with tifffile.TiffWriter(out, ome=True) as tw:
            for i, p in enumerate(pages):
                kw = dict(shape=p.shape, dtype=p.dtype,
                          tile=(p.tilelength, p.tilewidth),
                          compression="jpeg", photometric=p.photometric,
                          jpegtables=p.jpegtables)
                if p.photometric == 6:      # YCbCr
                    kw["subsampling"] = p.subsampling
                if i == 0:
                    tw.write(tiles(p), subifds=len(pages) - 1,
                             metadata={"PhysicalSizeX": mpp,
                                       "PhysicalSizeY": mpp}, **kw)
                else:
                    tw.write(tiles(p), subfiletype=1, metadata=None, **kw)
    return len(pages)


def decoded_levels(svs, ome_jpeg, work):
    """Every level decoded by libvips (libtiff, libjpeg-turbo) from the
    OME-TIFF copy of the SVS's tiles (vips opens an .svs with OpenSlide)."""
    levels = []
    for i, p in enumerate(tiled_pages(svs)):
        raw = os.path.join(work, "level%d.raw" % i)
        subprocess.run(["vips", "rawsave", "%s[subifd=%d]" % (ome_jpeg, i - 1),
                        raw], check=True)
        levels.append(np.fromfile(raw, np.uint8).reshape(p.shape[0],
                                                         p.shape[1], 3))
        os.unlink(raw)
    return levels


def raw_tiff(levels, out, mpp):
    import tifffile
    with tifffile.TiffWriter(out, ome=True) as tw:
        tw.write(levels[0], tile=(256, 256), photometric="rgb",
                 subifds=len(levels) - 1,
                 metadata={"PhysicalSizeX": mpp, "PhysicalSizeY": mpp})
        for a in levels[1:]:
            tw.write(a, tile=(256, 256), photometric="rgb", subfiletype=1,
                     metadata=None)


def zarr_v3(levels, store, mpp):
    import numcodecs
    codec = numcodecs.Zstd(level=3)
    axes = [{"name": "y", "type": "space", "unit": "micrometer"},
            {"name": "x", "type": "space", "unit": "micrometer"},
            {"name": "c", "type": "channel"}]
    datasets = []
    for i, a in enumerate(levels):
        d = os.path.join(store, str(i))
        os.makedirs(d)
        with open(os.path.join(d, "zarr.json"), "w") as f:
            json.dump({"zarr_format": 3, "node_type": "array",
                       "shape": list(a.shape), "data_type": "uint8",
                       "chunk_grid": {"name": "regular", "configuration":
                                      {"chunk_shape": [256, 256, 3]}},
                       "chunk_key_encoding": {"name": "default"},
                       "fill_value": 0,
                       "codecs": [{"name": "bytes"},
                                  {"name": "zstd",
                                   "configuration": {"level": 3}}]}, f)
        for y in range(0, a.shape[0], 256):
            for x in range(0, a.shape[1], 256):
                c = np.zeros((256, 256, 3), np.uint8)
                p = a[y:y + 256, x:x + 256]
                c[:p.shape[0], :p.shape[1]] = p
                k = os.path.join(d, "c", str(y // 256), str(x // 256))
                os.makedirs(k, exist_ok=True)
                with open(os.path.join(k, "0"), "wb") as f:
                    f.write(bytes(codec.encode(c.tobytes())))
        s = mpp * levels[0].shape[1] / a.shape[1]
        datasets.append({"path": str(i), "coordinateTransformations":
                         [{"type": "scale", "scale": [s, s, 1.0]}]})
    with open(os.path.join(store, "zarr.json"), "w") as f:
        json.dump({"zarr_format": 3, "node_type": "group", "attributes":
                   {"ome": {"version": "0.5", "multiscales":
                            [{"axes": axes, "datasets": datasets}]}}}, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--width", type=int, default=8192)
    ap.add_argument("--height", type=int, default=6144)
    ap.add_argument("--patches", type=int, default=1500)
    ap.add_argument("--patch-size", type=int, default=224)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--delay", type=int, default=50)
    ap.add_argument("--reader-extra", default="read-ahead=256")
    args = ap.parse_args()
    args.patches_per_slide = args.patches
    if not os.path.exists(remote.ECHO_MODULE):
        print("SKIP: nginx's echo module (%s) is missing" % remote.ECHO_MODULE)
        return 77
    mpp = 0.25
    work = tempfile.mkdtemp(prefix="bench-ome-")
    www = os.path.join(work, "www")
    subprocess.check_call(["wsi-make-test-slides", "-n", "1", "-W",
                           str(args.width), "-H", str(args.height), "-l", "3",
                           "-s", "2", "--layout", "aperio", www],
                          stdout=subprocess.DEVNULL)
    svs = os.path.join(www, "slide-00.svs")
    ome_jpeg = os.path.join(www, "jpeg.ome.tif")
    ome_from_svs_tiles(svs, ome_jpeg, mpp)
    levels = decoded_levels(svs, ome_jpeg, work)
    tiff_raw = os.path.join(www, "raw.ome.tif")
    raw_tiff(levels, tiff_raw, mpp)
    store = os.path.join(www, "zstd.zarr")
    zarr_v3(levels, store, mpp)
    del levels
    nginx, ports = remote.start_nginx(www, work, [args.delay])
    url = "http://127.0.0.1:%d/%%s" % ports[args.delay]
    sources = [("SVS (JPEG)", svs), ("OME-TIFF (same JPEG tiles)", ome_jpeg),
               ("TIFF uncompressed", tiff_raw), ("OME-Zarr v3 zstd", store),
               ("OME-TIFF JPEG, HTTP +%d ms" % args.delay,
                url % "jpeg.ome.tif"),
               ("OME-Zarr zstd, HTTP +%d ms" % args.delay, url % "zstd.zarr")]
    pairs = [(1, 0, 0.95), (3, 2, 0.80), (4, 1, 0.80), (5, 3, 0.80)]
    runs = {i: [] for i in range(len(sources))}
    load = os.getloadavg()
    try:
        for r in range(args.rounds):
            order = list(range(len(sources)))
            if r % 2:
                order.reverse()
            for i in order:
                runs[i].append(remote.child(args, sources[i][1], "stream"))
    finally:
        nginx.terminate()
        nginx.wait()
    sizes = {n: (sum(os.path.getsize(os.path.join(dp, f))
                     for dp, _, fs in os.walk(p) for f in fs)
                 if os.path.isdir(p) else os.path.getsize(p))
             for n, p in sources[:4]}
    print("bench-ome: %d x %d slide, 3 levels, %d patches of %d px at "
          "0.5 mpp, %d rounds, load at start %.1f" % (
              args.width, args.height, args.patches, args.patch_size,
              args.rounds, load[0]))
    print("| source | bytes on disk | steady patches/s (median) | "
          "requests/patch |")
    print("|---|---|---|---|")
    for i, (name, _) in enumerate(sources):
        rates = [remote.steady_rate(x["marks"], x["patches"])
                 for x in runs[i]]
        n = max(runs[i][0]["patches"], 1)
        print("| %s | %s | %.0f | %.2f |" % (
            name, "{:,}".format(sizes[name]) if name in sizes else "-",
            statistics.median(rates), runs[i][0]["requests"] / n))
    print()
    print("| pair | ratio (median of rounds) | goal | same bytes |")
    print("|---|---|---|---|")
    for a, b, goal in pairs:
        ratios = [remote.steady_rate(x["marks"], x["patches"])
                  / max(remote.steady_rate(y["marks"], y["patches"]), 1e-9)
                  for x, y in zip(runs[a], runs[b])]
        same = all(x["digest"] == runs[b][0]["digest"] for x in runs[a])
        m = statistics.median(ratios)
        print("| %s / %s | %.1f %% | >= %d %% | %s |" % (
            sources[a][0], sources[b][0], 100 * m, round(100 * goal),
            "yes" if same else "no"))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
