#!/usr/bin/env bash
# test-fatal-errors.sh SLOWLOOP_SO MAKE_TEST_SLIDES
#
# gst-launch-1.0 must end, non-zero and naming the file, after every fatal
# error of ours, however late its main loop starts: every failing run here
# preloads SLOWLOOP_SO (tests/launch/slowloop.c) with
# WSI_SLOW_LOOP_UNTIL_ERROR_MS, which holds g_main_loop_run() back until
# gst-launch's bus sync handler has handled the ERROR: its quit is then
# lost every time, whatever the machine's load (the window in which
# gst-launch 1.22 hung), and only our error relay (wsierrorrelay.h) or a
# failed state change can end the run. Sets whose error the source finds
# in start(): one truncated slide, one zero-byte slide, a folder of broken
# files (garbage, truncated, empty), a missing path. Sets whose error a
# later element finds while the pipeline prerolls (posted from a streaming
# thread, the case the relay is for): two blank slides and a slide without
# a resolution (patchsampler: "The stream ended without a single patch").
# A good set must still run to its end under the shim (exit 0). A start
# error ends with our message only: not followed by GStreamer's fallback
# "state change failed and some element failed to post a proper error
# message" (wsi_error_relay_post() drops it).
set -uo pipefail
shim=$1 make_slides=$2
limit=40
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

"$make_slides" -n 1 -W 1024 -H 768 -l 2 -t 256 --layout aperio "$tmp/good" >/dev/null || exit 1
good=$(ls "$tmp"/good/*.svs)
mkdir -p "$tmp/bad"
"$make_slides" -n 0 --broken "$tmp/bad" >/dev/null || exit 1
head -c 20000 "$good" > "$tmp/truncated.svs"
: > "$tmp/empty.svs"
"$make_slides" -n 2 -W 1024 -H 768 -l 2 -t 256 --blobs 0 "$tmp/blank" >/dev/null || exit 1
"$make_slides" -n 1 -W 1024 -H 768 -l 2 -t 256 --mpp 0 "$tmp/no-mpp" >/dev/null || exit 1

# the README's pipeline, ending by itself
pipeline() {
  echo wsislidesrc "location=$1" ! tissuemask ! queue max-size-buffers=4 ! \
    patchsampler patch-size=64 target-mpp=2 patches-per-slide=8 ! \
    patchinterleave pool-size=2 patches-per-visit=4 ! patchreader threads=2 ! \
    queue ! patchbatch batch-size=4 ! fakesink sync=false
}

# run NAME LOCATION EXPECT(fail|pass) WORD-THAT-MUST-BE-IN-THE-OUTPUT
run() {
  local name=$1 location=$2 expect=$3 word=$4 out rc start ms hold
  # a failing run holds the loop until the error was handled (at most
  # 20 s); a good run, which posts none, only 300 ms
  hold=(WSI_SLOW_LOOP_UNTIL_ERROR_MS=20000)
  [ "$expect" = pass ] && hold=(WSI_SLOW_LOOP_MS=300)
  start=$(date +%s%N)
  # shellcheck disable=SC2046
  # the shim after what is preloaded already (scripts/test-asan.sh puts
  # the ASan runtime first)
  out=$(env "${hold[@]}" LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$shim" \
    timeout $limit \
    gst-launch-1.0 -q $(pipeline "$location") 2>&1)
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
  elif grep -q "failed to post a proper error message" <<<"$out"; then
    # GstBaseSrc's fallback after our own error contradicts it
    echo "FAIL $name: GStreamer's fallback error follows ours"
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
run blank "$tmp/blank" fail "without a single patch"
run no-mpp "$tmp/no-mpp" fail "resolution (mpp) unknown"
run good "$good" pass ""
exit $failed
