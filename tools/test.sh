#!/usr/bin/env bash
# README command 2: install what is missing, build, and run every test.
# usage: tools/test.sh [--sanitize]   (--sanitize: the same tests under ASan + UBSan, in build-sanitize/)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
if [ "${1:-}" = "--sanitize" ]; then
  bash tools/build.sh --sanitize
  # Any sanitizer report aborts the process that made it, so the test fails.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  ctest --test-dir build-sanitize --output-on-failure -j 2 2>&1 | tee build-sanitize/ctest.log
  if grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" build-sanitize/ctest.log; then
    echo "sanitizer report found in build-sanitize/ctest.log" >&2
    exit 1
  fi
else
  bash tools/build.sh
  ctest --test-dir build --output-on-failure -j 2
fi
