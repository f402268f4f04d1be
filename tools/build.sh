#!/usr/bin/env bash
# Configures and builds dlsim into a build folder (default: build/, Release).
# usage: tools/build.sh [--sanitize]   (--sanitize: build-sanitize/, ASan + UBSan, no benchmarks)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
if [ "${1:-}" = "--sanitize" ]; then
  cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DDLSIM_SANITIZE=ON -DDLSIM_BUILD_BENCH=OFF \
        -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g"
  cmake --build build-sanitize -j "$jobs"
else
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
  cmake --build build -j "$jobs"
fi
