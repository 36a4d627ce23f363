#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every
# test (gst-check unit tests, pipeline tests, Python tests) and ends with
# "N passed, N failed, N skipped", after the list of what did not run here
# and why (scripts/test-summary.py).
set -uo pipefail
cd "$(dirname "$0")/.."
# CI (CI=true) runs beside the real slides: their absence is an error there,
# not a reason to skip the checks that read them.
if [ "${CI:-}" = "true" ] && [ ! -d "${WSI_SHARED_SLIDES_DIR:-../shared/slides}" ]; then
  echo "error: CI=true but ${WSI_SHARED_SLIDES_DIR:-../shared/slides} (the real test slides) is absent" >&2
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi
scripts/install-deps.sh test || exit 1
scripts/build.sh || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }

meson test -C build --print-errorlogs "$@"
status=$?
/usr/bin/python3 scripts/test-summary.py build/meson-logs/testlog.json
summary_status=$?
[ $status -eq 0 ] && exit $summary_status
exit $status
