#!/usr/bin/env bash
# run-libfuzzer.sh EXE SEEDS WORKDIR [libFuzzer options...]
#
# Fuzzes one libFuzzer target: new inputs go to WORKDIR/corpus (the seeds
# folder SEEDS is only read), a crasher to WORKDIR/crash-* (or leak-*,
# timeout-*, oom-*). Exit status: libFuzzer's (0 = nothing found).
set -euo pipefail
exe=$1 seeds=$2 work=$3
shift 3
mkdir -p "$work/corpus"
# ASan: stop at the first error; LSan: a leak is a finding (libFuzzer's
# -detect_leaks is on by default); UBSan findings abort (built with
# -fno-sanitize-recover).
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec "$exe" -artifact_prefix="$work/" -rss_limit_mb=2048 -timeout=10 \
  -print_final_stats=1 "$@" "$work/corpus" "$seeds"
