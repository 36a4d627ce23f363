#!/usr/bin/env bash
# Runs the C appsink example (examples/wsi-stream) as a user would:
# a finite pass over generated slides must print the throughput and the
# metadata; a bad location must fail with a message naming it.
set -u
make_slides="$1"
wsi_stream="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
check() {  # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then echo "ok: $name"; else echo "FAILED: $name"; failed=$((failed + 1)); fi
}

"$make_slides" --count 2 --width 2048 --height 1536 --levels 2 "$tmp/slides" >/dev/null

# 2 slides x 16 patches = 32 patches = 4 batches of 8, no warm-up.
out=$("$wsi_stream" --location "$tmp/slides" --finite --batches 0 --warmup 0 \
  --batch-size 8 --patch-size 64 --target-mpp 0.5 --patches-per-slide 16 2>&1)
rc=$?
echo "$out"
check "finite run exits 0" test $rc -eq 0
check "first batch metadata printed" grep -q "batch 0: 8 patches; first: .*slide-0" <<<"$out"
check "throughput printed" grep -qE "24 patches in 3 batches .* patches/s" <<<"$out"
check "batch times and RSS printed" grep -q "peak RSS" <<<"$out"

out=$("$wsi_stream" --location "$tmp/does-not-exist" --finite --quiet 2>&1)
rc=$?
echo "$out"
check "bad location exits non-zero" test $rc -ne 0
check "error names the location" grep -q "does-not-exist" <<<"$out"

echo "$((6 - failed)) passed, $failed failed"
[ $failed -eq 0 ]
