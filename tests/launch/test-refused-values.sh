#!/usr/bin/env bash
# test-refused-values.sh MAKE_TEST_SLIDES
#
# A value that an element's own validation refuses must stop the run
# before it starts: gst-launch-1.0 exits non-zero, and the error names the
# property, the value and what is accepted (gst-libs/gst/wsi/wsirefusal.h).
# Before issue 26 each of these printed a warning, kept the previous value
# and trained on settings nobody asked for, exit 0. Then a sweep of every
# property of ours whose value is parsed from a string or checked beyond
# its GParamSpec range, and the controls: the same pipeline with good
# values runs to its end (exit 0), and a refused value replaced by a good
# one later on the same line is forgotten.
set -uo pipefail
make_slides=$1
limit=60
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

"$make_slides" -n 1 -W 1024 -H 768 -l 2 -t 256 --layout aperio "$tmp/good" >/dev/null || exit 1
good=$(ls "$tmp"/good/*.svs)

# stream PATCHSAMPLER-ARGS TISSUEMASK-ARGS PATCHBATCH-ARGS SOURCE-ARGS
stream() {
  # shellcheck disable=SC2086
  timeout $limit gst-launch-1.0 -q wsislidesrc "location=$good" $4 ! \
    tissuemask $2 ! queue ! \
    patchsampler patch-size=64 target-mpp=2 patches-per-slide=8 $1 ! \
    patchinterleave ! patchreader threads=2 ! queue ! \
    patchbatch batch-size=4 $3 ! fakesink sync=false 2>&1
}

# refused NAME EXPECTED-TEXT OUTPUT RC
check_refused() {
  local name=$1 expected=$2 out=$3 rc=$4
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
    echo "FAIL $name: exit $rc; the refused value must stop the run"
    echo "$out" | head -10
    failed=1
  elif ! grep -qF -- "$expected" <<<"$out" || ! grep -q "accepted:" <<<"$out"; then
    echo "FAIL $name: the error does not say $expected and what is accepted"
    echo "$out" | head -10
    failed=1
  else
    echo "ok   $name: exit $rc, $(grep -m1 -o -- "$expected[^;]*" <<<"$out")"
  fi
}

refused_in_stream() {   # NAME EXPECTED PATCHSAMPLER TISSUEMASK PATCHBATCH SOURCE
  local out rc
  out=$(stream "$3" "$4" "$5" "$6")
  rc=$?
  check_refused "$1" "$2" "$out" $rc
}

refused_alone() {       # NAME EXPECTED ELEMENT-AND-PROPERTIES...
  local name=$1 expected=$2 out rc
  shift 2
  # shellcheck disable=SC2068
  out=$(timeout $limit gst-launch-1.0 -q videotestsrc num-buffers=1 ! $@ ! \
      fakesink 2>&1)
  rc=$?
  check_refused "$name" "$expected" "$out" $rc
}

# the four of the issue
refused_in_stream target-mpps 'target-mpps="a,b"' "target-mpps=a,b" "" "" ""
refused_in_stream median-kernel 'median-kernel="4"' "" "median-kernel=4" "" ""
refused_in_stream mean-5-values 'mean="< (double)1' "" "" "mean=<1,2,3,4,5>" ""
refused_in_stream patches-per-slide-0 'patches-per-slide="0"' \
  "mode=random patches-per-slide=0" "" "" ""
# the sweep
refused_in_stream mpp-weights 'mpp-weights="x"' "target-mpps=0.5,1 mpp-weights=x" "" "" ""
refused_in_stream target-mpps-empty 'target-mpps=""' 'target-mpps=""' "" "" ""
refused_in_stream target-mpps-33 'target-mpps="' \
  "target-mpps=$(seq -s, 1 33)" "" "" ""
refused_in_stream otsu-blur-kernel 'otsu-blur-kernel="2"' "" "otsu-blur-kernel=2" "" ""
refused_in_stream std-5-values 'std="' "" "" "std=<1,1,1,1,1>" ""
refused_in_stream world-size-0 'world-size="0"' "" "" "" "world-size=0"
refused_alone patchviews-views 'views="@@"' patchviews views=@@
# two elements refusing: the first to start (downstream first) says so
refused_in_stream two-at-once 'target-mpps="a"' "target-mpps=a" "median-kernel=4" "" ""

# GLib's own refusals (outside a GParamSpec's range, NaN) never reach the
# element: G_DEBUG=fatal-warnings makes them fatal (README.md)
out=$(G_DEBUG=fatal-warnings stream "patch-size=-5" "" "" "" 2>&1)
rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 124 ] || ! grep -q "patch-size" <<<"$out"; then
  echo "FAIL glib-range: exit $rc under G_DEBUG=fatal-warnings"
  echo "$out" | head -5
  failed=1
else
  echo "ok   glib-range: patch-size=-5 under G_DEBUG=fatal-warnings, exit $rc"
fi

# controls: good values run to the end; a later good value wins
for control in "good" "forgotten"; do
  if [ $control = good ]; then
    out=$(stream "" "" "mean=<0.5,0.5,0.5> std=<0.25>" "")
  else
    out=$(stream "target-mpps=a,b target-mpps=2" "median-kernel=4 median-kernel=5" "" "")
  fi
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL control $control: exit $rc"
    echo "$out" | head -10
    failed=1
  else
    echo "ok   control $control: exit 0"
  fi
done
exit $failed
