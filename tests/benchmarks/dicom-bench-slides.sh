# Sourced by bench-dicom.sh and bench-dicom-instructions.sh: the one set of
# slides both compare, so that their figures are about the same pixels.
# make_dicom_bench_slides BUILD WORK writes 2 generic 8192x6144 TIFF slides
# (3 levels, 0.25 um/px) into WORK/tiff and their DICOM series (with a
# thumbnail, seeded by the slide's number) into WORK/dicom, unless WORK/tiff
# already holds slides.
make_dicom_bench_slides() {
  local build=$1 work=$2 t name
  mkdir -p "$work/tiff" "$work/dicom"
  [ -z "$(ls "$work/tiff")" ] || return 0
  "$build/tools/wsi-make-test-slides" -n 2 -W 8192 -H 6144 -l 3 --layout generic \
    -m 0.25 "$work/tiff" >/dev/null
  for t in "$work"/tiff/*.tiff; do
    name=$(basename "$t" .tiff)
    "$build/tools/wsi-make-test-dicom" "$t" "$work/dicom" --prefix "$name" \
      --mpp 0.25 --thumbnail --seed "${name//[!0-9]/}" >/dev/null
  done
}
