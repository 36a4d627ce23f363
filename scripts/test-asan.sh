#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer:
# configures ./build-asan with -Dasan=true (once), builds it, runs every
# test with the sanitizer options below and ends with "N passed, N failed"
# as scripts/test.sh does. Arguments go to `meson test` (test names, -v...).
#
#   ASan, UBSan  stop at the first error and print its stack
#   LSan         a leak is an error; tests/lsan.supp suppresses the
#                libraries' one-time allocations (never our code)
#
# Tests whose program is not instrumented (/usr/bin/python3 for the pytest
# and wsi-bench tests, bash for the example test) load instrumented plugins
# and so need the ASan runtime first: a wrapper preloads libasan (and
# libstdc++, for torch's exceptions) for them and turns the leak check off
# there (the interpreter itself never frees everything at exit), so leaks
# are not checked in those tests. Instrumented test programs scan the
# plugin registry in-process (GST_REGISTRY_FORK=no): the system's
# gst-plugin-scanner is not instrumented.
# WSI_ASAN_SKIP_PYTHON=1 leaves the python3 tests out instead.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
builddir=${WSI_ASAN_BUILD_DIR:-build-asan}

scripts/install-deps.sh test || exit 1

if [ ! -f "$builddir/build.ninja" ]; then
  setup_log=$(mktemp)
  meson setup "$builddir" -Dasan=true >"$setup_log" 2>&1 \
    || { tail -30 "$setup_log"; rm -f "$setup_log"; echo "0 passed, 1 failed"; exit 1; }
  rm -f "$setup_log"
else
  meson configure "$builddir" -Dasan=true >/dev/null 2>&1 \
    || { echo "0 passed, 1 failed"; exit 1; }
fi
if ! ninja -C "$builddir" >"$builddir/asan-build.log" 2>&1; then
  tail -40 "$builddir/asan-build.log"
  echo "0 passed, 1 failed"
  exit 1
fi

libasan=$(readlink -f "$(gcc -print-file-name=libasan.so)")
libstdcxx=$(readlink -f "$(g++ -print-file-name=libstdc++.so)")
if [ ! -f "$libasan" ]; then
  echo "test-asan: libasan not found (gcc -print-file-name=libasan.so)"
  echo "0 passed, 1 failed"
  exit 1
fi
preload=$libasan
[ -f "$libstdcxx" ] && preload="$preload:$libstdcxx"

# fast_unwind_on_malloc=0: full allocation stacks through the system
# libraries (built without frame pointers), which the suppressions match on;
# with the fast unwinder every GLib one-time allocation is a 2-frame "leak".
# detect_odr_violation=1: only globals of different sizes (the static
# helper libraries are linked into several plugins on purpose).
# intercept_tls_get_addr=0: gcc 12's runtime (Debian 12) takes a
# dynamic TLS block that happens to start 16 bytes into a page for glibc
# 2.19's header and reads a bogus range from it; LeakSanitizer's tracer
# then dies scanning it at exit ("Tracer caught signal 11" in
# ScanRangeForPointers, no leak report), a flake of a test that passed
# (google/sanitizers#1322; seen in elements_patchsampler and
# elements_patchaugment, session 8). Without the interceptor, dynamic TLS
# (the dlopened plugins' __thread data) is not scanned as a root.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:fast_unwind_on_malloc=0:print_summary=1:detect_odr_violation=1:check_initialization_order=1:intercept_tls_get_addr=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:report_error_type=1"
# tests/lsan.supp, plus the one-time allocations of the registry scan that
# GST_REGISTRY_FORK=no (below) brings into the test processes
supp="$root/$builddir/lsan.supp"
{
  cat "$root/tests/lsan.supp"
  echo "# Added by scripts/test-asan.sh: GStreamer's in-process registry scan."
  echo "leak:gst_update_registry"
} >"$supp"
export LSAN_OPTIONS="suppressions=$supp:print_suppressions=0"
# gst-check: the default per-test timeout is too short for ASan builds
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-600}
# ... but tests/check/meson.build sets CK_DEFAULT_TIMEOUT=300 in each
# test's environment, over the line above: check's own multiplier scales
# it (and every tcase_set_timeout) as --timeout-multiplier below scales
# meson's (elements_wsislidesrc's overview-truth test ran past 300 s)
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-3}

wrapper="$root/$builddir/asan-test-wrapper.sh"
cat >"$wrapper" <<EOF
#!/usr/bin/env bash
# Written by scripts/test-asan.sh: runs one test program under the sanitizers.
if readelf -d "\$1" 2>/dev/null | grep -q 'NEEDED.*libasan'; then
  # Instrumented: the registry scan stays in this process (the system's
  # gst-plugin-scanner cannot load instrumented plugins without the runtime
  # preloaded, and a preload would reach every program the test spawns).
  export GST_REGISTRY_FORK=no
else
  # python3, bash...: the runtime first (and libstdc++, whose __cxa_throw
  # ASan must find at start), no leak check of the interpreter
  export LD_PRELOAD="$preload\${LD_PRELOAD:+:\$LD_PRELOAD}"
  export ASAN_OPTIONS="\$ASAN_OPTIONS:detect_leaks=0"
fi
exec "\$@"
EOF
chmod +x "$wrapper"

# Tests written in C that spawn gst-launch-1.0 (pipelines/patchstore kills a
# writer mid-shard) run it from PATH: this one preloads the runtime, as the
# wrapper does for bash and python3; without it the system's uninstrumented
# gst-launch-1.0 aborts at start ("ASan runtime does not come first").
bindir="$root/$builddir/asan-bin"
mkdir -p "$bindir"
cat >"$bindir/gst-launch-1.0" <<EOF
#!/usr/bin/env bash
# Written by scripts/test-asan.sh: the system's gst-launch-1.0, the ASan
# runtime first (no leak check: an uninstrumented program).
export LD_PRELOAD="$preload\${LD_PRELOAD:+:\$LD_PRELOAD}"
export ASAN_OPTIONS="\$ASAN_OPTIONS:detect_leaks=0"
exec $(command -v gst-launch-1.0) "\$@"
EOF
chmod +x "$bindir/gst-launch-1.0"
export PATH="$bindir:$PATH"

tests=()
if [ "${WSI_ASAN_SKIP_PYTHON:-0}" = 1 ]; then
  all=$(meson test -C "$builddir" --list 2>/dev/null | sed 's/^.* \/ //')
  # Arguments that name tests choose them; options alone (--num-processes
  # 1, -v) still get the whole suite without the python3 tests.
  named=0
  for arg in "$@"; do
    if grep -qxF -- "$arg" <<<"$all"; then named=1; fi
  done
  if [ $named = 0 ]; then
    # every test but those run by python3
    while read -r name; do
      case "$name" in python|wsi_bench_sweep|gstwsi_cuda_python) continue;; esac
      tests+=("$name")
    done <<<"$all"
    echo "test-asan: WSI_ASAN_SKIP_PYTHON=1: python, wsi_bench_sweep and gstwsi_cuda_python skipped"
  fi
fi

# (built above: a source edited since must not turn into a half rebuild)
# (meson names the log after the wrapper: testlog-asan-test-wrapper.sh.json)
testlog="$builddir/meson-logs/testlog-$(basename "$wrapper").json"
rm -f "$testlog"
meson test -C "$builddir" --no-rebuild --print-errorlogs \
  --timeout-multiplier 3 --wrapper "$wrapper" "${tests[@]}" "$@"
status=$?
if [ -f "$testlog" ]; then
  /usr/bin/python3 scripts/test-summary.py "$testlog"
  summary_status=$?
else
  echo "0 passed, 1 failed"
  summary_status=1
fi
[ $status -eq 0 ] && exit $summary_status
exit $status
