#!/usr/bin/python3
"""Writes the seed corpora of the tiffdir and jpegtile libFuzzer targets.

    tests/fuzz/libfuzzer/make-seeds.py BUILD_DIR

Small slides come from the test slide generator (BUILD_DIR/tools/
wsi-make-test-slides): generic and Aperio layouts, 1 to 3 levels, tiles of
16 to 64 pixels, so that every seed is a few kilobytes (libFuzzer mutates
small inputs far faster). They go to corpus/tiffdir/ as they are; for
corpus/jpegtile/ the JPEGTables and the first tile of each level are cut out
of them by a minimal classic-TIFF reader below and written in the target's
input layout (see fuzz-jpegtile.c). Run once; the seeds are committed.
"""
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, generator options)
SLIDES = [
    ("generic-2lvl-t32", ["--layout", "generic", "-W", "96", "-H", "64",
                          "-l", "2", "-t", "32", "-s", "2"]),
    ("generic-1lvl-t16", ["--layout", "generic", "-W", "40", "-H", "24",
                          "-l", "1", "-t", "16"]),
    ("aperio-3lvl-t32", ["--layout", "aperio", "-W", "160", "-H", "96",
                         "-l", "3", "-t", "32", "-s", "2"]),
    ("aperio-2lvl-t64-step3", ["--layout", "aperio", "-W", "200", "-H",
                               "130", "-l", "2", "-t", "64", "-s", "3"]),
]


def make_slide(tool, options, folder):
    subprocess.run([tool, "-n", "1", "-b", "2", "-q", "50", "--seed", "7"]
                   + options + [folder], check=True, stdout=subprocess.DEVNULL)
    files = [f for f in os.listdir(folder) if not f.endswith(".txt")]
    assert len(files) == 1, files
    with open(os.path.join(folder, files[0]), "rb") as f:
        return files[0], f.read()


def tiff_directories(data):
    """Yields {tag: values} for every IFD of a classic little-endian TIFF."""
    assert data[:4] == b"II*\0", "the generator writes classic LE TIFF"
    sizes = {1: 1, 2: 1, 3: 2, 4: 4, 7: 1, 16: 8}
    formats = {1: "B", 2: "B", 3: "H", 4: "I", 7: "B", 16: "Q"}
    (offset,) = struct.unpack_from("<I", data, 4)
    while offset:
        (n,) = struct.unpack_from("<H", data, offset)
        tags = {}
        for i in range(n):
            tag, typ, count, value = struct.unpack_from(
                "<HHII", data, offset + 2 + 12 * i)
            size = sizes.get(typ, 1) * count
            where = offset + 2 + 12 * i + 8 if size <= 4 else value
            tags[tag] = struct.unpack_from(
                "<%d%s" % (count, formats.get(typ, "B")), data, where)
        yield tags
        (offset,) = struct.unpack_from("<I", data, offset + 2 + 12 * n)


def jpeg_seed(data, tags, flags):
    """One jpegtile input: header, JPEGTables, the first tile."""
    tables = bytes(tags.get(347, ()))
    tile = data[tags[324][0]:tags[324][0] + tags[325][0]]
    rgb = tags.get(262, (6,))[0] == 2
    header = struct.pack(">BBBBBBBH", flags | int(rgb),
                         tags[322][0] // 16 - 1, tags[323][0] // 16 - 1,
                         64, 32, 128, 200, len(tables))
    return header + tables + tile


def main():
    build = sys.argv[1]
    tool = os.path.join(build, "tools", "wsi-make-test-slides")
    tiffdir = os.path.join(HERE, "corpus", "tiffdir")
    jpegtile = os.path.join(HERE, "corpus", "jpegtile")
    os.makedirs(tiffdir, exist_ok=True)
    os.makedirs(jpegtile, exist_ok=True)
    # flags: plain decode; scale 2; crop, RGB layout; crop, scale 4, BGRX
    variants = [0x00, 0x02, 0x48, 0x44 | (4 << 3)]
    for name, options in SLIDES:
        with tempfile.TemporaryDirectory() as folder:
            filename, data = make_slide(tool, options, folder)
        ext = os.path.splitext(filename)[1]
        with open(os.path.join(tiffdir, name + ext), "wb") as f:
            f.write(data)
        for level, tags in enumerate(tiff_directories(data)):
            if 322 not in tags or 324 not in tags:
                continue    # strip images (Aperio thumbnail, label)
            flags = variants[level % len(variants)]
            with open(os.path.join(jpegtile, "%s-dir%d.bin" % (name, level)),
                      "wb") as f:
                f.write(jpeg_seed(data, tags, flags))


if __name__ == "__main__":
    main()
