#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every
# test (gst-check unit tests, pipeline tests, Python tests) and ends with
# "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh || exit 1
scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }

meson test -C build --print-errorlogs "$@"
status=$?
/usr/bin/python3 scripts/test-summary.py build/meson-logs/testlog.json
summary_status=$?
[ $status -eq 0 ] && exit $summary_status
exit $status
