#!/usr/bin/env bash
# In-process fuzzing with libFuzzer (docs/fuzzing.md, "In-process fuzzing").
#
#   scripts/fuzz.sh [--seconds N | --runs N] [--build-dir DIR] [--smoke]
#                   [TARGET...]
#
# Configures a clang build with -Dfuzzing=true in DIR (default build-fuzz,
# once; later runs only rebuild), builds the targets of
# tests/fuzz/libfuzzer/meson.build and fuzzes each TARGET (default: all)
# for N seconds (default 60) or N executions, one after the other, with the
# seeds of tests/fuzz/libfuzzer/corpus/<target> and a growing working corpus
# in DIR/fuzz-work/<target>/corpus. A crasher is saved as
# DIR/fuzz-work/<target>/crash-*; replay it with
#   DIR/tests/fuzz/libfuzzer/fuzz-<target> FILE
# and, once fixed, copy it into the target's seeds folder as
# crash-<what-it-was> so that every build replays it.
#
# --smoke: 4 seconds of each target with a fixed seed (the test suite's
# libfuzzer_smoke). Prints one line per target (executions, exec/s, corpus
# size, result) and exits 1 when any target found something. Exits 77
# (meson's skip) with the reason when clang or libFuzzer is missing, unless
# $CI is set: CI installs them (scripts/install-deps.sh), so there it fails.
# Runs with -j2 and one fuzzing process (the machine is shared).
set -uo pipefail
# The targets link clang's own sanitizer runtime: a runtime preloaded for
# the calling shell (scripts/test-asan.sh's wrapper preloads gcc's libasan
# into bash) makes each of them abort at start ("Your application is linked
# against incompatible ASan runtimes").
unset LD_PRELOAD
root=$(cd "$(dirname "$0")/.." && pwd)
builddir=$root/build-fuzz
seconds=60 runs="" smoke=0 targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --build-dir) builddir=$2; shift 2 ;;
    --smoke) smoke=1; seconds=4; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done

skip() {
  if [ -n "${CI:-}" ]; then
    echo "fuzz.sh: $1 (CI must have it: scripts/install-deps.sh)" >&2
    exit 1
  fi
  echo "SKIP: $1; in-process fuzzing not run"
  exit 77
}

# clang with libFuzzer's runtime (Debian: clang + libclang-rt-dev)
command -v clang >/dev/null || skip "clang is not installed"
probe=$(mktemp -d)
echo 'int LLVMFuzzerTestOneInput(const char*d,unsigned long n){return 0;}' \
  > "$probe/p.c"
if ! clang -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" \
    >"$probe/log" 2>&1; then
  reason=$(head -1 "$probe/log")
  rm -rf "$probe"
  skip "clang cannot link -fsanitize=fuzzer ($reason); install libclang-rt-dev"
fi
rm -rf "$probe"

cc="clang" cxx="clang++"
if command -v ccache >/dev/null; then cc="ccache clang" cxx="ccache clang++"; fi
if [ ! -f "$builddir/build.ninja" ]; then
  # only what the targets need: the read layer and the test slide tools
  if ! CC=$cc CXX=$cxx meson setup "$builddir" "$root" -Dfuzzing=true \
      -Db_lundef=false -Dopencv=disabled -Dcuda=disabled -Dpython=disabled \
      -Dexamples=disabled -Dwsitracer=disabled -Dopenslide=disabled \
      -Dtiff=enabled -Dtests=enabled >"$builddir.setup.log" 2>&1; then
    tail -30 "$builddir.setup.log" >&2
    echo "fuzz.sh: meson setup of $builddir failed" >&2
    exit 1
  fi
fi
if ! ninja -C "$builddir" -j2 fuzz-targets >"$builddir/fuzz-build.log" 2>&1; then
  tail -40 "$builddir/fuzz-build.log" >&2
  echo "fuzz.sh: building the fuzz targets failed" >&2
  exit 1
fi

list=$builddir/tests/fuzz/libfuzzer/fuzz-targets.txt
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(awk 'NF { print $1 }' "$list")
failed=0
for t in "${targets[@]}"; do
  read -r name exe seeds < <(awk -v t="$t" '$1 == t' "$list")
  if [ -z "${name:-}" ]; then
    echo "fuzz.sh: no target '$t' in this build ($list)" >&2
    failed=1
    continue
  fi
  work=$builddir/fuzz-work/$name
  opts=()
  if [ -n "$runs" ]; then opts+=(-runs="$runs"); else opts+=(-max_total_time="$seconds"); fi
  [ $smoke -eq 1 ] && opts+=(-seed=1)
  log=$work.log
  mkdir -p "$work"
  "$root/tests/fuzz/libfuzzer/run-libfuzzer.sh" "$exe" "$seeds" "$work" \
    "${opts[@]}" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  units=$(ls "$work/corpus" | wc -l)
  if [ $rc -eq 0 ]; then
    result="no crash"
  else
    result="FOUND (exit $rc): $(ls "$work" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' | tr '\n' ' ')"
    grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error' "$log" || true
    failed=1
  fi
  printf '%-10s %12s executions %8s exec/s %6s corpus files  %s  (log %s)\n' \
    "$name" "${execs:-?}" "${rate:-?}" "$units" "$result" "$log"
done
exit $failed
