# Sourced by the benchmarks that count instructions under callgrind
# (bench-slide-cost.sh, bench-dicom-instructions.sh): the one prologue both
# need. callgrind_in_devenv BUILD SCRIPT ARGS... exits 77 (meson's skip) with
# the reason when valgrind's callgrind is missing, and otherwise re-runs
# SCRIPT inside BUILD's developer environment (its plugins, not installed
# ones) unless it already runs there; it returns only in that environment.
callgrind_in_devenv() {
  local build=$1
  shift
  if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
    echo "SKIP: valgrind (callgrind) is not installed"
    exit 77
  fi
  if [ -z "${MESON_DEVENV:-}" ]; then
    exec meson devenv -C "$build" -w "$PWD" "$@"
  fi
}
