#!/usr/bin/env bash
# The tile extractor and the CPU decoder of the GPU decode experiment
# (docs/cuda.md), on a machine without a GPU: every level-0 tile of a
# generated Aperio-layout slide (YCbCr) and of ../shared/slides'
# CMU-1-Small-Region.svs (RGB: Adobe marker added) becomes a complete JPEG
# stream that libjpeg-turbo decodes, and the CPU decoder's dump of one
# tissue tile of CMU-1 is mostly pink-purple (RGB read as YCbCr is green).
#   jpeg-tiles-test.sh JPEG_TILES JPEG_DECODE_CPU WSI_MAKE_TEST_SLIDES SOURCE_ROOT
set -eu
tiles_tool=$1 decoder=$2 generator=$3 root=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$generator" -n 1 -W 2400 -H 1920 -t 240 --layout aperio "$work/slides" > /dev/null
"$tiles_tool" "$work/gen.tiles" "$work"/slides/*.svs | tee "$work/gen.txt"
grep -q "^$work/gen.tiles: 80 tiles" "$work/gen.txt"    # 10 x 8 tiles of 240
"$decoder" "$work/gen.tiles" 2 1 | tee "$work/gen.dec"
grep -q "decoded=80 failed=0" "$work/gen.dec"

cmu="$root/../shared/slides/Aperio-CMU-1-Small-Region.svs"
if [ ! -f "$cmu" ]; then
  echo "generated slide checked; CMU-1 part skipped: $cmu is missing"
  exit 0
fi
"$tiles_tool" "$work/cmu.tiles" "$cmu" | tee "$work/cmu.txt"
grep -q "130 tiles of 240x240, .*photometric RGB (Adobe marker added)" "$work/cmu.txt"
"$decoder" "$work/cmu.tiles" 2 1 "$work/cmu.rgb" 16 | tee "$work/cmu.dec"
grep -q "decoded=130 failed=0" "$work/cmu.dec"
# the 14th dumped tile (tile 105) is tissue: H&E is red and blue over green
# (about 195 130 162); RGB read as YCbCr turns it green. Each dump entry is
# 12 header bytes + 240 * 240 * 3 pixels.
od -An -v -tu1 -w3 -j$((13 * 172812 + 12)) -N172800 "$work/cmu.rgb" \
  | awk '{r += $1; g += $2; b += $3; n++} END {printf "tile 105 mean RGB %.1f %.1f %.1f\n",
         r / n, g / n, b / n; exit !(r > g + 30 && b > g + 15)}'
