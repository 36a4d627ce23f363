#!/usr/bin/env bash
# test-refused-values.sh MAKE_TEST_SLIDES
#
# A value that an element's own validation refuses must stop the run
# before it starts: gst-launch-1.0 exits non-zero, and the error names the
# property, the value and what is accepted (gst-libs/gst/wsi/wsirefusal.h).
# Each of these used to print a warning, keep the previous value and train
# on settings nobody asked for, exit 0. Then a sweep of every
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

# stream PATCHSAMPLER-ARGS TISSUEMASK-ARGS PATCHBATCH-ARGS SOURCE-ARGS [PATCHREADER-ARGS [-q]]
stream() {
  # shellcheck disable=SC2086
  timeout $limit gst-launch-1.0 ${6--q} wsislidesrc "location=$good" $4 ! \
    tissuemask $2 ! queue ! \
    patchsampler patch-size=64 target-mpp=2 patches-per-slide=8 $1 ! \
    patchinterleave ! patchreader threads=2 ${5:-} ! queue ! \
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

# Numbers outside a property's range and NaN, which GLib itself used to
# refuse with a warning while the element ran with its previous value
# (wsi_param_spec_*(), wsirefusal.h): the error names the element, the
# property, the value and the range, for the elements of the stream.
refused_glib() {        # NAME EXPECTED PATCHSAMPLER TISSUEMASK PATCHBATCH SOURCE [PATCHREADER]
  local out rc
  out=$(stream "$3" "$4" "$5" "$6" "${7:-}")
  rc=$?
  check_refused "$1" "$2" "$out" $rc
  if ! grep -q "ERROR: from element .*refuses to start" <<<"$out"; then
    echo "FAIL $1: no element error naming the element"
    failed=1
  fi
}
refused_glib patch-size-neg 'patch-size="4294967291, that is -5' "patch-size=-5" "" "" ""
refused_glib target-mpp-neg 'target-mpp="-1" (accepted: a number from 0 to 1000)' \
  "target-mpp=-1" "" "" ""
refused_glib target-mpp-nan 'target-mpp="nan"' "target-mpp=nan" "" "" ""
refused_glib min-tissue-2 'min-tissue="2"' "min-tissue=2" "" "" ""
refused_glib batch-size-0 'batch-size="0" (accepted: an integer from 1' "" "" "batch-size=0" ""
refused_glib tissuemask-range 'min-tissue-fraction="' "" "min-tissue-fraction=-3" "" ""
refused_glib patchreader-threads 'threads="100000" (accepted: an integer from 0 to 64)' \
  "" "" "" "" "threads=100000"
# gst-inspect-1.0 still documents the range (the specs derive from GLib's)
inspect=$(gst-inspect-1.0 patchsampler 2>&1)
if grep -q "Unsigned Integer. Range: 8 - 8192 Default: 256" <<<"$inspect"; then
  echo "ok   gst-inspect: patch-size documents 8 - 8192"
else
  echo "FAIL gst-inspect: patch-size's range line is gone"
  failed=1
fi

# A setting that has no effect in the current settings says so once
# (without -q: gst-launch-1.0 -q prints no warnings)
out=$(stream "annotation-classes=Tumor" "" "" "" "" "")
rc=$?
n=$(grep -c "no effect with annotation-mode=off" <<<"$out")
if [ $rc -ne 0 ] || [ "$n" -ne 1 ]; then
  echo "FAIL annotation-classes without annotation-mode: exit $rc, warned $n times (want 0, 1)"
  echo "$out" | head -5
  failed=1
else
  echo "ok   annotation-classes without annotation-mode: warned once, exit 0"
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
