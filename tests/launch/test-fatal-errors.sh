#!/usr/bin/env bash
# test-fatal-errors.sh SLOWLOOP_SO MAKE_TEST_SLIDES
#
# gst-launch-1.0 must end, non-zero and naming the file, on a slide set of
# which no slide can be read, however late its main loop starts: every run
# here preloads SLOWLOOP_SO (tests/launch/slowloop.c), which sleeps 300 ms
# before g_main_loop_run(), the window in which gst-launch 1.22 loses the
# quit of an error posted from a streaming thread. Sets: one truncated
# slide, one zero-byte slide, a folder of broken files (garbage, truncated,
# empty), and a missing path (refused in start() already before issue 26).
# A good set must still run to its end under the shim (exit 0).
set -uo pipefail
shim=$1 make_slides=$2
limit=30
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

"$make_slides" -n 1 -W 1024 -H 768 -l 2 -t 256 --layout aperio "$tmp/good" >/dev/null || exit 1
good=$(ls "$tmp"/good/*.svs)
mkdir -p "$tmp/bad"
"$make_slides" -n 0 --broken "$tmp/bad" >/dev/null || exit 1
head -c 20000 "$good" > "$tmp/truncated.svs"
: > "$tmp/empty.svs"

# the README's pipeline, ending by itself
pipeline() {
  echo wsislidesrc "location=$1" ! tissuemask ! queue max-size-buffers=4 ! \
    patchsampler patch-size=64 target-mpp=2 patches-per-slide=8 ! \
    patchinterleave pool-size=2 patches-per-visit=4 ! patchreader threads=2 ! \
    queue ! patchbatch batch-size=4 ! fakesink sync=false
}

# run NAME LOCATION EXPECT(fail|pass) WORD-THAT-MUST-BE-IN-THE-OUTPUT
run() {
  local name=$1 location=$2 expect=$3 word=$4 out rc start ms
  start=$(date +%s%N)
  # shellcheck disable=SC2046
  out=$(LD_PRELOAD=$shim timeout $limit gst-launch-1.0 -q $(pipeline "$location") 2>&1)
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  if [ $rc -eq 124 ]; then
    echo "FAIL $name: gst-launch still running after ${limit} s (killed)"
    echo "$out" | head -20
    failed=1
  elif [ "$expect" = fail ] && [ $rc -eq 0 ]; then
    echo "FAIL $name: exit 0 on a set that cannot be read"
    failed=1
  elif [ "$expect" = pass ] && [ $rc -ne 0 ]; then
    echo "FAIL $name: exit $rc on a good set"
    echo "$out" | head -20
    failed=1
  elif ! grep -qF -- "$word" <<<"$out"; then
    echo "FAIL $name: the output does not name $word"
    echo "$out" | head -20
    failed=1
  else
    printf 'ok   %-10s exit %3d after %6d ms\n' "$name" "$rc" "$ms"
  fi
}

run truncated "$tmp/truncated.svs" fail truncated.svs
run empty "$tmp/empty.svs" fail empty.svs
run all-bad "$tmp/bad" fail broken-garbage.svs
run missing "$tmp/no-such.svs" fail no-such.svs
run good "$good" pass ""
exit $failed
