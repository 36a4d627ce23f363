#!/usr/bin/python3
# Writes the OME-Zarr stores of tests/check/libs/wsiomezarr.c (NGFF 0.4 on
# Zarr v2) from the specification with numpy and numcodecs' codecs (zlib,
# gzip, zstd, blosc), has python3-zarr read every level back (the
# independent reader: its decode must equal the array written), and writes
# each level's pixels as tight RGB rows. NGFF 0.5 stores on Zarr v3 are
# written from the Zarr v3 specification alone (zarr.json, the `bytes`,
# `transpose`, `gzip`, `zstd`, `blosc` and `sharding_indexed` codecs, both
# chunk key encodings); their expected pixels are numpy's arrays.
#
# usage: omezarr-oracle.py OUT_DIR
# OUT_DIR/cases.txt: "name levels mpp" per readable store, "refuse name
# word" per store that must be refused, "damaged name word" per store whose
# read must fail naming the chunk; OUT_DIR/<name>.<level>.rgb.

import gzip
import json
import os
import shutil
import struct
import sys

import numpy as np
import numcodecs
import zarr

from oracleimage import halve, image

out = sys.argv[1]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
cases = []

base = image(300, 500, 3)
pyramid = [base, halve(base), halve(halve(base))]
AXES = {'c': {'name': 'c', 'type': 'channel'},
        'y': {'name': 'y', 'type': 'space', 'unit': 'micrometer'},
        'x': {'name': 'x', 'type': 'space', 'unit': 'micrometer'},
        't': {'name': 't', 'type': 'time'},
        'z': {'name': 'z', 'type': 'space', 'unit': 'micrometer'}}


def write_array(path, a, chunks, codec, sep, fill=0, skip=(), order='C'):
    os.makedirs(path)
    meta = {'zarr_format': 2, 'shape': list(a.shape), 'chunks': list(chunks),
            'dtype': a.dtype.str if a.dtype.itemsize > 1 else '|u1',
            'compressor': codec.get_config() if codec else None,
            'fill_value': fill, 'order': order, 'filters': None,
            'dimension_separator': sep}
    with open(os.path.join(path, '.zarray'), 'w') as f:
        json.dump(meta, f)
    grid = [range(-(-s // c)) for s, c in zip(a.shape, chunks)]
    for idx in np.ndindex(*[len(g) for g in grid]):
        if idx in skip:
            continue
        block = np.zeros(chunks, a.dtype) + np.array(fill, a.dtype)
        sl = tuple(slice(i * c, min((i + 1) * c, s))
                   for i, c, s in zip(idx, chunks, a.shape))
        part = a[sl]
        block[tuple(slice(0, p) for p in part.shape)] = part
        data = block.tobytes(order=order)
        if codec:
            data = codec.encode(data)
        key = sep.join(str(i) for i in idx)
        p = os.path.join(path, key)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, 'wb') as f:
            f.write(bytes(data))


def write_store(name, layout, codec, sep='.', chunk=128, levels=pyramid,
                scale=0.25, group='', fill=0, skip0=(), dtype=np.uint8,
                order='C'):
    root = os.path.join(out, name)
    img = os.path.join(root, group)
    os.makedirs(img, exist_ok=True)
    if group:
        with open(os.path.join(root, '.zattrs'), 'w') as f:
            json.dump({'bioformats2raw.layout': 3}, f)
        with open(os.path.join(root, '.zgroup'), 'w') as f:
            json.dump({'zarr_format': 2}, f)
    datasets = []
    for i, rgb in enumerate(levels):
        arr = rgb.astype(dtype)
        if layout == 'cyx':
            arr = np.moveaxis(arr, -1, 0)
        elif layout == 'tczyx':
            arr = np.moveaxis(arr, -1, 0)[None, :, None]
        elif layout == 'cyx4':
            arr = np.moveaxis(np.concatenate([arr, arr[..., :1]], -1), -1, 0)
        chunks = [chunk if n in 'yx' else (1 if n in 'tz' else arr.shape[k])
                  for k, n in enumerate(layout.replace('4', ''))]
        write_array(os.path.join(img, str(i)), arr, chunks, codec, sep,
                    fill=fill, skip=skip0 if i == 0 else (), order=order)
        f = 2 ** i
        sc = [1.0 if n in 'ctz' else scale * f
              for n in layout.replace('4', '')]
        datasets.append({'path': str(i), 'coordinateTransformations':
                         [{'type': 'scale', 'scale': sc}]})
    attrs = {'multiscales': [{'version': '0.4', 'name': name,
                              'axes': [AXES[n] for n in
                                       layout.replace('4', '')],
                              'datasets': datasets}]}
    with open(os.path.join(img, '.zattrs'), 'w') as f:
        json.dump(attrs, f)
    with open(os.path.join(img, '.zgroup'), 'w') as f:
        json.dump({'zarr_format': 2}, f)
    return img


def check_with_zarr(img, layout, levels):
    # python3-zarr's own reading of every level, as RGB (y, x, c)
    for i, rgb in enumerate(levels):
        a = np.asarray(zarr.open_array(os.path.join(img, str(i)),
                                       mode='r')[...])
        if layout == 'cyx':
            a = np.moveaxis(a, 0, -1)
        elif layout == 'tczyx':
            a = np.moveaxis(a[0, :, 0], 0, -1)
        assert a.shape == rgb.shape, (img, i, a.shape)
        yield i, np.ascontiguousarray(a)


def readable(name, layout, codec, **kw):
    img = write_store(name, layout, codec, **kw)
    levels = kw.get('levels', pyramid)
    for i, a in check_with_zarr(img, layout, levels):
        if not kw.get('skip0') or i > 0:
            assert (a == levels[i]).all(), (name, i)
        a.tofile(os.path.join(out, '%s.%d.rgb' % (name, i)))
    cases.append('%s %d %g' % (name, len(levels), kw.get('scale', 0.25)))


readable('cyx-raw.zarr', 'cyx', None)
readable('cyx-zlib.zarr', 'cyx', numcodecs.Zlib(level=6))
readable('yxc-gzip.zarr', 'yxc', numcodecs.GZip(level=5), sep='/')
readable('yxc-zstd.zarr', 'yxc', numcodecs.Zstd(level=3))
readable('cyx-blosc-lz4.zarr', 'cyx', numcodecs.Blosc(
    cname='lz4', clevel=5, shuffle=numcodecs.Blosc.SHUFFLE))
readable('yxc-blosc-zstd.zarr', 'yxc', numcodecs.Blosc(
    cname='zstd', clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE))
readable('tczyx-zlib.zarr', 'tczyx', numcodecs.Zlib(level=1), scale=0.5)
# bioformats2raw's layout: the image is the group 0 below the root
readable('b2r.zarr', 'cyx', numcodecs.Zlib(level=1), group='0')
# a chunk never written: the fill value (white) there, as zarr reads it
readable('sparse.zarr', 'yxc', numcodecs.Zstd(level=1), fill=255,
         skip0={(1, 1, 0)})
# Fortran-ordered chunks
readable('cyx-forder.zarr', 'cyx', numcodecs.Zlib(level=1), order='F')


# ---- Zarr v3 (NGFF 0.5), from the specification --------------------------

def v3_codecs(compress, transpose, shard=None, at_start=False, crc=False):
    if shard is not None:
        index_codecs = [{'name': 'bytes',
                         'configuration': {'endian': 'little'}}]
        if crc:
            index_codecs.append({'name': 'crc32c'})
        return [{'name': 'sharding_indexed', 'configuration': {
            'chunk_shape': list(shard),
            'codecs': v3_codecs(compress, transpose),
            'index_codecs': index_codecs,
            'index_location': 'start' if at_start else 'end'}}]
    codecs = []
    if transpose is not None:
        codecs.append({'name': 'transpose',
                       'configuration': {'order': list(transpose)}})
    codecs.append({'name': 'bytes', 'configuration': {'endian': 'little'}})
    if compress == 'gzip':
        codecs.append({'name': 'gzip', 'configuration': {'level': 5}})
    elif compress == 'zstd':
        codecs.append({'name': 'zstd',
                       'configuration': {'level': 3, 'checksum': False}})
    elif compress == 'blosc':
        codecs.append({'name': 'blosc', 'configuration': {
            'cname': 'lz4', 'clevel': 5, 'shuffle': 'shuffle',
            'typesize': 1, 'blocksize': 0}})
    return codecs


def v3_encode(data, compress):
    if compress == 'gzip':
        return gzip.compress(data, 5)
    if compress == 'zstd':
        return bytes(numcodecs.Zstd(level=3).encode(data))
    if compress == 'blosc':
        return bytes(numcodecs.Blosc(cname='lz4', clevel=5,
                                     shuffle=numcodecs.Blosc.SHUFFLE)
                     .encode(data))
    return data


def v3_key(idx, encoding, sep):
    if encoding == 'default':
        return 'c' + sep + sep.join(str(i) for i in idx)
    return sep.join(str(i) for i in idx)


def crc32c(data):
    # Castagnoli CRC-32, bitwise (the Zarr v3 crc32c codec)
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 if crc & 1 else 0)
    return crc ^ 0xffffffff


def v3_shard(block, inner, compress, transpose, fill, at_start, crc):
    # sharding_indexed from the specification: inner chunks in C order of
    # the shard's inner grid, each encoded by the inner codecs; an inner
    # chunk holding only the fill value is left out (2^64-1, 2^64-1)
    grid = [s // c for s, c in zip(block.shape, inner)]
    n = int(np.prod(grid))
    index_size = 16 * n + (4 if crc else 0)
    body, entries = b'', []
    for idx in np.ndindex(*grid):
        part = block[tuple(slice(i * c, (i + 1) * c)
                           for i, c in zip(idx, inner))]
        if (part == fill).all():
            entries.append((2 ** 64 - 1, 2 ** 64 - 1))
            continue
        if transpose is not None:
            part = np.transpose(part, transpose)
        data = v3_encode(np.ascontiguousarray(part).tobytes(), compress)
        entries.append(((index_size if at_start else 0) + len(body),
                        len(data)))
        body += data
    index = b''.join(struct.pack('<QQ', o, b) for o, b in entries)
    if crc:
        index += struct.pack('<I', crc32c(index))
    return index + body if at_start else body + index


def write_array_v3(path, a, chunks, compress, encoding, sep, transpose,
                   fill=0, skip=(), dtype='uint8', codecs=None, shard=None,
                   at_start=False, crc=False):
    os.makedirs(path)
    meta = {'zarr_format': 3, 'node_type': 'array', 'shape': list(a.shape),
            'data_type': dtype,
            'chunk_grid': {'name': 'regular',
                           'configuration': {'chunk_shape': list(chunks)}},
            'chunk_key_encoding': {'name': encoding,
                                   'configuration': {'separator': sep}},
            'fill_value': fill,
            'codecs': codecs or v3_codecs(compress, transpose, shard,
                                          at_start, crc),
            'attributes': {}}
    with open(os.path.join(path, 'zarr.json'), 'w') as f:
        json.dump(meta, f)
    grid = [-(-s // c) for s, c in zip(a.shape, chunks)]
    for idx in np.ndindex(*grid):
        if idx in skip:
            continue
        # regular grid: edge chunks are stored whole, padded with the fill
        block = np.full(chunks, fill, a.dtype)
        sl = tuple(slice(i * c, min((i + 1) * c, s))
                   for i, c, s in zip(idx, chunks, a.shape))
        part = a[sl]
        block[tuple(slice(0, p) for p in part.shape)] = part
        if shard is not None:
            data = v3_shard(block, shard, compress, transpose, fill,
                            at_start, crc)
        else:
            if transpose is not None:
                block = np.transpose(block, transpose)
            data = v3_encode(np.ascontiguousarray(block).tobytes(), compress)
        p = os.path.join(path, v3_key(idx, encoding, sep))
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, 'wb') as f:
            f.write(data)


def write_store_v3(name, layout, compress, encoding='default', sep='/',
                   transpose=None, chunk=128, scale=0.25, group='', fill=0,
                   skip0=(), dtype='uint8', codecs=None, shard=None,
                   at_start=False, crc=False):
    root = os.path.join(out, name)
    img = os.path.join(root, group)
    os.makedirs(img, exist_ok=True)
    if group:
        with open(os.path.join(root, 'zarr.json'), 'w') as f:
            json.dump({'zarr_format': 3, 'node_type': 'group', 'attributes':
                       {'ome': {'version': '0.5',
                                'bioformats2raw.layout': 3}}}, f)
    datasets = []
    for i, rgb in enumerate(pyramid):
        arr = rgb
        if layout == 'cyx':
            arr = np.moveaxis(arr, -1, 0)
        elif layout == 'tczyx':
            arr = np.moveaxis(arr, -1, 0)[None, :, None]
        chunks = [chunk if n in 'yx' else (1 if n in 'tz' else arr.shape[k])
                  for k, n in enumerate(layout)]
        write_array_v3(os.path.join(img, str(i)), arr, chunks, compress,
                       encoding, sep, transpose, fill=fill,
                       skip=skip0 if i == 0 else (), dtype=dtype,
                       codecs=codecs, shard=shard, at_start=at_start, crc=crc)
        sc = [1.0 if n in 'ctz' else scale * 2 ** i for n in layout]
        datasets.append({'path': str(i), 'coordinateTransformations':
                         [{'type': 'scale', 'scale': sc}]})
    attrs = {'ome': {'version': '0.5', 'multiscales': [
        {'name': name, 'axes': [AXES[n] for n in layout],
         'datasets': datasets}]}}
    with open(os.path.join(img, 'zarr.json'), 'w') as f:
        json.dump({'zarr_format': 3, 'node_type': 'group',
                   'attributes': attrs}, f)
    return img


def readable_v3(name, layout, compress, **kw):
    write_store_v3(name, layout, compress, **kw)
    for i, rgb in enumerate(pyramid):
        a = rgb.copy()
        if i == 0:
            # a chunk never written reads as the fill value
            for idx in kw.get('skip0', ()):
                yi, xi = idx[layout.index('y')], idx[layout.index('x')]
                c = kw.get('chunk', 128)
                a[yi * c:(yi + 1) * c, xi * c:(xi + 1) * c] = \
                    kw.get('fill', 0)
        a.tofile(os.path.join(out, '%s.%d.rgb' % (name, i)))
    cases.append('%s %d %g' % (name, len(pyramid), kw.get('scale', 0.25)))


readable_v3('v3-cyx-zstd.zarr', 'cyx', 'zstd')
readable_v3('v3-yxc-gzip-dot.zarr', 'yxc', 'gzip', sep='.')
readable_v3('v3-yxc-blosc-v2keys.zarr', 'yxc', 'blosc', encoding='v2',
            sep='.')
# (c, y, x) stored as (y, x, c) through transpose, no compressor
readable_v3('v3-cyx-transpose.zarr', 'cyx', None, transpose=(1, 2, 0))
readable_v3('v3-tczyx-v2slash.zarr', 'tczyx', 'zstd', encoding='v2',
            sep='/', scale=0.5, fill=255, skip0={(0, 0, 0, 1, 2)})
readable_v3('v3-b2r.zarr', 'cyx', 'gzip', group='0')
# sharding_indexed: 256-pixel shards of 64-pixel inner chunks, index at the
# end; zstd inner chunks, an index at the start checked by crc32c, with a
# shard never written and inner chunks left out (fill value); transposed
# gzip inner chunks
readable_v3('v3-sharded-yxc.zarr', 'yxc', None, chunk=256, shard=(64, 64, 3))
readable_v3('v3-sharded-zstd-crc.zarr', 'cyx', 'zstd', chunk=256,
            shard=(3, 64, 128), at_start=True, crc=True, fill=255,
            skip0={(0, 1, 0)})
readable_v3('v3-sharded-transpose.zarr', 'cyx', 'gzip', chunk=256,
            shard=(3, 128, 64), transpose=(1, 2, 0), sep='.')

# refused, with a word the reason must hold
write_store('uint16.zarr', 'cyx', numcodecs.Zlib(), dtype=np.uint16)
cases.append('refuse uint16.zarr dtype')
write_store('four.zarr', 'cyx4', numcodecs.Zlib())
cases.append('refuse four.zarr channels')
img = write_store('nolevel.zarr', 'cyx', numcodecs.Zlib())
os.unlink(os.path.join(img, '1', '.zarray'))
cases.append('refuse nolevel.zarr missing')
img = write_store('badjson.zarr', 'cyx', numcodecs.Zlib())
with open(os.path.join(img, '.zattrs'), 'w') as f:
    f.write('{"multiscales": [ {"version": "0.4", ')
cases.append('refuse badjson.zarr JSON')
img = write_store('empty.zarr', 'cyx', numcodecs.Zlib())
open(os.path.join(img, '.zattrs'), 'w').close()
cases.append('refuse empty.zarr empty')
# a chunk cut short: the read fails naming the chunk
img = write_store('truncated.zarr', 'cyx', numcodecs.Zstd())
p = os.path.join(img, '0', '0.0.0')
data = open(p, 'rb').read()
open(p, 'wb').write(data[:len(data) // 2])
cases.append('damaged truncated.zarr 0.0.0')

# Zarr v3 refusals and damage
write_store_v3('v3-uint16.zarr', 'cyx', 'zstd', dtype='uint16')
cases.append('refuse v3-uint16.zarr data_type')
write_store_v3('v3-sharded.zarr', 'yxc', None, codecs=[
    {'name': 'transpose', 'configuration': {'order': [2, 0, 1]}},
    {'name': 'sharding_indexed', 'configuration': {
        'chunk_shape': [64, 64, 3],
        'codecs': [{'name': 'bytes', 'configuration': {'endian': 'little'}}],
        'index_codecs': [{'name': 'bytes',
                          'configuration': {'endian': 'little'}}],
        'index_location': 'end'}}])
cases.append('refuse v3-sharded.zarr sharding')
img = write_store_v3('v3-nolevel.zarr', 'yxc', 'zstd')
os.unlink(os.path.join(img, '2', 'zarr.json'))
cases.append('refuse v3-nolevel.zarr missing')
img = write_store_v3('v3-badjson.zarr', 'yxc', 'zstd')
with open(os.path.join(img, '0', 'zarr.json'), 'w') as f:
    f.write('{"zarr_format": 3, "node_type": "array", "shape": [300, 5')
cases.append('refuse v3-badjson.zarr JSON')
img = write_store_v3('v3-truncated.zarr', 'cyx', 'zstd')
p = os.path.join(img, '0', 'c', '0', '0', '0')
data = open(p, 'rb').read()
open(p, 'wb').write(data[:len(data) // 2])
cases.append('damaged v3-truncated.zarr c/0/0/0')
# a shard index entry pointing past the shard's end, and a shard cut
# shorter than its index: the read fails naming the store and the reason
img = write_store_v3('v3-shard-past.zarr', 'yxc', 'zstd', shard=(64, 64, 3))
p = os.path.join(img, '0', 'c', '0', '0', '0')
data = bytearray(open(p, 'rb').read())
n = 4  # 2 x 2 inner chunks, index at the end
data[len(data) - 16 * n:len(data) - 16 * n + 8] = struct.pack('<Q', 1 << 40)
open(p, 'wb').write(bytes(data))
cases.append('damaged v3-shard-past.zarr past')
img = write_store_v3('v3-shard-cut.zarr', 'cyx', None, shard=(3, 64, 64),
                     at_start=True)
p = os.path.join(img, '0', 'c', '0', '0', '0')
data = open(p, 'rb').read()
open(p, 'wb').write(data[:40])
cases.append('damaged v3-shard-cut.zarr shorter')
# an index whose crc32c no longer matches (one offset byte changed)
img = write_store_v3('v3-shard-crc.zarr', 'yxc', 'zstd', shard=(64, 64, 3),
                     crc=True)
p = os.path.join(img, '0', 'c', '0', '0', '0')
data = bytearray(open(p, 'rb').read())
data[len(data) - 4 - 16 * 4] ^= 1
open(p, 'wb').write(bytes(data))
cases.append('damaged v3-shard-crc.zarr crc32c')

with open(os.path.join(out, 'cases.txt'), 'w') as f:
    f.write('\n'.join(cases) + '\n')
print('ok', len(cases))
