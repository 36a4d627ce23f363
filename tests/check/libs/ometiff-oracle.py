#!/usr/bin/python3
# Writes the OME-TIFF and SubIFD pyramids of tests/check/libs/wsiometiff.c
# with other software (tifffile, libvips) and each level's pixels as the
# independent decoders see them: tifffile's own decode where it has the
# codec without imagecodecs (none, deflate), libvips (libtiff's codecs,
# libjpeg-turbo) for LZW, zstd and JPEG.
#
# usage: ometiff-oracle.py OUT_DIR
# writes OUT_DIR/cases.txt: "name vendor levels lossy mpp" per readable file,
# then "refuse name reason-word" per file that must be refused; and
# OUT_DIR/<name>.<level>.rgb (tight RGB rows of the whole level).

import os
import struct
import subprocess
import sys

import numpy as np
import tifffile

from oracleimage import halve, image

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
cases = []


def write_levels(name, levels):
    for i, a in enumerate(levels):
        np.ascontiguousarray(a).tofile(os.path.join(out, '%s.%d.rgb'
                                                    % (name, i)))


base = image(500, 700, 1)
pyramid = [base, halve(base), halve(halve(base))]


def tifffile_pyramid(name, compression, bigtiff, ome=True, subifds=True,
                     metadata=None, **kw):
    path = os.path.join(out, name)
    with tifffile.TiffWriter(path, bigtiff=bigtiff, ome=ome) as tw:
        md = metadata if metadata is not None else {
            'PhysicalSizeX': 0.25, 'PhysicalSizeY': 0.25}
        tw.write(pyramid[0], tile=(128, 128), photometric='rgb',
                 compression=compression, metadata=md,
                 subifds=len(pyramid) - 1 if subifds else None, **kw)
        for a in pyramid[1:]:
            tw.write(a, tile=(128, 128), photometric='rgb',
                     compression=compression, subfiletype=1,
                     metadata=None, **kw)
    # the oracle: tifffile's decode of what it wrote, level by level
    with tifffile.TiffFile(path) as t:
        if subifds:
            pages = [t.pages[0]] + list(t.pages[0].pages)
        else:
            pages = list(t.pages)
        levels = [p.asarray() for p in pages]
    for a, b in zip(levels, pyramid):
        assert (a == b).all()
    write_levels(name, levels)
    return path


tifffile_pyramid('tf-none.ome.tif', None, False)
cases.append('tf-none.ome.tif ome-tiff 3 0 0.25')
tifffile_pyramid('tf-deflate.ome.tif', 'zlib', True, predictor=True)
cases.append('tf-deflate.ome.tif ome-tiff 3 0 0.25')
# PhysicalSize in nanometres: 500 nm = 0.5 um/px
tifffile_pyramid('tf-nm.ome.tif', 'zlib', False, metadata={
    'PhysicalSizeX': 500.0, 'PhysicalSizeXUnit': 'nm',
    'PhysicalSizeY': 500.0, 'PhysicalSizeYUnit': 'nm'})
cases.append('tf-nm.ome.tif ome-tiff 3 0 0.5')
# older OME-TIFF pyramids: the reduced images follow in the main chain
tifffile_pyramid('tf-chain.ome.tif', 'zlib', False, subifds=False)
cases.append('tf-chain.ome.tif ome-tiff 3 0 0.25')

# libvips: SubIFD pyramids (no OME-XML) in each codec
src = os.path.join(out, 'vips-source.tif')
tifffile.imwrite(src, base, photometric='rgb')
for name, args, lossy in [
        ('vips-lzw.tif', ['--compression', 'lzw'], 0),
        ('vips-zstd.tif', ['--compression', 'zstd'], 0),
        ('vips-deflate.tif', ['--compression', 'deflate', '--bigtiff'], 0),
        ('vips-none.tif', ['--compression', 'none'], 0),
        ('vips-jpeg.tif', ['--compression', 'jpeg', '--Q', '90'], 1),
        ('vips-jpeg-rgb.tif', ['--compression', 'jpeg', '--Q', '90',
                               '--rgbjpeg'], 1)]:
    path = os.path.join(out, name)
    subprocess.run(['vips', 'tiffsave', src, path, '--tile', '--pyramid',
                    '--subifd', '--tile-width', '128', '--tile-height',
                    '128'] + args, check=True)
    with tifffile.TiffFile(path) as t:
        n = 1 + len(t.pages[0].pages)
        shapes = [t.pages[0].shape] + [p.shape for p in t.pages[0].pages]
    for i in range(n):
        raw = os.path.join(out, '%s.%d.rgb' % (name, i))
        subprocess.run(['vips', 'rawsave', '%s[subifd=%d]' % (path, i - 1),
                        raw], check=True)
        assert os.path.getsize(raw) == shapes[i][0] * shapes[i][1] * 3, raw
    cases.append('%s generic-tiff %d %d 0' % (name, n, lossy))

# what must be refused, with the word its reason must hold
small = base[:256, :256]
tifffile.imwrite(os.path.join(out, 'bits16.ome.tif'),
                 small.astype(np.uint16) * 257, tile=(128, 128),
                 photometric='rgb', ome=True)
cases.append('refuse bits16.ome.tif 16-bit')
tifffile.imwrite(os.path.join(out, 'channels4.ome.tif'),
                 np.concatenate([small, small[..., :1]], -1),
                 tile=(128, 128), photometric='rgb', extrasamples=[0],
                 ome=True)
cases.append('refuse channels4.ome.tif channels')
tifffile.imwrite(os.path.join(out, 'planar.ome.tif'),
                 np.moveaxis(small, -1, 0), tile=(128, 128),
                 photometric='rgb', planarconfig='separate', ome=True)
cases.append('refuse planar.ome.tif planes')
tifffile.imwrite(os.path.join(out, 'grey.ome.tif'), small[..., 0],
                 tile=(128, 128), photometric='minisblack', ome=True)
cases.append('refuse grey.ome.tif channel')

# a SubIFD that points back at the first image
loop = os.path.join(out, 'loop.ome.tif')
with tifffile.TiffWriter(loop, ome=True) as tw:
    tw.write(small, tile=(128, 128), photometric='rgb', subifds=1)
    tw.write(halve(small), tile=(128, 128), photometric='rgb',
             subfiletype=1)
with tifffile.TiffFile(loop) as t:
    ifd0 = t.pages[0].offset
    at = t.pages[0].tags['SubIFDs'].valueoffset
with open(loop, 'r+b') as f:
    f.seek(at)
    f.write(struct.pack('<I', ifd0))
cases.append('refuse loop.ome.tif loop')

with open(os.path.join(out, 'cases.txt'), 'w') as f:
    f.write('\n'.join(cases) + '\n')
print('ok', len(cases))
