#!/usr/bin/python3
"""Writes the seed corpora of the ometiff, zarrmeta and zarrchunk libFuzzer
targets.

    tests/fuzz/libfuzzer/make-ome-seeds.py

ometiff: small OME-TIFF pyramids written by tifffile (SubIFDs; deflate with
predictor, uncompressed; classic and BigTIFF) and SubIFD
pyramids by libvips (LZW, zstd, JPEG: tifffile needs imagecodecs for them),
a grey one and a 16-bit one (refused), and one whose SubIFD points back at
the first image (the loop guard). zarrmeta: a group's metadata and its
levels' (NGFF 0.4 / Zarr v2 and NGFF 0.5 / Zarr v3), NUL-separated as
fuzz-zarrmeta.c reads them. zarrchunk: real chunks of each codec behind
fuzz-zarrchunk.c's three header bytes. Every seed is a few kilobytes. Run
once; the seeds are committed.
"""
import gzip
import json
import os
import struct
import subprocess
import zlib

import numcodecs
import numpy as np
import tifffile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, 'corpus')


def image(h, w, seed=1):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    a = np.stack([x * 3 % 256, y * 5 % 256, (x + y) % 256], -1)
    return (a + rng.integers(0, 8, (h, w, 3))).clip(0, 255).astype(np.uint8)


def ome(name, compression, bigtiff=False, levels=2, dtype=np.uint8,
        photometric='rgb', channels=3):
    path = os.path.join(CORPUS, 'ometiff', name)
    base = image(64, 96)
    if channels == 1:
        base = base[..., 0]
    arrs = [base.astype(dtype)]
    for _ in range(levels - 1):
        arrs.append(np.ascontiguousarray(arrs[-1][::2, ::2]))
    kw = {'compression': compression} if compression else {}
    if compression == 'zlib':
        kw['predictor'] = True
    with tifffile.TiffWriter(path, ome=True, bigtiff=bigtiff) as tw:
        tw.write(arrs[0], tile=(16, 16), photometric=photometric,
                 subifds=levels - 1, metadata={'PhysicalSizeX': 0.25,
                                               'PhysicalSizeY': 0.25},
                 **kw)
        for a in arrs[1:]:
            tw.write(a, tile=(16, 16), photometric=photometric,
                     subfiletype=1, metadata=None, **kw)
    return path


def ometiff_seeds():
    os.makedirs(os.path.join(CORPUS, 'ometiff'), exist_ok=True)
    ome('deflate-pred.ome.tif', 'zlib')
    ome('deflate-3lvl.ome.tif', 'zlib', levels=3)
    ome('raw-bigtiff.ome.tif', None, bigtiff=True)
    src = os.path.join(CORPUS, 'ometiff', 'src.v')
    tifffile.imwrite(src + '.tif', image(64, 96))
    for name, opts in [('vips-lzw.tif', ['--compression', 'lzw']),
                       ('vips-zstd.tif', ['--compression', 'zstd']),
                       ('vips-jpeg.tif', ['--compression', 'jpeg'])]:
        subprocess.run(['vips', 'tiffsave', src + '.tif',
                        os.path.join(CORPUS, 'ometiff', name), '--tile',
                        '--tile-width', '16', '--tile-height', '16',
                        '--pyramid', '--subifd'] + opts, check=True)
    os.unlink(src + '.tif')
    ome('raw.ome.tif', None)
    ome('grey.ome.tif', 'zlib', photometric='minisblack', channels=1)
    ome('uint16.ome.tif', 'zlib', dtype=np.uint16)
    # the SubIFD of the first image points back at the first image
    path = ome('subifd-loop.ome.tif', 'zlib')
    with tifffile.TiffFile(path) as t:
        page = t.pages[0]
        tag = page.tags['SubIFDs']
        first = t.pages[0].offset
        where, count = tag.valueoffset, tag.count
    with open(path, 'r+b') as f:
        if count == 1 and tag.dtype in (4, 13):
            # a single SubIFD offset is stored in the tag's value field
            f.seek(where)
            f.write(struct.pack('<I', first))


def zarr_meta_seeds():
    d = os.path.join(CORPUS, 'zarrmeta')
    os.makedirs(d, exist_ok=True)
    axes = [{'name': 'c', 'type': 'channel'},
            {'name': 'y', 'type': 'space', 'unit': 'micrometer'},
            {'name': 'x', 'type': 'space', 'unit': 'micrometer'}]
    ds = [{'path': str(i), 'coordinateTransformations':
           [{'type': 'scale', 'scale': [1.0, 0.25 * 2 ** i, 0.25 * 2 ** i]}]}
          for i in range(2)]
    ms = [{'version': '0.4', 'axes': axes, 'datasets': ds}]
    v2 = [json.dumps({'zarr_format': 2, 'shape': [3, 300 >> i, 500 >> i],
                      'chunks': [3, 128, 128], 'dtype': '|u1',
                      'compressor': {'id': c, 'level': 1}, 'fill_value': 0,
                      'order': o, 'filters': None,
                      'dimension_separator': s})
          for i, (c, o, s) in enumerate([('zlib', 'C', '.'),
                                         ('zstd', 'F', '/')])]
    with open(os.path.join(d, 'v2-cyx'), 'w') as f:
        f.write('\0'.join([json.dumps({'multiscales': ms})] + v2))
    ms5 = [dict(ms[0], version='0.5')]
    group = json.dumps({'zarr_format': 3, 'node_type': 'group',
                        'attributes': {'ome': {'version': '0.5',
                                               'multiscales': ms5}}})

    def array(i, codecs, keys):
        return json.dumps({
            'zarr_format': 3, 'node_type': 'array',
            'shape': [3, 300 >> i, 500 >> i], 'data_type': 'uint8',
            'chunk_grid': {'name': 'regular',
                           'configuration': {'chunk_shape': [3, 128, 128]}},
            'chunk_key_encoding': keys, 'fill_value': 0, 'codecs': codecs})
    bytes_ = {'name': 'bytes', 'configuration': {'endian': 'little'}}
    arrays = [
        array(0, [{'name': 'transpose', 'configuration': {'order': [1, 2, 0]}},
                  bytes_, {'name': 'zstd', 'configuration': {'level': 3}}],
              {'name': 'default', 'configuration': {'separator': '/'}}),
        array(1, [bytes_, {'name': 'blosc', 'configuration': {
            'cname': 'lz4', 'clevel': 5, 'shuffle': 'shuffle',
            'typesize': 1, 'blocksize': 0}}],
              {'name': 'v2', 'configuration': {'separator': '.'}}),
    ]
    with open(os.path.join(d, 'v3-cyx'), 'w') as f:
        f.write('\0'.join([group] + arrays))
    sharded = array(0, [{'name': 'sharding_indexed', 'configuration': {
        'chunk_shape': [3, 64, 64], 'codecs': [bytes_],
        'index_codecs': [bytes_]}}], {'name': 'default'})
    with open(os.path.join(d, 'v3-sharded'), 'w') as f:
        f.write('\0'.join([group, sharded]))
    # an index at the start, checked by crc32c; zstd inner chunks
    sharded_crc = array(0, [{'name': 'sharding_indexed', 'configuration': {
        'chunk_shape': [3, 32, 64],
        'codecs': [bytes_, {'name': 'zstd', 'configuration': {'level': 3}}],
        'index_codecs': [bytes_, {'name': 'crc32c'}],
        'index_location': 'start'}}], {'name': 'default'})
    with open(os.path.join(d, 'v3-sharded-crc32c'), 'w') as f:
        f.write('\0'.join([group, sharded_crc]))
    with open(os.path.join(d, 'b2r-root'), 'w') as f:
        f.write(json.dumps({'bioformats2raw.layout': 3}))


def zarr_chunk_seeds():
    d = os.path.join(CORPUS, 'zarrchunk')
    os.makedirs(d, exist_ok=True)
    h, w = 24, 40
    raw = image(h, w, 2).tobytes()
    codecs = [('raw', 0, raw),
              ('zlib', 1, zlib.compress(raw, 6)),
              ('gzip', 2, gzip.compress(raw, 5)),
              ('zstd', 3, bytes(numcodecs.Zstd(level=3).encode(raw))),
              ('blosc-lz4', 4, bytes(numcodecs.Blosc(
                  cname='lz4', shuffle=numcodecs.Blosc.SHUFFLE).encode(raw))),
              ('blosc-zstd', 4, bytes(numcodecs.Blosc(
                  cname='zstd', shuffle=numcodecs.Blosc.BITSHUFFLE)
                  .encode(raw)))]
    for name, codec, data in codecs:
        with open(os.path.join(d, name), 'wb') as f:
            f.write(bytes([codec, h - 1, w - 1]) + data)


ometiff_seeds()
zarr_meta_seeds()
zarr_chunk_seeds()
