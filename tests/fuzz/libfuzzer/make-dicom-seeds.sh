#!/usr/bin/env bash
# make-dicom-seeds.sh BUILD_DIR: writes the seeds of the dicom libFuzzer
# target into corpus/dicom/ (run once; the seeds are committed): a 96x64
# two-level synthetic slide as DICOM series of every kind the generator
# writes (tools/wsi-make-test-dicom), each instance a seed, and the three
# real files of ../shared/slides/dicom (highdicom's test data, MIT licence;
# see docs/fuzzing.md).
set -euo pipefail
build=$(realpath "$1")
here=$(dirname "$(realpath "$0")")
out="$here/corpus/dicom"
shared="$here/../../../../shared/slides/dicom"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$out"
"$build/tools/wsi-make-test-slides" -n 1 -b 2 -q 50 --seed 7 --layout generic \
  -W 96 -H 64 -l 2 -t 32 -s 2 "$tmp/tiff" >/dev/null
tiff=$(ls "$tmp"/tiff/*.tiff)
variant() {
  local name=$1
  shift
  "$build/tools/wsi-make-test-dicom" "$tiff" "$tmp/$name" --prefix "$name" \
    --mpp 0.5 "$@" >/dev/null
  for f in "$tmp/$name"/*.dcm; do
    cp "$f" "$out/$(basename "$f")"
  done
}
variant full-basic --table basic --thumbnail
variant full-extended --table extended
variant sparse-none --sparse --table none
variant raw --uncompressed
# JPEG 2000 frames (a build with OpenJPEG): lossless TILED_FULL, lossy
# TILED_SPARSE without an offset table.
variant j2k-lossless --j2k lossless
variant j2k-lossy-sparse --j2k lossy --sparse --table none
# HTJ2K (OpenJPH's ojph_compress, Debian openjph-tools) and JPEG-LS
# (CharLS), line-interleaved.
if command -v ojph_compress >/dev/null; then
  variant htj2k --j2k htj2k
fi
variant jpegls-line --jpegls line
# Implicit VR little endian, written by pydicom from the uncompressed
# TILED_SPARSE instance (sequences of undefined length, no VRs).
variant raw-sparse --uncompressed --sparse
/usr/bin/python3 - "$tmp/raw-sparse/raw-sparse-level0.dcm" \
  "$out/implicit-raw-sparse-level0.dcm" <<'PY'
import sys
import pydicom
from pydicom.uid import ImplicitVRLittleEndian
d = pydicom.dcmread(sys.argv[1])
d.file_meta.TransferSyntaxUID = ImplicitVRLittleEndian
d.is_implicit_VR = True
d.is_little_endian = True
d.save_as(sys.argv[2], write_like_original=False)
PY
rm -f "$out"/raw-sparse-level*.dcm
for f in sm_image.dcm sm_image_grayscale.dcm sm_image_jpegls.dcm; do
  [ -f "$shared/$f" ] && cp "$shared/$f" "$out/real-$f"
done
ls -l "$out"
